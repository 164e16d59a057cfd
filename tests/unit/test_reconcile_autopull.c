/*
 * test_reconcile_autopull.c - the controller's glue of automatic pre-pull
 * (controller/autopull.h, docs/design.md "Automatic pre-pull"): the mark
 * AutoPrePull True written in the PodNeedUpgrade write of an opted-in
 * DaemonSet; the Pulling writes of as many pods as the parallelism leaves,
 * held by the window, min-updated-ready-pods and a NotReady node; OptedOut
 * when the annotation goes; an automatic pull queued as a bulk unit behind
 * a node user's request; the DaemonSet's Events.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"
#include "row_check.h"

#define AP(status, reason, h)                                                                      \
    "{\"type\":\"" OTA_COND_AUTO_PREPULL "\",\"status\":\"" status "\",\"reason\":\"" reason     \
    "\",\"lastTransitionTime\":\"2026-11-21T19:30:03Z\",\"message\":\"" REV_MSG(h) "\"}"
#define MARKED "[" READY "," NU("True", H) "," AP("True", OTA_REASON_AUTO_OPTED_IN, H) "]"
#define AUTO_PULLING(ltt)                                                                          \
    "[" READY "," NU("True", H) "," AP("True", OTA_REASON_AUTO_OPTED_IN, H) ","                   \
    IR("False", OTA_REASON_WAIT_PULL, H, ltt) "]"
#define AUTO_READY                                                                                 \
    "[" READY "," NU("True", H) "," AP("True", OTA_REASON_AUTO_OPTED_IN, H) ","                   \
    IR("True", OTA_REASON_PULL_SUCCESS, H, RT1) "]"

/* The OTA DaemonSet edge-agent with the fixture's revisions and these
 * automatic pre-pull annotations (JSON members, or ""). */
static void opted_in(world *w, const char *more)
{
    char ann[600];
    snprintf(ann, sizeof(ann), "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"%s%s}",
             more[0] != '\0' ? "," : "", more);
    add_ds(w, "edge-agent", DS_UID, ann, 0);
    add_rev(w, DS_UID, H, 3, "[]", "[{\"name\":\"agent\",\"image\":\"" AGENT_IMAGE "\"}]", "[]");
    add_rev(w, DS_UID, OLD, 1, "[]",
            "[{\"name\":\"agent\",\"image\":\"registry.example.com/edge/agent:v1\"}]", "[]");
}

#define PAR(n) "\"" OTA_ANN_PREDOWNLOAD_PARALLELISM "\":\"" n "\""

/* Pods pod-<i> (uid u-<i>) on node n-<i>, at OLD, with these conditions. */
static void pods(world *w, size_t n, const char *conditions)
{
    for (size_t i = 0; i < n; i++) {
        char name[32], uid[32], node[32];
        snprintf(name, sizeof(name), "pod-%zu", i);
        snprintf(uid, sizeof(uid), "u-%zu", i);
        snprintf(node, sizeof(node), "n-%zu", i);
        add_pod_full(w, name, uid, DS_UID, node, OLD, conditions, 0);
    }
}

/* The status patches that move a pod into Pulling (automatic starts). */
static size_t starts(const world *w)
{
    size_t n = 0;
    for (size_t i = 0; i < w->out.n; i++) {
        const action *a = &w->out.v[i];
        if (a->kind != ACTION_PATCH_POD_STATUS)
            continue;
        patched ir = patch_cond(a, OTA_COND_IMAGE_READY);
        if (ir.found && !ir.deleted && strcmp(ir.reason, OTA_REASON_WAIT_PULL) == 0) {
            assert_string_equal(ir.status, "False");
            assert_string_equal(ir.message, REV_MSG(H));
            assert_int_equal(ir.n, 1); /* the Pulling write alone */
            n++;
        }
    }
    return n;
}

/* ---- the mark ------------------------------------------------------------------ */

static void test_mark_in_need_upgrade_write(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("5"));
    pods(&w, 1, "[" READY "]");
    /* a pod marked for OLD's predecessor: marked again for H */
    add_pod_full(&w, "again", "u-again", DS_UID, "n-a", OLD,
                 "[" READY "," NU("True", MID) "," AP("True", OTA_REASON_AUTO_OPTED_IN, MID) "]",
                 0);
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 2);
    const char *names[] = {"pod-0", "again"};
    for (size_t i = 0; i < 2; i++) {
        const action *a = the(&w, ACTION_PATCH_POD_STATUS, names[i]);
        patched nu = patch_cond(a, OTA_COND_NEED_UPGRADE);
        patched ap = patch_cond(a, OTA_COND_AUTO_PREPULL);
        assert_true(nu.found && ap.found);
        assert_string_equal(nu.status, "True");
        assert_string_equal(ap.status, "True");
        assert_string_equal(ap.reason, OTA_REASON_AUTO_OPTED_IN);
        assert_string_equal(ap.message, REV_MSG(H));
    }
    assert_int_equal(starts(&w), 0); /* the mark first, starts on the pod as written */
    world_free(&w);
}

static void test_no_mark_without_opt_in(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, "");
    pods(&w, 1, "[" READY "]");
    run(&w);
    const action *a = the(&w, ACTION_PATCH_POD_STATUS, "pod-0");
    assert_false(patch_cond(a, OTA_COND_AUTO_PREPULL).found);
    assert_int_equal(count_events(&w, OTA_EVENT_AUTO_BAD), 0);
    world_free(&w);
}

/* Opted in after the revision was marked: AutoPrePull alone. */
static void test_mark_alone_when_opted_in_later(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("5"));
    pods(&w, 1, "[" READY "," NU("True", H) "]");
    run(&w);
    const action *a = the(&w, ACTION_PATCH_POD_STATUS, "pod-0");
    patched ap = patch_cond(a, OTA_COND_AUTO_PREPULL);
    assert_true(ap.found);
    assert_int_equal(ap.n, 1);
    assert_string_equal(ap.status, "True");
    world_free(&w);
}

/* ---- starts -------------------------------------------------------------------- */

typedef struct start_row {
    const char *what;
    const char *annotations; /* besides OTA */
    size_t marked, running;  /* pods pending, pods pulling automatically */
    int canary_ready;        /* a pod at H that is Ready */
    int not_ready_nodes;     /* the marked pods' nodes are NotReady */
    size_t want;
} start_row;

static const start_row start_rows[] = {
    {"parallelism 2, 5 pending: 2", PAR("2"), 5, 0, 0, 0, 2},
    {"parallelism 2, 1 runs: 1 more", PAR("2"), 5, 1, 0, 0, 1},
    {"parallelism 2, 2 run: none", PAR("2"), 5, 2, 0, 0, 0},
    {"empty parallelism: Kruise's 1", PAR(""), 5, 0, 0, 0, 1},
    {"fewer pending than slots", PAR("10"), 3, 0, 0, 0, 3},
    /* NOW is 21:30 UTC = 05:30 in Shanghai */
    {"outside the window (UTC): none", PAR("5") ",\"" OTA_ANN_PREPULL_WINDOW "\":\"22:00-06:00\"",
     3, 0, 0, 0, 0},
    {"inside the window (Shanghai)",
     PAR("5") ",\"" OTA_ANN_PREPULL_WINDOW "\":\"22:00-06:00 Asia/Shanghai\"", 3, 0, 0, 0, 3},
    {"a zone not known: none",
     PAR("5") ",\"" OTA_ANN_PREPULL_WINDOW "\":\"22:00-06:00 Nowhere/Atlantis\"", 3, 0, 0, 0, 0},
    {"a bad window: no opt-in", PAR("5") ",\"" OTA_ANN_PREPULL_WINDOW "\":\"nights\"", 3, 0, 0, 0,
     0},
    {"canary 1, none Ready at H: none",
     PAR("5") ",\"" OTA_ANN_PREDOWNLOAD_MIN_READY "\":\"1\"", 3, 0, 0, 0, 0},
    {"canary 1, one Ready at H: go", PAR("5") ",\"" OTA_ANN_PREDOWNLOAD_MIN_READY "\":\"1\"", 3,
     0, 1, 0, 3},
    {"canary 50% of 4 pods (2), one Ready: none",
     PAR("5") ",\"" OTA_ANN_PREDOWNLOAD_MIN_READY "\":\"50%\"", 3, 0, 1, 0, 0},
    {"NotReady nodes are waited for", PAR("5"), 3, 0, 0, 1, 0},
};

static void test_starts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(start_rows) / sizeof(start_rows[0]); i++) {
        const start_row *r = &start_rows[i];
        world w;
        world_init(&w);
        opted_in(&w, r->annotations);
        pods(&w, r->marked, MARKED);
        for (size_t k = 0; k < r->running; k++) {
            char name[32], uid[32], node[32];
            snprintf(name, sizeof(name), "run-%zu", k);
            snprintf(uid, sizeof(uid), "u-run-%zu", k);
            snprintf(node, sizeof(node), "rn-%zu", k);
            add_pod_full(&w, name, uid, DS_UID, node, OLD, AUTO_PULLING(RT2), 0);
        }
        if (r->canary_ready)
            add_pod_full(&w, "canary", "u-canary", DS_UID, "n-c", H,
                         "[" READY "," NU("False", H) "]", 0);
        if (r->not_ready_nodes)
            for (size_t k = 0; k < r->marked; k++) {
                char node[32];
                snprintf(node, sizeof(node), "n-%zu", k);
                put(&w.node_states, KOBJ_NODE_STATE, node,
                    "{\"metadata\":{\"name\":\"%s\",\"uid\":\"ns-%s\"},\"status\":{\"conditions\":"
                    "[{\"type\":\"Ready\",\"status\":\"Unknown\"}]}}",
                    node, node);
            }
        run(&w);
        size_t got = starts(&w);
        if (got != r->want)
            dump(&w.out);
        ROW_CHECK(r->what, got == r->want, "%zu starts", got);
        world_free(&w);
    }
}

/* Pass after pass with writes in flight (skipped keys): the same pods are
 * picked, never more than the parallelism. */
static void test_starts_stable_while_in_flight(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("2"));
    pods(&w, 5, MARKED);
    run(&w);
    assert_int_equal(starts(&w), 2);
    strset inflight;
    strset_init(&inflight);
    for (size_t i = 0; i < w.out.n; i++)
        assert_int_equal(strset_add(&inflight, w.out.v[i].key), 0);
    w.in.skip[0] = &inflight;
    run(&w);
    assert_int_equal(starts(&w), 0); /* the same two, in flight */
    w.in.skip[0] = NULL;
    strset_free(&inflight);
    world_free(&w);
}

/* Starts in flight count as running though pods pending earlier in store
 * order appear meanwhile (the marks of a rollout land between passes): seen
 * in bench/autoprepull.py, 7 automatic pulls at once at parallelism 5.
 * Thirty pods marked PodNeedUpgrade alone (not pending); the last two in
 * store order get AutoPrePull, pass 1 starts them; then the other 28 get
 * it too (same uids: same places, all before), and pass 2, with the two
 * starts in flight, starts none. */
/* pod-<k> (uid u-<k>, node n-<k>) marked AutoPrePull True too, in its place. */
static void remark(world *w, const char *name)
{
    unsigned k = (unsigned)strtoul(name + strlen("pod-"), NULL, 10);
    char uid[32], node[32];
    snprintf(uid, sizeof(uid), "u-%u", k);
    snprintf(node, sizeof(node), "n-%u", k);
    add_pod_full(w, name, uid, DS_UID, node, OLD, MARKED, 0);
}

static void test_starts_in_flight_count_when_pending_appear(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("2"));
    enum { N = 30 };
    for (size_t i = 0; i < N; i++) {
        char name[32], uid[32], node[32];
        snprintf(name, sizeof(name), "pod-%zu", i);
        snprintf(uid, sizeof(uid), "u-%zu", i);
        snprintf(node, sizeof(node), "n-%zu", i);
        add_pod_full(&w, name, uid, DS_UID, node, OLD, "[" READY "," NU("True", H) "]", 0);
    }
    char order[N][32];
    size_t n = 0;
    kobj *pod;
    for (size_t i = 0; (pod = store_next(&w.pods, &i)) != NULL;)
        snprintf(order[n++], sizeof(order[0]), "%s", pod->meta.name);
    assert_int_equal(n, N);
    remark(&w, order[N - 2]);
    remark(&w, order[N - 1]);
    run(&w);
    assert_int_equal(starts(&w), 2);
    assert_non_null(find(&w, ACTION_PATCH_POD_STATUS, order[N - 2]));
    assert_non_null(find(&w, ACTION_PATCH_POD_STATUS, order[N - 1]));
    strset inflight;
    strset_init(&inflight);
    for (size_t i = 0; i < w.out.n; i++)
        assert_int_equal(strset_add(&inflight, w.out.v[i].key), 0);
    for (size_t k = 0; k < N - 2; k++)
        remark(&w, order[k]);
    w.in.skip[0] = &inflight;
    run(&w);
    size_t got = starts(&w);
    if (got != 0)
        dump(&w.out);
    assert_int_equal(got, 0); /* 2 running (in flight), parallelism 2 */
    w.in.skip[0] = NULL;
    strset_free(&inflight);
    world_free(&w);
}

/* ---- the annotation dropped ------------------------------------------------------ */

static void test_opted_out(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, "");
    pods(&w, 2, MARKED);
    add_pod_full(&w, "running", "u-running", DS_UID, "n-r", OLD, AUTO_PULLING(RT2), 0);
    add_pod_full(&w, "done", "u-done", DS_UID, "n-d", OLD, AUTO_READY, 0);
    run(&w);
    assert_int_equal(starts(&w), 0);
    for (size_t i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "pod-%zu", i);
        patched ap = patch_cond(the(&w, ACTION_PATCH_POD_STATUS, name), OTA_COND_AUTO_PREPULL);
        assert_true(ap.found);
        assert_int_equal(ap.n, 1);
        assert_string_equal(ap.status, "False");
        assert_string_equal(ap.reason, OTA_REASON_AUTO_OPTED_OUT);
    }
    /* the one started goes on (its Job), the one done stays reported */
    const action *r = find(&w, ACTION_PATCH_POD_STATUS, "running");
    assert_true(r == NULL || !patch_cond(r, OTA_COND_AUTO_PREPULL).found);
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, "done"));
    world_free(&w);
}

/* ---- the queue: a node user's request first ---------------------------------------- */

static void test_bulk_behind_node_user(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    w.cfg.max_concurrent_pulls = 10;
    opted_in(&w, PAR("5"));
    /* same node: one slot; the automatic pull was asked for earlier */
    add_pod_full(&w, "auto", "u-auto", DS_UID, NODE, OLD, AUTO_PULLING(RT1), 0);
    add_pod_full(&w, "user", "u-user", DS_UID, NODE, OLD,
                 "[" READY "," NU("True", H) "," AP("False", OTA_REASON_AUTO_NODE_USER, H) ","
                 IR("False", OTA_REASON_WAIT_PULL, H, RT2) "]",
                 0);
    add_node(&w, NODE, "[\"registry.k8s.io/pause:3.9\"]");
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    char name[PREPULL_JOB_NAME_MAX + 1];
    job_name_of(name, "user", "u-user", H, RT2);
    assert_non_null(find(&w, ACTION_CREATE_JOB, NULL));
    const action *job = find(&w, ACTION_CREATE_JOB, NULL);
    assert_non_null(strstr(job->body, "u-user"));
    assert_null(strstr(job->body, "u-auto"));
    world_free(&w);
}

/* Kruise's timeout is an automatic pull's deadline; a node user's request
 * keeps the usual one (--pull-timeout here, 600 s). */
static void test_auto_deadline(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("5") ",\"" OTA_ANN_PREDOWNLOAD_TIMEOUT "\":\"1200\"");
    add_pod_full(&w, "auto", "u-auto", DS_UID, "n-a", OLD, AUTO_PULLING(RT1), 0);
    add_pod_full(&w, "user", "u-user", DS_UID, "n-u", OLD,
                 "[" READY "," NU("True", H) "," AP("False", OTA_REASON_AUTO_NODE_USER, H) ","
                 IR("False", OTA_REASON_WAIT_PULL, H, RT2) "]",
                 0);
    add_node(&w, "n-a", "[\"registry.k8s.io/pause:3.9\"]");
    add_node(&w, "n-u", "[\"registry.k8s.io/pause:3.9\"]");
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 2);
    for (size_t i = 0; i < w.out.n; i++) {
        const action *a = &w.out.v[i];
        if (a->kind != ACTION_CREATE_JOB)
            continue;
        int is_auto = strstr(a->body, "u-auto") != NULL;
        yajl_val job = tree(a);
        yajl_val d = yajl_tree_get(job, (const char *[]){"spec", "activeDeadlineSeconds", NULL},
                                   yajl_t_number);
        assert_non_null(d);
        assert_int_equal(YAJL_GET_INTEGER(d), is_auto ? 1200 : 600);
        yajl_tree_free(job);
        assert_int_equal(a->note.deadline_s, is_auto ? 1200 : 600);
    }
    world_free(&w);
}

/* ---- Events on the DaemonSet -------------------------------------------------------- */

static void test_events(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("2"));
    pods(&w, 3, MARKED);
    run(&w);
    assert_int_equal(count_events(&w, OTA_EVENT_AUTO_STARTED), 1);
    assert_int_equal(count_events(&w, OTA_EVENT_AUTO_FINISHED), 0);
    const action *e = find_event(&w, OTA_EVENT_AUTO_STARTED, "edge-agent");
    assert_non_null(e);
    assert_non_null(strstr(e->body, "3 pods to pull, at most 2 at once"));
    /* said once per revision */
    assert_int_equal(strset_add(&w.events_sent, e->key), 0);
    run(&w);
    assert_int_equal(count_events(&w, OTA_EVENT_AUTO_STARTED), 0);
    world_free(&w);

    world_init(&w);
    opted_in(&w, PAR("2"));
    pods(&w, 2, AUTO_READY);
    add_pod_full(&w, "waiting", "u-waiting", DS_UID, "n-w", OLD, MARKED, 0);
    put(&w.node_states, KOBJ_NODE_STATE, "n-w",
        "{\"metadata\":{\"name\":\"n-w\",\"uid\":\"ns-n-w\"},\"status\":{\"conditions\":"
        "[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    run(&w);
    e = find_event(&w, OTA_EVENT_AUTO_FINISHED, "edge-agent");
    assert_non_null(e);
    assert_non_null(strstr(e->body, "2 ready, 0 failed, 1 waiting"));
    world_free(&w);
}

static void test_bad_annotation_event(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("many"));
    pods(&w, 1, "[" READY "]");
    run(&w);
    const action *e = find_event(&w, OTA_EVENT_AUTO_BAD, "edge-agent");
    assert_non_null(e);
    assert_non_null(strstr(e->body, "Warning"));
    assert_non_null(strstr(e->body, OTA_ANN_PREDOWNLOAD_PARALLELISM));
    assert_false(patch_cond(the(&w, ACTION_PATCH_POD_STATUS, "pod-0"), OTA_COND_AUTO_PREPULL).found);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mark_in_need_upgrade_write),
        cmocka_unit_test(test_no_mark_without_opt_in),
        cmocka_unit_test(test_mark_alone_when_opted_in_later),
        cmocka_unit_test(test_starts),
        cmocka_unit_test(test_starts_stable_while_in_flight),
        cmocka_unit_test(test_starts_in_flight_count_when_pending_appear),
        cmocka_unit_test(test_opted_out),
        cmocka_unit_test(test_bulk_behind_node_user),
        cmocka_unit_test(test_auto_deadline),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_bad_annotation_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

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

/* The DaemonSet edge-agent, OTA or not (to the controller a RollingUpdate
 * DaemonSet: it reads no spec.updateStrategy), with the fixture's
 * revisions and these automatic pre-pull annotations (JSON members, or ""). */
static void edge_agent(world *w, int ota, const char *more)
{
    char ann[600];
    snprintf(ann, sizeof(ann), "{%s%s%s}", ota ? "\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"" : "",
             ota && more[0] != '\0' ? "," : "", more);
    add_ds(w, "edge-agent", DS_UID, ann, 0);
    add_rev(w, DS_UID, H, 3, "[]", "[{\"name\":\"agent\",\"image\":\"" AGENT_IMAGE "\"}]", "[]");
    add_rev(w, DS_UID, OLD, 1, "[]",
            "[{\"name\":\"agent\",\"image\":\"registry.example.com/edge/agent:v1\"}]", "[]");
}

static void opted_in(world *w, const char *more)
{
    edge_agent(w, 1, more);
}

static void rolling(world *w, const char *more)
{
    edge_agent(w, 0, more);
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
            /* logged as a start, not as a PodNeedUpgrade removed */
            assert_int_equal(a->note.auto_start, 1);
            assert_null(a->note.reason);
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

/* Every write of the last pass in flight from now on (the executor's
 * skip set); unskip ends it. */
static void skip_last_pass(world *w, strset *inflight)
{
    strset_init(inflight);
    for (size_t i = 0; i < w->out.n; i++)
        assert_int_equal(strset_add(inflight, w->out.v[i].key), 0);
    w->in.skip[0] = inflight;
}

static void unskip(world *w, strset *inflight)
{
    w->in.skip[0] = NULL;
    strset_free(inflight);
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
    skip_last_pass(&w, &inflight);
    run(&w);
    assert_int_equal(starts(&w), 0); /* the same two, in flight */
    unskip(&w, &inflight);
    world_free(&w);
}

/* A Pulling write in flight counts wherever its pod stands in the order:
 * marks that land later may put pods before it (seen end to end: a first
 * pass with one pod marked started it, the next with all marked started
 * parallelism more: 5 at parallelism 4). */
static void test_starts_in_flight_anywhere(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    opted_in(&w, PAR("2"));
    pods(&w, 5, MARKED);
    run(&w);
    /* the pods this pass would start: the in-flight one is another */
    const char *in_flight = NULL;
    for (size_t i = 0; i < 5 && in_flight == NULL; i++) {
        static char name[32];
        snprintf(name, sizeof(name), "pod-%zu", i);
        if (find(&w, ACTION_PATCH_POD_STATUS, name) == NULL)
            in_flight = name;
    }
    assert_non_null(in_flight);
    char key[200];
    snprintf(key, sizeof(key), "status:u-%s@" POD_RV ":auto-pull:" H, in_flight + strlen("pod-"));
    strset inflight;
    strset_init(&inflight);
    assert_int_equal(strset_add(&inflight, key), 0);
    w.in.skip[0] = &inflight;
    run(&w);
    assert_int_equal(starts(&w), 1); /* 2, less the one in flight */
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, in_flight));
    w.in.skip[0] = NULL;
    strset_free(&inflight);
    world_free(&w);
}

/* A pod marked while starts are in flight (its mark seen late) may come
 * before them in the store's order: the in-flight starts hold their
 * slots wherever they are (seen e2e: a fifth start at parallelism 4).
 * Names vary so that the late pod lands at every place in the order. */
static void test_starts_in_flight_hold_slots(void **state)
{
    (void)state;
    const char *late_names[] = {"a", "b", "c", "late", "pod-00", "zz", "m-1", "q"};
    for (size_t k = 0; k < sizeof(late_names) / sizeof(late_names[0]); k++) {
        for (long par = 2; par <= 3; par++) {
            world w;
            world_init(&w);
            char ann[160];
            snprintf(ann, sizeof(ann), "\"" OTA_ANN_PREDOWNLOAD_PARALLELISM "\":\"%ld\"", par);
            opted_in(&w, ann);
            pods(&w, 2, MARKED);
            char uid[32];
            snprintf(uid, sizeof(uid), "u-%s", late_names[k]);
            /* PodNeedUpgrade for H, the AutoPrePull mark not seen yet */
            add_pod_full(&w, late_names[k], uid, DS_UID, "n-late", OLD,
                         "[" READY "," NU("True", H) "]", 0);
            run(&w);
            assert_int_equal(starts(&w), 2);
            strset inflight;
            skip_last_pass(&w, &inflight);
            add_pod_full(&w, late_names[k], uid, DS_UID, "n-late", OLD, MARKED, 0);
            run(&w);
            size_t got = starts(&w);
            ROW_CHECK(late_names[k], got == (size_t)par - 2, "%zu starts at parallelism %ld", got,
                      par);
            unskip(&w, &inflight);
            world_free(&w);
        }
    }
}

/* ---- the window's opening: a pass then, not at the resync ------------------------ */

typedef struct wake_row {
    const char *what;
    const char *annotations;
    const char *conditions; /* of the pods */
    long long want;         /* wake_after_s */
} wake_row;

#define WINDOW(v) PAR("5") ",\"" OTA_ANN_PREPULL_WINDOW "\":\"" v "\""

/* NOW is 21:30:00 UTC, 05:30 in Shanghai. */
static const wake_row wake_rows[] = {
    {"closed, pods marked: at 22:00", WINDOW("22:00-06:00"), MARKED, 30 * 60},
    {"closed, in Shanghai: at 22:00 there", WINDOW("22:00-23:00 Asia/Shanghai"), MARKED,
     (22 * 60 - (5 * 60 + 30)) * 60LL},
    {"closed, a minute before it opens", WINDOW("21:31-22:00"), MARKED, 60},
    {"closed, just closed: a day less the hour", WINDOW("20:30-21:30"), MARKED,
     23 * 3600LL},
    {"open: starts now, no wake", WINDOW("21:00-22:00"), MARKED, 0},
    {"closed, nothing marked: no wake", WINDOW("22:00-06:00"), "[" READY "," NU("True", H) "]",
     0},
    {"closed, every pod pulled: no wake", WINDOW("22:00-06:00"), AUTO_READY, 0},
    {"closed, a zone not known: no wake", WINDOW("22:00-06:00 Nowhere/Atlantis"), MARKED, 0},
    {"no window: no wake", PAR("5"), MARKED, 0},
};

static void test_wake_at_window_opening(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(wake_rows) / sizeof(wake_rows[0]); i++) {
        const wake_row *r = &wake_rows[i];
        world w;
        world_init(&w);
        opted_in(&w, r->annotations);
        pods(&w, 3, r->conditions);
        run(&w);
        ROW_CHECK(r->what, w.out.wake_after_s == r->want, "wake %lld, want %lld",
                  w.out.wake_after_s, r->want);
        world_free(&w);
    }
}

/* Two DaemonSets waiting for their windows: the earlier opening, in
 * either order. */
static void test_wake_earliest_window(void **state)
{
    (void)state;
    const char *windows[][2] = {{"22:00-06:00", "21:35-22:00"}, {"21:35-22:00", "22:00-06:00"}};
    for (size_t i = 0; i < 2; i++) {
        world w;
        world_init(&w);
        char ann[300];
        snprintf(ann, sizeof(ann), PAR("5") ",\"" OTA_ANN_PREPULL_WINDOW "\":\"%s\"",
                 windows[i][0]);
        opted_in(&w, ann);
        pods(&w, 2, MARKED);
        snprintf(ann, sizeof(ann),
                 "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"," PAR("5") ",\"" OTA_ANN_PREPULL_WINDOW
                 "\":\"%s\"}",
                 windows[i][1]);
        add_ds(&w, "other", "ds-other", ann, 0);
        add_rev(&w, "ds-other", H, 3, "[]", "[{\"name\":\"agent\",\"image\":\"" AGENT_IMAGE "\"}]",
                "[]");
        add_rev(&w, "ds-other", OLD, 1, "[]",
                "[{\"name\":\"agent\",\"image\":\"registry.example.com/edge/agent:v1\"}]", "[]");
        add_pod_full(&w, "other-0", "u-other-0", "ds-other", "n-o", OLD, MARKED, 0);
        run(&w);
        assert_int_equal(w.out.wake_after_s, 5 * 60);
        world_free(&w);
    }
}

/* ---- the annotation dropped ------------------------------------------------------ */

/* pod-0 .. pod-<n-1> got AutoPrePull False/OptedOut, in a write of it alone. */
static void assert_opted_out(const world *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "pod-%zu", i);
        patched ap = patch_cond(the(w, ACTION_PATCH_POD_STATUS, name), OTA_COND_AUTO_PREPULL);
        assert_true(ap.found);
        assert_int_equal(ap.n, 1);
        assert_string_equal(ap.status, "False");
        assert_string_equal(ap.reason, OTA_REASON_AUTO_OPTED_OUT);
    }
}

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
    assert_opted_out(&w, 2);
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
    assert_int_equal(strset_add(&w.events_sent, e->key), 0);
    run(&w);
    assert_int_equal(count_events(&w, OTA_EVENT_AUTO_FINISHED), 0); /* said */
    /* one pod upgraded (its pod at H is not counted): nothing new to say */
    assert_int_equal(store_delete(&w.pods, "u-0"), 1);
    run(&w);
    assert_int_equal(count_events(&w, OTA_EVENT_AUTO_FINISHED), 0);
    /* the node came back and its pod was pulled: said again, new counts */
    put(&w.node_states, KOBJ_NODE_STATE, "n-w",
        "{\"metadata\":{\"name\":\"n-w\",\"uid\":\"ns-n-w\"},\"status\":{\"conditions\":"
        "[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    add_pod_full(&w, "waiting", "u-waiting", DS_UID, "n-w", OLD, AUTO_READY, 0);
    run(&w);
    e = find_event(&w, OTA_EVENT_AUTO_FINISHED, "edge-agent");
    assert_non_null(e);
    assert_non_null(strstr(e->body, "2 ready, 0 failed, 0 waiting"));
    world_free(&w);
}

/* OTA: the pod is marked PendingUpgrade without AutoPrePull; not OTA: the
 * Event alone, nothing on its pods. */
static void test_bad_annotation_event(void **state)
{
    (void)state;
    for (int ota = 1; ota >= 0; ota--) {
        world w;
        world_init(&w);
        edge_agent(&w, ota, PAR("many"));
        pods(&w, 1, "[" READY "]");
        run(&w);
        const action *e = find_event(&w, OTA_EVENT_AUTO_BAD, "edge-agent");
        assert_non_null(e);
        assert_non_null(strstr(e->body, "Warning"));
        assert_non_null(strstr(e->body, OTA_ANN_PREDOWNLOAD_PARALLELISM));
        assert_non_null(strstr(e->body, "no automatic pre-pull"));
        if (ota)
            assert_false(
                patch_cond(the(&w, ACTION_PATCH_POD_STATUS, "pod-0"), OTA_COND_AUTO_PREPULL).found);
        else
            expect_total(&w, 1);
        world_free(&w);
    }
}

/* ---- a DaemonSet that is not OTA (RollingUpdate) --------------------------------- */

/* Opted in: marked as an OTA DaemonSet's pods (the new ones at H get
 * PodNeedUpgrade False), then as many start as the parallelism allows. */
static void test_rolling_marks_and_starts(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    rolling(&w, PAR("2"));
    pods(&w, 3, "[" READY "]");
    add_pod_full(&w, "new", "u-new", DS_UID, "n-new", H, "[" READY "]", 0);
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 4);
    for (size_t i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "pod-%zu", i);
        const action *a = the(&w, ACTION_PATCH_POD_STATUS, name);
        patched nu = patch_cond(a, OTA_COND_NEED_UPGRADE);
        patched ap = patch_cond(a, OTA_COND_AUTO_PREPULL);
        assert_true(nu.found && ap.found);
        assert_string_equal(nu.status, "True");
        assert_string_equal(ap.status, "True");
        assert_string_equal(ap.message, REV_MSG(H));
    }
    patched nu = patch_cond(the(&w, ACTION_PATCH_POD_STATUS, "new"), OTA_COND_NEED_UPGRADE);
    assert_true(nu.found);
    assert_string_equal(nu.status, "False");
    assert_false(patch_cond(the(&w, ACTION_PATCH_POD_STATUS, "new"), OTA_COND_AUTO_PREPULL).found);
    world_free(&w);

    /* as written: two start; the pod the rollout replaced (deleted) is not
     * one of them and takes no share */
    world_init(&w);
    rolling(&w, PAR("2"));
    add_pod_full(&w, "replaced", "u-replaced", DS_UID, "n-r", OLD, AUTO_PULLING(RT1), 1);
    pods(&w, 3, MARKED);
    run(&w);
    assert_int_equal(starts(&w), 2);
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, "pod-2"));
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, "replaced"));
    assert_int_equal(count_events(&w, OTA_EVENT_AUTO_STARTED), 1);
    world_free(&w);

    /* started: its Job, a bulk unit, as an OTA DaemonSet's */
    world_init(&w);
    rolling(&w, PAR("2"));
    add_pod_full(&w, "auto", "u-auto", DS_UID, NODE, OLD, AUTO_PULLING(RT1), 0);
    add_node(&w, NODE, "[\"registry.k8s.io/pause:3.9\"]");
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    assert_non_null(strstr(find(&w, ACTION_CREATE_JOB, NULL)->body, "u-auto"));
    world_free(&w);
}

/* Never opted in: not one action about it or its pods, whatever they carry
 * (a node user's request there is answered by test_reconcile_unserved). */
static void test_rolling_never_opted_in(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    rolling(&w, "\"" OTA_ANN_PREDOWNLOAD_TIMEOUT "\":\"600\"");
    pods(&w, 3, "[" READY "]");
    add_pod_full(&w, "new", "u-new", DS_UID, "n-new", H, "[" READY "]", 0);
    add_pod_full(&w, "done", "u-done", DS_UID, "n-d", OLD,
                 "[" READY "," AP("False", OTA_REASON_AUTO_OPTED_OUT, H) "]", 0);
    run(&w);
    expect_total(&w, 0);
    world_free(&w);
}

/* The annotation dropped: not started -> OptedOut, running -> goes on (its
 * Job), pulled -> stays reported; other pods are not ours. */
static void test_rolling_dropped(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    rolling(&w, "");
    pods(&w, 2, MARKED);
    add_pod_full(&w, "running", "u-running", DS_UID, NODE, OLD, AUTO_PULLING(RT2), 0);
    add_node(&w, NODE, "[\"registry.k8s.io/pause:3.9\"]");
    add_pod_full(&w, "done", "u-done", DS_UID, "n-d", OLD, AUTO_READY, 0);
    add_pod_full(&w, "new", "u-new", DS_UID, "n-new", H, "[" READY "]", 0);
    run(&w);
    assert_int_equal(starts(&w), 0);
    assert_opted_out(&w, 2);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, "running"));
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, "new")); /* not ours: no PodNeedUpgrade */
    /* pulled: its outcome stays; the PodNeedUpgrade nothing serves goes */
    const action *d = find(&w, ACTION_PATCH_POD_STATUS, "done");
    assert_non_null(d);
    assert_true(patch_cond(d, OTA_COND_NEED_UPGRADE).deleted);
    assert_false(patch_cond(d, OTA_COND_IMAGE_READY).found);
    assert_false(patch_cond(d, OTA_COND_AUTO_PREPULL).found);
    world_free(&w);

    /* every automatic pull finished: the DaemonSet is no longer served,
     * only our PodNeedUpgrade is taken back */
    world_init(&w);
    rolling(&w, "");
    pods(&w, 2, "[" READY "," NU("True", H) "," AP("False", OTA_REASON_AUTO_OPTED_OUT, H) "]");
    add_pod_full(&w, "new", "u-new", DS_UID, "n-new", H, "[" READY "," NU("False", H) "]", 0);
    run(&w);
    expect_total(&w, 2);
    for (size_t i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "pod-%zu", i);
        const action *a = the(&w, ACTION_PATCH_POD_STATUS, name);
        assert_true(patch_cond(a, OTA_COND_NEED_UPGRADE).deleted);
        assert_false(patch_cond(a, OTA_COND_AUTO_PREPULL).found);
    }
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
        cmocka_unit_test(test_starts_in_flight_anywhere),
        cmocka_unit_test(test_starts_in_flight_hold_slots),
        cmocka_unit_test(test_wake_at_window_opening),
        cmocka_unit_test(test_wake_earliest_window),
        cmocka_unit_test(test_opted_out),
        cmocka_unit_test(test_bulk_behind_node_user),
        cmocka_unit_test(test_auto_deadline),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_bad_annotation_event),
        cmocka_unit_test(test_rolling_marks_and_starts),
        cmocka_unit_test(test_rolling_never_opted_in),
        cmocka_unit_test(test_rolling_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

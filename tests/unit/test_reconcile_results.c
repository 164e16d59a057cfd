/*
 * test_reconcile_results.c - the controller's decisions: a Job's outcome as
 * PodImageReady (docs/design.md §5 "Results"): Complete is Ready, Failed or a
 * pull stuck past the deadline is Failed with the kubelet's reason and
 * message, never stamped before the request; the outcome each status patch
 * carries for the executor's counters, and the notes it reads.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- outcomes ---------------------------------------------------------------- */

/* A result is written no earlier than its request: a request stamped by a
 * webhook whose clock is ahead of the controller's (RT_AHEAD > NOW) gets a
 * result at RT_AHEAD, so the next request (stamped after the result) never
 * names this request's Job again.  A request in the past: the result at
 * now. */
#define RT_AHEAD "2026-11-21T21:30:07Z"
static void test_result_not_before_request(void **state)
{
    (void)state;
    static const struct {
        const char *rt, *status, *want_ltt;
    } rows[] = {
        {RT_AHEAD, JOB_COMPLETE, RT_AHEAD},
        {RT_AHEAD, JOB_DEADLINE, RT_AHEAD},
        {RT1, JOB_COMPLETE, NOW},
        {RT1, JOB_DEADLINE, NOW},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        world w;
        world_init(&w);
        standard(&w);
        add_node(&w, NODE, "[]");
        if (strcmp(rows[i].rt, RT_AHEAD) == 0) /* PULLING() pastes its argument */
            add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT_AHEAD));
        else
            add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
        char name[64];
        add_job(&w, job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, rows[i].rt), "u-x7k2p",
                H, rows[i].rt, rows[i].status, 0);
        run(&w);
        patched ir = patch_cond(the(&w, ACTION_PATCH_POD_STATUS, "edge-agent-x7k2p"),
                                OTA_COND_IMAGE_READY);
        assert_string_equal(ir.ltt, rows[i].want_ltt);
        world_free(&w);
    }
}

static void test_job_complete(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    char name[64];
    add_job(&w, job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1), "u-x7k2p", H, RT1,
            JOB_COMPLETE, 0);
    run(&w);
    expect_total(&w, 2);
    const action *a = the(&w, ACTION_PATCH_POD_STATUS, "edge-agent-x7k2p");
    assert_string_equal(a->key, "status:u-x7k2p@" POD_RV ":ready");
    patched ir = patch_cond(a, OTA_COND_IMAGE_READY);
    assert_int_equal(ir.n, 1);
    assert_string_equal(ir.status, "True");
    assert_string_equal(ir.reason, OTA_REASON_PULL_SUCCESS);
    assert_string_equal(ir.message, REV_MSG(H));
    const action *e = find_event(&w, OTA_EVENT_SUCCEEDED, "edge-agent-x7k2p");
    assert_non_null(e);
    yajl_val ev = tree(e);
    assert_string_equal(str_at(ev, (const char *[]){"type", NULL}), "Normal");
    yajl_tree_free(ev);
    /* once Ready, the pod is no request any more: nothing */
    store_delete(&w.pods, "u-x7k2p");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD,
            "[" NU("True", H) "," IR("True", OTA_REASON_PULL_SUCCESS, H, NOW) "]");
    run(&w);
    expect_total(&w, 0);
    world_free(&w);
}


static void test_job_failed(void **state)
{
    (void)state;
    char name[64];
    job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1);

    /* the Job pod says why: the kubelet's reason and message */
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    add_job(&w, name, "u-x7k2p", H, RT1, JOB_DEADLINE, 0);
    add_job_pod(&w, name, "ErrImagePull", PULL_MSG);
    /* another Job's pod stuck differently is not this one's story */
    add_job_pod(&w, "ota-prepull-other-00000000", "ImagePullBackOff", "other");
    run(&w);
    expect_total(&w, 2);
    expect_failed(&w, name, "ErrImagePull: " PULL_MSG_PLAIN);
    world_free(&w);

    /* the pod is gone: the Job's own reason */
    world_init(&w);
    standard(&w);
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    add_job(&w, name, "u-x7k2p", H, RT1, JOB_DEADLINE, 0);
    run(&w);
    expect_total(&w, 2);
    expect_failed(&w, name,
                  "DeadlineExceeded: Job was active longer than specified deadline" DEADLINE_HINT("900"));
    world_free(&w);

    /* the pod is gone but the controller remembered why it waited */
    world_init(&w);
    standard(&w);
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    add_job(&w, name, "u-x7k2p", H, RT1, JOB_DEADLINE, 0);
    add_job_pod(&w, name, "ImagePullBackOff", "Back-off pulling image");
    size_t it = 0;
    kobj *jp = store_next(&w.job_pods, &it);
    assert_non_null(jp);
    char key[128];
    snprintf(key, sizeof(key), NS "/%s", name);
    assert_int_equal(store_put(&w.job_waiting, key, kobj_copy_job_pod(jp)), 0);
    store_free(&w.job_pods);
    run(&w);
    expect_failed(&w, name, "ImagePullBackOff: Back-off pulling image" DEADLINE_HINT("900"));
    world_free(&w);
}

/* A Job whose pod cannot pull never fails by itself; past the deadline the
 * controller says so, with the kubelet's reason. */
static void test_stuck_pull_past_deadline(void **state)
{
    (void)state;
    char name[64];
    job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    static const struct {
        const char *start, *reason;
        int fails;       /* 1: by the deadline, 2: at once (the kubelet gave up) */
        size_t actions;  /* when it does not fail: a back-off Event, or nothing */
    } rows[] = {
        /* the DaemonSet's deadline is 900 s; now is 21:30:00; "m" is no
         * registry's refusal, so it may heal */
        {"2026-11-21T21:14:59Z", "ErrImagePull", 1, 0},
        {"2026-11-21T21:15:00Z", "ErrImagePull", 0, 1},
        {"2026-11-21T21:00:00Z", "ImagePullBackOff", 1, 0},
        {"2026-11-21T21:00:00Z", "InvalidImageName", 2, 0},
        {"2026-11-21T21:29:00Z", "InvalidImageName", 2, 0},
        {"2026-11-21T21:29:00Z", "ErrImageNeverPull", 2, 0},
        /* not a pull problem: left to the Job controller */
        {"2026-11-21T21:00:00Z", "CreateContainerConfigError", 0, 0},
        {"2026-11-21T21:29:00Z", "ImagePullBackOff", 0, 1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        world w;
        world_init(&w);
        standard(&w);
        add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
        char status[128];
        snprintf(status, sizeof(status), "{\"active\":1,\"startTime\":\"%s\"}", rows[i].start);
        add_job(&w, name, "u-x7k2p", H, RT1, status, 0);
        add_job_pod(&w, name, rows[i].reason, "m");
        run(&w);
        print_message("start %s, %s\n", rows[i].start, rows[i].reason);
        if (rows[i].fails) {
            char why[512];
            snprintf(why, sizeof(why), "%s: m%s", rows[i].reason,
                     rows[i].fails == 2 ? FAST_HINT : DEADLINE_HINT("900"));
            expect_failed(&w, name, why);
        } else {
            expect_total(&w, rows[i].actions);
            if (rows[i].actions == 1)
                assert_non_null(find_event(&w, OTA_EVENT_BACKOFF, "edge-agent-x7k2p"));
        }
        world_free(&w);
    }
}

/* ---- outcomes as the executor counts them ------------------------------------- */

/* Each way a pass can report on a request, and the outcome its status patch
 * carries: the executor counts pulls by it (it used to look for ":ready" and
 * ":failed:" in the key).  Everything else a pass emits carries none. */
typedef enum outcome_setup {
    SETUP_JOB_COMPLETE,
    SETUP_JOB_FAILED,
    SETUP_IMAGES_ON_NODE,
    SETUP_INVALID_IMAGE,
    SETUP_NEW_REQUEST,  /* a Job to create, and its events */
    SETUP_STALE_POD,    /* PodNeedUpgrade only */
} outcome_setup;

typedef struct outcome_row {
    const char *name;
    outcome_setup setup;
    int has_status;         /* a status patch about edge-agent-x7k2p is expected */
    action_outcome status;  /* the outcome it carries */
} outcome_row;

static const outcome_row outcome_rows[] = {
    {"Job complete: succeeded", SETUP_JOB_COMPLETE, 1, ACTION_OUTCOME_PULL_SUCCEEDED},
    {"Job failed: failed", SETUP_JOB_FAILED, 1, ACTION_OUTCOME_PULL_FAILED},
    {"images already on the node: succeeded", SETUP_IMAGES_ON_NODE, 1,
     ACTION_OUTCOME_PULL_SUCCEEDED},
    {"no Job can be rendered: failed", SETUP_INVALID_IMAGE, 1, ACTION_OUTCOME_PULL_FAILED},
    {"a Job to create: no outcome yet", SETUP_NEW_REQUEST, 0, ACTION_OUTCOME_NONE},
    {"PodNeedUpgrade: no pull outcome", SETUP_STALE_POD, 1, ACTION_OUTCOME_NONE},
};

static void outcome_world(world *w, outcome_setup setup)
{
    char name[64];
    job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    if (setup == SETUP_INVALID_IMAGE) {
        add_ds(w, "edge-agent", DS_UID, "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 0);
        add_rev(w, DS_UID, H, 3, "[]",
                "[{\"name\":\"agent\",\"image\":\"Registry.Example.com/Edge/AGENT:v3\"}]", "[]");
    } else {
        standard(w);
    }
    add_node(w, NODE,
             setup == SETUP_IMAGES_ON_NODE ? "[\"nginx:1.25\",\"" AGENT_IMAGE "\",\"" INIT_IMAGE "\"]"
                                           : "[]");
    add_pod(w, "edge-agent-x7k2p", "u-x7k2p", OLD, setup == SETUP_STALE_POD ? "[]" : PULLING(RT1));
    if (setup == SETUP_JOB_COMPLETE || setup == SETUP_JOB_FAILED)
        add_job(w, name, "u-x7k2p", H, RT1, setup == SETUP_JOB_COMPLETE ? JOB_COMPLETE : JOB_DEADLINE,
                0);
}

static void test_outcomes_tagged(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(outcome_rows) / sizeof(outcome_rows[0]); i++) {
        const outcome_row *r = &outcome_rows[i];
        world w;
        world_init(&w);
        outcome_world(&w, r->setup);
        run(&w);
        print_message("row %s\n", r->name);
        const action *status = find(&w, ACTION_PATCH_POD_STATUS, "edge-agent-x7k2p");
        if ((status != NULL) != r->has_status) {
            dump(&w.out);
            fail_msg("row \"%s\": status patch %s", r->name, status != NULL ? "emitted" : "missing");
        }
        for (size_t k = 0; k < w.out.n; k++) {
            const action *a = &w.out.v[k];
            action_outcome want = a == status ? r->status : ACTION_OUTCOME_NONE;
            if (a->outcome != want) {
                dump(&w.out);
                fail_msg("row \"%s\": %s %s carries outcome %d, want %d", r->name,
                         action_kind_name(a->kind), a->key, (int)a->outcome, (int)want);
            }
        }
        world_free(&w);
    }
}

/* ---- what the executor tells (notes) ----------------------------------------- */

/* A created Job's and a result's notes: the pod, its node, the request's
 * time (for the histograms), and the result in words. */
static void test_notes(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    run(&w);
    char name[64];
    job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    const action *c = the(&w, ACTION_CREATE_JOB, name);
    assert_string_equal(c->note.subject, NS "/edge-agent-x7k2p");
    assert_string_equal(c->note.node, NODE);
    assert_int_equal(c->note.request_epoch, 1795290005ll); /* RT1 */
    world_free(&w);

    world_init(&w);
    standard(&w);
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    add_job(&w, name, "u-x7k2p", H, RT1, JOB_COMPLETE, 0);
    run(&w);
    const action *r = the(&w, ACTION_PATCH_POD_STATUS, "edge-agent-x7k2p");
    assert_int_equal(r->outcome, ACTION_OUTCOME_PULL_SUCCEEDED);
    assert_string_equal(r->note.subject, NS "/edge-agent-x7k2p");
    assert_string_equal(r->note.node, NODE);
    assert_string_equal(r->note.reason, "pulled by job");
    assert_int_equal(r->note.request_epoch, 1795290005ll);
    /* an Event has no pull note */
    const action *ev = find_event(&w, OTA_EVENT_SUCCEEDED, "edge-agent-x7k2p");
    assert_non_null(ev);
    assert_null(ev->note.subject);
    assert_int_equal(ev->note.request_epoch, 0);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notes),
        cmocka_unit_test(test_job_complete),
        cmocka_unit_test(test_result_not_before_request),
        cmocka_unit_test(test_job_failed),
        cmocka_unit_test(test_stuck_pull_past_deadline),
        cmocka_unit_test(test_outcomes_tagged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_reconcile_prepull.c - the controller's decisions: a pull request
 * becomes a Job (docs/design.md §5 "Pre-pull"): the node read first, then the
 * Job with revision H's images, pull secrets and deadline (or Ready at once
 * when the node lists every image); a retry deleting the old Job first; and
 * the requests the controller must leave alone or cannot serve yet.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- a pull request --------------------------------------------------------- */

static void test_request_asks_for_node_first(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    run(&w);
    expect_total(&w, 1);
    const action *a = the(&w, ACTION_GET_NODE, NODE);
    assert_null(a->namespace);
    assert_null(a->body);
    assert_string_equal(a->key, "node:" NODE);
    assert_int_equal(w.out.waiting, 0);
    world_free(&w);
}

static void test_request_creates_job(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[\"registry.example.com/edge/agent:v2\",\"nginx:1.25\"]");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    run(&w);
    expect_total(&w, 2);
    char name[64];
    job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    const action *c = the(&w, ACTION_CREATE_JOB, name);
    assert_string_equal(c->namespace, NS);
    char key[128];
    snprintf(key, sizeof(key), "create-job:" NS "/%s", name);
    assert_string_equal(c->key, key);

    yajl_val job = tree(c);
    assert_string_equal(str_at(job, (const char *[]){"kind", NULL}), "Job");
    assert_string_equal(str_at(job, (const char *[]){"metadata", "name", NULL}), name);
    assert_string_equal(str_at(job, (const char *[]){"metadata", "namespace", NULL}), NS);
    assert_string_equal(
        str_at(job, (const char *[]){"metadata", "labels", OTA_LABEL_MANAGED_BY, NULL}),
        OTA_MANAGED_BY_VALUE);
    assert_string_equal(str_at(job, (const char *[]){"metadata", "labels", OTA_LABEL_POD_UID, NULL}),
                        "u-x7k2p");
    assert_string_equal(
        str_at(job, (const char *[]){"metadata", "annotations", OTA_ANN_JOB_REVISION, NULL}), H);
    assert_string_equal(
        str_at(job, (const char *[]){"metadata", "annotations", OTA_ANN_JOB_REQUEST_TIME, NULL}),
        RT1);
    assert_string_equal(
        str_at(job, (const char *[]){"spec", "template", "spec", "nodeName", NULL}), NODE);
    /* owned by the pod */
    yajl_val owners =
        yajl_tree_get(job, (const char *[]){"metadata", "ownerReferences", NULL}, yajl_t_array);
    assert_non_null(owners);
    assert_int_equal(owners->u.array.len, 1);
    assert_string_equal(str_at(owners->u.array.values[0], (const char *[]){"uid", NULL}), "u-x7k2p");
    /* the DaemonSet's deadline */
    yajl_val deadline = yajl_tree_get(job, (const char *[]){"spec", "activeDeadlineSeconds", NULL},
                                      yajl_t_number);
    assert_non_null(deadline);
    assert_int_equal(YAJL_GET_INTEGER(deadline), 900);
    /* revision H's images (init images first) and pull secret, after the
     * helper */
    yajl_val inits = yajl_tree_get(
        job, (const char *[]){"spec", "template", "spec", "initContainers", NULL}, yajl_t_array);
    assert_non_null(inits);
    static const char *const want_images[] = {HELPER, INIT_IMAGE, AGENT_IMAGE, "nginx:1.25"};
    assert_int_equal(inits->u.array.len, 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(str_at(inits->u.array.values[i], (const char *[]){"image", NULL}),
                            want_images[i]);
    yajl_val secrets = yajl_tree_get(
        job, (const char *[]){"spec", "template", "spec", "imagePullSecrets", NULL}, yajl_t_array);
    assert_non_null(secrets);
    assert_int_equal(secrets->u.array.len, 1);
    assert_string_equal(str_at(secrets->u.array.values[0], (const char *[]){"name", NULL}),
                        "regcred");
    yajl_tree_free(job);

    const action *e = find_event(&w, OTA_EVENT_STARTED, "edge-agent-x7k2p");
    assert_non_null(e);
    assert_string_equal(e->namespace, NS);
    assert_string_equal(e->key, "event:u-x7k2p|" RT1 "|" OTA_EVENT_STARTED ":u-x7k2p/" RT1);
    yajl_val ev = tree(e);
    assert_string_equal(str_at(ev, (const char *[]){"type", NULL}), "Normal");
    assert_string_equal(str_at(ev, (const char *[]){"involvedObject", "kind", NULL}), "Pod");
    assert_string_equal(str_at(ev, (const char *[]){"involvedObject", "uid", NULL}), "u-x7k2p");
    assert_string_equal(str_at(ev, (const char *[]){"metadata", "namespace", NULL}), NS);
    assert_contains(str_at(ev, (const char *[]){"message", NULL}), name);
    yajl_tree_free(ev);
    world_free(&w);
}

/* Without the DaemonSet's annotation the Job gets --pull-timeout; YurtHub's
 * request (no reason) is a request too. */
static void test_request_default_timeout_and_empty_reason(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    w.cfg.pull_timeout_s = 777;
    add_ds(&w, "edge-agent", DS_UID, "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"ota\"}", 0);
    add_rev(&w, DS_UID, H, 3, "[]", "[{\"name\":\"agent\",\"image\":\"" AGENT_IMAGE "\"}]", "[]");
    add_node(&w, NODE, "[]");
    add_pod(&w, "yurthub", "u-yurthub", OLD,
            "[" NU("True", H) ",{\"type\":\"PodImageReady\",\"status\":\"False\","
            "\"lastTransitionTime\":\"" RT1 "\",\"message\":\"" REV_MSG(H) "\"}]");
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    yajl_val job = tree(the(&w, ACTION_CREATE_JOB, NULL));
    yajl_val deadline = yajl_tree_get(job, (const char *[]){"spec", "activeDeadlineSeconds", NULL},
                                      yajl_t_number);
    assert_non_null(deadline);
    assert_int_equal(YAJL_GET_INTEGER(deadline), 777);
    yajl_tree_free(job);
    world_free(&w);
}

typedef struct shortcut_row {
    const char *name;
    const char *node_images; /* JSON array of names */
    int ready;               /* PullImageSuccess without a Job */
} shortcut_row;

static const shortcut_row shortcuts[] = {
    {"every image, as the runtime names them",
     "[\"docker.io/library/nginx:1.25\",\"" AGENT_IMAGE "\",\"" INIT_IMAGE "\"]", 1},
    {"every image, same spelling", "[\"nginx:1.25\",\"" AGENT_IMAGE "\",\"" INIT_IMAGE "\"]", 1},
    {"the init image missing", "[\"docker.io/library/nginx:1.25\",\"" AGENT_IMAGE "\"]", 0},
    {"another tag", "[\"docker.io/library/nginx:1.26\",\"" AGENT_IMAGE "\",\"" INIT_IMAGE "\"]", 0},
    {"only by digest", "[\"docker.io/library/nginx@sha256:"
                       "2d194184b067db3598771b4cf326cfe6ad5051937ba1132b8b7d4b0184e0d0a6\",\"" AGENT_IMAGE
                       "\",\"" INIT_IMAGE "\"]",
     0},
    {"nothing", "[]", 0},
};

static void test_node_images_shortcut(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(shortcuts) / sizeof(shortcuts[0]); i++) {
        const shortcut_row *r = &shortcuts[i];
        world w;
        world_init(&w);
        standard(&w);
        add_node(&w, NODE, r->node_images);
        add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
        run(&w);
        print_message("row %s\n", r->name);
        if (!r->ready) {
            expect_count(&w, ACTION_CREATE_JOB, 1);
            expect_count(&w, ACTION_PATCH_POD_STATUS, 0);
            world_free(&w);
            continue;
        }
        expect_count(&w, ACTION_CREATE_JOB, 0);
        expect_total(&w, 2);
        const action *a = the(&w, ACTION_PATCH_POD_STATUS, "edge-agent-x7k2p");
        assert_string_equal(a->key, "status:u-x7k2p@" POD_RV ":ready");
        patched ir = patch_cond(a, OTA_COND_IMAGE_READY);
        assert_int_equal(ir.n, 1);
        assert_string_equal(ir.status, "True");
        assert_string_equal(ir.reason, OTA_REASON_PULL_SUCCESS);
        assert_string_equal(ir.message, REV_MSG(H));
        assert_string_equal(ir.ltt, NOW);
        assert_non_null(find_event(&w, OTA_EVENT_SUCCEEDED, "edge-agent-x7k2p"));
        world_free(&w);
    }
}

/* ---- retries ------------------------------------------------------------------ */

static void test_retry_deletes_old_job_first(void **state)
{
    (void)state;
    char old_job[64], new_job[64];
    job_name_of(old_job, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    job_name_of(new_job, "edge-agent-x7k2p", "u-x7k2p", H, RT2);
    assert_string_not_equal(old_job, new_job);
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT2));
    add_job(&w, old_job, "u-x7k2p", H, RT1, JOB_DEADLINE, 0);
    run(&w);
    /* a single delete, no create, no node read, no event in this pass */
    expect_total(&w, 1);
    the(&w, ACTION_DELETE_JOB, old_job);

    /* the old Job is on its way out: still wait */
    store_free(&w.jobs);
    add_job(&w, old_job, "u-x7k2p", H, RT1, JOB_DEADLINE, 1);
    run(&w);
    expect_total(&w, 0);

    /* gone: the new Job */
    store_free(&w.jobs);
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    the(&w, ACTION_CREATE_JOB, new_job);

    /* a re-pull after Ready: the same, and the old complete Job goes */
    add_job(&w, old_job, "u-x7k2p", H, RT1, JOB_COMPLETE, 0);
    run(&w);
    expect_total(&w, 1);
    the(&w, ACTION_DELETE_JOB, old_job);
    world_free(&w);
}

/* ---- left alone ----------------------------------------------------------------- */

typedef struct alone_row {
    const char *name;
    const char *hash, *conditions;
} alone_row;

static const alone_row alone[] = {
    /* asks for a revision that is not the newest */
    {"request for another revision", OLD,
     "[" NU("True", H) "," IR("False", OTA_REASON_WAIT_PULL, MID, RT1) "]"},
    {"request for an unknown revision", OLD,
     "[" NU("True", H) "," IR("False", OTA_REASON_WAIT_PULL, "0000000", RT1) "]"},
    /* already decided */
    {"failed", OLD, "[" NU("True", H) "," IR("False", OTA_REASON_PULL_FAIL, H, RT1) "]"},
    {"ready", OLD, "[" NU("True", H) "," IR("True", OTA_REASON_PULL_SUCCESS, H, RT1) "]"},
    /* status True with a pull reason is nobody's request */
    {"True and waiting", OLD, "[" NU("True", H) "," IR("True", OTA_REASON_WAIT_PULL, H, RT1) "]"},
    /* current pods have nothing to pull */
    {"current with a request", H, "[" NU("False", H) "," IR("False", OTA_REASON_WAIT_PULL, H, RT1) "]"},
    {"pending upgrade", OLD, "[" NU("True", H) "]"},
};

static void test_left_alone(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(alone) / sizeof(alone[0]); i++) {
        world w;
        world_init(&w);
        standard(&w);
        add_node(&w, NODE, "[]");
        add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", alone[i].hash, alone[i].conditions);
        run(&w);
        if (w.out.n != 0) {
            dump(&w.out);
            fail_msg("%s: acted", alone[i].name);
        }
        world_free(&w);
    }
}

/* An image the kubelet would refuse: no Job, PullImageFail saying why. */
static void test_invalid_image(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_ds(&w, "edge-agent", DS_UID, "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 0);
    add_rev(&w, DS_UID, H, 3, "[]", "[{\"name\":\"agent\",\"image\":\"Registry.Example.com/Edge/AGENT:v3\"}]",
            "[]");
    add_node(&w, NODE, "[]");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 0);
    const action *a = the(&w, ACTION_PATCH_POD_STATUS, "edge-agent-x7k2p");
    patched ir = patch_cond(a, OTA_COND_IMAGE_READY);
    assert_string_equal(ir.status, "False");
    assert_string_equal(ir.reason, OTA_REASON_PULL_FAIL);
    assert_contains(ir.message, "failed: InvalidImageName: ");
    assert_non_null(find_event(&w, OTA_EVENT_FAILED, "edge-agent-x7k2p"));
    world_free(&w);
}

/* A request for a pod the scheduler has not bound yet waits: no Job can be
 * pinned anywhere, and no image is at fault (it used to end PullImageFail
 * "InvalidImageName: node name is missing"). */
static void test_unscheduled_pod_waits(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod_full(&w, "pending", "u-pending", DS_UID, NULL, OLD, PULLING(RT1), 0);
    run(&w);
    expect_total(&w, 0);
    assert_int_equal(w.out.waiting, 0);
    world_free(&w);
}

/* Pulling at H with a Job of an older revision still there: that Job is
 * deleted, and the new one waits until it is gone. */
static void test_stale_job_while_pulling(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT2));
    char stale[64];
    add_job(&w, job_name_of(stale, "edge-agent-x7k2p", "u-x7k2p", MID, RT1), "u-x7k2p", MID, RT1,
            JOB_RUNNING, 0);
    run(&w);
    /* (the pass may name the delete twice, under one key: the executor
     * runs a key once) */
    assert_true(count(&w, ACTION_DELETE_JOB) >= 1);
    for (size_t i = 0; i < w.out.n; i++) {
        assert_int_equal(w.out.v[i].kind, ACTION_DELETE_JOB);
        assert_string_equal(w.out.v[i].name, stale);
    }
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_asks_for_node_first),
        cmocka_unit_test(test_request_creates_job),
        cmocka_unit_test(test_request_default_timeout_and_empty_reason),
        cmocka_unit_test(test_node_images_shortcut),
        cmocka_unit_test(test_retry_deletes_old_job_first),
        cmocka_unit_test(test_left_alone),
        cmocka_unit_test(test_invalid_image),
        cmocka_unit_test(test_unscheduled_pod_waits),
        cmocka_unit_test(test_stale_job_while_pulling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

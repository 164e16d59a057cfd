/*
 * test_reconcile_imagevol.c - an OTA request whose revision mounts an OCI
 * artifact as an image volume (docs/design.md §5 "Pull methods"): the
 * helper Job for the runnable images as before, then the image-volume Job
 * for the artifact, then Ready; where the node or the cluster cannot, the
 * helper Job alone and the request failed with the words that say why; an
 * image-volume Job the node turned out not to run is replaced.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

#include "pullmethod.h"

#define MODEL "registry.example.com/models/detector:1"
#define POD "edge-agent-x7k2p"
#define POD_UID "u-x7k2p"

/* An automatic pull in flight: the mark and the controller's Pulling write
 * (controller/autopull.h). */
#define AUTO_PULLING(ltt)                                                                          \
    "[" READY "," NU("True", H) ",{\"type\":\"" OTA_COND_AUTO_PREPULL "\",\"status\":\"True\","  \
    "\"reason\":\"" OTA_REASON_AUTO_OPTED_IN "\",\"lastTransitionTime\":\"2026-11-21T19:30:03Z\","   \
    "\"message\":\"" REV_MSG(H) "\"}," IR("False", OTA_REASON_WAIT_PULL, H, ltt) "]"

/* Revision H of edge-agent adds the artifact MODEL as an image volume;
 * its pod asked for a pre-pull (automatic: the DaemonSet opted in and the
 * controller started it). */
static void artifact_world_as(world *w, const char *runtime, int automatic)
{
    add_ds(w, "edge-agent", DS_UID,
           automatic ? "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT
                       "\":\"900\",\"" OTA_ANN_PREDOWNLOAD_PARALLELISM "\":\"5\"}"
                     : "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT
                       "\":\"900\"}",
           0);
    put(&w->revs, KOBJ_REVISION, NULL,
        "{\"kind\":\"ControllerRevision\",\"apiVersion\":\"apps/v1\",\"metadata\":{"
        "\"name\":\"edge-agent-" H "\",\"namespace\":\"" NS "\",\"uid\":\"rev-h\","
        "\"labels\":{\"" OTA_LABEL_REVISION_HASH "\":\"" H "\"},\"ownerReferences\":[{"
        "\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"edge-agent\",\"uid\":\"" DS_UID
        "\",\"controller\":true}]},\"data\":{\"spec\":{\"template\":{\"$patch\":\"replace\","
        "\"spec\":{\"containers\":[{\"name\":\"agent\",\"image\":\"" AGENT_IMAGE "\","
        "\"volumeMounts\":[{\"name\":\"model\",\"mountPath\":\"/model\"}]}],\"volumes\":[{"
        "\"name\":\"model\",\"image\":{\"reference\":\"" MODEL "\",\"pullPolicy\":"
        "\"IfNotPresent\"}}]}}}},\"revision\":3}");
    add_node(w, NODE, "[\"busybox:1.36-musl\"]");
    put(&w->node_states, KOBJ_NODE_STATE, NODE,
        "{\"metadata\":{\"name\":\"" NODE "\",\"uid\":\"n1\"},\"status\":{\"nodeInfo\":{"
        "\"containerRuntimeVersion\":\"%s\"},\"conditions\":[{\"type\":\"Ready\",\"status\":"
        "\"True\"}]}}",
        runtime);
    add_pod(w, POD, POD_UID, MID, automatic ? AUTO_PULLING(RT1) : PULLING(RT1));
}

static void artifact_world(world *w, const char *runtime)
{
    artifact_world_as(w, runtime, 0);
}

static const char *volume_job_name(char *buf)
{
    return job_name_of(buf, POD, POD_UID, H, RT1 "/image-volume");
}

/* The artifact is pre-pulled on request, or automatically (the same
 * plan once the pod is Pulling): helper Job, image-volume Job, Ready. */
static void artifact_pulled(int automatic)
{
    world w;
    world_init(&w);
    artifact_world_as(&w, "containerd://2.1.4", automatic);
    run(&w);
    char helper[64], volume[64];
    job_name_of(helper, POD, POD_UID, H, RT1);
    volume_job_name(volume);
    const action *c = the(&w, ACTION_CREATE_JOB, helper);
    yajl_val job = tree(c);
    assert_string_equal(str_at(job, (const char *[]){"metadata", "name", NULL}), helper);
    /* today's Job for the runnable image: the artifact is not in it */
    yajl_val inits = yajl_tree_get(
        job, (const char *[]){"spec", "template", "spec", "initContainers", NULL}, yajl_t_array);
    assert_non_null(inits);
    assert_int_equal(inits->u.array.len, 2);
    assert_string_equal(str_at(inits->u.array.values[1], (const char *[]){"image", NULL}),
                        AGENT_IMAGE);
    yajl_tree_free(job);
    assert_null(find(&w, ACTION_CREATE_JOB, volume));

    add_job(&w, helper, POD_UID, H, RT1, JOB_COMPLETE, 0);
    run(&w);
    assert_int_equal(count(&w, ACTION_PATCH_POD_STATUS), 0); /* not Ready yet */
    c = the(&w, ACTION_CREATE_JOB, volume);
    job = tree(c);
    assert_string_equal(str_at(job, (const char *[]){"metadata", "name", NULL}), volume);
    assert_null(yajl_tree_get(job, (const char *[]){"spec", "template", "spec", "initContainers", NULL},
                              yajl_t_any));
    yajl_val vols = yajl_tree_get(job, (const char *[]){"spec", "template", "spec", "volumes", NULL},
                                  yajl_t_array);
    assert_non_null(vols);
    assert_int_equal(vols->u.array.len, 1);
    assert_string_equal(str_at(vols->u.array.values[0], (const char *[]){"image", "reference", NULL}),
                        MODEL);
    yajl_val conts = yajl_tree_get(
        job, (const char *[]){"spec", "template", "spec", "containers", NULL}, yajl_t_array);
    assert_int_equal(conts->u.array.len, 1);
    assert_string_equal(str_at(conts->u.array.values[0], (const char *[]){"image", NULL}), HELPER);
    assert_string_equal(
        str_at(job, (const char *[]){"metadata", "annotations", OTA_ANN_JOB_REQUEST_TIME, NULL}),
        RT1);
    yajl_tree_free(job);

    add_job(&w, volume, POD_UID, H, RT1, JOB_COMPLETE, 0);
    run(&w);
    patched ir = patch_cond(the(&w, ACTION_PATCH_POD_STATUS, POD), OTA_COND_IMAGE_READY);
    assert_string_equal(ir.status, "True");
    assert_string_equal(ir.reason, OTA_REASON_PULL_SUCCESS);
    assert_int_equal(count(&w, ACTION_DELETE_JOB), 0); /* both kept: the helper pins */
    world_free(&w);
}

static void test_artifact_pulled_after_runnables(void **state)
{
    (void)state;
    artifact_pulled(0);
}

static void test_artifact_pulled_automatically(void **state)
{
    (void)state;
    artifact_pulled(1);
}

/* A node whose runtime cannot mount image volumes: the runnable images
 * as before, then the request fails naming the artifact and why. */
static void test_artifact_fails_where_node_cannot(void **state)
{
    (void)state;
    static const struct {
        const char *why, *runtime;
        int memory; /* 0 none, 1 node answered, 2 gate off */
        const char *words;
    } rows[] = {
        {"old containerd", "containerd://1.7.24", 0,
         "node " NODE " cannot mount image volumes (its container runtime is containerd://1.7.24"},
        {"node answered CreateContainerError", "containerd://2.1.4", 1, "CreateContainerError"},
        {"gate off", "containerd://2.1.4", 2, "the ImageVolume feature gate is off"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        world w;
        world_init(&w);
        pullmethod_memory m;
        pullmethod_memory_init(&m, 0);
        if (rows[i].memory == 1)
            pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, NODE);
        if (rows[i].memory == 2)
            pullmethod_remember(&m, PULLMETHOD_ANSWER_GATE_OFF, NULL);
        w.in.pull_memory = &m;
        artifact_world(&w, rows[i].runtime);
        char helper[64], volume[64];
        job_name_of(helper, POD, POD_UID, H, RT1);
        volume_job_name(volume);
        run(&w);
        assert_non_null(find(&w, ACTION_CREATE_JOB, helper));
        add_job(&w, helper, POD_UID, H, RT1, JOB_COMPLETE, 0);
        run(&w);
        assert_null(find(&w, ACTION_CREATE_JOB, volume));
        patched ir = patch_cond(the(&w, ACTION_PATCH_POD_STATUS, POD), OTA_COND_IMAGE_READY);
        if (strcmp(ir.status, "False") != 0 || strcmp(ir.reason, OTA_REASON_PULL_FAIL) != 0 ||
            strstr(ir.message, MODEL) == NULL || strstr(ir.message, rows[i].words) == NULL)
            fail_msg("%s: %s %s %s", rows[i].why, ir.status, ir.reason, ir.message);
        assert_non_null(find_event(&w, OTA_EVENT_FAILED, POD));
        world_free(&w);
        pullmethod_memory_free(&m);
    }
}

/* --pull-method image-volume: one image-volume Job for everything; once
 * the node is known not to run it, that Job goes and the helper's comes. */
static void test_image_volume_job_replaced_after_answer(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    w.cfg.pull_method = PULLMETHOD_MODE_IMAGE_VOLUME;
    artifact_world(&w, "containerd://2.1.4");
    char helper[64], volume[64];
    job_name_of(helper, POD, POD_UID, H, RT1);
    volume_job_name(volume);
    run(&w);
    assert_null(find(&w, ACTION_CREATE_JOB, helper));
    yajl_val job = tree(the(&w, ACTION_CREATE_JOB, volume));
    assert_string_equal(str_at(job, (const char *[]){"metadata", "name", NULL}), volume);
    yajl_val vols = yajl_tree_get(job, (const char *[]){"spec", "template", "spec", "volumes", NULL},
                                  yajl_t_array);
    assert_int_equal(vols->u.array.len, 2); /* the agent, then the model */
    assert_string_equal(str_at(vols->u.array.values[0], (const char *[]){"image", "reference", NULL}),
                        AGENT_IMAGE);
    assert_string_equal(str_at(vols->u.array.values[1], (const char *[]){"image", "reference", NULL}),
                        MODEL);
    yajl_tree_free(job);

    /* the node answered CreateContainerError: remembered (controller.c) */
    add_job(&w, volume, POD_UID, H, RT1, JOB_RUNNING, 0);
    pullmethod_memory m;
    pullmethod_memory_init(&m, 0);
    pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, NODE);
    w.in.pull_memory = &m;
    run(&w);
    assert_non_null(the(&w, ACTION_DELETE_JOB, volume));
    assert_null(find(&w, ACTION_CREATE_JOB, helper)); /* once the old Job is gone */
    world_free(&w);
    pullmethod_memory_free(&m);

    world_init(&w);
    w.cfg.pull_method = PULLMETHOD_MODE_IMAGE_VOLUME;
    pullmethod_memory_init(&m, 0);
    pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, NODE);
    w.in.pull_memory = &m;
    artifact_world(&w, "containerd://2.1.4");
    run(&w);
    assert_non_null(find(&w, ACTION_CREATE_JOB, helper));
    assert_null(find(&w, ACTION_CREATE_JOB, volume));
    world_free(&w);
    pullmethod_memory_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_artifact_pulled_after_runnables),
        cmocka_unit_test(test_artifact_pulled_automatically),
        cmocka_unit_test(test_artifact_fails_where_node_cannot),
        cmocka_unit_test(test_image_volume_job_replaced_after_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

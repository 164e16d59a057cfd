/*
 * test_pullmethod.c - controller/pullmethod.h: the runtime versions, the
 * answers, the bounded memory, artifacts, and the choice per (node, image)
 * as a table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pullmethod.h"
#include "row_check.h"

static void test_runtime_versions(void **state)
{
    (void)state;
    static const struct {
        const char *v;
        pullmethod_runtime want;
    } rows[] = {
        {"containerd://2.1.4", PULLMETHOD_RUNTIME_YES},
        {"containerd://2.1.0", PULLMETHOD_RUNTIME_YES},
        {"containerd://v2.2.0", PULLMETHOD_RUNTIME_YES},
        {"containerd://3.0.0", PULLMETHOD_RUNTIME_YES},
        {"containerd://2.0.4-k3s2", PULLMETHOD_RUNTIME_NO},
        {"containerd://1.7.24", PULLMETHOD_RUNTIME_NO},
        {"containerd://1.7.27-k3s1", PULLMETHOD_RUNTIME_NO},
        {"cri-o://1.31.0", PULLMETHOD_RUNTIME_YES},
        {"cri-o://1.32.1", PULLMETHOD_RUNTIME_YES},
        {"cri-o://1.30.4", PULLMETHOD_RUNTIME_NO},
        {"cri-o://2.0.0", PULLMETHOD_RUNTIME_YES},
        {"docker://27.3.1", PULLMETHOD_RUNTIME_NO},
        {"docker://", PULLMETHOD_RUNTIME_NO},
        {"containerd://", PULLMETHOD_RUNTIME_UNKNOWN},
        {"containerd://2", PULLMETHOD_RUNTIME_UNKNOWN},
        {"containerd://two.one", PULLMETHOD_RUNTIME_UNKNOWN},
        {"containerd://2.", PULLMETHOD_RUNTIME_UNKNOWN},
        {"containerd://99999999999999999999999999999999999.1", PULLMETHOD_RUNTIME_UNKNOWN},
        {"remote://1.0", PULLMETHOD_RUNTIME_UNKNOWN},
        {"", PULLMETHOD_RUNTIME_UNKNOWN},
        {NULL, PULLMETHOD_RUNTIME_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const char *name = rows[i].v != NULL ? rows[i].v : "(null)";
        pullmethod_runtime got = pullmethod_runtime_of(rows[i].v);
        ROW_CHECK(name, got == rows[i].want, "got %d, want %d", got, rows[i].want);
    }
}

static void test_answers(void **state)
{
    (void)state;
    const char *gate = "Job.batch \"j\" is invalid: spec.template.spec.volumes[0]: Required "
                       "value: must specify a volume type";
    assert_int_equal(pullmethod_create_answer(422, gate), PULLMETHOD_ANSWER_GATE_OFF);
    assert_int_equal(pullmethod_create_answer(422, "spec.template.spec.containers[0].image: "
                                                   "Required value"),
                     PULLMETHOD_ANSWER_NONE);
    assert_int_equal(pullmethod_create_answer(409, gate), PULLMETHOD_ANSWER_NONE);
    assert_int_equal(pullmethod_create_answer(422, NULL), PULLMETHOD_ANSWER_NONE);
    assert_int_equal(pullmethod_create_answer(201, NULL), PULLMETHOD_ANSWER_NONE);
    /* the method unsupported on the node, not a pull failure */
    assert_int_equal(pullmethod_target_answer("CreateContainerError"),
                     PULLMETHOD_ANSWER_NODE_CANNOT);
    assert_int_equal(pullmethod_target_answer("ErrImagePull"), PULLMETHOD_ANSWER_NONE);
    assert_int_equal(pullmethod_target_answer("ImagePullBackOff"), PULLMETHOD_ANSWER_NONE);
    assert_int_equal(pullmethod_target_answer("CreateContainerConfigError"),
                     PULLMETHOD_ANSWER_NONE);
    assert_int_equal(pullmethod_target_answer(NULL), PULLMETHOD_ANSWER_NONE);
}

/* Remembered nodes and the gate; the oldest node goes when full. */
static void test_memory_bounded(void **state)
{
    (void)state;
    pullmethod_memory m;
    pullmethod_memory_init(&m, 3);
    assert_false(pullmethod_node_cannot(&m, "n1"));
    assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_NONE, "n1"), 0);
    assert_false(pullmethod_node_cannot(&m, "n1"));
    const char *nodes[] = {"n1", "n2", "n2", "n3"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, nodes[i]), 0);
    assert_int_equal(m.n, 3);
    assert_true(pullmethod_node_cannot(&m, "n1"));
    assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, "n4"), 0);
    assert_int_equal(m.n, 3);
    assert_false(pullmethod_node_cannot(&m, "n1")); /* forgotten: tried again */
    assert_true(pullmethod_node_cannot(&m, "n2"));
    assert_true(pullmethod_node_cannot(&m, "n4"));
    assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, ""), 0);
    assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, NULL), 0);
    assert_int_equal(m.n, 3);
    assert_false(m.gate_off);
    assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_GATE_OFF, NULL), 0);
    assert_true(m.gate_off);
    pullmethod_memory_free(&m);
    /* a default memory: PULLMETHOD_MAX_NODES, filled past it */
    pullmethod_memory_init(&m, 0);
    char name[32];
    for (size_t i = 0; i < PULLMETHOD_MAX_NODES + 5; i++) {
        snprintf(name, sizeof(name), "node-%zu", i);
        assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, name), 0);
    }
    assert_int_equal(m.n, PULLMETHOD_MAX_NODES);
    assert_false(pullmethod_node_cannot(&m, "node-4"));
    assert_true(pullmethod_node_cannot(&m, "node-5"));
    pullmethod_memory_free(&m);
}

static void test_artifacts(void **state)
{
    (void)state;
    const char *vols[] = {"registry.example.com/models/m:1", "busybox:1.36"};
    const char *conts[] = {"busybox:1.36", "registry.example.com/edge/agent:v2"};
    assert_true(pullmethod_is_artifact("registry.example.com/models/m:1", vols, 2, conts, 2));
    /* a volume image the workload also runs is runnable */
    assert_false(pullmethod_is_artifact("busybox:1.36", vols, 2, conts, 2));
    assert_false(pullmethod_is_artifact("registry.example.com/edge/agent:v2", vols, 2, conts, 2));
    assert_false(pullmethod_is_artifact(NULL, vols, 2, conts, 2));
    assert_false(pullmethod_is_artifact("registry.example.com/models/m:1", NULL, 0, conts, 2));
}

enum { FRESH, GATE_OFF, NODE_CANNOT };

typedef struct choose_row {
    const char *why;
    pullmethod_mode mode;
    int artifact;
    const char *runtime;
    int memory;
    pullmethod_verdict want;
    const char *msg_part; /* FAIL: part of the message */
} choose_row;

#define C21 "containerd://2.1.4"
#define C17 "containerd://1.7.24"
static const choose_row choose_rows[] = {
    {"helper: today's method", PULLMETHOD_MODE_HELPER, 0, C21, FRESH, PULLMETHOD_USE_HELPER, NULL},
    {"helper on an old runtime", PULLMETHOD_MODE_HELPER, 0, C17, FRESH, PULLMETHOD_USE_HELPER, NULL},
    {"image-volume where it can", PULLMETHOD_MODE_IMAGE_VOLUME, 0, C21, FRESH,
     PULLMETHOD_USE_IMAGE_VOLUME, NULL},
    {"image-volume on an unknown runtime: tried", PULLMETHOD_MODE_IMAGE_VOLUME, 0, NULL, FRESH,
     PULLMETHOD_USE_IMAGE_VOLUME, NULL},
    {"image-volume on an old runtime: helper", PULLMETHOD_MODE_IMAGE_VOLUME, 0, C17, FRESH,
     PULLMETHOD_USE_HELPER, NULL},
    {"image-volume, node answered: helper", PULLMETHOD_MODE_IMAGE_VOLUME, 0, C21, NODE_CANNOT,
     PULLMETHOD_USE_HELPER, NULL},
    {"image-volume, gate off: helper", PULLMETHOD_MODE_IMAGE_VOLUME, 0, C21, GATE_OFF,
     PULLMETHOD_USE_HELPER, NULL},
    {"auto on containerd 2.1", PULLMETHOD_MODE_AUTO, 0, C21, FRESH, PULLMETHOD_USE_IMAGE_VOLUME,
     NULL},
    {"auto on CRI-O 1.31", PULLMETHOD_MODE_AUTO, 0, "cri-o://1.31.2", FRESH,
     PULLMETHOD_USE_IMAGE_VOLUME, NULL},
    {"auto on containerd 1.7", PULLMETHOD_MODE_AUTO, 0, C17, FRESH, PULLMETHOD_USE_HELPER, NULL},
    {"auto on docker", PULLMETHOD_MODE_AUTO, 0, "docker://27.3.1", FRESH, PULLMETHOD_USE_HELPER,
     NULL},
    {"auto on an unknown runtime", PULLMETHOD_MODE_AUTO, 0, NULL, FRESH, PULLMETHOD_USE_HELPER,
     NULL},
    {"auto, node answered", PULLMETHOD_MODE_AUTO, 0, C21, NODE_CANNOT, PULLMETHOD_USE_HELPER,
     NULL},
    {"auto, gate off", PULLMETHOD_MODE_AUTO, 0, C21, GATE_OFF, PULLMETHOD_USE_HELPER, NULL},
    {"artifact, mode helper: image volume all the same", PULLMETHOD_MODE_HELPER, 1, C21, FRESH,
     PULLMETHOD_USE_IMAGE_VOLUME, NULL},
    {"artifact on an unknown runtime: tried", PULLMETHOD_MODE_AUTO, 1, NULL, FRESH,
     PULLMETHOD_USE_IMAGE_VOLUME, NULL},
    {"artifact on an old runtime fails", PULLMETHOD_MODE_HELPER, 1, C17, FRESH, PULLMETHOD_FAIL,
     "node edge-1 cannot mount image volumes (its container runtime is containerd://1.7.24"},
    {"artifact on docker fails", PULLMETHOD_MODE_AUTO, 1, "docker://27.3.1", FRESH,
     PULLMETHOD_FAIL, "docker://27.3.1"},
    {"artifact where the node answered fails", PULLMETHOD_MODE_AUTO, 1, C21, NODE_CANNOT,
     PULLMETHOD_FAIL, "node edge-1 cannot mount image volumes (its container runtime failed to "
                      "create a container mounting one: CreateContainerError)"},
    {"artifact with the gate off fails", PULLMETHOD_MODE_IMAGE_VOLUME, 1, C21, GATE_OFF,
     PULLMETHOD_FAIL, "the ImageVolume feature gate is off"},
};

static void test_choose_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(choose_rows) / sizeof(choose_rows[0]); i++) {
        const choose_row *r = &choose_rows[i];
        pullmethod_memory m;
        pullmethod_memory_init(&m, 4);
        if (r->memory == GATE_OFF)
            assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_GATE_OFF, NULL), 0);
        if (r->memory == NODE_CANNOT)
            assert_int_equal(pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, "edge-1"), 0);
        char why[512] = "x";
        pullmethod_verdict got =
            pullmethod_choose(r->mode, r->artifact, "edge-1", r->runtime, &m, why, sizeof(why));
        ROW_CHECK(r->why, got == r->want, "got %d, want %d", got, r->want);
        if (r->msg_part != NULL)
            ROW_CHECK(r->why, strstr(why, r->msg_part) != NULL, "message %s", why);
        else
            ROW_CHECK(r->why, why[0] == '\0', "message %s", why);
        if (got == PULLMETHOD_FAIL)
            ROW_CHECK(r->why, strstr(why, "cannot be pre-pulled") != NULL, "message %s", why);
        /* another node is not the one that answered */
        if (r->memory == NODE_CANNOT && r->artifact) {
            got = pullmethod_choose(r->mode, 1, "edge-2", r->runtime, &m, why, sizeof(why));
            ROW_CHECK(r->why, got == PULLMETHOD_USE_IMAGE_VOLUME, "edge-2 got %d", got);
        }
        pullmethod_memory_free(&m);
    }
    assert_int_equal(pullmethod_job_method(PULLMETHOD_USE_IMAGE_VOLUME),
                     PULL_JOB_METHOD_IMAGE_VOLUME);
    assert_int_equal(pullmethod_job_method(PULLMETHOD_USE_HELPER), PULL_JOB_METHOD_HELPER);
    /* a message stays bounded whatever the runtime says */
    char big[1024], why[96];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big, "docker://", 9);
    assert_int_equal(pullmethod_choose(PULLMETHOD_MODE_AUTO, 1, "n", big, NULL, why, sizeof(why)),
                     PULLMETHOD_FAIL);
    assert_true(strlen(why) < sizeof(why));
}

/* One request's plan: which Jobs, with what, and the artifact's fate. */
static void test_plan_request(void **state)
{
    (void)state;
    const char *init[] = {"busybox:1.36"};
    const char *images[] = {"reg/edge/agent:v2"};
    const char *vols[] = {"reg/models/m:1", "busybox:1.36", "reg/models/m:1", "reg/data/d:2"};
    static const struct {
        const char *why;
        pullmethod_mode mode;
        const char *runtime;
        int memory;
        size_t n_vols;
        int helper, volume;
        pullmethod_verdict artifact;
    } rows[] = {
        {"no image volume: today's Job", PULLMETHOD_MODE_HELPER, C21, FRESH, 0, 1, 0,
         PULLMETHOD_USE_IMAGE_VOLUME},
        {"an artifact added: helper Job, then the artifact's", PULLMETHOD_MODE_HELPER, C21, FRESH,
         4, 1, 1, PULLMETHOD_USE_IMAGE_VOLUME},
        {"auto where it can: one image-volume Job", PULLMETHOD_MODE_AUTO, C21, FRESH, 4, 0, 1,
         PULLMETHOD_USE_IMAGE_VOLUME},
        {"old runtime: helper Job, artifact fails", PULLMETHOD_MODE_AUTO, C17, FRESH, 4, 1, 0,
         PULLMETHOD_FAIL},
        {"node answered: helper Job, artifact fails", PULLMETHOD_MODE_IMAGE_VOLUME, C21,
         NODE_CANNOT, 4, 1, 0, PULLMETHOD_FAIL},
        {"gate off: helper Job, artifact fails", PULLMETHOD_MODE_AUTO, C21, GATE_OFF, 4, 1, 0,
         PULLMETHOD_FAIL},
        {"image-volume, no artifact", PULLMETHOD_MODE_IMAGE_VOLUME, C21, FRESH, 0, 0, 1,
         PULLMETHOD_USE_IMAGE_VOLUME},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        pullmethod_memory m;
        pullmethod_memory_init(&m, 4);
        if (rows[i].memory == GATE_OFF)
            pullmethod_remember(&m, PULLMETHOD_ANSWER_GATE_OFF, NULL);
        if (rows[i].memory == NODE_CANNOT)
            pullmethod_remember(&m, PULLMETHOD_ANSWER_NODE_CANNOT, "edge-1");
        pullmethod_plan plan;
        pullmethod_plan_request(rows[i].mode, "edge-1", rows[i].runtime, &m, init, 1, images, 1,
                                vols, rows[i].n_vols, &plan);
        ROW_CHECK(rows[i].why, pullmethod_plan_wants_helper(&plan) == rows[i].helper, "helper");
        ROW_CHECK(rows[i].why, pullmethod_plan_wants_volume(&plan) == rows[i].volume, "volume");
        if (rows[i].n_vols > 0) {
            /* busybox:1.36 runs as an init container: not an artifact;
             * the model once */
            ROW_CHECK(rows[i].why, plan.n_artifacts == 2, "artifacts %zu", plan.n_artifacts);
            ROW_CHECK(rows[i].why, strcmp(plan.artifacts[0], "reg/models/m:1") == 0 &&
                                       strcmp(plan.artifacts[1], "reg/data/d:2") == 0,
                      "artifacts");
            ROW_CHECK(rows[i].why, plan.artifact_verdict == rows[i].artifact, "artifact %d",
                      plan.artifact_verdict);
            ROW_CHECK(rows[i].why, (plan.why[0] != '\0') == (rows[i].artifact == PULLMETHOD_FAIL),
                      "why %s", plan.why);
        } else {
            ROW_CHECK(rows[i].why, plan.n_artifacts == 0, "artifacts %zu", plan.n_artifacts);
        }
        pullmethod_memory_free(&m);
    }
    /* artifacts only (no runnable image): the image-volume Job alone */
    pullmethod_plan plan;
    pullmethod_plan_request(PULLMETHOD_MODE_HELPER, "n", C21, NULL, NULL, 0, NULL, 0, vols, 1,
                            &plan);
    assert_false(pullmethod_plan_wants_helper(&plan));
    assert_true(pullmethod_plan_wants_volume(&plan));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runtime_versions), cmocka_unit_test(test_answers),
        cmocka_unit_test(test_memory_bounded),   cmocka_unit_test(test_artifacts),
        cmocka_unit_test(test_choose_table),   cmocka_unit_test(test_plan_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

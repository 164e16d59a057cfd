/*
 * test_reconcile_queue.c - the controller's decisions: at most
 * --max-concurrent-pulls Jobs at once, the other requests in a FIFO by request
 * time (docs/design.md §5 "Also", docs/DECISIONS.md "FIFO"): running Jobs
 * counted, ties broken by pod uid, an older request whose node is being read
 * keeping its place.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- the queue -------------------------------------------------------------- */

static void test_fifo_limit(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    w.cfg.max_concurrent_pulls = 2;
    w.cfg.max_pulls_per_node = 0; /* the global cap alone (the pods share one node) */
    add_node(&w, NODE, "[]");
    add_queue(&w);
    run(&w);
    /* the two oldest start */
    expect_count(&w, ACTION_CREATE_JOB, 2);
    char name[64];
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-a", "u-a", H, "2026-11-21T21:01:00Z"));
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-b", "u-b", H, "2026-11-21T21:05:00Z"));
    assert_non_null(find_event(&w, OTA_EVENT_STARTED, "pod-a"));
    assert_non_null(find_event(&w, OTA_EVENT_STARTED, "pod-b"));
    /* the rest wait, and say so once each */
    assert_int_equal(w.out.waiting, 3);
    assert_int_equal(count_events(&w, OTA_EVENT_QUEUED), 3);
    assert_int_equal(count_events(&w, OTA_EVENT_STARTED), 2);
    static const char *const waiting[] = {"pod-c", "pod-d", "pod-e"};
    for (size_t i = 0; i < 3; i++)
        assert_non_null(find_event(&w, OTA_EVENT_QUEUED, waiting[i]));
    const action *q = find_event(&w, OTA_EVENT_QUEUED, "pod-c");
    assert_string_equal(q->key, "event:u-c|2026-11-21T21:10:00Z|" OTA_EVENT_QUEUED ":u-c/2026-11-21T21:10:00Z");
    expect_total(&w, 7);
    world_free(&w);
}

static void test_running_jobs_count(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    w.cfg.max_concurrent_pulls = 2;
    w.cfg.max_pulls_per_node = 0; /* the global cap alone (the pods share one node) */
    add_node(&w, NODE, "[]");
    add_queue(&w);
    /* another pod's pull runs; finished and vanishing Jobs do not count */
    char name[64];
    add_pod(&w, "busy", "u-busy", OLD, PULLING(RT1));
    add_job(&w, job_name_of(name, "busy", "u-busy", H, RT1), "u-busy", H, RT1, JOB_RUNNING, 0);
    add_pod(&w, "done", "u-done", OLD,
            "[" NU("True", H) "," IR("True", OTA_REASON_PULL_SUCCESS, H, RT1) "]");
    add_job(&w, job_name_of(name, "done", "u-done", H, RT1), "u-done", H, RT1, JOB_COMPLETE, 0);
    add_job(&w, "ota-prepull-gone-12345678", "u-gone", H, RT1, JOB_RUNNING, 1);
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-a", "u-a", H, "2026-11-21T21:01:00Z"));
    assert_int_equal(w.out.waiting, 4);
    assert_int_equal(count_events(&w, OTA_EVENT_QUEUED), 4);
    assert_null(find_event(&w, OTA_EVENT_QUEUED, "busy"));
    /* a full house: nothing starts */
    w.cfg.max_concurrent_pulls = 1;
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 0);
    assert_int_equal(w.out.waiting, 5);
    world_free(&w);
}

/* Equal request times: the pod uid decides, so every pass and every
 * restarted controller picks the same one. */
static void test_fifo_tie(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    w.cfg.max_concurrent_pulls = 1;
    add_node(&w, NODE, "[]");
    static const char *const uids[] = {"7c2d9e1f-4a6b", "3b1f6c2e-8d4a", "e2a4c6e8-0b1d",
                                       "5a7c9e1b-3d5f", "0d2f4b6d-8f1a", "a6c8eaac-4b7d",
                                       "c9f1a3e5-7b2d"};
    for (size_t i = 0; i < 7; i++) {
        char pod[16];
        snprintf(pod, sizeof(pod), "pod-%zu", i);
        add_pod(&w, pod, uids[i], OLD, PULLING(RT1));
    }
    /* not the order the store is walked in, or this would prove nothing */
    size_t it = 0;
    const kobj *first = store_next(&w.pods, &it);
    assert_non_null(first);
    assert_string_not_equal(first->meta.uid, "0d2f4b6d-8f1a");
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    char name[64];
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-4", "0d2f4b6d-8f1a", H, RT1));
    assert_int_equal(w.out.waiting, 6);
    world_free(&w);
}

/* An older request whose node is still being read (the images shortcut)
 * keeps its place: a newer one on a known node does not take the only slot
 * first.  Found by tests/e2e (50 requests, FIFO order). */
static void test_fifo_node_being_read(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    w.cfg.max_concurrent_pulls = 1;
    add_node(&w, NODE, "[]");
    add_pod_full(&w, "pod-old", "u-old", DS_UID, "edge-node-2", OLD, PULLING(RT1), 0);
    add_pod_full(&w, "pod-new", "u-new", DS_UID, NODE, OLD, PULLING(RT2), 0);
    run(&w);
    the(&w, ACTION_GET_NODE, "edge-node-2");
    expect_count(&w, ACTION_CREATE_JOB, 0);
    assert_int_equal(w.out.waiting, 1);
    assert_non_null(find_event(&w, OTA_EVENT_QUEUED, "pod-new"));
    expect_total(&w, 2);
    /* once the node is known, the older request starts */
    add_node(&w, "edge-node-2", "[]");
    run(&w);
    char name[64];
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-old", "u-old", H, RT1));
    expect_count(&w, ACTION_CREATE_JOB, 1);
    world_free(&w);
}


/* ---- one pull per node, terminating pull pods, nodes not Ready ---------------- */

/* A node, as the informer on Nodes keeps it, whose Ready condition is
 * False (the kubelet says so) or that carries the unreachable taint (the
 * node lifecycle controller's). */
static void add_node_not_ready(world *w, const char *name, int taint)
{
    put(&w->node_states, KOBJ_NODE_STATE, name,
        "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"uid\":\"node-%s\"},"
        "\"spec\":{\"taints\":%s},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}],"
        "\"images\":[]}}",
        name, name,
        taint ? "[{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]" : "[]",
        taint ? "Unknown" : "False");
}

/* A pull pod being deleted on a node, its Job gone already: the runtime
 * goes on pulling (a deleted pod does not cancel an in-flight CRI pull). */
static void add_terminating_job_pod(world *w, const char *job, const char *node)
{
    put(&w->job_pods, KOBJ_JOB_POD, NULL,
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s-k8d2q\",\"namespace\":"
        "\"" NS "\",\"uid\":\"jp-%s\",\"deletionTimestamp\":\"2026-11-21T21:29:00Z\",\"labels\":"
        "{\"batch.kubernetes.io/job-name\":\"%s\"}},\"spec\":{\"nodeName\":\"%s\"},"
        "\"status\":{\"phase\":\"Pending\"}}",
        job, job, job, node);
}

static const char *event_message(const action *e, char *buf, size_t size)
{
    yajl_val v = tree(e);
    snprintf(buf, size, "%s", str_at(v, (const char *[]){"message", NULL}));
    yajl_tree_free(v);
    return buf;
}

/* Two requests on one node: the older starts, the newer waits for the
 * node's slot (and says so), taking no global slot. */
static void test_one_pull_per_node(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_node(&w, "edge-node-2", "[]");
    add_pod(&w, "pod-old", "u-old", OLD, PULLING(RT1));
    add_pod(&w, "pod-new", "u-new", OLD, PULLING(RT2));
    add_pod_full(&w, "pod-far", "u-far", DS_UID, "edge-node-2", OLD, PULLING(RT2), 0);
    run(&w);
    char name[64], msg[512];
    expect_count(&w, ACTION_CREATE_JOB, 2);
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-old", "u-old", H, RT1));
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-far", "u-far", H, RT2));
    assert_int_equal(w.out.waiting, 1);
    const action *q = find_event(&w, OTA_EVENT_QUEUED, "pod-new");
    assert_non_null(q);
    assert_string_equal(event_message(q, msg, sizeof(msg)),
                        "pre-pull of revision " H " queued: node " NODE
                        " is pulling already (--max-pulls-per-node)");
    assert_string_equal(q->key, "event:u-new|" RT2 "|" OTA_EVENT_QUEUED ":node-slot:u-new/" RT2);
    /* the first Job runs: still one per node */
    add_job(&w, job_name_of(name, "pod-old", "u-old", H, RT1), "u-old", H, RT1, JOB_RUNNING, 0);
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1); /* pod-far's, again (nothing skips it here) */
    assert_int_equal(w.out.waiting, 1);
    /* --max-pulls-per-node 2: both on the node run */
    w.cfg.max_pulls_per_node = 2;
    run(&w);
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-new", "u-new", H, RT2));
    assert_int_equal(w.out.waiting, 0);
    world_free(&w);
}

/* The node's slot is held by a Job being deleted and by a terminating
 * pull pod whose Job is gone; neither holds a global slot. */
static void test_terminating_holds_node(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    w.cfg.max_concurrent_pulls = 1;
    add_node(&w, NODE, "[]");
    add_node(&w, "edge-node-2", "[]");
    add_node(&w, "edge-node-3", "[]");
    add_pod(&w, "pod-a", "u-a", OLD, PULLING(RT1));
    add_terminating_job_pod(&w, "ota-prepull-gone-12345678", NODE);
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 0);
    assert_int_equal(w.out.waiting, 1);
    assert_non_null(find_event(&w, OTA_EVENT_QUEUED, "pod-a"));
    /* on another node the only global slot is free */
    add_pod_full(&w, "pod-b", "u-b", DS_UID, "edge-node-2", OLD, PULLING(RT2), 0);
    run(&w);
    char name[64];
    expect_count(&w, ACTION_CREATE_JOB, 1);
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-b", "u-b", H, RT2));
    world_free(&w);

    /* a Job being deleted (another pod's, on node 3) holds node 3 alone */
    world_init(&w);
    standard(&w);
    w.cfg.max_concurrent_pulls = 1;
    add_node(&w, "edge-node-3", "[]");
    add_node(&w, "edge-node-2", "[]");
    add_pod_full(&w, "pod-x", "u-x", DS_UID, "edge-node-3", MID, "[" NU("True", H) "]", 0);
    add_job(&w, "ota-prepull-x-12345678", "u-x", OLD, RT1, JOB_RUNNING, 1);
    add_pod_full(&w, "pod-c", "u-c", DS_UID, "edge-node-3", OLD, PULLING(RT1), 0);
    add_pod_full(&w, "pod-d", "u-d", DS_UID, "edge-node-2", OLD, PULLING(RT2), 0);
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-d", "u-d", H, RT2));
    assert_non_null(find_event(&w, OTA_EVENT_QUEUED, "pod-c"));
    world_free(&w);
}

/* A node NotReady or unreachable gets no Job: its request waits (said in
 * an Event, not failed) and takes no slot, so a newer request on a Ready
 * node starts; once the node is Ready again, it starts. */
static void test_node_not_ready_waits(void **state)
{
    (void)state;
    for (int taint = 0; taint <= 1; taint++) {
        world w;
        world_init(&w);
        standard(&w);
        w.cfg.max_concurrent_pulls = 1;
        add_node(&w, NODE, "[]");
        add_node_not_ready(&w, NODE, taint);
        add_node(&w, "edge-node-2", "[]");
        add_pod(&w, "pod-old", "u-old", OLD, PULLING(RT1));
        add_pod_full(&w, "pod-new", "u-new", DS_UID, "edge-node-2", OLD, PULLING(RT2), 0);
        run(&w);
        char name[64], msg[512];
        expect_count(&w, ACTION_CREATE_JOB, 1);
        the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-new", "u-new", H, RT2));
        expect_count(&w, ACTION_PATCH_POD_STATUS, 0); /* waiting, not failed */
        const action *q = find_event(&w, OTA_EVENT_QUEUED, "pod-old");
        assert_non_null(q);
        assert_string_equal(event_message(q, msg, sizeof(msg)),
                            "pre-pull of revision " H " waits for node " NODE
                            " to be Ready (it is NotReady or unreachable)");
        assert_int_equal(w.out.waiting, 1);
        /* Ready again, as the watch on Nodes says */
        store_delete(&w.pods, "u-new");
        put(&w.node_states, KOBJ_NODE_STATE, NODE,
            "{\"metadata\":{\"name\":\"" NODE "\",\"uid\":\"n1\"},\"status\":{\"conditions\":"
            "[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
        run(&w);
        the(&w, ACTION_CREATE_JOB, job_name_of(name, "pod-old", "u-old", H, RT1));
        world_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_limit),
        cmocka_unit_test(test_running_jobs_count),
        cmocka_unit_test(test_fifo_tie),
        cmocka_unit_test(test_fifo_node_being_read),
        cmocka_unit_test(test_one_pull_per_node),
        cmocka_unit_test(test_terminating_holds_node),
        cmocka_unit_test(test_node_not_ready_waits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

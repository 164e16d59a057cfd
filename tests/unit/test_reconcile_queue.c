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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_limit),
        cmocka_unit_test(test_running_jobs_count),
        cmocka_unit_test(test_fifo_tie),
        cmocka_unit_test(test_fifo_node_being_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

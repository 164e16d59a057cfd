/*
 * test_reconcile_write_bound.c - the controller's decisions: the bound on a
 * pass's writes (docs/DECISIONS.md "Bounded work queue"): k writes and "more",
 * the rest in the next passes, each once; a pull's result and a Job create
 * before a rollout's marks; node reads not counted.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- a bound on the writes of a pass (docs/DECISIONS.md "Bounded work queue") ---- */

/* Writes emitted: every action but a node read. */
static size_t writes_of(const action_list *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->v[i].kind != ACTION_GET_NODE;
    return n;
}

#define BOUND_PODS 6

static void add_stale_pods(world *w)
{
    for (int i = 0; i < BOUND_PODS; i++) {
        char name[32], uid[32];
        snprintf(name, sizeof(name), "pod-%d", i);
        snprintf(uid, sizeof(uid), "u-%d", i);
        add_pod(w, name, uid, OLD, "[" READY "]");
    }
}

static const struct {
    size_t max_writes;
    size_t marks; /* PodNeedUpgrade patches emitted */
    int more;     /* said that some were held back */
} bound_rows[] = {
    {0, BOUND_PODS, 0}, /* no bound */
    {1, 1, 1},
    {3, 3, 1},
    {BOUND_PODS - 1, BOUND_PODS - 1, 1},
    {BOUND_PODS, BOUND_PODS, 0},
    {BOUND_PODS + 5, BOUND_PODS, 0},
};

/* A pass with max_writes = k emits k writes and says more; the DaemonSet's
 * Event counts every pod to mark, held back or not, and is not bounded. */
static void test_write_bound_table(void **state)
{
    (void)state;
    for (size_t r = 0; r < sizeof(bound_rows) / sizeof(bound_rows[0]); r++) {
        world w;
        world_init(&w);
        standard(&w);
        add_stale_pods(&w);
        w.in.max_writes = bound_rows[r].max_writes;
        run(&w);
        if (count(&w, ACTION_PATCH_POD_STATUS) != bound_rows[r].marks ||
            w.out.more != bound_rows[r].more) {
            dump(&w.out);
            fail_msg("row %zu (max_writes %zu): %zu marks, more %d; want %zu, %d", r,
                     bound_rows[r].max_writes, count(&w, ACTION_PATCH_POD_STATUS), w.out.more,
                     bound_rows[r].marks, bound_rows[r].more);
        }
        const action *e = find_event(&w, OTA_EVENT_REVISION_MARKED, "edge-agent");
        assert_non_null(e);
        assert_int_equal(e->note.count, BOUND_PODS);
        expect_total(&w, bound_rows[r].marks + 1);
        world_free(&w);
    }
}

/* The executor skips what is in flight: the next pass, with the first k
 * keys in skip, emits the next k, and after as many passes as it takes
 * every pod has had its write, each once. */
static void test_write_bound_next_pass(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_stale_pods(&w);
    strset in_flight;
    strset_init(&in_flight);
    w.in.skip[0] = &in_flight;
    w.in.max_writes = 4;
    int seen[BOUND_PODS] = {0};
    size_t passes = 0;
    do {
        run(&w);
        passes++;
        assert_true(count(&w, ACTION_PATCH_POD_STATUS) <= 4);
        for (size_t i = 0; i < w.out.n; i++) {
            const action *a = &w.out.v[i];
            if (a->kind != ACTION_PATCH_POD_STATUS)
                continue;
            int n = atoi(a->name + strlen("pod-"));
            assert_in_range(n, 0, BOUND_PODS - 1);
            assert_int_equal(seen[n], 0); /* never twice */
            seen[n] = 1;
            assert_int_equal(strset_add(&in_flight, a->key), 0);
        }
    } while (w.out.more && passes < 10);
    assert_int_equal(passes, 2); /* 4, then the 2 left */
    for (int i = 0; i < BOUND_PODS; i++)
        assert_int_equal(seen[i], 1);
    /* all in flight: nothing more, nothing held back */
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 0);
    assert_int_equal(w.out.more, 0);
    strset_free(&in_flight);
    world_free(&w);
}

/* A pull's result and a Job create go before the marks of a rollout, so a
 * bound does not make them wait behind thousands of PodNeedUpgrade
 * patches; a Job create in flight still gets its Started Event when the
 * bound held the Event back. */
static void test_write_bound_urgent_first(void **state)
{
    (void)state;
    char done[64], next[64];
    job_name_of(done, "pod-done", "u-done", H, RT1);
    job_name_of(next, "pod-next", "u-next", H, RT2);
    static const struct {
        size_t max_writes;
        int result, result_event, create, started, marks, more;
    } rows[] = {
        {0, 1, 1, 1, 1, BOUND_PODS, 0},
        {4, 1, 1, 1, 1, 0, 1},
        {3, 1, 1, 1, 0, 0, 1},
        {2, 1, 1, 0, 0, 0, 1},
        {1, 1, 0, 0, 0, 0, 1},
        {6, 1, 1, 1, 1, 2, 1},
    };
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        world w;
        world_init(&w);
        standard(&w);
        add_node(&w, NODE, "[]");
        add_stale_pods(&w);
        add_pod(&w, "pod-done", "u-done", OLD, PULLING(RT1));
        add_job(&w, done, "u-done", H, RT1, JOB_COMPLETE, 0);
        add_pod(&w, "pod-next", "u-next", OLD, PULLING(RT2));
        w.in.max_writes = rows[r].max_writes;
        run(&w);
        size_t marks = count(&w, ACTION_PATCH_POD_STATUS) - (find(&w, ACTION_PATCH_POD_STATUS,
                                                                  "pod-done") != NULL);
        int got[6] = {find(&w, ACTION_PATCH_POD_STATUS, "pod-done") != NULL,
                      find_event(&w, OTA_EVENT_SUCCEEDED, "pod-done") != NULL,
                      find(&w, ACTION_CREATE_JOB, next) != NULL,
                      find_event(&w, OTA_EVENT_STARTED, "pod-next") != NULL, (int)marks,
                      w.out.more};
        int want[6] = {rows[r].result, rows[r].result_event, rows[r].create, rows[r].started,
                       rows[r].marks, rows[r].more};
        if (memcmp(got, want, sizeof(got)) != 0) {
            dump(&w.out);
            fail_msg("row %zu (max_writes %zu): got %d %d %d %d %d %d", r, rows[r].max_writes,
                     got[0], got[1], got[2], got[3], got[4], got[5]);
        }
        if (rows[r].max_writes == 3) {
            /* the create went out (in flight), its Event was held back:
             * the next pass says it, and does not create again */
            strset in_flight;
            strset_init(&in_flight);
            for (size_t i = 0; i < w.out.n; i++)
                assert_int_equal(strset_add(&in_flight, w.out.v[i].key), 0);
            w.in.skip[0] = &in_flight;
            run(&w);
            assert_null(find(&w, ACTION_CREATE_JOB, next));
            assert_non_null(find_event(&w, OTA_EVENT_STARTED, "pod-next"));
            expect_count(&w, ACTION_PATCH_POD_STATUS, 2); /* the next marks */
            strset_free(&in_flight);
        }
        world_free(&w);
    }
}

/* Node reads are not writes: emitted when the bound is spent. */
static void test_write_bound_reads(void **state)
{
    (void)state;
    char done[64];
    job_name_of(done, "pod-done", "u-done", H, RT1);
    world w;
    world_init(&w);
    standard(&w);
    add_pod(&w, "pod-done", "u-done", OLD, PULLING(RT1));
    add_job(&w, done, "u-done", H, RT1, JOB_COMPLETE, 0);
    add_pod(&w, "pod-next", "u-next", OLD, PULLING(RT2)); /* its node is not known yet */
    add_stale_pods(&w);
    w.in.max_writes = 1;
    run(&w);
    expect_count(&w, ACTION_GET_NODE, 1);
    /* one bounded write, and the DaemonSet's Event (not bounded) */
    assert_int_equal(count_events(&w, OTA_EVENT_REVISION_MARKED), 1);
    assert_int_equal(writes_of(&w.out), 1 + 1);
    assert_int_equal(w.out.more, 1);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_bound_table),
        cmocka_unit_test(test_write_bound_next_pass),
        cmocka_unit_test(test_write_bound_urgent_first),
        cmocka_unit_test(test_write_bound_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

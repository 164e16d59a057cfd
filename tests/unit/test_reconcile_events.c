/*
 * test_reconcile_events.c - the controller's decisions: an Event on the pod
 * for each step, sent once per request (docs/design.md §5 "Also"): what was
 * sent is not sent again, while the decisions themselves repeat; each
 * request's outcome is its own step.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- events once ---------------------------------------------------------------- */

/* The standard world with a queue of requests and one pull slot, after
 * one pass: five Events, one per request. */
static void queued_world(world *w)
{
    world_init(w);
    standard(w);
    w->cfg.max_concurrent_pulls = 1;
    add_node(w, NODE, "[]");
    add_queue(w);
    run(w);
}

static void test_events_sent_once(void **state)
{
    (void)state;
    world w;
    queued_world(&w);
    size_t events = count(&w, ACTION_CREATE_EVENT);
    assert_int_equal(events, 5);
    /* the executor records what it sent */
    for (size_t i = 0; i < w.out.n; i++)
        if (w.out.v[i].kind == ACTION_CREATE_EVENT)
            assert_int_equal(strset_add(&w.events_sent, w.out.v[i].key), 0);
    run(&w);
    expect_count(&w, ACTION_CREATE_EVENT, 0);
    /* the decisions themselves are repeated (a lost create is retried) */
    expect_count(&w, ACTION_CREATE_JOB, 1);
    assert_int_equal(w.out.waiting, 4);

    /* a new request of a queued pod is a new step, with its own event */
    store_delete(&w.pods, "u-e");
    add_pod(&w, "pod-e", "u-e", OLD,
            "[" NU("True", H) "," IR("False", OTA_REASON_WAIT_PULL, H, "2026-11-21T21:29:00Z") "]");
    run(&w);
    expect_count(&w, ACTION_CREATE_EVENT, 1);
    assert_non_null(find_event(&w, OTA_EVENT_QUEUED, "pod-e"));
    world_free(&w);
}

/* Each request's outcome is its own step: a retry that fails again, or a
 * re-pull that succeeds again, gets its own Event even though the earlier
 * request's Event was sent. */
static void test_outcome_event_per_request(void **state)
{
    (void)state;
    char job1[64], job2[64];
    job_name_of(job1, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    job_name_of(job2, "edge-agent-x7k2p", "u-x7k2p", H, RT2);
    static const char *const outcomes[] = {OTA_EVENT_FAILED, OTA_EVENT_SUCCEEDED};
    for (size_t k = 0; k < 2; k++) {
        const char *status = k == 0 ? JOB_DEADLINE : JOB_COMPLETE;
        world w;
        world_init(&w);
        standard(&w);
        add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
        add_job(&w, job1, "u-x7k2p", H, RT1, status, 0);
        add_job_pod(&w, job1, "ErrImagePull", "not found");
        run(&w);
        assert_non_null(find_event(&w, outcomes[k], "edge-agent-x7k2p"));
        for (size_t i = 0; i < w.out.n; i++)
            if (w.out.v[i].kind == ACTION_CREATE_EVENT)
                assert_int_equal(strset_add(&w.events_sent, w.out.v[i].key), 0);
        run(&w);
        expect_count(&w, ACTION_CREATE_EVENT, 0);

        /* the next request, its Job done the same way */
        store_free(&w.pods);
        store_free(&w.jobs);
        store_free(&w.job_pods);
        add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT2));
        add_job(&w, job2, "u-x7k2p", H, RT2, status, 0);
        add_job_pod(&w, job2, "ErrImagePull", "not found");
        run(&w);
        print_message("%s\n", outcomes[k]);
        expect_count(&w, ACTION_CREATE_EVENT, 1);
        assert_non_null(find_event(&w, outcomes[k], "edge-agent-x7k2p"));
        world_free(&w);
    }
}

/* Which Events were sent is kept in memory only: after a restart (or
 * with a new leader) the same Event is asked for again.  Its name comes
 * from its key, so the apiserver answers that with 409 (the executor then
 * counts it sent) instead of making a second one. */
static void test_event_names_from_keys(void **state)
{
    (void)state;
    char first[5][300];
    for (int round = 0; round < 2; round++) {
        world w;
        queued_world(&w);
        size_t k = 0;
        for (size_t i = 0; i < w.out.n; i++) {
            const action *a = &w.out.v[i];
            if (a->kind != ACTION_CREATE_EVENT)
                continue;
            yajl_val v = tree(a);
            const char *name = str_at(v, (const char *[]){"metadata", "name", NULL});
            const char *object = str_at(v, (const char *[]){"involvedObject", "name", NULL});
            assert_non_null(name);
            assert_null(str_at(v, (const char *[]){"metadata", "generateName", NULL}));
            /* "<object>.<16 hex>", as the apiserver's own Events are named */
            assert_int_equal(strlen(name), strlen(object) + 17);
            assert_int_equal(strncmp(name, object, strlen(object)), 0);
            if (round == 0) {
                snprintf(first[k], sizeof(first[k]), "%s", name);
                for (size_t j = 0; j < k; j++)
                    assert_string_not_equal(first[j], name); /* another key, another name */
            } else {
                assert_string_equal(first[k], name); /* the same, asked again */
            }
            yajl_tree_free(v);
            k++;
        }
        assert_int_equal(k, 5);
        world_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_sent_once),
        cmocka_unit_test(test_outcome_event_per_request),
        cmocka_unit_test(test_event_names_from_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

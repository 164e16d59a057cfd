/*
 * test_reconcile_fail_fast.c - the controller's decisions: a pull the registry
 * refuses fails at once, not at the deadline (docs/design.md §5 "Results"):
 * Failed after two refusals in a row, one PrePullBackOff Event per message
 * for a cause that may heal, and a Job still running deleted once the pod
 * says Failed.  How the kubelet's words are read is test_pullerr.c's.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- fail fast ------------------------------------------------------------------ */

/* A running Job whose pod the registry refuses: PullImageFail after
 * PULLERR_PERMANENT_ATTEMPTS refusals in a row, not at the deadline; a
 * cause that may heal gets one Event per message instead. */
static void test_fail_fast(void **state)
{
    (void)state;
    char name[64], jp_uid[96];
    job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    snprintf(jp_uid, sizeof(jp_uid), "jp-%s", name);
    static const struct {
        const char *reason, *message, *message_plain;
        int attempts;
        int fails;      /* PullImageFail now */
        int event;      /* a PrePullBackOff Event */
    } rows[] = {
        {"ErrImagePull", PULL_MSG, PULL_MSG_PLAIN, 0, 0, 0},
        {"ErrImagePull", PULL_MSG, PULL_MSG_PLAIN, 1, 0, 0},
        {"ErrImagePull", PULL_MSG, PULL_MSG_PLAIN, 2, 1, 0},
        {"ImagePullBackOff", PULL_MSG, PULL_MSG_PLAIN, 2, 1, 0},
        {"ErrImagePull", PULL_MSG, PULL_MSG_PLAIN, 5, 1, 0},
        {"ErrImagePull", "dial tcp 10.0.0.7:443: i/o timeout", "dial tcp 10.0.0.7:443: i/o timeout", 9,
         0, 1},
        {"ImagePullBackOff", "Back-off pulling image", "Back-off pulling image", 0, 0, 0},
        {"InvalidImageName", "bad", "bad", 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        print_message("row %zu: %s %d\n", i, rows[i].reason, rows[i].attempts);
        world w;
        world_init(&w);
        standard(&w);
        add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD, PULLING(RT1));
        add_job(&w, name, "u-x7k2p", H, RT1, JOB_RUNNING, 0);
        add_job_pod(&w, name, rows[i].reason, rows[i].message);
        ((kobj *)store_get(&w.job_pods, jp_uid))->u.job_pod.failed_attempts = rows[i].attempts;
        run(&w);
        if (rows[i].fails) {
            char why[1024];
            snprintf(why, sizeof(why), "%s: %s" FAST_HINT, rows[i].reason, rows[i].message_plain);
            expect_failed(&w, name, why);
            expect_total(&w, 2);
        } else if (rows[i].event) {
            expect_total(&w, 1);
            const action *e = find_event(&w, OTA_EVENT_BACKOFF, "edge-agent-x7k2p");
            assert_non_null(e);
            yajl_val ev = tree(e);
            char want[1024];
            snprintf(want, sizeof(want), "pull image job %s is retrying: %s: %s", name,
                     rows[i].reason, rows[i].message_plain);
            assert_string_equal(str_at(ev, (const char *[]){"message", NULL}), want);
            assert_string_equal(str_at(ev, (const char *[]){"type", NULL}), "Warning");
            yajl_tree_free(ev);
            /* once per message: sent, it is not asked again ... */
            assert_int_equal(strset_add(&w.events_sent, e->key), 0);
            run(&w);
            expect_total(&w, 0);
            /* ... but another message is news */
            store_delete(&w.job_pods, jp_uid);
            add_job_pod(&w, name, "ErrImagePull", "429 Too Many Requests");
            run(&w);
            expect_total(&w, 1);
            assert_non_null(find_event(&w, OTA_EVENT_BACKOFF, "edge-agent-x7k2p"));
        } else {
            expect_total(&w, 0);
        }
        world_free(&w);
    }
}

/* Once the pod says Failed, a Job still running serves no request: it is
 * deleted (finished Jobs stay until the next request). */
static void test_failed_pod_ends_running_job(void **state)
{
    (void)state;
    char name[64];
    job_name_of(name, "edge-agent-x7k2p", "u-x7k2p", H, RT1);
    static const struct {
        const char *job_status;
        int deleted;
    } rows[] = {{JOB_RUNNING, 1}, {JOB_DEADLINE, 0}, {JOB_COMPLETE, 0}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        world w;
        world_init(&w);
        standard(&w);
        add_pod(&w, "edge-agent-x7k2p", "u-x7k2p", OLD,
                "[" NU("True", H) ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\""
                OTA_REASON_PULL_FAIL "\",\"message\":\"pull image job x failed\"}]");
        add_job(&w, name, "u-x7k2p", H, RT1, rows[i].job_status, 0);
        run(&w);
        expect_total(&w, (size_t)rows[i].deleted);
        if (rows[i].deleted)
            assert_string_equal(the(&w, ACTION_DELETE_JOB, name)->name, name);
        world_free(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fail_fast),
        cmocka_unit_test(test_failed_pod_ends_running_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_reconcile_fail_fast.c - the controller's decisions: a pull the registry
 * refuses fails at once, not at the deadline (docs/design.md §5 "Results"):
 * the kubelet's words classified (reconcile_pull_error), Failed after two
 * refusals in a row, one PrePullBackOff Event per message for a cause that may
 * heal, and a Job still running deleted once the pod says Failed.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- fail fast ------------------------------------------------------------------ */

/* The kubelet's words as real runtimes write them (containerd 1.7/2.0,
 * CRI-O, dockershim) and kubesim's registry copies. */
static const struct {
    const char *name, *reason, *message;
    pull_error want;
} pull_error_rows[] = {
    {"containerd: tag not found", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image "
     "\"registry.example.com/edge/missing:9.9\": failed to resolve reference "
     "\"registry.example.com/edge/missing:9.9\": registry.example.com/edge/missing:9.9: not found",
     PULL_ERROR_PERMANENT},
    {"containerd: 401 without a pull secret", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"reg.example.com/p/a:2.0\": "
     "failed to resolve reference \"reg.example.com/p/a:2.0\": unexpected status from HEAD request "
     "to https://reg.example.com/v2/p/a/manifests/2.0: 401 Unauthorized",
     PULL_ERROR_PERMANENT},
    {"containerd: Docker Hub, private or absent", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"docker.io/library/ngnix:1\": "
     "failed to resolve reference \"docker.io/library/ngnix:1\": pull access denied, repository "
     "does not exist or may require authorization: server message: insufficient_scope: "
     "authorization failed",
     PULL_ERROR_PERMANENT},
    {"containerd: 403 from the registry", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"gcr.io/p/a:1\": failed to "
     "resolve reference \"gcr.io/p/a:1\": unexpected status from HEAD request to "
     "https://gcr.io/v2/p/a/manifests/1: 403 Forbidden",
     PULL_ERROR_PERMANENT},
    {"containerd: no image for this platform", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/x/y:1\": no "
     "match for platform in manifest: not found",
     PULL_ERROR_PERMANENT},
    {"docker: manifest unknown", "ErrImagePull",
     "Error response from daemon: manifest for nginx:doesnotexist not found: manifest unknown: "
     "manifest unknown",
     PULL_ERROR_PERMANENT},
    {"CRI-O: manifest unknown", "ErrImagePull",
     "reading manifest doesnotexist in docker.io/library/nginx: manifest unknown: manifest unknown",
     PULL_ERROR_PERMANENT},
    {"CRI-O: denied", "ErrImagePull",
     "initializing source docker://quay.io/p/a:1: reading manifest 1 in quay.io/p/a: unauthorized: "
     "access to the requested resource is not authorized",
     PULL_ERROR_PERMANENT},
    {"the back-off of 1.32+, with the error", "ImagePullBackOff",
     "Back-off pulling image \"registry.example.com/edge/missing:9.9\": ErrImagePull: rpc error: "
     "code = NotFound desc = failed to pull and unpack image: not found",
     PULL_ERROR_PERMANENT},
    {"containerd: registry unreachable", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"r.example.com/a:1\": "
     "failed to resolve reference \"r.example.com/a:1\": failed to do request: Head "
     "\"https://r.example.com/v2/a/manifests/1\": dial tcp 10.0.0.7:443: i/o timeout",
     PULL_ERROR_TRANSIENT},
    {"containerd: DNS", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"r.example.com/a:1\": "
     "failed to resolve reference \"r.example.com/a:1\": failed to do request: Head "
     "\"https://r.example.com/v2/a/manifests/1\": dial tcp: lookup r.example.com on "
     "10.96.0.10:53: no such host",
     PULL_ERROR_TRANSIENT},
    {"Docker Hub rate limit", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"docker.io/library/a:1\": "
     "failed to copy: httpReadSeeker: failed open: unexpected status code "
     "https://registry-1.docker.io/v2/library/a/manifests/sha256:0a: 429 Too Many Requests - "
     "Server message: toomanyrequests: You have reached your pull rate limit",
     PULL_ERROR_TRANSIENT},
    {"a 503 whose page says not found", "ErrImagePull",
     "rpc error: code = Unknown desc = unexpected status from HEAD request to "
     "https://r.example.com/v2/a/manifests/1: 503 Service Unavailable (upstream not found)",
     PULL_ERROR_TRANSIENT},
    {"a connection reset mid-layer", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"r/a:1\": failed to copy: "
     "read tcp 10.0.0.2:51234->10.0.0.7:443: read: connection reset by peer",
     PULL_ERROR_TRANSIENT},
    {"containerd: a concurrent pull of the same image removed a blob", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image \"r/a:1\": failed to "
     "copy: content digest sha256:5d0da3dc976460b72c77d94c8a1ad043720b0416bfc16c52c45d4847e53fadb6: "
     "not found",
     PULL_ERROR_TRANSIENT},
    {"containerd: a layer gone while unpacking", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image \"r/a:1\": failed to "
     "extract layer sha256:0a1b: failed to get reader from content store: content digest "
     "sha256:0a1b: not found",
     PULL_ERROR_TRANSIENT},
    {"the back-off of older kubelets says nothing", "ImagePullBackOff",
     "Back-off pulling image \"r/a:1\"", PULL_ERROR_TRANSIENT},
    {"no message", "ErrImagePull", NULL, PULL_ERROR_TRANSIENT},
    {"a bad reference", "InvalidImageName",
     "Failed to apply default image tag \"Nginx:latest\": couldn't parse image reference "
     "\"Nginx:latest\": invalid reference format: repository name must be lowercase",
     PULL_ERROR_FINAL},
    {"pull policy Never", "ErrImageNeverPull",
     "Container image \"r/a:1\" is not present with pull policy of Never", PULL_ERROR_FINAL},
    {"upper case in the message", "ErrImagePull", "... 401 UNAUTHORIZED", PULL_ERROR_PERMANENT},
    {"not a pull error", "CreateContainerConfigError", "secret \"x\" not found", PULL_ERROR_NONE},
    {"a crash", "CrashLoopBackOff", "back-off 10s restarting failed container", PULL_ERROR_NONE},
    {"no reason", NULL, "not found", PULL_ERROR_NONE},
};

static void test_pull_error_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(pull_error_rows) / sizeof(pull_error_rows[0]); i++) {
        pull_error got = reconcile_pull_error(pull_error_rows[i].reason, pull_error_rows[i].message);
        if (got != pull_error_rows[i].want)
            fail_msg("%s: %d, want %d", pull_error_rows[i].name, (int)got,
                     (int)pull_error_rows[i].want);
    }
}

/* A running Job whose pod the registry refuses: PullImageFail after
 * RECONCILE_PERMANENT_ATTEMPTS refusals in a row, not at the deadline; a
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
        cmocka_unit_test(test_pull_error_table),
        cmocka_unit_test(test_fail_fast),
        cmocka_unit_test(test_failed_pod_ends_running_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

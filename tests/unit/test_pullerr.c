/*
 * test_pullerr.c - the kubelet's words on a pull, as tables: how real
 * runtimes' messages are classified, whether a refusal makes a deadline
 * hint wrong, how attempts are counted and which words are kept as
 * versions of a container's status arrive, the back-off rule across two
 * sightings, and the verdict a reconciler acts on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"

#include "pullerr.h"

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- classification ---------------------------------------------------------- */

/* The kubelet's words as real runtimes write them (containerd 1.7/2.0,
 * CRI-O, dockershim) and kubesim's registry copies. */
typedef struct classify_row {
    const char *name, *reason, *message;
    pullerr_kind want;
} classify_row;

static const classify_row classify_rows[] = {
    {"containerd: tag not found", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image "
     "\"registry.example.com/edge/missing:9.9\": failed to resolve reference "
     "\"registry.example.com/edge/missing:9.9\": registry.example.com/edge/missing:9.9: not found",
     PULLERR_PERMANENT},
    {"containerd: 401 without a pull secret", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"reg.example.com/p/a:2.0\": "
     "failed to resolve reference \"reg.example.com/p/a:2.0\": unexpected status from HEAD request "
     "to https://reg.example.com/v2/p/a/manifests/2.0: 401 Unauthorized",
     PULLERR_PERMANENT},
    {"containerd: Docker Hub, private or absent", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"docker.io/library/ngnix:1\": "
     "failed to resolve reference \"docker.io/library/ngnix:1\": pull access denied, repository "
     "does not exist or may require authorization: server message: insufficient_scope: "
     "authorization failed",
     PULLERR_PERMANENT},
    {"containerd: 403 from the registry", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"gcr.io/p/a:1\": failed to "
     "resolve reference \"gcr.io/p/a:1\": unexpected status from HEAD request to "
     "https://gcr.io/v2/p/a/manifests/1: 403 Forbidden",
     PULLERR_PERMANENT},
    {"containerd: no image for this platform", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/x/y:1\": no "
     "match for platform in manifest: not found",
     PULLERR_PERMANENT},
    {"docker: manifest unknown", "ErrImagePull",
     "Error response from daemon: manifest for nginx:doesnotexist not found: manifest unknown: "
     "manifest unknown",
     PULLERR_PERMANENT},
    {"CRI-O: manifest unknown", "ErrImagePull",
     "reading manifest doesnotexist in docker.io/library/nginx: manifest unknown: manifest unknown",
     PULLERR_PERMANENT},
    {"CRI-O: denied", "ErrImagePull",
     "initializing source docker://quay.io/p/a:1: reading manifest 1 in quay.io/p/a: unauthorized: "
     "access to the requested resource is not authorized",
     PULLERR_PERMANENT},
    {"the back-off of 1.32+, with the error", "ImagePullBackOff",
     "Back-off pulling image \"registry.example.com/edge/missing:9.9\": ErrImagePull: rpc error: "
     "code = NotFound desc = failed to pull and unpack image: not found",
     PULLERR_PERMANENT},
    {"containerd: registry unreachable", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"r.example.com/a:1\": "
     "failed to resolve reference \"r.example.com/a:1\": failed to do request: Head "
     "\"https://r.example.com/v2/a/manifests/1\": dial tcp 10.0.0.7:443: i/o timeout",
     PULLERR_TRANSIENT},
    {"containerd: DNS", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"r.example.com/a:1\": "
     "failed to resolve reference \"r.example.com/a:1\": failed to do request: Head "
     "\"https://r.example.com/v2/a/manifests/1\": dial tcp: lookup r.example.com on "
     "10.96.0.10:53: no such host",
     PULLERR_TRANSIENT},
    {"Docker Hub rate limit", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"docker.io/library/a:1\": "
     "failed to copy: httpReadSeeker: failed open: unexpected status code "
     "https://registry-1.docker.io/v2/library/a/manifests/sha256:0a: 429 Too Many Requests - "
     "Server message: toomanyrequests: You have reached your pull rate limit",
     PULLERR_TRANSIENT},
    {"not found, named in the controller's words whose Job hash holds 429 (a CI flake: the "
     "hash read as a rate limit)", "ErrImagePull",
     "pull image job ota-prepull-agent-6jvdj-c429ab03 failed: ErrImagePull: rpc error: code = "
     "NotFound desc = failed to pull and unpack image \"r.example.com/edge/missing:9.9\": "
     "failed to resolve reference \"r.example.com/edge/missing:9.9\": "
     "r.example.com/edge/missing:9.9: not found",
     PULLERR_PERMANENT},
    {"a 429 as a number of its own", "ErrImagePull",
     "rpc error: code = Unknown desc = unexpected status code 429 from the registry",
     PULLERR_TRANSIENT},
    {"a 503 whose page says not found", "ErrImagePull",
     "rpc error: code = Unknown desc = unexpected status from HEAD request to "
     "https://r.example.com/v2/a/manifests/1: 503 Service Unavailable (upstream not found)",
     PULLERR_TRANSIENT},
    {"a connection reset mid-layer", "ErrImagePull",
     "rpc error: code = Unknown desc = failed to pull and unpack image \"r/a:1\": failed to copy: "
     "read tcp 10.0.0.2:51234->10.0.0.7:443: read: connection reset by peer",
     PULLERR_TRANSIENT},
    {"containerd: a concurrent pull of the same image removed a blob", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image \"r/a:1\": failed to "
     "copy: content digest sha256:5d0da3dc976460b72c77d94c8a1ad043720b0416bfc16c52c45d4847e53fadb6: "
     "not found",
     PULLERR_TRANSIENT},
    {"containerd: a layer gone while unpacking", "ErrImagePull",
     "rpc error: code = NotFound desc = failed to pull and unpack image \"r/a:1\": failed to "
     "extract layer sha256:0a1b: failed to get reader from content store: content digest "
     "sha256:0a1b: not found",
     PULLERR_TRANSIENT},
    {"the back-off of older kubelets says nothing", "ImagePullBackOff",
     "Back-off pulling image \"r/a:1\"", PULLERR_TRANSIENT},
    {"no message", "ErrImagePull", NULL, PULLERR_TRANSIENT},
    {"a bad reference", "InvalidImageName",
     "Failed to apply default image tag \"Nginx:latest\": couldn't parse image reference "
     "\"Nginx:latest\": invalid reference format: repository name must be lowercase",
     PULLERR_FINAL},
    {"pull policy Never", "ErrImageNeverPull",
     "Container image \"r/a:1\" is not present with pull policy of Never", PULLERR_FINAL},
    {"upper case in the message", "ErrImagePull", "... 401 UNAUTHORIZED", PULLERR_PERMANENT},
    {"not a pull error", "CreateContainerConfigError", "secret \"x\" not found", PULLERR_NONE},
    {"a crash", "CrashLoopBackOff", "back-off 10s restarting failed container", PULLERR_NONE},
    {"no reason", NULL, "not found", PULLERR_NONE},
};


static void test_classify_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(classify_rows); i++) {
        const classify_row *r = &classify_rows[i];
        pullerr_kind got = pullerr_classify(r->reason, r->message);
        ROW_CHECK(r->name, got == r->want, "%d, want %d", (int)got, (int)r->want);
        /* a refusal is what the registry or the kubelet said no to */
        int refused = pullerr_refused(r->reason, r->message);
        int want_refused = r->want == PULLERR_PERMANENT || r->want == PULLERR_FINAL;
        ROW_CHECK(r->name, refused == want_refused, "refused %d, want %d", refused, want_refused);
    }
}

/* What a refusal asks of the DaemonSet's admin (issue 19: kubectl ota said
 * "Retry" after NotFound and 401): the image reference, or the pull secret. */
static void test_refusal_table(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t row; /* of classify_rows */
        pullerr_refusal want;
    } rows[] = {
        {"tag not found", 0, PULLERR_REFUSED_IMAGE},
        {"401", 1, PULLERR_REFUSED_CREDENTIALS},
        {"Docker Hub: private or absent", 2, PULLERR_REFUSED_CREDENTIALS},
        {"403", 3, PULLERR_REFUSED_CREDENTIALS},
        {"no image for this platform", 4, PULLERR_REFUSED_IMAGE},
        {"manifest unknown", 5, PULLERR_REFUSED_IMAGE},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        const classify_row *r = &classify_rows[rows[i].row];
        pullerr_refusal got = pullerr_refusal_of(r->reason, r->message);
        ROW_CHECK(rows[i].name, got == rows[i].want, "%d, want %d (row %s)", (int)got,
                  (int)rows[i].want, r->name);
    }
    static const struct {
        const char *name, *reason, *message;
        pullerr_refusal want;
    } more[] = {
        {"the kubelet's own last word", "InvalidImageName", "invalid reference format",
         PULLERR_REFUSED_IMAGE},
        {"never pull", "ErrImageNeverPull", "image is not present", PULLERR_REFUSED_IMAGE},
        {"a busy registry", "ErrImagePull", "503 Service Unavailable: not found",
         PULLERR_REFUSED_NOT},
        {"a timeout", "ErrImagePull", "dial tcp: i/o timeout", PULLERR_REFUSED_NOT},
        {"no reason", NULL, "401 Unauthorized", PULLERR_REFUSED_NOT},
    };
    for (size_t i = 0; i < N_ROWS(more); i++) {
        pullerr_refusal got = pullerr_refusal_of(more[i].reason, more[i].message);
        ROW_CHECK(more[i].name, got == more[i].want, "%d, want %d", (int)got, (int)more[i].want);
    }
    /* refused by pullerr_refused exactly when it asks something */
    for (size_t i = 0; i < N_ROWS(classify_rows); i++) {
        const classify_row *r = &classify_rows[i];
        int asks = pullerr_refusal_of(r->reason, r->message) != PULLERR_REFUSED_NOT;
        ROW_CHECK(r->name, asks == pullerr_refused(r->reason, r->message), "asks %d", asks);
    }
}

/* ---- attempts and kept words, version after version --------------------------- */

#define NOT_FOUND "rpc error: code = NotFound desc = failed to resolve reference \"r/a:1\": r/a:1: not found"
#define TIMEOUT "dial tcp 10.0.0.7:443: i/o timeout"
#define BACKOFF "Back-off pulling image \"r/a:1\""
#define BACKOFF_132 BACKOFF ": ErrImagePull: " NOT_FOUND

typedef struct next_row {
    const char *name;
    int has_before;
    pullerr_seen before; /* as kept: reason may be the error kept through a back-off */
    const char *reason, *message; /* the kubelet's fresh words */
    int attempts;
    const char *want_reason, *want_message; /* the words kept */
    int kept, backing_off;
} next_row;

#define SEEN(reason, message, backing_off, attempts) {reason, message, backing_off, attempts, 0, 0}
#define NONE SEEN(NULL, NULL, 0, 0)

/* clang-format off */
static const next_row next_rows[] = {
    {"first sight of a refusal", 0, NONE, "ErrImagePull", NOT_FOUND, 1,
     "ErrImagePull", NOT_FOUND, 0, 0},
    {"first refusal after initializing", 1, NONE, "ErrImagePull", NOT_FOUND, 1,
     "ErrImagePull", NOT_FOUND, 0, 0},
    {"the same attempt seen again", 1, SEEN("ErrImagePull", NOT_FOUND, 0, 1),
     "ErrImagePull", NOT_FOUND, 1, "ErrImagePull", NOT_FOUND, 0, 0},
    {"the same reason, first counted now", 1, SEEN("ErrImagePull", TIMEOUT, 0, 0),
     "ErrImagePull", NOT_FOUND, 1, "ErrImagePull", NOT_FOUND, 0, 0},
    /* the back-off keeps the count and the error's words */
    {"its back-off keeps the count and the error", 1, SEEN("ErrImagePull", NOT_FOUND, 0, 1),
     "ImagePullBackOff", BACKOFF, 1, "ErrImagePull", NOT_FOUND, 1, 1},
    {"the back-off goes on: the error still kept", 1, SEEN("ErrImagePull", NOT_FOUND, 1, 1),
     "ImagePullBackOff", BACKOFF, 1, "ErrImagePull", NOT_FOUND, 1, 1},
    {"a 1.32 back-off that repeats the error: the error's own words kept", 1,
     SEEN("ErrImagePull", NOT_FOUND, 0, 1), "ImagePullBackOff", BACKOFF_132, 1,
     "ErrImagePull", NOT_FOUND, 1, 1},
    {"a back-off after a back-off: its own words", 1, SEEN("ImagePullBackOff", BACKOFF, 1, 0),
     "ImagePullBackOff", BACKOFF_132, 0, "ImagePullBackOff", BACKOFF_132, 0, 1},
    {"a back-off first seen: nothing known", 0, NONE, "ImagePullBackOff", BACKOFF, 0,
     "ImagePullBackOff", BACKOFF, 0, 1},
    {"a back-off after initializing: nothing to keep", 1, NONE, "ImagePullBackOff", BACKOFF, 0,
     "ImagePullBackOff", BACKOFF, 0, 1},
    {"a refusal after the back-off: a second attempt", 1, SEEN("ErrImagePull", NOT_FOUND, 1, 1),
     "ErrImagePull", NOT_FOUND, 2, "ErrImagePull", NOT_FOUND, 0, 0},
    {"and a third", 1, SEEN("ErrImagePull", NOT_FOUND, 1, 2), "ErrImagePull", NOT_FOUND, 3,
     "ErrImagePull", NOT_FOUND, 0, 0},
    {"a timeout after the back-off: starts over", 1, SEEN("ErrImagePull", NOT_FOUND, 1, 1),
     "ErrImagePull", TIMEOUT, 0, "ErrImagePull", TIMEOUT, 0, 0},
    {"a refusal after a timeout's back-off", 1, SEEN("ErrImagePull", TIMEOUT, 1, 0),
     "ErrImagePull", NOT_FOUND, 1, "ErrImagePull", NOT_FOUND, 0, 0},
    {"the next image initializing: starts over", 1, SEEN("ErrImagePull", NOT_FOUND, 0, 1),
     NULL, NULL, 0, NULL, NULL, 0, 0},
    {"InvalidImageName is no attempt to count (final at once)", 1, NONE,
     "InvalidImageName", "bad", 0, "InvalidImageName", "bad", 0, 0},
};
/* clang-format on */

static int same(const char *a, const char *b)
{
    return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

static void test_next_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(next_rows); i++) {
        const next_row *r = &next_rows[i];
        pullerr_seen got = pullerr_next(r->has_before ? &r->before : NULL, r->reason, r->message);
        ROW_CHECK(r->name, got.attempts == r->attempts, "%d attempts, want %d", got.attempts,
                  r->attempts);
        ROW_CHECK(r->name, got.kept == r->kept, "kept %d, want %d", got.kept, r->kept);
        ROW_CHECK(r->name, same(got.reason, r->want_reason), "reason %s, want %s",
                  got.reason != NULL ? got.reason : "(null)",
                  r->want_reason != NULL ? r->want_reason : "(null)");
        ROW_CHECK(r->name, same(got.message, r->want_message), "message %s, want %s",
                  got.message != NULL ? got.message : "(null)",
                  r->want_message != NULL ? r->want_message : "(null)");
        ROW_CHECK(r->name, got.backing_off == r->backing_off, "backing off %d, want %d",
                  got.backing_off, r->backing_off);
    }
}

/* Attempts counted through a whole story, each version from the one
 * before: the registry refuses, backs off, refuses again. */
static void test_next_story(void **state)
{
    (void)state;
    static const struct {
        const char *reason, *message;
        int attempts;
        pullerr_verdict verdict;
    } steps[] = {
        {NULL, NULL, 0, PULLERR_NOT_STUCK},
        {"ErrImagePull", NOT_FOUND, 1, PULLERR_STUCK},
        {"ErrImagePull", NOT_FOUND, 1, PULLERR_STUCK},
        {"ImagePullBackOff", BACKOFF, 1, PULLERR_STUCK},
        {"ImagePullBackOff", BACKOFF, 1, PULLERR_STUCK},
        {"ErrImagePull", NOT_FOUND, PULLERR_PERMANENT_ATTEMPTS, PULLERR_GIVE_UP},
    };
    pullerr_seen seen = pullerr_next(NULL, steps[0].reason, steps[0].message);
    for (size_t i = 1; i < N_ROWS(steps); i++) {
        seen = pullerr_next(&seen, steps[i].reason, steps[i].message);
        print_message("step %zu: %s\n", i, steps[i].reason);
        assert_int_equal(seen.attempts, steps[i].attempts);
        /* the back-off is judged by the error it keeps */
        assert_string_equal(seen.reason, "ErrImagePull");
        assert_int_equal(pullerr_judge(seen.reason, seen.message, seen.attempts),
                         steps[i].verdict);
    }
}

/* Errors of any kind counted through a story (an ImagePullJob's
 * backoffLimit): transient ones too, never started over by a back-off or a
 * pod that says nothing; the same error seen twice is one attempt. */
static void test_errors_story(void **state)
{
    (void)state;
    static const struct {
        const char *reason, *message;
        int errors;
    } steps[] = {
        {NULL, NULL, 0},
        {"ErrImagePull", "rpc error: code = Unknown desc = i/o timeout", 1},
        {"ErrImagePull", "rpc error: code = Unknown desc = i/o timeout", 1},
        {"ImagePullBackOff", BACKOFF, 1},
        {"ErrImagePull", "rpc error: code = Unknown desc = i/o timeout", 2},
        {"ImagePullBackOff", BACKOFF, 2},
        {"ErrImagePull", NOT_FOUND, 3},
        {"PodInitializing", NULL, 3},
        {"InvalidImageName", "couldn't parse image reference", 4},
    };
    pullerr_seen seen = pullerr_next(NULL, steps[0].reason, steps[0].message);
    assert_int_equal(seen.errors, 0);
    for (size_t i = 1; i < N_ROWS(steps); i++) {
        seen = pullerr_next(&seen, steps[i].reason, steps[i].message);
        if (seen.errors != steps[i].errors)
            fail_msg("step %zu %s: %d errors, want %d", i, steps[i].reason, seen.errors,
                     steps[i].errors);
    }
}

/* ---- a back-off says less than the error before it ----------------------------- */

typedef struct less_row {
    const char *name, *reason, *before;
    int want;
} less_row;

static const less_row less_rows[] = {
    {"a back-off after an error", "ImagePullBackOff", "ErrImagePull", 1},
    {"a back-off after a final error", "ImagePullBackOff", "InvalidImageName", 1},
    {"a back-off after a back-off", "ImagePullBackOff", "ImagePullBackOff", 0},
    {"an error after a back-off", "ErrImagePull", "ImagePullBackOff", 0},
    {"an error after an error", "ErrImagePull", "ErrImagePull", 0},
    {"nothing before", "ImagePullBackOff", NULL, 0},
    {"nothing now", NULL, "ErrImagePull", 0},
    {"a crash loop is no pull's back-off", "CrashLoopBackOff", "ErrImagePull", 0},
};

static void test_says_less_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(less_rows); i++) {
        const less_row *r = &less_rows[i];
        int got = pullerr_says_less(r->reason, r->before);
        ROW_CHECK(r->name, got == r->want, "%d, want %d", got, r->want);
    }
}

/* ---- the verdict --------------------------------------------------------------- */

typedef struct judge_row {
    const char *name, *reason, *message;
    int attempts;
    pullerr_verdict want;
} judge_row;

static const judge_row judge_rows[] = {
    {"no waiting reason", NULL, NULL, 0, PULLERR_NOT_STUCK},
    {"not a pull problem", "CreateContainerConfigError", "secret \"x\" not found", 3,
     PULLERR_NOT_STUCK},
    {"a crash loop", "CrashLoopBackOff", "back-off 10s restarting failed container", 0,
     PULLERR_NOT_STUCK},
    /* the kubelet's own last word: at once */
    {"InvalidImageName", "InvalidImageName", "bad", 0, PULLERR_GIVE_UP},
    {"ErrImageNeverPull", "ErrImageNeverPull", "not present with pull policy of Never", 0,
     PULLERR_GIVE_UP},
    /* a refusal: not on the first answer (it may be a glitch) */
    {"a refusal, not yet counted", "ErrImagePull", NOT_FOUND, 0, PULLERR_STUCK},
    {"one refusal", "ErrImagePull", NOT_FOUND, PULLERR_PERMANENT_ATTEMPTS - 1, PULLERR_STUCK},
    {"refused in a row", "ErrImagePull", NOT_FOUND, PULLERR_PERMANENT_ATTEMPTS, PULLERR_GIVE_UP},
    {"refused more", "ErrImagePull", NOT_FOUND, 5, PULLERR_GIVE_UP},
    {"a 1.32 back-off that names the refusal", "ImagePullBackOff", BACKOFF_132,
     PULLERR_PERMANENT_ATTEMPTS, PULLERR_GIVE_UP},
    /* a cause that may heal: told, whatever the count */
    {"a timeout", "ErrImagePull", TIMEOUT, 9, PULLERR_RETRYING},
    {"a rate limit", "ErrImagePull", "429 Too Many Requests", 0, PULLERR_RETRYING},
    {"no words", "ErrImagePull", NULL, 0, PULLERR_STUCK},
    /* a back-off's own words add nothing to the error before it */
    {"a bare back-off", "ImagePullBackOff", BACKOFF, 0, PULLERR_STUCK},
    {"a back-off that names a timeout", "ImagePullBackOff", BACKOFF ": ErrImagePull: " TIMEOUT, 0,
     PULLERR_STUCK},
};

static void test_judge_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(judge_rows); i++) {
        const judge_row *r = &judge_rows[i];
        pullerr_verdict got = pullerr_judge(r->reason, r->message, r->attempts);
        ROW_CHECK(r->name, got == r->want, "verdict %d, want %d", (int)got, (int)r->want);
        /* stuck exactly when there is a pull error */
        ROW_CHECK(r->name,
                  (got == PULLERR_NOT_STUCK) ==
                      (pullerr_classify(r->reason, r->message) == PULLERR_NONE),
                  "verdict %d against class %d", (int)got,
                  (int)pullerr_classify(r->reason, r->message));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify_table),
        cmocka_unit_test(test_refusal_table),
        cmocka_unit_test(test_next_table),
        cmocka_unit_test(test_next_story),
        cmocka_unit_test(test_errors_story),
        cmocka_unit_test(test_says_less_table),
        cmocka_unit_test(test_judge_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_controller.c - the executor's decisions, as tables: how a call
 * ended by action and HTTP status, and how long its key is then held back;
 * that only the leader writes, also when a call waits for its turn or its
 * next attempt; which pull counter an action done adds to (by the outcome
 * reconcile gave it, not by its key); which Event keys are forgotten; the
 * bound on queued writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kobj_fixture.h"
#include "row_check.h"

#include "controller.h"


#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- how a call ended ---------------------------------------------------------- */

typedef struct exec_row {
    const char *name;
    action_kind kind;
    long status; /* 0: no answer */
    exec_outcome want;
    uint64_t hold_ns;
} exec_row;

#define OK RECENT_OK_NS
#define HELD RECENT_FAILED_NS

static const exec_row exec_rows[] = {
    {"create-job 201", ACTION_CREATE_JOB, 201, EXEC_DONE, OK},
    {"create-job 200", ACTION_CREATE_JOB, 200, EXEC_DONE, OK},
    /* the Job's name is deterministic: a 409 is the Job made before a
     * restart, not a failure to retry (nor a second Job) */
    {"create-job 409: made before a restart", ACTION_CREATE_JOB, 409, EXEC_MADE_BEFORE, OK},
    {"create-job 404 (namespace gone)", ACTION_CREATE_JOB, 404, EXEC_FAILED, HELD},
    {"create-job 422", ACTION_CREATE_JOB, 422, EXEC_FAILED, HELD},
    {"create-job 429 (retries spent)", ACTION_CREATE_JOB, 429, EXEC_FAILED, HELD},
    {"create-job 500", ACTION_CREATE_JOB, 500, EXEC_FAILED, HELD},
    {"create-job no answer", ACTION_CREATE_JOB, 0, EXEC_FAILED, HELD},
    {"delete-job 200", ACTION_DELETE_JOB, 200, EXEC_DONE, OK},
    {"delete-job 202", ACTION_DELETE_JOB, 202, EXEC_DONE, OK},
    {"delete-job 404: gone already", ACTION_DELETE_JOB, 404, EXEC_GONE, OK},
    {"delete-job 409", ACTION_DELETE_JOB, 409, EXEC_FAILED, HELD},
    {"delete-job no answer", ACTION_DELETE_JOB, 0, EXEC_FAILED, HELD},
    {"patch-pod-status 200", ACTION_PATCH_POD_STATUS, 200, EXEC_DONE, OK},
    {"patch-pod-status 404: pod deleted", ACTION_PATCH_POD_STATUS, 404, EXEC_GONE, OK},
    {"patch-pod-status 409: precondition failed", ACTION_PATCH_POD_STATUS, 409, EXEC_CONFLICT, HELD},
    {"patch-pod-status 422", ACTION_PATCH_POD_STATUS, 422, EXEC_FAILED, HELD},
    {"patch-pod-status 503", ACTION_PATCH_POD_STATUS, 503, EXEC_FAILED, HELD},
    {"create-event 201", ACTION_CREATE_EVENT, 201, EXEC_DONE, OK},
    {"create-event 404", ACTION_CREATE_EVENT, 404, EXEC_FAILED, HELD},
    {"create-event 409: sent before a restart (its name is its key's)", ACTION_CREATE_EVENT, 409,
     EXEC_MADE_BEFORE, OK},
    {"get-node 200", ACTION_GET_NODE, 200, EXEC_DONE, OK},
    {"get-node 404", ACTION_GET_NODE, 404, EXEC_FAILED, HELD},
    /* an ImagePullJob's writes: gone is done, a precondition is a conflict */
    {"patch-job 200", ACTION_PATCH_JOB, 200, EXEC_DONE, OK},
    {"patch-job 404: Job gone", ACTION_PATCH_JOB, 404, EXEC_GONE, OK},
    {"patch-job 409", ACTION_PATCH_JOB, 409, EXEC_FAILED, HELD},
    {"patch-imagepulljob-status 404", ACTION_PATCH_IPJ_STATUS, 404, EXEC_GONE, OK},
    {"patch-imagepulljob-status 422", ACTION_PATCH_IPJ_STATUS, 422, EXEC_FAILED, HELD},
    {"patch-imagepulljob 409: resourceVersion", ACTION_PATCH_IPJ, 409, EXEC_CONFLICT, HELD},
    {"patch-imagepulljob 404", ACTION_PATCH_IPJ, 404, EXEC_GONE, OK},
    {"delete-imagepulljob 409: another uid", ACTION_DELETE_IPJ, 409, EXEC_CONFLICT, HELD},
    {"delete-imagepulljob 404: gone already", ACTION_DELETE_IPJ, 404, EXEC_GONE, OK},
    {"delete-imagepulljob 200", ACTION_DELETE_IPJ, 200, EXEC_DONE, OK},
    /* an ImageCache's writes: the resourceVersion-carrying ones read again
     * on 409 (never the same body twice); a status patch has none */
    {"patch-imagecache 409: edited meanwhile", ACTION_PATCH_IC, 409, EXEC_CONFLICT, HELD},
    {"put-imagecache 409: edited meanwhile", ACTION_PUT_IC, 409, EXEC_CONFLICT, HELD},
    {"put-imagecache 200", ACTION_PUT_IC, 200, EXEC_DONE, OK},
    {"put-imagecache 404: deleted", ACTION_PUT_IC, 404, EXEC_GONE, OK},
    {"patch-imagecache-status 404", ACTION_PATCH_IC_STATUS, 404, EXEC_GONE, OK},
    {"patch-imagecache-status 409", ACTION_PATCH_IC_STATUS, 409, EXEC_FAILED, HELD},
    {"get-imagecache-discovery 404: no CRD", ACTION_GET_IC_DISCOVERY, 404, EXEC_FAILED, HELD},
    /* a read for a podSelector: not a write; a failure is asked again later */
    {"list-pods 200", ACTION_LIST_PODS, 200, EXEC_DONE, OK},
    {"list-pods 403", ACTION_LIST_PODS, 403, EXEC_FAILED, HELD},
    {"list-pods 404", ACTION_LIST_PODS, 404, EXEC_FAILED, HELD},
    /* the 2xx range, exactly */
    {"create-job 199", ACTION_CREATE_JOB, 199, EXEC_FAILED, HELD},
    {"create-job 299", ACTION_CREATE_JOB, 299, EXEC_DONE, OK},
    {"create-job 300", ACTION_CREATE_JOB, 300, EXEC_FAILED, HELD},
};

static void test_exec_outcome_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(exec_rows); i++) {
        const exec_row *r = &exec_rows[i];
        exec_outcome got = controller_exec_outcome(r->kind, r->status);
        ROW_CHECK(r->name, got == r->want, "outcome %d, want %d", (int)got, (int)r->want);
        uint64_t hold = controller_hold_ns(got);
        ROW_CHECK(r->name, hold == r->hold_ns, "held back %llu ns, want %llu",
                  (unsigned long long)hold, (unsigned long long)r->hold_ns);
    }
}

/* ---- only the leader writes ------------------------------------------------------ */

typedef struct send_row {
    const char *name;
    action_kind kind;
    int leading;
    int want;
} send_row;

static const send_row send_rows[] = {
    {"leader: create-job", ACTION_CREATE_JOB, 1, 1},
    {"leader: delete-job", ACTION_DELETE_JOB, 1, 1},
    {"leader: patch-pod-status", ACTION_PATCH_POD_STATUS, 1, 1},
    {"leader: create-event", ACTION_CREATE_EVENT, 1, 1},
    {"leader: get-node", ACTION_GET_NODE, 1, 1},
    /* f8db600: the lease lost while a write waits for its turn in the rate
     * limit, or for its next attempt after a 5xx: it must not go out (the
     * client asks before every attempt; the pass asked only once) */
    {"lease lost: a create-job waiting for its next attempt", ACTION_CREATE_JOB, 0, 0},
    {"lease lost: a delete-job waiting for its turn", ACTION_DELETE_JOB, 0, 0},
    {"lease lost: a status patch waiting for its next attempt", ACTION_PATCH_POD_STATUS, 0, 0},
    {"lease lost: an Event waiting for its turn", ACTION_CREATE_EVENT, 0, 0},
    /* reading a node writes nothing: a follower may warm its cache */
    {"not leading: get-node", ACTION_GET_NODE, 0, 1},
};

static void test_may_send_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(send_rows); i++) {
        const send_row *r = &send_rows[i];
        int got = controller_may_send(r->kind, r->leading);
        ROW_CHECK(r->name, got == r->want, "may send %d, want %d", got, r->want);
    }
}

/* ---- pulls by outcome -------------------------------------------------------- */

typedef struct pull_row {
    const char *name;
    action_kind kind;
    action_outcome outcome;
    pull_outcome want; /* PULL_N_OUTCOMES: counted nowhere */
} pull_row;

static const pull_row pull_rows[] = {
    {"a Job created starts a pull", ACTION_CREATE_JOB, ACTION_OUTCOME_NONE, PULL_STARTED},
    {"Ready patched: succeeded", ACTION_PATCH_POD_STATUS, ACTION_OUTCOME_PULL_SUCCEEDED,
     PULL_SUCCEEDED},
    {"PullImageFail patched: failed", ACTION_PATCH_POD_STATUS, ACTION_OUTCOME_PULL_FAILED,
     PULL_FAILED},
    {"PodNeedUpgrade patched: no pull", ACTION_PATCH_POD_STATUS, ACTION_OUTCOME_NONE,
     PULL_N_OUTCOMES},
    {"an Event: no pull", ACTION_CREATE_EVENT, ACTION_OUTCOME_NONE, PULL_N_OUTCOMES},
    {"a Job deleted: no pull", ACTION_DELETE_JOB, ACTION_OUTCOME_NONE, PULL_N_OUTCOMES},
    {"a node read: no pull", ACTION_GET_NODE, ACTION_OUTCOME_NONE, PULL_N_OUTCOMES},
    /* only a status patch reports an outcome, whatever else says so */
    {"an Event tagged succeeded: no pull", ACTION_CREATE_EVENT, ACTION_OUTCOME_PULL_SUCCEEDED,
     PULL_N_OUTCOMES},
};

static void test_pull_outcome_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(pull_rows); i++) {
        const pull_row *r = &pull_rows[i];
        pull_outcome got = controller_pull_outcome(r->kind, r->outcome);
        ROW_CHECK(r->name, got == r->want, "counter %d, want %d", (int)got, (int)r->want);
    }
}

/* ---- forgetting the Events of pods and requests that are gone ----------------- */

#define RT_A "2026-11-21T19:40:05Z"
#define RT_B "2026-11-21T21:20:00Z"

static void add_pod(store *pods, const char *uid, const char *image_ready)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"agent-%s\",\"namespace\":\"edge\",\"uid\":\"%s\"},"
             "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"conditions\":[%s]}}",
             uid, uid, image_ready);
    kobj *o = kf_decode_text(KOBJ_POD, json);
    assert_non_null(o);
    assert_int_equal(store_put(pods, uid, o), 0);
}

typedef struct gc_row {
    const char *name, *key;
    int live;
} gc_row;

static const gc_row gc_rows[] = {
    {"the current request's Started", "event:u-a|" RT_A "|PrePullStarted:u-a/" RT_A, 1},
    {"the current request's Failed (suffix a Job)", "event:u-a|" RT_A "|PrePullFailed:ota-prepull-a-1", 1},
    {"an earlier request of a live pod", "event:u-a|" RT_B "|PrePullFailed:ota-prepull-a-0", 0},
    {"a request time that is a prefix of the current one", "event:u-a|2026-11-21T19:40|PrePullStarted:x", 0},
    {"a pod that is gone", "event:u-gone|" RT_A "|PrePullStarted:u-gone/" RT_A, 0},
    {"a pod without PodImageReady: the request without a time", "event:u-b||PrePullSucceeded:j", 1},
    {"a pod without PodImageReady, a key with a time", "event:u-b|" RT_A "|PrePullSucceeded:j", 0},
    {"a pod whose request has no time", "event:u-c||PrePullQueued:u-c/", 1},
    {"not an Event key", "status:u-gone@1:ready", 1},
    {"an Event key of another shape (kept)", "event:daemonset/edge/agent:rev", 1},
    {"one bar only (kept)", "event:u-gone|x", 1},
    {"a uid too long to be one (kept)",
     "event:uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu"
     "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu"
     "uuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuuu|" RT_A "|x:y", 1},
};

static int keep_live(const char *key, void *data)
{
    return controller_event_key_live(key, data);
}

static void test_event_key_gc_table(void **state)
{
    (void)state;
    store pods;
    store_init(&pods, kobj_free_any, kobj_uid);
    add_pod(&pods, "u-a",
            "{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"WaitPullImage\","
            "\"lastTransitionTime\":\"" RT_A "\",\"message\":\"controllerrevision: h\"}");
    add_pod(&pods, "u-b", "");
    add_pod(&pods, "u-c", "{\"type\":\"PodImageReady\",\"status\":\"False\"}");
    strset sent;
    strset_init(&sent);
    size_t want_gone = 0;
    for (size_t i = 0; i < N_ROWS(gc_rows); i++) {
        const gc_row *r = &gc_rows[i];
        int got = controller_event_key_live(r->key, &pods);
        ROW_CHECK(r->name, got == r->live, "live %d, want %d", got, r->live);
        assert_int_equal(strset_add(&sent, r->key), 0);
        want_gone += !r->live;
    }
    /* and the set keeps exactly the live ones */
    assert_int_equal(strset_retain(&sent, keep_live, &pods), want_gone);
    assert_int_equal(strset_len(&sent), N_ROWS(gc_rows) - want_gone);
    for (size_t i = 0; i < N_ROWS(gc_rows); i++)
        ROW_CHECK(gc_rows[i].name, strset_has(&sent, gc_rows[i].key) == gc_rows[i].live,
                  "kept %d", strset_has(&sent, gc_rows[i].key));
    /* nothing more to forget */
    assert_int_equal(strset_retain(&sent, keep_live, &pods), 0);
    strset_free(&sent);
    store_free(&pods);
}

/* The Event on a DaemonSet for a new revision is forgotten once the
 * DaemonSet or that revision is gone (found in review: it was kept for
 * the life of the process). */
static void test_revision_event_key_gc(void **state)
{
    (void)state;
    store daemonsets, revisions;
    store_init(&daemonsets, kobj_free_any, kobj_uid);
    store_init(&revisions, kobj_free_any, kobj_uid);
    kobj *ds = kf_decode_text(KOBJ_DAEMONSET, "{\"metadata\":{\"name\":\"agent\",\"namespace\":"
                                              "\"edge\",\"uid\":\"ds-1\"}}");
    assert_non_null(ds);
    assert_int_equal(store_put(&daemonsets, "ds-1", ds), 0);
    kobj *rev = kf_decode_text(KOBJ_REVISION,
                               "{\"metadata\":{\"name\":\"agent-h2\",\"namespace\":\"edge\","
                               "\"uid\":\"r-2\",\"labels\":{\"controller-revision-hash\":\"h2\"}},"
                               "\"revision\":2}");
    assert_non_null(rev);
    assert_int_equal(store_put(&revisions, "r-2", rev), 0);
    static const gc_row rows[] = {
        {"the DaemonSet and its revision are cached", RECONCILE_REVISION_EVENT_KEY "ds-1|h2", 1},
        {"a revision no longer cached", RECONCILE_REVISION_EVENT_KEY "ds-1|h1", 0},
        {"a DaemonSet that is gone", RECONCILE_REVISION_EVENT_KEY "ds-gone|h2", 0},
        {"no bar (kept)", RECONCILE_REVISION_EVENT_KEY "ds-1", 1},
        {"a pod's Event key (not this rule's)", "event:u-a|" RT_A "|PrePullStarted:x", 1},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        int got = controller_revision_event_key_live(rows[i].key, &daemonsets, &revisions);
        ROW_CHECK(rows[i].name, got == rows[i].live, "live %d, want %d", got, rows[i].live);
    }
    store_free(&daemonsets);
    store_free(&revisions);
}

/* The Warning Event about a bad timeout annotation is forgotten once the
 * DaemonSet is gone or the annotation no longer has that value, so a bad
 * value written again later is said again. */
static void test_timeout_event_key_gc(void **state)
{
    (void)state;
    store daemonsets;
    store_init(&daemonsets, kobj_free_any, kobj_uid);
    kobj *ds = kf_decode_text(KOBJ_DAEMONSET,
                              "{\"metadata\":{\"name\":\"agent\",\"namespace\":\"edge\","
                              "\"uid\":\"ds-1\",\"annotations\":{\"" OTA_ANN_PREPULL_TIMEOUT
                              "\":\"10m\"}}}");
    assert_non_null(ds);
    assert_int_equal(store_put(&daemonsets, "ds-1", ds), 0);
    kobj *good = kf_decode_text(KOBJ_DAEMONSET,
                                "{\"metadata\":{\"name\":\"b\",\"namespace\":\"edge\","
                                "\"uid\":\"ds-2\",\"annotations\":{\"" OTA_ANN_PREPULL_TIMEOUT
                                "\":\"120\"}}}");
    assert_non_null(good);
    assert_int_equal(store_put(&daemonsets, "ds-2", good), 0);
    static const gc_row rows[] = {
        {"the bad value is still there", RECONCILE_TIMEOUT_EVENT_KEY "ds-1|10m", 1},
        {"another bad value now", RECONCILE_TIMEOUT_EVENT_KEY "ds-1|5", 0},
        {"the annotation was fixed", RECONCILE_TIMEOUT_EVENT_KEY "ds-2|10m", 0},
        {"a DaemonSet that is gone", RECONCILE_TIMEOUT_EVENT_KEY "ds-gone|10m", 0},
        {"no bar (kept)", RECONCILE_TIMEOUT_EVENT_KEY "ds-1", 1},
        {"a revision's Event key (not this rule's)", RECONCILE_REVISION_EVENT_KEY "ds-9|h", 1},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        int got = controller_timeout_event_key_live(rows[i].key, &daemonsets);
        ROW_CHECK(rows[i].name, got == rows[i].live, "live %d, want %d", got, rows[i].live);
    }
    store_free(&daemonsets);
}

/* An ImagePullJob's Event keys are forgotten once it is gone (a CR made
 * again under the same name has another uid, and its Events are new). */
static void test_ipj_event_key_gc(void **state)
{
    (void)state;
    store ipjs;
    store_init(&ipjs, kobj_free_any, kobj_uid);
    kobj *cr = kf_decode_text(KOBJ_IMAGEPULLJOB,
                              "{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\",\"uid\":\"ipj-1\"}}");
    assert_non_null(cr);
    assert_int_equal(store_put(&ipjs, "ipj-1", cr), 0);
    static const gc_row rows[] = {
        {"its ImagePullJob is there", RECONCILE_IPJ_EVENT_KEY "ipj-1|failed:n1/abc", 1},
        {"its ImagePullJob is gone", RECONCILE_IPJ_EVENT_KEY "ipj-2|failed:n1/abc", 0},
        {"no bar (kept)", RECONCILE_IPJ_EVENT_KEY "ipj-2", 1},
        {"a pod's Event key (not this rule's)", RECONCILE_EVENT_KEY "pod|t|r:x", 1},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        int got = controller_ipj_event_key_live(rows[i].key, &ipjs);
        ROW_CHECK(rows[i].name, got == rows[i].live, "live %d, want %d", got, rows[i].live);
    }
    store_free(&ipjs);
}

/* An ImageCache's likewise: its outcome Events are sent once per action,
 * and forgotten with the cache. */
static void test_ic_event_key_gc(void **state)
{
    (void)state;
    store ics;
    store_init(&ics, kobj_free_any, kobj_uid);
    kobj *cr = kf_decode_text(KOBJ_IMAGECACHE,
                              "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"uid\":\"ic-1\"}}");
    assert_non_null(cr);
    assert_int_equal(store_put(&ics, "ic-1", cr), 0);
    static const gc_row rows[] = {
        {"its ImageCache is there", RECONCILE_IC_EVENT_KEY "ic-1|done|t|ImageCacheCreate|Failed", 1},
        {"its ImageCache is gone", RECONCILE_IC_EVENT_KEY "ic-2|done|t|ImageCacheCreate|Failed", 0},
        {"an ImagePullJob's key (not this rule's)", RECONCILE_IPJ_EVENT_KEY "ic-2|x", 1},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        int got = controller_ic_event_key_live(rows[i].key, &ics);
        ROW_CHECK(rows[i].name, got == rows[i].live, "live %d, want %d", got, rows[i].live);
    }
    store_free(&ics);
}

/* The log names an action's object as the README promises, pod=ns/name
 * (issue 19: "API call failed" wrote name=x without the namespace). */
static void test_object_ref(void **state)
{
    (void)state;
    char buf[64];
    static const struct {
        action_kind kind;
        const char *ns, *name, *key, *ref;
    } rows[] = {
        {ACTION_PATCH_POD_STATUS, "edge", "agent-x7k2p", "pod", "edge/agent-x7k2p"},
        {ACTION_CREATE_JOB, "edge", "ota-prepull-a", "job", "edge/ota-prepull-a"},
        {ACTION_DELETE_JOB, "edge", "ota-prepull-b", "job", "edge/ota-prepull-b"},
        {ACTION_CREATE_EVENT, "edge", NULL, "event_namespace", "edge"},
        {ACTION_GET_NODE, NULL, "node-1", "node", "node-1"},
    };
    for (size_t i = 0; i < N_ROWS(rows); i++) {
        assert_string_equal(controller_object_key(rows[i].kind), rows[i].key);
        assert_string_equal(
            controller_object_ref(rows[i].kind, rows[i].ns, rows[i].name, buf, sizeof(buf)),
            rows[i].ref);
    }
    /* bounded */
    char small[6];
    assert_string_equal(controller_object_ref(ACTION_PATCH_POD_STATUS, "edge", "agent", small,
                                              sizeof(small)),
                        "edge/");
}

/* ---- the bound on queued writes (docs/DECISIONS.md "Bounded work queue") ---- */

typedef struct cap_row {
    const char *name;
    double qps;
    int burst;
    size_t want;
} cap_row;

static const cap_row cap_rows[] = {
    {"two seconds of the budget", 200, 300, 400},
    {"the default flags: 2 x 20 beats the burst of 30", 20, 30, 40},
    {"a burst larger than two seconds", 10, 50, 50},
    {"a low rate: at least the floor", 0.1, 1, CONTROLLER_MIN_WRITE_CAP},
    {"a fraction of a write rounds down", 5.7, 1, 11},
};

static void test_write_cap_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(cap_rows); i++) {
        const cap_row *r = &cap_rows[i];
        size_t got = controller_write_cap(r->qps, r->burst);
        ROW_CHECK(r->name, got == r->want, "cap %zu, want %zu", got, r->want);
    }
}

typedef struct queue_row {
    const char *name;
    size_t cap, queued;
    int held_back;
    int may_run;  /* controller_pass_may_run */
    size_t room;  /* controller_write_room, when it may run */
} queue_row;

static const queue_row queue_rows[] = {
    {"no bound: always, unbounded", 0, 5000, 1, 1, 0},
    {"empty queue", 400, 0, 0, 1, 400},
    {"room left", 400, 150, 0, 1, 250},
    {"one place left", 400, 399, 0, 1, 1},
    {"full: wait", 400, 400, 0, 0, 0},
    {"over full (calls begun before a cap): wait", 400, 900, 0, 0, 0},
    /* after a pass that held writes back, a batch: half the cap */
    {"held back, more than half queued: wait", 400, 201, 1, 0, 0},
    {"held back, half drained", 400, 200, 1, 1, 200},
    {"held back, drained", 400, 0, 1, 1, 400},
    {"held back, the floor's cap of 8", 8, 4, 1, 1, 4},
};

static void test_queue_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(queue_rows); i++) {
        const queue_row *r = &queue_rows[i];
        int may = controller_pass_may_run(r->cap, r->queued, r->held_back);
        ROW_CHECK(r->name, may == r->may_run, "may run %d, want %d", may, r->may_run);
        if (!may)
            continue;
        size_t room = controller_write_room(r->cap, r->queued);
        ROW_CHECK(r->name, room == r->room, "room %zu, want %zu", room, r->room);
        /* a bounded pass is never handed 0, which would mean no bound */
        ROW_CHECK(r->name, r->cap == 0 || room > 0, "room 0 under cap %zu", r->cap);
    }
}

typedef struct wake_row {
    const char *name;
    uint64_t now;
    long long after_s;
    uint64_t want; /* controller_wake_at */
} wake_row;

static const wake_row wake_rows[] = {
    {"no requeue: no wake", 5000000000ull, 0, 0},
    {"a negative requeue: no wake", 5000000000ull, -3, 0},
    {"a refresh due in 3 s", 5000000000ull, 3, 8000000000ull},
    {"a cache deadline in an hour", 1, 3600, 3600000000001ull},
    {"beyond a year: a year", 0, 10LL * 366 * 24 * 3600, 366ull * 24 * 3600 * 1000000000ull},
};

static void test_wake_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(wake_rows); i++) {
        const wake_row *r = &wake_rows[i];
        uint64_t got = controller_wake_at(r->now, r->after_s);
        ROW_CHECK(r->name, got == r->want, "wake %llu, want %llu", (unsigned long long)got,
                  (unsigned long long)r->want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wake_table),
        cmocka_unit_test(test_exec_outcome_table),
        cmocka_unit_test(test_may_send_table),
        cmocka_unit_test(test_pull_outcome_table),
        cmocka_unit_test(test_event_key_gc_table),
        cmocka_unit_test(test_revision_event_key_gc),
        cmocka_unit_test(test_timeout_event_key_gc),
        cmocka_unit_test(test_ipj_event_key_gc),
        cmocka_unit_test(test_ic_event_key_gc),
        cmocka_unit_test(test_object_ref),
        cmocka_unit_test(test_write_cap_table),
        cmocka_unit_test(test_queue_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * reconcile_fixture.h - what the tests of the controller's decisions share
 * (tests/unit/test_reconcile_*.c, one file per part of docs/design.md §5):
 * a world of caches built out of apiserver-shaped JSON (DaemonSets,
 * revisions, pods, Jobs, Job pods, nodes), one pass of reconcile() over it,
 * and the actions read back with yajl's tree parser, independent of how
 * reconcile.c writes them.
 *
 * Header-only because the Makefile builds every tests/unit/test_*.c on its
 * own; every helper fails the running test instead of returning an error.
 */
#ifndef OTA_TEST_RECONCILE_FIXTURE_H
#define OTA_TEST_RECONCILE_FIXTURE_H

#include "kobj_fixture.h"

#include "prepull_job.h"
#include "reconcile.h"
#include "store.h"
#include "strset.h"

#define NS "edge"
#define DS_UID "3b1f6c2e-8d4a-4c7b-9e2f-1a5d7c9b0e3f"
#define OTHER_DS_UID "c9f1a3e5-7b2d-4c6e-9f8a-0b1c3d5e7f9a"
#define H "6d5f8b7c9"   /* the newest revision */
#define MID "7a8b9c0d1" /* the one before */
#define OLD "5c4b9a8d7" /* the first */
#define NODE "edge-node-1"
#define NOW "2026-11-21T21:30:00Z"
#define NOW_EPOCH 1795296600LL
#define RT1 "2026-11-21T19:40:05Z"
#define RT2 "2026-11-21T21:20:00Z"
#define HELPER "busybox:1.36-musl"
#define POD_RV "417" /* every cached pod's resourceVersion */

#define REV_MSG(h) OTA_MSG_REVISION_PREFIX h

/* Conditions as the kubelet and YurtHub leave them in status.conditions. */
#define NU(status, h)                                                                              \
    "{\"type\":\"PodNeedUpgrade\",\"status\":\"" status "\",\"lastProbeTime\":null,"               \
    "\"lastTransitionTime\":\"2026-11-21T19:30:03Z\",\"message\":\"" REV_MSG(h) "\"}"
#define IR(status, reason, h, ltt)                                                                 \
    "{\"type\":\"PodImageReady\",\"status\":\"" status "\",\"lastProbeTime\":null,"                \
    "\"lastTransitionTime\":\"" ltt "\",\"reason\":\"" reason "\",\"message\":\"" REV_MSG(h) "\"}"
#define READY "{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"2026-11-20T08:12:58Z\"}"
#define PULLING(ltt) "[" READY "," NU("True", H) "," IR("False", OTA_REASON_WAIT_PULL, H, ltt) "]"

/* ---- the world -------------------------------------------------------------- */

typedef struct world {
    store ds, revs, pods, jobs, job_pods, nodes, job_waiting, node_states;
    strset events_sent;
    reconcile_config cfg;
    reconcile_input in;
    action_list out;
} world;

KF_UNUSED static void world_init(world *w)
{
    memset(w, 0, sizeof(*w));
    store *all[] = {&w->ds,       &w->revs,  &w->pods,
                    &w->jobs,     &w->job_pods, &w->nodes, &w->job_waiting, &w->node_states};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        store_init(all[i], kobj_free_any, kobj_uid);
    strset_init(&w->events_sent);
    w->cfg = (reconcile_config){
        .max_concurrent_pulls = 10, .max_pulls_per_node = 1, .pull_timeout_s = 600, .helper_image = HELPER, .backoff_limit = 0};
    w->in = (reconcile_input){
        .daemonsets = &w->ds,
        .revisions = &w->revs,
        .pods = &w->pods,
        .jobs = &w->jobs,
        .job_pods = &w->job_pods,
        .nodes = &w->nodes,
        .node_states = &w->node_states,
        .events_sent = &w->events_sent,
        .job_waiting = &w->job_waiting,
        .cfg = &w->cfg,
        .now = NOW,
        .now_epoch = NOW_EPOCH,
    };
}

KF_UNUSED static void world_free(world *w)
{
    store *all[] = {&w->ds,       &w->revs,  &w->pods,
                    &w->jobs,     &w->job_pods, &w->nodes, &w->job_waiting, &w->node_states};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        store_free(all[i]);
    strset_free(&w->events_sent);
    action_list_free(&w->out);
}

KF_UNUSED static void put(store *s, kobj_kind kind, const char *key_or_null, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *json = NULL;
    assert_true(vasprintf(&json, fmt, ap) >= 0);
    va_end(ap);
    kobj *o = kf_decode_text(kind, json);
    if (o == NULL)
        fail_msg("does not decode: %s", json);
    free(json);
    /* the informers key objects by uid; nodes are kept by name */
    assert_int_equal(store_put(s, key_or_null != NULL ? key_or_null : o->meta.uid, o), 0);
}

KF_UNUSED static void add_ds(world *w, const char *name, const char *uid, const char *annotations,
                             int deleting)
{
    put(&w->ds, KOBJ_DAEMONSET, NULL,
        "{\"kind\":\"DaemonSet\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"%s\","
        "\"namespace\":\"" NS "\",\"uid\":\"%s\",\"resourceVersion\":\"1\",\"annotations\":%s%s},"
        "\"spec\":{\"updateStrategy\":{\"type\":\"OnDelete\"}}}",
        name, uid, annotations,
        deleting ? ",\"deletionTimestamp\":\"2026-11-21T21:00:00Z\"" : "");
}

KF_UNUSED static void add_rev(world *w, const char *ds_uid, const char *hash, long long revision,
                              const char *init_containers, const char *containers,
                              const char *secrets)
{
    put(&w->revs, KOBJ_REVISION, NULL,
        "{\"kind\":\"ControllerRevision\",\"apiVersion\":\"apps/v1\",\"metadata\":{"
        "\"name\":\"edge-agent-%s\",\"namespace\":\"" NS "\",\"uid\":\"rev-%s-%s\","
        "\"labels\":{\"" OTA_LABEL_REVISION_HASH "\":\"%s\"},\"ownerReferences\":[{"
        "\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"edge-agent\",\"uid\":\"%s\","
        "\"controller\":true,\"blockOwnerDeletion\":true}]},\"data\":{\"spec\":{\"template\":{"
        "\"$patch\":\"replace\",\"spec\":{\"initContainers\":%s,\"containers\":%s,"
        "\"imagePullSecrets\":%s}}}},\"revision\":%lld}",
        hash, ds_uid, hash, hash, ds_uid, init_containers, containers, secrets, revision);
}

#define AGENT_IMAGE "registry.example.com/edge/agent:v3"
#define INIT_IMAGE "registry.example.com/edge/config-init:v3"

/* The OTA DaemonSet edge-agent (timeout 900 s) with revisions OLD, MID and
 * H; H is the newest by .revision, not by the order of the store. */
KF_UNUSED static void standard(world *w)
{
    add_ds(w, "edge-agent", DS_UID,
           "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT "\":\"900\"}", 0);
    add_rev(w, DS_UID, H, 3, "[{\"name\":\"init\",\"image\":\"" INIT_IMAGE "\"}]",
            "[{\"name\":\"agent\",\"image\":\"" AGENT_IMAGE "\"},{\"name\":\"proxy\",\"image\":"
            "\"nginx:1.25\"}]",
            "[{\"name\":\"regcred\"}]");
    add_rev(w, DS_UID, OLD, 1, "[]", "[{\"name\":\"agent\",\"image\":\"registry.example.com/edge/agent:v1\"}]",
            "[]");
    add_rev(w, DS_UID, MID, 2, "[]", "[{\"name\":\"agent\",\"image\":\"registry.example.com/edge/agent:v2\"}]",
            "[]");
    /* a newer revision of another DaemonSet is not ours */
    add_rev(w, OTHER_DS_UID, "ffffffff", 9, "[]", "[{\"name\":\"x\",\"image\":\"x:1\"}]", "[]");
}

KF_UNUSED static void add_pod_full(world *w, const char *name, const char *uid,
                                   const char *owner_uid, const char *node, const char *hash,
                                   const char *conditions, int deleting)
{
    char owner[256] = "";
    if (owner_uid != NULL)
        snprintf(owner, sizeof(owner),
                 ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\","
                 "\"name\":\"edge-agent\",\"uid\":\"%s\",\"controller\":true,"
                 "\"blockOwnerDeletion\":true}]",
                 owner_uid);
    char nodename[128] = "";
    if (node != NULL)
        snprintf(nodename, sizeof(nodename), "\"nodeName\":\"%s\",", node);
    put(&w->pods, KOBJ_POD, NULL,
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"" NS
        "\",\"uid\":\"%s\",\"resourceVersion\":\"" POD_RV "\",\"labels\":{\"app\":\"edge-agent\",\"" OTA_LABEL_REVISION_HASH
        "\":\"%s\",\"pod-template-generation\":\"1\"}%s%s},\"spec\":{%s\"containers\":[]},"
        "\"status\":{\"phase\":\"Running\",\"conditions\":%s}}",
        name, uid, hash, owner,
        deleting ? ",\"deletionTimestamp\":\"2026-11-21T21:29:00Z\"" : "", nodename, conditions);
}

KF_UNUSED static void add_pod(world *w, const char *name, const char *uid, const char *hash,
                              const char *conditions)
{
    add_pod_full(w, name, uid, DS_UID, NODE, hash, conditions, 0);
}

/* A node that has none of the target images. */
KF_UNUSED static void add_node(world *w, const char *name, const char *image_names)
{
    put(&w->nodes, KOBJ_NODE, name,
        "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"uid\":\"node-%s\"},"
        "\"status\":{\"images\":[{\"names\":%s,\"sizeBytes\":1000},{\"names\":"
        "[\"registry.k8s.io/pause:3.9\"],\"sizeBytes\":321520}]}}",
        name, name, image_names);
}

/* The name the controller gives the Job of a request. */
KF_UNUSED static const char *job_name_of(char *buf, const char *pod, const char *uid,
                                         const char *hash, const char *rt)
{
    prepull_job_name(buf, pod, uid, hash, rt);
    return buf;
}

/* status: the Job's status JSON. */
KF_UNUSED static void add_job(world *w, const char *name, const char *pod_uid, const char *hash,
                              const char *rt, const char *status, int deleting)
{
    put(&w->jobs, KOBJ_JOB, NULL,
        "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"name\":\"%s\","
        "\"namespace\":\"" NS "\",\"uid\":\"job-uid-%s\",\"labels\":{\"" OTA_LABEL_MANAGED_BY
        "\":\"" OTA_MANAGED_BY_VALUE "\",\"" OTA_LABEL_POD_UID "\":\"%s\"},\"annotations\":{\""
        OTA_ANN_JOB_REVISION "\":\"%s\",\"" OTA_ANN_JOB_REQUEST_TIME "\":\"%s\"}%s},"
        "\"spec\":{\"backoffLimit\":0},\"status\":%s}",
        name, name, pod_uid, hash, rt,
        deleting ? ",\"deletionTimestamp\":\"2026-11-21T21:29:00Z\"" : "", status);
}

#define JOB_RUNNING "{\"active\":1,\"startTime\":\"2026-11-21T21:25:00Z\"}"
#define JOB_COMPLETE                                                                               \
    "{\"succeeded\":1,\"startTime\":\"2026-11-21T21:20:01Z\",\"conditions\":[{\"type\":"            \
    "\"SuccessCriteriaMet\",\"status\":\"True\"},{\"type\":\"Complete\",\"status\":\"True\"}]}"
#define JOB_DEADLINE                                                                               \
    "{\"failed\":1,\"startTime\":\"2026-11-21T21:00:00Z\",\"conditions\":[{\"type\":"              \
    "\"FailureTarget\",\"status\":\"True\",\"reason\":\"DeadlineExceeded\"},{\"type\":\"Failed\","  \
    "\"status\":\"True\",\"reason\":\"DeadlineExceeded\",\"message\":\"Job was active longer "      \
    "than specified deadline\"}]}"

KF_UNUSED static void add_job_pod(world *w, const char *job, const char *reason,
                                  const char *message)
{
    put(&w->job_pods, KOBJ_JOB_POD, NULL,
        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s-k8d2q\",\"namespace\":"
        "\"" NS "\",\"uid\":\"jp-%s\",\"labels\":{\"batch.kubernetes.io/job-name\":\"%s\","
        "\"job-name\":\"%s\"}},\"status\":{\"phase\":\"Pending\",\"initContainerStatuses\":["
        "{\"name\":\"ota-helper\",\"image\":\"" HELPER "\",\"state\":{\"terminated\":"
        "{\"exitCode\":0,\"reason\":\"Completed\"}}},{\"name\":\"pull-0\",\"image\":\"" AGENT_IMAGE
        "\",\"state\":{\"waiting\":{\"reason\":\"%s\",\"message\":\"%s\"}}},{\"name\":\"pull-1\","
        "\"state\":{\"waiting\":{\"reason\":\"PodInitializing\"}}}]}}",
        job, job, job, job, reason, message);
}

KF_UNUSED static void run(world *w)
{
    action_list_free(&w->out);
    assert_int_equal(reconcile(&w->in, &w->out), 0);
}

/* ---- reading the actions ---------------------------------------------------- */

KF_UNUSED static void dump(const action_list *l)
{
    print_error("%zu actions (waiting %zu):\n", l->n, l->waiting);
    for (size_t i = 0; i < l->n; i++)
        print_error("  %s %s/%s key=%s\n     %s\n", action_kind_name(l->v[i].kind),
                    l->v[i].namespace != NULL ? l->v[i].namespace : "-",
                    l->v[i].name != NULL ? l->v[i].name : "-", l->v[i].key,
                    l->v[i].body != NULL ? l->v[i].body : "");
}

KF_UNUSED static size_t count(const world *w, action_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < w->out.n; i++)
        n += w->out.v[i].kind == kind;
    return n;
}

#define expect_count(w, kind, want)                                                                \
    do {                                                                                           \
        if (count((w), (kind)) != (size_t)(want)) {                                                \
            dump(&(w)->out);                                                                       \
            fail_msg("%zu %s actions, want %zu", count((w), (kind)), action_kind_name(kind),       \
                     (size_t)(want));                                                              \
        }                                                                                          \
    } while (0)

#define expect_total(w, want)                                                                      \
    do {                                                                                           \
        if ((w)->out.n != (size_t)(want)) {                                                        \
            dump(&(w)->out);                                                                       \
            fail_msg("%zu actions, want %zu", (w)->out.n, (size_t)(want));                         \
        }                                                                                          \
    } while (0)

/* The action of that kind about that object (name, or for events the
 * involved pod's name); fails when there is none. */
KF_UNUSED static const action *the(const world *w, action_kind kind, const char *name);

KF_UNUSED static yajl_val tree(const action *a)
{
    assert_non_null(a->body);
    char err[256];
    yajl_val v = yajl_tree_parse(a->body, err, sizeof(err));
    if (v == NULL)
        fail_msg("body does not parse (%s): %s", err, a->body);
    return v;
}

KF_UNUSED static const char *str_at(yajl_val v, const char **path)
{
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    return s != NULL ? YAJL_GET_STRING(s) : NULL;
}

KF_UNUSED static const char *event_pod(const action *a)
{
    static char name[256];
    yajl_val v = tree(a);
    const char *n = str_at(v, (const char *[]){"involvedObject", "name", NULL});
    snprintf(name, sizeof(name), "%s", n != NULL ? n : "");
    yajl_tree_free(v);
    return name;
}

KF_UNUSED static const action *find(const world *w, action_kind kind, const char *name)
{
    for (size_t i = 0; i < w->out.n; i++) {
        const action *a = &w->out.v[i];
        if (a->kind != kind)
            continue;
        const char *n = kind == ACTION_CREATE_EVENT ? event_pod(a) : a->name;
        if (name == NULL || (n != NULL && strcmp(n, name) == 0))
            return a;
    }
    return NULL;
}

KF_UNUSED static const action *the(const world *w, action_kind kind, const char *name)
{
    const action *a = find(w, kind, name);
    if (a == NULL) {
        dump(&w->out);
        fail_msg("no %s action for %s", action_kind_name(kind), name != NULL ? name : "anything");
    }
    return a;
}

/* The event with that reason about that pod, or NULL. */
KF_UNUSED static const action *find_event(const world *w, const char *reason, const char *pod)
{
    for (size_t i = 0; i < w->out.n; i++) {
        const action *a = &w->out.v[i];
        if (a->kind != ACTION_CREATE_EVENT)
            continue;
        yajl_val v = tree(a);
        const char *r = str_at(v, (const char *[]){"reason", NULL});
        const char *n = str_at(v, (const char *[]){"involvedObject", "name", NULL});
        int match = r != NULL && n != NULL && strcmp(r, reason) == 0 && strcmp(n, pod) == 0;
        yajl_tree_free(v);
        if (match)
            return a;
    }
    return NULL;
}

KF_UNUSED static size_t count_events(const world *w, const char *reason)
{
    size_t n = 0;
    for (size_t i = 0; i < w->out.n; i++) {
        const action *a = &w->out.v[i];
        if (a->kind != ACTION_CREATE_EVENT)
            continue;
        yajl_val v = tree(a);
        const char *r = str_at(v, (const char *[]){"reason", NULL});
        n += r != NULL && strcmp(r, reason) == 0;
        yajl_tree_free(v);
    }
    return n;
}

/* A condition of a status patch, as read back. */
typedef struct patched {
    size_t n;      /* conditions in the patch */
    int found;     /* the type was there */
    int deleted;   /* "$patch": "delete" */
    int has_reason;
    char status[32], reason[64], message[512], ltt[64];
} patched;

KF_UNUSED static patched patch_cond(const action *a, const char *type)
{
    assert_int_equal(a->kind, ACTION_PATCH_POD_STATUS);
    patched p = {0};
    yajl_val v = tree(a);
    /* {"metadata":{"resourceVersion":RV},"status":{"conditions":[...]}} and
     * nothing else: every status write carries its precondition */
    assert_true(YAJL_IS_OBJECT(v) && v->u.object.len == 2);
    yajl_val meta = yajl_tree_get(v, (const char *[]){"metadata", NULL}, yajl_t_object);
    assert_non_null(meta);
    assert_int_equal(meta->u.object.len, 1);
    assert_string_equal(str_at(v, (const char *[]){"metadata", "resourceVersion", NULL}), POD_RV);
    yajl_val status = yajl_tree_get(v, (const char *[]){"status", NULL}, yajl_t_object);
    assert_non_null(status);
    assert_int_equal(status->u.object.len, 1);
    yajl_val conds = yajl_tree_get(v, (const char *[]){"status", "conditions", NULL}, yajl_t_array);
    assert_non_null(conds);
    p.n = conds->u.array.len;
    for (size_t i = 0; i < conds->u.array.len; i++) {
        yajl_val c = conds->u.array.values[i];
        const char *t = str_at(c, (const char *[]){"type", NULL});
        assert_non_null(t);
        if (strcmp(t, type) != 0)
            continue;
        p.found = 1;
        const char *patch = str_at(c, (const char *[]){"$patch", NULL});
        p.deleted = patch != NULL && strcmp(patch, "delete") == 0;
        const char *s = str_at(c, (const char *[]){"status", NULL});
        const char *r = str_at(c, (const char *[]){"reason", NULL});
        const char *m = str_at(c, (const char *[]){"message", NULL});
        const char *l = str_at(c, (const char *[]){"lastTransitionTime", NULL});
        p.has_reason = r != NULL;
        snprintf(p.status, sizeof(p.status), "%s", s != NULL ? s : "");
        snprintf(p.reason, sizeof(p.reason), "%s", r != NULL ? r : "");
        snprintf(p.message, sizeof(p.message), "%s", m != NULL ? m : "");
        snprintf(p.ltt, sizeof(p.ltt), "%s", l != NULL ? l : "");
    }
    yajl_tree_free(v);
    return p;
}

/* ---- five requests waiting, in the store's order, not the requests' ---------- */

KF_UNUSED static const struct {
    const char *pod, *uid, *rt;
} queued[] = {
    {"pod-c", "u-c", "2026-11-21T21:10:00Z"},
    {"pod-e", "u-e", "2026-11-21T21:12:00Z"},
    {"pod-a", "u-a", "2026-11-21T21:01:00Z"},
    {"pod-d", "u-d", "2026-11-21T21:11:00Z"},
    {"pod-b", "u-b", "2026-11-21T21:05:00Z"},
};

KF_UNUSED static void add_queue(world *w)
{
    for (size_t i = 0; i < 5; i++) {
        char conds[1024];
        snprintf(conds, sizeof(conds),
                 "[" NU("True", H) ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":"
                 "\"" OTA_REASON_WAIT_PULL "\",\"message\":\"" REV_MSG(H) "\","
                 "\"lastTransitionTime\":\"%s\"}]",
                 queued[i].rt);
        add_pod(w, queued[i].pod, queued[i].uid, OLD, conds);
    }
}

/* ---- a request's failure, as the status patch and the Event say it ---------- */

#define PULL_MSG                                                                                   \
    "failed to pull and unpack image \\\"" AGENT_IMAGE "\\\": " AGENT_IMAGE ": not found"
#define PULL_MSG_PLAIN "failed to pull and unpack image \"" AGENT_IMAGE "\": " AGENT_IMAGE ": not found"

#define DEADLINE_HINT(secs)                                                                        \
    " (not done within the deadline of " secs " s; a larger image or a slower link needs more: "   \
    "set the DaemonSet annotation " OTA_ANN_PREPULL_TIMEOUT ")"
#define FAST_HINT " (not waiting for the deadline: the kubelet's answer will not change)"

KF_UNUSED static void expect_failed(const world *w, const char *job, const char *why)
{
    const action *a = the(w, ACTION_PATCH_POD_STATUS, "edge-agent-x7k2p");
    char key[128];
    snprintf(key, sizeof(key), "status:u-x7k2p@" POD_RV ":failed:%s", job);
    assert_string_equal(a->key, key);
    patched ir = patch_cond(a, OTA_COND_IMAGE_READY);
    assert_int_equal(ir.n, 1);
    assert_string_equal(ir.status, "False");
    assert_string_equal(ir.reason, OTA_REASON_PULL_FAIL);
    char want[2048]; /* "pull image job <name> failed: " and a why of up to 1 KiB */
    snprintf(want, sizeof(want), "pull image job %s failed: %s", job, why);
    assert_string_equal(ir.message, want);
    const action *e = find_event(w, OTA_EVENT_FAILED, "edge-agent-x7k2p");
    assert_non_null(e);
    yajl_val ev = tree(e);
    assert_string_equal(str_at(ev, (const char *[]){"type", NULL}), "Warning");
    assert_string_equal(str_at(ev, (const char *[]){"message", NULL}), want);
    yajl_tree_free(ev);
}

#endif

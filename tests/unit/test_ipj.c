/*
 * test_ipj.c - an ImagePullJob's decisions (controller/ipj.h, the lead's
 * design D1-D11): one table per helper (selection, Kruise's defaults, the
 * spec hash, a node's state, giving up, messages, completion, TTL,
 * re-runs), one table of whole passes (ipj_decide), the bodies of its
 * writes; then reconcile-level tests of the shared pull queue (OTA first,
 * an ImagePullJob Job holding its node's slot, no CRD no change).
 *
 * Objects are drafts packed with kobj_pack (lib/kobj.h), as the informers'
 * decoder would leave them.
 */
#include "reconcile_fixture.h"
#include "row_check.h"

#include "arena.h"
#include "ipj.h"
#include "ipj_spec.h"

#define C(s) ((char *)(uintptr_t)(s))

#define IPJ_NS "default"
#define IPJ_UID "9d0e1f2a-ipj"
#define IPJ_NOW "2026-11-27T08:30:00Z"
#define IPJ_CREATED "2026-11-27T08:00:00Z"
#define IMAGE "nginx:1.25"

static long long now_epoch(void)
{
    return kobj_parse_time(IPJ_NOW);
}

static void decode_spec(ipj_spec *s, const char *json, arena *a)
{
    char err[256] = "";
    if (ipj_decode(s, json, strlen(json), a, err, sizeof(err)) != 0)
        fail_msg("spec does not decode: %s: %s", err, json);
}

/* ---- nodes: five, one NotReady ---------------------------------------------- */

typedef struct node_def {
    const char *name;
    int not_ready;
    const char *zone, *gpu; /* labels, or NULL */
} node_def;

static const node_def the_nodes[] = {
    {"n-a", 0, "north", "yes"}, {"n-b", 0, "south", NULL}, {"n-c", 0, NULL, NULL},
    {"n-d", 0, "north", NULL},  {"n-x", 1, "north", NULL},
};
#define N_NODES (sizeof(the_nodes) / sizeof(the_nodes[0]))

static kobj *node_state(const node_def *d)
{
    char *keys[2], *values[2];
    size_t n = 0;
    if (d->gpu != NULL) {
        keys[n] = C("gpu");
        values[n++] = C(d->gpu);
    }
    if (d->zone != NULL) {
        keys[n] = C("zone");
        values[n++] = C(d->zone);
    }
    kobj draft;
    memset(&draft, 0, sizeof(draft));
    draft.kind = KOBJ_NODE_STATE;
    draft.meta.name = C(d->name);
    draft.meta.uid = C(d->name);
    draft.u.node.not_ready = d->not_ready;
    draft.u.node.label_keys = keys;
    draft.u.node.label_values = values;
    draft.u.node.n_labels = n;
    kobj *o = kobj_pack(&draft);
    assert_non_null(o);
    return o;
}

typedef struct nodes {
    kobj *v[N_NODES];
} nodes;

static void nodes_make(nodes *ns)
{
    for (size_t i = 0; i < N_NODES; i++)
        ns->v[i] = node_state(&the_nodes[i]);
}

static void nodes_free(nodes *ns)
{
    for (size_t i = 0; i < N_NODES; i++)
        kobj_free(ns->v[i]);
}

/* Comma-joined names. */
static void join(char *buf, size_t size, const char *const *v, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", i > 0 ? "," : "", v[i]);
}

/* ---- selection ---------------------------------------------------------------- */

/* A pod list's answer, as the controller keeps it for IPJ_UID. */
static kobj *pod_nodes_answer(const char *query, const char *const *names, size_t n)
{
    kobj draft;
    memset(&draft, 0, sizeof(draft));
    draft.kind = KOBJ_POD_NODES;
    draft.meta.name = C(IPJ_UID);
    draft.meta.uid = C(IPJ_UID);
    draft.u.pod_nodes.query = C(query);
    draft.u.pod_nodes.nodes = (char **)(uintptr_t)names;
    draft.u.pod_nodes.n_nodes = n;
    kobj *o = kobj_pack(&draft);
    assert_non_null(o);
    return o;
}

static void test_select(void **state)
{
    (void)state;
    static const struct {
        const char *name, *spec, *want;
    } rows[] = {
        {"no selector: every node", "{\"image\":\"x\"}", "n-a,n-b,n-c,n-d,n-x"},
        {"empty selector: every node", "{\"image\":\"x\",\"selector\":{}}", "n-a,n-b,n-c,n-d,n-x"},
        {"names: unknown skipped, duplicates once, name order",
         "{\"image\":\"x\",\"selector\":{\"names\":[\"n-c\",\"ghost\",\"n-a\",\"n-c\"]}}", "n-a,n-c"},
        {"names: a name many times",
         "{\"image\":\"x\",\"selector\":{\"names\":[\"n-c\",\"n-c\",\"n-c\",\"n-c\",\"n-c\","
         "\"n-c\",\"n-b\"]}}", "n-b,n-c"},
        {"names: a prefix of a name is not the name",
         "{\"image\":\"x\",\"selector\":{\"names\":[\"n-\",\"n-a-1\"]}}", ""},
        {"names: [] selects none", "{\"image\":\"x\",\"selector\":{\"names\":[]}}", ""},
        {"matchLabels", "{\"image\":\"x\",\"selector\":{\"matchLabels\":{\"zone\":\"north\"}}}",
         "n-a,n-d,n-x"},
        {"matchLabels: two", "{\"image\":\"x\",\"selector\":{\"matchLabels\":{\"zone\":\"north\","
                             "\"gpu\":\"yes\"}}}",
         "n-a"},
        {"In", "{\"image\":\"x\",\"selector\":{\"matchExpressions\":[{\"key\":\"zone\","
               "\"operator\":\"In\",\"values\":[\"south\",\"west\"]}]}}",
         "n-b"},
        {"NotIn: a missing key holds", "{\"image\":\"x\",\"selector\":{\"matchExpressions\":[{"
                                       "\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"north\"]}]}}",
         "n-b,n-c"},
        {"Exists", "{\"image\":\"x\",\"selector\":{\"matchExpressions\":[{\"key\":\"gpu\","
                   "\"operator\":\"Exists\"}]}}",
         "n-a"},
        {"DoesNotExist", "{\"image\":\"x\",\"selector\":{\"matchExpressions\":[{\"key\":\"zone\","
                         "\"operator\":\"DoesNotExist\"}]}}",
         "n-c"},
        {"labels and expressions together", "{\"image\":\"x\",\"selector\":{\"matchLabels\":{"
                                            "\"zone\":\"north\"},\"matchExpressions\":[{\"key\":\"gpu\","
                                            "\"operator\":\"DoesNotExist\"}]}}",
         "n-d,n-x"},
        {"podSelector: the nodes of its pods that are nodes (D10)",
         "{\"image\":\"x\",\"podSelector\":{\"matchLabels\":{\"app\":\"a\"}}}", "n-a,n-c"},
        {"podSelector, no answer: none",
         "{\"image\":\"x\",\"podSelector\":{\"matchLabels\":{\"app\":\"b\"}}}", ""},
    };
    nodes ns;
    nodes_make(&ns);
    /* the pods of app=a run on n-c, n-a (twice) and a node that is gone */
    kobj *pods = pod_nodes_answer("labelSelector=app%3Da",
                                  (const char *[]){"n-c", "n-a", "ghost", "n-a"}, 4);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ipj_spec s;
        decode_spec(&s, rows[i].spec, &a);
        const char **out = NULL;
        const kobj *answer = strstr(rows[i].spec, "\"a\"") != NULL ? pods : NULL;
        size_t n = ipj_select_nodes(&s, (const kobj *const *)ns.v, N_NODES, answer, &a, &out);
        char got[200];
        join(got, sizeof(got), out, n);
        ROW_CHECK(rows[i].name, strcmp(got, rows[i].want) == 0, "got \"%s\", want \"%s\"", got,
                  rows[i].want);
        arena_free(&a);
    }
    kobj_free(pods);
    nodes_free(&ns);
}

/* ---- Kruise's defaults -------------------------------------------------------- */

static void test_effective(void **state)
{
    (void)state;
    static const struct {
        const char *name, *spec;
        long long parallelism, timeout, backoff;
        int never;
        const char *policy;
    } rows[] = {
        {"all defaults", "{\"image\":\"x\"}", 1, 600, 3, 0, "IfNotPresent"},
        {"parallelism int", "{\"image\":\"x\",\"parallelism\":3}", 3, 600, 3, 0, "IfNotPresent"},
        {"parallelism string", "{\"image\":\"x\",\"parallelism\":\"3\"}", 3, 600, 3, 0, "IfNotPresent"},
        {"parallelism 0: paused", "{\"image\":\"x\",\"parallelism\":0}", 0, 600, 3, 0, "IfNotPresent"},
        {"parallelism \"0\": paused", "{\"image\":\"x\",\"parallelism\":\"0\"}", 0, 600, 3, 0,
         "IfNotPresent"},
        {"parallelism percent: 0 (Kruise <= 1.8)", "{\"image\":\"x\",\"parallelism\":\"50%\"}", 0,
         600, 3, 0, "IfNotPresent"},
        {"timeout and backoff", "{\"image\":\"x\",\"pullPolicy\":{\"timeoutSeconds\":30,"
                                "\"backoffLimit\":0}}",
         1, 30, 0, 0, "IfNotPresent"},
        {"backoff < 0 reads 3", "{\"image\":\"x\",\"pullPolicy\":{\"backoffLimit\":-1}}", 1, 600, 3,
         0, "IfNotPresent"},
        {"completion type empty: Always", "{\"image\":\"x\",\"completionPolicy\":{\"type\":\"\"}}",
         1, 600, 3, 0, "IfNotPresent"},
        {"Never", "{\"image\":\"x\",\"completionPolicy\":{\"type\":\"Never\"}}", 1, 600, 3, 1,
         "IfNotPresent"},
        {"imagePullPolicy Always", "{\"image\":\"x\",\"imagePullPolicy\":\"Always\"}", 1, 600, 3, 0,
         "Always"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ipj_spec s;
        decode_spec(&s, rows[i].spec, &a);
        ipj_values v;
        ipj_effective(&s, &v);
        ROW_CHECK(rows[i].name, v.parallelism == rows[i].parallelism, "parallelism %lld",
                  v.parallelism);
        ROW_CHECK(rows[i].name, ipj_parallelism(&s) == rows[i].parallelism, "ipj_parallelism");
        ROW_CHECK(rows[i].name, v.timeout_s == rows[i].timeout, "timeout %lld", v.timeout_s);
        ROW_CHECK(rows[i].name, v.backoff_limit == rows[i].backoff, "backoff %lld", v.backoff_limit);
        ROW_CHECK(rows[i].name, v.never == rows[i].never, "never %d", v.never);
        ROW_CHECK(rows[i].name, strcmp(v.pull_policy, rows[i].policy) == 0, "policy %s",
                  v.pull_policy);
        arena_free(&a);
    }
}

/* ---- the spec hash (D2) ------------------------------------------------------- */

static void hash_of(const char *spec, char out[9])
{
    arena a;
    arena_init(&a);
    ipj_spec s;
    decode_spec(&s, spec, &a);
    ipj_values v;
    ipj_effective(&s, &v);
    assert_int_equal(ipj_spec_hash(&s, &v, &a, out), 0);
    arena_free(&a);
}

static void test_spec_hash(void **state)
{
    (void)state;
    static const char base[] = "{\"image\":\"nginx\",\"pullSecrets\":[\"a\",\"b\"]}";
    static const struct {
        const char *name, *spec;
        int same;
    } rows[] = {
        {"the same image normalised",
         "{\"image\":\"docker.io/library/nginx:latest\",\"pullSecrets\":[\"a\",\"b\"]}", 1},
        {"defaults written out", "{\"image\":\"nginx\",\"pullSecrets\":[\"a\",\"b\"],\"pullPolicy\":"
                                 "{\"timeoutSeconds\":600,\"backoffLimit\":3},\"imagePullPolicy\":"
                                 "\"IfNotPresent\"}",
         1},
        {"selector, parallelism, completion: no re-run",
         "{\"image\":\"nginx\",\"pullSecrets\":[\"a\",\"b\"],\"parallelism\":5,\"selector\":{"
         "\"names\":[\"n\"]},\"completionPolicy\":{\"type\":\"Never\"}}",
         1},
        {"another image", "{\"image\":\"nginx:1.25\",\"pullSecrets\":[\"a\",\"b\"]}", 0},
        {"another secret", "{\"image\":\"nginx\",\"pullSecrets\":[\"a\"]}", 0},
        {"secrets moved across the comma", "{\"image\":\"nginx\",\"pullSecrets\":[\"a,b\"]}", 1},
        {"timeout", "{\"image\":\"nginx\",\"pullSecrets\":[\"a\",\"b\"],\"pullPolicy\":{"
                    "\"timeoutSeconds\":60}}",
         0},
        {"backoffLimit", "{\"image\":\"nginx\",\"pullSecrets\":[\"a\",\"b\"],\"pullPolicy\":{"
                         "\"backoffLimit\":1}}",
         0},
        {"imagePullPolicy", "{\"image\":\"nginx\",\"pullSecrets\":[\"a\",\"b\"],\"imagePullPolicy\":"
                            "\"Always\"}",
         0},
    };
    char want[9], got[9];
    hash_of(base, want);
    assert_int_equal(strlen(want), 8);
    assert_int_equal(strspn(want, "0123456789abcdef"), 8);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        hash_of(rows[i].spec, got);
        ROW_CHECK(rows[i].name, (strcmp(got, want) == 0) == rows[i].same, "%s vs %s", got, want);
    }
}

/* ---- a node's Job ------------------------------------------------------------- */

typedef enum job_st { J_RUN, J_OK, J_FAIL, J_GAVE_UP } job_st;

typedef struct job_def {
    const char *node;
    int old_hash;       /* another version of the spec */
    job_st st;
    long long finished_ago; /* seconds before now (finished Jobs) */
    int deleting;
    /* its pod's waiting info, or reason NULL */
    const char *reason, *message;
    int pull_errors, attempts;
} job_def;

static kobj *job_of(const job_def *d, const char *hash)
{
    char name[80], uid[80];
    snprintf(name, sizeof(name), "ota-ipj-pull-%s", d->node);
    snprintf(uid, sizeof(uid), "job-%s", d->node);
    kobj draft;
    memset(&draft, 0, sizeof(draft));
    draft.kind = KOBJ_JOB;
    draft.meta.namespace = C(IPJ_NS);
    draft.meta.name = name;
    draft.meta.uid = uid;
    draft.meta.owner_uid = C(IPJ_UID);
    draft.meta.deleting = d->deleting;
    kobj_job *j = &draft.u.job;
    j->node_name = C(d->node);
    j->spec_hash = C(d->old_hash ? "00000000" : hash);
    j->start_epoch = now_epoch() - 3600;
    j->complete = d->st == J_OK;
    j->failed = d->st == J_FAIL;
    if (d->st == J_FAIL) {
        j->failed_reason = C("DeadlineExceeded");
        j->failed_message = C("Job was active longer than specified deadline");
    }
    if (d->st == J_GAVE_UP) {
        j->given_up_reason = C("ErrImagePull");
        j->given_up_message = C("manifest unknown");
    }
    if (d->st == J_OK || d->st == J_FAIL)
        j->finish_epoch = now_epoch() - d->finished_ago;
    kobj *o = kobj_pack(&draft);
    assert_non_null(o);
    return o;
}

static kobj *waiting_of(const job_def *d)
{
    if (d->reason == NULL)
        return NULL;
    kobj draft;
    memset(&draft, 0, sizeof(draft));
    draft.kind = KOBJ_JOB_POD;
    draft.meta.namespace = C(IPJ_NS);
    draft.meta.name = C("pod");
    draft.meta.uid = C("pod-uid");
    draft.u.job_pod.job_name = C("j");
    draft.u.job_pod.waiting_reason = C(d->reason);
    draft.u.job_pod.waiting_message = C(d->message);
    draft.u.job_pod.pull_errors = d->pull_errors;
    draft.u.job_pod.failed_attempts = d->attempts;
    kobj *o = kobj_pack(&draft);
    assert_non_null(o);
    return o;
}

static void test_node_state(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int has_job;
        job_st st;
        int not_ready;
        ipj_node_state want;
    } rows[] = {
        {"no Job: unsynced", 0, J_RUN, 0, IPJ_NODE_UNSYNCED},
        {"no Job, NotReady: waiting, not failed", 0, J_RUN, 1, IPJ_NODE_WAITING},
        {"running", 1, J_RUN, 0, IPJ_NODE_PULLING},
        {"running on a node gone NotReady: pulling", 1, J_RUN, 1, IPJ_NODE_PULLING},
        {"Complete", 1, J_OK, 0, IPJ_NODE_SUCCEEDED},
        {"Failed", 1, J_FAIL, 0, IPJ_NODE_FAILED},
        {"given up, not yet Failed", 1, J_GAVE_UP, 0, IPJ_NODE_FAILED},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        job_def d = {"n-a", 0, rows[i].st, 60, 0, NULL, NULL, 0, 0};
        kobj *job = rows[i].has_job ? job_of(&d, "12345678") : NULL;
        ipj_node_state got = ipj_node_state_of(job, rows[i].not_ready);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %s", ipj_node_state_name(got));
        kobj_free(job);
    }
}

/* ---- attempts (D4) ------------------------------------------------------------ */

static void test_give_up(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        long long backoff;
        const char *reason, *message;
        int pull_errors, attempts, want;
    } rows[] = {
        {"nothing known", 3, NULL, NULL, 0, 0, 0},
        {"backoffLimit 0: one error is all", 0, "ErrImagePull", "dial tcp: i/o timeout", 1, 0, 1},
        {"backoffLimit 0: no error yet", 0, "ErrImagePull", "dial tcp: i/o timeout", 0, 0, 0},
        {"backoffLimit 3: three errors retry", 3, "ImagePullBackOff", "Back-off pulling image", 3, 0,
         0},
        {"backoffLimit 3: four give up", 3, "ImagePullBackOff", "Back-off pulling image", 4, 0, 1},
        {"permanent once: retried", 3, "ErrImagePull", "rpc error: nginx:9: not found", 1, 1, 0},
        {"permanent twice: at once (fail fast)", 3, "ErrImagePull", "rpc error: nginx:9: not found",
         2, 2, 1},
        {"InvalidImageName: at once", 3, "InvalidImageName", "invalid reference format", 0, 0, 1},
        {"ErrImageNeverPull: at once", 3, "ErrImageNeverPull", "never pull", 0, 0, 1},
        {"not a pull error", 3, "PodInitializing", "", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        job_def d = {"n-a", 0, J_RUN, 0, 0, rows[i].reason, rows[i].message, rows[i].pull_errors,
                     rows[i].attempts};
        kobj *w = waiting_of(&d);
        int got = ipj_give_up(w, rows[i].backoff);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d", got);
        kobj_free(w);
    }
}

/* ---- messages, completion, TTL, re-runs ---------------------------------------- */

static void test_message(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        ipj_phase phase;
        long long desired, succeeded, failed;
        const char *want;
    } rows[] = {
        {"progress", IPJ_RUNNING, 5, 1, 1, "job is running, progress 40.0%"},
        {"no progress yet", IPJ_RUNNING, 5, 0, 0, "job is running, progress 0.0%"},
        {"a third", IPJ_RUNNING, 3, 1, 0, "job is running, progress 33.3%"},
        {"Never, no node", IPJ_RUNNING, 0, 0, 0, "job is running, no progress"},
        {"Never, all done", IPJ_RUNNING, 2, 2, 0, "job is running, progress 100.0%"},
        {"completed", IPJ_COMPLETED, 2, 1, 1, "job has completed"},
        {"deadline", IPJ_DEADLINE, 2, 1, 0, "job exceeds activeDeadlineSeconds"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char got[100];
        ipj_message(got, sizeof(got), rows[i].phase, rows[i].desired, rows[i].succeeded,
                    rows[i].failed);
        ROW_CHECK(rows[i].name, strcmp(got, rows[i].want) == 0, "got \"%s\"", got);
    }
}

static void test_completion(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int never, has_deadline;
        long long deadline, active, started_ago;
        ipj_phase want;
    } rows[] = {
        {"Always, all done", 0, 0, 0, 0, 10, IPJ_COMPLETED},
        {"Always, desired 0 (active 0)", 0, 0, 0, 0, 0, IPJ_COMPLETED},
        {"Always, running", 0, 0, 0, 2, 100000, IPJ_RUNNING},
        {"deadline not reached", 0, 1, 600, 2, 599, IPJ_RUNNING},
        {"deadline reached", 0, 1, 600, 2, 600, IPJ_DEADLINE},
        {"deadline but all done: completed", 0, 1, 600, 0, 900, IPJ_COMPLETED},
        {"Never, all done: never completes", 1, 0, 0, 0, 100000, IPJ_RUNNING},
        {"Never ignores a deadline", 1, 1, 600, 1, 100000, IPJ_RUNNING},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        ipj_values v = {.never = rows[i].never, .has_deadline = rows[i].has_deadline,
                        .deadline_s = rows[i].deadline};
        ipj_phase got = ipj_completion(&v, rows[i].active, now_epoch() - rows[i].started_ago,
                                       now_epoch());
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d", (int)got);
    }
}

static void test_ttl(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int never, has_ttl;
        long long ttl, completed_ago;
        int want;
    } rows[] = {
        {"no TTL", 0, 0, 0, 100000, 0},
        {"TTL not yet", 0, 1, 600, 599, 0},
        {"TTL due", 0, 1, 600, 600, 1},
        {"TTL 0: at once", 0, 1, 0, 0, 1},
        {"not completed", 0, 1, 0, -1, 0},
        {"Never: no TTL", 1, 1, 0, 100000, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        ipj_values v = {.never = rows[i].never, .has_ttl = rows[i].has_ttl, .ttl_s = rows[i].ttl};
        long long done = rows[i].completed_ago < 0 ? 0 : now_epoch() - rows[i].completed_ago;
        int got = ipj_ttl_due(&v, done, now_epoch());
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d", got);
    }
}

/* An ImagePullJob as the informer leaves it. */
typedef struct cr_def {
    const char *spec;
    long long generation;
    const char *completed_generation, *start_time, *completion_time;
    int deleting, finalizer;
} cr_def;

static kobj *cr_of(const cr_def *d)
{
    char *finalizers[] = {C("example.com/keep"), C(OTA_KRUISE_DELETION_PROTECTION)};
    kobj draft;
    memset(&draft, 0, sizeof(draft));
    draft.kind = KOBJ_IMAGEPULLJOB;
    draft.meta.namespace = C(IPJ_NS);
    draft.meta.name = C("pull");
    draft.meta.uid = C(IPJ_UID);
    draft.meta.resource_version = C("77");
    draft.meta.deleting = d->deleting;
    kobj_imagepulljob *j = &draft.u.ipj;
    j->spec = C(d->spec);
    j->generation = d->generation > 0 ? d->generation : 1;
    j->creation_time = C(IPJ_CREATED);
    j->completed_generation = C(d->completed_generation);
    j->finalizers = finalizers;
    j->n_finalizers = d->finalizer ? 2 : 1;
    j->has_status = d->start_time != NULL;
    j->start_time = C(d->start_time);
    j->completion_time = C(d->completion_time);
    kobj *o = kobj_pack(&draft);
    assert_non_null(o);
    return o;
}

static void test_done_of(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        long long generation;
        const char *completed_generation, *completion_time;
        ipj_done want;
    } rows[] = {
        {"running", 1, NULL, NULL, IPJ_NOT_DONE},
        {"running again after an edit", 3, "2", NULL, IPJ_NOT_DONE},
        {"completed", 2, "2", IPJ_NOW, IPJ_DONE},
        {"completed, no annotation (Kruise's)", 2, NULL, IPJ_NOW, IPJ_DONE},
        {"completed, then edited", 3, "2", IPJ_NOW, IPJ_RERUN},
        {"an annotation that is no number", 3, "x", IPJ_NOW, IPJ_DONE},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cr_def d = {"{}", rows[i].generation, rows[i].completed_generation, IPJ_CREATED,
                    rows[i].completion_time, 0, 0};
        kobj *cr = cr_of(&d);
        ipj_done got = ipj_done_of(cr);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d", (int)got);
        kobj_free(cr);
    }
}

static void test_reverify(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int never;
        job_st st;
        long long finished_ago;
        int want;
    } rows[] = {
        {"Never, done 23 h ago", 1, J_OK, 23 * 3600, 0},
        {"Never, done 24 h + 1 s ago", 1, J_OK, 24 * 3600 + 1, 1},
        {"Never, failed 25 h ago", 1, J_FAIL, 25 * 3600, 1},
        {"Never, running", 1, J_RUN, 0, 0},
        {"Always, done 25 h ago", 0, J_OK, 25 * 3600, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        job_def d = {"n-a", 0, rows[i].st, rows[i].finished_ago, 0, NULL, NULL, 0, 0};
        kobj *job = job_of(&d, "12345678");
        ipj_values v = {.never = rows[i].never};
        int got = ipj_reverify_due(&v, job, now_epoch());
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d", got);
        kobj_free(job);
    }
}

/* ---- whole passes ------------------------------------------------------------- */

#define SPEC_ALWAYS(extra) "{\"image\":\"" IMAGE "\",\"completionPolicy\":{\"type\":\"Always\"}" extra "}"
#define SPEC_NAMES(names, extra)                                                                   \
    "{\"image\":\"" IMAGE "\",\"selector\":{\"names\":[" names "]}" extra "}"
#define AGO(s) "2026-11-27T08:" s "Z" /* minutes:seconds past 08:00 */

typedef struct decide_row {
    const char *name;
    cr_def cr;
    job_def jobs[4];
    size_t n_jobs;
    /* want */
    int running;
    long long desired, active, succeeded, failed;
    const char *failed_nodes, *message, *offered, *deleted, *given_up;
    int write_status, completes;
    const char *completed_generation;
    int drop_finalizer, delete_cr;
} decide_row;

static const decide_row decide_rows[] = {
    {"first pass: parallelism 1 offers the first node",
     {SPEC_ALWAYS(""), 1, NULL, NULL, NULL, 0, 0}, {{0}}, 0,
     1, 5, 5, 0, 0, "", "job is running, progress 0.0%", "n-a", "", "", 1, 0, NULL, 0, 0},
    {"parallelism 2: a running Job counts",
     {SPEC_ALWAYS(",\"parallelism\":2"), 1, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 0, J_RUN, 0, 0, NULL, NULL, 0, 0}}, 1,
     1, 5, 5, 0, 0, "", "job is running, progress 0.0%", "n-b", "", "", 1, 0, NULL, 0, 0},
    {"parallelism \"3\": a done node frees its place",
     {SPEC_ALWAYS(",\"parallelism\":\"3\""), 1, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 0, J_OK, 60, 0, NULL, NULL, 0, 0}}, 1,
     1, 5, 4, 1, 0, "", "job is running, progress 20.0%", "n-b,n-c,n-d", "", "", 1, 0, NULL, 0, 0},
    {"parallelism 0: paused",
     {SPEC_ALWAYS(",\"parallelism\":0"), 1, NULL, AGO("00:01"), NULL, 0, 0}, {{0}}, 0,
     1, 5, 5, 0, 0, "", "job is running, progress 0.0%", "", "", "", 1, 0, NULL, 0, 0},
    {"NotReady node: waits, no Job, not failed",
     {SPEC_NAMES("\"n-x\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0}, {{0}}, 0,
     1, 1, 1, 0, 0, "", "job is running, progress 0.0%", "", "", "", 1, 0, NULL, 0, 0},
    {"matchLabels: the NotReady node is selected, not offered",
     {"{\"image\":\"x\",\"parallelism\":5,\"selector\":{\"matchLabels\":{\"zone\":\"north\"}}}", 1,
      NULL, AGO("00:01"), NULL, 0, 0}, {{0}}, 0,
     1, 3, 3, 0, 0, "", "job is running, progress 0.0%", "n-a,n-d", "", "", 1, 0, NULL, 0, 0},
    {"backoffLimit 0: one error gives up; done: the generation is marked first",
     {SPEC_NAMES("\"n-a\"", ",\"pullPolicy\":{\"backoffLimit\":0}"), 1, NULL, AGO("00:01"), NULL, 0, 1},
     {{"n-a", 0, J_RUN, 0, 0, "ErrImagePull", "dial tcp: i/o timeout", 1, 0}}, 1,
     1, 1, 0, 0, 1, "n-a", "job has completed", "", "", "n-a", 0, 0, "1", 1, 0},
    {"done and its generation marked: the completion is written",
     {SPEC_NAMES("\"n-a\"", ",\"pullPolicy\":{\"backoffLimit\":0}"), 1, "1", AGO("00:01"), NULL, 0, 0},
     {{"n-a", 0, J_GAVE_UP, 0, 0, "ErrImagePull", "dial tcp: i/o timeout", 1, 0}}, 1,
     1, 1, 0, 0, 1, "n-a", "job has completed", "", "", "", 1, 1, NULL, 0, 0},
    {"backoffLimit 3: three errors go on",
     {SPEC_NAMES("\"n-a\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 0, J_RUN, 0, 0, "ErrImagePull", "dial tcp: i/o timeout", 3, 0}}, 1,
     1, 1, 1, 0, 0, "", "job is running, progress 0.0%", "", "", "", 1, 0, NULL, 0, 0},
    {"permanent twice: given up at once",
     {SPEC_NAMES("\"n-a\",\"n-b\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 0, J_RUN, 0, 0, "ErrImagePull", "nginx:1.25: not found", 2, 2}}, 1,
     1, 2, 1, 0, 1, "n-a", "job is running, progress 50.0%", "n-b", "", "n-a", 1, 0, NULL, 0, 0},
    {"InvalidImageName: given up at once",
     {SPEC_NAMES("\"n-a\",\"n-b\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 0, J_RUN, 0, 0, "InvalidImageName", "invalid reference format", 0, 0}}, 1,
     1, 2, 1, 0, 1, "n-a", "job is running, progress 50.0%", "n-b", "", "n-a", 1, 0, NULL, 0, 0},
    {"given up already: failed, not patched again",
     {SPEC_NAMES("\"n-a\",\"n-b\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 0, J_GAVE_UP, 0, 0, "ErrImagePull", "nginx:1.25: not found", 2, 2}}, 1,
     1, 2, 1, 0, 1, "n-a", "job is running, progress 50.0%", "n-b", "", "", 1, 0, NULL, 0, 0},
    {"Always: all finished completes, the finalizer goes",
     {SPEC_NAMES("\"n-b\",\"n-a\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 1},
     {{"n-a", 0, J_OK, 60, 0, NULL, NULL, 0, 0}, {"n-b", 0, J_FAIL, 60, 0, NULL, NULL, 0, 0}}, 2,
     1, 2, 0, 1, 1, "n-b", "job has completed", "", "", "", 0, 0, "1", 1, 0},
    {"Always: desired 0 completes at once",
     {SPEC_NAMES("\"ghost\"", ""), 4, NULL, NULL, NULL, 0, 0}, {{0}}, 0,
     1, 0, 0, 0, 0, "", "job has completed", "", "", "", 0, 0, "4", 0, 0},
    {"activeDeadlineSeconds: unfinished nodes fail, running Jobs go",
     {SPEC_NAMES("\"n-a\",\"n-b\",\"n-c\"", ",\"completionPolicy\":{\"activeDeadlineSeconds\":600}"),
      1, NULL, AGO("10:00"), NULL, 0, 0},
     {{"n-a", 0, J_OK, 60, 0, NULL, NULL, 0, 0}, {"n-b", 0, J_RUN, 0, 0, NULL, NULL, 0, 0}}, 2,
     1, 3, 0, 1, 2, "n-b,n-c", "job exceeds activeDeadlineSeconds", "", "n-b", "", 0, 0, "1", 0, 0},
    {"activeDeadlineSeconds not reached",
     {SPEC_NAMES("\"n-a\",\"n-b\"", ",\"completionPolicy\":{\"activeDeadlineSeconds\":3600}"),
      1, NULL, AGO("10:00"), NULL, 0, 0},
     {{"n-a", 0, J_RUN, 0, 0, NULL, NULL, 0, 0}}, 1,
     1, 2, 2, 0, 0, "", "job is running, progress 0.0%", "", "", "", 1, 0, NULL, 0, 0},
    {"Never: all done, never completes",
     {SPEC_NAMES("\"n-a\"", ",\"completionPolicy\":{\"type\":\"Never\"}"), 1, NULL, AGO("00:01"),
      NULL, 0, 0},
     {{"n-a", 0, J_OK, 3600, 0, NULL, NULL, 0, 0}}, 1,
     1, 1, 0, 1, 0, "", "job is running, progress 100.0%", "", "", "", 1, 0, NULL, 0, 0},
    {"Never: a result older than 24 h is verified again",
     {SPEC_NAMES("\"n-a\"", ",\"completionPolicy\":{\"type\":\"Never\"}"), 1, NULL, AGO("00:01"),
      NULL, 0, 0},
     {{"n-a", 0, J_OK, 25 * 3600, 0, NULL, NULL, 0, 0}}, 1,
     1, 1, 0, 1, 0, "", "job is running, progress 100.0%", "", "n-a", "", 1, 0, NULL, 0, 0},
    {"Never: no node, no progress",
     {SPEC_NAMES("", ",\"completionPolicy\":{\"type\":\"Never\"}"), 1, NULL, AGO("00:01"), NULL, 0,
      0}, {{0}}, 0,
     1, 0, 0, 0, 0, "", "job is running, no progress", "", "", "", 1, 0, NULL, 0, 0},
    {"a spec edit: the old version's Job goes, the node runs again",
     {SPEC_NAMES("\"n-a\"", ""), 2, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 1, J_OK, 60, 0, NULL, NULL, 0, 0}}, 1,
     1, 1, 1, 0, 0, "", "job is running, progress 0.0%", "n-a", "n-a", "", 1, 0, NULL, 0, 0},
    {"a Job being deleted is not deleted again",
     {SPEC_NAMES("\"n-a\"", ""), 2, NULL, AGO("00:01"), NULL, 0, 0},
     {{"n-a", 1, J_OK, 60, 1, NULL, NULL, 0, 0}}, 1,
     1, 1, 1, 0, 0, "", "job is running, progress 0.0%", "n-a", "", "", 1, 0, NULL, 0, 0},
    {"completed: nothing more; Kruise's finalizer goes",
     {SPEC_NAMES("\"n-a\"", ""), 1, "1", AGO("00:01"), AGO("05:00"), 0, 1}, {{0}}, 0,
     0, 0, 0, 0, 0, "", NULL, "", "", "", 0, 0, NULL, 1, 0},
    {"completed by Kruise (no annotation): the annotation is written",
     {SPEC_NAMES("\"n-a\"", ""), 2, NULL, AGO("00:01"), AGO("05:00"), 0, 0}, {{0}}, 0,
     0, 0, 0, 0, 0, "", NULL, "", "", "", 0, 0, "2", 0, 0},
    {"completed, then edited, every node done already: running until the old completion is "
     "cleared (a new mark now would read as done)",
     {SPEC_NAMES("\"n-a\"", ""), 2, "1", AGO("00:01"), AGO("05:00"), 0, 0},
     {{"n-a", 0, J_OK, 60, 0, NULL, NULL, 0, 0}}, 1,
     1, 1, 0, 1, 0, "", "job is running, progress 100.0%", "", "", "", 1, 0, NULL, 0, 0},
    {"completed, then edited: runs again, a done node keeps its result",
     {SPEC_NAMES("\"n-a\",\"n-b\"", ""), 2, "1", AGO("00:01"), AGO("05:00"), 0, 0},
     {{"n-a", 0, J_OK, 60, 0, NULL, NULL, 0, 0}}, 1,
     1, 2, 1, 1, 0, "", "job is running, progress 50.0%", "n-b", "", "", 1, 0, NULL, 0, 0},
    {"TTL due: deleted",
     {SPEC_NAMES("\"n-a\"", ",\"completionPolicy\":{\"ttlSecondsAfterFinished\":300}"), 1, "1",
      AGO("00:01"), AGO("20:00"), 0, 0}, {{0}}, 0,
     0, 0, 0, 0, 0, "", NULL, "", "", "", 0, 0, NULL, 0, 1},
    {"TTL not yet",
     {SPEC_NAMES("\"n-a\"", ",\"completionPolicy\":{\"ttlSecondsAfterFinished\":900}"), 1, "1",
      AGO("00:01"), AGO("20:00"), 0, 0}, {{0}}, 0,
     0, 0, 0, 0, 0, "", NULL, "", "", "", 0, 0, NULL, 0, 0},
    {"being deleted: the finalizer goes, nothing else",
     {SPEC_NAMES("\"n-a\"", ""), 1, NULL, AGO("00:01"), NULL, 1, 1},
     {{"n-a", 0, J_RUN, 0, 0, NULL, NULL, 0, 0}}, 1,
     0, 0, 0, 0, 0, "", NULL, "", "", "", 0, 0, NULL, 1, 0},
    {"podSelector, pods not listed yet: nothing decided",
     {"{\"image\":\"x\",\"podSelector\":{\"matchLabels\":{\"app\":\"a\"}}}", 1, NULL, NULL, NULL, 0,
      0}, {{0}}, 0,
     0, 0, 0, 0, 0, "", NULL, "", "", "", 0, 0, NULL, 0, 0},
};

/* Runs one row's pass; the plan stays valid while a and the objects are. */
typedef struct pass_fixture {
    nodes ns;
    kobj *cr;
    ipj_spec spec;
    kobj *jobs[4], *waiting[4];
    size_t n_jobs;
    arena a;
    ipj_plan plan;
} pass_fixture;

static void pass_run(pass_fixture *f, const cr_def *cr, const job_def *jobs, size_t n_jobs)
{
    memset(f, 0, sizeof(*f));
    arena_init(&f->a);
    nodes_make(&f->ns);
    f->cr = cr_of(cr);
    decode_spec(&f->spec, cr->spec, &f->a);
    ipj_values v;
    ipj_effective(&f->spec, &v);
    char hash[9];
    assert_int_equal(ipj_spec_hash(&f->spec, &v, &f->a, hash), 0);
    f->n_jobs = n_jobs;
    for (size_t i = 0; i < n_jobs; i++) {
        f->jobs[i] = job_of(&jobs[i], hash);
        f->waiting[i] = waiting_of(&jobs[i]);
    }
    ipj_input in = {f->cr, &f->spec, (const kobj *const *)f->ns.v, N_NODES,
                    (const kobj *const *)f->jobs, (const kobj *const *)f->waiting, n_jobs,
                    NULL, IPJ_NOW, now_epoch()};
    assert_int_equal(ipj_decide(&in, &f->a, &f->plan), 0);
    assert_string_equal(f->plan.spec_hash, hash);
}

static void pass_free(pass_fixture *f)
{
    for (size_t i = 0; i < f->n_jobs; i++) {
        kobj_free(f->jobs[i]);
        kobj_free(f->waiting[i]);
    }
    kobj_free(f->cr);
    nodes_free(&f->ns);
    arena_free(&f->a);
}

static void test_decide(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(decide_rows) / sizeof(decide_rows[0]); i++) {
        const decide_row *r = &decide_rows[i];
        pass_fixture f;
        pass_run(&f, &r->cr, r->jobs, r->n_jobs);
        const ipj_plan *p = &f.plan;
        const kobj_imagepulljob *st = &p->status;
        const char *names[8];
        size_t n = 0;
        char got[200];
        ROW_CHECK(r->name, p->running == r->running, "running %d", p->running);
        ROW_CHECK(r->name, p->write_status == r->write_status, "write_status %d", p->write_status);
        if (r->running) {
            ROW_CHECK(r->name, st->desired == r->desired, "desired %lld", st->desired);
            ROW_CHECK(r->name, st->active == r->active, "active %lld", st->active);
            ROW_CHECK(r->name, st->succeeded == r->succeeded, "succeeded %lld", st->succeeded);
            ROW_CHECK(r->name, st->failed == r->failed, "failed %lld", st->failed);
            join(got, sizeof(got), (const char *const *)st->failed_nodes, st->n_failed_nodes);
            ROW_CHECK(r->name, strcmp(got, r->failed_nodes) == 0, "failedNodes \"%s\"", got);
            ROW_CHECK(r->name, strcmp(st->message, r->message) == 0, "message \"%s\"", st->message);
            ROW_CHECK(r->name, (st->completion_time != NULL) == r->completes, "completionTime %s",
                      st->completion_time != NULL ? st->completion_time : "(null)");
            if (r->completes)
                ROW_CHECK(r->name, strcmp(st->completion_time, IPJ_NOW) == 0, "completion now");
            /* startTime: kept, or now on a first pass and a re-run */
            const char *start = r->cr.start_time != NULL && r->cr.completion_time == NULL
                                    ? r->cr.start_time : IPJ_NOW;
            ROW_CHECK(r->name, strcmp(st->start_time, start) == 0, "startTime %s", st->start_time);
        } else {
            ROW_CHECK(r->name, p->n_nodes == 0, "%zu nodes", p->n_nodes);
        }
        for (size_t k = 0; k < p->n_nodes; k++)
            if (p->nodes[k].offer)
                names[n++] = p->nodes[k].name;
        join(got, sizeof(got), names, n);
        ROW_CHECK(r->name, strcmp(got, r->offered) == 0, "offered \"%s\"", got);
        n = 0;
        for (size_t k = 0; k < p->n_deletes; k++)
            names[n++] = p->deletes[k]->u.job.node_name;
        join(got, sizeof(got), names, n);
        ROW_CHECK(r->name, strcmp(got, r->deleted) == 0, "deleted \"%s\"", got);
        n = 0;
        for (size_t k = 0; k < p->n_nodes; k++)
            if (p->nodes[k].give_up)
                names[n++] = p->nodes[k].name;
        join(got, sizeof(got), names, n);
        ROW_CHECK(r->name, strcmp(got, r->given_up) == 0, "given up \"%s\"", got);
        ROW_CHECK(r->name,
                  (p->completed_generation == NULL) == (r->completed_generation == NULL) &&
                      (r->completed_generation == NULL ||
                       strcmp(p->completed_generation, r->completed_generation) == 0),
                  "completed_generation %s",
                  p->completed_generation != NULL ? p->completed_generation : "(null)");
        ROW_CHECK(r->name, p->drop_finalizer == r->drop_finalizer, "drop_finalizer %d",
                  p->drop_finalizer);
        ROW_CHECK(r->name, p->delete_cr == r->delete_cr, "delete_cr %d", p->delete_cr);
        pass_free(&f);
    }
}

/* A failed node's words (D3): the given-up annotations, else its pod's
 * waiting reason, else the Job's Failed condition. */
static void test_failure_words(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        job_def job;
        const char *reason, *message;
    } rows[] = {
        {"given up: the annotations",
         {"n-a", 0, J_GAVE_UP, 0, 0, "ImagePullBackOff", "Back-off", 0, 0}, "ErrImagePull",
         "manifest unknown"},
        {"given up this pass: the pod's words",
         {"n-a", 0, J_RUN, 0, 0, "InvalidImageName", "invalid reference format", 0, 0},
         "InvalidImageName", "invalid reference format"},
        {"Failed with a pod's words",
         {"n-a", 0, J_FAIL, 60, 0, "ErrImagePull", "401 Unauthorized", 1, 0}, "ErrImagePull",
         "401 Unauthorized"},
        {"Failed, no pod: the condition",
         {"n-a", 0, J_FAIL, 60, 0, NULL, NULL, 0, 0}, "DeadlineExceeded",
         "Job was active longer than specified deadline"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cr_def cr = {SPEC_NAMES("\"n-a\",\"n-b\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0};
        pass_fixture f;
        pass_run(&f, &cr, &rows[i].job, 1);
        const ipj_node *n = &f.plan.nodes[0];
        ROW_CHECK(rows[i].name, n->state == IPJ_NODE_FAILED, "state %s",
                  ipj_node_state_name(n->state));
        ROW_CHECK(rows[i].name, strcmp(n->reason, rows[i].reason) == 0, "reason %s", n->reason);
        ROW_CHECK(rows[i].name, strcmp(n->message, rows[i].message) == 0, "message %s", n->message);
        pass_free(&f);
    }
}

/* The status is written when it differs from the cached one, and only
 * then: the same pass over the status it wrote writes nothing. */
static void test_status_written_when_changed(void **state)
{
    (void)state;
    job_def jobs[] = {{"n-a", 0, J_OK, 60, 0, NULL, NULL, 0, 0},
                      {"n-b", 0, J_FAIL, 60, 0, NULL, NULL, 0, 0}};
    /* marked already (the completion's first write, D7), so that its
     * completion is written too */
    cr_def cr = {SPEC_NAMES("\"n-a\",\"n-b\",\"n-c\"", ""), 1, "1", NULL, NULL, 0, 0};
    pass_fixture f;
    pass_run(&f, &cr, jobs, 2);
    assert_int_equal(f.plan.write_status, 1);
    /* the CR as the status patch leaves it */
    kobj draft = *f.cr;
    draft.u.ipj = f.plan.status;
    draft.u.ipj.spec = f.cr->u.ipj.spec;
    draft.u.ipj.generation = f.cr->u.ipj.generation;
    draft.u.ipj.creation_time = f.cr->u.ipj.creation_time;
    draft.u.ipj.completed_generation = f.cr->u.ipj.completed_generation;
    kobj *written = kobj_pack(&draft);
    assert_non_null(written);
    ipj_input in = {written, &f.spec, (const kobj *const *)f.ns.v, N_NODES,
                    (const kobj *const *)f.jobs, (const kobj *const *)f.waiting, 2, NULL, IPJ_NOW,
                    now_epoch() + 5};
    ipj_plan again;
    assert_int_equal(ipj_decide(&in, &f.a, &again), 0);
    assert_int_equal(again.write_status, 0);
    /* n-c's Job starts: still no change (active counts it either way) */
    assert_string_equal(again.status.message, "job is running, progress 66.7%");
    /* one more node done: written */
    job_def more[] = {jobs[0], jobs[1], {"n-c", 0, J_OK, 1, 0, NULL, NULL, 0, 0}};
    kobj *c = job_of(&more[2], f.plan.spec_hash);
    const kobj *all[] = {f.jobs[0], f.jobs[1], c};
    const kobj *none[] = {NULL, NULL, NULL};
    in.jobs = all;
    in.waiting = none;
    in.n_jobs = 3;
    assert_int_equal(ipj_decide(&in, &f.a, &again), 0);
    assert_int_equal(again.write_status, 1);
    assert_string_equal(again.status.message, "job has completed");
    kobj_free(c);
    kobj_free(written);
    pass_free(&f);
}

/* ---- bodies ----------------------------------------------------------------- */

static void test_status_patch(void **state)
{
    (void)state;
    char *failed[] = {C("n-a"), C("n-b")};
    kobj_imagepulljob want = {.desired = 3, .active = 1, .succeeded = 0, .failed = 2,
                              .failed_nodes = failed, .n_failed_nodes = 2,
                              .start_time = C(IPJ_CREATED), .completion_time = NULL,
                              .message = C("job is running, progress 66.7%")};
    kobj_imagepulljob cached = {0};
    char *body = ipj_status_patch(&want, &cached);
    assert_string_equal(body, "{\"status\":{\"desired\":3,\"active\":1,\"succeeded\":0,\"failed\":2,"
                              "\"failedNodes\":[\"n-a\",\"n-b\"],\"startTime\":\"" IPJ_CREATED "\","
                              "\"message\":\"job is running, progress 66.7%\"}}");
    free(body);
    /* a re-run: what was set and is no more is removed */
    char *old[] = {C("n-c")};
    cached = (kobj_imagepulljob){.failed_nodes = old, .n_failed_nodes = 1,
                                 .completion_time = C(IPJ_NOW)};
    want.n_failed_nodes = 0;
    body = ipj_status_patch(&want, &cached);
    assert_string_equal(body, "{\"status\":{\"desired\":3,\"active\":1,\"succeeded\":0,\"failed\":2,"
                              "\"failedNodes\":null,\"startTime\":\"" IPJ_CREATED "\","
                              "\"completionTime\":null,"
                              "\"message\":\"job is running, progress 66.7%\"}}");
    free(body);
    want.completion_time = C(IPJ_NOW);
    want.message = C("job has completed");
    body = ipj_status_patch(&want, &cached);
    assert_contains(body, "\"completionTime\":\"" IPJ_NOW "\",\"message\":\"job has completed\"");
    free(body);
}

/* A Job its own deadline ended, whose kubelet's words this process
 * remembers (its pod is gone): they are written on the Job, once, so a
 * restarted controller still says why; not for a Job given up (they are
 * there already) nor without words to keep. */
static void test_keep_words(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        job_def job;
        int keep;
    } rows[] = {
        {"deadline, words remembered", {"n-a", 0, J_FAIL, 60, 0, "ImagePullBackOff", "slow", 2, 0}, 1},
        {"deadline, no words", {"n-a", 0, J_FAIL, 60, 0, NULL, NULL, 0, 0}, 0},
        {"given up: annotated already", {"n-a", 0, J_GAVE_UP, 60, 0, "ErrImagePull", "not found", 2, 2},
         0},
        {"succeeded", {"n-a", 0, J_OK, 60, 0, NULL, NULL, 0, 0}, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cr_def cr = {SPEC_NAMES("\"n-a\",\"n-b\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0};
        pass_fixture f;
        pass_run(&f, &cr, &rows[i].job, 1);
        ROW_CHECK(rows[i].name, f.plan.nodes[0].keep_words == rows[i].keep, "keep_words %d",
                  f.plan.nodes[0].keep_words);
        ROW_CHECK(rows[i].name, f.plan.nodes[0].give_up == 0, "give_up %d", f.plan.nodes[0].give_up);
        pass_free(&f);
    }
}

/* A selector edit leaves a running Job on a node no longer selected to
 * finish; it still pulls, so it counts against parallelism.  A startTime
 * that does not read as a time is no start: its deadline would never
 * come, so the run starts now. */
static void test_edge_counts(void **state)
{
    (void)state;
    job_def elsewhere = {"n-a", 0, J_RUN, 0, 0, NULL, NULL, 0, 0};
    cr_def cr = {SPEC_NAMES("\"n-b\",\"n-c\"", ""), 1, NULL, AGO("00:01"), NULL, 0, 0};
    pass_fixture f;
    pass_run(&f, &cr, &elsewhere, 1);
    assert_int_equal(f.plan.running_elsewhere, 1);
    for (size_t k = 0; k < f.plan.n_nodes; k++)
        assert_int_equal(f.plan.nodes[k].offer, 0); /* parallelism 1, taken */
    pass_free(&f);
    cr_def garbled = {SPEC_NAMES("\"n-b\"", ""), 1, NULL, "yesterday", NULL, 0, 0};
    pass_run(&f, &garbled, NULL, 0);
    assert_string_equal(f.plan.status.start_time, IPJ_NOW);
    assert_int_equal(f.plan.write_status, 1);
    pass_free(&f);
}

static void test_other_bodies(void **state)
{
    (void)state;
    char *body = ipj_give_up_patch("ErrImagePull", "nginx:9: \"not\" found", 1);
    assert_string_equal(body, "{\"metadata\":{\"annotations\":{\"" OTA_ANN_JOB_GIVEN_UP_REASON
                              "\":\"ErrImagePull\",\"" OTA_ANN_JOB_GIVEN_UP_MESSAGE
                              "\":\"nginx:9: \\\"not\\\" found\"}},"
                              "\"spec\":{\"activeDeadlineSeconds\":1}}");
    free(body);
    /* the words alone, on a Job its own deadline ended */
    body = ipj_give_up_patch("ImagePullBackOff", "slow", 0);
    assert_string_equal(body, "{\"metadata\":{\"annotations\":{\"" OTA_ANN_JOB_GIVEN_UP_REASON
                              "\":\"ImagePullBackOff\",\"" OTA_ANN_JOB_GIVEN_UP_MESSAGE
                              "\":\"slow\"}}}");
    free(body);
    cr_def d = {"{}", 3, NULL, NULL, NULL, 0, 1};
    kobj *cr = cr_of(&d);
    body = ipj_meta_patch(cr, "3", 1);
    assert_string_equal(body, "{\"metadata\":{\"resourceVersion\":\"77\",\"annotations\":{\""
                              OTA_ANN_IPJ_COMPLETED_GENERATION "\":\"3\"},"
                              "\"finalizers\":[\"example.com/keep\"]}}");
    free(body);
    body = ipj_meta_patch(cr, NULL, 1);
    assert_string_equal(body, "{\"metadata\":{\"resourceVersion\":\"77\","
                              "\"finalizers\":[\"example.com/keep\"]}}");
    free(body);
    body = ipj_meta_patch(cr, "3", 0);
    assert_string_equal(body, "{\"metadata\":{\"resourceVersion\":\"77\",\"annotations\":{\""
                              OTA_ANN_IPJ_COMPLETED_GENERATION "\":\"3\"}}}");
    free(body);
    kobj_free(cr);
    body = ipj_delete_options(IPJ_UID);
    assert_string_equal(body, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
                              "\"propagationPolicy\":\"Background\",\"preconditions\":{\"uid\":\""
                              IPJ_UID "\"}}");
    free(body);
}

/* D1: the Job's spec. */
static void test_job_spec(void **state)
{
    (void)state;
    cr_def d = {SPEC_NAMES("\"n-a\"", ",\"pullSecrets\":[\"reg\"],\"imagePullPolicy\":\"Always\","
                                      "\"pullPolicy\":{\"timeoutSeconds\":100,\"backoffLimit\":2}"),
                1, NULL, NULL, NULL, 0, 0};
    pass_fixture f;
    pass_run(&f, &d, NULL, 0);
    pull_job_spec s;
    assert_int_equal(ipj_job_spec(&s, f.cr, &f.spec, &f.plan, "n-a", "ota-ipj-pull-x", HELPER,
                                  &f.a), 0);
    assert_string_equal(s.namespace, IPJ_NS);
    assert_string_equal(s.name, "ota-ipj-pull-x");
    assert_string_equal(s.node_name, "n-a");
    assert_string_equal(s.owner.api_version, "apps.kruise.io/v1alpha1");
    assert_string_equal(s.owner.kind, "ImagePullJob");
    assert_string_equal(s.owner.uid, IPJ_UID);
    assert_int_equal(s.owner.controller, 1);
    assert_int_equal(s.n_annotations, 1);
    assert_string_equal(s.annotations[0], OTA_ANN_JOB_SPEC_HASH);
    assert_string_equal(s.annotations[1], f.plan.spec_hash);
    assert_int_equal(s.n_images, 1);
    assert_string_equal(s.images[0], IMAGE);
    assert_int_equal(s.n_pull_secrets, 1);
    assert_string_equal(s.pull_secrets[0], "reg");
    assert_string_equal(s.pull_policy, "Always");
    assert_int_equal(s.backoff_limit, 0);
    assert_int_equal(s.active_deadline_seconds, 100 * 3 + 60);
    pass_free(&f);
    /* defaults: 600 x 4 + 60, IfNotPresent */
    cr_def plain = {SPEC_NAMES("\"n-a\"", ""), 1, NULL, NULL, NULL, 0, 0};
    pass_run(&f, &plain, NULL, 0);
    assert_int_equal(ipj_job_spec(&s, f.cr, &f.spec, &f.plan, "n-a", "j", HELPER, &f.a), 0);
    assert_int_equal(s.active_deadline_seconds, 600 * 4 + 60);
    assert_string_equal(s.pull_policy, "IfNotPresent");
    assert_int_equal(s.n_pull_secrets, 0);
    pass_free(&f);
}

/* ---- reconcile: the shared queue ------------------------------------------------ */

typedef struct ipj_world {
    world w;
    store ipjs;
} ipj_world;

static void ipj_world_init(ipj_world *iw)
{
    world_init(&iw->w);
    store_init(&iw->ipjs, kobj_free_any, kobj_uid);
    iw->w.in.imagepulljobs = &iw->ipjs;
    for (size_t i = 0; i < N_NODES; i++) {
        kobj *o = node_state(&the_nodes[i]);
        assert_int_equal(store_put(&iw->w.node_states, o->meta.name, o), 0);
    }
}

static void ipj_world_free(ipj_world *iw)
{
    store_free(&iw->ipjs);
    world_free(&iw->w);
}

static kobj *add_ipj(ipj_world *iw, const char *spec, const char *created)
{
    cr_def d = {spec, 1, NULL, NULL, NULL, 0, 0};
    kobj *o = cr_of(&d);
    kobj draft = *o; /* the creation time asked for */
    draft.u.ipj.creation_time = C(created);
    kobj *cr = kobj_pack(&draft);
    kobj_free(o);
    assert_non_null(cr);
    assert_int_equal(store_put(&iw->ipjs, cr->meta.uid, cr), 0);
    return cr;
}

static const char *spec_hash_of(const char *spec, char out[9])
{
    hash_of(spec, out);
    return out;
}

#define IPJ_SPEC_NODE1 SPEC_NAMES("\"" NODE "\",\"n-a\"", "")

/* The one global slot left goes to the OTA request, a node user waiting,
 * though the ImagePullJob was made long before the request. */
static void test_ota_first(void **state)
{
    (void)state;
    ipj_world iw;
    ipj_world_init(&iw);
    world *w = &iw.w;
    standard(w);
    w->cfg.max_concurrent_pulls = 1;
    add_node(w, "edge-node-2", "[]");
    add_pod_full(w, "pod-ota", "u-ota", DS_UID, "edge-node-2", OLD, PULLING(RT2), 0);
    add_ipj(&iw, SPEC_NAMES("\"n-a\"", ""), "2026-11-01T00:00:00Z");
    run(w);
    expect_count(w, ACTION_CREATE_JOB, 1);
    char name[64];
    the(w, ACTION_CREATE_JOB, job_name_of(name, "pod-ota", "u-ota", H, RT2));
    assert_int_equal(w->out.waiting, 1);
    /* the ImagePullJob's status says it runs */
    const action *st = the(w, ACTION_PATCH_IPJ_STATUS, "pull");
    assert_string_equal(st->key, "ipj-status:" IPJ_UID);
    assert_string_equal(st->namespace, IPJ_NS);
    assert_contains(st->body, "\"desired\":1,\"active\":1");
    /* a cap of 2: the ImagePullJob node still waits, the last slot is
     * kept for a node user's next request (PULLQ_INTERACTIVE_RESERVE) */
    w->cfg.max_concurrent_pulls = 2;
    run(w);
    expect_count(w, ACTION_CREATE_JOB, 1);
    /* a cap of 3: both, and one slot left */
    w->cfg.max_concurrent_pulls = 3;
    run(w);
    expect_count(w, ACTION_CREATE_JOB, 2);
    char hash[9];
    ipj_job_name(name, "pull", IPJ_UID, "n-a", spec_hash_of(SPEC_NAMES("\"n-a\"", ""), hash));
    const action *c = the(w, ACTION_CREATE_JOB, name);
    assert_string_equal(c->namespace, IPJ_NS);
    char key[200];
    snprintf(key, sizeof(key), "create-job:" IPJ_NS "/%s", name);
    assert_string_equal(c->key, key);
    assert_int_equal(strncmp(name, IPJ_JOB_NAME_PREFIX "pull-", 13), 0);
    /* the body: pinned, owned by the CR, its version annotated */
    yajl_val v = tree(c);
    assert_string_equal(str_at(v, (const char *[]){"spec", "template", "spec", "nodeName", NULL}),
                        "n-a");
    yajl_val owners = yajl_tree_get(v, (const char *[]){"metadata", "ownerReferences", NULL},
                                    yajl_t_array);
    assert_non_null(owners);
    assert_int_equal(owners->u.array.len, 1);
    assert_string_equal(str_at(owners->u.array.values[0], (const char *[]){"kind", NULL}),
                        "ImagePullJob");
    assert_string_equal(str_at(owners->u.array.values[0], (const char *[]){"uid", NULL}), IPJ_UID);
    assert_string_equal(
        str_at(v, (const char *[]){"metadata", "annotations", OTA_ANN_JOB_SPEC_HASH, NULL}), hash);
    yajl_tree_free(v);
    ipj_world_free(&iw);
}

static void add_ipj_job(world *w, const char *node, const char *hash, const char *status)
{
    char name[64];
    ipj_job_name(name, "pull", IPJ_UID, node, hash);
    put(&w->jobs, KOBJ_JOB, NULL,
        "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"name\":\"%s\","
        "\"namespace\":\"" IPJ_NS "\",\"uid\":\"job-%s\",\"labels\":{\"" OTA_LABEL_MANAGED_BY
        "\":\"" OTA_MANAGED_BY_VALUE "\"},\"annotations\":{\"" OTA_ANN_JOB_SPEC_HASH "\":\"%s\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"apps.kruise.io/v1alpha1\",\"kind\":"
        "\"ImagePullJob\",\"name\":\"pull\",\"uid\":\"" IPJ_UID "\",\"controller\":true}]},"
        "\"spec\":{\"backoffLimit\":0,\"template\":{\"spec\":{\"nodeName\":\"%s\"}}},"
        "\"status\":%s}",
        name, name, hash, node, status);
}

/* A running ImagePullJob Job holds its node's slot (and a global one)
 * against an OTA request on that node; OTA paths leave it alone. */
static void test_ipj_job_holds_node(void **state)
{
    (void)state;
    ipj_world iw;
    ipj_world_init(&iw);
    world *w = &iw.w;
    standard(w);
    add_node(w, NODE, "[]");
    static const node_def node1 = {NODE, 0, NULL, NULL};
    kobj *st = node_state(&node1);
    assert_int_equal(store_put(&w->node_states, NODE, st), 0);
    add_pod(w, "pod-ota", "u-ota", OLD, PULLING(RT2));
    char hash[9];
    add_ipj(&iw, IPJ_SPEC_NODE1, IPJ_CREATED);
    add_ipj_job(w, NODE, spec_hash_of(IPJ_SPEC_NODE1, hash), JOB_RUNNING);
    run(w);
    expect_count(w, ACTION_CREATE_JOB, 0);
    expect_count(w, ACTION_DELETE_JOB, 0);
    assert_int_equal(w->out.waiting, 1);
    const action *q = find_event(w, OTA_EVENT_QUEUED, "pod-ota");
    assert_non_null(q);
    assert_contains(q->body, "is pulling already");
    /* and the global slot: another node's request waits at a cap of 1 */
    w->cfg.max_concurrent_pulls = 1;
    w->cfg.max_pulls_per_node = 0;
    run(w);
    expect_count(w, ACTION_CREATE_JOB, 0);
    /* the same Job without the CRD served: still a pull on the node */
    w->in.imagepulljobs = NULL;
    w->cfg.max_concurrent_pulls = 10;
    w->cfg.max_pulls_per_node = 1;
    run(w);
    expect_count(w, ACTION_CREATE_JOB, 0);
    expect_count(w, ACTION_DELETE_JOB, 0);
    /* done: the slot is free */
    store_free(&w->jobs);
    store_init(&w->jobs, kobj_free_any, kobj_uid);
    add_ipj_job(w, NODE, hash, JOB_COMPLETE);
    run(w);
    expect_count(w, ACTION_CREATE_JOB, 1);
    ipj_world_free(&iw);
}

/* Without the CRD (imagepulljobs NULL) a pass over OTA requests writes
 * what it wrote before ImagePullJobs existed, and nothing about them. */
static void test_no_crd(void **state)
{
    (void)state;
    ipj_world iw;
    ipj_world_init(&iw);
    world *w = &iw.w;
    standard(w);
    w->cfg.max_concurrent_pulls = 2;
    w->cfg.max_pulls_per_node = 0;
    add_node(w, NODE, "[]");
    add_queue(w);
    add_ipj(&iw, SPEC_ALWAYS(""), IPJ_CREATED);
    w->in.imagepulljobs = NULL;
    run(w);
    action_list without = w->out;
    memset(&w->out, 0, sizeof(w->out));
    /* the world with no ImagePullJob store and no node states at all */
    w->in.node_states = NULL;
    run(w);
    assert_int_equal(w->out.n, without.n);
    for (size_t i = 0; i < without.n; i++) {
        assert_int_equal(w->out.v[i].kind, without.v[i].kind);
        assert_string_equal(w->out.v[i].key, without.v[i].key);
        assert_true(without.v[i].kind != ACTION_PATCH_IPJ_STATUS &&
                    without.v[i].kind != ACTION_PATCH_IPJ && without.v[i].kind != ACTION_PATCH_JOB &&
                    without.v[i].kind != ACTION_DELETE_IPJ);
    }
    expect_count(w, ACTION_CREATE_JOB, 2);
    action_list_free(&without);
    ipj_world_free(&iw);
}

/* The writes of a pass: a give-up patch, the failure's Event, a NotReady
 * node's Event, the status; none twice once sent or while in flight, none
 * past max_writes. */
static void test_writes(void **state)
{
    (void)state;
    ipj_world iw;
    ipj_world_init(&iw);
    world *w = &iw.w;
    const char *spec = SPEC_NAMES("\"n-a\",\"n-x\"", "");
    add_ipj(&iw, spec, IPJ_CREATED);
    char hash[9], name[64];
    add_ipj_job(w, "n-a", spec_hash_of(spec, hash), JOB_RUNNING);
    ipj_job_name(name, "pull", IPJ_UID, "n-a", hash);
    add_job_pod(w, name, "InvalidImageName", "invalid reference format");
    /* the job pod fixture is in namespace edge: remember it as the
     * controller does, by the Job's namespace and name */
    kobj *jp = store_next(&w->job_pods, &(size_t){0});
    kobj *remembered = kobj_copy_job_pod(jp);
    assert_non_null(remembered);
    char ref[128];
    snprintf(ref, sizeof(ref), IPJ_NS "/%s", name);
    assert_int_equal(store_put(&w->job_waiting, ref, remembered), 0);
    run(w);
    const action *g = the(w, ACTION_PATCH_JOB, name);
    char key[200];
    snprintf(key, sizeof(key), "give-up:" IPJ_NS "/%s", name);
    assert_string_equal(g->key, key);
    assert_contains(g->body, "\"" OTA_ANN_JOB_GIVEN_UP_REASON "\":\"InvalidImageName\"");
    const action *e = find_event(w, OTA_EVENT_IPJ_FAILED, "pull");
    assert_non_null(e);
    assert_contains(e->body, "\"message\":\"Failed to pull image " IMAGE " on node n-a for "
                             "InvalidImageName: invalid reference format\"");
    assert_contains(e->body, "\"apiVersion\":\"apps.kruise.io/v1alpha1\",\"kind\":\"ImagePullJob\"");
    char ekey[200];
    snprintf(ekey, sizeof(ekey), RECONCILE_IPJ_EVENT_KEY IPJ_UID "|n-a|%s:" OTA_EVENT_IPJ_FAILED,
             hash);
    assert_string_equal(e->key, ekey);
    const action *q = find_event(w, OTA_EVENT_QUEUED, "pull");
    assert_non_null(q);
    assert_contains(q->body, "pull of " IMAGE " waits for node n-x to be Ready (it is NotReady "
                             "or unreachable)");
    expect_count(w, ACTION_CREATE_JOB, 0);
    const action *st = the(w, ACTION_PATCH_IPJ_STATUS, "pull");
    assert_contains(st->body, "\"desired\":2,\"active\":1,\"succeeded\":0,\"failed\":1,"
                              "\"failedNodes\":[\"n-a\"]");
    expect_total(w, 4);
    /* sent: not again; the status patch in flight is skipped */
    for (size_t i = 0; i < w->out.n; i++)
        if (w->out.v[i].kind == ACTION_CREATE_EVENT)
            assert_int_equal(strset_add(&w->events_sent, w->out.v[i].key), 0);
    strset inflight;
    strset_init(&inflight);
    assert_int_equal(strset_add(&inflight, "ipj-status:" IPJ_UID), 0);
    assert_int_equal(strset_add(&inflight, key), 0);
    w->in.skip[0] = &inflight;
    run(w);
    expect_total(w, 0);
    /* a bound of one write: the give-up first, the rest next pass */
    w->in.skip[0] = NULL;
    strset_free(&inflight);
    strset_free(&w->events_sent);
    strset_init(&w->events_sent);
    w->in.max_writes = 1;
    run(w);
    expect_total(w, 1);
    expect_count(w, ACTION_PATCH_JOB, 1);
    assert_int_equal(w->out.more, 1);
    ipj_world_free(&iw);
}

/* Completion: the metadata patch on the version read; a completed CR's
 * TTL delete. */
static void test_completion_writes(void **state)
{
    (void)state;
    ipj_world iw;
    ipj_world_init(&iw);
    world *w = &iw.w;
    const char *spec = SPEC_NAMES("\"n-a\"", ",\"completionPolicy\":{\"ttlSecondsAfterFinished\":60}");
    cr_def d = {spec, 5, NULL, IPJ_CREATED, NULL, 0, 1};
    kobj *cr = cr_of(&d);
    assert_int_equal(store_put(&iw.ipjs, cr->meta.uid, cr), 0);
    char hash[9];
    add_ipj_job(w, "n-a", spec_hash_of(spec, hash), JOB_COMPLETE);
    w->in.now = IPJ_NOW;
    w->in.now_epoch = now_epoch();
    run(w);
    /* first the generation is marked (and Kruise's finalizer dropped),
     * alone: a completion seen without its mark would read as an edit */
    const action *m = the(w, ACTION_PATCH_IPJ, "pull");
    assert_string_equal(m->key, "ipj-meta:" IPJ_UID ":77");
    assert_string_equal(m->body, "{\"metadata\":{\"resourceVersion\":\"77\",\"annotations\":{\""
                                 OTA_ANN_IPJ_COMPLETED_GENERATION "\":\"5\"},"
                                 "\"finalizers\":[\"example.com/keep\"]}}");
    expect_count(w, ACTION_PATCH_IPJ_STATUS, 0);
    expect_total(w, 1);
    /* the mark seen: the completion is written */
    store_free(&iw.ipjs);
    store_init(&iw.ipjs, kobj_free_any, kobj_uid);
    cr_def marked = {spec, 5, "5", IPJ_CREATED, NULL, 0, 0};
    cr = cr_of(&marked);
    assert_int_equal(store_put(&iw.ipjs, cr->meta.uid, cr), 0);
    run(w);
    const action *st = the(w, ACTION_PATCH_IPJ_STATUS, "pull");
    assert_contains(st->body, "\"completionTime\":\"" IPJ_NOW "\",\"message\":\"job has completed\"");
    expect_total(w, 1);
    /* as written, 61 s later: deleted */
    store_free(&iw.ipjs);
    store_init(&iw.ipjs, kobj_free_any, kobj_uid);
    cr_def done = {spec, 5, "5", IPJ_CREATED, IPJ_NOW, 0, 0};
    cr = cr_of(&done);
    assert_int_equal(store_put(&iw.ipjs, cr->meta.uid, cr), 0);
    w->in.now_epoch = now_epoch() + 61;
    run(w);
    const action *del = the(w, ACTION_DELETE_IPJ, "pull");
    assert_string_equal(del->key, "ipj-delete:" IPJ_UID);
    assert_string_equal(del->namespace, IPJ_NS);
    assert_contains(del->body, "\"preconditions\":{\"uid\":\"" IPJ_UID "\"}");
    expect_total(w, 1);
    ipj_world_free(&iw);
}

/* D10: a podSelector's pods are listed (a read, under the CR's uid, with
 * the selector as query) before anything is decided; the answer for the
 * selector as it is selects the nodes; an answer for another selector is
 * asked again. */
static void test_pod_selector(void **state)
{
    (void)state;
    ipj_world iw;
    ipj_world_init(&iw);
    world *w = &iw.w;
    store answers;
    store_init(&answers, kobj_free_any, kobj_uid);
    w->in.max_writes = 1; /* a read is not a write */
    w->cfg.max_concurrent_pulls = 0;
    add_ipj(&iw, "{\"image\":\"x\",\"parallelism\":5,\"podSelector\":{\"matchLabels\":{"
                 "\"app\":\"a\"},\"matchExpressions\":[{\"key\":\"tier\",\"operator\":"
                 "\"In\",\"values\":[\"x\",\"y\"]}]}}",
            IPJ_CREATED);
#define APP_QUERY "labelSelector=app%3Da%2Ctier%20in%20%28x%2Cy%29"
    run(w);
    expect_total(w, 1);
    const action *l = the(w, ACTION_LIST_PODS, IPJ_UID);
    assert_string_equal(l->namespace, IPJ_NS);
    assert_string_equal(l->query, APP_QUERY);
    assert_string_equal(l->key, "list-pods:" IPJ_UID "?" APP_QUERY);
    assert_true(action_is_read(l->kind));
    /* in flight: not asked again */
    strset inflight;
    strset_init(&inflight);
    assert_int_equal(strset_add(&inflight, l->key), 0);
    w->in.skip[0] = &inflight;
    run(w);
    expect_total(w, 0);
    w->in.skip[0] = NULL;
    strset_free(&inflight);
    /* the answer for another selector: asked again */
    w->in.ipj_pod_nodes = &answers;
    assert_int_equal(store_put(&answers, IPJ_UID,
                               pod_nodes_answer("labelSelector=app%3Db", (const char *[]){"n-a"},
                                                1)),
                     0);
    run(w);
    expect_count(w, ACTION_LIST_PODS, 1);
    expect_count(w, ACTION_PATCH_IPJ_STATUS, 0);
    /* the answer: n-b and n-c are selected, n-x (NotReady) waits */
    assert_int_equal(store_put(&answers, IPJ_UID,
                               pod_nodes_answer(APP_QUERY,
                                                (const char *[]){"n-c", "n-x", "gone", "n-b"}, 4)),
                     0);
    w->in.max_writes = 0;
    run(w);
    expect_count(w, ACTION_LIST_PODS, 0);
    const action *st = the(w, ACTION_PATCH_IPJ_STATUS, "pull");
    assert_contains(st->body, "\"desired\":3,\"active\":3");
    assert_non_null(find_event(w, OTA_EVENT_QUEUED, "pull"));
    /* completed: its pods are not listed again */
    store_free(&answers);
    store_init(&answers, kobj_free_any, kobj_uid);
    store_free(&iw.ipjs);
    store_init(&iw.ipjs, kobj_free_any, kobj_uid);
    cr_def done = {"{\"image\":\"x\",\"podSelector\":{\"matchLabels\":{\"app\":\"a\"}}}", 1,
                   "1", IPJ_CREATED, IPJ_NOW, 0, 0};
    kobj *cr = cr_of(&done);
    assert_int_equal(store_put(&iw.ipjs, cr->meta.uid, cr), 0);
    run(w);
    expect_total(w, 0);
    store_free(&answers);
    ipj_world_free(&iw);
}

/* A spec that does not decode says so, once; so does an image no Job can
 * be made for (the node waits for an edit). */
static void test_not_served(void **state)
{
    (void)state;
    ipj_world iw;
    ipj_world_init(&iw);
    world *w = &iw.w;
    add_ipj(&iw, "{\"image\":7}", IPJ_CREATED);
    run(w);
    const action *e = find_event(w, OTA_EVENT_IPJ_NOT_SERVED, "pull");
    assert_non_null(e);
    assert_string_equal(e->key, RECONCILE_IPJ_EVENT_KEY IPJ_UID "|spec|1");
    expect_total(w, 1);
    assert_int_equal(strset_add(&w->events_sent, e->key), 0);
    run(w);
    expect_total(w, 0);
    store_free(&iw.ipjs);
    store_init(&iw.ipjs, kobj_free_any, kobj_uid);
    /* what the webhook refuses is not trusted either: an image
     * distribution/reference refuses, a selector with a bad operator, a
     * podSelector too long to list with */
    static const struct {
        const char *spec, *says;
    } bad[] = {
        {"{\"image\":\"Nginx:1\",\"selector\":{\"names\":[\"n-a\"]}}", "invalid image Nginx:1: "},
        {"{\"image\":\"x\",\"selector\":{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Near\"}]}}",
         "invalid selector: "},
        {"{\"image\":\"x\",\"podSelector\":{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\"}]}}",
         "invalid podSelector: "},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        store_free(&iw.ipjs);
        store_init(&iw.ipjs, kobj_free_any, kobj_uid);
        strset_free(&w->events_sent); /* the same uid and generation each time */
        strset_init(&w->events_sent);
        add_ipj(&iw, bad[i].spec, IPJ_CREATED);
        run(w);
        expect_count(w, ACTION_CREATE_JOB, 0);
        expect_count(w, ACTION_LIST_PODS, 0);
        expect_count(w, ACTION_PATCH_IPJ_STATUS, 0);
        e = find_event(w, OTA_EVENT_IPJ_NOT_SERVED, "pull");
        assert_non_null(e);
        assert_contains(e->body, bad[i].says);
    }
    /* being deleted with Kruise's finalizer: it goes, spec or no spec */
    store_free(&iw.ipjs);
    store_init(&iw.ipjs, kobj_free_any, kobj_uid);
    cr_def deleting = {"{\"image\":7}", 3, NULL, NULL, NULL, 1, 1};
    kobj *cr = cr_of(&deleting);
    assert_int_equal(store_put(&iw.ipjs, cr->meta.uid, cr), 0);
    run(w);
    const action *m = the(w, ACTION_PATCH_IPJ, "pull");
    assert_contains(m->body, "\"finalizers\":[\"example.com/keep\"]");
    ipj_world_free(&iw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_effective),
        cmocka_unit_test(test_spec_hash),
        cmocka_unit_test(test_node_state),
        cmocka_unit_test(test_give_up),
        cmocka_unit_test(test_message),
        cmocka_unit_test(test_completion),
        cmocka_unit_test(test_ttl),
        cmocka_unit_test(test_done_of),
        cmocka_unit_test(test_reverify),
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_failure_words),
        cmocka_unit_test(test_status_written_when_changed),
        cmocka_unit_test(test_status_patch),
        cmocka_unit_test(test_keep_words),
        cmocka_unit_test(test_edge_counts),
        cmocka_unit_test(test_other_bodies),
        cmocka_unit_test(test_job_spec),
        cmocka_unit_test(test_ota_first),
        cmocka_unit_test(test_ipj_job_holds_node),
        cmocka_unit_test(test_no_crd),
        cmocka_unit_test(test_writes),
        cmocka_unit_test(test_completion_writes),
        cmocka_unit_test(test_pod_selector),
        cmocka_unit_test(test_not_served),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

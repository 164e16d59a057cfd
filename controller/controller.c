/*
 * controller.c - see controller.h.
 */
#include "controller.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callerr.h"
#include "clock.h"
#include "ic_write.h"
#include "kapi.h"
#include "log.h"
#include "ota_names.h"
#include "pullerr.h"

#define PASS_MIN_INTERVAL_NS (100ull * 1000000ull)

/* The decoders of the resources the controller watches: each caches a
 * kobj of its kind (lib/kobj.h), keyed by uid. */
static void *decode_daemonset(yajl_val obj)
{
    return kobj_decode(KOBJ_DAEMONSET, obj);
}

static void *decode_revision(yajl_val obj)
{
    return kobj_decode(KOBJ_REVISION, obj);
}

static void *decode_pod(yajl_val obj)
{
    return kobj_decode(KOBJ_POD, obj);
}

static void *decode_job(yajl_val obj)
{
    return kobj_decode(KOBJ_JOB, obj);
}

static void *decode_job_pod(yajl_val obj)
{
    return kobj_decode(KOBJ_JOB_POD, obj);
}

/* A Node as far as the pull queue needs it: Ready or not (controller/pullq.h),
 * keyed by its name; its images are read on demand (ACTION_GET_NODE). */
static void *decode_node_state(yajl_val obj)
{
    return kobj_decode(KOBJ_NODE_STATE, obj);
}

static void *decode_imagepulljob(yajl_val obj)
{
    return kobj_decode(KOBJ_IMAGEPULLJOB, obj);
}

static void *decode_imagecache(yajl_val obj)
{
    return kobj_decode(KOBJ_IMAGECACHE, obj);
}

static void keep_pull_error(const void *old_obj, void *fresh_obj);

/* DaemonSet pods carry both labels; nothing else does */
static const kapi_requirement daemonset_pods[] = {
    {OTA_LABEL_REVISION_HASH, NULL}, {OTA_LABEL_POD_TEMPLATE_GENERATION, NULL}, {NULL, NULL}};
static const kapi_requirement ours[] = {{OTA_LABEL_MANAGED_BY, OTA_MANAGED_BY_VALUE}, {NULL, NULL}};

static const informer_spec informer_specs[INF_COUNT] = {
    [INF_DAEMONSETS] = {"daemonsets", KAPI_DAEMONSETS, NULL, NULL, decode_daemonset,
                        kobj_free_any, kobj_uid, NULL, 0},
    [INF_REVISIONS] = {"controllerrevisions", KAPI_CONTROLLERREVISIONS, NULL, NULL,
                       decode_revision, kobj_free_any, kobj_uid, NULL, 0},
    [INF_PODS] = {"pods", KAPI_PODS, NULL, daemonset_pods, decode_pod, kobj_free_any, kobj_uid,
                  NULL, 0},
    [INF_JOBS] = {"jobs", KAPI_JOBS, NULL, ours, decode_job, kobj_free_any, kobj_uid, NULL, 0},
    [INF_JOB_PODS] = {"prepull-pods", KAPI_PODS, NULL, ours, decode_job_pod, kobj_free_any,
                      kobj_uid, keep_pull_error, 0},
    [INF_NODES] = {"nodes", KAPI_NODES, NULL, NULL, decode_node_state, kobj_free_any, kobj_name,
                   NULL, 0},
    /* served only where a Kruise CRD or ours is installed */
    [INF_IMAGEPULLJOBS] = {"imagepulljobs", KAPI_IMAGEPULLJOBS, NULL, NULL, decode_imagepulljob,
                           kobj_free_any, kobj_uid, NULL, 1},
    /* served where kube-fledged's CRD or ours is installed */
    [INF_IMAGECACHES] = {"imagecaches", KAPI_IMAGECACHES, NULL, NULL, decode_imagecache,
                         kobj_free_any, kobj_uid, NULL, 1},
};

static void mark_dirty(void *data)
{
    controller *c = data;
    c->dirty = 1;
}

/* A Job pod's first waiting container, as the pull rules keep it
 * (pullerr_next) as each version of the pod arrives: at a high rate of
 * change ErrImagePull can last less than the time between two passes, and
 * the back-off after it may not repeat its words. */
static void keep_pull_error(const void *old_obj, void *fresh_obj)
{
    const kobj *old = old_obj;
    kobj *fresh = fresh_obj;
    const kobj_job_pod *o = &old->u.job_pod;
    kobj_job_pod *n = &fresh->u.job_pod;
    pullerr_seen before = {o->waiting_reason, o->waiting_message, o->backing_off,
                           o->failed_attempts, 0, o->pull_errors};
    pullerr_seen now = pullerr_next(&before, n->waiting_reason, n->waiting_message);
    n->failed_attempts = now.attempts;
    n->pull_errors = now.errors;
    /* out of memory: the back-off is all we say */
    if (now.kept)
        (void)kobj_job_pod_set_waiting(fresh, now.reason, now.message);
    /* the same rule for each target of an ImageCache's pod on its own */
    for (size_t i = 0; i < n->n_targets && i < o->n_targets; i++) {
        const kobj_target *ot = &o->targets[i];
        kobj_target *nt = &n->targets[i];
        pullerr_seen tb = {ot->reason, ot->message, ot->backing_off, ot->failed_attempts, 0,
                           ot->pull_errors};
        pullerr_seen tn = pullerr_next(&tb, nt->state == KOBJ_TARGET_WAITING ? nt->reason : NULL,
                                       nt->state == KOBJ_TARGET_WAITING ? nt->message : NULL);
        nt->failed_attempts = (unsigned short)(tn.attempts < 65535 ? tn.attempts : 65535);
        nt->pull_errors = (unsigned short)(tn.errors < 65535 ? tn.errors : 65535);
        if (tn.kept && nt->state == KOBJ_TARGET_WAITING)
            (void)kobj_job_pod_set_target_words(fresh, i, tn.reason, tn.message);
    }
}

static void on_leader_change(void *data, int is_leader)
{
    controller *c = data;
    c->leading = is_leader;
    c->dirty = 1;
    if (!is_leader)
        c->drop_queued = 1; /* done in controller_tick, outside the client's callbacks */
}

int controller_init(controller *c, kube_client *client, const controller_config *cfg)
{
    memset(c, 0, sizeof(*c));
    c->cfg = *cfg;
    c->client = client;
    int rc = 0;
    for (int i = 0; i < INF_COUNT; i++) /* the table's paths fit (tests build it) */
        rc |= informer_init(&c->informers[i], client, &informer_specs[i], mark_dirty, c);
    for (int i = 0; i < INF_COUNT; i++)
        c->informers[i].trouble = &c->trouble;
    if (!cfg->imagepulljobs) {
        c->informers[INF_IMAGEPULLJOBS].absent = 1;
        c->informers[INF_IMAGEPULLJOBS].synced = 1;
    }
    if (!cfg->imagecaches) {
        c->informers[INF_IMAGECACHES].absent = 1;
        c->informers[INF_IMAGECACHES].synced = 1;
    }
    store_init(&c->nodes, kobj_free_any, NULL);
    store_init(&c->job_waiting, kobj_free_any, NULL);
    pullmethod_memory_init(&c->pull_memory, 0);
    store_init(&c->ipj_pod_nodes, kobj_free_any, NULL);
    c->ic_status_served = -1;
    workset_init(&c->work);
    if (cfg->leader_elect)
        leader_init(&c->election, client, &cfg->leader, on_leader_change, c);
    else
        c->leading = 1;
    return rc;
}

void controller_stop(controller *c)
{
    for (int i = 0; i < INF_COUNT; i++)
        informer_stop(&c->informers[i]);
}

void controller_free(controller *c)
{
    for (int i = 0; i < INF_COUNT; i++)
        informer_free(&c->informers[i]);
    store_free(&c->nodes);
    store_free(&c->job_waiting);
    pullmethod_memory_free(&c->pull_memory);
    store_free(&c->ipj_pod_nodes);
    workset_free(&c->work);
}

int controller_synced(const controller *c)
{
    for (int i = 0; i < INF_COUNT; i++)
        if (!c->informers[i].synced)
            return 0;
    return 1;
}

/* ---- executor ----------------------------------------------------------- */

typedef struct pod_list pod_list;
static void pod_list_free(pod_list *l);

typedef struct exec_ctx {
    controller *c;
    action_kind kind;
    action_outcome outcome;
    char *key, *name, *namespace;
    char *query;      /* a read's, to say what its answer answers */
    pod_list *pods;   /* ACTION_LIST_PODS: what the pages have brought */
    action_note note; /* moved from the action */
} exec_ctx;

static void exec_ctx_free(exec_ctx *x)
{
    free(x->key);
    free(x->name);
    free(x->namespace);
    free(x->query);
    pod_list_free(x->pods);
    free(x->note.subject);
    free(x->note.node);
    free(x->note.reason);
    free(x);
}

/* Seconds from a pull request (whole seconds, as the condition's time is)
 * to now; 0 when the request is in the future of this clock. */
static uint64_t since_request_ns(long long request_epoch)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = ((long long)ts.tv_sec - request_epoch) * 1000000000ll + ts.tv_nsec;
    return ns > 0 ? (uint64_t)ns : 0;
}

/* The info line of an action done (2xx), and the histograms it feeds. */
static void tell_done(controller *c, const exec_ctx *x)
{
    const action_note *n = &x->note;
    char job[512];
    snprintf(job, sizeof(job), "%s/%s", x->namespace != NULL ? x->namespace : "",
             x->name != NULL ? x->name : "");
    switch (x->kind) {
    case ACTION_CREATE_JOB: {
        char deadline[32];
        snprintf(deadline, sizeof(deadline), "%lds", n->deadline_s);
        log_kv(LOG_INFO, "pre-pull job created",
               n->deadline_source == RECONCILE_DEADLINE_IMAGEPULLJOB ? "imagepulljob"
               : n->deadline_source == RECONCILE_DEADLINE_IMAGECACHE ? "imagecache"
                                                                     : "pod",
               n->subject, "job", job, "node", n->node, "deadline", deadline, "deadline_from",
               reconcile_deadline_source_name((reconcile_deadline_source)n->deadline_source),
               NULL);
        if (n->request_epoch > 0)
            metrics_observe_bounds(&c->queue_wait, since_request_ns(n->request_epoch),
                                   metrics_long_bounds);
        break;
    }
    case ACTION_DELETE_JOB:
        log_kv(LOG_INFO, "pre-pull job deleted", "job", job, NULL);
        break;
    case ACTION_PATCH_POD_STATUS:
        if (x->outcome == ACTION_OUTCOME_NONE) {
            /* a mark says nothing; a PodNeedUpgrade removed says why */
            if (n->auto_start)
                log_kv(LOG_INFO, "automatic pre-pull started", "pod", n->subject, "node",
                       n->node, NULL);
            else if (n->reason != NULL)
                log_kv(LOG_INFO, "PodNeedUpgrade removed", "pod", n->subject, "why", n->reason,
                       NULL);
            break;
        }
        log_kv(LOG_INFO, "pre-pull finished", "pod", n->subject, "node", n->node, "outcome",
               x->outcome == ACTION_OUTCOME_PULL_SUCCEEDED ? "succeeded" : "failed", "reason",
               n->reason, NULL);
        if (n->request_epoch > 0)
            metrics_observe_bounds(&c->prepull_duration[x->outcome == ACTION_OUTCOME_PULL_SUCCEEDED
                                                            ? 0
                                                            : 1],
                                   since_request_ns(n->request_epoch), metrics_long_bounds);
        break;
    case ACTION_CREATE_EVENT:
        if (n->warn)
            log_kv(LOG_WARN, "DaemonSet needs attention", "daemonset", n->subject, "problem",
                   n->reason, NULL);
        if (n->count > 0) {
            log_line l;
            log_begin(&l, LOG_INFO, "new revision marked");
            log_str(&l, "daemonset", n->subject);
            log_str(&l, "revision", n->reason);
            log_int(&l, "pods", (long long)n->count);
            log_end(&l, LOG_INFO);
        }
        break;
    case ACTION_PATCH_JOB:
        log_kv(LOG_INFO, "pull job given up", "job", job,
               n->deadline_source == RECONCILE_DEADLINE_IMAGECACHE ? "imagecache" : "imagepulljob",
               n->subject, "node", n->node, "reason", n->reason, NULL);
        break;
    case ACTION_DELETE_IPJ:
        log_kv(LOG_INFO, "ImagePullJob deleted: ttlSecondsAfterFinished passed", "imagepulljob",
               job, NULL);
        break;
    case ACTION_PATCH_IC_STATUS:
    case ACTION_PUT_IC:
        if (n->reason != NULL) /* the status written */
            log_kv(LOG_INFO, "ImageCache status written", "imagecache", job, "status", n->reason,
                   NULL);
        break;
    case ACTION_PATCH_IPJ_STATUS:
    case ACTION_PATCH_IPJ:
    case ACTION_PATCH_IC:
    case ACTION_GET_NODE:
    case ACTION_LIST_PODS:
    case ACTION_GET_IC_DISCOVERY:
        break;
    }
}

pull_outcome controller_pull_outcome(action_kind kind, action_outcome outcome)
{
    if (kind == ACTION_CREATE_JOB)
        return PULL_STARTED;
    if (kind != ACTION_PATCH_POD_STATUS)
        return PULL_N_OUTCOMES;
    switch (outcome) {
    case ACTION_OUTCOME_PULL_SUCCEEDED:
        return PULL_SUCCEEDED;
    case ACTION_OUTCOME_PULL_FAILED:
        return PULL_FAILED;
    case ACTION_OUTCOME_NONE:
        break;
    }
    return PULL_N_OUTCOMES;
}

static void count_outcome(controller *c, const exec_ctx *x)
{
    pull_outcome o = controller_pull_outcome(x->kind, x->outcome);
    if (o != PULL_N_OUTCOMES)
        metrics_add(&c->pulls[o], 1);
}

static void on_node(controller *c, const char *name, const kube_result *r)
{
    kobj *node = NULL;
    if (r->status == 200) {
        char err[128];
        yajl_val tree = json_parse_tree(r->body, r->body_len, 64, err, sizeof(err));
        if (tree != NULL) {
            node = kobj_decode(KOBJ_NODE, tree);
            yajl_tree_free(tree);
        }
    }
    if (node == NULL) {
        /* Unknown or unreadable: an empty image list, so pulls go ahead
         * without the shortcut rather than wait for a node we cannot see. */
        node = calloc(1, sizeof(*node));
        if (node == NULL)
            return;
        node->kind = KOBJ_NODE;
    }
    store_put(&c->nodes, name, node);
}

static void on_executed(void *data, const kube_result *r);
static int still_leading(void *data);

/* A podSelector's pod list, read a page (POD_LIST_PAGE pods) at a time
 * as it streams: only the distinct nodes of active pods are kept, never a
 * page's tree, so a namespace of many pods costs its nodes' names. */
#ifndef POD_LIST_PAGE /* a build may ask for smaller pages, to see the paging work */
#define POD_LIST_PAGE "500"
#endif
#define POD_LIST_MAX_POD (1u << 20)   /* one pod's JSON: etcd keeps 1.5 MiB at most */
#define POD_LIST_MAX_NODES 100000     /* more than any cluster has */

struct pod_list {
    listsplit ls;
    strset seen;
    char **nodes;
    size_t n, cap;
    int failed;
};

static void pod_list_free(pod_list *l)
{
    if (l == NULL)
        return;
    listsplit_free(&l->ls);
    strset_free(&l->seen);
    for (size_t i = 0; i < l->n; i++)
        free(l->nodes[i]);
    free(l->nodes);
    free(l);
}

/* One pod of the list: its node, when it counts (kobj_active_pod_node). */
static int pod_list_item(void *data, const char *json, size_t len)
{
    pod_list *l = data;
    char err[128];
    yajl_val pod = json_parse_tree(json, len, 64, err, sizeof(err));
    const char *node = pod != NULL ? kobj_active_pod_node(pod) : NULL;
    if (node != NULL && !strset_has(&l->seen, node)) {
        if (l->n == POD_LIST_MAX_NODES) {
            l->failed = 1;
        } else {
            if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 64;
                char **grown = realloc(l->nodes, cap * sizeof(*grown));
                if (grown == NULL)
                    l->failed = 1;
                else {
                    l->nodes = grown;
                    l->cap = cap;
                }
            }
            char *copy = !l->failed ? strdup(node) : NULL;
            if (copy == NULL || strset_add(&l->seen, node) != 0) {
                free(copy);
                l->failed = 1;
            } else {
                l->nodes[l->n++] = copy;
            }
        }
    }
    if (pod != NULL)
        yajl_tree_free(pod);
    return !l->failed; /* 0 ends the list */
}

static int pod_list_chunk(void *data, const char *chunk, size_t n)
{
    exec_ctx *x = data;
    return listsplit_feed(&x->pods->ls, chunk, n) == 0;
}

static pod_list *pod_list_new(void)
{
    pod_list *l = calloc(1, sizeof(*l));
    if (l == NULL)
        return NULL;
    strset_init(&l->seen);
    if (listsplit_init(&l->ls, POD_LIST_MAX_POD, pod_list_item, l) != 0) {
        strset_free(&l->seen);
        free(l);
        return NULL;
    }
    return l;
}

/* After a page: 1 when the next one was asked for (the action goes on),
 * 0 when the list is over (complete or not). */
static int pod_list_next_page(controller *c, exec_ctx *x, const kube_result *r)
{
    pod_list *l = x->pods;
    if (r->status != 200 || l == NULL || l->failed)
        return 0;
    /* a body cut short (a transport error, an item that would not parse
     * into the list) is no answer: never half a list's nodes */
    if (r->error != NULL || listsplit_finish(&l->ls) != 0) {
        l->failed = 1;
        return 0;
    }
    char *token = listsplit_take_continue(&l->ls);
    if (token == NULL || token[0] == '\0') {
        free(token);
        return 0;
    }
    listsplit_free(&l->ls);
    strbuf path = {0};
    int rc = listsplit_init(&l->ls, POD_LIST_MAX_POD, pod_list_item, l);
    if (rc == 0)
        rc = kapi_path(&path, KAPI_PODS, x->namespace, NULL, NULL);
    if (rc == 0) {
        strbuf_printf(&path, "?limit=" POD_LIST_PAGE "&continue=");
        kapi_escape(&path, token);
        if (x->query != NULL && x->query[0] != '\0')
            strbuf_printf(&path, "&%s", x->query);
    }
    free(token);
    kube_call call = {.method = "GET", .path = path.data, .on_chunk = pod_list_chunk,
                      .on_done = on_executed, .wanted = still_leading, .data = x, .idempotent = 1};
    if (rc != 0 || path.failed || kube_client_call(c->client, &call) != 0) {
        strbuf_free(&path);
        l->failed = 1;
        return 0;
    }
    strbuf_free(&path);
    return 1;
}

/* The list is over: the nodes its pods run on, kept under the
 * ImagePullJob's uid with the query that asked.  A failed list keeps
 * nothing (the pass asks again), and says why. */
static void on_pod_nodes(controller *c, const exec_ctx *x, const kube_result *r)
{
    const pod_list *l = x->pods;
    if (x->name == NULL || l == NULL)
        return;
    if (r->status != 200 || l->failed) {
        char words[512] = "", reason[64] = "";
        if (r->status != 200)
            kapi_status_read(r->body, r->body_len, reason, sizeof(reason), words, sizeof(words));
        log_kv(LOG_WARN, "pod list for a podSelector failed", "imagepulljob_uid", x->name,
               "namespace", x->namespace, "reason", reason,
               "message", words[0] != '\0' ? words
                          : l->failed ? "a page could not be read, or too many nodes"
                          : (r->error != NULL ? r->error : ""),
               NULL);
        return;
    }
    kobj *o = kobj_pod_nodes_new(x->name, x->query != NULL ? x->query : "", l->nodes, l->n);
    if (o == NULL || store_put(&c->ipj_pod_nodes, o->meta.uid, o) != 0)
        log_msg(LOG_WARN, "unreadable pod list", "for ImagePullJob %s: out of memory", x->name);
}

exec_outcome controller_exec_outcome(action_kind kind, long status)
{
    if (status >= 200 && status < 300)
        return EXEC_DONE;
    /* Jobs and Events are named from what they are for: a 409 is the one
     * made before a restart (or by the leader before), not a failure */
    if ((kind == ACTION_CREATE_JOB || kind == ACTION_CREATE_EVENT) && status == 409)
        return EXEC_MADE_BEFORE;
    /* every write but a create is to an object that may have gone */
    if (kind != ACTION_CREATE_EVENT && kind != ACTION_CREATE_JOB && !action_is_read(kind) &&
        status == 404)
        return EXEC_GONE;
    /* a precondition (resourceVersion, uid) did its job: read again */
    if ((kind == ACTION_PATCH_POD_STATUS || kind == ACTION_PATCH_IPJ ||
         kind == ACTION_DELETE_IPJ || kind == ACTION_PATCH_IC || kind == ACTION_PUT_IC) &&
        status == 409)
        return EXEC_CONFLICT;
    return EXEC_FAILED;
}

uint64_t controller_hold_ns(exec_outcome outcome)
{
    return outcome == EXEC_FAILED || outcome == EXEC_CONFLICT ? RECENT_FAILED_NS : RECENT_OK_NS;
}

/* A write that failed: what the apiserver's Status says (code, reason,
 * message; never the whole body), about which object (namespace/name).  A
 * configuration cause (callerr.h: 401, TLS) is said once per change with
 * its hint, shared with the informers, and each call's line is then at
 * debug. */
static void say_failed_call(controller *c, const exec_ctx *x, const kube_result *r)
{
    char code[24], reason[64], message[512], object[512];
    snprintf(code, sizeof(code), "%ld", r->status);
    kapi_status_read(r->body, r->body_len, reason, sizeof(reason), message, sizeof(message));
    if (message[0] == '\0' && r->error != NULL)
        snprintf(message, sizeof(message), "%s", r->error);
    else if (message[0] == '\0' && r->body != NULL)
        snprintf(message, sizeof(message), "%.200s", r->body); /* not a Status: its head */
    controller_object_ref(x->kind, x->namespace, x->name, object, sizeof(object));
    callerr_cause cause = callerr_classify(r->status, r->error);
    if (callerr_say_now(&c->trouble, cause))
        log_kv(LOG_ERROR, "cannot use the apiserver", "action", action_kind_name(x->kind),
               "code", code, "reason", reason, "message", message, "hint", callerr_hint(cause),
               NULL);
    log_kv(callerr_is_config(cause) ? LOG_DEBUG : LOG_WARN, "API call failed", "action",
           action_kind_name(x->kind), controller_object_key(x->kind), object, "code", code,
           "reason", reason, "message", message, NULL);
}

const char *controller_object_key(action_kind kind)
{
    switch (kind) {
    case ACTION_PATCH_POD_STATUS:
        return "pod";
    case ACTION_CREATE_JOB:
    case ACTION_DELETE_JOB:
        return "job";
    case ACTION_CREATE_EVENT:
        return "event_namespace";
    case ACTION_GET_NODE:
        return "node";
    case ACTION_LIST_PODS:
        return "namespace";
    case ACTION_PATCH_JOB:
        return "job";
    case ACTION_PATCH_IPJ_STATUS:
    case ACTION_PATCH_IPJ:
    case ACTION_DELETE_IPJ:
        return "imagepulljob";
    case ACTION_GET_IC_DISCOVERY:
        return "group_version";
    case ACTION_PATCH_IC_STATUS:
    case ACTION_PATCH_IC:
    case ACTION_PUT_IC:
        return "imagecache";
    }
    return "object";
}

const char *controller_object_ref(action_kind kind, const char *ns, const char *name, char *buf,
                                  size_t size)
{
    if (kind == ACTION_CREATE_EVENT)
        snprintf(buf, size, "%s", ns != NULL ? ns : "");
    else if (ns == NULL || ns[0] == '\0')
        snprintf(buf, size, "%s", name != NULL ? name : "");
    else
        snprintf(buf, size, "%s/%s", ns, name != NULL ? name : "");
    return buf;
}

/* The ImageCaches' group version as discovery lists it: /status served
 * (our CRD) or not (kube-fledged's).  No answer, or not a list: still
 * unknown, asked again. */
static void on_ic_discovery(controller *c, const kube_result *r)
{
    int served = -1;
    if (r->status == 200 && r->body != NULL) {
        char err[128];
        yajl_val doc = json_parse_tree(r->body, r->body_len, 16, err, sizeof(err));
        served = doc != NULL ? ic_status_served(doc) : -1;
        if (doc != NULL)
            yajl_tree_free(doc);
    }
    if (served >= 0 && served != c->ic_status_served) {
        log_kv(LOG_INFO, "ImageCache status", "written_by",
               served ? "merge patch of imagecaches/status (the CRD serves it)"
                      : "PUT of the whole object (the CRD has no /status, as kube-fledged's)",
               NULL);
        c->dirty = 1;
    }
    if (served >= 0) {
        c->ic_status_served = served;
        c->ic_rediscover = 0;
    }
}

/* A pull Job refused 422 "must specify a volume type": the apiserver drops
 * volumes[].image, the ImageVolume gate is off (controller/pullmethod.h). */
static void remember_create_answer(controller *c, const exec_ctx *x, const kube_result *r)
{
    char reason[64], message[512];
    kapi_status_read(r->body, r->body_len, reason, sizeof(reason), message, sizeof(message));
    if (c->pull_memory.gate_off ||
        pullmethod_create_answer((int)r->status, message) != PULLMETHOD_ANSWER_GATE_OFF)
        return;
    pullmethod_remember(&c->pull_memory, PULLMETHOD_ANSWER_GATE_OFF, NULL);
    log_kv(LOG_WARN, "image volumes are off in this cluster", "job", x->name, "message", message,
           "next", "runnable images pulled with the helper; artifacts fail", NULL);
}

static void on_executed(void *data, const kube_result *r)
{
    exec_ctx *x = data;
    controller *c = x->c;
    uint64_t now = clock_mono_ns();
    if (x->kind == ACTION_LIST_PODS && pod_list_next_page(c, x, r))
        return; /* the action goes on with the next page */
    workset_done(&c->work, x->key);
    if (!action_is_read(x->kind) && c->writes_queued > 0)
        c->writes_queued--;
    exec_outcome outcome = controller_exec_outcome(x->kind, r->status);
    if (x->kind == ACTION_GET_NODE) {
        on_node(c, x->name, r);
    } else if (x->kind == ACTION_GET_IC_DISCOVERY) {
        on_ic_discovery(c, r);
        if (c->ic_status_served < 0) /* asked again after the hold */
            workset_hold_until(&c->work, x->key, now + RECENT_FAILED_NS);
    } else if (x->kind == ACTION_LIST_PODS) {
        on_pod_nodes(c, x, r);
        if (outcome != EXEC_DONE) /* 403, 5xx: asked again after the hold */
            workset_hold_until(&c->work, x->key, now + controller_hold_ns(outcome));
    } else if (x->kind == ACTION_PATCH_IC_STATUS && r->status >= 400 &&
               ic_write_next((int)r->status, 1) == IC_WRITE_REDISCOVER) {
        /* no /status (kube-fledged's CRD now): ask discovery before the
         * next status write */
        log_kv(LOG_INFO, "ImageCache status subresource gone", "imagecache", x->name, "next",
               "asking discovery again", NULL);
        c->ic_status_served = -1;
        c->dirty = 1;
    } else if (outcome == EXEC_CONFLICT) {
        /* not a failure: the precondition did its job (a newer version) */
        char object[512];
        log_kv(LOG_INFO,
               x->kind == ACTION_PATCH_POD_STATUS
                   ? "status write refused: the pod changed since the cache saw it"
                   : "write refused: the object changed since the cache saw it",
               controller_object_key(x->kind),
               controller_object_ref(x->kind, x->namespace, x->name, object, sizeof(object)),
               "next", "decided again once the watch shows it", NULL);
        workset_hold_until(&c->work, x->key, now + controller_hold_ns(outcome));
    } else if (outcome != EXEC_FAILED) {
        if (outcome == EXEC_DONE) {
            count_outcome(c, x);
            tell_done(c, x);
        } else {
            /* 409 on a create: made before (names are deterministic);
             * 404 on a delete: gone already.  Neither is a problem. */
            char object[512];
            log_kv(LOG_DEBUG, outcome == EXEC_MADE_BEFORE ? "already there" : "already gone",
                   "action", action_kind_name(x->kind), controller_object_key(x->kind),
                   controller_object_ref(x->kind, x->namespace, x->name, object, sizeof(object)),
                   NULL);
        }
        if (x->kind == ACTION_CREATE_EVENT)
            workset_settle(&c->work, x->key); /* every Event is sent once */
        workset_hold_until(&c->work, x->key, now + controller_hold_ns(outcome));
    } else if (r->dropped) {
        c->dropped++; /* counted, and said once (controller_tick) */
    } else {
        if (x->kind == ACTION_CREATE_JOB)
            remember_create_answer(c, x, r);
        say_failed_call(c, x, r);
        workset_hold_until(&c->work, x->key, now + controller_hold_ns(outcome));
    }
    c->dirty = 1;
    exec_ctx_free(x);
}

int controller_event_key_live(const char *key, const store *pods)
{
    size_t prefix = sizeof(RECONCILE_EVENT_KEY) - 1;
    if (strncmp(key, RECONCILE_EVENT_KEY, prefix) != 0)
        return 1;
    const char *uid = key + prefix, *bar = strchr(uid, '|');
    const char *rt = bar != NULL ? bar + 1 : NULL, *bar2 = rt != NULL ? strchr(rt, '|') : NULL;
    if (bar2 == NULL)
        return 1; /* not ours to judge */
    char id[256];
    size_t n = (size_t)(bar - uid);
    if (n >= sizeof(id))
        return 1;
    memcpy(id, uid, n);
    id[n] = '\0';
    const kobj *pod = store_get(pods, id);
    if (pod == NULL)
        return 0; /* the pod is gone */
    const char *asked = pod->u.pod.image_ready.last_transition_time;
    if (asked == NULL)
        asked = "";
    return strlen(asked) == (size_t)(bar2 - rt) && strncmp(asked, rt, (size_t)(bar2 - rt)) == 0;
}

/* An Event key "<prefix><uid>|<value>": the uid into id (NUL-terminated)
 * and *value after the bar. 0 when key is not one (another prefix, no bar,
 * a uid too long): not ours to judge. */
static int event_key_split(const char *key, const char *prefix, size_t prefix_len,
                           char id[256], const char **value)
{
    if (strncmp(key, prefix, prefix_len) != 0)
        return 0;
    const char *uid = key + prefix_len, *bar = strchr(uid, '|');
    if (bar == NULL || (size_t)(bar - uid) >= 256)
        return 0;
    memcpy(id, uid, (size_t)(bar - uid));
    id[bar - uid] = '\0';
    *value = bar + 1;
    return 1;
}

int controller_revision_event_key_live(const char *key, const store *daemonsets,
                                       const store *revisions)
{
    char id[256];
    const char *hash;
    if (!event_key_split(key, RECONCILE_REVISION_EVENT_KEY,
                         sizeof(RECONCILE_REVISION_EVENT_KEY) - 1, id, &hash))
        return 1;
    if (store_get(daemonsets, id) == NULL)
        return 0; /* the DaemonSet is gone */
    const kobj *o;
    for (size_t i = 0; (o = store_next(revisions, &i)) != NULL;)
        if (o->u.rev.hash != NULL && strcmp(o->u.rev.hash, hash) == 0)
            return 1;
    return 0; /* its revision is gone */
}

int controller_timeout_event_key_live(const char *key, const store *daemonsets)
{
    char id[256];
    const char *value;
    if (!event_key_split(key, RECONCILE_TIMEOUT_EVENT_KEY,
                         sizeof(RECONCILE_TIMEOUT_EVENT_KEY) - 1, id, &value))
        return 1;
    const kobj *ds = store_get(daemonsets, id);
    /* forgotten once the value is gone: a bad value written again is said again */
    return ds != NULL && ds->u.ds.bad_timeout != NULL && strncmp(ds->u.ds.bad_timeout, value, 300) == 0;
}

int controller_ipj_event_key_live(const char *key, const store *imagepulljobs)
{
    char id[256];
    const char *what;
    if (!event_key_split(key, RECONCILE_IPJ_EVENT_KEY, sizeof(RECONCILE_IPJ_EVENT_KEY) - 1, id,
                         &what))
        return 1;
    return store_get(imagepulljobs, id) != NULL;
}

int controller_ic_event_key_live(const char *key, const store *imagecaches)
{
    char id[256];
    const char *what;
    if (!event_key_split(key, RECONCILE_IC_EVENT_KEY, sizeof(RECONCILE_IC_EVENT_KEY) - 1, id,
                         &what))
        return 1;
    return store_get(imagecaches, id) != NULL;
}

typedef struct event_caches {
    const store *pods, *daemonsets, *revisions, *imagepulljobs, *imagecaches;
} event_caches;

static int event_key_live(const char *key, void *data)
{
    const event_caches *in = data;
    return controller_event_key_live(key, in->pods) &&
           controller_revision_event_key_live(key, in->daemonsets, in->revisions) &&
           controller_timeout_event_key_live(key, in->daemonsets) &&
           controller_ipj_event_key_live(key, in->imagepulljobs) &&
           controller_ic_event_key_live(key, in->imagecaches);
}

int controller_may_send(action_kind kind, int leading)
{
    return action_is_read(kind) || leading;
}

/* Asked by the client before each attempt: leadership as it is now. */
static int still_leading(void *data)
{
    exec_ctx *x = data;
    return controller_may_send(x->kind, x->c->leading);
}

/* What each kind of action sends.  object: the path names the action's
 * object (else its collection); idempotent: a repeat is harmless, so the
 * client may retry it like a read. */
typedef struct action_call_spec {
    const char *method;
    kapi_resource resource;
    const char *subresource, *query, *content_type;
    int object, idempotent;
} action_call_spec;

static const action_call_spec action_calls[] = {
    /* merged by condition type: the kubelet's conditions stay */
    [ACTION_PATCH_POD_STATUS] = {"PATCH", KAPI_PODS, "status", NULL, KAPI_CT_STRATEGIC_MERGE, 1,
                                 0},
    /* a named Job: a repeat is a 409, counted as done */
    [ACTION_CREATE_JOB] = {"POST", KAPI_JOBS, NULL, NULL, KAPI_CT_JSON, 0, 1},
    /* a repeat is a 404, counted as done; the Job's pods go with it */
    [ACTION_DELETE_JOB] = {"DELETE", KAPI_JOBS, NULL, "propagationPolicy=Background", NULL, 1, 1},
    [ACTION_CREATE_EVENT] = {"POST", KAPI_EVENTS, NULL, NULL, KAPI_CT_JSON, 0, 0},
    [ACTION_GET_NODE] = {"GET", KAPI_NODES, NULL, NULL, NULL, 1, 0},
    /* the namespace's pods (the action's query: the podSelector) */
    [ACTION_LIST_PODS] = {"GET", KAPI_PODS, NULL, "limit=" POD_LIST_PAGE, NULL, 0, 1},
    /* setting the same annotations and deadline again changes nothing */
    [ACTION_PATCH_JOB] = {"PATCH", KAPI_JOBS, NULL, NULL, KAPI_CT_MERGE, 1, 1},
    /* the whole status the pass computed: the latest wins */
    [ACTION_PATCH_IPJ_STATUS] = {"PATCH", KAPI_IMAGEPULLJOBS, "status", NULL, KAPI_CT_MERGE, 1, 1},
    /* carries the resourceVersion it read: a repeat is a 409, read again */
    [ACTION_PATCH_IPJ] = {"PATCH", KAPI_IMAGEPULLJOBS, NULL, NULL, KAPI_CT_MERGE, 1, 0},
    /* with the uid as precondition; a repeat is a 404, counted as done */
    [ACTION_DELETE_IPJ] = {"DELETE", KAPI_IMAGEPULLJOBS, NULL, NULL, KAPI_CT_JSON, 1, 1},
    /* the group version's discovery document (controller_action_call) */
    [ACTION_GET_IC_DISCOVERY] = {"GET", KAPI_IMAGECACHES, NULL, NULL, NULL, 0, 1},
    /* the whole status the pass computed: the latest wins */
    [ACTION_PATCH_IC_STATUS] = {"PATCH", KAPI_IMAGECACHES, "status", NULL, KAPI_CT_MERGE, 1, 1},
    /* carry the resourceVersion they read: a repeat is a 409, read again */
    [ACTION_PATCH_IC] = {"PATCH", KAPI_IMAGECACHES, NULL, NULL, KAPI_CT_MERGE, 1, 0},
    [ACTION_PUT_IC] = {"PUT", KAPI_IMAGECACHES, NULL, NULL, KAPI_CT_JSON, 1, 0},
};

int controller_action_call(const action *a, strbuf *path, kube_call *call)
{
    if ((unsigned)a->kind >= sizeof(action_calls) / sizeof(action_calls[0]))
        return -1;
    const action_call_spec *t = &action_calls[a->kind];
    if (a->kind == ACTION_GET_IC_DISCOVERY ? kapi_discovery_path(path, t->resource) != 0
                                           : kapi_path(path, t->resource, a->namespace,
                                                       t->object ? a->name : NULL,
                                                       t->subresource) != 0)
        return -1;
    if (t->query != NULL)
        strbuf_printf(path, "?%s", t->query);
    if (a->query != NULL && a->query[0] != '\0')
        strbuf_printf(path, "%c%s", t->query != NULL ? '&' : '?', a->query);
    call->method = t->method;
    call->content_type = t->content_type;
    call->idempotent = t->idempotent;
    return path->failed ? -1 : 0;
}

static void execute(controller *c, action *a)
{
    if (!workset_may_add(&c->work, a->key))
        return; /* in flight, held back, or an Event sent */
    if (!controller_may_send(a->kind, c->leading))
        return; /* only the leader writes */
    strbuf path = {0};
    kube_call call = {.on_done = on_executed, .wanted = still_leading};
    if (controller_action_call(a, &path, &call) != 0) {
        char object[512];
        log_kv(LOG_WARN, "no API path for an action", "action", action_kind_name(a->kind),
               controller_object_key(a->kind),
               controller_object_ref(a->kind, a->namespace, a->name, object, sizeof(object)),
               NULL);
        strbuf_free(&path);
        return;
    }
    exec_ctx *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        strbuf_free(&path);
        return;
    }
    x->c = c;
    x->kind = a->kind;
    x->outcome = a->outcome;
    x->key = strdup(a->key);
    x->name = a->name != NULL ? strdup(a->name) : NULL;
    x->namespace = a->namespace != NULL ? strdup(a->namespace) : NULL;
    x->query = a->query != NULL ? strdup(a->query) : NULL;
    if (a->kind == ACTION_LIST_PODS) {
        /* streamed, page by page (pod_list_next_page) */
        x->pods = pod_list_new();
        call.on_chunk = pod_list_chunk;
        if (x->pods == NULL) {
            exec_ctx_free(x);
            strbuf_free(&path);
            return;
        }
    }
    /* the note moves: the action list is freed after the pass */
    x->note = a->note;
    a->note = (action_note){0};
    call.path = path.data;
    call.body = a->body;
    call.body_len = a->body != NULL ? strlen(a->body) : 0;
    call.data = x;
    if (x->key == NULL || workset_add(&c->work, a->key) != 0 ||
        kube_client_call(c->client, &call) != 0) {
        workset_done(&c->work, a->key);
        exec_ctx_free(x);
        strbuf_free(&path);
        return;
    }
    if (!action_is_read(a->kind))
        c->writes_queued++;
    log_msg(LOG_DEBUG, "executing", "%s %s", action_kind_name(a->kind), path.data);
    strbuf_free(&path); /* the client copied it */
}

/* ---- passes ------------------------------------------------------------- */

size_t controller_write_cap(double qps, int burst)
{
    double cap = 2.0 * qps;
    if (cap < (double)burst)
        cap = (double)burst;
    if (cap < CONTROLLER_MIN_WRITE_CAP)
        cap = CONTROLLER_MIN_WRITE_CAP;
    return cap < 1e9 ? (size_t)cap : (size_t)1000000000;
}

uint64_t controller_wake_at(uint64_t now, long long after_s)
{
    if (after_s <= 0)
        return 0;
    /* a year at most: no overflow, and a pass a year away is no wake */
    if (after_s > 366LL * 24 * 3600)
        after_s = 366LL * 24 * 3600;
    uint64_t at = now + (uint64_t)after_s * 1000000000ull;
    return at != 0 ? at : 1;
}

size_t controller_write_room(size_t cap, size_t queued)
{
    if (cap == 0)
        return 0;
    return queued < cap ? cap - queued : 1;
}

int controller_pass_may_run(size_t cap, size_t queued, int held_back)
{
    if (cap == 0)
        return 1;
    return held_back ? queued <= cap / 2 : queued < cap;
}

static int job_live(const char *key, const void *waiting, void *live)
{
    (void)waiting;
    return store_has(live, key);
}

/* Remembers why each Job's pod waits, and forgets Jobs that are gone. */
static void remember_job_waiting(controller *c)
{
    const store *job_pods = &c->informers[INF_JOB_PODS].objects;
    const store *jobs = &c->informers[INF_JOBS].objects;
    kobj *o;
    char key[512];
    for (size_t i = 0; (o = store_next(job_pods, &i)) != NULL;) {
        if (o->u.job_pod.waiting_reason == NULL || o->u.job_pod.job_name == NULL)
            continue;
        snprintf(key, sizeof(key), "%s/%s", o->meta.namespace, o->u.job_pod.job_name);
        /* keep_pull_error's rule across the pods of one Job */
        const kobj *before = store_get(&c->job_waiting, key);
        if (before != NULL && o->u.job_pod.n_targets == 0 &&
            pullerr_says_less(o->u.job_pod.waiting_reason, before->u.job_pod.waiting_reason))
            continue;
        kobj *copy = kobj_copy_job_pod(o);
        if (copy == NULL)
            continue;
        /* per target: a target whose words say less keeps the words before */
        for (size_t t = 0; before != NULL && t < copy->u.job_pod.n_targets &&
                           t < before->u.job_pod.n_targets;
             t++) {
            const kobj_target *bt = &before->u.job_pod.targets[t];
            const kobj_target *ct = &copy->u.job_pod.targets[t];
            if (ct->state == KOBJ_TARGET_WAITING && bt->state == KOBJ_TARGET_WAITING &&
                pullerr_says_less(ct->reason, bt->reason))
                (void)kobj_job_pod_set_target_words(copy, t, bt->reason, bt->message);
        }
        store_put(&c->job_waiting, key, copy);
    }
    if (c->job_waiting.len == 0)
        return;
    store live;
    store_init(&live, NULL, NULL);
    for (size_t i = 0; (o = store_next(jobs, &i)) != NULL;) {
        snprintf(key, sizeof(key), "%s/%s", o->meta.namespace, o->meta.name);
        store_put(&live, key, NULL);
    }
    store_retain(&c->job_waiting, job_live, &live);
    store_free(&live);
}

/* What pull pods with image volumes say of their nodes
 * (controller/pullmethod.h): a target that cannot be created there
 * (CreateContainerError) is the runtime without image volumes. */
static void remember_pull_methods(controller *c)
{
    const store *job_pods = &c->informers[INF_JOB_PODS].objects;
    kobj *o;
    for (size_t i = 0; (o = store_next(job_pods, &i)) != NULL;) {
        const kobj_job_pod *jp = &o->u.job_pod;
        if (!jp->image_volumes || jp->node_name == NULL ||
            pullmethod_node_cannot(&c->pull_memory, jp->node_name))
            continue;
        for (size_t t = 0; t < jp->n_targets; t++) {
            if (jp->targets[t].state != KOBJ_TARGET_WAITING ||
                pullmethod_target_answer(jp->targets[t].reason) != PULLMETHOD_ANSWER_NODE_CANNOT)
                continue;
            if (pullmethod_remember(&c->pull_memory, PULLMETHOD_ANSWER_NODE_CANNOT,
                                    jp->node_name) == 0)
                log_kv(LOG_WARN, "node cannot mount image volumes", "node", jp->node_name,
                       "pod", o->meta.name, "reason", jp->targets[t].reason, "message",
                       jp->targets[t].message != NULL ? jp->targets[t].message : "", "next",
                       "runnable images pulled with the helper there; artifacts fail", NULL);
            break;
        }
    }
}

static void run_pass(controller *c, uint64_t now)
{
    char now_text[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now_text, sizeof(now_text), "%Y-%m-%dT%H:%M:%SZ", &tm);
    remember_job_waiting(c);
    remember_pull_methods(c);
    /* Forget the Events of pods, requests, DaemonSets and revisions that
     * are gone.  Only with the caches complete (synced), or an object not
     * listed yet would lose its keys and its Events be sent again. */
    if (controller_synced(c)) {
        event_caches caches = {&c->informers[INF_PODS].objects,
                               &c->informers[INF_DAEMONSETS].objects,
                               &c->informers[INF_REVISIONS].objects,
                               &c->informers[INF_IMAGEPULLJOBS].objects,
                               &c->informers[INF_IMAGECACHES].objects};
        workset_forget(&c->work, event_key_live, &caches);
    }
    reconcile_input in = {
        .daemonsets = &c->informers[INF_DAEMONSETS].objects,
        .revisions = &c->informers[INF_REVISIONS].objects,
        .pods = &c->informers[INF_PODS].objects,
        .jobs = &c->informers[INF_JOBS].objects,
        .job_pods = &c->informers[INF_JOB_PODS].objects,
        .nodes = &c->nodes,
        .node_states = &c->informers[INF_NODES].objects,
        .pull_memory = &c->pull_memory,
        .imagepulljobs = c->informers[INF_IMAGEPULLJOBS].absent
                             ? NULL
                             : &c->informers[INF_IMAGEPULLJOBS].objects,
        .imagecaches = c->informers[INF_IMAGECACHES].absent
                           ? NULL
                           : &c->informers[INF_IMAGECACHES].objects,
        .ic_status_served = c->ic_status_served,
        .ic_rediscover = c->ic_rediscover,
        .ipj_pod_nodes = &c->ipj_pod_nodes,
        .events_sent = &c->work.settled,
        .job_waiting = &c->job_waiting,
        .cfg = &c->cfg.reconcile,
        .skip = {&c->work.in_flight, &c->work.held},
        .max_writes = controller_write_room(c->cfg.max_queued_writes, c->writes_queued),
        .now = now_text,
        .now_epoch = (long long)t,
    };
    action_list actions = {0};
    if (reconcile(&in, &actions) != 0)
        log_msg(LOG_ERROR, "reconcile pass ran out of memory", NULL);
    for (size_t i = 0; i < actions.n; i++)
        execute(c, &actions.v[i]);
    c->queue_depth = actions.waiting;
    c->held_back = actions.more;
    c->wake_at = controller_wake_at(now, actions.wake_after_s);
    action_list_free(&actions);
    metrics_observe(&c->pass_latency, clock_mono_ns() - now);
}

void controller_tick(controller *c, uint64_t now)
{
    for (int i = 0; i < INF_COUNT; i++)
        if ((i != INF_IMAGEPULLJOBS || c->cfg.imagepulljobs) &&
            (i != INF_IMAGECACHES || c->cfg.imagecaches))
            informer_tick(&c->informers[i], now);
    if (c->cfg.leader_elect)
        leader_tick(&c->election, now);
    if (c->drop_queued) {
        /* the writes a leader queued go nowhere once it is not: end them
         * all now (not one by one as their turn would come) */
        c->drop_queued = 0;
        kube_client_drop_unwanted(c->client);
    }
    if (c->dropped > 0) {
        log_msg(LOG_INFO, "dropped queued writes", "%zu calls queued while leading were not sent: "
                "no longer leader", c->dropped);
        c->dropped = 0;
    }
    if (workset_expire(&c->work, now))
        c->dirty = 1; /* a pass must look at what was held back */
    if (c->wake_at != 0 && now >= c->wake_at) {
        c->wake_at = 0;
        c->dirty = 1; /* a plan's requeue time: not a resync later */
    }
    int resync = now - c->last_pass >= c->cfg.resync_ns;
    /* A due resync waits for the queue of writes too: a pass then would
     * only be held back by the bound. */
    if (c->leading && controller_synced(c) && (resync || c->dirty) &&
        now - c->last_pass >= PASS_MIN_INTERVAL_NS &&
        controller_pass_may_run(c->cfg.max_queued_writes, c->writes_queued, c->held_back)) {
        if (resync) {
            /* what nodes hold changes, and which pods a podSelector
             * picks: read them again when next needed */
            store_free(&c->nodes);
            store_free(&c->ipj_pod_nodes);
            /* and which CRD serves ImageCaches: one may replace the other */
            c->ic_rediscover = 1;
        }
        c->dirty = 0;
        c->last_pass = now;
        run_pass(c, now);
    }
}

/* ---- metrics ------------------------------------------------------------ */

/* A counter of each informer, labelled with its resource. */
static void render_per_informer(strbuf *t, controller *c, const char *name, const char *help,
                                size_t counter_offset)
{
    metrics_header(t, name, "counter", help);
    for (int i = 0; i < INF_COUNT; i++) {
        metrics_counter *n = (metrics_counter *)((char *)&c->informers[i] + counter_offset);
        strbuf_printf(t, "%s{resource=\"%s\"} %llu\n", name, c->informers[i].name,
                      (unsigned long long)metrics_get(n));
    }
}

void controller_render_metrics(controller *c, strbuf *t)
{
    render_per_informer(t, c, "ota_controller_watch_restarts_total",
                        "Watches re-opened after an error, a lost connection or 410 Gone.",
                        offsetof(informer, restarts));
    render_per_informer(t, c, "ota_controller_relists_total", "Complete lists of a resource.",
                        offsetof(informer, relists));
    metrics_header(t, "ota_controller_cached_objects", "gauge", "Objects in each cache.");
    for (int i = 0; i < INF_COUNT; i++)
        strbuf_printf(t, "ota_controller_cached_objects{resource=\"%s\"} %zu\n",
                      c->informers[i].name, c->informers[i].objects.len);
    kube_stats_render(kube_client_stats(c->client), t);
    size_t n[3];
    kube_client_counts(c->client, &n[0], &n[1], &n[2]);
    metrics_header(t, "ota_controller_api_calls", "gauge",
                   "Calls to the API server now: waiting for a rate-limit token or a connection "
                   "slot, delayed for a retry, or in flight.");
    static const char *const states[3] = {"waiting", "retrying", "in_flight"};
    for (int i = 0; i < 3; i++)
        strbuf_printf(t, "ota_controller_api_calls{state=\"%s\"} %zu\n", states[i], n[i]);
    metrics_header(t, "ota_controller_prepull_queue_depth", "gauge",
                   "Pre-pull requests waiting for a free slot (--max-concurrent-pulls).");
    strbuf_printf(t, "ota_controller_prepull_queue_depth %zu\n", c->queue_depth);
    static const char *const outcomes[PULL_N_OUTCOMES] = {
        [PULL_STARTED] = "started", [PULL_SUCCEEDED] = "succeeded", [PULL_FAILED] = "failed"};
    metrics_header(t, "ota_controller_pulls_total", "counter", "Pre-pulls by outcome.");
    for (int i = 0; i < PULL_N_OUTCOMES; i++)
        strbuf_printf(t, "ota_controller_pulls_total{outcome=\"%s\"} %llu\n", outcomes[i],
                      (unsigned long long)metrics_get(&c->pulls[i]));
    metrics_header(t, "ota_controller_reconcile_duration_seconds", "histogram",
                   "Time of one reconcile pass over every cached pod.");
    metrics_histogram *h = &c->pass_latency;
    metrics_histogram_render(t, "ota_controller_reconcile_duration_seconds", "", &h, 1);
    metrics_header(t, "ota_controller_prepull_duration_seconds", "histogram",
                   "From a pre-pull request (PodImageReady's time) to its outcome written, by "
                   "outcome.");
    static const char *const ends[2] = {"outcome=\"succeeded\"", "outcome=\"failed\""};
    for (int i = 0; i < 2; i++) {
        h = &c->prepull_duration[i];
        metrics_histogram_render_bounds(t, "ota_controller_prepull_duration_seconds", ends[i], &h,
                                        1, metrics_long_bounds);
    }
    metrics_header(t, "ota_controller_prepull_queue_wait_seconds", "histogram",
                   "From a pre-pull request to its Job created (waits for a free slot).");
    h = &c->queue_wait;
    metrics_histogram_render_bounds(t, "ota_controller_prepull_queue_wait_seconds", "", &h, 1,
                                    metrics_long_bounds);
    metrics_header(t, "ota_controller_leader", "gauge", "1 while this replica holds the lease.");
    strbuf_printf(t, "ota_controller_leader %d\n", c->leading);
    if (c->cfg.leader_elect) {
        /* client-go's name for it, labelled with the Lease's name */
        metrics_header(t, "leader_election_master_status", "gauge",
                       "1 while this replica leads the election on the Lease name, else 0.");
        strbuf_printf(t, "leader_election_master_status{name=\"");
        metrics_label_value(t, c->cfg.leader.name);
        strbuf_printf(t, "\"} %d\n", c->leading);
    }
    render_per_informer(t, c, "ota_controller_cache_store_failures_total",
                        "Objects a cache could not keep (out of memory); each forces a relist.",
                        offsetof(informer, store_failures));
}

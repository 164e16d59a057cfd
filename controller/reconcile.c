/*
 * reconcile.c - see reconcile.h.  One pass:
 *   1. index the newest revision of every OTA DaemonSet, and Jobs by pod;
 *   2. for each pod of such a DaemonSet: PodNeedUpgrade, stale Jobs, and
 *      the outcome of its pull request;
 *   3. start the waiting requests as the pull queue admits them
 *      (controller/pullq.h: the global cap, FIFO within a class, one pull
 *      per node, no Job for a node that is not Ready);
 *   4. the ImagePullJobs' writes (controller/ipj.h decides them; their
 *      nodes were offered to the queue in step 3 with the OTA requests,
 *      which go first);
 *   4b. the ImageCaches' writes likewise (controller/ic.h decides them;
 *      their (node, pull or purge) units were offered to the queue in
 *      step 3 as bulk units);
 *   5. mark the pods of a new revision PodNeedUpgrade, last: under a bound
 *      on writes (max_writes) a rollout's thousands of marks never hold
 *      back a pull's Job or its result by more than one bounded batch.
 */
#include "reconcile.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "autopull.h"
#include "ic.h"
#include "ic_write.h"
#include "imageref.h"
#include "ipj.h"
#include "json.h"
#include "kapi.h"
#include "ota_daemonset.h"
#include "ota_names.h"
#include "ota_state.h"
#include "prepull_job.h"
#include "pullmethod.h"
#include "pullq.h"
#include "purge_job.h"
#include "pullerr.h"
#include "strbuf.h"

typedef struct ds_view {
    const kobj *ds;
    const kobj *rev; /* newest owned revision */
    size_t marked;   /* pods this pass marks PendingUpgrade for rev */
    /* automatic pre-pull (autopull.h): its annotations, where its pods
     * stand this pass, its pods and those at rev that are Ready */
    autopull_spec ap;
    autopull_counts apc;
    size_t ap_pods, ap_updated_ready;
    size_t ap_to_pull; /* its pods pulled automatically: marked now or before */
} ds_view;

/* An ImagePullJob of this pass: its spec and its plan (arena memory). */
typedef struct ipj_run {
    const kobj *cr;
    ipj_spec spec;
    ipj_plan plan;
} ipj_run;

/* An ImageCache of this pass: its spec, the Jobs of its current action,
 * its plan (arena memory). */
typedef struct ic_run {
    const kobj *cr;
    ic_spec spec;
    ic_plan plan;
    const char *identity[2]; /* its current action's Jobs (IC_OP_PULL, IC_OP_PURGE), or NULL */
} ic_run;

/* A pull unit waiting for a Job: an OTA request (pod set), an
 * ImagePullJob's node (ipj set) or an ImageCache's (node, op) (ic set). */
typedef struct candidate {
    const kobj *pod;
    const ds_view *view;
    const char *request_time;
    const ipj_run *ipj;
    const ipj_node *node;
    const ic_run *ic;
    const ic_unit *ic_unit;
    pullq_unit unit; /* its place in the pull queue */
    pull_job_method ota_method; /* an OTA request's: which of its Jobs (pullmethod_plan) */
} candidate;

/* A pod whose PodNeedUpgrade is not what its DaemonSet's newest revision
 * says: marked in step 4. */
typedef struct mark {
    const kobj *pod;
    const ds_view *view;
    autopull_pod_verdict ap; /* AUTOPULL_MARK or _OPT_OUT: AutoPrePull in the same write */
    int ap_only;             /* PodNeedUpgrade is right: AutoPrePull alone */
} mark;

typedef struct pass {
    const reconcile_input *in;
    action_list *out;
    ds_view *views;
    size_t n_views;
    const kobj **jobs; /* sorted by pod uid */
    size_t n_jobs;
    candidate *cands;
    size_t n_cands, cap_cands;
    mark *marks;
    size_t n_marks;
    mark *ap_pending; /* automatic pulls that may start, in store order */
    size_t n_ap_pending;
    ipj_run *ipjs;
    size_t n_ipjs;
    const kobj **ipj_jobs; /* Jobs with no pod uid, sorted by owner uid */
    size_t n_ipj_jobs;
    ic_run *ics;
    size_t n_ics;
    store ic_pods;   /* "namespace/job name" -> its pull pod (the newest live one) */
    int ic_pods_built;
    arena arena;           /* the ImagePullJobs' plans */
    size_t writes;  /* write actions emitted (all but ACTION_GET_NODE) */
    int failed;
} pass;

/* ---- actions ------------------------------------------------------------ */

const char *action_kind_name(action_kind k)
{
    switch (k) {
    case ACTION_PATCH_POD_STATUS:
        return "patch-pod-status";
    case ACTION_CREATE_JOB:
        return "create-job";
    case ACTION_DELETE_JOB:
        return "delete-job";
    case ACTION_CREATE_EVENT:
        return "create-event";
    case ACTION_GET_NODE:
        return "get-node";
    case ACTION_LIST_PODS:
        return "list-pods";
    case ACTION_PATCH_JOB:
        return "patch-job";
    case ACTION_PATCH_IPJ_STATUS:
        return "patch-imagepulljob-status";
    case ACTION_PATCH_IPJ:
        return "patch-imagepulljob";
    case ACTION_DELETE_IPJ:
        return "delete-imagepulljob";
    case ACTION_GET_IC_DISCOVERY:
        return "get-imagecache-discovery";
    case ACTION_PATCH_IC_STATUS:
        return "patch-imagecache-status";
    case ACTION_PATCH_IC:
        return "patch-imagecache";
    case ACTION_PUT_IC:
        return "put-imagecache";
    }
    return "unknown";
}

int action_is_read(action_kind k)
{
    return k == ACTION_GET_NODE || k == ACTION_LIST_PODS || k == ACTION_GET_IC_DISCOVERY;
}

void action_list_free(action_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].query);
        free(l->v[i].namespace);
        free(l->v[i].name);
        free(l->v[i].body);
        free(l->v[i].key);
        free(l->v[i].note.subject);
        free(l->v[i].note.node);
        free(l->v[i].note.reason);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static int skipped(const pass *p, const char *key)
{
    for (size_t i = 0; i < sizeof(p->in->skip) / sizeof(p->in->skip[0]); i++)
        if (p->in->skip[i] != NULL && strset_has(p->in->skip[i], key))
            return 1;
    return 0;
}

/* Whether one more write may be emitted (in->max_writes); if not, the
 * pass says it held some back.  Asked after the skip sets (a write in
 * flight is neither counted nor held back: its end makes a pass anyway)
 * and before a body is built. */
static int may_write(pass *p)
{
    if (p->in->max_writes == 0 || p->writes < p->in->max_writes)
        return 1;
    p->out->more = 1;
    return 0;
}

/* Takes ownership of body. */
static void emit(pass *p, action_kind kind, const char *ns, const char *name, char *body,
                 const char *key, action_outcome outcome)
{
    action_list *l = p->out;
    if (l->n == l->cap) {
        size_t cap = l->cap == 0 ? 16 : l->cap * 2;
        action *grown = realloc(l->v, cap * sizeof(*grown));
        if (grown == NULL) {
            free(body);
            p->failed = 1;
            return;
        }
        l->v = grown;
        l->cap = cap;
    }
    action *a = &l->v[l->n];
    *a = (action){kind, dup_or_null(ns), dup_or_null(name), body, dup_or_null(key), outcome, {0},
                  NULL};
    if ((ns != NULL && a->namespace == NULL) || (name != NULL && a->name == NULL) ||
        a->key == NULL) {
        free(a->namespace);
        free(a->name);
        free(a->body);
        free(a->key);
        p->failed = 1;
        return;
    }
    l->n++;
    if (!action_is_read(kind))
        p->writes++;
}

/* Notes the action emit() just added (if it did; out of memory, the note
 * is left out: it only feeds a log line). */
static void note_last(pass *p, size_t before, const kobj *subject, const char *node,
                      const char *reason, const char *request_time, size_t count)
{
    action_list *l = p->out;
    if (l->n == before)
        return;
    action_note *n = &l->v[l->n - 1].note;
    char ref[512];
    n->subject = strdup(kobj_ref(subject, ref, sizeof(ref)));
    n->node = dup_or_null(node);
    n->reason = dup_or_null(reason);
    n->request_epoch = kobj_parse_time(request_time);
    n->count = count;
}

/* ---- JSON --------------------------------------------------------------- */

/* The Event's name: the object's, then 16 hex of a hash of the Event's
 * key, so that the same Event asked again (after a restart, or by a new
 * leader: which Events were sent is kept in memory only) is a 409, not a
 * second Event. */
static void event_name(char *out, size_t size, const char *object, const char *key)
{
    /* the Jobs' own hash (prepull_job.h): one FNV in the controller */
    snprintf(out, size, "%.230s.%016" PRIx64, object, pull_job_hash64(key, NULL, NULL));
}

static char *event_body(const kobj *pod, const char *api_version, const char *kind,
                        const char *reason, const char *type, const char *message,
                        const char *now, const char *key)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    char name[300];
    event_name(name, sizeof(name), pod->meta.name, key);
    json_map_open(&w, NULL);
    json_kv_str(&w, "apiVersion", "v1");
    json_kv_str(&w, "kind", "Event");
    json_map_open(&w, "metadata");
    json_kv_str(&w, "name", name);
    json_kv_str(&w, "namespace", pod->meta.namespace);
    json_map_close(&w);
    json_map_open(&w, "involvedObject");
    json_kv_str(&w, "apiVersion", api_version);
    json_kv_str(&w, "kind", kind);
    json_kv_str(&w, "namespace", pod->meta.namespace);
    json_kv_str(&w, "name", pod->meta.name);
    json_kv_str(&w, "uid", pod->meta.uid);
    json_map_close(&w);
    json_kv_str(&w, "reason", reason);
    json_kv_str(&w, "message", message);
    json_kv_str(&w, "type", type);
    json_map_open(&w, "source");
    json_kv_str(&w, "component", "ota-controller");
    json_map_close(&w);
    json_kv_str(&w, "reportingComponent", "ota-controller");
    json_kv_str(&w, "firstTimestamp", now);
    json_kv_str(&w, "lastTimestamp", now);
    json_kv_int(&w, "count", 1);
    json_map_close(&w);
    return json_writer_take(&w);
}

/* An Event about obj (of api_version and kind), once per key. */
static void emit_event_once(pass *p, const kobj *obj, const char *api_version, const char *kind,
                            const char *reason, const char *type, const char *message,
                            const char *key)
{
    if (strset_has(p->in->events_sent, key) || skipped(p, key) || !may_write(p))
        return;
    char *body = event_body(obj, api_version, kind, reason, type, message, p->in->now, key);
    if (body == NULL) {
        p->failed = 1;
        return;
    }
    emit(p, ACTION_CREATE_EVENT, obj->meta.namespace, NULL, body, key, ACTION_OUTCOME_NONE);
}

static void emit_event(pass *p, const kobj *pod, const char *reason, const char *type,
                       const char *message, const char *key_suffix)
{
    /* Every Event is about the pod's current request: its key names the
     * request (RECONCILE_EVENT_KEY), so that keys of requests and pods that
     * are gone can be forgotten (controller_event_key_live). */
    const char *asked = pod->u.pod.image_ready.last_transition_time;
    char key[600];
    snprintf(key, sizeof(key), RECONCILE_EVENT_KEY "%s|%s|%s:%s", pod->meta.uid,
             asked != NULL ? asked : "", reason, key_suffix);
    emit_event_once(p, pod, "v1", "Pod", reason, type, message, key);
}

/* The key of a status write about what on the pod as cached.  It names
 * the pod's version too: a decision made again from a newer pod is a new
 * write (the one before answered 409 or is done). */
static void status_key(char *key, size_t size, const kobj *pod, const char *what)
{
    const char *rv = pod->meta.resource_version != NULL ? pod->meta.resource_version : "";
    snprintf(key, size, "status:%s@%s:%s", pod->meta.uid, rv, what);
}

/* Whether that write is in flight or done lately (the cache has not
 * shown its result yet). */
static int status_skipped(const pass *p, const kobj *pod, const char *what)
{
    char key[600];
    status_key(key, sizeof(key), pod, what);
    return skipped(p, key);
}

static void emit_status(pass *p, const kobj *pod, const kapi_condition *conds, size_t n,
                        const char *what, action_outcome outcome)
{
    const char *rv = pod->meta.resource_version != NULL ? pod->meta.resource_version : "";
    char key[600];
    status_key(key, sizeof(key), pod, what);
    if (skipped(p, key) || !may_write(p))
        return;
    /* A result is written no earlier than the request it answers (whose
     * time is on the pod): the webhook then stamps the next request after
     * the result, so it never names this request's Job again, even when
     * the clocks of the two programs disagree. */
    const char *when = p->in->now, *asked = pod->u.pod.image_ready.last_transition_time;
    if (outcome != ACTION_OUTCOME_NONE && asked != NULL &&
        kobj_parse_time(asked) > kobj_parse_time(when))
        when = asked;
    /* merged by type, on the resourceVersion the decision was made from: a
     * node user may have written a newer request since, which a patch from
     * a lagging cache must never overwrite */
    char *body = kapi_conditions_patch(conds, n, rv, when);
    if (body == NULL) {
        p->failed = 1;
        return;
    }
    emit(p, ACTION_PATCH_POD_STATUS, pod->meta.namespace, pod->meta.name, body, key, outcome);
}

/* ---- indexes ------------------------------------------------------------ */

static int index_daemonsets(pass *p)
{
    const reconcile_input *in = p->in;
    p->views = calloc(in->daemonsets->len + 1, sizeof(*p->views));
    if (p->views == NULL)
        return -1;
    kobj *ds;
    for (size_t i = 0; (ds = store_next(in->daemonsets, &i)) != NULL;) {
        if (!ds->u.ds.ota || ds->meta.deleting)
            continue;
        const kobj *newest = NULL;
        kobj *rev;
        for (size_t j = 0; (rev = store_next(in->revisions, &j)) != NULL;) {
            if (rev->meta.owner_uid == NULL || strcmp(rev->meta.owner_uid, ds->meta.uid) != 0 ||
                rev->u.rev.hash == NULL)
                continue;
            if (newest == NULL || rev->u.rev.revision > newest->u.rev.revision)
                newest = rev;
        }
        if (newest != NULL) {
            ds_view *v = &p->views[p->n_views++];
            *v = (ds_view){.ds = ds, .rev = newest};
            const kobj_daemonset *d = &ds->u.ds;
            autopull_spec_parse(&v->ap, d->auto_parallelism, d->auto_timeout, d->auto_min_ready,
                                d->auto_window);
        }
    }
    return 0;
}

/* An OTA DaemonSet whose timeout annotation is not valid (written while
 * the webhook, which refuses it, was down) has its Jobs run to
 * --pull-timeout: said once per DaemonSet and value, as a Warning Event
 * (and the executor's warning line). */
static void bad_timeout_event(pass *p, const kobj *ds)
{
    const char *bad = ds->u.ds.bad_timeout;
    char key[600];
    snprintf(key, sizeof(key), RECONCILE_TIMEOUT_EVENT_KEY "%s|%.300s", ds->meta.uid, bad);
    char message[700];
    snprintf(message, sizeof(message),
             "annotation " OTA_ANN_PREPULL_TIMEOUT " is %.300s, not a whole number of seconds "
             "from %d to %d: pre-pull Jobs get the default deadline of %ld s (--pull-timeout)",
             bad, OTA_PREPULL_TIMEOUT_MIN, OTA_PREPULL_TIMEOUT_MAX, p->in->cfg->pull_timeout_s);
    size_t before = p->out->n;
    emit_event_once(p, ds, "apps/v1", "DaemonSet", OTA_EVENT_BAD_TIMEOUT, "Warning", message, key);
    note_last(p, before, ds, NULL, message, NULL, 0);
    if (p->out->n > before)
        p->out->v[p->out->n - 1].note.warn = 1;
}

static ds_view *view_of(const pass *p, const kobj *pod)
{
    if (pod->meta.owner_uid == NULL)
        return NULL;
    for (size_t i = 0; i < p->n_views; i++)
        if (strcmp(p->views[i].ds->meta.uid, pod->meta.owner_uid) == 0)
            return &p->views[i];
    return NULL;
}

/* What a Job is found by: an OTA request's, its pod's uid (label); an
 * ImagePullJob's, its controller's uid (ownerReference). */
static const char *job_pod_key(const kobj *job)
{
    return job->u.job.pod_uid;
}

static const char *job_owner_key(const kobj *job)
{
    return job->u.job.pod_uid == NULL ? job->meta.owner_uid : NULL;
}

static int cmp_job_pod_uid(const void *a, const void *b)
{
    const kobj *x = *(const kobj *const *)a, *y = *(const kobj *const *)b;
    return strcmp(job_pod_key(x), job_pod_key(y));
}

static int cmp_job_owner_uid(const void *a, const void *b)
{
    const kobj *x = *(const kobj *const *)a, *y = *(const kobj *const *)b;
    return strcmp(job_owner_key(x), job_owner_key(y));
}

/* The Jobs that have a key, sorted by it, into *out. */
static int index_jobs_by(const store *jobs, const char *(*key_of)(const kobj *),
                         int (*cmp)(const void *, const void *), const kobj ***out, size_t *n)
{
    *out = calloc(jobs->len + 1, sizeof(**out));
    if (*out == NULL)
        return -1;
    kobj *job;
    for (size_t i = 0; (job = store_next(jobs, &i)) != NULL;)
        if (key_of(job) != NULL)
            (*out)[(*n)++] = job;
    qsort(*out, *n, sizeof(**out), cmp);
    return 0;
}

/* OTA requests' Jobs by pod; an ImagePullJob's Jobs (no pod uid label)
 * are never an OTA request's, stale or not. */
static int index_jobs(pass *p)
{
    return index_jobs_by(p->in->jobs, job_pod_key, cmp_job_pod_uid, &p->jobs, &p->n_jobs);
}

/* The Jobs in v (sorted by key_of) whose key is key: [*first, *first + n). */
static size_t jobs_keyed(const kobj *const *v, size_t len, const char *(*key_of)(const kobj *),
                         const char *key, size_t *first)
{
    size_t lo = 0, hi = len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(key_of(v[mid]), key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < len && strcmp(key_of(v[lo + n]), key) == 0)
        n++;
    *first = lo;
    return n;
}

/* The Jobs of one pod: [*first, *first + n). */
static size_t jobs_of(const pass *p, const char *pod_uid, size_t *first)
{
    return jobs_keyed(p->jobs, p->n_jobs, job_pod_key, pod_uid, first);
}

/* ---- per pod ------------------------------------------------------------ */

static int same(const char *a, const char *b)
{
    return sv_same(sv_from(a), sv_from(b));
}

static void delete_job(pass *p, const kobj *job)
{
    if (job->meta.deleting)
        return;
    char key[512];
    snprintf(key, sizeof(key), "delete-job:%s", job->meta.uid);
    if (skipped(p, key) || !may_write(p))
        return;
    emit(p, ACTION_DELETE_JOB, job->meta.namespace, job->meta.name, NULL, key,
         ACTION_OUTCOME_NONE);
}

long reconcile_deadline(const kobj *ds, const reconcile_config *cfg,
                        reconcile_deadline_source *source)
{
    reconcile_deadline_source s = RECONCILE_DEADLINE_FLAG;
    long seconds = cfg->pull_timeout_s;
    if (ds->u.ds.timeout_seconds > 0) {
        s = RECONCILE_DEADLINE_ANNOTATION;
        seconds = ds->u.ds.timeout_seconds;
    } else if (ds->u.ds.bad_timeout != NULL) {
        /* written while the webhook, which refuses it, was not there */
        s = RECONCILE_DEADLINE_BAD_ANNOTATION;
    }
    if (source != NULL)
        *source = s;
    return seconds;
}

const char *reconcile_deadline_source_name(reconcile_deadline_source s)
{
    switch (s) {
    case RECONCILE_DEADLINE_FLAG:
        return "--pull-timeout";
    case RECONCILE_DEADLINE_ANNOTATION:
        return "annotation " OTA_ANN_PREPULL_TIMEOUT;
    case RECONCILE_DEADLINE_AUTO_ANNOTATION:
        return "annotation " OTA_ANN_PREDOWNLOAD_TIMEOUT " (an automatic pre-pull)";
    case RECONCILE_DEADLINE_BAD_ANNOTATION:
        return "--pull-timeout (annotation " OTA_ANN_PREPULL_TIMEOUT " is not valid)";
    case RECONCILE_DEADLINE_IMAGEPULLJOB:
        return "pullPolicy: timeoutSeconds x (backoffLimit + 1) + 60 s";
    case RECONCILE_DEADLINE_IMAGECACHE:
        return "--image-pull-deadline-duration x images + 60 s";
    }
    return "?";
}

static autopull_cond auto_cond_of(const kobj *pod, const ds_view *v);

/* An automatic pull's deadline: Kruise's timeout annotation when the
 * DaemonSet has a valid one (autopull.h), else the request's. */
static long deadline_src(const pass *p, const ds_view *v, const kobj *pod,
                         reconcile_deadline_source *source)
{
    if (v->ap.timeout_s > 0 && auto_cond_of(pod, v) == AUTOPULL_COND_TRUE_H) {
        if (source != NULL)
            *source = RECONCILE_DEADLINE_AUTO_ANNOTATION;
        return v->ap.timeout_s;
    }
    return reconcile_deadline(v->ds, p->in->cfg, source);
}

static long deadline_of(const pass *p, const ds_view *v, const kobj *pod)
{
    return deadline_src(p, v, pod, NULL);
}

/* The node's containerRuntimeVersion, as the informer or a GET has it. */
static const char *runtime_of(const pass *p, const char *node_name)
{
    const kobj *n = node_name != NULL && p->in->node_states != NULL
                        ? store_get(p->in->node_states, node_name)
                        : NULL;
    if (n == NULL && node_name != NULL && p->in->nodes != NULL)
        n = store_get(p->in->nodes, node_name);
    return n != NULL ? n->u.node.runtime_version : NULL;
}

/* Which Jobs an OTA request has, by method (controller/pullmethod.h). */
static void plan_for(const pass *p, const kobj *pod, const ds_view *v, pullmethod_plan *plan)
{
    const kobj_revision *rev = &v->rev->u.rev;
    pullmethod_plan_request((pullmethod_mode)p->in->cfg->pull_method, pod->u.pod.node_name,
                            runtime_of(p, pod->u.pod.node_name), p->in->pull_memory,
                            (const char *const *)rev->init_images, rev->n_init_images,
                            (const char *const *)rev->images, rev->n_images,
                            (const char *const *)rev->volume_images, rev->n_volume_images, plan);
}

/* The name of an OTA request's Job (prepull_job_method_name). */
static void ota_job_name(char *out, const kobj *pod, const char *hash, const char *request_time,
                         pull_job_method method)
{
    prepull_job_method_name(out, pod->meta.name, pod->meta.uid, hash, request_time, method);
}

static prepull_job_spec spec_for(const pass *p, const kobj *pod, const ds_view *v,
                                 const char *request_time)
{
    const kobj_revision *rev = &v->rev->u.rev;
    return (prepull_job_spec){
        .pod_namespace = pod->meta.namespace,
        .pod_name = pod->meta.name,
        .pod_uid = pod->meta.uid,
        .node_name = pod->u.pod.node_name,
        .revision_hash = rev->hash,
        .request_time = request_time,
        .init_images = (const char *const *)rev->init_images,
        .n_init_images = rev->n_init_images,
        .images = (const char *const *)rev->images,
        .n_images = rev->n_images,
        .pull_secrets = (const char *const *)rev->pull_secrets,
        .n_pull_secrets = rev->n_pull_secrets,
        .helper_image = p->in->cfg->helper_image,
        .active_deadline_seconds = deadline_of(p, v, pod),
        .backoff_limit = p->in->cfg->backoff_limit,
    };
}

/* The kubelet's word on why a Job failed: the first container of its pods
 * still waiting on an image.  What the controller remembered comes first: it
 * is as fresh as the pods, and keeps a pull error's cause through the
 * back-off that follows it. */
static const kobj *waiting_pod_of(const pass *p, const kobj *job)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", job->meta.namespace, job->meta.name);
    const kobj *remembered = p->in->job_waiting != NULL ? store_get(p->in->job_waiting, key) : NULL;
    if (remembered != NULL)
        return remembered;
    kobj *jp;
    for (size_t i = 0; (jp = store_next(p->in->job_pods, &i)) != NULL;)
        if (jp->u.job_pod.waiting_reason != NULL && same(jp->u.job_pod.job_name, job->meta.name) &&
            same(jp->meta.namespace, job->meta.namespace))
            return jp;
    return NULL;
}

/* Outcome Events are keyed by the request's Job name, not the revision: a
 * retry that fails again, or a re-pull that succeeds again, is a step of
 * its own, as its PrePullQueued/PrePullStarted were. */
/* How a failure came about, for the words that follow the kubelet's. */
typedef enum failure_kind {
    FAILURE_JOB,      /* the Job failed (its reason says why) */
    FAILURE_DEADLINE, /* the deadline passed before the Job controller saw it */
    FAILURE_FAST,     /* an error that waiting will not heal: the Job is ended */
} failure_kind;

static void report_failure(pass *p, const kobj *pod, const kobj *job, const ds_view *v,
                           failure_kind kind)
{
    const kobj *jp = waiting_pod_of(p, job);
    char why[1024];
    if (jp != NULL)
        snprintf(why, sizeof(why), "%s: %s", jp->u.job_pod.waiting_reason,
                 jp->u.job_pod.waiting_message != NULL ? jp->u.job_pod.waiting_message : "");
    else
        snprintf(why, sizeof(why), "%s: %s",
                 job->u.job.failed_reason != NULL ? job->u.job.failed_reason : "Failed",
                 job->u.job.failed_message != NULL ? job->u.job.failed_message : "");
    /* After the kubelet's words, ours: what to do about it.  why is cut
     * to leave them room. */
    char after[300] = "";
    /* A larger deadline helps a pull that was slow or retrying, not one
     * the registry refused. */
    int refused = jp != NULL &&
                  pullerr_refused(jp->u.job_pod.waiting_reason, jp->u.job_pod.waiting_message);
    if (!refused && (kind == FAILURE_DEADLINE || (kind == FAILURE_JOB &&
                                                  same(job->u.job.failed_reason, "DeadlineExceeded"))))
        snprintf(after, sizeof(after),
                 " (not done within the deadline of %ld s; a larger image or a slower link "
                 "needs more: set the DaemonSet annotation " OTA_ANN_PREPULL_TIMEOUT ")",
                 deadline_of(p, v, pod));
    else if (kind == FAILURE_FAST)
        snprintf(after, sizeof(after),
                 " (not waiting for the deadline: the kubelet's answer will not change)");
    char message[1400];
    snprintf(message, sizeof(message), "pull image job %s failed: %.1000s%s", job->meta.name, why,
             after);
    kapi_condition c = {OTA_COND_IMAGE_READY, "False", OTA_REASON_PULL_FAIL, message, 0};
    char what[300];
    snprintf(what, sizeof(what), "failed:%s", job->meta.name);
    size_t before = p->out->n;
    emit_status(p, pod, &c, 1, what, ACTION_OUTCOME_PULL_FAILED);
    note_last(p, before, pod, pod->u.pod.node_name, why,
              pod->u.pod.image_ready.last_transition_time, 0);
    emit_event(p, pod, OTA_EVENT_FAILED, "Warning", message, job->meta.name);
}

static void report_success(pass *p, const kobj *pod, const char *hash, const char *job,
                           const char *how)
{
    char message[300];
    snprintf(message, sizeof(message), OTA_MSG_REVISION_PREFIX "%s", hash);
    kapi_condition c = {OTA_COND_IMAGE_READY, "True", OTA_REASON_PULL_SUCCESS, message, 0};
    size_t before = p->out->n;
    emit_status(p, pod, &c, 1, "ready", ACTION_OUTCOME_PULL_SUCCEEDED);
    note_last(p, before, pod, pod->u.pod.node_name, how,
              pod->u.pod.image_ready.last_transition_time, 0);
    char text[400];
    snprintf(text, sizeof(text), "images of revision %s are on node %s (%s)", hash,
             pod->u.pod.node_name != NULL ? pod->u.pod.node_name : "?", how);
    emit_event(p, pod, OTA_EVENT_SUCCEEDED, "Normal", text, job);
}

/* Node.status.images lists every target image: nothing to pull.  Absence
 * proves nothing (the list holds 50 images at most), so this only ever
 * short-cuts. */
static int all_on_node(const kobj *node, char *const *images, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (size_t j = 0; j < node->u.node.n_images && !found; j++)
            found = imageref_same(images[i], node->u.node.images[j]);
        if (!found)
            return 0;
    }
    return 1;
}

static int images_on_node(const kobj *node, const kobj_revision *rev)
{
    return rev->n_images + rev->n_init_images > 0 &&
           all_on_node(node, rev->init_images, rev->n_init_images) &&
           all_on_node(node, rev->images, rev->n_images);
}

/* A hash of a message, to tell the messages of one pull apart in keys. */
static unsigned message_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a 32 */
    for (; s != NULL && *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return (unsigned)h;
}

/* A Job still running: the kubelet may be stuck on an image. */
static void running_pull(pass *p, const kobj *pod, const kobj *job, const ds_view *v)
{
    const kobj *jp = waiting_pod_of(p, job);
    if (jp == NULL)
        return;
    const kobj_job_pod *w = &jp->u.job_pod;
    pullerr_verdict verdict =
        pullerr_judge(w->waiting_reason, w->waiting_message, w->failed_attempts);
    /* An image that is not there, or not ours to pull, stays so: after
     * PULLERR_PERMANENT_ATTEMPTS such answers in a row (one may be a
     * registry's glitch), the request fails now rather than at the
     * deadline, 10 minutes later by default.  The Job is deleted once the
     * pod says Failed (reconcile_pod). */
    if (verdict == PULLERR_GIVE_UP) {
        report_failure(p, pod, job, v, FAILURE_FAST);
        return;
    }
    /* A pod that cannot pull never fails, so the Job's backoffLimit never
     * sees it; its deadline does, unless the Job controller lags: then
     * this does. */
    if (verdict != PULLERR_NOT_STUCK && job->u.job.start_epoch > 0 &&
        p->in->now_epoch > job->u.job.start_epoch + deadline_of(p, v, pod)) {
        report_failure(p, pod, job, v, FAILURE_DEADLINE);
        return;
    }
    /* Backing off for a cause that may heal: say so, once per message. */
    if (verdict == PULLERR_RETRYING) {
        char text[1100], suffix[120];
        snprintf(text, sizeof(text), "pull image job %s is retrying: %s: %.900s", job->meta.name,
                 w->waiting_reason, w->waiting_message);
        snprintf(suffix, sizeof(suffix), "%s:%08x", job->meta.name,
                 message_hash(w->waiting_message));
        emit_event(p, pod, OTA_EVENT_BACKOFF, "Warning", text, suffix);
    }
}

/* Whether the pod's AutoPrePull says its pull of the view's revision is
 * an automatic one (not handed over to its node user). */
static autopull_cond auto_cond_of(const kobj *pod, const ds_view *v)
{
    const kobj_cond *c = &pod->u.pod.auto_prepull;
    return autopull_cond_of(c->present, c->status, c->reason, c->message, v->rev->u.rev.hash);
}

/* An OTA request is an interactive unit: a node user waits on it; an
 * automatic pull (AutoPrePull True for H) is a bulk one. */
static void add_candidate(pass *p, const kobj *pod, const ds_view *v, const char *request_time,
                          pullq_node node_state, pull_job_method method)
{
    pullq_class cls =
        auto_cond_of(pod, v) == AUTOPULL_COND_TRUE_H ? PULLQ_BULK : PULLQ_INTERACTIVE;
    p->cands[p->n_cands++] = (candidate){
        pod,
        v,
        request_time,
        NULL,
        NULL,
        NULL,
        NULL,
        {cls, pod->u.pod.node_name, request_time, pod->meta.uid, node_state},
        method};
}

/* An artifact the node cannot pull (pullmethod.h): the request fails
 * with the plan's words once its other Jobs are done.  key names the
 * request (its Event and status write are said once). */
static void report_artifact_failure(pass *p, const kobj *pod, const char *hash,
                                    const pullmethod_plan *plan, const char *key)
{
    char message[1200];
    snprintf(message, sizeof(message),
             "pull image request for revision %s cannot be served: image %.300s: %s", hash,
             plan->artifacts[0], plan->why);
    kapi_condition c = {OTA_COND_IMAGE_READY, "False", OTA_REASON_PULL_FAIL, message, 0};
    char what[300];
    snprintf(what, sizeof(what), "failed:%s", key);
    size_t before = p->out->n;
    emit_status(p, pod, &c, 1, what, ACTION_OUTCOME_PULL_FAILED);
    note_last(p, before, pod, pod->u.pod.node_name, plan->why,
              pod->u.pod.image_ready.last_transition_time, 0);
    emit_event(p, pod, OTA_EVENT_FAILED, "Warning", message, key);
}

static void pull_request(pass *p, const kobj *pod, const ds_view *v)
{
    const kobj_cond *ir = &pod->u.pod.image_ready;
    const char *hash = v->rev->u.rev.hash;
    const char *request_time = ir->last_transition_time != NULL ? ir->last_transition_time : "";
    /* The request's Jobs, in the order they run (pullmethod_plan): the
     * helper Job (today's, and its name), then the image-volume Job. */
    pullmethod_plan plan;
    plan_for(p, pod, v, &plan);
    struct {
        int wanted;
        pull_job_method method;
        char name[PREPULL_JOB_NAME_MAX + 1];
        const kobj *job;
    } want[2] = {{pullmethod_plan_wants_helper(&plan), PULL_JOB_METHOD_HELPER, "", NULL},
                 {pullmethod_plan_wants_volume(&plan), PULL_JOB_METHOD_IMAGE_VOLUME, "", NULL}};
    for (size_t k = 0; k < 2; k++)
        ota_job_name(want[k].name, pod, hash, request_time, want[k].method);
    const char *name = want[0].name; /* the request's first name: its Events' key */
    size_t first, n = jobs_of(p, pod->meta.uid, &first);
    int others = 0;
    for (size_t i = first; i < first + n; i++) {
        const kobj *job = p->jobs[i];
        size_t k = 0;
        while (k < 2 && !(want[k].wanted && strcmp(job->meta.name, want[k].name) == 0))
            k++;
        if (k < 2) {
            want[k].job = job;
        } else {
            /* a retry, a re-pull, or a method the node turned out not to
             * have: the previous Job goes first */
            delete_job(p, job);
            others = 1;
        }
    }
    int artifact_failed = plan.n_artifacts > 0 && plan.artifact_verdict == PULLMETHOD_FAIL;
    const char *done_by = "pulled by job";
    int had_job = 0;
    for (size_t k = 0; k < 2; k++) {
        if (!want[k].wanted)
            continue;
        const kobj *mine = want[k].job;
        if (mine == NULL) {
            if (others)
                return; /* create once the old Job is gone */
            /* Not bound to a node yet: there is nowhere to pull, and no
             * image is at fault.  The request waits for the scheduler. */
            if (pod->u.pod.node_name == NULL)
                return;
            const kobj *node = store_get(p->in->nodes, pod->u.pod.node_name);
            if (node == NULL) {
                char key[300];
                snprintf(key, sizeof(key), "node:%s", pod->u.pod.node_name);
                emit(p, ACTION_GET_NODE, NULL, pod->u.pod.node_name, NULL, key,
                     ACTION_OUTCOME_NONE);
                /* decide once we know what the node has; meanwhile no
                 * later request takes the slot this one may need (FIFO) */
                add_candidate(p, pod, v, request_time, PULLQ_NODE_UNKNOWN, want[k].method);
                return;
            }
            if (!had_job && want[k].method == PULL_JOB_METHOD_HELPER &&
                images_on_node(node, &v->rev->u.rev)) {
                done_by = "already on the node";
                continue; /* nothing for the helper to pull */
            }
            const kobj *state = p->in->node_states != NULL
                                    ? store_get(p->in->node_states, pod->u.pod.node_name)
                                    : NULL;
            add_candidate(p, pod, v, request_time,
                          state != NULL && state->u.node.not_ready ? PULLQ_NODE_NOT_READY
                                                                   : PULLQ_NODE_READY,
                          want[k].method);
            return;
        }
        had_job = 1;
        if (mine->u.job.failed) {
            report_failure(p, pod, mine, v, FAILURE_JOB);
            return;
        }
        if (!mine->u.job.complete) {
            running_pull(p, pod, mine, v);
            return;
        }
        name = mine->meta.name;
    }
    if (artifact_failed) {
        char key[PREPULL_JOB_NAME_MAX + 32];
        snprintf(key, sizeof(key), "%s:artifact", want[0].name);
        report_artifact_failure(p, pod, hash, &plan, key);
        return;
    }
    report_success(p, pod, hash, name, had_job ? "pulled by job" : done_by);
}

static void unserved_pod(pass *p, const kobj *pod);

static int node_not_ready(const pass *p, const char *node_name)
{
    const kobj *state = p->in->node_states != NULL && node_name != NULL
                            ? store_get(p->in->node_states, node_name)
                            : NULL;
    return state != NULL && state->u.node.not_ready;
}

static void reconcile_pod(pass *p, const kobj *pod)
{
    ds_view *v = view_of(p, pod);
    if (pod->meta.deleting)
        return; /* being upgraded: GC takes its Jobs */
    if (v == NULL) {
        unserved_pod(p, pod);
        return;
    }
    const kobj_pod *pp = &pod->u.pod;
    const char *hash = v->rev->u.rev.hash;
    char want_msg[300];
    snprintf(want_msg, sizeof(want_msg), OTA_MSG_REVISION_PREFIX "%s", hash);
    const char *want_status = same(pp->hash, hash) ? "False" : "True";

    /* Jobs for an older revision are stale: background delete (a pull the
     * runtime already started finishes anyway, and warms the cache). */
    size_t first, n = jobs_of(p, pod->meta.uid, &first);
    for (size_t i = first; i < first + n; i++)
        if (!same(p->jobs[i]->u.job.revision_hash, hash))
            delete_job(p, p->jobs[i]);

    /* automatic pre-pull (autopull.h): the DaemonSet's pods, and those
     * at H that are Ready (min-updated-ready-pods) */
    v->ap_pods++;
    v->ap_updated_ready += same(pp->hash, hash) && pp->ready;
    autopull_pod_in api = {v->ap.opted_in, want_status[0] == 'T', OTA_STATE_PENDING_UPGRADE,
                           auto_cond_of(pod, v), node_not_ready(p, pp->node_name)};

    const kobj_cond *nu = &pp->need_upgrade;
    if (!nu->present || !same(nu->status, want_status) || !same(nu->message, want_msg)) {
        /* counted now, for the DaemonSet's Event: held back or not */
        v->marked += want_status[0] == 'T';
        /* AutoPrePull in the same write, as the pod will be once marked:
         * PendingUpgrade (its pre-pull state of an older revision dropped) */
        autopull_pod_verdict apv = AUTOPULL_NONE;
        if (want_status[0] == 'T' && !same(pp->image_ready.message, want_msg)) {
            apv = autopull_pod(&api);
            if (apv != AUTOPULL_MARK && apv != AUTOPULL_OPT_OUT)
                apv = AUTOPULL_NONE;
        }
        v->ap_to_pull += apv == AUTOPULL_MARK;
        p->marks[p->n_marks++] = (mark){pod, v, apv, 0};
        return; /* the rest waits for the pod as written */
    }
    /* PodNeedUpgrade says H: the rulebook tells whether a pull of H is asked. */
    ota_pod view = kobj_pod_view(pod);
    ota_state state = ota_state_of_pod(&view);
    api.state = state;
    autopull_pod_verdict apv = autopull_pod(&api);
    autopull_count(&v->apc, apv);
    v->ap_to_pull += apv == AUTOPULL_MARK || apv == AUTOPULL_PENDING ||
                     apv == AUTOPULL_WAITING || apv == AUTOPULL_RUNNING ||
                     apv == AUTOPULL_READY || apv == AUTOPULL_FAILED;
    if (apv == AUTOPULL_MARK || apv == AUTOPULL_OPT_OUT)
        /* opted in (or out) after the revision was marked: AutoPrePull alone */
        p->marks[p->n_marks++] = (mark){pod, v, apv, 1};
    else if (apv == AUTOPULL_PENDING)
        p->ap_pending[p->n_ap_pending++] = (mark){pod, v, apv, 0};
    if (state == OTA_STATE_PULLING) {
        pull_request(p, pod, v);
    } else if (state == OTA_STATE_FAILED) {
        /* A Job still running serves no request: one that failed fast.
         * (Finished Jobs stay until the next request.) */
        for (size_t i = first; i < first + n; i++) {
            const kobj_job *j = &p->jobs[i]->u.job;
            if (!j->complete && !j->failed)
                delete_job(p, p->jobs[i]);
        }
    }
}

reconcile_serve reconcile_serve_of(const kobj *pod, const kobj *owner, int has_revision,
                                   char *why, size_t size)
{
    char ref[300], ds_ref[300];
    kobj_ref(pod, ref, sizeof(ref));
    if (pod->meta.owner_uid == NULL) {
        snprintf(why, size,
                 "pod %s has no owner: its DaemonSet was deleted with --cascade=orphan, "
                 "or it never had one",
                 ref);
        return RECONCILE_NO_OWNER;
    }
    if (owner == NULL) {
        snprintf(why, size, "the owner of pod %s (uid %s) is not a DaemonSet that exists", ref,
                 pod->meta.owner_uid);
        return RECONCILE_OWNER_GONE;
    }
    if (owner->meta.deleting)
        return RECONCILE_WAIT; /* the GC deletes the pod or drops its ownerReference */
    kobj_ref(owner, ds_ref, sizeof(ds_ref));
    if (!owner->u.ds.ota) {
        snprintf(why, size,
                 "DaemonSet %s, the owner of pod %s, is not an OTA DaemonSet (annotation "
                 OTA_ANN_UPDATE_STRATEGY " is not " OTA_STRATEGY_OTA ")",
                 ds_ref, ref);
        return RECONCILE_NOT_OTA;
    }
    if (!has_revision) {
        snprintf(why, size, "DaemonSet %s, the owner of pod %s, has no ControllerRevision", ds_ref,
                 ref);
        return RECONCILE_NO_REVISION;
    }
    return RECONCILE_SERVED;
}

static int has_revision(const pass *p, const kobj *ds)
{
    kobj *rev;
    for (size_t j = 0; (rev = store_next(p->in->revisions, &j)) != NULL;)
        if (same(rev->meta.owner_uid, ds->meta.uid) && rev->u.rev.hash != NULL)
            return 1;
    return 0;
}

/* A pod no OTA DaemonSet serves (reconcile_serve_of): its pull request is
 * answered PullImageFail, and a PodNeedUpgrade True that nothing justifies
 * any more is removed, in one write.  Once written the pod is Current, and
 * the rulebook refuses a node user's next request on it. */
static void unserved_pod(pass *p, const kobj *pod)
{
    const kobj_pod *pp = &pod->u.pod;
    ota_pod view = kobj_pod_view(pod);
    int request = ota_state_is_pull_request(&view.image_ready);
    int stale_nu = pp->need_upgrade.present && same(pp->need_upgrade.status, "True");
    if (!request && !stale_nu)
        return; /* nothing was asked of us and nothing we wrote stands */
    const kobj *owner =
        pod->meta.owner_uid != NULL ? store_get(p->in->daemonsets, pod->meta.owner_uid) : NULL;
    char why[700];
    reconcile_serve verdict =
        reconcile_serve_of(pod, owner, owner != NULL && has_revision(p, owner), why, sizeof(why));
    if (verdict == RECONCILE_SERVED || verdict == RECONCILE_WAIT)
        return;
    /* An owner reference to a DaemonSet that is gone: the garbage collector
     * is about to delete the pod (a background delete) or drop the
     * reference (--cascade=orphan, then NO_OWNER).  Removing PodNeedUpgrade
     * now would be one write per pod of a deleted DaemonSet, for nothing;
     * a request (rare) is answered all the same. */
    if (verdict == RECONCILE_OWNER_GONE)
        stale_nu = 0;
    if (!request && !stale_nu)
        return;
    kapi_condition conds[2];
    size_t n = 0;
    char message[900];
    snprintf(message, sizeof(message), OTA_MSG_UNSERVED_PREFIX "%s", why);
    if (request)
        conds[n++] = (kapi_condition){OTA_COND_IMAGE_READY, "False", OTA_REASON_PULL_FAIL,
                                      message, 0};
    if (stale_nu)
        conds[n++] = (kapi_condition){OTA_COND_NEED_UPGRADE, NULL, NULL, NULL, 1};
    size_t before = p->out->n;
    emit_status(p, pod, conds, n, request ? "unserved" : "need-upgrade-cleared",
                request ? ACTION_OUTCOME_PULL_FAILED : ACTION_OUTCOME_NONE);
    note_last(p, before, pod, pp->node_name, why, pp->image_ready.last_transition_time, 0);
    if (request)
        emit_event(p, pod, OTA_EVENT_FAILED, "Warning", message, "unserved");
}

/* PodNeedUpgrade as the newest revision says (step 4). */
static void mark_pod(pass *p, const mark *m)
{
    const kobj *pod = m->pod;
    const char *hash = m->view->rev->u.rev.hash;
    char want_msg[300];
    snprintf(want_msg, sizeof(want_msg), OTA_MSG_REVISION_PREFIX "%s", hash);
    const char *want_status = same(pod->u.pod.hash, hash) ? "False" : "True";
    kapi_condition conds[3];
    size_t nconds = 0;
    if (!m->ap_only) {
        conds[nconds++] = (kapi_condition){OTA_COND_NEED_UPGRADE, want_status, NULL, want_msg, 0};
        /* A new revision drops the pre-pull state of the old one. */
        const kobj_cond *ir = &pod->u.pod.image_ready;
        if (ir->present && !same(ir->message, want_msg))
            conds[nconds++] = (kapi_condition){OTA_COND_IMAGE_READY, NULL, NULL, NULL, 1};
    }
    /* automatic pre-pull: the webhook's evidence that the DaemonSet opted
     * in for H (autopull.h), or no longer does */
    if (m->ap == AUTOPULL_MARK)
        conds[nconds++] = (kapi_condition){OTA_COND_AUTO_PREPULL, "True",
                                           OTA_REASON_AUTO_OPTED_IN, want_msg, 0};
    else if (m->ap == AUTOPULL_OPT_OUT)
        conds[nconds++] = (kapi_condition){OTA_COND_AUTO_PREPULL, "False",
                                           OTA_REASON_AUTO_OPTED_OUT, want_msg, 0};
    if (nconds == 0)
        return;
    char what[400];
    snprintf(what, sizeof(what), "%s:%s:%s%s",
             m->ap_only ? "auto-prepull" : "need-upgrade",
             m->ap_only ? (m->ap == AUTOPULL_MARK ? "True" : "False") : want_status, hash,
             !m->ap_only && m->ap == AUTOPULL_MARK       ? ":auto"
             : !m->ap_only && m->ap == AUTOPULL_OPT_OUT ? ":opted-out"
                                                        : "");
    emit_status(p, pod, conds, nconds, what, ACTION_OUTCOME_NONE);
}

static void report_render_failure(pass *p, const kobj *pod, const char *job, const char *err)
{
    char message[1200];
    snprintf(message, sizeof(message), "pull image job %s failed: InvalidImageName: %s", job, err);
    kapi_condition c = {OTA_COND_IMAGE_READY, "False", OTA_REASON_PULL_FAIL, message, 0};
    char what[300];
    snprintf(what, sizeof(what), "failed:%s", job);
    size_t before = p->out->n;
    emit_status(p, pod, &c, 1, what, ACTION_OUTCOME_PULL_FAILED);
    note_last(p, before, pod, pod->u.pod.node_name, message,
              pod->u.pod.image_ready.last_transition_time, 0);
    emit_event(p, pod, OTA_EVENT_FAILED, "Warning", message, job);
}

/* One Event on the DaemonSet per new revision, not one per pod: "marked
 * 120 pods PendingUpgrade for revision bpwch9f77j".  A restart in the
 * middle of the marking sends a second one for the pods left. */
static void revision_event(pass *p, const ds_view *v)
{
    const char *hash = v->rev->u.rev.hash;
    char key[512];
    snprintf(key, sizeof(key), RECONCILE_REVISION_EVENT_KEY "%s|%s", v->ds->meta.uid, hash);
    if (strset_has(p->in->events_sent, key))
        return;
    char message[300];
    snprintf(message, sizeof(message), "marked %zu pod%s PendingUpgrade for revision %s", v->marked, v->marked == 1 ? "" : "s", hash);
    char *body = event_body(v->ds, "apps/v1", "DaemonSet", OTA_EVENT_REVISION_MARKED, "Normal",
                            message, p->in->now, key);
    if (body == NULL) {
        p->failed = 1;
        return;
    }
    size_t before = p->out->n;
    emit(p, ACTION_CREATE_EVENT, v->ds->meta.namespace, NULL, body, key, ACTION_OUTCOME_NONE);
    note_last(p, before, v->ds, NULL, hash, NULL, v->marked);
}

/* ---- automatic pre-pull (autopull.h) ------------------------------------- */

/* Whether the DaemonSet's window is open now; a zone the system does not
 * know counts as closed (said by auto_bad_event). */
static int auto_window_open(const pass *p, const ds_view *v, int *zone_unknown)
{
    *zone_unknown = 0;
    if (!v->ap.window.present)
        return 1;
    int minute;
    if (autopull_minute_now(&v->ap.window, p->in->now_epoch, &minute) != 0) {
        *zone_unknown = 1;
        return 0;
    }
    return autopull_window_open(&v->ap.window, minute);
}

/* The automatic pulls that start this pass: each a Pulling write as the
 * controller (the webhook allows it while the stored pod says AutoPrePull
 * True for H), in store order, as many as autopull_starts says.  A start
 * in flight (or done, not yet in the cache) runs already: counted before
 * the rest, since pods marked meanwhile may come earlier in store order
 * (bench/autoprepull.py saw 7 at once at parallelism 5 without this).  A
 * write held back is picked again next pass, so the count never
 * overshoots. */
static void auto_starts(pass *p, ds_view *v)
{
    const char *hash = v->rev->u.rev.hash;
    char what[400];
    snprintf(what, sizeof(what), "auto-pull:%s", hash);
    for (size_t i = 0; i < p->n_ap_pending; i++)
        if (p->ap_pending[i].view == v && status_skipped(p, p->ap_pending[i].pod, what)) {
            v->apc.pending--;
            v->apc.running++;
        }
    int zone_unknown;
    autopull_gate g = {auto_window_open(p, v, &zone_unknown), v->ap_updated_ready,
                       autopull_min_ready_needed(&v->ap, v->ap_pods)};
    size_t n = autopull_starts(&v->ap, &g, &v->apc, NULL);
    char want_msg[300];
    snprintf(want_msg, sizeof(want_msg), OTA_MSG_REVISION_PREFIX "%s", hash);
    for (size_t i = 0; i < p->n_ap_pending && n > 0; i++) {
        if (p->ap_pending[i].view != v || status_skipped(p, p->ap_pending[i].pod, what))
            continue;
        const kobj *pod = p->ap_pending[i].pod;
        kapi_condition c = {OTA_COND_IMAGE_READY, "False", OTA_REASON_WAIT_PULL, want_msg, 0};
        size_t before = p->out->n;
        emit_status(p, pod, &c, 1, what, ACTION_OUTCOME_NONE);
        note_last(p, before, pod, pod->u.pod.node_name, "automatic pre-pull", NULL, 0);
        n--;
        v->apc.pending--;
        v->apc.running++;
    }
}

static void auto_event(pass *p, const ds_view *v, const char *reason, const char *what,
                       const char *message)
{
    char key[600];
    snprintf(key, sizeof(key), RECONCILE_AUTO_EVENT_KEY "%s|%s|%s", v->ds->meta.uid,
             v->rev->u.rev.hash, what);
    size_t before = p->out->n;
    emit_event_once(p, v->ds, "apps/v1", "DaemonSet", reason, "Normal", message, key);
    note_last(p, before, v->ds, NULL, message, NULL, 0);
}

/* AutoPrePullStarted and AutoPrePullFinished, once per DaemonSet and
 * revision each. */
static void auto_events(pass *p, const ds_view *v)
{
    const autopull_counts *c = &v->apc;
    const char *hash = v->rev->u.rev.hash;
    char message[400];
    if (autopull_started_due(c)) {
        snprintf(message, sizeof(message),
                 "automatic pre-pull of revision %s started: %zu pods to pull, at most %ld at once",
                 hash, v->ap_to_pull, v->ap.parallelism);
        auto_event(p, v, OTA_EVENT_AUTO_STARTED, "started", message);
    }
    if (autopull_finished_due(c)) {
        snprintf(message, sizeof(message),
                 "automatic pre-pull of revision %s finished: %zu ready, %zu failed, %zu waiting "
                 "(node NotReady)",
                 hash, c->ready, c->failed, c->waiting);
        auto_event(p, v, OTA_EVENT_AUTO_FINISHED, "finished", message);
    }
}

/* An automatic pre-pull annotation that is not valid (or a window's zone
 * the system does not know): a Warning Event, once per DaemonSet and
 * value. */
static void auto_bad_event(pass *p, const ds_view *v)
{
    int zone_unknown = 0;
    if (v->ap.opted_in && v->ap.window.present)
        (void)auto_window_open(p, v, &zone_unknown);
    if (v->ap.bad_annotation == NULL && !zone_unknown)
        return;
    char message[500], key[600];
    if (zone_unknown)
        snprintf(message, sizeof(message),
                 "annotation " OTA_ANN_PREPULL_WINDOW ": time zone %s is not known here "
                 "(tzdata): no automatic pre-pull starts",
                 v->ap.window.zone);
    else
        snprintf(message, sizeof(message), "annotation %s: %s%s", v->ap.bad_annotation,
                 v->ap.bad_why,
                 v->ap.opted_in ? ": the usual deadline applies" : ": no automatic pre-pull");
    snprintf(key, sizeof(key), RECONCILE_AUTO_EVENT_KEY "%s|bad|%08x", v->ds->meta.uid,
             message_hash(message));
    size_t before = p->out->n;
    emit_event_once(p, v->ds, "apps/v1", "DaemonSet", OTA_EVENT_AUTO_BAD, "Warning", message,
                    key);
    note_last(p, before, v->ds, NULL, message, NULL, 0);
    if (p->out->n > before)
        p->out->v[p->out->n - 1].note.warn = 1;
}

static int cmp_candidates(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    return pullq_cmp(&x->unit, &y->unit);
}

/* What holds pull slots already: each Job not finished, an OTA request's
 * or an ImagePullJob's, holds a global slot and its node's (its pod's
 * spec.nodeName; an OTA Job decoded without one: its request pod's node);
 * a Job being deleted
 * and a terminating pull pod hold their node's slot alone, as the runtime
 * goes on pulling until the pod is gone (a deleted pod does not cancel an
 * in-flight CRI pull).  One Job is counted once. */
static int occupy_slots(pass *p, pullq *q)
{
    strset counted;
    strset_init(&counted);
    int rc = 0;
    char key[512];
    kobj *job;
    for (size_t i = 0; (job = store_next(p->in->jobs, &i)) != NULL;) {
        if (job->u.job.complete || job->u.job.failed)
            continue;
        const char *node = job->u.job.node_name;
        if (node == NULL && job->u.job.pod_uid != NULL) {
            const kobj *pod = store_get(p->in->pods, job->u.job.pod_uid);
            node = pod != NULL ? pod->u.pod.node_name : NULL;
        }
        pullq_occupy(q, node, !job->meta.deleting);
        snprintf(key, sizeof(key), "%s/%s", job->meta.namespace, job->meta.name);
        if (strset_add(&counted, key) != 0)
            rc = -1;
    }
    kobj *jp;
    for (size_t i = 0; p->in->job_pods != NULL && (jp = store_next(p->in->job_pods, &i)) != NULL;) {
        if (!jp->meta.deleting || jp->u.job_pod.node_name == NULL || jp->u.job_pod.job_name == NULL)
            continue;
        snprintf(key, sizeof(key), "%s/%s", jp->meta.namespace, jp->u.job_pod.job_name);
        if (strset_has(&counted, key))
            continue;
        pullq_occupy(q, jp->u.job_pod.node_name, 0);
        if (strset_add(&counted, key) != 0)
            rc = -1;
    }
    strset_free(&counted);
    return rc != 0 || q->failed ? -1 : 0;
}

/* Emits the create of a Job from its rendered text: 0, or -1 when out
 * of memory. */
static int emit_create(pass *p, const char *ns, const char *name, const char *json, size_t len,
                       const char *key)
{
    char *body = malloc(len + 1);
    if (body == NULL) {
        p->failed = 1;
        return -1;
    }
    memcpy(body, json, len);
    body[len] = '\0';
    emit(p, ACTION_CREATE_JOB, ns, name, body, key, ACTION_OUTCOME_NONE);
    return 0;
}

/* Emits the create of a candidate's Job: 0; 1 when its body cannot be
 * rendered (reported failed instead); -1 when out of memory. */
static int create_job(pass *p, const candidate *c, const char *name, const char *key)
{
    arena a;
    arena_init(&a);
    int rc = 0;
    prepull_job_spec spec = spec_for(p, c->pod, c->view, c->request_time);
    if (c->ota_method == PULL_JOB_METHOD_IMAGE_VOLUME) {
        /* the runnable images where the plan says so, then the artifacts */
        pullmethod_plan plan;
        plan_for(p, c->pod, c->view, &plan);
        int runnable = plan.runnable && plan.runnable_verdict == PULLMETHOD_USE_IMAGE_VOLUME;
        size_t n_art = plan.artifact_verdict == PULLMETHOD_USE_IMAGE_VOLUME ? plan.n_artifacts : 0;
        size_t n_run = runnable ? spec.n_images : 0;
        const char **images = arena_alloc(&a, (n_run + n_art + 1) * sizeof(*images));
        if (images == NULL) {
            p->failed = 1;
            rc = -1;
            goto cleanup;
        }
        for (size_t i = 0; i < n_run; i++)
            images[i] = spec.images[i];
        for (size_t i = 0; i < n_art; i++)
            images[n_run + i] = plan.artifacts[i];
        if (!runnable) {
            spec.init_images = NULL;
            spec.n_init_images = 0;
        }
        spec.images = images;
        spec.n_images = n_run + n_art;
        spec.method = PULL_JOB_METHOD_IMAGE_VOLUME;
    }
    char err[512];
    const char *json = NULL;
    size_t len = 0;
    if (prepull_job_render(&spec, &a, &json, &len, err, sizeof(err)) != 0) {
        /* nothing to run: an image the kubelet would refuse, say */
        report_render_failure(p, c->pod, name, err);
        rc = 1;
        goto cleanup;
    }
    size_t before = p->out->n;
    if (emit_create(p, c->pod->meta.namespace, name, json, len, key) != 0) {
        rc = -1;
        goto cleanup;
    }
    note_last(p, before, c->pod, c->pod->u.pod.node_name, NULL, c->request_time, 0);
    if (p->out->n > before) {
        reconcile_deadline_source source;
        action_note *n = &p->out->v[p->out->n - 1].note;
        n->deadline_s = deadline_src(p, c->view, c->pod, &source);
        n->deadline_source = (int)source;
    }
cleanup:
    arena_free(&a);
    return rc;
}

/* Says once per request and per thing it waits for why it has no Job
 * yet (a PrePullQueued Event on the pod). */
static void queued_event(pass *p, const candidate *c, pullq_verdict verdict, const pullq *q)
{
    const char *hash = c->view->rev->u.rev.hash;
    const char *node = c->pod->u.pod.node_name != NULL ? c->pod->u.pod.node_name : "?";
    char text[400], qkey[300];
    switch (verdict) {
    case PULLQ_WAIT_NODE:
        snprintf(text, sizeof(text),
                 "pre-pull of revision %s waits for node %s to be Ready (it is NotReady or "
                 "unreachable)",
                 hash, node);
        snprintf(qkey, sizeof(qkey), "node:%s/%s", c->pod->meta.uid, c->request_time);
        break;
    case PULLQ_WAIT_NODE_SLOT:
        snprintf(text, sizeof(text),
                 "pre-pull of revision %s queued: node %s is pulling already "
                 "(--max-pulls-per-node)",
                 hash, node);
        snprintf(qkey, sizeof(qkey), "node-slot:%s/%s", c->pod->meta.uid, c->request_time);
        break;
    default:
        snprintf(text, sizeof(text), "pre-pull of revision %s queued: %zu pulls running", hash,
                 q->running);
        snprintf(qkey, sizeof(qkey), "%s/%s", c->pod->meta.uid, c->request_time);
        break;
    }
    emit_event(p, c->pod, OTA_EVENT_QUEUED, "Normal", text, qkey);
}

/* ---- ImagePullJobs (controller/ipj.h) ------------------------------------------ */

#define IPJ_API_VERSION OTA_KRUISE_GROUP "/" OTA_KRUISE_V1ALPHA1

/* An Event on an ImagePullJob, once per what (RECONCILE_IPJ_EVENT_KEY). */
static void ipj_event(pass *p, const kobj *cr, const char *reason, const char *type,
                      const char *message, const char *what)
{
    char key[700];
    snprintf(key, sizeof(key), RECONCILE_IPJ_EVENT_KEY "%s|%.500s", cr->meta.uid, what);
    emit_event_once(p, cr, IPJ_API_VERSION, OTA_KRUISE_KIND_IMAGEPULLJOB, reason, type, message,
                    key);
}

/* A podSelector's list query: "labelSelector=<selector, escaped>", in
 * arena memory, or NULL when out of memory. */
static const char *pod_list_query(pass *p, const ipj_selector *sel)
{
    const char *selector = ipj_selector_string(sel, &p->arena);
    if (selector == NULL)
        return NULL;
    strbuf b = {0};
    strbuf_printf(&b, "labelSelector=");
    kapi_escape(&b, selector);
    const char *query = !b.failed && b.data != NULL ? arena_strndup(&p->arena, b.data, b.len) : NULL;
    strbuf_free(&b);
    return query;
}

/* D10: the nodes of a podSelector's pods, as listed for the selector as
 * it is now; when there is no such answer (not asked, or asked for an
 * older selector), the list is asked for (a read: any replica, no bound)
 * and *answer left NULL.  0, or -1 when out of memory. */
static int pod_nodes_of(pass *p, const ipj_run *run, const kobj **answer)
{
    *answer = NULL;
    const char *query = pod_list_query(p, &run->spec.pod_selector);
    if (query == NULL)
        return -1;
    const kobj *got = p->in->ipj_pod_nodes != NULL
                          ? store_get(p->in->ipj_pod_nodes, run->cr->meta.uid) : NULL;
    if (got != NULL && same(got->u.pod_nodes.query, query)) {
        *answer = got;
        return 0;
    }
    char key[1200];
    snprintf(key, sizeof(key), "list-pods:%s?%.1000s", run->cr->meta.uid, query);
    if (skipped(p, key))
        return 0;
    size_t before = p->out->n;
    emit(p, ACTION_LIST_PODS, run->cr->meta.namespace, run->cr->meta.uid, NULL, key,
         ACTION_OUTCOME_NONE);
    if (p->out->n > before) {
        p->out->v[before].query = strdup(query);
        if (p->out->v[before].query == NULL)
            p->failed = 1;
    }
    return 0;
}

static int cmp_node_name(const void *a, const void *b)
{
    return strcmp((*(const kobj *const *)a)->meta.name, (*(const kobj *const *)b)->meta.name);
}

/* An ImagePullJob's pass: its Jobs and what their pods wait on, its plan,
 * and its offered nodes as bulk candidates.  0; 1 when its spec does not
 * decode (said in an Event; nothing else is done for it); -1 when out of
 * memory. */
static int plan_imagepulljob(pass *p, ipj_run *run, const kobj *const *nodes, size_t n_nodes)
{
    const kobj *cr = run->cr;
    const char *text = cr->u.ipj.spec != NULL ? cr->u.ipj.spec : "";
    char err[300];
    const char *why = ipj_decode(&run->spec, text, strlen(text), &p->arena, err, sizeof(err)) != 0
                          ? err
                          : ipj_unservable(&run->spec, &p->arena);
    if (why != NULL) {
        /* the webhook refuses these; one written around it waits for an
         * edit (said once per generation) */
        char what[64];
        snprintf(what, sizeof(what), "spec|%lld", cr->u.ipj.generation);
        ipj_event(p, cr, OTA_EVENT_IPJ_NOT_SERVED, "Warning", why, what);
        if (!cr->meta.deleting)
            return 1;
        /* being deleted: Kruise's finalizer must not hold it (D9), and
         * deciding that needs no spec */
        memset(&run->spec, 0, sizeof(run->spec));
    }
    size_t first = 0, n = 0;
    if (p->ipj_jobs != NULL)
        n = jobs_keyed(p->ipj_jobs, p->n_ipj_jobs, job_owner_key, cr->meta.uid, &first);
    const kobj **waiting = arena_alloc(&p->arena, (n + 1) * sizeof(*waiting));
    if (waiting == NULL)
        return -1;
    /* what is done or deleted reads neither its Jobs' pods nor its pods */
    int live = !cr->meta.deleting && ipj_done_of(cr) != IPJ_DONE;
    for (size_t i = 0; i < n; i++) {
        const kobj *job = p->ipj_jobs[first + i];
        /* a Job that succeeded needs no words: most of a large job's, and
         * each lookup may walk every pull pod */
        waiting[i] = live && !job->u.job.complete ? waiting_pod_of(p, job) : NULL;
    }
    const kobj *pod_nodes = NULL;
    if (live && run->spec.pod_selector.present && pod_nodes_of(p, run, &pod_nodes) != 0)
        return -1;
    ipj_input in = {cr, &run->spec, nodes, n_nodes, p->ipj_jobs + first, waiting, n,
                    pod_nodes, p->in->now, p->in->now_epoch};
    if (ipj_decide(&in, &p->arena, &run->plan) != 0)
        return -1;
    const char *queued = cr->u.ipj.creation_time != NULL ? cr->u.ipj.creation_time : "";
    /* room for its offers (at most parallelism of them), as they come:
     * never jobs x nodes at once */
    size_t offers = 0;
    for (size_t k = 0; k < run->plan.n_nodes; k++)
        offers += (size_t)run->plan.nodes[k].offer;
    if (p->n_cands + offers > p->cap_cands) {
        size_t cap = p->cap_cands * 2 > p->n_cands + offers ? p->cap_cands * 2 : p->n_cands + offers;
        candidate *grown = realloc(p->cands, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        p->cands = grown;
        p->cap_cands = cap;
    }
    for (size_t k = 0; k < run->plan.n_nodes; k++) {
        const ipj_node *node = &run->plan.nodes[k];
        if (!node->offer)
            continue;
        const char *id = arena_printf(&p->arena, "%s/%s", cr->meta.uid, node->name);
        if (id == NULL)
            return -1;
        /* a bulk unit: every OTA request, a node user waiting, goes first */
        p->cands[p->n_cands++] = (candidate){
            NULL, NULL, NULL, run, node, NULL, NULL,
            {PULLQ_BULK, node->name, queued, id, PULLQ_NODE_READY},
            PULL_JOB_METHOD_HELPER};
    }
    return 0;
}

/* Every ImagePullJob's plan (none without the CRD, or before the Nodes
 * are known: every CR would select nothing and complete). */
static int plan_imagepulljobs(pass *p)
{
    const reconcile_input *in = p->in;
    if (in->imagepulljobs == NULL || in->node_states == NULL || in->imagepulljobs->len == 0)
        return 0;
    const kobj **nodes = calloc(in->node_states->len + 1, sizeof(*nodes));
    p->ipjs = calloc(in->imagepulljobs->len + 1, sizeof(*p->ipjs));
    int rc = -1;
    if (nodes == NULL || p->ipjs == NULL ||
        index_jobs_by(in->jobs, job_owner_key, cmp_job_owner_uid, &p->ipj_jobs, &p->n_ipj_jobs) != 0)
        goto cleanup;
    size_t n_nodes = 0;
    kobj *o;
    for (size_t i = 0; (o = store_next(in->node_states, &i)) != NULL;)
        nodes[n_nodes++] = o;
    qsort(nodes, n_nodes, sizeof(*nodes), cmp_node_name);
    for (size_t i = 0; (o = store_next(in->imagepulljobs, &i)) != NULL;) {
        ipj_run *run = &p->ipjs[p->n_ipjs];
        *run = (ipj_run){.cr = o};
        int planned = plan_imagepulljob(p, run, nodes, n_nodes);
        if (planned < 0)
            goto cleanup;
        if (planned == 0)
            p->n_ipjs++;
    }
    rc = 0;
cleanup:
    free(nodes);
    return rc;
}

/* Emits the create of an ImagePullJob node's Job: 0; 1 when it cannot be
 * rendered (said in an Event; the node waits for an edit); -1 when out of
 * memory. */
static int create_ipj_job(pass *p, const candidate *c, const char *name, const char *key)
{
    const ipj_run *run = c->ipj;
    pull_job_spec spec;
    if (ipj_job_spec(&spec, run->cr, &run->spec, &run->plan, c->node->name, name,
                     p->in->cfg->helper_image, &p->arena) != 0) {
        p->failed = 1;
        return -1;
    }
    char err[512];
    const char *json = NULL;
    size_t len = 0;
    if (pull_job_render(&spec, &p->arena, &json, &len, err, sizeof(err)) != 0) {
        char what[100];
        snprintf(what, sizeof(what), "render|%s", run->plan.spec_hash);
        ipj_event(p, run->cr, OTA_EVENT_IPJ_FAILED, "Warning", err, what);
        return 1;
    }
    size_t before = p->out->n;
    if (emit_create(p, run->cr->meta.namespace, name, json, len, key) != 0)
        return -1;
    note_last(p, before, run->cr, c->node->name, NULL, NULL, 0);
    if (p->out->n > before) {
        action_note *n = &p->out->v[p->out->n - 1].note;
        n->deadline_s = spec.active_deadline_seconds;
        n->deadline_source = RECONCILE_DEADLINE_IMAGEPULLJOB;
    }
    return 0;
}

/* An action about an ImagePullJob with a body built only when it is to be
 * emitted (not skipped, within max_writes). */
static void ipj_write(pass *p, action_kind kind, const char *ns, const char *name,
                      const char *key, char *(*build)(const ipj_run *, const void *),
                      const ipj_run *run, const void *arg, const ipj_node *node)
{
    if (skipped(p, key) || !may_write(p))
        return;
    char *body = build != NULL ? build(run, arg) : NULL;
    if (build != NULL && body == NULL) {
        p->failed = 1;
        return;
    }
    size_t before = p->out->n;
    emit(p, kind, ns, name, body, key, ACTION_OUTCOME_NONE);
    /* a node's write says which node, and why (the log line) */
    note_last(p, before, run->cr, node != NULL ? node->name : NULL,
              node != NULL ? node->reason : NULL, NULL, 0);
}

static char *build_status(const ipj_run *run, const void *arg)
{
    (void)arg;
    return ipj_status_patch(&run->plan.status, &run->cr->u.ipj);
}

static char *build_give_up(const ipj_run *run, const void *arg)
{
    (void)run;
    const ipj_node *node = arg;
    return ipj_give_up_patch(node->reason, node->message, node->give_up);
}

static char *build_meta(const ipj_run *run, const void *arg)
{
    (void)arg;
    return ipj_meta_patch(run->cr, run->plan.completed_generation, run->plan.drop_finalizer);
}

static char *build_delete(const ipj_run *run, const void *arg)
{
    (void)arg;
    return ipj_delete_options(run->cr->meta.uid);
}

/* What one ImagePullJob's plan writes besides its Jobs' creates. */
static void ipj_writes(pass *p, const ipj_run *run)
{
    const kobj *cr = run->cr;
    const ipj_plan *plan = &run->plan;
    const char *ns = cr->meta.namespace, *image = run->spec.image.ptr;
    char key[600], text[1600], what[400];
    for (size_t k = 0; k < plan->n_nodes; k++) {
        const ipj_node *node = &plan->nodes[k];
        if (node->give_up || node->keep_words) {
            snprintf(key, sizeof(key), "%s:%s/%s", node->give_up ? "give-up" : "keep-words", ns,
                     node->job->meta.name);
            ipj_write(p, ACTION_PATCH_JOB, ns, node->job->meta.name, key, build_give_up, run,
                      node, node);
        }
        if (node->state == IPJ_NODE_FAILED) {
            /* Kruise's controller's words, with the kubelet's */
            snprintf(text, sizeof(text), "Failed to pull image %.*s on node %s for %s: %.1000s",
                     (int)run->spec.image.len, image != NULL ? image : "", node->name,
                     node->reason, node->message);
            snprintf(what, sizeof(what), "%s|%s:" OTA_EVENT_IPJ_FAILED, node->name,
                     plan->spec_hash);
            ipj_event(p, cr, OTA_EVENT_IPJ_FAILED, "Warning", text, what);
        } else if (node->state == IPJ_NODE_WAITING) {
            snprintf(text, sizeof(text),
                     "pull of %.*s waits for node %s to be Ready (it is NotReady or unreachable)",
                     (int)run->spec.image.len, image != NULL ? image : "", node->name);
            snprintf(what, sizeof(what), "%s:" OTA_EVENT_QUEUED, node->name);
            ipj_event(p, cr, OTA_EVENT_QUEUED, "Normal", text, what);
        }
    }
    for (size_t i = 0; i < plan->n_deletes; i++)
        delete_job(p, plan->deletes[i]);
    if (plan->write_status) {
        snprintf(key, sizeof(key), "ipj-status:%s", cr->meta.uid);
        ipj_write(p, ACTION_PATCH_IPJ_STATUS, ns, cr->meta.name, key, build_status, run, NULL,
                  NULL);
    }
    if (plan->completed_generation != NULL || plan->drop_finalizer) {
        snprintf(key, sizeof(key), "ipj-meta:%s:%s", cr->meta.uid,
                 cr->meta.resource_version != NULL ? cr->meta.resource_version : "");
        ipj_write(p, ACTION_PATCH_IPJ, ns, cr->meta.name, key, build_meta, run, NULL, NULL);
    }
    if (plan->delete_cr) {
        snprintf(key, sizeof(key), "ipj-delete:%s", cr->meta.uid);
        ipj_write(p, ACTION_DELETE_IPJ, ns, cr->meta.name, key, build_delete, run, NULL, NULL);
    }
}

/* ---- ImageCaches (controller/ic.h) ----------------------------------------- */

#define IC_KIND "ImageCache"
#define IC_EVENT_NOT_SERVED "ImageCacheNotServed"
/* A Job's activeDeadlineSeconds beyond its pulls' own deadlines: the pod's
 * start.  Each pull is judged on its own deadline (ic_container_outcome);
 * the Job's is only the backstop. */
#define IC_JOB_DEADLINE_SLACK_S 60
/* The word ic_keep_words leaves on an ending Job (OTA_ANN_JOB_GIVEN_UP_
 * REASON_PREFIX<i>) for a target that pulled, or deleted, its image. */
#define IC_WORD_PULLED "Pulled"
#define IC_WORD_DELETED "Deleted"

/* An Event on an ImageCache, once per key. */
static void ic_event(pass *p, const kobj *cr, const char *reason, const char *type,
                     const char *message, const char *what)
{
    char key[700];
    snprintf(key, sizeof(key), RECONCILE_IC_EVENT_KEY "%s|%.500s", cr->meta.uid, what);
    emit_event_once(p, cr, OTA_KUBEFLEDGED_GROUP_VERSION, IC_KIND, reason, type, message, key);
}

/* The identities of the Jobs of a cache's current action (ic.c names its
 * units so): "<pull|purge>/<reason>/<startTime>/<hash>", the hash the
 * record of the action's start gives, else the spec's (the record did not
 * land: ic_decide records the spec as it is).  NULLs when no action runs.
 * 0, or -1 when out of memory. */
static int ic_identities(pass *p, ic_run *run)
{
    const kobj_imagecache *ic = &run->cr->u.ic;
    run->identity[0] = run->identity[1] = NULL;
    if (!same(ic->status, IC_STATUS_PROCESSING) || ic->start_time == NULL ||
        ic_action_of_reason(ic->reason) == IC_ACT_NONE)
        return 0;
    char hash[17];
    ic_record rec;
    if (ic->acted_spec != NULL &&
        ic_record_decode(&rec, ic->acted_spec, strlen(ic->acted_spec), &p->arena) == 0 &&
        same(rec.start, ic->start_time))
        memcpy(hash, rec.hash, sizeof(hash));
    else
        ic_spec_hash(&run->spec, hash);
    run->identity[IC_OP_PULL] =
        arena_printf(&p->arena, "pull/%s/%s/%s", ic->reason, ic->start_time, hash);
    run->identity[IC_OP_PURGE] =
        arena_printf(&p->arena, "purge/%s/%s/%s", ic->reason, ic->start_time, hash);
    return run->identity[0] != NULL && run->identity[1] != NULL ? 0 : -1;
}

/* The op of one of the cache's Jobs of the current action, or -1 for a Job
 * of another (an action before: deleted). */
static int ic_job_op(const ic_run *run, const kobj *job)
{
    for (int op = IC_OP_PULL; op <= IC_OP_PURGE; op++)
        if (run->identity[op] != NULL && job->u.job.spec_hash != NULL &&
            ic_identity_part(run->identity[op], job->u.job.spec_hash) >= 0)
            return op; /* any of its parts: a node's images in Jobs of 64 */
    return -1;
}

/* Indexes the pull pods by their Job ("namespace/job name"), once per
 * pass: a pod not being deleted wins over one that is.  0, or -1. */
static int ic_index_pods(pass *p)
{
    if (p->ic_pods_built)
        return 0;
    p->ic_pods_built = 1;
    store_init(&p->ic_pods, NULL, NULL);
    char key[512];
    kobj *jp;
    for (size_t i = 0; (jp = store_next(p->in->job_pods, &i)) != NULL;) {
        if (jp->u.job_pod.job_name == NULL || jp->u.job_pod.n_targets == 0)
            continue; /* not a pod with targets as containers */
        snprintf(key, sizeof(key), "%s/%s", jp->meta.namespace, jp->u.job_pod.job_name);
        const kobj *had = store_get(&p->ic_pods, key);
        if ((had == NULL || (had->meta.deleting && !jp->meta.deleting)) &&
            store_put(&p->ic_pods, key, jp) != 0)
            return -1;
    }
    return 0;
}

/* A Job's pod, live (one not being deleted first), else what the
 * controller remembered of it. */
static const kobj *ic_pod_of(const pass *p, const kobj *job)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", job->meta.namespace, job->meta.name);
    const kobj *found = store_get(&p->ic_pods, key);
    if (found != NULL || p->in->job_waiting == NULL)
        return found;
    return store_get(p->in->job_waiting, key);
}

/* Reads the outcome ic_keep_words left on the Job for a target that
 * pulled (or deleted) its image: the pod, and what it said, go with the
 * Job's end. */
static void ic_container_kept(ic_container *c)
{
    if (c->op == IC_OP_PULL && same(c->given_up_reason, IC_WORD_PULLED)) {
        c->started = 1;
    } else if (c->op == IC_OP_PURGE && same(c->given_up_reason, IC_WORD_DELETED)) {
        c->terminated = 1;
        c->exit_code = 0;
    }
}

/* What one container of a Job says (ic_container), as read; start: when
 * its pull began (ic_seen), 0 while an image before it is still pulled. */
static ic_container ic_container_of(const kobj *job, const kobj *pod, size_t i, ic_op op,
                                    long long start)
{
    const kobj_job *j = &job->u.job;
    ic_container c = {.op = op, .pull_start_epoch = start};
    c.job_ended = j->complete || j->failed;
    c.given_up_reason = i < j->n_targets ? j->target_reasons[i] : NULL;
    c.given_up_message = i < j->n_targets ? j->target_messages[i] : NULL;
    const kobj_job_pod *jp = pod != NULL ? &pod->u.job_pod : NULL;
    if (jp == NULL || i >= jp->n_targets) {
        ic_container_kept(&c);
        return c;
    }
    const kobj_target *t = &jp->targets[i];
    c.started = t->state == KOBJ_TARGET_DONE || t->state == KOBJ_TARGET_FAILED;
    c.terminated = t->terminated;
    c.exit_code = t->state == KOBJ_TARGET_FAILED ? 1 : 0;
    if (t->state == KOBJ_TARGET_FAILED) {
        c.term_reason = t->reason;
        c.term_message = t->message;
    } else if (t->state == KOBJ_TARGET_WAITING) {
        c.waiting_reason = t->reason;
        c.waiting_message = t->message;
        c.attempts = t->failed_attempts;
    }
    ic_container_kept(&c);
    return c;
}

/* When the pull after container i begins (its own began at start, 0: not
 * yet; state: its outcome as judged): the kubelet pulls a pod's
 * containers one after another, the next once this one has its outcome.
 * It ran: its startedAt.  It waits on a pull error (the kubelet went on to
 * the next): its own start, the latest known.  Still open, or pending
 * (the kubelet still pulls it, even past its deadline): 0, not yet. */
static long long ic_next_start(const kobj *pod, size_t i, long long start, ic_item_state state)
{
    const kobj_job_pod *jp = pod != NULL ? &pod->u.job_pod : NULL;
    if (start == 0 || state == IC_ITEM_RUNNING || jp == NULL || i >= jp->n_targets)
        return 0;
    const kobj_target *t = &jp->targets[i];
    if (t->started_epoch > 0)
        return t->started_epoch > start ? t->started_epoch : start;
    if (t->state == KOBJ_TARGET_WAITING || t->terminated)
        return start;
    return 0;
}

/* The rows ic_decide reads of the current action's Jobs, one per
 * container, and the Jobs of other actions into *stale.  0, or -1. */
static int ic_seen(pass *p, ic_run *run, const kobj *const *jobs, size_t n_jobs,
                   ic_item **seen, size_t *n_seen, size_t *rows)
{
    size_t most = 0;
    for (size_t i = 0; i < n_jobs; i++)
        most += jobs[i]->u.job.n_targets;
    *seen = arena_alloc(&p->arena, (most + 1) * sizeof(**seen));
    *n_seen = 0;
    if (*seen == NULL)
        return -1;
    long long deadline = p->in->cfg->ic_pull_deadline_s;
    const char *reason, *message;
    for (size_t i = 0; i < n_jobs; i++) {
        const kobj *job = jobs[i];
        int op = ic_job_op(run, job);
        rows[i] = *n_seen; /* its rows: rows[i] up to rows[i + 1] */
        if (op < 0 || job->u.job.node_name == NULL)
            continue;
        const kobj *pod = ic_pod_of(p, job);
        long long start = job->u.job.start_epoch; /* the first pull's: the pod's start */
        for (size_t t = 0; t < job->u.job.n_targets; t++) {
            const char *image = job->u.job.target_images[t];
            ic_container c = ic_container_of(job, pod, t, (ic_op)op, start);
            ic_item_state state = ic_container_outcome(&c, p->in->now_epoch, deadline,
                                                       &p->arena, &reason, &message);
            start = ic_next_start(pod, t, start, state);
            if (image == NULL)
                continue;
            ic_item *it = &(*seen)[(*n_seen)++];
            *it = (ic_item){.image = image, .node = job->u.job.node_name, .op = (ic_op)op,
                            .state = state, .reason = reason, .message = message};
        }
    }
    rows[n_jobs] = *n_seen;
    return 0;
}

/* Keeps the words of the current action's failed containers on their Job
 * (they outlive the pod: the Job controller deletes it at its deadline),
 * and ends a Job whose every container has its outcome but some pull
 * still backs off; before it ends, the others' outcomes go on it too
 * (IC_WORD_PULLED, IC_WORD_DELETED), read back once the pod is gone.
 * rows: the Job's own rows of seen (ic_seen), in its targets' order. */
static void ic_keep_words(pass *p, const ic_run *run, const kobj *job, const ic_item *rows,
                          size_t n_rows)
{
    if (job->u.job.complete || job->u.job.failed || job->meta.deleting)
        return;
    pull_job_words words[KOBJ_MAX_TARGETS];
    const ic_item *row_of[KOBJ_MAX_TARGETS];
    size_t n = 0, open = 0, failed = 0, k = 0;
    size_t n_targets = job->u.job.n_targets < KOBJ_MAX_TARGETS ? job->u.job.n_targets
                                                               : KOBJ_MAX_TARGETS;
    for (size_t t = 0; t < n_targets; t++) {
        row_of[t] = NULL;
        if (job->u.job.target_images[t] == NULL || k >= n_rows)
            continue;
        const ic_item *it = row_of[t] = &rows[k++];
        if (it->state == IC_ITEM_RUNNING) {
            open++;
        } else if (it->state == IC_ITEM_FAILED) {
            failed++;
            if (job->u.job.target_reasons[t] == NULL)
                words[n++] = (pull_job_words){t, it->reason, it->message};
        }
    }
    int end = open == 0 && failed > 0;
    for (size_t t = 0; end && t < n_targets; t++)
        if (row_of[t] != NULL && job->u.job.target_reasons[t] == NULL &&
            (row_of[t]->state == IC_ITEM_PULLED || row_of[t]->state == IC_ITEM_DELETED))
            words[n++] = (pull_job_words){
                t, row_of[t]->state == IC_ITEM_PULLED ? IC_WORD_PULLED : IC_WORD_DELETED, NULL};
    if (n == 0)
        return;
    char key[600];
    snprintf(key, sizeof(key), "ic-words:%s:%zu", job->meta.uid, n);
    if (skipped(p, key) || !may_write(p))
        return;
    char *body = pull_job_words_patch(words, n, end);
    if (body == NULL) {
        p->failed = 1;
        return;
    }
    size_t before = p->out->n;
    emit(p, ACTION_PATCH_JOB, job->meta.namespace, job->meta.name, body, key,
         ACTION_OUTCOME_NONE);
    note_last(p, before, run->cr, job->u.job.node_name, words[0].reason, NULL, 0);
    if (p->out->n > before) /* the log line names the cache as such */
        p->out->v[p->out->n - 1].note.deadline_source = RECONCILE_DEADLINE_IMAGECACHE;
}

/* With our CRD an action's start lands in two writes, its record first
 * (with OTA_ANN_IC_START "<reason>|<startTime>") and its Processing status
 * on the next pass (ic_write_sends).  When the record of a start has
 * landed and the status not (its startTime is older, or none), the plan
 * is that status, read back from them: the action the record was written
 * for, not one decided again on a spec edited since.  1 when so. */
static int ic_start_read_back(pass *p, ic_run *run)
{
    const kobj_imagecache *ic = &run->cr->u.ic;
    if (p->in->ic_status_served <= 0 || ic->acted_start == NULL || ic->acted_spec == NULL)
        return 0;
    const char *bar = strchr(ic->acted_start, '|');
    if (bar == NULL || bar[1] == '\0')
        return 0;
    const char *start = bar + 1;
    const char *reason = arena_strndup(&p->arena, ic->acted_start,
                                       (size_t)(bar - ic->acted_start));
    ic_action act = ic_action_of_reason(reason);
    if (reason == NULL || act == IC_ACT_NONE)
        return 0;
    /* the status has it (or a later action's, or an end at once) */
    if (ic->start_time != NULL && strcmp(ic->start_time, start) >= 0)
        return 0;
    ic_record rec;
    if (ic_record_decode(&rec, ic->acted_spec, strlen(ic->acted_spec), &p->arena) != 0 ||
        !same(rec.start, start))
        return 0;
    ic_plan *plan = &run->plan;
    plan->step = IC_STEP_START;
    plan->action = act;
    plan->started = 1;
    plan->done = 0;
    plan->n_units = 0;
    plan->status = (ic_status){.status = IC_STATUS_PROCESSING, .reason = ic_action_reason(act),
                               .message = ic_action_message(act), .start_time = start};
    plan->write_status = 1;
    plan->record = NULL;
    plan->remove_refresh = plan->remove_purge = 0;
    plan->event = 0;
    return 1;
}

/* One ImageCache's pass: its spec, its Jobs and what their pods say, its
 * plan, its units as bulk candidates.  0; 1 when its spec does not decode
 * (said in an Event; nothing else is done for it); -1 out of memory. */
/* Whether a purge on node must wait: a Job of this cache's earlier
 * actions is still there (deleted in this pass), or a pod of one.  Their
 * containers use the images the purge deletes: CRI-O refuses to remove an
 * image a container uses, so crictl would fail on our own pull pods.  The
 * purge Job is made once they are gone. */
static int ic_purge_waits(const pass *p, const ic_run *run, const kobj *const *jobs,
                          size_t n_jobs, const char *node)
{
    for (size_t i = 0; i < n_jobs; i++)
        if (ic_job_op(run, jobs[i]) < 0 && same(jobs[i]->u.job.node_name, node))
            return 1;
    if (p->in->job_pods == NULL)
        return 0;
    /* the cache's Job names: "ota-ic-<cache cut>-" and 16 hex */
    char probe[PREPULL_JOB_NAME_MAX + 1];
    const kobj *cr = run->cr;
    ic_job_name(probe, cr->meta.name, cr->meta.uid, node, "");
    size_t len = strlen(probe), stem = len > 16 ? len - 16 : 0;
    kobj *jp;
    for (size_t i = 0; (jp = store_next(p->in->job_pods, &i)) != NULL;) {
        const char *jn = jp->u.job_pod.job_name;
        if (jn == NULL || !same(jp->meta.namespace, cr->meta.namespace) ||
            !same(jp->u.job_pod.node_name, node) || strlen(jn) != len ||
            strncmp(jn, probe, stem) != 0)
            continue;
        int current = 0;
        for (size_t k = 0; k < n_jobs && !current; k++)
            current = ic_job_op(run, jobs[k]) >= 0 && same(jobs[k]->meta.name, jn);
        if (!current)
            return 1;
    }
    return 0;
}

static int plan_imagecache(pass *p, ic_run *run, const ic_node *nodes, size_t n_nodes)
{
    const kobj *cr = run->cr;
    const kobj_imagecache *ic = &cr->u.ic;
    const char *text = ic->spec != NULL ? ic->spec : "";
    char err[300];
    if (ic_decode(&run->spec, text, strlen(text), &p->arena, err, sizeof(err)) != 0) {
        char what[64];
        snprintf(what, sizeof(what), "spec|%lld", ic->generation);
        ic_event(p, cr, IC_EVENT_NOT_SERVED, "Warning", err, what);
        return 1;
    }
    if (ic_identities(p, run) != 0)
        return -1;
    size_t first = 0, n_jobs = 0;
    if (p->ipj_jobs != NULL)
        n_jobs = jobs_keyed(p->ipj_jobs, p->n_ipj_jobs, job_owner_key, cr->meta.uid, &first);
    const kobj *const *jobs = p->ipj_jobs + first;
    ic_item *seen;
    size_t n_seen;
    size_t *rows = arena_alloc(&p->arena, (n_jobs + 1) * sizeof(*rows));
    if (rows == NULL || ic_seen(p, run, jobs, n_jobs, &seen, &n_seen, rows) != 0)
        return -1;
    const reconcile_config *cfg = p->in->cfg;
    ic_input in = {
        .spec = &run->spec,
        .status = ic->status,
        .reason = ic->reason,
        .message = ic->message,
        .start_time = ic->start_time,
        .completion_time = ic->completion_time,
        .has_refresh = ic->refresh,
        .has_purge = ic->purge,
        .record = ic->acted_spec,
        .record_len = ic->acted_spec != NULL ? strlen(ic->acted_spec) : 0,
        .nodes = nodes,
        .n_nodes = n_nodes,
        .seen = seen,
        .n_seen = n_seen,
        .now = p->in->now,
        .now_epoch = p->in->now_epoch,
        .refresh_period_s = (long long)cfg->ic_refresh_s,
        .pull_deadline_s = cfg->ic_pull_deadline_s,
        .purge_enabled = cfg->ic_purge_image != NULL && cfg->ic_purge_image[0] != '\0',
    };
    if (ic_decide(&in, &p->arena, &run->plan) != 0)
        return -1;
    ic_start_read_back(p, run);
    /* the Jobs of an action stay until the next one runs (kubectl
     * describe shows the last); this one's keep the words */
    for (size_t i = 0; i < n_jobs; i++) {
        if (ic_job_op(run, jobs[i]) >= 0) {
            if (!run->plan.started)
                ic_keep_words(p, run, jobs[i], seen + rows[i], rows[i + 1] - rows[i]);
        } else if (run->identity[0] != NULL) {
            delete_job(p, jobs[i]);
        }
    }
    if (run->plan.started || run->plan.n_units == 0)
        return 0; /* Jobs follow the Processing write, on a later pass */
    if (p->n_cands + run->plan.n_units > p->cap_cands) {
        size_t want = p->n_cands + run->plan.n_units;
        size_t cap = p->cap_cands * 2 > want ? p->cap_cands * 2 : want;
        candidate *grown = realloc(p->cands, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        p->cands = grown;
        p->cap_cands = cap;
    }
    for (size_t k = 0; k < run->plan.n_units; k++) {
        const ic_unit *u = &run->plan.units[k];
        if (u->op == IC_OP_PURGE && ic_purge_waits(p, run, jobs, n_jobs, u->node))
            continue; /* a later pass, once our pull pods there are gone */
        const char *id = arena_printf(&p->arena, "%s/%s/%d/%zu", cr->meta.uid, u->node,
                                      (int)u->op, u->part);
        if (id == NULL)
            return -1;
        p->cands[p->n_cands++] = (candidate){
            NULL, NULL, NULL, NULL, NULL, run, u,
            {PULLQ_BULK, u->node, ic->start_time != NULL ? ic->start_time : "", id,
             PULLQ_NODE_READY},
            PULL_JOB_METHOD_HELPER};
    }
    return 0;
}

long long reconcile_wake_min(long long have, long long after_s)
{
    if (have <= 0)
        return after_s > 0 ? after_s : 0;
    return after_s > 0 && after_s < have ? after_s : have;
}

/* Every ImageCache's plan: none without the CRD, before the Nodes are
 * known, or before discovery said how the status is written (asked
 * then: a read). */
static int plan_imagecaches(pass *p)
{
    const reconcile_input *in = p->in;
    if (in->imagecaches == NULL || in->node_states == NULL || in->imagecaches->len == 0)
        return 0;
    if (in->ic_status_served < 0 || in->ic_rediscover) {
        const char *key = "ic-discovery";
        if (!skipped(p, key))
            emit(p, ACTION_GET_IC_DISCOVERY, NULL, "imagecaches", NULL, key, ACTION_OUTCOME_NONE);
        if (in->ic_status_served < 0)
            return 0; /* how to write a status is not known yet */
    }
    size_t n_nodes = 0;
    ic_node *nodes = arena_alloc(&p->arena, (in->node_states->len + 1) * sizeof(*nodes));
    p->ics = calloc(in->imagecaches->len + 1, sizeof(*p->ics));
    if (nodes == NULL || p->ics == NULL)
        return -1;
    if (p->ipj_jobs == NULL &&
        index_jobs_by(in->jobs, job_owner_key, cmp_job_owner_uid, &p->ipj_jobs, &p->n_ipj_jobs) != 0)
        return -1;
    if (ic_index_pods(p) != 0)
        return -1;
    kobj *o;
    for (size_t i = 0; (o = store_next(in->node_states, &i)) != NULL;) {
        const kobj_node *n = &o->u.node;
        nodes[n_nodes++] = (ic_node){
            .name = o->meta.name,
            .label_keys = (const char *const *)n->label_keys,
            .label_values = (const char *const *)n->label_values,
            .n_labels = n->n_labels,
            .not_ready = n->not_ready,
            .images = (const char *const *)n->images,
            .n_images = n->n_images,
        };
    }
    for (size_t i = 0; (o = store_next(in->imagecaches, &i)) != NULL;) {
        if (o->meta.deleting)
            continue; /* as kube-fledged: nothing; its Jobs go with it */
        ic_run *run = &p->ics[p->n_ics];
        *run = (ic_run){.cr = o};
        int planned = plan_imagecache(p, run, nodes, n_nodes);
        if (planned < 0)
            return -1;
        if (planned == 0)
            p->n_ics++;
    }
    return 0;
}

/* Emits the create of an ImageCache unit's Job: 0; 1 when it cannot be
 * rendered (said in an Event); -1 when out of memory. */
static int create_ic_job(pass *p, const candidate *c, const char *name, const char *key)
{
    const ic_run *run = c->ic;
    const ic_unit *u = c->ic_unit;
    const kobj *cr = run->cr;
    const reconcile_config *cfg = p->in->cfg;
    const char **secrets = arena_alloc(&p->arena, (run->spec.n_pull_secrets + 1) * sizeof(char *));
    if (secrets == NULL)
        return -1;
    size_t n_secrets = 0;
    for (size_t i = 0; i < run->spec.n_pull_secrets; i++) {
        sv s = run->spec.pull_secrets[i];
        if (s.len > 0 && (secrets[n_secrets++] = arena_strndup(&p->arena, s.ptr, s.len)) == NULL)
            return -1;
    }
    const char *ann[] = {OTA_ANN_JOB_SPEC_HASH, u->identity};
    pull_job_owner owner = {OTA_KUBEFLEDGED_GROUP_VERSION, IC_KIND, cr->meta.name, cr->meta.uid, 1};
    long deadline = (long)u->n_images * cfg->ic_pull_deadline_s + IC_JOB_DEADLINE_SLACK_S;
    char err[512];
    const char *json = NULL;
    size_t len = 0;
    int rc;
    if (u->op == IC_OP_PULL) {
        pull_job_spec spec = {
            .namespace = cr->meta.namespace, .name = name, .node_name = u->node, .owner = owner,
            .annotations = ann, .n_annotations = 1, .images = u->images, .n_images = u->n_images,
            .pull_secrets = secrets, .n_pull_secrets = n_secrets,
            .helper_image = cfg->helper_image, .backoff_limit = 0,
            .active_deadline_seconds = deadline, .targets_as_containers = 1,
        };
        rc = pull_job_render(&spec, &p->arena, &json, &len, err, sizeof(err));
    } else {
        purge_job_spec spec = {
            .namespace = cr->meta.namespace, .name = name, .node_name = u->node, .owner = owner,
            .annotations = ann, .n_annotations = 1, .images = u->images, .n_images = u->n_images,
            .purge_image = cfg->ic_purge_image, .socket_path = cfg->cri_socket_path,
            .active_deadline_seconds = deadline,
        };
        rc = purge_job_render(&spec, &p->arena, &json, &len, err, sizeof(err));
    }
    if (rc != 0) {
        char what[400];
        snprintf(what, sizeof(what), "render|%.300s", u->identity);
        ic_event(p, cr, "ImageCacheJobRefused", "Warning", err, what);
        return 1;
    }
    size_t before = p->out->n;
    if (emit_create(p, cr->meta.namespace, name, json, len, key) != 0)
        return -1;
    note_last(p, before, cr, u->node, NULL, NULL, 0);
    if (p->out->n > before) {
        action_note *n = &p->out->v[p->out->n - 1].note;
        n->deadline_s = deadline;
        n->deadline_source = RECONCILE_DEADLINE_IMAGECACHE;
    }
    return 0;
}

/* may_write for n writes in a row (a status and its Event). */
static int ic_may_write(pass *p, size_t n)
{
    if (p->in->max_writes == 0 || p->writes + n <= p->in->max_writes)
        return 1;
    p->out->more = 1;
    return 0;
}

/* "status": the plan's status (ic_status_writer for a PUT). */
static void ic_put_status(json_writer *w, const void *arg)
{
    ic_write_status(w, arg, 0);
}

/* What one ImageCache's plan writes besides its Jobs' creates: the status
 * and the metadata (one PUT with kube-fledged's CRD; a /status patch and
 * a metadata patch with ours), then its Event. */
static void ic_writes(pass *p, const ic_run *run)
{
    const kobj *cr = run->cr;
    const ic_plan *plan = &run->plan;
    const char *ns = cr->meta.namespace, *rv = cr->meta.resource_version;
    const char *set[4] = {IC_ANN_SPEC, plan->record, OTA_ANN_IC_START, NULL};
    const char *drop[2];
    size_t n_set = plan->record != NULL, n_drop = 0;
    if (plan->started && plan->record != NULL && p->in->ic_status_served > 0) {
        /* the action this record starts, read back by ic_start_read_back */
        set[3] = arena_printf(&p->arena, "%s|%s", plan->status.reason != NULL ? plan->status.reason : "",
                              plan->status.start_time != NULL ? plan->status.start_time : "");
        if (set[3] == NULL) {
            p->failed = 1;
            return;
        }
        n_set = 2;
    }
    if (plan->remove_refresh)
        drop[n_drop++] = IC_ANN_REFRESH;
    if (plan->remove_purge)
        drop[n_drop++] = IC_ANN_PURGE;
    int meta = n_set > 0 || n_drop > 0;
    char key[700];
    const char *st = plan->status.status != NULL ? plan->status.status : "";
    const kobj_imagecache *ic = &cr->u.ic;
    int holds = same(ic->status, IC_STATUS_PROCESSING) && same(ic->reason, plan->status.reason) &&
                same(ic->start_time, plan->status.start_time);
    int same_words = same(ic->status, plan->status.status) &&
                     same(ic->reason, plan->status.reason) &&
                     same(ic->message, plan->status.message);
    int sends = ic_write_sends(p->in->ic_status_served, plan->started, plan->write_status, meta,
                               holds, same_words);
    /* the end's Event goes with its status: only when this pass sends it,
     * or the object says it already (never for a write held back, in
     * flight or refused); room is kept for both */
    int status_sent = same_words && same(ic->start_time, plan->status.start_time);
    size_t room = plan->event ? 2 : 1;
    if (sends & IC_SEND_PUT) {
        snprintf(key, sizeof(key), "ic-put:%s:%s", cr->meta.uid, rv != NULL ? rv : "");
        if (skipped(p, key) || !ic_may_write(p, room))
            return;
        char err[128];
        yajl_val obj = json_parse_tree(cr->u.ic.object, strlen(cr->u.ic.object), 128, err,
                                       sizeof(err));
        char *body = obj != NULL ? ic_put_body(obj, plan->write_status ? ic_put_status : NULL,
                                               &plan->status, set, n_set, drop, n_drop)
                                 : NULL;
        if (obj != NULL)
            yajl_tree_free(obj);
        if (body == NULL) {
            p->failed = 1;
            return;
        }
        size_t before = p->out->n;
        emit(p, ACTION_PUT_IC, ns, cr->meta.name, body, key, ACTION_OUTCOME_NONE);
        note_last(p, before, cr, NULL, plan->write_status ? st : NULL, NULL, 0);
        status_sent |= plan->write_status && p->out->n > before;
    } else {
        /* one of the two per pass (ic_write_sends) */
        if (sends & IC_SEND_STATUS) {
            /* a start once per version read: a pass a second later that
             * still reads it must not start it again (a new startTime,
             * the Jobs of the first made again) */
            if (plan->started)
                snprintf(key, sizeof(key), "ic-start:%s:%s", cr->meta.uid, rv != NULL ? rv : "");
            else
                snprintf(key, sizeof(key), "ic-status:%s:%s:%s:%08x", cr->meta.uid, st,
                         plan->status.start_time != NULL ? plan->status.start_time : "",
                         message_hash(plan->status.message));
            if (!skipped(p, key) && ic_may_write(p, room)) {
                json_writer w;
                char *body = NULL;
                if (json_writer_init(&w, NULL) == 0) {
                    json_map_open(&w, NULL);
                    ic_write_status(&w, &plan->status, 1);
                    json_map_close(&w);
                    body = json_writer_take(&w);
                }
                if (body == NULL) {
                    p->failed = 1;
                    return;
                }
                size_t before = p->out->n;
                emit(p, ACTION_PATCH_IC_STATUS, ns, cr->meta.name, body, key,
                     ACTION_OUTCOME_NONE);
                note_last(p, before, cr, NULL, st, NULL, 0);
                status_sent |= p->out->n > before;
            }
        }
        if (sends & IC_SEND_META) {
            snprintf(key, sizeof(key), "ic-meta:%s:%s", cr->meta.uid, rv != NULL ? rv : "");
            if (!skipped(p, key) && may_write(p)) {
                char *body = ic_meta_patch(rv, set, n_set, drop, n_drop);
                if (body == NULL) {
                    p->failed = 1;
                    return;
                }
                emit(p, ACTION_PATCH_IC, ns, cr->meta.name, body, key, ACTION_OUTCOME_NONE);
            }
        }
    }
    if (plan->event && status_sent) {
        char what[400];
        snprintf(what, sizeof(what), "done|%s|%s|%s",
                 plan->status.start_time != NULL ? plan->status.start_time : "",
                 plan->event_reason != NULL ? plan->event_reason : "", st);
        ic_event(p, cr, plan->event_reason, plan->event_type, plan->event_message, what);
    }
}

static void start_jobs(pass *p)
{
    qsort(p->cands, p->n_cands, sizeof(*p->cands), cmp_candidates);
    const reconcile_config *cfg = p->in->cfg;
    pullq q;
    pullq_init(&q, (size_t)cfg->max_concurrent_pulls,
               cfg->max_pulls_per_node > 0 ? (size_t)cfg->max_pulls_per_node : 0);
    if (occupy_slots(p, &q) != 0) {
        p->failed = 1;
        goto cleanup;
    }
    for (size_t i = 0; i < p->n_cands; i++) {
        const candidate *c = &p->cands[i];
        pullq_verdict verdict = pullq_admit(&q, &c->unit);
        if (verdict == PULLQ_HOLD) {
            pullq_take(&q, &c->unit); /* the slots are kept for it */
            continue;
        }
        if (verdict != PULLQ_START) {
            p->out->waiting++;
            if (c->pod != NULL)
                queued_event(p, c, verdict, &q);
            continue;
        }
        char name[PREPULL_JOB_NAME_MAX + 1], key[400];
        const char *ns = c->pod != NULL   ? c->pod->meta.namespace
                         : c->ic != NULL ? c->ic->cr->meta.namespace
                                         : c->ipj->cr->meta.namespace;
        if (c->pod != NULL)
            ota_job_name(name, c->pod, c->view->rev->u.rev.hash, c->request_time, c->ota_method);
        else if (c->ic != NULL)
            ic_job_name(name, c->ic->cr->meta.name, c->ic->cr->meta.uid, c->ic_unit->node,
                        c->ic_unit->identity);
        else
            ipj_job_name(name, c->ipj->cr->meta.name, c->ipj->cr->meta.uid, c->node->name,
                         c->ipj->plan.spec_hash);
        snprintf(key, sizeof(key), "create-job:%s/%s", ns, name);
        int made = skipped(p, key); /* in flight, or done and the cache lags */
        if (!made && !may_write(p)) {
            /* held back: its slot is taken all the same, and no later
             * request passes it */
            pullq_take(&q, &c->unit);
            continue;
        }
        if (!made) {
            int rc = c->pod != NULL  ? create_job(p, c, name, key)
                     : c->ic != NULL ? create_ic_job(p, c, name, key)
                                     : create_ipj_job(p, c, name, key);
            if (rc < 0)
                goto cleanup;
            if (rc > 0)
                continue; /* not renderable: reported failed */
        }
        if (c->pod == NULL) {
            pullq_take(&q, &c->unit);
            continue;
        }
        const char *hash = c->view->rev->u.rev.hash;
        char qkey[300];
        snprintf(qkey, sizeof(qkey), "%s/%s", c->pod->meta.uid, c->request_time);
        /* Said once the create is handed over; again (its own key is
         * skipped or in events_sent) while the create is in flight, so a
         * bound that held back the Event alone does not lose it. */
        char text[400];
        snprintf(text, sizeof(text), "pulling the images of revision %s on node %s with job %s",
                 hash, c->pod->u.pod.node_name != NULL ? c->pod->u.pod.node_name : "?", name);
        emit_event(p, c->pod, OTA_EVENT_STARTED, "Normal", text, qkey);
        pullq_take(&q, &c->unit);
    }
cleanup:
    pullq_free(&q);
}

int reconcile(const reconcile_input *in, action_list *out)
{
    pass p = {.in = in, .out = out};
    arena_init(&p.arena);
    int rc = -1;
    if (index_daemonsets(&p) != 0 || index_jobs(&p) != 0)
        goto cleanup;
    p.cap_cands = in->pods->len + 1;
    p.cands = calloc(p.cap_cands, sizeof(*p.cands));
    p.marks = calloc(in->pods->len + 1, sizeof(*p.marks));
    p.ap_pending = calloc(in->pods->len + 1, sizeof(*p.ap_pending));
    if (p.cands == NULL || p.marks == NULL || p.ap_pending == NULL)
        goto cleanup;
    kobj *pod;
    for (size_t i = 0; (pod = store_next(in->pods, &i)) != NULL;)
        reconcile_pod(&p, pod);
    if (plan_imagepulljobs(&p) != 0 || plan_imagecaches(&p) != 0)
        goto cleanup;
    start_jobs(&p);
    /* automatic pulls after the Jobs of those already asked for: a start
     * is a status write, its Job comes next pass (a bulk unit) */
    for (size_t i = 0; i < p.n_views; i++)
        if (p.views[i].ap.opted_in)
            auto_starts(&p, &p.views[i]);
    /* after every Job's create: an ImagePullJob's status, events and
     * patches wait behind an OTA request's pull under max_writes */
    for (size_t i = 0; i < p.n_ipjs; i++)
        ipj_writes(&p, &p.ipjs[i]);
    for (size_t i = 0; i < p.n_ics; i++) {
        ic_writes(&p, &p.ics[i]);
        out->wake_after_s = reconcile_wake_min(out->wake_after_s, p.ics[i].plan.requeue_after_s);
    }
    /* Marks in store order, which does not change between passes while
     * the pods stay: those in flight or done lately are skipped, so under
     * a bound each pass marks the next pods and every pod gets its turn. */
    for (size_t i = 0; i < p.n_marks; i++)
        mark_pod(&p, &p.marks[i]);
    for (size_t i = 0; i < p.n_views; i++)
        if (p.views[i].marked > 0)
            revision_event(&p, &p.views[i]);
    for (size_t i = 0; i < p.n_views; i++)
        if (p.views[i].ds->u.ds.bad_timeout != NULL)
            bad_timeout_event(&p, p.views[i].ds);
    for (size_t i = 0; i < p.n_views; i++) {
        auto_events(&p, &p.views[i]);
        auto_bad_event(&p, &p.views[i]);
    }
    rc = p.failed ? -1 : 0;
cleanup:
    free(p.views);
    free(p.jobs);
    free(p.cands);
    free(p.marks);
    free(p.ap_pending);
    free(p.ipjs);
    free(p.ics);
    if (p.ic_pods_built)
        store_free(&p.ic_pods);
    free(p.ipj_jobs);
    arena_free(&p.arena);
    return rc;
}

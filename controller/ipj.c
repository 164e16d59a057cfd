/*
 * ipj.c - see ipj.h.  ipj_decide in order: is the CR to be worked on at
 * all (deleted, done, edited since done); the selected nodes and their
 * states from their Jobs; the Jobs to give up, delete, and the nodes to
 * offer (parallelism); completion; the status; the metadata patch; TTL.
 */
#include "ipj.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imageref.h"
#include "json.h"
#include "ota_names.h"
#include "prepull_job.h"
#include "pullerr.h"

static int same(const char *a, const char *b)
{
    return sv_same(sv_from(a), sv_from(b));
}

/* ---- the spec ---------------------------------------------------------------- */

/* A whole number at or above 0 written as a string, or -1. */
static long long whole_number(sv s)
{
    if (s.len == 0 || s.len > 18)
        return -1;
    long long n = 0;
    for (size_t i = 0; i < s.len; i++) {
        if (s.ptr[i] < '0' || s.ptr[i] > '9')
            return -1;
        n = n * 10 + (s.ptr[i] - '0');
    }
    return n;
}

long long ipj_parallelism(const ipj_spec *s)
{
    if (!s->parallelism_set)
        return IPJ_DEFAULT_PARALLELISM;
    /* Kruise <= 1.8 scales a "%" string against 0: paused; 1.9's webhook
     * refuses it.  Whatever is not a whole number pulls nothing. */
    long long n = s->parallelism_is_string ? whole_number(s->parallelism_str) : s->parallelism_int;
    return n > 0 ? n : 0;
}

void ipj_effective(const ipj_spec *s, ipj_values *v)
{
    *v = (ipj_values){0};
    v->timeout_s = s->timeout_seconds.set && s->timeout_seconds.v > 0 ? s->timeout_seconds.v
                                                                      : IPJ_DEFAULT_TIMEOUT_S;
    /* Kruise's daemon reads a negative backoffLimit as its default */
    v->backoff_limit = s->backoff_limit.set && s->backoff_limit.v >= 0
                           ? s->backoff_limit.v
                           : IPJ_DEFAULT_BACKOFF_LIMIT;
    v->parallelism = ipj_parallelism(s);
    v->never = sv_eq(s->completion_type, "Never");
    v->has_deadline = s->active_deadline_seconds.set;
    v->deadline_s = s->active_deadline_seconds.v;
    v->has_ttl = s->ttl_seconds_after_finished.set;
    v->ttl_s = s->ttl_seconds_after_finished.v;
    v->pull_policy = sv_eq(s->image_pull_policy, "Always") ? "Always" : "IfNotPresent";
}

int ipj_spec_hash(const ipj_spec *s, const ipj_values *v, arena *a, char out[9])
{
    char err[200];
    const char *image = imageref_normalize(s->image.ptr != NULL ? s->image.ptr : "", s->image.len,
                                           a, err, sizeof(err));
    if (image == NULL)
        image = arena_strndup(a, s->image.ptr != NULL ? s->image.ptr : "", s->image.len);
    size_t len = 1;
    for (size_t i = 0; i < s->n_pull_secrets; i++)
        len += s->pull_secrets[i].len + 1;
    char *secrets = arena_alloc(a, len);
    /* out of memory: no hash at all, never the hash of another spec (its
     * Jobs would read as an older version's and be pulled again) */
    if (image == NULL || secrets == NULL)
        return -1;
    {
        size_t at = 0;
        for (size_t i = 0; i < s->n_pull_secrets; i++) {
            if (i > 0)
                secrets[at++] = ',';
            if (s->pull_secrets[i].len > 0)
                memcpy(secrets + at, s->pull_secrets[i].ptr, s->pull_secrets[i].len);
            at += s->pull_secrets[i].len;
        }
        secrets[at] = '\0';
    }
    char policy[100];
    snprintf(policy, sizeof(policy), "%s/%lld/%lld", v->pull_policy, v->timeout_s,
             v->backoff_limit);
    snprintf(out, 9, "%08" PRIx32, pull_job_hash3(image, secrets, policy));
    return 0;
}

const char *ipj_unservable(const ipj_spec *s, arena *a)
{
    const char *e = ipj_image_error(s->image, a);
    if (e != NULL)
        return arena_printf(a, "invalid image %.*s: %s", (int)s->image.len,
                            s->image.ptr != NULL ? s->image.ptr : "", e);
    if (s->selector.present && (s->selector.has_labels || s->selector.has_exprs) &&
        (e = ipj_selector_error(&s->selector, a)) != NULL)
        return arena_printf(a, "invalid selector: %s", e);
    if (s->pod_selector.present) {
        if ((e = ipj_selector_error(&s->pod_selector, a)) != NULL)
            return arena_printf(a, "invalid podSelector: %s", e);
        size_t n = ipj_selector_string_len(&s->pod_selector);
        if (n > IPJ_SELECTOR_STRING_MAX)
            return arena_printf(a,
                                "podSelector is %zu bytes as a labelSelector, more than the %d "
                                "a pod list may ask with",
                                n, IPJ_SELECTOR_STRING_MAX);
    }
    return NULL;
}

/* ---- selection --------------------------------------------------------------- */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const kobj *node_named(const kobj *const *nodes, size_t n, const char *name, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = nodes[mid]->meta.name;
        int c = strncmp(m, name, len);
        if (c == 0 && m[len] != '\0')
            c = 1;
        if (c == 0)
            return nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Sorted, without repeats: the count kept. */
static size_t sort_unique(const char **v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_str);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || strcmp(v[kept - 1], v[i]) != 0)
            v[kept++] = v[i];
    return kept;
}

size_t ipj_select_nodes(const ipj_spec *s, const kobj *const *nodes, size_t n_nodes,
                        const kobj *pod_nodes, arena *a, const char ***out)
{
    const ipj_selector *sel = &s->selector;
    size_t n_pod_nodes = pod_nodes != NULL ? pod_nodes->u.pod_nodes.n_nodes : 0;
    /* names may repeat: room for each until they are made unique */
    const char **v = arena_alloc(a, (n_nodes + sel->n_names + n_pod_nodes + 1) * sizeof(*v));
    size_t n = 0;
    *out = v;
    if (v == NULL)
        return 0;
    if (s->pod_selector.present) {
        /* the nodes of its pods that are nodes still */
        for (size_t i = 0; i < n_pod_nodes; i++) {
            const char *name = pod_nodes->u.pod_nodes.nodes[i];
            const kobj *node = node_named(nodes, n_nodes, name, strlen(name));
            if (node != NULL)
                v[n++] = node->meta.name;
        }
        return sort_unique(v, n);
    }
    /* Kruise: Names != nil picks by name, unknown names skipped */
    if (sel->present && sel->has_names) {
        for (size_t i = 0; i < sel->n_names; i++) {
            const kobj *node = node_named(nodes, n_nodes, sel->names[i].ptr != NULL
                                                              ? sel->names[i].ptr : "",
                                          sel->names[i].len);
            if (node != NULL)
                v[n++] = node->meta.name;
        }
        return sort_unique(v, n);
    }
    for (size_t i = 0; i < n_nodes; i++) {
        const kobj_node *node = &nodes[i]->u.node;
        if (!sel->present ||
            ipj_selector_matches(sel, node->label_keys, node->label_values, node->n_labels))
            v[n++] = nodes[i]->meta.name;
    }
    return n;
}

/* ---- one node ---------------------------------------------------------------- */

const char *ipj_node_state_name(ipj_node_state s)
{
    switch (s) {
    case IPJ_NODE_UNSYNCED:
        return "unsynced";
    case IPJ_NODE_WAITING:
        return "waiting";
    case IPJ_NODE_PULLING:
        return "pulling";
    case IPJ_NODE_SUCCEEDED:
        return "succeeded";
    case IPJ_NODE_FAILED:
        return "failed";
    }
    return "?";
}

ipj_node_state ipj_node_state_of(const kobj *job, int not_ready)
{
    if (job == NULL)
        return not_ready ? IPJ_NODE_WAITING : IPJ_NODE_UNSYNCED;
    if (job->u.job.complete)
        return IPJ_NODE_SUCCEEDED;
    if (job->u.job.failed || job->u.job.given_up_reason != NULL)
        return IPJ_NODE_FAILED;
    return IPJ_NODE_PULLING;
}

int ipj_give_up(const kobj *waiting, long long backoff_limit)
{
    if (waiting == NULL)
        return 0;
    const kobj_job_pod *w = &waiting->u.job_pod;
    /* Kruise: backoffLimit + 1 attempts; we also stop at once where Kruise
     * would retry an answer that will not change */
    return w->pull_errors >= backoff_limit + 1 ||
           pullerr_judge(w->waiting_reason, w->waiting_message, w->failed_attempts) ==
               PULLERR_GIVE_UP;
}

int ipj_reverify_due(const ipj_values *v, const kobj *job, long long now_epoch)
{
    const kobj_job *j = &job->u.job;
    return v->never && (j->complete || j->failed) && j->finish_epoch > 0 &&
           now_epoch - j->finish_epoch > IPJ_REVERIFY_S;
}

/* ---- the CR ------------------------------------------------------------------ */

void ipj_message(char *buf, size_t size, ipj_phase phase, long long desired, long long succeeded,
                 long long failed)
{
    if (phase == IPJ_COMPLETED)
        snprintf(buf, size, IPJ_MSG_COMPLETED);
    else if (phase == IPJ_DEADLINE)
        snprintf(buf, size, IPJ_MSG_DEADLINE);
    else if (desired <= 0)
        snprintf(buf, size, IPJ_MSG_NO_PROGRESS);
    else
        snprintf(buf, size, IPJ_MSG_PROGRESS,
                 100.0 * (double)(succeeded + failed) / (double)desired);
}

ipj_phase ipj_completion(const ipj_values *v, long long active, long long start_epoch,
                         long long now_epoch)
{
    if (v->never)
        return IPJ_RUNNING;
    if (active <= 0)
        return IPJ_COMPLETED;
    if (v->has_deadline && now_epoch - start_epoch >= v->deadline_s)
        return IPJ_DEADLINE;
    return IPJ_RUNNING;
}

int ipj_ttl_due(const ipj_values *v, long long completion_epoch, long long now_epoch)
{
    return !v->never && v->has_ttl && completion_epoch > 0 &&
           now_epoch >= completion_epoch + v->ttl_s;
}

ipj_done ipj_done_of(const kobj *ipj)
{
    const kobj_imagepulljob *j = &ipj->u.ipj;
    if (j->completion_time == NULL)
        return IPJ_NOT_DONE;
    /* No annotation: completed by Kruise, or our patch of it is on its
     * way; either way done (and the annotation is written: D7). */
    if (j->completed_generation == NULL)
        return IPJ_DONE;
    char *end = NULL;
    errno = 0;
    long long g = strtoll(j->completed_generation, &end, 10);
    if (errno != 0 || end == j->completed_generation || *end != '\0')
        return IPJ_DONE;
    return j->generation > g ? IPJ_RERUN : IPJ_DONE;
}

/* The annotation ota-prepull/completed-generation says the generation the
 * object has now. */
static int marked(const kobj *ipj)
{
    const char *g = ipj->u.ipj.completed_generation;
    char *end = NULL;
    if (g == NULL)
        return 0;
    errno = 0;
    long long v = strtoll(g, &end, 10);
    return errno == 0 && end != g && *end == '\0' && v == ipj->u.ipj.generation;
}

static int has_finalizer(const kobj *ipj)
{
    for (size_t i = 0; i < ipj->u.ipj.n_finalizers; i++)
        if (strcmp(ipj->u.ipj.finalizers[i], OTA_KRUISE_DELETION_PROTECTION) == 0)
            return 1;
    return 0;
}

/* The words of a failed node (D3): the given-up annotations, the pod's
 * waiting reason, or the Job's Failed condition. */
static void failure_words(ipj_node *n, const kobj *job, const kobj *waiting)
{
    const kobj_job *j = &job->u.job;
    if (j->given_up_reason != NULL) {
        n->reason = j->given_up_reason;
        n->message = j->given_up_message;
    } else if (waiting != NULL && waiting->u.job_pod.waiting_reason != NULL) {
        n->reason = waiting->u.job_pod.waiting_reason;
        n->message = waiting->u.job_pod.waiting_message;
    } else {
        n->reason = j->failed_reason != NULL ? j->failed_reason : "Failed";
        n->message = j->failed_message;
    }
    if (n->message == NULL)
        n->message = "";
}

static const kobj *node_state_of(const ipj_input *in, const char *name)
{
    return node_named(in->nodes, in->n_nodes, name, strlen(name));
}

static void add_delete(ipj_plan *out, const kobj *job)
{
    if (!job->meta.deleting) /* else on its way */
        out->deletes[out->n_deletes++] = job;
}

/* The selected node of that name (out->nodes is in name order), or NULL. */
static ipj_node *selected(ipj_plan *out, const char *name)
{
    size_t lo = 0, hi = out->n_nodes;
    while (name != NULL && lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(out->nodes[mid].name, name);
        if (c == 0)
            return &out->nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Each selected node's Job of the current hash, its state, and the Jobs
 * of other hashes to delete (D2, D3).  A Job of a node no longer selected
 * is left to finish: a selector edit never re-runs nor cuts a node (D2). */
static int nodes_from_jobs(const ipj_input *in, ipj_plan *out, arena *a)
{
    /* each selected node's Job's pod */
    const kobj **waiting = arena_alloc(a, (out->n_nodes + 1) * sizeof(*waiting));
    if (waiting == NULL)
        return -1;
    memset(waiting, 0, (out->n_nodes + 1) * sizeof(*waiting));
    for (size_t i = 0; i < in->n_jobs; i++) {
        const kobj *job = in->jobs[i];
        if (!same(job->u.job.spec_hash, out->spec_hash)) {
            add_delete(out, job); /* a spec edit: the node runs again */
            continue;
        }
        ipj_node *n = selected(out, job->u.job.node_name);
        if (n == NULL && !job->u.job.complete && !job->u.job.failed && !job->meta.deleting)
            out->running_elsewhere++; /* left to finish; it still pulls (D5) */
        if (n != NULL && n->job == NULL) {
            n->job = job;
            waiting[n - out->nodes] = in->waiting != NULL ? in->waiting[i] : NULL;
        }
    }
    for (size_t k = 0; k < out->n_nodes; k++) {
        ipj_node *n = &out->nodes[k];
        const kobj *st = node_state_of(in, n->name);
        n->state = ipj_node_state_of(n->job, st != NULL && st->u.node.not_ready);
        if (n->job == NULL)
            continue;
        if (n->state == IPJ_NODE_PULLING && ipj_give_up(waiting[k], out->v.backoff_limit)) {
            n->state = IPJ_NODE_FAILED; /* from the pass that ends it (D4) */
            n->give_up = 1;
        }
        if (n->state == IPJ_NODE_FAILED) {
            failure_words(n, n->job, waiting[k]);
            /* ended by its deadline, its words only in this process's
             * memory (its pod is gone): kept on the Job */
            n->keep_words = !n->give_up && n->job->u.job.given_up_reason == NULL &&
                            waiting[k] != NULL && waiting[k]->u.job_pod.waiting_reason != NULL;
        }
        if (ipj_reverify_due(&out->v, n->job, in->now_epoch))
            add_delete(out, n->job);
    }
    return 0;
}

static int cmp_cstr(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int status_same(const kobj_imagepulljob *a, const kobj_imagepulljob *b)
{
    if (!b->has_status || a->desired != b->desired || a->active != b->active ||
        a->succeeded != b->succeeded || a->failed != b->failed ||
        !same(a->start_time, b->start_time) || !same(a->message, b->message) ||
        (a->completion_time == NULL) != (b->completion_time == NULL) ||
        !same(a->completion_time, b->completion_time) || a->n_failed_nodes != b->n_failed_nodes)
        return 0;
    for (size_t i = 0; i < a->n_failed_nodes; i++)
        if (!same(a->failed_nodes[i], b->failed_nodes[i]))
            return 0;
    return 1;
}

/* Counters, failedNodes, completion and message (D6, D7). */
static int decide_status(const ipj_input *in, ipj_plan *out, ipj_done done, arena *a)
{
    const kobj_imagepulljob *cached = &in->ipj->u.ipj;
    kobj_imagepulljob *st = &out->status;
    st->has_status = 1;
    st->desired = (long long)out->n_nodes;
    st->failed_nodes = arena_alloc(a, (out->n_nodes + 1) * sizeof(char *));
    if (st->failed_nodes == NULL)
        return -1;
    for (size_t k = 0; k < out->n_nodes; k++) {
        if (out->nodes[k].state == IPJ_NODE_SUCCEEDED)
            st->succeeded++;
        else if (out->nodes[k].state == IPJ_NODE_FAILED)
            st->failed++;
    }
    st->active = st->desired - st->succeeded - st->failed;
    /* the first pass's time, kept; a run after an edit starts anew (its
     * activeDeadlineSeconds would have passed at once) */
    /* (one that does not read as a time is no start: its deadline would
     * never come) */
    st->start_time = cached->start_time != NULL && kobj_parse_time(cached->start_time) > 0 &&
                             done != IPJ_RERUN
                         ? cached->start_time
                         : arena_strndup(a, in->now, strlen(in->now));
    long long start = kobj_parse_time(st->start_time);
    ipj_phase phase = ipj_completion(&out->v, st->active, start > 0 ? start : in->now_epoch,
                                     in->now_epoch);
    /* A run after an edit first clears the old completion (written as
     * running, whatever its nodes say): until the cache shows it cleared,
     * the old completionTime and a new mark would read as done. */
    if (done == IPJ_RERUN)
        phase = IPJ_RUNNING;
    for (size_t k = 0; k < out->n_nodes; k++) {
        ipj_node_state s = out->nodes[k].state;
        /* at the deadline, whatever did not succeed failed */
        if (s == IPJ_NODE_FAILED || (phase == IPJ_DEADLINE && s != IPJ_NODE_SUCCEEDED))
            st->failed_nodes[st->n_failed_nodes++] = (char *)out->nodes[k].name;
        if (phase == IPJ_DEADLINE && s == IPJ_NODE_PULLING)
            add_delete(out, out->nodes[k].job); /* frees its slots */
        if (phase != IPJ_RUNNING)
            out->nodes[k].offer = 0;
    }
    qsort(st->failed_nodes, st->n_failed_nodes, sizeof(char *), cmp_cstr);
    if (phase == IPJ_DEADLINE) {
        /* and counted failed (docs/design.md): nothing is active any more */
        st->failed = (long long)st->n_failed_nodes;
        st->active = st->desired - st->succeeded - st->failed;
    }
    char message[100];
    ipj_message(message, sizeof(message), phase, st->desired, st->succeeded, st->failed);
    st->message = arena_strndup(a, message, strlen(message));
    /* a rerun leaves completion_time NULL: null in the patch */
    if (phase != IPJ_RUNNING && !marked(in->ipj)) {
        /* D7's order: the generation is marked first, and the completion
         * written once the cache shows the mark.  A completion seen
         * without its mark reads as an edit since (ipj_done_of), and the
         * status write is held back 3 s where the mark is not. */
        out->completed_generation = arena_printf(a, "%lld", in->ipj->u.ipj.generation);
        out->drop_finalizer = has_finalizer(in->ipj);
        return out->completed_generation != NULL && st->message != NULL ? 0 : -1;
    }
    if (phase != IPJ_RUNNING)
        st->completion_time = arena_strndup(a, in->now, strlen(in->now));
    if (st->start_time == NULL || st->message == NULL ||
        (phase != IPJ_RUNNING && st->completion_time == NULL))
        return -1;
    out->write_status = !status_same(st, cached);
    return 0;
}

/* D5: the unsynced nodes, in name order, up to parallelism - pulling. */
static void offer_nodes(ipj_plan *out)
{
    /* its Jobs on nodes no longer selected pull as much as any */
    long long pulling = (long long)out->running_elsewhere;
    for (size_t k = 0; k < out->n_nodes; k++)
        pulling += out->nodes[k].state == IPJ_NODE_PULLING;
    long long room = out->v.parallelism - pulling;
    for (size_t k = 0; k < out->n_nodes && room > 0; k++)
        if (out->nodes[k].state == IPJ_NODE_UNSYNCED) {
            out->nodes[k].offer = 1;
            room--;
        }
}

int ipj_decide(const ipj_input *in, arena *a, ipj_plan *out)
{
    const kobj *cr = in->ipj;
    *out = (ipj_plan){0};
    ipj_effective(in->spec, &out->v);
    if (ipj_spec_hash(in->spec, &out->v, a, out->spec_hash) != 0)
        return -1;
    /* each Job is deleted once at most */
    out->deletes = arena_alloc(a, (in->n_jobs + 1) * sizeof(*out->deletes));
    if (out->deletes == NULL)
        return -1;
    if (cr->meta.deleting) {
        /* the garbage collector takes its Jobs; only Kruise's finalizer
         * may hold it (D9) */
        out->drop_finalizer = has_finalizer(cr);
        return 0;
    }
    ipj_done done = ipj_done_of(cr);
    if (done == IPJ_DONE) {
        /* Kruise: nothing more, but what completion leaves to do */
        if (cr->u.ipj.completed_generation == NULL) {
            out->completed_generation = arena_printf(a, "%lld", cr->u.ipj.generation);
            if (out->completed_generation == NULL)
                return -1;
        }
        out->drop_finalizer = has_finalizer(cr);
        out->delete_cr = ipj_ttl_due(&out->v, kobj_parse_time(cr->u.ipj.completion_time),
                                     in->now_epoch);
        return 0;
    }
    if (in->spec->pod_selector.present && in->pod_nodes == NULL) {
        /* no answer yet: counting none would complete it at once */
        out->list_pods = 1;
        return 0;
    }
    out->running = 1;
    const char **names = NULL;
    out->n_nodes = ipj_select_nodes(in->spec, in->nodes, in->n_nodes, in->pod_nodes, a, &names);
    out->nodes = arena_alloc(a, (out->n_nodes + 1) * sizeof(*out->nodes));
    if (names == NULL || out->nodes == NULL)
        return -1;
    for (size_t k = 0; k < out->n_nodes; k++)
        out->nodes[k] = (ipj_node){.name = names[k]};
    if (nodes_from_jobs(in, out, a) != 0)
        return -1;
    offer_nodes(out);
    return decide_status(in, out, done, a);
}

int ipj_job_spec(pull_job_spec *out, const kobj *ipj, const ipj_spec *s, const ipj_plan *plan,
                 const char *node, const char *job_name, const char *helper_image, arena *a)
{
    const char **image = arena_alloc(a, sizeof(*image));
    const char **secrets = arena_alloc(a, (s->n_pull_secrets + 1) * sizeof(*secrets));
    const char **annotations = arena_alloc(a, 2 * sizeof(*annotations));
    if (image == NULL || secrets == NULL || annotations == NULL)
        return -1;
    *image = arena_strndup(a, s->image.ptr != NULL ? s->image.ptr : "", s->image.len);
    for (size_t i = 0; i < s->n_pull_secrets; i++) {
        secrets[i] = arena_strndup(a, s->pull_secrets[i].ptr != NULL ? s->pull_secrets[i].ptr : "",
                                   s->pull_secrets[i].len);
        if (secrets[i] == NULL)
            return -1;
    }
    annotations[0] = OTA_ANN_JOB_SPEC_HASH;
    annotations[1] = plan->spec_hash;
    if (*image == NULL)
        return -1;
    *out = (pull_job_spec){
        .namespace = ipj->meta.namespace,
        .name = job_name,
        .node_name = node,
        .owner = {OTA_KRUISE_GROUP "/" OTA_KRUISE_V1ALPHA1, OTA_KRUISE_KIND_IMAGEPULLJOB,
                  ipj->meta.name, ipj->meta.uid, 1},
        .annotations = annotations,
        .n_annotations = 1,
        .images = image,
        .n_images = 1,
        .pull_secrets = secrets,
        .n_pull_secrets = s->n_pull_secrets,
        .pull_policy = plan->v.pull_policy,
        .helper_image = helper_image,
        /* the Job runs one attempt's pod; the attempts are the kubelet's
         * retries within it, counted by its pod's pull errors (D4) */
        .backoff_limit = 0,
        .active_deadline_seconds =
            (long)(plan->v.timeout_s * (plan->v.backoff_limit + 1) + IPJ_JOB_DEADLINE_SLACK_S),
    };
    return 0;
}

/* ---- bodies ------------------------------------------------------------------ */

char *ipj_status_patch(const kobj_imagepulljob *want, const kobj_imagepulljob *cached)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    json_map_open(&w, "status");
    json_kv_int(&w, "desired", want->desired);
    json_kv_int(&w, "active", want->active);
    json_kv_int(&w, "succeeded", want->succeeded);
    json_kv_int(&w, "failed", want->failed);
    /* omitempty as Kruise's Go types, but a merge patch keeps what it does
     * not name: what was there and is no more is removed with null */
    if (want->n_failed_nodes > 0) {
        json_array_open(&w, "failedNodes");
        for (size_t i = 0; i < want->n_failed_nodes; i++)
            json_str(&w, want->failed_nodes[i]);
        json_array_close(&w);
    } else if (cached->n_failed_nodes > 0) {
        json_kv_null(&w, "failedNodes");
    }
    if (want->start_time != NULL)
        json_kv_str(&w, "startTime", want->start_time);
    if (want->completion_time != NULL)
        json_kv_str(&w, "completionTime", want->completion_time);
    else if (cached->completion_time != NULL)
        json_kv_null(&w, "completionTime");
    json_kv_str(&w, "message", want->message != NULL ? want->message : "");
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_take(&w);
}

char *ipj_give_up_patch(const char *reason, const char *message, int end)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    json_map_open(&w, "metadata");
    json_map_open(&w, "annotations");
    json_kv_str(&w, OTA_ANN_JOB_GIVEN_UP_REASON, reason != NULL ? reason : "");
    json_kv_str(&w, OTA_ANN_JOB_GIVEN_UP_MESSAGE, message != NULL ? message : "");
    json_map_close(&w);
    json_map_close(&w);
    if (end) {
        /* the Job controller ends the pod (DeadlineExceeded) */
        json_map_open(&w, "spec");
        json_kv_int(&w, "activeDeadlineSeconds", 1);
        json_map_close(&w);
    }
    json_map_close(&w);
    return json_writer_take(&w);
}

char *ipj_meta_patch(const kobj *ipj, const char *generation, int drop_finalizer)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    json_map_open(&w, "metadata");
    /* a merge patch replaces the list whole: on the version it was read
     * from, or 409 and the next pass reads again */
    json_kv_str(&w, "resourceVersion",
                ipj->meta.resource_version != NULL ? ipj->meta.resource_version : "");
    if (generation != NULL) {
        json_map_open(&w, "annotations");
        json_kv_str(&w, OTA_ANN_IPJ_COMPLETED_GENERATION, generation);
        json_map_close(&w);
    }
    if (drop_finalizer) {
        json_array_open(&w, "finalizers");
        for (size_t i = 0; i < ipj->u.ipj.n_finalizers; i++)
            if (strcmp(ipj->u.ipj.finalizers[i], OTA_KRUISE_DELETION_PROTECTION) != 0)
                json_str(&w, ipj->u.ipj.finalizers[i]);
        json_array_close(&w);
    }
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_take(&w);
}

char *ipj_delete_options(const char *uid)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    json_kv_str(&w, "kind", "DeleteOptions");
    json_kv_str(&w, "apiVersion", "v1");
    json_kv_str(&w, "propagationPolicy", "Background");
    json_map_open(&w, "preconditions");
    json_kv_str(&w, "uid", uid);
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_take(&w);
}

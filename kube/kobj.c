/*
 * kobj.c - see kobj.h.  One decoder per kind over yajl's tree of a single
 * object; the tree lives only while one object is decoded.
 */
#include "kobj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ota_daemonset.h"
#include "ota_names.h"

static yajl_val get(yajl_val v, const char *const *path)
{
    return v != NULL ? yajl_tree_get(v, (const char **)path, yajl_t_any) : NULL;
}

static const char *get_str(yajl_val v, const char *const *path)
{
    yajl_val s = get(v, path);
    return YAJL_IS_STRING(s) ? YAJL_GET_STRING(s) : NULL;
}

yajl_val kobj_member(yajl_val obj, const char *key)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0)
            return obj->u.object.values[i];
    return NULL;
}

const char *kobj_member_str(yajl_val obj, const char *key)
{
    yajl_val s = kobj_member(obj, key);
    return YAJL_IS_STRING(s) ? YAJL_GET_STRING(s) : NULL;
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static int push_unique(char ***list, size_t *n, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0)
            return 0;
    char **grown = realloc(*list, (*n + 1) * sizeof(char *));
    if (grown == NULL)
        return -1;
    *list = grown;
    if ((grown[*n] = strdup(s)) == NULL)
        return -1;
    (*n)++;
    return 0;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static void decode_meta(yajl_val obj, kobj_meta *m)
{
    static const char *const p_ns[] = {"metadata", "namespace", NULL};
    static const char *const p_name[] = {"metadata", "name", NULL};
    static const char *const p_uid[] = {"metadata", "uid", NULL};
    static const char *const p_del[] = {"metadata", "deletionTimestamp", NULL};
    static const char *const p_owners[] = {"metadata", "ownerReferences", NULL};
    m->namespace = dup_or_null(get_str(obj, p_ns));
    m->name = dup_or_null(get_str(obj, p_name));
    m->uid = dup_or_null(get_str(obj, p_uid));
    m->deleting = YAJL_IS_STRING(get(obj, p_del));
    yajl_val owners = get(obj, p_owners);
    if (YAJL_IS_ARRAY(owners)) {
        for (size_t i = 0; i < owners->u.array.len; i++) {
            yajl_val ref = owners->u.array.values[i];
            if (YAJL_IS_TRUE(kobj_member(ref, "controller"))) {
                m->owner_uid = dup_or_null(kobj_member_str(ref, "uid"));
                break;
            }
        }
    }
}

static yajl_val labels_of(yajl_val obj)
{
    static const char *const p[] = {"metadata", "labels", NULL};
    return get(obj, p);
}

static yajl_val annotations_of(yajl_val obj)
{
    static const char *const p[] = {"metadata", "annotations", NULL};
    return get(obj, p);
}

static void decode_cond(yajl_val c, kobj_cond *out)
{
    out->present = 1;
    out->status = dup_or_null(kobj_member_str(c, "status"));
    out->reason = dup_or_null(kobj_member_str(c, "reason"));
    out->message = dup_or_null(kobj_member_str(c, "message"));
    out->last_transition_time = dup_or_null(kobj_member_str(c, "lastTransitionTime"));
}

static void free_cond(kobj_cond *c)
{
    free(c->status);
    free(c->reason);
    free(c->message);
    free(c->last_transition_time);
}

static void decode_daemonset(yajl_val obj, kobj_daemonset *ds)
{
    /* The webhook's rules (lib/ota_daemonset.h): an object that got in
     * before the webhook did, with a timeout the webhook rejects, gets
     * --pull-timeout. */
    yajl_val ann = annotations_of(obj);
    ds->ota = ota_daemonset_strategy(sv_from(kobj_member_str(ann, OTA_ANN_UPDATE_STRATEGY))) ==
              OTA_UPDATE_OTA;
    long timeout;
    if (ota_daemonset_timeout(sv_from(kobj_member_str(ann, OTA_ANN_PREPULL_TIMEOUT)), &timeout) == 0)
        ds->timeout_seconds = timeout;
}

static int collect_images(yajl_val containers, char ***list, size_t *n)
{
    if (!YAJL_IS_ARRAY(containers))
        return 0;
    for (size_t i = 0; i < containers->u.array.len; i++) {
        const char *image = kobj_member_str(containers->u.array.values[i], "image");
        if (image != NULL && image[0] != '\0' && push_unique(list, n, image) != 0)
            return -1;
    }
    return 0;
}

static int decode_revision(yajl_val obj, kobj_revision *rev)
{
    static const char *const p_rev[] = {"revision", NULL};
    static const char *const p_spec[] = {"data", "spec", "template", "spec", NULL};
    yajl_val r = get(obj, p_rev);
    rev->revision = YAJL_IS_INTEGER(r) ? YAJL_GET_INTEGER(r) : 0;
    rev->hash = dup_or_null(kobj_member_str(labels_of(obj), OTA_LABEL_REVISION_HASH));
    /* The images of revision H, from the revision's own copy of the
     * template, never from the live DaemonSet (which may be newer). */
    yajl_val spec = get(obj, p_spec);
    if (collect_images(kobj_member(spec, "initContainers"), &rev->init_images, &rev->n_init_images) != 0 ||
        collect_images(kobj_member(spec, "containers"), &rev->images, &rev->n_images) != 0)
        return -1;
    yajl_val secrets = kobj_member(spec, "imagePullSecrets");
    if (YAJL_IS_ARRAY(secrets)) {
        for (size_t i = 0; i < secrets->u.array.len; i++) {
            const char *name = kobj_member_str(secrets->u.array.values[i], "name");
            if (name != NULL && push_unique(&rev->pull_secrets, &rev->n_pull_secrets, name) != 0)
                return -1;
        }
    }
    return 0;
}

static void decode_pod(yajl_val obj, kobj_pod *pod)
{
    static const char *const p_node[] = {"spec", "nodeName", NULL};
    static const char *const p_conds[] = {"status", "conditions", NULL};
    pod->node_name = dup_or_null(get_str(obj, p_node));
    pod->hash = dup_or_null(kobj_member_str(labels_of(obj), OTA_LABEL_REVISION_HASH));
    yajl_val conds = get(obj, p_conds);
    if (!YAJL_IS_ARRAY(conds))
        return;
    for (size_t i = 0; i < conds->u.array.len; i++) {
        yajl_val c = conds->u.array.values[i];
        const char *type = kobj_member_str(c, "type");
        if (type == NULL)
            continue;
        /* the first of a type wins, as the webhook reads it */
        if (strcmp(type, OTA_COND_NEED_UPGRADE) == 0 && !pod->need_upgrade.present)
            decode_cond(c, &pod->need_upgrade);
        else if (strcmp(type, OTA_COND_IMAGE_READY) == 0 && !pod->image_ready.present)
            decode_cond(c, &pod->image_ready);
    }
}

static void decode_job(yajl_val obj, kobj_job *job)
{
    static const char *const p_conds[] = {"status", "conditions", NULL};
    job->pod_uid = dup_or_null(kobj_member_str(labels_of(obj), OTA_LABEL_POD_UID));
    job->revision_hash = dup_or_null(kobj_member_str(annotations_of(obj), OTA_ANN_JOB_REVISION));
    job->request_time = dup_or_null(kobj_member_str(annotations_of(obj), OTA_ANN_JOB_REQUEST_TIME));
    static const char *const p_start[] = {"status", "startTime", NULL};
    job->start_epoch = kobj_parse_time(get_str(obj, p_start));
    yajl_val conds = get(obj, p_conds);
    if (!YAJL_IS_ARRAY(conds))
        return;
    for (size_t i = 0; i < conds->u.array.len; i++) {
        yajl_val c = conds->u.array.values[i];
        const char *type = kobj_member_str(c, "type"), *status = kobj_member_str(c, "status");
        if (type == NULL || status == NULL || strcmp(status, "True") != 0)
            continue;
        if (strcmp(type, "Complete") == 0) {
            job->complete = 1;
        } else if (strcmp(type, "Failed") == 0 && !job->failed) {
            job->failed = 1;
            job->failed_reason = dup_or_null(kobj_member_str(c, "reason"));
            job->failed_message = dup_or_null(kobj_member_str(c, "message"));
        }
    }
}

static void decode_waiting(yajl_val statuses, kobj_job_pod *jp)
{
    if (!YAJL_IS_ARRAY(statuses))
        return;
    for (size_t i = 0; i < statuses->u.array.len && jp->waiting_reason == NULL; i++) {
        yajl_val st = statuses->u.array.values[i];
        yajl_val waiting = kobj_member(kobj_member(st, "state"), "waiting");
        const char *reason = kobj_member_str(waiting, "reason");
        /* ContainerCreating / PodInitializing say nothing about a pull */
        if (reason == NULL || strcmp(reason, "ContainerCreating") == 0 ||
            strcmp(reason, "PodInitializing") == 0)
            continue;
        jp->waiting_reason = strdup(reason);
        jp->waiting_message = dup_or_null(kobj_member_str(waiting, "message"));
        jp->backing_off = strcmp(reason, "ImagePullBackOff") == 0;
    }
}

static void decode_job_pod(yajl_val obj, kobj_job_pod *jp)
{
    static const char *const p_init[] = {"status", "initContainerStatuses", NULL};
    static const char *const p_main[] = {"status", "containerStatuses", NULL};
    yajl_val labels = labels_of(obj);
    const char *job = kobj_member_str(labels, "batch.kubernetes.io/job-name");
    jp->job_name = dup_or_null(job != NULL ? job : kobj_member_str(labels, "job-name"));
    decode_waiting(get(obj, p_init), jp);
    decode_waiting(get(obj, p_main), jp);
}

static int decode_node(yajl_val obj, kobj_node *node)
{
    static const char *const p_images[] = {"status", "images", NULL};
    yajl_val images = get(obj, p_images);
    if (!YAJL_IS_ARRAY(images))
        return 0;
    for (size_t i = 0; i < images->u.array.len; i++) {
        yajl_val names = kobj_member(images->u.array.values[i], "names");
        if (!YAJL_IS_ARRAY(names))
            continue;
        for (size_t j = 0; j < names->u.array.len; j++) {
            yajl_val n = names->u.array.values[j];
            if (YAJL_IS_STRING(n) && push_unique(&node->images, &node->n_images, YAJL_GET_STRING(n)) != 0)
                return -1;
        }
    }
    return 0;
}

kobj *kobj_decode(kobj_kind kind, yajl_val obj)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    kobj *o = calloc(1, sizeof(*o));
    if (o == NULL)
        return NULL;
    o->kind = kind;
    decode_meta(obj, &o->meta);
    int rc = 0;
    switch (kind) {
    case KOBJ_DAEMONSET:
        decode_daemonset(obj, &o->u.ds);
        break;
    case KOBJ_REVISION:
        rc = decode_revision(obj, &o->u.rev);
        break;
    case KOBJ_POD: {
        /* the precondition of the controller's status writes */
        static const char *const p_rv[] = {"metadata", "resourceVersion", NULL};
        o->meta.resource_version = dup_or_null(get_str(obj, p_rv));
        decode_pod(obj, &o->u.pod);
        break;
    }
    case KOBJ_JOB:
        decode_job(obj, &o->u.job);
        break;
    case KOBJ_JOB_POD:
        decode_job_pod(obj, &o->u.job_pod);
        break;
    case KOBJ_NODE:
        rc = decode_node(obj, &o->u.node);
        break;
    default:
        rc = -1;
    }
    if (rc != 0 || o->meta.name == NULL || o->meta.uid == NULL) {
        kobj_free(o);
        return NULL;
    }
    return o;
}

static ota_cond cond_view(const kobj_cond *c)
{
    return (ota_cond){c->present, sv_from(c->status), sv_from(c->reason), sv_from(c->message)};
}

ota_pod kobj_pod_view(const kobj *pod)
{
    const kobj_pod *p = &pod->u.pod;
    /* only the first of each type is cached: no counts, no entry list */
    return (ota_pod){.node_name = sv_from(p->node_name),
                     .need_upgrade = cond_view(&p->need_upgrade),
                     .image_ready = cond_view(&p->image_ready)};
}

kobj *kobj_copy_job_pod(const kobj *o)
{
    kobj *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->kind = KOBJ_JOB_POD;
    c->meta.namespace = dup_or_null(o->meta.namespace);
    c->meta.name = dup_or_null(o->meta.name);
    c->meta.uid = dup_or_null(o->meta.uid);
    c->u.job_pod.job_name = dup_or_null(o->u.job_pod.job_name);
    c->u.job_pod.waiting_reason = dup_or_null(o->u.job_pod.waiting_reason);
    c->u.job_pod.waiting_message = dup_or_null(o->u.job_pod.waiting_message);
    c->u.job_pod.backing_off = o->u.job_pod.backing_off;
    c->u.job_pod.failed_attempts = o->u.job_pod.failed_attempts;
    return c;
}

void kobj_free(kobj *o)
{
    if (o == NULL)
        return;
    free(o->meta.namespace);
    free(o->meta.name);
    free(o->meta.uid);
    free(o->meta.owner_uid);
    free(o->meta.resource_version);
    switch (o->kind) {
    case KOBJ_REVISION:
        free(o->u.rev.hash);
        free_list(o->u.rev.init_images, o->u.rev.n_init_images);
        free_list(o->u.rev.images, o->u.rev.n_images);
        free_list(o->u.rev.pull_secrets, o->u.rev.n_pull_secrets);
        break;
    case KOBJ_POD:
        free(o->u.pod.node_name);
        free(o->u.pod.hash);
        free_cond(&o->u.pod.need_upgrade);
        free_cond(&o->u.pod.image_ready);
        break;
    case KOBJ_JOB:
        free(o->u.job.pod_uid);
        free(o->u.job.revision_hash);
        free(o->u.job.request_time);
        free(o->u.job.failed_reason);
        free(o->u.job.failed_message);
        break;
    case KOBJ_JOB_POD:
        free(o->u.job_pod.job_name);
        free(o->u.job_pod.waiting_reason);
        free(o->u.job_pod.waiting_message);
        break;
    case KOBJ_NODE:
        free_list(o->u.node.images, o->u.node.n_images);
        break;
    default:
        break;
    }
    free(o);
}

const char *kobj_ref(const kobj *o, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", o->meta.namespace != NULL ? o->meta.namespace : "",
             o->meta.name != NULL ? o->meta.name : "");
    return buf;
}

long long kobj_parse_time(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (long long)timegm(&tm);
}

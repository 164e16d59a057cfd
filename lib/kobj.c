/*
 * kobj.c - see kobj.h.  One decoder per kind over yajl's tree of a single
 * object; the tree lives only while one object is decoded.  A decoder fills
 * a draft kobj whose strings point into the tree, then kobj_pack copies it
 * into one block: the struct, its list arrays, then the strings that are
 * its own, while repeated strings come from the intern pool.
 */
#include "kobj.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "ota_daemonset.h"
#include "ota_names.h"
#include "pullerr.h"

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

/* ---- interned strings ----------------------------------------------------
 *
 * A set of reference-counted strings, open addressing with linear probing
 * and backward-shift deletion (as kube/store.c).  A kobj field that points
 * outside the kobj's own block points at an entry's text. */

typedef struct intern_entry {
    uint64_t hash;
    size_t refs;
    char text[];
} intern_entry;

static struct {
    intern_entry **slots;
    size_t cap, len; /* cap is 0 or a power of two */
} pool;

static uint64_t hash_text(const char *k)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *k; k++) {
        h ^= (unsigned char)*k;
        h *= 1099511628211ull;
    }
    return h;
}

static intern_entry *entry_of(const char *text)
{
    return (intern_entry *)(void *)(text - offsetof(intern_entry, text));
}

static size_t pool_find(uint64_t h, const char *s)
{
    size_t mask = pool.cap - 1, i = (size_t)h & mask;
    while (pool.slots[i] != NULL && (pool.slots[i]->hash != h || strcmp(pool.slots[i]->text, s) != 0))
        i = (i + 1) & mask;
    return i;
}

static int pool_grow(void)
{
    size_t cap = pool.cap == 0 ? 64 : pool.cap * 2, old_cap = pool.cap;
    intern_entry **old = pool.slots, **slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return -1;
    pool.slots = slots;
    pool.cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i] != NULL)
            pool.slots[pool_find(old[i]->hash, old[i]->text)] = old[i];
    free(old);
    return 0;
}

/* The pool's copy of s with one more reference, or NULL (out of memory). */
static char *intern_get(const char *s)
{
    if ((pool.len + 1) * 4 > pool.cap * 3 && pool_grow() != 0)
        return NULL;
    uint64_t h = hash_text(s);
    size_t i = pool_find(h, s);
    if (pool.slots[i] != NULL) {
        pool.slots[i]->refs++;
        return pool.slots[i]->text;
    }
    size_t len = strlen(s);
    intern_entry *e = malloc(offsetof(intern_entry, text) + len + 1);
    if (e == NULL)
        return NULL;
    e->hash = h;
    e->refs = 1;
    memcpy(e->text, s, len + 1);
    pool.slots[i] = e;
    pool.len++;
    return e->text;
}

static void intern_put(const char *text)
{
    intern_entry *e = entry_of(text);
    if (--e->refs > 0)
        return;
    size_t mask = pool.cap - 1, i = (size_t)e->hash & mask;
    while (pool.slots[i] != e)
        i = (i + 1) & mask;
    pool.slots[i] = NULL;
    pool.len--;
    free(e);
    for (size_t j = (i + 1) & mask; pool.slots[j] != NULL; j = (j + 1) & mask) {
        size_t home = (size_t)pool.slots[j]->hash & mask;
        int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            pool.slots[i] = pool.slots[j];
            pool.slots[j] = NULL;
            i = j;
        }
    }
    if (pool.len == 0) { /* the last object gone: no table left behind */
        free(pool.slots);
        pool.slots = NULL;
        pool.cap = 0;
    }
}

size_t kobj_interned(void)
{
    return pool.len;
}

/* ---- the fields of a kobj ------------------------------------------------ */

/* Calls fn on every string field of o (list items included), saying whether
 * its value tends to repeat across objects (then it is interned). */
typedef void (*field_fn)(char **field, int shared, void *ctx);

static void each_list(char **list, size_t n, int shared, field_fn fn, void *ctx)
{
    for (size_t i = 0; i < n; i++)
        fn(&list[i], shared, ctx);
}

static void each_cond(kobj_cond *c, field_fn fn, void *ctx)
{
    fn(&c->status, 1, ctx);
    fn(&c->reason, 1, ctx);
    fn(&c->message, 1, ctx); /* "controllerrevision: <hash>" on every pod */
    fn(&c->last_transition_time, 0, ctx);
}

static void each_field(kobj *o, field_fn fn, void *ctx)
{
    fn(&o->meta.namespace, 1, ctx);
    fn(&o->meta.name, 0, ctx);
    fn(&o->meta.uid, 0, ctx);
    fn(&o->meta.owner_uid, 1, ctx);
    fn(&o->meta.resource_version, 0, ctx); /* pods and ImagePullJobs only */
    switch (o->kind) {
    case KOBJ_REVISION:
        fn(&o->u.rev.hash, 0, ctx);
        each_list(o->u.rev.init_images, o->u.rev.n_init_images, 1, fn, ctx);
        each_list(o->u.rev.images, o->u.rev.n_images, 1, fn, ctx);
        each_list(o->u.rev.pull_secrets, o->u.rev.n_pull_secrets, 1, fn, ctx);
        each_list(o->u.rev.volume_images, o->u.rev.n_volume_images, 1, fn, ctx);
        break;
    case KOBJ_DAEMONSET:
        fn(&o->u.ds.bad_timeout, 0, ctx);
        fn(&o->u.ds.auto_parallelism, 1, ctx);
        fn(&o->u.ds.auto_timeout, 1, ctx);
        fn(&o->u.ds.auto_min_ready, 1, ctx);
        fn(&o->u.ds.auto_window, 1, ctx);
        break;
    case KOBJ_POD:
        fn(&o->u.pod.node_name, 0, ctx); /* a DaemonSet has one pod per node */
        fn(&o->u.pod.hash, 1, ctx);
        each_cond(&o->u.pod.need_upgrade, fn, ctx);
        each_cond(&o->u.pod.image_ready, fn, ctx);
        each_cond(&o->u.pod.auto_prepull, fn, ctx);
        break;
    case KOBJ_JOB:
        fn(&o->u.job.pod_uid, 0, ctx);
        fn(&o->u.job.revision_hash, 1, ctx);
        fn(&o->u.job.request_time, 0, ctx);
        fn(&o->u.job.node_name, 1, ctx); /* many Jobs per node over time */
        fn(&o->u.job.spec_hash, 1, ctx);  /* one per ImagePullJob version */
        fn(&o->u.job.given_up_reason, 1, ctx);
        fn(&o->u.job.given_up_message, 0, ctx);
        fn(&o->u.job.failed_reason, 1, ctx);
        fn(&o->u.job.failed_message, 0, ctx);
        each_list(o->u.job.target_images, o->u.job.n_targets, 1, fn, ctx);
        each_list(o->u.job.target_reasons, o->u.job.n_targets, 1, fn, ctx);
        each_list(o->u.job.target_messages, o->u.job.n_targets, 1, fn, ctx);
        break;
    case KOBJ_JOB_POD:
        fn(&o->u.job_pod.job_name, 0, ctx);
        fn(&o->u.job_pod.node_name, 1, ctx); /* many pull pods per node */
        fn(&o->u.job_pod.waiting_reason, 1, ctx);
        fn(&o->u.job_pod.waiting_message, 1, ctx);
        for (size_t i = 0; i < o->u.job_pod.n_targets; i++) {
            fn(&o->u.job_pod.targets[i].reason, 1, ctx);
            fn(&o->u.job_pod.targets[i].message, 1, ctx);
        }
        break;
    case KOBJ_NODE:
        each_list(o->u.node.images, o->u.node.n_images, 1, fn, ctx); /* same images on many nodes */
        fn(&o->u.node.runtime_version, 1, ctx); /* one runtime on most nodes */
        break;
    case KOBJ_NODE_STATE: /* a fleet's nodes share most labels */
        fn(&o->u.node.runtime_version, 1, ctx);
        each_list(o->u.node.label_keys, o->u.node.n_labels, 1, fn, ctx);
        each_list(o->u.node.label_values, o->u.node.n_labels, 1, fn, ctx);
        each_list(o->u.node.images, o->u.node.n_images, 1, fn, ctx);
        break;
    case KOBJ_IMAGEPULLJOB:
        fn(&o->u.ipj.spec, 0, ctx);
        fn(&o->u.ipj.creation_time, 0, ctx);
        fn(&o->u.ipj.completed_generation, 0, ctx);
        each_list(o->u.ipj.finalizers, o->u.ipj.n_finalizers, 1, fn, ctx);
        fn(&o->u.ipj.start_time, 0, ctx);
        fn(&o->u.ipj.completion_time, 0, ctx);
        fn(&o->u.ipj.message, 1, ctx);
        each_list(o->u.ipj.failed_nodes, o->u.ipj.n_failed_nodes, 1, fn, ctx);
        break;
    case KOBJ_IMAGECACHE:
        fn(&o->u.ic.spec, 0, ctx);
        fn(&o->u.ic.object, 0, ctx);
        fn(&o->u.ic.acted_spec, 0, ctx);
        fn(&o->u.ic.acted_start, 0, ctx);
        fn(&o->u.ic.status, 1, ctx);
        fn(&o->u.ic.reason, 1, ctx);
        fn(&o->u.ic.message, 1, ctx);
        fn(&o->u.ic.start_time, 0, ctx);
        fn(&o->u.ic.completion_time, 0, ctx);
        each_list(o->u.ic.failure_images, o->u.ic.n_failure_images, 1, fn, ctx);
        break;
    case KOBJ_POD_NODES:
        fn(&o->u.pod_nodes.query, 0, ctx);
        each_list(o->u.pod_nodes.nodes, o->u.pod_nodes.n_nodes, 1, fn, ctx);
        break;
    default:
        break;
    }
}

/* The list arrays of o (at most KOBJ_LISTS), as pointers to the fields. */
#define KOBJ_LISTS 4
static size_t lists_of(kobj *o, char ****lists, size_t *counts)
{
    switch (o->kind) {
    case KOBJ_REVISION:
        lists[0] = &o->u.rev.init_images;
        counts[0] = o->u.rev.n_init_images;
        lists[1] = &o->u.rev.images;
        counts[1] = o->u.rev.n_images;
        lists[2] = &o->u.rev.pull_secrets;
        counts[2] = o->u.rev.n_pull_secrets;
        lists[3] = &o->u.rev.volume_images;
        counts[3] = o->u.rev.n_volume_images;
        return 4;
    case KOBJ_JOB:
        lists[0] = &o->u.job.target_images;
        counts[0] = o->u.job.n_targets;
        lists[1] = &o->u.job.target_reasons;
        counts[1] = o->u.job.n_targets;
        lists[2] = &o->u.job.target_messages;
        counts[2] = o->u.job.n_targets;
        return 3;
    case KOBJ_NODE:
        lists[0] = &o->u.node.images;
        counts[0] = o->u.node.n_images;
        return 1;
    case KOBJ_NODE_STATE:
        lists[0] = &o->u.node.label_keys;
        counts[0] = o->u.node.n_labels;
        lists[1] = &o->u.node.label_values;
        counts[1] = o->u.node.n_labels;
        lists[2] = &o->u.node.images;
        counts[2] = o->u.node.n_images;
        return 3;
    case KOBJ_IMAGEPULLJOB:
        lists[0] = &o->u.ipj.finalizers;
        counts[0] = o->u.ipj.n_finalizers;
        lists[1] = &o->u.ipj.failed_nodes;
        counts[1] = o->u.ipj.n_failed_nodes;
        return 2;
    case KOBJ_IMAGECACHE:
        lists[0] = &o->u.ic.failure_images;
        counts[0] = o->u.ic.n_failure_images;
        return 1;
    case KOBJ_POD_NODES:
        lists[0] = &o->u.pod_nodes.nodes;
        counts[0] = o->u.pod_nodes.n_nodes;
        return 1;
    default:
        return 0;
    }
}

static int in_block(const kobj *o, const char *p)
{
    uintptr_t a = (uintptr_t)(const void *)o, x = (uintptr_t)(const void *)p;
    return x >= a && x < a + o->block_size;
}

typedef struct pack_ctx {
    size_t bytes; /* sizing: packed string bytes */
    char *cursor; /* copying: where the next packed string goes */
    int failed;
} pack_ctx;

static void size_field(char **field, int shared, void *ctx)
{
    pack_ctx *p = ctx;
    if (*field != NULL && !shared)
        p->bytes += strlen(*field) + 1;
}

static void copy_field(char **field, int shared, void *ctx)
{
    pack_ctx *p = ctx;
    if (*field == NULL)
        return;
    if (p->failed) { /* kobj_free must release only what was taken */
        *field = NULL;
    } else if (shared) {
        if ((*field = intern_get(*field)) == NULL)
            p->failed = 1;
    } else {
        size_t len = strlen(*field) + 1;
        memcpy(p->cursor, *field, len);
        *field = p->cursor;
        p->cursor += len;
    }
}

kobj *kobj_pack(const kobj *draft)
{
    kobj probe = *draft;
    char ***lists[KOBJ_LISTS];
    size_t counts[KOBJ_LISTS], n_lists = lists_of(&probe, lists, counts), list_bytes = 0;
    for (size_t i = 0; i < n_lists; i++)
        list_bytes += counts[i] * sizeof(char *);
    /* a Job pod's targets follow the lists (pointer-aligned: the struct
     * and the lists are multiples of a pointer's size) */
    size_t n_targets = draft->kind == KOBJ_JOB_POD ? draft->u.job_pod.n_targets : 0;
    list_bytes += n_targets * sizeof(kobj_target);
    pack_ctx p = {0};
    each_field(&probe, size_field, &p);
    size_t total = sizeof(kobj) + list_bytes + p.bytes;
    if (total > UINT_MAX)
        return NULL;
    kobj *o = malloc(total);
    if (o == NULL)
        return NULL;
    *o = *draft;
    o->block_size = (unsigned)total;
    char *cursor = (char *)(o + 1);
    n_lists = lists_of(o, lists, counts);
    for (size_t i = 0; i < n_lists; i++) {
        if (counts[i] == 0) {
            *lists[i] = NULL;
            continue;
        }
        memcpy(cursor, *lists[i], counts[i] * sizeof(char *));
        *lists[i] = (char **)(void *)cursor;
        cursor += counts[i] * sizeof(char *);
    }
    if (n_targets > 0) {
        memcpy(cursor, draft->u.job_pod.targets, n_targets * sizeof(kobj_target));
        o->u.job_pod.targets = (kobj_target *)(void *)cursor;
        cursor += n_targets * sizeof(kobj_target);
    } else if (o->kind == KOBJ_JOB_POD) {
        o->u.job_pod.targets = NULL;
    }
    p.cursor = cursor;
    each_field(o, copy_field, &p);
    if (p.failed) {
        kobj_free(o);
        return NULL;
    }
    return o;
}

static void release_field(char **field, int shared, void *ctx)
{
    (void)shared;
    const kobj *o = ctx;
    if (*field != NULL && !in_block(o, *field))
        intern_put(*field);
}

void kobj_free(kobj *o)
{
    if (o == NULL)
        return;
    each_field(o, release_field, o);
    free(o);
}

/* Replaces *reason_field and *message_field (shared strings of o) by
 * interned copies of reason and message. */
static int set_words(kobj *o, char **reason_field, char **message_field, const char *reason,
                     const char *message)
{
    char *r = reason != NULL ? intern_get(reason) : NULL;
    char *m = message != NULL ? intern_get(message) : NULL;
    if ((reason != NULL && r == NULL) || (message != NULL && m == NULL)) {
        if (r != NULL)
            intern_put(r);
        if (m != NULL)
            intern_put(m);
        return -1;
    }
    release_field(reason_field, 1, o);
    release_field(message_field, 1, o);
    *reason_field = r;
    *message_field = m;
    return 0;
}

int kobj_job_pod_set_target_words(kobj *o, size_t i, const char *reason, const char *message)
{
    if (o->kind != KOBJ_JOB_POD || i >= o->u.job_pod.n_targets)
        return -1;
    kobj_target *t = &o->u.job_pod.targets[i];
    return set_words(o, &t->reason, &t->message, reason, message);
}

int kobj_job_pod_set_waiting(kobj *o, const char *reason, const char *message)
{
    kobj_job_pod *jp = &o->u.job_pod;
    return set_words(o, &jp->waiting_reason, &jp->waiting_message, reason, message);
}

/* ---- decoding into a draft -------------------------------------------------
 *
 * A draft's strings point into the yajl tree (read-only, the cast is only
 * for the shared struct); its list arrays are malloc'd and freed by
 * free_draft once kobj_pack has copied them. */

static char *borrow(const char *s)
{
    return (char *)(uintptr_t)s;
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
    grown[(*n)++] = borrow(s);
    return 0;
}

static void free_draft(kobj *d)
{
    char ***lists[KOBJ_LISTS];
    size_t counts[KOBJ_LISTS], n = lists_of(d, lists, counts);
    for (size_t i = 0; i < n; i++)
        free(*lists[i]);
    if (d->kind == KOBJ_JOB_POD)
        free(d->u.job_pod.targets);
}

static void decode_meta(yajl_val obj, kobj_meta *m)
{
    static const char *const p_ns[] = {"metadata", "namespace", NULL};
    static const char *const p_name[] = {"metadata", "name", NULL};
    static const char *const p_uid[] = {"metadata", "uid", NULL};
    static const char *const p_del[] = {"metadata", "deletionTimestamp", NULL};
    static const char *const p_owners[] = {"metadata", "ownerReferences", NULL};
    m->namespace = borrow(get_str(obj, p_ns));
    m->name = borrow(get_str(obj, p_name));
    m->uid = borrow(get_str(obj, p_uid));
    m->deleting = YAJL_IS_STRING(get(obj, p_del));
    yajl_val owners = get(obj, p_owners);
    if (YAJL_IS_ARRAY(owners)) {
        for (size_t i = 0; i < owners->u.array.len; i++) {
            yajl_val ref = owners->u.array.values[i];
            if (YAJL_IS_TRUE(kobj_member(ref, "controller"))) {
                m->owner_uid = borrow(kobj_member_str(ref, "uid"));
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
    out->status = borrow(kobj_member_str(c, "status"));
    out->reason = borrow(kobj_member_str(c, "reason"));
    out->message = borrow(kobj_member_str(c, "message"));
    out->last_transition_time = borrow(kobj_member_str(c, "lastTransitionTime"));
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
    const char *value = kobj_member_str(ann, OTA_ANN_PREPULL_TIMEOUT);
    if (ota_daemonset_timeout(sv_from(value), &timeout) == 0)
        ds->timeout_seconds = timeout;
    else if (kobj_member(ann, OTA_ANN_PREPULL_TIMEOUT) != NULL)
        /* kept to be said (controller: a warning and an Event); a value
         * that is not a string is shown as such */
        ds->bad_timeout = borrow(value != NULL ? value : "(not a string)");
    /* automatic pre-pull's: judged by the controller (autopull.h), which
     * says what is wrong with a value */
    struct {
        const char *key;
        char **field;
    } autos[] = {{OTA_ANN_PREDOWNLOAD_PARALLELISM, &ds->auto_parallelism},
                 {OTA_ANN_PREDOWNLOAD_TIMEOUT, &ds->auto_timeout},
                 {OTA_ANN_PREDOWNLOAD_MIN_READY, &ds->auto_min_ready},
                 {OTA_ANN_PREPULL_WINDOW, &ds->auto_window}};
    for (size_t i = 0; i < sizeof(autos) / sizeof(autos[0]); i++) {
        if (kobj_member(ann, autos[i].key) == NULL)
            continue;
        const char *v = kobj_member_str(ann, autos[i].key);
        *autos[i].field = borrow(v != NULL ? v : "");
    }
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
    rev->hash = borrow(kobj_member_str(labels_of(obj), OTA_LABEL_REVISION_HASH));
    /* The images of revision H, from the revision's own copy of the
     * template, never from the live DaemonSet (which may be newer). */
    yajl_val spec = get(obj, p_spec);
    if (collect_images(kobj_member(spec, "initContainers"), &rev->init_images, &rev->n_init_images) != 0 ||
        collect_images(kobj_member(spec, "containers"), &rev->images, &rev->n_images) != 0)
        return -1;
    yajl_val vols = kobj_member(spec, "volumes");
    for (size_t i = 0; YAJL_IS_ARRAY(vols) && i < vols->u.array.len &&
                       rev->n_volume_images < KOBJ_MAX_VOLUME_IMAGES;
         i++) {
        const char *ref =
            kobj_member_str(kobj_member(vols->u.array.values[i], "image"), "reference");
        if (ref != NULL && ref[0] != '\0' &&
            push_unique(&rev->volume_images, &rev->n_volume_images, ref) != 0)
            return -1;
    }
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
    pod->node_name = borrow(get_str(obj, p_node));
    pod->hash = borrow(kobj_member_str(labels_of(obj), OTA_LABEL_REVISION_HASH));
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
        else if (strcmp(type, OTA_COND_AUTO_PREPULL) == 0 && !pod->auto_prepull.present)
            decode_cond(c, &pod->auto_prepull);
        else if (strcmp(type, "Ready") == 0) {
            const char *st = kobj_member_str(c, "status");
            pod->ready = st != NULL && strcmp(st, "True") == 0;
        }
    }
}

static int target_index(const char *name);

/* Grows the Job's three target lists to hold index i (NULLs). */
static int job_targets_hold(kobj_job *job, size_t i)
{
    if (i < job->n_targets)
        return 0;
    char ***lists[3] = {&job->target_images, &job->target_reasons, &job->target_messages};
    for (size_t k = 0; k < 3; k++) {
        char **grown = realloc(*lists[k], (i + 1) * sizeof(char *));
        if (grown == NULL)
            return -1;
        for (size_t j = job->n_targets; j <= i; j++)
            grown[j] = NULL;
        *lists[k] = grown;
    }
    job->n_targets = i + 1;
    return 0;
}

/* The index after prefix in key ("<prefix><i>", i as target_index reads
 * it), or -1. */
static int prefixed_index(const char *key, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(key, prefix, n) != 0)
        return -1;
    char name[16];
    if (strlen(key + n) > 2)
        return -1;
    snprintf(name, sizeof(name), "pull-%s", key + n);
    return target_index(name);
}

/* The image volume (spec.volumes[].image.reference) a container mounts
 * first, or NULL: an image-volume pull Job's target (prepull_job.h). */
static const char *mounted_image_volume(yajl_val vols, yajl_val c)
{
    yajl_val mounts = kobj_member(c, "volumeMounts");
    if (!YAJL_IS_ARRAY(mounts) || mounts->u.array.len == 0)
        return NULL;
    const char *vol = kobj_member_str(mounts->u.array.values[0], "name");
    for (size_t i = 0; vol != NULL && YAJL_IS_ARRAY(vols) && i < vols->u.array.len; i++) {
        yajl_val v = vols->u.array.values[i];
        const char *name = kobj_member_str(v, "name");
        if (name != NULL && strcmp(name, vol) == 0)
            return kobj_member_str(kobj_member(v, "image"), "reference");
    }
    return NULL;
}

/* kobj_job's targets: the containers' images (an image-volume Job's: the
 * reference of the image volume the container mounts) and the words kept. */
static int decode_job_targets(yajl_val obj, yajl_val ann, kobj_job *job)
{
    static const char *const p_cont[] = {"spec", "template", "spec", "containers", NULL};
    static const char *const p_vols[] = {"spec", "template", "spec", "volumes", NULL};
    yajl_val cs = get(obj, p_cont), vols = get(obj, p_vols);
    for (size_t i = 0; YAJL_IS_ARRAY(cs) && i < cs->u.array.len; i++) {
        yajl_val c = cs->u.array.values[i];
        const char *name = kobj_member_str(c, "name");
        int idx = target_index(name);
        if (idx < 0)
            continue;
        const char *image = kobj_member_str(c, "image");
        const char *volume_image = mounted_image_volume(vols, c);
        if (volume_image != NULL)
            image = volume_image;
        if (strncmp(name, "rmi-", 4) == 0) {
            yajl_val cmd = kobj_member(c, "command");
            image = NULL;
            if (YAJL_IS_ARRAY(cmd) && cmd->u.array.len > 0 &&
                YAJL_IS_STRING(cmd->u.array.values[cmd->u.array.len - 1]))
                image = YAJL_GET_STRING(cmd->u.array.values[cmd->u.array.len - 1]);
        }
        if (job_targets_hold(job, (size_t)idx) != 0)
            return -1;
        job->target_images[idx] = borrow(image);
    }
    for (size_t i = 0; YAJL_IS_OBJECT(ann) && i < ann->u.object.len; i++) {
        const char *key = ann->u.object.keys[i];
        yajl_val v = ann->u.object.values[i];
        int r = prefixed_index(key, OTA_ANN_JOB_GIVEN_UP_REASON_PREFIX);
        int m = prefixed_index(key, OTA_ANN_JOB_GIVEN_UP_MESSAGE_PREFIX);
        int idx = r >= 0 ? r : m;
        if (idx < 0 || !YAJL_IS_STRING(v))
            continue;
        if (job_targets_hold(job, (size_t)idx) != 0)
            return -1;
        if (r >= 0)
            job->target_reasons[idx] = borrow(YAJL_GET_STRING(v));
        else
            job->target_messages[idx] = borrow(YAJL_GET_STRING(v));
    }
    return 0;
}

static int decode_job(yajl_val obj, kobj_job *job)
{
    static const char *const p_conds[] = {"status", "conditions", NULL};
    job->pod_uid = borrow(kobj_member_str(labels_of(obj), OTA_LABEL_POD_UID));
    job->revision_hash = borrow(kobj_member_str(annotations_of(obj), OTA_ANN_JOB_REVISION));
    job->request_time = borrow(kobj_member_str(annotations_of(obj), OTA_ANN_JOB_REQUEST_TIME));
    yajl_val ann = annotations_of(obj);
    job->spec_hash = borrow(kobj_member_str(ann, OTA_ANN_JOB_SPEC_HASH));
    job->given_up_reason = borrow(kobj_member_str(ann, OTA_ANN_JOB_GIVEN_UP_REASON));
    job->given_up_message = borrow(kobj_member_str(ann, OTA_ANN_JOB_GIVEN_UP_MESSAGE));
    if (decode_job_targets(obj, ann, job) != 0)
        return -1;
    static const char *const p_node[] = {"spec", "template", "spec", "nodeName", NULL};
    job->node_name = borrow(get_str(obj, p_node));
    static const char *const p_start[] = {"status", "startTime", NULL};
    job->start_epoch = kobj_parse_time(get_str(obj, p_start));
    yajl_val conds = get(obj, p_conds);
    if (!YAJL_IS_ARRAY(conds))
        return 0;
    for (size_t i = 0; i < conds->u.array.len; i++) {
        yajl_val c = conds->u.array.values[i];
        const char *type = kobj_member_str(c, "type"), *status = kobj_member_str(c, "status");
        if (type == NULL || status == NULL || strcmp(status, "True") != 0)
            continue;
        if (strcmp(type, "Complete") == 0) {
            job->complete = 1;
            job->finish_epoch = kobj_parse_time(kobj_member_str(c, "lastTransitionTime"));
        } else if (strcmp(type, "Failed") == 0 && !job->failed) {
            job->failed = 1;
            job->finish_epoch = kobj_parse_time(kobj_member_str(c, "lastTransitionTime"));
            job->failed_reason = borrow(kobj_member_str(c, "reason"));
            job->failed_message = borrow(kobj_member_str(c, "message"));
        }
    }
    return 0;
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
        jp->waiting_reason = borrow(reason);
        jp->waiting_message = borrow(kobj_member_str(waiting, "message"));
        jp->backing_off = pullerr_backing_off(reason);
    }
}

/* The index i of a container named "pull-<i>" or "rmi-<i>" (decimal, no
 * leading zero, below KOBJ_MAX_TARGETS), or -1. */
static int target_index(const char *name)
{
    static const char *const prefixes[] = {OTA_JOB_PULL_CONTAINER_PREFIX, "rmi-"};
    for (size_t k = 0; name != NULL && k < 2; k++) {
        size_t n = strlen(prefixes[k]);
        if (strncmp(name, prefixes[k], n) != 0)
            continue;
        const char *d = name + n;
        int v = 0;
        size_t len = strlen(d);
        if (len == 0 || len > 2 || (len == 2 && d[0] == '0'))
            return -1;
        for (; *d != '\0'; d++) {
            if (*d < '0' || *d > '9')
                return -1;
            v = v * 10 + (*d - '0');
        }
        return v < KOBJ_MAX_TARGETS ? v : -1;
    }
    return -1;
}

/* Each target container's status (kobj_target): a malloc'd array in the
 * draft, copied by kobj_pack.  -1 when memory runs out. */
static int decode_targets(yajl_val statuses, kobj_job_pod *jp)
{
    if (!YAJL_IS_ARRAY(statuses))
        return 0;
    for (size_t i = 0; i < statuses->u.array.len; i++) {
        yajl_val st = statuses->u.array.values[i];
        int idx = target_index(kobj_member_str(st, "name"));
        if (idx < 0)
            continue;
        if ((size_t)idx >= jp->n_targets) {
            kobj_target *grown = realloc(jp->targets, ((size_t)idx + 1) * sizeof(kobj_target));
            if (grown == NULL)
                return -1;
            memset(grown + jp->n_targets, 0,
                   ((size_t)idx + 1 - jp->n_targets) * sizeof(kobj_target));
            jp->targets = grown;
            jp->n_targets = (size_t)idx + 1;
        }
        kobj_target *t = &jp->targets[idx];
        yajl_val state = kobj_member(st, "state");
        yajl_val waiting = kobj_member(state, "waiting");
        yajl_val term = kobj_member(state, "terminated");
        yajl_val running = kobj_member(state, "running");
        t->started_epoch = kobj_parse_time(kobj_member_str(YAJL_IS_OBJECT(term) ? term : running,
                                                           "startedAt"));
        if (YAJL_IS_OBJECT(term)) {
            yajl_val code = kobj_member(term, "exitCode");
            int ok = YAJL_IS_INTEGER(code) && YAJL_GET_INTEGER(code) == 0;
            t->state = ok ? KOBJ_TARGET_DONE : KOBJ_TARGET_FAILED;
            t->terminated = 1;
            if (!ok) {
                t->reason = borrow(kobj_member_str(term, "reason"));
                t->message = borrow(kobj_member_str(term, "message"));
            }
        } else if (YAJL_IS_OBJECT(running)) {
            t->state = KOBJ_TARGET_DONE; /* started: its image is there */
        } else if (YAJL_IS_OBJECT(waiting)) {
            const char *reason = kobj_member_str(waiting, "reason");
            if (reason == NULL || strcmp(reason, "ContainerCreating") == 0 ||
                strcmp(reason, "PodInitializing") == 0) {
                t->state = KOBJ_TARGET_PENDING;
            } else {
                t->state = KOBJ_TARGET_WAITING;
                t->reason = borrow(reason);
                t->message = borrow(kobj_member_str(waiting, "message"));
                t->backing_off = (unsigned char)pullerr_backing_off(reason);
            }
        }
    }
    return 0;
}

static int decode_job_pod(yajl_val obj, kobj_job_pod *jp)
{
    static const char *const p_init[] = {"status", "initContainerStatuses", NULL};
    static const char *const p_main[] = {"status", "containerStatuses", NULL};
    yajl_val labels = labels_of(obj);
    const char *job = kobj_member_str(labels, "batch.kubernetes.io/job-name");
    jp->job_name = borrow(job != NULL ? job : kobj_member_str(labels, "job-name"));
    static const char *const p_node[] = {"spec", "nodeName", NULL};
    jp->node_name = borrow(get_str(obj, p_node));
    static const char *const p_vols[] = {"spec", "volumes", NULL};
    yajl_val vols = get(obj, p_vols);
    for (size_t i = 0; YAJL_IS_ARRAY(vols) && i < vols->u.array.len && !jp->image_volumes; i++)
        jp->image_volumes = YAJL_IS_OBJECT(kobj_member(vols->u.array.values[i], "image"));
    decode_waiting(get(obj, p_init), jp);
    decode_waiting(get(obj, p_main), jp);
    return decode_targets(get(obj, p_main), jp);
}

/* Whether a pod bound to the node can start (kobj_node.not_ready). */
static void decode_node_ready(yajl_val obj, kobj_node *node)
{
    static const char *const p_conds[] = {"status", "conditions", NULL};
    static const char *const p_taints[] = {"spec", "taints", NULL};
    /* The node lifecycle controller sets Ready Unknown and the unreachable
     * taint when the kubelet stops posting status; the kubelet itself
     * posts Ready False.  Either way a pod bound there does not start. */
    yajl_val conds = get(obj, p_conds);
    for (size_t i = 0; YAJL_IS_ARRAY(conds) && i < conds->u.array.len; i++) {
        yajl_val c = conds->u.array.values[i];
        const char *type = kobj_member_str(c, "type"), *status = kobj_member_str(c, "status");
        if (type != NULL && strcmp(type, "Ready") == 0)
            node->not_ready = status == NULL || strcmp(status, "True") != 0;
    }
    yajl_val taints = get(obj, p_taints);
    for (size_t i = 0; YAJL_IS_ARRAY(taints) && i < taints->u.array.len; i++) {
        const char *key = kobj_member_str(taints->u.array.values[i], "key");
        if (key != NULL && strcmp(key, "node.kubernetes.io/unreachable") == 0)
            node->not_ready = 1;
    }
}

/* status.images[].names into node->images, distinct; at most max names
 * (0: no bound). */
static int decode_node_images(yajl_val obj, kobj_node *node, size_t max)
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
            if (max > 0 && node->n_images >= max)
                return 0;
            yajl_val n = names->u.array.values[j];
            if (YAJL_IS_STRING(n) && push_unique(&node->images, &node->n_images, YAJL_GET_STRING(n)) != 0)
                return -1;
        }
    }
    return 0;
}

static void decode_runtime_version(yajl_val obj, kobj_node *node)
{
    static const char *const p_rt[] = {"status", "nodeInfo", "containerRuntimeVersion", NULL};
    const char *v = get_str(obj, p_rt);
    if (v != NULL && strlen(v) <= 128) /* bounded: a version, not a document */
        node->runtime_version = borrow(v);
}

static int decode_node(yajl_val obj, kobj_node *node)
{
    decode_runtime_version(obj, node);
    decode_node_ready(obj, node);
    return decode_node_images(obj, node, 0);
}

const char *kobj_node_label(const kobj *node, const char *key)
{
    const kobj_node *n = &node->u.node;
    size_t lo = 0, hi = n->n_labels; /* sorted by key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(n->label_keys[mid], key);
        if (c == 0)
            return n->label_values[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *kobj_node_hostname(const kobj *node)
{
    const char *h = kobj_node_label(node, "kubernetes.io/hostname");
    return h != NULL && h[0] != '\0' ? h : node->meta.name;
}

/* Pairs of label keys and values, sorted by key. */
typedef struct label_pair {
    const char *key, *value;
} label_pair;

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const label_pair *)a)->key, ((const label_pair *)b)->key);
}

static int decode_labels(yajl_val obj, kobj_node *node)
{
    yajl_val labels = labels_of(obj);
    if (!YAJL_IS_OBJECT(labels) || labels->u.object.len == 0)
        return 0;
    size_t n = labels->u.object.len, k = 0;
    label_pair *pairs = malloc(n * sizeof(*pairs));
    node->label_keys = malloc(n * sizeof(char *));
    node->label_values = malloc(n * sizeof(char *));
    if (pairs == NULL || node->label_keys == NULL || node->label_values == NULL) {
        free(pairs);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (YAJL_IS_STRING(labels->u.object.values[i]))
            pairs[k++] = (label_pair){labels->u.object.keys[i],
                                      YAJL_GET_STRING(labels->u.object.values[i])};
    qsort(pairs, k, sizeof(*pairs), cmp_label);
    for (size_t i = 0; i < k; i++) {
        node->label_keys[i] = borrow(pairs[i].key);
        node->label_values[i] = borrow(pairs[i].value);
    }
    node->n_labels = k;
    free(pairs);
    return 0;
}

static int push_strings(yajl_val list, char ***out, size_t *n)
{
    for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
        yajl_val v = list->u.array.values[i];
        if (!YAJL_IS_STRING(v))
            continue;
        char **grown = realloc(*out, (*n + 1) * sizeof(char *));
        if (grown == NULL)
            return -1;
        *out = grown;
        grown[(*n)++] = borrow(YAJL_GET_STRING(v));
    }
    return 0;
}

static long long member_int(yajl_val obj, const char *key)
{
    yajl_val v = kobj_member(obj, key);
    return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

/* The spec's text is written into a (an arena of the caller's, freed once
 * the kobj is packed). */
static int decode_imagepulljob(yajl_val obj, kobj_imagepulljob *ipj, arena *a)
{
    static const char *const p_gen[] = {"metadata", "generation", NULL};
    static const char *const p_created[] = {"metadata", "creationTimestamp", NULL};
    static const char *const p_fin[] = {"metadata", "finalizers", NULL};
    yajl_val spec = kobj_member(obj, "spec");
    if (spec != NULL && !YAJL_IS_NULL(spec)) {
        json_writer w;
        size_t len;
        if (json_writer_init(&w, a) != 0)
            return -1;
        json_tree(&w, spec);
        const char *text = json_writer_finish(&w, &len);
        if (text == NULL)
            return -1;
        ipj->spec = borrow(text);
    }
    yajl_val gen = get(obj, p_gen);
    ipj->generation = YAJL_IS_INTEGER(gen) ? YAJL_GET_INTEGER(gen) : 0;
    ipj->creation_time = borrow(get_str(obj, p_created));
    ipj->completed_generation =
        borrow(kobj_member_str(annotations_of(obj), OTA_ANN_IPJ_COMPLETED_GENERATION));
    if (push_strings(get(obj, p_fin), &ipj->finalizers, &ipj->n_finalizers) != 0)
        return -1;
    yajl_val st = kobj_member(obj, "status");
    if (!YAJL_IS_OBJECT(st))
        return 0;
    ipj->has_status = 1;
    ipj->desired = member_int(st, "desired");
    ipj->active = member_int(st, "active");
    ipj->succeeded = member_int(st, "succeeded");
    ipj->failed = member_int(st, "failed");
    ipj->start_time = borrow(kobj_member_str(st, "startTime"));
    ipj->completion_time = borrow(kobj_member_str(st, "completionTime"));
    ipj->message = borrow(kobj_member_str(st, "message"));
    return push_strings(kobj_member(st, "failedNodes"), &ipj->failed_nodes, &ipj->n_failed_nodes);
}

/* v as compact JSON in arena memory, or NULL when out of memory. */
static const char *compact(yajl_val v, arena *a)
{
    json_writer w;
    size_t len;
    if (json_writer_init(&w, a) != 0)
        return NULL;
    json_tree(&w, v);
    return json_writer_finish(&w, &len);
}

static int decode_imagecache(yajl_val obj, kobj_imagecache *ic, arena *a)
{
    static const char *const p_gen[] = {"metadata", "generation", NULL};
    yajl_val spec = kobj_member(obj, "spec");
    if (spec != NULL && !YAJL_IS_NULL(spec) && (ic->spec = borrow(compact(spec, a))) == NULL)
        return -1;
    if ((ic->object = borrow(compact(obj, a))) == NULL)
        return -1;
    yajl_val gen = get(obj, p_gen);
    ic->generation = YAJL_IS_INTEGER(gen) ? YAJL_GET_INTEGER(gen) : 0;
    yajl_val ann = annotations_of(obj);
    ic->refresh = kobj_member(ann, OTA_ANN_IC_REFRESH) != NULL;
    ic->purge = kobj_member(ann, OTA_ANN_IC_PURGE) != NULL;
    ic->acted_spec = borrow(kobj_member_str(ann, OTA_ANN_IC_SPEC));
    ic->acted_start = borrow(kobj_member_str(ann, OTA_ANN_IC_START));
    yajl_val st = kobj_member(obj, "status");
    if (!YAJL_IS_OBJECT(st))
        return 0;
    ic->has_status = 1;
    ic->status = borrow(kobj_member_str(st, "status"));
    ic->reason = borrow(kobj_member_str(st, "reason"));
    ic->message = borrow(kobj_member_str(st, "message"));
    ic->start_time = borrow(kobj_member_str(st, "startTime"));
    ic->completion_time = borrow(kobj_member_str(st, "completionTime"));
    yajl_val f = kobj_member(st, "failures");
    for (size_t i = 0; YAJL_IS_OBJECT(f) && i < f->u.object.len; i++) {
        char **grown = realloc(ic->failure_images, (ic->n_failure_images + 1) * sizeof(char *));
        if (grown == NULL)
            return -1;
        ic->failure_images = grown;
        grown[ic->n_failure_images++] = borrow(f->u.object.keys[i]);
    }
    return 0;
}

kobj *kobj_decode(kobj_kind kind, yajl_val obj)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    kobj d;
    memset(&d, 0, sizeof(d));
    d.kind = kind;
    decode_meta(obj, &d.meta);
    arena a;
    arena_init(&a);
    int rc = 0;
    switch (kind) {
    case KOBJ_DAEMONSET:
        decode_daemonset(obj, &d.u.ds);
        break;
    case KOBJ_REVISION:
        rc = decode_revision(obj, &d.u.rev);
        break;
    case KOBJ_POD: {
        /* the precondition of the controller's status writes */
        static const char *const p_rv[] = {"metadata", "resourceVersion", NULL};
        d.meta.resource_version = borrow(get_str(obj, p_rv));
        decode_pod(obj, &d.u.pod);
        break;
    }
    case KOBJ_JOB:
        rc = decode_job(obj, &d.u.job);
        break;
    case KOBJ_JOB_POD:
        rc = decode_job_pod(obj, &d.u.job_pod);
        break;
    case KOBJ_NODE:
        rc = decode_node(obj, &d.u.node);
        break;
    case KOBJ_NODE_STATE:
        decode_runtime_version(obj, &d.u.node);
        decode_node_ready(obj, &d.u.node);
        rc = decode_labels(obj, &d.u.node);
        if (rc == 0)
            rc = decode_node_images(obj, &d.u.node, KOBJ_NODE_STATE_MAX_IMAGE_NAMES);
        break;
    case KOBJ_IMAGEPULLJOB: {
        static const char *const p_rv[] = {"metadata", "resourceVersion", NULL};
        d.meta.resource_version = borrow(get_str(obj, p_rv));
        rc = decode_imagepulljob(obj, &d.u.ipj, &a);
        break;
    }
    case KOBJ_IMAGECACHE: {
        static const char *const p_rv[] = {"metadata", "resourceVersion", NULL};
        d.meta.resource_version = borrow(get_str(obj, p_rv));
        rc = decode_imagecache(obj, &d.u.ic, &a);
        break;
    }
    default:
        rc = -1;
    }
    kobj *o = rc == 0 && d.meta.name != NULL && d.meta.uid != NULL ? kobj_pack(&d) : NULL;
    free_draft(&d);
    arena_free(&a);
    return o;
}

const char *kobj_active_pod_node(yajl_val pod)
{
    static const char *const p_node[] = {"spec", "nodeName", NULL};
    static const char *const p_phase[] = {"status", "phase", NULL};
    static const char *const p_del[] = {"metadata", "deletionTimestamp", NULL};
    const char *node = get_str(pod, p_node), *phase = get_str(pod, p_phase);
    if (node == NULL || node[0] == '\0' || get(pod, p_del) != NULL ||
        (phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)))
        return NULL;
    return node;
}

kobj *kobj_pod_nodes_new(const char *key, const char *query, char *const *nodes, size_t n)
{
    if (key == NULL)
        return NULL;
    kobj d;
    memset(&d, 0, sizeof(d));
    d.kind = KOBJ_POD_NODES;
    d.meta.name = d.meta.uid = borrow(key);
    d.u.pod_nodes.query = borrow(query);
    d.u.pod_nodes.nodes = (char **)(uintptr_t)nodes; /* copied by kobj_pack */
    d.u.pod_nodes.n_nodes = n;
    return kobj_pack(&d);
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
                     .image_ready = cond_view(&p->image_ready),
                     .auto_prepull = cond_view(&p->auto_prepull)};
}

kobj *kobj_copy_job_pod(const kobj *o)
{
    kobj d;
    memset(&d, 0, sizeof(d));
    d.kind = KOBJ_JOB_POD;
    d.meta.namespace = o->meta.namespace;
    d.meta.name = o->meta.name;
    d.meta.uid = o->meta.uid;
    d.u.job_pod = o->u.job_pod;
    return kobj_pack(&d);
}

const char *kobj_ref(const kobj *o, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", o->meta.namespace != NULL ? o->meta.namespace : "",
             o->meta.name != NULL ? o->meta.name : "");
    return buf;
}

void kobj_free_any(void *o)
{
    kobj_free(o);
}

const char *kobj_uid(const void *o)
{
    return ((const kobj *)o)->meta.uid;
}

const char *kobj_name(const void *o)
{
    return ((const kobj *)o)->meta.name;
}

long long kobj_parse_time(const char *s)
{
    long long secs;
    return clock_parse_rfc3339(sv_from(s), &secs) == 0 ? secs : 0;
}

/*
 * review.c - streaming AdmissionReview decoder and response encoder.
 *
 * The decoder is a set of yajl-shaped callbacks and a stack of "nodes":
 * every field we care about is a node with a path (for error messages) and
 * the JSON type it must have; everything else is N_SKIP.  No tree is built,
 * and deep nesting is refused at REVIEW_MAX_DEPTH.
 *
 * Two parsers drive the callbacks.  The fast path, jscan (jscan.h), asks
 * before each value whether a node reads it and only checks the values none
 * does (managedFields, most of spec, container statuses): a 10 KB kubelet
 * status write then takes under half the instructions of a yajl parse with
 * empty callbacks (docs/BENCHMARKS.md, "Beyond yajl").  The reference path,
 * jcheck_body() and yajl's parser over every token, decodes every body the
 * fast path or the decoder on it refuses, so an error message is always
 * the one the reference path gives.  Both fill the review the same (the
 * callbacks are shared; tests/unit/test_jscan.c and tests/fuzz/fuzz_jscan.c
 * hold them to it).
 */
#include "review.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "base64.h"
#include "errmsg.h"
#include "jcheck.h"
#include "jkeys.h"
#include "jscan.h"
#include "json.h"
#include "ota_names.h"

enum jtype { J_ANY, J_OBJ, J_ARR, J_STR, J_BOOL, J_NUM };

enum node {
    N_SKIP,
    N_ROOT,
    N_API_VERSION,
    N_KIND,
    N_REQUEST,
    N_UID,
    N_REQ_KIND,
    N_RESOURCE,
    N_RES_GROUP,
    N_RES_VERSION,
    N_RES_RESOURCE,
    N_SUB_RESOURCE,
    N_OPERATION,
    N_NAMESPACE,
    N_NAME,
    N_USER_INFO,
    N_USERNAME,
    N_GROUPS,
    N_GROUP,
    N_OBJECT,
    N_OLD_OBJECT,
    /* below: inside object / oldObject; paths are relative to it */
    N_METADATA,
    N_META_NAME,
    N_META_NAMESPACE,
    N_ANNOTATIONS,
    N_ANNOTATION,
    N_LABELS,
    N_LABEL,
    N_OWNER_REFS,
    N_OWNER_REF,
    N_OWNER_KIND,
    N_OWNER_CONTROLLER,
    N_SPEC,
    N_NODE_NAME,
    N_UPDATE_STRATEGY,
    N_STRATEGY_TYPE,
    N_STRATEGY_OTHER,
    N_STATUS,
    N_CONDITIONS,
    N_CONDITION,
    N_COND_TYPE,
    N_COND_STATUS,
    N_COND_REASON,
    N_COND_MESSAGE,
    N_COND_LTT,
    N_COUNT
};

static const struct {
    const char *path;
    enum jtype type;
} node_info[N_COUNT] = {
    [N_SKIP] = {"", J_ANY},
    [N_ROOT] = {"AdmissionReview", J_OBJ},
    [N_API_VERSION] = {"apiVersion", J_STR},
    [N_KIND] = {"kind", J_STR},
    [N_REQUEST] = {"request", J_OBJ},
    [N_UID] = {"request.uid", J_STR},
    [N_REQ_KIND] = {"request.kind", J_OBJ},
    [N_RESOURCE] = {"request.resource", J_OBJ},
    [N_RES_GROUP] = {"request.resource.group", J_STR},
    [N_RES_VERSION] = {"request.resource.version", J_STR},
    [N_RES_RESOURCE] = {"request.resource.resource", J_STR},
    [N_SUB_RESOURCE] = {"request.subResource", J_STR},
    [N_OPERATION] = {"request.operation", J_STR},
    [N_NAMESPACE] = {"request.namespace", J_STR},
    [N_NAME] = {"request.name", J_STR},
    [N_USER_INFO] = {"request.userInfo", J_OBJ},
    [N_USERNAME] = {"request.userInfo.username", J_STR},
    [N_GROUPS] = {"request.userInfo.groups", J_ARR},
    [N_GROUP] = {"request.userInfo.groups[]", J_STR},
    [N_OBJECT] = {"", J_OBJ},
    [N_OLD_OBJECT] = {"", J_OBJ},
    [N_METADATA] = {".metadata", J_OBJ},
    [N_META_NAME] = {".metadata.name", J_STR},
    [N_META_NAMESPACE] = {".metadata.namespace", J_STR},
    [N_ANNOTATIONS] = {".metadata.annotations", J_OBJ},
    [N_ANNOTATION] = {".metadata.annotations[]", J_STR},
    [N_LABELS] = {".metadata.labels", J_OBJ},
    [N_LABEL] = {".metadata.labels[]", J_STR},
    [N_OWNER_REFS] = {".metadata.ownerReferences", J_ARR},
    [N_OWNER_REF] = {".metadata.ownerReferences[]", J_OBJ},
    [N_OWNER_KIND] = {".metadata.ownerReferences[].kind", J_STR},
    [N_OWNER_CONTROLLER] = {".metadata.ownerReferences[].controller", J_BOOL},
    [N_SPEC] = {".spec", J_OBJ},
    [N_NODE_NAME] = {".spec.nodeName", J_STR},
    [N_UPDATE_STRATEGY] = {".spec.updateStrategy", J_OBJ},
    [N_STRATEGY_TYPE] = {".spec.updateStrategy.type", J_STR},
    [N_STRATEGY_OTHER] = {".spec.updateStrategy", J_ANY},
    [N_STATUS] = {".status", J_OBJ},
    [N_CONDITIONS] = {".status.conditions", J_ARR},
    [N_CONDITION] = {".status.conditions[]", J_OBJ},
    [N_COND_TYPE] = {".status.conditions[].type", J_STR},
    [N_COND_STATUS] = {".status.conditions[].status", J_STR},
    [N_COND_REASON] = {".status.conditions[].reason", J_STR},
    [N_COND_MESSAGE] = {".status.conditions[].message", J_STR},
    [N_COND_LTT] = {".status.conditions[].lastTransitionTime", J_STR},
};

/* Map keys that lead from one node to another: each node's own list, with
 * the keys' lengths, so a key costs a compare with its siblings only (a
 * scan of one table of every edge, with a strlen() each, was a tenth of the
 * decode of a kubelet status write: bench/webhook_decide.c). */
typedef struct edge {
    const char *key;
    size_t len;
    enum node child;
} edge;

#define EDGE(key, child) {key, sizeof(key) - 1, child}
static const edge root_edges[] = {
    EDGE("apiVersion", N_API_VERSION),
    EDGE("kind", N_KIND),
    EDGE("request", N_REQUEST),
};
static const edge request_edges[] = {
    EDGE("uid", N_UID),
    EDGE("kind", N_REQ_KIND),
    EDGE("resource", N_RESOURCE),
    EDGE("subResource", N_SUB_RESOURCE),
    EDGE("operation", N_OPERATION),
    EDGE("namespace", N_NAMESPACE),
    EDGE("name", N_NAME),
    EDGE("userInfo", N_USER_INFO),
    EDGE("object", N_OBJECT),
    EDGE("oldObject", N_OLD_OBJECT),
};
static const edge resource_edges[] = {
    EDGE("group", N_RES_GROUP),
    EDGE("version", N_RES_VERSION),
    EDGE("resource", N_RES_RESOURCE),
};
static const edge user_info_edges[] = {
    EDGE("username", N_USERNAME),
    EDGE("groups", N_GROUPS),
};
static const edge object_edges[] = {
    EDGE("metadata", N_METADATA),
    EDGE("spec", N_SPEC),
    EDGE("status", N_STATUS),
};
static const edge metadata_edges[] = {
    EDGE("name", N_META_NAME),
    EDGE("namespace", N_META_NAMESPACE),
    EDGE("annotations", N_ANNOTATIONS),
    EDGE("labels", N_LABELS),
    EDGE("ownerReferences", N_OWNER_REFS),
};
static const edge owner_ref_edges[] = {
    EDGE("kind", N_OWNER_KIND),
    EDGE("controller", N_OWNER_CONTROLLER),
};
static const edge spec_edges[] = {
    EDGE("nodeName", N_NODE_NAME),
    EDGE("updateStrategy", N_UPDATE_STRATEGY),
};
static const edge update_strategy_edges[] = {
    EDGE("type", N_STRATEGY_TYPE),
};
static const edge status_edges[] = {
    EDGE("conditions", N_CONDITIONS),
};
static const edge condition_edges[] = {
    EDGE("type", N_COND_TYPE),
    EDGE("status", N_COND_STATUS),
    EDGE("reason", N_COND_REASON),
    EDGE("message", N_COND_MESSAGE),
    EDGE("lastTransitionTime", N_COND_LTT),
};

#define EDGES(list) {list, sizeof(list) / sizeof(list[0])}
static const struct {
    const edge *list;
    size_t n;
} children[N_COUNT] = {
    [N_ROOT] = EDGES(root_edges),
    [N_REQUEST] = EDGES(request_edges),
    [N_RESOURCE] = EDGES(resource_edges),
    [N_USER_INFO] = EDGES(user_info_edges),
    [N_OBJECT] = EDGES(object_edges),
    [N_OLD_OBJECT] = EDGES(object_edges),
    [N_METADATA] = EDGES(metadata_edges),
    [N_SPEC] = EDGES(spec_edges),
    [N_UPDATE_STRATEGY] = EDGES(update_strategy_edges),
    [N_STATUS] = EDGES(status_edges),
    [N_CONDITION] = EDGES(condition_edges),
    [N_OWNER_REF] = EDGES(owner_ref_edges),
};

enum which { W_NONE, W_OBJECT, W_OLD };

typedef struct frame {
    uint8_t node;  /* enum node */
    uint8_t which; /* enum which */
    uint8_t array; /* a JSON array: children are elements, not keys */
} frame;

/* The reference path's own record of where it is in the body, every
 * container included (the frames above hold only what a node reads), to
 * refuse a repeated key and say where it is. */
typedef struct ref_level {
    const unsigned char *key; /* an object's latest key (in the body or arena) */
    size_t key_len;
    size_t index; /* an array's elements so far */
    int array;
} ref_level;

typedef struct ref_where {
    jkeys keys;
    ref_level level[REVIEW_MAX_DEPTH];
    int depth;
} ref_where;

typedef struct decoder {
    review *rv;
    arena *a;
    yajl_handle h;          /* the reference path's parser, or NULL */
    const jscan_sink *scan; /* the fast path's scanner, or NULL */
    ref_where *where;       /* the reference path's, or NULL */
    frame stack[REVIEW_MAX_DEPTH];
    int depth;
    enum node pending;  /* node of the value after the last map key */
    sv *pending_field;  /* for annotations and labels we keep: where the value goes */
    review_cond cond;   /* the condition being read */
    sv owner_kind;      /* the ownerReference being read: its kind ... */
    int owner_controller; /* ... and "controller": true */
    size_t value_end;   /* just past the top-level value once it closed, else 0 */
    char *err;
    size_t errlen;
    int failed;
    /* Containers open inside a value no node reads (managedFields, most of
     * spec, containerStatuses): their tokens cost one test each, no frame.
     * They count towards REVIEW_MAX_DEPTH like the framed ones. */
    int skipped;
} decoder;

/* Writes the message into the caller's err and marks the decode failed;
 * returns -1.  (The yajl callbacks below return 1 to go on and 0 to stop:
 * they turn a helper's -1 into 0.) */
static int set_error(decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_error(decoder *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errmsg_vset(d->err, d->errlen, fmt, ap);
    va_end(ap);
    d->failed = 1;
    return -1;
}

/* The bytes of the body up to and including the token of this callback. */
static size_t consumed(const decoder *d)
{
    return d->scan != NULL ? d->scan->consumed : yajl_get_bytes_consumed(d->h);
}

static review_object *object_of(decoder *d, enum which w)
{
    return w == W_OLD ? &d->rv->old_object : &d->rv->object;
}

/* The node (and object) of the value that is about to arrive. */
static enum node value_node(decoder *d, enum which *which)
{
    if (d->depth == 0) {
        *which = W_NONE;
        return N_ROOT;
    }
    frame *top = &d->stack[d->depth - 1];
    *which = top->which;
    if (!top->array)
        return d->pending;
    switch (top->node) {
    case N_GROUPS:
        return N_GROUP;
    case N_CONDITIONS:
        return N_CONDITION;
    case N_OWNER_REFS:
        return N_OWNER_REF;
    default:
        return N_SKIP;
    }
}

static const char *jtype_name(enum jtype t)
{
    switch (t) {
    case J_OBJ:
        return "an object";
    case J_ARR:
        return "an array";
    case J_STR:
        return "a string";
    case J_BOOL:
        return "a boolean";
    case J_NUM:
        return "a number";
    default:
        return "a value";
    }
}

/* The value arriving for n has the JSON type the node wants: 0, or -1 with
 * the error set. */
static int check_type(decoder *d, enum node n, enum which w, enum jtype got)
{
    enum jtype want = node_info[n].type;
    if (want == J_ANY || want == got)
        return 0;
    if (n == N_ROOT)
        return set_error(d, "the body must be a JSON object (an AdmissionReview), got %s",
                         jtype_name(got));
    if (n == N_OBJECT || n == N_OLD_OBJECT)
        w = n == N_OBJECT ? W_OBJECT : W_OLD;
    return set_error(d, "%s%s must be %s, got %s",
                     w == W_NONE ? "" : (w == W_OLD ? "request.oldObject" : "request.object"),
                     node_info[n].path, jtype_name(want), jtype_name(got));
}

/* A view of a string yajl hands us: in place when it lies within the body
 * (no escapes), else copied, since yajl reuses its decode buffer.  0, or -1
 * with the error set. */
static int keep_string(decoder *d, const unsigned char *s, size_t len, sv *out)
{
    const char *p = (const char *)s;
    if (p >= d->rv->body && p + len <= d->rv->body + d->rv->body_len) {
        *out = (sv){p, len};
        return 0;
    }
    /* An escaped copy: jcheck_body() refused every lone surrogate escape,
     * so yajl's decoding of the rest is UTF-8. */
    char *copy = arena_strndup(d->a, p, len);
    if (copy == NULL)
        return set_error(d, "out of memory");
    *out = (sv){copy, len};
    return 0;
}

static sv *string_field(decoder *d, enum node n, enum which w)
{
    review *rv = d->rv;
    review_object *o = object_of(d, w);
    switch (n) {
    case N_API_VERSION:
        return &rv->api_version;
    case N_KIND:
        return &rv->kind;
    case N_UID:
        return &rv->uid;
    case N_RES_GROUP:
        return &rv->group;
    case N_RES_VERSION:
        return &rv->version;
    case N_RES_RESOURCE:
        return &rv->resource;
    case N_SUB_RESOURCE:
        return &rv->sub_resource;
    case N_OPERATION:
        return &rv->operation;
    case N_NAMESPACE:
        return &rv->namespace;
    case N_NAME:
        return &rv->name;
    case N_USERNAME:
        return &rv->username;
    case N_META_NAME:
        return &o->name;
    case N_META_NAMESPACE:
        return &o->namespace;
    case N_ANNOTATION:
    case N_LABEL:
        return d->pending_field;
    case N_NODE_NAME:
        return &o->node_name;
    case N_STRATEGY_TYPE:
        return &o->update_strategy_type;
    case N_COND_TYPE:
        return &d->cond.type;
    case N_COND_STATUS:
        return &d->cond.status;
    case N_COND_REASON:
        return &d->cond.reason;
    case N_COND_MESSAGE:
        return &d->cond.message;
    case N_COND_LTT:
        return &d->cond.last_transition_time;
    case N_OWNER_KIND:
        return &d->owner_kind;
    default:
        return NULL;
    }
}

/* A scalar arrived: null, boolean, number or string. */
static int on_scalar(decoder *d, enum jtype got, const unsigned char *s, size_t len)
{
    if (d->skipped > 0)
        return 1;
    enum which w;
    enum node n = value_node(d, &w);
    if (n == N_SKIP)
        return 1;
    if (n == N_STRATEGY_OTHER) {
        object_of(d, w)->update_strategy_extra = 1;
        return 1;
    }
    if (check_type(d, n, w, got) != 0)
        return 0;
    if (got != J_STR)
        return 1;
    if (n == N_GROUP) {
        if (len == strlen(OTA_GROUP_MASTERS) && memcmp(s, OTA_GROUP_MASTERS, len) == 0)
            d->rv->is_master = 1;
        return 1;
    }
    sv *field = string_field(d, n, w);
    if (field != NULL && keep_string(d, s, len, field) != 0)
        return 0;
    return 1;
}

static int cb_null(void *ctx)
{
    decoder *d = ctx;
    if (d->skipped > 0)
        return 1;
    enum which w;
    enum node n = value_node(d, &w);
    if (n == N_ROOT) {
        set_error(d, "the body must be a JSON object (an AdmissionReview), got null");
        return 0;
    }
    /* A null element of status.conditions still holds a place in the array:
     * the indexes in our patch paths count it. */
    if (n == N_CONDITION)
        object_of(d, w)->n_conditions++;
    return 1; /* null is absent, as Go's encoder writes nil maps and slices */
}

static int cb_boolean(void *ctx, int b)
{
    decoder *d = ctx;
    enum which w;
    if (d->skipped == 0 && value_node(d, &w) == N_OWNER_CONTROLLER)
        d->owner_controller = b;
    return on_scalar(ctx, J_BOOL, NULL, 0);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    (void)s;
    (void)len;
    return on_scalar(ctx, J_NUM, NULL, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    return on_scalar(ctx, J_STR, s, len);
}

/* Enters a map or an array: 0, or -1 (too deep) with the error set. */
static int push(decoder *d, enum node n, enum which w, int array)
{
    if (d->depth >= REVIEW_MAX_DEPTH)
        return set_error(d, "JSON nesting deeper than %d levels", REVIEW_MAX_DEPTH);
    d->stack[d->depth++] = (frame){(uint8_t)n, (uint8_t)w, (uint8_t)array};
    d->pending = N_SKIP;
    return 0;
}

/* Enters a map or an array inside a value no node reads: 1 to go on, 0
 * (too deep) with the error set. */
static int enter_skipped(decoder *d)
{
    if (d->depth + d->skipped >= REVIEW_MAX_DEPTH) {
        set_error(d, "JSON nesting deeper than %d levels", REVIEW_MAX_DEPTH);
        return 0;
    }
    d->skipped++;
    return 1;
}

/* Leaves one: 1 when it was one, 0 when the container closing is framed. */
static int leave_skipped(decoder *d)
{
    if (d->skipped == 0)
        return 0;
    if (--d->skipped == 0)
        d->pending = N_SKIP;
    return 1;
}

static int cb_start_map(void *ctx)
{
    decoder *d = ctx;
    if (d->skipped > 0)
        return enter_skipped(d);
    enum which w;
    enum node n = value_node(d, &w);
    if (n == N_SKIP)
        return enter_skipped(d);
    if (n == N_STRATEGY_OTHER)
        object_of(d, w)->update_strategy_extra = 1;
    else if (n != N_SKIP && check_type(d, n, w, J_OBJ) != 0)
        return 0;
    review_object *o = object_of(d, w);
    switch (n) {
    case N_REQUEST:
        d->rv->has_request = 1;
        break;
    case N_OBJECT:
        w = W_OBJECT;
        d->rv->object.present = 1;
        break;
    case N_OLD_OBJECT:
        w = W_OLD;
        d->rv->old_object.present = 1;
        break;
    case N_SPEC:
        o->has_spec = 1;
        /* the parser has consumed the '{' that opens spec */
        o->spec_off = consumed(d) - 1;
        break;
    case N_UPDATE_STRATEGY:
        o->has_update_strategy = 1;
        break;
    case N_STATUS:
        o->has_status = 1;
        break;
    case N_OWNER_REF:
        d->owner_kind = (sv){NULL, 0};
        d->owner_controller = 0;
        break;
    case N_CONDITION:
        memset(&d->cond, 0, sizeof(d->cond));
        d->cond.index = o->n_conditions;
        /* the parser has consumed the '{' that opens the condition */
        d->cond.raw_off = consumed(d) - 1;
        break;
    default:
        break;
    }
    return push(d, n, w, 0) == 0;
}

static int cb_map_key(void *ctx, const unsigned char *key, size_t len)
{
    decoder *d = ctx;
    if (d->skipped > 0)
        return 1;
    frame *top = &d->stack[d->depth - 1];
    review_object *o = object_of(d, top->which);
    d->pending = N_SKIP;
    d->pending_field = NULL;
    switch (top->node) {
    case N_SKIP:
        return 1;
    case N_ANNOTATIONS:
        d->pending = N_ANNOTATION;
        if (len == strlen(OTA_ANN_UPDATE_STRATEGY) && memcmp(key, OTA_ANN_UPDATE_STRATEGY, len) == 0)
            d->pending_field = &o->ann_update_strategy;
        else if (len == strlen(OTA_ANN_PREPULL_TIMEOUT) &&
                 memcmp(key, OTA_ANN_PREPULL_TIMEOUT, len) == 0)
            d->pending_field = &o->ann_prepull_timeout;
        return 1;
    case N_LABELS:
        d->pending = N_LABEL;
        if (len == strlen(OTA_LABEL_REVISION_HASH) && memcmp(key, OTA_LABEL_REVISION_HASH, len) == 0)
            d->pending_field = &o->label_revision_hash;
        return 1;
    case N_UPDATE_STRATEGY:
        d->pending = N_STRATEGY_OTHER;
        break;
    default:
        break;
    }
    const edge *e = children[top->node].list;
    for (size_t i = 0, n = children[top->node].n; i < n; i++) {
        if (e[i].len == len && memcmp(e[i].key, key, len) == 0) {
            d->pending = e[i].child;
            break;
        }
    }
    return 1;
}

static void keep_condition(decoder *d, review_object *o)
{
    review_cond *slot = NULL;
    if (sv_eq(d->cond.type, OTA_COND_NEED_UPGRADE)) {
        slot = &o->need_upgrade;
        o->n_need_upgrade++;
    } else if (sv_eq(d->cond.type, OTA_COND_IMAGE_READY)) {
        slot = &o->image_ready;
        o->n_image_ready++;
    } else if (sv_eq(d->cond.type, OTA_COND_AUTO_PREPULL)) {
        slot = &o->auto_prepull;
        o->n_auto_prepull++;
    } else {
        return;
    }
    if (o->n_ota < REVIEW_MAX_OTA_ENTRIES) {
        ota_entry *e = &o->ota[o->n_ota];
        *e = (ota_entry){slot == &o->need_upgrade, review_cond_view(&d->cond),
                         slot == &o->auto_prepull};
        e->cond.present = 1;
    }
    o->n_ota++;
    /* The first of a type wins, as kubelet's and kubectl's lookups do. */
    if (!slot->present) {
        *slot = d->cond;
        slot->present = 1;
    }
}

static int cb_end_map(void *ctx)
{
    decoder *d = ctx;
    if (leave_skipped(d))
        return 1;
    frame f = d->stack[--d->depth];
    d->pending = N_SKIP;
    if (d->depth == 0)
        d->value_end = consumed(d);
    if (f.node == N_OWNER_REF && d->owner_controller && sv_eq(d->owner_kind, "DaemonSet"))
        object_of(d, f.which)->daemonset_owned = 1;
    if (f.node == N_SPEC) {
        review_object *o = object_of(d, f.which);
        o->spec_len = consumed(d) - o->spec_off;
    }
    if (f.node == N_CONDITION) {
        review_object *o = object_of(d, f.which);
        d->cond.raw_len = consumed(d) - d->cond.raw_off;
        keep_condition(d, o);
        o->n_conditions++;
    }
    return 1;
}

static int cb_start_array(void *ctx)
{
    decoder *d = ctx;
    if (d->skipped > 0)
        return enter_skipped(d);
    enum which w;
    enum node n = value_node(d, &w);
    if (n == N_SKIP)
        return enter_skipped(d);
    if (n == N_STRATEGY_OTHER)
        object_of(d, w)->update_strategy_extra = 1;
    else if (n != N_SKIP && check_type(d, n, w, J_ARR) != 0)
        return 0;
    if (n == N_CONDITIONS)
        object_of(d, w)->has_conditions = 1;
    return push(d, n, w, 1) == 0;
}

static int cb_end_array(void *ctx)
{
    decoder *d = ctx;
    if (leave_skipped(d))
        return 1;
    d->depth--;
    d->pending = N_SKIP;
    if (d->depth == 0)
        d->value_end = consumed(d);
    return 1;
}

static const yajl_callbacks decode_callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

/* ---- the reference path's wrappers: where it is, and repeated keys ---- */

/* A value starts at the innermost level: an array counts it. */
static void ref_value(decoder *d)
{
    ref_where *r = d->where;
    if (r->depth > 0 && r->level[r->depth - 1].array)
        r->level[r->depth - 1].index++;
}

static int ref_open(decoder *d, int array, int (*inner)(void *))
{
    ref_where *r = d->where;
    ref_value(d);
    if (!inner(d))
        return 0;
    /* the decoder refused nesting past REVIEW_MAX_DEPTH already */
    r->level[r->depth++] = (ref_level){NULL, 0, 0, array};
    if (!array && jkeys_open(&r->keys) != 0) {
        set_error(d, "JSON nesting deeper than %d levels", REVIEW_MAX_DEPTH);
        return 0;
    }
    return 1;
}

static int ref_close(decoder *d, int (*inner)(void *))
{
    ref_where *r = d->where;
    if (!r->level[--r->depth].array)
        jkeys_close(&r->keys);
    return inner(d);
}

/* Where the innermost object is, in out: "request.userInfo",
 * "request.object.spec.containers[0]", a key that is not a plain name
 * quoted ("metadata.labels[\"a.b\"]"). */
static void ref_path(decoder *d, char *out, size_t n)
{
    ref_where *r = d->where;
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i + 1 < r->depth && used < n; i++) {
        const ref_level *l = &r->level[i];
        int w;
        if (l->array) {
            w = snprintf(out + used, n - used, "[%zu]", l->index - 1);
        } else {
            size_t plain = 0;
            while (plain < l->key_len &&
                   (l->key[plain] == '_' || l->key[plain] == '-' || l->key[plain] == ':' ||
                    (l->key[plain] >= '0' && l->key[plain] <= '9') ||
                    ((l->key[plain] | 0x20) >= 'a' && (l->key[plain] | 0x20) <= 'z')))
                plain++;
            if (plain == l->key_len && plain > 0)
                w = snprintf(out + used, n - used, "%s%.*s", used > 0 ? "." : "",
                             (int)l->key_len, (const char *)l->key);
            else
                w = snprintf(out + used, n - used, "[%s]",
                             arena_quote(d->a, (const char *)l->key, l->key_len));
        }
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static int ref_null(void *ctx)
{
    ref_value(ctx);
    return cb_null(ctx);
}

static int ref_boolean(void *ctx, int b)
{
    ref_value(ctx);
    return cb_boolean(ctx, b);
}

static int ref_number(void *ctx, const char *s, size_t len)
{
    ref_value(ctx);
    return cb_number(ctx, s, len);
}

static int ref_string(void *ctx, const unsigned char *s, size_t len)
{
    ref_value(ctx);
    return cb_string(ctx, s, len);
}

static int ref_start_map(void *ctx)
{
    return ref_open(ctx, 0, cb_start_map);
}

static int ref_end_map(void *ctx)
{
    return ref_close(ctx, cb_end_map);
}

static int ref_start_array(void *ctx)
{
    return ref_open(ctx, 1, cb_start_array);
}

static int ref_end_array(void *ctx)
{
    return ref_close(ctx, cb_end_array);
}

/* A key the object already has is refused wherever it is, read or not:
 * Kubernetes' decoder keeps the last of two, and a reader that kept the
 * first (or merged) would judge another object (issue 19). */
static int ref_map_key(void *ctx, const unsigned char *key, size_t len)
{
    decoder *d = ctx;
    ref_where *r = d->where;
    int dup = jkeys_add(&r->keys, key, len);
    if (dup != 0) {
        if (dup < 0) {
            set_error(d, "out of memory");
            return 0;
        }
        char where[256];
        ref_path(d, where, sizeof(where));
        set_error(d, "duplicate key %s in %s", arena_quote(d->a, (const char *)key, len),
                  where[0] != '\0' ? where : "the AdmissionReview");
        return 0;
    }
    ref_level *l = &r->level[r->depth - 1];
    sv kept;
    if (keep_string(d, key, len, &kept) != 0)
        return 0;
    l->key = (const unsigned char *)kept.ptr;
    l->key_len = kept.len;
    return cb_map_key(ctx, key, len);
}

static const yajl_callbacks reference_callbacks = {
    .yajl_null = ref_null,
    .yajl_boolean = ref_boolean,
    .yajl_number = ref_number,
    .yajl_string = ref_string,
    .yajl_start_map = ref_start_map,
    .yajl_map_key = ref_map_key,
    .yajl_end_map = ref_end_map,
    .yajl_start_array = ref_start_array,
    .yajl_end_array = ref_end_array,
};

static void copy_yajl_error(decoder *d, const char *body, size_t len, size_t at)
{
    unsigned char *msg = yajl_get_error(d->h, 0, (const unsigned char *)body, len);
    if (msg == NULL) {
        set_error(d, "invalid JSON");
        return;
    }
    size_t n = strlen((char *)msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        n--;
    set_error(d, "invalid JSON: %.*s (at byte %zu)", (int)n, msg, at);
    yajl_free_error(d->h, msg);
}

/* apiVersion, kind, request and its uid are there: 0, or -1 with the error
 * set. */
static int check_envelope(decoder *d)
{
    review *rv = d->rv;
    if (!sv_eq(rv->api_version, REVIEW_API_VERSION))
        return set_error(d, "apiVersion must be %s, got \"%.*s\"", REVIEW_API_VERSION,
                         SV_ARG(rv->api_version));
    if (!sv_eq(rv->kind, REVIEW_KIND))
        return set_error(d, "kind must be %s, got \"%.*s\"", REVIEW_KIND, SV_ARG(rv->kind));
    if (!rv->has_request)
        return set_error(d, "request is missing");
    if (sv_empty(rv->uid))
        return set_error(d, "request.uid is missing");
    return 0;
}

/* The fast path: before each value, does no node read it? */
static int skips_value(void *ctx)
{
    decoder *d = ctx;
    enum which w;
    return d->skipped > 0 || value_node(d, &w) == N_SKIP;
}

_Static_assert(REVIEW_MAX_DEPTH <= JSCAN_MAX_DEPTH, "jscan must allow the review's depth");

/* Decodes with jscan, which checks what no node reads without a callback:
 * 0 when the body is accepted, -1 when anything is wrong (unnamed: the
 * reference path decodes the body again and names it). */
int review_decode_fast(review *rv, const char *body, size_t len, arena *a)
{
    char unused[1];
    memset(rv, 0, sizeof(*rv));
    rv->body = body;
    rv->body_len = len;
    jscan_sink scan = {.cb = &decode_callbacks, .skips = skips_value};
    decoder d = {.rv = rv, .a = a, .scan = &scan, .err = unused, .errlen = sizeof(unused)};
    scan.ctx = &d;
    if (jscan_parse(body, len, REVIEW_MAX_DEPTH, &scan) != JSCAN_OK || d.failed)
        return -1;
    return check_envelope(&d);
}

int review_decode(review *rv, const char *body, size_t len, arena *a, char *err, size_t errlen)
{
    if (len > 0 && review_decode_fast(rv, body, len, a) == 0) {
        err[0] = '\0';
        return 0;
    }
    return review_decode_reference(rv, body, len, a, err, errlen);
}

int review_decode_reference(review *rv, const char *body, size_t len, arena *a, char *err,
                            size_t errlen)
{
    memset(rv, 0, sizeof(*rv));
    rv->body = body;
    rv->body_len = len;
    ref_where *where = arena_alloc(a, sizeof(*where));
    decoder d = {.rv = rv, .a = a, .where = where, .err = err, .errlen = errlen};
    err[0] = '\0';
    if (where == NULL) {
        set_error(&d, "out of memory");
        return -1;
    }
    where->depth = 0;
    jkeys_init(&where->keys, body, len);
    if (len == 0) {
        set_error(&d, "the request body is empty");
        return -1;
    }
    /* What RFC 8259 and RFC 3629 forbid and yajl lets through, in the one
     * pass over every byte; yajl then sees the top-level value only. */
    if (jcheck_body(body, len, err, errlen) != 0) {
        d.failed = 1;
        return -1;
    }
    yajl_alloc_funcs funcs = arena_yajl_funcs(a);
    d.h = yajl_alloc(&reference_callbacks, &funcs, &d);
    if (d.h == NULL) {
        set_error(&d, "out of memory");
        return -1;
    }
    yajl_status st = yajl_parse(d.h, (const unsigned char *)body, len);
    size_t at = yajl_get_bytes_consumed(d.h);
    if (st == yajl_status_ok) {
        st = yajl_complete_parse(d.h);
        /* what is wrong now (premature EOF) is at the end of the body;
         * yajl's count restarts for the byte complete_parse feeds itself */
        at = len;
    }
    /* Only whitespace after the AdmissionReview: yajl refuses a complete
     * token there ("trailing garbage") but takes an unfinished one
     * (`{...}"abc`), so look from where its closing brace was. */
    size_t tail = d.value_end > 0 ? jcheck_skip_space(body, len, d.value_end) : len;
    if (!d.failed && tail < len)
        set_error(&d, "invalid JSON (RFC 8259): bytes after the top-level value, at byte %zu",
                  tail);
    if (st != yajl_status_ok && !d.failed)
        copy_yajl_error(&d, body, len, at);
    if (!d.failed)
        check_envelope(&d);
    yajl_free(d.h);
    jkeys_free(&where->keys);
    return d.failed ? -1 : 0;
}

/* ---- encoding ---------------------------------------------------------- */

const char *review_encode_response(const review_response *r, arena *a, size_t *len)
{
    json_writer w;
    if (json_writer_init(&w, a) != 0)
        return NULL;
    json_map_open(&w, NULL);
    json_kv_str(&w, "apiVersion", REVIEW_API_VERSION);
    json_kv_str(&w, "kind", REVIEW_KIND);
    json_map_open(&w, "response");
    json_str(&w, "uid");
    json_sv(&w, r->uid);
    json_kv_bool(&w, "allowed", r->allowed);
    if (!r->allowed) {
        json_map_open(&w, "status");
        json_kv_int(&w, "code", r->code);
        json_kv_str(&w, "reason", r->code == 403 ? "Forbidden" : "BadRequest");
        json_kv_str(&w, "message", r->message != NULL ? r->message : "denied");
        json_map_close(&w);
    }
    if (r->patch != NULL) {
        size_t b64_len = 0;
        char *b64 = base64_encode(a, r->patch, r->patch_len, &b64_len);
        json_kv_str(&w, "patchType", "JSONPatch");
        json_str(&w, "patch");
        json_strn(&w, b64, b64_len); /* NULL when out of memory: fails the writer */
    }
    if (r->n_warnings > 0) {
        json_array_open(&w, "warnings");
        for (size_t i = 0; i < r->n_warnings; i++)
            json_str(&w, r->warnings[i]);
        json_array_close(&w);
    }
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_finish(&w, len);
}

const char *review_encode_status(int code, const char *reason, const char *message, arena *a,
                                 size_t *len)
{
    json_writer w;
    if (json_writer_init(&w, a) != 0)
        return NULL;
    json_write_failure_status(&w, code, reason, message);
    return json_writer_finish(&w, len);
}

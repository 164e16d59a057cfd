/*
 * review.h - the admission.k8s.io/v1 AdmissionReview as the webhook sees it.
 *
 * review_decode() reads a request body in one streaming pass (no tree) and
 * keeps only what the OTA decisions read: who asks, what resource, and a few
 * fields of `object` and `oldObject`.  Strings point into the body where they
 * have no escapes and into the arena otherwise, so the body must outlive the
 * review.  Each OTA condition also records where its JSON object lies in the
 * body, so a mutation can copy it back verbatim.
 *
 * The body is hostile: nesting is bounded by REVIEW_MAX_DEPTH, every field we
 * read must have the JSON type Kubernetes gives it (null counts as absent),
 * strings must be valid UTF-8, and anything wrong is a one-line error that
 * names the field.
 */
#ifndef OTA_REVIEW_H
#define OTA_REVIEW_H

#include <stddef.h>

#include "arena.h"
#include "ota_daemonset.h"
#include "ota_state.h"
#include "sv.h"

/* Deep enough for any Pod or DaemonSet, managedFields included; the
 * apiserver itself never nests these objects past ~30 levels. */
#define REVIEW_MAX_DEPTH 100

/* OTA entries of one object listed for the duplicate rule; a pod has up
 * to three (one of each type), and past this many the lists count as different. */
#define REVIEW_MAX_OTA_ENTRIES 8

#define REVIEW_API_VERSION "admission.k8s.io/v1"
#define REVIEW_KIND "AdmissionReview"

typedef struct review_cond {
    int present;
    sv type, status, reason, message, last_transition_time;
    size_t index;            /* position in status.conditions */
    size_t raw_off, raw_len; /* the condition's JSON object within the body */
} review_cond;

typedef struct review_object {
    int present; /* sent, and not null */
    sv name, namespace;
    sv ann_update_strategy; /* annotation values; absent when not annotated */
    sv ann_prepull_timeout;
    sv label_revision_hash;
    sv node_name;                /* spec.nodeName */
    int daemonset_owned;         /* a controller ownerReference of kind DaemonSet */
    int has_spec;
    size_t spec_off, spec_len;   /* spec's JSON object within the body (ImagePullJobs read it whole) */
    int has_update_strategy;     /* spec.updateStrategy is an object */
    sv update_strategy_type;
    int update_strategy_extra;   /* spec.updateStrategy has keys besides "type" */
    int has_status;
    int has_conditions;          /* status.conditions is an array */
    size_t n_conditions;
    review_cond need_upgrade;    /* first PodNeedUpgrade */
    review_cond image_ready;     /* first PodImageReady */
    review_cond auto_prepull;    /* first AutoPrePull */
    size_t n_need_upgrade, n_image_ready; /* entries of each OTA type */
    size_t n_auto_prepull;
    ota_entry ota[REVIEW_MAX_OTA_ENTRIES]; /* the OTA entries in order, the first ones */
    size_t n_ota;                          /* every OTA entry (may pass the bound) */
} review_object;

typedef struct review {
    sv api_version, kind;
    int has_request;
    sv uid;
    sv group, version, resource; /* request.resource */
    sv sub_resource, operation, namespace, name;
    sv username;
    int is_master;               /* system:masters is among userInfo.groups */
    review_object object, old_object;
    const char *body;            /* what the offsets of review_cond refer to */
    size_t body_len;
} review;

/* The rulebook's view of a decoded condition, pod (lib/ota_state.h) and
 * DaemonSet (lib/ota_daemonset.h): string views into the same memory. */
static inline ota_cond review_cond_view(const review_cond *c)
{
    return (ota_cond){c->present, c->status, c->reason, c->message};
}

static inline ota_pod review_pod_view(const review_object *o)
{
    size_t kept = o->n_ota < REVIEW_MAX_OTA_ENTRIES ? o->n_ota : REVIEW_MAX_OTA_ENTRIES;
    return (ota_pod){.node_name = o->node_name,
                     .need_upgrade = review_cond_view(&o->need_upgrade),
                     .image_ready = review_cond_view(&o->image_ready),
                     .auto_prepull = review_cond_view(&o->auto_prepull),
                     .n_need_upgrade = o->n_need_upgrade,
                     .n_image_ready = o->n_image_ready,
                     .n_auto_prepull = o->n_auto_prepull,
                     .entries = o->ota,
                     .n_entries = kept,
                     .entries_cut = o->n_ota > kept,
                     .owners_read = 1,
                     .daemonset_owned = o->daemonset_owned};
}

static inline ota_daemonset review_daemonset_view(const review_object *o)
{
    return (ota_daemonset){.update_strategy = o->ann_update_strategy,
                           .prepull_timeout = o->ann_prepull_timeout,
                           .has_update_strategy = o->has_update_strategy,
                           .update_strategy_type = o->update_strategy_type};
}

/*
 * Decodes body[0..len) into *rv.  Returns 0, or -1 with a message naming the
 * problem in err (at most errlen bytes, NUL-terminated).  Memory comes from
 * a, which also backs yajl's own allocations; nothing needs freeing besides
 * the arena.
 *
 * Two paths, one answer.  The fast one (jscan.h) hands the decoder only the
 * values it reads and checks the rest without callbacks; it serves every
 * body it accepts.  Any body it refuses, or that the decoder refuses on
 * it, is decoded again by review_decode_reference(), whose messages are
 * the ones returned.  Both fill *rv the same (tests/unit/test_jscan.c,
 * tests/fuzz/fuzz_jscan.c).
 */
int review_decode(review *rv, const char *body, size_t len, arena *a, char *err, size_t errlen);

/*
 * The reference path alone: jcheck_body(), then yajl's parser over every
 * token.  For the tests and benchmarks that hold the fast path to it.
 */
int review_decode_reference(review *rv, const char *body, size_t len, arena *a, char *err,
                            size_t errlen);

/*
 * The fast path alone: 0, or -1 (no message) for any body it or the decoder
 * on it refuses.  It must accept every body the reference accepts: the tests
 * check that it does not fall back where it need not.
 */
int review_decode_fast(review *rv, const char *body, size_t len, arena *a);

/* The verdict and patch to send back; see review_encode_response(). */
typedef struct review_response {
    sv uid;
    int allowed;
    int code;                /* status.code on denial (403) */
    const char *message;     /* status.message on denial, else NULL */
    const char *patch;       /* JSON Patch text, or NULL */
    size_t patch_len;
    const char *warnings[4];
    size_t n_warnings;
} review_response;

/*
 * Encodes the AdmissionReview v1 response: echoes uid, base64 patch with
 * patchType JSONPatch, warnings, status on denial.  Returns the JSON in
 * arena memory (length in *len), or NULL when out of memory.
 */
const char *review_encode_response(const review_response *r, arena *a, size_t *len);

/*
 * A meta.k8s.io/v1 Status body for an HTTP error (400, 404, 405, 413),
 * the shape kubectl and client-go print.  Arena memory, NULL on OOM.
 */
const char *review_encode_status(int code, const char *reason, const char *message, arena *a,
                                 size_t *len);

#endif

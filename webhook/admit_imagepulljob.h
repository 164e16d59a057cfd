/*
 * admit_imagepulljob.h - OpenKruise's ImagePullJob (apps.kruise.io, v1alpha1
 * and v1beta1) admitted as Kruise's own webhooks admit it (docs/design.md
 * "ImagePullJob admission"): the defaults its mutating webhook sets and the
 * checks its validating webhook makes, each denial with Kruise's message,
 * byte for byte where docs/DECISIONS.md "ImagePullJob messages" does not
 * say otherwise.
 *
 * The spec is read from the review's span of the body (review.h: spec_off,
 * spec_len), which review_decode() has already held to its rules (UTF-8,
 * depth, no key twice), into an ipj_spec; the decisions are pure functions
 * of ipj_specs.
 */
#ifndef OTA_ADMIT_IMAGEPULLJOB_H
#define OTA_ADMIT_IMAGEPULLJOB_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "jpatch.h"
#include "ota_rule.h"
#include "review.h"
#include "sv.h"

/* Largest spec we read into a tree: etcd's default request limit
 * (--max-request-bytes, 1.5 MiB); no ImagePullJob the apiserver can store
 * is larger, and a tree costs some ten times its text. */
#define IPJ_MAX_SPEC_BYTES (1536 * 1024)

typedef struct ipj_requirement {
    sv key, op;
    sv *values;
    size_t n_values;
    int has_values; /* values is an array, not absent or null */
} ipj_requirement;

typedef struct ipj_selector {
    int present;        /* an object, not absent or null */
    int has_names;      /* names is an array (Kruise: Names != nil) */
    sv *names;
    size_t n_names;
    int has_labels;     /* matchLabels is an object */
    sv *label_keys, *label_values; /* in key order */
    size_t n_labels;
    int has_exprs;      /* matchExpressions is an array */
    ipj_requirement *exprs;
    size_t n_exprs;
} ipj_selector;

/* An optional whole number: set or not. */
typedef struct ipj_int {
    int set;
    int64_t v;
} ipj_int;

typedef struct ipj_spec {
    int present;              /* spec is an object */
    sv image;
    int has_pull_secrets;     /* an array (Kruise compares with DeepEqual: [] is not absent) */
    sv *pull_secrets;
    size_t n_pull_secrets;
    ipj_selector selector, pod_selector;
    int parallelism_set;
    int parallelism_is_string;
    int64_t parallelism_int;
    sv parallelism_str;
    int has_pull_policy;      /* an object */
    ipj_int timeout_seconds, backoff_limit;
    int has_completion_policy;
    sv completion_type;
    ipj_int active_deadline_seconds, ttl_seconds_after_finished;
    sv image_pull_policy;
} ipj_spec;

/*
 * Reads spec json[0..len) (len 0: no spec) into *s.  Strings point into
 * json or the arena.  Returns 0, or -1 with a message naming the field in
 * err when a field Kruise reads has the wrong JSON type or range (Kruise's
 * decoder refuses these too, with Go's words; ours are our own).
 */
int ipj_decode(ipj_spec *s, const char *json, size_t len, arena *a, char *err, size_t errlen);

/* Bits ipj_defaults() reports, one per default Kruise's mutating webhook sets. */
enum {
    IPJ_DEFAULT_COMPLETION_TYPE = 1u << 0,
    IPJ_DEFAULT_TIMEOUT = 1u << 1,
    IPJ_DEFAULT_BACKOFF = 1u << 2,
    IPJ_DEFAULT_IMAGE_PULL_POLICY = 1u << 3,
};

/*
 * Appends to p the operations that set Kruise's defaults where s lacks
 * them: completionPolicy.type Always, pullPolicy.timeoutSeconds 600 and
 * backoffLimit 3, imagePullPolicy IfNotPresent.  Returns the IPJ_DEFAULT_*
 * bits of what it set (0: nothing to do).  Not the deletion-protection
 * finalizer (docs/DECISIONS.md "No deletion-protection finalizer").
 */
unsigned ipj_defaults(const ipj_spec *s, jpatch *p, arena *a);

/* A verdict with the status code Kruise answers it with (400, or 403). */
typedef struct ipj_verdict {
    ota_verdict v;
    int code;
} ipj_verdict;

/*
 * Kruise's validating webhook (v1.9): on UPDATE (old non-NULL) first that
 * pullSecrets did not change (403), then the spec's own checks, in
 * Kruise's order, the first failure's message.  Messages in arena memory.
 */
ipj_verdict ipj_validate(const ipj_spec *old, const ipj_spec *s, arena *a);

/* "invalid reference format", ...: why Kruise (distribution/reference's
 * ParseNormalizedNamed) refuses image s, or NULL when it is valid. */
const char *ipj_image_error(sv image, arena *a);

/* The message LabelSelectorAsSelector gives for sel, or NULL when it
 * parses. */
const char *ipj_selector_error(const ipj_selector *sel, arena *a);

#endif

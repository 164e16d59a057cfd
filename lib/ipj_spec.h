/*
 * ipj_spec.h - OpenKruise's ImagePullJob spec (apps.kruise.io, v1alpha1 and
 * v1beta1: the same fields) as both programs read it: ota-webhook to
 * default and validate it as Kruise's webhooks do, ota-controller to run
 * it.  The decoder keeps what Kruise reads, with the JSON types Kruise's
 * decoder accepts; the checks give Kruise's (apimachinery's,
 * distribution's) words; the selector matcher is LabelSelectorAsSelector's
 * Matches.
 */
#ifndef OTA_IPJ_SPEC_H
#define OTA_IPJ_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
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

/* "invalid reference format", ...: why Kruise (distribution/reference's
 * ParseNormalizedNamed) refuses image s, or NULL when it is valid. */
const char *ipj_image_error(sv image, arena *a);

/* The message LabelSelectorAsSelector gives for sel, or NULL when it
 * parses. */
const char *ipj_selector_error(const ipj_selector *sel, arena *a);

/* Whether a set of labels (keys sorted ascending, values alongside)
 * satisfies sel's matchLabels and matchExpressions, as Kubernetes matches
 * a label selector: every requirement holds (In, NotIn, Exists,
 * DoesNotExist; NotIn and DoesNotExist hold for a missing key); no
 * requirement matches everything.  sel must parse (ipj_selector_error
 * NULL); names are not looked at. */
int ipj_selector_matches(const ipj_selector *sel, char *const *keys, char *const *values,
                         size_t n);

/* Longest labelSelector query the controller sends (ipj_selector_string):
 * a URL the apiserver and any proxy in front of it take. */
#define IPJ_SELECTOR_STRING_MAX 4096

/* sel's matchLabels and matchExpressions as a labelSelector query value
 * in Kubernetes' selector syntax ("k=v,k in (a,b),k notin (c),k,!k"), in
 * arena memory; "" for a selector that selects everything.  NULL when it
 * would be longer than IPJ_SELECTOR_STRING_MAX (ipj_selector_string_len
 * says) or memory runs out.  sel must parse (ipj_selector_error NULL). */
const char *ipj_selector_string(const ipj_selector *sel, arena *a);
size_t ipj_selector_string_len(const ipj_selector *sel);

#endif

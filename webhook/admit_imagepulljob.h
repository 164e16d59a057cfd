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

#include "ipj_spec.h"

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

#endif

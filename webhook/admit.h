/*
 * admit.h - one admission request, body in, HTTP status and body out.
 *
 * The whole decision of the webhook as a pure function: decode the
 * AdmissionReview, dispatch on resource and subresource, run the DaemonSet,
 * pod-status, ImagePullJob or ImageCache rules (validate) or mutations
 * (mutate), and encode the answer.  The server adds only sockets, TLS, logging and metrics.
 */
#ifndef OTA_ADMIT_H
#define OTA_ADMIT_H

#include <stddef.h>

#include "arena.h"
#include "ota_rule.h"
#include "review.h"

typedef enum admit_phase {
    ADMIT_MUTATE,
    ADMIT_VALIDATE,
} admit_phase;

typedef enum admit_result {
    ADMIT_ALLOWED, /* allowed, unchanged */
    ADMIT_PATCHED, /* allowed with a patch */
    ADMIT_DENIED,
    ADMIT_INVALID, /* not a review we can read: HTTP 400 */
} admit_result;

/* Bits of admit_outcome.mutations: the ADMIT_MUT_* of admit_podstatus.h (the
 * low bits), then ours above them.  ADMIT_N_MUTATION_BITS is one past the
 * highest, so it counts every bit a mutation can set (stats.h sizes its
 * counters by it; test_admit.c checks every named bit is below it). */
enum admit_mutation_bit {
    ADMIT_MUT_ONDELETE_BIT = 8,
    ADMIT_MUT_IPJ_DEFAULTS_BIT, /* an ImagePullJob got Kruise's defaults */
    ADMIT_N_MUTATION_BITS
};
#define ADMIT_MUT_ONDELETE (1u << ADMIT_MUT_ONDELETE_BIT)
#define ADMIT_MUT_IPJ_DEFAULTS (1u << ADMIT_MUT_IPJ_DEFAULTS_BIT)

typedef struct admit_config {
    const char *controller_username;
    const char *co_writer_usernames; /* comma-separated; NULL: none (ota_requester_of) */
} admit_config;

typedef struct admit_outcome {
    int http_status; /* 200, or 400 when the review is malformed */
    const char *body;
    size_t body_len;
    admit_result result;
    ota_rule rule;       /* denial rule, or OTA_RULE_NONE */
    const char *message; /* denial message or what is malformed, or NULL */
    unsigned mutations;  /* what a patch does */
    sv uid, username;
    const char *object_ref; /* "resource namespace/name", or NULL */
} admit_outcome;

/*
 * Handles one request body.  now is the current time in RFC 3339 (UTC), used
 * to stamp a pre-pull request.  All memory, the response body included,
 * comes from a.  Returns 0, or -1 when out of memory (nothing to send but a
 * 500).
 */
int admit_review(admit_phase phase, const char *body, size_t len, const char *now,
                 const admit_config *cfg, arena *a, admit_outcome *out);

/* Names for logs and metrics. */
const char *admit_result_name(admit_result r);
/* The name of mutation bit 1u << bit, or NULL for an unused bit. */
const char *admit_mutation_name(unsigned bit);
/* The names of the bits set in mutations, comma-separated (arena). */
const char *admit_mutation_names(unsigned mutations, arena *a);

#endif

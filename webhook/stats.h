/*
 * stats.h - ota-webhook's Prometheus metrics: requests by path and result,
 * a latency histogram, denials by rule, mutations by kind, certificate
 * reloads.  One stats block per worker thread; /metrics sums them.
 */
#ifndef OTA_WEBHOOK_STATS_H
#define OTA_WEBHOOK_STATS_H

#include <stdint.h>

#include "admit.h"
#include "metrics.h"
#include "tls.h"

enum stats_path {
    STATS_MUTATE,
    STATS_VALIDATE,
    STATS_MUTATE_IPJ,   /* /mutate-imagepulljob */
    STATS_VALIDATE_IPJ, /* /validate-imagepulljob */
    STATS_VALIDATE_IC,  /* /validate-imagecache */
    STATS_OTHER,
    STATS_N_PATHS
};

/* admit_result, then the HTTP-level outcomes. */
enum stats_result {
    STATS_ALLOWED = ADMIT_ALLOWED,
    STATS_PATCHED = ADMIT_PATCHED,
    STATS_DENIED = ADMIT_DENIED,
    STATS_INVALID = ADMIT_INVALID,
    STATS_ERROR,       /* 500: out of memory */
    STATS_NOT_FOUND,   /* 404 */
    STATS_BAD_METHOD,  /* 405 */
    STATS_N_RESULTS
};

typedef struct stats {
    metrics_counter requests[STATS_N_PATHS][STATS_N_RESULTS];
    metrics_histogram latency[STATS_N_PATHS];
    metrics_counter denials[OTA_N_RULES]; /* by rule; [OTA_RULE_NONE]: a denial without one */
    metrics_counter mutations[ADMIT_N_MUTATION_BITS]; /* by bit of admit_outcome.mutations */
} stats;

/* "/mutate", ...: a path's label on the metrics page and in logs. */
const char *stats_path_name(enum stats_path path);

/* Counts one request (owning thread only). */
void stats_record(stats *s, enum stats_path path, enum stats_result result, uint64_t ns,
                  const admit_outcome *out);

/* Renders the sum over n blocks, plus the certificate counters, into t. */
void stats_render(strbuf *t, stats *const *blocks, size_t n, tls_store *tls);

#endif

/*
 * metrics.h - counters and histograms in the Prometheus text format, for the
 * /metrics endpoints of both programs.
 *
 * Each thread owns its counters (a counter has one writer), so incrementing
 * is a relaxed load and store, no lock and no contended cache line; the
 * scraper sums the threads' values with relaxed loads.
 */
#ifndef OTA_METRICS_H
#define OTA_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

typedef _Atomic uint64_t metrics_counter;

/* Only the owning thread may call this. */
static inline void metrics_add(metrics_counter *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline uint64_t metrics_get(metrics_counter *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* Upper bounds in seconds of the latency buckets, then +Inf. */
#define METRICS_N_BUCKETS 12
extern const double metrics_bucket_bounds[METRICS_N_BUCKETS];

typedef struct metrics_histogram {
    metrics_counter buckets[METRICS_N_BUCKETS + 1]; /* not cumulative; last is +Inf */
    metrics_counter sum_ns;
    metrics_counter count;
} metrics_histogram;

void metrics_observe(metrics_histogram *h, uint64_t ns);

/* Rendering appends Prometheus text to a strbuf; sample lines are written
 * with strbuf_printf. */

/* "# HELP name help\n# TYPE name type\n" */
void metrics_header(strbuf *t, const char *name, const char *type, const char *help);
/* The _bucket, _sum and _count lines of the sum of n histograms. labels is
 * "" or `key="value"` pairs without braces. */
void metrics_histogram_render(strbuf *t, const char *name, const char *labels,
                              metrics_histogram *const *hs, size_t n);

#endif

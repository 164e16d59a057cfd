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

/* Text being rendered, in malloc memory. */
typedef struct metrics_text {
    char *data;
    size_t len, cap;
    int failed; /* out of memory: data is incomplete */
} metrics_text;

void metrics_printf(metrics_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "# HELP name help\n# TYPE name type\n" */
void metrics_header(metrics_text *t, const char *name, const char *type, const char *help);
/* The _bucket, _sum and _count lines of the sum of n histograms. labels is
 * "" or `key="value"` pairs without braces. */
void metrics_histogram_render(metrics_text *t, const char *name, const char *labels,
                              metrics_histogram *const *hs, size_t n);
void metrics_text_free(metrics_text *t);

#endif

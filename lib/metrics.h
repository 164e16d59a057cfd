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
/* The same number of buckets for what takes seconds to an hour (an image
 * pull, a wait for a free pull slot): 1 s .. 2 h. */
extern const double metrics_long_bounds[METRICS_N_BUCKETS];

typedef struct metrics_histogram {
    metrics_counter buckets[METRICS_N_BUCKETS + 1]; /* not cumulative; last is +Inf */
    metrics_counter sum_ns;
    metrics_counter count;
} metrics_histogram;

void metrics_observe(metrics_histogram *h, uint64_t ns);
/* With other bounds (metrics_long_bounds); render with the same bounds. */
void metrics_observe_bounds(metrics_histogram *h, uint64_t ns, const double *bounds);

/* Rendering appends Prometheus text to a strbuf; sample lines are written
 * with strbuf_printf. */

/* A label value as the text format wants it: backslash, quote and newline
 * escaped (no quotes around it). */
void metrics_label_value(strbuf *t, const char *v);
/* "# HELP name help\n# TYPE name type\n" */
void metrics_header(strbuf *t, const char *name, const char *type, const char *help);
/* The _bucket, _sum and _count lines of the sum of n histograms. labels is
 * "" or `key="value"` pairs without braces. */
void metrics_histogram_render(strbuf *t, const char *name, const char *labels,
                              metrics_histogram *const *hs, size_t n);
void metrics_histogram_render_bounds(strbuf *t, const char *name, const char *labels,
                                     metrics_histogram *const *hs, size_t n,
                                     const double *bounds);

/* `ota_prepull_build_info{version="...",commit="..."} 1`, with its header;
 * label values escaped as the text format wants. */
void metrics_build_info(strbuf *t, const char *version, const char *commit);

/* What the Prometheus client libraries export as process_* (from /proc). */
typedef struct metrics_process {
    double cpu_seconds;    /* user + system */
    double start_time;     /* seconds since 1970 */
    uint64_t resident_bytes;
    uint64_t open_fds;
    uint64_t max_fds;
} metrics_process;

/* Pure: fills cpu_seconds, start_time and resident_bytes from the text of
 * /proc/self/stat, the machine's boot time (btime of /proc/stat), the clock
 * ticks per second and the page size.  0, or -1 when stat does not parse
 * (p is then untouched). */
int metrics_process_parse_stat(const char *stat, long long btime, long ticks, long page,
                               metrics_process *p);
/* Reads /proc/self (stat, fd/, and RLIMIT_NOFILE) and renders
 * process_cpu_seconds_total, process_start_time_seconds,
 * process_resident_memory_bytes, process_open_fds and process_max_fds; a
 * value that cannot be read is left out. */
void metrics_process_render(strbuf *t);

#endif

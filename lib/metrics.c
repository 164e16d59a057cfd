/*
 * metrics.c - see metrics.h.
 */
#include "metrics.h"

#include <stdio.h>

/* From 100 µs (a decision) to 5 s (the apiserver's patience is 10 s). */
const double metrics_bucket_bounds[METRICS_N_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 5,
};

void metrics_observe(metrics_histogram *h, uint64_t ns)
{
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < METRICS_N_BUCKETS && s > metrics_bucket_bounds[i])
        i++;
    metrics_add(&h->buckets[i], 1);
    metrics_add(&h->sum_ns, ns);
    metrics_add(&h->count, 1);
}

void metrics_header(strbuf *t, const char *name, const char *type, const char *help)
{
    strbuf_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_histogram_render(strbuf *t, const char *name, const char *labels,
                              metrics_histogram *const *hs, size_t n)
{
    const char *sep = labels[0] != '\0' ? "," : "";
    uint64_t cumulative = 0, sum_ns = 0, count = 0;
    for (size_t b = 0; b <= METRICS_N_BUCKETS; b++) {
        for (size_t i = 0; i < n; i++)
            cumulative += metrics_get(&hs[i]->buckets[b]);
        if (b < METRICS_N_BUCKETS)
            strbuf_printf(t, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
                          metrics_bucket_bounds[b], (unsigned long long)cumulative);
        else
            strbuf_printf(t, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
                          (unsigned long long)cumulative);
    }
    for (size_t i = 0; i < n; i++) {
        sum_ns += metrics_get(&hs[i]->sum_ns);
        count += metrics_get(&hs[i]->count);
    }
    const char *open = labels[0] != '\0' ? "{" : "", *close = labels[0] != '\0' ? "}" : "";
    strbuf_printf(t, "%s_sum%s%s%s %.9f\n", name, open, labels, close, (double)sum_ns / 1e9);
    strbuf_printf(t, "%s_count%s%s%s %llu\n", name, open, labels, close,
                  (unsigned long long)count);
}

/*
 * stats.c - see stats.h.
 */
#include "stats.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const path_names[STATS_N_PATHS] = {
    "/mutate", "/validate", "/mutate-imagepulljob", "/validate-imagepulljob", "/validate-imagecache", "other",
};

const char *stats_path_name(enum stats_path path)
{
    return path < STATS_N_PATHS ? path_names[path] : "other";
}

static const char *const result_names[STATS_N_RESULTS] = {
    "allowed", "patched", "denied", "invalid", "error", "not_found", "method_not_allowed",
};

void stats_record(stats *s, enum stats_path path, enum stats_result result, uint64_t ns,
                  const admit_outcome *out)
{
    metrics_add(&s->requests[path][result], 1);
    metrics_observe(&s->latency[path], ns);
    if (out == NULL)
        return;
    if (out->result == ADMIT_DENIED)
        metrics_add(&s->denials[out->rule < OTA_N_RULES ? out->rule : OTA_RULE_NONE], 1);
    for (unsigned bit = 0; bit < ADMIT_N_MUTATION_BITS; bit++)
        if (out->mutations & (1u << bit))
            metrics_add(&s->mutations[bit], 1);
}

static uint64_t sum(stats *const *blocks, size_t n, size_t offset)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += metrics_get((metrics_counter *)((char *)blocks[i] + offset));
    return total;
}

#define SUM(field) sum(blocks, n, offsetof(stats, field))

void stats_render(strbuf *t, stats *const *blocks, size_t n, tls_store *tls)
{
    metrics_header(t, "ota_webhook_requests_total", "counter",
                   "Admission requests by path and result.");
    for (int p = 0; p < STATS_N_PATHS; p++)
        for (int r = 0; r < STATS_N_RESULTS; r++)
            strbuf_printf(t, "ota_webhook_requests_total{path=\"%s\",result=\"%s\"} %llu\n",
                          path_names[p], result_names[r],
                          (unsigned long long)SUM(requests[p][r]));

    metrics_header(t, "ota_webhook_request_duration_seconds", "histogram",
                   "Time from a complete request to its response being queued.");
    /* One per worker thread (--threads, or one per CPU): no VLA. */
    metrics_histogram **hs = calloc(n > 0 ? n : 1, sizeof(*hs));
    if (hs == NULL) {
        t->failed = 1; /* a page without this family is not served */
        return;
    }
    for (int p = 0; p < STATS_N_PATHS; p++) {
        for (size_t i = 0; i < n; i++)
            hs[i] = &blocks[i]->latency[p];
        char labels[64];
        snprintf(labels, sizeof(labels), "path=\"%s\"", path_names[p]);
        metrics_histogram_render(t, "ota_webhook_request_duration_seconds", labels, hs, n);
    }
    free(hs);

    metrics_header(t, "ota_webhook_denials_total", "counter", "Denied requests by rule.");
    for (int r = OTA_RULE_NONE + 1; r < OTA_N_RULES; r++)
        strbuf_printf(t, "ota_webhook_denials_total{rule=\"%s\"} %llu\n",
                      ota_rule_name((ota_rule)r), (unsigned long long)SUM(denials[r]));
    /* a denial that names no rule (no verdict does; the row stays on the page) */
    strbuf_printf(t, "ota_webhook_denials_total{rule=\"other\"} %llu\n",
                  (unsigned long long)SUM(denials[OTA_RULE_NONE]));

    metrics_header(t, "ota_webhook_mutations_total", "counter",
                   "Patches returned, by what they change.");
    for (unsigned bit = 0; bit < ADMIT_N_MUTATION_BITS; bit++) {
        const char *name = admit_mutation_name(bit);
        if (name != NULL)
            strbuf_printf(t, "ota_webhook_mutations_total{kind=\"%s\"} %llu\n", name,
                          (unsigned long long)SUM(mutations[bit]));
    }

    metrics_header(t, "ota_webhook_cert_reloads_total", "counter",
                   "Serving certificate reloads by result.");
    strbuf_printf(t, "ota_webhook_cert_reloads_total{result=\"success\"} %llu\n",
                  (unsigned long long)metrics_get(&tls->reloads_ok));
    strbuf_printf(t, "ota_webhook_cert_reloads_total{result=\"failure\"} %llu\n",
                  (unsigned long long)metrics_get(&tls->reloads_failed));

    /* cert-manager's certmanager_certificate_expiration_timestamp_seconds,
     * seen from the process that serves the certificate */
    long long not_after = atomic_load(&tls->not_after);
    if (not_after != 0) {
        metrics_header(t, "ota_webhook_certificate_expiration_timestamp_seconds", "gauge",
                       "The serving certificate's notAfter, in seconds since 1970 (the one "
                       "loaded last).");
        strbuf_printf(t, "ota_webhook_certificate_expiration_timestamp_seconds %lld\n", not_after);
    }
}

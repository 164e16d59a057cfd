/*
 * metrics.c - see metrics.h.
 */
#include "metrics.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* From 100 µs (a decision) to 5 s (the apiserver's patience is 10 s). */
const double metrics_bucket_bounds[METRICS_N_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 5,
};

const double metrics_long_bounds[METRICS_N_BUCKETS] = {
    1, 5, 10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
};

void metrics_observe(metrics_histogram *h, uint64_t ns)
{
    metrics_observe_bounds(h, ns, metrics_bucket_bounds);
}

void metrics_observe_bounds(metrics_histogram *h, uint64_t ns, const double *bounds)
{
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < METRICS_N_BUCKETS && s > bounds[i])
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
    metrics_histogram_render_bounds(t, name, labels, hs, n, metrics_bucket_bounds);
}

void metrics_histogram_render_bounds(strbuf *t, const char *name, const char *labels,
                                     metrics_histogram *const *hs, size_t n,
                                     const double *bounds)
{
    const char *sep = labels[0] != '\0' ? "," : "";
    uint64_t cumulative = 0, sum_ns = 0, count = 0;
    for (size_t b = 0; b <= METRICS_N_BUCKETS; b++) {
        for (size_t i = 0; i < n; i++)
            cumulative += metrics_get(&hs[i]->buckets[b]);
        if (b < METRICS_N_BUCKETS)
            strbuf_printf(t, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
                          bounds[b], (unsigned long long)cumulative);
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

void metrics_label_value(strbuf *t, const char *v)
{
    for (; *v != '\0'; v++) {
        if (*v == '\\' || *v == '"')
            strbuf_printf(t, "\\%c", *v);
        else if (*v == '\n')
            strbuf_printf(t, "\\n");
        else
            strbuf_printf(t, "%c", *v);
    }
}

void metrics_build_info(strbuf *t, const char *version, const char *commit)
{
    metrics_header(t, "ota_prepull_build_info", "gauge",
                   "Always 1; the labels say which build this is.");
    strbuf_printf(t, "ota_prepull_build_info{version=\"");
    metrics_label_value(t, version);
    strbuf_printf(t, "\",commit=\"");
    metrics_label_value(t, commit);
    strbuf_printf(t, "\"} 1\n");
}

int metrics_process_parse_stat(const char *stat, long long btime, long ticks, long page,
                               metrics_process *p)
{
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses,
     * so the fields are counted from the last ')'. */
    const char *s = strrchr(stat, ')');
    if (s == NULL || ticks <= 0 || page <= 0)
        return -1;
    s++;
    unsigned long long utime = 0, stime = 0, start = 0;
    long long rss = 0;
    int got = 0;
    /* field 3 (state) is the first after ')'; utime 14, stime 15,
     * starttime 22, rss 24 */
    for (int field = 3; field <= 24; field++) {
        while (*s == ' ')
            s++;
        if (*s == '\0')
            return -1;
        char *end = NULL;
        if (field == 14 || field == 15 || field == 22) {
            unsigned long long v = strtoull(s, &end, 10);
            if (end == s)
                return -1;
            if (field == 14)
                utime = v;
            else if (field == 15)
                stime = v;
            else
                start = v;
            got++;
            s = end;
        } else if (field == 24) {
            rss = strtoll(s, &end, 10);
            if (end == s || rss < 0)
                return -1;
            got++;
            s = end;
        } else {
            while (*s != ' ' && *s != '\0')
                s++;
        }
    }
    if (got != 4)
        return -1;
    p->cpu_seconds = (double)(utime + stime) / (double)ticks;
    p->start_time = (double)btime + (double)start / (double)ticks;
    p->resident_bytes = (uint64_t)rss * (uint64_t)page;
    return 0;
}

/* The whole of a small /proc file, NUL-terminated, into buf; 0 or -1. */
static int read_small(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0 ? 0 : -1;
}

/* The boot time from /proc/stat's btime line, or -1.  Read line by line:
 * on a many-core machine the per-CPU lines and the long intr line before
 * it run to many kilobytes (a line longer than the buffer comes in
 * pieces, none of which starts with "btime "). */
static long long boot_time(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (f == NULL)
        return -1;
    char line[4096];
    long long btime = -1;
    int line_start = 1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (line_start && strncmp(line, "btime ", 6) == 0) {
            btime = strtoll(line + 6, NULL, 10);
            break;
        }
        line_start = strchr(line, '\n') != NULL;
    }
    fclose(f);
    return btime;
}

void metrics_process_render(strbuf *t)
{
    metrics_process p = {0};
    char stat[1024];
    long long btime = boot_time();
    int have_stat = btime >= 0 && read_small("/proc/self/stat", stat, sizeof(stat)) == 0 &&
                    metrics_process_parse_stat(stat, btime, sysconf(_SC_CLK_TCK),
                                               sysconf(_SC_PAGESIZE), &p) == 0;
    if (have_stat) {
        metrics_header(t, "process_cpu_seconds_total", "counter",
                       "Total user and system CPU time spent in seconds.");
        strbuf_printf(t, "process_cpu_seconds_total %.2f\n", p.cpu_seconds);
        metrics_header(t, "process_start_time_seconds", "gauge",
                       "Start time of the process since unix epoch in seconds.");
        strbuf_printf(t, "process_start_time_seconds %.2f\n", p.start_time);
        metrics_header(t, "process_resident_memory_bytes", "gauge",
                       "Resident memory size in bytes.");
        strbuf_printf(t, "process_resident_memory_bytes %llu\n",
                      (unsigned long long)p.resident_bytes);
    }
    DIR *d = opendir("/proc/self/fd");
    if (d != NULL) {
        uint64_t n = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            n += e->d_name[0] != '.';
        closedir(d);
        metrics_header(t, "process_open_fds", "gauge", "Number of open file descriptors.");
        /* less the one opendir held while counting */
        strbuf_printf(t, "process_open_fds %llu\n", (unsigned long long)(n > 0 ? n - 1 : 0));
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        metrics_header(t, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
        strbuf_printf(t, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
    }
}

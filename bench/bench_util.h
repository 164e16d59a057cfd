/*
 * bench_util.h - what the webhook benchmarks share (bench/webhook_decide.c,
 * bench/webhook_ref.c): a yajl parse with callbacks
 * that do nothing (the parse ceiling), the process CPU clock and reading a
 * fixture whole.
 */
#ifndef OTA_BENCH_UTIL_H
#define OTA_BENCH_UTIL_H

#include <stddef.h>

#include <yajl/yajl_parse.h>

/* yajl callbacks that accept every token and do nothing. */
extern const yajl_callbacks bench_empty_callbacks;

/* 0 when body is one JSON value to yajl with cb (ctx passed to them),
 * -1 otherwise. */
int bench_yajl_parse(const char *body, size_t len, const yajl_callbacks *cb, void *ctx);

/* CPU time of the process so far, in ns. */
double bench_cpu_ns(void);

/* The whole file, malloc'd (not NUL-terminated), its size in *len; NULL
 * when it cannot be read. */
char *bench_slurp(const char *path, size_t *len);

#endif

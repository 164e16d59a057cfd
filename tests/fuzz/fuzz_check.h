/*
 * fuzz_check.h - what the libFuzzer harnesses of tests/fuzz share: a check
 * that aborts with a message (libFuzzer then saves the input as a crash),
 * and the strict JSON test every output of ours must pass.
 */
#ifndef OTA_FUZZ_CHECK_H
#define OTA_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <yajl/yajl_parse.h>

#include "jcheck.h"

/* Aborts, naming the broken property, when cond is false. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property broken: %s\n  ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Where the top-level value closed, as the review decoder finds it. */
typedef struct fuzz_depth {
    yajl_handle h;
    int depth;
    size_t end;
} fuzz_depth;

static int fuzz_open(void *ctx)
{
    ((fuzz_depth *)ctx)->depth++;
    return 1;
}

static int fuzz_close(void *ctx)
{
    fuzz_depth *d = ctx;
    if (--d->depth == 0)
        d->end = yajl_get_bytes_consumed(d->h);
    return 1;
}

/* s[0..n) is one JSON object or array as RFC 8259 has it, by the webhook's
 * own rules: the strict pass finds nothing, yajl parses it, and only
 * whitespace follows where its top-level value closed (review_decode()
 * refuses any other root, and bytes after the value, the same way). */
static inline int fuzz_strict_json(const char *s, size_t n)
{
    char err[256];
    if (jcheck_body(s, n, err, sizeof(err)) != 0)
        return 0;
    static const yajl_callbacks cb = {.yajl_start_map = fuzz_open, .yajl_end_map = fuzz_close,
                                      .yajl_start_array = fuzz_open, .yajl_end_array = fuzz_close};
    fuzz_depth d = {0};
    d.h = yajl_alloc(&cb, NULL, &d);
    if (d.h == NULL)
        abort();
    int ok = yajl_parse(d.h, (const unsigned char *)s, n) == yajl_status_ok &&
             yajl_complete_parse(d.h) == yajl_status_ok;
    yajl_free(d.h);
    return ok && d.end > 0 && jcheck_skip_space(s, n, d.end) == n;
}

#endif

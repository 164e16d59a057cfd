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

/* s[0..n) is one JSON text as RFC 8259 has it, by the webhook's own rules:
 * the strict pass finds nothing and yajl parses it whole. */
static inline int fuzz_strict_json(const char *s, size_t n)
{
    jcheck_result r;
    char err[256];
    if (jcheck_body(s, n, &r, err, sizeof(err)) != 0 || r.trailing != n)
        return 0;
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    if (h == NULL)
        abort();
    int ok = yajl_parse(h, (const unsigned char *)s, r.end) == yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    return ok;
}

#endif

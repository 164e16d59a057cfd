/* bench_util.c - see bench_util.h. */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int on_any(void *c)
{
    (void)c;
    return 1;
}
static int on_bool(void *c, int b)
{
    (void)c;
    (void)b;
    return 1;
}
static int on_num(void *c, const char *s, size_t n)
{
    (void)c;
    (void)s;
    (void)n;
    return 1;
}
static int ignore_string(void *c, const unsigned char *s, size_t n)
{
    (void)c;
    (void)s;
    (void)n;
    return 1;
}

const yajl_callbacks bench_empty_callbacks = {
    .yajl_null = on_any,
    .yajl_boolean = on_bool,
    .yajl_number = on_num,
    .yajl_string = ignore_string,
    .yajl_start_map = on_any,
    .yajl_map_key = ignore_string,
    .yajl_end_map = on_any,
    .yajl_start_array = on_any,
    .yajl_end_array = on_any,
};

int bench_yajl_parse(const char *body, size_t len, const yajl_callbacks *cb, void *ctx)
{
    yajl_handle h = yajl_alloc(cb, NULL, ctx);
    if (h == NULL)
        return -1;
    yajl_status st = yajl_parse(h, (const unsigned char *)body, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    yajl_free(h);
    return st == yajl_status_ok ? 0 : -1;
}

double bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

char *bench_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b != NULL && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(b, cap *= 2);
            if (bigger == NULL)
                free(b);
            b = bigger;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

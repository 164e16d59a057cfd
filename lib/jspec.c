/*
 * jspec.c - see jspec.h.
 */
#include "jspec.h"

#include <stdarg.h>

#include <yajl/yajl_parse.h>

#include "errmsg.h"

int jspec_fail(jspec_sink *sink, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errmsg_vset(sink->err, sink->errlen, fmt, ap);
    va_end(ap);
    sink->failed = 1;
    return 0; /* yajl: stop */
}

int jspec_top(const jspec_stack *st)
{
    if (st->skipped > 0)
        return JSPEC_SKIP;
    return st->depth == 0 ? JSPEC_TOP : st->at[st->depth - 1];
}

void jspec_open(jspec_stack *st, int c)
{
    if (c == JSPEC_SKIP || st->skipped > 0 || st->depth == JSPEC_DEPTH)
        st->skipped++;
    else
        st->at[st->depth++] = c;
}

int jspec_close(jspec_stack *st)
{
    if (st->skipped > 0) {
        st->skipped--;
        return JSPEC_SKIP;
    }
    return st->depth == 0 ? JSPEC_SKIP : st->at[--st->depth];
}

typedef struct frame {
    const jspec_events *ev;
    void *ctx;
} frame;

static int on_null(void *f)
{
    return ((frame *)f)->ev->scalar(((frame *)f)->ctx, 'z', NULL, 0);
}

static int on_bool(void *f, int b)
{
    (void)b;
    return ((frame *)f)->ev->scalar(((frame *)f)->ctx, 'b', NULL, 0);
}

static int on_number(void *f, const char *s, size_t len)
{
    return ((frame *)f)->ev->scalar(((frame *)f)->ctx, 'n', s, len);
}

static int on_string(void *f, const unsigned char *s, size_t len)
{
    return ((frame *)f)->ev->scalar(((frame *)f)->ctx, 's', (const char *)s, len);
}

static int on_start_map(void *f)
{
    return ((frame *)f)->ev->open(((frame *)f)->ctx, 1);
}

static int on_start_array(void *f)
{
    return ((frame *)f)->ev->open(((frame *)f)->ctx, 0);
}

static int on_end(void *f)
{
    return ((frame *)f)->ev->close(((frame *)f)->ctx);
}

static int on_key(void *f, const unsigned char *k, size_t len)
{
    return ((frame *)f)->ev->key(((frame *)f)->ctx, (const char *)k, len);
}

static const yajl_callbacks callbacks = {
    on_null, on_bool, NULL, NULL, on_number, on_string, on_start_map, on_key, on_end, on_start_array, on_end,
};

int jspec_parse(const jspec_events *ev, void *ctx, jspec_sink *sink, const char *json, size_t len,
                size_t max_bytes, arena *a)
{
    if (len > max_bytes)
        return errmsg_set(sink->err, sink->errlen, "spec is %zu bytes, more than the %zu an object can have", len,
                          max_bytes);
    frame f = {ev, ctx};
    yajl_alloc_funcs af = arena_yajl_funcs(a);
    yajl_handle h = yajl_alloc(&callbacks, &af, &f);
    if (h == NULL)
        return errmsg_set(sink->err, sink->errlen, "out of memory");
    yajl_status st = yajl_parse(h, (const unsigned char *)json, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    yajl_free(h);
    if (sink->failed)
        return -1;
    if (st != yajl_status_ok) /* the review decoder read the same bytes: cannot happen */
        return errmsg_set(sink->err, sink->errlen, "spec is not JSON");
    return 0;
}

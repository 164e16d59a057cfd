/*
 * arena.c - see arena.h.  Blocks are chained newest first; a request that is
 * larger than a default block gets a block of its own size.
 */
#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16
#define ARENA_BLOCK_SIZE (16 * 1024)

struct arena_block {
    arena_block *next;
    int owned; /* allocated by us with malloc */
    _Alignas(ARENA_ALIGN) char data[];
};

void arena_init(arena *a)
{
    memset(a, 0, sizeof(*a));
}

void arena_init_with(arena *a, arena_block_fn fn, void *ctx)
{
    arena_init(a);
    a->block_fn = fn;
    a->block_ctx = ctx;
}

void arena_set_limit(arena *a, size_t limit)
{
    a->limit = limit;
}

static int arena_grow(arena *a, size_t n)
{
    size_t size = n > ARENA_BLOCK_SIZE ? n : ARENA_BLOCK_SIZE;
    size_t total = sizeof(arena_block) + size;
    arena_block *b = a->block_fn ? a->block_fn(a->block_ctx, total) : malloc(total);
    if (b == NULL)
        return -1;
    b->owned = a->block_fn == NULL;
    b->next = a->blocks;
    a->blocks = b;
    a->cur = b->data;
    a->end = b->data + size;
    return 0;
}

void *arena_alloc(arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (a->limit != 0 && (n > a->limit || a->used > a->limit - n))
        return NULL;
    if ((size_t)(a->end - a->cur) < n && arena_grow(a, n) != 0)
        return NULL;
    void *p = a->cur;
    a->cur += n;
    a->used += n;
    return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX) /* n + 1 would wrap to a 1-byte block */
        return NULL;
    char *p = arena_alloc(a, n + 1);
    if (p == NULL)
        return NULL;
    if (n != 0)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_vprintf(arena *a, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *p = n < 0 ? NULL : arena_alloc(a, (size_t)n + 1);
    if (p != NULL)
        vsnprintf(p, (size_t)n + 1, fmt, again);
    va_end(again);
    return p;
}

char *arena_printf(arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = arena_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

/* Writes s[0..n) escaped into out (when out is not NULL); returns the
 * length of the escaped text. */
static size_t escape_into(char *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e = c == '"' ? '"' : c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : 0;
        if (e != 0) {
            if (out != NULL) {
                out[o] = '\\';
                out[o + 1] = e;
            }
            o += 2;
        } else if (c < 0x20 || c == 0x7f) {
            if (out != NULL) {
                memcpy(out + o, "\\u00", 4);
                out[o + 4] = hex[c >> 4];
                out[o + 5] = hex[c & 15];
            }
            o += 6;
        } else {
            if (out != NULL)
                out[o] = (char)c;
            o++;
        }
    }
    return o;
}

static char *escaped(arena *a, const char *s, size_t n, int quoted)
{
    if (s == NULL)
        n = 0;
    size_t len = escape_into(NULL, s, n) + (quoted ? 2 : 0);
    char *out = arena_alloc(a, len + 1);
    if (out == NULL)
        return quoted ? "\"(out of memory)\"" : "(out of memory)";
    size_t o = 0;
    if (quoted)
        out[o++] = '"';
    o += escape_into(out + o, s, n);
    if (quoted)
        out[o++] = '"';
    out[o] = '\0';
    return out;
}

const char *arena_quote(arena *a, const char *s, size_t n)
{
    return escaped(a, s, n, 1);
}

const char *arena_escape(arena *a, const char *s, size_t n)
{
    return escaped(a, s, n, 0);
}

void arena_free(arena *a)
{
    arena_block *b = a->blocks;
    while (b != NULL) {
        arena_block *next = b->next;
        if (b->owned)
            free(b);
        b = next;
    }
    a->blocks = NULL;
    a->cur = a->end = NULL;
    a->used = 0;
}

/* yajl reallocs its buffers: a size header in front of each allocation lets
 * us copy the old contents; two words keep the 16-byte alignment.
 *
 * yajl 2.1 writes through what its allocator returns without checking it
 * (yajl_buf_alloc, yajl_lex_alloc, yajl_bs_push, yajl_buf_ensure_available),
 * so a NULL here would become a write near address 0 plus an offset the
 * input controls.  Abort instead, as h2o_mem_alloc_pool does. */
static void *yajl_malloc(void *ctx, size_t n)
{
    size_t *p = arena_alloc(ctx, n + 2 * sizeof(size_t));
    if (p == NULL)
        abort();
    p[0] = n;
    return p + 2;
}

static void *yajl_realloc(void *ctx, void *old, size_t n)
{
    void *p = yajl_malloc(ctx, n);
    if (p != NULL && old != NULL) {
        size_t old_n = ((size_t *)old)[-2];
        memcpy(p, old, old_n < n ? old_n : n);
    }
    return p;
}

static void yajl_free_noop(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

yajl_alloc_funcs arena_yajl_funcs(arena *a)
{
    return (yajl_alloc_funcs){yajl_malloc, yajl_realloc, yajl_free_noop, a};
}

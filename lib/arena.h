/*
 * arena.h - bump allocation for memory that lives exactly as long as one
 * piece of work (one admission request, one decoded object).
 *
 * Everything allocated from an arena is released together by arena_free()
 * or, when the blocks come from an outside owner (the webhook passes the
 * request's h2o_mem_pool_t), when that owner is cleared.  Nothing is freed
 * one by one, so code that decodes hostile input cannot leak on an error
 * path: it simply stops allocating.
 */
#ifndef OTA_ARENA_H
#define OTA_ARENA_H

#include <stdarg.h>
#include <stddef.h>

#include <yajl/yajl_common.h>

/* Returns a block of at least n bytes, aligned like malloc, or NULL.  The
 * block stays valid until the provider's owner is released. */
typedef void *(*arena_block_fn)(void *ctx, size_t n);

typedef struct arena_block arena_block;

typedef struct arena {
    arena_block_fn block_fn; /* NULL: blocks come from malloc and arena_free frees them */
    void *block_ctx;
    arena_block *blocks;     /* newest first */
    char *cur, *end;         /* free space of the newest block */
    size_t limit, used;      /* bytes handed out so far, and the most allowed (0: no limit) */
} arena;

/* Blocks from malloc, released by arena_free(). */
void arena_init(arena *a);
/* Blocks from fn(ctx, n); the arena never frees them. */
void arena_init_with(arena *a, arena_block_fn fn, void *ctx);
/* Caps the total an arena hands out; past it arena_alloc returns NULL (and
 * arena_yajl_funcs' allocations abort). */
void arena_set_limit(arena *a, size_t limit);

/* n bytes aligned for any type, or NULL when out of memory or over the
 * limit.  Owned by the arena. */
void *arena_alloc(arena *a, size_t n);
/* A NUL-terminated copy of s[0..n), owned by the arena, or NULL. */
char *arena_strndup(arena *a, const char *s, size_t n);
/* printf into arena memory; NULL on failure. */
char *arena_printf(arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a va_list (for a function that takes a format of its own). */
char *arena_vprintf(arena *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* s[0..n) (s NULL: "") for a message, between double quotes and escaped as
 * JSON escapes a string: '"', '\\', and every control character, NUL
 * included, so the text shows the whole value as it was sent, never cut at a
 * NUL (printf's "%.*s" stops there) and never a raw line break.  Bytes from
 * 0x80 up are copied as they are.  Arena memory; out of memory gives a
 * constant that says so, never NULL, so the result can go straight into a
 * "%s". */
const char *arena_quote(arena *a, const char *s, size_t n);
/* The same without the double quotes. */
const char *arena_escape(arena *a, const char *s, size_t n);

/* Allocation functions that make yajl (parser and generator) allocate from
 * the arena; yajl's frees become no-ops, its buffers live with the arena.
 * yajl cannot survive a failed allocation, so these abort() when the arena
 * runs out (or hits its limit) rather than return NULL. */
yajl_alloc_funcs arena_yajl_funcs(arena *a);

/* Releases the blocks the arena allocated itself; the arena can be reused
 * after arena_init() again. */
void arena_free(arena *a);

#endif

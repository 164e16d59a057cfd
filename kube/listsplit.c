/*
 * listsplit.c - see listsplit.h.  yajl's callback parser tracks the nesting;
 * yajl_get_bytes_consumed() at an item's '{' and '}' gives where its bytes
 * begin and end in the chunk being parsed.
 */
#include "listsplit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

enum { KEY_OTHER, KEY_ITEMS, KEY_METADATA };
enum { META_OTHER, META_RV, META_CONTINUE };

#define LISTSPLIT_MAX_DEPTH 64

/* Writes the message into s->err and marks the split failed; returns -1.
 * (The yajl callbacks below return 1 to go on and 0 to stop.) */
static int set_error(listsplit *s, const char *msg)
{
    s->failed = 1;
    return errmsg_set(s->err, sizeof(s->err), "%s", msg);
}

/* Adds p[0..n) to the open item: 0, or -1 with the error set. */
static int append(listsplit *s, const char *p, size_t n)
{
    if (s->item_len + n > s->max_item)
        return set_error(s, "a list item is larger than the bound");
    if (s->item_len + n > s->item_cap) {
        size_t cap = s->item_cap == 0 ? 8192 : s->item_cap;
        while (cap < s->item_len + n)
            cap *= 2;
        char *grown = realloc(s->item, cap);
        if (grown == NULL)
            return set_error(s, "out of memory");
        s->item = grown;
        s->item_cap = cap;
    }
    memcpy(s->item + s->item_len, p, n);
    s->item_len += n;
    return 0;
}

/* A map or an array opens: 0, or -1 (too deep) with the error set. */
static int on_open(listsplit *s)
{
    if (++s->depth > LISTSPLIT_MAX_DEPTH)
        return set_error(s, "list nesting too deep");
    return 0;
}

static int cb_start_map(void *ctx)
{
    listsplit *s = ctx;
    /* depth 2 inside root.items: an item begins */
    if (s->depth == 2 && s->root_key == KEY_ITEMS && !s->item_open) {
        s->item_open = 1;
        s->item_len = 0;
        s->item_start = yajl_get_bytes_consumed(s->h) - 1;
    }
    return on_open(s) == 0;
}

static int cb_end_map(void *ctx)
{
    listsplit *s = ctx;
    s->depth--;
    if (s->depth == 2 && s->item_open) {
        size_t end = yajl_get_bytes_consumed(s->h);
        if (append(s, s->chunk + s->item_start, end - s->item_start) != 0)
            return 0;
        s->item_open = 0;
        s->n_items++;
        if (!s->on_item(s->data, s->item, s->item_len)) {
            set_error(s, "stopped by the caller");
            return 0;
        }
    }
    if (s->depth == 1)
        s->root_key = KEY_OTHER;
    return 1;
}

static int cb_start_array(void *ctx)
{
    return on_open(ctx) == 0;
}

static int cb_end_array(void *ctx)
{
    listsplit *s = ctx;
    s->depth--;
    if (s->depth == 1)
        s->root_key = KEY_OTHER;
    return 1;
}

static int cb_map_key(void *ctx, const unsigned char *key, size_t len)
{
    listsplit *s = ctx;
    if (s->depth == 1) {
        s->root_key = len == 5 && memcmp(key, "items", 5) == 0      ? KEY_ITEMS
                      : len == 8 && memcmp(key, "metadata", 8) == 0 ? KEY_METADATA
                                                                    : KEY_OTHER;
    } else if (s->depth == 2 && s->root_key == KEY_METADATA) {
        s->meta_key = len == 15 && memcmp(key, "resourceVersion", 15) == 0 ? META_RV
                      : len == 8 && memcmp(key, "continue", 8) == 0         ? META_CONTINUE
                                                                            : META_OTHER;
    }
    return 1;
}

static int cb_string(void *ctx, const unsigned char *v, size_t len)
{
    listsplit *s = ctx;
    if (s->depth == 2 && s->root_key == KEY_METADATA && s->meta_key == META_RV) {
        if (len >= sizeof(s->resource_version)) {
            set_error(s, "list metadata.resourceVersion longer than 127 bytes");
            return 0;
        }
        memcpy(s->resource_version, v, len);
        s->resource_version[len] = '\0';
        s->meta_key = META_OTHER;
    } else if (s->depth == 2 && s->root_key == KEY_METADATA && s->meta_key == META_CONTINUE) {
        if (len > LISTSPLIT_MAX_CONTINUE) {
            char msg[96];
            snprintf(msg, sizeof(msg), "list metadata.continue longer than %u bytes (%zu)",
                     LISTSPLIT_MAX_CONTINUE, len);
            set_error(s, msg);
            return 0;
        }
        char *dst = malloc(len + 1);
        if (dst == NULL) {
            set_error(s, "out of memory");
            return 0;
        }
        memcpy(dst, v, len);
        dst[len] = '\0';
        free(s->continue_token);
        s->continue_token = dst;
        s->meta_key = META_OTHER;
    }
    return 1;
}

static int cb_scalar(void *ctx)
{
    (void)ctx;
    return 1;
}

static int cb_bool(void *ctx, int b)
{
    (void)b;
    return cb_scalar(ctx);
}

static int cb_number(void *ctx, const char *n, size_t len)
{
    (void)n;
    (void)len;
    return cb_scalar(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_scalar,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

int listsplit_init(listsplit *s, size_t max_item, listsplit_item_fn on_item, void *data)
{
    memset(s, 0, sizeof(*s));
    s->max_item = max_item;
    s->on_item = on_item;
    s->data = data;
    s->h = yajl_alloc(&callbacks, NULL, s);
    return s->h != NULL ? 0 : -1;
}

static void parse_error(listsplit *s, const char *chunk, size_t n)
{
    if (s->failed)
        return;
    unsigned char *msg = yajl_get_error(s->h, 0, (const unsigned char *)chunk, n);
    snprintf(s->err, sizeof(s->err), "invalid list JSON: %s", msg != NULL ? (char *)msg : "?");
    if (msg != NULL)
        yajl_free_error(s->h, msg);
    s->failed = 1;
}

int listsplit_feed(listsplit *s, const char *chunk, size_t n)
{
    if (s->failed)
        return -1;
    s->chunk = chunk;
    s->item_start = 0;
    if (yajl_parse(s->h, (const unsigned char *)chunk, n) != yajl_status_ok) {
        parse_error(s, chunk, n);
        return -1;
    }
    /* an item continues into the next chunk: keep what we have of it */
    if (s->item_open && append(s, chunk + s->item_start, n - s->item_start) != 0)
        return -1;
    return 0;
}

int listsplit_finish(listsplit *s)
{
    if (s->failed)
        return -1;
    if (yajl_complete_parse(s->h) != yajl_status_ok) {
        parse_error(s, "", 0);
        return -1;
    }
    return 0;
}

void listsplit_free(listsplit *s)
{
    if (s->h != NULL)
        yajl_free(s->h);
    free(s->item);
    free(s->continue_token);
    s->h = NULL;
    s->item = NULL;
    s->continue_token = NULL;
}

const char *listsplit_continue(const listsplit *s)
{
    return s->continue_token != NULL ? s->continue_token : "";
}

char *listsplit_take_continue(listsplit *s)
{
    char *t = s->continue_token;
    s->continue_token = NULL;
    return t;
}

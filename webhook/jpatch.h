/*
 * jpatch.h - builds an RFC 6902 JSON Patch, the only patch type admission
 * webhooks may return.
 *
 * Paths are RFC 6901 JSON Pointers built from unescaped tokens with
 * jpatch_pointer(), which escapes '~' as "~0" and '/' as "~1".  Values are
 * either strings or raw JSON spliced in verbatim (a condition copied from
 * oldObject, an object we wrote ourselves); the caller vouches for raw JSON.
 */
#ifndef OTA_JPATCH_H
#define OTA_JPATCH_H

#include <stddef.h>

#include <yajl/yajl_gen.h>

#include "arena.h"

typedef struct jpatch {
    arena *a;
    yajl_gen g;
    size_t n_ops;
    int failed;
} jpatch;

/* Starts an empty patch; memory from a.  Returns 0 or -1 (out of memory). */
int jpatch_init(jpatch *p, arena *a);

/* A JSON Pointer from n unescaped tokens, in arena memory (NULL on OOM).
 * No tokens gives "" (the whole document). */
char *jpatch_pointer(arena *a, const char *const *tokens, size_t n);

/* Appends {"op":op,"path":path,"value":<string s[0..len)>}. */
void jpatch_add_string(jpatch *p, const char *op, const char *path, const char *s, size_t len);
/* Appends {"op":op,"path":path,"value":<raw JSON json[0..len)>}. */
void jpatch_add_raw(jpatch *p, const char *op, const char *path, const char *json, size_t len);

/* Ends the patch.  Returns 0 with the JSON text in *out (arena memory) and
 * its length in *len, or -1 if anything failed on the way.  A patch with no
 * operations still yields "[]". */
int jpatch_finish(jpatch *p, const char **out, size_t *len);

#endif

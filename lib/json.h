/*
 * json.h - bounded JSON over yajl, for both programs: a writer that checks
 * every yajl_gen status, and a tree parser that refuses deep nesting.
 *
 * The writer wraps a yajl_gen with a sticky failed flag: once a write fails
 * (a yajl_gen state error such as a value where a key belongs or a second
 * document, a map closed that is not open or is an array, nesting past
 * JSON_MAX_DEPTH, a NULL string), every later write is skipped and the
 * finish functions return NULL.  Callers write the whole document without
 * checking each step and check once, at the end; a half-written body is
 * never sent.
 *
 * The text lives in the writer's arena (the webhook writes into the
 * request's h2o_mem_pool_t through one, so nothing outlives the request) or,
 * for a writer without an arena, in a malloc'd copy the caller frees.
 */
#ifndef OTA_JSON_H
#define OTA_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "arena.h"
#include "sv.h"

/* Most maps and arrays a writer nests (yajl's own bound is 128). */
#define JSON_MAX_DEPTH 64

typedef struct json_writer {
    yajl_gen g;
    arena *a;        /* where the text lives, or NULL: json_writer_take copies it out */
    unsigned depth;  /* maps and arrays open */
    uint64_t arrays; /* bit d: the container at depth d is an array */
    int failed;      /* a write failed: the result is NULL */
} json_writer;

/* Starts an empty document whose buffers come from a, or from malloc when a
 * is NULL.  Returns 0, or -1 (out of memory: the writer is failed, and
 * json_writer_free is still the way out). */
int json_writer_init(json_writer *w, arena *a);
/* Indents the output with indent per level and ends it with a newline. */
void json_writer_indent(json_writer *w, const char *indent);

/* Values.  A NULL s fails the writer. */
void json_str(json_writer *w, const char *s);
void json_strn(json_writer *w, const char *s, size_t len);
/* An absent view is written as "". */
void json_sv(json_writer *w, sv s);
void json_int(json_writer *w, long long value);
void json_bool(json_writer *w, int value);
void json_null(json_writer *w);
/* A parsed tree (json_parse_tree) as it came, numbers in their own text;
 * NULL writes null.  Depth is the writer's bound (JSON_MAX_DEPTH). */
void json_tree(json_writer *w, yajl_val v);

/* Containers.  key is the member name the container is the value of, or
 * NULL for a container at the top or in an array. */
void json_map_open(json_writer *w, const char *key);
void json_map_close(json_writer *w);
void json_array_open(json_writer *w, const char *key);
void json_array_close(json_writer *w);

/* Members: "key": value. */
void json_kv_str(json_writer *w, const char *key, const char *value);
void json_kv_int(json_writer *w, const char *key, long long value);
void json_kv_bool(json_writer *w, const char *key, int value);
/* null: a merge patch's way to remove a field (RFC 7386). */
void json_kv_null(json_writer *w, const char *key);

/* A whole meta/v1 Status of a failure, as the apiserver answers errors:
 * {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 *  "message":...,"reason":...,"code":...}. */
void json_write_failure_status(json_writer *w, int code, const char *reason, const char *message);

/* Ends the document of a writer with an arena: the NUL-terminated text
 * (arena memory) with its length in *len, or NULL when a write failed, a
 * map or array is still open, or the writer has no arena.  Frees the
 * generator either way. */
const char *json_writer_finish(json_writer *w, size_t *len);
/* Ends the document: the NUL-terminated text in malloc memory (caller
 * frees), or NULL when a write failed, a map or array is still open, or
 * memory ran out.  Frees the generator either way. */
char *json_writer_take(json_writer *w);
/* Frees the generator of a writer that is abandoned; harmless after a
 * finish. */
void json_writer_free(json_writer *w);

/* Parses json[0..len) (not NUL-terminated) after checking, in one pass
 * that skips strings, that it nests at most max_depth maps and arrays deep:
 * yajl's tree free recurses, and so would a hostile document's.  An
 * escaped NUL in a string (\u0000) reads as U+FFFD: the tree's strings
 * are C strings, and a NUL would cut one short unseen.  Returns the
 * tree (free with yajl_tree_free), or NULL with a message in err (at most
 * errlen bytes). */
yajl_val json_parse_tree(const char *json, size_t len, int max_depth, char *err, size_t errlen);

#endif

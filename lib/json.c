/*
 * json.c - see json.h.
 */
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writer -------------------------------------------------------------- */

int json_writer_init(json_writer *w, arena *a)
{
    memset(w, 0, sizeof(*w));
    w->a = a;
    if (a != NULL) {
        yajl_alloc_funcs funcs = arena_yajl_funcs(a); /* yajl copies them */
        w->g = yajl_gen_alloc(&funcs);
    } else {
        w->g = yajl_gen_alloc(NULL);
    }
    if (w->g == NULL) {
        w->failed = 1;
        return -1;
    }
    return 0;
}

static void check(json_writer *w, yajl_gen_status st)
{
    if (st != yajl_gen_status_ok)
        w->failed = 1;
}

void json_writer_indent(json_writer *w, const char *indent)
{
    if (w->failed)
        return;
    if (!yajl_gen_config(w->g, yajl_gen_beautify, 1) ||
        !yajl_gen_config(w->g, yajl_gen_indent_string, indent))
        w->failed = 1;
}

void json_strn(json_writer *w, const char *s, size_t len)
{
    if (w->failed)
        return;
    if (s == NULL) {
        w->failed = 1;
        return;
    }
    check(w, yajl_gen_string(w->g, (const unsigned char *)s, len));
}

void json_str(json_writer *w, const char *s)
{
    json_strn(w, s, s != NULL ? strlen(s) : 0);
}

void json_sv(json_writer *w, sv s)
{
    json_strn(w, s.ptr != NULL ? s.ptr : "", s.ptr != NULL ? s.len : 0);
}

void json_int(json_writer *w, long long value)
{
    if (!w->failed)
        check(w, yajl_gen_integer(w->g, value));
}

void json_bool(json_writer *w, int value)
{
    if (!w->failed)
        check(w, yajl_gen_bool(w->g, value));
}

void json_null(json_writer *w)
{
    if (!w->failed)
        check(w, yajl_gen_null(w->g));
}

/* Opens a map or an array, noting which: yajl itself would close either
 * with '}' or ']' alike. */
static void open_container(json_writer *w, const char *key, int array)
{
    if (key != NULL)
        json_str(w, key);
    if (w->failed)
        return;
    if (w->depth == JSON_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    uint64_t bit = (uint64_t)1 << w->depth;
    w->arrays = array ? w->arrays | bit : w->arrays & ~bit;
    w->depth++;
    check(w, array ? yajl_gen_array_open(w->g) : yajl_gen_map_open(w->g));
}

static void close_container(json_writer *w, int array)
{
    if (w->failed)
        return;
    if (w->depth == 0 || ((w->arrays >> (w->depth - 1)) & 1) != (uint64_t)array) {
        w->failed = 1; /* nothing open, or the other kind */
        return;
    }
    w->depth--;
    check(w, array ? yajl_gen_array_close(w->g) : yajl_gen_map_close(w->g));
}

void json_map_open(json_writer *w, const char *key)
{
    open_container(w, key, 0);
}

void json_map_close(json_writer *w)
{
    close_container(w, 0);
}

void json_array_open(json_writer *w, const char *key)
{
    open_container(w, key, 1);
}

void json_array_close(json_writer *w)
{
    close_container(w, 1);
}

void json_kv_str(json_writer *w, const char *key, const char *value)
{
    json_str(w, key);
    json_str(w, value);
}

void json_kv_int(json_writer *w, const char *key, long long value)
{
    json_str(w, key);
    json_int(w, value);
}

void json_kv_bool(json_writer *w, const char *key, int value)
{
    json_str(w, key);
    json_bool(w, value);
}

void json_kv_null(json_writer *w, const char *key)
{
    json_str(w, key);
    json_null(w);
}

void json_write_failure_status(json_writer *w, int code, const char *reason, const char *message)
{
    json_map_open(w, NULL);
    json_kv_str(w, "kind", "Status");
    json_kv_str(w, "apiVersion", "v1");
    json_map_open(w, "metadata");
    json_map_close(w);
    json_kv_str(w, "status", "Failure");
    json_kv_str(w, "message", message);
    json_kv_str(w, "reason", reason);
    json_kv_int(w, "code", code);
    json_map_close(w);
}

/* The finished text in the generator's buffer, or NULL. */
static const char *finished_text(json_writer *w, size_t *len)
{
    const unsigned char *buf = NULL;
    /* yajl_gen_get_buf does not care whether the document is complete */
    if (w->failed || w->depth != 0 || yajl_gen_get_buf(w->g, &buf, len) != yajl_gen_status_ok)
        return NULL;
    return (const char *)buf; /* yajl's buffer keeps a NUL after the text */
}

const char *json_writer_finish(json_writer *w, size_t *len)
{
    size_t n = 0;
    /* Without an arena the buffer would go with the generator. */
    const char *text = w->a != NULL ? finished_text(w, &n) : NULL;
    json_writer_free(w); /* arena memory: the buffer stays */
    if (text != NULL && len != NULL)
        *len = n;
    return text;
}

char *json_writer_take(json_writer *w)
{
    size_t n = 0;
    const char *text = finished_text(w, &n);
    char *out = text != NULL ? malloc(n + 1) : NULL;
    if (out != NULL) {
        memcpy(out, text, n);
        out[n] = '\0';
    }
    json_writer_free(w);
    return out;
}

void json_writer_free(json_writer *w)
{
    if (w->g != NULL)
        yajl_gen_free(w->g);
    w->g = NULL;
    w->failed = 1; /* nothing more can be written */
}

/* ---- tree parser ----------------------------------------------------------- */

yajl_val json_parse_tree(const char *json, size_t len, int max_depth, char *err, size_t errlen)
{
    char *text = malloc(len + 1);
    if (text == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(text, json, len);
    text[len] = '\0';
    /* Depth first, in one pass that skips strings, before yajl builds a
     * tree it would free recursively.  The same pass turns an escaped NUL
     * into U+FFFD: the tree's strings are C strings, so "a\u0000b" would
     * read as "a", a different name that passes every check "a" passes.
     * U+FFFD is as long escaped and is no valid name or reference. */
    int depth = 0, in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\' && i + 5 < len && text[i + 1] == 'u' &&
                memcmp(text + i + 2, "0000", 4) == 0)
                memcpy(text + i + 2, "FFFD", 4);
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth) {
                snprintf(err, errlen, "JSON nesting deeper than %d levels", max_depth);
                free(text);
                return NULL;
            }
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    yajl_val v = yajl_tree_parse(text, err, errlen);
    free(text);
    return v;
}

void json_tree(json_writer *w, yajl_val v)
{
    if (w->failed)
        return;
    if (v == NULL || YAJL_IS_NULL(v)) {
        json_null(w);
    } else if (YAJL_IS_STRING(v)) {
        json_str(w, YAJL_GET_STRING(v));
    } else if (YAJL_IS_NUMBER(v)) {
        /* the text as it came: an integer stays exact, a float unrounded */
        const char *raw = YAJL_GET_NUMBER(v);
        check(w, yajl_gen_number(w->g, raw, strlen(raw)));
    } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
        json_bool(w, YAJL_IS_TRUE(v));
    } else if (YAJL_IS_OBJECT(v)) {
        json_map_open(w, NULL);
        for (size_t i = 0; i < v->u.object.len && !w->failed; i++) {
            json_str(w, v->u.object.keys[i]);
            json_tree(w, v->u.object.values[i]);
        }
        json_map_close(w);
    } else if (YAJL_IS_ARRAY(v)) {
        json_array_open(w, NULL);
        for (size_t i = 0; i < v->u.array.len && !w->failed; i++)
            json_tree(w, v->u.array.values[i]);
        json_array_close(w);
    }
}

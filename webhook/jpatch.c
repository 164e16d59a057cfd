/*
 * jpatch.c - see jpatch.h.  yajl_gen writes the array; raw values go through
 * yajl_gen_number, which emits its argument verbatim and so is yajl's only
 * way to splice a value that is already JSON.
 */
#include "jpatch.h"

#include <string.h>

int jpatch_init(jpatch *p, arena *a)
{
    memset(p, 0, sizeof(*p));
    p->a = a;
    yajl_alloc_funcs funcs = arena_yajl_funcs(a);
    p->g = yajl_gen_alloc(&funcs);
    if (p->g == NULL)
        return -1;
    if (yajl_gen_array_open(p->g) != yajl_gen_status_ok)
        p->failed = 1;
    return 0;
}

char *jpatch_pointer(arena *a, const char *const *tokens, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        len++;
        for (const char *c = tokens[i]; *c; c++)
            len += (*c == '~' || *c == '/') ? 2 : 1;
    }
    char *out = arena_alloc(a, len + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    for (size_t i = 0; i < n; i++) {
        *o++ = '/';
        for (const char *c = tokens[i]; *c; c++) {
            if (*c == '~') {
                *o++ = '~';
                *o++ = '0';
            } else if (*c == '/') {
                *o++ = '~';
                *o++ = '1';
            } else {
                *o++ = *c;
            }
        }
    }
    *o = '\0';
    return out;
}

static void op_open(jpatch *p, const char *op, const char *path)
{
    if (path == NULL) {
        p->failed = 1;
        return;
    }
    yajl_gen g = p->g;
    int bad = yajl_gen_map_open(g) != yajl_gen_status_ok;
    bad |= yajl_gen_string(g, (const unsigned char *)"op", 2) != yajl_gen_status_ok;
    bad |= yajl_gen_string(g, (const unsigned char *)op, strlen(op)) != yajl_gen_status_ok;
    bad |= yajl_gen_string(g, (const unsigned char *)"path", 4) != yajl_gen_status_ok;
    bad |= yajl_gen_string(g, (const unsigned char *)path, strlen(path)) != yajl_gen_status_ok;
    bad |= yajl_gen_string(g, (const unsigned char *)"value", 5) != yajl_gen_status_ok;
    if (bad)
        p->failed = 1;
}

static void op_close(jpatch *p, yajl_gen_status value_status)
{
    if (value_status != yajl_gen_status_ok || yajl_gen_map_close(p->g) != yajl_gen_status_ok)
        p->failed = 1;
    p->n_ops++;
}

void jpatch_add_string(jpatch *p, const char *op, const char *path, const char *s, size_t len)
{
    if (p->failed)
        return;
    op_open(p, op, path);
    if (p->failed)
        return;
    op_close(p, yajl_gen_string(p->g, (const unsigned char *)s, len));
}

void jpatch_add_raw(jpatch *p, const char *op, const char *path, const char *json, size_t len)
{
    if (p->failed)
        return;
    op_open(p, op, path);
    if (p->failed)
        return;
    op_close(p, yajl_gen_number(p->g, json, len));
}

int jpatch_finish(jpatch *p, const char **out, size_t *len)
{
    if (p->g == NULL)
        return -1;
    if (!p->failed && yajl_gen_array_close(p->g) != yajl_gen_status_ok)
        p->failed = 1;
    const unsigned char *buf = NULL;
    if (!p->failed && yajl_gen_get_buf(p->g, &buf, len) != yajl_gen_status_ok)
        p->failed = 1;
    yajl_gen_free(p->g); /* the buffer is arena memory and stays */
    p->g = NULL;
    if (p->failed)
        return -1;
    *out = (const char *)buf;
    return 0;
}

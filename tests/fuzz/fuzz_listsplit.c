/*
 * fuzz_listsplit.c - the controller's list-item splitter (kube/listsplit.c)
 * on a body cut into pieces the input chooses.
 *
 * Input: one byte seeding the piece sizes, then the body.  Properties: the
 * items, the resourceVersion and the continue token are the same whether
 * the body arrives whole or in pieces, and so is success; every item is at
 * most the bound and is itself one JSON object yajl parses whole.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "fuzz_check.h"
#include "listsplit.h"

#define MAX_ITEM 2048

typedef struct items {
    char *text; /* each item followed by a NUL */
    size_t len, cap, n;
} items;

static int on_item(void *data, const char *json, size_t len)
{
    items *it = data;
    FUZZ_CHECK(len > 0 && len <= MAX_ITEM, "item of %zu bytes", len);
    FUZZ_CHECK(json[0] == '{' && json[len - 1] == '}', "item is not an object: %.*s", (int)len, json);
    char *copy = malloc(len + 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, json, len);
    copy[len] = '\0';
    char err[128];
    yajl_val v = yajl_tree_parse(copy, err, sizeof(err));
    FUZZ_CHECK(v != NULL && YAJL_IS_OBJECT(v), "item is not one JSON object (%s): %s", err, copy);
    yajl_tree_free(v);
    free(copy);
    if (it->len + len + 1 > it->cap) {
        it->cap = (it->len + len + 1) * 2;
        it->text = realloc(it->text, it->cap);
        FUZZ_CHECK(it->text != NULL, "out of memory");
    }
    memcpy(it->text + it->len, json, len);
    it->len += len;
    it->text[it->len++] = '\0';
    it->n++;
    return 1;
}

typedef struct result {
    items it;
    int rc;
    char rv[128], cont[4096];
} result;

static void run(const char *s, size_t n, unsigned seed, result *out)
{
    memset(out, 0, sizeof(*out));
    listsplit ls;
    FUZZ_CHECK(listsplit_init(&ls, MAX_ITEM, on_item, &out->it) == 0, "out of memory");
    size_t off = 0;
    unsigned x = seed * 2654435761u + 7;
    int rc = 0;
    while (off < n && rc == 0) {
        x = x * 1103515245u + 12345u;
        size_t piece = seed == 0 ? n : 1 + (x >> 16) % 23;
        if (piece > n - off)
            piece = n - off;
        char *p = malloc(piece);
        FUZZ_CHECK(p != NULL, "out of memory");
        memcpy(p, s + off, piece);
        rc = listsplit_feed(&ls, p, piece);
        free(p);
        off += piece;
    }
    if (rc == 0)
        rc = listsplit_finish(&ls);
    out->rc = rc;
    memcpy(out->rv, ls.resource_version, sizeof(out->rv));
    snprintf(out->cont, sizeof(out->cont), "%s", listsplit_continue(&ls));
    listsplit_free(&ls);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned seed = (unsigned)data[0] | 1u;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    static result whole, pieces; /* 8 KB each: off the stack */
    run(s, n, 0, &whole);
    run(s, n, seed, &pieces);
    FUZZ_CHECK((whole.rc == 0) == (pieces.rc == 0), "whole: %d, in pieces: %d", whole.rc, pieces.rc);
    if (whole.rc == 0) {
        FUZZ_CHECK(whole.it.n == pieces.it.n && whole.it.len == pieces.it.len &&
                       (whole.it.len == 0 || memcmp(whole.it.text, pieces.it.text, whole.it.len) == 0),
                   "items differ with the cut (%zu / %zu)", whole.it.n, pieces.it.n);
        FUZZ_CHECK(strcmp(whole.rv, pieces.rv) == 0 && strcmp(whole.cont, pieces.cont) == 0,
                   "resourceVersion or continue differ with the cut");
    }
    free(whole.it.text);
    free(pieces.it.text);
    return 0;
}

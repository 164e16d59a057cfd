/*
 * listsplit.h - cuts a Kubernetes list response ({"metadata":{...},
 * "items":[...]}) into its items while the body streams in.
 *
 * Each item's bytes are handed over as soon as its closing brace arrives, so
 * a page of 500 pods is never held whole: only the item being read is
 * buffered, up to a bound.  The list's resourceVersion and continue token
 * are kept for the caller.  A continue token is opaque and its length is the
 * server's choice (etcd keys, encrypted state of an aggregated API): it is
 * kept whole up to LISTSPLIT_MAX_CONTINUE bytes, and a longer one fails the
 * list with an error that says so (never a cut token, which the server
 * would refuse or, worse, read as another position).
 */
#ifndef OTA_LISTSPLIT_H
#define OTA_LISTSPLIT_H

#include <stddef.h>

#include <yajl/yajl_parse.h>

#define LISTSPLIT_MAX_CONTINUE (64u * 1024u)

/* One item's JSON; return 0 to stop. */
typedef int (*listsplit_item_fn)(void *data, const char *json, size_t len);

typedef struct listsplit {
    yajl_handle h;
    listsplit_item_fn on_item;
    void *data;
    size_t max_item;
    int depth;
    int root_key;      /* which member of the root object we are in */
    int meta_key;      /* which member of root.metadata */
    int item_open;
    size_t item_start; /* in the current chunk */
    const char *chunk;
    char *item;        /* the open item's bytes so far */
    size_t item_len, item_cap;
    size_t n_items;
    int failed;
    char resource_version[128];
    char *continue_token; /* malloc'd, or NULL: read it with listsplit_continue */
    char err[256];
} listsplit;

int listsplit_init(listsplit *s, size_t max_item, listsplit_item_fn on_item, void *data);
/* Feeds the next piece of the body.  0, or -1 with s->err set. */
int listsplit_feed(listsplit *s, const char *chunk, size_t n);
/* The body ended.  0, or -1 when it was not a complete list. */
int listsplit_finish(listsplit *s);
void listsplit_free(listsplit *s);
/* The list's continue token: "" when it has none (the last page). */
const char *listsplit_continue(const listsplit *s);
/* Hands the continue token over (the caller frees it): NULL when none. */
char *listsplit_take_continue(listsplit *s);

#endif

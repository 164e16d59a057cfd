/*
 * kube_sync.h - one call at a time on kube_client, waited for, and a list
 * read page by page: for a program that does one thing after the other
 * (kubectl-ota), not for the controller's loop, which never waits.
 *
 * Reads are retried by the client where client-go retries; writes are not
 * (one that may have landed is never resent: the caller reads again and
 * decides).  Everything read is bounded: a body by kube_client (64 MiB), a
 * parsed page's nesting by max_depth, a list by max_pages pages, a
 * continue token by token_max bytes.
 */
#ifndef OTA_KUBE_SYNC_H
#define OTA_KUBE_SYNC_H

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "kube_client.h"
#include "strbuf.h"

typedef struct kube_reply {
    int done;
    long status;     /* HTTP status; 0 when no answer came (error says why) */
    char *body;      /* the whole body, NUL-terminated; malloc'd */
    size_t len;
    char error[256];
} kube_reply;

/* Makes the call and waits for its end; r is overwritten (free it with
 * kube_reply_free, whatever the answer).  Returns the HTTP status, 0 when
 * no answer came (r->error says why). */
long kube_sync_call(kube_client *c, const char *method, const char *path,
                    const char *content_type, const char *body, kube_reply *r);
void kube_reply_free(kube_reply *r);

/* A list to read: the collection's path (kapi_path) and a query sent with
 * every page, after limit=page_size and before the continue token. */
typedef struct kube_pager {
    const char *path;
    const char *query;   /* "" or "k=v&..." */
    unsigned page_size;
    int max_pages;
    size_t token_max;
    int max_depth;       /* of a parsed page */
} kube_pager;

/* Appends the URL of a page: path?limit=N[&query][&continue=TOKEN], the
 * token escaped (kapi_escape); token NULL for the first page. */
void kube_sync_page_url(strbuf *b, const kube_pager *p, const char *token);

/* Called for each item of each page; non-zero stops the list. */
typedef int (*kube_item_fn)(void *data, yajl_val item);

typedef enum kube_pages_end {
    KUBE_PAGES_DONE,           /* every page read, every item handed over */
    KUBE_PAGES_STOPPED,        /* fn returned non-zero: in fn_rc */
    KUBE_PAGES_CALL_FAILED,    /* a page was not answered 200: in reply */
    KUBE_PAGES_NOT_A_LIST,     /* unreadable, or no items: why in error */
    KUBE_PAGES_TOO_MANY,       /* more than max_pages pages */
    KUBE_PAGES_TOKEN_TOO_LONG, /* a continue token longer than token_max */
    KUBE_PAGES_NO_MEMORY,
} kube_pages_end;

typedef struct kube_pages_result {
    kube_pages_end end;
    int fn_rc;
    kube_reply reply; /* KUBE_PAGES_CALL_FAILED: the answer; else empty */
    char error[128];
} kube_pages_result;

/* Reads the list page by page, handing each item to fn (valid during the
 * call only).  Returns res->end; free res->reply with kube_reply_free. */
kube_pages_end kube_sync_list(kube_client *c, const kube_pager *p, kube_item_fn fn, void *data,
                              kube_pages_result *res);

#endif

/*
 * informer.h - list, then watch, one resource; keep a cache of its objects.
 *
 * The client-go informer's loop in C: a paginated list (limit + continue,
 * items decoded as the body streams), a watch from the list's
 * resourceVersion with bookmarks, 410 Gone -> relist, any other failure ->
 * re-watch from the last resourceVersion after a jittered backoff.  The cache
 * maps uid -> kobj (the few fields the controller needs); an object it
 * cannot keep (out of memory) -> relist.
 */
#ifndef OTA_INFORMER_H
#define OTA_INFORMER_H

#include <stdint.h>

#include "backoff.h"
#include "kobj.h"
#include "kube_client.h"
#include "linesplit.h"
#include "listsplit.h"
#include "metrics.h"
#include "store.h"

typedef void (*informer_changed_fn)(void *data);
/* Called when a new version of a cached object arrives, before it replaces
 * the old one: what the old version knew that the new one no longer says
 * can be carried over. */
typedef void (*informer_merge_fn)(const kobj *old, kobj *fresh);

typedef enum informer_state {
    INFORMER_IDLE,
    INFORMER_LISTING,
    INFORMER_WATCHING,
    INFORMER_WAITING, /* backoff before the next list or watch */
} informer_state;

/* What follows the end of a watch. */
typedef enum informer_next {
    INFORMER_NEXT_WATCH,   /* re-watch now from the last resourceVersion */
    INFORMER_NEXT_BACKOFF, /* re-watch after the backoff */
    INFORMER_NEXT_RELIST,  /* list again (410 Gone, or the cache lost an object) */
} informer_next;

/* A watch that the server ends cleanly sooner than this, having sent
 * nothing, did not work: it is re-opened after the backoff, not at once
 * (client-go's reflector: "very short watch"), or a server that ends every
 * watch at once would be called in a tight loop. */
#define INFORMER_MIN_WATCH_NS (1000000000ull)

/* The decision when a watch ends.  status: HTTP status (0: no answer);
 * transport_error: the transfer failed after the status; want_relist: 410
 * or a lost object asked for a list; got_event: the watch sent at least one
 * line (an event, a BOOKMARK or an ERROR); lasted_ns: from its start to its
 * end. */
informer_next informer_after_watch(long status, int transport_error, int want_relist,
                                   int got_event, uint64_t lasted_ns);

/* The query of a list request: "limit=<limit>" and, when continue_token is
 * not NULL, "&continue=" and the token URL-encoded.  Malloc'd; NULL when out
 * of memory or when the token is longer than LISTSPLIT_MAX_CONTINUE (a token
 * the informer itself never accepts from a list). */
char *informer_list_query(unsigned limit, const char *continue_token);

typedef struct informer {
    kube_client *client;
    kobj_kind kind;
    const char *name;           /* for logs and metrics: "pods" */
    const char *path;           /* "/api/v1/pods" */
    const char *label_selector; /* URL-encoded, or NULL */
    unsigned watch_timeout_s;   /* the server ends a watch after this */
    store objects;              /* uid -> kobj */
    store fresh;                /* the list being read */
    char resource_version[128];
    informer_state state;
    int synced;                 /* a first list has completed */
    int want_relist;            /* set by 410: the next start lists */
    const char *relist_why;     /* static text: why want_relist was set, for the log */
    int watch_got_event;        /* the running watch delivered something */
    uint64_t watch_started;     /* clock_mono_ns() when the running watch was opened */
    int stopping;               /* informer_stop: calls ending now are no news */
    listsplit list;
    linesplit lines;
    backoff retry;
    uint64_t retry_at;
    informer_changed_fn on_changed;
    informer_merge_fn merge;    /* optional, set after informer_init */
    void *data;
    metrics_counter restarts;   /* watches re-opened after a failure or 410 */
    metrics_counter relists;
    metrics_counter store_failures; /* objects the cache could not keep */
} informer;

void informer_init(informer *inf, kube_client *client, kobj_kind kind, const char *name,
                   const char *path, const char *label_selector, informer_changed_fn on_changed,
                   void *data);
/* Starts listing, or restarts after a backoff once it is due. */
void informer_tick(informer *inf, uint64_t now);
void informer_free(informer *inf);
/* Before the client is freed at shutdown: the calls it then ends ("client
 * shut down") are not logged as interrupted watches. */
void informer_stop(informer *inf);

/* The informer was sent an object that its cache (or the list being read)
 * could not keep: store_put ran out of memory.  The cache now misses the
 * object, and no later event need bring it back, so this counts it
 * (store_failures), logs it and asks for a relist, which rebuilds the whole
 * cache; the caller ends its list or watch, as after 410 Gone.  ref names
 * the object for the log. */
void informer_lost_object(informer *inf, const char *ref);

#endif

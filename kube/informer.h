/*
 * informer.h - list, then watch, one resource; keep a cache of its objects.
 *
 * The client-go informer's loop in C: a paginated list (limit + continue,
 * items decoded as the body streams), a watch from the list's
 * resourceVersion with bookmarks, 410 Gone -> relist, any other failure ->
 * re-watch from the last resourceVersion after a jittered backoff.  An object
 * the cache cannot keep (out of memory) -> relist.
 *
 * It knows no resource: as client-go's generic informer, it is given one
 * (informer_spec): where it lives, and how to decode an object into what the
 * cache keeps, free it and key it.  The cache maps key -> decoded object, so
 * it holds only what the decoder kept (a few fields: the controller's
 * caches hold lib/kobj.h's, a few hundred bytes a pod).
 */
#ifndef OTA_INFORMER_H
#define OTA_INFORMER_H

#include <stdint.h>

#include "backoff.h"
#include "callerr.h"
#include "json.h"
#include "kapi.h"
#include "kube_client.h"
#include "linesplit.h"
#include "listsplit.h"
#include "metrics.h"
#include "store.h"

typedef void (*informer_changed_fn)(void *data);

/* One resource to follow, as client-go's generic informer is given one.  A
 * new resource is a row in kube/kapi's table, one of these and its decoder,
 * nothing more. */
typedef struct informer_spec {
    const char *name;           /* for logs and metrics: "pods" */
    kapi_resource resource;     /* a row of kube/kapi's table (a CRD is one too) */
    const char *namespace;      /* NULL: every namespace */
    /* {NULL, NULL}-terminated, or NULL: every object */
    const kapi_requirement *label_selector;
    /* What the cache keeps of one object (a list item or a watch event's
     * object, as a parsed tree that lives only during the call): a new
     * object, or NULL to skip it (logged: an object without name or uid,
     * or no memory).  A DELETED event's object is decoded too, for its
     * key. */
    void *(*decode)(yajl_val obj);
    void (*free)(void *obj);
    /* The cache key: a string inside the object (the store borrows it,
     * keeping no copy), the same for every version of one object (the
     * controller's caches: the uid). */
    const char *(*key)(const void *obj);
    /* Optional: called when a new version of a cached object arrives,
     * before it replaces the old one: what the old version knew that the
     * new one no longer says can be carried over. */
    void (*merge)(const void *old, void *fresh);
    /* A resource that may not be served (a CRD's, installed or not): a 404
     * on its list means it is not there, a 403 that it is not ours to
     * read.  The cache is then empty and counts as synced (nothing of it
     * holds the rest back), that is said once (a 403 as a warning), and
     * the list is tried again every INFORMER_ABSENT_RETRY_NS, quietly. */
    int optional;
} informer_spec;

/* How often an optional resource that is not served is looked for. */
#define INFORMER_ABSENT_RETRY_NS (30ull * 1000000000ull)

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
    const informer_spec *spec;  /* outlives the informer */
    const char *name;           /* spec->name */
    char path[256];             /* the collection's (kapi_path of the spec's resource) */
    char label_selector[512];   /* "labelSelector=..." (kapi_selector), or "" */
    unsigned watch_timeout_s;   /* the server ends a watch after this */
    store objects;              /* spec->key -> what spec->decode made */
    store fresh;                /* the list being read */
    char resource_version[128];
    informer_state state;
    int synced;                 /* a first list has completed */
    int absent;                 /* an optional resource answered 404 or 403: not read */
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
    void *data;
    metrics_counter restarts;   /* watches re-opened after a failure or 410 */
    metrics_counter relists;
    metrics_counter store_failures; /* objects the cache could not keep */
    /* Shared by the informers of one client, set after informer_init: a
     * configuration error (401, TLS: kube/callerr.h) is said once per
     * change for all of them.  NULL: every failure is said per call. */
    callerr_state *trouble;
} informer;

/* 0, or -1 when the spec makes no path or selector (kapi_path,
 * kapi_selector) or they do not fit inf->path and inf->label_selector. */
int informer_init(informer *inf, kube_client *client, const informer_spec *spec,
                  informer_changed_fn on_changed, void *data);
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

/* "namespace/name" of an object's tree into buf (a cluster-scoped
 * object's is "/name"), bounded by size; for the log. */
const char *informer_object_ref(yajl_val obj, char *buf, size_t size);

/* The list and watch callbacks (listsplit's and linesplit's), which tests
 * drive with bodies of their own.  informer_list_item: one list item into
 * the list being read; 1 to go on, 0 to end the list (an object lost).
 * informer_watch_line: one watch event; 0 to go on, 1 to stop the watch
 * (an ERROR event, such as 410 Gone, or an object lost). */
int informer_list_item(void *inf, const char *json, size_t len);
int informer_watch_line(void *inf, const char *line, size_t len);

#endif

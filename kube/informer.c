/*
 * informer.c - see informer.h.
 */
#include "informer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callerr.h"
#include "clock.h"
#include "log.h"

#define INFORMER_PAGE 500
#define INFORMER_MAX_OBJECT (8u << 20) /* etcd's own limit is 1.5 MiB */
#define INFORMER_MAX_DEPTH 64
#define WHY_410 "resourceVersion too old (410 Gone)"

static void start_list(informer *inf, const char *continue_token);
static void start_watch(informer *inf);

/* Moves b's text into out (size bytes): 0, or -1 when b failed or is
 * empty, or its text does not fit. */
static int take_text(strbuf *b, char *out, size_t size)
{
    int rc = !b->failed && b->data != NULL && b->len < size ? 0 : -1;
    if (rc == 0)
        memcpy(out, b->data, b->len + 1);
    strbuf_free(b);
    return rc;
}

int informer_init(informer *inf, kube_client *client, const informer_spec *spec,
                  informer_changed_fn on_changed, void *data)
{
    memset(inf, 0, sizeof(*inf));
    inf->client = client;
    inf->spec = spec;
    inf->name = spec->name;
    inf->watch_timeout_s = 240;
    inf->on_changed = on_changed;
    inf->data = data;
    store_init(&inf->objects, spec->free, spec->key);
    store_init(&inf->fresh, spec->free, spec->key);
    backoff_init(&inf->retry, 500 * 1000000ull, 30 * 1000000000ull, NULL, NULL);
    strbuf path = {0}, selector = {0};
    int bad = kapi_path(&path, spec->resource, spec->namespace, NULL, NULL) != 0;
    bad |= take_text(&path, inf->path, sizeof(inf->path)) != 0;
    if (spec->label_selector != NULL) {
        bad |= kapi_selector(&selector, KAPI_LABEL_SELECTOR, spec->label_selector) != 0;
        bad |= take_text(&selector, inf->label_selector, sizeof(inf->label_selector)) != 0;
    }
    return bad ? -1 : 0;
}

void informer_free(informer *inf)
{
    store_free(&inf->objects);
    store_free(&inf->fresh);
    listsplit_free(&inf->list);
    linesplit_free(&inf->lines);
}

void informer_stop(informer *inf)
{
    inf->stopping = 1;
}

/* quiet: the cause was said once for every call (say_trouble); this
 * call's line goes to debug. */
static void retry_later_said(informer *inf, const char *why, int quiet)
{
    uint64_t delay = backoff_next(&inf->retry);
    inf->state = INFORMER_WAITING;
    inf->retry_at = clock_mono_ns() + delay;
    if (inf->stopping)
        return;
    log_msg(quiet ? LOG_DEBUG : LOG_WARN, "watch interrupted", "%s: %s; again in %.1f s",
            inf->name, why, (double)delay / 1e9);
}

static void retry_later(informer *inf, const char *why)
{
    retry_later_said(inf, why, 0);
}

/* A call of this informer ended (r): a configuration cause (callerr.h) is
 * said here, once per change for every informer sharing inf->trouble, with
 * the Status's words and a hint; a success after one says it works again.
 * Returns 1 when the cause is such, so the caller's own line is quiet. */
static int say_trouble(informer *inf, const kube_result *r)
{
    if (inf->trouble == NULL || inf->stopping)
        return 0;
    callerr_cause cause = callerr_classify(r->status, r->error);
    callerr_cause before = inf->trouble->said;
    if (callerr_say_now(inf->trouble, cause)) {
        char code[24], reason[64], message[512];
        snprintf(code, sizeof(code), "%ld", r->status);
        kapi_status_read(r->body, r->body_len, reason, sizeof(reason), message, sizeof(message));
        if (message[0] == '\0' && r->error != NULL)
            snprintf(message, sizeof(message), "%s", r->error);
        log_kv(LOG_ERROR, "cannot use the apiserver", "resource", inf->name, "code", code,
               "reason", reason, "message", message, "hint", callerr_hint(cause), NULL);
    } else if (cause == CALLERR_NONE && before != CALLERR_NONE) {
        log_kv(LOG_INFO, "the apiserver accepts the controller again", "resource", inf->name,
               NULL);
    }
    return callerr_is_config(cause);
}

/* "HTTP 403 (Forbidden: pods is forbidden: ...)" of a failed answer, the
 * Status's reason and message when it has them, into out. */
static void http_words(const kube_result *r, char *out, size_t size)
{
    char reason[64], message[400];
    kapi_status_read(r->body, r->body_len, reason, sizeof(reason), message, sizeof(message));
    if (message[0] != '\0')
        snprintf(out, size, "HTTP %ld (%s%s%s)", r->status, reason, reason[0] != '\0' ? ": " : "",
                 message);
    else
        snprintf(out, size, "HTTP %ld", r->status);
}

void informer_tick(informer *inf, uint64_t now)
{
    if (inf->state == INFORMER_IDLE || (inf->state == INFORMER_WAITING && now >= inf->retry_at)) {
        if (inf->want_relist || !inf->synced)
            start_list(inf, NULL);
        else
            start_watch(inf);
    }
}

/* path?query with the selector; caller frees. */
static char *build_path(const informer *inf, const char *extra)
{
    size_t n = strlen(inf->path) + strlen(extra) + strlen(inf->label_selector) + 3;
    char *p = malloc(n);
    if (p == NULL)
        return NULL;
    snprintf(p, n, "%s?%s%s%s", inf->path, extra, inf->label_selector[0] != '\0' ? "&" : "",
             inf->label_selector);
    return p;
}

static void *decode(informer *inf, yajl_val obj)
{
    void *o = inf->spec->decode(obj);
    if (o == NULL) {
        log_msg(LOG_WARN, "skipping an object without name or uid", "%s", inf->name);
        return NULL;
    }
    const void *old =
        inf->spec->merge != NULL ? store_get(&inf->objects, inf->spec->key(o)) : NULL;
    if (old != NULL)
        inf->spec->merge(old, o);
    return o;
}

const char *informer_object_ref(yajl_val obj, char *buf, size_t size)
{
    static const char *const p_ns[] = {"metadata", "namespace", NULL};
    static const char *const p_name[] = {"metadata", "name", NULL};
    yajl_val ns = yajl_tree_get(obj, (const char **)p_ns, yajl_t_string);
    yajl_val name = yajl_tree_get(obj, (const char **)p_name, yajl_t_string);
    snprintf(buf, size, "%s/%s", ns != NULL ? YAJL_GET_STRING(ns) : "",
             name != NULL ? YAJL_GET_STRING(name) : "");
    return buf;
}

/* The cache cannot be followed from here: the next start lists. */
static void ask_relist(informer *inf, const char *why)
{
    inf->want_relist = 1;
    inf->relist_why = why;
}

void informer_lost_object(informer *inf, const char *ref)
{
    metrics_add(&inf->store_failures, 1);
    log_msg(LOG_ERROR, "cache lost an object", "%s: no memory to keep %s; relisting", inf->name,
            ref);
    ask_relist(inf, "the cache lost an object (out of memory)");
}

/* Puts o, decoded from obj, into s: 0, or -1 when s could not take it (o
 * is gone, informer_lost_object has asked for a relist): the caller ends
 * its list or watch. */
static int keep(informer *inf, store *s, void *o, yajl_val obj)
{
    if (store_put(s, inf->spec->key(o), o) == 0)
        return 0;
    char ref[300];
    informer_lost_object(inf, informer_object_ref(obj, ref, sizeof(ref)));
    return -1;
}

/* ---- list --------------------------------------------------------------- */

int informer_list_item(void *data, const char *json, size_t len)
{
    informer *inf = data;
    char err[256];
    yajl_val tree = json_parse_tree(json, len, INFORMER_MAX_DEPTH, err, sizeof(err));
    if (tree == NULL) {
        log_msg(LOG_WARN, "skipping a list item that does not parse", "%s: %s", inf->name, err);
        return 1;
    }
    void *o = decode(inf, tree);
    int lost = o != NULL && keep(inf, &inf->fresh, o, tree) != 0;
    yajl_tree_free(tree);
    return !lost; /* a lost object ends the list; on_list_done relists */
}

static int on_list_chunk(void *data, const char *chunk, size_t n)
{
    informer *inf = data;
    return listsplit_feed(&inf->list, chunk, n) == 0;
}

/* An optional resource is not served: an empty cache, synced, and a look
 * again later (informer_spec.optional). */
static void not_served(informer *inf, const kube_result *r)
{
    listsplit_free(&inf->list);
    store_free(&inf->fresh);
    store_init(&inf->fresh, inf->spec->free, inf->spec->key);
    int changed = inf->objects.len > 0;
    store_free(&inf->objects);
    store_init(&inf->objects, inf->spec->free, inf->spec->key);
    unsigned long long every = (unsigned long long)(INFORMER_ABSENT_RETRY_NS / 1000000000ull);
    if (!inf->absent && r->status == 403) {
        char words[500];
        http_words(r, words, sizeof(words));
        log_msg(LOG_WARN, "not allowed to read", "%s: the list answered %s; grant list and "
                "watch on it; looking again every %llu s", inf->name, words, every);
    } else if (!inf->absent) {
        log_msg(LOG_INFO, "not served", "%s: the apiserver does not serve it (no CRD?); "
                "looking again every %llu s", inf->name, every);
    }
    inf->absent = 1;
    inf->synced = 1;
    inf->want_relist = 1;
    inf->state = INFORMER_WAITING;
    inf->retry_at = clock_mono_ns() + INFORMER_ABSENT_RETRY_NS;
    if (changed && inf->on_changed != NULL)
        inf->on_changed(inf->data);
}

/* The fresh list replaces the cache. */
static void commit_list(informer *inf)
{
    store_free(&inf->objects);
    inf->objects = inf->fresh;
    store_init(&inf->fresh, inf->spec->free, inf->spec->key);
    snprintf(inf->resource_version, sizeof(inf->resource_version), "%s",
             inf->list.resource_version);
    inf->synced = 1;
    if (inf->absent)
        log_msg(LOG_INFO, "served now", "%s", inf->name);
    inf->absent = 0;
    inf->want_relist = 0;
    inf->relist_why = NULL;
    metrics_add(&inf->relists, 1);
    log_msg(LOG_INFO, "listed", "%s: %zu objects at resourceVersion %s", inf->name,
            inf->objects.len, inf->resource_version);
    if (inf->on_changed != NULL)
        inf->on_changed(inf->data);
}

static void on_list_done(void *data, const kube_result *r)
{
    informer *inf = data;
    if ((r->status == 404 || r->status == 403) && inf->spec->optional && !inf->stopping) {
        not_served(inf, r);
        return;
    }
    int complete = r->status == 200 && listsplit_finish(&inf->list) == 0;
    int quiet = say_trouble(inf, r);
    if (!complete) {
        char why[600], words[500];
        snprintf(why, sizeof(why), "list failed: %s",
                 r->status == 0 ? r->error : (r->status == 200 ? inf->list.err : "HTTP error"));
        if (r->status != 0 && r->status != 200) {
            http_words(r, words, sizeof(words));
            snprintf(why, sizeof(why), "list answered %s", words);
        }
        listsplit_free(&inf->list);
        store_free(&inf->fresh);
        inf->want_relist = 1;
        retry_later_said(inf, why, quiet);
        return;
    }
    char *continue_token = listsplit_take_continue(&inf->list);
    listsplit_free(&inf->list);
    if (continue_token != NULL && continue_token[0] != '\0') {
        start_list(inf, continue_token);
        free(continue_token);
        return;
    }
    free(continue_token);
    backoff_reset(&inf->retry);
    commit_list(inf);
    start_watch(inf);
}

char *informer_list_query(unsigned limit, const char *continue_token)
{
    if (continue_token != NULL && strlen(continue_token) > LISTSPLIT_MAX_CONTINUE)
        return NULL;
    strbuf q = {0};
    strbuf_printf(&q, "limit=%u", limit);
    if (continue_token != NULL) {
        strbuf_printf(&q, "&continue=");
        kapi_escape(&q, continue_token);
    }
    if (q.failed) {
        strbuf_free(&q);
        return NULL;
    }
    return q.data;
}

static void start_list(informer *inf, const char *continue_token)
{
    if (continue_token == NULL)
        store_free(&inf->fresh);
    char *extra = informer_list_query(INFORMER_PAGE, continue_token);
    char *path = extra != NULL ? build_path(inf, extra) : NULL;
    free(extra);
    if (path == NULL ||
        listsplit_init(&inf->list, INFORMER_MAX_OBJECT, informer_list_item, inf) != 0) {
        free(path);
        store_free(&inf->fresh);
        inf->want_relist = 1;
        retry_later(inf, "out of memory");
        return;
    }
    inf->state = INFORMER_LISTING;
    /* no_retry: a retried page would be fed to a parser already part way
     * through the first one; on_list_done relists with a backoff instead. */
    kube_call call = {.method = "GET", .path = path, .on_chunk = on_list_chunk,
                      .on_done = on_list_done, .data = inf, .no_retry = 1,
                      .timeout_ms = 120000};
    if (kube_client_call(inf->client, &call) != 0) {
        listsplit_free(&inf->list);
        retry_later(inf, "out of memory");
    }
    free(path);
}

/* ---- watch -------------------------------------------------------------- */

static void note_resource_version(informer *inf, yajl_val obj)
{
    static const char *const p_rv[] = {"metadata", "resourceVersion", NULL};
    yajl_val rv = yajl_tree_get(obj, (const char **)p_rv, yajl_t_string);
    if (rv != NULL)
        snprintf(inf->resource_version, sizeof(inf->resource_version), "%s", YAJL_GET_STRING(rv));
}

/* One watch event: {"type": ..., "object": {...}}.  Returns 0 to go on,
 * 1 to stop the watch (an ERROR event, such as 410 Gone). */
int informer_watch_line(void *data, const char *line, size_t len)
{
    informer *inf = data;
    char err[256];
    yajl_val ev = json_parse_tree(line, len, INFORMER_MAX_DEPTH, err, sizeof(err));
    if (ev == NULL) {
        log_msg(LOG_WARN, "skipping a watch event that does not parse", "%s: %s", inf->name, err);
        return 0;
    }
    static const char *const p_type[] = {"type", NULL};
    static const char *const p_obj[] = {"object", NULL};
    static const char *const p_code[] = {"object", "code", NULL};
    yajl_val type = yajl_tree_get(ev, (const char **)p_type, yajl_t_string);
    yajl_val obj = yajl_tree_get(ev, (const char **)p_obj, yajl_t_object);
    const char *t = type != NULL ? YAJL_GET_STRING(type) : "";
    int stop = 0, changed = 0;
    inf->watch_got_event = 1;
    if (strcmp(t, "ERROR") == 0) {
        yajl_val code = yajl_tree_get(ev, (const char **)p_code, yajl_t_number);
        if (code != NULL && YAJL_IS_INTEGER(code) && YAJL_GET_INTEGER(code) == 410)
            ask_relist(inf, WHY_410); /* our resourceVersion is too old */
        stop = 1;
    } else if (obj != NULL && strcmp(t, "BOOKMARK") == 0) {
        note_resource_version(inf, obj);
    } else if (obj != NULL && (strcmp(t, "ADDED") == 0 || strcmp(t, "MODIFIED") == 0)) {
        note_resource_version(inf, obj);
        void *o = decode(inf, obj);
        if (o != NULL) {
            if (keep(inf, &inf->objects, o, obj) == 0)
                changed = 1;
            else
                stop = 1; /* lost: on_watch_done relists */
        }
    } else if (obj != NULL && strcmp(t, "DELETED") == 0) {
        note_resource_version(inf, obj);
        /* the object's last state, keyed as the cache keys it */
        void *o = inf->spec->decode(obj);
        if (o != NULL) {
            changed = store_delete(&inf->objects, inf->spec->key(o));
            inf->spec->free(o);
        } else {
            /* No key: out of memory, or an object the cache never took.
             * Only a relist can tell, and it leaves nothing stale behind. */
            char ref[300];
            log_msg(LOG_WARN, "cannot key a deleted object", "%s: %s; relisting", inf->name,
                    informer_object_ref(obj, ref, sizeof(ref)));
            ask_relist(inf, "a deleted object could not be decoded");
            stop = 1;
        }
    }
    yajl_tree_free(ev);
    if (changed && inf->on_changed != NULL)
        inf->on_changed(inf->data);
    return stop;
}

static int on_watch_chunk(void *data, const char *chunk, size_t n)
{
    informer *inf = data;
    char err[128];
    int rc = linesplit_feed(&inf->lines, chunk, n, informer_watch_line, inf, err, sizeof(err));
    if (rc < 0)
        log_msg(LOG_WARN, "watch stream broken", "%s: %s", inf->name, err);
    return rc == 0; /* 0 stops the transfer: a restart follows */
}

informer_next informer_after_watch(long status, int transport_error, int want_relist,
                                   int got_event, uint64_t lasted_ns)
{
    if (want_relist || status == 410)
        return INFORMER_NEXT_RELIST;
    if (status == 200 && !transport_error && (got_event || lasted_ns >= INFORMER_MIN_WATCH_NS))
        return INFORMER_NEXT_WATCH; /* the server ended it at timeoutSeconds: carry on */
    return INFORMER_NEXT_BACKOFF;
}

static void on_watch_done(void *data, const kube_result *r)
{
    informer *inf = data;
    linesplit_free(&inf->lines);
    uint64_t now = clock_mono_ns();
    uint64_t lasted = now > inf->watch_started ? now - inf->watch_started : 0;
    if ((r->status == 404 || r->status == 403) && inf->spec->optional && !inf->stopping) {
        /* the CRD or the grant went away: the list says so (not_served) */
        inf->want_relist = 1;
        inf->state = INFORMER_IDLE;
        return;
    }
    informer_next next = informer_after_watch(r->status, r->error != NULL, inf->want_relist,
                                              inf->watch_got_event, lasted);
    if (next == INFORMER_NEXT_RELIST) {
        if (r->status == 410)
            ask_relist(inf, WHY_410);
        metrics_add(&inf->restarts, 1);
        char why[200];
        snprintf(why, sizeof(why), "%s: relisting",
                 inf->relist_why != NULL ? inf->relist_why : WHY_410);
        retry_later(inf, why);
        inf->retry_at = clock_mono_ns(); /* relist at once; the list itself backs off */
        return;
    }
    if (next == INFORMER_NEXT_WATCH) {
        backoff_reset(&inf->retry);
        inf->state = INFORMER_IDLE;
        return;
    }
    metrics_add(&inf->restarts, 1);
    int quiet = say_trouble(inf, r);
    char why[600], words[500];
    if (r->status == 200 && r->error == NULL) {
        snprintf(why, sizeof(why), "watch ended after %.3f s without an event",
                 (double)lasted / 1e9);
    } else if (r->status == 0) {
        snprintf(why, sizeof(why), "%s", r->error != NULL ? r->error : "connection lost");
    } else {
        http_words(r, words, sizeof(words));
        snprintf(why, sizeof(why), "watch answered %s", words);
    }
    if (inf->watch_got_event)
        backoff_reset(&inf->retry); /* it worked for a while: start the backoff over */
    retry_later_said(inf, why, quiet);
}

static void start_watch(informer *inf)
{
    char extra[256];
    snprintf(extra, sizeof(extra), "watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%u",
             inf->resource_version, inf->watch_timeout_s);
    char *path = build_path(inf, extra);
    if (path == NULL || linesplit_init(&inf->lines, INFORMER_MAX_OBJECT) != 0) {
        free(path);
        retry_later(inf, "out of memory");
        return;
    }
    inf->state = INFORMER_WATCHING;
    inf->watch_got_event = 0;
    inf->watch_started = clock_mono_ns();
    kube_call call = {.method = "GET", .path = path, .on_chunk = on_watch_chunk,
                      .on_done = on_watch_done, .data = inf, .no_retry = 1,
                      .timeout_ms = (long)(inf->watch_timeout_s + 30) * 1000};
    if (kube_client_call(inf->client, &call) != 0) {
        linesplit_free(&inf->lines);
        retry_later(inf, "out of memory");
    }
    free(path);
}

/*
 * test_informer.c - the generic informer with a toy resource of its own (a
 * decoder that keeps a name, a uid and a number): list items go into the
 * list being read, watch events add, replace (merge first), delete and move
 * the resourceVersion, ERROR 410 asks for a relist, and every object decoded
 * is freed once.  The path comes from the spec's parts, and the
 * controller's specs give the paths it always asked for.
 *
 * An object the cache could not keep (store_put out of
 * memory) is not lost silently: informer_lost_object counts it, logs it at
 * error level and makes the next start a list, not a watch, as 410 Gone
 * does; /metrics exports the count per resource.
 *
 * Also: what follows the end of a watch (informer_after_watch: a watch the
 * server ends at once without an event backs off instead of spinning), and
 * the list query keeps a continue token whole however long it is, up to
 * LISTSPLIT_MAX_CONTINUE.
 *
 * store_put cannot be made to fail on demand, so this drives the decision
 * the list and watch callbacks take on its failure.  The client points at a
 * port nothing listens on: a call is only queued, and informer_tick's choice
 * shows in the informer's state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller.h"
#include "clock.h"
#include "informer.h"
#include "kube_client.h"
#include "log.h"
#include "row_check.h"

static kube_config cfg = {.server = "http://127.0.0.1:1"};

/* ---- the toy resource ----------------------------------------------------- */

/* What the toy decoder keeps: one allocation, the uid inside it (the cache
 * key, borrowed by the store). */
typedef struct toy {
    long long n;     /* spec.n */
    long long prev;  /* merge: the n of the version it replaced, else -1 */
    char uid[40];
    char name[40];
} toy;

static int toys_live;   /* decoded and not freed */
static int toys_merged; /* merge calls */

static void *toy_decode(yajl_val obj)
{
    static const char *const p_uid[] = {"metadata", "uid", NULL};
    static const char *const p_name[] = {"metadata", "name", NULL};
    static const char *const p_n[] = {"spec", "n", NULL};
    yajl_val uid = yajl_tree_get(obj, (const char **)p_uid, yajl_t_string);
    yajl_val name = yajl_tree_get(obj, (const char **)p_name, yajl_t_string);
    yajl_val n = yajl_tree_get(obj, (const char **)p_n, yajl_t_number);
    if (uid == NULL || name == NULL)
        return NULL;
    toy *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    snprintf(t->uid, sizeof(t->uid), "%s", YAJL_GET_STRING(uid));
    snprintf(t->name, sizeof(t->name), "%s", YAJL_GET_STRING(name));
    t->n = n != NULL && YAJL_IS_INTEGER(n) ? YAJL_GET_INTEGER(n) : 0;
    t->prev = -1;
    toys_live++;
    return t;
}

static void toy_free(void *obj)
{
    toys_live--;
    free(obj);
}

static const char *toy_key(const void *obj)
{
    return ((const toy *)obj)->uid;
}

static void toy_merge(const void *old, void *fresh)
{
    toys_merged++;
    ((toy *)fresh)->prev = ((const toy *)old)->n;
}

static const kapi_requirement tier_edge[] = {{"tier", "edge"}, {NULL, NULL}};
static const informer_spec toy_spec = {"toys", KAPI_PODS, NULL, tier_edge,
                                       toy_decode, toy_free, toy_key, toy_merge, 0};

static int changes;

static void count_change(void *data)
{
    (void)data;
    changes++;
}

/* What fn(arg) wrote to stderr (malloc'd, NUL-terminated). */
static char *stderr_of(void (*fn)(void *), void *arg)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int fd = fileno(tmp), saved = dup(2);
    assert_true(saved >= 0);
    fflush(stderr);
    assert_int_equal(dup2(fd, 2), 2);
    fn(arg);
    fflush(stderr);
    assert_int_equal(dup2(saved, 2), 2);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    assert_true(n >= 0);
    char *out = calloc(1, (size_t)n + 1);
    assert_non_null(out);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(read(fd, out, (size_t)n), n);
    fclose(tmp);
    return out;
}

typedef struct row {
    const char *name;
    int synced;          /* a first list has completed */
    int lost;            /* objects lost before the tick */
    informer_state want; /* what the tick starts */
} row;

static const row rows[] = {
    {"first start lists", 0, 0, INFORMER_LISTING},
    {"synced: watches", 1, 0, INFORMER_WATCHING},
    {"synced, an object lost: relists", 1, 1, INFORMER_LISTING},
    {"synced, three lost: relists", 1, 3, INFORMER_LISTING},
    {"not synced, lost: lists", 0, 1, INFORMER_LISTING},
};

static void lose_one(void *arg)
{
    informer_lost_object(arg, "edge/edge-agent-x7k2p");
}

static void test_lost_object_relists(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        char err[128];
        kube_client *client = kube_client_new(&cfg, 100, 100, err, sizeof(err));
        assert_non_null(client);
        informer inf;
        static const informer_spec pods = {"pods", KAPI_PODS, NULL, NULL, toy_decode,
                                           toy_free, toy_key, NULL, 0};
        assert_int_equal(informer_init(&inf, client, &pods, NULL, NULL), 0);
        inf.synced = r->synced;
        for (int k = 0; k < r->lost; k++) {
            char *log = stderr_of(lose_one, &inf);
            if (strstr(log, "level=error") == NULL || strstr(log, "cache lost an object") == NULL ||
                strstr(log, "pods") == NULL || strstr(log, "edge/edge-agent-x7k2p") == NULL)
                fail_msg("%s: logged \"%s\"", r->name, log);
            free(log);
        }
        assert_int_equal(metrics_get(&inf.store_failures), (uint64_t)r->lost);
        assert_int_equal(inf.want_relist, r->lost > 0);
        informer_tick(&inf, clock_mono_ns());
        if (inf.state != r->want)
            fail_msg("%s: state %d, want %d", r->name, inf.state, r->want);
        /* ends the queued call (status 0) while inf still exists */
        kube_client_free(client);
        informer_free(&inf);
    }
}

/* A controller with its informers set up, on a client whose calls are only
 * queued. */
static kube_client *controller_up(controller *c)
{
    char err[128];
    kube_client *client = kube_client_new(&cfg, 100, 100, err, sizeof(err));
    assert_non_null(client);
    controller_config ccfg;
    memset(&ccfg, 0, sizeof(ccfg));
    assert_int_equal(controller_init(c, client, &ccfg), 0);
    return client;
}

static void test_metrics_export(void **state)
{
    (void)state;
    controller c;
    kube_client *client = controller_up(&c);
    informer_lost_object(&c.informers[INF_PODS], "a/b");
    informer_lost_object(&c.informers[INF_PODS], "a/c");
    informer_lost_object(&c.informers[INF_JOBS], "a/d");
    metrics_add(&c.informers[INF_DAEMONSETS].restarts, 3);
    metrics_add(&c.informers[INF_REVISIONS].relists, 4);
    strbuf t = {0};
    controller_render_metrics(&c, &t);
    assert_false(t.failed);
    static const char *const want[] = {
        "# TYPE ota_controller_cache_store_failures_total counter\n",
        "ota_controller_cache_store_failures_total{resource=\"pods\"} 2\n",
        "ota_controller_cache_store_failures_total{resource=\"jobs\"} 1\n",
        "ota_controller_cache_store_failures_total{resource=\"daemonsets\"} 0\n",
        "# HELP ota_controller_watch_restarts_total Watches re-opened after an error, a lost "
        "connection or 410 Gone.\n# TYPE ota_controller_watch_restarts_total counter\n",
        "ota_controller_watch_restarts_total{resource=\"daemonsets\"} 3\n",
        "ota_controller_watch_restarts_total{resource=\"pods\"} 0\n",
        "# TYPE ota_controller_relists_total counter\n",
        "ota_controller_relists_total{resource=\"controllerrevisions\"} 4\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (strstr(t.data, want[i]) == NULL)
            fail_msg("no \"%s\" in:\n%s", want[i], t.data);
    strbuf_free(&t);
    kube_client_free(client);
    controller_free(&c);
}

/* client-go's leader_election_master_status, labelled with the Lease's
 * name, beside ota_controller_leader; only where an election runs (issue
 * 19: a dashboard alerts on it). */
static void test_metrics_election(void **state)
{
    (void)state;
    char err[128];
    kube_client *client = kube_client_new(&cfg, 100, 100, err, sizeof(err));
    assert_non_null(client);
    controller_config ccfg;
    memset(&ccfg, 0, sizeof(ccfg));
    ccfg.leader_elect = 1;
    ccfg.leader = (leader_config){.namespace = "ota-system", .name = "ota-\"x", .identity = "me",
                                  .lease_ns = 15000000000ull, .renew_deadline_ns = 10000000000ull,
                                  .retry_ns = 2000000000ull};
    controller c;
    assert_int_equal(controller_init(&c, client, &ccfg), 0);
    strbuf t = {0};
    controller_render_metrics(&c, &t);
    assert_non_null(strstr(t.data, "# TYPE leader_election_master_status gauge\n"
                                   "leader_election_master_status{name=\"ota-\\\"x\"} 0\n"));
    assert_non_null(strstr(t.data, "\nota_controller_leader 0\n"));
    c.leading = 1; /* what on_change does when the Lease is won */
    strbuf_free(&t);
    controller_render_metrics(&c, &t);
    assert_non_null(strstr(t.data, "leader_election_master_status{name=\"ota-\\\"x\"} 1\n"));
    strbuf_free(&t);
    kube_client_free(client);
    controller_free(&c);

    /* no election (--leader-elect=false): no Lease to name */
    client = controller_up(&c);
    controller_render_metrics(&c, &t);
    assert_null(strstr(t.data, "leader_election_master_status"));
    assert_non_null(strstr(t.data, "\nota_controller_leader 1\n"));
    strbuf_free(&t);
    kube_client_free(client);
    controller_free(&c);
}

typedef struct watch_end_row {
    const char *name;
    long status;
    int transport_error, want_relist, got_event;
    uint64_t lasted_ns;
    informer_next want;
} watch_end_row;

#define MS 1000000ull
static const watch_end_row watch_end_rows[] = {
    {"ended at timeoutSeconds after events", 200, 0, 0, 1, 240000 * MS, INFORMER_NEXT_WATCH},
    {"ended at timeoutSeconds, quiet", 200, 0, 0, 0, 240000 * MS, INFORMER_NEXT_WATCH},
    {"ended clean at once, nothing sent", 200, 0, 0, 0, 0, INFORMER_NEXT_BACKOFF},
    {"ended clean after 999 ms, nothing sent", 200, 0, 0, 0, 999 * MS, INFORMER_NEXT_BACKOFF},
    {"ended clean after 1 s, nothing sent", 200, 0, 0, 0, 1000 * MS, INFORMER_NEXT_WATCH},
    {"ended clean at once after an event", 200, 0, 0, 1, 5 * MS, INFORMER_NEXT_WATCH},
    {"stream broken after events", 200, 1, 0, 1, 5000 * MS, INFORMER_NEXT_BACKOFF},
    {"stream broken at once", 200, 1, 0, 0, 0, INFORMER_NEXT_BACKOFF},
    {"no answer", 0, 1, 0, 0, 0, INFORMER_NEXT_BACKOFF},
    {"HTTP 500", 500, 0, 0, 0, 2 * MS, INFORMER_NEXT_BACKOFF},
    {"HTTP 429", 429, 0, 0, 0, 2 * MS, INFORMER_NEXT_BACKOFF},
    {"HTTP 410", 410, 0, 0, 0, 2 * MS, INFORMER_NEXT_RELIST},
    {"ERROR 410 event asked for a relist", 200, 0, 1, 1, 2 * MS, INFORMER_NEXT_RELIST},
    {"object lost, then the stream broke", 200, 1, 1, 1, 2 * MS, INFORMER_NEXT_RELIST},
};

static void test_after_watch(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(watch_end_rows) / sizeof(watch_end_rows[0]); i++) {
        const watch_end_row *r = &watch_end_rows[i];
        informer_next got = informer_after_watch(r->status, r->transport_error, r->want_relist,
                                                 r->got_event, r->lasted_ns);
        ROW_CHECK(r->name, got == r->want, "got %d, want %d", got, r->want);
    }
}

/* A token of n bytes cycling through characters that need escaping and
 * ones that do not. */
static char *token_of(size_t n)
{
    static const char alphabet[] = "AZaz09+/=-_.~";
    char *t = malloc(n + 1);
    assert_non_null(t);
    for (size_t i = 0; i < n; i++)
        t[i] = alphabet[i % (sizeof(alphabet) - 1)];
    t[n] = '\0';
    return t;
}

/* Undoes the %XX escapes of q (in place). */
static void unescape(char *q)
{
    char *w = q;
    for (char *r = q; *r != '\0'; r++) {
        if (*r == '%' && r[1] != '\0' && r[2] != '\0') {
            char hex[3] = {r[1], r[2], '\0'};
            *w++ = (char)strtol(hex, NULL, 16);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

static void test_list_query(void **state)
{
    (void)state;
    char *q = informer_list_query(500, NULL);
    assert_string_equal(q, "limit=500");
    free(q);
    q = informer_list_query(500, "eyJ2Ijo+/=");
    assert_string_equal(q, "limit=500&continue=eyJ2Ijo%2B%2F%3D");
    free(q);
    /* tokens around the old 4 KiB cut, and up to the bound: kept whole */
    static const size_t sizes[] = {1, 1400, 4095, 4096, 4200, 10000, LISTSPLIT_MAX_CONTINUE};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char *t = token_of(sizes[i]);
        q = informer_list_query(500, t);
        assert_non_null(q);
        static const char head[] = "limit=500&continue=";
        assert_memory_equal(q, head, sizeof(head) - 1);
        assert_null(strchr(q + sizeof(head) - 1, '+'));
        assert_null(strchr(q + sizeof(head) - 1, '/'));
        assert_null(strchr(q + sizeof(head) - 1, '='));
        unescape(q);
        if (strcmp(q + sizeof(head) - 1, t) != 0)
            fail_msg("token of %zu bytes: came back as %zu bytes", sizes[i],
                     strlen(q + sizeof(head) - 1));
        free(q);
        free(t);
    }
    /* beyond the bound: refused, never cut */
    char *t = token_of(LISTSPLIT_MAX_CONTINUE + 1);
    assert_null(informer_list_query(500, t));
    free(t);
}

/* ---- the path from the spec's parts --------------------------------------- */

static void test_spec_path(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        kapi_resource resource;
        const char *namespace, *want;
    } path_rows[] = {
        {"core group: /api", KAPI_PODS, NULL, "/api/v1/pods"},
        {"named group: /apis", KAPI_DAEMONSETS, NULL, "/apis/apps/v1/daemonsets"},
        {"namespaced, core", KAPI_PODS, "edge", "/api/v1/namespaces/edge/pods"},
        {"namespaced, named group", KAPI_JOBS, "ota-system",
         "/apis/batch/v1/namespaces/ota-system/jobs"},
    };
    char err[128];
    kube_client *client = kube_client_new(&cfg, 100, 100, err, sizeof(err));
    assert_non_null(client);
    for (size_t i = 0; i < sizeof(path_rows) / sizeof(path_rows[0]); i++) {
        informer_spec spec = toy_spec;
        spec.resource = path_rows[i].resource;
        spec.namespace = path_rows[i].namespace;
        informer inf;
        int rc = informer_init(&inf, client, &spec, NULL, NULL);
        ROW_CHECK(path_rows[i].name, rc == 0 && strcmp(inf.path, path_rows[i].want) == 0,
                  "got %d, %s", rc, inf.path);
        ROW_CHECK(path_rows[i].name, strcmp(inf.label_selector, "labelSelector=tier%3Dedge") == 0,
                  "selector %s", inf.label_selector);
        informer_free(&inf);
    }
    /* a selector the grammar would read as two terms: refused */
    static const kapi_requirement two_terms[] = {{"tier", "edge,core"}, {NULL, NULL}};
    informer_spec bad_selector = toy_spec;
    bad_selector.label_selector = two_terms;
    informer bad;
    assert_int_equal(informer_init(&bad, client, &bad_selector, NULL, NULL), -1);
    informer_free(&bad);
    /* parts that do not fit: refused, not cut */
    char long_ns[300];
    memset(long_ns, 'n', sizeof(long_ns) - 1);
    long_ns[sizeof(long_ns) - 1] = '\0';
    informer_spec spec = toy_spec;
    spec.namespace = long_ns;
    informer inf;
    assert_int_equal(informer_init(&inf, client, &spec, NULL, NULL), -1);
    informer_free(&inf);
    kube_client_free(client);
}

/* The controller's resources are specs like any other, and ask the paths
 * and selectors they always did. */
static void test_controller_specs(void **state)
{
    (void)state;
    static const struct {
        int index;
        const char *name, *path, *selector;
    } want[] = {
        {INF_DAEMONSETS, "daemonsets", "/apis/apps/v1/daemonsets", ""},
        {INF_REVISIONS, "controllerrevisions", "/apis/apps/v1/controllerrevisions", ""},
        {INF_PODS, "pods", "/api/v1/pods",
         "labelSelector=controller-revision-hash%2Cpod-template-generation"},
        {INF_JOBS, "jobs", "/apis/batch/v1/jobs",
         "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dota-prepull"},
        {INF_JOB_PODS, "prepull-pods", "/api/v1/pods",
         "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dota-prepull"},
        {INF_NODES, "nodes", "/api/v1/nodes", ""},
        {INF_IMAGEPULLJOBS, "imagepulljobs", "/apis/apps.kruise.io/v1alpha1/imagepulljobs", ""},
        {INF_IMAGECACHES, "imagecaches", "/apis/kubefledged.io/v1alpha2/imagecaches", ""},
    };
    controller c;
    kube_client *client = controller_up(&c);
    assert_int_equal(sizeof(want) / sizeof(want[0]), INF_COUNT); /* every one */
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const informer *inf = &c.informers[want[i].index];
        ROW_CHECK(want[i].name, strcmp(inf->name, want[i].name) == 0, "name %s", inf->name);
        ROW_CHECK(want[i].name, strcmp(inf->path, want[i].path) == 0, "path %s", inf->path);
        ROW_CHECK(want[i].name, strcmp(inf->label_selector, want[i].selector) == 0, "selector %s",
                  inf->label_selector);
    }
    kube_client_free(client);
    controller_free(&c);
}

/* ---- list items and watch events through the toy decoder ----------------- */

static int list_item(informer *inf, const char *json)
{
    return informer_list_item(inf, json, strlen(json));
}

static void test_list_items(void **state)
{
    (void)state;
    toys_live = 0;
    informer inf;
    assert_int_equal(informer_init(&inf, NULL, &toy_spec, count_change, NULL), 0);
    assert_int_equal(list_item(&inf, "{\"metadata\":{\"name\":\"a\",\"uid\":\"u-a\"},"
                                     "\"spec\":{\"n\":1}}"),
                     1);
    assert_int_equal(list_item(&inf, "{\"metadata\":{\"name\":\"b\",\"uid\":\"u-b\"}}"), 1);
    /* no uid: the decoder skips it, the list goes on */
    assert_int_equal(list_item(&inf, "{\"metadata\":{\"name\":\"c\"}}"), 1);
    /* does not parse: skipped too */
    assert_int_equal(list_item(&inf, "{\"metadata\":"), 1);
    /* into the list being read, not the cache; no change said yet */
    assert_int_equal(inf.fresh.len, 2);
    assert_int_equal(inf.objects.len, 0);
    assert_int_equal(changes, 0);
    const toy *a = store_get(&inf.fresh, "u-a");
    assert_non_null(a);
    assert_int_equal(a->n, 1);
    assert_int_equal(a->prev, -1); /* nothing cached to merge from */
    assert_int_equal(toys_live, 2);
    informer_free(&inf);
    assert_int_equal(toys_live, 0);
}

typedef struct watch_row {
    const char *name;
    const char *line;
    int want_stop;
    size_t want_len;      /* objects cached after the line */
    int want_changes;     /* on_changed calls so far */
    const char *want_rv;  /* resourceVersion after the line */
    int want_relist;
} watch_row;

#define EVENT(type, object) "{\"type\":\"" type "\",\"object\":" object "}"
#define OBJ(name, uid, n, rv)                                                                      \
    "{\"metadata\":{\"name\":\"" name "\",\"uid\":\"" uid "\",\"resourceVersion\":\"" rv   \
    "\"},\"spec\":{\"n\":" #n "}}"

static const watch_row watch_rows[] = {
    {"ADDED a", EVENT("ADDED", OBJ("a", "u-a", 1, "11")), 0, 1, 1, "11", 0},
    {"ADDED b", EVENT("ADDED", OBJ("b", "u-b", 7, "12")), 0, 2, 2, "12", 0},
    {"MODIFIED a: replaced, merged", EVENT("MODIFIED", OBJ("a", "u-a", 2, "13")), 0, 2, 3, "13", 0},
    {"BOOKMARK: the resourceVersion only",
     "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"20\"}}}", 0, 2, 3,
     "20", 0},
    {"ADDED without uid: skipped",
     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\",\"resourceVersion\":\"21\"}}}",
     0, 2, 3, "21", 0},
    {"does not parse: skipped", "{\"type\":\"ADDED\",", 0, 2, 3, "21", 0},
    {"DELETED b", EVENT("DELETED", OBJ("b", "u-b", 7, "22")), 0, 1, 4, "22", 0},
    {"DELETED again: no change", EVENT("DELETED", OBJ("b", "u-b", 7, "23")), 0, 1, 4, "23", 0},
    {"MODIFIED of one not cached: added", EVENT("MODIFIED", OBJ("c", "u-c", 3, "25")), 0, 2, 5, "25",
     0},
    {"DELETED c", EVENT("DELETED", OBJ("c", "u-c", 3, "26")), 0, 1, 6, "26", 0},
    {"ERROR 500: stops, no relist",
     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500}}", 1, 1, 6, "26", 0},
    {"ERROR 410: stops, relists",
     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}", 1, 1, 6, "26", 1},
};

/* A DELETED object the decoder cannot key (out of memory, or no uid): the
 * cache may hold it, so the watch stops and the informer relists. */
static const char deleted_unkeyed[] =
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"27\"}}}";

static void test_watch_events(void **state)
{
    (void)state;
    toys_live = 0;
    toys_merged = 0;
    changes = 0;
    informer inf;
    assert_int_equal(informer_init(&inf, NULL, &toy_spec, count_change, NULL), 0);
    for (size_t i = 0; i < sizeof(watch_rows) / sizeof(watch_rows[0]); i++) {
        const watch_row *r = &watch_rows[i];
        int stop = informer_watch_line(&inf, r->line, strlen(r->line));
        ROW_CHECK(r->name, stop == r->want_stop, "stop %d", stop);
        ROW_CHECK(r->name, inf.objects.len == r->want_len, "%zu cached", inf.objects.len);
        ROW_CHECK(r->name, changes == r->want_changes, "%d changes", changes);
        ROW_CHECK(r->name, strcmp(inf.resource_version, r->want_rv) == 0, "resourceVersion %s",
                  inf.resource_version);
        ROW_CHECK(r->name, inf.want_relist == r->want_relist, "want_relist %d", inf.want_relist);
        ROW_CHECK(r->name, toys_live == (int)inf.objects.len, "%d toys live", toys_live);
    }
    assert_int_equal(informer_watch_line(&inf, deleted_unkeyed, strlen(deleted_unkeyed)), 1);
    assert_int_equal(inf.want_relist, 1);
    assert_int_equal(inf.objects.len, 1); /* the relist decides, not a guess */
    assert_int_equal(toys_live, 1);
    /* a's second version replaced the first, told what it knew */
    const toy *a = store_get(&inf.objects, "u-a");
    assert_non_null(a);
    assert_int_equal(a->n, 2);
    assert_int_equal(a->prev, 1);
    assert_int_equal(toys_merged, 1);
    /* the slot's key is the object's own uid, not a copy */
    for (size_t i = 0; i < inf.objects.cap; i++)
        if (inf.objects.slots[i].key != NULL)
            assert_ptr_equal(inf.objects.slots[i].key, ((toy *)inf.objects.slots[i].obj)->uid);
    informer_free(&inf);
    assert_int_equal(toys_live, 0);
}

static void test_object_ref(void **state)
{
    (void)state;
    char err[128], buf[64], small[8];
    static const char pod_json[] =
        "{\"metadata\":{\"namespace\":\"edge\",\"name\":\"edge-agent-x7k2p\"}}";
    static const char node_json[] = "{\"metadata\":{\"name\":\"edge-node-1\"}}";
    yajl_val pod = json_parse_tree(pod_json, sizeof(pod_json) - 1, 8, err, sizeof(err));
    yajl_val node = json_parse_tree(node_json, sizeof(node_json) - 1, 8, err, sizeof(err));
    assert_non_null(pod);
    assert_non_null(node);
    assert_string_equal(informer_object_ref(pod, buf, sizeof(buf)), "edge/edge-agent-x7k2p");
    assert_string_equal(informer_object_ref(node, buf, sizeof(buf)), "/edge-node-1");
    assert_string_equal(informer_object_ref(pod, small, sizeof(small)), "edge/ed");
    yajl_tree_free(pod);
    yajl_tree_free(node);
}

int main(void)
{
    /* calls that kube_client_free ends warn; the errors are what is tested */
    log_set_level(LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_object_relists),
        cmocka_unit_test(test_metrics_export),
        cmocka_unit_test(test_metrics_election),
        cmocka_unit_test(test_after_watch),
        cmocka_unit_test(test_list_query),
        cmocka_unit_test(test_spec_path),
        cmocka_unit_test(test_controller_specs),
        cmocka_unit_test(test_list_items),
        cmocka_unit_test(test_watch_events),
        cmocka_unit_test(test_object_ref),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_informer.c - an object the cache could not keep (store_put out of
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
        informer_init(&inf, client, KOBJ_POD, "pods", "/api/v1/pods", NULL, NULL, NULL);
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

static void test_metrics_export(void **state)
{
    (void)state;
    char err[128];
    kube_client *client = kube_client_new(&cfg, 100, 100, err, sizeof(err));
    assert_non_null(client);
    controller_config ccfg;
    memset(&ccfg, 0, sizeof(ccfg));
    controller c;
    assert_int_equal(controller_init(&c, client, &ccfg), 0);
    informer_lost_object(&c.informers[INF_PODS], "a/b");
    informer_lost_object(&c.informers[INF_PODS], "a/c");
    informer_lost_object(&c.informers[INF_JOBS], "a/d");
    strbuf t = {0};
    controller_render_metrics(&c, &t);
    assert_false(t.failed);
    static const char *const want[] = {
        "# TYPE ota_controller_cache_store_failures_total counter\n",
        "ota_controller_cache_store_failures_total{resource=\"pods\"} 2\n",
        "ota_controller_cache_store_failures_total{resource=\"jobs\"} 1\n",
        "ota_controller_cache_store_failures_total{resource=\"daemonsets\"} 0\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (strstr(t.data, want[i]) == NULL)
            fail_msg("no \"%s\" in:\n%s", want[i], t.data);
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

int main(void)
{
    /* calls that kube_client_free ends warn; the errors are what is tested */
    log_set_level(LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_object_relists),
        cmocka_unit_test(test_metrics_export),
        cmocka_unit_test(test_after_watch),
        cmocka_unit_test(test_list_query),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

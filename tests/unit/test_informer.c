/*
 * test_informer.c - an object the cache could not keep (store_put out of
 * memory) is not lost silently: informer_lost_object counts it, logs it at
 * error level and makes the next start a list, not a watch, as 410 Gone
 * does; /metrics exports the count per resource.
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

int main(void)
{
    /* calls that kube_client_free ends warn; the errors are what is tested */
    log_set_level(LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_object_relists),
        cmocka_unit_test(test_metrics_export),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * main.c - ota-controller's start and its one loop.
 *
 * The flags are flags.c's.  Everything runs on the main thread: libcurl's
 * multi handle moves the bytes of every request and watch, the side ports
 * answer probes, and the controller ticks between waits.  SIGTERM releases
 * the Lease (so a successor need not wait out 15 s) and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "clock.h"
#include "flags.h"
#include "httpd.h"
#include "kube_client.h"
#include "kube_config.h"
#include "log.h"
#include "metrics.h"
#include "version.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static uint64_t seconds_ns(double s)
{
    return (uint64_t)(s * 1e9);
}

typedef struct app {
    controller ctl;
    int stopping;
} app;

static int route_health(void *data, const char *path, strbuf *body)
{
    app *a = data;
    /* /livez: the loop turns (it answers); /healthz is its older name */
    if (strcmp(path, "/livez") == 0 || strcmp(path, "/healthz") == 0) {
        strbuf_printf(body, "ok\n");
        return 200;
    }
    if (strcmp(path, "/readyz") == 0) {
        int ready = controller_synced(&a->ctl) && !a->stopping;
        strbuf_printf(body, ready ? "ok\n" : "caches not synced yet\n");
        return ready ? 200 : 503;
    }
    strbuf_printf(body, "no such path: use /livez, /healthz or /readyz\n");
    return 404;
}

static int route_metrics(void *data, const char *path, strbuf *body)
{
    app *a = data;
    if (strcmp(path, "/metrics") != 0) {
        strbuf_printf(body, "no such path: use /metrics\n");
        return 404;
    }
    controller_render_metrics(&a->ctl, body);
    metrics_build_info(body, OTA_VERSION, OTA_COMMIT);
    metrics_process_render(body);
    return 200;
}

int main(int argc, char **argv)
{
    static flags o;
    char err[2048];
    flagtab_result parsed = flags_parse(argc, argv, &o, err, sizeof(err));
    int status = flagtab_report(&flags_flagtab, parsed, err, OTA_VERSION, OTA_COMMIT,
                                o.log_format == LOG_FORMAT_JSON);
    if (status >= 0)
        return status;
    log_set_level(o.log_level);
    log_set_format(o.log_format);
    static char identity[256];
    if (o.ctl.leader.identity == NULL)
        o.ctl.leader.identity = flags_identity(identity, sizeof(identity));
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    kube_config cfg;
    /* --kubeconfig, else $KUBECONFIG, else in-cluster (client-go's order) */
    const char *env = getenv("KUBECONFIG");
    int rc = o.kubeconfig != NULL || (env != NULL && env[0] != '\0')
                 ? kube_config_load(&cfg, o.kubeconfig, env, NULL, err, sizeof(err))
                 : kube_config_load_incluster(&cfg, KUBE_SA_DIR, err, sizeof(err));
    if (rc != 0) {
        log_startup_error("ota-controller", err);
        return 1;
    }
    static char pod_namespace[256];
    o.ctl.leader.namespace =
        flags_lease_namespace(o.ctl.leader.namespace, KUBE_SA_DIR, pod_namespace,
                              sizeof(pod_namespace));
    /* No flag: the bound follows the rate limit (docs/DECISIONS.md
     * "Bounded work queue"). */
    o.ctl.max_queued_writes = controller_write_cap(o.qps, o.burst);
    kube_client *client = kube_client_new(&cfg, o.qps, o.burst, err, sizeof(err));
    if (client == NULL) {
        log_startup_error("ota-controller", err);
        return 1;
    }
    kube_client_set_user_agent(client, "ota-controller/" OTA_VERSION " ota-prepull/" OTA_COMMIT);
    static app a;
    httpd health, metrics;
    if (httpd_open(&health, o.health_address, route_health, &a, err, sizeof(err)) != 0 ||
        httpd_open(&metrics, o.metrics_address, route_metrics, &a, err, sizeof(err)) != 0) {
        log_startup_error("ota-controller", err);
        return 1;
    }
    controller_init(&a.ctl, client, &o.ctl);
    char lease[512];
    snprintf(lease, sizeof(lease), "%s/%s", o.ctl.leader.namespace, o.ctl.leader.name);
    log_kv(LOG_INFO, "starting", "version", OTA_VERSION, "commit", OTA_COMMIT, "apiserver",
           cfg.server, "identity", o.ctl.leader.identity, "lease",
           o.ctl.leader_elect ? lease : "off (--leader-elect=false)", NULL);

    uint64_t release_deadline = 0;
    for (;;) {
        uint64_t now = clock_mono_ns();
        if (stop_signal && !a.stopping) {
            a.stopping = 1;
            log_msg(LOG_INFO, "shutting down", "signal %d", (int)stop_signal);
            if (o.ctl.leader_elect)
                leader_release(&a.ctl.election);
            a.ctl.leading = 0;
            release_deadline = now + seconds_ns(3);
        }
        if (a.stopping && (!o.ctl.leader_elect || leader_released(&a.ctl.election) ||
                           now > release_deadline))
            break;
        if (!a.stopping)
            controller_tick(&a.ctl, now);
        httpd_step(&health, now);
        httpd_step(&metrics, now);
        kube_client_step(client, 50);
    }
    httpd_close(&health);
    httpd_close(&metrics);
    controller_stop(&a.ctl);
    kube_client_free(client); /* its last callbacks reach the controller */
    controller_free(&a.ctl);
    kube_config_free(&cfg);
    log_msg(LOG_INFO, "stopped", NULL);
    return 0;
}

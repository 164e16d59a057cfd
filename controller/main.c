/*
 * main.c - ota-controller's command line and its one loop.
 *
 * Everything runs on the main thread: libcurl's multi handle moves the bytes
 * of every request and watch, the side ports answer probes, and the
 * controller ticks between waits.  SIGTERM releases the Lease (so a
 * successor need not wait out 15 s) and exits 0.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller.h"
#include "clock.h"
#include "duration.h"
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

typedef struct options {
    const char *kubeconfig;
    const char *health_address, *metrics_address;
    double qps;
    int burst;
    controller_config ctl;
    char identity[256];
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ota-controller [options]\n"
            "\n"
            "Keeps PodNeedUpgrade current on the pods of OTA DaemonSets, turns pre-pull requests\n"
            "into Jobs pinned to the pod's node, and reports the outcome as PodImageReady.\n"
            "\n"
            "  --kubeconfig FILE                   default: $KUBECONFIG, else in-cluster configuration\n"
            "  --kube-api-qps N                    client-side rate limit (default 20)\n"
            "  --kube-api-burst N                  (default 30)\n"
            "  --max-concurrent-pulls N            pre-pull Jobs running at once (default 10)\n"
            "  --pull-timeout DURATION             Job deadline unless the DaemonSet says (default 10m)\n"
            "  --helper-image IMAGE                static busybox that provides /ota-bin/true\n"
            "                                      (default busybox:1.36-musl)\n"
            "  --job-backoff-limit N               0..2 (default 0)\n"
            "  --leader-elect=true|false           (default true)\n"
            "  --leader-elect-resource-namespace NS  the Lease's namespace (default: the pod's\n"
            "                                      own, from the service account mount, else\n"
            "                                      ota-system; never the kubeconfig context's)\n"
            "  --leader-elect-resource-name NAME   the Lease's name (default ota-controller)\n"
            "  --leader-elect-identity ID          (default: hostname_pid)\n"
            "  --leader-elect-lease-duration D     (default 15s)\n"
            "  --leader-elect-renew-deadline D     (default 10s)\n"
            "  --leader-elect-retry-period D       (default 2s)\n"
            "  --resync-period D                   full reconcile at least this often (default 30s)\n"
            "  --health-probe-bind-address H:P     /livez, /healthz, /readyz (default :8081)\n"
            "  --metrics-bind-address H:P          /metrics (default :8080)\n"
            "  --log-level debug|info|warn|error   (default info)\n"
            "  --log-format text|json              (default text)\n"
            "  --version                           print version and commit, and exit\n"
            "  -h, --help\n"
            "\n"
            "Durations (D) are Go durations (15s, 10m, 1h30m, 500ms) or plain seconds.\n"
            "--leader-elect-namespace and --leader-elect-lease-name are older spellings of\n"
            "--leader-elect-resource-namespace and --leader-elect-resource-name.\n");
}

enum {
    OPT_KUBECONFIG = 256,
    OPT_QPS,
    OPT_BURST,
    OPT_MAX_PULLS,
    OPT_PULL_TIMEOUT,
    OPT_HELPER,
    OPT_BACKOFF,
    OPT_ELECT,
    OPT_ELECT_NS,
    OPT_ELECT_NAME,
    OPT_ELECT_ID,
    OPT_ELECT_LEASE,
    OPT_ELECT_RENEW,
    OPT_ELECT_RETRY,
    OPT_RESYNC,
    OPT_HEALTH,
    OPT_METRICS,
    OPT_LOG_LEVEL,
    OPT_LOG_FORMAT,
    OPT_VERSION,
};

static const struct option long_options[] = {
    {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
    {"kube-api-qps", required_argument, NULL, OPT_QPS},
    {"kube-api-burst", required_argument, NULL, OPT_BURST},
    {"max-concurrent-pulls", required_argument, NULL, OPT_MAX_PULLS},
    {"pull-timeout", required_argument, NULL, OPT_PULL_TIMEOUT},
    {"helper-image", required_argument, NULL, OPT_HELPER},
    {"job-backoff-limit", required_argument, NULL, OPT_BACKOFF},
    {"leader-elect", optional_argument, NULL, OPT_ELECT},
    {"leader-elect-resource-namespace", required_argument, NULL, OPT_ELECT_NS},
    {"leader-elect-resource-name", required_argument, NULL, OPT_ELECT_NAME},
    {"leader-elect-namespace", required_argument, NULL, OPT_ELECT_NS},   /* older spelling */
    {"leader-elect-lease-name", required_argument, NULL, OPT_ELECT_NAME}, /* older spelling */
    {"leader-elect-identity", required_argument, NULL, OPT_ELECT_ID},
    {"leader-elect-lease-duration", required_argument, NULL, OPT_ELECT_LEASE},
    {"leader-elect-renew-deadline", required_argument, NULL, OPT_ELECT_RENEW},
    {"leader-elect-retry-period", required_argument, NULL, OPT_ELECT_RETRY},
    {"resync-period", required_argument, NULL, OPT_RESYNC},
    {"health-probe-bind-address", required_argument, NULL, OPT_HEALTH},
    {"metrics-bind-address", required_argument, NULL, OPT_METRICS},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static double parse_number(const char *flag, const char *s, double min, double max)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
        fprintf(stderr, "ota-controller: --%s wants a number from %g to %g, got \"%s\"\n", flag,
                min, max, s);
        exit(2);
    }
    return v;
}

static uint64_t seconds_ns(double s)
{
    return (uint64_t)(s * 1e9);
}

/* A duration flag within [min_s, max_s] seconds, or exit 2 naming the flag. */
static uint64_t parse_duration(const char *flag, const char *s, double min_s, double max_s)
{
    uint64_t ns;
    char err[256];
    if (duration_parse(s, seconds_ns(min_s), seconds_ns(max_s), &ns, err, sizeof(err)) != 0) {
        fprintf(stderr, "ota-controller: --%s %s\n", flag, err);
        exit(2);
    }
    return ns;
}

static void parse_options(int argc, char **argv, options *o)
{
    char host[200] = "ota-controller";
    gethostname(host, sizeof(host) - 1);
    snprintf(o->identity, sizeof(o->identity), "%s_%d", host, (int)getpid());
    o->health_address = ":8081";
    o->metrics_address = ":8080";
    o->qps = 20;
    o->burst = 30;
    o->ctl = (controller_config){
        .reconcile = {.max_concurrent_pulls = 10, .pull_timeout_s = 600,
                      .helper_image = "busybox:1.36-musl", .backoff_limit = 0},
        .leader_elect = 1,
        .leader = {.namespace = NULL, .name = "ota-controller", .identity = o->identity,
                   .lease_ns = seconds_ns(15), .renew_deadline_ns = seconds_ns(10),
                   .retry_ns = seconds_ns(2)},
        .resync_ns = seconds_ns(30),
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_KUBECONFIG:
            o->kubeconfig = optarg;
            break;
        case OPT_QPS:
            o->qps = parse_number("kube-api-qps", optarg, 0.1, 100000);
            break;
        case OPT_BURST:
            o->burst = (int)parse_number("kube-api-burst", optarg, 1, 100000);
            break;
        case OPT_MAX_PULLS:
            o->ctl.reconcile.max_concurrent_pulls = (int)parse_number("max-concurrent-pulls", optarg, 1, 10000);
            break;
        case OPT_PULL_TIMEOUT:
            /* activeDeadlineSeconds is whole seconds: a fraction rounds up */
            o->ctl.reconcile.pull_timeout_s =
                (long)((parse_duration("pull-timeout", optarg, 1, 86400) + 999999999ull) /
                       1000000000ull);
            break;
        case OPT_HELPER:
            o->ctl.reconcile.helper_image = optarg;
            break;
        case OPT_BACKOFF:
            o->ctl.reconcile.backoff_limit = (int)parse_number("job-backoff-limit", optarg, 0, 2);
            break;
        case OPT_ELECT:
            o->ctl.leader_elect = optarg == NULL || strcmp(optarg, "true") == 0;
            if (optarg != NULL && strcmp(optarg, "true") != 0 && strcmp(optarg, "false") != 0) {
                fprintf(stderr, "ota-controller: --leader-elect is true or false\n");
                exit(2);
            }
            break;
        case OPT_ELECT_NS:
            o->ctl.leader.namespace = optarg;
            break;
        case OPT_ELECT_NAME:
            o->ctl.leader.name = optarg;
            break;
        case OPT_ELECT_ID:
            o->ctl.leader.identity = optarg;
            break;
        case OPT_ELECT_LEASE:
            o->ctl.leader.lease_ns = parse_duration("leader-elect-lease-duration", optarg, 1, 3600);
            break;
        case OPT_ELECT_RENEW:
            o->ctl.leader.renew_deadline_ns = parse_duration("leader-elect-renew-deadline", optarg, 0.5, 3600);
            break;
        case OPT_ELECT_RETRY:
            o->ctl.leader.retry_ns = parse_duration("leader-elect-retry-period", optarg, 0.1, 3600);
            break;
        case OPT_RESYNC:
            o->ctl.resync_ns = parse_duration("resync-period", optarg, 1, 86400);
            break;
        case OPT_HEALTH:
            o->health_address = optarg;
            break;
        case OPT_METRICS:
            o->metrics_address = optarg;
            break;
        case OPT_LOG_LEVEL:
        case OPT_LOG_FORMAT: {
            char err[160];
            if (log_set_from_flag(c == OPT_LOG_LEVEL ? "log-level" : "log-format", optarg, err,
                                  sizeof(err)) != 0) {
                fprintf(stderr, "ota-controller: %s\n", err);
                exit(2);
            }
            break;
        }
        case OPT_VERSION:
            printf("ota-controller %s (commit %s)\n", OTA_VERSION, OTA_COMMIT);
            exit(0);
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ota-controller: unexpected argument \"%s\"\n", argv[optind]);
        exit(2);
    }
    if (o->ctl.leader.renew_deadline_ns >= o->ctl.leader.lease_ns ||
        o->ctl.leader.retry_ns >= o->ctl.leader.renew_deadline_ns) {
        fprintf(stderr, "ota-controller: want retry period < renew deadline < lease duration\n");
        exit(2);
    }
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
    static options o;
    parse_options(argc, argv, &o);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    char err[512];
    kube_config cfg;
    /* --kubeconfig, else $KUBECONFIG, else in-cluster (client-go's order) */
    const char *env = getenv("KUBECONFIG");
    int rc = o.kubeconfig != NULL || (env != NULL && env[0] != '\0')
                 ? kube_config_load(&cfg, o.kubeconfig, env, NULL, err, sizeof(err))
                 : kube_config_load_incluster(&cfg, KUBE_SA_DIR, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "ota-controller: %s\n", err);
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
        fprintf(stderr, "ota-controller: %s\n", err);
        return 1;
    }
    static app a;
    httpd health, metrics;
    if (httpd_open(&health, o.health_address, route_health, &a, err, sizeof(err)) != 0 ||
        httpd_open(&metrics, o.metrics_address, route_metrics, &a, err, sizeof(err)) != 0) {
        fprintf(stderr, "ota-controller: %s\n", err);
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

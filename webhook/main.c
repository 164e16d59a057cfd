/*
 * main.c - ota-webhook's command line, signals and certificate polling.
 *
 * The main thread parses flags, loads the certificate, starts the workers
 * (server.c) and then only waits: for SIGTERM/SIGINT, and between signals it
 * polls the certificate files.  SIGTERM drains and exits 0; SIGHUP re-reads
 * the certificate pair (kill -HUP is what operators try first; by default
 * it would kill the process and the requests in flight).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ota_names.h"
#include "server.h"
#include "tls.h"
#include "version.h"

typedef struct options {
    server_config server;
    const char *cert_file, *key_file;
    int tls_min_version;
    int http2;
    unsigned cert_poll_ms;
} options;

/* Reachable from a global until exit, so LeakSanitizer sees the workers'
 * memory as live rather than leaked. */
static server *the_server;
static tls_store the_tls;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ota-webhook --tls-cert-file FILE --tls-private-key-file FILE [options]\n"
            "\n"
            "The ota-prepull admission webhook: POST /mutate and POST /validate over TLS.\n"
            "\n"
            "  --tls-cert-file FILE                serving certificate chain (PEM); re-read when it changes\n"
            "  --tls-private-key-file FILE         its private key (PEM)\n"
            "  --tls-min-version V                 VersionTLS12 (default) or VersionTLS13\n"
            "  --bind-address HOST:PORT            admission port (default :9443)\n"
            "  --health-probe-bind-address H:P     plain HTTP /livez, /healthz, /readyz (default :8081)\n"
            "  --metrics-bind-address H:P          plain HTTP /metrics (default :8080)\n"
            "  --http2                             offer HTTP/2 in ALPN (default: HTTP/1.1 only)\n"
            "  --threads N                         event loops (default: number of CPUs)\n"
            "  --max-request-bytes N               larger bodies get 413 (default 8388608)\n"
            "  --controller-username NAME          the controller's identity (default\n"
            "                                      " OTA_DEFAULT_CONTROLLER_USERNAME ")\n"
            "  --cert-poll-interval-ms N           how often the certificate files are checked (default 1000)\n"
            "  --request-read-timeout-seconds N    a stalled request or handshake is cut (default 10)\n"
            "  --shutdown-grace-seconds N          drain waits at most this long (default 25)\n"
            "  --max-connections N                 admission connections per process; more are closed at\n"
            "                                      accept (default 1024; lowered to fit RLIMIT_NOFILE)\n"
            "  --max-header-bytes N                request line + headers; a longer head closes the\n"
            "                                      connection (default 65536)\n"
            "  --max-buffered-bytes N              request input buffered by all connections together; over\n"
            "                                      it, requests still arriving wait (default 67108864)\n"
            "  --write-timeout-seconds N           a reply not wholly sent within N seconds is cut\n"
            "                                      (default 10)\n"
            "  --log-level debug|info|warn|error   (default info)\n"
            "  --log-format text|json              (default text)\n"
            "  --version                           print version and commit, and exit\n"
            "  -h, --help\n"
            "\n"
            "Memory ceiling with the defaults (docs/DECISIONS.md \"Webhook limits\"): about\n"
            "max-buffered-bytes + threads x 2 x max-request-bytes + max-connections x 200 KiB,\n"
            "i.e. 64 + 32 + 200 = ~300 MiB for 2 threads.\n"
            "\n"
            "Signals: SIGTERM/SIGINT drain and exit 0; SIGHUP re-reads the certificate pair.\n");
}

enum {
    OPT_CERT = 256,
    OPT_KEY,
    OPT_TLS_MIN,
    OPT_BIND,
    OPT_HEALTH,
    OPT_METRICS,
    OPT_HTTP2,
    OPT_THREADS,
    OPT_MAX_BYTES,
    OPT_CONTROLLER,
    OPT_CERT_POLL,
    OPT_READ_TIMEOUT,
    OPT_GRACE,
    OPT_LOG_LEVEL,
    OPT_MAX_CONNS,
    OPT_MAX_HEADER,
    OPT_MAX_BUFFERED,
    OPT_WRITE_TIMEOUT,
    OPT_LOG_FORMAT,
    OPT_VERSION,
};

static const struct option long_options[] = {
    {"tls-cert-file", required_argument, NULL, OPT_CERT},
    {"tls-private-key-file", required_argument, NULL, OPT_KEY},
    {"tls-min-version", required_argument, NULL, OPT_TLS_MIN},
    {"bind-address", required_argument, NULL, OPT_BIND},
    {"health-probe-bind-address", required_argument, NULL, OPT_HEALTH},
    {"metrics-bind-address", required_argument, NULL, OPT_METRICS},
    {"http2", no_argument, NULL, OPT_HTTP2},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"max-request-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"controller-username", required_argument, NULL, OPT_CONTROLLER},
    {"cert-poll-interval-ms", required_argument, NULL, OPT_CERT_POLL},
    {"request-read-timeout-seconds", required_argument, NULL, OPT_READ_TIMEOUT},
    {"shutdown-grace-seconds", required_argument, NULL, OPT_GRACE},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"max-connections", required_argument, NULL, OPT_MAX_CONNS},
    {"max-header-bytes", required_argument, NULL, OPT_MAX_HEADER},
    {"max-buffered-bytes", required_argument, NULL, OPT_MAX_BUFFERED},
    {"write-timeout-seconds", required_argument, NULL, OPT_WRITE_TIMEOUT},
    {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A whole decimal number within [min, max], or exit 2 naming the flag. */
static unsigned long long parse_number(const char *flag, const char *s, unsigned long long min,
                                       unsigned long long max)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] == '\0' || s[0] == '-' || *end != '\0' || errno != 0 || v < min || v > max) {
        fprintf(stderr, "ota-webhook: --%s wants a whole number from %llu to %llu, got \"%s\"\n",
                flag, min, max, s);
        exit(2);
    }
    return v;
}

static void parse_options(int argc, char **argv, options *o)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (options){
        .server =
            {
                .bind_address = ":9443",
                .health_address = ":8081",
                .metrics_address = ":8080",
                .threads = cpus > 0 ? (int)cpus : 1,
                .max_request_bytes = 8u << 20,
                .controller_username = OTA_DEFAULT_CONTROLLER_USERNAME,
                .read_timeout_ms = 10000,
                .shutdown_grace_ms = 25000,
                .max_connections = 1024,
                .max_header_bytes = 64u << 10,
                .max_buffered_bytes = 64u << 20,
                .write_timeout_ms = 10000,
                .version = OTA_VERSION,
                .commit = OTA_COMMIT,
            },
        .tls_min_version = TLS1_2_VERSION,
        .cert_poll_ms = 1000,
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_CERT:
            o->cert_file = optarg;
            break;
        case OPT_KEY:
            o->key_file = optarg;
            break;
        case OPT_TLS_MIN:
            if (strcmp(optarg, "VersionTLS12") == 0 || strcmp(optarg, "1.2") == 0) {
                o->tls_min_version = TLS1_2_VERSION;
            } else if (strcmp(optarg, "VersionTLS13") == 0 || strcmp(optarg, "1.3") == 0) {
                o->tls_min_version = TLS1_3_VERSION;
            } else {
                fprintf(stderr, "ota-webhook: --tls-min-version wants VersionTLS12 or VersionTLS13, got \"%s\"\n",
                        optarg);
                exit(2);
            }
            break;
        case OPT_BIND:
            o->server.bind_address = optarg;
            break;
        case OPT_HEALTH:
            o->server.health_address = optarg;
            break;
        case OPT_METRICS:
            o->server.metrics_address = optarg;
            break;
        case OPT_HTTP2:
            o->http2 = 1;
            break;
        case OPT_THREADS:
            o->server.threads = (int)parse_number("threads", optarg, 1, 256);
            break;
        case OPT_MAX_BYTES:
            o->server.max_request_bytes =
                (size_t)parse_number("max-request-bytes", optarg, 1024, 1u << 30);
            break;
        case OPT_CONTROLLER:
            o->server.controller_username = optarg;
            break;
        case OPT_CERT_POLL:
            o->cert_poll_ms = (unsigned)parse_number("cert-poll-interval-ms", optarg, 10, 3600000);
            break;
        case OPT_READ_TIMEOUT:
            o->server.read_timeout_ms =
                (unsigned)parse_number("request-read-timeout-seconds", optarg, 1, 3600) * 1000;
            break;
        case OPT_GRACE:
            o->server.shutdown_grace_ms =
                (unsigned)parse_number("shutdown-grace-seconds", optarg, 0, 3600) * 1000;
            break;
        case OPT_MAX_CONNS:
            o->server.max_connections =
                (size_t)parse_number("max-connections", optarg, 1, 1u << 20);
            break;
        case OPT_MAX_HEADER:
            o->server.max_header_bytes =
                (size_t)parse_number("max-header-bytes", optarg, 1024, 1u << 20);
            break;
        case OPT_MAX_BUFFERED:
            o->server.max_buffered_bytes =
                (size_t)parse_number("max-buffered-bytes", optarg, 1u << 16, 1ull << 40);
            break;
        case OPT_WRITE_TIMEOUT:
            o->server.write_timeout_ms =
                (unsigned)parse_number("write-timeout-seconds", optarg, 1, 3600) * 1000;
            break;
        case OPT_LOG_LEVEL:
        case OPT_LOG_FORMAT: {
            char err[160];
            if (log_set_from_flag(c == OPT_LOG_LEVEL ? "log-level" : "log-format", optarg, err,
                                  sizeof(err)) != 0) {
                fprintf(stderr, "ota-webhook: %s\n", err);
                exit(2);
            }
            break;
        }
        case OPT_VERSION:
            printf("ota-webhook %s (commit %s)\n", OTA_VERSION, OTA_COMMIT);
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
        fprintf(stderr, "ota-webhook: unexpected argument \"%s\"\n", argv[optind]);
        exit(2);
    }
    if (o->cert_file == NULL || o->key_file == NULL) {
        fprintf(stderr, "ota-webhook: --tls-cert-file and --tls-private-key-file are required\n");
        usage(stderr);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    options o;
    parse_options(argc, argv, &o);

    /* Signals are taken synchronously by this thread; workers never see
     * them, so an event loop is never interrupted mid-write. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    char err[512];
    if (tls_store_init(&the_tls, o.cert_file, o.key_file, o.tls_min_version, o.http2,
                       server_tls_info_callback, err,
                       sizeof(err)) != 0) {
        fprintf(stderr, "ota-webhook: %s\n", err);
        return 1;
    }
    the_server = server_create(&o.server, &the_tls, err, sizeof(err));
    if (the_server == NULL) {
        fprintf(stderr, "ota-webhook: %s\n", err);
        return 1;
    }
    if (server_start(the_server) != 0) {
        fprintf(stderr, "ota-webhook: cannot start worker threads\n");
        return 1;
    }
    log_line l;
    log_begin(&l, LOG_INFO, "serving");
    log_str(&l, "version", OTA_VERSION);
    log_str(&l, "commit", OTA_COMMIT);
    log_str(&l, "address", o.server.bind_address);
    log_str(&l, "health", o.server.health_address);
    log_str(&l, "metrics", o.server.metrics_address);
    log_int(&l, "threads", o.server.threads);
    log_str(&l, "http2", o.http2 ? "on" : "off");
    log_end(&l, LOG_INFO);

    struct timespec poll = {o.cert_poll_ms / 1000, (long)(o.cert_poll_ms % 1000) * 1000000L};
    for (;;) {
        int sig = sigtimedwait(&sigs, NULL, &poll);
        if (sig == SIGTERM || sig == SIGINT) {
            log_msg(LOG_INFO, "shutting down: draining in-flight requests", "signal %d", sig);
            break;
        }
        if (sig == SIGHUP) {
            log_msg(LOG_INFO, "SIGHUP: re-reading the certificate pair", NULL);
            tls_store_reload(&the_tls);
            continue;
        }
        tls_store_poll(&the_tls);
    }
    server_request_shutdown(the_server);
    server_wait_drained(the_server);
    log_msg(LOG_INFO, "stopped", NULL);
    return 0;
}

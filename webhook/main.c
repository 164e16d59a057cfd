/*
 * main.c - ota-webhook's start, signals and certificate polling.
 *
 * The main thread takes the flags (options.c), loads the certificate,
 * starts the workers (server.c) and then only waits: for SIGTERM/SIGINT,
 * and between signals it polls the certificate files.  SIGTERM drains and
 * exits 0; SIGHUP re-reads the certificate pair (kill -HUP is what
 * operators try first; by default it would kill the process and the
 * requests in flight).
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "options.h"
#include "server.h"
#include "tls.h"
#include "version.h"

/* Reachable from a global until exit, so LeakSanitizer sees the workers'
 * memory as live rather than leaked. */
static server *the_server;
static tls_store the_tls;

int main(int argc, char **argv)
{
    options o = {0};
    char err[2048];
    flagtab_result parsed =
        options_parse(argc, argv, (int)sysconf(_SC_NPROCESSORS_ONLN), &o, err, sizeof(err));
    int status = flagtab_report(&options_flagtab, parsed, err, OTA_VERSION, OTA_COMMIT,
                                o.log_format == LOG_FORMAT_JSON);
    if (status >= 0)
        return status;
    log_set_level(o.log_level);
    log_set_format(o.log_format);
    o.server.version = OTA_VERSION;
    o.server.commit = OTA_COMMIT;

    /* Signals are taken synchronously by this thread; workers never see
     * them, so an event loop is never interrupted mid-write. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (tls_store_init(&the_tls, o.cert_file, o.key_file, o.client_ca_file, o.tls_min_version,
                       server_tls_info_callback, err, sizeof(err)) != 0) {
        log_startup_error("ota-webhook", err);
        return 1;
    }
    the_server = server_create(&o.server, &the_tls, err, sizeof(err));
    if (the_server == NULL) {
        log_startup_error("ota-webhook", err);
        return 1;
    }
    if (server_start(the_server) != 0) {
        log_startup_error("ota-webhook", "cannot start worker threads");
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

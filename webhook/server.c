/*
 * server.c - see server.h.
 *
 * Every worker thread runs its own h2o context and event loop and accepts
 * from its own dup() of each listening socket, so a worker closes its
 * listeners on shutdown without touching the others'.  Each of the three
 * ports gets a host of its own with one route (route.h), so /mutate is
 * never served in plain HTTP and /metrics never over the TLS port.  This
 * file keeps the workers, the TLS refresh and the drain; a connection's
 * life is conn.c's, the answers reply.c's (server_int.h has the map).
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <h2o.h>

#include "clock.h"
#include "conn.h"
#include "guard.h"
#include "listen.h"
#include "log.h"
#include "reply.h"
#include "route.h"
#include "server_int.h"

/* The worker whose event loop runs on this thread (for the TLS info
 * callback, which OpenSSL calls without our context). */
static _Thread_local worker *current_worker;

/* OpenSSL's info callback (tls_store): the SSL of a connection exists from
 * its first bytes on; what becomes of its handshake is conn.c's to count. */
void server_tls_info_callback(const SSL *ssl, int where, int ret)
{
    worker *w = current_worker;
    if (w == NULL)
        return;
    if (where & SSL_CB_HANDSHAKE_START)
        conn_handshake_started(w, ssl);
    else if (where & SSL_CB_HANDSHAKE_DONE)
        conn_handshake_done(w, ssl);
    else if ((where & SSL_CB_WRITE_ALERT) == SSL_CB_WRITE_ALERT && (ret >> 8) == SSL3_AL_FATAL)
        conn_handshake_alert_sent(w, ssl, ret & 0xff);
    /* SSL_accept returns: <= 0 also while it waits for bytes; the
     * connection looks at OpenSSL's error queue to tell. */
    else if ((where & SSL_CB_ACCEPT_EXIT) == SSL_CB_ACCEPT_EXIT && ret <= 0)
        conn_handshake_stopped(w, ssl);
}

/* ---- workers ------------------------------------------------------------ */

static void refresh_tls(worker *w)
{
    if (w->ssl_ctx != NULL && tls_store_generation(w->srv->tls) == w->tls_generation)
        return;
    SSL_CTX *old = w->ssl_ctx;
    w->ssl_ctx = tls_store_acquire(w->srv->tls, &w->tls_generation);
    w->accept[L_TLS].ssl_ctx = w->ssl_ctx;
    /* Every connection accepted with the old context holds a reference of
     * its own (conn_rec), released when it closes. */
    if (old != NULL)
        SSL_CTX_free(old);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    server *srv = w->srv;
    current_worker = w;
    uint64_t drain_deadline = 0;
    for (;;) {
        /* A short wait bounds how late a worker sees a new certificate or a
         * shutdown; an idle loop wakes ten times a second. */
        h2o_evloop_run(w->ctx.loop, 100);
        uint64_t now = clock_mono_ns();
        refresh_tls(w);
        conn_resume_accepting(w, now);
        conn_sweep(w, now);
        if (atomic_load(&srv->shutdown) && !w->draining) {
            w->draining = 1;
            /* What is already in the accept queue was sent to us: take it,
             * it counts as arriving for GUARD_FRESH_NS. */
            if (w->listeners[L_TLS] != NULL && w->accept_resume_ns[L_TLS] == 0)
                conn_accept_pending(w, L_TLS, 1024);
            /* Only the admission port closes: the probes keep answering
             * during the drain (/readyz says 503), as the kubelet expects
             * of a terminating pod. */
            conn_unlisten(w, L_TLS);
            /* Keep-alive stops: answers carry Connection: close. */
            h2o_context_request_shutdown(&w->ctx);
            drain_deadline = now + (uint64_t)srv->shutdown_grace_ms * 1000000u;
        }
        if (w->draining &&
            ((w->in_flight == 0 && !conn_receiving(w, now)) || clock_mono_ns() > drain_deadline))
            break;
    }
    pthread_mutex_lock(&srv->drained_lock);
    srv->n_drained++;
    pthread_cond_signal(&srv->drained_cond);
    pthread_mutex_unlock(&srv->drained_lock);
    /* Stay alive until the process exits: h2o keeps per-thread buffer
     * caches in thread-local storage, which a returning thread would
     * orphan (and LeakSanitizer would rightly call leaked). */
    for (;;)
        pause();
    return NULL;
}

static void init_worker(server *srv, worker *w)
{
    memset(w, 0, sizeof(*w));
    w->srv = srv;
    h2o_linklist_init_anchor(&w->conns);
    h2o_context_init(&w->ctx, h2o_evloop_create(), &srv->globalconf);
    refresh_tls(w);
    for (int k = 0; k < L_COUNT; k++) {
        w->accept[k].ctx = &w->ctx;
        w->accept[k].hosts = srv->hosts[k];
        w->accept[k].ssl_ctx = k == L_TLS ? w->ssl_ctx : NULL;
        int fd = dup(srv->listen_fd[k]);
        if (fd < 0) {
            log_msg(LOG_ERROR, "dup of a listening socket failed", "%s", strerror(errno));
            exit(1);
        }
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        conn_listen(w, (enum listener_kind)k, fd);
    }
}

/* Raises the soft descriptor limit to the hard one, and lowers the
 * connection limit if even that does not leave room for the probes. */
static size_t fit_descriptor_limit(size_t requested, int threads)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return requested;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            rl = raised;
    }
    uint64_t nofile = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
    size_t cap = guard_connection_cap(requested, nofile, (unsigned)threads);
    if (cap < requested) {
        log_line l;
        log_begin(&l, LOG_WARN, "descriptor limit lowers --max-connections");
        log_int(&l, "nofile", (long long)nofile);
        log_int(&l, "max_connections", (long long)cap);
        log_end(&l, LOG_WARN);
    }
    return cap;
}

/* A port's host, its h2o errors answered as Status; returns the path "/"
 * for the port's route. */
static h2o_pathconf_t *register_host(server *srv, enum listener_kind kind, const char *name)
{
    h2o_hostconf_t *host =
        h2o_config_register_host(&srv->globalconf, h2o_iovec_init(name, strlen(name)), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    reply_status_filter_register(path, srv->limits.max_request_bytes);
    reply_status_filter_register(&host->fallback_path, srv->limits.max_request_bytes);
    srv->hosts[kind][0] = host;
    srv->hosts[kind][1] = NULL;
    return path;
}

server *server_create(const server_config *cfg, tls_store *tls, char *err, size_t errlen)
{
    server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    srv->threads = cfg->threads;
    srv->shutdown_grace_ms = cfg->shutdown_grace_ms;
    srv->tls = tls;
    atomic_store(&srv->spare_fd, -1);
    pthread_mutex_init(&srv->tlsfail_lock, NULL);
    pthread_mutex_init(&srv->drained_lock, NULL);
    pthread_cond_init(&srv->drained_cond, NULL);
    const char *addresses[L_COUNT] = {cfg->bind_address, cfg->health_address,
                                      cfg->metrics_address};
    for (int k = 0; k < L_COUNT; k++)
        srv->listen_fd[k] = -1;
    for (int k = 0; k < L_COUNT; k++) {
        srv->listen_fd[k] = listen_open(addresses[k], err, errlen);
        if (srv->listen_fd[k] < 0) {
            server_destroy(srv);
            return NULL;
        }
    }
    h2o_config_init(&srv->globalconf);
    srv->globalconf.server_name = h2o_iovec_init(H2O_STRLIT("ota-webhook"));
    /* h2o answers 413 itself, before buffering a body over the limit. */
    srv->globalconf.max_request_entity_size = cfg->max_request_bytes;
    srv->globalconf.http1.req_timeout = cfg->read_timeout_ms;
    /* The handshake deadline is the sweep's (conn.c, counted on /metrics);
     * h2o's own is a backstop a second later. */
    srv->globalconf.handshake_timeout = cfg->handshake_timeout_ms + 1000;
    /* No HTTP/2 (docs/DECISIONS.md "No HTTP/2"): no ALPN offers it, and
     * no "PRI *" prior-knowledge preface or Upgrade: h2c on an HTTP/1
     * connection switches to it. */
    srv->globalconf.http1.upgrade_to_http2 = 0;
    srv->limits = (guard_limits){
        .max_connections = cfg->max_connections,
        .max_header_bytes = cfg->max_header_bytes,
        .max_request_bytes = cfg->max_request_bytes,
        .max_buffered_bytes = cfg->max_buffered_bytes,
        .write_timeout_ns = (uint64_t)cfg->write_timeout_ms * 1000000u,
        .handshake_timeout_ns = (uint64_t)cfg->handshake_timeout_ms * 1000000u,
        .upload_grace_ns = (uint64_t)cfg->upload_grace_ms * 1000000u,
        .upload_min_rate = cfg->upload_min_rate,
    };
    srv->limits.max_connections = fit_descriptor_limit(cfg->max_connections, cfg->threads);
    conn_reopen_spare(srv);
    route_admit_register(register_host(srv, L_TLS, "webhook"), cfg->controller_username,
                         cfg->co_writer_usernames);
    route_probe_register(register_host(srv, L_HEALTH, "health"), srv);
    route_metrics_register(register_host(srv, L_METRICS, "metrics"), srv, cfg->version,
                           cfg->commit);
    return srv;
}

int server_start(server *srv)
{
    srv->workers = calloc((size_t)srv->threads, sizeof(worker));
    if (srv->workers == NULL)
        return -1;
    /* Contexts are created here, on the main thread, before any worker
     * runs: the workers array is complete when /metrics reads it. */
    for (int i = 0; i < srv->threads; i++)
        init_worker(srv, &srv->workers[i]);
    for (int i = 0; i < srv->threads; i++) {
        if (pthread_create(&srv->workers[i].thread, NULL, worker_main, &srv->workers[i]) != 0)
            return -1;
    }
    return 0;
}

void server_request_shutdown(server *srv)
{
    atomic_store(&srv->shutdown, 1);
}

void server_wait_drained(server *srv)
{
    pthread_mutex_lock(&srv->drained_lock);
    while (srv->n_drained < srv->threads)
        pthread_cond_wait(&srv->drained_cond, &srv->drained_lock);
    pthread_mutex_unlock(&srv->drained_lock);
}

void server_destroy(server *srv)
{
    if (srv == NULL)
        return;
    for (int k = 0; k < L_COUNT; k++)
        if (srv->listen_fd[k] >= 0)
            close(srv->listen_fd[k]);
    int spare = atomic_exchange(&srv->spare_fd, -1);
    if (spare >= 0)
        close(spare);
    /* Workers' contexts are left to process exit: connections still open
     * at the end of a drain belong to them, and tearing them down buys
     * nothing when the process is about to go. */
    free(srv);
}

/*
 * server.c - see server.h.
 *
 * Every worker thread runs its own h2o context and event loop and accepts
 * from its own dup() of each listening socket, so a worker closes its
 * listeners on shutdown without touching the others'.  Handlers follow h2o's
 * own (its lib/handler/ directory): a struct embedding h2o_handler_t, a static on_req,
 * registered on a path.  Each of the three ports gets a host of its own, so
 * /mutate is never served in plain HTTP and /metrics never over the TLS port.
 */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <h2o.h>

#include "admit.h"
#include "arena.h"
#include "clock.h"
#include "listen.h"
#include "log.h"
#include "review.h"

enum listener_kind { L_TLS, L_HEALTH, L_METRICS, L_COUNT };

typedef struct worker worker;

typedef struct route_handler {
    h2o_handler_t super;
    enum listener_kind kind;
    server *srv;
} route_handler;

struct worker {
    server *srv;
    pthread_t thread;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept[L_COUNT];
    h2o_socket_t *listeners[L_COUNT];
    SSL_CTX *ssl_ctx; /* our reference to the context new connections get */
    unsigned tls_generation;
    size_t in_flight; /* requests whose response is not yet sent; worker-local */
    int draining;
    stats stats;
};

struct server {
    server_config cfg;
    tls_store *tls;
    h2o_globalconf_t globalconf;
    h2o_hostconf_t *hosts[L_COUNT][2]; /* NULL-terminated lists for accept ctxs */
    int listen_fd[L_COUNT];
    worker *workers;
    atomic_int shutdown;
    pthread_mutex_t drained_lock;
    pthread_cond_t drained_cond;
    int n_drained;
};

static worker *worker_of(h2o_req_t *req)
{
    return (worker *)((char *)req->conn->ctx - offsetof(worker, ctx));
}

/* ---- listeners ---------------------------------------------------------- */

static void on_accept(h2o_socket_t *listener, const char *err)
{
    if (err != NULL)
        return;
    h2o_accept_ctx_t *accept_ctx = listener->data;
    h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
    if (sock != NULL) /* NULL: another worker won the race for it */
        h2o_accept(accept_ctx, sock);
}

/* ---- responses ---------------------------------------------------------- */

static void send_response(h2o_req_t *req, int status, const char *reason, const char *type,
                          const char *body, size_t len)
{
    static h2o_generator_t generator = {NULL, NULL};
    /* Draining: this answer closes its HTTP/1.1 connection, so the client
     * reconnects to a replica that stays. */
    if (atomic_load(&worker_of(req)->srv->shutdown))
        req->http1_is_persistent = 0;
    req->res.status = status;
    req->res.reason = reason;
    /* Always a content-length, so keep-alive survives error answers. */
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type,
                   strlen(type));
    h2o_start_response(req, &generator);
    h2o_iovec_t buf = h2o_iovec_init(body, len);
    h2o_send(req, &buf, 1, H2O_SEND_STATE_FINAL);
}

static const char *http_phrase(int code)
{
    switch (code) {
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    default:
        return "Error";
    }
}

/* A meta/v1 Status body; reason is the Status reason ("NotFound"). */
static void send_status(h2o_req_t *req, int code, const char *reason, const char *message)
{
    arena a;
    size_t len = 0;
    arena_init(&a);
    const char *body = review_encode_status(code, reason, message, &a, &len);
    if (body == NULL) {
        body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\"}";
        len = strlen(body);
    }
    /* copy into the request's pool: the arena is gone when h2o writes */
    char *copy = h2o_mem_alloc_pool(&req->pool, len);
    memcpy(copy, body, len);
    arena_free(&a);
    send_response(req, code, http_phrase(code), "application/json", copy, len);
}

static void send_text(h2o_req_t *req, int code, const char *reason, const char *text)
{
    send_response(req, code, reason, "text/plain; charset=utf-8", text, strlen(text));
}

static int is_method(h2o_req_t *req, const char *method)
{
    return h2o_memis(req->method.base, req->method.len, method, strlen(method));
}

static int is_path(h2o_req_t *req, const char *path)
{
    return h2o_memis(req->path_normalized.base, req->path_normalized.len, path, strlen(path));
}

static void method_not_allowed(h2o_req_t *req, const char *allow)
{
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, allow, strlen(allow));
    char message[128];
    snprintf(message, sizeof(message), "method %.*s is not allowed here; use %s",
             (int)(req->method.len > 16 ? 16 : req->method.len), req->method.base, allow);
    send_status(req, 405, "MethodNotAllowed", message);
}

/* ---- in-flight accounting ---------------------------------------------- */

/* Runs when h2o disposes of the request, i.e. after its response is sent. */
static void on_request_disposed(void *p)
{
    worker *w = *(worker **)p;
    w->in_flight--;
}

static void track_request(worker *w, h2o_req_t *req)
{
    worker **slot = h2o_mem_alloc_shared(&req->pool, sizeof(*slot), on_request_disposed);
    *slot = w;
    w->in_flight++;
}

/* ---- routes ------------------------------------------------------------- */

static void *pool_block(void *ctx, size_t n)
{
    return h2o_mem_alloc_pool(ctx, n);
}

static void log_outcome(const admit_outcome *out, admit_phase phase, arena *a)
{
    if (out->result != ADMIT_DENIED && out->result != ADMIT_PATCHED)
        return;
    log_line l;
    log_begin(&l, LOG_INFO, out->result == ADMIT_DENIED ? "denied" : "mutated");
    log_str(&l, "webhook", phase == ADMIT_MUTATE ? "mutate" : "validate");
    log_sv(&l, "uid", out->uid);
    log_sv(&l, "user", out->username);
    log_str(&l, "object", out->object_ref);
    if (out->result == ADMIT_DENIED) {
        log_str(&l, "rule", out->rule);
        log_str(&l, "message", out->message);
    } else {
        log_str(&l, "mutations", admit_mutation_names(out->mutations, a));
    }
    log_end(&l, LOG_INFO);
}

static void handle_admission(route_handler *self, worker *w, h2o_req_t *req)
{
    uint64_t start = clock_mono_ns();
    admit_phase phase;
    enum stats_path path;
    if (is_path(req, "/mutate")) {
        phase = ADMIT_MUTATE;
        path = STATS_MUTATE;
    } else if (is_path(req, "/validate")) {
        phase = ADMIT_VALIDATE;
        path = STATS_VALIDATE;
    } else {
        send_status(req, 404, "NotFound", "no such path: use POST /mutate or POST /validate");
        stats_record(&w->stats, STATS_OTHER, STATS_NOT_FOUND, clock_mono_ns() - start, NULL);
        return;
    }
    if (!is_method(req, "POST")) {
        method_not_allowed(req, "POST");
        stats_record(&w->stats, path, STATS_BAD_METHOD, clock_mono_ns() - start, NULL);
        return;
    }

    /* Everything the decision allocates lives in the request's pool. */
    arena a;
    arena_init_with(&a, pool_block, &req->pool);
    char now[32];
    clock_rfc3339(now, sizeof(now));
    admit_config cfg = {self->srv->cfg.controller_username};
    admit_outcome out;
    if (admit_review(phase, req->entity.base, req->entity.len, now, &cfg, &a, &out) != 0) {
        send_text(req, 500, "Internal Server Error", "out of memory\n");
        stats_record(&w->stats, path, STATS_ERROR, clock_mono_ns() - start, NULL);
        log_msg(LOG_ERROR, "out of memory deciding a request", NULL);
        return;
    }
    send_response(req, out.http_status, out.http_status == 200 ? "OK" : "Bad Request",
                  "application/json", out.body, out.body_len);
    stats_record(&w->stats, path, (enum stats_result)out.result, clock_mono_ns() - start, &out);
    if (out.result == ADMIT_INVALID) {
        log_line l;
        log_begin(&l, LOG_WARN, "bad request");
        log_str(&l, "path", phase == ADMIT_MUTATE ? "/mutate" : "/validate");
        log_str(&l, "error", out.message);
        log_end(&l, LOG_WARN);
    }
    log_outcome(&out, phase, &a);
}

static void handle_health(worker *w, h2o_req_t *req)
{
    if (!is_path(req, "/healthz") && !is_path(req, "/readyz")) {
        send_status(req, 404, "NotFound", "no such path: use /healthz or /readyz");
        return;
    }
    if (!is_method(req, "GET") && !is_method(req, "HEAD")) {
        method_not_allowed(req, "GET, HEAD");
        return;
    }
    /* Not ready while draining, so the endpoint leaves the Service first. */
    if (is_path(req, "/readyz") && atomic_load(&w->srv->shutdown))
        send_text(req, 503, "Service Unavailable", "shutting down\n");
    else
        send_text(req, 200, "OK", "ok\n");
}

static void handle_metrics(worker *w, h2o_req_t *req)
{
    if (!is_path(req, "/metrics")) {
        send_status(req, 404, "NotFound", "no such path: use /metrics");
        return;
    }
    if (!is_method(req, "GET") && !is_method(req, "HEAD")) {
        method_not_allowed(req, "GET, HEAD");
        return;
    }
    server *srv = w->srv;
    /* One per worker thread (--threads, or one per CPU): request memory,
     * not a VLA. */
    stats **blocks = h2o_mem_alloc_pool(&req->pool, sizeof(*blocks) * (size_t)srv->cfg.threads);
    for (int i = 0; i < srv->cfg.threads; i++)
        blocks[i] = &srv->workers[i].stats;
    strbuf t = {0};
    stats_render(&t, blocks, (size_t)srv->cfg.threads, srv->tls);
    if (t.failed) {
        strbuf_free(&t);
        send_text(req, 500, "Internal Server Error", "out of memory\n");
        return;
    }
    char *body = h2o_mem_alloc_pool(&req->pool, t.len);
    memcpy(body, t.data, t.len);
    size_t len = t.len;
    strbuf_free(&t);
    send_response(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
}

static int on_req(h2o_handler_t *h, h2o_req_t *req)
{
    route_handler *self = (route_handler *)h;
    worker *w = worker_of(req);
    track_request(w, req);
    switch (self->kind) {
    case L_TLS:
        handle_admission(self, w, req);
        break;
    case L_HEALTH:
        handle_health(w, req);
        break;
    default:
        handle_metrics(w, req);
        break;
    }
    return 0;
}

/* ---- workers ------------------------------------------------------------ */

static void refresh_tls(worker *w)
{
    if (w->ssl_ctx != NULL && tls_store_generation(w->srv->tls) == w->tls_generation)
        return;
    SSL_CTX *old = w->ssl_ctx;
    w->ssl_ctx = tls_store_acquire(w->srv->tls, &w->tls_generation);
    w->accept[L_TLS].ssl_ctx = w->ssl_ctx;
    if (old != NULL)
        SSL_CTX_free(old); /* open connections keep their own reference */
}

/* Only the admission port closes: the probes keep answering during the
 * drain (/readyz says 503), as the kubelet expects of a terminating pod. */
static void close_admission_listener(worker *w)
{
    if (w->listeners[L_TLS] != NULL) {
        h2o_socket_read_stop(w->listeners[L_TLS]);
        h2o_socket_close(w->listeners[L_TLS]);
        w->listeners[L_TLS] = NULL;
    }
}

static int note_http1_receiving(h2o_req_t *req, void *data)
{
    /* An idle keep-alive connection has consumed all its input; bytes
     * waiting in the buffer are a request still arriving. */
    h2o_socket_t *sock = req->conn->callbacks->get_socket != NULL
                             ? req->conn->callbacks->get_socket(req->conn)
                             : NULL;
    if (sock != NULL && sock->input != NULL && sock->input->size > 0)
        *(int *)data = 1;
    return 0;
}

/* Requests whose bytes are still arriving: not yet in_flight, but a drain
 * must wait for them as much as for the ones being answered. */
static int receiving(worker *w)
{
    int busy = 0;
    h2o_globalconf_t *g = &w->srv->globalconf;
    if (g->http1.callbacks.foreach_request != NULL)
        g->http1.callbacks.foreach_request(&w->ctx, note_http1_receiving, &busy);
    /* HTTP/2: h2o 2.2 has no foreach_request for it, and its connection
     * struct is not public; a connection still open after our GOAWAY counts
     * as busy.  Clients close a connection once its last stream is done
     * (curl and Go do), h2o closes idle ones after http2.idle_timeout, and
     * the grace period bounds the rest. */
    if (!h2o_linklist_is_empty(&w->ctx.http2._conns))
        busy = 1;
    return busy;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    server *srv = w->srv;
    uint64_t drain_deadline = 0;
    for (;;) {
        /* A short wait bounds how late a worker sees a new certificate or a
         * shutdown; an idle loop wakes ten times a second. */
        h2o_evloop_run(w->ctx.loop, 100);
        refresh_tls(w);
        if (atomic_load(&srv->shutdown) && !w->draining) {
            w->draining = 1;
            close_admission_listener(w);
            /* HTTP/2 connections get GOAWAY; HTTP/1 ones stop keep-alive. */
            h2o_context_request_shutdown(&w->ctx);
            /* h2o 2.2 sends a second GOAWAY a second later and from then on
             * drops DATA frames, which would cut an upload in progress: the
             * first GOAWAY already stops new streams, so skip the second. */
            h2o_timeout_unlink(&w->ctx.http2._graceful_shutdown_timeout);
            drain_deadline = clock_mono_ns() + (uint64_t)srv->cfg.shutdown_grace_ms * 1000000u;
        }
        if (w->draining && ((w->in_flight == 0 && !receiving(w)) || clock_mono_ns() > drain_deadline))
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
        w->listeners[k] = h2o_evloop_socket_create(w->ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
        w->listeners[k]->data = &w->accept[k];
        h2o_socket_read_start(w->listeners[k], on_accept);
    }
}

static void register_route(server *srv, enum listener_kind kind, const char *name)
{
    h2o_hostconf_t *host =
        h2o_config_register_host(&srv->globalconf, h2o_iovec_init(name, strlen(name)), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    route_handler *h = (route_handler *)h2o_create_handler(path, sizeof(*h));
    h->super.on_req = on_req;
    h->kind = kind;
    h->srv = srv;
    srv->hosts[kind][0] = host;
    srv->hosts[kind][1] = NULL;
}

server *server_create(const server_config *cfg, tls_store *tls, char *err, size_t errlen)
{
    server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    srv->cfg = *cfg;
    srv->tls = tls;
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
    srv->globalconf.handshake_timeout = cfg->read_timeout_ms;
    register_route(srv, L_TLS, "webhook");
    register_route(srv, L_HEALTH, "health");
    register_route(srv, L_METRICS, "metrics");
    return srv;
}

int server_start(server *srv)
{
    srv->workers = calloc((size_t)srv->cfg.threads, sizeof(worker));
    if (srv->workers == NULL)
        return -1;
    /* Contexts are created here, on the main thread, before any worker
     * runs: the workers array is complete when /metrics reads it. */
    for (int i = 0; i < srv->cfg.threads; i++)
        init_worker(srv, &srv->workers[i]);
    for (int i = 0; i < srv->cfg.threads; i++) {
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
    while (srv->n_drained < srv->cfg.threads)
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
    /* Workers' contexts are left to process exit: connections still open
     * at the end of a drain belong to them, and tearing them down buys
     * nothing when the process is about to go. */
    free(srv);
}

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
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <h2o.h>

#include "admit.h"
#include "arena.h"
#include "clock.h"
#include "guard.h"
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

/*
 * One accepted connection, from accept to close (h2o_socket_t.on_close).
 * It holds the connection's own reference to the SSL_CTX it was accepted
 * with: h2o 2.2.5 keeps only a raw pointer and calls SSL_new() when the
 * ClientHello arrives, which may be after any number of rotations.  The
 * record outlives the socket while requests of it are still disposed of.
 */
typedef struct conn_rec {
    h2o_linklist_t link; /* in worker.conns while the socket is open */
    worker *w;
    h2o_socket_t *sock; /* NULL once closed */
    SSL_CTX *ssl_ctx;   /* our reference; TLS port only */
    SSL *ssl;           /* once its handshake started (info callback) */
    enum listener_kind kind;
    int uses_spare;     /* took the spare descriptor's place */
    int http2;
    int paused;         /* we stopped reading it; read_cb is h2o's callback */
    int cut;
    h2o_socket_cb read_cb;
    unsigned answering; /* requests of it being answered */
    unsigned requests;
    uint64_t accepted_ns;
    size_t written_seen; /* sock->bytes_written at the last sweep */
    uint64_t writing_since_ns;
} conn_rec;

enum guard_counter {
    GC_REFUSED_LIMIT,   /* connection over --max-connections */
    GC_ACCEPT_EXHAUSTED, /* accept(): EMFILE, ENFILE, ENOBUFS, ENOMEM */
    GC_ACCEPT_SPARE,    /* a probe accepted on the spare descriptor */
    GC_CUT_HEADERS,
    GC_CUT_WRITE_TIMEOUT,
    GC_PAUSED,
    GC_FRAMING,         /* 400: ambiguous framing */
    GC_N
};

struct worker {
    server *srv;
    pthread_t thread;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept[L_COUNT];
    h2o_socket_t *listeners[L_COUNT];
    unsigned accept_failures[L_COUNT];
    uint64_t accept_resume_ns[L_COUNT]; /* 0: accepting */
    SSL_CTX *ssl_ctx; /* our reference to the context new connections get */
    unsigned tls_generation;
    size_t in_flight; /* requests whose response is not yet sent; worker-local */
    int draining;
    int over_budget;
    h2o_linklist_t conns; /* conn_rec of every open connection */
    _Atomic size_t buffered; /* input buffered by this worker's connections */
    metrics_counter counters[GC_N];
    stats stats;
};

struct server {
    server_config cfg;
    tls_store *tls;
    h2o_globalconf_t globalconf;
    h2o_hostconf_t *hosts[L_COUNT][2]; /* NULL-terminated lists for accept ctxs */
    int listen_fd[L_COUNT];
    worker *workers;
    guard_limits limits;
    atomic_size_t open[L_COUNT]; /* connections open, per port */
    atomic_int spare_fd;         /* a descriptor kept to accept a probe with */
    atomic_int shutdown;
    pthread_mutex_t drained_lock;
    pthread_cond_t drained_cond;
    int n_drained;
};

/* The worker whose event loop runs on this thread (for the TLS info
 * callback, which OpenSSL calls without our context). */
static _Thread_local worker *current_worker;

static worker *worker_of(h2o_req_t *req)
{
    return (worker *)((char *)req->conn->ctx - offsetof(worker, ctx));
}

/* ---- connections ------------------------------------------------------- */

static void conn_rec_release(conn_rec *rec)
{
    if (rec->sock == NULL && rec->answering == 0)
        free(rec);
}

static void reopen_spare(server *srv)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    int none = -1;
    if (!atomic_compare_exchange_strong(&srv->spare_fd, &none, fd))
        close(fd);
}

/* h2o_socket_t.on_close: h2o has freed the connection's SSL (if any) by
 * now, so our reference to its context can go. */
static void on_conn_closed(void *data)
{
    conn_rec *rec = data;
    worker *w = rec->w;
    h2o_linklist_unlink(&rec->link);
    atomic_fetch_sub(&w->srv->open[rec->kind], 1);
    if (rec->ssl_ctx != NULL)
        SSL_CTX_free(rec->ssl_ctx);
    if (rec->uses_spare)
        reopen_spare(w->srv);
    rec->ssl_ctx = NULL;
    rec->ssl = NULL;
    rec->sock = NULL;
    conn_rec_release(rec);
}

static conn_rec *conn_of_sock(h2o_socket_t *sock)
{
    if (sock == NULL || sock->on_close.cb != on_conn_closed)
        return NULL;
    return sock->on_close.data;
}

static conn_rec *conn_of_req(h2o_req_t *req)
{
    if (req->conn->callbacks->get_socket == NULL)
        return NULL;
    return conn_of_sock(req->conn->callbacks->get_socket(req->conn));
}

/* OpenSSL's info callback (tls_store): the SSL of a connection exists from
 * its ClientHello on; the drain asks it whether a record is half in. */
void server_tls_info_callback(const SSL *ssl, int where, int ret)
{
    (void)ret;
    worker *w = current_worker;
    if (w == NULL || (where & SSL_CB_HANDSHAKE_START) == 0)
        return;
    /* h2o's BIO carries the h2o_socket_t; matched against our own list, so
     * nothing is dereferenced on a guess. */
    BIO *bio = SSL_get_rbio(ssl);
    void *sock = bio != NULL ? BIO_get_data(bio) : NULL;
    if (sock == NULL)
        return;
    for (h2o_linklist_t *n = w->conns.next; n != &w->conns; n = n->next) {
        conn_rec *rec = H2O_STRUCT_FROM_MEMBER(conn_rec, link, n);
        if (rec->sock == sock) {
            rec->ssl = (SSL *)ssl;
            return;
        }
    }
}

/* ---- listeners ---------------------------------------------------------- */

static void take_connection(worker *w, enum listener_kind kind, int fd, int uses_spare)
{
    server *srv = w->srv;
    size_t open_now = atomic_fetch_add(&srv->open[kind], 1);
    if (!guard_accept((guard_port)kind, open_now, &srv->limits)) {
        atomic_fetch_sub(&srv->open[kind], 1);
        metrics_add(&w->counters[GC_REFUSED_LIMIT], 1);
        close(fd);
        if (uses_spare)
            reopen_spare(srv);
        return;
    }
    conn_rec *rec = calloc(1, sizeof(*rec));
    if (rec == NULL) {
        atomic_fetch_sub(&srv->open[kind], 1);
        close(fd);
        if (uses_spare)
            reopen_spare(srv);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    h2o_socket_t *sock = h2o_evloop_socket_create(w->ctx.loop, fd, H2O_SOCKET_FLAG_IS_ACCEPTED_CONNECTION);
    rec->w = w;
    rec->sock = sock;
    rec->kind = kind;
    rec->uses_spare = uses_spare;
    rec->accepted_ns = clock_mono_ns();
    if (kind == L_TLS) {
        rec->ssl_ctx = w->ssl_ctx;
        SSL_CTX_up_ref(rec->ssl_ctx);
    }
    h2o_linklist_insert(&w->conns, &rec->link);
    sock->on_close.cb = on_conn_closed;
    sock->on_close.data = rec;
    h2o_accept(&w->accept[kind], sock);
}

/* Accepts what is pending on a listener (a bounded batch).  Out of
 * descriptors, a probe port spends the spare one; otherwise the listener
 * stops for guard_accept_backoff_ms() instead of spinning on a socket that
 * stays readable. */
static void accept_pending(worker *w, enum listener_kind kind, unsigned batch)
{
    h2o_socket_t *listener = w->listeners[kind];
    int lfd = h2o_socket_get_fd(listener);
    for (unsigned i = 0; i < batch; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            w->accept_failures[kind] = 0;
            take_connection(w, kind, fd, 0);
            continue;
        }
        int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK)
            return;
        if (!guard_accept_error_is_exhaustion(err))
            continue; /* that connection's own trouble (ECONNABORTED) */
        metrics_add(&w->counters[GC_ACCEPT_EXHAUSTED], 1);
        if (kind != L_TLS) {
            int spare = atomic_exchange(&w->srv->spare_fd, -1);
            if (spare >= 0) {
                close(spare);
                fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd >= 0) {
                    metrics_add(&w->counters[GC_ACCEPT_SPARE], 1);
                    take_connection(w, kind, fd, 1);
                    continue;
                }
                reopen_spare(w->srv);
            }
        }
        w->accept_failures[kind]++;
        unsigned ms = guard_accept_backoff_ms(w->accept_failures[kind]);
        w->accept_resume_ns[kind] = clock_mono_ns() + (uint64_t)ms * 1000000u;
        h2o_socket_read_stop(listener);
        return;
    }
}

static void on_accept(h2o_socket_t *listener, const char *err)
{
    if (err != NULL)
        return;
    h2o_accept_ctx_t *accept_ctx = listener->data;
    worker *w = (worker *)((char *)accept_ctx->ctx - offsetof(worker, ctx));
    accept_pending(w, (enum listener_kind)(accept_ctx - w->accept), 16);
}

static void resume_accepting(worker *w, uint64_t now)
{
    for (int k = 0; k < L_COUNT; k++) {
        if (w->accept_resume_ns[k] != 0 && now >= w->accept_resume_ns[k] &&
            w->listeners[k] != NULL) {
            w->accept_resume_ns[k] = 0;
            h2o_socket_read_start(w->listeners[k], on_accept);
        }
    }
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

static size_t total_buffered(server *srv)
{
    size_t total = 0;
    for (int i = 0; i < srv->cfg.threads; i++)
        total += atomic_load_explicit(&srv->workers[i].buffered, memory_order_relaxed);
    return total;
}

/* ---- in-flight accounting ---------------------------------------------- */

typedef struct request_slot {
    worker *w;
    conn_rec *rec;
} request_slot;

/* Runs when h2o disposes of the request, i.e. after its response is sent. */
static void on_request_disposed(void *p)
{
    request_slot *slot = p;
    slot->w->in_flight--;
    if (slot->rec != NULL) {
        slot->rec->answering--;
        conn_rec_release(slot->rec);
    }
}

static void track_request(worker *w, h2o_req_t *req)
{
    request_slot *slot = h2o_mem_alloc_shared(&req->pool, sizeof(*slot), on_request_disposed);
    slot->w = w;
    slot->rec = conn_of_req(req);
    w->in_flight++;
    if (slot->rec != NULL) {
        slot->rec->answering++;
        slot->rec->requests++;
        if (req->version >= 0x200)
            slot->rec->http2 = 1;
    }
}

/* ---- h2o's own error answers as Status ---------------------------------- */

/* h2o answers some requests itself, in text/plain (400 for a malformed
 * request, 413, 417 for an Expect other than 100-continue): this filter
 * turns any text/plain 4xx into a meta/v1 Status like ours.  The body is
 * decided when the headers are, so the content-length is exact. */
typedef struct status_ostream {
    h2o_ostream_t super;
    h2o_iovec_t body;
    int sent;
} status_ostream;

static void status_ostream_send(h2o_ostream_t *self, h2o_req_t *req, h2o_iovec_t *bufs,
                                size_t bufcnt, h2o_send_state_t state)
{
    (void)bufs;
    (void)bufcnt;
    status_ostream *so = (status_ostream *)self;
    if (!h2o_send_state_is_in_progress(state) && !so->sent) {
        so->sent = 1;
        h2o_ostream_send_next(self, req, &so->body, 1, state);
    } else {
        h2o_ostream_send_next(self, req, NULL, 0, state);
    }
}

static const char *h2o_error_message(int status, const char *reason, char *buf, size_t size,
                                     size_t max_request_bytes)
{
    switch (status) {
    case 413:
        snprintf(buf, size, "request body larger than the limit of %zu bytes (--max-request-bytes)",
                 max_request_bytes);
        break;
    case 417:
        snprintf(buf, size, "unsupported Expect header: only \"Expect: 100-continue\" is accepted");
        break;
    default:
        snprintf(buf, size, "malformed HTTP request: %s", reason != NULL ? reason : "rejected");
        break;
    }
    return buf;
}

static const char *status_reason_of(int status)
{
    switch (status) {
    case 413:
        return "RequestEntityTooLarge";
    case 417:
        return "ExpectationFailed";
    case 431:
        return "RequestHeaderFieldsTooLarge";
    default:
        return "BadRequest";
    }
}

static void on_setup_error_ostream(h2o_filter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    (void)self;
    ssize_t i = h2o_find_header(&req->res.headers, H2O_TOKEN_CONTENT_TYPE, -1);
    if (req->res.status >= 400 && req->res.status < 500 && i >= 0 &&
        h2o_memis(req->res.headers.entries[i].value.base,
                  req->res.headers.entries[i].value.len < 10 ? req->res.headers.entries[i].value.len : 10,
                  H2O_STRLIT("text/plain"))) {
        worker *w = (worker *)((char *)req->conn->ctx - offsetof(worker, ctx));
        char message[160];
        h2o_error_message(req->res.status, req->res.reason, message, sizeof(message),
                          w->srv->cfg.max_request_bytes);
        arena a;
        size_t len = 0;
        arena_init(&a);
        const char *body = review_encode_status(req->res.status, status_reason_of(req->res.status),
                                                message, &a, &len);
        if (body != NULL) {
            status_ostream *so = (status_ostream *)h2o_add_ostream(req, sizeof(*so), slot);
            so->super.do_send = status_ostream_send;
            char *copy = h2o_mem_alloc_pool(&req->pool, len);
            memcpy(copy, body, len);
            so->body = h2o_iovec_init(copy, len);
            so->sent = 0;
            req->res.headers.entries[i].value = h2o_iovec_init(H2O_STRLIT("application/json"));
            req->res.content_length = len;
            slot = &so->super.next;
        }
        arena_free(&a);
    }
    h2o_setup_next_ostream(req, slot);
}

/* ---- framing ------------------------------------------------------------ */

/* RFC 9112 §6.1: a request with both Content-Length and Transfer-Encoding,
 * or with Content-Lengths that differ, may be read one way here and another
 * way by a proxy in front: 400, and the connection closes so nothing after
 * it is read as a request.  h2o 2.2.5 accepts both shapes. */
static int reject_ambiguous_framing(h2o_req_t *req)
{
    conn_rec *rec = conn_of_req(req);
    if (rec == NULL || rec->sock->input == NULL || rec->sock->input->bytes == NULL)
        return 0;
    /* While a request is handled, h2o keeps its head at the start of the
     * socket's input buffer (it consumes it once the response is sent);
     * checked against the method, so a surprise reads nothing. */
    const char *buf = rec->sock->input->bytes;
    size_t size = rec->sock->input->size, skip = 0;
    while (skip < size && (buf[skip] == '\r' || buf[skip] == '\n'))
        skip++;
    const char *start = buf + skip;
    size_t avail = size - skip;
    if (avail < req->input.method.len + 1 ||
        memcmp(start, req->input.method.base, req->input.method.len) != 0 ||
        start[req->input.method.len] != ' ')
        return 0;
    size_t head = guard_head_end(start, avail);
    if (head == 0)
        return 0;
    guard_framing f = guard_head_framing(start, head);
    if (f == GUARD_FRAMING_OK)
        return 0;
    worker *w = worker_of(req);
    metrics_add(&w->counters[GC_FRAMING], 1);
    req->http1_is_persistent = 0;
    send_status(req, 400, "BadRequest",
                f == GUARD_FRAMING_CL_AND_TE
                    ? "request has both Content-Length and Transfer-Encoding (RFC 9112 section 6.1)"
                    : "request has Content-Length values that differ (RFC 9112 section 6.3)");
    return 1;
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
    if (!is_path(req, "/livez") && !is_path(req, "/healthz") && !is_path(req, "/readyz")) {
        send_status(req, 404, "NotFound", "no such path: use /livez, /healthz or /readyz");
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

static uint64_t guard_sum(server *srv, enum guard_counter c)
{
    uint64_t n = 0;
    for (int i = 0; i < srv->cfg.threads; i++)
        n += metrics_get(&srv->workers[i].counters[c]);
    return n;
}

/* The connection limits' counters and gauges (docs/DECISIONS.md "Webhook
 * limits"). */
static void render_guard(strbuf *t, server *srv)
{
    static const char *const ports[L_COUNT] = {"admission", "health", "metrics"};
    metrics_header(t, "ota_webhook_open_connections", "gauge", "Connections open, by port.");
    for (int k = 0; k < L_COUNT; k++)
        strbuf_printf(t, "ota_webhook_open_connections{port=\"%s\"} %zu\n", ports[k],
                      atomic_load(&srv->open[k]));
    metrics_header(t, "ota_webhook_max_connections", "gauge",
                   "The admission port's connection limit in force.");
    strbuf_printf(t, "ota_webhook_max_connections %zu\n", srv->limits.max_connections);
    metrics_header(t, "ota_webhook_buffered_bytes", "gauge",
                   "Request input buffered by all connections.");
    strbuf_printf(t, "ota_webhook_buffered_bytes %zu\n", total_buffered(srv));
    /* The guard's counters, in enum order; a family's header is written
     * before its first sample. */
    static const struct {
        const char *name, *help, *labels;
    } families[GC_N] = {
        [GC_REFUSED_LIMIT] = {"ota_webhook_connections_refused_total",
                              "Connections closed at accept: over the connection limit.",
                              "{reason=\"limit\"}"},
        [GC_ACCEPT_EXHAUSTED] = {"ota_webhook_accept_exhausted_total",
                                 "accept() failures for want of descriptors or memory (EMFILE, "
                                 "ENFILE, ENOBUFS, ENOMEM); accepting backs off.",
                                 ""},
        [GC_ACCEPT_SPARE] = {"ota_webhook_accept_spare_total",
                             "Probe connections accepted on the spare descriptor while out of "
                             "descriptors.",
                             ""},
        [GC_CUT_HEADERS] = {"ota_webhook_connections_cut_total", "Connections closed by a limit.",
                            "{reason=\"header_bytes\"}"},
        [GC_CUT_WRITE_TIMEOUT] = {"ota_webhook_connections_cut_total", NULL,
                                  "{reason=\"write_timeout\"}"},
        [GC_PAUSED] = {"ota_webhook_reads_paused_total",
                       "Connections whose reading was paused: buffered input over the budget.", ""},
        [GC_FRAMING] = {"ota_webhook_ambiguous_framing_total",
                        "Requests refused with 400: Content-Length with Transfer-Encoding, or "
                        "differing Content-Lengths.",
                        ""},
    };
    for (int c = 0; c < GC_N; c++) {
        if (families[c].help != NULL)
            metrics_header(t, families[c].name, "counter", families[c].help);
        strbuf_printf(t, "%s%s %llu\n", families[c].name, families[c].labels,
                      (unsigned long long)guard_sum(srv, (enum guard_counter)c));
    }
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
    render_guard(&t, srv);
    metrics_build_info(&t, srv->cfg.version != NULL ? srv->cfg.version : "",
                       srv->cfg.commit != NULL ? srv->cfg.commit : "");
    metrics_process_render(&t);
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
    if (req->version < 0x200 && reject_ambiguous_framing(req))
        return 0;
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
    /* Every connection accepted with the old context holds a reference of
     * its own (conn_rec), released when it closes. */
    if (old != NULL)
        SSL_CTX_free(old);
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

/* ---- limits ------------------------------------------------------------ */

static size_t buffered_of(h2o_socket_t *sock)
{
    return sock->input != NULL && sock->input->bytes != NULL ? sock->input->size : 0;
}

/* A whole request head (empty line) within the head limit. */
static int head_complete(h2o_socket_t *sock, size_t limit)
{
    size_t n = buffered_of(sock);
    if (n > limit + 4)
        n = limit + 4;
    return n >= 2 && guard_head_end(sock->input->bytes, n) != 0;
}

/* Cuts a connection under h2o's feet without freeing anything h2o holds:
 * shutdown() makes its next read see EOF and its pending write fail, and
 * h2o closes the connection through its own path. */
static void cut(conn_rec *rec, enum guard_counter why)
{
    if (rec->cut)
        return;
    rec->cut = 1;
    metrics_add(&rec->w->counters[why], 1);
    if (rec->paused) {
        rec->paused = 0;
        h2o_socket_read_start(rec->sock, rec->read_cb);
    }
    shutdown(h2o_socket_get_fd(rec->sock), SHUT_RDWR);
}

/* After each turn of the event loop: the write timeout, the head limit and
 * the buffered-bytes budget (guard_conn_action decides). */
static void sweep(worker *w, uint64_t now)
{
    server *srv = w->srv;
    size_t mine = 0;
    conn_rec *largest = NULL;
    size_t largest_size = 0;
    for (h2o_linklist_t *n = w->conns.next; n != &w->conns; n = n->next) {
        conn_rec *rec = H2O_STRUCT_FROM_MEMBER(conn_rec, link, n);
        size_t b = buffered_of(rec->sock);
        mine += rec->sock->input != NULL && rec->sock->input->bytes != NULL
                    ? rec->sock->input->capacity
                    : 0;
        if (rec->answering == 0 && b > largest_size) {
            largest = rec;
            largest_size = b;
        }
    }
    atomic_store_explicit(&w->buffered, mine, memory_order_relaxed);
    w->over_budget = guard_over_budget(total_buffered(srv), srv->limits.max_buffered_bytes,
                                       w->over_budget);
    for (h2o_linklist_t *n = w->conns.next, *next; n != &w->conns; n = next) {
        next = n->next;
        conn_rec *rec = H2O_STRUCT_FROM_MEMBER(conn_rec, link, n);
        if (rec->cut)
            continue;
        h2o_socket_t *sock = rec->sock;
        int writing = h2o_socket_is_writing(sock);
        if (!writing || sock->bytes_written != rec->written_seen) {
            rec->written_seen = sock->bytes_written;
            rec->writing_since_ns = writing ? now : 0;
        }
        size_t buffered = buffered_of(sock);
        guard_conn c = {
            .http1 = !rec->http2,
            .answering = rec->answering > 0,
            .buffered = buffered,
            /* Read only where the head limit can apply (an HTTP/1 request
             * arriving, more bytes than a head may have): a sweep runs after
             * every turn of the loop, and scanning every slow connection's
             * buffer each time would let a trickle of bytes buy a lot of CPU.
             * Where the head is complete, the scan stops at its end. */
            .head_complete = rec->http2 || rec->answering > 0 ||
                                     buffered <= srv->limits.max_header_bytes
                                 ? 1
                                 : head_complete(sock, srv->limits.max_header_bytes),
            .writing = writing,
            .writing_ns = writing && rec->writing_since_ns != 0 ? now - rec->writing_since_ns : 0,
            .paused = rec->paused,
        };
        switch (guard_conn_action(&c, &srv->limits, w->over_budget, rec == largest)) {
        case GUARD_CUT_HEADERS:
            cut(rec, GC_CUT_HEADERS);
            break;
        case GUARD_CUT_WRITE_TIMEOUT:
            cut(rec, GC_CUT_WRITE_TIMEOUT);
            break;
        case GUARD_PAUSE:
            /* Only a socket h2o is reading: its callback is restored later. */
            if (h2o_socket_is_reading(sock)) {
                rec->read_cb = sock->_cb.read;
                rec->paused = 1;
                h2o_socket_read_stop(sock);
                metrics_add(&w->counters[GC_PAUSED], 1);
            }
            break;
        case GUARD_RESUME:
            rec->paused = 0;
            h2o_socket_read_start(sock, rec->read_cb);
            break;
        case GUARD_KEEP:
            break;
        }
    }
}

/* ---- drain -------------------------------------------------------------- */

/* Requests still arriving: not yet in_flight, but a drain must wait for
 * them as much as for the ones being answered (guard_arriving decides). */
static int receiving(worker *w, uint64_t now)
{
    for (h2o_linklist_t *n = w->conns.next; n != &w->conns; n = n->next) {
        conn_rec *rec = H2O_STRUCT_FROM_MEMBER(conn_rec, link, n);
        if (rec->kind != L_TLS || rec->cut)
            continue;
        int unread = 0;
        if (ioctl(h2o_socket_get_fd(rec->sock), FIONREAD, &unread) != 0)
            unread = 0;
        guard_arrival a = {
            .answering = rec->answering > 0,
            .buffered = buffered_of(rec->sock),
            .kernel_unread = unread > 0 ? (size_t)unread : 0,
            .tls_pending = rec->ssl != NULL && SSL_has_pending(rec->ssl),
            .handshaking = rec->ssl != NULL && SSL_in_init(rec->ssl),
            .requests = rec->requests,
            .age_ns = now - rec->accepted_ns,
        };
        if (guard_arriving(&a))
            return 1;
    }
    /* HTTP/2: h2o 2.2 has no foreach_request for it, and its connection
     * struct is not public; a connection still open after our GOAWAY counts
     * as busy.  Clients close a connection once its last stream is done
     * (curl and Go do), h2o closes idle ones after http2.idle_timeout, and
     * the grace period bounds the rest. */
    return !h2o_linklist_is_empty(&w->ctx.http2._conns);
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
        resume_accepting(w, now);
        sweep(w, now);
        if (atomic_load(&srv->shutdown) && !w->draining) {
            w->draining = 1;
            /* What is already in the accept queue was sent to us: take it,
             * it counts as arriving for GUARD_FRESH_NS. */
            if (w->listeners[L_TLS] != NULL && w->accept_resume_ns[L_TLS] == 0)
                accept_pending(w, L_TLS, 1024);
            close_admission_listener(w);
            /* HTTP/2 connections get GOAWAY; HTTP/1 ones stop keep-alive. */
            h2o_context_request_shutdown(&w->ctx);
            /* h2o 2.2 sends a second GOAWAY a second later and from then on
             * drops DATA frames, which would cut an upload in progress: the
             * first GOAWAY already stops new streams, so skip the second. */
            h2o_timeout_unlink(&w->ctx.http2._graceful_shutdown_timeout);
            drain_deadline = now + (uint64_t)srv->cfg.shutdown_grace_ms * 1000000u;
        }
        if (w->draining &&
            ((w->in_flight == 0 && !receiving(w, now)) || clock_mono_ns() > drain_deadline))
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
        w->listeners[k] = h2o_evloop_socket_create(w->ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
        w->listeners[k]->data = &w->accept[k];
        h2o_socket_read_start(w->listeners[k], on_accept);
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

static void register_route(server *srv, enum listener_kind kind, const char *name)
{
    h2o_hostconf_t *host =
        h2o_config_register_host(&srv->globalconf, h2o_iovec_init(name, strlen(name)), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    h2o_create_filter(path, sizeof(h2o_filter_t))->on_setup_ostream = on_setup_error_ostream;
    h2o_create_filter(&host->fallback_path, sizeof(h2o_filter_t))->on_setup_ostream =
        on_setup_error_ostream;
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
    atomic_store(&srv->spare_fd, -1);
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
    /* HTTP/2 only through ALPN (--http2): no "PRI *" prior-knowledge preface
     * and no Upgrade: h2c on an HTTP/1 connection. */
    srv->globalconf.http1.upgrade_to_http2 = 0;
    srv->limits = (guard_limits){
        .max_connections = cfg->max_connections,
        .max_header_bytes = cfg->max_header_bytes,
        .max_request_bytes = cfg->max_request_bytes,
        .max_buffered_bytes = cfg->max_buffered_bytes,
        .write_timeout_ns = (uint64_t)cfg->write_timeout_ms * 1000000u,
    };
    srv->limits.max_connections = fit_descriptor_limit(cfg->max_connections, cfg->threads);
    reopen_spare(srv);
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
    int spare = atomic_exchange(&srv->spare_fd, -1);
    if (spare >= 0)
        close(spare);
    /* Workers' contexts are left to process exit: connections still open
     * at the end of a drain belong to them, and tearing them down buys
     * nothing when the process is about to go. */
    free(srv);
}

/*
 * conn.c - see conn.h.
 *
 * guard.c decides and this file acts: it gathers the facts h2o and the
 * kernel hold about each connection (buffers, writes in progress, bytes
 * unread, TLS state), asks the guard, and carries the answer out without
 * freeing anything h2o still holds.  A connection's record (conn_rec) is
 * known to this file alone; the worker keeps the list of them.
 */
#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#include "clock.h"
#include "guard.h"
#include "log.h"
#include "reply.h"
#include "tlsfail.h"

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
    int tls_done;       /* its handshake completed */
    int tls_failed;     /* its handshake failed, and was counted */
    int alert_sent;     /* the fatal alert the server sent in its handshake, or -1 */
    enum listener_kind kind;
    int uses_spare;     /* took the spare descriptor's place */
    int paused;         /* we stopped reading it; read_cb is h2o's callback */
    int cut;
    int evicted;        /* cut to give its slot to a new connection (w->evicting) */
    h2o_socket_cb read_cb;
    char *answer;       /* the 408/503 written as it is cut (malloc'd), or NULL */
    unsigned answering; /* requests of it being answered */
    unsigned requests;
    uint64_t accepted_ns;
    size_t written_seen; /* sock->bytes_written at the last sweep */
    uint64_t writing_since_ns;
    /* A request arriving (bytes in, not answered yet), seen at a sweep:
     * since when, and since when not counting the time we paused it. */
    uint64_t upload_began_ns; /* 0: none arriving */
    uint64_t upload_clock_ns;
    uint64_t paused_since_ns;
    /* The peer as accept() gave it, for the log (the socket is gone by
     * on_close, and h2o would ask the kernel again). */
    struct sockaddr_storage peer;
    socklen_t peer_len;
} conn_rec;

/* ---- connections ------------------------------------------------------- */

static void conn_rec_release(conn_rec *rec)
{
    if (rec->sock == NULL && rec->answering == 0)
        free(rec);
}

void conn_reopen_spare(server *srv)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    int none = -1;
    if (!atomic_compare_exchange_strong(&srv->spare_fd, &none, fd))
        close(fd);
}

static void handshake_failed(conn_rec *rec, const tlsfail_facts *f, unsigned long err);

/* h2o_socket_t.on_close: h2o has freed the connection's SSL (if any) by
 * now, so our reference to its context can go.  The socket is gone too. */
static void on_conn_closed(void *data)
{
    conn_rec *rec = data;
    worker *w = rec->w;
    /* Closed with its handshake begun, not done and not failed: not by
     * the server's cuts either, so its client hung up. */
    if (rec->kind == L_TLS && rec->ssl != NULL && !rec->tls_done && !rec->tls_failed &&
        !rec->cut && rec->requests == 0)
        handshake_failed(rec, &(tlsfail_facts){.alert_sent = -1, .closed = 1}, 0);
    h2o_linklist_unlink(&rec->link);
    atomic_fetch_sub(&w->srv->open[rec->kind], 1);
    if (rec->ssl_ctx != NULL)
        SSL_CTX_free(rec->ssl_ctx);
    if (rec->uses_spare)
        conn_reopen_spare(w->srv);
    if (rec->evicted)
        w->evicting--;
    free(rec->answer);
    rec->answer = NULL;
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

/* The connection record of an SSL, in the SSL's ex_data from its first
 * info callback on: the record outlives the SSL (h2o frees the SSL before
 * the socket's on_close). */
static int rec_index = -1;
static pthread_once_t rec_index_once = PTHREAD_ONCE_INIT;

static void rec_index_init(void)
{
    rec_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

static conn_rec *rec_of_ssl(const SSL *ssl)
{
    return rec_index >= 0 ? SSL_get_ex_data(ssl, rec_index) : NULL;
}

/* The drain asks a connection's SSL whether a record is half in. */
void conn_handshake_started(worker *w, const SSL *ssl)
{
    /* TLS 1.3 says "start" again for each session ticket sent */
    pthread_once(&rec_index_once, rec_index_init);
    if (rec_of_ssl(ssl) != NULL)
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
            if (rec_index >= 0)
                SSL_set_ex_data(rec->ssl, rec_index, rec);
            return;
        }
    }
}

void conn_handshake_done(worker *w, const SSL *ssl)
{
    (void)w;
    conn_rec *rec = rec_of_ssl(ssl);
    if (rec != NULL)
        rec->tls_done = 1;
}

void conn_handshake_alert_sent(worker *w, const SSL *ssl, int desc)
{
    (void)w;
    conn_rec *rec = rec_of_ssl(ssl);
    if (rec != NULL && !rec->tls_done)
        rec->alert_sent = desc;
}

void conn_handshake_stopped(worker *w, const SSL *ssl)
{
    (void)w;
    conn_rec *rec = rec_of_ssl(ssl);
    if (rec == NULL || rec->tls_done || rec->tls_failed || rec->cut)
        return;
    /* OpenSSL clears its error queue as SSL_accept begins: an error here
     * is this handshake's, and none means it waits for more bytes.  Only
     * peeked: h2o reads the queue after us. */
    unsigned long err = ERR_peek_last_error();
    if (err == 0)
        return;
    tlsfail_facts f = {
        .lib = ERR_GET_LIB(err),
        .reason = ERR_GET_REASON(err),
        .alert_sent = rec->alert_sent,
    };
    handshake_failed(rec, &f, err);
}

/* "address:port" (IPv6 in brackets) of a connection's peer. */
static void peer_text(const conn_rec *rec, char *out, size_t outlen)
{
    char host[INET6_ADDRSTRLEN] = "";
    const struct sockaddr *sa = (const struct sockaddr *)&rec->peer;
    if (rec->peer_len >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        snprintf(out, outlen, "%s:%u", host, (unsigned)ntohs(in->sin_port));
    } else if (rec->peer_len >= sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        snprintf(out, outlen, "[%s]:%u", host, (unsigned)ntohs(in6->sin6_port));
    } else {
        snprintf(out, outlen, "unknown");
    }
}

/* Counts a failed handshake by reason (tlsfail_classify), and logs it when
 * tlsfail_say says a line is due: the reason, how many failures the line
 * stands for, the peer of this one, the alert, OpenSSL's words, and what
 * to do.  err: OpenSSL's error, 0 for none. */
static void handshake_failed(conn_rec *rec, const tlsfail_facts *f, unsigned long err)
{
    worker *w = rec->w;
    server *srv = w->srv;
    rec->tls_failed = 1;
    tlsfail_reason r = tlsfail_classify(f);
    metrics_add(&w->tls_failures[r], 1);
    pthread_mutex_lock(&srv->tlsfail_lock);
    uint64_t n = tlsfail_say(&srv->tlsfail_said[r], clock_mono_ns());
    pthread_mutex_unlock(&srv->tlsfail_lock);
    if (n == 0)
        return;
    char peer[INET6_ADDRSTRLEN + 16];
    peer_text(rec, peer, sizeof(peer));
    log_line l;
    log_begin(&l, LOG_WARN, "TLS handshake failed");
    log_str(&l, "reason", tlsfail_reason_name(r));
    log_int(&l, "failures", (long long)n);
    log_str(&l, "peer", peer);
    int alert = tlsfail_alert_received(f);
    if (alert >= 0)
        log_str(&l, "alert", SSL_alert_desc_string_long(alert));
    if (f->alert_sent >= 0)
        log_str(&l, "alert_sent", SSL_alert_desc_string_long(f->alert_sent));
    const char *detail = err != 0 ? ERR_reason_error_string(err) : NULL;
    if (detail != NULL)
        log_str(&l, "detail", detail);
    log_str(&l, "hint", tlsfail_reason_hint(r));
    log_end(&l, LOG_WARN);
}

/* ---- listeners ---------------------------------------------------------- */

static void cut(conn_rec *rec, enum guard_counter why);

/* A TLS connection's handshake is done: OpenSSL says so, or a request
 * came of it. */
static int handshake_done(const conn_rec *rec)
{
    return rec->kind != L_TLS || rec->requests > 0 || (rec->ssl != NULL && !SSL_in_init(rec->ssl));
}

static guard_handshake handshake_facts(const conn_rec *rec, uint64_t now)
{
    return (guard_handshake){
        .done = handshake_done(rec),
        .hello_seen = rec->ssl != NULL,
        .cut = rec->cut,
        .age_ns = now - rec->accepted_ns,
    };
}

/* The worker's connection that gives its slot to a new one
 * (guard_handshake_evictable, _before), cut; 0 when none may. */
static int evict_own(worker *w)
{
    uint64_t now = clock_mono_ns();
    conn_rec *victim = NULL;
    guard_handshake vh = {0};
    for (h2o_linklist_t *n = w->conns.next; n != &w->conns; n = n->next) {
        conn_rec *rec = H2O_STRUCT_FROM_MEMBER(conn_rec, link, n);
        if (rec->kind != L_TLS)
            continue;
        guard_handshake h = handshake_facts(rec, now);
        if (guard_handshake_evictable(&h, w->evicting) &&
            (victim == NULL || guard_handshake_before(&h, &vh))) {
            victim = rec;
            vh = h;
        }
    }
    if (victim == NULL)
        return 0;
    cut(victim, GC_EVICTED);
    victim->evicted = 1;
    w->evicting++;
    return 1;
}

/* The admission port is full: a connection of this worker gives its slot
 * to the new one, or else one of another worker's, which it cuts at its
 * next sweep (guard_evict_worker); 0 when none may.  The new connection is
 * taken over the limit until the cut one has closed. */
static int evict_for_new(worker *w)
{
    if (evict_own(w))
        return 1;
    server *srv = w->srv;
    /* Workers' counts, read once: --threads is at most 256. */
    size_t handshakes[256], asked[256];
    size_t n = (size_t)srv->threads < 256 ? (size_t)srv->threads : 256;
    for (size_t i = 0; i < n; i++) {
        handshakes[i] = atomic_load(&srv->workers[i].handshakes);
        asked[i] = atomic_load(&srv->workers[i].evict_asked);
    }
    size_t target = guard_evict_worker(handshakes, asked, n, (size_t)(w - srv->workers));
    if (target == n)
        return 0;
    atomic_fetch_add(&srv->workers[target].evict_asked, 1);
    return 1;
}

static void take_connection(worker *w, enum listener_kind kind, int fd, int uses_spare,
                            const struct sockaddr_storage *peer, socklen_t peer_len)
{
    server *srv = w->srv;
    size_t open_now = atomic_fetch_add(&srv->open[kind], 1);
    if (!guard_accept((guard_port)kind, open_now, &srv->limits) &&
        !(kind == L_TLS && evict_for_new(w))) {
        atomic_fetch_sub(&srv->open[kind], 1);
        metrics_add(&w->counters[GC_REFUSED_LIMIT], 1);
        close(fd);
        if (uses_spare)
            conn_reopen_spare(srv);
        return;
    }
    conn_rec *rec = calloc(1, sizeof(*rec));
    if (rec == NULL) {
        atomic_fetch_sub(&srv->open[kind], 1);
        close(fd);
        if (uses_spare)
            conn_reopen_spare(srv);
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
    rec->alert_sent = -1;
    rec->peer = *peer;
    rec->peer_len = peer_len <= sizeof(rec->peer) ? peer_len : 0;
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
void conn_accept_pending(worker *w, enum listener_kind kind, unsigned batch)
{
    h2o_socket_t *listener = w->listeners[kind];
    int lfd = h2o_socket_get_fd(listener);
    for (unsigned i = 0; i < batch; i++) {
        struct sockaddr_storage peer;
        socklen_t peer_len = sizeof(peer);
        int fd = accept4(lfd, (struct sockaddr *)&peer, &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            w->accept_failures[kind] = 0;
            take_connection(w, kind, fd, 0, &peer, peer_len);
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
                peer_len = sizeof(peer);
                fd = accept4(lfd, (struct sockaddr *)&peer, &peer_len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd >= 0) {
                    metrics_add(&w->counters[GC_ACCEPT_SPARE], 1);
                    take_connection(w, kind, fd, 1, &peer, peer_len);
                    continue;
                }
                conn_reopen_spare(w->srv);
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
    worker *w = worker_of_ctx(accept_ctx->ctx);
    conn_accept_pending(w, (enum listener_kind)(accept_ctx - w->accept), 16);
}

void conn_listen(worker *w, enum listener_kind kind, int fd)
{
    w->listeners[kind] = h2o_evloop_socket_create(w->ctx.loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    w->listeners[kind]->data = &w->accept[kind];
    h2o_socket_read_start(w->listeners[kind], on_accept);
}

void conn_unlisten(worker *w, enum listener_kind kind)
{
    if (w->listeners[kind] != NULL) {
        h2o_socket_read_stop(w->listeners[kind]);
        h2o_socket_close(w->listeners[kind]);
        w->listeners[kind] = NULL;
    }
}

void conn_resume_accepting(worker *w, uint64_t now)
{
    for (int k = 0; k < L_COUNT; k++) {
        if (w->accept_resume_ns[k] != 0 && now >= w->accept_resume_ns[k] &&
            w->listeners[k] != NULL) {
            w->accept_resume_ns[k] = 0;
            h2o_socket_read_start(w->listeners[k], on_accept);
        }
    }
}

/* ---- requests ----------------------------------------------------------- */

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
    }
}

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
    metrics_add(&rec->w->counters[GC_FRAMING], 1);
    req->http1_is_persistent = 0;
    reply_status(req, 400, "BadRequest",
                 f == GUARD_FRAMING_CL_AND_TE
                     ? "request has both Content-Length and Transfer-Encoding (RFC 9112 section 6.1)"
                     : "request has Content-Length values that differ (RFC 9112 section 6.3)");
    return 1;
}

int conn_request_begin(h2o_req_t *req)
{
    track_request(worker_of(req), req);
    return req->version < 0x200 && reject_ambiguous_framing(req);
}

/* ---- limits ------------------------------------------------------------ */

static size_t buffered_of(h2o_socket_t *sock)
{
    return sock->input != NULL && sock->input->bytes != NULL ? sock->input->size : 0;
}

static size_t total_buffered(server *srv)
{
    size_t total = 0;
    for (int i = 0; i < srv->threads; i++)
        total += atomic_load_explicit(&srv->workers[i].buffered, memory_order_relaxed);
    return total;
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

/* The answer is out (or failed): cut as cut() does, and let h2o read the
 * EOF and close through its own path. */
static void on_answer_written(h2o_socket_t *sock, const char *err)
{
    (void)err;
    conn_rec *rec = conn_of_sock(sock);
    shutdown(h2o_socket_get_fd(sock), SHUT_RDWR);
    if (rec != NULL && rec->read_cb != NULL)
        h2o_socket_read_start(sock, rec->read_cb);
}

/* Cuts a connection whose request is still arriving, with an HTTP answer
 * first (a Status naming the limit), where one can be said: on the TLS
 * port, with its handshake done and h2o not writing (an interim "100
 * Continue").  Reading stops first, so h2o never makes a request of what
 * comes after, and resumes once the answer is out so h2o sees the EOF. */
static void cut_with_answer(conn_rec *rec, enum guard_counter why, int code, const char *phrase,
                            const char *reason, const char *message)
{
    h2o_socket_t *sock = rec->sock;
    if (rec->cut)
        return;
    if (rec->kind != L_TLS || !handshake_done(rec) || h2o_socket_is_writing(sock) ||
        (!rec->paused && !h2o_socket_is_reading(sock))) {
        cut(rec, why);
        return;
    }
    size_t len = 0;
    rec->answer = reply_raw_status(code, phrase, reason, message, &len);
    if (rec->answer == NULL) {
        cut(rec, why);
        return;
    }
    rec->cut = 1;
    metrics_add(&rec->w->counters[why], 1);
    if (!rec->paused) {
        rec->read_cb = sock->_cb.read;
        h2o_socket_read_stop(sock);
    }
    rec->paused = 0;
    h2o_iovec_t buf = h2o_iovec_init(rec->answer, len);
    h2o_socket_write(sock, &buf, 1, on_answer_written);
}

/* How long a request has been arriving, not counting the time we kept it
 * paused (its clock stands still meanwhile); 0 when none is. */
static uint64_t arriving_ns(const conn_rec *rec, uint64_t now)
{
    uint64_t end = rec->paused ? rec->paused_since_ns : now;
    return rec->upload_began_ns != 0 && end > rec->upload_clock_ns ? end - rec->upload_clock_ns
                                                                    : 0;
}

static guard_upload upload_facts(const conn_rec *rec, size_t buffered, uint64_t now)
{
    return (guard_upload){
        .arriving = rec->answering == 0 && buffered > 0,
        .cut = rec->cut,
        .age_ns = rec->upload_began_ns != 0 ? now - rec->upload_began_ns : 0,
    };
}

/* guard_conn_action decides. */
void conn_sweep(worker *w, uint64_t now)
{
    server *srv = w->srv;
    size_t mine = 0;
    conn_rec *largest = NULL;
    size_t largest_size = 0;
    /* What the other workers asked of this one, then what this one can
     * give them next. */
    for (size_t asked = atomic_exchange(&w->evict_asked, 0); asked > 0; asked--)
        if (!evict_own(w))
            break;
    size_t handshakes = 0;
    conn_rec *victim = NULL;
    guard_upload vu = {0};
    for (h2o_linklist_t *n = w->conns.next; n != &w->conns; n = n->next) {
        conn_rec *rec = H2O_STRUCT_FROM_MEMBER(conn_rec, link, n);
        size_t b = buffered_of(rec->sock);
        /* A request arriving: its clocks start at the first sweep that sees
         * it and stop when it is answered (or its bytes are gone). */
        if (rec->answering == 0 && b > 0) {
            if (rec->upload_began_ns == 0)
                rec->upload_began_ns = rec->upload_clock_ns = now;
        } else {
            rec->upload_began_ns = 0;
        }
        /* A connection being cut frees its buffer as h2o closes it. */
        if (rec->cut)
            continue;
        if (rec->kind == L_TLS) {
            guard_handshake h = handshake_facts(rec, now);
            if (guard_handshake_evictable(&h, 0))
                handshakes++;
        }
        mine += rec->sock->input != NULL && rec->sock->input->bytes != NULL
                    ? rec->sock->input->capacity
                    : 0;
        if (rec->answering == 0 && b > largest_size) {
            largest = rec;
            largest_size = b;
        }
        guard_upload u = upload_facts(rec, b, now);
        if (guard_budget_cuttable(&u) && (victim == NULL || guard_budget_before(&u, &vu))) {
            victim = rec;
            vu = u;
        }
    }
    atomic_store_explicit(&w->buffered, mine, memory_order_relaxed);
    atomic_store(&w->handshakes, handshakes);
    w->over_budget = guard_over_budget(total_buffered(srv), srv->limits.max_buffered_bytes,
                                       w->over_budget);
    /* Over the budget, the oldest request arriving goes, one per sweep (its
     * memory is counted out at once, above): what holds the budget must not
     * keep a review that arrives after it waiting. */
    if (w->over_budget && victim != NULL) {
        cut_with_answer(victim, GC_CUT_BUDGET, 503, "Service Unavailable", "ServiceUnavailable",
                        "request still arriving while the server's buffer for request input "
                        "is full (--max-buffered-bytes): the oldest upload is cut first");
        if (victim == largest)
            largest = NULL;
    }
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
            .answering = rec->answering > 0,
            .buffered = buffered,
            /* Read only where the head limit can apply (an HTTP/1 request
             * arriving, more bytes than a head may have): a sweep runs after
             * every turn of the loop, and scanning every slow connection's
             * buffer each time would let a trickle of bytes buy a lot of CPU.
             * Where the head is complete, the scan stops at its end. */
            .head_complete = rec->answering > 0 ||
                                     buffered <= srv->limits.max_header_bytes
                                 ? 1
                                 : head_complete(sock, srv->limits.max_header_bytes),
            .writing = writing,
            .writing_ns = writing && rec->writing_since_ns != 0 ? now - rec->writing_since_ns : 0,
            .paused = rec->paused,
            .handshaking = !handshake_done(rec),
            .age_ns = now - rec->accepted_ns,
            .arriving_ns = arriving_ns(rec, now),
        };
        switch (guard_conn_action(&c, &srv->limits, w->over_budget, rec == largest)) {
        case GUARD_CUT_HEADERS:
            cut(rec, GC_CUT_HEADERS);
            break;
        case GUARD_CUT_WRITE_TIMEOUT:
            cut(rec, GC_CUT_WRITE_TIMEOUT);
            break;
        case GUARD_CUT_HANDSHAKE:
            cut(rec, GC_CUT_HANDSHAKE);
            break;
        case GUARD_CUT_SLOW_UPLOAD:
            cut_with_answer(rec, GC_CUT_SLOW_UPLOAD, 408, "Request Timeout", "Timeout",
                            "request body arriving slower than the minimum rate "
                            "(--upload-min-bytes-per-second, after --upload-grace-seconds)");
            break;
        case GUARD_PAUSE:
            /* Only a socket h2o is reading: its callback is restored later. */
            if (h2o_socket_is_reading(sock)) {
                rec->read_cb = sock->_cb.read;
                rec->paused = 1;
                rec->paused_since_ns = now;
                h2o_socket_read_stop(sock);
                metrics_add(&w->counters[GC_PAUSED], 1);
            }
            break;
        case GUARD_RESUME:
            if (rec->upload_began_ns != 0 && rec->upload_clock_ns < rec->paused_since_ns)
                rec->upload_clock_ns += now - rec->paused_since_ns;
            rec->paused = 0;
            h2o_socket_read_start(sock, rec->read_cb);
            break;
        case GUARD_KEEP:
            break;
        }
    }
}

/* ---- drain -------------------------------------------------------------- */

/* Requests still arriving are not yet in_flight, but a drain must wait for
 * them as much as for the ones being answered (guard_arriving decides). */
int conn_receiving(worker *w, uint64_t now)
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
    return 0;
}

/* ---- metrics ------------------------------------------------------------ */

static uint64_t guard_sum(server *srv, enum guard_counter c)
{
    uint64_t n = 0;
    for (int i = 0; i < srv->threads; i++)
        n += metrics_get(&srv->workers[i].counters[c]);
    return n;
}

/* docs/DECISIONS.md "Webhook limits". */
void conn_metrics_render(strbuf *t, server *srv)
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
        [GC_CUT_HANDSHAKE] = {"ota_webhook_connections_cut_total", NULL,
                              "{reason=\"handshake_timeout\"}"},
        [GC_EVICTED] = {"ota_webhook_connections_cut_total", NULL,
                        "{reason=\"handshake_evicted\"}"},
        [GC_CUT_SLOW_UPLOAD] = {"ota_webhook_connections_cut_total", NULL,
                                "{reason=\"upload_too_slow\"}"},
        [GC_CUT_BUDGET] = {"ota_webhook_connections_cut_total", NULL,
                           "{reason=\"buffer_budget\"}"},
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
    /* docs/DECISIONS.md "Handshake failures, by reason": every reason from
     * the start, as the cuts. */
    metrics_header(t, "ota_webhook_tls_handshake_failures_total", "counter",
                   "TLS handshakes on the admission port that failed, by reason (a handshake "
                   "the server cut is a cut: ota_webhook_connections_cut_total).");
    for (int r = 0; r < TLSFAIL_N; r++) {
        uint64_t n = 0;
        for (int i = 0; i < srv->threads; i++)
            n += metrics_get(&srv->workers[i].tls_failures[r]);
        strbuf_printf(t, "ota_webhook_tls_handshake_failures_total{reason=\"%s\"} %llu\n",
                      tlsfail_reason_name((tlsfail_reason)r), (unsigned long long)n);
    }
}

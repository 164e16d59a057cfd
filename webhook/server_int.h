/*
 * server_int.h - what the rooms of the h2o server share, and nothing else
 * includes: the server, its workers (one h2o context and event loop each),
 * the ports, and the guard's counters.
 *
 * The rooms, from the top: server.c (workers, TLS refresh, drain) registers
 * the routes (route_admit.c, route_probe.c, route_metrics.c), which answer
 * through reply.c; conn.c carries a connection from accept to close and
 * applies the guard's decisions (guard.c).  Every one of them includes this
 * header and none includes a room above it, so the arrows point one way.
 */
#ifndef OTA_WEBHOOK_SERVER_INT_H
#define OTA_WEBHOOK_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <h2o.h>

#include "guard.h"
#include "metrics.h"
#include "stats.h"
#include "tls.h"
#include "tlsfail.h"

typedef struct server server; /* as in server.h, which main.c includes */

enum listener_kind { L_TLS, L_HEALTH, L_METRICS, L_COUNT };

/* The guard's counters, one set per worker; /metrics sums them. */
enum guard_counter {
    GC_REFUSED_LIMIT,   /* connection over --max-connections */
    GC_ACCEPT_EXHAUSTED, /* accept(): EMFILE, ENFILE, ENOBUFS, ENOMEM */
    GC_ACCEPT_SPARE,    /* a probe accepted on the spare descriptor */
    GC_CUT_HEADERS,
    GC_CUT_WRITE_TIMEOUT,
    GC_CUT_HANDSHAKE,   /* handshake not done within --handshake-timeout-seconds */
    GC_EVICTED,         /* an unfinished handshake gave its slot to a new connection */
    GC_CUT_SLOW_UPLOAD, /* a request arriving under the minimum rate (408) */
    GC_CUT_BUDGET,      /* the oldest request arriving, cut while the budget is full (503) */
    GC_PAUSED,
    GC_FRAMING,         /* 400: ambiguous framing */
    GC_N
};

typedef struct worker {
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
    size_t evicting; /* connections cut to give their slot, not yet closed */
    /* For the other workers (guard_evict_worker): how many of this one's
     * connections could give their slot, as of its last sweep, and how
     * many of them the others asked it to cut at its next one. */
    atomic_size_t handshakes;
    atomic_size_t evict_asked;
    h2o_linklist_t conns; /* conn_rec (conn.c) of every open connection */
    _Atomic size_t buffered; /* input buffered by this worker's connections */
    metrics_counter counters[GC_N];
    metrics_counter tls_failures[TLSFAIL_N]; /* failed handshakes, by reason (conn.c) */
    stats stats;
} worker;

/* What the server shares with its rooms.  Its configuration is handed out
 * where it is used: to the limits here, to each route its own. */
struct server {
    int threads;
    unsigned shutdown_grace_ms;
    tls_store *tls;
    h2o_globalconf_t globalconf;
    h2o_hostconf_t *hosts[L_COUNT][2]; /* NULL-terminated lists for accept ctxs */
    int listen_fd[L_COUNT];
    worker *workers;
    guard_limits limits;
    atomic_size_t open[L_COUNT]; /* connections open, per port */
    atomic_int spare_fd;         /* a descriptor kept to accept a probe with */
    atomic_int shutdown;
    /* What the log said of failed handshakes, per reason, for every
     * worker (tlsfail_say: a line a minute at most, whoever's). */
    pthread_mutex_t tlsfail_lock;
    tlsfail_said tlsfail_said[TLSFAIL_N];
    pthread_mutex_t drained_lock;
    pthread_cond_t drained_cond;
    int n_drained;
};

/* The worker that owns an h2o context (its ctx member). */
static inline worker *worker_of_ctx(h2o_context_t *ctx)
{
    return (worker *)((char *)ctx - offsetof(worker, ctx));
}

/* The worker whose event loop serves a request. */
static inline worker *worker_of(h2o_req_t *req)
{
    return worker_of_ctx(req->conn->ctx);
}

#endif

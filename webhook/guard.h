/*
 * guard.h - the webhook server's resource and protocol decisions, as pure
 * functions: whether to take a new connection, how long to back off
 * accepting when descriptors run out, what to do with a connection that
 * buffers too much or whose reply is not read, whether a connection still
 * has a request arriving (drain), whether a request's framing is ambiguous
 * (request smuggling), and how many connections the descriptor limit
 * allows.
 *
 * conn.c gathers the facts (counters, buffer sizes, socket state) and
 * carries out the answers; nothing here touches a socket.  The numbers and
 * why are in docs/DECISIONS.md, "Webhook limits".
 */
#ifndef OTA_WEBHOOK_GUARD_H
#define OTA_WEBHOOK_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* Connections the health and the metrics ports take each, whatever the
 * admission port does: probes must be answered under a flood. */
#define GUARD_PROBE_CONNECTIONS 16u
/* Descriptors kept for the process itself: stdio, listeners and their
 * per-worker copies, event loops, the spare descriptor, files read on a
 * certificate reload. */
#define GUARD_FD_RESERVE_BASE 24u
#define GUARD_FD_RESERVE_PER_THREAD 4u

typedef struct guard_limits {
    size_t max_connections;  /* admission port, whole process */
    size_t max_header_bytes; /* request line + headers of one HTTP/1 request */
    size_t max_request_bytes;
    size_t max_buffered_bytes; /* input buffered by all connections together */
    uint64_t write_timeout_ns; /* a reply not taken by the client in this long */
    uint64_t handshake_timeout_ns; /* a TLS handshake not done in this long */
    uint64_t upload_grace_ns;      /* a request arriving gets this long ... */
    uint64_t upload_min_rate;      /* ... plus 1 s per this many bytes; 0: no minimum */
} guard_limits;

/* Connections cut to make room for new ones whose close is still pending,
 * per worker: a full admission port admits a new connection over its
 * limit while the connection it evicts is being closed, at most this many
 * at once; and as many again asked of a worker by the others
 * (guard_evict_worker).  The descriptor reserve counts both
 * (guard_connection_cap). */
#define GUARD_EVICTING_MAX 16u
/* Over the buffer budget, a request arriving for at least this long may be
 * cut to make room (guard_budget_victim): an apiserver sends a whole review
 * in milliseconds, so what has been arriving for a second is not one that
 * is being sent at the network's pace. */
#define GUARD_BUDGET_CUT_AGE_NS (1000ull * 1000 * 1000)

/* ---- accepting ---------------------------------------------------------- */

typedef enum guard_port { GUARD_ADMISSION, GUARD_HEALTH, GUARD_METRICS } guard_port;

/* 1: take a connection on port, which has `open` connections now; 0: close
 * it at once (refused).  The admission port takes at most
 * limits->max_connections, the probe ports GUARD_PROBE_CONNECTIONS each. */
int guard_accept(guard_port port, size_t open, const guard_limits *limits);

/* How long to stop accepting after `failures` accept() calls in a row
 * failed for want of descriptors or memory: 0 for none, then 10 ms doubling
 * to 1 s. */
unsigned guard_accept_backoff_ms(unsigned failures);

/* 1 when accept() failed with an errno that means "out of descriptors or
 * memory" (back off), 0 for one that concerns only that connection (the
 * peer gave up: go on accepting). */
int guard_accept_error_is_exhaustion(int err);

/* The admission connection limit that fits the descriptor limit `nofile`
 * (RLIMIT_NOFILE) with `threads` workers: `requested`, or less so that the
 * probes and the process keep their descriptors.  At least 1. */
size_t guard_connection_cap(size_t requested, uint64_t nofile, unsigned threads);

/* What the server knows about a connection of the admission port when the
 * port is full and a new connection wants its slot. */
typedef struct guard_handshake {
    int done;       /* its TLS handshake is complete */
    int hello_seen; /* its ClientHello arrived (OpenSSL started the handshake) */
    int cut;        /* already being closed */
    uint64_t age_ns; /* since accept */
} guard_handshake;

/* 1 when c may give its slot to a new connection on a full admission
 * port: its handshake is not done (one that is done may be the
 * apiserver's), it is not being closed already, and fewer than
 * GUARD_EVICTING_MAX connections cut for the purpose (`evicting`) are
 * still closing. */
int guard_handshake_evictable(const guard_handshake *c, size_t evicting);

/* 1 when a goes before b (both evictable): one that never sent a
 * ClientHello before one whose handshake is under way, then the older. */
int guard_handshake_before(const guard_handshake *a, const guard_handshake *b);

/* The connection (an index into c, n of them) that gives its slot, by the
 * two above, or n to refuse the new one.  conn.c applies the same two
 * while walking its list. */
size_t guard_handshake_victim(const guard_handshake *c, size_t n, size_t evicting);

/* A worker may cut only its own connections.  When the one that accepted a
 * connection on a full port has none to give way, it asks another: the
 * worker (an index, n of them) with the most unfinished handshakes not yet
 * asked for (handshakes[i] - asked[i]), fewer than GUARD_EVICTING_MAX asks
 * pending; n for none (the new connection is refused).  `self` is never
 * chosen.  The worker asked cuts its oldest unfinished handshake at its
 * next sweep. */
size_t guard_evict_worker(const size_t *handshakes, const size_t *asked, size_t n, size_t self);

/* ---- connections -------------------------------------------------------- */

/* What the server knows about one connection at a sweep. */
typedef struct guard_conn {
    int answering;         /* a request of it is being answered */
    size_t buffered;       /* decrypted input not yet consumed */
    int head_complete;     /* buffered input holds a whole request head */
    int writing;           /* a reply is being written */
    uint64_t writing_ns;   /* ... for this long without new output */
    int paused;            /* we stopped reading it (over budget) */
    int handshaking;       /* TLS port: its handshake is not done */
    uint64_t age_ns;       /* since accept */
    uint64_t arriving_ns;  /* a request has been arriving for this long, not
                              counting time we kept it paused (0: none) */
} guard_conn;

typedef enum guard_action {
    GUARD_KEEP,
    GUARD_CUT_HEADERS,       /* request head over max_header_bytes */
    GUARD_CUT_WRITE_TIMEOUT, /* the client does not read its reply */
    GUARD_CUT_HANDSHAKE,     /* TLS handshake not done within its deadline */
    GUARD_CUT_SLOW_UPLOAD,   /* a request arriving under the minimum rate */
    GUARD_PAUSE,             /* stop reading: the process buffers too much */
    GUARD_RESUME,            /* read again */
} guard_action;

/* The action for one connection.  over_budget: all connections together
 * buffer more than max_buffered_bytes; largest: this connection is the one
 * with the most buffered input among those arriving (it keeps reading, so
 * it completes and frees its memory first). */
guard_action guard_conn_action(const guard_conn *c, const guard_limits *limits, int over_budget,
                               int largest);

/* 1 when a request that has been arriving for elapsed_ns (not counting
 * time paused by us) with `received` bytes in is too slow: elapsed is
 * past upload_grace_ns plus one second per upload_min_rate bytes, as
 * Apache's mod_reqtimeout body=GRACE,MinRate=RATE.  0 when min_rate is 0. */
int guard_upload_too_slow(size_t received, uint64_t elapsed_ns, const guard_limits *limits);

/* What the server knows about a request arriving, when the buffer budget
 * is full. */
typedef struct guard_upload {
    int arriving;   /* not answered yet, bytes in */
    int cut;        /* already being closed */
    uint64_t age_ns; /* since its first byte, paused time included */
} guard_upload;

/* 1 when u may be cut while the budget is full: arriving for at least
 * GUARD_BUDGET_CUT_AGE_NS and not being closed already. */
int guard_budget_cuttable(const guard_upload *u);

/* 1 when a is cut before b (both cuttable): the older.  It has held its
 * memory longest, and a review that arrives after it is then read. */
int guard_budget_before(const guard_upload *a, const guard_upload *b);

/* The upload (an index into u, n of them) to cut while the budget is
 * full, by the two above, or n for none.  One per worker and sweep. */
size_t guard_budget_victim(const guard_upload *u, size_t n);

/* Whether the buffered-input total is over the budget, with hysteresis:
 * once over, it stays over until the total falls under three quarters. */
int guard_over_budget(size_t total, size_t budget, int was_over);

/* ---- drain -------------------------------------------------------------- */

/* What the drain knows about one connection. */
typedef struct guard_arrival {
    int answering;        /* a request is being answered */
    size_t buffered;      /* decrypted input not consumed */
    size_t kernel_unread; /* bytes in the socket's receive queue */
    int tls_pending;      /* bytes of a TLS record the TLS layer holds */
    int handshaking;      /* ClientHello seen, handshake not done */
    unsigned requests;    /* requests it has had answered */
    uint64_t age_ns;      /* since accept */
} guard_arrival;

/* A connection that accepted nothing yet counts as arriving this long: its
 * first bytes may be on the wire as SIGTERM lands. */
#define GUARD_FRESH_NS (1000ull * 1000 * 1000)

/* 1 when a drain must wait for this connection. */
int guard_arriving(const guard_arrival *a);

/* ---- framing (RFC 9112 §6.1, §6.3) ------------------------------------- */

typedef enum guard_framing {
    GUARD_FRAMING_OK,
    GUARD_FRAMING_CL_AND_TE,     /* Content-Length and Transfer-Encoding */
    GUARD_FRAMING_CL_CONFLICT,   /* Content-Length values that differ */
} guard_framing;

/* cl: the Content-Length field values (each one header line), n of them;
 * te: whether a Transfer-Encoding field is present. */
guard_framing guard_request_framing(const char *const *cl, const size_t *cl_len, size_t n,
                                    int te);

/* The framing of an HTTP/1 request head as received (request line, header
 * lines, empty line): h2o 2.2.5 keeps neither Content-Length nor
 * Transfer-Encoding among the request's headers, so the decision reads the
 * head itself.  Field names are case-insensitive; at most 16 Content-Length
 * lines are compared (more: CL_CONFLICT). */
guard_framing guard_head_framing(const char *head, size_t len);

/* The length of the request head at the start of buf (up to and including
 * its empty line), or 0 when the empty line has not arrived.  Lines may end
 * in CRLF or a bare LF, as h2o's parser accepts both: "\r\n\r\n",
 * "\n\n", "\r\n\n" and "\n\r\n" all end a head. */
size_t guard_head_end(const char *buf, size_t len);

#endif

/*
 * kube_client.h - a kube-apiserver client on libcurl's multi interface: every
 * request and watch of the process on one event loop, HTTP/2 when the server
 * offers it, a client-side rate limit, and retries where Kubernetes clients
 * retry (429 with Retry-After, 5xx, broken connections) and a repeat cannot
 * do harm.
 *
 * Calls wait in three lanes, served in this order: Lease calls (their own
 * rate limit and no cap, as client-go gives leader election its own
 * client), the caches' streamed reads (lists, watches and their re-opens:
 * kube_call.on_chunk set), then work (writes, and the GETs a decision
 * needs, in one FIFO so that neither holds the other back).  A busy
 * controller's thousands of queued writes therefore never delay its Lease
 * renewal or a watch re-open.  A rate-limit token is taken
 * only when a call goes out.  Calls with a body to wait for (not streams)
 * are capped in flight: a small pool of connections over HTTP/1.1
 * (KUBE_HTTP1_IN_FLIGHT), one shared connection over HTTP/2.
 *
 * No OTA logic lives here: callers say what to send and get the status and
 * body back (whole, or in chunks for lists and watches).
 */
#ifndef OTA_KUBE_CLIENT_H
#define OTA_KUBE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "kube_config.h"
#include "metrics.h"
#include "strbuf.h"

typedef struct kube_client kube_client;

typedef struct kube_result {
    long status;       /* HTTP status, or 0 when no answer came (error says why) */
    const char *body;  /* NUL-terminated whole body; empty for streamed calls */
    size_t body_len;
    const char *error; /* transport error, or NULL */
    int dropped;       /* never sent: its wanted() said no (status 0) */
} kube_result;

/* Called once when a call ends (after its retries). */
typedef void (*kube_done_fn)(void *data, const kube_result *r);
/* Streamed calls: each piece of a 2xx body as it arrives; return 0 to stop. */
typedef int (*kube_chunk_fn)(void *data, const char *chunk, size_t n);
/* Asked before each attempt of a call: 0 drops it (on_done gets status 0). */
typedef int (*kube_wanted_fn)(void *data);

typedef struct kube_call {
    const char *method;       /* "GET", "POST", "PATCH", "PUT", "DELETE" */
    const char *path;         /* from kapi_path, with its query; copied */
    const char *content_type; /* of body, or NULL */
    const char *body;         /* copied; may be NULL */
    size_t body_len;
    kube_chunk_fn on_chunk;   /* non-NULL: stream the body (lists, watches) */
    kube_done_fn on_done;     /* may be NULL */
    kube_wanted_fn wanted;    /* may be NULL: always wanted */
    void *data;
    int no_retry;             /* watches reconnect themselves */
    int idempotent;           /* a write whose repeat is harmless (a create whose
                               * 409 and a delete whose 404 count as done):
                               * retried like a read */
    int lease;                /* leader election: the Lease lane */
    long timeout_ms;          /* 0: 30 s for plain calls, none for streams */
} kube_call;

/* Non-stream calls in flight at most, over HTTP/1.1 (each holds a
 * connection: a small pool) and once the server answered over HTTP/2 (one
 * connection, this many streams on it). */
#define KUBE_HTTP1_IN_FLIGHT 8
#define KUBE_HTTP2_IN_FLIGHT 100

/* API calls by method and exact status, for /metrics as client-go's
 * rest_client_requests_total{code,method}: code "<error>" when no answer
 * came. */
#define KUBE_N_METHODS 6
#define KUBE_N_STATUS 501 /* [0]: no answer; [s - 99]: status s, 100..599 */
typedef struct kube_stats {
    metrics_counter calls[KUBE_N_METHODS][KUBE_N_STATUS];
} kube_stats;

extern const char *const kube_method_names[KUBE_N_METHODS];

/* Where a call's answer is counted: *method and *status are indexes into
 * kube_stats.calls (an unknown method is the last, "OTHER"; a status
 * outside 100..599, or 0, is "<error>"). */
void kube_stats_index(const char *method, long status, int *method_i, int *status_i);
/* Appends rest_client_requests_total, the lines with a count only (as
 * client-go's counters appear when first counted). */
void kube_stats_render(kube_stats *s, strbuf *t);

/* cfg must outlive the client.  NULL on failure (message in err). */
kube_client *kube_client_new(kube_config *cfg, double qps, int burst, char *err, size_t errlen);
/* The User-Agent header of every call ("kubectl-ota/0.1.0"): what the
 * apiserver's audit log and metrics say the caller is.  Cut to
 * KUBE_USER_AGENT_MAX bytes; the default is "ota-prepull". */
#define KUBE_USER_AGENT_MAX 128
void kube_client_set_user_agent(kube_client *c, const char *user_agent);

/* Calls still waiting or running end first, each with status 0 and error
 * "client shut down", so that their owners free what they attached: free
 * the client before what its callbacks touch. */
void kube_client_free(kube_client *c);

/* Queues a call; it starts when the rate limit allows.  0 or -1 (also
 * while kube_client_free runs). */
int kube_client_call(kube_client *c, const kube_call *call);

/* Runs the loop once: starts what may start, moves bytes, finishes calls,
 * then waits at most max_wait_ms for something to happen. */
void kube_client_step(kube_client *c, int max_wait_ms);

/* Calls queued or in progress. */
size_t kube_client_pending(const kube_client *c);

/* The same by state: waiting to start (for a rate-limit token or a
 * connection slot), delayed for a retry, in flight.  For a gauge. */
void kube_client_counts(const kube_client *c, size_t *waiting, size_t *retrying,
                        size_t *in_flight);

/* Ends at once every waiting call whose wanted() now says no (on_done gets
 * status 0, dropped 1), instead of one by one as their turn comes: a
 * leader that lost its lease drops its queued writes.  Returns how many. */
size_t kube_client_drop_unwanted(kube_client *c);

kube_stats *kube_client_stats(kube_client *c);

/* ---- what to do when a call ends (pure: the client carries it out) ---- */

typedef struct kube_retry_input {
    int no_retry;         /* the caller retries itself (watches, Lease calls) */
    int aborted;          /* on_chunk said stop, or the body was too big */
    int attempts;         /* made so far, this one included */
    int max_attempts;
    long status;          /* HTTP status, 0 when no answer came */
    int transport_error;  /* refused, reset, timed out: curl failed */
    int not_sent;         /* ... before any byte of the request went out (could not
                           * resolve, connect or finish the TLS handshake) */
    int write;            /* POST, PUT, PATCH, DELETE */
    int idempotent;       /* a write whose repeat is harmless (kube_call.idempotent) */
    long retry_after_s;   /* the answer's Retry-After in seconds, -1 if none */
    uint64_t backoff_ns;  /* the call's next backoff delay */
} kube_retry_input;

typedef struct kube_retry_decision {
    int retry;            /* queue the call again */
    uint64_t delay_ns;    /* ... to start no sooner than this from now */
    int pause;            /* every call of the lane's rate limit waits pause_ns
                           * from now */
    uint64_t pause_ns;
} kube_retry_decision;

/* Retried where client-go retries (a broken connection, 429, 5xx), unless
 * the caller reconnects itself, the body was refused or the attempts are
 * spent; after a 429's Retry-After, else after the backoff delay.  A write
 * that may have reached the server (a connection broken after sending, a
 * 5xx other than 503) is not retried unless it is idempotent: only when it
 * cannot have been applied (not sent, 429, 503).  A 429 with Retry-After
 * means the server is overloaded: every call waits, also after a call that
 * is not retried (a watch, a Lease read). */
kube_retry_decision kube_retry_decide(const kube_retry_input *in);


#endif

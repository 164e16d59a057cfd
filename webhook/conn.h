/*
 * conn.h - a connection's life in the webhook's h2o server, from accept to
 * close, and the guard's hands: the I/O that carries out what guard.c
 * decides (refuse at accept, back off accepting, cut, pause and resume
 * reading, refuse ambiguous framing, say whether a drain must still wait).
 *
 * A worker calls these on its own event loop thread, for its own
 * connections; what workers share (connections open per port, the spare
 * descriptor, bytes buffered) is atomic, so conn_reopen_spare() may run on
 * any thread and conn_metrics_render() reads every worker's counters.
 */
#ifndef OTA_WEBHOOK_CONN_H
#define OTA_WEBHOOK_CONN_H

#include <stdint.h>

#include <h2o.h>

#include "metrics.h"
#include "server_int.h"

/* Starts accepting on fd, a listening socket of the worker's own. */
void conn_listen(worker *w, enum listener_kind kind, int fd);
/* Stops accepting and closes the listener; a no-op once closed. */
void conn_unlisten(worker *w, enum listener_kind kind);
/* Accepts up to batch connections already queued on a listener. */
void conn_accept_pending(worker *w, enum listener_kind kind, unsigned batch);
/* Restarts the listeners whose accept back-off has run out. */
void conn_resume_accepting(worker *w, uint64_t now);

/* Keeps a descriptor in reserve for a probe to be accepted with when the
 * process runs out (a no-op while one is kept). */
void conn_reopen_spare(server *srv);

/* After each turn of the event loop: the write timeout, the head limit and
 * the buffered-bytes budget. */
void conn_sweep(worker *w, uint64_t now);

/* Whether a request is still arriving on the admission port: a drain
 * waits for it as for the ones being answered. */
int conn_receiving(worker *w, uint64_t now);

/* What OpenSSL says of a connection's handshake (server_tls_info_callback).
 * Started: the first bytes of ssl arrived; the connection it belongs to
 * can be asked about it from now on.  Done: it completed.  Alert sent:
 * the server ended it with a fatal alert (desc).  Stopped: SSL_accept
 * returned without completing it, failed if OpenSSL's error queue says
 * so.  A failure is counted by reason (tlsfail.h) and said in the log at
 * most once a minute per reason; so is a connection its client closes
 * mid-handshake.  A connection the server cut is counted as a cut only. */
void conn_handshake_started(worker *w, const SSL *ssl);
void conn_handshake_done(worker *w, const SSL *ssl);
void conn_handshake_alert_sent(worker *w, const SSL *ssl, int desc);
void conn_handshake_stopped(worker *w, const SSL *ssl);

/* First thing of every route: counts the request as in flight until h2o
 * disposes of it, and answers 400 to ambiguous framing.  1 when the
 * request is answered already. */
int conn_request_begin(h2o_req_t *req);

/* The connection limits' counters and gauges, and the failed handshakes
 * by reason, summed over the workers. */
void conn_metrics_render(strbuf *t, server *srv);

#endif

/*
 * server.h - the h2o side of ota-webhook: listeners, worker threads (one
 * event loop each), the three routes, drain on shutdown.
 *
 * The TLS port serves POST /mutate and POST /validate; the health port
 * (plain HTTP) /livez, /healthz and /readyz; the metrics port /metrics.
 * Requests are decided by admit_review() (admit.h); the server only moves
 * bytes.  What main.c sees is this header; the rooms behind it share
 * server_int.h.
 */
#ifndef OTA_WEBHOOK_SERVER_H
#define OTA_WEBHOOK_SERVER_H

#include <stdatomic.h>
#include <stddef.h>

#include "stats.h"
#include "tls.h"

typedef struct server_config {
    const char *bind_address;    /* TLS admission port, "HOST:PORT" or ":PORT" */
    const char *health_address;  /* plain /healthz, /readyz */
    const char *metrics_address; /* plain /metrics */
    int threads;
    size_t max_request_bytes;
    const char *controller_username;
    unsigned read_timeout_ms;     /* a stalled request or handshake is cut after this */
    unsigned shutdown_grace_ms;   /* drain waits at most this long for in-flight requests */
    size_t max_connections;       /* admission port, whole process */
    size_t max_header_bytes;      /* one request head */
    size_t max_buffered_bytes;    /* request input buffered by all connections */
    unsigned write_timeout_ms;    /* a reply the client does not take is cut after this */
    unsigned handshake_timeout_ms; /* a TLS handshake not done is cut after this */
    unsigned upload_grace_ms;     /* a request arriving gets this long ... */
    size_t upload_min_rate;       /* ... plus 1 s per this many bytes (0: no minimum) */
    const char *version, *commit; /* for ota_prepull_build_info */
} server_config;

typedef struct server server;

/* OpenSSL info callback for the serving contexts (tls_store_init): lets the
 * server see each connection's SSL from its ClientHello on. */
void server_tls_info_callback(const SSL *ssl, int where, int ret);

/* Binds the three listeners; NULL with a message in err on failure. */
server *server_create(const server_config *cfg, tls_store *tls, char *err, size_t errlen);
/* Starts the worker threads.  0 or -1. */
int server_start(server *srv);
/* Asks the workers to stop accepting, finish in-flight requests and exit;
 * safe from any thread. */
void server_request_shutdown(server *srv);
/* Waits until every worker has drained; the process then exits (workers
 * stay parked until it does). */
void server_wait_drained(server *srv);
void server_destroy(server *srv);

#endif

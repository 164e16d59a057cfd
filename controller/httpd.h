/*
 * httpd.h - the controller's plain-HTTP side ports: /healthz, /readyz and
 * /metrics.  A few dozen lines of non-blocking HTTP/1.0 on the controller's
 * own loop (the controller has no h2o); each connection gets one answer and
 * is closed.  Requests are bounded in size and in time.
 */
#ifndef OTA_HTTPD_H
#define OTA_HTTPD_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

#define HTTPD_MAX_CONNS 16
#define HTTPD_MAX_REQUEST 4096

/* Fills body for path; returns the HTTP status. */
typedef int (*httpd_route_fn)(void *data, const char *path, strbuf *body);

typedef struct httpd_conn {
    int fd;
    uint64_t deadline;
    size_t len;
    char buf[HTTPD_MAX_REQUEST];
} httpd_conn;

typedef struct httpd {
    int listen_fd;
    httpd_route_fn route;
    void *data;
    httpd_conn conns[HTTPD_MAX_CONNS];
} httpd;

/* Listens on address ("HOST:PORT" or ":PORT").  0, or -1 with err set. */
int httpd_open(httpd *h, const char *address, httpd_route_fn route, void *data, char *err,
               size_t errlen);
/* Accepts, reads and answers whatever is ready; never blocks. */
void httpd_step(httpd *h, uint64_t now);
void httpd_close(httpd *h);

/* The meta/v1 Status of a client error (400, 404, 405) with message, as
 * the apiserver and the webhook answer one; malloc'd (caller frees), or
 * NULL when out of memory.  Routes answering 404 or 405 give their text as
 * the message. */
char *httpd_status_body(int status, const char *message);

#endif

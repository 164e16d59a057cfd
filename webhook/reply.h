/*
 * reply.h - how the webhook's h2o server answers: a whole body with its
 * content-length, a meta/v1 Status for errors, 405 with its Allow header,
 * and a filter that turns h2o's own text/plain 4xx answers into a Status
 * like ours.  Every route (route_*.c) and the guard's framing answer
 * (conn.c) reply through here.
 */
#ifndef OTA_WEBHOOK_REPLY_H
#define OTA_WEBHOOK_REPLY_H

#include <stddef.h>

#include <h2o.h>

/* Sends status, reason phrase, Content-Type and the whole body.  body must
 * live until the request is disposed of (the request's pool, or static). */
void reply_send(h2o_req_t *req, int status, const char *reason, const char *type,
                const char *body, size_t len);

/* A meta/v1 Status body; reason is the Status reason ("NotFound"). */
void reply_status(h2o_req_t *req, int code, const char *reason, const char *message);

/* A whole HTTP/1.1 response with a meta/v1 Status body and "Connection:
 * close", for a connection cut before h2o made a request of what it
 * received (conn.c: a request arriving too slowly).  Returns malloc'd
 * memory the caller frees, its length in *len; NULL when out of memory. */
char *reply_raw_status(int code, const char *phrase, const char *reason, const char *message,
                       size_t *len);

/* text/plain; charset=utf-8; text is static. */
void reply_text(h2o_req_t *req, int code, const char *reason, const char *text);

/* 405 with Allow: allow, as a Status. */
void reply_method_not_allowed(h2o_req_t *req, const char *allow);

/* Adds the filter that rewrites h2o's own text/plain 4xx answers (400 for
 * a malformed request, 413, 417) as a Status, to a path of a host;
 * max_request_bytes is the limit a 413 names. */
void reply_status_filter_register(h2o_pathconf_t *path, size_t max_request_bytes);

#endif

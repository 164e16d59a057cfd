/*
 * reply.c - see reply.h.
 *
 * Every answer carries a content-length, so keep-alive survives error
 * answers, and every error answer is a meta/v1 Status in JSON, the shape
 * the apiserver reads, whether a route wrote it or h2o did.  While the
 * server drains, an answer closes its HTTP/1.1 connection.
 */
#include "reply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "review.h"
#include "server_int.h"

void reply_send(h2o_req_t *req, int status, const char *reason, const char *type,
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

/* The Status body in the request's pool, or NULL.  The arena is gone when
 * h2o writes, so the body is copied out of it. */
static char *status_body(h2o_req_t *req, int code, const char *reason, const char *message,
                         size_t *len)
{
    arena a;
    arena_init(&a);
    char *copy = NULL;
    const char *body = review_encode_status(code, reason, message, &a, len);
    if (body != NULL) {
        copy = h2o_mem_alloc_pool(&req->pool, *len);
        memcpy(copy, body, *len);
    }
    arena_free(&a);
    return copy;
}

void reply_status(h2o_req_t *req, int code, const char *reason, const char *message)
{
    size_t len = 0;
    const char *body = status_body(req, code, reason, message, &len);
    if (body == NULL) {
        body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\"}";
        len = strlen(body);
    }
    reply_send(req, code, http_phrase(code), "application/json", body, len);
}

char *reply_raw_status(int code, const char *phrase, const char *reason, const char *message,
                       size_t *len)
{
    arena a;
    arena_init(&a);
    char *out = NULL;
    size_t blen = 0;
    const char *body = review_encode_status(code, reason, message, &a, &blen);
    if (body != NULL) {
        char head[192];
        int hlen = snprintf(head, sizeof(head),
                            "HTTP/1.1 %d %s\r\nServer: ota-webhook\r\n"
                            "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                            "Connection: close\r\n\r\n",
                            code, phrase, blen);
        if (hlen > 0 && (size_t)hlen < sizeof(head))
            out = malloc((size_t)hlen + blen);
        if (out != NULL) {
            memcpy(out, head, (size_t)hlen);
            memcpy(out + hlen, body, blen);
            *len = (size_t)hlen + blen;
        }
    }
    arena_free(&a);
    return out;
}

void reply_text(h2o_req_t *req, int code, const char *reason, const char *text)
{
    reply_send(req, code, reason, "text/plain; charset=utf-8", text, strlen(text));
}

void reply_method_not_allowed(h2o_req_t *req, const char *allow)
{
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_ALLOW, NULL, allow, strlen(allow));
    char message[128];
    snprintf(message, sizeof(message), "method %.*s is not allowed here; use %s",
             (int)(req->method.len > 16 ? 16 : req->method.len), req->method.base, allow);
    reply_status(req, 405, "MethodNotAllowed", message);
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

typedef struct status_filter {
    h2o_filter_t super;
    size_t max_request_bytes;
} status_filter;

static void on_setup_error_ostream(h2o_filter_t *self, h2o_req_t *req, h2o_ostream_t **slot)
{
    ssize_t i = h2o_find_header(&req->res.headers, H2O_TOKEN_CONTENT_TYPE, -1);
    if (req->res.status >= 400 && req->res.status < 500 && i >= 0 &&
        h2o_memis(req->res.headers.entries[i].value.base,
                  req->res.headers.entries[i].value.len < 10 ? req->res.headers.entries[i].value.len : 10,
                  H2O_STRLIT("text/plain"))) {
        char message[160];
        h2o_error_message(req->res.status, req->res.reason, message, sizeof(message),
                          ((status_filter *)self)->max_request_bytes);
        size_t len = 0;
        char *body =
            status_body(req, req->res.status, status_reason_of(req->res.status), message, &len);
        if (body != NULL) {
            status_ostream *so = (status_ostream *)h2o_add_ostream(req, sizeof(*so), slot);
            so->super.do_send = status_ostream_send;
            so->body = h2o_iovec_init(body, len);
            so->sent = 0;
            req->res.headers.entries[i].value = h2o_iovec_init(H2O_STRLIT("application/json"));
            req->res.content_length = len;
            slot = &so->super.next;
        }
    }
    h2o_setup_next_ostream(req, slot);
}

void reply_status_filter_register(h2o_pathconf_t *path, size_t max_request_bytes)
{
    status_filter *self = (status_filter *)h2o_create_filter(path, sizeof(*self));
    self->super.on_setup_ostream = on_setup_error_ostream;
    self->max_request_bytes = max_request_bytes;
}

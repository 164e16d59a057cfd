/*
 * httpd.c - see httpd.h.
 */
#include "httpd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "json.h"
#include "listen.h"

#define HTTPD_TIMEOUT_NS (5ull * 1000000000ull)

int httpd_open(httpd *h, const char *address, httpd_route_fn route, void *data, char *err,
               size_t errlen)
{
    memset(h, 0, sizeof(*h));
    for (int i = 0; i < HTTPD_MAX_CONNS; i++)
        h->conns[i].fd = -1;
    h->route = route;
    h->data = data;
    h->listen_fd = listen_open(address, err, errlen);
    return h->listen_fd >= 0 ? 0 : -1;
}

static void finish(httpd_conn *c)
{
    close(c->fd);
    c->fd = -1;
    c->len = 0;
    c->buf[0] = '\0'; /* the next connection must not see this request */
}

static void reply(httpd_conn *c, int status, const char *type, const char *body, size_t len)
{
    const char *phrase = status == 200   ? "OK"
                         : status == 404 ? "Not Found"
                         : status == 405 ? "Method Not Allowed"
                         : status == 400 ? "Bad Request"
                                         : "Service Unavailable";
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.0 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, phrase, type, len);
    /* Small answers to a local prober: a short write is not retried. */
    if (send(c->fd, head, (size_t)n, MSG_NOSIGNAL) == n && len > 0)
        (void)!send(c->fd, body, len, MSG_NOSIGNAL);
    finish(c);
}

char *httpd_status_body(int status, const char *message)
{
    const char *reason = status == 404   ? "NotFound"
                         : status == 405 ? "MethodNotAllowed"
                                         : "BadRequest";
    json_writer w;
    json_writer_init(&w, NULL);
    json_write_failure_status(&w, status, reason, message);
    return json_writer_take(&w);
}

/* A client error as a meta/v1 Status, as the apiserver and the webhook
 * answer them; the message is the route's text without its newline. */
static void reply_status(httpd_conn *c, int status, const char *text, size_t len)
{
    char message[256];
    while (len > 0 && text[len - 1] == '\n')
        len--;
    snprintf(message, sizeof(message), "%.*s", (int)len, text);
    char *body = httpd_status_body(status, message);
    if (body == NULL) {
        reply(c, 503, "text/plain; charset=utf-8", "out of memory\n", 14);
        return;
    }
    reply(c, status, "application/json", body, strlen(body));
    free(body);
}

static void answer(httpd *h, httpd_conn *c)
{
    char method[8], path[256];
    if (sscanf(c->buf, "%7s %255s", method, path) != 2) {
        reply_status(c, 400, "bad request line", 16);
        return;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        reply_status(c, 405, "use GET", 7);
        return;
    }
    char *query = strchr(path, '?');
    if (query != NULL)
        *query = '\0';
    strbuf body = {0};
    int status = h->route(h->data, path, &body);
    if (body.failed)
        status = 503;
    const char *type = strcmp(path, "/metrics") == 0 ? "text/plain; version=0.0.4; charset=utf-8"
                                                     : "text/plain; charset=utf-8";
    if (status == 404 || status == 405)
        reply_status(c, status, body.data != NULL ? body.data : "", body.len);
    else
        reply(c, status, type, body.data != NULL ? body.data : "", body.failed ? 0 : body.len);
    strbuf_free(&body);
}

void httpd_step(httpd *h, uint64_t now)
{
    if (h->listen_fd < 0)
        return;
    for (;;) {
        int fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            break;
        httpd_conn *slot = NULL;
        for (int i = 0; i < HTTPD_MAX_CONNS && slot == NULL; i++)
            if (h->conns[i].fd < 0)
                slot = &h->conns[i];
        if (slot == NULL) {
            close(fd); /* full: a prober retries */
            continue;
        }
        slot->fd = fd;
        slot->len = 0;
        slot->buf[0] = '\0';
        slot->deadline = now + HTTPD_TIMEOUT_NS;
    }
    for (int i = 0; i < HTTPD_MAX_CONNS; i++) {
        httpd_conn *c = &h->conns[i];
        if (c->fd < 0)
            continue;
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
        if (n > 0) {
            c->len += (size_t)n;
            c->buf[c->len] = '\0';
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            finish(c);
            continue;
        }
        if (strstr(c->buf, "\r\n\r\n") != NULL || strstr(c->buf, "\n\n") != NULL)
            answer(h, c);
        else if (c->len >= sizeof(c->buf) - 1)
            reply_status(c, 400, "request too large", 17);
        else if (now > c->deadline)
            finish(c);
    }
}

void httpd_close(httpd *h)
{
    for (int i = 0; i < HTTPD_MAX_CONNS; i++)
        if (h->conns[i].fd >= 0)
            finish(&h->conns[i]);
    if (h->listen_fd >= 0)
        close(h->listen_fd);
    h->listen_fd = -1;
}

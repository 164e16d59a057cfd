/*
 * route_metrics.c - GET /metrics, the metrics port's route: Prometheus
 * text, summed over the workers when asked (stats.c, conn.c's guard
 * counters), then build info and the process's own.
 */
#include "route.h"

#include "conn.h"
#include "metrics.h"
#include "reply.h"
#include "stats.h"

typedef struct metrics_handler {
    h2o_handler_t super;
    server *srv;
    const char *version, *commit; /* for ota_prepull_build_info */
} metrics_handler;

static int on_req(h2o_handler_t *h, h2o_req_t *req)
{
    metrics_handler *self = (metrics_handler *)h;
    server *srv = self->srv;
    if (conn_request_begin(req))
        return 0;
    if (!route_is_path(req, "/metrics")) {
        reply_status(req, 404, "NotFound", "no such path: use /metrics");
        return 0;
    }
    if (!route_is_method(req, "GET") && !route_is_method(req, "HEAD")) {
        reply_method_not_allowed(req, "GET, HEAD");
        return 0;
    }
    /* One per worker thread (--threads, or one per CPU): request memory,
     * not a VLA. */
    stats **blocks = h2o_mem_alloc_pool(&req->pool, sizeof(*blocks) * (size_t)srv->threads);
    for (int i = 0; i < srv->threads; i++)
        blocks[i] = &srv->workers[i].stats;
    strbuf t = {0};
    stats_render(&t, blocks, (size_t)srv->threads, srv->tls);
    conn_metrics_render(&t, srv);
    metrics_build_info(&t, self->version, self->commit);
    metrics_process_render(&t);
    if (t.failed) {
        strbuf_free(&t);
        reply_text(req, 500, "Internal Server Error", "out of memory\n");
        return 0;
    }
    char *body = h2o_mem_alloc_pool(&req->pool, t.len);
    memcpy(body, t.data, t.len);
    size_t len = t.len;
    strbuf_free(&t);
    reply_send(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, len);
    return 0;
}

void route_metrics_register(h2o_pathconf_t *path, server *srv, const char *version,
                            const char *commit)
{
    metrics_handler *self = (metrics_handler *)h2o_create_handler(path, sizeof(*self));
    self->super.on_req = on_req;
    self->srv = srv;
    self->version = version != NULL ? version : "";
    self->commit = commit != NULL ? commit : "";
}

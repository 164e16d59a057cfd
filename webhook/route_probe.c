/*
 * route_probe.c - GET /livez, /healthz and /readyz, the health port's
 * route (plain HTTP, for the kubelet's probes).
 *
 * /readyz says 503 while the server drains, so the endpoint leaves the
 * Service first; the others say ok as long as the event loop answers.
 */
#include "route.h"

#include "conn.h"
#include "reply.h"

typedef struct probe_handler {
    h2o_handler_t super;
    server *srv;
} probe_handler;

static int on_req(h2o_handler_t *h, h2o_req_t *req)
{
    probe_handler *self = (probe_handler *)h;
    if (conn_request_begin(req))
        return 0;
    if (!route_is_path(req, "/livez") && !route_is_path(req, "/healthz") &&
        !route_is_path(req, "/readyz")) {
        reply_status(req, 404, "NotFound", "no such path: use /livez, /healthz or /readyz");
        return 0;
    }
    if (!route_is_method(req, "GET") && !route_is_method(req, "HEAD")) {
        reply_method_not_allowed(req, "GET, HEAD");
        return 0;
    }
    if (route_is_path(req, "/readyz") && atomic_load(&self->srv->shutdown))
        reply_text(req, 503, "Service Unavailable", "shutting down\n");
    else
        reply_text(req, 200, "OK", "ok\n");
    return 0;
}

void route_probe_register(h2o_pathconf_t *path, server *srv)
{
    probe_handler *self = (probe_handler *)h2o_create_handler(path, sizeof(*self));
    self->super.on_req = on_req;
    self->srv = srv;
}

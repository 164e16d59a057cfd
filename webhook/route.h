/*
 * route.h - the webhook's routes, each an h2o handler as h2o's own
 * (lib/handler/ in h2o): a struct that embeds h2o_handler_t, a static
 * on_req, and a register function that creates it on a path.
 *
 *   route_admit.c    POST /mutate, POST /validate   admission port (TLS)
 *   route_probe.c    /livez, /healthz, /readyz      health port
 *   route_metrics.c  /metrics                       metrics port
 *
 * Each is registered on "/" of its port's host and answers 404 (and 405)
 * itself, as a meta/v1 Status.
 */
#ifndef OTA_WEBHOOK_ROUTE_H
#define OTA_WEBHOOK_ROUTE_H

#include <string.h>

#include <h2o.h>

#include "server_int.h"

/* Decisions by admit_review(); controller_username and co_writer_usernames
 * as in admit_config. */
void route_admit_register(h2o_pathconf_t *path, const char *controller_username,
                          const char *co_writer_usernames);
/* /readyz says 503 once srv shuts down, so the endpoint leaves the
 * Service before the drain ends. */
void route_probe_register(h2o_pathconf_t *path, server *srv);
/* The sum of srv's workers' counters, the TLS store's, the guard's, build
 * info (version and commit may be NULL) and process metrics. */
void route_metrics_register(h2o_pathconf_t *path, server *srv, const char *version,
                            const char *commit);

static inline int route_is_method(h2o_req_t *req, const char *method)
{
    return h2o_memis(req->method.base, req->method.len, method, strlen(method));
}

static inline int route_is_path(h2o_req_t *req, const char *path)
{
    return h2o_memis(req->path_normalized.base, req->path_normalized.len, path, strlen(path));
}

#endif

/*
 * route_admit.c - POST /mutate and POST /validate, for ImagePullJobs
 * (manifests/components/imagepulljob) POST /mutate-imagepulljob and
 * /validate-imagepulljob, and for ImageCaches (manifests/components/
 * imagecache) POST /validate-imagecache: the admission port's route.  The
 * decision dispatches on the request's resource, so the paths of one phase
 * differ only in the path label of the metrics and logs.
 *
 * The decision is admit_review()'s (admit.h); this handler only finds the
 * phase from the path, hands the body over and answers.  Each way out
 * (no such path, wrong method, out of memory, the decision's 200 or 400)
 * ends in answer(), which sends, counts and logs, so no exit can forget
 * its count or its log line.
 */
#include "route.h"

#include "admit.h"
#include "arena.h"
#include "clock.h"
#include "conn.h"
#include "log.h"
#include "reply.h"
#include "stats.h"

typedef struct admit_handler {
    h2o_handler_t super;
    admit_config cfg;
} admit_handler;

static void *pool_block(void *ctx, size_t n)
{
    return h2o_mem_alloc_pool(ctx, n);
}

static void log_outcome(const admit_outcome *out, admit_phase phase, arena *a)
{
    if (out->result != ADMIT_DENIED && out->result != ADMIT_PATCHED)
        return;
    log_line l;
    log_begin(&l, LOG_INFO, out->result == ADMIT_DENIED ? "denied" : "mutated");
    log_str(&l, "webhook", phase == ADMIT_MUTATE ? "mutate" : "validate");
    log_sv(&l, "uid", out->uid);
    log_sv(&l, "user", out->username);
    log_str(&l, "object", out->object_ref);
    if (out->result == ADMIT_DENIED) {
        log_str(&l, "rule", ota_rule_name(out->rule));
        log_str(&l, "message", out->message);
    } else {
        log_str(&l, "mutations", admit_mutation_names(out->mutations, a));
    }
    log_end(&l, LOG_INFO);
}

/* The one way out: the response for result, the request's count and
 * latency since start, and the log lines.  out (with the arena it lives
 * in) is the decision, NULL where there is none. */
static int answer(h2o_req_t *req, uint64_t start, enum stats_path path, enum stats_result result,
                  const admit_outcome *out, arena *a)
{
    /* Counted before the response goes: a client that has its answer
     * must find it counted on /metrics (a race the integration test of
     * exact counters under concurrency caught, once in a few runs). */
    stats_record(&worker_of(req)->stats, path, result, clock_mono_ns() - start, out);
    switch (result) {
    case STATS_NOT_FOUND:
        reply_status(req, 404, "NotFound",
                     "no such path: use POST /mutate, /validate, /mutate-imagepulljob, "
                     "/validate-imagepulljob or /validate-imagecache");
        break;
    case STATS_BAD_METHOD:
        reply_method_not_allowed(req, "POST");
        break;
    case STATS_ERROR:
        reply_text(req, 500, "Internal Server Error", "out of memory\n");
        break;
    default:
        reply_send(req, out->http_status, out->http_status == 200 ? "OK" : "Bad Request",
                   "application/json", out->body, out->body_len);
        break;
    }
    if (result == STATS_ERROR)
        log_msg(LOG_ERROR, "out of memory deciding a request", NULL);
    if (out == NULL)
        return 0;
    admit_phase phase = path == STATS_MUTATE || path == STATS_MUTATE_IPJ ? ADMIT_MUTATE : ADMIT_VALIDATE;
    if (out->result == ADMIT_INVALID) {
        log_line l;
        log_begin(&l, LOG_WARN, "bad request");
        log_str(&l, "path", stats_path_name(path));
        log_str(&l, "error", out->message);
        log_end(&l, LOG_WARN);
    }
    log_outcome(out, phase, a);
    return 0;
}

static int on_req(h2o_handler_t *h, h2o_req_t *req)
{
    admit_handler *self = (admit_handler *)h;
    if (conn_request_begin(req))
        return 0;
    uint64_t start = clock_mono_ns();
    admit_phase phase;
    enum stats_path path;
    if (route_is_path(req, "/mutate")) {
        phase = ADMIT_MUTATE;
        path = STATS_MUTATE;
    } else if (route_is_path(req, "/validate")) {
        phase = ADMIT_VALIDATE;
        path = STATS_VALIDATE;
    } else if (route_is_path(req, "/mutate-imagepulljob")) {
        phase = ADMIT_MUTATE;
        path = STATS_MUTATE_IPJ;
    } else if (route_is_path(req, "/validate-imagepulljob")) {
        phase = ADMIT_VALIDATE;
        path = STATS_VALIDATE_IPJ;
    } else if (route_is_path(req, "/validate-imagecache")) {
        phase = ADMIT_VALIDATE;
        path = STATS_VALIDATE_IC;
    } else {
        return answer(req, start, STATS_OTHER, STATS_NOT_FOUND, NULL, NULL);
    }
    if (!route_is_method(req, "POST"))
        return answer(req, start, path, STATS_BAD_METHOD, NULL, NULL);

    /* Everything the decision allocates lives in the request's pool. */
    arena a;
    arena_init_with(&a, pool_block, &req->pool);
    char now[32];
    clock_rfc3339(now, sizeof(now));
    admit_outcome out;
    if (admit_review(phase, req->entity.base, req->entity.len, now, &self->cfg, &a, &out) != 0)
        return answer(req, start, path, STATS_ERROR, NULL, NULL);
    return answer(req, start, path, (enum stats_result)out.result, &out, &a);
}

void route_admit_register(h2o_pathconf_t *path, const char *controller_username,
                          const char *co_writer_usernames)
{
    admit_handler *self = (admit_handler *)h2o_create_handler(path, sizeof(*self));
    self->super.on_req = on_req;
    self->cfg.controller_username = controller_username;
    self->cfg.co_writer_usernames = co_writer_usernames;
}

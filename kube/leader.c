/*
 * leader.c - see leader.h.  One step at a time: GET the Lease, then create it
 * (404), take it (free or expired), renew it (ours), or wait.  leader_decide
 * says which; leader_tick and the callbacks only carry it out.
 */
#include "leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yajl/yajl_tree.h>

#include "callerr.h"
#include "clock.h"
#include "json.h"
#include "kapi.h"
#include "log.h"

#define LEASE_MAX_DEPTH 64 /* a Lease with its managedFields is 7 deep */

static void set_leader(leader *l, int on)
{
    if (l->st.is_leader == on)
        return;
    l->st.is_leader = on;
    /* giving the lease up at shutdown is no loss */
    log_msg(LOG_INFO, on ? "became leader" : l->releasing ? "released lease" : "lost leadership",
            "lease %s/%s as %s",
            l->cfg.namespace, l->cfg.name, l->cfg.identity);
    if (l->on_change != NULL)
        l->on_change(l->data, on);
}

void leader_init(leader *l, kube_client *client, const leader_config *cfg,
                 void (*on_change)(void *data, int is_leader), void *data)
{
    memset(l, 0, sizeof(*l));
    l->client = client;
    l->cfg = *cfg;
    l->on_change = on_change;
    l->data = data;
}

static char *lease_body(leader *l, const char *holder, long duration_s)
{
    char now[40];
    clock_rfc3339_micro(now, sizeof(now)); /* MicroTime, as Lease times are written */
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    int taking = strcmp(l->holder, l->cfg.identity) != 0 && holder[0] != '\0';
    json_map_open(&w, NULL);
    json_kv_str(&w, "apiVersion", "coordination.k8s.io/v1");
    json_kv_str(&w, "kind", "Lease");
    json_map_open(&w, "metadata");
    json_kv_str(&w, "name", l->cfg.name);
    json_kv_str(&w, "namespace", l->cfg.namespace);
    if (l->exists)
        json_kv_str(&w, "resourceVersion", l->resource_version);
    json_map_close(&w);
    json_map_open(&w, "spec");
    json_kv_str(&w, "holderIdentity", holder);
    json_kv_int(&w, "leaseDurationSeconds", duration_s);
    json_kv_str(&w, "acquireTime", taking || l->acquire_time[0] == '\0' ? now : l->acquire_time);
    json_kv_str(&w, "renewTime", now);
    json_kv_int(&w, "leaseTransitions", l->transitions + (taking && l->exists ? 1 : 0));
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_take(&w);
}

static const char *tree_str(yajl_val v, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    return s != NULL ? YAJL_GET_STRING(s) : "";
}

static long long tree_int(yajl_val v, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    yajl_val n = yajl_tree_get(v, path, yajl_t_number);
    return n != NULL && YAJL_IS_INTEGER(n) ? YAJL_GET_INTEGER(n) : 0;
}

int leader_lease_read(const char *body, size_t len, leader_lease *out)
{
    char err[128];
    yajl_val v = json_parse_tree(body, len, LEASE_MAX_DEPTH, err, sizeof(err));
    if (v == NULL)
        return -1;
    snprintf(out->record, sizeof(out->record), "%s|%s|%lld", tree_str(v, "spec", "holderIdentity"),
             tree_str(v, "spec", "renewTime"), tree_int(v, "spec", "leaseDurationSeconds"));
    snprintf(out->holder, sizeof(out->holder), "%s", tree_str(v, "spec", "holderIdentity"));
    snprintf(out->resource_version, sizeof(out->resource_version), "%s",
             tree_str(v, "metadata", "resourceVersion"));
    snprintf(out->acquire_time, sizeof(out->acquire_time), "%s",
             tree_str(v, "spec", "acquireTime"));
    out->transitions = tree_int(v, "spec", "leaseTransitions");
    yajl_tree_free(v);
    return 0;
}

/* Remembers the Lease as read; *changed says whether its record differs
 * from the last one seen.  Returns 0 if it does not parse. */
static int observe(leader *l, const char *body, size_t len, int *changed)
{
    leader_lease lease;
    *changed = 0;
    if (leader_lease_read(body, len, &lease) != 0)
        return 0;
    if (strcmp(lease.record, l->record) != 0) {
        snprintf(l->record, sizeof(l->record), "%s", lease.record);
        *changed = 1;
    }
    snprintf(l->holder, sizeof(l->holder), "%s", lease.holder);
    snprintf(l->resource_version, sizeof(l->resource_version), "%s", lease.resource_version);
    snprintf(l->acquire_time, sizeof(l->acquire_time), "%s", lease.acquire_time);
    l->transitions = lease.transitions;
    l->exists = 1;
    return 1;
}

leader_decision leader_decide(const leader_config *cfg, const leader_state *st,
                              const leader_observation *obs, uint64_t now)
{
    leader_decision d = {LEADER_WAIT, *st};
    leader_state *s = &d.state;
    if (obs->changed)
        s->observed_at = now; /* our own clock, not the writer's */
    switch (obs->event) {
    case LEADER_TICK:
        if (!s->busy && now >= s->next_try)
            d.step = s->held ? LEADER_RENEW : LEADER_GET;
        break;
    case LEADER_READ_MISSING:
        s->held = 0;
        d.step = LEADER_CREATE;
        break;
    case LEADER_READ: {
        s->held = 0;
        int ours = strcmp(obs->holder, cfg->identity) == 0;
        int expired = obs->holder[0] == '\0' || s->observed_at == 0 ||
                      now > s->observed_at + cfg->lease_ns;
        if (ours) {
            d.step = LEADER_RENEW;
        } else if (expired) {
            d.step = LEADER_TAKE;
        } else {
            s->is_leader = 0; /* someone else holds a live lease */
            s->next_try = now + cfg->retry_ns;
        }
        break;
    }
    case LEADER_WRITTEN:
        s->held = 1;
        s->last_renew = now;
        s->is_leader = 1;
        s->next_try = now + cfg->retry_ns;
        break;
    case LEADER_READ_FAILED:
    case LEADER_WRITE_FAILED:
        s->held = 0; /* read before writing again */
        /* 409: another candidate wrote first.  Anything else: try again
         * soon; the renew deadline below ends a leadership that fails. */
        s->next_try = now + cfg->retry_ns;
        break;
    }
    /* Stop writing the moment the renew deadline passes without a renewal:
     * another candidate may take over one lease duration after our last
     * renewal, which is later than this. */
    if (s->is_leader && now > s->last_renew + cfg->renew_deadline_ns)
        s->is_leader = 0;
    return d;
}

/* The verb of a Lease call, as RBAC names it and as the log says it. */
static const char *call_verb(leader_step call)
{
    switch (call) {
    case LEADER_GET:
        return "get";
    case LEADER_CREATE:
        return "create";
    case LEADER_TAKE:
    case LEADER_RENEW:
        return "update";
    case LEADER_WAIT:
        break;
    }
    return "none";
}

static void hint_for(const leader_config *cfg, const leader_call_end *end, char *hint,
                     size_t size)
{
    hint[0] = '\0';
    if (end->code == 404 && end->call == LEADER_CREATE)
        /* a create's 404 can only be its namespace: the apiserver's
         * `namespaces "x" not found` */
        snprintf(hint, size, "create namespace %s or pass --leader-elect-resource-namespace",
                 cfg->namespace);
    else if (end->code == 404)
        snprintf(hint, size, "the Lease was deleted meanwhile: it is made again at the next try");
    else if (end->code == 403)
        /* under RBAC a missing namespace is a 403 too: the Role that would
         * grant the Lease lives in it */
        snprintf(hint, size,
                 "grant get/create/update on leases (coordination.k8s.io) in namespace %s to "
                 "the controller's service account (and create that namespace if it is missing)",
                 cfg->namespace);
    else if (end->code == 401)
        snprintf(hint, size, "check the token or client certificate the controller uses");
}

leader_say_decision leader_say_decide(const leader_config *cfg, const leader_say_state *st,
                                      const leader_call_end *end, uint64_t now)
{
    leader_say_decision d;
    memset(&d, 0, sizeof(d));
    d.state = *st;
    leader_say_state *s = &d.state;
    /* we lead, or follow a live leader: the election works */
    int works = end->event == LEADER_WRITTEN ||
                (end->event == LEADER_READ && end->next == LEADER_WAIT);
    int failed = (end->event == LEADER_READ_FAILED || end->event == LEADER_WRITE_FAILED) &&
                 end->code != 409; /* 409: another candidate wrote first */
    if (works) {
        if (s->failing) {
            d.say = LEADER_SAY_CLEARED;
            d.failures = s->total;
            d.lasted_ns = now > s->first_at ? now - s->first_at : 0;
            memset(s, 0, sizeof(*s));
        }
        return d;
    }
    if (!failed)
        return d;
    char reason[sizeof(s->reason)];
    snprintf(reason, sizeof(reason), "%s", end->reason != NULL ? end->reason : "");
    int same = s->failing && s->code == end->code && strcmp(s->reason, reason) == 0 &&
               strcmp(call_verb(s->call), call_verb(end->call)) == 0;
    if (!s->failing) {
        s->failing = 1;
        s->first_at = now;
    }
    s->total++;
    s->unsaid++;
    if (same && now - s->said_at < LEADER_SAY_REPEAT_NS)
        return d;
    d.say = LEADER_SAY_FAILED;
    d.failures = s->unsaid;
    hint_for(cfg, end, d.hint, sizeof(d.hint));
    s->unsaid = 0;
    s->said_at = now;
    s->code = end->code;
    s->call = end->call;
    memcpy(s->reason, reason, sizeof(reason));
    return d;
}

/* Logs what leader_say_decide says about the call that just ended (r;
 * next: what the election does now). */
static void say(leader *l, leader_event event, const kube_result *r, leader_step next,
                uint64_t now)
{
    char reason[64], message[512];
    kapi_status_read(r->body, r->body_len, reason, sizeof(reason), message, sizeof(message));
    if (message[0] == '\0' && r->error != NULL)
        snprintf(message, sizeof(message), "%s", r->error);
    else if (message[0] == '\0' && r->status == 200)
        snprintf(message, sizeof(message), "the Lease in the answer does not parse");
    else if (message[0] == '\0' && r->body != NULL)
        snprintf(message, sizeof(message), "%.200s", r->body); /* not a Status: its head */
    leader_call_end end = {l->call, event, r->status, reason, next};
    leader_say_decision d = leader_say_decide(&l->cfg, &l->say, &end, now);
    l->say = d.state;
    if (d.say == LEADER_SAY_NOTHING)
        return;
    if (d.hint[0] == '\0') /* a certificate that does not verify: the CA */
        snprintf(d.hint, sizeof(d.hint), "%s", callerr_hint(callerr_classify(r->status, r->error)));
    char lease[512], code[24], n[24], lasted[32];
    snprintf(lease, sizeof(lease), "%s/%s", l->cfg.namespace, l->cfg.name);
    snprintf(code, sizeof(code), "%ld", r->status);
    snprintf(n, sizeof(n), "%lu", d.failures);
    if (d.say == LEADER_SAY_FAILED) {
        log_kv(LOG_WARN, "lease call failed", "lease", lease, "call", call_verb(end.call),
               "code", code, "reason", reason, "message", message, "hint", d.hint,
               "failures", n, NULL);
    } else {
        snprintf(lasted, sizeof(lasted), "%.1fs", (double)d.lasted_ns / 1e9);
        log_kv(LOG_INFO, "lease call failure cleared", "lease", lease, "failures", n, "lasted",
               lasted, NULL);
    }
}

static void write_lease(leader *l, const char *holder, long duration_s, int create);
static void read_lease(leader *l, uint64_t now);

/* Does what leader_decide says; r: the call that ended (NULL: a tick),
 * said as leader_say_decide says. */
static void step(leader *l, const leader_observation *obs, const kube_result *r, uint64_t now)
{
    leader_decision d = leader_decide(&l->cfg, &l->st, obs, now);
    int on = d.state.is_leader;
    d.state.is_leader = l->st.is_leader;
    l->st = d.state;
    if (r != NULL)
        say(l, obs->event, r, d.step, now);
    set_leader(l, on);
    if (d.step != LEADER_WAIT)
        l->call = d.step;
    long duration_s = (long)(l->cfg.lease_ns / 1000000000ull);
    switch (d.step) {
    case LEADER_WAIT:
        break;
    case LEADER_GET:
        read_lease(l, now);
        break;
    case LEADER_CREATE:
        write_lease(l, l->cfg.identity, duration_s, 1);
        break;
    case LEADER_TAKE:
    case LEADER_RENEW:
        write_lease(l, l->cfg.identity, duration_s, 0);
        break;
    }
}

leader_release_step leader_release_next(const leader_release_in *in)
{
    int more = in->calls < LEADER_RELEASE_CALLS;
    if (!in->started)
        return in->busy ? LEADER_RELEASE_WAIT : in->ours ? LEADER_RELEASE_PUT : LEADER_RELEASE_DONE;
    if (in->release_write)
        /* 409: a renewal of ours landed first; anything else is final */
        return in->ended == LEADER_WRITE_FAILED && in->code == 409 && more ? LEADER_RELEASE_GET
                                                                          : LEADER_RELEASE_DONE;
    switch (in->ended) {
    case LEADER_WRITTEN: /* the election's write landed: the Lease is ours, as it answered */
    case LEADER_READ:
        return in->ours && more ? LEADER_RELEASE_PUT : LEADER_RELEASE_DONE;
    case LEADER_WRITE_FAILED: /* did the Lease change under it?  Read it */
        return more ? LEADER_RELEASE_GET : LEADER_RELEASE_DONE;
    case LEADER_TICK:
    case LEADER_READ_MISSING:
    case LEADER_READ_FAILED:
        break;
    }
    return LEADER_RELEASE_DONE;
}

/* Carries out what leader_release_next says. */
static void release_step(leader *l, const leader_release_in *in)
{
    switch (leader_release_next(in)) {
    case LEADER_RELEASE_DONE:
        l->released = 1;
        break;
    case LEADER_RELEASE_WAIT:
        break;
    case LEADER_RELEASE_GET:
        l->release_calls++;
        read_lease(l, clock_mono_ns());
        break;
    case LEADER_RELEASE_PUT:
        l->release_calls++;
        l->release_write = 1;
        write_lease(l, "", 1, 0);
        break;
    }
}

/* A call of ours ended (event: what it came to) while the Lease is being
 * given up: the release goes on from there. */
static void release_call_ended(leader *l, leader_event event, long code)
{
    leader_release_in in = {.started = 1, .ended = event, .release_write = l->release_write,
                            .code = code, .ours = strcmp(l->holder, l->cfg.identity) == 0,
                            .calls = l->release_calls};
    l->release_write = 0;
    release_step(l, &in);
}

static void on_written(void *data, const kube_result *r)
{
    leader *l = data;
    uint64_t now = clock_mono_ns();
    l->st.busy = 0;
    leader_observation obs = {LEADER_WRITE_FAILED, NULL, 0};
    if (r->status == 200 || r->status == 201) {
        observe(l, r->body, r->body_len, &obs.changed);
        obs.event = LEADER_WRITTEN;
    } else if (r->status == 409) {
        l->exists = 1; /* another candidate made it */
    }
    if (l->releasing)
        release_call_ended(l, obs.event, r->status);
    else
        step(l, &obs, r, now);
}

/* A write that could not start failed: said, and tried again in a retry
 * period (not at every tick); a release that cannot write is over. */
static void write_not_started(leader *l)
{
    if (l->releasing) {
        l->released = 1;
        return;
    }
    leader_observation failed = {LEADER_WRITE_FAILED, NULL, 0};
    kube_result none = {.error = "the call could not start (out of memory?)"};
    step(l, &failed, &none, clock_mono_ns());
}

/* create: POST a new Lease, else PUT over the one read. */
static void write_lease(leader *l, const char *holder, long duration_s, int create)
{
    char *body = lease_body(l, holder, duration_s);
    if (body == NULL) {
        write_not_started(l);
        return;
    }
    strbuf path = {0};
    if (kapi_path(&path, KAPI_LEASES, l->cfg.namespace, create ? NULL : l->cfg.name, NULL) != 0 ||
        path.failed) {
        strbuf_free(&path);
        free(body);
        write_not_started(l);
        return;
    }
    kube_call call = {.method = create ? "POST" : "PUT", .path = path.data,
                      .content_type = KAPI_CT_JSON, .body = body,
                      .body_len = strlen(body), .on_done = on_written, .data = l,
                      .no_retry = 1, .lease = 1, .timeout_ms = 5000};
    l->st.busy = kube_client_call(l->client, &call) == 0;
    strbuf_free(&path);
    free(body);
    if (!l->st.busy)
        write_not_started(l);
}

static void on_read(void *data, const kube_result *r)
{
    leader *l = data;
    uint64_t now = clock_mono_ns();
    l->st.busy = 0;
    leader_observation obs = {LEADER_READ_FAILED, NULL, 0};
    if (r->status == 404) {
        l->exists = 0;
        l->holder[0] = '\0';
        obs.event = LEADER_READ_MISSING;
    } else if (r->status == 200 && observe(l, r->body, r->body_len, &obs.changed)) {
        obs.event = LEADER_READ;
        obs.holder = l->holder;
    }
    if (l->releasing)
        release_call_ended(l, obs.event, r->status);
    else
        step(l, &obs, r, now);
}

static void read_lease(leader *l, uint64_t now)
{
    strbuf path = {0};
    int ok = kapi_path(&path, KAPI_LEASES, l->cfg.namespace, l->cfg.name, NULL) == 0 &&
             !path.failed;
    kube_call call = {.method = "GET", .path = path.data, .on_done = on_read, .data = l,
                      .no_retry = 1, .lease = 1, .timeout_ms = 5000};
    l->st.busy = ok && kube_client_call(l->client, &call) == 0;
    strbuf_free(&path);
    if (!l->st.busy && l->releasing) {
        l->released = 1; /* a release that cannot read is over */
    } else if (!l->st.busy) {
        leader_observation failed = {LEADER_READ_FAILED, NULL, 0};
        kube_result none = {.error = "the call could not start (out of memory?)"};
        step(l, &failed, &none, now);
    }
}

void leader_tick(leader *l, uint64_t now)
{
    if (l->releasing)
        return;
    leader_observation tick = {LEADER_TICK, NULL, 0};
    step(l, &tick, NULL, now);
}

void leader_release(leader *l)
{
    int ours = l->st.is_leader && l->exists;
    l->releasing = 1;
    set_leader(l, 0);
    leader_release_in in = {.busy = l->st.busy, .ours = ours};
    release_step(l, &in);
}

int leader_released(const leader *l)
{
    return l->released;
}

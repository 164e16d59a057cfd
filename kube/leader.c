/*
 * leader.c - see leader.h.  One step at a time: GET the Lease, then create it
 * (404), take it (free or expired), renew it (ours), or wait.
 */
#include "leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <yajl/yajl_tree.h>

#include "json.h"
#include "log.h"

static void set_leader(leader *l, int on)
{
    if (l->is_leader == on)
        return;
    l->is_leader = on;
    log_msg(LOG_INFO, on ? "became leader" : "lost leadership", "lease %s/%s as %s",
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

/* MicroTime, as Lease timestamps are written. */
static void micro_time(char *buf, size_t size)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%06ldZ", base, (long)tv.tv_usec);
}

static char *lease_body(leader *l, const char *holder, long duration_s)
{
    char now[40];
    micro_time(now, sizeof(now));
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

/* Remembers the Lease as read; returns 0 if it does not parse. */
static int observe(leader *l, const char *body, uint64_t now)
{
    char err[128];
    yajl_val v = yajl_tree_parse(body, err, sizeof(err));
    if (v == NULL)
        return 0;
    char record[512];
    snprintf(record, sizeof(record), "%s|%s|%lld", tree_str(v, "spec", "holderIdentity"),
             tree_str(v, "spec", "renewTime"), tree_int(v, "spec", "leaseDurationSeconds"));
    if (strcmp(record, l->record) != 0) {
        snprintf(l->record, sizeof(l->record), "%s", record);
        l->observed_at = now; /* our own clock, not the writer's */
    }
    snprintf(l->holder, sizeof(l->holder), "%s", tree_str(v, "spec", "holderIdentity"));
    snprintf(l->resource_version, sizeof(l->resource_version), "%s",
             tree_str(v, "metadata", "resourceVersion"));
    snprintf(l->acquire_time, sizeof(l->acquire_time), "%s", tree_str(v, "spec", "acquireTime"));
    l->transitions = tree_int(v, "spec", "leaseTransitions");
    l->exists = 1;
    yajl_tree_free(v);
    return 1;
}

static void write_lease(leader *l, const char *holder, long duration_s);

/* A call of ours ended.  Returns 1 when a release is under way, which is
 * then done: nothing else is to happen. */
static int call_ended(leader *l)
{
    l->busy = 0;
    if (l->releasing)
        l->released = 1;
    return l->releasing;
}

static void on_written(void *data, const kube_result *r)
{
    leader *l = data;
    uint64_t now = kube_now_ns();
    if (call_ended(l))
        return;
    if (r->status == 200 || r->status == 201) {
        observe(l, r->body, now);
        l->last_renew = now;
        set_leader(l, 1);
        l->next_try = now + l->cfg.retry_ns;
        return;
    }
    /* 409: another candidate wrote first.  Anything else: try again soon;
     * leader_tick drops leadership when the renew deadline passes. */
    l->next_try = now + l->cfg.retry_ns;
    if (r->status == 409)
        l->exists = 1;
}

static void write_lease(leader *l, const char *holder, long duration_s)
{
    char *body = lease_body(l, holder, duration_s);
    if (body == NULL)
        return;
    char path[512];
    if (l->exists)
        snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
                 l->cfg.namespace, l->cfg.name);
    else
        snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases",
                 l->cfg.namespace);
    kube_call call = {.method = l->exists ? "PUT" : "POST", .path = path,
                      .content_type = "application/json", .body = body,
                      .body_len = strlen(body), .on_done = on_written, .data = l,
                      .no_retry = 1, .timeout_ms = 5000};
    l->busy = kube_client_call(l->client, &call) == 0;
    free(body);
}

static void on_read(void *data, const kube_result *r)
{
    leader *l = data;
    uint64_t now = kube_now_ns();
    if (call_ended(l))
        return;
    long duration_s = (long)(l->cfg.lease_ns / 1000000000ull);
    if (r->status == 404) {
        l->exists = 0;
        l->holder[0] = '\0';
        write_lease(l, l->cfg.identity, duration_s);
        return;
    }
    if (r->status != 200 || !observe(l, r->body, now)) {
        l->next_try = now + l->cfg.retry_ns;
        return;
    }
    int ours = strcmp(l->holder, l->cfg.identity) == 0;
    int expired = l->holder[0] == '\0' || l->observed_at == 0 ||
                  now > l->observed_at + l->cfg.lease_ns;
    if (ours || expired) {
        write_lease(l, l->cfg.identity, duration_s);
        return;
    }
    set_leader(l, 0); /* someone else holds a live lease */
    l->next_try = now + l->cfg.retry_ns;
}

void leader_tick(leader *l, uint64_t now)
{
    if (l->releasing)
        return;
    /* Stop writing the moment the renew deadline passes without a renewal:
     * another candidate may take over one lease duration after our last
     * renewal, which is later than this. */
    if (l->is_leader && now > l->last_renew + l->cfg.renew_deadline_ns)
        set_leader(l, 0);
    if (l->busy || now < l->next_try)
        return;
    char path[512];
    snprintf(path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
             l->cfg.namespace, l->cfg.name);
    kube_call call = {.method = "GET", .path = path, .on_done = on_read, .data = l,
                      .no_retry = 1, .timeout_ms = 5000};
    l->busy = kube_client_call(l->client, &call) == 0;
    if (!l->busy)
        l->next_try = now + l->cfg.retry_ns;
}

void leader_release(leader *l)
{
    if (!l->is_leader || !l->exists) {
        l->releasing = 1;
        l->released = 1;
        set_leader(l, 0);
        return;
    }
    set_leader(l, 0);
    /* the release write goes out even if a read is in flight */
    write_lease(l, "", 1);
    l->releasing = 1;
    if (!l->busy)
        l->released = 1;
}

int leader_released(const leader *l)
{
    return l->released;
}

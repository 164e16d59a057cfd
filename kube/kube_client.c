/*
 * kube_client.c - see kube_client.h.
 *
 * Calls wait in three FIFO lanes (Lease, cache, work: see the header);
 * a retry waits in a min-heap by its retry time and joins the tail of its
 * lane when due.  The head of the first lane that may start takes a token
 * from its lane's bucket and becomes a curl easy handle on the one multi
 * handle; starting a call costs O(1), plus O(log n) for a retry.  A finished
 * call is retried (with jittered exponential backoff, or after Retry-After)
 * when kube_retry_decide says so; everything else goes to its callback.
 */
#include "kube_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "backoff.h"
#include "clock.h"
#include "log.h"
#include "ratelimit.h"

#define KUBE_MAX_BODY (64u << 20) /* a page of 500 big objects fits */
#define KUBE_MAX_ATTEMPTS 8
#define KUBE_DEFAULT_TIMEOUT_MS 30000

const char *const kube_method_names[KUBE_N_METHODS] = {"GET", "POST", "PATCH", "PUT", "DELETE",
                                                       "OTHER"};

enum { LANE_LEASE, LANE_CACHE, LANE_WORK, N_LANES };

typedef struct pending_call {
    struct pending_call *next;
    kube_call call;         /* strings below are our copies */
    char *path, *method, *content_type, *body;
    CURL *easy;
    struct curl_slist *headers;
    char *resp;             /* whole body (non-streamed) */
    size_t resp_len, resp_cap;
    long retry_after_s;     /* from the last answer, -1 if none */
    int attempts;
    int lane;
    int aborted;            /* on_chunk said stop, or the body was too big */
    uint64_t not_before;    /* retry time, while in the delayed heap */
    backoff retry_backoff;
    char error[CURL_ERROR_SIZE];
} pending_call;

typedef struct lane {
    pending_call *head, *tail;
} lane;

struct kube_client {
    kube_config *cfg;
    CURLM *multi;
    lane lanes[N_LANES];           /* not started yet, each FIFO */
    pending_call **delayed;        /* min-heap by not_before: retries */
    size_t n_delayed, cap_delayed;
    pending_call *running;         /* started */
    size_t n_waiting, n_running;
    size_t n_capped;               /* running calls that count against the cap */
    int http2;                     /* the server answered over HTTP/2 */
    ratelimit limiter;             /* reads and writes */
    ratelimit lease_limiter;       /* the Lease lane's own */
    kube_stats stats;
    int closing; /* in kube_client_free: no new calls */
    char user_agent[sizeof("User-Agent: ") + KUBE_USER_AGENT_MAX]; /* the whole header */
};

void kube_client_set_user_agent(kube_client *c, const char *user_agent)
{
    /* a header value ends at the line: nothing past a control character */
    size_t n = 0;
    while (user_agent[n] != '\0' && (unsigned char)user_agent[n] >= 0x20 && n < KUBE_USER_AGENT_MAX)
        n++;
    snprintf(c->user_agent, sizeof(c->user_agent), "User-Agent: %.*s", (int)n, user_agent);
}

void kube_stats_index(const char *method, long status, int *method_i, int *status_i)
{
    *method_i = KUBE_N_METHODS - 1;
    for (int i = 0; i < KUBE_N_METHODS - 1; i++)
        if (strcmp(kube_method_names[i], method) == 0)
            *method_i = i;
    *status_i = status >= 100 && status <= 599 ? (int)(status - 99) : 0;
}

void kube_stats_render(kube_stats *s, strbuf *t)
{
    metrics_header(t, "rest_client_requests_total", "counter",
                   "Number of HTTP requests, partitioned by status code and method "
                   "(\"<error>\": no answer).");
    for (int m = 0; m < KUBE_N_METHODS; m++) {
        for (int k = 0; k < KUBE_N_STATUS; k++) {
            uint64_t n = metrics_get(&s->calls[m][k]);
            if (n == 0)
                continue;
            if (k == 0)
                strbuf_printf(t, "rest_client_requests_total{code=\"<error>\",method=\"%s\"} %llu\n",
                              kube_method_names[m], (unsigned long long)n);
            else
                strbuf_printf(t, "rest_client_requests_total{code=\"%d\",method=\"%s\"} %llu\n",
                              k + 99, kube_method_names[m], (unsigned long long)n);
        }
    }
}

kube_client *kube_client_new(kube_config *cfg, double qps, int burst, char *err, size_t errlen)
{
    static int curl_ready;
    if (!curl_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
            snprintf(err, errlen, "curl_global_init failed");
            return NULL;
        }
        curl_ready = 1;
    }
    kube_client *c = calloc(1, sizeof(*c));
    if (c == NULL || (c->multi = curl_multi_init()) == NULL) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->cfg = cfg;
    kube_client_set_user_agent(c, "ota-prepull");
    /* HTTP/2: every call a stream on one connection (CURLOPT_PIPEWAIT) */
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    uint64_t now = clock_mono_ns();
    if (ratelimit_init(&c->limiter, qps, burst, now) != 0 ||
        ratelimit_init(&c->lease_limiter, qps, burst, now) != 0) {
        curl_multi_cleanup(c->multi);
        free(c);
        snprintf(err, errlen, "the rate limit wants qps > 0 and burst >= 1");
        return NULL;
    }
    return c;
}

static void free_call(pending_call *p)
{
    if (p->easy != NULL)
        curl_easy_cleanup(p->easy);
    curl_slist_free_all(p->headers);
    free(p->path);
    free(p->method);
    free(p->content_type);
    free(p->body);
    free(p->resp);
    free(p);
}

static void abandon(pending_call *p)
{
    kube_result r = {0, "", 0, "client shut down", 0};
    if (p->call.on_done != NULL)
        p->call.on_done(p->call.data, &r);
    free_call(p);
}

void kube_client_free(kube_client *c)
{
    if (c == NULL)
        return;
    c->closing = 1;
    for (pending_call *p = c->running, *next; p != NULL; p = next) {
        next = p->next;
        curl_multi_remove_handle(c->multi, p->easy);
        abandon(p);
    }
    for (int i = 0; i < N_LANES; i++) {
        for (pending_call *p = c->lanes[i].head, *next; p != NULL; p = next) {
            next = p->next;
            abandon(p);
        }
    }
    for (size_t i = 0; i < c->n_delayed; i++)
        abandon(c->delayed[i]);
    free(c->delayed);
    curl_multi_cleanup(c->multi);
    free(c);
}

static char *dup_bytes(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p != NULL) {
        if (n > 0)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void enqueue(kube_client *c, pending_call *p)
{
    lane *l = &c->lanes[p->lane];
    p->next = NULL;
    if (l->tail != NULL)
        l->tail->next = p;
    else
        l->head = p;
    l->tail = p;
    c->n_waiting++;
}

static pending_call *dequeue(kube_client *c, lane *l)
{
    pending_call *p = l->head;
    l->head = p->next;
    if (l->head == NULL)
        l->tail = NULL;
    p->next = NULL;
    c->n_waiting--;
    return p;
}

/* ---- the delayed heap (retries by not_before) ---- */

static void heap_swap(pending_call **h, size_t i, size_t j)
{
    pending_call *t = h[i];
    h[i] = h[j];
    h[j] = t;
}

static void heap_down(pending_call **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l]->not_before < h[m]->not_before)
            m = l;
        if (r < n && h[r]->not_before < h[m]->not_before)
            m = r;
        if (m == i)
            return;
        heap_swap(h, i, m);
        i = m;
    }
}

/* 0, or -1 when out of memory. */
static int delay(kube_client *c, pending_call *p)
{
    if (c->n_delayed == c->cap_delayed) {
        size_t cap = c->cap_delayed == 0 ? 64 : c->cap_delayed * 2;
        pending_call **grown = realloc(c->delayed, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        c->delayed = grown;
        c->cap_delayed = cap;
    }
    size_t i = c->n_delayed++;
    c->delayed[i] = p;
    while (i > 0 && c->delayed[(i - 1) / 2]->not_before > c->delayed[i]->not_before) {
        heap_swap(c->delayed, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    return 0;
}

static pending_call *heap_pop(kube_client *c)
{
    pending_call *p = c->delayed[0];
    c->delayed[0] = c->delayed[--c->n_delayed];
    heap_down(c->delayed, c->n_delayed, 0);
    return p;
}

static int lane_of(const kube_call *call)
{
    if (call->lease)
        return LANE_LEASE;
    /* Lists and watches keep the caches every decision reads: they go
     * before work.  Any other call, a GET for a decision (a node's images)
     * too, is work and waits its turn with the writes: reads served ahead
     * of every write could hold the writes back for good (a resync that
     * asks for hundreds of nodes again). */
    return call->on_chunk != NULL ? LANE_CACHE : LANE_WORK;
}

int kube_client_call(kube_client *c, const kube_call *call)
{
    if (c->closing)
        return -1;
    pending_call *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return -1;
    p->call = *call;
    p->path = strdup(call->path);
    p->method = strdup(call->method);
    p->content_type = call->content_type != NULL ? strdup(call->content_type) : NULL;
    p->body = call->body != NULL ? dup_bytes(call->body, call->body_len) : NULL;
    p->retry_after_s = -1;
    p->lane = lane_of(call);
    backoff_init(&p->retry_backoff, 200 * 1000000ull, 30 * 1000000000ull, NULL, NULL);
    if (p->path == NULL || p->method == NULL || (call->body != NULL && p->body == NULL) ||
        (call->content_type != NULL && p->content_type == NULL)) {
        free_call(p);
        return -1;
    }
    enqueue(c, p);
    return 0;
}

static size_t on_header(char *line, size_t size, size_t n, void *data)
{
    pending_call *p = data;
    size_t len = size * n;
    static const char name[] = "retry-after:";
    if (len > sizeof(name) - 1 && strncasecmp(line, name, sizeof(name) - 1) == 0) {
        char value[64];
        size_t vlen = len - (sizeof(name) - 1);
        if (vlen >= sizeof(value))
            vlen = sizeof(value) - 1;
        memcpy(value, line + sizeof(name) - 1, vlen);
        value[vlen] = '\0';
        unsigned seconds = 0;
        if (ratelimit_parse_retry_after(value, strlen(value), (int64_t)time(NULL), &seconds) == 0)
            p->retry_after_s = (long)seconds;
    }
    return len;
}

static size_t on_body(char *chunk, size_t size, size_t n, void *data)
{
    pending_call *p = data;
    size_t len = size * n;
    long status = 0;
    curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
    if (p->call.on_chunk != NULL && status >= 200 && status < 300) {
        if (!p->call.on_chunk(p->call.data, chunk, len)) {
            p->aborted = 1;
            return 0; /* makes curl stop the transfer */
        }
        return len;
    }
    if (p->resp_len + len > KUBE_MAX_BODY) {
        p->aborted = 1;
        return 0;
    }
    if (p->resp_len + len + 1 > p->resp_cap) {
        size_t cap = p->resp_cap == 0 ? 16384 : p->resp_cap;
        while (cap < p->resp_len + len + 1)
            cap *= 2;
        char *grown = realloc(p->resp, cap);
        if (grown == NULL) {
            p->aborted = 1;
            return 0;
        }
        p->resp = grown;
        p->resp_cap = cap;
    }
    memcpy(p->resp + p->resp_len, chunk, len);
    p->resp_len += len;
    p->resp[p->resp_len] = '\0';
    return len;
}

/* Lease calls and streams (lists, watches: the informers bound them) are
 * not capped; every other call waits for a free place. */
static int counts_in_cap(const pending_call *p)
{
    return p->lane != LANE_LEASE && p->call.on_chunk == NULL;
}

static int start(kube_client *c, pending_call *p)
{
    kube_config *cfg = c->cfg;
    p->easy = curl_easy_init();
    if (p->easy == NULL)
        return -1;
    CURL *e = p->easy;
    size_t url_len = strlen(cfg->server) + strlen(p->path) + 1;
    char *url = malloc(url_len);
    if (url == NULL)
        return -1;
    snprintf(url, url_len, "%s%s", cfg->server, p->path);
    curl_easy_setopt(e, CURLOPT_URL, url);
    free(url); /* curl copies it */
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, p->method);
    if (strcmp(p->method, "GET") == 0)
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    if (p->body != NULL) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, p->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)p->call.body_len);
    }
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, p->error);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, p);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, p);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    long timeout = p->call.timeout_ms != 0   ? p->call.timeout_ms
                   : p->call.on_chunk == NULL ? KUBE_DEFAULT_TIMEOUT_MS
                                              : 0;
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(e, CURLOPT_PRIVATE, p);
    /* TLS: the cluster's CA, or none at all when the kubeconfig says so */
    if (cfg->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (cfg->ca_pem != NULL) {
        struct curl_blob blob = {cfg->ca_pem, cfg->ca_pem_len, CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    } else if (cfg->ca_file != NULL) {
        curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
    }
    if (cfg->client_cert_pem != NULL && cfg->client_key_pem != NULL) {
        struct curl_blob cert = {cfg->client_cert_pem, cfg->client_cert_pem_len, CURL_BLOB_COPY};
        struct curl_blob key = {cfg->client_key_pem, cfg->client_key_pem_len, CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cert);
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &key);
    } else if (cfg->client_cert_file != NULL && cfg->client_key_file != NULL) {
        curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->client_cert_file);
        curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->client_key_file);
    }
    p->headers = curl_slist_append(p->headers, "Accept: application/json");
    if (p->content_type != NULL) {
        char h[128];
        snprintf(h, sizeof(h), "Content-Type: %s", p->content_type);
        p->headers = curl_slist_append(p->headers, h);
    }
    const char *token = kube_config_token(cfg);
    if (token != NULL) {
        size_t n = strlen(token) + 32;
        char *h = malloc(n);
        if (h == NULL)
            return -1;
        snprintf(h, n, "Authorization: Bearer %s", token);
        p->headers = curl_slist_append(p->headers, h);
        free(h);
    }
    p->headers = curl_slist_append(p->headers, c->user_agent);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->headers);
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK)
        return -1;
    p->attempts++;
    p->next = c->running;
    c->running = p;
    c->n_running++;
    c->n_capped += (size_t)counts_in_cap(p);
    return 0;
}

static void end_unsent(pending_call *p, const char *why, int dropped)
{
    kube_result r = {0, "", 0, why, dropped};
    if (p->call.on_done != NULL)
        p->call.on_done(p->call.data, &r);
    free_call(p);
}

static int unwanted(const pending_call *p)
{
    return p->call.wanted != NULL && !p->call.wanted(p->call.data);
}

/* Starts what the lanes, the cap and the rate limits allow; returns how long
 * until a waiting call could start (UINT64_MAX: none waits on time; a call
 * that waits for a place under the cap is woken by a call ending). */
static uint64_t start_ready(kube_client *c)
{
    uint64_t now = clock_mono_ns(), next = UINT64_MAX;
    while (c->n_delayed > 0 && c->delayed[0]->not_before <= now)
        enqueue(c, heap_pop(c));
    if (c->n_delayed > 0)
        next = c->delayed[0]->not_before - now;
    size_t cap = c->http2 ? KUBE_HTTP2_IN_FLIGHT : KUBE_HTTP1_IN_FLIGHT;
    for (int i = 0; i < N_LANES; i++) {
        lane *l = &c->lanes[i];
        ratelimit *rl = i == LANE_LEASE ? &c->lease_limiter : &c->limiter;
        while (l->head != NULL) {
            pending_call *p = l->head;
            if (unwanted(p)) {
                /* a write queued by a leader that has lost its lease */
                end_unsent(dequeue(c, l), "no longer wanted", 1);
                continue;
            }
            if (counts_in_cap(p) && c->n_capped >= cap)
                break; /* FIFO: nothing of this lane overtakes the head */
            uint64_t wait = ratelimit_take(rl, now);
            if (wait > 0) {
                if (wait < next)
                    next = wait;
                break;
            }
            dequeue(c, l);
            if (start(c, p) != 0)
                end_unsent(p, "cannot start request", 0);
        }
        /* lists and watches go before work: work waits while they do (the
         * Lease lane has a bucket of its own and goes whatever waits) */
        if (i == LANE_CACHE && l->head != NULL)
            break;
    }
    return next;
}

size_t kube_client_drop_unwanted(kube_client *c)
{
    pending_call *dropped = NULL;
    size_t n = 0;
    for (int i = 0; i < N_LANES; i++) {
        lane *l = &c->lanes[i];
        pending_call *kept_head = NULL, *kept_tail = NULL;
        while (l->head != NULL) {
            pending_call *p = dequeue(c, l);
            if (unwanted(p)) {
                p->next = dropped;
                dropped = p;
                n++;
            } else {
                if (kept_tail != NULL)
                    kept_tail->next = p;
                else
                    kept_head = p;
                kept_tail = p;
                c->n_waiting++;
            }
        }
        l->head = kept_head;
        l->tail = kept_tail;
    }
    size_t kept = 0;
    for (size_t i = 0; i < c->n_delayed; i++) {
        pending_call *p = c->delayed[i];
        if (unwanted(p)) {
            p->next = dropped;
            dropped = p;
            n++;
        } else {
            c->delayed[kept++] = p;
        }
    }
    c->n_delayed = kept;
    for (size_t i = kept / 2 + 1; i-- > 0;)
        heap_down(c->delayed, c->n_delayed, i);
    /* callbacks last: they may queue new calls */
    for (pending_call *p = dropped, *next; p != NULL; p = next) {
        next = p->next;
        end_unsent(p, "no longer wanted", 1);
    }
    return n;
}

kube_retry_decision kube_retry_decide(const kube_retry_input *in)
{
    kube_retry_decision d = {0};
    int told = in->status == 429 && in->retry_after_s >= 0;
    if (told) {
        d.pause = 1;
        d.pause_ns = (uint64_t)in->retry_after_s * 1000000000ull;
    }
    if (in->no_retry || in->aborted || in->attempts >= in->max_attempts)
        return d;
    /* A read, or a write whose repeat is harmless, is retried after what
     * client-go retries: a broken connection (the apiserver restarting),
     * 429, 5xx.  Another write only when it cannot have been applied: it
     * never left (not resolved, not connected, no TLS), or the server said
     * it did not take it (429 Too Many Requests, 503 Unavailable); a
     * connection broken after sending, a timeout or a 500/502/504 may come
     * after the write landed, and a repeat could undo a newer state. */
    int repeatable = !in->write || in->idempotent;
    if (in->status == 429 || in->status == 503)
        d.retry = 1;
    else if (in->transport_error)
        d.retry = repeatable || in->not_sent;
    else if (in->status >= 500)
        d.retry = repeatable;
    if (d.retry)
        d.delay_ns = told ? d.pause_ns : in->backoff_ns;
    return d;
}

/* curl failed before any byte of the request went out. */
static int failed_before_sending(CURL *e, CURLcode code)
{
    switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
        return 1;
    default:
        break;
    }
    long sent = 0;
    return curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &sent) == CURLE_OK && sent == 0;
}

static int is_write(const char *method)
{
    return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
}

static void finish(kube_client *c, pending_call *p, CURLcode code)
{
    long status = 0;
    curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK && !(p->aborted && p->call.on_chunk != NULL))
        status = 0;
    long version = 0;
    if (status != 0 && curl_easy_getinfo(p->easy, CURLINFO_HTTP_VERSION, &version) == CURLE_OK)
        c->http2 = version == CURL_HTTP_VERSION_2_0;
    int mi, si;
    kube_stats_index(p->method, status, &mi, &si);
    metrics_add(&c->stats.calls[mi][si], 1);

    /* unlink from running */
    for (pending_call **pp = &c->running; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    c->n_running--;
    c->n_capped -= (size_t)counts_in_cap(p);
    curl_multi_remove_handle(c->multi, p->easy);

    kube_retry_input in = {
        .no_retry = p->call.no_retry,
        .aborted = p->aborted,
        .attempts = p->attempts,
        .max_attempts = KUBE_MAX_ATTEMPTS,
        .status = status,
        .transport_error = code != CURLE_OK,
        .not_sent = code != CURLE_OK && failed_before_sending(p->easy, code),
        .write = is_write(p->method),
        .idempotent = p->call.idempotent,
        .retry_after_s = p->retry_after_s,
        /* taken even when unused: a call not retried ends here */
        .backoff_ns = backoff_next(&p->retry_backoff),
    };
    kube_retry_decision d = kube_retry_decide(&in);
    if (d.pause)
        ratelimit_pause_until(p->lane == LANE_LEASE ? &c->lease_limiter : &c->limiter,
                              clock_mono_ns(), clock_mono_ns() + d.pause_ns);
    if (d.retry) {
        log_msg(LOG_DEBUG, "retrying API call", "%s %s: %s (attempt %d)", p->method, p->path,
                status == 0 ? p->error : "server busy", p->attempts);
        curl_easy_cleanup(p->easy);
        p->easy = NULL;
        curl_slist_free_all(p->headers);
        p->headers = NULL;
        p->resp_len = 0;
        p->retry_after_s = -1;
        p->error[0] = '\0';
        p->not_before = clock_mono_ns() + d.delay_ns;
        if (d.delay_ns == 0)
            enqueue(c, p);
        else if (delay(c, p) != 0)
            end_unsent(p, "out of memory", 0);
        return;
    }
    kube_result r = {status, p->resp != NULL ? p->resp : "", p->resp_len,
                     status == 0 ? (p->error[0] != '\0' ? p->error : curl_easy_strerror(code))
                                 : NULL,
                     0};
    if (p->call.on_done != NULL)
        p->call.on_done(p->call.data, &r);
    free_call(p);
}

void kube_client_step(kube_client *c, int max_wait_ms)
{
    uint64_t next = start_ready(c);
    int running = 0;
    curl_multi_perform(c->multi, &running);
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        pending_call *p = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&p);
        finish(c, p, msg->data.result);
    }
    uint64_t after = start_ready(c);
    if (after < next)
        next = after;
    int wait = max_wait_ms;
    /* round up: waking before the token is whole would only spin */
    if (next != UINT64_MAX && (next + 999999) / 1000000 < (uint64_t)wait)
        wait = (int)((next + 999999) / 1000000);
    curl_multi_poll(c->multi, NULL, 0, wait, NULL);
}

size_t kube_client_pending(const kube_client *c)
{
    return c->n_waiting + c->n_delayed + c->n_running;
}

void kube_client_counts(const kube_client *c, size_t *waiting, size_t *retrying,
                        size_t *in_flight)
{
    *waiting = c->n_waiting;
    *retrying = c->n_delayed;
    *in_flight = c->n_running;
}

kube_stats *kube_client_stats(kube_client *c)
{
    return &c->stats;
}

/*
 * kube_client.c - see kube_client.h.
 *
 * Calls wait in a FIFO until the token bucket and their own retry time allow
 * them, then become curl easy handles on the one multi handle.  A finished
 * call is retried (with jittered exponential backoff, or after Retry-After)
 * when client-go would retry it; everything else goes to its callback.
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

const char *const kube_verb_names[KUBE_N_VERBS] = {"GET", "POST", "PATCH", "PUT", "DELETE", "OTHER"};
const char *const kube_code_names[KUBE_N_CODES] = {"2xx", "404", "409", "410", "429",
                                                   "4xx", "500", "503", "5xx", "error"};

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
    int reserved;           /* holds a rate-limit token for its next start */
    int aborted;            /* on_chunk said stop, or the body was too big */
    uint64_t not_before;    /* retry time */
    backoff retry_backoff;
    char error[CURL_ERROR_SIZE];
} pending_call;

struct kube_client {
    kube_config *cfg;
    CURLM *multi;
    pending_call *waiting_head, *waiting_tail; /* not started yet, FIFO */
    pending_call *running;                     /* started */
    size_t n_waiting, n_running;
    ratelimit limiter;
    kube_stats stats;
    int closing; /* in kube_client_free: no new calls */
};

static int verb_index(const char *method)
{
    for (int i = 0; i < KUBE_N_VERBS - 1; i++)
        if (strcmp(kube_verb_names[i], method) == 0)
            return i;
    return KUBE_N_VERBS - 1;
}

static int code_index(long status)
{
    if (status == 0)
        return 9;
    if (status >= 200 && status < 300)
        return 0;
    switch (status) {
    case 404:
        return 1;
    case 409:
        return 2;
    case 410:
        return 3;
    case 429:
        return 4;
    case 500:
        return 6;
    case 503:
        return 7;
    default:
        return status < 500 ? 5 : 8;
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
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    ratelimit_init(&c->limiter, qps, burst, clock_mono_ns());
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
    kube_result r = {0, "", 0, "client shut down"};
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
    for (pending_call *p = c->waiting_head, *next; p != NULL; p = next) {
        next = p->next;
        abandon(p);
    }
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
    p->next = NULL;
    if (c->waiting_tail != NULL)
        c->waiting_tail->next = p;
    else
        c->waiting_head = p;
    c->waiting_tail = p;
    c->n_waiting++;
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
    p->headers = curl_slist_append(p->headers, "User-Agent: ota-controller");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->headers);
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK)
        return -1;
    p->attempts++;
    p->next = c->running;
    c->running = p;
    c->n_running++;
    return 0;
}

/* Starts what the rate limit and retry times allow; returns how long until
 * the next waiting call could start (UINT64_MAX when none waits). */
static uint64_t start_ready(kube_client *c)
{
    uint64_t now = clock_mono_ns(), next = UINT64_MAX;
    pending_call **pp = &c->waiting_head, *prev = NULL;
    while (*pp != NULL) {
        pending_call *p = *pp;
        if (p->not_before > now) {
            if (p->not_before - now < next)
                next = p->not_before - now;
            prev = p;
            pp = &p->next;
            continue;
        }
        int dropped = p->call.wanted != NULL && !p->call.wanted(p->call.data);
        if (!dropped && !p->reserved) {
            /* the token is ours from now: the call goes out after the wait */
            p->reserved = 1;
            uint64_t wait = ratelimit_reserve(&c->limiter, now);
            if (wait > 0) {
                p->not_before = now + wait;
                if (wait < next)
                    next = wait;
                break; /* FIFO: nothing overtakes the head */
            }
        }
        *pp = p->next;
        if (c->waiting_tail == p)
            c->waiting_tail = prev;
        c->n_waiting--;
        if (dropped) {
            /* e.g. a write queued by a leader that has lost its lease */
            kube_result r = {0, "", 0, "no longer wanted"};
            if (p->call.on_done != NULL)
                p->call.on_done(p->call.data, &r);
            free_call(p);
        } else if (start(c, p) != 0) {
            kube_result r = {0, "", 0, "cannot start request"};
            if (p->call.on_done != NULL)
                p->call.on_done(p->call.data, &r);
            free_call(p);
        }
    }
    return next;
}

/* A 429 stops every call until its Retry-After has passed, as client-go's
 * rate limiter does (ratelimit.h).  Calls that took their token before the
 * answer came were promised a slot that may fall inside the pause: they
 * give the token back and take a new one when their turn comes. */
static void pause_calls(kube_client *c, uint64_t until)
{
    for (pending_call *p = c->waiting_head; p != NULL; p = p->next) {
        if (p->reserved) {
            p->reserved = 0;
            ratelimit_unreserve(&c->limiter);
        }
    }
    ratelimit_pause_until(&c->limiter, clock_mono_ns(), until);
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
    /* connection refused/reset, timeout: the apiserver restarting */
    d.retry = in->transport_error || in->status == 429 || in->status >= 500;
    if (d.retry)
        d.delay_ns = told ? d.pause_ns : in->backoff_ns;
    return d;
}

static void finish(kube_client *c, pending_call *p, CURLcode code)
{
    long status = 0;
    curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK && !(p->aborted && p->call.on_chunk != NULL))
        status = 0;
    metrics_add(&c->stats.calls[verb_index(p->method)][code_index(status)], 1);

    /* unlink from running */
    for (pending_call **pp = &c->running; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    c->n_running--;
    curl_multi_remove_handle(c->multi, p->easy);

    kube_retry_input in = {
        .no_retry = p->call.no_retry,
        .aborted = p->aborted,
        .attempts = p->attempts,
        .max_attempts = KUBE_MAX_ATTEMPTS,
        .status = status,
        .transport_error = code != CURLE_OK,
        .retry_after_s = p->retry_after_s,
        /* taken even when unused: a call not retried ends here */
        .backoff_ns = backoff_next(&p->retry_backoff),
    };
    kube_retry_decision d = kube_retry_decide(&in);
    if (d.pause)
        pause_calls(c, clock_mono_ns() + d.pause_ns);
    if (d.retry) {
        log_msg(LOG_DEBUG, "retrying API call", "%s %s: %s (attempt %d)", p->method, p->path,
                status == 0 ? p->error : "server busy", p->attempts);
        curl_easy_cleanup(p->easy);
        p->easy = NULL;
        curl_slist_free_all(p->headers);
        p->headers = NULL;
        p->resp_len = 0;
        p->retry_after_s = -1;
        p->reserved = 0;
        p->not_before = clock_mono_ns() + d.delay_ns;
        enqueue(c, p);
        return;
    }
    kube_result r = {status, p->resp != NULL ? p->resp : "", p->resp_len,
                     status == 0 ? (p->error[0] != '\0' ? p->error : curl_easy_strerror(code))
                                 : NULL};
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
    if (next != UINT64_MAX && next / 1000000 < (uint64_t)wait)
        wait = (int)(next / 1000000);
    curl_multi_poll(c->multi, NULL, 0, wait, NULL);
}

size_t kube_client_pending(const kube_client *c)
{
    return c->n_waiting + c->n_running;
}

kube_stats *kube_client_stats(kube_client *c)
{
    return &c->stats;
}

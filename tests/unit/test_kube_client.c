/*
 * test_kube_client.c - what the client does when a call ends, as a table:
 * retried or not (client-go's cases: a broken connection, 429, 5xx; never
 * a call whose caller reconnects itself, a refused body, or spent
 * attempts), after how long (a 429's Retry-After, else the backoff), and
 * whether every call is paused (a 429's Retry-After, whoever got it);
 * writes retried only when they cannot have landed or a repeat is
 * harmless.  Then, on a loopback HTTP/1.1 server: the lanes (a Lease call
 * and a read overtake queued writes), dropping unwanted calls at once, the
 * in-flight cap, and rest_client_requests_total.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube_client.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define BACKOFF (300 * MS) /* the call's next backoff delay, whatever it is */
#define MAX 8

typedef struct retry_row {
    const char *name;
    int no_retry, aborted, attempts;
    long status;
    int transport_error;
    long retry_after_s;
    /* wanted */
    int retry;
    uint64_t delay_ns;
    int pause;
    uint64_t pause_ns;
    /* the call (after the wanted columns: 0 in the rows above is a read) */
    int write, not_sent, idempotent;
} retry_row;

/* clang-format off */
static const retry_row rows[] = {
    /* ea45a62: a 429's Retry-After pauses every call, also when the call
     * that got it is not retried here (a watch reconnects itself, the
     * Lease is read again by the election) */
    {"a watch's 429 with Retry-After pauses every call",  1, 0, 1, 429, 0, 5,  0, 0, 1, 5 * SEC, 0, 0, 0},
    {"a Lease read's 429 with Retry-After pauses every call", 1, 0, 1, 429, 0, 2, 0, 0, 1, 2 * SEC, 0, 0, 0},
    {"a write's 429 with Retry-After: retried after it, all paused", 0, 0, 1, 429, 0, 3,
     1, 3 * SEC, 1, 3 * SEC, 0, 0, 0},
    {"Retry-After 0: retried at once, reservations still withdrawn", 0, 0, 1, 429, 0, 0,
     1, 0, 1, 0, 0, 0, 0},
    {"Retry-After 600 (the most honoured)", 0, 0, 1, 429, 0, 600, 1, 600 * SEC, 1, 600 * SEC, 0, 0, 0},
    {"a 429 on the last attempt: not retried, still pauses", 0, 0, MAX, 429, 0, 4, 0, 0, 1, 4 * SEC, 0, 0, 0},
    {"a 429 with Retry-After on an aborted call still pauses", 0, 1, 1, 429, 0, 1, 0, 0, 1, SEC, 0, 0, 0},
    {"429 without Retry-After: backoff, no pause", 0, 0, 1, 429, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"a watch's 429 without Retry-After: nothing", 1, 0, 1, 429, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    /* only a 429's Retry-After is a pause; a 503's is ignored */
    {"503 with Retry-After: backoff, no pause", 0, 0, 1, 503, 0, 7, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"500: backoff", 0, 0, 1, 500, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"502: backoff", 0, 0, 3, 502, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"504 on attempt 7 of 8: backoff", 0, 0, MAX - 1, 504, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"500 on the last attempt: given up", 0, 0, MAX, 500, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"connection refused: backoff", 0, 0, 1, 0, 1, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"a timeout on the last attempt: given up", 0, 0, MAX, 0, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a watch cut mid-stream: its owner reconnects", 1, 0, 1, 0, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a body too big (aborted): not retried", 0, 1, 1, 0, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a list page refused by its parser (aborted 200)", 0, 1, 1, 200, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a Lease write's 503: the election decides", 1, 0, 1, 503, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"200", 0, 0, 1, 200, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"201", 0, 0, 2, 201, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"400", 0, 0, 1, 400, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"404", 0, 0, 1, 404, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"409", 0, 0, 1, 409, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"410 Gone: the informer relists", 0, 0, 1, 410, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"422", 0, 0, 1, 422, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"499", 0, 0, 1, 499, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    /* issue 10 §3: a write is retried only when it cannot have been
     * applied, or when a repeat is harmless */
    {"a write that could not connect: never sent, retried", 0, 0, 1, 0, 1, -1,
     1, BACKOFF, 0, 0, 1, 1, 0},
    {"a write whose connection broke after sending: not retried", 0, 0, 1, 0, 1, -1,
     0, 0, 0, 0, 1, 0, 0},
    {"a write that timed out waiting for the answer: not retried", 0, 0, 2, 0, 1, -1,
     0, 0, 0, 0, 1, 0, 0},
    {"an idempotent write (create 409 / delete 404 = done) after a reset: retried", 0, 0, 1, 0, 1, -1,
     1, BACKOFF, 0, 0, 1, 0, 1},
    {"a write's 429 with Retry-After: retried after it", 0, 0, 1, 429, 0, 2,
     1, 2 * SEC, 1, 2 * SEC, 1, 0, 0},
    {"a write's 429 without Retry-After: backoff", 0, 0, 1, 429, 0, -1, 1, BACKOFF, 0, 0, 1, 0, 0},
    {"a write's 503: not taken, retried", 0, 0, 1, 503, 0, -1, 1, BACKOFF, 0, 0, 1, 0, 0},
    {"a write's 500: may have landed, not retried", 0, 0, 1, 500, 0, -1, 0, 0, 0, 0, 1, 0, 0},
    {"a write's 504: may have landed, not retried", 0, 0, 1, 504, 0, -1, 0, 0, 0, 0, 1, 0, 0},
    {"an idempotent write's 500: retried", 0, 0, 1, 500, 0, -1, 1, BACKOFF, 0, 0, 1, 0, 1},
    {"a write never sent, attempts spent: given up", 0, 0, MAX, 0, 1, -1, 0, 0, 0, 0, 1, 1, 0},
    {"a write's 409: not retried", 0, 0, 1, 409, 0, -1, 0, 0, 0, 0, 1, 0, 0},
    {"a read whose connection broke after sending: retried", 0, 0, 1, 0, 1, -1,
     1, BACKOFF, 0, 0, 0, 0, 0},
};
/* clang-format on */

static void test_retry_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const retry_row *r = &rows[i];
        kube_retry_input in = {
            .no_retry = r->no_retry,
            .aborted = r->aborted,
            .attempts = r->attempts,
            .max_attempts = MAX,
            .status = r->status,
            .transport_error = r->transport_error,
            .not_sent = r->not_sent,
            .write = r->write,
            .idempotent = r->idempotent,
            .retry_after_s = r->retry_after_s,
            .backoff_ns = BACKOFF,
        };
        kube_retry_decision d = kube_retry_decide(&in);
        if (d.retry != r->retry || (r->retry && d.delay_ns != r->delay_ns) || d.pause != r->pause ||
            (r->pause && d.pause_ns != r->pause_ns)) {
            print_error("row \"%s\": retry %d after %llu ns, pause %d for %llu ns; "
                        "want retry %d after %llu ns, pause %d for %llu ns\n",
                        r->name, d.retry, (unsigned long long)d.delay_ns, d.pause,
                        (unsigned long long)d.pause_ns, r->retry, (unsigned long long)r->delay_ns,
                        r->pause, (unsigned long long)r->pause_ns);
            fail();
        }
    }
}

/* ---- the lanes, on a loopback server -------------------------------------- */

/* An HTTP/1.1 server on 127.0.0.1 (a thread per connection, keep-alive)
 * that answers every request 200 "{}" after delay_ms, and records the
 * request lines in the order they arrived, the connections it accepted and
 * the most requests it held unanswered at once. */
typedef struct stub {
    int fd, port, delay_ms;
    pthread_mutex_t mu;
    char seen[256][96];
    int n_seen, outstanding, max_outstanding, connections;
} stub;

typedef struct stub_conn {
    stub *s;
    int fd;
} stub_conn;

static void *stub_serve(void *arg)
{
    stub_conn *sc = arg;
    stub *s = sc->s;
    char buf[65536];
    size_t len = 0;
    for (;;) {
        char *end = len > 0 ? memmem(buf, len, "\r\n\r\n", 4) : NULL;
        if (end == NULL) {
            if (len == sizeof(buf))
                break;
            ssize_t n = read(sc->fd, buf + len, sizeof(buf) - len);
            if (n <= 0)
                break;
            len += (size_t)n;
            continue;
        }
        size_t head = (size_t)(end - buf) + 4, body = 0;
        char *cl = memmem(buf, head, "Content-Length: ", 16);
        if (cl != NULL)
            body = (size_t)strtoul(cl + 16, NULL, 10);
        while (len < head + body && len < sizeof(buf)) {
            ssize_t n = read(sc->fd, buf + len, sizeof(buf) - len);
            if (n <= 0)
                goto out;
            len += (size_t)n;
        }
        pthread_mutex_lock(&s->mu);
        if (s->n_seen < 256) {
            size_t line = strcspn(buf, "\r");
            snprintf(s->seen[s->n_seen++], sizeof(s->seen[0]), "%.*s", (int)line, buf);
        }
        if (++s->outstanding > s->max_outstanding)
            s->max_outstanding = s->outstanding;
        pthread_mutex_unlock(&s->mu);
        if (s->delay_ms > 0)
            usleep((useconds_t)s->delay_ms * 1000);
        pthread_mutex_lock(&s->mu);
        s->outstanding--;
        pthread_mutex_unlock(&s->mu);
        static const char answer[] =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        if (write(sc->fd, answer, sizeof(answer) - 1) < 0)
            break;
        memmove(buf, buf + head + body, len - head - body);
        len -= head + body;
    }
out:
    close(sc->fd);
    free(sc);
    return NULL;
}

static void *stub_accept(void *arg)
{
    stub *s = arg;
    for (;;) {
        int fd = accept(s->fd, NULL, NULL);
        if (fd < 0)
            return NULL; /* the listener was shut down */
        stub_conn *sc = malloc(sizeof(*sc));
        assert_non_null(sc);
        *sc = (stub_conn){s, fd};
        pthread_mutex_lock(&s->mu);
        s->connections++;
        pthread_mutex_unlock(&s->mu);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, stub_serve, sc), 0);
        pthread_detach(t);
    }
}

static void stub_start(stub *s, int delay_ms, pthread_t *t)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    s->delay_ms = delay_ms;
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->fd, 64), 0);
    assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &alen), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(t, NULL, stub_accept, s), 0);
}

static void stub_stop(stub *s, pthread_t t)
{
    shutdown(s->fd, SHUT_RDWR);
    close(s->fd);
    pthread_join(t, NULL);
}

static int stub_count(stub *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->n_seen;
    pthread_mutex_unlock(&s->mu);
    return n;
}

typedef struct tally {
    int done, dropped, ok;
    int want; /* what wanted() answers */
} tally;

static void count_done(void *data, const kube_result *r)
{
    tally *t = data;
    t->done++;
    t->dropped += r->dropped;
    t->ok += r->status == 200;
}

static int is_wanted(void *data)
{
    return ((tally *)data)->want;
}

static kube_client *client_for(kube_config *cfg, char *server, size_t n, const stub *s, double qps,
                               int burst)
{
    snprintf(server, n, "http://127.0.0.1:%d", s->port);
    memset(cfg, 0, sizeof(*cfg));
    cfg->server = server;
    char err[128];
    kube_client *c = kube_client_new(cfg, qps, burst, err, sizeof(err));
    assert_non_null(c);
    return c;
}

static int take_chunk(void *data, const char *chunk, size_t n)
{
    (void)data;
    (void)chunk;
    (void)n;
    return 1;
}

/* A GET whose path says watch=1 is streamed, as an informer's lists and
 * watches are; any other GET is a plain read (a decision's node read). */
static void queue(kube_client *c, const char *method, const char *path, int lease, tally *t)
{
    kube_call call = {.method = method, .path = path, .on_done = count_done, .data = t,
                      .wanted = is_wanted, .lease = lease, .no_retry = 1,
                      .on_chunk = strstr(path, "watch=1") != NULL ? take_chunk : NULL,
                      .body = method[0] == 'G' ? NULL : "{}",
                      .body_len = method[0] == 'G' ? 0 : 2,
                      .content_type = method[0] == 'G' ? NULL : "application/json"};
    assert_int_equal(kube_client_call(c, &call), 0);
}

/* Bounded: at most 2000 steps of at most 10 ms. */
static void step_until(kube_client *c, stub *s, int seen, tally *t, int done)
{
    for (int i = 0; i < 2000 && (stub_count(s) < seen || t->done < done); i++)
        kube_client_step(c, 10);
}

/* issue 10 §1: a busy controller's Lease calls and watches never wait
 * behind its queued writes.  One token a second: 20 writes queued first,
 * then a read and a Lease renewal; the renewal (its own bucket) and the
 * read (the next token) reach the server before any write. */
static void test_lanes_order(void **state)
{
    (void)state;
    stub s;
    pthread_t t;
    stub_start(&s, 0, &t);
    kube_config cfg;
    char server[64];
    kube_client *c = client_for(&cfg, server, sizeof(server), &s, 2, 1);
    tally writes = {.want = 1}, reads = {.want = 1};
    /* the first token goes to a write already started; then 20 queue */
    queue(c, "PATCH", "/api/v1/namespaces/a/pods/first/status", 0, &writes);
    step_until(c, &s, 1, &writes, 1);
    for (int i = 0; i < 20; i++)
        queue(c, "PATCH", "/api/v1/namespaces/a/pods/p/status", 0, &writes);
    queue(c, "GET", "/api/v1/pods?watch=1", 0, &reads);
    queue(c, "PUT", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l", 1, &reads);
    /* the gauge's view: 22 waiting to start, none retrying */
    size_t waiting, retrying, in_flight;
    kube_client_counts(c, &waiting, &retrying, &in_flight);
    assert_int_equal(waiting, 22);
    assert_int_equal(retrying, 0);
    assert_int_equal(waiting + retrying + in_flight, kube_client_pending(c));
    step_until(c, &s, 4, &reads, 2);
    assert_true(stub_count(&s) >= 4);
    /* the two start in the same turn, so either may reach the server first */
    int lease_read = strncmp(s.seen[1], "PUT /apis/coordination", 22) == 0 &&
                     strncmp(s.seen[2], "GET /api/v1/pods", 16) == 0;
    int read_lease = strncmp(s.seen[1], "GET /api/v1/pods", 16) == 0 &&
                     strncmp(s.seen[2], "PUT /apis/coordination", 22) == 0;
    if (!(lease_read || read_lease) || strncmp(s.seen[3], "PATCH ", 6) != 0)
        fail_msg("order: %s | %s | %s | %s", s.seen[0], s.seen[1], s.seen[2], s.seen[3]);
    /* the writes still queued are dropped at once when no longer wanted */
    writes.want = 0;
    size_t dropped = kube_client_drop_unwanted(c);
    assert_true(dropped >= 15);
    assert_int_equal((size_t)writes.dropped, dropped);
    step_until(c, &s, 0, &writes, 21);
    assert_int_equal(writes.done, 21);
    assert_int_equal(kube_client_pending(c), 0);
    kube_client_counts(c, &waiting, &retrying, &in_flight);
    assert_int_equal(waiting + retrying + in_flight, 0);
    kube_client_free(c);

    /* The Lease lane has a bucket of its own: with one token per 100 s,
     * taken by a write, a renewal still goes out at once (the loop is
     * bounded far below 100 s). */
    c = client_for(&cfg, server, sizeof(server), &s, 0.01, 1);
    writes = (tally){.want = 1};
    reads = (tally){.want = 1};
    for (int i = 0; i < 5; i++)
        queue(c, "PATCH", "/api/v1/namespaces/a/pods/q/status", 0, &writes);
    queue(c, "PUT", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l", 1, &reads);
    for (int i = 0; i < 1000 && (reads.done < 1 || writes.done < 1); i++)
        kube_client_step(c, 10);
    assert_int_equal(reads.ok, 1);
    assert_int_equal(writes.done, 1);
    kube_client_free(c); /* ends the 4 writes still waiting */
    assert_int_equal(writes.done, 5);
    stub_stop(&s, t);
}

/* A GET that is not a list or a watch (the controller's node reads) is
 * work: it waits its turn behind the writes queued before it, and writes
 * queued after it wait for it.  Served ahead of every write, a stream of
 * such reads could hold the writes back for good (found in review). */
static void test_plain_reads_are_work(void **state)
{
    (void)state;
    stub s;
    pthread_t t;
    stub_start(&s, 0, &t);
    kube_config cfg;
    char server[64];
    kube_client *c = client_for(&cfg, server, sizeof(server), &s, 4, 1);
    tally writes = {.want = 1}, reads = {.want = 1};
    queue(c, "PATCH", "/api/v1/namespaces/a/pods/first/status", 0, &writes);
    step_until(c, &s, 1, &writes, 1);
    queue(c, "PATCH", "/api/v1/namespaces/a/pods/w1/status", 0, &writes);
    queue(c, "GET", "/api/v1/nodes/n1", 0, &reads);
    queue(c, "PATCH", "/api/v1/namespaces/a/pods/w2/status", 0, &writes);
    step_until(c, &s, 4, &writes, 3);
    step_until(c, &s, 4, &reads, 1);
    assert_int_equal(stub_count(&s), 4);
    if (strncmp(s.seen[1], "PATCH /api/v1/namespaces/a/pods/w1", 34) != 0 ||
        strncmp(s.seen[2], "GET /api/v1/nodes/n1", 20) != 0 ||
        strncmp(s.seen[3], "PATCH /api/v1/namespaces/a/pods/w2", 34) != 0)
        fail_msg("order: %s | %s | %s | %s", s.seen[0], s.seen[1], s.seen[2], s.seen[3]);
    kube_client_free(c);
    stub_stop(&s, t);
}

/* Over HTTP/1.1 at most KUBE_HTTP1_IN_FLIGHT calls wait for an answer at
 * once (a small pool of connections), however many the rate allows. */
static void test_in_flight_cap(void **state)
{
    (void)state;
    stub s;
    pthread_t t;
    stub_start(&s, 30, &t);
    kube_config cfg;
    char server[64];
    kube_client *c = client_for(&cfg, server, sizeof(server), &s, 10000, 10000);
    tally writes = {.want = 1};
    for (int i = 0; i < 60; i++)
        queue(c, "PATCH", "/api/v1/namespaces/a/pods/p/status", 0, &writes);
    step_until(c, &s, 60, &writes, 60);
    assert_int_equal(writes.ok, 60);
    if (s.max_outstanding > KUBE_HTTP1_IN_FLIGHT || s.connections > KUBE_HTTP1_IN_FLIGHT ||
        s.max_outstanding < 2)
        fail_msg("%d calls in flight at most over %d connections; want 2..%d", s.max_outstanding,
                 s.connections, KUBE_HTTP1_IN_FLIGHT);
    kube_client_free(c);
    stub_stop(&s, t);
}

/* rest_client_requests_total: exact codes, "<error>" for no answer. */
static void test_stats_render(void **state)
{
    (void)state;
    kube_stats st;
    memset(&st, 0, sizeof(st));
    static const struct {
        const char *method;
        long status;
    } calls[] = {{"GET", 200}, {"GET", 200}, {"PATCH", 404}, {"PATCH", 0},
                 {"DELETE", 409}, {"PUT", 999}, {"MOVE", 503}};
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        int m, k;
        kube_stats_index(calls[i].method, calls[i].status, &m, &k);
        metrics_add(&st.calls[m][k], 1);
    }
    strbuf t = {0};
    kube_stats_render(&st, &t);
    static const char *const want[] = {
        "# TYPE rest_client_requests_total counter\n",
        "rest_client_requests_total{code=\"200\",method=\"GET\"} 2\n",
        "rest_client_requests_total{code=\"404\",method=\"PATCH\"} 1\n",
        "rest_client_requests_total{code=\"<error>\",method=\"PATCH\"} 1\n",
        "rest_client_requests_total{code=\"409\",method=\"DELETE\"} 1\n",
        "rest_client_requests_total{code=\"<error>\",method=\"PUT\"} 1\n",
        "rest_client_requests_total{code=\"503\",method=\"OTHER\"} 1\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (strstr(t.data, want[i]) == NULL)
            fail_msg("no \"%s\" in:\n%s", want[i], t.data);
    assert_null(strstr(t.data, "} 0\n"));
    strbuf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_table),
        cmocka_unit_test(test_lanes_order),
        cmocka_unit_test(test_plain_reads_are_work),
        cmocka_unit_test(test_in_flight_cap),
        cmocka_unit_test(test_stats_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

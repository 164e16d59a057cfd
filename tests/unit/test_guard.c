/*
 * test_guard.c - the webhook server's resource and protocol decisions
 * (webhook/guard.h), one table per decision: taking a connection, the
 * accept back-off and which errno means "out of descriptors", the
 * connection cap the descriptor limit allows, which unfinished handshake
 * gives its slot on a full port, what to do with a connection at a sweep
 * (handshake deadline, upload minimum rate), which upload the full budget
 * cuts, the budget's hysteresis, whether the drain waits for a
 * connection, and request framing (RFC 9112 §6.1, §6.3).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"

#include "guard.h"

#define MS 1000000ull

static const guard_limits L = {
    .max_connections = 4,
    .max_header_bytes = 1000,
    .max_request_bytes = 8000,
    .max_buffered_bytes = 100000,
    .write_timeout_ns = 10000 * MS,
    .handshake_timeout_ns = 3000 * MS,
    .upload_grace_ns = 5000 * MS,
    .upload_min_rate = 1000,
};

static void test_head_end(void **state)
{
    (void)state;
    static const struct {
        const char *name, *buf;
        size_t want;
    } rows[] = {
        {"CRLF", "POST / HTTP/1.1\r\nA: b\r\n\r\nbody", 25},
        {"bare LF", "POST / HTTP/1.1\nA: b\n\nbody", 22},
        {"CRLF then LF", "POST / HTTP/1.1\r\nA: b\r\n\nbody", 24},
        {"LF then CRLF", "POST / HTTP/1.1\nA: b\n\r\nbody", 23},
        {"not yet", "POST / HTTP/1.1\r\nA: b\r\n", 0},
        {"ends in CR", "POST / HTTP/1.1\r\nA: b\r\n\r", 0},
        {"empty", "", 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t got = guard_head_end(rows[i].buf, strlen(rows[i].buf));
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %zu, want %zu", got, rows[i].want);
    }
}

static void test_accept(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        guard_port port;
        size_t open;
        int want;
    } rows[] = {
        {"admission, none open", GUARD_ADMISSION, 0, 1},
        {"admission, one under the limit", GUARD_ADMISSION, 3, 1},
        {"admission, at the limit", GUARD_ADMISSION, 4, 0},
        {"admission, over (raced)", GUARD_ADMISSION, 9, 0},
        {"health has its own room", GUARD_HEALTH, 4, 1},
        {"health at its cap", GUARD_HEALTH, GUARD_PROBE_CONNECTIONS, 0},
        {"metrics under its cap", GUARD_METRICS, GUARD_PROBE_CONNECTIONS - 1, 1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int got = guard_accept(rows[i].port, rows[i].open, &L);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d", got);
    }
}

static void test_backoff(void **state)
{
    (void)state;
    static const struct {
        unsigned failures, want;
    } rows[] = {{0, 0}, {1, 10}, {2, 20}, {3, 40}, {7, 640}, {8, 1000}, {9, 1000}, {4000000000u, 1000}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "%u failures", rows[i].failures);
        unsigned got = guard_accept_backoff_ms(rows[i].failures);
        ROW_CHECK(name, got == rows[i].want, "got %u", got);
    }
    static const struct {
        int err, want;
    } errs[] = {{EMFILE, 1}, {ENFILE, 1}, {ENOBUFS, 1}, {ENOMEM, 1},
                {ECONNABORTED, 0}, {EPERM, 0}, {EPROTO, 0}, {EINTR, 0}};
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
        ROW_CHECK(strerror(errs[i].err),
                  guard_accept_error_is_exhaustion(errs[i].err) == errs[i].want, "errno %d",
                  errs[i].err);
}

static void test_connection_cap(void **state)
{
    (void)state;
    /* the evictions in progress (GUARD_EVICTING_MAX per worker) count too */
    const uint64_t reserve2 = GUARD_FD_RESERVE_BASE +
                              2 * (GUARD_FD_RESERVE_PER_THREAD + 2 * GUARD_EVICTING_MAX) +
                              2 * GUARD_PROBE_CONNECTIONS;
    static const struct {
        const char *name;
        size_t requested;
        uint64_t nofile;
        unsigned threads;
        size_t want; /* 0: requested - not lowered */
    } rows[] = {
        {"container default 1048576", 1024, 1048576, 2, 1024},
        {"Debian soft limit 1024", 1024, 1024, 2, 0 /* 1024 - reserve */},
        {"tiny limit", 1024, 64, 2, 64 - 88 > 0 ? 0 : 1},
        {"unlimited", 1024, UINT64_MAX, 8, 1024},
        {"requested 0 means 1", 0, 1048576, 2, 1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t got = guard_connection_cap(rows[i].requested, rows[i].nofile, rows[i].threads);
        size_t want = rows[i].want;
        if (i == 1)
            want = (size_t)(1024 - reserve2);
        if (i == 2)
            want = 64 > reserve2 ? (size_t)(64 - reserve2) : 1;
        ROW_CHECK(rows[i].name, got == want, "got %zu, want %zu", got, want);
    }
}

static void test_conn_action(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        guard_conn c;
        int over, largest;
        guard_action want;
    } rows[] = {
        {"idle keep-alive", {0}, 0, 0, GUARD_KEEP},
        {"head arriving, under the limit", {.buffered = 900}, 0, 0, GUARD_KEEP},
        {"head over the limit, incomplete", {.buffered = 1001}, 0, 0,
         GUARD_CUT_HEADERS},
        {"big body after a complete head", {.buffered = 5000, .head_complete = 1}, 0,
         0, GUARD_KEEP},
        {"pipelined bytes while answering", {.answering = 1, .buffered = 5000}, 0, 0,
         GUARD_KEEP},
        {"reply written for 9 s", {.writing = 1, .writing_ns = 9000 * MS}, 0, 0,
         GUARD_KEEP},
        {"reply not taken for 10 s and more", {.writing = 1, .writing_ns = 10001 * MS},
         0, 0, GUARD_CUT_WRITE_TIMEOUT},
        {"over budget, arriving", {.buffered = 5000, .head_complete = 1}, 1, 0,
         GUARD_PAUSE},
        {"over budget, the largest goes on", {.buffered = 5000, .head_complete = 1}, 1,
         1, GUARD_KEEP},
        {"over budget, answering is not paused",
         {.answering = 1, .buffered = 5000, .head_complete = 1}, 1, 0, GUARD_KEEP},
        {"over budget, idle is not paused", {0}, 1, 0, GUARD_KEEP},
        {"paused, still over", {.buffered = 5000, .head_complete = 1, .paused = 1}, 1,
         0, GUARD_KEEP},
        {"paused, under again", {.buffered = 5000, .head_complete = 1, .paused = 1}, 0,
         0, GUARD_RESUME},
        {"paused, now the largest", {.buffered = 5000, .head_complete = 1, .paused = 1},
         1, 1, GUARD_RESUME},
        {"write timeout wins over pausing",
         {.buffered = 5000, .writing = 1, .writing_ns = 20000 * MS}, 1, 0,
         GUARD_CUT_WRITE_TIMEOUT},
        /* handshake deadline (3 s here) */
        {"handshaking within the deadline", {.handshaking = 1, .age_ns = 3000 * MS}, 0, 0,
         GUARD_KEEP},
        {"handshaking past the deadline", {.handshaking = 1, .age_ns = 3001 * MS}, 0, 0,
         GUARD_CUT_HANDSHAKE},
        {"handshake done, idle long after", {.age_ns = 600000 * MS}, 0, 0, GUARD_KEEP},
        /* minimum rate: 5 s grace + 1 s per 1000 bytes */
        {"arriving slowly, within the grace",
         {.buffered = 10, .head_complete = 1, .arriving_ns = 5000 * MS}, 0, 0, GUARD_KEEP},
        {"arriving slowly, past grace and rate",
         {.buffered = 10, .head_complete = 1, .arriving_ns = 5011 * MS}, 0, 0,
         GUARD_CUT_SLOW_UPLOAD},
        {"arriving at the rate",
         {.buffered = 3000, .head_complete = 1, .arriving_ns = 8000 * MS}, 0, 0, GUARD_KEEP},
        {"arriving under the rate",
         {.buffered = 3000, .head_complete = 1, .arriving_ns = 8001 * MS}, 0, 0,
         GUARD_CUT_SLOW_UPLOAD},
        {"being answered is not an upload",
         {.answering = 1, .buffered = 10, .head_complete = 1, .arriving_ns = 60000 * MS}, 0,
         0, GUARD_KEEP},
        {"slow and over budget: cut, not paused",
         {.buffered = 10, .head_complete = 1, .arriving_ns = 60000 * MS}, 1, 0,
         GUARD_CUT_SLOW_UPLOAD},
        {"paused: no clock yet (0)", {.buffered = 10, .head_complete = 1, .paused = 1}, 1, 0,
         GUARD_KEEP},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        guard_action got = guard_conn_action(&rows[i].c, &L, rows[i].over, rows[i].largest);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d, want %d", (int)got,
                  (int)rows[i].want);
    }
}

static void test_upload_too_slow(void **state)
{
    (void)state;
    guard_limits off = L;
    off.upload_min_rate = 0;
    guard_limits fast = L;
    fast.upload_min_rate = 1u << 30;
    static const struct {
        const char *name;
        size_t received;
        uint64_t elapsed_ns;
        int want;
    } rows[] = {
        {"nothing, in the grace", 0, 5000 * MS, 0},
        {"nothing, past the grace", 0, 5000 * MS + 1, 1},
        {"999 bytes earn 999 ms", 999, 5999 * MS, 0},
        {"999 bytes, 1 ns over", 999, 5999 * MS + 1, 1},
        {"a whole review at LAN speed", 7u << 20, 200 * MS, 0},
        {"a huge count does not overflow", (size_t)-1, UINT64_MAX, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ROW_CHECK(rows[i].name,
                  guard_upload_too_slow(rows[i].received, rows[i].elapsed_ns, &L) ==
                      rows[i].want,
                  "%s", "mismatch");
    ROW_CHECK("rate 0 is off", guard_upload_too_slow(0, UINT64_MAX, &off) == 0, "%s",
              "mismatch");
    ROW_CHECK("the largest rate", guard_upload_too_slow(1u << 30, 6000 * MS, &fast) == 0, "%s",
              "mismatch");
    ROW_CHECK("the largest rate, late", guard_upload_too_slow(1u << 30, 6000 * MS + 1, &fast) == 1,
              "%s", "mismatch");
}

static void test_handshake_victim(void **state)
{
    (void)state;
#define HS(d, h, c, age) {.done = d, .hello_seen = h, .cut = c, .age_ns = (age) * MS}
    static const struct {
        const char *name;
        guard_handshake c[4];
        size_t n, evicting, want; /* want == n: refuse the new one */
    } rows[] = {
        {"none open", {{0}}, 0, 0, 0},
        {"all done: refuse", {HS(1, 1, 0, 900), HS(1, 1, 0, 10)}, 2, 0, 2},
        {"the oldest silent one", {HS(0, 0, 0, 100), HS(0, 0, 0, 900), HS(1, 1, 0, 5000)}, 3,
         0, 1},
        {"silent before older mid-handshake",
         {HS(0, 1, 0, 2000), HS(0, 0, 0, 10), HS(1, 1, 0, 5000)}, 3, 0, 1},
        {"mid-handshake when none is silent", {HS(1, 1, 0, 5000), HS(0, 1, 0, 20)}, 2, 0, 1},
        {"one being cut is skipped", {HS(0, 0, 1, 900), HS(0, 0, 0, 100)}, 2, 0, 1},
        {"only ones being cut: refuse", {HS(0, 0, 1, 900)}, 1, 0, 1},
        {"evictions pending at the bound: refuse", {HS(0, 0, 0, 900)}, 1, GUARD_EVICTING_MAX, 1},
        {"one under the bound", {HS(0, 0, 0, 900)}, 1, GUARD_EVICTING_MAX - 1, 0},
    };
#undef HS
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t got = guard_handshake_victim(rows[i].c, rows[i].n, rows[i].evicting);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %zu, want %zu", got, rows[i].want);
    }
}

static void test_evict_worker(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t handshakes[3], asked[3], n, self, want; /* want == n: none */
    } rows[] = {
        {"one worker: nobody to ask", {5}, {0}, 1, 0, 1},
        {"the other has some", {0, 4}, {0, 0}, 2, 0, 1},
        {"never itself", {9, 0}, {0, 0}, 2, 0, 2},
        {"the most not yet asked for", {0, 6, 5}, {0, 3, 0}, 3, 0, 2},
        {"all asked for already", {0, 2, 1}, {0, 2, 1}, 3, 0, 3},
        {"asks pending at the bound", {0, 100}, {0, GUARD_EVICTING_MAX}, 2, 0, 2},
        {"stale count under its asks", {0, 1}, {0, 3}, 2, 0, 2},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t got =
            guard_evict_worker(rows[i].handshakes, rows[i].asked, rows[i].n, rows[i].self);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %zu, want %zu", got, rows[i].want);
    }
}

static void test_budget_victim(void **state)
{
    (void)state;
#define UP(a, c, age) {.arriving = a, .cut = c, .age_ns = (age) * MS}
    static const struct {
        const char *name;
        guard_upload u[4];
        size_t n, want; /* want == n: none */
    } rows[] = {
        {"none", {{0}}, 0, 0},
        {"all young", {UP(1, 0, 999), UP(1, 0, 10)}, 2, 2},
        {"the oldest", {UP(1, 0, 1000), UP(1, 0, 7000), UP(1, 0, 3000)}, 3, 1},
        {"not arriving (answered, idle)", {UP(0, 0, 9000), UP(1, 0, 2000)}, 2, 1},
        {"already being cut", {UP(1, 1, 9000), UP(1, 0, 2000)}, 2, 1},
        {"only young and cut", {UP(1, 1, 9000), UP(1, 0, 500)}, 2, 2},
    };
#undef UP
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t got = guard_budget_victim(rows[i].u, rows[i].n);
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %zu, want %zu", got, rows[i].want);
    }
}

static void test_over_budget(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t total;
        int was, want;
    } rows[] = {
        {"under", 50000, 0, 0},       {"at", 100000, 0, 0},
        {"over", 100001, 0, 1},       {"falling, above 3/4", 80000, 1, 1},
        {"fallen under 3/4", 74999, 1, 0}, {"rising to 3/4", 80000, 0, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ROW_CHECK(rows[i].name,
                  guard_over_budget(rows[i].total, 100000, rows[i].was) == rows[i].want, "%s", "mismatch");
}

static void test_arriving(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        guard_arrival a;
        int want;
    } rows[] = {
        {"idle keep-alive after requests", {.requests = 3, .age_ns = 5000 * MS}, 0},
        {"being answered", {.answering = 1, .requests = 3, .age_ns = 5000 * MS}, 1},
        {"decrypted bytes in", {.buffered = 10, .requests = 1, .age_ns = 5000 * MS}, 1},
        {"bytes in the kernel", {.kernel_unread = 1, .requests = 1, .age_ns = 5000 * MS}, 1},
        {"half a TLS record", {.tls_pending = 1, .requests = 1, .age_ns = 5000 * MS}, 1},
        {"mid-handshake", {.handshaking = 1, .age_ns = 5000 * MS}, 1},
        {"just accepted, nothing yet", {.age_ns = 100 * MS}, 1},
        {"accepted long ago, silent", {.age_ns = 2000 * MS}, 0},
        {"fresh but served already", {.requests = 1, .age_ns = 100 * MS}, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        ROW_CHECK(rows[i].name, guard_arriving(&rows[i].a) == rows[i].want, "%s", "mismatch");
}

static void test_head_framing(void **state)
{
    (void)state;
    static const struct {
        const char *name, *head;
        guard_framing want;
    } rows[] = {
        {"content-length only", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n",
         GUARD_FRAMING_OK},
        {"chunked only", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", GUARD_FRAMING_OK},
        {"no body", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", GUARD_FRAMING_OK},
        {"both", "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
         GUARD_FRAMING_CL_AND_TE},
        {"both, other order and case",
         "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\nCONTENT-LENGTH: 4\r\n\r\n",
         GUARD_FRAMING_CL_AND_TE},
        {"two lengths differ", "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
         GUARD_FRAMING_CL_CONFLICT},
        {"two lengths equal", "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length:  5 \r\n\r\n",
         GUARD_FRAMING_OK},
        {"leading zeros are the same number",
         "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 005\r\n\r\n", GUARD_FRAMING_OK},
        {"a list in one line", "POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n",
         GUARD_FRAMING_CL_CONFLICT},
        {"not a number", "POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", GUARD_FRAMING_CL_CONFLICT},
        {"overflow", "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
         GUARD_FRAMING_CL_CONFLICT},
        {"body bytes after the head are not read",
         "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nTransfer-Encoding: chunked\r\n\r\n",
         GUARD_FRAMING_OK},
        {"bare LF lines", "POST / HTTP/1.1\nContent-Length: 5\nTransfer-Encoding: chunked\n\n",
         GUARD_FRAMING_CL_AND_TE},
        {"a name that only starts the same",
         "POST / HTTP/1.1\r\nContent-Length-X: 5\r\nContent-Length: 6\r\n\r\n", GUARD_FRAMING_OK},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        guard_framing got = guard_head_framing(rows[i].head, strlen(rows[i].head));
        ROW_CHECK(rows[i].name, got == rows[i].want, "got %d, want %d", (int)got,
                  (int)rows[i].want);
    }
    /* seventeen equal lengths: more than are compared */
    char many[1024] = "POST / HTTP/1.1\r\n";
    for (int i = 0; i < 17; i++)
        strcat(many, "Content-Length: 1\r\n");
    strcat(many, "\r\n");
    ROW_CHECK("17 lengths", guard_head_framing(many, strlen(many)) == GUARD_FRAMING_CL_CONFLICT,
              "%s", "mismatch");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_end),
        cmocka_unit_test(test_accept),         cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_connection_cap), cmocka_unit_test(test_conn_action),
        cmocka_unit_test(test_over_budget),    cmocka_unit_test(test_arriving),
        cmocka_unit_test(test_head_framing),   cmocka_unit_test(test_upload_too_slow),
        cmocka_unit_test(test_handshake_victim), cmocka_unit_test(test_budget_victim),
        cmocka_unit_test(test_evict_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

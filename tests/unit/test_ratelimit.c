/*
 * test_ratelimit.c - the client-go token bucket on an injected clock: the
 * first burst goes out at once, then one call per 1/qps, idle time refills
 * at most burst tokens; a 429 pause holds every call and lets them resume
 * at the steady rate; a call that finds no token takes none (no slot is
 * reserved ahead); Retry-After in seconds
 * and in the three HTTP-date forms, bounded to 0..600 s.
 */
#include "review_fixture.h"

#include <math.h>

#include "ratelimit.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define T0 (1000 * SEC) /* an arbitrary monotonic start */

/* ---- token bucket ----------------------------------------------------------- */

typedef struct step {
    uint64_t at_ms;    /* since T0 */
    int n;             /* asks made at that time */
    int64_t wait_ms;   /* the answer to each of them; -1 ends the script */
    uint64_t pause_ms; /* non-zero: instead, pause until T0 + this */
} step;

typedef struct bucket_row {
    const char *name;
    double qps;
    int burst;
    step steps[8];
} bucket_row;

/* clang-format off */
static const bucket_row buckets[] = {
    {"defaults: 30 at once, then one every 50 ms", 20, 30,
     {{0, 30, 0, 0}, {0, 1, 50, 0}, {50, 1, 0, 0}, {50, 1, 50, 0}, {100, 1, 0, 0}, {0, 0, -1, 0}}},
    /* issue 10: a pass that queued N calls made each reserve a slot, N/qps
     * ahead; asking without a token now takes nothing, so a caller asking
     * for 100 calls at once learns 50 ms for each, not 50 ms to 5 s */
    {"asking without a token takes nothing: no slot reserved ahead", 20, 30,
     {{0, 30, 0, 0}, {0, 100, 50, 0}, {50, 1, 0, 0}, {50, 100, 50, 0}, {0, 0, -1, 0}}},
    {"idle refills, but never beyond burst", 20, 30,
     {{0, 30, 0, 0}, {10000, 30, 0, 0}, {10000, 1, 50, 0}, {0, 0, -1, 0}}},
    {"partial refill", 20, 30,
     {{0, 30, 0, 0}, {125, 2, 0, 0}, {125, 1, 25, 0}, {150, 1, 0, 0}, {0, 0, -1, 0}}},
    {"qps below 1", 0.5, 1,
     {{0, 1, 0, 0}, {0, 1, 2000, 0}, {1000, 1, 1000, 0}, {2000, 1, 0, 0}, {0, 0, -1, 0}}},
    {"burst 1", 10, 1,
     {{0, 1, 0, 0}, {0, 1, 100, 0}, {100, 1, 0, 0}, {100, 1, 100, 0}, {300, 1, 0, 0},
      {300, 1, 100, 0}, {0, 0, -1, 0}}},
    {"a 429 pause holds calls, then they go one slot at a time", 20, 30,
     {{0, 0, 0, 5000}, {0, 1, 5000, 0}, {4000, 1, 1000, 0}, {5000, 1, 0, 0}, {5000, 1, 50, 0},
      {0, 0, -1, 0}}},
    {"a shorter pause does not shorten a longer one", 20, 30,
     {{0, 0, 0, 5000}, {0, 0, 0, 1000}, {0, 1, 5000, 0}, {0, 0, -1, 0}}},
    /* ea45a62: a 429 while calls wait for their slot: nothing was promised
     * to them, so they all go after the pause, one slot apart */
    {"a 429 while calls wait: they go after the pause, a slot apart", 20, 30,
     {{0, 30, 0, 0}, {0, 3, 50, 0}, {25, 0, 0, 2025}, {50, 3, 2000, 0}, {2050, 1, 0, 0},
      {2050, 1, 50, 0}, {2100, 1, 0, 0}, {0, 0, -1, 0}}},
};
/* clang-format on */

static void test_bucket_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++) {
        const bucket_row *r = &buckets[i];
        ratelimit rl;
        FX_CHECK(r->name, ratelimit_init(&rl, r->qps, r->burst, T0) == 0, "init");
        for (size_t k = 0; k < 8 && r->steps[k].wait_ms >= 0; k++) {
            const step *s = &r->steps[k];
            uint64_t now = T0 + s->at_ms * MS;
            if (s->pause_ms != 0) {
                ratelimit_pause_until(&rl, now, T0 + s->pause_ms * MS);
                continue;
            }
            /* every one of the n asks gets the same answer: a token each,
             * or the same wait (nothing taken) */
            for (int j = 0; j < s->n; j++) {
                uint64_t wait = ratelimit_take(&rl, now);
                FX_CHECK(r->name, wait == (uint64_t)s->wait_ms * MS,
                         "step %zu ask %d: wait %llu ns, want %lld ms", k, j,
                         (unsigned long long)wait, (long long)s->wait_ms);
            }
        }
    }
}

/* Over a long run the rate is qps, whatever the pattern of calls. */
static void test_long_run_rate(void **state)
{
    (void)state;
    ratelimit rl;
    assert_int_equal(ratelimit_init(&rl, 20, 30, T0), 0);
    uint64_t now = T0;
    int sent = 0;
    /* a caller that sends as soon as it may, for 60 s */
    while (now <= T0 + 60 * SEC) {
        uint64_t wait = ratelimit_take(&rl, now);
        if (wait == 0)
            sent++;
        now += wait;
    }
    assert_int_equal(sent, 30 + 60 * 20);
}

/* After a pause that found the bucket full, only one call is ready at its
 * end; the next waits a full interval. */
static void test_pause_resumes_without_burst(void **state)
{
    (void)state;
    ratelimit rl;
    assert_int_equal(ratelimit_init(&rl, 20, 30, T0), 0);
    ratelimit_pause_until(&rl, T0, T0 + 2 * SEC);
    uint64_t end = T0 + 2 * SEC;
    assert_int_equal(ratelimit_take(&rl, end), 0);
    assert_int_equal(ratelimit_take(&rl, end), 50 * MS);
    /* a pause in the past changes nothing */
    ratelimit_pause_until(&rl, end, end - SEC);
    assert_int_equal(ratelimit_take(&rl, end + 50 * MS), 0);
    assert_int_equal(ratelimit_take(&rl, end + 50 * MS), 50 * MS);
}

static void test_init_rejects(void **state)
{
    (void)state;
    ratelimit rl;
    assert_int_equal(ratelimit_init(&rl, 0, 30, T0), -1);
    assert_int_equal(ratelimit_init(&rl, -1, 30, T0), -1);
    assert_int_equal(ratelimit_init(&rl, NAN, 30, T0), -1);
    assert_int_equal(ratelimit_init(&rl, 20, 0, T0), -1);
    assert_int_equal(ratelimit_init(&rl, RATELIMIT_DEFAULT_QPS, RATELIMIT_DEFAULT_BURST, T0), 0);
}

/* ---- Retry-After ----------------------------------------------------------- */

#define RFC_NOW 784111777 /* Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example */

typedef struct retry_row {
    const char *value;
    int64_t now;
    int rc;
    unsigned seconds;
} retry_row;

static const retry_row retries[] = {
    {"5", RFC_NOW, 0, 5},
    {"0", RFC_NOW, 0, 0},
    {" 7\t", RFC_NOW, 0, 7},
    {" 5\r\n", RFC_NOW, 0, 5}, /* the rest of a header line, as libcurl passes it */
    {"0120", RFC_NOW, 0, 120},
    {"600", RFC_NOW, 0, 600},
    {"601", RFC_NOW, 0, 600},
    {"99999999999999999999999999", RFC_NOW, 0, 600},
    {"", RFC_NOW, -1, 0},
    {"   ", RFC_NOW, -1, 0},
    {"-1", RFC_NOW, -1, 0},
    {"+5", RFC_NOW, -1, 0},
    {"5s", RFC_NOW, -1, 0},
    {"1.5", RFC_NOW, -1, 0},
    {"5 5", RFC_NOW, -1, 0},
    /* the three HTTP-date forms, 10 s ahead */
    {"Sun, 06 Nov 1994 08:49:47 GMT", RFC_NOW, 0, 10},
    {"Sunday, 06-Nov-94 08:49:47 GMT", RFC_NOW, 0, 10},
    {"Sun Nov  6 08:49:47 1994", RFC_NOW, 0, 10},
    {" Sun, 06 Nov 1994 08:49:47 GMT ", RFC_NOW, 0, 10},
    {" Sun, 06 Nov 1994 08:49:47 GMT\r\n", RFC_NOW, 0, 10},
    {"Sun, 06 Nov 1994 08:59:36 GMT", RFC_NOW, 0, 599},
    {"Sun, 06 Nov 1994 09:49:37 GMT", RFC_NOW, 0, 600},
    {"Sun, 06 Nov 1994 08:49:37 GMT", RFC_NOW, 0, 0},
    {"Sat, 05 Nov 1994 08:49:37 GMT", RFC_NOW, 0, 0},
    {"Sat, 21 Nov 2026 21:30:05 GMT", 1795296600, 0, 5},
    {"Thu, 29 Feb 2024 00:00:05 GMT", 1709164800, 0, 5},
    {"Tue, 29 Feb 2000 00:00:30 GMT", 951782400, 0, 30},
    {"Wednesday, 06-Nov-69 08:49:47 GMT", 3150953377, 0, 10}, /* two-digit 69 is 2069 */
    {"Thursday, 01-Jan-70 00:00:09 GMT", 0, 0, 9},            /* and 70 is 1970 */
    {"Thu Jan  1 00:00:10 1970", 0, 0, 10},
    {"Sat Nov 21 21:30:01 2026", 1795296600, 0, 1},
    /* not dates */
    {"Sun, 06 Nov 1994 08:49:47 UTC", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 1994 08:49:47", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 1994 08:49:47 GMT x", RFC_NOW, -1, 0},
    {"sun, 06 Nov 1994 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun, 06 nov 1994 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun, 6 Nov 1994 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun 06 Nov 1994 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 94 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun, 31 Feb 1994 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Wed, 29 Feb 2023 00:00:00 GMT", RFC_NOW, -1, 0},
    {"Thu, 29 Feb 1900 00:00:00 GMT", RFC_NOW, -1, 0},
    {"Sun, 00 Nov 1994 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 1994 24:00:00 GMT", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 1994 08:60:00 GMT", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 1994 08:49:61 GMT", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 1994 8:49:47 GMT", RFC_NOW, -1, 0},
    {"Sunday, 06 Nov 1994 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun Nov 6 08:49:47 1994", RFC_NOW, -1, 0},
    {"Sun Nov  6 08:49:47 94", RFC_NOW, -1, 0},
    {"Funday, 06-Nov-94 08:49:47 GMT", RFC_NOW, -1, 0},
    {"Sun, 06 Nov 1994 08:49:47 GMT x\r\n", RFC_NOW, -1, 0},
    {"5\r5", RFC_NOW, -1, 0},
};

static void test_retry_after_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(retries) / sizeof(retries[0]); i++) {
        const retry_row *r = &retries[i];
        unsigned got = 12345;
        int rc = ratelimit_parse_retry_after(r->value, strlen(r->value), r->now, &got);
        FX_CHECK(r->value, rc == r->rc, "rc %d, want %d", rc, r->rc);
        if (rc == 0)
            FX_CHECK(r->value, got == r->seconds, "%u s, want %u", got, r->seconds);
        else
            FX_CHECK(r->value, got == 12345, "output written on failure");
    }
}

/* The length bounds the input: bytes past it are never read. */
static void test_retry_after_length(void **state)
{
    (void)state;
    unsigned s = 0;
    assert_int_equal(ratelimit_parse_retry_after("12x", 2, RFC_NOW, &s), 0);
    assert_int_equal(s, 12);
    assert_int_equal(ratelimit_parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", 28, RFC_NOW, &s),
                     -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_table),
        cmocka_unit_test(test_long_run_rate),
        cmocka_unit_test(test_pause_resumes_without_burst),
        cmocka_unit_test(test_init_rejects),
        cmocka_unit_test(test_retry_after_table),
        cmocka_unit_test(test_retry_after_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

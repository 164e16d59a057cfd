/*
 * test_clock.c - lib/clock: the monotonic clock moves forward, the wall
 * clock is written in the RFC 3339 shapes Kubernetes reads back, and
 * clock_parse_rfc3339 reads a time as metav1.Time does, one row per shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

/* The bounds of a time written between two readings: time(2) reads a
 * coarse clock that may lag CLOCK_REALTIME by a tick, so the earlier bound
 * is time(NULL) and the later one CLOCK_REALTIME (a time read from either
 * clock in between lies within them; two time(NULL) readings may not
 * bound a CLOCK_REALTIME one across a second's edge). */
static time_t fine_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec;
}

static void test_mono(void **state)
{
    (void)state;
    uint64_t a = clock_mono_ns();
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    uint64_t b = clock_mono_ns();
    assert_true(b >= a + 2000000);
}

static void test_rfc3339(void **state)
{
    (void)state;
    char buf[32];
    time_t before = time(NULL);
    clock_rfc3339(buf, sizeof(buf));
    time_t after = fine_now();
    assert_int_equal(strlen(buf), 20);
    struct tm tm = {0};
    char *end = strptime(buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    assert_non_null(end);
    assert_int_equal(*end, '\0');
    time_t t = timegm(&tm);
    assert_true(t >= before && t <= after);
}

static void test_rfc3339_micro(void **state)
{
    (void)state;
    char buf[40];
    time_t before = time(NULL);
    clock_rfc3339_micro(buf, sizeof(buf));
    time_t after = fine_now();
    assert_int_equal(strlen(buf), 27); /* 2026-11-21T21:00:00.123456Z */
    struct tm tm = {0};
    char *end = strptime(buf, "%Y-%m-%dT%H:%M:%S", &tm);
    assert_non_null(end);
    assert_int_equal(end[0], '.');
    for (int i = 1; i <= 6; i++)
        assert_true(end[i] >= '0' && end[i] <= '9');
    assert_string_equal(end + 7, "Z");
    time_t t = timegm(&tm);
    assert_true(t >= before && t <= after);
}

/* "was" says what the two parsers this one replaced made of the row where
 * they read it differently: the webhook's (strptime, "Z" only) and the
 * controller's (kobj.c, sscanf, anything after the seconds ignored). */
typedef struct parse_row {
    const char *text;
    int ok;
    long long secs;
} parse_row;

static const parse_row parse_rows[] = {
    /* what Kubernetes writes */
    {"2026-11-21T21:00:00Z", 1, 1795294800LL},            /* metav1.Time */
    {"2026-11-21T21:00:00.987654Z", 1, 1795294800LL},     /* MicroTime: fraction dropped */
    {"2026-11-21T21:00:00.123456789Z", 1, 1795294800LL},  /* RFC3339Nano */
    {"2026-11-21T21:00:00.1Z", 1, 1795294800LL},
    {"2026-11-21T21:00:00.123456789012Z", 1, 1795294800LL}, /* as many digits as Go reads */
    {"2000-02-29T12:34:56Z", 1, 951827696LL},
    {"2024-02-29T00:00:00Z", 1, 1709164800LL},
    {"1970-01-01T00:00:00Z", 1, 0},                       /* was: controller, unparsed (0) */
    {"1969-12-31T23:59:59Z", 1, -1},                      /* was: webhook, unparsed (-1) */
    {"0000-01-01T00:00:00Z", 1, -62167219200LL},
    {"9999-12-31T23:59:59Z", 1, 253402300799LL},
    /* offsets, as the apiserver reads them: was webhook no, controller as UTC */
    {"2026-11-21T21:00:00+02:00", 1, 1795294800LL - 7200},
    {"2026-11-21T21:00:00-05:30", 1, 1795294800LL + 19800},
    {"2026-11-21T21:00:00.5+02:00", 1, 1795294800LL - 7200},
    {"2026-11-21T21:00:00+00:00", 1, 1795294800LL},
    {"2026-11-21T21:00:00-00:00", 1, 1795294800LL},
    {"2026-11-21T21:00:00+23:59", 1, 1795294800LL - 86340},
    {"2026-11-21T21:00:00+24:00", 0, 0},
    {"2026-11-21T21:00:00+02:60", 0, 0},
    {"2026-11-21T21:00:00+0200", 0, 0},                   /* was: controller, as UTC */
    {"2026-11-21T21:00:00+02", 0, 0},
    {"2026-11-21T21:00:00+02:00Z", 0, 0},
    /* not a time; the controller took each of these (its tail was ignored) */
    {"2026-11-21T21:00:00", 0, 0},
    {"2026-11-21T21:00:00Zjunk", 0, 0},
    {"2026-11-21T21:00:00z", 0, 0},
    {"2026-11-21T21:00:00.Z", 0, 0},
    {"2026-11-21T21:00:00,5Z", 0, 0},
    /* fixed widths and ranges; both took these (and normalized) */
    {"2026-1-2T3:4:5.000000Z", 0, 0},
    {" 2026-11-21T21:00:00Z", 0, 0},
    {"2026-11-21T 21:00:00Z", 0, 0},
    {"99-11-21T21:00:00.00000Z", 0, 0},
    {"2026-02-30T00:00:00Z", 0, 0},                       /* was: March 2nd */
    {"2026-02-29T00:00:00Z", 0, 0},                       /* not a leap year */
    {"1900-02-29T00:00:00Z", 0, 0},                       /* nor is 1900 */
    {"2026-11-30T23:59:60Z", 0, 0},                       /* Go has no leap second */
    /* ranges the controller normalized (the webhook refused them) */
    {"2026-13-01T00:00:00Z", 0, 0},
    {"2026-00-10T00:00:00Z", 0, 0},
    {"2026-11-00T00:00:00Z", 0, 0},
    {"2026-11-31T00:00:00Z", 0, 0},
    {"2026-11-21T24:00:00Z", 0, 0},
    {"2026-11-21T21:60:00Z", 0, 0},
    {"2026-11-+1T21:00:00Z", 0, 0},
    /* refused by all three */
    {"2026-11-21t21:00:00Z", 0, 0},
    {"2026-11-21 21:00:00Z", 0, 0},
    {"2026-11-21T21:00Z", 0, 0},
    {"+2026-11-21T21:00:00Z", 0, 0},
    {"2026-11-21", 0, 0},
    {"", 0, 0},
    {"garbage", 0, 0},
};

static void test_parse_rfc3339(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
        const parse_row *r = &parse_rows[i];
        long long got = 7;
        int rc = clock_parse_rfc3339(sv_from(r->text), &got);
        if (r->ok ? rc != 0 || got != r->secs : rc != -1 || got != 7)
            fail_msg("\"%s\": rc %d, %lld; want %s %lld", r->text, rc, got,
                     r->ok ? "ok" : "refused", r->secs);
    }
    long long untouched = 7;
    assert_int_equal(clock_parse_rfc3339(SV_NULL, &untouched), -1);
    /* a view, not a C string: only its length counts */
    const char *longer = "2026-11-21T21:00:00Z and more";
    assert_int_equal(clock_parse_rfc3339((sv){longer, 20}, &untouched), 0);
    assert_true(untouched == 1795294800LL);
    assert_int_equal(clock_parse_rfc3339((sv){longer, 19}, &untouched), -1);
    assert_int_equal(clock_parse_rfc3339((sv){"2026-11-21T21:00:00.5", 21}, &untouched), -1);
    /* later is larger, across a month and a year */
    long long a, b;
    assert_int_equal(clock_parse_rfc3339(sv_from("2026-12-31T23:59:59Z"), &a), 0);
    assert_int_equal(clock_parse_rfc3339(sv_from("2027-01-01T00:00:00Z"), &b), 0);
    assert_true(b - a == 1);
}

/* A time in seconds written as RFC 3339: four-digit years, the range
 * metav1.Time has, and a buffer too small gives "" and -1. */
static void test_format_rfc3339(void **state)
{
    (void)state;
    static const struct {
        long long secs;
        int rc;
        const char *want;
    } rows[] = {
        {0, 0, "1970-01-01T00:00:00Z"},
        {-1, 0, "1969-12-31T23:59:59Z"},
        {1795726800, 0, "2026-11-26T21:00:00Z"},
        {-30610310400LL, 0, "0999-12-31T00:00:00Z"}, /* strftime's %Y: "999" */
        {-62135596800LL, 0, "0001-01-01T00:00:00Z"},
        {253402300799LL, 0, "9999-12-31T23:59:59Z"},
        {253402300800LL, -1, ""},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int rc = clock_format_rfc3339(rows[i].secs, buf, sizeof(buf));
        if (rc != rows[i].rc || strcmp(buf, rows[i].want) != 0)
            fail_msg("%lld: got %d \"%s\", want %d \"%s\"", rows[i].secs, rc, buf, rows[i].rc,
                     rows[i].want);
        long long back;
        if (rc == 0 && (clock_parse_rfc3339(sv_from(buf), &back) != 0 || back != rows[i].secs))
            fail_msg("%s does not read back as %lld", buf, rows[i].secs);
    }
    char small[20]; /* one short of the 21 a time needs */
    assert_int_equal(clock_format_rfc3339(0, small, sizeof(small)), -1);
    assert_string_equal(small, "");
}

/* What we write, we read back as the time it is. */
static void test_written_reads_back(void **state)
{
    (void)state;
    char buf[40];
    long long t;
    time_t before = time(NULL);
    clock_rfc3339(buf, sizeof(buf));
    assert_int_equal(clock_parse_rfc3339(sv_from(buf), &t), 0);
    assert_true(t >= before && t <= fine_now());
    clock_rfc3339_micro(buf, sizeof(buf));
    assert_int_equal(clock_parse_rfc3339(sv_from(buf), &t), 0);
    assert_true(t >= before && t <= fine_now());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mono),
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_rfc3339_micro),
        cmocka_unit_test(test_parse_rfc3339),
        cmocka_unit_test(test_format_rfc3339),
        cmocka_unit_test(test_written_reads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

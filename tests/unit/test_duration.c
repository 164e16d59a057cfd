/*
 * test_duration.c - ota-controller's duration flags: Go's syntax and plain
 * seconds, bounds, and error messages that name the units.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"

#include "duration.h"

#define S 1000000000ull
#define MS 1000000ull

static void test_parse_table(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int ok;
        uint64_t ns;
    } rows[] = {
        /* Go's syntax */
        {"15s", 1, 15 * S},
        {"10m", 1, 600 * S},
        {"1h30m", 1, 5400 * S},
        {"1h30m15s", 1, 5415 * S},
        {"500ms", 1, 500 * MS},
        {"1.5h", 1, 5400 * S},
        {"2.5s", 1, 2500 * MS},
        {".5s", 1, 500 * MS},
        {"1500000us", 1, 1500 * MS},
        {"1500000\xc2\xb5s", 1, 1500 * MS},
        {"2000000000ns", 1, 2 * S},
        {"1m1ms", 1, 60 * S + MS},
        {"0s", 1, 0},
        /* plain seconds, as before */
        {"600", 1, 600 * S},
        {"0.5", 1, 500 * MS},
        {"0", 1, 0},
        /* not durations */
        {"", 0, 0},
        {"s", 0, 0},
        {"-5s", 0, 0},
        {"+5s", 0, 0},
        {"5 s", 0, 0},
        {" 5s", 0, 0},
        {"5x", 0, 0},
        {"5sec", 0, 0},
        {"1m30", 0, 0}, /* a unitless number only alone */
        {"10S", 0, 0},
        {"1e3", 0, 0},
        {"0x10", 0, 0},
        {"..5s", 0, 0},
        {"99999999999999999999s", 0, 0},
        {"18446744073709551615h", 0, 0},
        {"9999999999h", 0, 0}, /* overflows uint64 nanoseconds */
        {"5124095.9h", 0, 0}, /* the whole hours fit; with the fraction it wraps */
        {"5124095h1h", 0, 0}, /* two terms that fit alone */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        uint64_t ns = 12345;
        char err[256] = "";
        int rc = duration_parse(rows[i].in, 0, UINT64_MAX, &ns, err, sizeof(err));
        ROW_CHECK(rows[i].in, rc == (rows[i].ok ? 0 : -1), "rc %d, err %s", rc, err);
        if (rows[i].ok)
            ROW_CHECK(rows[i].in, ns == rows[i].ns, "got %llu ns", (unsigned long long)ns);
        else
            ROW_CHECK(rows[i].in, ns == 12345 && strstr(err, "got \"") != NULL, "err %s", err);
    }
}

static void test_bounds_and_message(void **state)
{
    (void)state;
    uint64_t ns = 0;
    char err[256];
    assert_int_equal(duration_parse("1s", S, 86400 * S, &ns, err, sizeof(err)), 0);
    assert_int_equal(ns, S);
    assert_int_equal(duration_parse("24h", S, 86400 * S, &ns, err, sizeof(err)), 0);
    assert_int_equal(duration_parse("999ms", S, 86400 * S, &ns, err, sizeof(err)), -1);
    assert_string_equal(err, "wants a duration such as 15s, 10m or 1h30m (units ns, us, ms, s, m, "
                             "h; a plain number is seconds) from 1s to 24h0m0s, got \"999ms\"");
    assert_int_equal(duration_parse("24h0m1s", S, 86400 * S, &ns, err, sizeof(err)), -1);
    assert_int_equal(duration_parse("10", 100 * MS, 3600 * S, &ns, err, sizeof(err)), 0);
    assert_int_equal(duration_parse("10x", 100 * MS, 3600 * S, &ns, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "from 100ms to 1h0m0s, got \"10x\""));
}

static void test_format(void **state)
{
    (void)state;
    static const struct {
        uint64_t ns;
        const char *out;
    } rows[] = {
        {0, "0s"},          {999, "999ns"},       {1500, "1.5us"},  {500 * MS, "500ms"},
        {S, "1s"},          {90 * S, "1m30s"},    {5400 * S, "1h30m0s"},
        {2500 * MS, "2.5s"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char buf[32];
        duration_format(rows[i].ns, buf, sizeof(buf));
        ROW_CHECK(rows[i].out, strcmp(buf, rows[i].out) == 0, "got %s", buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_bounds_and_message),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

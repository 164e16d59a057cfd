/*
 * test_clock.c - lib/clock: the monotonic clock moves forward, and the wall
 * clock is written in the RFC 3339 shapes Kubernetes reads back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

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
    time_t after = time(NULL);
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
    time_t after = time(NULL);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mono),
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_rfc3339_micro),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

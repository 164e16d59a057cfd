/*
 * test_ota_daemonset.c - the OTA rulebook's DaemonSet annotations
 * (lib/ota_daemonset.h), one table per rule.  The webhook's validation
 * (test_admit_daemonset.c) and the controller's cache (test_kobj.c) read the
 * annotations through these two functions; this is their table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "ota_daemonset.h"
#include "ota_names.h"

static void test_strategy(void **state)
{
    (void)state;
    static const struct {
        const char *value; /* NULL: no annotation */
        ota_update_strategy want;
    } rows[] = {
        {NULL, OTA_UPDATE_UNSET},
        {"OTA", OTA_UPDATE_OTA},
        {"ota", OTA_UPDATE_OTA},
        {"oTa", OTA_UPDATE_OTA},
        {"AdvancedRollingUpdate", OTA_UPDATE_ADVANCED},
        {"advancedrollingupdate", OTA_UPDATE_ADVANCED},
        {"", OTA_UPDATE_UNKNOWN},
        {"OTA ", OTA_UPDATE_UNKNOWN},
        {" OTA", OTA_UPDATE_UNKNOWN},
        {"OT", OTA_UPDATE_UNKNOWN},
        {"OTAX", OTA_UPDATE_UNKNOWN},
        {"RollingUpdate", OTA_UPDATE_UNKNOWN},
        {"OnDelete", OTA_UPDATE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        ota_update_strategy got = ota_daemonset_strategy(sv_from(rows[i].value));
        if (got != rows[i].want)
            fail_msg("strategy \"%s\": got %d, want %d", rows[i].value ? rows[i].value : "(absent)",
                     got, rows[i].want);
    }
    /* a view, not a C string: only its length counts */
    assert_int_equal(ota_daemonset_strategy((sv){"OTAX", 3}), OTA_UPDATE_OTA);
    assert_int_equal(ota_daemonset_strategy((sv){"OTA", 2}), OTA_UPDATE_UNKNOWN);
}

static void test_timeout(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        int ok;
        long want;
    } rows[] = {
        {"30", 1, OTA_PREPULL_TIMEOUT_MIN},
        {"600", 1, 600},
        {"86400", 1, OTA_PREPULL_TIMEOUT_MAX},
        {"29", 0, 0},
        {"86401", 0, 0},
        {"99999", 0, 0},
        {"0", 0, 0},
        {"", 0, 0},
        {"-600", 0, 0},
        {"+600", 0, 0},
        {" 600", 0, 0},
        {"600 ", 0, 0},
        {"0600", 0, 0}, /* one spelling per number: no leading zero */
        {"060", 0, 0},
        {"600s", 0, 0},
        {"10m", 0, 0},
        {"1e3", 0, 0},
        {"6.5", 0, 0},
        {"100000", 0, 0}, /* over five digits */
        {"99999999999999999999999", 0, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        long got = -7;
        int rc = ota_daemonset_timeout(sv_from(rows[i].value), &got);
        if (rows[i].ok ? rc != 0 || got != rows[i].want : rc != -1 || got != -7)
            fail_msg("timeout \"%s\": rc %d, seconds %ld", rows[i].value, rc, got);
    }
    long untouched = -7;
    assert_int_equal(ota_daemonset_timeout(SV_NULL, &untouched), -1); /* absent */
    assert_int_equal(untouched, -7);
    assert_int_equal(ota_daemonset_timeout((sv){"6001", 3}, &untouched), 0);
    assert_int_equal(untouched, 600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strategy),
        cmocka_unit_test(test_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_ota_daemonset.c - the OTA rulebook's DaemonSet rules
 * (lib/ota_daemonset.h), one table per rule: the two annotations, which the
 * webhook's validation (test_admit_daemonset.c, through admit_review) and
 * the controller's cache (test_kobj.c) read through these functions, and
 * the verdict on a DaemonSet, with its messages as the apiserver passes
 * them on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ota_daemonset.h"
#include "ota_names.h"
#include "ota_rule.h"

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

/* ---- the verdict ---------------------------------------------------------- */

typedef struct check_row {
    const char *name;
    const char *strategy, *timeout; /* annotations; NULL: absent */
    int has_update_strategy;
    const char *type;               /* spec.updateStrategy.type; NULL: absent */
    ota_rule rule;                  /* OTA_RULE_NONE: allowed */
    const char *message;            /* the whole message on denial */
} check_row;

#define UNKNOWN_MSG(v)                                                                             \
    "DaemonSet edge/agent: annotation " OTA_ANN_UPDATE_STRATEGY " has unknown value \"" v "\"; "   \
    "valid values are OTA and AdvancedRollingUpdate (case-insensitive); "                          \
    "rule: unknown-update-strategy"
#define ONDELETE_MSG(v, type)                                                                      \
    "DaemonSet edge/agent is an OTA DaemonSet (" OTA_ANN_UPDATE_STRATEGY "=\"" v "\") but "        \
    "spec.updateStrategy.type is \"" type "\", not OnDelete; OpenYurt ignores it that way; "       \
    "rule: ota-requires-ondelete"
#define TIMEOUT_MSG(v)                                                                             \
    "DaemonSet edge/agent: annotation " OTA_ANN_PREPULL_TIMEOUT " must be a whole number of "      \
    "seconds from 30 to 86400, got \"" v "\"; rule: bad-prepull-timeout"

static const check_row check_rows[] = {
    {"OTA, OnDelete", "OTA", NULL, 1, "OnDelete", OTA_RULE_NONE, NULL},
    {"ota, OnDelete, a timeout", "ota", "600", 1, "OnDelete", OTA_RULE_NONE, NULL},
    {"AdvancedRollingUpdate, RollingUpdate", "AdvancedRollingUpdate", NULL, 1, "RollingUpdate",
     OTA_RULE_NONE, NULL},
    {"no annotation, no strategy", NULL, NULL, 0, NULL, OTA_RULE_NONE, NULL},
    {"no strategy annotation, a good timeout", NULL, "86400", 0, NULL, OTA_RULE_NONE, NULL},

    {"unknown value", "Rolling", NULL, 1, "RollingUpdate", OTA_RULE_UNKNOWN_UPDATE_STRATEGY,
     UNKNOWN_MSG("Rolling")},
    {"empty value", "", NULL, 1, "OnDelete", OTA_RULE_UNKNOWN_UPDATE_STRATEGY, UNKNOWN_MSG("")},
    {"a quote in the value, escaped", "O\"TA", NULL, 1, "OnDelete",
     OTA_RULE_UNKNOWN_UPDATE_STRATEGY, UNKNOWN_MSG("O\\\"TA")},
    {"unknown wins over not OnDelete and a bad timeout", "x", "1", 0, NULL,
     OTA_RULE_UNKNOWN_UPDATE_STRATEGY, UNKNOWN_MSG("x")},

    {"OTA, RollingUpdate", "OTA", NULL, 1, "RollingUpdate", OTA_RULE_OTA_REQUIRES_ONDELETE,
     ONDELETE_MSG("OTA", "RollingUpdate")},
    {"Ota, no updateStrategy", "Ota", NULL, 0, NULL, OTA_RULE_OTA_REQUIRES_ONDELETE,
     ONDELETE_MSG("Ota", "")},
    {"OTA, an updateStrategy without a type", "OTA", NULL, 1, NULL,
     OTA_RULE_OTA_REQUIRES_ONDELETE, ONDELETE_MSG("OTA", "")},
    {"OTA, type ondelete (case matters to Kubernetes)", "OTA", NULL, 1, "ondelete",
     OTA_RULE_OTA_REQUIRES_ONDELETE, ONDELETE_MSG("OTA", "ondelete")},
    {"OTA, a type but no updateStrategy object", "OTA", NULL, 0, "OnDelete",
     OTA_RULE_OTA_REQUIRES_ONDELETE, ONDELETE_MSG("OTA", "OnDelete")},
    {"not OnDelete wins over a bad timeout", "OTA", "1", 1, "RollingUpdate",
     OTA_RULE_OTA_REQUIRES_ONDELETE, ONDELETE_MSG("OTA", "RollingUpdate")},

    {"timeout too short", "OTA", "29", 1, "OnDelete", OTA_RULE_BAD_PREPULL_TIMEOUT,
     TIMEOUT_MSG("29")},
    {"timeout empty", NULL, "", 0, NULL, OTA_RULE_BAD_PREPULL_TIMEOUT, TIMEOUT_MSG("")},
    {"timeout on a DaemonSet that is not OTA", "AdvancedRollingUpdate", "10m", 1,
     "RollingUpdate", OTA_RULE_BAD_PREPULL_TIMEOUT, TIMEOUT_MSG("10m")},
};

static void test_check(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(check_rows) / sizeof(check_rows[0]); i++) {
        const check_row *r = &check_rows[i];
        ota_daemonset ds = {sv_from(r->strategy), sv_from(r->timeout), r->has_update_strategy,
                            sv_from(r->type)};
        arena a;
        arena_init(&a);
        ota_verdict v = ota_daemonset_check(&ds, "edge/agent", &a);
        if (v.allowed != (r->rule == OTA_RULE_NONE) || v.rule != r->rule)
            fail_msg("%s: allowed %d, rule %d, want %d", r->name, v.allowed, (int)v.rule,
                     (int)r->rule);
        if (r->message != NULL ? v.message == NULL || strcmp(v.message, r->message) != 0
                               : v.message != NULL)
            fail_msg("%s:\n  got  %s\n  want %s", r->name, v.message ? v.message : "(none)",
                     r->message ? r->message : "(none)");
        arena_free(&a);
    }
}

static void test_check_views(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    /* views, not C strings: only their lengths count */
    ota_daemonset ds = {(sv){"OTAX", 3}, (sv){"6001", 3}, 1, (sv){"OnDeleteX", 8}};
    assert_true(ota_daemonset_on_delete(&ds));
    assert_true(ota_daemonset_check(&ds, "edge/agent", &a).allowed);
    ds.prepull_timeout = (sv){"2900", 2};
    ota_verdict v = ota_daemonset_check(&ds, "edge/agent", &a);
    assert_int_equal(v.rule, OTA_RULE_BAD_PREPULL_TIMEOUT);
    assert_string_equal(v.message, TIMEOUT_MSG("29"));
    ds.has_update_strategy = 0;
    assert_false(ota_daemonset_on_delete(&ds));
    arena_free(&a);

    /* out of memory: the rule's name is the message */
    arena_init(&a);
    arena_set_limit(&a, 1);
    v = ota_daemonset_check(&ds, "edge/agent", &a);
    assert_int_equal(v.rule, OTA_RULE_OTA_REQUIRES_ONDELETE);
    assert_string_equal(v.message, "ota-requires-ondelete");
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strategy),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_check_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

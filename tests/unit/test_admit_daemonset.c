/*
 * test_admit_daemonset.c - the DaemonSet half of the webhook (docs/design.md §2, §4,
 * docs/DECISIONS.md "DaemonSets"): the OnDelete fix-up of OTA DaemonSets as
 * exact JSON Patch operations with the warning, and validation of the
 * update-strategy and image-prepull-timeout-seconds annotations, all through
 * admit_review().
 */
#include "review_fixture.h"

#include "admit_daemonset.h"
#include "ota_daemonset.h"
#include "ota_rule.h"

#define DS_REF "edge/edge-agent"

#define DS_WITH(annotations, rest)                                                                 \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"edge-agent\","   \
    "\"namespace\":\"edge\",\"labels\":{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}" annotations "}"   \
    rest ",\"status\":{\"currentNumberScheduled\":0}}"
#define ANN(kv) ",\"annotations\":{\"deprecated.daemonset.template.generation\":\"1\"," kv "}"
#define STRATEGY(v) "\"" OTA_ANN_UPDATE_STRATEGY "\":\"" v "\""
#define TIMEOUT(v) "\"" OTA_ANN_PREPULL_TIMEOUT "\":\"" v "\""
#define SPEC(strategy)                                                                             \
    ",\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"edge-agent\"}},\"template\":{"            \
    "\"metadata\":{\"labels\":{\"app\":\"edge-agent\"}},\"spec\":{\"containers\":[{\"name\":"     \
    "\"agent\",\"image\":\"reg.example/agent:v2\"}]}}" strategy ",\"revisionHistoryLimit\":10}"
#define ROLLING                                                                                    \
    ",\"updateStrategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":1,"     \
    "\"maxSurge\":0}}"
#define ON_DELETE ",\"updateStrategy\":{\"type\":\"OnDelete\"}"

#define ON_DELETE_OP                                                                               \
    "[{\"op\":\"add\",\"path\":\"/spec/updateStrategy\",\"value\":{\"type\":\"OnDelete\"}}]"
#define WHOLE_SPEC_OP                                                                              \
    "[{\"op\":\"add\",\"path\":\"/spec\",\"value\":{\"updateStrategy\":{\"type\":\"OnDelete\"}}}]"

/* The DaemonSet fix-up as the apiserver sends it: CREATE or UPDATE. */
static char *ds_review(arena *a, const char *operation, const char *object)
{
    fx_request r = {.group = "apps", .version = "v1", .resource = "daemonsets",
                    .operation = operation, .namespace = "edge", .name = "edge-agent",
                    .username = "kubernetes-admin", .groups = "[\"system:masters\"]",
                    .object = object,
                    .old_object = strcmp(operation, "UPDATE") == 0 ? object : NULL};
    return fx_review(a, &r);
}

/* ---- mutation ------------------------------------------------------------- */

typedef struct ds_mutation_row {
    const char *name;
    const char *operation;
    const char *object;
    const char *patch; /* exact text, or NULL: no patch, no warning */
    const char *was;   /* what the warning says the strategy was */
    const char *written; /* the annotation's value as the warning quotes it; NULL: OTA */
} ds_mutation_row;

static const ds_mutation_row mutations[] = {
    {"OTA with RollingUpdate and its rollingUpdate block", "CREATE",
     DS_WITH(ANN(STRATEGY("OTA")), SPEC(ROLLING)), ON_DELETE_OP, "\"RollingUpdate\"", NULL},
    {"OTA with RollingUpdate, on UPDATE", "UPDATE", DS_WITH(ANN(STRATEGY("OTA")), SPEC(ROLLING)),
     ON_DELETE_OP, "\"RollingUpdate\"", NULL},
    /* the warning quotes the value as written (issue 9: it said =OTA) */
    {"ota (lower case)", "CREATE", DS_WITH(ANN(STRATEGY("ota")), SPEC(ROLLING)), ON_DELETE_OP,
     "\"RollingUpdate\"", "ota"},
    {"Ota (mixed case)", "UPDATE", DS_WITH(ANN(STRATEGY("Ota")), SPEC(ROLLING)), ON_DELETE_OP,
     "\"RollingUpdate\"", "Ota"},
    {"a type with a NUL and a quote, shown whole", "CREATE",
     DS_WITH(ANN(STRATEGY("ota")), SPEC(",\"updateStrategy\":{\"type\":\"Roll\\u0000ing\\\"\"}")),
     ON_DELETE_OP, "\"Roll\\u0000ing\\\"\"", "ota"},
    {"OTA spelled with a JSON escape", "CREATE", DS_WITH(ANN(STRATEGY("O\\u0054A")), SPEC(ROLLING)),
     ON_DELETE_OP, "\"RollingUpdate\"", NULL},
    {"OTA without updateStrategy", "CREATE", DS_WITH(ANN(STRATEGY("OTA")), SPEC("")), ON_DELETE_OP,
     "unset", NULL},
    {"OTA with updateStrategy null", "CREATE",
     DS_WITH(ANN(STRATEGY("OTA")), SPEC(",\"updateStrategy\":null")), ON_DELETE_OP, "unset", NULL},
    {"OTA with an empty updateStrategy", "CREATE",
     DS_WITH(ANN(STRATEGY("OTA")), SPEC(",\"updateStrategy\":{}")), ON_DELETE_OP, "without a type", NULL},
    {"OTA with only a rollingUpdate block", "CREATE",
     DS_WITH(ANN(STRATEGY("OTA")), SPEC(",\"updateStrategy\":{\"rollingUpdate\":{}}")),
     ON_DELETE_OP, "without a type", NULL},
    {"OTA with OnDelete plus a rollingUpdate block", "UPDATE",
     DS_WITH(ANN(STRATEGY("OTA")),
             SPEC(",\"updateStrategy\":{\"rollingUpdate\":{\"maxUnavailable\":1},\"type\":\"OnDelete\"}")),
     ON_DELETE_OP, "\"OnDelete\"", NULL},
    {"OTA with OnDelete plus an extra scalar", "UPDATE",
     DS_WITH(ANN(STRATEGY("OTA")), SPEC(",\"updateStrategy\":{\"type\":\"OnDelete\",\"x\":1}")),
     ON_DELETE_OP, "\"OnDelete\"", NULL},
    {"OTA with type ondelete (case matters to Kubernetes)", "CREATE",
     DS_WITH(ANN(STRATEGY("OTA")), SPEC(",\"updateStrategy\":{\"type\":\"ondelete\"}")),
     ON_DELETE_OP, "\"ondelete\"", NULL},
    {"OTA without spec", "CREATE", DS_WITH(ANN(STRATEGY("OTA")), ""), WHOLE_SPEC_OP, "unset", NULL},
    {"OTA with spec null", "CREATE", DS_WITH(ANN(STRATEGY("OTA")), ",\"spec\":null"),
     WHOLE_SPEC_OP, "unset", NULL},
    {"OTA with a timeout too", "CREATE",
     DS_WITH(ANN(TIMEOUT("1800") "," STRATEGY("OTA")), SPEC(ROLLING)), ON_DELETE_OP,
     "\"RollingUpdate\"", NULL},

    {"OTA, already OnDelete", "CREATE", DS_WITH(ANN(STRATEGY("OTA")), SPEC(ON_DELETE)), NULL, NULL, NULL},
    {"OTA, already OnDelete, rollingUpdate null", "UPDATE",
     DS_WITH(ANN(STRATEGY("OTA")),
             SPEC(",\"updateStrategy\":{\"type\":\"OnDelete\",\"rollingUpdate\":null}")),
     NULL, NULL, NULL},
    {"AdvancedRollingUpdate", "CREATE", DS_WITH(ANN(STRATEGY("AdvancedRollingUpdate")), SPEC(ROLLING)),
     NULL, NULL, NULL},
    {"advancedrollingupdate", "UPDATE", DS_WITH(ANN(STRATEGY("advancedrollingupdate")), SPEC("")),
     NULL, NULL, NULL},
    {"no annotation", "CREATE", DS_WITH("", SPEC(ROLLING)), NULL, NULL, NULL},
    {"other annotations only", "CREATE", DS_WITH(ANN(TIMEOUT("600")), SPEC(ROLLING)), NULL, NULL, NULL},
    {"annotations null", "CREATE", DS_WITH(",\"annotations\":null", SPEC(ROLLING)), NULL, NULL, NULL},
    {"unknown value (validation denies it)", "CREATE", DS_WITH(ANN(STRATEGY("Rolling")), SPEC(ROLLING)),
     NULL, NULL, NULL},
    {"OTA with a space is not OTA", "CREATE", DS_WITH(ANN(STRATEGY("OTA ")), SPEC(ROLLING)), NULL,
     NULL, NULL},
    {"empty value", "CREATE", DS_WITH(ANN(STRATEGY("")), SPEC(ROLLING)), NULL, NULL, NULL},
};

static void test_mutation_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
        const ds_mutation_row *row = &mutations[i];
        arena a;
        arena_init(&a);
        admit_outcome out;
        fx_response resp;
        fx_admit(&a, ADMIT_MUTATE, ds_review(&a, row->operation, row->object), &out, &resp);
        FX_CHECK(row->name, resp.allowed && !resp.has_status, "not allowed");
        FX_CHECK(row->name, strcmp(out.object_ref, "daemonset " DS_REF) == 0, "object_ref %s",
                 out.object_ref);
        if (row->patch == NULL) {
            FX_CHECK(row->name, resp.patch == NULL && resp.patch_type == NULL, "patch %s", resp.patch);
            FX_CHECK(row->name, resp.n_warnings == 0, "warning %s", resp.warnings[0]);
            FX_CHECK(row->name, out.result == ADMIT_ALLOWED && out.mutations == 0, "result %s",
                     admit_result_name(out.result));
        } else {
            FX_CHECK(row->name, resp.patch != NULL && strcmp(resp.patch, row->patch) == 0,
                     "patch\n  got  %s\n  want %s", resp.patch != NULL ? resp.patch : "(none)",
                     row->patch);
            FX_CHECK(row->name, strcmp(resp.patch_type, "JSONPatch") == 0, "patchType %s",
                     resp.patch_type);
            FX_CHECK(row->name, out.result == ADMIT_PATCHED && out.mutations == ADMIT_MUT_ONDELETE,
                     "result %s, mutations 0x%x", admit_result_name(out.result), out.mutations);
            FX_CHECK(row->name, resp.n_warnings == 1, "%zu warnings", resp.n_warnings);
            char want[160];
            snprintf(want, sizeof(want), "it was %s and has been set to {\"type\":\"OnDelete\"}",
                     row->was);
            FX_CHECK(row->name, strstr(resp.warnings[0], want) != NULL, "\"%s\" not in: %s", want,
                     resp.warnings[0]);
            snprintf(want, sizeof(want),
                     "DaemonSet " DS_REF " has " OTA_ANN_UPDATE_STRATEGY
                     "=\"%s\", which needs spec.updateStrategy OnDelete",
                     row->written != NULL ? row->written : "OTA");
            FX_CHECK(row->name, strstr(resp.warnings[0], want) != NULL, "\"%s\" not in: %s", want,
                     resp.warnings[0]);
        }
        arena_free(&a);
    }
}

/* A CREATE with generateName has no request.name: the warning names the
 * object's. */
static void test_ref_from_object_name(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    fx_request r = {.group = "apps", .version = "v1", .resource = "daemonsets",
                    .operation = "CREATE", .namespace = "edge", .name = "", .username = "u",
                    .object = DS_WITH(ANN(STRATEGY("OTA")), SPEC(ROLLING))};
    admit_outcome out;
    fx_response resp;
    fx_admit(&a, ADMIT_MUTATE, fx_review(&a, &r), &out, &resp);
    assert_string_equal(resp.patch, ON_DELETE_OP);
    assert_contains(resp.warnings[0], "DaemonSet " DS_REF " has");
    assert_string_equal(out.object_ref, "daemonset " DS_REF);
    arena_free(&a);
}

/* Only apps/v1 daemonsets CREATE and UPDATE are ours. */
static void test_other_requests_untouched(void **state)
{
    (void)state;
    static const struct {
        const char *group, *resource, *sub, *operation;
    } others[] = {
        {"apps", "daemonsets", NULL, "DELETE"},
        {"apps", "daemonsets", NULL, "CONNECT"},
        {"apps", "daemonsets", "status", "UPDATE"},
        {"extensions", "daemonsets", NULL, "CREATE"},
        {"apps", "deployments", NULL, "CREATE"},
        {"apps.openyurt.io", "yurtappdaemons", NULL, "CREATE"},
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        arena a;
        arena_init(&a);
        const char *bad = DS_WITH(ANN(STRATEGY("Rolling") "," TIMEOUT("1")), SPEC(ROLLING));
        fx_request r = {.group = others[i].group, .version = "v1", .resource = others[i].resource,
                        .sub_resource = others[i].sub, .operation = others[i].operation,
                        .namespace = "edge", .name = "edge-agent", .username = "u",
                        .object = bad, .old_object = bad};
        for (int phase = ADMIT_MUTATE; phase <= ADMIT_VALIDATE; phase++) {
            admit_outcome out;
            fx_response resp;
            fx_admit(&a, (admit_phase)phase, fx_review(&a, &r), &out, &resp);
            FX_CHECK(others[i].resource, resp.allowed && resp.patch == NULL && resp.n_warnings == 0,
                     "%s %s/%s touched", others[i].operation, others[i].group, others[i].resource);
            FX_CHECK(others[i].resource, out.result == ADMIT_ALLOWED, "result %d", out.result);
        }
        arena_free(&a);
    }
}

/* A DaemonSet request without the object cannot be judged. */
static void test_object_required(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    const admit_config cfg = {.controller_username = FX_CONTROLLER};
    const char *bodies[] = {ds_review(&a, "CREATE", NULL), ds_review(&a, "CREATE", "null")};
    for (size_t i = 0; i < 2; i++) {
        admit_outcome out;
        assert_int_equal(admit_review(ADMIT_MUTATE, bodies[i], strlen(bodies[i]), FX_NOW, &cfg, &a,
                                      &out),
                         0);
        assert_int_equal(out.http_status, 400);
        assert_int_equal(out.result, ADMIT_INVALID);
        assert_contains(out.message, "request.object is required");
    }
    arena_free(&a);
}

/* ---- validation ----------------------------------------------------------- */

typedef struct ds_validation_row {
    const char *name;
    const char *object;
    const char *rule; /* NULL: allowed */
    const char *phrase;
} ds_validation_row;

#define R_UNKNOWN "unknown-update-strategy"
#define R_ONDELETE "ota-requires-ondelete"
#define R_TIMEOUT "bad-prepull-timeout"
#define VALID_VALUES "valid values are OTA and AdvancedRollingUpdate (case-insensitive)"

/* An OTA DaemonSet, OnDelete, with the timeout annotation set to v. */
#define WITH_TIMEOUT(v) DS_WITH(ANN(STRATEGY("OTA") "," TIMEOUT(v)), SPEC(ON_DELETE))
#define TIMEOUT_OK(v) {"timeout \"" v "\"", WITH_TIMEOUT(v), NULL, NULL}
#define TIMEOUT_BAD(v)                                                                             \
    {"timeout \"" v "\"", WITH_TIMEOUT(v), R_TIMEOUT,                                              \
     "annotation " OTA_ANN_PREPULL_TIMEOUT                                                         \
     " must be a whole number of seconds from 30 to 86400, got \"" v "\""}

static const ds_validation_row validations[] = {
    {"OTA, OnDelete", DS_WITH(ANN(STRATEGY("OTA")), SPEC(ON_DELETE)), NULL, NULL},
    {"ota, OnDelete with a rollingUpdate block", DS_WITH(ANN(STRATEGY("ota")),
     SPEC(",\"updateStrategy\":{\"type\":\"OnDelete\",\"rollingUpdate\":{}}")), NULL, NULL},
    {"AdvancedRollingUpdate, RollingUpdate", DS_WITH(ANN(STRATEGY("AdvancedRollingUpdate")), SPEC(ROLLING)),
     NULL, NULL},
    {"ADVANCEDROLLINGUPDATE", DS_WITH(ANN(STRATEGY("ADVANCEDROLLINGUPDATE")), SPEC("")), NULL, NULL},
    {"no annotation, RollingUpdate", DS_WITH("", SPEC(ROLLING)), NULL, NULL},
    {"no metadata.annotations, no spec", DS_WITH("", ""), NULL, NULL},

    {"unknown value", DS_WITH(ANN(STRATEGY("Rolling")), SPEC(ROLLING)), R_UNKNOWN,
     "DaemonSet " DS_REF ": annotation " OTA_ANN_UPDATE_STRATEGY " has unknown value \"Rolling\"; "
     VALID_VALUES},
    {"empty value", DS_WITH(ANN(STRATEGY("")), SPEC(ON_DELETE)), R_UNKNOWN,
     "has unknown value \"\"; " VALID_VALUES},
    {"OTA with a trailing space", DS_WITH(ANN(STRATEGY("OTA ")), SPEC(ON_DELETE)), R_UNKNOWN,
     "has unknown value \"OTA \"; " VALID_VALUES},
    {"OnDelete as a value", DS_WITH(ANN(STRATEGY("OnDelete")), SPEC(ON_DELETE)), R_UNKNOWN,
     VALID_VALUES},
    {"unknown value wins over a bad timeout", DS_WITH(ANN(STRATEGY("x") "," TIMEOUT("1")), ""),
     R_UNKNOWN, VALID_VALUES},

    {"OTA, RollingUpdate (the mutation did not run)", DS_WITH(ANN(STRATEGY("OTA")), SPEC(ROLLING)),
     R_ONDELETE,
     "DaemonSet " DS_REF " is an OTA DaemonSet (" OTA_ANN_UPDATE_STRATEGY
     "=\"OTA\") but spec.updateStrategy.type is \"RollingUpdate\", not OnDelete"},
    {"Ota, no updateStrategy", DS_WITH(ANN(STRATEGY("Ota")), SPEC("")), R_ONDELETE,
     "(" OTA_ANN_UPDATE_STRATEGY "=\"Ota\") but spec.updateStrategy.type is \"\", not OnDelete"},
    {"OTA, no spec", DS_WITH(ANN(STRATEGY("OTA")), ""), R_ONDELETE, "not OnDelete"},
    {"OTA, type ondelete", DS_WITH(ANN(STRATEGY("OTA")), SPEC(",\"updateStrategy\":{\"type\":\"ondelete\"}")),
     R_ONDELETE, "type is \"ondelete\""},
    {"OTA not OnDelete wins over a bad timeout", DS_WITH(ANN(STRATEGY("OTA") "," TIMEOUT("1")), ""),
     R_ONDELETE, "not OnDelete"},

    TIMEOUT_BAD("29"),
    TIMEOUT_OK("30"),
    TIMEOUT_OK("31"),
    TIMEOUT_OK("600"),
    TIMEOUT_OK("86399"),
    TIMEOUT_OK("86400"),
    TIMEOUT_BAD("86401"),
    TIMEOUT_BAD("99999"),
    TIMEOUT_BAD("100000"),
    TIMEOUT_BAD("4294967326"),            /* 30 modulo 2^32 */
    TIMEOUT_BAD("18446744073709551646"),  /* 30 modulo 2^64 */
    TIMEOUT_BAD("0"),
    TIMEOUT_BAD(""),
    TIMEOUT_BAD("60s"),
    TIMEOUT_BAD("10m"),
    TIMEOUT_BAD("-60"),
    TIMEOUT_BAD("+60"),
    TIMEOUT_BAD(" 60"),
    TIMEOUT_BAD("60 "),
    TIMEOUT_BAD("6 0"),
    TIMEOUT_BAD("60.0"),
    TIMEOUT_BAD("1e3"),
    TIMEOUT_BAD("0x3c"),
    TIMEOUT_BAD("\xef\xbc\x96\xef\xbc\x90"), /* fullwidth digits 60 */
    /* Leading zeros: one spelling per number (and no octal surprises). */
    TIMEOUT_BAD("0060"),
    TIMEOUT_BAD("030"),
    TIMEOUT_BAD("00060"),
    TIMEOUT_BAD("000060"),
    /* values are quoted whole: an escaped NUL does not cut the message */
    {"unknown value with a NUL", DS_WITH(ANN(STRATEGY("OTA\\u0000x")), SPEC(ON_DELETE)), R_UNKNOWN,
     "has unknown value \"OTA\\u0000x\"; valid values are"},
    {"timeout with a NUL", DS_WITH(ANN(TIMEOUT("60\\u00000")), SPEC(ROLLING)), R_TIMEOUT,
     "got \"60\\u00000\"; rule"},
    {"timeout checked on a DaemonSet that is not OTA", DS_WITH(ANN(TIMEOUT("10")), SPEC(ROLLING)),
     R_TIMEOUT, "got \"10\""},
    {"timeout with AdvancedRollingUpdate", DS_WITH(ANN(STRATEGY("AdvancedRollingUpdate") "," TIMEOUT("3600")), SPEC("")),
     NULL, NULL},
};

static void test_validation_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(validations) / sizeof(validations[0]); i++) {
        const ds_validation_row *row = &validations[i];
        arena a;
        arena_init(&a);
        const char *ops[] = {"CREATE", "UPDATE"};
        for (size_t o = 0; o < 2; o++) {
            admit_outcome out;
            fx_response resp;
            fx_admit(&a, ADMIT_VALIDATE, ds_review(&a, ops[o], row->object), &out, &resp);
            FX_CHECK(row->name, resp.patch == NULL && resp.n_warnings == 0, "validation patched");
            FX_CHECK(row->name, strcmp(resp.uid, "uid-1") == 0, "uid %s", resp.uid);
            if (row->rule == NULL) {
                FX_CHECK(row->name, resp.allowed && !resp.has_status, "denied: %s", resp.message);
                FX_CHECK(row->name, out.result == ADMIT_ALLOWED && out.rule == OTA_RULE_NONE,
                         "result");
                continue;
            }
            FX_CHECK(row->name, !resp.allowed && out.result == ADMIT_DENIED, "allowed");
            const char *got = ota_rule_name(out.rule);
            FX_CHECK(row->name, got != NULL && strcmp(got, row->rule) == 0, "rule %s, want %s",
                     got != NULL ? got : "(none)", row->rule);
            FX_CHECK(row->name, resp.code == 403 && strcmp(resp.status_reason, "Forbidden") == 0,
                     "status %lld %s", resp.code, resp.status_reason);
            FX_CHECK(row->name, strstr(resp.message, row->phrase) != NULL, "\"%s\" not in: %s",
                     row->phrase, resp.message);
            char rule[64];
            snprintf(rule, sizeof(rule), "rule: %s", row->rule);
            FX_CHECK(row->name, strstr(resp.message, rule) != NULL, "no \"%s\" in: %s", rule,
                     resp.message);
            FX_CHECK(row->name, strstr(resp.message, "DaemonSet " DS_REF) != NULL,
                     "DaemonSet not named: %s", resp.message);
        }
        arena_free(&a);
    }
}

/* Whatever the mutation produces, validation accepts. */
static void test_mutated_object_validates(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    admit_outcome out;
    fx_response resp;
    fx_admit(&a, ADMIT_VALIDATE, ds_review(&a, "CREATE", DS_WITH(ANN(STRATEGY("OTA")), SPEC(ROLLING))),
             &out, &resp);
    assert_false(resp.allowed);
    /* The object as the mutation's patch leaves it. */
    fx_admit(&a, ADMIT_VALIDATE, ds_review(&a, "CREATE", DS_WITH(ANN(STRATEGY("OTA")), SPEC(ON_DELETE))),
             &out, &resp);
    assert_true(resp.allowed);
    fx_admit(&a, ADMIT_VALIDATE,
             ds_review(&a, "CREATE", DS_WITH(ANN(STRATEGY("OTA")), ",\"spec\":{\"updateStrategy\":"
                                                                    "{\"type\":\"OnDelete\"}}")),
             &out, &resp);
    assert_true(resp.allowed);
    arena_free(&a);
}

/* admit_daemonset_mutate on its own, and the strategy rule on a view (the
 * verdict on its own: test_ota_daemonset.c). */
static void test_daemonset_functions(void **state)
{
    (void)state;
    review_object ds = {0};
    assert_int_not_equal(ota_daemonset_strategy(ds.ann_update_strategy), OTA_UPDATE_OTA);
    ds.ann_update_strategy = sv_from("oTa");
    assert_int_equal(ota_daemonset_strategy(ds.ann_update_strategy), OTA_UPDATE_OTA);
    ds.ann_update_strategy = (sv){"OTAX", 3}; /* a view, not a C string */
    assert_int_equal(ota_daemonset_strategy(ds.ann_update_strategy), OTA_UPDATE_OTA);
    ds.ann_update_strategy = (sv){"OT", 2};
    assert_int_not_equal(ota_daemonset_strategy(ds.ann_update_strategy), OTA_UPDATE_OTA);

    arena a;
    arena_init(&a);
    ds.ann_update_strategy = sv_from("OTA");
    ds.has_spec = ds.has_update_strategy = 1;
    ds.update_strategy_type = sv_from("OnDelete");

    jpatch p;
    assert_int_equal(jpatch_init(&p, &a), 0);
    const char *warning = NULL;
    assert_int_equal(admit_daemonset_mutate(&ds, "ns/x", &p, &a, &warning), 0);
    assert_null(warning);
    ds.update_strategy_extra = 1;
    assert_int_equal(admit_daemonset_mutate(&ds, "ns/x", &p, &a, &warning), 1);
    assert_non_null(warning);
    assert_contains(warning, "DaemonSet ns/x has");
    const char *text;
    size_t len;
    assert_int_equal(jpatch_finish(&p, &text, &len), 0);
    assert_string_equal(text, ON_DELETE_OP);
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutation_table),
        cmocka_unit_test(test_ref_from_object_name),
        cmocka_unit_test(test_other_requests_untouched),
        cmocka_unit_test(test_object_required),
        cmocka_unit_test(test_validation_table),
        cmocka_unit_test(test_mutated_object_validates),
        cmocka_unit_test(test_daemonset_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

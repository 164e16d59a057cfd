/*
 * test_admit.c - admit_review() as the server calls it: the captured
 * fixtures in tests/fixtures/ (the shapes the apiserver sends) through both
 * webhooks, and the names rules (lib/ota_rule.h), results and mutations
 * carry in logs and metrics.
 *
 * The patches themselves are checked op by op in test_admit_podstatus.c and
 * test_admit_daemonset.c, and applied to the objects by tests/integration/.
 */
#include "review_fixture.h"
#include "fixture_file.h"

#include "admit_podstatus.h"
#include "stats.h"

#ifndef FIXTURES_DIR
#define FIXTURES_DIR "tests/fixtures" /* `make unit` runs from the top */
#endif

typedef struct fixture_row {
    const char *file;
    admit_result mutate;
    unsigned mutations;
    admit_result validate;
    const char *rule;
} fixture_row;

static const fixture_row fixtures[] = {
    {"configmap-create", ADMIT_ALLOWED, 0, ADMIT_ALLOWED, NULL},
    {"ds-create-advanced-rolling-update", ADMIT_ALLOWED, 0, ADMIT_ALLOWED, NULL},
    {"ds-create-bad-timeout", ADMIT_ALLOWED, 0, ADMIT_DENIED, "bad-prepull-timeout"},
    {"ds-create-invalid-strategy", ADMIT_ALLOWED, 0, ADMIT_DENIED, "unknown-update-strategy"},
    /* validation sees the object before the mutation: denied as sent */
    {"ds-create-ota-no-strategy", ADMIT_PATCHED, ADMIT_MUT_ONDELETE, ADMIT_DENIED,
     "ota-requires-ondelete"},
    {"ds-create-ota-rollingupdate", ADMIT_PATCHED, ADMIT_MUT_ONDELETE, ADMIT_DENIED,
     "ota-requires-ondelete"},
    {"ds-update-ota-ondelete", ADMIT_ALLOWED, 0, ADMIT_ALLOWED, NULL},
    {"pod-status-controller-ready", ADMIT_ALLOWED, 0, ADMIT_ALLOWED, NULL},
    {"pod-status-kubelet-routine", ADMIT_ALLOWED, 0, ADMIT_ALLOWED, NULL},
    {"pod-status-node-claims-ready", ADMIT_ALLOWED, 0, ADMIT_DENIED, "result-owned-by-controller"},
    {"pod-status-other-node", ADMIT_ALLOWED, 0, ADMIT_DENIED, "own-node-only"},
    {"pod-status-prepull-kubectl", ADMIT_ALLOWED, 0, ADMIT_ALLOWED, NULL},
    {"pod-status-prepull-yurthub", ADMIT_PATCHED,
     ADMIT_MUT_STAMP_REASON | ADMIT_MUT_FILL_MESSAGE | ADMIT_MUT_RESTORE_NEED_UPGRADE, ADMIT_DENIED,
     "need-upgrade-owned-by-controller"},
};

static void test_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        const fixture_row *row = &fixtures[i];
        char path[256];
        snprintf(path, sizeof(path), "%s/%s.json", FIXTURES_DIR, row->file);
        size_t len;
        char *body = fixture_file_read(path, &len);

        /* the uid to echo, read independently */
        arena a;
        arena_init(&a);
        char err[128];
        yajl_val doc = yajl_tree_parse(arena_strndup(&a, body, len), err, sizeof(err));
        FX_CHECK(row->file, doc != NULL, "%s", err);
        const char *uid = YAJL_GET_STRING(
            yajl_tree_get(doc, (const char *[]){"request", "uid", NULL}, yajl_t_string));
        assert_non_null(uid);

        for (int phase = ADMIT_MUTATE; phase <= ADMIT_VALIDATE; phase++) {
            const admit_config cfg = {.controller_username = FX_CONTROLLER};
            admit_outcome out;
            FX_CHECK(row->file, admit_review((admit_phase)phase, body, len, FX_NOW, &cfg, &a, &out) == 0,
                     "out of memory");
            FX_CHECK(row->file, out.http_status == 200, "HTTP %d: %s", out.http_status, out.message);
            fx_response resp;
            fx_parse_response(&a, out.body, out.body_len, &resp);
            FX_CHECK(row->file, strcmp(resp.uid, uid) == 0, "uid %s", resp.uid);
            FX_CHECK(row->file, sv_eq(out.uid, uid), "outcome uid");
            if (phase == ADMIT_MUTATE) {
                FX_CHECK(row->file, out.result == row->mutate, "mutate: %s",
                         admit_result_name(out.result));
                FX_CHECK(row->file, out.mutations == row->mutations, "mutations 0x%x",
                         out.mutations);
                FX_CHECK(row->file, (resp.patch != NULL) == (row->mutate == ADMIT_PATCHED),
                         "patch %s", resp.patch);
                FX_CHECK(row->file, resp.allowed, "mutation denied");
            } else {
                FX_CHECK(row->file, out.result == row->validate, "validate: %s (%s)",
                         admit_result_name(out.result), out.message);
                FX_CHECK(row->file, resp.allowed == (row->validate == ADMIT_ALLOWED), "allowed");
                FX_CHECK(row->file, resp.patch == NULL, "validation patched");
                if (row->rule != NULL) {
                    const char *rule = ota_rule_name(out.rule);
                    FX_CHECK(row->file, rule != NULL && strcmp(rule, row->rule) == 0, "rule %s",
                             rule != NULL ? rule : "(none)");
                    FX_CHECK(row->file, strcmp(resp.message, out.message) == 0, "message");
                }
            }
        }
        yajl_tree_free(doc);
        arena_free(&a);
        free(body);
    }
}

/* The outcome names what it decided about, for the log line. */
static void test_outcome_fields(void **state)
{
    (void)state;
    size_t len;
    char *body = fixture_file_read(FIXTURES_DIR "/pod-status-prepull-yurthub.json", &len);
    arena a;
    arena_init(&a);
    const admit_config cfg = {.controller_username = FX_CONTROLLER};
    admit_outcome out;
    assert_int_equal(admit_review(ADMIT_MUTATE, body, len, FX_NOW, &cfg, &a, &out), 0);
    assert_string_equal(out.object_ref, "pod edge/edge-agent-x7k2p");
    assert_true(sv_eq(out.username, "system:node:edge-node-1"));
    assert_int_equal(out.rule, OTA_RULE_NONE);
    assert_null(out.message);
    assert_string_equal(admit_mutation_names(out.mutations, &a),
                        "stamp-reason,fill-message,restore-need-upgrade");
    arena_free(&a);
    free(body);
}

/* Fixtures with random damage (bytes flipped, JSON punctuation inserted,
 * spans deleted or doubled): every answer is a 200 or a 400, and every
 * patch is a JSON array of operations.  Deterministic: a fixed seed. */
static void test_damaged_fixtures(void **state)
{
    (void)state;
    static const char punct[] = "{}[]\",:\\ntf0-e.";
    unsigned seed = 20261121;
#define RAND() (seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xffffff)
    int patched = 0, invalid = 0;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s.json", FIXTURES_DIR, fixtures[i].file);
        size_t len;
        char *orig = fixture_file_read(path, &len);
        for (int round = 0; round < 1000; round++) {
            char *body = malloc(len * 2 + 16);
            memcpy(body, orig, len);
            size_t n = len;
            int edits = 1 + (int)(RAND() % 3);
            for (int e = 0; e < edits && n > 2; e++) {
                size_t at = RAND() % n;
                switch (RAND() % 4) {
                case 0: /* flip a byte */
                    body[at] = (char)(RAND() & 0xff);
                    break;
                case 1: /* insert punctuation */
                    memmove(body + at + 1, body + at, n - at);
                    body[at] = punct[RAND() % (sizeof(punct) - 1)];
                    n++;
                    break;
                case 2: { /* delete a span */
                    size_t k = 1 + RAND() % 16;
                    if (k > n - at)
                        k = n - at;
                    memmove(body + at, body + at + k, n - at - k);
                    n -= k;
                    break;
                }
                default: { /* double a span */
                    size_t k = 1 + RAND() % 16;
                    if (k > n - at)
                        k = n - at;
                    if (n + k > len * 2 + 16)
                        break;
                    memmove(body + at + k, body + at, n - at);
                    n += k;
                    break;
                }
                }
            }
            /* an exactly sized copy, so ASan sees reads past the end */
            char *exact = malloc(n);
            memcpy(exact, body, n);
            free(body);
            for (int phase = ADMIT_MUTATE; phase <= ADMIT_VALIDATE; phase++) {
                arena a;
                arena_init(&a);
                const admit_config cfg = {.controller_username = FX_CONTROLLER};
                admit_outcome out;
                assert_int_equal(admit_review((admit_phase)phase, exact, n, FX_NOW, &cfg, &a, &out), 0);
                if (out.http_status == 400) {
                    invalid++;
                    assert_non_null(out.message);
                } else {
                    assert_int_equal(out.http_status, 200);
                    fx_response resp;
                    fx_parse_response(&a, out.body, out.body_len, &resp);
                    if (resp.patch != NULL) {
                        patched++;
                        char err[128];
                        yajl_val v = yajl_tree_parse(resp.patch, err, sizeof(err));
                        if (v == NULL || !YAJL_IS_ARRAY(v))
                            fail_msg("%s round %d: patch is not a JSON array (%s): %s",
                                     fixtures[i].file, round, err, resp.patch);
                        for (size_t k = 0; k < v->u.array.len; k++) {
                            yajl_val op = v->u.array.values[k];
                            assert_non_null(yajl_tree_get(op, (const char *[]){"op", NULL}, yajl_t_string));
                            assert_non_null(yajl_tree_get(op, (const char *[]){"path", NULL}, yajl_t_string));
                            assert_non_null(yajl_tree_get(op, (const char *[]){"value", NULL}, yajl_t_any));
                        }
                        yajl_tree_free(v);
                    }
                }
                arena_free(&a);
            }
            free(exact);
        }
        free(orig);
    }
#undef RAND
    /* the damage left some reviews readable and patched, and broke others */
    assert_true(patched > 150);
    assert_true(invalid > 5000);
}

/* ---- names --------------------------------------------------------------- */

/* The rules as the wire spells them, in the order of the metrics page: a
 * rule renamed, dropped or added shows here first. */
static const char *const rule_labels[] = {
    "own-node-only", "need-upgrade-owned-by-controller", "pull-needs-upgrade",
    "image-ready-owned-by-controller", "result-owned-by-controller", "bad-pull-request",
    "pull-wrong-revision", "pull-requested-by-node-users", "duplicate-condition",
    "co-writer-same-revision", "co-writer-need-upgrade-only", "pull-needs-daemonset",
    "auto-prepull-owned-by-controller", "auto-prepull-needs-opt-in",
    "unknown-update-strategy", "ota-requires-ondelete", "bad-prepull-timeout",
    "imagepulljob-malformed", "imagepulljob-image-empty", "imagepulljob-invalid-image",
    "imagepulljob-names-and-labels", "imagepulljob-duplicated-names", "imagepulljob-invalid-selector",
    "imagepulljob-selector-and-pod-selector", "imagepulljob-invalid-pod-selector",
    "imagepulljob-parallelism-percentage", "imagepulljob-parallelism-not-integer",
    "imagepulljob-unknown-completion-policy", "imagepulljob-deadline-below-timeout",
    "imagepulljob-deadline-ttl-need-always", "imagepulljob-pull-secrets-immutable",
    "imagecache-malformed", "imagecache-no-images", "imagecache-duplicate-image",
    "imagecache-list-count-changed", "imagecache-node-selector-changed",
    "other", /* a denial that names no rule */
};

/* enum -> name -> metrics label: each rule has one name, a label value as
 * it is, and a denial counted under a rule shows on /metrics under its
 * name, once, and nowhere else. */
static void test_rule_names(void **state)
{
    (void)state;
    assert_int_equal(sizeof(rule_labels) / sizeof(rule_labels[0]), OTA_N_RULES);
    assert_null(ota_rule_name(OTA_RULE_NONE));
    assert_null(ota_rule_name(OTA_N_RULES));
    for (int r = OTA_RULE_NONE + 1; r < OTA_N_RULES; r++) {
        const char *name = ota_rule_name((ota_rule)r);
        assert_non_null(name);
        assert_string_equal(name, rule_labels[r - 1]);
        for (int q = OTA_RULE_NONE + 1; q < r; q++)
            assert_string_not_equal(name, ota_rule_name((ota_rule)q));
        /* a metrics label value: lower case, digits and dashes */
        for (const char *c = name; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
                fail_msg("rule \"%s\" has '%c'", name, *c);
    }

    /* one denial of rule r in worker block r % 2, r + 1 times over */
    static stats blocks[2];
    stats *const both[2] = {&blocks[0], &blocks[1]};
    for (int r = OTA_RULE_NONE; r < OTA_N_RULES; r++)
        for (int k = 0; k <= r; k++) {
            admit_outcome out = {.result = ADMIT_DENIED, .rule = (ota_rule)r};
            stats_record(both[r % 2], STATS_VALIDATE, STATS_DENIED, 1000, &out);
        }
    admit_outcome allowed = {.result = ADMIT_ALLOWED}; /* no denial counted */
    stats_record(both[0], STATS_VALIDATE, STATS_ALLOWED, 1000, &allowed);
    static tls_store tls;
    strbuf page = {0};
    stats_render(&page, both, 2, &tls);
    assert_false(page.failed);
    const char *rows = strstr(page.data, "ota_webhook_denials_total{");
    assert_non_null(rows);
    for (size_t i = 0; i < sizeof(rule_labels) / sizeof(rule_labels[0]); i++) {
        /* rule_labels[i] is rule i + 1, "other" is OTA_RULE_NONE */
        int r = i + 1 < OTA_N_RULES ? (int)i + 1 : OTA_RULE_NONE;
        char want[128];
        snprintf(want, sizeof(want), "ota_webhook_denials_total{rule=\"%s\"} %d\n",
                 rule_labels[i], r + 1);
        if (strncmp(rows, want, strlen(want)) != 0)
            fail_msg("want %s at: %.80s", want, rows);
        rows += strlen(want);
    }
    assert_int_equal(strncmp(rows, "# HELP", 6), 0); /* no row more */
    strbuf_free(&page);
}

static void test_mutation_and_result_names(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    int named = 0;
    for (unsigned bit = 0; bit < 32; bit++) {
        const char *name = admit_mutation_name(bit);
        const char *all = admit_mutation_names(1u << bit, &a);
        if (name == NULL) {
            FX_CHECK("unused bit", strcmp(all, "") == 0, "bit %u named \"%s\"", bit, all);
            continue;
        }
        named++;
        FX_CHECK(name, strcmp(all, name) == 0, "bit %u: \"%s\"", bit, all);
        /* /metrics counts bits below ADMIT_N_MUTATION_BITS only */
        FX_CHECK(name, bit < ADMIT_N_MUTATION_BITS, "bit %u is not below %d", bit,
                 ADMIT_N_MUTATION_BITS);
    }
    assert_int_equal(named, 10);
    assert_string_equal(admit_mutation_name(6), "restore-auto-prepull");
    assert_string_equal(admit_mutation_name(7), "auto-prepull-taken");
    assert_string_equal(admit_mutation_name(8), "ondelete");
    assert_string_equal(admit_mutation_name(9), "imagepulljob-defaults");
    assert_string_equal(admit_mutation_name(0), "stamp-reason");
    assert_string_equal(admit_result_name((admit_result)42), "unknown");
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_outcome_fields),
        cmocka_unit_test(test_damaged_fixtures),
        cmocka_unit_test(test_rule_names),
        cmocka_unit_test(test_mutation_and_result_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

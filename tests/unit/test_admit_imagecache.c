/*
 * test_admit_imagecache.c - kube-fledged's ImageCache through admit_review()
 * (docs/design.md "ImageCache admission"): each message of its validating
 * webhook, byte for byte, on CREATE and UPDATE; an UPDATE that leaves the
 * spec alone (annotations, labels, status: refresh, purge, a status write
 * under kube-fledged's CRD) never looked at; what we do not deny (edits
 * while Processing); the spec's JSON types and bounds; what other
 * requests and paths see; the pure functions on their own.
 */
#include "review_fixture.h"

#include "admit_imagecache.h"
#include "ic_spec.h"
#include "ota_rule.h"

#define IC_REF "imagecache kube-fledged/imagecache1"

/* An ImageCache with spec `spec` (JSON text of its members, or NULL: no
 * spec key) and extra metadata members `meta` (text, or NULL), then
 * `rest` (members after spec: status, or NULL). */
static char *ic_object(arena *a, const char *meta, const char *spec, const char *rest)
{
    char *s = arena_printf(a,
                           "{\"apiVersion\":\"kubefledged.io/v1alpha2\",\"kind\":\"ImageCache\","
                           "\"metadata\":{\"name\":\"imagecache1\",\"namespace\":\"kube-fledged\"%s%s}"
                           "%s%s%s%s%s}",
                           meta != NULL ? "," : "", meta != NULL ? meta : "", spec != NULL ? ",\"spec\":{" : "",
                           spec != NULL ? spec : "", spec != NULL ? "}" : "", rest != NULL ? "," : "",
                           rest != NULL ? rest : "");
    assert_non_null(s);
    return s;
}

static char *ic_review_text(arena *a, const char *version, const char *operation, const char *object,
                            const char *old_object)
{
    fx_request r = {.group = "kubefledged.io", .version = version, .resource = "imagecaches",
                    .operation = operation, .namespace = "kube-fledged", .name = "imagecache1",
                    .username = "kubernetes-admin", .groups = "[\"system:masters\"]",
                    .object = object, .old_object = old_object};
    return fx_review(a, &r);
}

static char *ic_review(arena *a, const char *spec, const char *old_spec)
{
    return ic_review_text(a, "v1alpha2", old_spec != NULL ? "UPDATE" : "CREATE", ic_object(a, NULL, spec, NULL),
                          old_spec != NULL ? ic_object(a, NULL, old_spec, NULL) : NULL);
}

/* ---- the table ------------------------------------------------------------ */

typedef struct row {
    const char *name;
    const char *spec;
    const char *old_spec; /* UPDATE from this; NULL: CREATE */
    ota_rule rule;        /* OTA_RULE_NONE: allowed */
    const char *message;  /* exact */
} row;

/* kube-fledged's sample, one list with a nodeSelector */
#define L1 "{\"images\":[\"ghcr.io/jitesoft/nginx:1.23.1\"]}"
#define L2                                                                                         \
    "{\"images\":[\"us.gcr.io/k8s-artifacts-prod/cassandra:v7\",\"us.gcr.io/k8s-artifacts-prod/etcd:3.5.4-0\"]," \
    "\"nodeSelector\":{\"tier\":\"backend\"}}"
#define SECRETS "\"imagePullSecrets\":[{\"name\":\"myregistrykey\"}]"
#define SAMPLE "\"cacheSpec\":[" L1 "," L2 "]," SECRETS
#define CS(lists) "\"cacheSpec\":[" lists "]"
#define NO_IMAGES "No images specified within image list"
#define DUP "Duplicate image names within image list: "
#define COUNT "Mismatch in no. of image lists"
#define SELECTOR "Mismatch in node selector"

static const row rows[] = {
    /* CREATE */
    {"kube-fledged's sample", SAMPLE, NULL, OTA_RULE_NONE, NULL},
    {"no spec: kube-fledged's webhook has nothing to check", NULL, NULL, OTA_RULE_NONE, NULL},
    {"no lists", CS(""), NULL, OTA_RULE_NONE, NULL},
    {"one image in two lists", CS("{\"images\":[\"a\"]},{\"images\":[\"a\"]}"), NULL, OTA_RULE_NONE, NULL},
    {"names differ by tag or case", CS("{\"images\":[\"nginx\",\"nginx:1\",\"NGINX\",\"nginx:1.2\"]}"), NULL,
     OTA_RULE_NONE, NULL},
    {"unknown members skipped, any JSON",
     "\"extra\":{\"deep\":[1,{\"x\":null}]}," CS("{\"images\":[\"a\"],\"more\":[[true]]}")
     ",\"imagePullSecrets\":[{\"name\":\"s\",\"key\":7}]",
     NULL, OTA_RULE_NONE, NULL},
    {"images empty", CS("{\"images\":[]}"), NULL, OTA_RULE_IC_NO_IMAGES, NO_IMAGES},
    {"images missing", CS("{\"nodeSelector\":{\"a\":\"b\"}}"), NULL, OTA_RULE_IC_NO_IMAGES, NO_IMAGES},
    {"images null", CS("{\"images\":null}"), NULL, OTA_RULE_IC_NO_IMAGES, NO_IMAGES},
    {"a null list is Go's zero list", CS(L1 ",null"), NULL, OTA_RULE_IC_NO_IMAGES, NO_IMAGES},
    {"the second list empty", CS(L1 ",{\"images\":[]}"), NULL, OTA_RULE_IC_NO_IMAGES, NO_IMAGES},
    {"a repeat", CS("{\"images\":[\"a\",\"b\",\"a\"]}"), NULL, OTA_RULE_IC_DUPLICATE_IMAGE, DUP "a"},
    {"the first repeat found, not the first name", CS("{\"images\":[\"a\",\"b\",\"b\",\"a\"]}"), NULL,
     OTA_RULE_IC_DUPLICATE_IMAGE, DUP "b"},
    {"a repeat three times", CS("{\"images\":[\"c\",\"x\",\"c\",\"c\"]}"), NULL, OTA_RULE_IC_DUPLICATE_IMAGE,
     DUP "c"},
    {"lists in order: a repeat before a later empty list", CS("{\"images\":[\"a\",\"a\"]},{\"images\":[]}"), NULL,
     OTA_RULE_IC_DUPLICATE_IMAGE, DUP "a"},
    {"lists in order: an empty list before a later repeat", CS("{\"images\":[]},{\"images\":[\"a\",\"a\"]}"), NULL,
     OTA_RULE_IC_NO_IMAGES, NO_IMAGES},
    {"null is \"\" (Go): twice a repeat", CS("{\"images\":[null,\"\"]}"), NULL, OTA_RULE_IC_DUPLICATE_IMAGE, DUP},
    {"a NUL, shown escaped", CS("{\"images\":[\"a\\u0000b\",\"a\\u0000b\"]}"), NULL, OTA_RULE_IC_DUPLICATE_IMAGE,
     DUP "a\\u0000b"},
    {"a prefix is another name", CS("{\"images\":[\"ab\",\"a\",\"abc\"]}"), NULL, OTA_RULE_NONE, NULL},

    /* UPDATE: the spec as it was, whatever it holds, is not looked at */
    {"spec unchanged, though it is invalid", CS("{\"images\":[]}"), CS("{\"images\":[]}"), OTA_RULE_NONE, NULL},
    {"spec unchanged, selector keys in another order",
     CS("{\"images\":[\"a\",\"a\"],\"nodeSelector\":{\"x\":\"1\",\"y\":\"2\"}}"),
     CS("{\"images\":[\"a\",\"a\"],\"nodeSelector\":{\"y\":\"2\",\"x\":\"1\"}}"), OTA_RULE_NONE, NULL},
    {"an image added", CS(L1 "," "{\"images\":[\"us.gcr.io/k8s-artifacts-prod/cassandra:v7\",\"redis:7\"],"
                              "\"nodeSelector\":{\"tier\":\"backend\"}}") "," SECRETS,
     SAMPLE, OTA_RULE_NONE, NULL},
    {"images removed", CS("{\"images\":[\"b\"]}"), CS("{\"images\":[\"a\",\"b\"]}"), OTA_RULE_NONE, NULL},
    {"pull secrets changed", CS(L1) ",\"imagePullSecrets\":[{\"name\":\"other\"}]", CS(L1) "," SECRETS,
     OTA_RULE_NONE, NULL},
    {"a list added", CS(L1 "," L2 ",{\"images\":[\"x\"]}"), CS(L1 "," L2), OTA_RULE_IC_LIST_COUNT_CHANGED, COUNT},
    {"a list removed", CS(L2), CS(L1 "," L2), OTA_RULE_IC_LIST_COUNT_CHANGED, COUNT},
    {"cacheSpec removed", "\"imagePullSecrets\":[]", CS(L1), OTA_RULE_IC_LIST_COUNT_CHANGED, COUNT},
    {"the lists' own checks first", CS(L1 "," L2 ",{\"images\":[]}"), CS(L1 "," L2), OTA_RULE_IC_NO_IMAGES,
     NO_IMAGES},
    {"a repeat added", CS("{\"images\":[\"a\",\"b\",\"a\"]}"), CS("{\"images\":[\"a\",\"b\"]}"),
     OTA_RULE_IC_DUPLICATE_IMAGE, DUP "a"},
    {"a selector value changed", CS("{\"images\":[\"a\"],\"nodeSelector\":{\"tier\":\"front\"}}"),
     CS("{\"images\":[\"a\"],\"nodeSelector\":{\"tier\":\"backend\"}}"), OTA_RULE_IC_NODE_SELECTOR_CHANGED, SELECTOR},
    {"a selector added", CS("{\"images\":[\"a\"],\"nodeSelector\":{\"tier\":\"front\"}}"), CS("{\"images\":[\"a\"]}"),
     OTA_RULE_IC_NODE_SELECTOR_CHANGED, SELECTOR},
    {"a selector removed", CS("{\"images\":[\"a\",\"b\"]}"),
     CS("{\"images\":[\"a\"],\"nodeSelector\":{\"tier\":\"front\"}}"), OTA_RULE_IC_NODE_SELECTOR_CHANGED, SELECTOR},
    {"{} is not an absent selector (DeepEqual)", CS("{\"images\":[\"a\",\"b\"],\"nodeSelector\":{}}"),
     CS("{\"images\":[\"a\"]}"), OTA_RULE_IC_NODE_SELECTOR_CHANGED, SELECTOR},
    {"a null selector is an absent one", CS("{\"images\":[\"a\",\"b\"],\"nodeSelector\":null}"),
     CS("{\"images\":[\"a\"]}"), OTA_RULE_NONE, NULL},
    {"a key added to the selector", CS("{\"images\":[\"a\"],\"nodeSelector\":{\"x\":\"1\",\"y\":\"\"}}"),
     CS("{\"images\":[\"a\"],\"nodeSelector\":{\"x\":\"1\"}}"), OTA_RULE_IC_NODE_SELECTOR_CHANGED, SELECTOR},
    {"selectors swapped between lists", CS("{\"images\":[\"a\"],\"nodeSelector\":{\"z\":\"2\"}},"
                                           "{\"images\":[\"b\"],\"nodeSelector\":{\"z\":\"1\"}}"),
     CS("{\"images\":[\"b\"],\"nodeSelector\":{\"z\":\"1\"}},{\"images\":[\"a\"],\"nodeSelector\":{\"z\":\"2\"}}"),
     OTA_RULE_IC_NODE_SELECTOR_CHANGED, SELECTOR},
    {"[] is not absent: the spec changed, so checked", CS("{\"images\":[]}") ",\"imagePullSecrets\":[]",
     CS("{\"images\":[]}"), OTA_RULE_IC_NO_IMAGES, NO_IMAGES},

    /* malformed: denied 400, naming the field */
    {"spec.cacheSpec an object", "\"cacheSpec\":{}", NULL, OTA_RULE_IC_MALFORMED,
     "spec.cacheSpec must be an array, got an object"},
    {"a list a string", CS(L1 ",\"nginx\""), NULL, OTA_RULE_IC_MALFORMED,
     "spec.cacheSpec[1] must be an object, got a string"},
    {"images a string", CS("{\"images\":\"nginx\"}"), NULL, OTA_RULE_IC_MALFORMED,
     "spec.cacheSpec[0].images must be an array, got a string"},
    {"an image a number", CS(L1 ",{\"images\":[\"a\",7]}"), NULL, OTA_RULE_IC_MALFORMED,
     "spec.cacheSpec[1].images[1] must be a string, got a number"},
    {"an image an object", CS("{\"images\":[{}]}"), NULL, OTA_RULE_IC_MALFORMED,
     "spec.cacheSpec[0].images[0] must be a string, got an object"},
    {"nodeSelector a list", CS("{\"images\":[\"a\"],\"nodeSelector\":[\"a=b\"]}"), NULL, OTA_RULE_IC_MALFORMED,
     "spec.cacheSpec[0].nodeSelector must be an object, got an array"},
    {"the seed's nodeSelector string", CS("{\"images\":[\"a\"],\"nodeSelector\":\"zone=asia-south1-a\"}"), NULL,
     OTA_RULE_IC_MALFORMED, "spec.cacheSpec[0].nodeSelector must be an object, got a string"},
    {"a selector value a bool", CS("{\"images\":[\"a\"],\"nodeSelector\":{\"tier\":true}}"), NULL,
     OTA_RULE_IC_MALFORMED, "spec.cacheSpec[0].nodeSelector[\"tier\"] must be a string, got a boolean"},
    {"imagePullSecrets an object", CS(L1) ",\"imagePullSecrets\":{\"name\":\"s\"}", NULL, OTA_RULE_IC_MALFORMED,
     "spec.imagePullSecrets must be an array, got an object"},
    {"a pull secret a string", CS(L1) ",\"imagePullSecrets\":[{\"name\":\"a\"},\"s\"]", NULL, OTA_RULE_IC_MALFORMED,
     "spec.imagePullSecrets[1] must be an object, got a string"},
    {"a pull secret's name a number", CS(L1) ",\"imagePullSecrets\":[{\"name\":1}]", NULL, OTA_RULE_IC_MALFORMED,
     "spec.imagePullSecrets[0].name must be a string, got a number"},
    {"the old spec malformed", CS(L1), CS("{\"images\":5}"), OTA_RULE_IC_MALFORMED,
     "oldObject: spec.cacheSpec[0].images must be an array, got a number"},
};

static void check_row(const row *r, admit_outcome *out, fx_response *resp)
{
    FX_CHECK(r->name, resp->patch == NULL, "patch %s", resp->patch);
    FX_CHECK(r->name, out->object_ref != NULL && strcmp(out->object_ref, IC_REF) == 0, "object_ref %s",
             out->object_ref);
    fx_check_verdict(r->name, out, resp, r->rule, 400, r->message);
}

static void test_validation(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        admit_outcome out;
        fx_response resp;
        fx_admit(&a, ADMIT_VALIDATE, ic_review(&a, rows[i].spec, rows[i].old_spec), &out, &resp);
        check_row(&rows[i], &out, &resp);
        arena_free(&a);
    }
}

/* Every ImageCache rule has a row of the table that produces it. */
static void test_every_rule_has_a_row(void **state)
{
    (void)state;
    FX_EVERY_RULE_HAS_A_ROW(rows, OTA_RULE_IC_MALFORMED, OTA_RULE_IC_NODE_SELECTOR_CHANGED);
}

/* Metadata and status are not the spec: kube-fledged's refresh and purge
 * annotations, labels, and (under kube-fledged's CRD, which has no /status)
 * the controller's whole-object status writes pass, even while the cache is
 * Processing, and even on a spec kube-fledged would refuse on CREATE.  A
 * spec edit while Processing is checked as any edit, not refused. */
static void test_annotations_and_status(void **state)
{
    (void)state;
    static const char *const metas[] = {
        "\"annotations\":{\"kubefledged.io/refresh-imagecache\":\"\"}",
        "\"annotations\":{\"kubefledged.io/purge-imagecache\":\"\"}",
        "\"labels\":{\"app\":\"kubefledged\"}",
    };
    static const char processing[] =
        "\"status\":{\"status\":\"Processing\",\"reason\":\"ImageCacheRefresh\",\"message\":\"Image cache is "
        "being refreshed. Please view the status after some time\",\"startTime\":\"2026-11-27T08:00:00Z\"}";
    static const char *const specs[] = {SAMPLE, CS("{\"images\":[]}"), CS("{\"images\":[\"a\",\"a\"]}")};
    for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
        for (size_t m = 0; m < sizeof(metas) / sizeof(metas[0]); m++) {
            arena a;
            arena_init(&a);
            admit_outcome out;
            fx_response resp;
            const char *old = ic_object(&a, NULL, specs[s], processing);
            fx_admit(&a, ADMIT_VALIDATE,
                     ic_review_text(&a, "v1alpha2", "UPDATE", ic_object(&a, metas[m], specs[s], processing), old),
                     &out, &resp);
            FX_CHECK(metas[m], resp.allowed && out.result == ADMIT_ALLOWED, "denied: %s", resp.message);
            /* the status written over it */
            fx_admit(&a, ADMIT_VALIDATE,
                     ic_review_text(&a, "v1alpha2", "UPDATE",
                                    ic_object(&a, NULL, specs[s],
                                              "\"status\":{\"status\":\"Succeeded\",\"reason\":\"ImageCacheRefresh\"}"),
                                    old),
                     &out, &resp);
            FX_CHECK(specs[s], resp.allowed, "status write denied: %s", resp.message);
            arena_free(&a);
        }
    /* an edit while Processing: an added image is allowed (queued by the
     * controller, never dropped), a bad one denied as on any day */
    arena a;
    arena_init(&a);
    admit_outcome out;
    fx_response resp;
    const char *old = ic_object(&a, NULL, CS("{\"images\":[\"a\"]}"), processing);
    fx_admit(&a, ADMIT_VALIDATE,
             ic_review_text(&a, "v1alpha2", "UPDATE", ic_object(&a, NULL, CS("{\"images\":[\"a\",\"b\"]}"), processing),
                            old),
             &out, &resp);
    assert_true(resp.allowed);
    fx_admit(&a, ADMIT_VALIDATE,
             ic_review_text(&a, "v1alpha2", "UPDATE",
                            ic_object(&a, "\"annotations\":{\"kubefledged.io/refresh-imagecache\":\"\"}",
                                      CS("{\"images\":[\"a\",\"a\"]}"), processing),
                            old),
             &out, &resp);
    assert_false(resp.allowed);
    assert_string_equal(resp.message, DUP "a");
    arena_free(&a);
}

/* Hostile sizes: a spec past 1.5 MiB is denied before it is read; a list
 * of 200 000 names is answered (n log n), its one repeat found. */
static void test_bounds(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    size_t big = IC_MAX_SPEC_BYTES + 1;
    char *pad = arena_alloc(&a, big + 1);
    assert_non_null(pad);
    memset(pad, 'x', big);
    pad[big] = '\0';
    admit_outcome out;
    fx_response resp;
    fx_admit(&a, ADMIT_VALIDATE, ic_review(&a, arena_printf(&a, CS(L1) ",\"pad\":\"%s\"", pad), NULL), &out, &resp);
    assert_false(resp.allowed);
    assert_int_equal(out.rule, OTA_RULE_IC_MALFORMED);
    assert_int_equal(resp.code, 400);
    assert_contains(resp.message, "more than the 1572864 an object can have");
    arena_free(&a);

    arena_init(&a);
    enum { N = 200000 };
    char *list = arena_alloc(&a, (size_t)N * 12 + 64);
    assert_non_null(list);
    size_t at = 0;
    for (int i = 0; i < N; i++)
        at += (size_t)sprintf(list + at, "%s\"%x\"", i ? "," : "", i);
    strcpy(list + at, ",\"1e240\"");
    fx_admit(&a, ADMIT_VALIDATE, ic_review(&a, arena_printf(&a, CS("{\"images\":[%s]}"), list), NULL), &out,
             &resp);
    assert_false(resp.allowed);
    assert_string_equal(resp.message, DUP "1e240");
    list[at] = '\0';
    fx_admit(&a, ADMIT_VALIDATE, ic_review(&a, arena_printf(&a, CS("{\"images\":[%s]}"), list), NULL), &out,
             &resp);
    assert_true(resp.allowed);
    arena_free(&a);
}

/* Other versions, subresources, operations and the mutating phase pass
 * through untouched. */
static void test_other_requests(void **state)
{
    (void)state;
    static const struct {
        const char *version, *sub, *op;
        int phase;
        int ours; /* an ImageCache request (object_ref set) */
    } reqs[] = {
        {"v1alpha1", NULL, "CREATE", ADMIT_VALIDATE, 0},
        {"v1alpha2", "status", "UPDATE", ADMIT_VALIDATE, 0},
        {"v1alpha2", NULL, "DELETE", ADMIT_VALIDATE, 0},
        {"v1alpha2", NULL, "CREATE", ADMIT_MUTATE, 1},
    };
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        arena a;
        arena_init(&a);
        fx_request r = {.group = "kubefledged.io", .version = reqs[i].version, .resource = "imagecaches",
                        .sub_resource = reqs[i].sub, .operation = reqs[i].op, .namespace = "kube-fledged",
                        .name = "imagecache1", .username = "u",
                        .object = ic_object(&a, NULL, CS("{\"images\":[]}"), NULL)};
        admit_outcome out;
        fx_response resp;
        fx_admit(&a, (admit_phase)reqs[i].phase, fx_review(&a, &r), &out, &resp);
        assert_true(resp.allowed);
        assert_null(resp.patch);
        assert_int_equal(out.result, ADMIT_ALLOWED);
        if (reqs[i].ours)
            assert_string_equal(out.object_ref, IC_REF);
        else
            assert_null(out.object_ref);
        arena_free(&a);
    }
}

/* An ImageCache CREATE without an object is a bad review. */
static void test_object_required(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    const char *body = ic_review_text(&a, "v1alpha2", "CREATE", NULL, NULL);
    const admit_config cfg = {FX_CONTROLLER, NULL};
    admit_outcome out;
    assert_int_equal(admit_review(ADMIT_VALIDATE, body, strlen(body), FX_NOW, &cfg, &a, &out), 0);
    assert_int_equal(out.http_status, 400);
    assert_int_equal(out.result, ADMIT_INVALID);
    assert_string_equal(out.message, "request.object is required for an ImageCache CREATE or UPDATE");
    /* an UPDATE without its old object: kube-fledged refuses it too */
    body = ic_review_text(&a, "v1alpha2", "UPDATE", "{\"cacheSpec\":[{\"images\":[\"a\"]}]}", NULL);
    assert_int_equal(admit_review(ADMIT_VALIDATE, body, strlen(body), FX_NOW, &cfg, &a, &out), 0);
    assert_int_equal(out.http_status, 400);
    assert_int_equal(out.result, ADMIT_INVALID);
    assert_string_equal(out.message, "request.oldObject is required for an ImageCache UPDATE");
    arena_free(&a);
}

/* The pure functions on their own. */
static void test_pure_functions(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    char err[256];
    ic_spec x, y;
    static const char sx[] = "{\"cacheSpec\":[{\"images\":[\"a\"],\"nodeSelector\":{\"b\":\"2\",\"a\":\"1\"}}],"
                             "\"imagePullSecrets\":[null,{}]}";
    static const char sy[] = "{\"imagePullSecrets\":[{\"name\":\"\"},{\"name\":null}],"
                             "\"cacheSpec\":[{\"nodeSelector\":{\"a\":\"1\",\"b\":\"2\"},\"images\":[\"a\"]}]}";
    assert_int_equal(ic_decode(&x, sx, strlen(sx), &a, err, sizeof(err)), 0);
    assert_int_equal(ic_decode(&y, sy, strlen(sy), &a, err, sizeof(err)), 0);
    assert_true(x.present && x.has_cache_spec && x.n_lists == 1 && x.n_pull_secrets == 2);
    assert_int_equal(x.lists[0].n_selector, 2);
    assert_true(sv_eq(x.lists[0].selector[0], "a") && sv_eq(x.lists[0].selector[3], "2"));
    assert_true(ic_spec_equal(&x, &y));
    y.n_pull_secrets = 1;
    assert_false(ic_spec_equal(&x, &y));
    /* no spec: nothing present, equal to itself */
    assert_int_equal(ic_decode(&y, "", 0, &a, err, sizeof(err)), 0);
    assert_false(y.present);
    assert_true(ic_spec_equal(&y, &y));
    /* the first repeat: lowest index with an earlier equal */
    sv imgs[] = {sv_from("d"), sv_from("a"), sv_from("d"), sv_from("a"), sv_from("d")};
    ic_list l = {.has_images = 1, .images = imgs, .n_images = 5};
    assert_int_equal(ic_first_duplicate(&l, &a), 2);
    l.n_images = 2;
    assert_int_equal(ic_first_duplicate(&l, &a), 2); /* none: n */
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_every_rule_has_a_row),
        cmocka_unit_test(test_annotations_and_status),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_other_requests),
        cmocka_unit_test(test_object_required),
        cmocka_unit_test(test_pure_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

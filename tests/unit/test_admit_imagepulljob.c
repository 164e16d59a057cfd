/*
 * test_admit_imagepulljob.c - OpenKruise's ImagePullJob through admit_review()
 * (docs/design.md "ImagePullJob admission"): each default Kruise's mutating
 * webhook sets, as exact JSON Patch operations, and each message of its
 * validating webhook, byte for byte, with its status code; the two
 * versions; the spec's JSON types; what other requests and paths see.
 */
#include "review_fixture.h"

#include "admit_imagepulljob.h"
#include "ota_rule.h"

#define IPJ_REF "imagepulljob apps/pull-nginx"

/* An ImagePullJob with spec `spec` (JSON text of its members, or NULL: no
 * spec key). */
static char *ipj_object(arena *a, const char *version, const char *spec)
{
    char *s = arena_printf(a,
                           "{\"apiVersion\":\"apps.kruise.io/%s\",\"kind\":\"ImagePullJob\","
                           "\"metadata\":{\"name\":\"pull-nginx\",\"namespace\":\"apps\","
                           "\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{\"f:spec\":{"
                           "\"f:image\":{}}}}]}%s%s%s}",
                           version, spec != NULL ? ",\"spec\":{" : "", spec != NULL ? spec : "",
                           spec != NULL ? "}" : "");
    assert_non_null(s);
    return s;
}

static char *ipj_review(arena *a, const char *version, const char *operation, const char *spec,
                        const char *old_spec)
{
    fx_request r = {.group = "apps.kruise.io", .version = version, .resource = "imagepulljobs",
                    .operation = operation, .namespace = "apps", .name = "pull-nginx",
                    .username = "kubernetes-admin", .groups = "[\"system:masters\"]",
                    .object = ipj_object(a, version, spec),
                    .old_object = old_spec != NULL ? ipj_object(a, version, old_spec) : NULL};
    return fx_review(a, &r);
}

#define FULL_DEFAULTS                                                                              \
    "\"completionPolicy\":{\"type\":\"Always\"},\"pullPolicy\":{\"timeoutSeconds\":600,"          \
    "\"backoffLimit\":3},\"imagePullPolicy\":\"IfNotPresent\""

/* ---- defaults ------------------------------------------------------------ */

typedef struct default_row {
    const char *name;
    const char *spec;  /* NULL: no spec */
    const char *patch; /* exact; NULL: none */
} default_row;

#define OP(path, value) "{\"op\":\"add\",\"path\":\"" path "\",\"value\":" value "}"

static const default_row defaults[] = {
    {"nothing set: every default", "\"image\":\"nginx\"",
     "[" OP("/spec/completionPolicy", "{\"type\":\"Always\"}") "," OP(
         "/spec/pullPolicy", "{\"timeoutSeconds\":600,\"backoffLimit\":3}") "," OP("/spec/imagePullPolicy",
                                                                                   "\"IfNotPresent\"") "]"},
    {"everything set: no patch", "\"image\":\"nginx\"," FULL_DEFAULTS, NULL},
    {"Never and Always kept as written",
     "\"image\":\"nginx\",\"completionPolicy\":{\"type\":\"Never\"},\"pullPolicy\":{\"timeoutSeconds\":"
     "30,\"backoffLimit\":0},\"imagePullPolicy\":\"Always\"",
     NULL},
    {"completionPolicy without a type", "\"image\":\"nginx\",\"completionPolicy\":{\"ttlSecondsAfterFinished\":300},"
                                        "\"pullPolicy\":{\"timeoutSeconds\":600,\"backoffLimit\":3},"
                                        "\"imagePullPolicy\":\"IfNotPresent\"",
     "[" OP("/spec/completionPolicy/type", "\"Always\"") "]"},
    {"completionPolicy type empty", "\"image\":\"nginx\",\"completionPolicy\":{\"type\":\"\"},"
                                    "\"pullPolicy\":{\"timeoutSeconds\":600,\"backoffLimit\":3},"
                                    "\"imagePullPolicy\":\"IfNotPresent\"",
     "[" OP("/spec/completionPolicy/type", "\"Always\"") "]"},
    {"completionPolicy null", "\"image\":\"nginx\",\"completionPolicy\":null,"
                              "\"pullPolicy\":{\"timeoutSeconds\":600,\"backoffLimit\":3},"
                              "\"imagePullPolicy\":\"IfNotPresent\"",
     "[" OP("/spec/completionPolicy", "{\"type\":\"Always\"}") "]"},
    {"timeoutSeconds only", "\"image\":\"nginx\",\"completionPolicy\":{\"type\":\"Always\"},"
                            "\"pullPolicy\":{\"backoffLimit\":1},\"imagePullPolicy\":\"IfNotPresent\"",
     "[" OP("/spec/pullPolicy/timeoutSeconds", "600") "]"},
    {"backoffLimit only", "\"image\":\"nginx\",\"completionPolicy\":{\"type\":\"Always\"},"
                          "\"pullPolicy\":{\"timeoutSeconds\":60},\"imagePullPolicy\":\"IfNotPresent\"",
     "[" OP("/spec/pullPolicy/backoffLimit", "3") "]"},
    {"pullPolicy empty", "\"image\":\"nginx\",\"completionPolicy\":{\"type\":\"Always\"},"
                         "\"pullPolicy\":{},\"imagePullPolicy\":\"IfNotPresent\"",
     "[" OP("/spec/pullPolicy/timeoutSeconds", "600") "," OP("/spec/pullPolicy/backoffLimit", "3") "]"},
    {"imagePullPolicy empty", "\"image\":\"nginx\"," "\"completionPolicy\":{\"type\":\"Always\"},"
                              "\"pullPolicy\":{\"timeoutSeconds\":600,\"backoffLimit\":3},"
                              "\"imagePullPolicy\":\"\"",
     "[" OP("/spec/imagePullPolicy", "\"IfNotPresent\"") "]"},
    /* no normalisation of the image, no parallelism, no finalizer: Kruise's
     * defaulting sets neither (the controller takes parallelism 1) */
    {"image and parallelism untouched", "\"image\":\"NGINX\",\"parallelism\":\"5\"," FULL_DEFAULTS, NULL},
    {"no spec at all", NULL,
     "[" OP("/spec", "{" FULL_DEFAULTS "}") "]"},
};

static void test_defaults(void **state)
{
    (void)state;
    static const char *const versions[] = {"v1alpha1", "v1beta1"};
    static const char *const ops[] = {"CREATE", "UPDATE"};
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
        for (size_t v = 0; v < 2; v++)
            for (size_t o = 0; o < 2; o++) {
                const default_row *row = &defaults[i];
                arena a;
                arena_init(&a);
                admit_outcome out;
                fx_response resp;
                fx_admit(&a, ADMIT_MUTATE,
                         ipj_review(&a, versions[v], ops[o], row->spec, o == 1 ? row->spec : NULL), &out,
                         &resp);
                FX_CHECK(row->name, resp.allowed && !resp.has_status, "not allowed: %s", resp.message);
                FX_CHECK(row->name, out.object_ref != NULL && strcmp(out.object_ref, IPJ_REF) == 0,
                         "object_ref %s", out.object_ref);
                FX_CHECK(row->name, resp.n_warnings == 0, "warning %s", resp.warnings[0]);
                if (row->patch == NULL) {
                    FX_CHECK(row->name, resp.patch == NULL && resp.patch_type == NULL, "patch %s",
                             resp.patch);
                    FX_CHECK(row->name, out.result == ADMIT_ALLOWED && out.mutations == 0, "result %s",
                             admit_result_name(out.result));
                } else {
                    FX_CHECK(row->name, resp.patch != NULL && strcmp(resp.patch, row->patch) == 0,
                             "patch\n  got  %s\n  want %s", resp.patch != NULL ? resp.patch : "(none)",
                             row->patch);
                    FX_CHECK(row->name, resp.patch_type && strcmp(resp.patch_type, "JSONPatch") == 0,
                             "patchType %s", resp.patch_type);
                    FX_CHECK(row->name,
                             out.result == ADMIT_PATCHED && out.mutations == ADMIT_MUT_IPJ_DEFAULTS,
                             "result %s, mutations 0x%x", admit_result_name(out.result), out.mutations);
                }
                arena_free(&a);
            }
}

/* ---- validation ----------------------------------------------------------- */

typedef struct deny_row {
    const char *name;
    const char *spec;     /* members after the defaults (a later key would repeat one: no) */
    const char *old_spec; /* UPDATE from this; NULL: CREATE */
    ota_rule rule;        /* OTA_RULE_NONE: allowed */
    int code;
    const char *message; /* exact */
} deny_row;

#define ALWAYS "\"completionPolicy\":{\"type\":\"Always\"}"
#define PP "\"pullPolicy\":{\"timeoutSeconds\":600,\"backoffLimit\":3},\"imagePullPolicy\":\"IfNotPresent\""
#define IMG(i) "\"image\":\"" i "\"," PP
#define OK(i) IMG(i) "," ALWAYS

#define QNAME                                                                                      \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

static const deny_row denials[] = {
    {"a valid job", OK("nginx:1.25"), NULL, OTA_RULE_NONE, 0, NULL},
    {"every field valid",
     "\"image\":\"reg.example.com:5000/team/app@sha256:" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
     "\",\"pullSecrets\":[\"reg\"],\"selector\":{\"matchLabels\":{\"kubernetes.io/os\":\"linux\"},"
     "\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]},"
     "\"parallelism\":\"3\",\"pullPolicy\":{\"timeoutSeconds\":300,\"backoffLimit\":1},"
     "\"completionPolicy\":{\"type\":\"Always\",\"activeDeadlineSeconds\":300,\"ttlSecondsAfterFinished\":600},"
     "\"sandboxConfig\":{\"labels\":{\"a\":\"b\"},\"annotations\":{\"c\":\"d\"}},\"imagePullPolicy\":\"Always\"",
     NULL, OTA_RULE_NONE, 0, NULL},
    {"names alone", OK("nginx") ",\"selector\":{\"names\":[\"node-a\",\"node-b\"]}", NULL, OTA_RULE_NONE, 0, NULL},
    {"podSelector alone", OK("nginx") ",\"podSelector\":{\"matchLabels\":{\"app\":\"web\"}}", NULL, OTA_RULE_NONE, 0,
     NULL},
    {"parallelism as a number", OK("nginx") ",\"parallelism\":2", NULL, OTA_RULE_NONE, 0, NULL},
    {"deadline equal to the timeout", IMG("nginx") ",\"completionPolicy\":{\"type\":\"Always\",\"activeDeadlineSeconds\":600}",
     NULL, OTA_RULE_NONE, 0, NULL},

    {"image missing", PP "," ALWAYS, NULL, OTA_RULE_IPJ_IMAGE_EMPTY, 400, "image can not be empty"},
    {"image empty", OK(""), NULL, OTA_RULE_IPJ_IMAGE_EMPTY, 400, "image can not be empty"},
    {"image null", "\"image\":null," PP "," ALWAYS, NULL, OTA_RULE_IPJ_IMAGE_EMPTY, 400, "image can not be empty"},
    {"image with a NUL, shown escaped", OK("ng\\u0000inx"), NULL, OTA_RULE_IPJ_INVALID_IMAGE, 400,
     "invalid image ng\\u0000inx: invalid reference format"},
    {"a null name is \"\" (Go), twice a duplicate", OK("nginx") ",\"selector\":{\"names\":[null,\"\"]}", NULL,
     OTA_RULE_IPJ_DUPLICATED_NAMES, 400, "duplicated name in selector names"},
    {"podSelector names are not Kruise's: ignored", OK("nginx") ",\"podSelector\":{\"names\":[\"a\",\"a\"]}", NULL,
     OTA_RULE_NONE, 0, NULL},
    {"selector null is no selector", OK("nginx") ",\"selector\":null,\"podSelector\":{}", NULL, OTA_RULE_NONE, 0,
     NULL},
    {"image upper case", OK("NGINX:1.25"), NULL, OTA_RULE_IPJ_INVALID_IMAGE, 400,
     "invalid image NGINX:1.25: invalid reference format: repository name must be lowercase"},
    {"image with a space", OK("nginx latest"), NULL, OTA_RULE_IPJ_INVALID_IMAGE, 400,
     "invalid image nginx latest: invalid reference format"},
    {"image with a bad tag", OK("nginx:-1"), NULL, OTA_RULE_IPJ_INVALID_IMAGE, 400,
     "invalid image nginx:-1: invalid reference format"},
    {"image an ID", OK("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), NULL,
     OTA_RULE_IPJ_INVALID_IMAGE, 400,
     "invalid image 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef: invalid repository name "
     "(0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef), cannot specify 64-byte hexadecimal strings"},

    {"names and matchLabels", OK("nginx") ",\"selector\":{\"names\":[\"a\"],\"matchLabels\":{\"x\":\"y\"}}", NULL,
     OTA_RULE_IPJ_NAMES_AND_LABELS, 400, "can not set both names and labelSelector in this spec.selector"},
    {"names and empty matchExpressions", OK("nginx") ",\"selector\":{\"names\":[],\"matchExpressions\":[]}", NULL,
     OTA_RULE_IPJ_NAMES_AND_LABELS, 400, "can not set both names and labelSelector in this spec.selector"},
    {"duplicated names", OK("nginx") ",\"selector\":{\"names\":[\"b\",\"a\",\"b\"]}", NULL,
     OTA_RULE_IPJ_DUPLICATED_NAMES, 400, "duplicated name in selector names"},
    {"unknown operator", OK("nginx") ",\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\"}]}",
     NULL, OTA_RULE_IPJ_INVALID_SELECTOR, 400, "invalid selector: \"Gt\" is not a valid label selector operator"},
    {"In without values", OK("nginx") ",\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}",
     NULL, OTA_RULE_IPJ_INVALID_SELECTOR, 400,
     "invalid selector: values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
     "empty"},
    {"Exists with values",
     OK("nginx") ",\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
     NULL, OTA_RULE_IPJ_INVALID_SELECTOR, 400,
     "invalid selector: values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not "
     "exist"},
    {"bad label key", OK("nginx") ",\"selector\":{\"matchLabels\":{\"bad key\":\"v\"}}", NULL,
     OTA_RULE_IPJ_INVALID_SELECTOR, 400, "invalid selector: key: Invalid value: \"bad key\": name part " QNAME},
    {"selector and podSelector",
     OK("nginx") ",\"selector\":{\"names\":[\"a\"]},\"podSelector\":{\"matchLabels\":{\"app\":\"web\"}}", NULL,
     OTA_RULE_IPJ_SELECTOR_AND_POD_SELECTOR, 400, "can not set both selector and podSelector"},
    {"bad podSelector", OK("nginx") ",\"podSelector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"in\"}]}",
     NULL, OTA_RULE_IPJ_INVALID_POD_SELECTOR, 400,
     "invalid podSelector: \"in\" is not a valid label selector operator"},
    {"parallelism a percentage", OK("nginx") ",\"parallelism\":\"50%\"", NULL, OTA_RULE_IPJ_PARALLELISM_PERCENTAGE,
     400, "parallelism does not support percentage value"},
    {"parallelism not a number", OK("nginx") ",\"parallelism\":\"two\"", NULL, OTA_RULE_IPJ_PARALLELISM_NOT_INTEGER,
     400, "parallelism must be a valid integer: strconv.Atoi: parsing \"two\": invalid syntax"},
    {"parallelism too large", OK("nginx") ",\"parallelism\":\"99999999999999999999\"", NULL,
     OTA_RULE_IPJ_PARALLELISM_NOT_INTEGER, 400,
     "parallelism must be a valid integer: strconv.Atoi: parsing \"99999999999999999999\": value out of range"},
    {"unknown completion type", IMG("nginx") ",\"completionPolicy\":{\"type\":\"Sometimes\"}", NULL,
     OTA_RULE_IPJ_UNKNOWN_COMPLETION_POLICY, 400, "unknown type of completionPolicy: Sometimes"},
    {"deadline below the timeout",
     IMG("nginx") ",\"completionPolicy\":{\"type\":\"Always\",\"activeDeadlineSeconds\":599}", NULL,
     OTA_RULE_IPJ_DEADLINE_BELOW_TIMEOUT, 400,
     "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)"},
    {"deadline with Never", IMG("nginx") ",\"completionPolicy\":{\"type\":\"Never\",\"activeDeadlineSeconds\":900}",
     NULL, OTA_RULE_IPJ_DEADLINE_TTL_NEED_ALWAYS, 400,
     "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"},
    {"ttl with Never", IMG("nginx") ",\"completionPolicy\":{\"type\":\"Never\",\"ttlSecondsAfterFinished\":9}", NULL,
     OTA_RULE_IPJ_DEADLINE_TTL_NEED_ALWAYS, 400,
     "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"},

    {"pullSecrets changed", OK("nginx") ",\"pullSecrets\":[\"b\"]", OK("nginx") ",\"pullSecrets\":[\"a\"]",
     OTA_RULE_IPJ_PULL_SECRETS_IMMUTABLE, 403, "spec.pullSecrets is immutable"},
    {"pullSecrets added", OK("nginx") ",\"pullSecrets\":[\"a\"]", OK("nginx"), OTA_RULE_IPJ_PULL_SECRETS_IMMUTABLE,
     403, "spec.pullSecrets is immutable"},
    {"pullSecrets before the image's own check", OK("") ",\"pullSecrets\":[]", OK("nginx"),
     OTA_RULE_IPJ_PULL_SECRETS_IMMUTABLE, 403, "spec.pullSecrets is immutable"},
    {"pullSecrets kept, other edits allowed", OK("nginx:2") ",\"pullSecrets\":[\"a\"],\"parallelism\":4",
     OK("nginx:1") ",\"pullSecrets\":[\"a\"]", OTA_RULE_NONE, 0, NULL},

    {"image a number", "\"image\":7," PP "," ALWAYS, NULL, OTA_RULE_IPJ_MALFORMED, 400,
     "spec.image must be a string, got a number"},
    {"parallelism a fraction", OK("nginx") ",\"parallelism\":1.5", NULL, OTA_RULE_IPJ_MALFORMED, 400,
     "spec.parallelism must be a whole number that fits in 32 bits, got 1.5"},
    {"timeout past int32", "\"image\":\"nginx\",\"pullPolicy\":{\"timeoutSeconds\":2147483648}," ALWAYS, NULL,
     OTA_RULE_IPJ_MALFORMED, 400, "spec.pullPolicy.timeoutSeconds must be a whole number that fits in 32 bits, got 2147483648"},
    {"names an object", OK("nginx") ",\"selector\":{\"names\":{}}", NULL, OTA_RULE_IPJ_MALFORMED, 400,
     "spec.selector.names must be an array, got an object"},
    {"a label value a bool", OK("nginx") ",\"podSelector\":{\"matchLabels\":{\"a\":true}}", NULL,
     OTA_RULE_IPJ_MALFORMED, 400, "spec.podSelector.matchLabels[] must be a string, got a boolean"},
    {"selector a list", OK("nginx") ",\"selector\":[]", NULL, OTA_RULE_IPJ_MALFORMED, 400,
     "spec.selector must be an object, got an array"},
    {"old spec malformed", OK("nginx"), "\"image\":[]", OTA_RULE_IPJ_MALFORMED, 400,
     "oldObject: spec.image must be a string, got an array"},
};

static void test_validation(void **state)
{
    (void)state;
    static const char *const versions[] = {"v1alpha1", "v1beta1"};
    for (size_t i = 0; i < sizeof(denials) / sizeof(denials[0]); i++)
        for (size_t v = 0; v < 2; v++) {
            const deny_row *row = &denials[i];
            arena a;
            arena_init(&a);
            admit_outcome out;
            fx_response resp;
            fx_admit(&a, ADMIT_VALIDATE,
                     ipj_review(&a, versions[v], row->old_spec ? "UPDATE" : "CREATE", row->spec, row->old_spec),
                     &out, &resp);
            FX_CHECK(row->name, resp.patch == NULL, "patch %s", resp.patch);
            fx_check_verdict(row->name, &out, &resp, row->rule, row->code, row->message);
            /* the mutating webhook denies the malformed, the same way */
            if (row->rule == OTA_RULE_IPJ_MALFORMED && row->old_spec == NULL) {
                fx_admit(&a, ADMIT_MUTATE, ipj_review(&a, versions[v], "CREATE", row->spec, NULL), &out, &resp);
                FX_CHECK(row->name, !resp.allowed && resp.code == 400 && strcmp(resp.message, row->message) == 0,
                         "mutate: %s", resp.message);
            }
            arena_free(&a);
        }
}

/* Every ImagePullJob rule has a row of the table that produces it. */
static void test_every_rule_has_a_row(void **state)
{
    (void)state;
    FX_EVERY_RULE_HAS_A_ROW(denials, OTA_RULE_IPJ_MALFORMED, OTA_RULE_IPJ_PULL_SECRETS_IMMUTABLE);
}

/* Every default the mutating webhook sets passes validation. */
static void test_defaults_validate(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    admit_outcome out;
    fx_response resp;
    fx_admit(&a, ADMIT_VALIDATE, ipj_review(&a, "v1beta1", "CREATE", "\"image\":\"nginx\"," FULL_DEFAULTS, NULL),
             &out, &resp);
    assert_true(resp.allowed);
    /* without the defaults, an empty type is Kruise's unknown type */
    fx_admit(&a, ADMIT_VALIDATE, ipj_review(&a, "v1beta1", "CREATE", "\"image\":\"nginx\"", NULL), &out, &resp);
    assert_false(resp.allowed);
    assert_string_equal(resp.message, "unknown type of completionPolicy: ");
    arena_free(&a);
}

/* Other versions, subresources and operations pass through untouched. */
static void test_other_requests(void **state)
{
    (void)state;
    static const struct {
        const char *version, *sub, *op;
    } rows[] = {{"v1", NULL, "CREATE"}, {"v1beta1", "status", "UPDATE"}, {"v1beta1", NULL, "DELETE"}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        for (int phase = 0; phase < 2; phase++) {
            arena a;
            arena_init(&a);
            fx_request r = {.group = "apps.kruise.io", .version = rows[i].version, .resource = "imagepulljobs",
                            .sub_resource = rows[i].sub, .operation = rows[i].op, .namespace = "apps",
                            .name = "pull-nginx", .username = "u",
                            .object = ipj_object(&a, "v1beta1", "\"image\":\"NGINX\"")};
            admit_outcome out;
            fx_response resp;
            fx_admit(&a, (admit_phase)phase, fx_review(&a, &r), &out, &resp);
            assert_true(resp.allowed);
            assert_null(resp.patch);
            assert_null(out.object_ref);
            arena_free(&a);
        }
}

/* An ImagePullJob CREATE without an object is a bad review. */
static void test_object_required(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    fx_request r = {.group = "apps.kruise.io", .version = "v1beta1", .resource = "imagepulljobs",
                    .operation = "CREATE", .namespace = "apps", .name = "pull-nginx", .username = "u"};
    const char *body = fx_review(&a, &r);
    const admit_config cfg = {FX_CONTROLLER, NULL};
    admit_outcome out;
    assert_int_equal(admit_review(ADMIT_MUTATE, body, strlen(body), FX_NOW, &cfg, &a, &out), 0);
    assert_int_equal(out.http_status, 400);
    assert_int_equal(out.result, ADMIT_INVALID);
    assert_string_equal(out.message, "request.object is required for an ImagePullJob CREATE or UPDATE");
    arena_free(&a);
}

/* The pure functions on their own: the image words and the selector's. */
static void test_image_and_selector_words(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    static const struct {
        const char *image, *err;
    } images[] = {
        {"nginx", NULL},
        {"docker.io/library/nginx:latest", NULL},
        {"localhost:5000/a/b:c", NULL},
        {"Reg.Example.com/app:1", NULL}, /* an upper-case registry is a registry */
        {"app/Web", "invalid reference format: repository name must be lowercase"},
        {"nginx:", "invalid reference format"},
        {"nginx@sha256:abc", "invalid reference format"},
        {"a//b", "invalid reference format"},
        {"example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1",
         "repository name must not be more than 255 characters"},
    };
    for (size_t i = 0; i < sizeof(images) / sizeof(images[0]); i++) {
        const char *got = ipj_image_error(sv_from(images[i].image), &a);
        if (images[i].err == NULL)
            FX_CHECK(images[i].image, got == NULL, "refused: %s", got);
        else
            FX_CHECK(images[i].image, got != NULL && strcmp(got, images[i].err) == 0, "got %s", got);
    }
    /* more than one problem: an aggregate in brackets */
    sv keys[] = {sv_from("")}, vals[] = {sv_from("-x")};
    ipj_selector sel = {.present = 1, .has_labels = 1, .label_keys = keys, .label_values = vals, .n_labels = 1};
    const char *e = ipj_selector_error(&sel, &a);
    assert_non_null(e);
    assert_string_equal(
        e, "[key: Invalid value: \"\": name part must be non-empty; name part " QNAME
           ", values[0][]: Invalid value: \"-x\": a valid label must be an empty string or consist of "
           "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
           "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
           "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]");
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_every_rule_has_a_row),
        cmocka_unit_test(test_defaults_validate),
        cmocka_unit_test(test_other_requests),
        cmocka_unit_test(test_object_required),
        cmocka_unit_test(test_image_and_selector_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

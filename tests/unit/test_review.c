/*
 * test_review.c - the streaming AdmissionReview decoder and the response
 * encoders.
 *
 * Decoding: every field the decisions read, strings in place or copied,
 * where each OTA condition's JSON lies in the body, null as absent, the JSON
 * type of every field (a table), nesting depth, bad UTF-8, truncation and
 * other malformed bodies.  Bodies are decoded from heap buffers of exactly
 * their length, so ASan sees any read past the end.
 *
 * Encoding: the response (uid, patch, warnings, status on denial) and the
 * meta/v1 Status of HTTP errors, read back with yajl's tree parser.
 */
#include "review_fixture.h"

#include "base64.h"
#include "review.h"

/* ---- a review that sets every field we read ------------------------------ */

#define CONDS(p)                                                                                   \
    "[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},"                            \
    "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"" p "nu-r\","                    \
    "\"message\":\"" p "nu-m\",\"lastTransitionTime\":\"" p "nu-t\",\"lastProbeTime\":null},"      \
    "{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"" p "ir-r\","                    \
    "\"message\":\"" p "ir-m\",\"lastTransitionTime\":\"" p "ir-t\"}]"
#define OBJECT(p)                                                                                  \
    "{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" p "name\",\"namespace\":\"" p "ns\","       \
    "\"generateName\":[\"" p "\"],\"annotations\":{\"" OTA_ANN_UPDATE_STRATEGY "\":\"" p "strategy\","       \
    "\"" OTA_ANN_PREPULL_TIMEOUT "\":\"" p "timeout\",\"other\":\"" p "other\"},"                  \
    "\"labels\":{\"app\":\"" p "app\",\"" OTA_LABEL_REVISION_HASH "\":\"" p "hash\"}},"            \
    "\"spec\":{\"nodeName\":\"" p "node\",\"updateStrategy\":{\"type\":\"" p "type\"}},"           \
    "\"status\":{\"phase\":\"Running\",\"conditions\":" CONDS(p) "}}"

static const char full_review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"resource\":{\"group\":\"r-group\",\"version\":\"r-version\",\"resource\":\"r-resource\"},"
    "\"subResource\":\"r-sub\",\"requestKind\":{\"kind\":\"Pod\"},\"operation\":\"r-op\","
    "\"namespace\":\"r-ns\",\"name\":\"r-name\",\"userInfo\":{\"username\":\"r-user\","
    "\"uid\":42,\"groups\":[\"g1\",\"system:masters\"],\"extra\":{\"x\":[\"y\"]}},"
    "\"object\":" OBJECT("new-") ",\"oldObject\":" OBJECT("old-") ","
    "\"dryRun\":false,\"options\":{\"kind\":\"UpdateOptions\"}}}";

/* A heap copy of exactly the text's length: no NUL for the decoder to lean on. */
static char *exact_copy(const char *text, size_t len)
{
    char *b = malloc(len == 0 ? 1 : len);
    assert_non_null(b);
    memcpy(b, text, len);
    return b;
}

typedef struct decoded {
    arena a;
    char *body;
    size_t len;
    review rv;
    char err[256];
    int rc;
} decoded;

static void decode_n(decoded *d, const char *text, size_t len)
{
    arena_init(&d->a);
    d->len = len;
    d->body = exact_copy(text, len);
    d->rc = review_decode(&d->rv, d->body, len, &d->a, d->err, sizeof(d->err));
}

static void decode(decoded *d, const char *text)
{
    decode_n(d, text, strlen(text));
}

static void done(decoded *d)
{
    arena_free(&d->a);
    free(d->body);
}

static void assert_sv(sv got, const char *want)
{
    if (want == NULL) {
        if (got.ptr != NULL)
            fail_msg("\"%.*s\" present, want absent", SV_ARG(got));
        return;
    }
    if (!sv_eq(got, want))
        fail_msg("\"%.*s\"%s, want \"%s\"", SV_ARG(got), got.ptr == NULL ? " (absent)" : "", want);
}

/* s points into d's body. */
static int in_body(const decoded *d, sv s)
{
    return s.ptr >= d->body && s.ptr + s.len <= d->body + d->len;
}

static void check_cond(decoded *d, const review_cond *c, const char *p, const char *kind,
                       size_t index)
{
    assert_true(c->present);
    assert_int_equal(c->index, index);
    char want[32];
    assert_sv(c->type, kind[0] == 'n' ? OTA_COND_NEED_UPGRADE : OTA_COND_IMAGE_READY);
    assert_sv(c->status, kind[0] == 'n' ? "True" : "False");
    snprintf(want, sizeof(want), "%s%s-r", p, kind);
    assert_sv(c->reason, want);
    snprintf(want, sizeof(want), "%s%s-m", p, kind);
    assert_sv(c->message, want);
    snprintf(want, sizeof(want), "%s%s-t", p, kind);
    assert_sv(c->last_transition_time, want);
    assert_true(in_body(d, c->message));
    /* raw_off/raw_len: exactly the condition's object */
    const char *raw = d->body + c->raw_off;
    assert_true(c->raw_off + c->raw_len <= d->len);
    assert_int_equal(raw[0], '{');
    assert_int_equal(raw[c->raw_len - 1], '}');
    char *text = arena_strndup(&d->a, raw, c->raw_len);
    char err[64];
    yajl_val v = yajl_tree_parse(text, err, sizeof(err));
    assert_non_null(v);
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(v, (const char *[]){"type", NULL}, yajl_t_string)),
                        kind[0] == 'n' ? OTA_COND_NEED_UPGRADE : OTA_COND_IMAGE_READY);
    yajl_tree_free(v);
}

static void check_object(decoded *d, const review_object *o, const char *p)
{
    char want[32];
#define WANT(field, suffix)                                                                        \
    do {                                                                                           \
        snprintf(want, sizeof(want), "%s%s", p, suffix);                                           \
        assert_sv(o->field, want);                                                                 \
        assert_true(in_body(d, o->field));                                                         \
    } while (0)
    assert_true(o->present);
    WANT(name, "name");
    WANT(namespace, "ns");
    WANT(ann_update_strategy, "strategy");
    WANT(ann_prepull_timeout, "timeout");
    WANT(label_revision_hash, "hash");
    WANT(node_name, "node");
    WANT(update_strategy_type, "type");
#undef WANT
    assert_true(o->has_spec);
    assert_true(o->has_update_strategy);
    assert_false(o->update_strategy_extra);
    assert_true(o->has_status);
    assert_true(o->has_conditions);
    assert_int_equal(o->n_conditions, 3);
    check_cond(d, &o->need_upgrade, p, "nu", 1);
    check_cond(d, &o->image_ready, p, "ir", 2);
}

static void test_every_field(void **state)
{
    (void)state;
    decoded d;
    decode(&d, full_review);
    if (d.rc != 0)
        fail_msg("%s", d.err);
    assert_string_equal(d.err, "");
    review *rv = &d.rv;
    assert_ptr_equal(rv->body, d.body);
    assert_int_equal(rv->body_len, d.len);
    assert_sv(rv->api_version, "admission.k8s.io/v1");
    assert_sv(rv->kind, "AdmissionReview");
    assert_true(rv->has_request);
    assert_sv(rv->uid, "u-1");
    assert_sv(rv->group, "r-group");
    assert_sv(rv->version, "r-version");
    assert_sv(rv->resource, "r-resource");
    assert_sv(rv->sub_resource, "r-sub");
    assert_sv(rv->operation, "r-op");
    assert_sv(rv->namespace, "r-ns");
    assert_sv(rv->name, "r-name");
    assert_sv(rv->username, "r-user");
    assert_true(rv->is_master);
    assert_true(in_body(&d, rv->uid) && in_body(&d, rv->username));
    check_object(&d, &rv->object, "new-");
    check_object(&d, &rv->old_object, "old-");
    /* the raw text of a condition is the very text in the body */
    const review_cond *c = &rv->old_object.need_upgrade;
    assert_memory_equal(d.body + c->raw_off,
                        "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"old-nu-r\","
                        "\"message\":\"old-nu-m\",\"lastTransitionTime\":\"old-nu-t\","
                        "\"lastProbeTime\":null}",
                        c->raw_len);
    done(&d);
}

/* The fields of the envelope are not mistaken for those of object. */
static void test_absent_fields(void **state)
{
    (void)state;
    decoded d;
    decode(&d, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
               "\"request\":{\"uid\":\"u\",\"name\":\"n\",\"object\":{},\"userInfo\":{}}}");
    assert_int_equal(d.rc, 0);
    assert_sv(d.rv.name, "n");
    assert_sv(d.rv.username, NULL);
    assert_sv(d.rv.group, NULL);
    assert_sv(d.rv.sub_resource, NULL);
    assert_false(d.rv.is_master);
    assert_true(d.rv.object.present);
    assert_sv(d.rv.object.name, NULL);
    assert_false(d.rv.object.has_spec || d.rv.object.has_status || d.rv.object.has_conditions);
    assert_false(d.rv.object.need_upgrade.present || d.rv.object.image_ready.present);
    assert_false(d.rv.old_object.present);
    done(&d);
}

/* Keys elsewhere with our names are not ours. */
static void test_fields_only_where_they_belong(void **state)
{
    (void)state;
    decoded d;
    decode(&d,
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
           "\"uid\":\"u\",\"options\":{\"uid\":\"no\",\"name\":\"no\",\"object\":{\"metadata\":"
           "{\"name\":\"no\"}}},\"object\":{\"metadata\":{\"labels\":{\"" OTA_ANN_UPDATE_STRATEGY
           "\":\"no\"},\"annotations\":{\"" OTA_LABEL_REVISION_HASH "\":\"no\"},\"x\":{\"name\":"
           "\"no\"}},\"spec\":{\"template\":{\"spec\":{\"nodeName\":\"no\",\"updateStrategy\":{}}}},"
           "\"status\":{\"x\":{\"conditions\":[{\"type\":\"PodNeedUpgrade\"}]},\"containerStatuses\":"
           "[{\"conditions\":[]}]}},\"oldObject\":{\"status\":{\"conditions\":[[{\"type\":"
           "\"PodNeedUpgrade\"}]]}}}}");
    /* the nested array in oldObject's conditions is an element that is not
     * an object: the one error here */
    assert_int_equal(d.rc, -1);
    assert_string_equal(d.err, "request.oldObject.status.conditions[] must be an object, got an array");
    done(&d);

    decode(&d,
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
           "\"uid\":\"u\",\"options\":{\"uid\":\"no\",\"name\":\"no\",\"object\":{\"metadata\":"
           "{\"name\":\"no\"}}},\"object\":{\"metadata\":{\"labels\":{\"" OTA_ANN_UPDATE_STRATEGY
           "\":\"no\"},\"annotations\":{\"" OTA_LABEL_REVISION_HASH "\":\"no\"},\"x\":{\"name\":"
           "\"no\"}},\"spec\":{\"template\":{\"spec\":{\"nodeName\":\"no\",\"updateStrategy\":{}}}},"
           "\"status\":{\"x\":{\"conditions\":[{\"type\":\"PodNeedUpgrade\"}]},\"containerStatuses\":"
           "[{\"conditions\":[]}]}}}}");
    assert_int_equal(d.rc, 0);
    assert_sv(d.rv.uid, "u");
    assert_sv(d.rv.name, NULL);
    const review_object *o = &d.rv.object;
    assert_sv(o->name, NULL);
    assert_sv(o->ann_update_strategy, NULL);
    assert_sv(o->label_revision_hash, NULL);
    assert_sv(o->node_name, NULL);
    assert_true(o->has_spec);
    assert_false(o->has_update_strategy);
    assert_false(o->has_conditions);
    assert_false(o->need_upgrade.present);
    assert_int_equal(o->n_conditions, 0);
    done(&d);
}

/* ---- strings ---------------------------------------------------------------- */

static void test_strings_in_place_or_copied(void **state)
{
    (void)state;
    decoded d;
    decode(&d, "{\"apiVersion\":\"admission.k8s.io\\/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
               "\"uid\":\"plain\",\"name\":\"a\\\"b\\\\c\\n\",\"namespace\":\"caf\\u00e9\","
               "\"operation\":\"caf\xc3\xa9\",\"userInfo\":{\"username\":\"\\ud83d\\ude80\","
               "\"groups\":[\"system:\\u006dasters\"]},\"subResource\":\"\","
               "\"object\":{\"metadata\":{\"name\":\"x\\u0000y\"}}}}");
    if (d.rc != 0)
        fail_msg("%s", d.err);
    /* "\/" is an escape too: the copy reads admission.k8s.io/v1 */
    assert_sv(d.rv.api_version, "admission.k8s.io/v1");
    assert_false(in_body(&d, d.rv.api_version));
    assert_sv(d.rv.uid, "plain");
    assert_true(in_body(&d, d.rv.uid));
    assert_sv(d.rv.name, "a\"b\\c\n");
    assert_false(in_body(&d, d.rv.name));
    assert_sv(d.rv.namespace, "caf\xc3\xa9");
    assert_false(in_body(&d, d.rv.namespace));
    assert_sv(d.rv.operation, "caf\xc3\xa9"); /* raw UTF-8 needs no copy */
    assert_true(in_body(&d, d.rv.operation));
    assert_sv(d.rv.username, "\xf0\x9f\x9a\x80"); /* a surrogate pair */
    assert_true(d.rv.is_master);                  /* group compared decoded */
    assert_true(sv_present(d.rv.sub_resource));   /* "" is present, and empty */
    assert_true(sv_empty(d.rv.sub_resource));
    assert_int_equal(d.rv.object.name.len, 3);    /* an escaped NUL keeps its length */
    assert_memory_equal(d.rv.object.name.ptr, "x\0y", 3);
    done(&d);
}

/* The boundaries of RFC 3629's table are all accepted, and kept as sent. */
static void test_utf8_boundaries(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "\x7f",             "\xc2\x80",         "\xdf\xbf",         "\xe0\xa0\x80",
        "\xed\x9f\xbf",     "\xee\x80\x80",     "\xef\xbf\xbf",     "\xf0\x90\x80\x80",
        "\xf3\xbf\xbf\xbf", "\xf4\x8f\xbf\xbf", "caf\xc3\xa9 \xe2\x82\xac",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        arena a;
        arena_init(&a);
        const char *body = arena_printf(&a, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                                            "\"AdmissionReview\",\"request\":{\"uid\":\"%s\","
                                            "\"x\":\"%s%s\"}}",
                                        ok[i], ok[i], ok[i]);
        decoded d;
        decode(&d, body);
        FX_CHECK(ok[i], d.rc == 0, "%s", d.err);
        FX_CHECK(ok[i], sv_eq(d.rv.uid, ok[i]), "uid changed");
        done(&d);
        arena_free(&a);
    }
    /* escapes that decode to valid text are fine */
    decoded d;
    decode(&d, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
               "\"uid\":\"\\ud83d\\ude80\\u00e9\\uDBFF\\uDFFF\",\"x\":\"\\ud800\\udc00\"}}");
    if (d.rc != 0)
        fail_msg("%s", d.err);
    assert_sv(d.rv.uid, "\xf0\x9f\x9a\x80\xc3\xa9\xf4\x8f\xbf\xbf");
    done(&d);
    /* a lone surrogate is refused wherever it is, in a field nobody reads
     * too (issue 9: yajl rewrote a lone high one, "\ud800zz" read "?zz") */
    decode(&d, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
               "\"uid\":\"u\",\"x\":\"\\udc00\"}}");
    assert_int_equal(d.rc, -1);
    assert_string_equal(d.err, "invalid JSON (RFC 8259): \\udc00 at byte 87 is a lone UTF-16 low "
                               "surrogate");
    done(&d);
}

/* Keys are compared decoded too. */
static void test_escaped_keys(void **state)
{
    (void)state;
    decoded d;
    decode(&d, "{\"api\\u0056ersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
               "\"req\\u0075est\":{\"\\u0075id\":\"u\",\"object\":{\"metadata\":{\"annotations\":{"
               "\"apps.openyurt.io\\/update-strategy\":\"OTA\"}}}}}");
    if (d.rc != 0)
        fail_msg("%s", d.err);
    assert_sv(d.rv.uid, "u");
    assert_sv(d.rv.object.ann_update_strategy, "OTA");
    done(&d);
}

/* ---- conditions -------------------------------------------------------------- */

static void test_condition_raw_text(void **state)
{
    (void)state;
    /* whitespace, nested values and escapes inside; the raw text must be
     * the object from '{' to its '}' and nothing around it */
    static const char nu[] = "{ \"type\" : \"PodNeedUpgrade\",\n  \"status\": \"True\", \"x\": "
                             "{\"y\": [1, {\"z\": \"}\"}]}, \"message\": \"a\\\"}\" }";
    static const char ir[] = "{\"type\":\"PodImageReady\",\"status\":\"False\"}";
    arena a;
    arena_init(&a);
    char *text = arena_printf(&a,
                        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                        "\"request\":{\"uid\":\"u\",\"object\":{\"status\":{\"conditions\":"
                        "[ {\"type\":\"Ready\"} ,\n\t%s , %s ]}}}}  ",
                        nu, ir);
    decoded d;
    decode(&d, text);
    if (d.rc != 0)
        fail_msg("%s", d.err);
    const review_cond *c = &d.rv.object.need_upgrade;
    assert_int_equal(c->raw_len, strlen(nu));
    assert_memory_equal(d.body + c->raw_off, nu, c->raw_len);
    assert_sv(c->message, "a\"}");
    assert_int_equal(c->index, 1);
    c = &d.rv.object.image_ready;
    assert_int_equal(c->raw_len, strlen(ir));
    assert_memory_equal(d.body + c->raw_off, ir, c->raw_len);
    assert_int_equal(c->index, 2);
    assert_int_equal(d.rv.object.n_conditions, 3);
    done(&d);
    arena_free(&a);
}

static void test_first_of_duplicates_wins(void **state)
{
    (void)state;
    decoded d;
    decode(&d, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
               "\"uid\":\"u\",\"object\":{\"status\":{\"conditions\":["
               "{\"type\":\"PodImageReady\",\"message\":\"first-ir\"},"
               "{\"type\":\"PodNeedUpgrade\",\"message\":\"first-nu\"},"
               "{\"type\":\"PodImageReady\",\"message\":\"second-ir\"},"
               "{\"type\":\"PodNeedUpgrade\",\"message\":\"second-nu\"}]}}}}");
    assert_int_equal(d.rc, 0);
    assert_sv(d.rv.object.need_upgrade.message, "first-nu");
    assert_int_equal(d.rv.object.need_upgrade.index, 1);
    assert_sv(d.rv.object.image_ready.message, "first-ir");
    assert_int_equal(d.rv.object.image_ready.index, 0);
    assert_int_equal(d.rv.object.n_conditions, 4);
    done(&d);
}

/* Condition types are exact: case and whitespace matter. */
static void test_condition_type_exact(void **state)
{
    (void)state;
    decoded d;
    decode(&d, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
               "\"uid\":\"u\",\"object\":{\"status\":{\"conditions\":["
               "{\"type\":\"podneedupgrade\"},{\"type\":\"PodNeedUpgrade \"},{\"status\":\"True\"},"
               "{\"type\":\"PodImageReadyX\"},{\"type\":null},{}]}}}}");
    assert_int_equal(d.rc, 0);
    assert_false(d.rv.object.need_upgrade.present);
    assert_false(d.rv.object.image_ready.present);
    assert_int_equal(d.rv.object.n_conditions, 6);
    done(&d);
}

/* ---- null is absent ------------------------------------------------------------ */

typedef struct null_row {
    const char *name;
    const char *needle, *replacement; /* in full_review */
} null_row;

static char *replace_once(arena *a, const char *text, const char *needle, const char *replacement)
{
    const char *at = strstr(text, needle);
    if (at == NULL)
        fail_msg("\"%s\" not in the template", needle);
    assert_null(strstr(at + 1, needle)); /* the needle must be unique */
    return arena_printf(a, "%.*s%s%s", (int)(at - text), text, replacement, at + strlen(needle));
}

static void test_null_is_absent(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    decoded d;
#define WITH(needle, replacement) decode(&d, replace_once(&a, full_review, needle, replacement))
#define OK() do { if (d.rc != 0) fail_msg("%s", d.err); } while (0)
    WITH("\"username\":\"r-user\"", "\"username\":null");
    OK();
    assert_sv(d.rv.username, NULL);
    done(&d);
    WITH("\"groups\":[\"g1\",\"system:masters\"]", "\"groups\":null");
    OK();
    assert_false(d.rv.is_master);
    done(&d);
    WITH("\"groups\":[\"g1\",\"system:masters\"]", "\"groups\":[null,\"system:masters\",null]");
    OK();
    assert_true(d.rv.is_master);
    done(&d);
    WITH("\"userInfo\":{\"username\":\"r-user\",", "\"userInfo\":null,\"x\":{");
    OK();
    assert_sv(d.rv.username, NULL);
    done(&d);
    WITH("\"resource\":{\"group\":\"r-group\"", "\"resource\":null,\"y\":{\"group\":\"r-group\"");
    OK();
    assert_sv(d.rv.resource, NULL);
    assert_sv(d.rv.group, NULL);
    done(&d);
    WITH("\"subResource\":\"r-sub\"", "\"subResource\":null");
    OK();
    assert_sv(d.rv.sub_resource, NULL);
    done(&d);
    WITH("\"object\":{", "\"object\":null,\"x\":{");
    OK();
    assert_false(d.rv.object.present);
    assert_sv(d.rv.object.name, NULL);
    assert_true(d.rv.old_object.present);
    done(&d);
    WITH("\"name\":\"new-name\"", "\"name\":null");
    OK();
    assert_sv(d.rv.object.name, NULL);
    assert_sv(d.rv.old_object.name, "old-name");
    done(&d);
    WITH("\"annotations\":{\"" OTA_ANN_UPDATE_STRATEGY "\":\"new-strategy\"",
         "\"annotations\":null,\"x\":{\"" OTA_ANN_UPDATE_STRATEGY "\":\"new-strategy\"");
    OK();
    assert_sv(d.rv.object.ann_update_strategy, NULL);
    assert_sv(d.rv.object.ann_prepull_timeout, NULL);
    done(&d);
    WITH("\"new-strategy\"", "null");
    OK();
    assert_sv(d.rv.object.ann_update_strategy, NULL);
    assert_sv(d.rv.object.ann_prepull_timeout, "new-timeout");
    done(&d);
    WITH("\"new-hash\"", "null");
    OK();
    assert_sv(d.rv.object.label_revision_hash, NULL);
    done(&d);
    WITH("\"spec\":{\"nodeName\":\"new-node\"", "\"spec\":null,\"x\":{\"nodeName\":\"new-node\"");
    OK();
    assert_false(d.rv.object.has_spec);
    assert_false(d.rv.object.has_update_strategy);
    assert_sv(d.rv.object.node_name, NULL);
    done(&d);
    WITH("\"updateStrategy\":{\"type\":\"new-type\"}", "\"updateStrategy\":null");
    OK();
    assert_true(d.rv.object.has_spec);
    assert_false(d.rv.object.has_update_strategy);
    done(&d);
    WITH("{\"type\":\"new-type\"}", "{\"type\":null,\"rollingUpdate\":null}");
    OK();
    assert_true(d.rv.object.has_update_strategy);
    assert_sv(d.rv.object.update_strategy_type, NULL);
    assert_false(d.rv.object.update_strategy_extra);
    done(&d);
    WITH("\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
         "\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"new",
         "\"status\":null,\"x\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
         "\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\",\"status\":\"True\","
         "\"reason\":\"new");
    OK();
    assert_false(d.rv.object.has_status);
    assert_false(d.rv.object.has_conditions);
    assert_false(d.rv.object.need_upgrade.present);
    done(&d);
    WITH("\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},"
         "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"new",
         "\"conditions\":null,\"x\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},"
         "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"new");
    OK();
    assert_true(d.rv.object.has_status);
    assert_false(d.rv.object.has_conditions);
    assert_false(d.rv.object.need_upgrade.present);
    done(&d);
    WITH("\"new-nu-r\"", "null");
    OK();
    assert_sv(d.rv.object.need_upgrade.reason, NULL);
    assert_sv(d.rv.object.need_upgrade.message, "new-nu-m");
    done(&d);
    /* A null element still takes its place in the array (the bug fixed in
     * review.c: patch indexes counted past it wrongly). */
    WITH("[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\","
         "\"status\":\"True\",\"reason\":\"old",
         "[null,{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},null,{\"type\":"
         "\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"old");
    OK();
    assert_int_equal(d.rv.old_object.n_conditions, 5);
    assert_int_equal(d.rv.old_object.need_upgrade.index, 3);
    assert_int_equal(d.rv.old_object.image_ready.index, 4);
    assert_int_equal(d.rv.object.need_upgrade.index, 1);
    done(&d);
#undef WITH
#undef OK
    arena_free(&a);
}

/* ---- JSON types: every field we read, a table -------------------------------- */

typedef struct type_row {
    const char *needle, *replacement; /* in full_review */
    const char *error;                /* the whole message */
} type_row;

#define NEW "request.object"
#define OLD "request.oldObject"

static const type_row type_rows[] = {
    {"\"apiVersion\":\"admission.k8s.io/v1\"", "\"apiVersion\":1", "apiVersion must be a string, got a number"},
    {"\"kind\":\"AdmissionReview\"", "\"kind\":{}", "kind must be a string, got an object"},
    {"\"request\":{\"uid\"", "\"request\":[],\"x\":{\"uid\"", "request must be an object, got an array"},
    {"\"uid\":\"u-1\"", "\"uid\":17", "request.uid must be a string, got a number"},
    {"\"uid\":\"u-1\"", "\"uid\":true", "request.uid must be a string, got a boolean"},
    {"\"uid\":\"u-1\"", "\"uid\":-1e999999", "request.uid must be a string, got a number"},
    {"\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"}", "\"kind\":\"Pod\"",
     "request.kind must be an object, got a string"},
    {"\"resource\":{\"group\":\"r-group\"", "\"resource\":\"pods\",\"x\":{\"group\":\"r-group\"",
     "request.resource must be an object, got a string"},
    {"\"group\":\"r-group\"", "\"group\":[]", "request.resource.group must be a string, got an array"},
    {"\"version\":\"r-version\"", "\"version\":1", "request.resource.version must be a string, got a number"},
    {"\"resource\":\"r-resource\"", "\"resource\":{}", "request.resource.resource must be a string, got an object"},
    {"\"subResource\":\"r-sub\"", "\"subResource\":false", "request.subResource must be a string, got a boolean"},
    {"\"operation\":\"r-op\"", "\"operation\":0", "request.operation must be a string, got a number"},
    {"\"namespace\":\"r-ns\"", "\"namespace\":[\"r-ns\"]", "request.namespace must be a string, got an array"},
    {"\"name\":\"r-name\"", "\"name\":{}", "request.name must be a string, got an object"},
    {"\"userInfo\":{\"username\":\"r-user\",", "\"userInfo\":\"r-user\",\"x\":{",
     "request.userInfo must be an object, got a string"},
    {"\"username\":\"r-user\"", "\"username\":1", "request.userInfo.username must be a string, got a number"},
    {"\"groups\":[\"g1\",\"system:masters\"]", "\"groups\":\"system:masters\"",
     "request.userInfo.groups must be an array, got a string"},
    {"\"groups\":[\"g1\",\"system:masters\"]", "\"groups\":[\"g1\",[\"system:masters\"]]",
     "request.userInfo.groups[] must be a string, got an array"},
    {"\"groups\":[\"g1\",\"system:masters\"]", "\"groups\":[1]",
     "request.userInfo.groups[] must be a string, got a number"},
    {"\"object\":{\"apiVersion\"", "\"object\":\"x\",\"y\":{\"apiVersion\"",
     NEW " must be an object, got a string"},
    {"\"oldObject\":{\"apiVersion\"", "\"oldObject\":[],\"y\":{\"apiVersion\"",
     OLD " must be an object, got an array"},
    {"\"metadata\":{\"name\":\"new-name\"", "\"metadata\":1,\"x\":{\"name\":\"new-name\"",
     NEW ".metadata must be an object, got a number"},
    {"\"name\":\"new-name\"", "\"name\":1", NEW ".metadata.name must be a string, got a number"},
    {"\"name\":\"old-name\"", "\"name\":true", OLD ".metadata.name must be a string, got a boolean"},
    {"\"namespace\":\"new-ns\"", "\"namespace\":{}", NEW ".metadata.namespace must be a string, got an object"},
    {"\"annotations\":{\"" OTA_ANN_UPDATE_STRATEGY "\":\"old-strategy\"",
     "\"annotations\":[],\"x\":{\"" OTA_ANN_UPDATE_STRATEGY "\":\"old-strategy\"",
     OLD ".metadata.annotations must be an object, got an array"},
    {"\"new-strategy\"", "[\"OTA\"]", NEW ".metadata.annotations[] must be a string, got an array"},
    {"\"new-timeout\"", "60", NEW ".metadata.annotations[] must be a string, got a number"},
    {"\"old-other\"", "false", OLD ".metadata.annotations[] must be a string, got a boolean"},
    {"\"labels\":{\"app\":\"new-app\"", "\"labels\":\"x\",\"x\":{\"app\":\"new-app\"",
     NEW ".metadata.labels must be an object, got a string"},
    {"\"new-hash\"", "1", NEW ".metadata.labels[] must be a string, got a number"},
    {"\"old-app\"", "{}", OLD ".metadata.labels[] must be a string, got an object"},
    {"\"spec\":{\"nodeName\":\"new-node\"", "\"spec\":[],\"x\":{\"nodeName\":\"new-node\"",
     NEW ".spec must be an object, got an array"},
    {"\"nodeName\":\"old-node\"", "\"nodeName\":1", OLD ".spec.nodeName must be a string, got a number"},
    {"\"updateStrategy\":{\"type\":\"new-type\"}", "\"updateStrategy\":\"OnDelete\"",
     NEW ".spec.updateStrategy must be an object, got a string"},
    {"\"updateStrategy\":{\"type\":\"old-type\"}", "\"updateStrategy\":[]",
     OLD ".spec.updateStrategy must be an object, got an array"},
    {"{\"type\":\"new-type\"}", "{\"type\":{\"x\":1}}",
     NEW ".spec.updateStrategy.type must be a string, got an object"},
    {"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
     "\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"new",
     "\"status\":\"Running\",\"x\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\","
     "\"status\":\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\",\"status\":\"True\","
     "\"reason\":\"new",
     NEW ".status must be an object, got a string"},
    {"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},{\"type\":"
     "\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"old",
     "\"conditions\":{},\"x\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},"
     "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"old",
     OLD ".status.conditions must be an array, got an object"},
    {"[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\","
     "\"status\":\"True\",\"reason\":\"new",
     "[\"Ready\",{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"new",
     NEW ".status.conditions[] must be an object, got a string"},
    {"[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\","
     "\"status\":\"True\",\"reason\":\"old",
     "[1,{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"old",
     OLD ".status.conditions[] must be an object, got a number"},
    /* the fields of every condition, not only ours */
    {"[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\","
     "\"status\":\"True\",\"reason\":\"new",
     "[{\"type\":7,\"status\":\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\","
     "\"status\":\"True\",\"reason\":\"new",
     NEW ".status.conditions[].type must be a string, got a number"},
    {"[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\","
     "\"status\":\"True\",\"reason\":\"old",
     "[{\"type\":\"Ready\",\"status\":true,\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\","
     "\"status\":\"True\",\"reason\":\"old",
     OLD ".status.conditions[].status must be a string, got a boolean"},
    {"\"new-nu-r\"", "[]", NEW ".status.conditions[].reason must be a string, got an array"},
    {"\"old-ir-m\"", "{}", OLD ".status.conditions[].message must be a string, got an object"},
    {"\"new-ir-t\"", "1700000000", NEW ".status.conditions[].lastTransitionTime must be a string, got a number"},
};

static void test_wrong_types(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(type_rows) / sizeof(type_rows[0]); i++) {
        const type_row *row = &type_rows[i];
        arena a;
        arena_init(&a);
        decoded d;
        decode(&d, replace_once(&a, full_review, row->needle, row->replacement));
        FX_CHECK(row->error, d.rc == -1, "decoded");
        FX_CHECK(row->error, strcmp(d.err, row->error) == 0, "got \"%s\"", d.err);
        done(&d);
        /* and through admit_review, a 400 with that message */
        const char *body = replace_once(&a, full_review, row->needle, row->replacement);
        admit_outcome out;
        const admit_config cfg = {.controller_username = FX_CONTROLLER};
        assert_int_equal(admit_review(ADMIT_VALIDATE, body, strlen(body), FX_NOW, &cfg, &a, &out), 0);
        FX_CHECK(row->error, out.http_status == 400 && strcmp(out.message, row->error) == 0,
                 "HTTP %d %s", out.http_status, out.message);
        arena_free(&a);
    }
}

/* metadata.ownerReferences (issue 19): a pod is DaemonSet-owned when one
 * reference is the controller ("controller": true) of kind DaemonSet, on
 * the fast path and the reference path alike; the other fields of a
 * reference are not read; a "controller" that is no boolean is refused as
 * any field of the wrong type is. */
static void test_owner_references(void **state)
{
    (void)state;
    static const struct {
        const char *name, *owners;
        int owned;
    } rows[] = {
        {"none", NULL, 0},
        {"empty", "[]", 0},
        {"null", "null", 0},
        {"the DaemonSet controller", "[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\","
                                     "\"name\":\"a\",\"uid\":\"u\",\"controller\":true,"
                                     "\"blockOwnerDeletion\":true}]", 1},
        {"after another owner", "[{\"kind\":\"ConfigMap\",\"name\":\"c\",\"uid\":\"x\"},"
                                "{\"kind\":\"DaemonSet\",\"controller\":true}]", 1},
        {"controller first, kind after", "[{\"controller\":true,\"kind\":\"DaemonSet\"}]", 1},
        {"not the controller", "[{\"kind\":\"DaemonSet\",\"controller\":false}]", 0},
        {"no controller field", "[{\"kind\":\"DaemonSet\"}]", 0},
        {"a ReplicaSet's", "[{\"kind\":\"ReplicaSet\",\"controller\":true}]", 0},
        {"kind of one, controller of another",
         "[{\"kind\":\"DaemonSet\"},{\"kind\":\"Node\",\"controller\":true}]", 0},
        {"a lower-case kind", "[{\"kind\":\"daemonset\",\"controller\":true}]", 0},
        {"extra fields of any type", "[{\"kind\":\"DaemonSet\",\"controller\":true,"
                                     "\"x\":{\"controller\":false,\"kind\":[1]}}]", 1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        const char *refs =
            rows[i].owners != NULL ? arena_printf(&a, ",\"ownerReferences\":%s", rows[i].owners) : "";
        /* in oldObject only: object's are its own */
        const char *body = replace_once(&a, full_review, "\"name\":\"old-name\"",
                                        arena_printf(&a, "\"name\":\"old-name\"%s", refs));
        decoded d;
        decode(&d, body);
        FX_CHECK(rows[i].name, d.rc == 0, "%s", d.err);
        FX_CHECK(rows[i].name, d.rv.old_object.daemonset_owned == rows[i].owned, "owned %d",
                 d.rv.old_object.daemonset_owned);
        FX_CHECK(rows[i].name, !d.rv.object.daemonset_owned, "object owned");
        ota_pod v = review_pod_view(&d.rv.old_object);
        FX_CHECK(rows[i].name, v.owners_read == 1 && v.daemonset_owned == rows[i].owned, "view");
        /* the reference path reads it the same */
        review slow;
        char err[256];
        FX_CHECK(rows[i].name, review_decode_reference(&slow, d.body, d.len, &d.a, err, sizeof(err)) == 0,
                 "%s", err);
        FX_CHECK(rows[i].name, slow.old_object.daemonset_owned == rows[i].owned, "slow owned");
        done(&d);
        arena_free(&a);
    }
    arena a;
    arena_init(&a);
    decoded d;
    decode(&d, replace_once(&a, full_review, "\"name\":\"old-name\"",
                            "\"name\":\"old-name\",\"ownerReferences\":[{\"kind\":\"DaemonSet\","
                            "\"controller\":\"true\"}]"));
    assert_int_equal(d.rc, -1);
    assert_string_equal(d.err, "request.oldObject.metadata.ownerReferences[].controller must be "
                               "a boolean, got a string");
    done(&d);
    arena_free(&a);
}

/* Fields we do not read may have any type. */
static void test_unread_fields_any_type(void **state)
{
    (void)state;
    static const struct {
        const char *needle, *replacement;
    } rows[] = {
        {"\"dryRun\":false", "\"dryRun\":\"yes\""},
        /* numbers are never converted: no overflow to report */
        {"\"dryRun\":false", "\"dryRun\":123456789012345678901234567890e999999,\"n\":-0.0e-99999"},
        {"\"options\":{\"kind\":\"UpdateOptions\"}", "\"options\":[1,[2],{\"uid\":3}]"},
        {"\"uid\":42", "\"uid\":{\"username\":1}"},
        {"\"extra\":{\"x\":[\"y\"]}", "\"extra\":null"},
        {"\"requestKind\":{\"kind\":\"Pod\"}", "\"requestKind\":5"},
        {"\"generateName\":[\"new-\"]", "\"generateName\":{\"name\":[1]}"},
        {"\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
         "\"lastProbeTime\":null},{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"new",
         "\"phase\":[],\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":"
         "{\"a\":1}},{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"reason\":\"new"},
        {"{\"type\":\"new-type\"}", "{\"type\":\"new-type\",\"rollingUpdate\":{\"maxSurge\":[1]}}"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        decoded d;
        decode(&d, replace_once(&a, full_review, rows[i].needle, rows[i].replacement));
        FX_CHECK(rows[i].replacement, d.rc == 0, "%s", d.err);
        done(&d);
        arena_free(&a);
    }
}

/* Keys besides "type" in updateStrategy, whatever their type. */
static void test_update_strategy_extra(void **state)
{
    (void)state;
    static const struct {
        const char *strategy;
        int extra;
    } rows[] = {
        {"{\"type\":\"OnDelete\"}", 0},
        {"{}", 0},
        {"{\"type\":\"OnDelete\",\"rollingUpdate\":null}", 0},
        {"{\"type\":\"OnDelete\",\"rollingUpdate\":{\"maxUnavailable\":1}}", 1},
        {"{\"rollingUpdate\":{},\"type\":\"OnDelete\"}", 1},
        {"{\"type\":\"OnDelete\",\"x\":[]}", 1},
        {"{\"type\":\"OnDelete\",\"x\":1}", 1},
        {"{\"type\":\"OnDelete\",\"x\":\"y\"}", 1},
        {"{\"type\":\"OnDelete\",\"x\":false}", 1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        decoded d;
        decode(&d, replace_once(&a, full_review, "{\"type\":\"old-type\"}", rows[i].strategy));
        FX_CHECK(rows[i].strategy, d.rc == 0, "%s", d.err);
        FX_CHECK(rows[i].strategy, d.rv.old_object.update_strategy_extra == rows[i].extra,
                 "extra = %d", d.rv.old_object.update_strategy_extra);
        FX_CHECK(rows[i].strategy, !d.rv.object.update_strategy_extra, "leaked into object");
        done(&d);
        arena_free(&a);
    }
}

/* ---- depth -------------------------------------------------------------------- */

#define ENVELOPE "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"x\":"

/* The envelope, then n nested containers under request.x. */
static char *nested(size_t n, const char *open, const char *close)
{
    size_t lo = strlen(open), lc = strlen(close), le = strlen(ENVELOPE);
    char *s = malloc(le + n * (lo + lc) + 4);
    assert_non_null(s);
    memcpy(s, ENVELOPE, le);
    char *p = s + le;
    for (size_t i = 0; i < n; i++, p += lo)
        memcpy(p, open, lo);
    *p++ = '0'; /* the innermost value */
    for (size_t i = 0; i < n; i++, p += lc)
        memcpy(p, close, lc);
    memcpy(p, "}}", 3);
    return s;
}

static void test_depth_limit(void **state)
{
    (void)state;
    /* root and request are two levels: REVIEW_MAX_DEPTH - 2 more fit */
    static const struct {
        const char *open, *close;
    } kinds[] = {{"[", "]"}, {"{\"a\":", "}"}, {"[{\"a\":", "}]"}};
    for (size_t k = 0; k < 3; k++) {
        size_t per = kinds[k].open[0] == '[' && kinds[k].open[1] == '{' ? 2 : 1;
        size_t fits = (REVIEW_MAX_DEPTH - 2) / per;
        decoded d;
        char *s = nested(fits, kinds[k].open, kinds[k].close);
        decode(&d, s);
        FX_CHECK(kinds[k].open, d.rc == 0, "%zu levels: %s", fits * per + 2, d.err);
        done(&d);
        free(s);
        s = nested(fits + 1, kinds[k].open, kinds[k].close);
        decode(&d, s);
        FX_CHECK(kinds[k].open, d.rc == -1, "%zu levels decoded", (fits + 1) * per + 2);
        char want[64];
        snprintf(want, sizeof(want), "JSON nesting deeper than %d levels", REVIEW_MAX_DEPTH);
        FX_CHECK(kinds[k].open, strcmp(d.err, want) == 0, "got \"%s\"", d.err);
        done(&d);
        free(s);
    }
}

/* The limit counts the levels the decoder reads (framed) and the ones it
 * skips together, wherever the skipped value starts: under metadata
 * (managedFields), inside a condition, inside updateStrategy. */
static void test_depth_limit_read_and_skipped(void **state)
{
    (void)state;
    static const struct {
        const char *prefix, *suffix;
        size_t framed; /* levels open at the first skipped container */
    } rows[] = {
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
         "{\"uid\":\"u\",\"object\":{\"metadata\":{\"managedFields\":",
         "}}}}", 4},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
         "{\"uid\":\"u\",\"oldObject\":{\"status\":{\"conditions\":[{\"type\":\"A\",\"x\":",
         "}]}}}}", 6},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
         "{\"uid\":\"u\",\"object\":{\"spec\":{\"updateStrategy\":{\"rollingUpdate\":",
         "}}}}}", 5},
    };
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        for (size_t extra = 0; extra < 2; extra++) {
            size_t n = REVIEW_MAX_DEPTH - rows[r].framed + extra;
            size_t lp = strlen(rows[r].prefix), ls = strlen(rows[r].suffix);
            char *s = malloc(lp + 2 * n + ls + 2);
            assert_non_null(s);
            memcpy(s, rows[r].prefix, lp);
            memset(s + lp, '[', n);
            s[lp + n] = '0';
            memset(s + lp + n + 1, ']', n);
            memcpy(s + lp + 2 * n + 1, rows[r].suffix, ls + 1);
            decoded d;
            decode(&d, s);
            if (extra == 0) {
                FX_CHECK(rows[r].prefix, d.rc == 0, "%zu levels: %s", n + rows[r].framed, d.err);
            } else {
                char want[64];
                snprintf(want, sizeof(want), "JSON nesting deeper than %d levels", REVIEW_MAX_DEPTH);
                FX_CHECK(rows[r].prefix, d.rc == -1 && strcmp(d.err, want) == 0,
                         "%zu levels: rc %d \"%s\"", n + rows[r].framed, d.rc, d.err);
            }
            done(&d);
            free(s);
        }
    }
}

/* 200 000 levels: refused at the limit, nothing recursive, closed or not. */
static void test_depth_200000(void **state)
{
    (void)state;
    static const char *const opens[] = {"[", "{\"a\":"};
    for (int k = 0; k < 2; k++) {
        for (int closed = 0; closed < 2; closed++) {
            size_t n = 200000, lo = strlen(opens[k]);
            char *s = closed ? nested(n, opens[k], opens[k][0] == '[' ? "]" : "}") : malloc(n * lo);
            size_t len = closed ? strlen(s) : n * lo;
            if (!closed)
                for (size_t i = 0; i < n; i++)
                    memcpy(s + i * lo, opens[k], lo);
            decoded d;
            decode_n(&d, s, len);
            assert_int_equal(d.rc, -1);
            /* at the root an array is refused for its type, deeper for depth */
            if (!closed && k == 0)
                assert_string_equal(d.err, "the body must be a JSON object (an AdmissionReview), got an array");
            else
                assert_contains(d.err, "nesting");
            /* and it stopped early: the arena holds little */
            assert_true(d.a.used < 64 * 1024);
            done(&d);
            free(s);
        }
    }
}

/* ---- malformed bodies -------------------------------------------------------- */

typedef struct bad_row {
    const char *name;
    const char *body;
    size_t len; /* 0: strlen */
    const char *error; /* a prefix of the message */
} bad_row;

#define MINIMAL "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"}}"

static const bad_row bad_rows[] = {
    {"empty body", "", 0, "the request body is empty"},
    {"only whitespace", " \r\n\t", 0, "invalid JSON: parse error: premature EOF (at byte 4)"},
    {"not JSON", "hello", 0, "invalid JSON: lexical error: invalid char in json text. (at byte 1)"},
    {"form-encoded", "a=1&b=2", 0, "invalid JSON: lexical error"},
    {"truncated", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Adm", 0,
     "invalid JSON: parse error: premature EOF (at byte 47)"},
    /* RFC 8259 where yajl is lax (issue 9): only four whitespace bytes, and
     * nothing after the value, not even an unfinished token */
#define AFTER(at) "invalid JSON (RFC 8259): bytes after the top-level value, at byte " #at
    {"trailing garbage", MINIMAL "x", 0, AFTER(83)},
    {"two documents", MINIMAL MINIMAL, 0, AFTER(83)},
    {"an unfinished string after the value", MINIMAL "\"abc", 0, AFTER(83)},
    {"an unfinished literal after the value", MINIMAL " tr", 0, AFTER(84)},
    {"a number after the value", MINIMAL "\r\n1", 0, AFTER(85)},
    {"an open bracket after the value", MINIMAL "[", 0, AFTER(83)},
    {"a close bracket after the value", MINIMAL "}", 0, AFTER(83)},
    {"a grammar error comes first", "{\"a\":]  x", 0, "invalid JSON: parse error"},
#define CTRL(hex, at) "invalid JSON (RFC 8259): control character " hex " at byte " #at
    {"vertical tab as whitespace", "{\"apiVersion\":\v\"admission.k8s.io/v1\"}", 0, CTRL("0x0b", 14)},
    {"form feed as whitespace", "\f" MINIMAL, 0, CTRL("0x0c", 0)},
    {"vertical tab after the value", MINIMAL "\v", 0, CTRL("0x0b", 83)},
    {"vertical tab inside a stored condition",
     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
     "\"oldObject\":{\"status\":{\"conditions\":[{\"type\":\"PodNeedUpgrade\",\v\"status\":\"True\"}]}}}}",
     0, CTRL("0x0b", 144)},
    {"comment", "/**/" MINIMAL, 0, "invalid JSON: lexical error: probable comment found"},
    {"single quotes", "{'apiVersion':1}", 0, "invalid JSON"},
    {"trailing comma", "{\"apiVersion\":\"admission.k8s.io/v1\",}", 0, "invalid JSON"},
    {"NUL byte", "{\"apiVersion\":\"admission.k8s.io/v1\"\0}", 37, "invalid JSON"},
    {"raw control character in a string", "{\"x\":\"a\x01\"}", 0,
     "invalid JSON (RFC 8259): control character 0x01 at byte 7; only space, tab, line feed and "
     "carriage return separate tokens, and a string escapes them"},
    /* RFC 3629, not only the shape yajl checks */
#define IN_UID(bytes) "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"" bytes "\"}}"
#define NOT_UTF8(at) "the body is not valid UTF-8 (RFC 3629): bad byte sequence at byte " #at
    {"invalid UTF-8 in a value we read", IN_UID("\xff"), 0, NOT_UTF8(79)},
    {"invalid UTF-8 in a value we skip", "{\"x\":\"\xc3(\"," "\"apiVersion\":\"admission.k8s.io/v1\"}",
     0, NOT_UTF8(6)},
    {"invalid UTF-8 in a key", "{\"\x80\":1}", 0, NOT_UTF8(2)},
    {"truncated UTF-8", "{\"x\":\"\xe2\x82\"}", 0, NOT_UTF8(6)},
    {"UTF-8 cut by the end of the body", "{\"x\":\"\xe2\x82", 0, NOT_UTF8(6)},
    {"overlong \"/\" (C0 AF)", IN_UID("ab\xc0\xaf"), 0, NOT_UTF8(81)},
    {"overlong C1", IN_UID("\xc1\xbf"), 0, NOT_UTF8(79)},
    {"overlong three bytes", IN_UID("\xe0\x80\xaf"), 0, NOT_UTF8(79)},
    {"overlong four bytes", IN_UID("\xf0\x80\x80\xaf"), 0, NOT_UTF8(79)},
    {"UTF-16 surrogate encoded (ED A0 80)", IN_UID("\xed\xa0\x80"), 0, NOT_UTF8(79)},
    {"low surrogate encoded (ED BF BF)", IN_UID("\xed\xbf\xbf"), 0, NOT_UTF8(79)},
    {"past U+10FFFF (F4 90 80 80)", IN_UID("\xf4\x90\x80\x80"), 0, NOT_UTF8(79)},
    {"F5 lead byte", IN_UID("\xf5\x80\x80\x80"), 0, NOT_UTF8(79)},
    {"FF lead byte", IN_UID("x\xfe"), 0, NOT_UTF8(80)},
    {"continuation without a lead", IN_UID("\xbf"), 0, NOT_UTF8(79)},
    {"lead without continuation", IN_UID("\xc3" "A"), 0, NOT_UTF8(79)},
#define LONE(esc, at, kind) "invalid JSON (RFC 8259): \\u" esc " at byte " #at " is a lone UTF-16 " kind
    {"lone high surrogate before text", IN_UID("\\ud800zz"), 0, LONE("d800", 79, "high surrogate")},
    {"high surrogate before a BMP escape", IN_UID("\\ud800\\u0041"), 0, LONE("d800", 79, "high surrogate")},
    {"two high surrogates", IN_UID("\\uDBFF\\uD800"), 0, LONE("DBFF", 79, "high surrogate")},
    {"high surrogate ending a string", IN_UID("x\\ud800"), 0, LONE("d800", 80, "high surrogate")},
    {"lone low surrogate escape in a field we keep", IN_UID("\\udc00"), 0, LONE("dc00", 79, "low surrogate")},
    {"low surrogate first", IN_UID("\\udc00\\ud800"), 0, LONE("dc00", 79, "low surrogate")},
    {"lone surrogate in a key", "{\"\\udfff\":1}", 0, LONE("dfff", 2, "low surrogate")},
    {"bad escape", "{\"x\":\"\\q\"}", 0, "invalid JSON: lexical error: inside a string, '\\' occurs"},
    /* a key twice in one object, anywhere in the body (issue 19): Kubernetes
     * keeps the last of two, a reader that kept the first would judge
     * another object */
#define REQ(rest) "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"," rest "}}"
    {"groups twice", REQ("\"userInfo\":{\"username\":\"x\",\"groups\":[\"system:masters\"],"
                         "\"groups\":[\"system:nodes\"]}"),
     0, "duplicate key \"groups\" in request.userInfo"},
    {"a key twice at the top", "{\"kind\":\"AdmissionReview\",\"kind\":\"AdmissionReview\"}", 0,
     "duplicate key \"kind\" in the AdmissionReview"},
    {"a key twice, once escaped", REQ("\"ui\\u0064\":\"v\""), 0,
     "duplicate key \"uid\" in request"},
    {"a key twice in a value no node reads",
     REQ("\"object\":{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"image\":\"x\","
         "\"image\":\"y\"}]}}"),
     0, "duplicate key \"image\" in request.object.spec.containers[1]"},
    {"a key twice in managedFields",
     REQ("\"object\":{\"metadata\":{\"managedFields\":[{\"fieldsV1\":{\"f:metadata\":{"
         "\"f:labels\":{\".\":{},\".\":{}}}}}]}}"),
     0, "duplicate key \".\" in request.object.metadata.managedFields[0].fieldsV1.f:metadata.f:labels"},
    {"a label twice", REQ("\"object\":{\"metadata\":{\"labels\":{\"a.b/c\":\"1\",\"a.b/c\":\"2\"}}}"), 0,
     "duplicate key \"a.b/c\" in request.object.metadata.labels"},
    {"under a key that is not a plain name",
     REQ("\"object\":{\"spec\":{\"x.y\":{\"a\":1,\"a\":2}}}"), 0,
     "duplicate key \"a\" in request.object.spec[\"x.y\"]"},
    {"a key with a NUL twice", "{\"a\\u0000\":1,\"a\\u0000\":2}", 0,
     "duplicate key \"a\\u0000\" in the AdmissionReview"},
    {"a key twice in an object past sixteen keys",
     "{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,"
     "\"ka\":0,\"kb\":0,\"kc\":0,\"kd\":0,\"ke\":0,\"kf\":0,\"kg\":0,\"kh\":0,\"k\\u0037\":0}",
     0, "duplicate key \"k7\" in the AdmissionReview"},
    {"array root", "[]", 0, "the body must be a JSON object (an AdmissionReview), got an array"},
    /* yajl takes an unfinished token after a scalar root too (found by
     * tests/fuzz/fuzz_jcheck.c: corpus/jcheck/crash-db3577c5...): the root's
     * type refuses it first */
    {"string root and an unfinished string", "\"k\"\";", 0,
     "the body must be a JSON object (an AdmissionReview), got a string"},
    {"number root and an unfinished string", "1\"abc", 0,
     "the body must be a JSON object (an AdmissionReview), got a number"},
    {"string root", "\"AdmissionReview\"", 0, "the body must be a JSON object (an AdmissionReview), got a string"},
    {"number root", "42", 0, "the body must be a JSON object (an AdmissionReview), got a number"},
    {"boolean root", "true", 0, "the body must be a JSON object (an AdmissionReview), got a boolean"},
    {"null root", " null ", 0, "the body must be a JSON object (an AdmissionReview), got null"},
    {"empty object", "{}", 0, "apiVersion must be admission.k8s.io/v1, got \"\""},
    {"v1beta1", "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"}}",
     0, "apiVersion must be admission.k8s.io/v1, got \"admission.k8s.io/v1beta1\""},
    {"apiVersion with a space", "{\"apiVersion\":\"admission.k8s.io/v1 \",\"kind\":\"AdmissionReview\"}",
     0, "apiVersion must be admission.k8s.io/v1, got \"admission.k8s.io/v1 \""},
    {"wrong kind", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\",\"request\":{\"uid\":\"u\"}}",
     0, "kind must be AdmissionReview, got \"Pod\""},
    {"kind in lower case", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"admissionreview\"}",
     0, "kind must be AdmissionReview, got \"admissionreview\""},
    {"no kind", "{\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{\"uid\":\"u\"}}", 0,
     "kind must be AdmissionReview, got \"\""},
    {"no request", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", 0,
     "request is missing"},
    {"request null", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":null}",
     0, "request is missing"},
    {"a response instead", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
     "\"response\":{\"uid\":\"u\",\"allowed\":true}}", 0, "request is missing"},
    {"no uid", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{}}",
     0, "request.uid is missing"},
    {"uid null", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":null}}",
     0, "request.uid is missing"},
    {"uid empty", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"\"}}",
     0, "request.uid is missing"},
};

static void test_malformed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
        const bad_row *row = &bad_rows[i];
        size_t len = row->len != 0 ? row->len : strlen(row->body);
        decoded d;
        decode_n(&d, row->body, len);
        FX_CHECK(row->name, d.rc == -1, "decoded");
        FX_CHECK(row->name, strncmp(d.err, row->error, strlen(row->error)) == 0,
                 "got \"%s\", want \"%s...\"", d.err, row->error);
        FX_CHECK(row->name, strchr(d.err, '\n') == NULL, "not one line: %s", d.err);
        done(&d);

        /* admit_review answers 400 with a meta/v1 Status carrying it */
        arena a;
        arena_init(&a);
        char *body = exact_copy(row->body, len);
        const admit_config cfg = {.controller_username = FX_CONTROLLER};
        admit_outcome out;
        assert_int_equal(admit_review(ADMIT_MUTATE, body, len, FX_NOW, &cfg, &a, &out), 0);
        FX_CHECK(row->name, out.http_status == 400 && out.result == ADMIT_INVALID, "HTTP %d",
                 out.http_status);
        char *text = arena_strndup(&a, out.body, out.body_len);
        char err[64];
        yajl_val v = yajl_tree_parse(text, err, sizeof(err));
        FX_CHECK(row->name, v != NULL, "Status is not JSON: %s", text);
        const char *msg = YAJL_GET_STRING(yajl_tree_get(v, (const char *[]){"message", NULL},
                                                        yajl_t_string));
        FX_CHECK(row->name, msg != NULL && strcmp(msg, out.message) == 0, "message %s", msg);
        yajl_val code = yajl_tree_get(v, (const char *[]){"code", NULL}, yajl_t_number);
        FX_CHECK(row->name, code != NULL && YAJL_GET_INTEGER(code) == 400, "code");
        yajl_tree_free(v);
        free(body);
        arena_free(&a);
    }
}

/* Every proper prefix of a good review is an error, never a crash or a read
 * past the end. */
static void test_every_truncation(void **state)
{
    (void)state;
    size_t len = strlen(full_review);
    for (size_t n = 0; n < len; n++) {
        decoded d;
        decode_n(&d, full_review, n);
        if (d.rc != -1)
            fail_msg("prefix of %zu bytes decoded", n);
        if (n > 0 && strncmp(d.err, "invalid JSON: parse error: premature EOF", 40) != 0 &&
            strncmp(d.err, "invalid JSON: lexical error", 27) != 0)
            fail_msg("prefix of %zu bytes: %s", n, d.err);
        done(&d);
    }
}

/* The error buffer bounds the message; it is always NUL-terminated. */
static void test_error_buffer_bound(void **state)
{
    (void)state;
    for (size_t errlen = 1; errlen < 60; errlen++) {
        arena a;
        arena_init(&a);
        char *err = malloc(errlen);
        review rv;
        const char *body = "{\"apiVersion\":\"x\"}";
        const char *full = "apiVersion must be admission.k8s.io/v1, got \"x\"";
        assert_int_equal(review_decode(&rv, body, strlen(body), &a, err, errlen), -1);
        assert_int_equal(strlen(err), errlen - 1 < strlen(full) ? errlen - 1 : strlen(full));
        assert_memory_equal(err, full, strlen(err));
        free(err);
        arena_free(&a);
    }
}

/* ---- response encoding ------------------------------------------------------- */

static void test_response_allowed(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    review_response r = {.uid = sv_from("705ab4f5-6393-11e8-b7cc-42010a800002"), .allowed = 1};
    size_t len;
    const char *s = review_encode_response(&r, &a, &len);
    assert_non_null(s);
    assert_int_equal(len, strlen(s));
    assert_string_equal(s, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                           "\"response\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
                           "\"allowed\":true}}");
    arena_free(&a);
}

static void test_response_denied(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    review_response r = {.uid = sv_from("u"), .allowed = 0, .code = 403,
                         .message = "pod edge/x: \"quoted\"\nand a \\ backslash"};
    size_t len;
    const char *s = review_encode_response(&r, &a, &len);
    assert_string_equal(s, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                           "\"response\":{\"uid\":\"u\",\"allowed\":false,\"status\":{\"code\":403,"
                           "\"reason\":\"Forbidden\",\"message\":\"pod edge/x: \\\"quoted\\\"\\nand "
                           "a \\\\ backslash\"}}}");
    fx_response resp;
    fx_parse_response(&a, s, len, &resp);
    assert_string_equal(resp.message, r.message);
    /* without a message, still a message */
    r.message = NULL;
    s = review_encode_response(&r, &a, &len);
    fx_parse_response(&a, s, len, &resp);
    assert_string_equal(resp.message, "denied");
    arena_free(&a);
}

static void test_response_patch_and_warnings(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    static const char patch[] =
        "[{\"op\":\"add\",\"path\":\"/spec/updateStrategy\",\"value\":{\"type\":\"OnDelete\"}}]";
    review_response r = {.uid = sv_from("u\"1"), .allowed = 1, .patch = patch,
                         .patch_len = strlen(patch), .n_warnings = 2,
                         .warnings = {"first \"warning\"", "caf\xc3\xa9"}};
    size_t len;
    const char *s = review_encode_response(&r, &a, &len);
    assert_contains(s, "\"patchType\":\"JSONPatch\",\"patch\":\"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvdXBk"
                       "YXRlU3RyYXRlZ3kiLCJ2YWx1ZSI6eyJ0eXBlIjoiT25EZWxldGUifX1d\"");
    fx_response resp;
    fx_parse_response(&a, s, len, &resp);
    assert_string_equal(resp.uid, "u\"1");
    assert_true(resp.allowed);
    assert_false(resp.has_status);
    assert_string_equal(resp.patch, patch);
    assert_int_equal(resp.n_warnings, 2);
    assert_string_equal(resp.warnings[0], "first \"warning\"");
    assert_string_equal(resp.warnings[1], "caf\xc3\xa9");
    assert_int_equal(resp.n_keys, 5); /* uid, allowed, patchType, patch, warnings */
    /* an empty patch is still a patch */
    r.patch_len = 0;
    r.n_warnings = 0;
    s = review_encode_response(&r, &a, &len);
    assert_contains(s, "\"patchType\":\"JSONPatch\",\"patch\":\"\"}}");
    assert_null(strstr(s, "warnings"));
    arena_free(&a);
}

/* The uid is echoed exactly as decoded, escapes and all. */
static void test_uid_round_trip(void **state)
{
    (void)state;
    static const char *const uids[] = {"plain-uid", "with\\\"quote", "tab\\there", "\\u00e9t\\u00e9",
                                       "slash\\/ed"};
    static const char *const decoded_uids[] = {"plain-uid", "with\"quote", "tab\there",
                                               "\xc3\xa9t\xc3\xa9", "slash/ed"};
    for (size_t i = 0; i < 5; i++) {
        arena a;
        arena_init(&a);
        const char *body = arena_printf(&a, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                                            "\"AdmissionReview\",\"request\":{\"uid\":\"%s\"}}",
                                        uids[i]);
        admit_outcome out;
        fx_response resp;
        fx_admit(&a, ADMIT_VALIDATE, body, &out, &resp);
        assert_string_equal(resp.uid, decoded_uids[i]);
        assert_true(sv_eq(out.uid, decoded_uids[i]));
        assert_true(resp.allowed);
        arena_free(&a);
    }
}

static void test_status_body(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    size_t len;
    const char *s = review_encode_status(404, "NotFound", "no such path: \"/x\"", &a, &len);
    assert_non_null(s);
    assert_int_equal(len, strlen(s));
    assert_string_equal(s, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                           "\"status\":\"Failure\",\"message\":\"no such path: \\\"/x\\\"\","
                           "\"reason\":\"NotFound\",\"code\":404}");
    s = review_encode_status(413, "RequestEntityTooLarge", "", &a, &len);
    assert_string_equal(s, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                           "\"status\":\"Failure\",\"message\":\"\",\"reason\":"
                           "\"RequestEntityTooLarge\",\"code\":413}");
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_field),
        cmocka_unit_test(test_absent_fields),
        cmocka_unit_test(test_fields_only_where_they_belong),
        cmocka_unit_test(test_strings_in_place_or_copied),
        cmocka_unit_test(test_escaped_keys),
        cmocka_unit_test(test_utf8_boundaries),
        cmocka_unit_test(test_condition_raw_text),
        cmocka_unit_test(test_first_of_duplicates_wins),
        cmocka_unit_test(test_condition_type_exact),
        cmocka_unit_test(test_null_is_absent),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_owner_references),
        cmocka_unit_test(test_unread_fields_any_type),
        cmocka_unit_test(test_update_strategy_extra),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_depth_limit_read_and_skipped),
        cmocka_unit_test(test_depth_200000),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_error_buffer_bound),
        cmocka_unit_test(test_response_allowed),
        cmocka_unit_test(test_response_denied),
        cmocka_unit_test(test_response_patch_and_warnings),
        cmocka_unit_test(test_uid_round_trip),
        cmocka_unit_test(test_status_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_jscan.c - the webhook's fast scanner (webhook/jscan.c) held to the
 * reference it replaces for accepted bodies: jcheck_body() + yajl, with
 * nothing but whitespace after the value.
 *
 * Three checks, each over hand-written cases, every request fixture, the
 * fuzz corpora and seeded mutants of all of them (a byte replaced by a
 * JSON-significant one, inserted or deleted, or an escape or UTF-8
 * sequence inserted):
 *  - with no value skipped, jscan accepts exactly what the reference
 *    accepts, and makes the same callbacks with the same arguments (strings
 *    unescaped byte for byte) and the same offsets at every bracket;
 *  - skipped values make no callback and are still checked, depth included;
 *  - review_decode() (fast path, reference on refusal) and
 *    review_decode_reference() give the same answer, the same message and
 *    the same decoded review, field by field; and the fast path alone
 *    accepts every body the reference accepts, with the same review.
 * Inputs are heap copies of exactly their length, so ASan sees a read past
 * the end.
 */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"
#include "fixture_file.h"
#include "row_check.h"

#include "jscan_ref.h"

#define DEPTH JREF_DEPTH

/* Every request fixture and every fuzz input the decoder has met. */
static const char *const corpus_globs[] = {
    "tests/fixtures/*.json",         "bench/fixtures/*.json",
    "tests/fuzz/corpus/review/*",    "tests/fuzz/corpus/jcheck/*",
    "tests/fixtures/objects/*.json",
};

typedef void (*input_fn)(const char *name, const char *s, size_t len, void *ctx);

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Calls f on the text, then on n mutants of it (a fixed seed: a run repeats);
 * fewer for a large text, so that each file costs about as much. */
static void with_mutants(const char *name, const char *b, size_t len, long n, input_fn f, void *ctx)
{
    if (len > 0 && n > (long)(200000 / len) + 20)
        n = (long)(200000 / len) + 20;
    static const char sig[] = "{}[]\",:\\ \t\n0-.eEtfnu\x01\x7f\x80\xc3\xed\xa0\xf4";
    static const char *const snippets[] = {"\\u00e9", "\\n",  "\\ud83d\\ude00", "\\u0000",
                                           "\\\"",    "\\/",  "\xc3\xa9",       "\\ud800",
                                           "\\udc00", "\\u00", "\xf0\x9f\x98\x80"};
    char *exact = malloc(len > 0 ? len : 1);
    assert_non_null(exact);
    memcpy(exact, b, len);
    f(name, exact, len, ctx);
    free(exact);
    uint64_t x = 0x9e3779b97f4a7c15u ^ len;
    char *m = malloc(len + 16);
    assert_non_null(m);
    for (long k = 0; k < n && len > 0; k++) {
        uint64_t r = rng_next(&x);
        size_t pos = (size_t)(r >> 8) % len, ml = len;
        memcpy(m, b, len);
        switch (r % 4) {
        case 0:
            m[pos] = sig[(r >> 40) % (sizeof(sig) - 1)];
            break;
        case 1:
            memmove(m + pos + 1, m + pos, len - pos);
            m[pos] = sig[(r >> 40) % (sizeof(sig) - 1)];
            ml = len + 1;
            break;
        case 2:
            memmove(m + pos, m + pos + 1, len - pos - 1);
            ml = len - 1;
            break;
        default: {
            const char *sn = snippets[(r >> 40) % (sizeof(snippets) / sizeof(snippets[0]))];
            size_t sl = strlen(sn);
            memmove(m + pos + sl, m + pos, len - pos);
            memcpy(m + pos, sn, sl);
            ml = len + sl;
            break;
        }
        }
        char *copy = malloc(ml > 0 ? ml : 1);
        assert_non_null(copy);
        memcpy(copy, m, ml);
        f(name, copy, ml, ctx);
        free(copy);
    }
    free(m);
}

static void each_input(const char *const *cases, size_t n_cases, long mutants, input_fn f, void *ctx)
{
    for (size_t i = 0; i < n_cases; i++)
        with_mutants(cases[i], cases[i], strlen(cases[i]), mutants, f, ctx);
    for (size_t g = 0; g < sizeof(corpus_globs) / sizeof(corpus_globs[0]); g++) {
        glob_t gl;
        assert_int_equal(glob(corpus_globs[g], 0, NULL, &gl), 0);
        for (size_t i = 0; i < gl.gl_pathc; i++) {
            size_t len;
            char *b = fixture_file_read(gl.gl_pathv[i], &len);
            with_mutants(gl.gl_pathv[i], b, len, mutants, f, ctx);
            free(b);
        }
        globfree(&gl);
    }
}

/* Small texts on the edges of the grammar; each is also mutated. */
static const char *const cases[] = {
    "{}", "[]", " {} ", "{\"a\":1}", "[1,2,3]", "{\"a\":[]}", "{\"a\":{}}", "\"x\"", "1", "-0.5e+3",
    "true", "false", "null", "[true,false,null]", "{\"a\":-0,\"b\":1E9,\"c\":0.25}",
    "{\"k\\u0061y\":\"v\\n\\t\\\\\\/\\\"\\b\\f\\r\"}", "[\"\\ud83d\\ude00\",\"\\u0000\",\"\\u00e9\"]",
    "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]",
    /* the edges of each UTF-8 length, escaped */
    "[\"\\u007f\\u0080\\u07ff\\u0800\\uffff\\ud800\\udc00\\udbff\\udfff\\uD83D\\uDE00\"]", "{\"a\":1,}", "[1,]", "{,}", "[01]", "[1.]",
    "[.5]", "[1e]", "[-]", "{\"a\" 1}", "{\"a\":}", "{1:2}", "[\"\\x\"]", "[\"\\ud800\"]",
    "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[\"\x01\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]",
    "{}x", "{} {}", "{}\"", "[", "{\"a\"", "\v{}", "{\"skip\":[1,{\"x\":[{}]}],\"b\":2}",
    "{\"skip\":\"\\ud800\"}", "{\"skip\":[1,]}", "{\"skip\":{\"a\":tru}}",
    /* a key twice in one object, read, skipped, escaped; and the same key in
     * different objects, which is no repeat */
    "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "{\"\\u0061\":1,\"a\":2}",
    "{\"\":1,\"\":2}", "{\"a\\u0000\":1,\"a\":2}", "{\"skip\":{\"x\":1,\"x\":2}}",
    "{\"skip\":[{\"x\":1},{\"x\":1}]}", "{\"a\":{\"a\":{\"a\":1}},\"b\":{\"a\":1}}",
    "{\"a\":{\"b\":1},\"c\":2,\"a\":3}",
    "{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,"
    "\"k9\":9,\"ka\":0,\"kb\":0,\"kc\":0,\"kd\":0,\"ke\":0,\"kf\":0,\"kg\":0,\"kh\":0,"
    "\"ki\":{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,"
    "\"k8\":8,\"k9\":9,\"ka\":0,\"kb\":0,\"kc\":0,\"kd\":0,\"ke\":0,\"kf\":0,\"kg\":0},"
    "\"kj\":0,\"k\\u0030\":0}",
    /* keys around the 16 bytes of jscan's one-load path and of jkeys' tag:
     * 15, 16 and 17 bytes, one repeated; keys that share a tag (the same
     * first 16 and last 8 bytes and length) or differ in one escape; a
     * short key the last in the text */
    "{\"abcdefghijklmno\":1,\"abcdefghijklmnop\":2,\"abcdefghijklmnopq\":3}",
    "{\"abcdefghijklmno\":1,\"abcdefghijklmnop\":2,\"abcdefghijklmno\":3}",
    "{\"abcdefghijklmnop\":1,\"abcdefghijklmno\":2,\"abcdefghijklmnop\":3}",
    "{\"0123456789abcdefXXXXXXX_last8by\":1,\"0123456789abcdefYYYYYYY_last8by\":2}",
    "{\"0123456789abcdefXXXXXXX_last8by\":1,\"0123456789abcdefYYYYYYY_last8by\":2,"
    "\"0123456789abcdefXXXXXXX_last8by\":3}",
    "{\"abcdefghijklmnopqrs\":1,\"abcdefghijklmnopqr\\u0073\":2}",
    "{\"s\\u0068ort\":{},\"short\":[]}", "{\"k\":{\"k\":1,\"q\":2},\"q\":{\"k\":3},\"k\":4}",
};

/* ---- jscan against the reference --------------------------------------- */

typedef struct tally {
    long inputs, accepted;
} tally;

static void same_events(const char *name, const char *s, size_t len, void *ctx)
{
    tally *t = ctx;
    strbuf want = {0}, got = {0};
    int w = jref_reference(s, len, &want);
    int g = jref_scan(s, len, NULL, &got);
    ROW_CHECK(name, g != JSCAN_STOPPED, "the recorder never stops a scan");
    ROW_CHECK(name, (w == 0) == (g == JSCAN_OK), "%.*s: reference %s, jscan %s", (int)len, s,
              w == 0 ? "accepts" : "refuses", g == JSCAN_OK ? "accepts" : "refuses");
    if (w == 0)
        ROW_CHECK(name, want.data != NULL && got.data != NULL && strcmp(want.data, got.data) == 0,
                  "%.*s:\nreference %s\njscan     %s", (int)len, s, want.data, got.data);
    t->inputs++;
    t->accepted += w == 0;
    strbuf_free(&want);
    strbuf_free(&got);
}

static void test_events_match_yajl(void **state)
{
    (void)state;
    tally t = {0};
    each_input(cases, sizeof(cases) / sizeof(cases[0]), 300, same_events, &t);
    print_message("%ld inputs, %ld accepted\n", t.inputs, t.accepted);
    /* the mutants must reach both answers, or the check proves little */
    assert_true(t.accepted > t.inputs / 10);
    assert_true(t.accepted < t.inputs - t.inputs / 10);
}

/* A callback that returns 0 stops the scan there, whatever follows. */
static int stop_at_key(void *c, const unsigned char *s, size_t n)
{
    (void)s;
    (void)n;
    (*(int *)c)++;
    return 0;
}

static void test_callback_stops(void **state)
{
    (void)state;
    static const yajl_callbacks stopping = {.yajl_map_key = stop_at_key};
    static const char *const texts[] = {"{\"a\":1,\"b\":2}", "{\"a\":[1,}"};
    for (size_t i = 0; i < 2; i++) {
        int keys = 0;
        jscan_sink sink = {.cb = &stopping, .ctx = &keys};
        int rc = jscan_parse(texts[i], strlen(texts[i]), DEPTH, &sink);
        ROW_CHECK(texts[i], rc == JSCAN_STOPPED && keys == 1, "rc %d after %d keys", rc, keys);
    }
}

/* ---- skipped values ------------------------------------------------------ */

typedef struct skip_row {
    const char *text;
    int rc;
    const char *events; /* with "skip" values skipped; NULL: not compared */
} skip_row;

static void test_skipped_values(void **state)
{
    (void)state;
    static const skip_row rows[] = {
        {"{\"skip\":[1,{\"x\":[{}]}],\"b\":2}", JSCAN_OK, "{@1 k\"skip\" k\"b\" n2 }@29 "},
        {"{\"skip\":\"\\ud800\"}", JSCAN_REFUSED, NULL},    /* a lone surrogate, unread */
        {"{\"skip\":[1,]}", JSCAN_REFUSED, NULL},           /* grammar, unread */
        {"{\"skip\":{\"a\":tru}}", JSCAN_REFUSED, NULL},
        {"{\"skip\":\"\xc0\xaf\"}", JSCAN_REFUSED, NULL},   /* overlong UTF-8, unread */
        {"{\"skip\":1}x", JSCAN_REFUSED, NULL},
        {"[{\"skip\":{}},{\"skip\":[]}]", JSCAN_OK,
         "[@1 {@2 k\"skip\" }@12 {@14 k\"skip\" }@24 ]@25 "},
        /* a repeated key is refused in a value no node reads too */
        {"{\"skip\":{\"x\":1,\"x\":2}}", JSCAN_REFUSED, NULL},
        {"{\"skip\":[{\"x\":{\"y\":1,\"\\u0079\":2}}]}", JSCAN_REFUSED, NULL},
        {"{\"skip\":1,\"skip\":2}", JSCAN_REFUSED, NULL},
        {"{\"skip\":[{\"x\":1},{\"x\":1}],\"b\":{\"x\":1}}", JSCAN_OK,
         "{@1 k\"skip\" k\"b\" {@31 k\"x\" n1 }@37 }@38 "},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const skip_row *row = &rows[i];
        strbuf ev = {0};
        int rc = jref_scan(row->text, strlen(row->text), jref_skip_key, &ev);
        ROW_CHECK(row->text, rc == row->rc, "rc %d", rc);
        if (row->events != NULL)
            ROW_CHECK(row->text, ev.data != NULL && strcmp(ev.data, row->events) == 0, "events %s",
                      ev.data);
        strbuf_free(&ev);
    }
}

/* Depth counts inside a skipped value: DEPTH open containers in all pass,
 * one more is refused, skipped or not. */
static void test_skipped_depth(void **state)
{
    (void)state;
    for (int extra = 0; extra <= 1; extra++) {
        for (int skip = 0; skip <= 1; skip++) {
            /* {"skip": or {"open": (8 bytes), then arrays: DEPTH + extra
             * containers in all, the map included */
            int arrays = DEPTH - 1 + extra;
            size_t len = 8 + 2 * (size_t)arrays + 1;
            char *s = malloc(len);
            assert_non_null(s);
            memcpy(s, skip ? "{\"skip\":" : "{\"open\":", 8);
            memset(s + 8, '[', (size_t)arrays);
            memset(s + 8 + arrays, ']', (size_t)arrays);
            s[len - 1] = '}';
            strbuf ev = {0};
            int rc = jref_scan(s, len, jref_skip_key, &ev);
            char name[48];
            snprintf(name, sizeof(name), "skip=%d extra=%d", skip, extra);
            ROW_CHECK(name, rc == (extra ? JSCAN_REFUSED : JSCAN_OK), "rc %d", rc);
            strbuf_free(&ev);
            free(s);
        }
    }
}

/* Everything skipped (the top-level value too): a check with no callback. */
static int always(void *c)
{
    (void)c;
    return 1;
}

static void same_verdict_unread(const char *name, const char *s, size_t len, void *ctx)
{
    (void)ctx;
    strbuf want = {0}, got = {0};
    int w = jref_reference(s, len, &want);
    int g = jref_scan(s, len, always, &got);
    ROW_CHECK(name, (w == 0) == (g == JSCAN_OK), "%.*s: reference %s, jscan (all skipped) %s",
              (int)len, s, w == 0 ? "accepts" : "refuses", g == JSCAN_OK ? "accepts" : "refuses");
    ROW_CHECK(name, got.data == NULL, "callbacks on a skipped value: %s", got.data);
    strbuf_free(&want);
    strbuf_free(&got);
}

static void test_check_only(void **state)
{
    (void)state;
    each_input(cases, sizeof(cases) / sizeof(cases[0]), 100, same_verdict_unread, NULL);
}

/* ---- review_decode: the two paths -------------------------------------- */

static void same_review(const char *name, const char *s, size_t len, void *ctx)
{
    tally *t = ctx;
    arena a;
    arena_init(&a);
    review fast, ref;
    char err_fast[256], err_ref[256];
    int f = review_decode(&fast, s, len, &a, err_fast, sizeof(err_fast));
    int r = review_decode_reference(&ref, s, len, &a, err_ref, sizeof(err_ref));
    ROW_CHECK(name, f == r, "%.*s: review_decode %d, reference %d (%s)", (int)len, s, f, r,
              err_ref);
    ROW_CHECK(name, strcmp(err_fast, err_ref) == 0, "messages \"%s\" and \"%s\"", err_fast,
              err_ref);
    if (r == 0) {
        char diff[512];
        ROW_CHECK(name, !jref_review_diff(&fast, &ref, diff, sizeof(diff)), "%.*s: %s", (int)len,
                  s, diff);
        /* and the fast path took it itself: no needless fall back */
        review alone;
        ROW_CHECK(name, review_decode_fast(&alone, s, len, &a) == 0,
                  "%.*s: the fast path refuses what the reference accepts", (int)len, s);
        ROW_CHECK(name, !jref_review_diff(&alone, &ref, diff, sizeof(diff)), "%.*s: %s",
                  (int)len, s, diff);
        t->accepted++;
    }
    t->inputs++;
    arena_free(&a);
}

/* Reviews whose read fields carry escapes: keys, the masters group, an
 * annotation, a condition's message. */
static const char *const review_cases[] = {
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"u\\u002d1\",\"userInfo\":{\"us\\u0065rname\":\"a\\u00e9\",\"groups\":"
    "[\"system\\u003amasters\"]},\"resource\":{\"resource\":\"pods\"},\"subResource\":\"status\","
    "\"object\":{\"metadata\":{\"name\":\"p\\/1\",\"annotations\":{\"apps.openyurt.io/"
    "update-strategy\":\"O\\u0054A\",\"x\":\"\\ud83d\\ude00\"}},\"spec\":{\"nodeName\":\"n\\t1\"},"
    "\"status\":{\"conditions\":[null,{\"type\":\"PodNeedUpgrade\",\"status\":\"True\","
    "\"message\":\"say \\\"hi\\\"\\u0000\"},{\"type\":\"PodImageReady\",\"reason\":"
    "\"PrePull\\u0052equested\"}]}},\"oldObject\":null}}",
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"x\",\"object\":{\"spec\":{\"updateStrategy\":{\"type\":\"OnDelete\",\"rollingUpdate\""
    ":{\"maxSurge\":1}}}}}}",
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"x\",\"object\":{\"spec\":{\"updateStrategy\":\"OnDelete\"}}}}",
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
    "\"uid\":\"x\",\"object\":{\"status\":{\"conditions\":{}}}}}",
};

static void test_review_paths_agree(void **state)
{
    (void)state;
    tally t = {0};
    each_input(review_cases, sizeof(review_cases) / sizeof(review_cases[0]), 300, same_review, &t);
    print_message("%ld inputs, %ld accepted\n", t.inputs, t.accepted);
    assert_true(t.accepted > t.inputs / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_match_yajl), cmocka_unit_test(test_callback_stops),
        cmocka_unit_test(test_skipped_values),
        cmocka_unit_test(test_skipped_depth),     cmocka_unit_test(test_check_only),
        cmocka_unit_test(test_review_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

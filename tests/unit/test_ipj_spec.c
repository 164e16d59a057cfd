/*
 * test_ipj_spec.c - ImagePullJob selectors matched against a node's labels
 * (lib/ipj_spec.h ipj_selector_matches), as Kubernetes matches a
 * LabelSelector: matchLabels and each matchExpressions operator, with the
 * label present, absent or different.  The decoder and the checks are
 * tested through the webhook (test_admit_imagepulljob.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ipj_spec.h"

/* A node's labels, sorted by key as kobj keeps them. */
static char *keys[] = {"arch", "pool", "zone"};
static char *values[] = {"arm64", "edge", "b"};

typedef struct match_row {
    const char *selector; /* the spec.selector object */
    int want;
} match_row;

static const match_row rows[] = {
    {"{}", 1},
    {"{\"matchLabels\":{}}", 1},
    {"{\"matchLabels\":{\"pool\":\"edge\"}}", 1},
    {"{\"matchLabels\":{\"pool\":\"edge\",\"zone\":\"b\"}}", 1},
    {"{\"matchLabels\":{\"pool\":\"core\"}}", 0},
    {"{\"matchLabels\":{\"rack\":\"1\"}}", 0},
    {"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}", 1},
    {"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}]}", 0},
    {"{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"In\",\"values\":[\"a\"]}]}", 0},
    {"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}", 1},
    {"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"b\"]}]}", 0},
    /* NotIn holds for a missing key */
    {"{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"NotIn\",\"values\":[\"b\"]}]}", 1},
    {"{\"matchExpressions\":[{\"key\":\"arch\",\"operator\":\"Exists\"}]}", 1},
    {"{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"Exists\"}]}", 0},
    {"{\"matchExpressions\":[{\"key\":\"rack\",\"operator\":\"DoesNotExist\"}]}", 1},
    {"{\"matchExpressions\":[{\"key\":\"arch\",\"operator\":\"DoesNotExist\"}]}", 0},
    /* every requirement must hold */
    {"{\"matchLabels\":{\"pool\":\"edge\"},\"matchExpressions\":[{\"key\":\"arch\","
     "\"operator\":\"In\",\"values\":[\"amd64\"]}]}",
     0},
    /* a key that is a prefix of a label's, or longer */
    {"{\"matchLabels\":{\"poo\":\"edge\"}}", 0},
    {"{\"matchLabels\":{\"pools\":\"edge\"}}", 0},
};

/* A spec with only an image and the selector object at field, decoded
 * into *s (arena memory). */
static void decode_selector(ipj_spec *s, const char *field, const char *selector, arena *a,
                            size_t row)
{
    char spec[512], err[256];
    snprintf(spec, sizeof(spec), "{\"image\":\"x\",\"%s\":%s}", field, selector);
    if (ipj_decode(s, spec, strlen(spec), a, err, sizeof(err)) != 0)
        fail_msg("row %zu: %s", row, err);
}

static void test_matches(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ipj_spec s;
        decode_selector(&s, "selector", rows[i].selector, &a, i);
        assert_null(ipj_selector_error(&s.selector, &a));
        int got = ipj_selector_matches(&s.selector, keys, values, 3);
        if (got != rows[i].want)
            fail_msg("row %zu %s: got %d, want %d", i, rows[i].selector, got, rows[i].want);
        /* a node without labels: only requirements a missing key meets */
        int bare = ipj_selector_matches(&s.selector, NULL, NULL, 0);
        int want_bare = strstr(rows[i].selector, "\"matchLabels\":{\"") == NULL &&
                        strstr(rows[i].selector, "\"In\"") == NULL &&
                        strstr(rows[i].selector, "\"Exists\"") == NULL;
        if (bare != want_bare)
            fail_msg("row %zu %s on no labels: got %d", i, rows[i].selector, bare);
        arena_free(&a);
    }
}

/* The selector as a labelSelector query, in Kubernetes' syntax. */
static void test_selector_string(void **state)
{
    (void)state;
    static const struct {
        const char *selector, *want;
    } strings[] = {
        {"{}", ""},
        {"{\"matchLabels\":{\"b\":\"2\",\"a\":\"1\"}}", "a=1,b=2"},
        {"{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]},"
         "{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":[\"x\"]},"
         "{\"key\":\"gpu\",\"operator\":\"Exists\"},"
         "{\"key\":\"old\",\"operator\":\"DoesNotExist\"}]}",
         "zone in (a,b),tier notin (x),gpu,!old"},
        {"{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"k\","
         "\"operator\":\"Exists\"}]}",
         "app=web,k"},
    };
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        arena a;
        arena_init(&a);
        ipj_spec s;
        decode_selector(&s, "podSelector", strings[i].selector, &a, i);
        const char *got = ipj_selector_string(&s.pod_selector, &a);
        assert_non_null(got);
        if (strcmp(got, strings[i].want) != 0)
            fail_msg("row %zu: got \"%s\", want \"%s\"", i, got, strings[i].want);
        arena_free(&a);
    }
}

/* A selector is written in one pass, and not past the bound: 1 000
 * values make some 5 000 bytes, which no pod list is asked with. */
static void test_selector_string_bound(void **state)
{
    (void)state;
    size_t cap = 16 * 1024, at = 0;
    char *sel = malloc(cap);
    assert_non_null(sel);
    at += (size_t)snprintf(sel + at, cap - at,
                           "{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\",\"values\":[");
    for (int i = 0; i < 1000; i++)
        at += (size_t)snprintf(sel + at, cap - at, "%s\"v%03d\"", i > 0 ? "," : "", i);
    snprintf(sel + at, cap - at, "]}]}");
    char *spec = malloc(cap + 64);
    assert_non_null(spec);
    snprintf(spec, cap + 64, "{\"image\":\"x\",\"podSelector\":%s}", sel);
    arena a;
    arena_init(&a);
    ipj_spec s;
    char err[256];
    assert_int_equal(ipj_decode(&s, spec, strlen(spec), &a, err, sizeof(err)), 0);
    size_t n = ipj_selector_string_len(&s.pod_selector);
    assert_int_equal(n, strlen("k in (") + 1000 * 4 + 999 + 1);
    assert_true(n > IPJ_SELECTOR_STRING_MAX);
    assert_null(ipj_selector_string(&s.pod_selector, &a));
    arena_free(&a);
    free(spec);
    free(sel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_selector_string),
        cmocka_unit_test(test_selector_string_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

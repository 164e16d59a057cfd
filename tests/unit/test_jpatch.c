/*
 * test_jpatch.c - the RFC 6902 JSON Patch builder: RFC 6901 pointer
 * escaping, string values escaped as JSON, raw values spliced verbatim, the
 * empty patch, and what happens when memory runs out half-way.
 */
#include "review_fixture.h"

#include "jpatch.h"

/* RFC 6901 §4: "~1" -> "/" first, then "~0" -> "~".  Returns the tokens
 * joined with '\n' (none of ours contain one), or NULL for a malformed
 * pointer. */
static char *pointer_tokens(arena *a, const char *ptr)
{
    size_t n = strlen(ptr);
    char *out = arena_alloc(a, n + 1), *o = out;
    if (n == 0) {
        *o = '\0';
        return out;
    }
    if (ptr[0] != '/')
        return NULL;
    for (size_t i = 1; i <= n; i++) {
        if (i == n) {
            break;
        } else if (ptr[i] == '/') {
            *o++ = '\n';
        } else if (ptr[i] == '~') {
            if (ptr[i + 1] == '0')
                *o++ = '~';
            else if (ptr[i + 1] == '1')
                *o++ = '/';
            else
                return NULL;
            i++;
        } else {
            *o++ = ptr[i];
        }
    }
    *o = '\0';
    return out;
}

typedef struct pointer_row {
    const char *name;
    const char *tokens[4];
    size_t n;
    const char *want;
} pointer_row;

static const pointer_row pointers[] = {
    {"no tokens: the whole document", {NULL}, 0, ""},
    {"one plain token", {"status"}, 1, "/status"},
    {"empty token", {""}, 1, "/"},
    {"two empty tokens", {"", ""}, 2, "//"},
    {"empty token in the middle", {"a", "", "b"}, 3, "/a//b"},
    {"tilde", {"m~n"}, 1, "/m~0n"},
    {"slash", {"a/b"}, 1, "/a~1b"},
    {"tilde then slash", {"~/"}, 1, "/~0~1"},
    {"slash then tilde", {"/~"}, 1, "/~1~0"},
    {"a token that looks escaped", {"~1"}, 1, "/~01"},
    {"another one", {"~0~1"}, 1, "/~00~01"},
    {"only slashes", {"//"}, 1, "/~1~1"},
    {"only tildes", {"~~"}, 1, "/~0~0"},
    {"an annotation key", {"metadata", "annotations", OTA_ANN_UPDATE_STRATEGY}, 3,
     "/metadata/annotations/apps.openyurt.io~1update-strategy"},
    {"a condition field", {"status", "conditions", "3", "reason"}, 4,
     "/status/conditions/3/reason"},
    {"append", {"status", "conditions", "-"}, 3, "/status/conditions/-"},
    {"UTF-8 and JSON specials pass through", {"caf\xc3\xa9", "a\"b\\c", "%2F"}, 3,
     "/caf\xc3\xa9/a\"b\\c/%2F"},
};

static void test_pointer_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(pointers) / sizeof(pointers[0]); i++) {
        const pointer_row *row = &pointers[i];
        arena a;
        arena_init(&a);
        char *got = jpatch_pointer(&a, row->tokens, row->n);
        FX_CHECK(row->name, got != NULL && strcmp(got, row->want) == 0, "got \"%s\", want \"%s\"",
                 got, row->want);
        /* ... and an RFC 6901 reader gets the tokens back. */
        char joined[128] = "";
        for (size_t t = 0; t < row->n; t++) {
            if (t > 0)
                strcat(joined, "\n");
            strcat(joined, row->tokens[t]);
        }
        char *back = pointer_tokens(&a, got);
        FX_CHECK(row->name, back != NULL && strcmp(back, joined) == 0, "decodes to \"%s\"", back);
        arena_free(&a);
    }
}

static const char *finish(jpatch *p)
{
    const char *out = NULL;
    size_t len = 0;
    assert_int_equal(jpatch_finish(p, &out, &len), 0);
    assert_non_null(out);
    assert_int_equal(len, strlen(out));
    return out;
}

static void test_empty_patch(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    jpatch p;
    assert_int_equal(jpatch_init(&p, &a), 0);
    assert_int_equal(p.n_ops, 0);
    assert_string_equal(finish(&p), "[]");
    /* finished is finished */
    const char *out;
    size_t len;
    assert_int_equal(jpatch_finish(&p, &out, &len), -1);
    arena_free(&a);
}

static void test_operations_in_order(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    jpatch p;
    assert_int_equal(jpatch_init(&p, &a), 0);
    const char *t[] = {"metadata", "annotations", "a/b~c"};
    jpatch_add_string(&p, "add", jpatch_pointer(&a, t, 3), "v", 1);
    jpatch_add_raw(&p, "replace", "/spec/updateStrategy", "{\"type\":\"OnDelete\"}", 19);
    jpatch_add_string(&p, "remove-ish", "", "", 0);
    jpatch_add_raw(&p, "add", "/n", "42", 2);
    assert_int_equal(p.n_ops, 4);
    assert_string_equal(
        finish(&p),
        "[{\"op\":\"add\",\"path\":\"/metadata/annotations/a~1b~0c\",\"value\":\"v\"},"
        "{\"op\":\"replace\",\"path\":\"/spec/updateStrategy\",\"value\":{\"type\":\"OnDelete\"}},"
        "{\"op\":\"remove-ish\",\"path\":\"\",\"value\":\"\"},"
        "{\"op\":\"add\",\"path\":\"/n\",\"value\":42}]");
    arena_free(&a);
}

/* Raw values are spliced byte for byte: whitespace, escapes, key order. */
static void test_raw_values_verbatim(void **state)
{
    (void)state;
    static const char *const raws[] = {
        "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\"}",
        "{ \"message\" : \"a\\u0041\\n\",\n\t\"type\": \"X\" }",
        "[1,2,{\"a\":null}]",
        "null",
        "\"a string\"",
        "-1.5e10",
        "{}",
    };
    for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
        arena a;
        arena_init(&a);
        jpatch p;
        assert_int_equal(jpatch_init(&p, &a), 0);
        /* a view: the bytes after len must not leak in */
        char *buf = arena_printf(&a, "%sGARBAGE", raws[i]);
        jpatch_add_raw(&p, "add", "/x", buf, strlen(raws[i]));
        char *want = arena_printf(&a, "[{\"op\":\"add\",\"path\":\"/x\",\"value\":%s}]", raws[i]);
        const char *got = finish(&p);
        FX_CHECK(raws[i], strcmp(got, want) == 0, "got %s", got);
        /* still one well-formed JSON document */
        char err[128];
        yajl_val v = yajl_tree_parse(got, err, sizeof(err));
        FX_CHECK(raws[i], v != NULL, "%s", err);
        yajl_tree_free(v);
        arena_free(&a);
    }
}

typedef struct string_row {
    const char *name;
    const char *value;
    size_t len;
    const char *json; /* how the value must be written */
} string_row;

#define S(name, v, json) {name, v, sizeof(v) - 1, json}

static const string_row strings[] = {
    S("plain", "WaitPullImage", "\"WaitPullImage\""),
    S("empty", "", "\"\""),
    S("quote", "a\"b", "\"a\\\"b\""),
    S("backslash", "a\\b", "\"a\\\\b\""),
    S("quote and backslash", "\\\"", "\"\\\\\\\"\""),
    S("slash is not escaped", "controllerrevision: a/b", "\"controllerrevision: a/b\""),
    S("newline, tab, CR", "a\nb\tc\rd", "\"a\\nb\\tc\\rd\""),
    S("backspace, form feed", "\b\f", "\"\\b\\f\""),
    S("other control characters", "\x01\x1f", "\"\\u0001\\u001F\""),
    S("NUL inside", "a\0b", "\"a\\u0000b\""),
    S("DEL is not a control character in JSON", "\x7f", "\"\x7f\""),
    S("UTF-8 two bytes", "caf\xc3\xa9", "\"caf\xc3\xa9\""),
    S("UTF-8 four bytes", "\xf0\x9f\x9a\x80", "\"\xf0\x9f\x9a\x80\""),
    S("U+2028 passes as is", "\xe2\x80\xa8", "\"\xe2\x80\xa8\""),
};

static void test_string_values_escaped(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        const string_row *row = &strings[i];
        arena a;
        arena_init(&a);
        jpatch p;
        assert_int_equal(jpatch_init(&p, &a), 0);
        jpatch_add_string(&p, "add", "/v", row->value, row->len);
        const char *got = finish(&p);
        char *want = arena_printf(&a, "[{\"op\":\"add\",\"path\":\"/v\",\"value\":%s}]", row->json);
        FX_CHECK(row->name, strcmp(got, want) == 0, "got %s, want %s", got, want);
        /* A JSON reader gets the very bytes back (yajl_tree stops at a NUL,
         * so that row compares up to it). */
        char err[128];
        yajl_val v = yajl_tree_parse(got, err, sizeof(err));
        FX_CHECK(row->name, v != NULL, "%s", err);
        yajl_val value = v->u.array.values[0];
        const char *s = YAJL_GET_STRING(yajl_tree_get(value, (const char *[]){"value", NULL},
                                                      yajl_t_string));
        FX_CHECK(row->name, s != NULL && strncmp(s, row->value, row->len) == 0, "read back \"%s\"",
                 s);
        yajl_tree_free(v);
        arena_free(&a);
    }
}

/* Paths and ops are strings too: a path with a quote stays one string. */
static void test_path_is_escaped_as_json(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    jpatch p;
    assert_int_equal(jpatch_init(&p, &a), 0);
    const char *t[] = {"a\"b\\c"};
    jpatch_add_raw(&p, "add", jpatch_pointer(&a, t, 1), "1", 1);
    assert_string_equal(finish(&p), "[{\"op\":\"add\",\"path\":\"/a\\\"b\\\\c\",\"value\":1}]");
    arena_free(&a);
}

/* A NULL path (jpatch_pointer out of memory) fails the whole patch. */
static void test_null_path_fails_patch(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    jpatch p;
    assert_int_equal(jpatch_init(&p, &a), 0);
    jpatch_add_string(&p, "add", "/ok", "v", 1);
    jpatch_add_string(&p, "add", NULL, "v", 1);
    assert_true(p.failed);
    jpatch_add_raw(&p, "add", "/later", "1", 1); /* ignored once failed */
    const char *out = "untouched";
    size_t len = 7;
    assert_int_equal(jpatch_finish(&p, &out, &len), -1);
    assert_string_equal(out, "untouched");
    arena_free(&a);

    arena_init(&a);
    assert_int_equal(jpatch_init(&p, &a), 0);
    jpatch_add_raw(&p, "add", NULL, "1", 1);
    assert_int_equal(jpatch_finish(&p, &out, &len), -1);
    arena_free(&a);
}

/* jpatch_pointer out of memory: NULL, and the patch that gets it fails.
 * (yajl's own allocations abort on failure; test_arena.c checks that.) */
static void test_pointer_out_of_memory(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    jpatch p;
    assert_int_equal(jpatch_init(&p, &a), 0);
    jpatch_add_string(&p, "add", "/ok", "v", 1);
    arena_set_limit(&a, a.used);
    const char *t[] = {"status", "conditions", "0"};
    const char *path = jpatch_pointer(&a, t, 3);
    assert_null(path);
    jpatch_add_raw(&p, "add", path, "1", 1);
    const char *out;
    size_t len;
    assert_int_equal(jpatch_finish(&p, &out, &len), -1);
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pointer_table),
        cmocka_unit_test(test_empty_patch),
        cmocka_unit_test(test_operations_in_order),
        cmocka_unit_test(test_raw_values_verbatim),
        cmocka_unit_test(test_string_values_escaped),
        cmocka_unit_test(test_path_is_escaped_as_json),
        cmocka_unit_test(test_null_path_fails_patch),
        cmocka_unit_test(test_pointer_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_json.c - lib/json's writer: what it writes (escapes, members,
 * nesting, indentation), the same text in arena and in malloc memory, and
 * every way a document goes wrong giving NULL instead of half a document: a
 * yajl_gen state error (a number where a key belongs, a second document), a
 * container closed that is not open or of the other kind, one left open,
 * nesting past JSON_MAX_DEPTH, a NULL string.  Then the tree parser's depth
 * bound (counted outside strings only) and its errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arena.h"
#include "json.h"

/* ---- writer ---------------------------------------------------------------- */

typedef void (*write_fn)(json_writer *w);

typedef struct write_row {
    const char *name;
    write_fn write;
    const char *want; /* NULL: the writer fails */
} write_row;

static void w_empty_map(json_writer *w)
{
    json_map_open(w, NULL);
    json_map_close(w);
}

static void w_escapes(json_writer *w)
{
    json_array_open(w, NULL);
    json_str(w, "a\"b");
    json_str(w, "back\\slash");
    json_str(w, "tab\there\nnew line");
    json_str(w, "\x01\x1f");
    json_str(w, "caf\xc3\xa9 </x>");
    json_str(w, "");
    json_strn(w, "nul\0inside", 10);
    json_array_close(w);
}

static void w_members(json_writer *w)
{
    json_map_open(w, NULL);
    json_kv_str(w, "kind", "Event");
    json_kv_int(w, "count", 1);
    json_kv_int(w, "negative", -42);
    json_kv_int(w, "max", 9223372036854775807LL);
    json_kv_bool(w, "yes", 1);
    json_kv_bool(w, "no", 0);
    json_map_open(w, "metadata");
    json_map_close(w);
    json_array_open(w, "items");
    json_map_open(w, NULL);
    json_kv_str(w, "name", "x");
    json_map_close(w);
    json_int(w, 7);
    json_array_close(w);
    json_map_close(w);
}

static void w_views(json_writer *w)
{
    static const char text[] = "uid-1234 and what follows";
    json_array_open(w, NULL);
    json_sv(w, (sv){text, 8});
    json_sv(w, SV_NULL);
    json_sv(w, (sv){NULL, 5}); /* absent whatever its length */
    json_sv(w, (sv){text, 0});
    json_array_close(w);
}

static void w_indented(json_writer *w)
{
    json_writer_indent(w, "  ");
    json_map_open(w, NULL);
    json_kv_str(w, "a", "b");
    json_array_open(w, "c");
    json_int(w, 1);
    json_array_close(w);
    json_map_close(w);
}

static void w_close_unopened_map(json_writer *w)
{
    json_map_close(w);
}

static void w_close_unopened_map_after_one(json_writer *w)
{
    json_map_open(w, NULL);
    json_map_close(w);
    json_map_close(w);
}

static void w_close_array_as_map(json_writer *w)
{
    json_array_open(w, NULL);
    json_map_close(w);
}

static void w_close_map_as_array(json_writer *w)
{
    json_map_open(w, NULL);
    json_array_close(w);
}

/* yajl_gen_keys_must_be_strings */
static void w_number_as_key(json_writer *w)
{
    json_map_open(w, NULL);
    json_int(w, 1);
    json_int(w, 2);
    json_map_close(w);
}

static void w_bool_as_key(json_writer *w)
{
    json_map_open(w, NULL);
    json_bool(w, 1);
    json_str(w, "v");
    json_map_close(w);
}

/* yajl_gen_generation_complete */
static void w_second_document(json_writer *w)
{
    json_map_open(w, NULL);
    json_map_close(w);
    json_map_open(w, NULL);
    json_map_close(w);
}

static void w_left_open(json_writer *w)
{
    json_map_open(w, NULL);
    json_array_open(w, "a");
    json_array_close(w);
}

static void w_null_value(json_writer *w)
{
    json_map_open(w, NULL);
    json_kv_str(w, "namespace", NULL);
    json_map_close(w);
}

static void w_null_key(json_writer *w)
{
    json_map_open(w, NULL);
    json_kv_str(w, NULL, "v");
    json_map_close(w);
}

static void w_null_map_key(json_writer *w)
{
    json_map_open(w, NULL);
    json_str(w, "k");
    json_map_open(w, NULL); /* a map as the value of k: fine */
    json_map_close(w);
    json_map_open(w, NULL); /* a map where a key belongs */
    json_map_close(w);
    json_map_close(w);
}

static void w_null_strn(json_writer *w)
{
    json_array_open(w, NULL);
    json_strn(w, NULL, 0);
    json_array_close(w);
}

/* Whatever follows a failure, the result stays NULL. */
static void w_sticky(json_writer *w)
{
    json_map_close(w);
    json_map_open(w, NULL);
    json_kv_str(w, "a", "b");
    json_map_close(w);
}

static const write_row writes[] = {
    {"empty map", w_empty_map, "{}"},
    {"escapes", w_escapes,
     "[\"a\\\"b\",\"back\\\\slash\",\"tab\\there\\nnew line\",\"\\u0001\\u001F\","
     "\"caf\xc3\xa9 </x>\",\"\",\"nul\\u0000inside\"]"},
    {"members", w_members,
     "{\"kind\":\"Event\",\"count\":1,\"negative\":-42,\"max\":9223372036854775807,"
     "\"yes\":true,\"no\":false,\"metadata\":{},\"items\":[{\"name\":\"x\"},7]}"},
    {"string views", w_views, "[\"uid-1234\",\"\",\"\",\"\"]"},
    {"indented", w_indented, "{\n  \"a\": \"b\",\n  \"c\": [\n    1\n  ]\n}\n"},
    {"closing a map that is not open", w_close_unopened_map, NULL},
    {"closing a map once too often", w_close_unopened_map_after_one, NULL},
    {"closing an array as a map", w_close_array_as_map, NULL},
    {"closing a map as an array", w_close_map_as_array, NULL},
    {"a number where a key belongs", w_number_as_key, NULL},
    {"a boolean where a key belongs", w_bool_as_key, NULL},
    {"a map where a key belongs", w_null_map_key, NULL},
    {"a second document", w_second_document, NULL},
    {"a map left open", w_left_open, NULL},
    {"a NULL value", w_null_value, NULL},
    {"a NULL key", w_null_key, NULL},
    {"a NULL counted string", w_null_strn, NULL},
    {"writes after a failure", w_sticky, NULL},
};

static void check_text(const write_row *r, const char *how, const char *got, size_t len)
{
    if (r->want == NULL) {
        if (got != NULL)
            fail_msg("%s (%s): wrote \"%s\", want NULL", r->name, how, got);
        return;
    }
    if (got == NULL)
        fail_msg("%s (%s): NULL, want \"%s\"", r->name, how, r->want);
    if (strcmp(got, r->want) != 0)
        fail_msg("%s (%s):\n  got  %s\n  want %s", r->name, how, got, r->want);
    assert_int_equal(len, strlen(r->want));
}

static void test_write_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
        const write_row *r = &writes[i];
        arena a;
        arena_init(&a);
        json_writer w;
        assert_int_equal(json_writer_init(&w, &a), 0);
        r->write(&w);
        size_t len = 0;
        const char *text = json_writer_finish(&w, &len);
        check_text(r, "arena", text, len);
        arena_free(&a);

        assert_int_equal(json_writer_init(&w, NULL), 0);
        r->write(&w);
        char *copy = json_writer_take(&w);
        check_text(r, "malloc", copy, copy != NULL ? strlen(copy) : 0);
        free(copy);
    }
}

/* `depth` arrays, one inside the other, with 1 in the middle. */
static void write_nested(json_writer *w, unsigned depth)
{
    for (unsigned i = 0; i < depth; i++)
        json_array_open(w, NULL);
    json_int(w, 1);
    for (unsigned i = 0; i < depth; i++)
        json_array_close(w);
}

static void test_depth_bound(void **state)
{
    (void)state;
    json_writer w;
    assert_int_equal(json_writer_init(&w, NULL), 0);
    write_nested(&w, JSON_MAX_DEPTH);
    char *text = json_writer_take(&w);
    assert_non_null(text);
    assert_int_equal(strlen(text), 2 * JSON_MAX_DEPTH + 1);
    assert_int_equal(text[JSON_MAX_DEPTH], '1');
    free(text);

    assert_int_equal(json_writer_init(&w, NULL), 0);
    write_nested(&w, JSON_MAX_DEPTH + 1);
    assert_null(json_writer_take(&w));
}

/* A writer without an arena has no text to lend: only a copy. */
static void test_finish_needs_an_arena(void **state)
{
    (void)state;
    json_writer w;
    assert_int_equal(json_writer_init(&w, NULL), 0);
    w_empty_map(&w);
    size_t len = 99;
    assert_null(json_writer_finish(&w, &len));
    assert_int_equal(len, 99);
}

/* The arena text is NUL-terminated where *len says, and outlives the
 * generator; an abandoned writer frees its generator (ASan would tell). */
static void test_finish_and_free(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    json_writer w;
    assert_int_equal(json_writer_init(&w, &a), 0);
    w_members(&w);
    size_t len = 0;
    const char *text = json_writer_finish(&w, &len);
    assert_non_null(text);
    assert_int_equal(text[len], '\0');
    assert_int_equal(text[0], '{');
    assert_int_equal(text[len - 1], '}');
    /* finished: nothing more is written, a second finish gives nothing */
    json_str(&w, "x");
    assert_null(json_writer_finish(&w, &len));
    json_writer_free(&w);
    arena_free(&a);

    assert_int_equal(json_writer_init(&w, NULL), 0);
    json_map_open(&w, NULL);
    json_writer_free(&w);
    json_writer_free(&w); /* twice is harmless */
    assert_null(json_writer_take(&w));
}

/* ---- tree parser ----------------------------------------------------------- */

/* depth arrays ('[') or objects ('{', each {"a":...}) around inner */
static char *nested(int depth, char open, const char *inner)
{
    size_t n = (size_t)depth * 8 + strlen(inner) + 1;
    char *s = malloc(n);
    assert_non_null(s);
    size_t len = 0;
    for (int i = 0; i < depth; i++)
        len += (size_t)sprintf(s + len, "%s", open == '[' ? "[" : "{\"a\":");
    len += (size_t)sprintf(s + len, "%s", inner);
    for (int i = 0; i < depth; i++)
        s[len++] = open == '[' ? ']' : '}';
    s[len] = '\0';
    return s;
}

static void test_parse_depth(void **state)
{
    (void)state;
    char err[256];
    for (int o = 0; o < 2; o++) {
        char open = o == 0 ? '[' : '{';
        char *ok = nested(64, open, "1"), *deep = nested(65, open, "1");
        err[0] = '\0';
        yajl_val v = json_parse_tree(ok, strlen(ok), 64, err, sizeof(err));
        if (v == NULL)
            fail_msg("64 levels of %c refused: %s", open, err);
        yajl_tree_free(v);
        err[0] = '\0';
        assert_null(json_parse_tree(deep, strlen(deep), 64, err, sizeof(err)));
        assert_non_null(strstr(err, "64"));
        /* the bound is the caller's */
        v = json_parse_tree(deep, strlen(deep), 65, err, sizeof(err));
        assert_non_null(v);
        yajl_tree_free(v);
        assert_null(json_parse_tree(ok, strlen(ok), 63, err, sizeof(err)));
        free(ok);
        free(deep);
    }
}

typedef struct depth_row {
    const char *name;
    const char *json;
    int max_depth;
    int ok;
} depth_row;

static const depth_row depths[] = {
    /* brackets inside strings are text */
    {"brackets in a string", "{\"a\":\"[[[[{{{{\"}", 2, 1},
    {"brackets in a key", "{\"[[[[\":1}", 1, 1},
    {"escaped quote keeps the string open", "{\"a\":\"\\\"[[[[\"}", 1, 1},
    /* an escaped backslash ends before the quote, which closes the string:
     * the brackets after it count */
    {"escaped backslash then real nesting", "[\"\\\\\",[[1]]]", 2, 0},
    {"escaped backslash then allowed nesting", "[\"\\\\\",[[1]]]", 3, 1},
    {"siblings do not add up", "[[1],[2],[3],{\"a\":[4]}]", 3, 1},
    {"a unicode escape", "{\"a\":\"\\u005b\\u005b\"}", 1, 1},
};

static void test_parse_depth_strings(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
        const depth_row *r = &depths[i];
        char err[256] = "";
        yajl_val v = json_parse_tree(r->json, strlen(r->json), r->max_depth, err, sizeof(err));
        if ((v != NULL) != r->ok)
            fail_msg("%s: %s (%s)", r->name, v != NULL ? "accepted" : "refused", err);
        yajl_tree_free(v);
    }
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "{", "{\"a\":", "{\"a\" 1}", "{} x", "[1,]", "{'a':1}", "nul", "\"unterminated",
        "{\"a\":\"\\x\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[256] = "";
        yajl_val v = json_parse_tree(bad[i], strlen(bad[i]), 64, err, sizeof(err));
        if (v != NULL)
            fail_msg("accepted: %s", bad[i]);
        if (strstr(err, "error") == NULL)
            fail_msg("%s: no error message (\"%s\")", bad[i], err);
    }
    /* the text need not end in a NUL: only len bytes are read */
    const char buf[] = "{\"a\":[1,2]}   garbage that is not part of it";
    char err[256] = "";
    yajl_val v = json_parse_tree(buf, 11, 64, err, sizeof(err));
    assert_non_null(v);
    assert_true(YAJL_IS_ARRAY(yajl_tree_get(v, (const char *[]){"a", NULL}, yajl_t_any)));
    yajl_tree_free(v);
    /* the same bytes one short are an error */
    assert_null(json_parse_tree(buf, 10, 64, err, sizeof(err)));
}

/* An escaped NUL would cut a C string short unseen ("nginx:1.25\u0000x"
 * read as "nginx:1.25"): it reads as U+FFFD instead, no valid name or
 * image reference.  An escaped backslash before "u0000" is text. */
static void test_parse_escaped_nul(void **state)
{
    (void)state;
    static const struct {
        const char *json, *want;
    } rows[] = {
        {"{\"s\":\"nginx:1.25\\u0000x\"}", "nginx:1.25\xef\xbf\xbdx"},
        {"{\"s\":\"\\u0000\"}", "\xef\xbf\xbd"},
        {"{\"s\":\"a\\u0000\\u0000b\"}", "a\xef\xbf\xbd\xef\xbf\xbd" "b"},
        {"{\"s\":\"a\\\\u0000\"}", "a\\u0000"},  /* an escaped backslash, then text */
        {"{\"s\":\"a\\u00001\"}", "a\xef\xbf\xbd" "1"},
        {"{\"s\":\"\\u0041\"}", "A"},
        {"{\"s\":\"u0000\"}", "u0000"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char err[256] = "";
        yajl_val v = json_parse_tree(rows[i].json, strlen(rows[i].json), 8, err, sizeof(err));
        if (v == NULL) {
            fail_msg("%s: %s", rows[i].json, err);
            return;
        }
        const char *got = YAJL_GET_STRING(yajl_tree_get(v, (const char *[]){"s", NULL},
                                                        yajl_t_string));
        if (got == NULL || strcmp(got, rows[i].want) != 0)
            fail_msg("%s: read \"%s\"", rows[i].json, got != NULL ? got : "(none)");
        yajl_tree_free(v);
    }
    /* a key too: it cannot name a different member */
    const char key[] = "{\"spec\\u0000x\":1}";
    char err[256] = "";
    yajl_val v = json_parse_tree(key, strlen(key), 8, err, sizeof(err));
    if (v == NULL) {
        fail_msg("%s: %s", key, err);
        return;
    }
    assert_null(yajl_tree_get(v, (const char *[]){"spec", NULL}, yajl_t_any));
    yajl_tree_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_table),
        cmocka_unit_test(test_depth_bound),
        cmocka_unit_test(test_finish_needs_an_arena),
        cmocka_unit_test(test_finish_and_free),
        cmocka_unit_test(test_parse_depth),
        cmocka_unit_test(test_parse_depth_strings),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_escaped_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

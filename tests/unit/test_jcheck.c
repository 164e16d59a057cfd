/*
 * test_jcheck.c - the strict pass over request bodies (webhook/jcheck.c):
 * one table of bodies with what the pass says about each (refused with a
 * message, or where the value ends and where trailing bytes start), then
 * every special byte at every offset of the eight-byte fast path.
 *
 * The review decoder's own tests (test_review.c) check the same cases end
 * to end, with the parser's messages; these check the pass alone.  Bodies
 * are heap copies of exactly their length, so ASan sees a read past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jcheck.h"
#include "row_check.h"

typedef struct row {
    const char *name;
    const char *body;
    size_t len;        /* 0: strlen */
    int rc;
    const char *error; /* rc -1: the message */
    size_t end;        /* rc 0: r.end (SIZE_MAX: the whole body) */
    size_t trailing;   /* rc 0: r.trailing (SIZE_MAX: none) */
} row;

#define ALL SIZE_MAX
#define NONE SIZE_MAX
#define CTRL(hex, at)                                                                              \
    "invalid JSON (RFC 8259): control character " hex " outside a string at byte " #at            \
    "; only space, tab, line feed and carriage return separate tokens"
#define HIGH(esc, at)                                                                              \
    "invalid JSON (RFC 8259): \\u" esc " at byte " #at " is a lone UTF-16 high surrogate (it "     \
    "must be followed by a \\udc00-\\udfff escape)"
#define LOW(esc, at) "invalid JSON (RFC 8259): \\u" esc " at byte " #at " is a lone UTF-16 low surrogate"
#define UTF8(at) "the body is not valid UTF-8 (RFC 3629): bad byte sequence at byte " #at

static const row rows[] = {
    /* what passes, and where the value ends */
    {"an object", "{\"a\":[1,true,null,\"x\"]}", 0, 0, NULL, 23, NONE},
    {"the four whitespace bytes everywhere", " \t\r\n{ \"a\" :\t[ 1 ,\n2 ]\r} \t\r\n", 0, 0, NULL,
     23, NONE},
    {"brackets inside strings do not count", "{\"}]\":\"[{\\\"\"}", 0, 0, NULL, 13, NONE},
    {"an escaped backslash before the closing quote", "[\"\\\\\"]", 0, 0, NULL, 6, NONE},
    {"a surrogate pair", "[\"\\ud83d\\ude80\"]", 0, 0, NULL, 16, NONE},
    {"a pair in upper case", "[\"\\uDBFF\\uDFFF\"]", 0, 0, NULL, 16, NONE},
    {"an escaped NUL is a character like any other", "[\"a\\u0000b\"]", 0, 0, NULL, 12, NONE},
    {"raw UTF-8 at the table's edges", "[\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80"
     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"]", 0, 0, NULL, 25, NONE},
    {"a number at the top", "42 ", 0, 0, NULL, 2, NONE},
    {"a literal at the top", "\ttrue", 0, 0, NULL, 5, NONE},
    {"a string at the top", "\"a{\" ", 0, 0, NULL, 4, NONE},
    /* yajl took an unfinished token after a scalar too: found by
     * tests/fuzz/fuzz_jcheck.c (corpus/jcheck/crash-db3577c5...) */
    {"an unfinished string after a string", "\"k\"\";", 0, 0, NULL, 3, 3},
    {"an unfinished string after a number", "1\"abc", 0, 0, NULL, 1, 1},
    {"a word after a literal", "null x", 0, 0, NULL, 4, 5},
    {"a literal run into a string", "tru\"e\"", 0, 0, NULL, 3, 3},
    {"an unclosed object runs to the end", "{\"a\":1", 0, 0, NULL, ALL, NONE},
    {"empty", "", 0, 0, NULL, ALL, NONE},
    /* bytes after the value: found, and left for the caller to refuse */
    {"a second document", "{}{}", 0, 0, NULL, 2, 2},
    {"an unfinished string after the value", "{} \"abc", 0, 0, NULL, 2, 3},
    {"an unfinished literal after the value", "[]\r\ntr", 0, 0, NULL, 2, 4},
    {"a close bracket too many", "[]]", 0, 0, NULL, 2, 2},
    {"bytes after the value are not checked further", "{} x\xff\v", 0, 0, NULL, 2, 3},
    /* control characters outside strings */
    {"vertical tab", "{\v}", 0, -1, CTRL("0x0b", 1), 0, 0},
    {"form feed", "\f{}", 0, -1, CTRL("0x0c", 0), 0, 0},
    {"NUL", "{\"a\":1\0}", 8, -1, CTRL("0x00", 6), 0, 0},
    {"vertical tab after the value", "{}  \v", 0, -1, CTRL("0x0b", 4), 0, 0},
    {"escape character", "[1,\x1b 2]", 0, -1, CTRL("0x1b", 3), 0, 0},
    /* surrogate escapes */
    {"lone high before text", "[\"\\ud800zz\"]", 0, -1, HIGH("d800", 2), 0, 0},
    {"high before a BMP escape", "[\"\\ud800\\u0041\"]", 0, -1, HIGH("d800", 2), 0, 0},
    {"high before a high", "[\"\\udbff\\udbff\"]", 0, -1, HIGH("dbff", 2), 0, 0},
    {"high before another escape", "[\"\\ud800\\n\"]", 0, -1, HIGH("d800", 2), 0, 0},
    {"high at the end of the string", "[\"x\\uD800\"]", 0, -1, HIGH("D800", 3), 0, 0},
    {"high at the end of the body", "[\"\\ud800", 0, -1, HIGH("d800", 2), 0, 0},
    {"high before a cut escape", "[\"\\ud800\\udc", 0, -1, HIGH("d800", 2), 0, 0},
    {"lone low", "[\"\\udc00\"]", 0, -1, LOW("dc00", 2), 0, 0},
    {"low before high", "[\"\\uDFFF\\uD800\"]", 0, -1, LOW("DFFF", 2), 0, 0},
    {"lone low in a key", "{\"\\udfff\":1}", 0, -1, LOW("dfff", 2), 0, 0},
    {"the second of two pairs is lone", "[\"\\ud83d\\ude80\\ud83d\"]", 0, -1, HIGH("d83d", 14), 0, 0},
    /* UTF-8 (RFC 3629) */
    {"overlong", "[\"\xc0\xaf\"]", 0, -1, UTF8(2), 0, 0},
    {"encoded surrogate", "[\"\xed\xa0\x80\"]", 0, -1, UTF8(2), 0, 0},
    {"past U+10FFFF", "[\"\xf4\x90\x80\x80\"]", 0, -1, UTF8(2), 0, 0},
    {"cut by the end of the body", "[\"\xe2\x82", 0, -1, UTF8(2), 0, 0},
    {"invalid outside a string", "[\xff]", 0, -1, UTF8(1), 0, 0},
    /* what the parser names better: the pass stops and says nothing */
    {"a raw control character in a string", "[\"\x01\v\"] x", 0, 0, NULL, ALL, NONE},
    {"a bad escape", "[\"\\q\\udc00\"] x", 0, 0, NULL, ALL, NONE},
    {"a bad \\u escape", "[\"\\u12g4\\udc00\"] x", 0, 0, NULL, ALL, NONE},
    {"valid UTF-8 outside a string", "[\xc3\xa9]\v", 0, 0, NULL, ALL, NONE},
    {"valid UTF-8 at the top", "\xc3\xa9\v", 0, 0, NULL, ALL, NONE},
    {"a close with nothing open", "]\v", 0, 0, NULL, ALL, NONE},
    {"a comment at the top", "/**/{}\v", 0, 0, NULL, ALL, NONE},
};

static char *exact_copy(const char *text, size_t len)
{
    char *b = malloc(len == 0 ? 1 : len);
    assert_non_null(b);
    memcpy(b, text, len);
    return b;
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *t = &rows[i];
        size_t len = t->len != 0 ? t->len : strlen(t->body);
        char *body = exact_copy(t->body, len);
        jcheck_result r;
        char err[256];
        int rc = jcheck_body(body, len, &r, err, sizeof(err));
        ROW_CHECK(t->name, rc == t->rc, "rc %d (%s)", rc, err);
        if (rc == 0) {
            size_t end = t->end == ALL ? len : t->end, trailing = t->trailing == NONE ? len : t->trailing;
            ROW_CHECK(t->name, r.end == end, "end %zu, want %zu", r.end, end);
            ROW_CHECK(t->name, r.trailing == trailing, "trailing %zu, want %zu", r.trailing, trailing);
            ROW_CHECK(t->name, err[0] == '\0', "message \"%s\" on success", err);
        } else {
            ROW_CHECK(t->name, strcmp(err, t->error) == 0, "got \"%s\"\n  want \"%s\"", err, t->error);
        }
        free(body);
    }
}

/* Each byte the fast path must stop at, at every offset of an eight-byte
 * word (and past the last whole word), is seen. */
static void test_every_offset(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        int rc;
        size_t trailing; /* from the end of the string's text */
    } cases[] = {
        {"\\udc00", -1, 0}, /* seen inside the string */
        {"\xff", -1, 0},
        {"\"", 0, 0},       /* ends the string early: the rest is trailing */
        {"\\\"", 0, 0},     /* escaped: the string goes on */
        {"\x1f", 0, 0},     /* a raw control: left to the parser */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (size_t k = 0; k < 24; k++) {
            for (size_t m = 0; m < 10; m++) {
                char text[64];
                int n = snprintf(text, sizeof(text), "[\"%.*s%s%.*s\"]", (int)k,
                                 "aaaaaaaaaaaaaaaaaaaaaaaa", cases[c].what, (int)m, "bbbbbbbbbb");
                size_t len = (size_t)n;
                char *body = exact_copy(text, len);
                jcheck_result r;
                char err[256];
                int rc = jcheck_body(body, len, &r, err, sizeof(err));
                char name[64];
                snprintf(name, sizeof(name), "case %zu, offset %zu, tail %zu", c, k, m);
                ROW_CHECK(name, rc == cases[c].rc, "rc %d (%s)", rc, err);
                if (rc == -1) {
                    char at[32];
                    snprintf(at, sizeof(at), "at byte %zu", k + 2);
                    ROW_CHECK(name, strstr(err, at) != NULL, "\"%s\" does not say %s", err, at);
                } else if (c == 2) {
                    /* ["aaa"bbb"]: the quote ends the string, and the
                     * last one opens another that swallows the "]" */
                    ROW_CHECK(name, r.end == len && r.trailing == len, "end %zu", r.end);
                } else if (c == 3) {
                    ROW_CHECK(name, r.end == len && r.trailing == len, "end %zu", r.end);
                }
                free(body);
            }
        }
    }
}

/* The message never overruns a short buffer and is always terminated. */
static void test_error_buffer(void **state)
{
    (void)state;
    const char *body = "[\"\\ud800\"]";
    for (size_t errlen = 1; errlen < 40; errlen++) {
        char *err = malloc(errlen);
        jcheck_result r;
        assert_int_equal(jcheck_body(body, strlen(body), &r, err, errlen), -1);
        assert_int_equal(strlen(err), errlen - 1);
        free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_every_offset),
        cmocka_unit_test(test_error_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

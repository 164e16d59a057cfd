/*
 * test_jcheck.c - the strict pass over request bodies (webhook/jcheck.c):
 * one table of bodies with what the pass says about each (passed, or
 * refused with a message), then every byte that needs a look at every
 * offset of the eight-byte fast path.
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
    const char *error; /* the message, or NULL: passes */
} row;

#define CTRL(hex, at)                                                                              \
    "invalid JSON (RFC 8259): control character " hex " at byte " #at "; only space, tab, line "  \
    "feed and carriage return separate tokens, and a string escapes them"
#define HIGH(esc, at)                                                                              \
    "invalid JSON (RFC 8259): \\u" esc " at byte " #at " is a lone UTF-16 high surrogate (it "     \
    "must be followed by a \\udc00-\\udfff escape)"
#define LOW(esc, at) "invalid JSON (RFC 8259): \\u" esc " at byte " #at " is a lone UTF-16 low surrogate"
#define UTF8(at) "the body is not valid UTF-8 (RFC 3629): bad byte sequence at byte " #at

static const row rows[] = {
    /* what passes */
    {"an object", "{\"a\":[1,true,null,\"x\"]}", 0, NULL},
    {"the four whitespace bytes everywhere", " \t\r\n{ \"a\" :\t[ 1 ,\n2 ]\r} \t\r\n", 0, NULL},
    {"escaped quotes and backslashes", "{\"}]\":\"[{\\\"\\\\\"}", 0, NULL},
    {"a surrogate pair", "[\"\\ud83d\\ude80\"]", 0, NULL},
    {"a pair in upper case", "[\"\\uDBFF\\uDFFF\"]", 0, NULL},
    {"an escaped backslash before a u", "[\"\\\\udc00\"]", 0, NULL},
    {"an escaped NUL is a character like any other", "[\"a\\u0000b\"]", 0, NULL},
    {"raw UTF-8 at the table's edges", "[\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80"
     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\"]", 0, NULL},
    {"empty", "", 0, NULL},
    /* bytes after the value are the review decoder's to refuse */
    {"an unfinished string after the value", "{} \"abc", 0, NULL},
    /* control characters, between tokens or raw in a string */
    {"vertical tab", "{\v}", 0, CTRL("0x0b", 1)},
    {"form feed", "\f{}", 0, CTRL("0x0c", 0)},
    {"NUL", "{\"a\":1\0}", 8, CTRL("0x00", 6)},
    {"vertical tab after the value", "{}  \v", 0, CTRL("0x0b", 4)},
    {"escape character", "[1,\x1b 2]", 0, CTRL("0x1b", 3)},
    {"a raw control character in a string", "[\"ab\x01\"]", 0, CTRL("0x01", 4)},
    {"a raw vertical tab in a long string", "[\"abcdefghijklmnop\vq\"]", 0, CTRL("0x0b", 18)},
    /* surrogate escapes */
    {"lone high before text", "[\"\\ud800zz\"]", 0, HIGH("d800", 2)},
    {"high before a BMP escape", "[\"\\ud800\\u0041\"]", 0, HIGH("d800", 2)},
    {"high before a high", "[\"\\udbff\\udbff\"]", 0, HIGH("dbff", 2)},
    {"high before another escape", "[\"\\ud800\\n\"]", 0, HIGH("d800", 2)},
    {"high at the end of the string", "[\"x\\uD800\"]", 0, HIGH("D800", 3)},
    {"high at the end of the body", "[\"\\ud800", 0, HIGH("d800", 2)},
    {"high before a cut escape", "[\"\\ud800\\udc", 0, HIGH("d800", 2)},
    {"lone low", "[\"\\udc00\"]", 0, LOW("dc00", 2)},
    {"low before high", "[\"\\uDFFF\\uD800\"]", 0, LOW("DFFF", 2)},
    {"lone low in a key", "{\"\\udfff\":1}", 0, LOW("dfff", 2)},
    {"the second of two pairs is lone", "[\"\\ud83d\\ude80\\ud83d\"]", 0, HIGH("d83d", 14)},
    {"after an escaped backslash", "[\"\\\\\\udc00\"]", 0, LOW("dc00", 4)},
    /* UTF-8 (RFC 3629) */
    {"overlong", "[\"\xc0\xaf\"]", 0, UTF8(2)},
    {"encoded surrogate", "[\"\xed\xa0\x80\"]", 0, UTF8(2)},
    {"past U+10FFFF", "[\"\xf4\x90\x80\x80\"]", 0, UTF8(2)},
    {"cut by the end of the body", "[\"\xe2\x82", 0, UTF8(2)},
    {"invalid outside a string", "[\xff]", 0, UTF8(1)},
    {"a backslash before a lead byte", "[\"\\\xc3\xa9\"]", 0, NULL},
    {"a backslash before a bad byte", "[\"\\\xff\"]", 0, UTF8(3)},
    /* what the parser names better: the pass stops and says nothing */
    {"a bad \\u escape", "[\"\\u12g4\\udc00\v\"] x", 0, NULL},
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
        char err[256];
        int rc = jcheck_body(body, len, err, sizeof(err));
        if (t->error == NULL) {
            ROW_CHECK(t->name, rc == 0 && err[0] == '\0', "refused: %s", err);
        } else {
            ROW_CHECK(t->name, rc == -1, "passed");
            ROW_CHECK(t->name, strcmp(err, t->error) == 0, "got \"%s\"\n  want \"%s\"", err, t->error);
        }
        free(body);
    }
}

/* Each byte the eight-at-a-time path must stop at, at every offset of a
 * word (and past the last whole word), is seen where it is. */
static void test_every_offset(void **state)
{
    (void)state;
    static const char *const bad[] = {"\\udc00", "\xff", "\v", "\x1f", "\\ud800x"};
    static const char *const good[] = {"\"", "\\\"", "\\\\", "\xc3\xa9", "\\ud83d\\ude80", "\t"};
    /* Offsets and tails past 128 bytes: every position within the 8-, 16-
     * and 64-byte steps of the pass, and each step's last partial round. */
    char pad_a[141], pad_b[71];
    memset(pad_a, 'a', sizeof(pad_a) - 1);
    pad_a[sizeof(pad_a) - 1] = '\0';
    memset(pad_b, 'b', sizeof(pad_b) - 1);
    pad_b[sizeof(pad_b) - 1] = '\0';
    for (size_t k = 0; k < sizeof(pad_a) - 1; k++) {
        for (size_t m = 0; m < sizeof(pad_b) - 1; m++) {
            for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]) + sizeof(good) / sizeof(good[0]); c++) {
                int is_bad = c < sizeof(bad) / sizeof(bad[0]);
                const char *what = is_bad ? bad[c] : good[c - sizeof(bad) / sizeof(bad[0])];
                char text[256];
                int n = snprintf(text, sizeof(text), "[\"%.*s%s%.*s\"]", (int)k, pad_a, what,
                                 (int)m, pad_b);
                size_t len = (size_t)n;
                char *body = exact_copy(text, len);
                char err[256];
                int rc = jcheck_body(body, len, err, sizeof(err));
                char name[64];
                snprintf(name, sizeof(name), "case %zu, offset %zu, tail %zu", c, k, m);
                ROW_CHECK(name, rc == (is_bad ? -1 : 0), "rc %d (%s)", rc, err);
                if (is_bad) {
                    char at[32];
                    snprintf(at, sizeof(at), "at byte %zu", k + 2);
                    ROW_CHECK(name, strstr(err, at) != NULL, "\"%s\" does not say %s", err, at);
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
        assert_int_equal(jcheck_body(body, strlen(body), err, errlen), -1);
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

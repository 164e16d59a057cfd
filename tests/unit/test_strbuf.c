/*
 * test_strbuf.c - the growing text buffer behind /metrics and the probe
 * bodies: growth across many small appends and one large one, the sizes it
 * grows by, and a failed write (a wide character the C locale cannot
 * encode makes vsnprintf fail, as running out of memory would) marking the
 * text incomplete and stopping later writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <cmocka.h>

#include "strbuf.h"

/* The buffer grows across many appends and one huge one. */
static void test_printf_growth(void **state)
{
    (void)state;
    strbuf t = {0};
    strbuf_printf(&t, "%s", "");
    assert_false(t.failed);
    assert_int_equal(t.len, 0);
    for (int i = 0; i < 3000; i++)
        strbuf_printf(&t, "line_%d %d\n", i, i * 2);
    char big[20000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    strbuf_printf(&t, "%s\n", big);
    assert_false(t.failed);
    assert_true(t.cap > t.len);
    assert_int_equal(strlen(t.data), t.len);
    /* spot checks */
    assert_true(strncmp(t.data, "line_0 0\nline_1 2\n", 18) == 0);
    assert_non_null(strstr(t.data, "\nline_2999 5998\nxxxx"));
    assert_int_equal(t.data[t.len - 1], '\n');
    assert_int_equal(t.data[t.len - 2], 'x');
    strbuf_free(&t);
    strbuf_free(&t); /* twice is harmless */
}

/* Once failed, nothing more is written. */
static void test_printf_after_failure(void **state)
{
    (void)state;
    strbuf t = {0};
    strbuf_printf(&t, "a");
    t.failed = 1;
    strbuf_printf(&t, "b");
    assert_int_equal(t.len, 1);
    strbuf_free(&t);
}

typedef struct grow_row {
    size_t first, second; /* bytes written by two appends */
    size_t cap;           /* capacity after both */
} grow_row;

/* 4 KiB first, then doubling until the text and its NUL fit. */
static const grow_row grows[] = {
    {0, 0, 4096},
    {1, 0, 4096},
    {4095, 0, 4096},
    {4096, 0, 8192},
    {4095, 1, 8192},
    {4000, 4000, 8192},
    {4000, 4192, 16384},
    {10000, 0, 16384},
    {16383, 0, 16384},
    {16384, 0, 32768},
};

static void test_growth_sizes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(grows) / sizeof(grows[0]); i++) {
        const grow_row *r = &grows[i];
        strbuf b = {0};
        strbuf_printf(&b, "%*s", (int)r->first, "");
        strbuf_printf(&b, "%*s", (int)r->second, "");
        assert_false(b.failed);
        if (b.len != r->first + r->second || b.cap != r->cap)
            fail_msg("%zu + %zu bytes: len %zu cap %zu, want cap %zu", r->first, r->second, b.len,
                     b.cap, r->cap);
        assert_int_equal(strlen(b.data), b.len);
        strbuf_free(&b);
        assert_null(b.data);
        assert_int_equal(b.len, 0);
        assert_int_equal(b.cap, 0);
    }
}

/* A write vsnprintf cannot render fails the buffer: what was there stays,
 * terminated, and nothing more goes in. */
static void test_failed_write(void **state)
{
    (void)state;
    static const wchar_t unencodable[] = {0xD800, 0}; /* a UTF-16 surrogate */
    strbuf b = {0};
    strbuf_printf(&b, "kept\n");
    strbuf_printf(&b, "lost %ls", unencodable);
    assert_true(b.failed);
    assert_int_equal(b.len, 5);
    assert_string_equal(b.data, "kept\n");
    strbuf_printf(&b, "after\n");
    assert_int_equal(b.len, 5);
    assert_string_equal(b.data, "kept\n");
    strbuf_free(&b);
    assert_true(b.failed); /* freeing does not make the text complete */

    /* failing before anything was written leaves no memory behind */
    strbuf e = {0};
    strbuf_printf(&e, "%ls", unencodable);
    assert_true(e.failed);
    strbuf_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_printf_growth),
        cmocka_unit_test(test_printf_after_failure),
        cmocka_unit_test(test_growth_sizes),
        cmocka_unit_test(test_failed_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

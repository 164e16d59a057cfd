/*
 * test_errmsg.c - the one error formatter: the message, cut to the buffer
 * and always terminated, nothing written into a buffer of size 0, and -1
 * back for a failing return.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"

#include "errmsg.h"

static void test_errmsg_set(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t errlen;
        const char *want; /* NULL: the buffer is left as it was */
    } rows[] = {
        {"fits", 64, "--threads wants 1..256, got \"abc\""},
        {"cut to the buffer, terminated", 10, "--threads"},
        {"one byte: empty", 1, ""},
        {"no buffer: untouched", 0, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char err[64];
        memset(err, 'x', sizeof(err));
        err[sizeof(err) - 1] = '\0';
        int rc = errmsg_set(err, rows[i].errlen, "--%s wants %d..%d, got \"%s\"", "threads", 1,
                            256, "abc");
        ROW_CHECK(rows[i].name, rc == -1, "rc %d", rc);
        if (rows[i].want != NULL)
            ROW_CHECK(rows[i].name, strcmp(err, rows[i].want) == 0, "got \"%s\"", err);
        else
            ROW_CHECK(rows[i].name, err[0] == 'x' && strlen(err) == sizeof(err) - 1, "got \"%s\"",
                      err);
    }
    assert_int_equal(errmsg_set(NULL, 0, "%s", "no buffer at all"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errmsg_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

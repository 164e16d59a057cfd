/*
 * test_flags.c - where ota-controller's Lease lives by default: the flag,
 * else the pod's namespace from the service account mount, else
 * ota-system; never the kubeconfig context's namespace.  And who it is in
 * the Lease: hostname_pid.  (The flags themselves: test_flagtab.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "row_check.h"

#include "flags.h"

static void test_lease_namespace(void **state)
{
    (void)state;
    static const struct {
        const char *name, *flag, *file, *want; /* file NULL: no namespace file */
    } rows[] = {
        {"flag wins", "edge", "ota-system-2\n", "edge"},
        {"pod's namespace", NULL, "ota-prod\n", "ota-prod"},
        {"pod's namespace, no newline", NULL, "kube-system", "kube-system"},
        {"empty flag is no flag", "", "ota-prod", "ota-prod"},
        {"no file", NULL, NULL, "ota-system"},
        {"empty file", NULL, "", "ota-system"},
        {"not a namespace name", NULL, "../etc\n", "ota-system"},
        {"too long", NULL, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "ota-system"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char dir[] = "/tmp/test_flags.XXXXXX";
        assert_non_null(mkdtemp(dir));
        char path[64];
        snprintf(path, sizeof(path), "%s/namespace", dir);
        if (rows[i].file != NULL) {
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            fputs(rows[i].file, f);
            fclose(f);
        }
        char buf[256];
        const char *got = flags_lease_namespace(rows[i].flag, dir, buf, sizeof(buf));
        ROW_CHECK(rows[i].name, strcmp(got, rows[i].want) == 0, "got %s", got);
        unlink(path);
        rmdir(dir);
    }
}

static void test_identity(void **state)
{
    (void)state;
    char host[200] = "", want[256], buf[256];
    assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
    snprintf(want, sizeof(want), "%s_%d", host, (int)getpid());
    assert_ptr_equal(flags_identity(buf, sizeof(buf)), buf);
    assert_string_equal(buf, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lease_namespace),
        cmocka_unit_test(test_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

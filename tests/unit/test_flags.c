/*
 * test_flags.c - what flags_parse refuses beyond each row's own bounds (a
 * helper image the kubelet could not pull, an empty Lease name or
 * namespace: each would start and then fail at every use, issue 19);
 * where ota-controller's Lease lives by default: the flag, else the pod's
 * namespace from the service account mount, else ota-system; never the
 * kubeconfig context's namespace.  And who it is in the Lease:
 * hostname_pid.  (The flags themselves: test_flagtab.c.)
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
#include "pullmethod.h"

#define HELPER_WANTS                                                                               \
    "ota-controller: --helper-image wants an image reference the kubelet can pull: invalid image " \
    "reference"

static void test_parse_refuses(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int argc;
        const char *argv[3]; /* argv[0] is the program */
        flagtab_result want;
        const char *err; /* for FLAGTAB_BAD_VALUE */
    } rows[] = {
        {"default helper image", 1, {"ota-controller"}, FLAGTAB_RUN, NULL},
        {"helper image with registry and digest", 3,
         {"ota-controller", "--helper-image",
          "registry.local:5000/tools/busybox@sha256:"
          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
         FLAGTAB_RUN, NULL},
        {"empty helper image", 3, {"ota-controller", "--helper-image", ""}, FLAGTAB_BAD_VALUE,
         HELPER_WANTS ": empty"},
        {"uppercase helper image", 2, {"ota-controller", "--helper-image=BusyBox:1.36"},
         FLAGTAB_BAD_VALUE, HELPER_WANTS " \"BusyBox:1.36\": repository name must be lowercase"},
        {"helper image with an empty tag", 3, {"ota-controller", "--helper-image", "busybox:"},
         FLAGTAB_BAD_VALUE, HELPER_WANTS " \"busybox:\": empty tag after ':'"},
        {"helper image with a space", 3, {"ota-controller", "--helper-image", "busybox latest"},
         FLAGTAB_BAD_VALUE, HELPER_WANTS ": whitespace at byte 7"},
        {"empty Lease name", 3, {"ota-controller", "--leader-elect-resource-name", ""},
         FLAGTAB_BAD_VALUE,
         "ota-controller: --leader-elect-resource-name wants a non-empty NAME, got \"\""},
        {"empty Lease name, older spelling", 2, {"ota-controller", "--leader-elect-lease-name="},
         FLAGTAB_BAD_VALUE,
         "ota-controller: --leader-elect-resource-name wants a non-empty NAME, got \"\""},
        {"empty Lease namespace", 3, {"ota-controller", "--leader-elect-resource-namespace", ""},
         FLAGTAB_BAD_VALUE,
         "ota-controller: --leader-elect-resource-namespace wants a non-empty NS, got \"\""},
        {"empty Lease namespace, older spelling", 3,
         {"ota-controller", "--leader-elect-namespace", ""}, FLAGTAB_BAD_VALUE,
         "ota-controller: --leader-elect-resource-namespace wants a non-empty NS, got \"\""},
        {"purge disabled by default", 2, {"ota-controller", "--imagecaches"}, FLAGTAB_RUN, NULL},
        {"purge image", 3, {"ota-controller", "--image-cache-purge-image", "ghcr.io/x/crictl:1.30"},
         FLAGTAB_RUN, NULL},
        {"purge image the kubelet cannot pull", 2,
         {"ota-controller", "--image-cache-purge-image=Crictl"}, FLAGTAB_BAD_VALUE,
         "ota-controller: --image-cache-purge-image wants an image reference the kubelet can "
         "pull: invalid image reference \"Crictl\": repository name must be lowercase"},
        {"refresh off", 2, {"ota-controller", "--image-cache-refresh-frequency=0s"}, FLAGTAB_RUN,
         NULL},
        {"pull deadline of zero", 2, {"ota-controller", "--image-pull-deadline-duration=0s"},
         FLAGTAB_BAD_VALUE, NULL},
        {"CRI-O socket", 3, {"ota-controller", "--cri-socket-path", "/var/run/crio/crio.sock"},
         FLAGTAB_RUN, NULL},
        {"relative socket path", 2, {"ota-controller", "--cri-socket-path=run/x.sock"},
         FLAGTAB_BAD_VALUE,
         "ota-controller: --cri-socket-path: CRI socket path run/x.sock is not absolute"},
        {"socket path with a '..' element", 2,
         {"ota-controller", "--cri-socket-path=/run/../x.sock"}, FLAGTAB_BAD_VALUE,
         "ota-controller: --cri-socket-path: CRI socket path /run/../x.sock has a '..' element"},
        {"empty socket path", 2, {"ota-controller", "--cri-socket-path="}, FLAGTAB_BAD_VALUE,
         "ota-controller: --cri-socket-path: CRI socket path is missing"},
        {"pull method image-volume", 2, {"ota-controller", "--pull-method=image-volume"},
         FLAGTAB_RUN, NULL},
        {"pull method auto", 3, {"ota-controller", "--pull-method", "auto"}, FLAGTAB_RUN, NULL},
        {"pull method unknown", 2, {"ota-controller", "--pull-method=volume"}, FLAGTAB_BAD_VALUE,
         NULL},
        {"pull method empty", 2, {"ota-controller", "--pull-method="}, FLAGTAB_BAD_VALUE, NULL},
        {"a bad period is told first", 3,
         {"ota-controller", "--leader-elect-renew-deadline", "15s"}, FLAGTAB_BAD_VALUE,
         "ota-controller: want retry period < renew deadline < lease duration"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        flags f;
        char err[512] = "";
        flagtab_result r =
            flags_parse(rows[i].argc, (char *const *)rows[i].argv, &f, err, sizeof(err));
        ROW_CHECK(rows[i].name, r == rows[i].want, "result %d, want %d (%s)", r, rows[i].want,
                  err);
        if (rows[i].err != NULL)
            ROW_CHECK(rows[i].name, strcmp(err, rows[i].err) == 0, "err \"%s\"", err);
    }
}

/* The ImageCache flags' defaults and values (upstream's spellings and
 * defaults: 15m, 5m, containerd's socket; purge off unless an image is
 * named). */
static void test_imagecache_values(void **state)
{
    (void)state;
    flags f;
    char err[512] = "";
    const char *none[] = {"ota-controller"};
    assert_int_equal(flags_parse(1, (char *const *)none, &f, err, sizeof(err)), FLAGTAB_RUN);
    assert_int_equal(f.ctl.imagecaches, 0);
    assert_int_equal(f.ctl.reconcile.ic_refresh_s, 900);
    assert_int_equal(f.ctl.reconcile.ic_pull_deadline_s, 300);
    assert_string_equal(f.ctl.reconcile.ic_purge_image, "");
    assert_string_equal(f.ctl.reconcile.cri_socket_path, "/run/containerd/containerd.sock");
    const char *set[] = {"ota-controller", "--imagecaches", "--image-cache-refresh-frequency=0s",
                         "--image-pull-deadline-duration=1m30s",
                         "--image-cache-purge-image=crictl:1", "--cri-socket-path=/c.sock"};
    assert_int_equal(flags_parse(6, (char *const *)set, &f, err, sizeof(err)), FLAGTAB_RUN);
    assert_int_equal(f.ctl.imagecaches, 1);
    assert_int_equal(f.ctl.reconcile.ic_refresh_s, 0);
    assert_int_equal(f.ctl.reconcile.ic_pull_deadline_s, 90);
    assert_string_equal(f.ctl.reconcile.ic_purge_image, "crictl:1");
    assert_string_equal(f.ctl.reconcile.cri_socket_path, "/c.sock");
}

/* --pull-method: helper by default (today's Jobs), each choice its mode. */
static void test_pull_method_values(void **state)
{
    (void)state;
    static const struct {
        const char *arg;
        int want;
    } rows[] = {
        {NULL, PULLMETHOD_MODE_HELPER},
        {"--pull-method=helper", PULLMETHOD_MODE_HELPER},
        {"--pull-method=image-volume", PULLMETHOD_MODE_IMAGE_VOLUME},
        {"--pull-method=auto", PULLMETHOD_MODE_AUTO},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        flags f;
        char err[512] = "";
        const char *argv[] = {"ota-controller", rows[i].arg};
        int argc = rows[i].arg != NULL ? 2 : 1;
        const char *name = rows[i].arg != NULL ? rows[i].arg : "(default)";
        ROW_CHECK(name, flags_parse(argc, (char *const *)argv, &f, err, sizeof(err)) == FLAGTAB_RUN,
                  "%s", err);
        ROW_CHECK(name, f.ctl.reconcile.pull_method == rows[i].want, "got %d",
                  f.ctl.reconcile.pull_method);
    }
    flags f;
    char err[512] = "";
    const char *bad[] = {"ota-controller", "--pull-method=volume"};
    assert_int_equal(flags_parse(2, (char *const *)bad, &f, err, sizeof(err)), FLAGTAB_BAD_VALUE);
    assert_non_null(strstr(err, "--pull-method"));
}

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
        cmocka_unit_test(test_parse_refuses),
        cmocka_unit_test(test_imagecache_values),
        cmocka_unit_test(test_pull_method_values),
        cmocka_unit_test(test_lease_namespace),
        cmocka_unit_test(test_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

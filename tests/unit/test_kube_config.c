/*
 * test_kube_config.c - where the apiserver is and who we are: kubeconfig
 * files (current context, token, client certificate and CA as files or as
 * base64 data, insecure flag) and the in-cluster configuration (service
 * environment, service-account files, token rotation).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kube_config.h"
#include "row_check.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *path_of(const char *name)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ota-kubeconfig.XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Two contexts; the current one picks the second cluster and user. */
static const char two_contexts[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: edge\n"
    "clusters:\n"
    "- name: other\n"
    "  cluster:\n"
    "    server: https://other.example:6443\n"
    "- name: edge-cluster\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
    "contexts:\n"
    "- name: other\n"
    "  context: {cluster: other, user: nobody}\n"
    "- name: edge\n"
    "  context:\n"
    "    cluster: edge-cluster\n"
    "    user: controller\n"
    "    namespace: ota-system\n"
    "users:\n"
    "- name: nobody\n"
    "  user: {token: wrong}\n"
    "- name: controller\n"
    "  user:\n"
    "    token: s3cret\n";

static void test_current_context_token_and_ca_data(void **state)
{
    (void)state;
    write_file("kc", two_contexts);
    kube_config c;
    char err[256];
    assert_int_equal(kube_config_load_file(&c, path_of("kc"), err, sizeof(err)), 0);
    assert_string_equal(c.server, "https://127.0.0.1:6443"); /* trailing slash dropped */
    assert_string_equal(c.namespace, "ota-system");
    assert_string_equal(kube_config_token(&c), "s3cret");
    assert_non_null(c.ca_pem);
    assert_int_equal(c.ca_pem_len, strlen("-----BEGIN CERTIFICATE-----\n"));
    assert_memory_equal(c.ca_pem, "-----BEGIN CERTIFICATE-----\n", c.ca_pem_len);
    assert_null(c.ca_file);
    assert_false(c.insecure);
    kube_config_free(&c);
}

static void test_client_certificate_files_and_insecure(void **state)
{
    (void)state;
    write_file("kc",
               "current-context: x\n"
               "clusters:\n"
               "- name: c\n"
               "  cluster:\n"
               "    server: https://10.0.0.1:443\n"
               "    certificate-authority: /etc/ca.crt\n"
               "    insecure-skip-tls-verify: true\n"
               "contexts:\n"
               "- name: x\n"
               "  context: {cluster: c, user: u}\n"
               "users:\n"
               "- name: u\n"
               "  user:\n"
               "    client-certificate: /etc/u.crt\n"
               "    client-key: /etc/u.key\n"
               "    client-certificate-data: aGVsbG8=\n"
               "    client-key-data: d29ybGQ=\n");
    kube_config c;
    char err[256];
    assert_int_equal(kube_config_load_file(&c, path_of("kc"), err, sizeof(err)), 0);
    assert_string_equal(c.ca_file, "/etc/ca.crt");
    assert_true(c.insecure);
    assert_string_equal(c.client_cert_file, "/etc/u.crt");
    assert_string_equal(c.client_key_file, "/etc/u.key");
    assert_int_equal(c.client_cert_pem_len, 5);
    assert_memory_equal(c.client_cert_pem, "hello", 5);
    assert_memory_equal(c.client_key_pem, "world", 5);
    assert_null(kube_config_token(&c));
    kube_config_free(&c);
}

/* Each row: a kubeconfig that must be refused, and a word of the message. */
static void test_bad_kubeconfigs(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } rows[] = {
        {"current-context: missing\ncontexts: []\n", "current-context"},
        {"current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n", "no server"},
        {"current-context: x\nclusters:\n- name: c\n  cluster: {server: https://a}\n"
         "contexts:\n- name: x\n  context: {cluster: c, user: u}\nusers:\n- name: u\n"
         "  user: {client-key-data: '!!not base64!!'}\n",
         "base64"},
        {"current-context: [unclosed\n", "kubeconfig"},
        {"", "current-context"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        write_file("kc", rows[i].text);
        kube_config c;
        char err[256] = "";
        assert_int_equal(kube_config_load_file(&c, path_of("kc"), err, sizeof(err)), -1);
        if (strstr(err, rows[i].want) == NULL)
            fail_msg("row %zu: message \"%s\" lacks \"%s\"", i, err, rows[i].want);
    }
    kube_config c;
    char err[256];
    assert_int_equal(kube_config_load_file(&c, "/nonexistent/kubeconfig", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/kubeconfig"));
}

static void test_in_cluster_and_token_rotation(void **state)
{
    (void)state;
    write_file("token", "first-token\n");
    write_file("ca.crt", "-----BEGIN CERTIFICATE-----\n");
    write_file("namespace", "ota-system");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    kube_config c;
    char err[256];
    assert_int_equal(kube_config_load_incluster(&c, dir, err, sizeof(err)), 0);
    assert_string_equal(c.server, "https://10.96.0.1:443");
    assert_string_equal(c.ca_file, path_of("ca.crt"));
    assert_string_equal(c.namespace, "ota-system");
    assert_string_equal(kube_config_token(&c), "first-token");

    /* The kubelet rotates the projected token by replacing the file. */
    write_file("token.new", "second-token\n");
    char from[256], to[256];
    snprintf(from, sizeof(from), "%s", path_of("token.new"));
    snprintf(to, sizeof(to), "%s", path_of("token"));
    assert_int_equal(rename(from, to), 0);
    assert_string_equal(kube_config_token(&c), "second-token");

    /* Mid-rotation the file may be missing: keep the token we have. */
    assert_int_equal(unlink(to), 0);
    assert_string_equal(kube_config_token(&c), "second-token");
    kube_config_free(&c);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    write_file("token", "t");
    assert_int_equal(kube_config_load_incluster(&c, dir, err, sizeof(err)), 0);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    kube_config_free(&c);

    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_load_incluster(&c, dir, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--kubeconfig"));
}

/* KUBECONFIG lists, merged as client-go merges them: the first file that
 * sets a value wins.  "a" is the admin's file, "b" a node's with its own
 * cluster entry of the same name (which must lose) and a second context. */
static const char file_a[] =
    "current-context: admin\n"
    "clusters:\n"
    "- name: sim\n"
    "  cluster: {server: https://a.example:6443, certificate-authority: ca/a.crt}\n"
    "contexts:\n"
    "- name: admin\n"
    "  context: {cluster: sim, user: admin}\n"
    "users:\n"
    "- name: admin\n"
    "  user: {token: admin-token}\n";
static const char file_b[] =
    "current-context: node\n"
    "clusters:\n"
    "- name: sim\n"
    "  cluster: {server: https://b.example:6443}\n"
    "- name: other\n"
    "  cluster: {server: https://other.example}\n"
    "contexts:\n"
    "- name: node\n"
    "  context: {cluster: sim, user: node, namespace: edge}\n"
    "- name: admin\n"
    "  context: {cluster: other, user: node}\n"
    "users:\n"
    "- name: node\n"
    "  user: {tokenFile: node.token, client-certificate: /abs/node.crt}\n";

static void test_kubeconfig_lists(void **state)
{
    (void)state;
    write_file("a", file_a);
    write_file("b", file_b);
    write_file("node.token", "node-token\n");
    char a[256], b[256], missing[256];
    snprintf(a, sizeof(a), "%s", path_of("a"));
    snprintf(b, sizeof(b), "%s", path_of("b"));
    snprintf(missing, sizeof(missing), "%s", path_of("missing"));
    char ab[600], ba[600], ma[600], mm[600];
    snprintf(ab, sizeof(ab), "%s:%s", a, b);
    snprintf(ba, sizeof(ba), ":%s::%s", b, a); /* empty entries are skipped */
    snprintf(ma, sizeof(ma), "%s:%s", missing, a);
    snprintf(mm, sizeof(mm), "%s:%s", missing, missing);
    static char ca_a[200];
    snprintf(ca_a, sizeof(ca_a), "%s/ca/a.crt", dir); /* relative to a's folder */
    const struct {
        const char *row, *path, *env, *context;
        const char *server, *context_used, *ns, *token, *ca_file, *err;
    } rows[] = {
        {"a:b: a's current context and a's cluster", NULL, ab, NULL,
         "https://a.example:6443", "admin", NULL, "admin-token", ca_a, NULL},
        {"b:a: b's current context, b's cluster sim", NULL, ba, NULL,
         "https://b.example:6443", "node", "edge", "node-token", NULL, NULL},
        {"b:a --context admin: b's admin context wins", NULL, ba, "admin",
         "https://other.example", "admin", NULL, "node-token", NULL, NULL},
        {"a:b --context node: context from b, cluster sim from a", NULL, ab, "node",
         "https://a.example:6443", "node", "edge", "node-token", ca_a, NULL},
        {"a missing file in the list is skipped", NULL, ma, NULL,
         "https://a.example:6443", "admin", NULL, "admin-token", ca_a, NULL},
        {"--kubeconfig beats KUBECONFIG", b, ab, NULL,
         "https://b.example:6443", "node", "edge", "node-token", NULL, NULL},
        {"no file of the list exists", NULL, mm, NULL, NULL, NULL, NULL, NULL, NULL,
         "none of the files"},
        {"empty KUBECONFIG", NULL, "", NULL, NULL, NULL, NULL, NULL, NULL, "empty"},
        {"unknown --context", NULL, ab, "nope", NULL, NULL, NULL, NULL, NULL,
         "context \"nope\" not found"},
        {"--kubeconfig that does not exist", missing, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         "cannot read"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        kube_config c;
        char err[512] = "";
        int rc = kube_config_load(&c, rows[i].path, rows[i].env, rows[i].context, err, sizeof(err));
        if (rows[i].err != NULL) {
            ROW_CHECK(rows[i].row, rc == -1, "rc %d", rc);
            ROW_CHECK(rows[i].row, strstr(err, rows[i].err) != NULL, "err \"%s\"", err);
            continue;
        }
        ROW_CHECK(rows[i].row, rc == 0, "err \"%s\"", err);
        ROW_CHECK(rows[i].row, strcmp(c.server, rows[i].server) == 0, "server %s", c.server);
        ROW_CHECK(rows[i].row, strcmp(c.context, rows[i].context_used) == 0, "context %s",
                  c.context);
        ROW_CHECK(rows[i].row,
                  rows[i].ns == NULL ? c.namespace == NULL
                                     : c.namespace != NULL && strcmp(c.namespace, rows[i].ns) == 0,
                  "namespace %s", c.namespace != NULL ? c.namespace : "(null)");
        const char *token = kube_config_token(&c);
        ROW_CHECK(rows[i].row, token != NULL && strcmp(token, rows[i].token) == 0, "token %s",
                  token != NULL ? token : "(null)");
        ROW_CHECK(rows[i].row,
                  rows[i].ca_file == NULL ? c.ca_file == NULL
                                          : c.ca_file != NULL && strcmp(c.ca_file, rows[i].ca_file) == 0,
                  "ca_file %s", c.ca_file != NULL ? c.ca_file : "(null)");
        kube_config_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_current_context_token_and_ca_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_certificate_files_and_insecure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_kubeconfigs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_cluster_and_token_rotation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kubeconfig_lists, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_cli_format.c - what kubectl-ota prints (cli/format.c): kubectl's
 * ages, the table layout, server text made safe for a terminal and cut to
 * its bound, API error messages and webhook denials, query escaping, and
 * that --help lists every exit code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "podview.h"
#include "row_check.h"

static void test_ages(void **state)
{
    (void)state;
    static const struct {
        long long s;
        const char *want;
    } rows[] = {
        {-5, "<invalid>"}, {-1, "0s"},      {0, "0s"},        {59, "59s"},
        {119, "119s"},     {120, "2m"},     {312, "5m12s"},   {599, "9m59s"},
        {600, "10m"},      {10799, "179m"}, {10800, "3h"},    {3 * 3600 + 60, "3h1m"},
        {28799, "7h59m"},  {28800, "8h"},   {47 * 3600, "47h"}, {48 * 3600, "2d"},
        {(7 * 24 + 23) * 3600, "7d23h"},    {8 * 24 * 3600, "8d"},
        {729LL * 24 * 3600, "729d"},        {730LL * 24 * 3600, "2y"},
        {(7 * 365 + 364) * 24LL * 3600, "7y364d"}, {8 * 365 * 24LL * 3600, "8y"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char buf[32], name[32];
        cli_age(buf, sizeof(buf), rows[i].s);
        snprintf(name, sizeof(name), "%llds", rows[i].s);
        ROW_CHECK(name, strcmp(buf, rows[i].want) == 0, "got \"%s\", want \"%s\"", buf,
                  rows[i].want);
    }
}

static void test_sanitize(void **state)
{
    (void)state;
    static const struct {
        const char *name, *in;
        size_t size;
        const char *want;
    } rows[] = {
        {"plain", "agent-x7k2p", 64, "agent-x7k2p"},
        {"terminal escape", "a\x1b[2Jb", 64, "a?[2Jb"},
        {"newline and tab", "a\nb\tc\x7f", 64, "a?b?c?"},
        {"fits exactly", "abcdefg", 8, "abcdefg"},
        {"cut with ...", "abcdefgh", 8, "abcd..."},
        {"never inside UTF-8", "ab\xc3\xa9\xc3\xa9xyz", 8, "ab\xc3\xa9..."},
        {"no room for ...", "abcdef", 3, ""},
        {"UTF-8 kept", "caf\xc3\xa9", 16, "caf\xc3\xa9"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char out[64];
        cli_sanitize(out, rows[i].size, rows[i].in, strlen(rows[i].in));
        ROW_CHECK(rows[i].name, strcmp(out, rows[i].want) == 0, "got \"%s\"", out);
        ROW_CHECK(rows[i].name, strlen(out) < rows[i].size, "overflow: %zu", strlen(out));
    }
}

static void test_table(void **state)
{
    (void)state;
    static const char *const header[] = {"POD", "STATE", "AGE"};
    char *r1[] = {"agent-x7k2p", "PendingUpgrade", "5m12s"};
    char *r2[] = {"a", "Ready", "3h"};
    char *const *rows[] = {r1, r2};
    strbuf out = {0};
    cli_table_render(&out, header, 3, rows, 2);
    assert_false(out.failed);
    assert_string_equal(out.data, "POD           STATE            AGE\n"
                                  "agent-x7k2p   PendingUpgrade   5m12s\n"
                                  "a             Ready            3h\n");
    strbuf_free(&out);
    cli_table_render(&out, header, 3, rows, 0);
    assert_string_equal(out.data, "POD   STATE   AGE\n");
    strbuf_free(&out);
}

static void test_status_messages(void **state)
{
    (void)state;
    static const char denial[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
        "\"admission webhook \\\"pods.ota-prepull.openyurt.io\\\" denied the request: node "
        "node-1 may not request a pre-pull of pod edge/agent-abc on node-2\",\"code\":403}";
    static const struct {
        const char *name, *body;
        long status;
        const char *want;
        int denial;
    } rows[] = {
        {"webhook denial", denial, 403,
         "admission webhook \"pods.ota-prepull.openyurt.io\" denied the request: node node-1 "
         "may not request a pre-pull of pod edge/agent-abc on node-2",
         1},
        {"not found", "{\"kind\":\"Status\",\"message\":\"pods \\\"x\\\" not found\",\"code\":404}",
         404, "pods \"x\" not found", 0},
        {"forbidden by RBAC",
         "{\"kind\":\"Status\",\"message\":\"pods \\\"x\\\" is forbidden: User \\\"jane\\\" cannot "
         "patch resource\"}",
         403, "pods \"x\" is forbidden: User \"jane\" cannot patch resource", 0},
        {"webhook call failed",
         "{\"message\":\"Internal error occurred: failed calling webhook \\\"x\\\": timeout\"}", 500,
         "Internal error occurred: failed calling webhook \"x\": timeout", 0},
        {"not JSON", "<html>bad gateway</html>", 502, "HTTP 502: <html>bad gateway</html>", 0},
        {"empty", "", 503, "HTTP 503", 0},
        {"a message with escapes", "{\"message\":\"a\\u001b[31mred\"}", 400, "a?[31mred", 0},
        {"too deep", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                     "]]]]", 400,
         "HTTP 400: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]",
         0},
        {"a denial's look-alike", "{\"message\":\"admission webhook \\\"x\\\" said no\"}", 400,
         "admission webhook \"x\" said no", 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char out[CLI_MESSAGE_MAX];
        cli_status_message(out, sizeof(out), rows[i].status, rows[i].body, strlen(rows[i].body));
        ROW_CHECK(rows[i].name, strcmp(out, rows[i].want) == 0, "got \"%s\"", out);
        ROW_CHECK(rows[i].name, cli_is_webhook_denial(out) == rows[i].denial, "denial %d",
                  cli_is_webhook_denial(out));
    }
    /* a huge message is cut to the bound */
    size_t n = 100000;
    char *big = malloc(n + 32);
    assert_non_null(big);
    strcpy(big, "{\"message\":\"");
    memset(big + 12, 'x', n);
    strcpy(big + 12 + n, "\"}");
    char out[CLI_MESSAGE_MAX];
    cli_status_message(out, sizeof(out), 400, big, strlen(big));
    assert_int_equal(strlen(out), CLI_MESSAGE_MAX - 1);
    assert_string_equal(out + CLI_MESSAGE_MAX - 4, "...");
    free(big);
}

static void test_usage_lists_every_exit_code(void **state)
{
    (void)state;
    const char *u = cli_usage();
    for (int code = CLI_EXIT_OK; code <= CLI_EXIT_PULL_FAILED; code++) {
        char line[32];
        snprintf(line, sizeof(line), "\n  %d  ", code);
        if (strstr(u, line) == NULL)
            fail_msg("--help does not document exit code %d", code);
    }
    for (const char *w = "list\0pull\0status\0upgrade\0--watch\0--wait\0--force\0--timeout\0"
                         "--kubeconfig\0--context\0--namespace\0--all-namespaces\0--node\0";
         *w != '\0'; w += strlen(w) + 1)
        if (strstr(u, w) == NULL)
            fail_msg("--help does not mention %s", w);
}

static void test_messages(void **state)
{
    (void)state;
    strbuf b = {0};
    cli_say_pulled(&b, "edge", "agent-x7k2p", "node-1", "bpwch9f77j");
    assert_non_null(strstr(b.data, "revision bpwch9f77j"));
    assert_non_null(strstr(b.data, "Job on node-1"));
    assert_non_null(strstr(b.data, "kubectl ota status agent-x7k2p -n edge --watch"));
    assert_non_null(strstr(b.data, "kubectl ota upgrade agent-x7k2p -n edge --wait"));
    strbuf_free(&b);
    cli_say_not_ready(&b, "edge", "agent-x7k2p", "node-1", "bpwch9f77j", "PendingUpgrade");
    assert_non_null(strstr(b.data, "is PendingUpgrade"));
    assert_non_null(strstr(b.data, "down for the whole pull"));
    assert_non_null(strstr(b.data, "kubectl ota pull agent-x7k2p -n edge"));
    assert_non_null(strstr(b.data, "--force"));
    strbuf_free(&b);
    cli_say_not_ready(&b, "edge", "agent-x7k2p", "node-1", "bpwch9f77j", "Pulling");
    assert_non_null(strstr(b.data, "A pre-pull is running"));
    assert_null(strstr(b.data, "Pre-pull first"));
    strbuf_free(&b);
    /* after a failure: retry only where a retry can help */
    static const struct {
        pullerr_refusal refusal;
        const char *want, *not;
    } failed[] = {
        {PULLERR_REFUSED_NOT, "Retry with: kubectl ota pull agent-x7k2p -n edge\n", "admin"},
        {PULLERR_REFUSED_IMAGE,
         "A retry cannot help: the registry has no such image, or its name is not valid.\n"
         "Ask the admin of DaemonSet edge/agent about the image and its tag.\n",
         "Retry"},
        {PULLERR_REFUSED_CREDENTIALS,
         "A retry cannot help: the registry refused the node's credentials.\n"
         "Ask the admin of DaemonSet edge/agent about the pull secret (imagePullSecrets).\n",
         "Retry"},
    };
    for (size_t i = 0; i < sizeof(failed) / sizeof(failed[0]); i++) {
        cli_say_failed_next(&b, "edge", "agent-x7k2p", "agent", failed[i].refusal);
        assert_string_equal(b.data, failed[i].want);
        assert_null(strstr(b.data, failed[i].not));
        strbuf_free(&b);
    }
}

/* The apiserver's 403s (Kubernetes 1.32 words) as kubectl-ota reads them. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *name, *message;
        cli_refusal want;
        const char *who, *says;
    } rows[] = {
        {"the Node authorizer on a GET",
         "pods \"agent-n285m\" is forbidden: User \"system:node:node-1\" cannot get resource "
         "\"pods\" in API group \"\" in the namespace \"edge\": no relationship found between "
         "node 'node-1' and this object",
         CLI_REFUSED_NODE_READ, "node-1",
         "error: pod edge/agent-n285m is not on node node-1, or does not exist: a node's "
         "credentials may read only the pods that run on that node; use the credentials of the "
         "pod's own node.\n"},
        {"NodeRestriction on a delete",
         "pods \"agent-n285m\" is forbidden: node \"node-1\" can only delete pods with "
         "spec.nodeName set to itself",
         CLI_REFUSED_NODE_DELETE, "node-1",
         "error: node node-1 may not upgrade pod edge/agent-n285m: the pod runs on another node, "
         "and the apiserver lets a node delete only the pods that run on it; ask the user of the "
         "pod's node to upgrade it.\n"},
        {"NodeRestriction on a status write",
         "pods \"agent-n285m\" is forbidden: node \"node-1\" can only update pod status for pods "
         "with spec.nodeName set to itself",
         CLI_REFUSED_NODE_STATUS, "node-1", "may not ask for the pre-pull of pod edge/agent-n285m"},
        {"RBAC, a plain user",
         "pods \"agent-n285m\" is forbidden: User \"jane\" cannot get resource \"pods\" in API "
         "group \"\" in the namespace \"edge\"",
         CLI_REFUSED_RBAC, "jane",
         "error: jane may not read or change pod edge/agent-n285m: no RBAC rule grants it"},
        {"the node's name is the one before the words",
         "pods \"node \\\"x\" is forbidden: node \"node-2\" can only delete pods with "
         "spec.nodeName set to itself",
         CLI_REFUSED_NODE_DELETE, "node-2", "error: node node-2 may not upgrade"},
        {"a hostile name is made safe",
         "no relationship found between node 'evil\033[2J' and this object", CLI_REFUSED_NODE_READ,
         "evil?[2J", "is not on node evil?[2J,"},
        {"a webhook's denial is not one of these",
         "admission webhook \"podstatus.validate.ota-prepull.openyurt.io\" denied the request: "
         "node node-1 may not change ...",
         CLI_REFUSED_OTHER, "", NULL},
        {"an empty name", "no relationship found between node '' and this object",
         CLI_REFUSED_OTHER, "", NULL},
        {"the words without a node", "can only delete pods with spec.nodeName set to itself",
         CLI_REFUSED_OTHER, "", NULL},
        {"nothing", "", CLI_REFUSED_OTHER, "", NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char who[64];
        cli_refusal got = cli_refusal_of(rows[i].message, who, sizeof(who));
        ROW_CHECK(rows[i].name, got == rows[i].want, "%d, want %d", (int)got, (int)rows[i].want);
        ROW_CHECK(rows[i].name, strcmp(who, rows[i].who) == 0, "who \"%s\"", who);
        strbuf b = {0};
        ROW_CHECK(rows[i].name, cli_say_refusal(&b, "edge", "agent-n285m", rows[i].message) == got,
                  "say");
        if (rows[i].says == NULL) {
            ROW_CHECK(rows[i].name, b.data == NULL, "said \"%s\"", b.data);
        } else {
            ROW_CHECK(rows[i].name, b.data != NULL && strstr(b.data, rows[i].says) != NULL,
                      "said \"%s\"", b.data);
            /* then the apiserver's own words */
            ROW_CHECK(rows[i].name, strstr(b.data, "\nThe apiserver said: ") != NULL, "no message");
        }
        strbuf_free(&b);
    }
    /* who is cut to its buffer */
    char small[8];
    assert_int_equal(cli_refusal_of("User \"a-very-long-user-name\" cannot get", small,
                                    sizeof(small)),
                     CLI_REFUSED_RBAC);
    assert_true(strlen(small) < sizeof(small));
}

static void test_hidden_reads(void **state)
{
    (void)state;
    assert_null(cli_status_hidden(0, 0));
    assert_non_null(strstr(cli_status_hidden(1, 1), "the Job itself and the kubelet's Events"));
    assert_non_null(strstr(cli_status_hidden(1, 0), "may not read Jobs"));
    assert_null(strstr(cli_status_hidden(1, 0), "Events"));
    assert_non_null(strstr(cli_status_hidden(0, 1), "the kubelet's Events"));
    assert_non_null(strstr(cli_list_hidden_note(), CLI_IMAGES_HIDDEN));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ages),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_status_messages),
        cmocka_unit_test(test_usage_lists_every_exit_code),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_hidden_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

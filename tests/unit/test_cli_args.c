/*
 * test_cli_args.c - kubectl-ota's command line (cli/args.c): every command
 * with its flags in kubectl's spellings, the usage errors, durations and
 * the names that may go into a URL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "row_check.h"

#define MAX_ARGV 12
#define S 1000000000ull

/* One row: the words after `kubectl-ota`, and what they must give. */
typedef struct row {
    const char *name;
    const char *argv[MAX_ARGV];
    int ok;
    cli_command command;
    const char *pod, *node, *ns, *kubeconfig, *context;
    int all, watch, wait, force;
    uint64_t timeout_ns;
    const char *err; /* a word of the usage error */
} row;

static const row rows[] = {
    {"list", {"list"}, 1, CLI_CMD_LIST, .timeout_ns = 600 * S},
    {"list -A", {"list", "-A"}, 1, CLI_CMD_LIST, .all = 1, .timeout_ns = 600 * S},
    {"list --all-namespaces --node", {"list", "--all-namespaces", "--node", "node-1"}, 1,
     CLI_CMD_LIST, .node = "node-1", .all = 1, .timeout_ns = 600 * S},
    {"list --node=N -n NS", {"list", "--node=edge-7.lab", "-n", "edge"}, 1, CLI_CMD_LIST,
     .node = "edge-7.lab", .ns = "edge", .timeout_ns = 600 * S},
    {"flags before the command", {"-n", "edge", "--context", "kind-x", "list"}, 1, CLI_CMD_LIST,
     .ns = "edge", .context = "kind-x", .timeout_ns = 600 * S},
    {"-nNS and --namespace=NS", {"pull", "-nedge", "agent-x7k2p"}, 1, CLI_CMD_PULL,
     .pod = "agent-x7k2p", .ns = "edge", .timeout_ns = 600 * S},
    {"--kubeconfig=FILE", {"pull", "agent-x7k2p", "--kubeconfig=/tmp/k", "--namespace=edge"}, 1,
     CLI_CMD_PULL, .pod = "agent-x7k2p", .ns = "edge", .kubeconfig = "/tmp/k",
     .timeout_ns = 600 * S},
    {"pod/NAME", {"pull", "pod/agent-x7k2p"}, 1, CLI_CMD_PULL, .pod = "agent-x7k2p",
     .timeout_ns = 600 * S},
    {"status --watch --timeout 90s", {"status", "agent-x7k2p", "--watch", "--timeout", "90s"}, 1,
     CLI_CMD_STATUS, .pod = "agent-x7k2p", .watch = 1, .timeout_ns = 90 * S},
    {"status -w --timeout=1h30m", {"status", "-w", "--timeout=1h30m", "agent-x7k2p"}, 1,
     CLI_CMD_STATUS, .pod = "agent-x7k2p", .watch = 1, .timeout_ns = 5400 * S},
    {"upgrade --wait --force", {"upgrade", "agent-x7k2p", "--wait", "--force"}, 1,
     CLI_CMD_UPGRADE, .pod = "agent-x7k2p", .wait = 1, .force = 1, .timeout_ns = 600 * S},
    {"upgrade after --", {"upgrade", "--", "agent-x7k2p"}, 1, CLI_CMD_UPGRADE,
     .pod = "agent-x7k2p", .timeout_ns = 600 * S},
    {"an unknown flag beside -h", {"upgrade", "--bogus", "-h"}, 0, .err = "unknown flag"},
    {"-h", {"pull", "-h"}, 1, CLI_CMD_HELP, .timeout_ns = 600 * S},
    {"help", {"help"}, 1, CLI_CMD_HELP, .timeout_ns = 600 * S},
    {"--version", {"--version"}, 1, CLI_CMD_VERSION, .timeout_ns = 600 * S},
    {"version", {"version"}, 1, CLI_CMD_VERSION, .timeout_ns = 600 * S},
    {"--version after a command", {"pull", "p", "--version"}, 1, CLI_CMD_VERSION,
     .timeout_ns = 600 * S},
    {"--help beats --version", {"--version", "-h"}, 1, CLI_CMD_HELP, .timeout_ns = 600 * S},
    {"--version=x", {"--version=x"}, 0, .err = "takes no value"},

    {"no command", {NULL}, 0, .err = "no command"},
    {"unknown command", {"delete", "x"}, 0, .err = "unknown command \"delete\""},
    {"unknown flag", {"list", "--nodes", "n"}, 0, .err = "unknown flag: --nodes"},
    {"unknown shorthand", {"list", "-x"}, 0, .err = "unknown shorthand flag: 'x'"},
    {"flag without its value", {"list", "--node"}, 0, .err = "--node needs an argument"},
    {"value for a switch", {"upgrade", "p", "--force=yes"}, 0, .err = "takes no value"},
    {"pull without a pod", {"pull"}, 0, .err = "pull needs a pod name"},
    {"two pods", {"pull", "a", "b"}, 0, .err = "unexpected argument \"b\""},
    {"list with a pod", {"list", "agent-x"}, 0, .err = "list takes no pod name"},
    {"--node with pull", {"pull", "p", "--node", "n"}, 0, .err = "--node applies to \"list\""},
    {"-A with status", {"status", "p", "-A"}, 0,
     .err = "--all-namespaces applies to \"list\""},
    {"--watch with list", {"list", "--watch"}, 0, .err = "--watch applies to \"status\""},
    {"--wait with status", {"status", "p", "--wait"}, 0, .err = "--wait applies to \"upgrade\""},
    {"--force with pull", {"pull", "p", "--force"}, 0, .err = "--force applies to \"upgrade\""},
    {"--timeout without --watch", {"status", "p", "--timeout", "5m"}, 0,
     .err = "--timeout applies to"},
    {"bad --timeout", {"status", "p", "-w", "--timeout", "5 minutes"}, 0,
     .err = "--timeout \"5 minutes\""},
    {"-A and -n", {"list", "-A", "-n", "edge"}, 0, .err = "exclude each other"},
    {"a pod name that is a path", {"pull", "../secrets/x"}, 0, .err = "is not a pod name"},
    {"a pod name with a query", {"status", "p?watch=1"}, 0, .err = "is not a pod name"},
    {"an upper-case namespace", {"list", "-n", "Edge"}, 0, .err = "is not a namespace name"},
    {"a namespace with a dot", {"list", "-n", "a.b"}, 0, .err = "is not a namespace name"},
    {"a node with a slash", {"list", "--node", "n/1"}, 0, .err = "is not a node name"},
    {"an empty --kubeconfig", {"list", "--kubeconfig="}, 0, .err = "--kubeconfig wants"},
};

static void test_args_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        char *argv[MAX_ARGV + 1] = {"kubectl-ota"};
        int argc = 1;
        while (argc <= MAX_ARGV && r->argv[argc - 1] != NULL) {
            argv[argc] = (char *)r->argv[argc - 1];
            argc++;
        }
        cli_args a;
        char err[256] = "";
        int rc = cli_args_parse(argc, argv, &a, err, sizeof(err));
        if (!r->ok) {
            ROW_CHECK(r->name, rc == -1, "parsed, want an error with \"%s\"", r->err);
            ROW_CHECK(r->name, strstr(err, r->err) != NULL, "error \"%s\", want \"%s\"", err,
                      r->err);
            continue;
        }
        ROW_CHECK(r->name, rc == 0, "error \"%s\"", err);
        ROW_CHECK(r->name, a.command == r->command, "command %d", (int)a.command);
#define SAME(field) \
    ROW_CHECK(r->name, (a.field == NULL) == (r->field == NULL) && \
              (a.field == NULL || strcmp(a.field, r->field) == 0), #field " %s", \
              a.field != NULL ? a.field : "(null)")
        SAME(pod);
        SAME(node);
        ROW_CHECK(r->name, (a.namespace == NULL) == (r->ns == NULL) &&
                  (a.namespace == NULL || strcmp(a.namespace, r->ns) == 0),
                  "namespace %s", a.namespace != NULL ? a.namespace : "(null)");
        SAME(kubeconfig);
        SAME(context);
#undef SAME
        ROW_CHECK(r->name, a.all_namespaces == r->all, "all %d", a.all_namespaces);
        ROW_CHECK(r->name, a.watch == r->watch, "watch %d", a.watch);
        ROW_CHECK(r->name, a.wait == r->wait, "wait %d", a.wait);
        ROW_CHECK(r->name, a.force == r->force, "force %d", a.force);
        ROW_CHECK(r->name, a.timeout_ns == r->timeout_ns, "timeout %llu",
                  (unsigned long long)a.timeout_ns);
    }
}

static void test_durations(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int ok;
        uint64_t ns;
    } d[] = {
        {"90", 1, 90 * S},          {"90s", 1, 90 * S},       {"10m", 1, 600 * S},
        {"1h30m", 1, 5400 * S},     {"1.5h", 1, 5400 * S},    {"500ms", 1, S / 2},
        {"2m30s", 1, 150 * S},      {"168h", 1, 168 * 3600 * S}, {"0.25", 1, S / 4},
        {"", 0, 0},                 {"s", 0, 0},              {"10x", 0, 0},
        {"-5s", 0, 0},              {"1h 30m", 0, 0},         {"169h", 0, 0},
        {"0s", 0, 0},               {"1..5s", 0, 0},          {"10m5", 0, 0},
        {"500us", 0, 0},            {"1ms", 1, S / 1000}, /* under a millisecond: a typo */
    };
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
        /* through the flag, as a user gives it */
        char *argv[] = {"kubectl-ota", "status", "agent-x7k2p", "--watch", "--timeout",
                        (char *)d[i].in, NULL};
        cli_args a;
        char err[256];
        int rc = cli_args_parse(6, argv, &a, err, sizeof(err));
        ROW_CHECK(d[i].in, (rc == 0) == d[i].ok, "rc %d: %s", rc, err);
        uint64_t ns = a.timeout_ns;
        if (!d[i].ok)
            ROW_CHECK(d[i].in, strstr(err, "--timeout") != NULL, "%s", err);
        if (d[i].ok) {
            /* fractions go through a double: within a microsecond */
            uint64_t diff = ns > d[i].ns ? ns - d[i].ns : d[i].ns - ns;
            ROW_CHECK(d[i].in, diff < 1000, "got %llu ns", (unsigned long long)ns);
        }
    }
}

static void test_names(void **state)
{
    (void)state;
    char long_name[300];
    memset(long_name, 'a', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    long_name[253] = '\0';
    assert_true(cli_name_valid(long_name, CLI_NAME_MAX, 1));
    long_name[253] = 'a';
    long_name[254] = '\0';
    assert_false(cli_name_valid(long_name, CLI_NAME_MAX, 1));
    assert_true(cli_name_valid("node-1.example", CLI_NAME_MAX, 1));
    assert_false(cli_name_valid("node-1.example", CLI_NAMESPACE_MAX, 0));
    assert_false(cli_name_valid("-a", CLI_NAME_MAX, 1));
    assert_false(cli_name_valid("a-", CLI_NAME_MAX, 1));
    assert_false(cli_name_valid("", CLI_NAME_MAX, 1));
    assert_false(cli_name_valid(NULL, CLI_NAME_MAX, 1));
    assert_false(cli_name_valid("a%2f", CLI_NAME_MAX, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_table),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

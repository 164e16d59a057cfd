/*
 * args.h - kubectl-ota's command line, parsed by a pure function: argv in,
 * a cli_args or a usage error out.  No getopt (its state is global), no
 * environment: app.c reads KUBECONFIG and HOME itself.
 *
 * kubectl runs a plugin with the words after `kubectl ota` (flags before
 * the plugin name are refused by kubectl itself), so the flags may come
 * before or after the subcommand, in kubectl's spellings: `--flag value`,
 * `--flag=value`, `-n value`, `-nvalue`, `-A`, and `--` ends the flags.
 */
#ifndef OTA_CLI_ARGS_H
#define OTA_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

typedef enum cli_command {
    CLI_CMD_NONE,
    CLI_CMD_LIST,
    CLI_CMD_PULL,
    CLI_CMD_STATUS,
    CLI_CMD_UPGRADE,
    CLI_CMD_HELP,
    CLI_CMD_VERSION, /* --version, or the command "version" */
} cli_command;

/* Longest name kubectl-ota sends in a URL: a DNS subdomain (pods, nodes). */
#define CLI_NAME_MAX 253
/* A namespace is a DNS label. */
#define CLI_NAMESPACE_MAX 63

/* Default and bounds of --timeout (status --watch, upgrade --wait). */
#define CLI_TIMEOUT_DEFAULT_NS (10ull * 60 * 1000000000ull)
#define CLI_TIMEOUT_MAX_NS (7ull * 24 * 3600 * 1000000000ull)

typedef struct cli_args {
    cli_command command;
    const char *pod;        /* pull, status, upgrade: the pod's name */
    const char *node;       /* list --node, or NULL */
    const char *kubeconfig; /* --kubeconfig, or NULL */
    const char *context;    /* --context, or NULL */
    const char *namespace;  /* -n/--namespace, or NULL: the context's, else default */
    int all_namespaces;     /* -A/--all-namespaces (list only) */
    int watch;              /* status --watch / -w */
    int wait;               /* upgrade --wait */
    int force;              /* upgrade --force */
    uint64_t timeout_ns;    /* --timeout, CLI_TIMEOUT_DEFAULT_NS unless given */
} cli_args;

/* Parses argv[1..argc).  0, or -1 with a usage error in err (the caller
 * exits CLI_EXIT_USAGE).  Strings in out point into argv. */
int cli_args_parse(int argc, char *const *argv, cli_args *out, char *err, size_t errlen);


/* A Kubernetes object name kubectl-ota may put in a URL path or a selector:
 * lowercase letters, digits, '-' (and '.' when dots), starting and ending
 * with a letter or digit, at most max bytes.  A DNS subdomain (pods, nodes)
 * is (s, CLI_NAME_MAX, 1), a DNS label (namespaces) (s, CLI_NAMESPACE_MAX, 0). */
int cli_name_valid(const char *s, size_t max, int dots);

#endif

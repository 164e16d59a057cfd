/*
 * args.c - see args.h.
 */
#include "args.h"

#include <string.h>

#include "duration.h"
#include "errmsg.h"

int cli_name_valid(const char *s, size_t max, int dots)
{
    size_t n = s != NULL ? strlen(s) : 0;
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (alnum)
            continue;
        if ((c != '-' && !(dots && c == '.')) || i == 0 || i == n - 1)
            return 0;
    }
    return 1;
}

typedef enum flag_id {
    F_NODE,
    F_KUBECONFIG,
    F_CONTEXT,
    F_NAMESPACE,
    F_ALL,
    F_WATCH,
    F_WAIT,
    F_FORCE,
    F_TIMEOUT,
    F_VERSION,
    F_HELP,
} flag_id;

static const struct flag {
    const char *long_name;
    char short_name; /* 0: none */
    int takes_value;
    flag_id id;
} flags[] = {
    {"node", 0, 1, F_NODE},
    {"kubeconfig", 0, 1, F_KUBECONFIG},
    {"context", 0, 1, F_CONTEXT},
    {"namespace", 'n', 1, F_NAMESPACE},
    {"all-namespaces", 'A', 0, F_ALL},
    {"watch", 'w', 0, F_WATCH},
    {"wait", 0, 0, F_WAIT},
    {"force", 0, 0, F_FORCE},
    {"timeout", 0, 1, F_TIMEOUT},
    {"version", 0, 0, F_VERSION},
    {"help", 'h', 0, F_HELP},
};

static const struct flag *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strlen(flags[i].long_name) == len && strncmp(flags[i].long_name, name, len) == 0)
            return &flags[i];
    return NULL;
}

static const struct flag *find_short(char c)
{
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (flags[i].short_name == c)
            return &flags[i];
    return NULL;
}

static const struct {
    const char *name;
    cli_command command;
} commands[] = {
    {"list", CLI_CMD_LIST},
    {"pull", CLI_CMD_PULL},
    {"status", CLI_CMD_STATUS},
    {"upgrade", CLI_CMD_UPGRADE},
    {"help", CLI_CMD_HELP},
    {"version", CLI_CMD_VERSION},
};

/* Which commands a flag belongs to (0: every command). */
static const char *flag_owner(flag_id id, cli_command *only)
{
    switch (id) {
    case F_NODE:
    case F_ALL:
        *only = CLI_CMD_LIST;
        return "list";
    case F_WATCH:
        *only = CLI_CMD_STATUS;
        return "status";
    case F_WAIT:
    case F_FORCE:
        *only = CLI_CMD_UPGRADE;
        return "upgrade";
    default:
        *only = CLI_CMD_NONE;
        return NULL;
    }
}

static int set_flag(cli_args *o, const struct flag *f, const char *value, int seen[], char *err,
                    size_t errlen)
{
    seen[f->id] = 1;
    switch (f->id) {
    case F_NODE:
        if (!cli_name_valid(value, CLI_NAME_MAX, 1))
            return errmsg_set(err, errlen, "--node \"%s\" is not a node name", value);
        o->node = value;
        break;
    case F_KUBECONFIG:
        if (value[0] == '\0')
            return errmsg_set(err, errlen, "--kubeconfig wants a file");
        o->kubeconfig = value;
        break;
    case F_CONTEXT:
        if (value[0] == '\0')
            return errmsg_set(err, errlen, "--context wants a context name");
        o->context = value;
        break;
    case F_NAMESPACE:
        if (!cli_name_valid(value, CLI_NAMESPACE_MAX, 0))
            return errmsg_set(err, errlen, "-n/--namespace \"%s\" is not a namespace name", value);
        o->namespace = value;
        break;
    case F_ALL:
        o->all_namespaces = 1;
        break;
    case F_WATCH:
        o->watch = 1;
        break;
    case F_WAIT:
        o->wait = 1;
        break;
    case F_FORCE:
        o->force = 1;
        break;
    case F_TIMEOUT:
        /* under a millisecond, or over a week: a typo */
        if (duration_parse(value, 1000000, CLI_TIMEOUT_MAX_NS, &o->timeout_ns, err, errlen) != 0)
            return errmsg_set(err, errlen,
                              "--timeout \"%s\": want a duration such as 90s, 10m or 1h30m "
                              "(at most 168h)",
                              value);
        break;
    case F_VERSION:
    case F_HELP:
        break; /* taken by cli_args_parse */
    }
    return 0;
}

int cli_args_parse(int argc, char *const *argv, cli_args *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->timeout_ns = CLI_TIMEOUT_DEFAULT_NS;
    int seen[F_HELP + 1] = {0}, help = 0, version = 0, flags_done = 0;
    const char *positional[2] = {NULL, NULL};
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (flags_done || a[0] != '-' || a[1] == '\0') {
            if (n_pos == 2)
                return errmsg_set(err, errlen, "unexpected argument \"%s\"", a);
            positional[n_pos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            flags_done = 1;
            continue;
        }
        const struct flag *f;
        const char *value = NULL;
        if (a[1] == '-') {
            const char *eq = strchr(a + 2, '=');
            size_t len = eq != NULL ? (size_t)(eq - (a + 2)) : strlen(a + 2);
            f = find_long(a + 2, len);
            if (f == NULL)
                return errmsg_set(err, errlen, "unknown flag: %.*s", (int)(len + 2), a);
            if (eq != NULL) {
                if (!f->takes_value)
                    return errmsg_set(err, errlen, "flag --%s takes no value", f->long_name);
                value = eq + 1;
            }
        } else {
            f = find_short(a[1]);
            if (f == NULL)
                return errmsg_set(err, errlen, "unknown shorthand flag: '%c' in %s", a[1], a);
            if (a[2] != '\0') {
                if (!f->takes_value)
                    return errmsg_set(err, errlen, "unknown flag: %s (-%c takes no value)", a,
                                      a[1]);
                value = a[2] == '=' ? a + 3 : a + 2;
            }
        }
        if (f->takes_value && value == NULL) {
            if (i + 1 >= argc)
                return errmsg_set(err, errlen, "flag --%s needs an argument", f->long_name);
            value = argv[++i];
        }
        if (f->id == F_HELP || f->id == F_VERSION) {
            help |= f->id == F_HELP;
            version |= f->id == F_VERSION;
            continue;
        }
        if (set_flag(o, f, value, seen, err, errlen) != 0)
            return -1;
    }
    if (help || version) {
        o->command = help ? CLI_CMD_HELP : CLI_CMD_VERSION;
        return 0;
    }
    if (n_pos == 0)
        return errmsg_set(err, errlen, "no command: want list, pull, status or upgrade");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(positional[0], commands[i].name) == 0)
            o->command = commands[i].command;
    if (o->command == CLI_CMD_NONE)
        return errmsg_set(err, errlen, "unknown command \"%s\": want list, pull, status or upgrade",
                          positional[0]);
    if (o->command == CLI_CMD_HELP || o->command == CLI_CMD_VERSION)
        return 0;
    for (int id = 0; id <= F_HELP; id++) {
        cli_command only;
        const char *owner = flag_owner((flag_id)id, &only);
        if (seen[id] && only != CLI_CMD_NONE && only != o->command) {
            for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
                if (flags[i].id == (flag_id)id)
                    return errmsg_set(err, errlen, "--%s applies to \"%s\" only",
                                      flags[i].long_name, owner);
        }
    }
    if (seen[F_TIMEOUT] && !o->watch && !o->wait)
        return errmsg_set(err, errlen, "--timeout applies to status --watch and upgrade --wait");
    if (o->all_namespaces && o->namespace != NULL)
        return errmsg_set(err, errlen, "-A/--all-namespaces and -n/--namespace exclude each other");
    if (o->command == CLI_CMD_LIST) {
        if (n_pos > 1)
            return errmsg_set(err, errlen,
                              "list takes no pod name (got \"%s\"); use --node to filter",
                              positional[1]);
        return 0;
    }
    if (n_pos < 2)
        return errmsg_set(err, errlen, "%s needs a pod name: kubectl ota %s POD", positional[0],
                          positional[0]);
    const char *pod = positional[1];
    /* kubectl's TYPE/NAME spelling is accepted for pods */
    if (strncmp(pod, "pod/", 4) == 0)
        pod += 4;
    else if (strncmp(pod, "pods/", 5) == 0)
        pod += 5;
    if (!cli_name_valid(pod, CLI_NAME_MAX, 1))
        return errmsg_set(err, errlen, "\"%s\" is not a pod name", positional[1]);
    o->pod = pod;
    return 0;
}

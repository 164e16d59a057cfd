/*
 * test_flagtab.c - the daemons' flag table (lib/flagtab): a row per kind,
 * bound, alias and default against a table made for the test; getopt's
 * spellings and words (abbreviations, `--`, stray arguments, the usage
 * errors); --help written from the rows; and both daemons' real tables
 * (webhook/options.c, controller/flags.c): every default parses and is
 * the value the programs had before the table, every bound fits its
 * field, every alias names a row and is told in --help.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"

#include "flags.h"
#include "flagtab.h"
#include "log.h"
#include "options.h"
#include "ota_names.h"
#include "strbuf.h"

typedef struct cfg {
    const char *name, *user;
    unsigned long long whole;
    unsigned timeout_ms;
    double qps;
    int burst;
    uint64_t period_ns;
    long deadline_s;
    int elect, fast, tls;
    log_level level;
    log_format format;
} cfg;

#define AT(field) FLAGTAB_FIELD(cfg, field)

static const flagtab_choice tls_choices[] = {
    {"VersionTLS12", 12}, {"VersionTLS13", 13}, {"1.2", 12}, {"1.3", 13}, {NULL, 0},
};

static const flagtab_row rows[] = {
    {"name", FLAGTAB_STRING, "NAME", "x", "who", AT(name)},
    {"user", FLAGTAB_STRING, "USER", "u", "never empty", AT(user), .nonempty = 1},
    {.name = "names", .kind = FLAGTAB_ALIAS, .alias_of = "name"},
    {.name = "old-name", .kind = FLAGTAB_ALIAS, .alias_of = "name"},
    {"whole", FLAGTAB_WHOLE, "N", "8", NULL, AT(whole), .min = 1, .max = 256},
    {"timeout-seconds", FLAGTAB_WHOLE, "N", "10", "cut after this long\n", AT(timeout_ms),
     .min = 1, .max = 3600, .unit = 1000},
    {"qps", FLAGTAB_NUMBER, "N", "20", "rate", AT(qps), .real_min = 0.1, .real_max = 100},
    {"burst", FLAGTAB_NUMBER, "N", NULL, "no default", AT(burst), .real_min = 1, .real_max = 100},
    {"period", FLAGTAB_DURATION, "D", "2s", NULL, AT(period_ns), .min = 100000000ull,
     .max = 3600000000000ull},
    {"deadline-with-a-very-long-name", FLAGTAB_DURATION, "D", "10m", "whole\nseconds",
     AT(deadline_s), .min = 1000000000ull, .max = 86400000000000ull, .unit = 1000000000ull},
    {"elect", FLAGTAB_BOOL, NULL, "false", NULL, AT(elect)},
    {"fast", FLAGTAB_SWITCH, NULL, NULL, "go fast", AT(fast)},
    {"tls", FLAGTAB_CHOICE, "V", "VersionTLS12", "{} (default) or VersionTLS13", AT(tls),
     .choices = tls_choices},
    FLAGTAB_COMMON_ROWS(cfg, level, format),
};

static const flagtab table = {
    .program = "prog",
    .synopsis = "usage: prog [options]\n\n",
    .epilogue = "\n--names and --old-name are older spellings of --name.\n",
    .rows = rows,
    .n_rows = sizeof(rows) / sizeof(rows[0]),
};

/* Which field a row checks. */
enum field { F_NONE, F_NAME, F_USER, F_WHOLE, F_TIMEOUT, F_QPS, F_BURST, F_PERIOD, F_DEADLINE,
             F_ELECT, F_FAST, F_TLS, F_LEVEL, F_FORMAT };

static double field_value(const cfg *c, enum field f)
{
    switch (f) {
    case F_WHOLE: return (double)c->whole;
    case F_TIMEOUT: return c->timeout_ms;
    case F_QPS: return c->qps;
    case F_BURST: return c->burst;
    case F_PERIOD: return (double)c->period_ns;
    case F_DEADLINE: return (double)c->deadline_s;
    case F_ELECT: return c->elect;
    case F_FAST: return c->fast;
    case F_TLS: return c->tls;
    case F_LEVEL: return c->level;
    case F_FORMAT: return c->format;
    case F_NONE:
    case F_NAME:
    case F_USER: break;
    }
    return 0;
}

#define DURATION_WANTS                                                                             \
    "wants a duration such as 15s, 10m or 1h30m (units ns, us, ms, s, m, h; a plain number is "   \
    "seconds)"

static void test_parse(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *argv[8]; /* after argv[0], NULL-terminated */
        flagtab_result want;
        const char *err;     /* for FLAGTAB_BAD_* */
        enum field field;    /* for FLAGTAB_RUN */
        double value;
        const char *str;     /* F_NAME, F_USER */
    } rows_[] = {
        /* defaults: parsed as values are, before argv */
        {"string default", {NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, "x"},
        {"whole default", {NULL}, FLAGTAB_RUN, NULL, F_WHOLE, 8, NULL},
        {"whole default times unit", {NULL}, FLAGTAB_RUN, NULL, F_TIMEOUT, 10000, NULL},
        {"number default", {NULL}, FLAGTAB_RUN, NULL, F_QPS, 20, NULL},
        {"no default: the caller's", {NULL}, FLAGTAB_RUN, NULL, F_BURST, 7, NULL},
        {"duration default", {NULL}, FLAGTAB_RUN, NULL, F_PERIOD, 2e9, NULL},
        {"duration default in seconds", {NULL}, FLAGTAB_RUN, NULL, F_DEADLINE, 600, NULL},
        {"bool default", {NULL}, FLAGTAB_RUN, NULL, F_ELECT, 0, NULL},
        {"switch off", {NULL}, FLAGTAB_RUN, NULL, F_FAST, 0, NULL},
        {"choice default", {NULL}, FLAGTAB_RUN, NULL, F_TLS, 12, NULL},
        {"log level default", {NULL}, FLAGTAB_RUN, NULL, F_LEVEL, LOG_INFO, NULL},
        {"log format default", {NULL}, FLAGTAB_RUN, NULL, F_FORMAT, LOG_FORMAT_TEXT, NULL},
        /* string, spellings, aliases */
        {"string", {"--name", "a", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, "a"},
        {"string =", {"--name=b", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, "b"},
        {"string empty", {"--name=", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, ""},
        {"value that looks like a flag", {"--name", "--fast", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0,
         "--fast"},
        {"alias", {"--old-name", "c", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, "c"},
        {"prefix", {"--old", "d", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, "d"},
        {"prefix of a row and its alias is that row", {"--nam", "e", NULL}, FLAGTAB_RUN, NULL,
         F_NAME, 0, "e"},
        {"exact name beats longer names", {"--name", "f", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, "f"},
        {"later wins", {"--name", "a", "--name", "g", NULL}, FLAGTAB_RUN, NULL, F_NAME, 0, "g"},
        /* a string that names something is never empty */
        {"non-empty default", {NULL}, FLAGTAB_RUN, NULL, F_USER, 0, "u"},
        {"non-empty", {"--user", "v", NULL}, FLAGTAB_RUN, NULL, F_USER, 0, "v"},
        {"non-empty, one space is a value", {"--user", " ", NULL}, FLAGTAB_RUN, NULL, F_USER, 0,
         " "},
        {"non-empty given empty", {"--user", "", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --user wants a non-empty USER, got \"\"", F_NONE, 0, NULL},
        {"non-empty given empty with =", {"--user=", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --user wants a non-empty USER, got \"\"", F_NONE, 0, NULL},
        {"non-empty: a later empty one still fails", {"--user", "v", "--user=", NULL},
         FLAGTAB_BAD_VALUE, "prog: --user wants a non-empty USER, got \"\"", F_NONE, 0, NULL},
        /* whole numbers and their bounds */
        {"whole lower bound", {"--whole", "1", NULL}, FLAGTAB_RUN, NULL, F_WHOLE, 1, NULL},
        {"whole upper bound", {"--whole=256", NULL}, FLAGTAB_RUN, NULL, F_WHOLE, 256, NULL},
        {"whole plus sign", {"--whole", "+4", NULL}, FLAGTAB_RUN, NULL, F_WHOLE, 4, NULL},
        {"whole below", {"--whole", "0", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --whole wants a whole number from 1 to 256, got \"0\"", F_NONE, 0, NULL},
        {"whole above", {"--whole", "257", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --whole wants a whole number from 1 to 256, got \"257\"", F_NONE, 0, NULL},
        {"whole negative", {"--whole", "-1", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --whole wants a whole number from 1 to 256, got \"-1\"", F_NONE, 0, NULL},
        {"whole empty", {"--whole=", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --whole wants a whole number from 1 to 256, got \"\"", F_NONE, 0, NULL},
        {"whole fraction", {"--whole", "1.5", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --whole wants a whole number from 1 to 256, got \"1.5\"", F_NONE, 0, NULL},
        {"whole times unit", {"--timeout-seconds", "3600", NULL}, FLAGTAB_RUN, NULL, F_TIMEOUT,
         3600000, NULL},
        {"whole unit bound", {"--timeout-seconds", "3601", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --timeout-seconds wants a whole number from 1 to 3600, got \"3601\"", F_NONE, 0,
         NULL},
        /* numbers */
        {"number lower bound", {"--qps", "0.1", NULL}, FLAGTAB_RUN, NULL, F_QPS, 0.1, NULL},
        {"number below", {"--qps", "0.09", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --qps wants a number from 0.1 to 100, got \"0.09\"", F_NONE, 0, NULL},
        {"number above", {"--qps", "100.5", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --qps wants a number from 0.1 to 100, got \"100.5\"", F_NONE, 0, NULL},
        {"number not one", {"--qps", "abc", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --qps wants a number from 0.1 to 100, got \"abc\"", F_NONE, 0, NULL},
        {"number NaN", {"--burst", "nan", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --burst wants a number from 1 to 100, got \"nan\"", F_NONE, 0, NULL},
        {"number -NaN", {"--qps", "-nan", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --qps wants a number from 0.1 to 100, got \"-nan\"", F_NONE, 0, NULL},
        {"number into an int truncates", {"--burst", "1.5", NULL}, FLAGTAB_RUN, NULL, F_BURST, 1,
         NULL},
        {"number upper bound", {"--burst", "100", NULL}, FLAGTAB_RUN, NULL, F_BURST, 100, NULL},
        /* durations */
        {"duration lower bound", {"--period", "100ms", NULL}, FLAGTAB_RUN, NULL, F_PERIOD, 1e8,
         NULL},
        {"duration plain seconds", {"--period", "1.5", NULL}, FLAGTAB_RUN, NULL, F_PERIOD, 1.5e9,
         NULL},
        {"duration below", {"--period", "99ms", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --period " DURATION_WANTS " from 100ms to 1h0m0s, got \"99ms\"", F_NONE, 0, NULL},
        {"duration above", {"--period", "1h0m1s", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --period " DURATION_WANTS " from 100ms to 1h0m0s, got \"1h0m1s\"", F_NONE, 0, NULL},
        {"duration not one", {"--period", "10x", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --period " DURATION_WANTS " from 100ms to 1h0m0s, got \"10x\"", F_NONE, 0, NULL},
        {"duration in whole seconds rounds up", {"--deadline-with-a-very-long-name", "1500ms",
         NULL}, FLAGTAB_RUN, NULL, F_DEADLINE, 2, NULL},
        {"duration in whole seconds, exact", {"--deadline-with-a-very-long-name", "24h", NULL},
         FLAGTAB_RUN, NULL, F_DEADLINE, 86400, NULL},
        /* bool and switch */
        {"bool alone is true", {"--elect", NULL}, FLAGTAB_RUN, NULL, F_ELECT, 1, NULL},
        {"bool =true", {"--elect=true", NULL}, FLAGTAB_RUN, NULL, F_ELECT, 1, NULL},
        {"bool =false", {"--elect", "--elect=false", NULL}, FLAGTAB_RUN, NULL, F_ELECT, 0, NULL},
        {"bool =other", {"--elect=maybe", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --elect is true or false", F_NONE, 0, NULL},
        {"bool empty", {"--elect=", NULL}, FLAGTAB_BAD_VALUE, "prog: --elect is true or false",
         F_NONE, 0, NULL},
        {"bool never takes the next word", {"--elect", "false", NULL}, FLAGTAB_BAD_VALUE,
         "prog: unexpected argument \"false\"", F_NONE, 0, NULL},
        {"switch", {"--fast", NULL}, FLAGTAB_RUN, NULL, F_FAST, 1, NULL},
        {"switch takes no value", {"--fast=1", NULL}, FLAGTAB_BAD_USAGE,
         "test: option '--fast' doesn't allow an argument", F_NONE, 0, NULL},
        /* choice and log */
        {"choice", {"--tls", "VersionTLS13", NULL}, FLAGTAB_RUN, NULL, F_TLS, 13, NULL},
        {"choice's other spelling", {"--tls", "1.3", NULL}, FLAGTAB_RUN, NULL, F_TLS, 13, NULL},
        {"choice not one", {"--tls", "VersionTLS10", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --tls wants VersionTLS12 or VersionTLS13, got \"VersionTLS10\"", F_NONE, 0, NULL},
        {"log level", {"--log-level", "debug", NULL}, FLAGTAB_RUN, NULL, F_LEVEL, LOG_DEBUG, NULL},
        {"log level not one", {"--log-level", "verbose", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --log-level wants debug, info, warn or error, got \"verbose\"", F_NONE, 0, NULL},
        {"log format", {"--log-format=json", NULL}, FLAGTAB_RUN, NULL, F_FORMAT, LOG_FORMAT_JSON,
         NULL},
        {"log format not one", {"--log-format", "logfmt", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --log-format wants text or json, got \"logfmt\"", F_NONE, 0, NULL},
        /* usage errors, in getopt's words, naming the program as argv[0] does */
        {"unknown", {"--nope", NULL}, FLAGTAB_BAD_USAGE, "test: unrecognized option '--nope'",
         F_NONE, 0, NULL},
        {"unknown with a value", {"--nope=3", NULL}, FLAGTAB_BAD_USAGE,
         "test: unrecognized option '--nope=3'", F_NONE, 0, NULL},
        {"unknown short", {"-x", NULL}, FLAGTAB_BAD_USAGE, "test: invalid option -- 'x'", F_NONE,
         0, NULL},
        {"missing value", {"--whole", NULL}, FLAGTAB_BAD_USAGE,
         "test: option '--whole' requires an argument", F_NONE, 0, NULL},
        {"missing value names the spelling used", {"--old", NULL}, FLAGTAB_BAD_USAGE,
         "test: option '--old-name' requires an argument", F_NONE, 0, NULL},
        {"ambiguous", {"--log", "x", NULL}, FLAGTAB_BAD_USAGE,
         "test: option '--log' is ambiguous; possibilities: '--log-level' '--log-format'", F_NONE,
         0, NULL},
        {"a row and its aliases are not ambiguous", {"--n", NULL}, FLAGTAB_BAD_USAGE,
         "test: option '--name' requires an argument", F_NONE, 0, NULL},
        {"help takes no value", {"--help=x", NULL}, FLAGTAB_BAD_USAGE,
         "test: option '--help' doesn't allow an argument", F_NONE, 0, NULL},
        {"stray argument", {"extra", NULL}, FLAGTAB_BAD_VALUE,
         "prog: unexpected argument \"extra\"", F_NONE, 0, NULL},
        {"stray argument after the flags' errors", {"extra", "--whole", "0", NULL},
         FLAGTAB_BAD_VALUE, "prog: --whole wants a whole number from 1 to 256, got \"0\"", F_NONE,
         0, NULL},
        {"-- ends the flags", {"--", "--whole", NULL}, FLAGTAB_BAD_VALUE,
         "prog: unexpected argument \"--whole\"", F_NONE, 0, NULL},
        {"- is an argument", {"-", NULL}, FLAGTAB_BAD_VALUE, "prog: unexpected argument \"-\"",
         F_NONE, 0, NULL},
        /* help and version stop where they stand */
        {"help", {"--help", NULL}, FLAGTAB_SHOW_HELP, NULL, F_NONE, 0, NULL},
        {"help short", {"-h", NULL}, FLAGTAB_SHOW_HELP, NULL, F_NONE, 0, NULL},
        {"help short cluster", {"-hx", NULL}, FLAGTAB_SHOW_HELP, NULL, F_NONE, 0, NULL},
        {"help prefix", {"--he", NULL}, FLAGTAB_SHOW_HELP, NULL, F_NONE, 0, NULL},
        {"help before a bad value", {"--help", "--whole", "0", NULL}, FLAGTAB_SHOW_HELP, NULL,
         F_NONE, 0, NULL},
        {"bad value before help", {"--whole", "0", "--help", NULL}, FLAGTAB_BAD_VALUE,
         "prog: --whole wants a whole number from 1 to 256, got \"0\"", F_NONE, 0, NULL},
        {"version", {"--version", NULL}, FLAGTAB_SHOW_VERSION, NULL, F_NONE, 0, NULL},
    };
    for (size_t i = 0; i < sizeof(rows_) / sizeof(rows_[0]); i++) {
        char *argv[10] = {"test"};
        int argc = 1;
        while (rows_[i].argv[argc - 1] != NULL) {
            argv[argc] = (char *)rows_[i].argv[argc - 1];
            argc++;
        }
        cfg c = {.burst = 7};
        char err[256] = "";
        flagtab_result r = flagtab_parse(&table, argc, argv, &c, err, sizeof(err));
        ROW_CHECK(rows_[i].name, r == rows_[i].want, "result %d, want %d (%s)", r, rows_[i].want,
                  err);
        if (rows_[i].err != NULL)
            ROW_CHECK(rows_[i].name, strcmp(err, rows_[i].err) == 0, "err \"%s\"", err);
        const char *str = rows_[i].field == F_NAME ? c.name : c.user;
        if (rows_[i].field == F_NAME || rows_[i].field == F_USER)
            ROW_CHECK(rows_[i].name, str != NULL && strcmp(str, rows_[i].str) == 0,
                      "got \"%s\"", str != NULL ? str : "(null)");
        else if (rows_[i].field != F_NONE)
            ROW_CHECK(rows_[i].name, field_value(&c, rows_[i].field) == rows_[i].value,
                      "got %.17g, want %.17g", field_value(&c, rows_[i].field), rows_[i].value);
    }
}

static void test_no_argv0(void **state)
{
    (void)state;
    cfg c = {0};
    char err[128];
    /* argc 0 happens (execve with an empty argv): the program's name then */
    char *argv[] = {NULL};
    assert_int_equal(flagtab_parse(&table, 0, argv, &c, err, sizeof(err)), FLAGTAB_RUN);
    char *bad[] = {NULL, "--nope"};
    assert_int_equal(flagtab_parse(&table, 2, bad, &c, err, sizeof(err)), FLAGTAB_BAD_USAGE);
    assert_string_equal(err, "prog: unrecognized option '--nope'");
}

/* --help from the rows: the names, the metavar or =true|false, the text at
 * column 38 (two spaces past a longer head), continuation lines under it,
 * the default said after the text or in its {} slot, no alias. */
static void test_help(void **state)
{
    (void)state;
    strbuf b = {0};
    flagtab_help(&table, &b);
    assert_false(b.failed);
    assert_string_equal(
        b.data,
        "usage: prog [options]\n"
        "\n"
        "  --name NAME                         who (default x)\n"
        "  --user USER                         never empty (default u)\n"
        "  --whole N                           (default 8)\n"
        "  --timeout-seconds N                 cut after this long\n"
        "                                      (default 10)\n"
        "  --qps N                             rate (default 20)\n"
        "  --burst N                           no default\n"
        "  --period D                          (default 2s)\n"
        "  --deadline-with-a-very-long-name D  whole\n"
        "                                      seconds (default 10m)\n"
        "  --elect=true|false                  (default false)\n"
        "  --fast                              go fast\n"
        "  --tls V                             VersionTLS12 (default) or VersionTLS13\n"
        "  --log-level debug|info|warn|error   (default info)\n"
        "  --log-format text|json              (default text)\n"
        "  --version                           print version and commit, and exit\n"
        "  -h, --help\n"
        "\n"
        "--names and --old-name are older spellings of --name.\n");
    strbuf_free(&b);
}

/* ---- the daemons' tables -------------------------------------------------- */

/* What a field of this C type can hold. */
static uint64_t dst_max(flagtab_dst dst)
{
    switch (dst) {
    case FLAGTAB_DST_INT: return INT32_MAX;
    case FLAGTAB_DST_UINT: return UINT32_MAX;
    case FLAGTAB_DST_LONG: return INT64_MAX;
    case FLAGTAB_DST_ULONG:
    case FLAGTAB_DST_ULLONG:
    case FLAGTAB_DST_DOUBLE: return UINT64_MAX;
    case FLAGTAB_DST_NONE:
    case FLAGTAB_DST_STRING: break;
    }
    return 0;
}

static void check_table(const flagtab *t)
{
    strbuf help = {0};
    flagtab_help(t, &help);
    assert_false(help.failed);
    for (size_t i = 0; i < t->n_rows; i++) {
        const flagtab_row *r = &t->rows[i];
        for (size_t j = 0; j < i; j++)
            ROW_CHECK(r->name, strcmp(t->rows[j].name, r->name) != 0, "%s twice", r->name);
        uint64_t unit = r->unit != 0 ? r->unit : 1;
        switch (r->kind) {
        case FLAGTAB_WHOLE:
            ROW_CHECK(r->name, r->min <= r->max && r->max <= dst_max(r->dst) / unit,
                      "max %llu x %llu does not fit the field", (unsigned long long)r->max,
                      (unsigned long long)unit);
            break;
        case FLAGTAB_DURATION:
            ROW_CHECK(r->name, r->min <= r->max && r->max / unit <= dst_max(r->dst),
                      "max %llu / %llu does not fit the field", (unsigned long long)r->max,
                      (unsigned long long)unit);
            break;
        case FLAGTAB_NUMBER:
            ROW_CHECK(r->name, r->real_min <= r->real_max &&
                                   (r->dst == FLAGTAB_DST_DOUBLE ||
                                    (r->real_min >= 0 && r->real_max <= (double)dst_max(r->dst))),
                      "bounds %g..%g", r->real_min, r->real_max);
            break;
        case FLAGTAB_ALIAS: {
            const flagtab_row *to = flagtab_find(t, r->alias_of);
            ROW_CHECK(r->name, to != NULL && to->kind != FLAGTAB_ALIAS, "alias of %s",
                      r->alias_of);
            char spelled[80];
            snprintf(spelled, sizeof(spelled), "--%s", r->name);
            ROW_CHECK(r->name, strstr(help.data, spelled) != NULL, "--help never says %s",
                      spelled);
            break;
        }
        case FLAGTAB_HELP:
        case FLAGTAB_VERSION:
            break;
        default:
            ROW_CHECK(r->name, r->dst != FLAGTAB_DST_NONE, "no field");
            break;
        }
        ROW_CHECK(r->name, !r->nonempty || r->kind == FLAGTAB_STRING,
                  "non-empty on a row that is not a string");
        ROW_CHECK(r->name,
                  r->short_name == '\0' || r->kind == FLAGTAB_HELP || r->kind == FLAGTAB_VERSION ||
                      r->kind == FLAGTAB_SWITCH || r->kind == FLAGTAB_BOOL,
                  "a one-letter flag that takes a value");
        if (r->kind != FLAGTAB_ALIAS) {
            char spelled[80];
            snprintf(spelled, sizeof(spelled), "  --%s", r->name);
            const char *line = strstr(help.data, spelled);
            if (r->short_name != '\0')
                line = strstr(help.data, "--help");
            ROW_CHECK(r->name, line != NULL, "not in --help");
        }
    }
    strbuf_free(&help);
}

static void test_daemon_tables(void **state)
{
    (void)state;
    check_table(&options_flagtab);
    check_table(&flags_flagtab);
}

/* The defaults are those the programs had before the table (and --help
 * says them: tests/fixtures/command_line pins the text). */
static void test_webhook_defaults(void **state)
{
    (void)state;
    options o;
    char err[512] = "";
    char *argv[] = {"ota-webhook", "--tls-cert-file", "c", "--tls-private-key-file", "k"};
    assert_int_equal(options_parse(5, argv, 3, &o, err, sizeof(err)), FLAGTAB_RUN);
    assert_string_equal(o.cert_file, "c");
    assert_string_equal(o.key_file, "k");
    assert_string_equal(o.server.bind_address, ":9443");
    assert_string_equal(o.server.health_address, ":8081");
    assert_string_equal(o.server.metrics_address, ":8080");
    assert_int_equal(o.server.threads, 3);
    /* 7 MiB since issue 19 (docs/DECISIONS.md "Webhook limits") */
    assert_int_equal(o.server.max_request_bytes, 7u << 20);
    assert_string_equal(o.server.controller_username, OTA_DEFAULT_CONTROLLER_USERNAME);
    assert_int_equal(o.server.read_timeout_ms, 10000);
    assert_int_equal(o.server.shutdown_grace_ms, 25000);
    assert_int_equal(o.server.max_connections, 1024);
    assert_int_equal(o.server.max_header_bytes, 64u << 10);
    assert_int_equal(o.server.max_buffered_bytes, 64u << 20);
    assert_int_equal(o.server.write_timeout_ms, 10000);
    /* issue 19 §2 */
    assert_int_equal(o.server.handshake_timeout_ms, 3000);
    assert_int_equal(o.server.upload_grace_ms, 5000);
    assert_int_equal(o.server.upload_min_rate, 16384);
    assert_null(o.client_ca_file);
    assert_int_equal(o.tls_min_version, TLS1_2_VERSION);
    assert_int_equal(o.cert_poll_ms, 1000);
    assert_int_equal(o.log_level, LOG_INFO);
    assert_int_equal(o.log_format, LOG_FORMAT_TEXT);

    /* no CPU count: one thread */
    assert_int_equal(options_parse(5, argv, -1, &o, err, sizeof(err)), FLAGTAB_RUN);
    assert_int_equal(o.server.threads, 1);
    /* both files are required, and it is a usage error */
    char *one[] = {"ota-webhook", "--tls-cert-file", "c"};
    assert_int_equal(options_parse(3, one, 3, &o, err, sizeof(err)), FLAGTAB_BAD_USAGE);
    assert_string_equal(err,
                        "ota-webhook: --tls-cert-file and --tls-private-key-file are required");
    char *tls13[] = {"ota-webhook", "--tls-cert-file", "c", "--tls-private-key-file", "k",
                     "--tls-min-version", "1.3", "--shutdown-grace-seconds", "0"};
    assert_int_equal(options_parse(9, tls13, 3, &o, err, sizeof(err)), FLAGTAB_RUN);
    assert_int_equal(o.tls_min_version, TLS1_3_VERSION);
    assert_int_equal(o.server.shutdown_grace_ms, 0);
    /* HTTP/2 is gone (docs/DECISIONS.md "No HTTP/2"): its flag is unknown */
    char *h2[] = {"ota-webhook", "--tls-cert-file", "c", "--tls-private-key-file", "k", "--http2"};
    assert_int_equal(options_parse(6, h2, 3, &o, err, sizeof(err)), FLAGTAB_BAD_USAGE);
    assert_string_equal(err, "ota-webhook: unrecognized option '--http2'");
    /* an empty username would match no request's user: refused */
    char *nouser[] = {"ota-webhook", "--tls-cert-file", "c", "--tls-private-key-file", "k",
                      "--controller-username", ""};
    assert_int_equal(options_parse(7, nouser, 3, &o, err, sizeof(err)), FLAGTAB_BAD_VALUE);
    assert_string_equal(err, "ota-webhook: --controller-username wants a non-empty NAME, got \"\"");
    /* --co-writer-usernames: none by default; a list of whole names, none empty */
    assert_int_equal(options_parse(5, argv, 3, &o, err, sizeof(err)), FLAGTAB_RUN);
    assert_null(o.server.co_writer_usernames);
    char *cw[] = {"ota-webhook", "--tls-cert-file", "c", "--tls-private-key-file", "k",
                  "--co-writer-usernames", "a,b"};
    assert_int_equal(options_parse(7, cw, 3, &o, err, sizeof(err)), FLAGTAB_RUN);
    assert_string_equal(o.server.co_writer_usernames, "a,b");
    static const char *const empty_names[] = {"", ",a", "a,", "a,,b", ","};
    for (size_t i = 0; i < sizeof(empty_names) / sizeof(empty_names[0]); i++) {
        cw[6] = (char *)empty_names[i];
        flagtab_result r = options_parse(7, cw, 3, &o, err, sizeof(err));
        if (i == 0) {
            assert_int_equal(r, FLAGTAB_BAD_VALUE);
            continue;
        }
        assert_int_equal(r, FLAGTAB_BAD_USAGE);
        char want[160];
        snprintf(want, sizeof(want),
                 "ota-webhook: --co-writer-usernames: an empty name in \"%s\" (names are "
                 "separated by single commas)",
                 empty_names[i]);
        assert_string_equal(err, want);
    }
}

static void test_controller_defaults(void **state)
{
    (void)state;
    flags f;
    char err[512] = "";
    char *argv[] = {"ota-controller"};
    assert_int_equal(flags_parse(1, argv, &f, err, sizeof(err)), FLAGTAB_RUN);
    assert_null(f.kubeconfig);
    assert_string_equal(f.health_address, ":8081");
    assert_string_equal(f.metrics_address, ":8080");
    assert_true(f.qps == 20);
    assert_int_equal(f.burst, 30);
    assert_int_equal(f.ctl.reconcile.max_concurrent_pulls, 10);
    assert_int_equal(f.ctl.reconcile.max_pulls_per_node, 1); /* the kubelet pulls serially */
    assert_int_equal(f.ctl.reconcile.pull_timeout_s, 600);
    assert_string_equal(f.ctl.reconcile.helper_image, "busybox:1.36-musl");
    assert_int_equal(f.ctl.reconcile.backoff_limit, 0);
    assert_int_equal(f.ctl.leader_elect, 1);
    assert_null(f.ctl.leader.namespace); /* flags_lease_namespace decides */
    assert_string_equal(f.ctl.leader.name, "ota-controller");
    assert_null(f.ctl.leader.identity); /* flags_identity */
    assert_int_equal(f.ctl.leader.lease_ns, 15000000000ull);
    assert_int_equal(f.ctl.leader.renew_deadline_ns, 10000000000ull);
    assert_int_equal(f.ctl.leader.retry_ns, 2000000000ull);
    assert_int_equal(f.ctl.resync_ns, 30000000000ull);
    assert_int_equal(f.log_level, LOG_INFO);
    assert_int_equal(f.log_format, LOG_FORMAT_TEXT);

    char *older[] = {"ota-controller", "--leader-elect-namespace", "edge",
                     "--leader-elect-lease-name", "l", "--leader-elect=false"};
    assert_int_equal(flags_parse(6, older, &f, err, sizeof(err)), FLAGTAB_RUN);
    assert_string_equal(f.ctl.leader.namespace, "edge");
    assert_string_equal(f.ctl.leader.name, "l");
    assert_int_equal(f.ctl.leader_elect, 0);
    /* the periods must nest */
    char *flat[] = {"ota-controller", "--leader-elect-renew-deadline", "15s"};
    assert_int_equal(flags_parse(3, flat, &f, err, sizeof(err)), FLAGTAB_BAD_VALUE);
    assert_string_equal(err, "ota-controller: want retry period < renew deadline < lease duration");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_no_argv0),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_daemon_tables),
        cmocka_unit_test(test_webhook_defaults),
        cmocka_unit_test(test_controller_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

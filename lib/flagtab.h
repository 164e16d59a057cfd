/*
 * flagtab.h - the daemons' command lines as tables: one row per flag
 * (name, kind, bounds, default, help text, where its value goes), one pure
 * parser of argv against the rows, and --help written from the same rows,
 * so a flag is one row and --help cannot disagree with the code.
 * ota-webhook's rows are in webhook/options.c, ota-controller's in
 * controller/flags.c; kubectl-ota's command-shaped line has its own parser
 * (cli/args.c).
 *
 * The command line is getopt_long's, which the daemons used before: a long
 * flag takes its value as `--flag=V` or `--flag V`, an unambiguous prefix
 * names a flag (`--thread 4`), arguments that are not flags may come
 * anywhere and `--` ends the flags; the usage errors keep glibc's words
 * ("unrecognized option '--x'"), and each names the program as argv[0]
 * does.  A value the flag does not take is reported with the program's
 * name and the flag's whole name.
 *
 * Pure: no I/O, no globals, no exit.  flagtab_report is the shell that
 * prints what the parse asked for.
 */
#ifndef OTA_FLAGTAB_H
#define OTA_FLAGTAB_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

typedef enum flagtab_kind {
    FLAGTAB_STRING,     /* any text: a const char * into argv */
    FLAGTAB_WHOLE,      /* a whole decimal number in [min, max]; the field gets it times unit */
    FLAGTAB_NUMBER,     /* a decimal number (strtod) in [real_min, real_max] */
    FLAGTAB_DURATION,   /* a Go duration (lib/duration) in [min, max] ns; the field gets
                         * ns / unit, rounded up */
    FLAGTAB_SWITCH,     /* no value: the field gets 1 */
    FLAGTAB_BOOL,       /* `--flag` or `--flag=true` (1), `--flag=false` (0); never a
                         * separate word, as getopt's optional argument */
    FLAGTAB_CHOICE,     /* one of choices' names: the field gets its value */
    FLAGTAB_LOG_LEVEL,  /* debug|info|warn|error into a log_level */
    FLAGTAB_LOG_FORMAT, /* text|json into a log_format */
    FLAGTAB_ALIAS,      /* another spelling of the row named alias_of; not in --help */
    FLAGTAB_HELP,       /* flagtab_parse stops with FLAGTAB_SHOW_HELP */
    FLAGTAB_VERSION,    /* flagtab_parse stops with FLAGTAB_SHOW_VERSION */
} flagtab_kind;

/* The C type of the field a row writes, from FLAGTAB_FIELD. */
typedef enum flagtab_dst {
    FLAGTAB_DST_NONE,
    FLAGTAB_DST_STRING, /* const char * */
    FLAGTAB_DST_INT,
    FLAGTAB_DST_LONG,
    FLAGTAB_DST_UINT,
    FLAGTAB_DST_ULONG, /* size_t and uint64_t here */
    FLAGTAB_DST_ULLONG,
    FLAGTAB_DST_DOUBLE,
} flagtab_dst;

#define FLAGTAB_DST_OF(lvalue)                                                                     \
    _Generic((lvalue),                                                                             \
        const char *: FLAGTAB_DST_STRING,                                                          \
        int: FLAGTAB_DST_INT,                                                                      \
        long: FLAGTAB_DST_LONG,                                                                    \
        unsigned: FLAGTAB_DST_UINT,                                                                \
        unsigned long: FLAGTAB_DST_ULONG,                                                          \
        unsigned long long: FLAGTAB_DST_ULLONG,                                                    \
        double: FLAGTAB_DST_DOUBLE)

/* In a row: the value goes into field (a member designator, `a.b` too) of
 * the struct type T the parse fills.  A field of another C type does not
 * compile. */
#define FLAGTAB_FIELD(T, field) .offset = offsetof(T, field), .dst = FLAGTAB_DST_OF(((T *)0)->field)

/* A name a CHOICE row takes and what it stores.  The first name of each
 * value is the one the error message offers (later ones are older or
 * shorter spellings).  The list ends with {NULL, 0}. */
typedef struct flagtab_choice {
    const char *name;
    int value;
} flagtab_choice;

typedef struct flagtab_row {
    const char *name;    /* the long name, without the dashes */
    flagtab_kind kind;
    const char *metavar; /* --help: what follows the name ("FILE"); NULL: nothing */
    /* The value the field gets before argv is read, parsed as a value from
     * argv is (so it obeys the bounds); NULL: the field keeps what the
     * caller put there.  --help says it: where help holds "{}", there;
     * else " (default X)" ends the text (without the space when the text
     * is empty or ends with a line break). */
    const char *dflt;
    /* --help's text right of the names; '\n' continues under the text. */
    const char *help;
    char short_name; /* -h: only for rows that take no value; 0: none */
    size_t offset;
    flagtab_dst dst;
    uint64_t min, max;       /* WHOLE, DURATION (ns) */
    uint64_t unit;           /* WHOLE: stored times it; DURATION: divided by it; 0 is 1 */
    double real_min, real_max; /* NUMBER */
    const flagtab_choice *choices; /* CHOICE */
    const char *alias_of;          /* ALIAS: the row it spells */
    /* STRING: "" is refused.  For a value that names something (a user, a
     * Lease): an empty one names nothing, and the program would start and
     * then fail at every use of it. */
    int nonempty;
} flagtab_row;

/* The rows both daemons end with, into T's level_field and format_field:
 * --log-level, --log-format (default info, text), --version, -h/--help. */
#define FLAGTAB_COMMON_ROWS(T, level_field, format_field)                                          \
    {"log-level", FLAGTAB_LOG_LEVEL, "debug|info|warn|error", "info", NULL,                        \
     FLAGTAB_FIELD(T, level_field)},                                                               \
    {"log-format", FLAGTAB_LOG_FORMAT, "text|json", "text", NULL,                                  \
     FLAGTAB_FIELD(T, format_field)},                                                              \
    {.name = "version", .kind = FLAGTAB_VERSION, .help = "print version and commit, and exit"},    \
    {.name = "help", .kind = FLAGTAB_HELP, .short_name = 'h'}

typedef struct flagtab {
    const char *program;  /* "ota-webhook": prefixes value errors and the version line */
    const char *synopsis; /* --help before the rows: usage line and what the program is */
    const char *epilogue; /* --help after the rows */
    const flagtab_row *rows;
    size_t n_rows;
} flagtab;

typedef enum flagtab_result {
    FLAGTAB_RUN,          /* the flags are in out: run */
    FLAGTAB_SHOW_HELP,    /* -h/--help: the help on stdout, exit 0 */
    FLAGTAB_SHOW_VERSION, /* --version: the version line on stdout, exit 0 */
    FLAGTAB_BAD_VALUE,    /* err names the flag and what it takes: exit 2 */
    FLAGTAB_BAD_USAGE,    /* err, then the help, on stderr: exit 2 */
} flagtab_result;

/* Parses argv[1..argc) against t's rows into out (a struct of the type the
 * rows' FLAGTAB_FIELD name): first every row's default, then the flags in
 * order, a later one winning.  Stops at the first error, -h/--help or
 * --version.  err (errlen bytes) gets the whole line to print for
 * FLAGTAB_BAD_*; strings in out point into argv or the table.  Fields of
 * rows without a default keep what the caller set. */
flagtab_result flagtab_parse(const flagtab *t, int argc, char *const *argv, void *out, char *err,
                             size_t errlen);

/* t's --help text, appended to b. */
void flagtab_help(const flagtab *t, strbuf *b);

/* The row t spells name with (a whole name or an alias), or NULL. */
const flagtab_row *flagtab_find(const flagtab *t, const char *name);

/* The shell around flagtab_parse for main(): prints what r asks for (the
 * help on stdout, "PROGRAM VERSION (commit COMMIT)", or err and, after a
 * usage error, the help on stderr) and returns the exit status (0 or 2),
 * or -1 when r is FLAGTAB_RUN and the program goes on.  json: the flags
 * parsed so far asked for --log-format json; a refused value (not a usage
 * error, which the help follows) is then the startup error's JSON line. */
int flagtab_report(const flagtab *t, flagtab_result r, const char *err, const char *version,
                   const char *commit, int json);

#endif

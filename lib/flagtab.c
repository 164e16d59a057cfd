/*
 * flagtab.c - see flagtab.h.
 */
#include "flagtab.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "errmsg.h"
#include "log.h"

/* --help: where the text right of the names starts, and the least gap. */
#define HELP_COLUMN 38
#define HELP_GAP 2

static const flagtab_row *resolve(const flagtab *t, const flagtab_row *r)
{
    if (r != NULL && r->kind == FLAGTAB_ALIAS)
        return flagtab_find(t, r->alias_of);
    return r;
}

const flagtab_row *flagtab_find(const flagtab *t, const char *name)
{
    for (size_t i = 0; i < t->n_rows; i++)
        if (strcmp(t->rows[i].name, name) == 0)
            return &t->rows[i];
    return NULL;
}

static int takes_value(flagtab_kind k)
{
    return k != FLAGTAB_SWITCH && k != FLAGTAB_BOOL && k != FLAGTAB_HELP && k != FLAGTAB_VERSION;
}

/* ---- storing a value ---------------------------------------------------- */

static void store_unsigned(void *p, flagtab_dst dst, uint64_t v)
{
    switch (dst) {
    case FLAGTAB_DST_INT:
        *(int *)p = (int)v;
        break;
    case FLAGTAB_DST_LONG:
        *(long *)p = (long)v;
        break;
    case FLAGTAB_DST_UINT:
        *(unsigned *)p = (unsigned)v;
        break;
    case FLAGTAB_DST_ULONG:
        *(unsigned long *)p = (unsigned long)v;
        break;
    case FLAGTAB_DST_ULLONG:
        *(unsigned long long *)p = (unsigned long long)v;
        break;
    case FLAGTAB_DST_DOUBLE:
        *(double *)p = (double)v;
        break;
    case FLAGTAB_DST_NONE:
    case FLAGTAB_DST_STRING:
        break;
    }
}

/* A NUMBER into its field: a double as is, an integer field truncated
 * (the value is within the row's bounds, which fit the field). */
static void store_real(void *p, flagtab_dst dst, double v)
{
    if (dst == FLAGTAB_DST_DOUBLE)
        *(double *)p = v;
    else
        store_unsigned(p, dst, (uint64_t)v);
}

/* c[i] is the first name of its value (the one messages offer). */
static int first_name(const flagtab_choice *c, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (c[j].value == c[i].value)
            return 0;
    return 1;
}

/* "A, B or C": the first name of each value of a choice list. */
static void choice_names(const flagtab_choice *c, char *buf, size_t len)
{
    size_t total = 0, shown = 0, n = 0;
    for (size_t i = 0; c[i].name != NULL; i++)
        total += (size_t)first_name(c, i);
    buf[0] = '\0';
    for (size_t i = 0; c[i].name != NULL && n < len; i++) {
        if (!first_name(c, i))
            continue;
        shown++;
        const char *sep = shown == 1 ? "" : shown == total ? " or " : ", ";
        int k = snprintf(buf + n, len - n, "%s%s", sep, c[i].name);
        n += k > 0 ? (size_t)k : 0;
    }
}

/* Parses value for row r (whose name the message uses) into out:
 * 0, or -1 with the whole message in err. */
static int set_value(const flagtab *t, const flagtab_row *r, const char *value, void *out,
                     char *err, size_t errlen)
{
    void *p = (char *)out + r->offset;
    uint64_t unit = r->unit != 0 ? r->unit : 1;
    char why[256];
    switch (r->kind) {
    case FLAGTAB_STRING:
        if (r->nonempty && value[0] == '\0')
            return errmsg_set(err, errlen, "%s: --%s wants a non-empty %s, got \"\"", t->program,
                              r->name, r->metavar != NULL ? r->metavar : "value");
        *(const char **)p = value;
        return 0;
    case FLAGTAB_WHOLE: {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (value[0] == '\0' || value[0] == '-' || *end != '\0' || errno != 0 || v < r->min ||
            v > r->max)
            return errmsg_set(err, errlen,
                              "%s: --%s wants a whole number from %llu to %llu, got \"%s\"",
                              t->program, r->name, (unsigned long long)r->min,
                              (unsigned long long)r->max, value);
        store_unsigned(p, r->dst, (uint64_t)v * unit);
        return 0;
    }
    case FLAGTAB_NUMBER: {
        char *end = NULL;
        errno = 0;
        double v = strtod(value, &end);
        /* NaN passes both bounds (every comparison with it is false) */
        if (value[0] == '\0' || *end != '\0' || errno != 0 || isnan(v) || v < r->real_min ||
            v > r->real_max)
            return errmsg_set(err, errlen, "%s: --%s wants a number from %g to %g, got \"%s\"",
                              t->program, r->name, r->real_min, r->real_max, value);
        store_real(p, r->dst, v);
        return 0;
    }
    case FLAGTAB_DURATION: {
        uint64_t ns;
        if (duration_parse(value, r->min, r->max, &ns, why, sizeof(why)) != 0)
            return errmsg_set(err, errlen, "%s: --%s %s", t->program, r->name, why);
        store_unsigned(p, r->dst, ns / unit + (ns % unit != 0));
        return 0;
    }
    case FLAGTAB_SWITCH:
        store_unsigned(p, r->dst, 1);
        return 0;
    case FLAGTAB_BOOL:
        if (value == NULL || strcmp(value, "true") == 0)
            store_unsigned(p, r->dst, 1);
        else if (strcmp(value, "false") == 0)
            store_unsigned(p, r->dst, 0);
        else
            return errmsg_set(err, errlen, "%s: --%s is true or false", t->program, r->name);
        return 0;
    case FLAGTAB_CHOICE:
        for (size_t i = 0; r->choices[i].name != NULL; i++) {
            if (strcmp(value, r->choices[i].name) == 0) {
                store_unsigned(p, r->dst, (uint64_t)r->choices[i].value);
                return 0;
            }
        }
        choice_names(r->choices, why, sizeof(why));
        return errmsg_set(err, errlen, "%s: --%s wants %s, got \"%s\"", t->program, r->name, why,
                          value);
    case FLAGTAB_LOG_LEVEL:
    case FLAGTAB_LOG_FORMAT: {
        /* lib/log knows the names and says what the flag wants */
        log_level level = LOG_INFO;
        log_format format = LOG_FORMAT_TEXT;
        int level_flag = r->kind == FLAGTAB_LOG_LEVEL;
        if ((level_flag ? log_level_from_flag(value, &level, why, sizeof(why))
                        : log_format_from_flag(value, &format, why, sizeof(why))) != 0)
            return errmsg_set(err, errlen, "%s: %s", t->program, why);
        store_unsigned(p, r->dst, level_flag ? (uint64_t)level : (uint64_t)format);
        return 0;
    }
    case FLAGTAB_ALIAS:
    case FLAGTAB_HELP:
    case FLAGTAB_VERSION:
        break;
    }
    return 0;
}

/* ---- finding a flag, as getopt_long does -------------------------------- */

/* The row the long flag body[0..len) names: an exact name, else the only
 * row whose names start with it (aliases of one row are one row).  NULL
 * with *ambiguous set when several rows do: then err lists them, as glibc
 * does (the first match, then each later one that is another row). */
static const flagtab_row *find_long(const flagtab *t, const char *prog, const char *body,
                                    size_t len, int *ambiguous, char *err, size_t errlen)
{
    *ambiguous = 0;
    for (size_t i = 0; i < t->n_rows; i++)
        if (strlen(t->rows[i].name) == len && strncmp(t->rows[i].name, body, len) == 0)
            return &t->rows[i];
    const flagtab_row *first = NULL;
    for (size_t i = 0; i < t->n_rows; i++) {
        if (strncmp(t->rows[i].name, body, len) != 0)
            continue;
        if (first == NULL)
            first = &t->rows[i];
        else if (resolve(t, &t->rows[i]) != resolve(t, first))
            *ambiguous = 1;
    }
    if (!*ambiguous)
        return first;
    int n = snprintf(err, errlen, "%s: option '--%s' is ambiguous; possibilities:", prog, body);
    for (size_t i = 0; i < t->n_rows && n >= 0 && (size_t)n < errlen; i++) {
        const flagtab_row *r = &t->rows[i];
        if (strncmp(r->name, body, len) == 0 &&
            (r == first || resolve(t, r) != resolve(t, first))) {
            int k = snprintf(err + n, errlen - (size_t)n, " '--%s'", r->name);
            n = k < 0 ? -1 : n + k;
        }
    }
    return NULL;
}

flagtab_result flagtab_parse(const flagtab *t, int argc, char *const *argv, void *out, char *err,
                             size_t errlen)
{
    const char *prog = argc > 0 && argv[0] != NULL ? argv[0] : t->program;
    for (size_t i = 0; i < t->n_rows; i++)
        if (t->rows[i].dflt != NULL &&
            set_value(t, &t->rows[i], t->rows[i].dflt, out, err, errlen) != 0)
            return FLAGTAB_BAD_VALUE;
    const char *stray = NULL; /* the first argument that is not a flag */
    int flags_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (flags_done || a[0] != '-' || a[1] == '\0') {
            if (stray == NULL)
                stray = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            flags_done = 1;
            continue;
        }
        if (a[1] != '-') {
            /* a cluster of one-letter flags: none of them takes a value */
            for (const char *c = a + 1; *c != '\0'; c++) {
                const flagtab_row *r = NULL;
                for (size_t k = 0; k < t->n_rows && r == NULL; k++)
                    if (t->rows[k].short_name == *c)
                        r = &t->rows[k];
                if (r == NULL) {
                    errmsg_set(err, errlen, "%s: invalid option -- '%c'", prog, *c);
                    return FLAGTAB_BAD_USAGE;
                }
                if (r->kind == FLAGTAB_HELP)
                    return FLAGTAB_SHOW_HELP;
                if (r->kind == FLAGTAB_VERSION)
                    return FLAGTAB_SHOW_VERSION;
                set_value(t, r, NULL, out, err, errlen);
            }
            continue;
        }
        const char *body = a + 2, *eq = strchr(body, '=');
        size_t len = eq != NULL ? (size_t)(eq - body) : strlen(body);
        int ambiguous;
        const flagtab_row *spelled = find_long(t, prog, body, len, &ambiguous, err, errlen);
        if (ambiguous)
            return FLAGTAB_BAD_USAGE;
        const flagtab_row *r = resolve(t, spelled);
        if (r == NULL) {
            errmsg_set(err, errlen, "%s: unrecognized option '--%s'", prog, body);
            return FLAGTAB_BAD_USAGE;
        }
        const char *value = eq != NULL ? eq + 1 : NULL;
        if (value != NULL && !takes_value(r->kind) && r->kind != FLAGTAB_BOOL) {
            errmsg_set(err, errlen, "%s: option '--%s' doesn't allow an argument", prog,
                       spelled->name);
            return FLAGTAB_BAD_USAGE;
        }
        if (value == NULL && takes_value(r->kind)) {
            if (i + 1 >= argc) {
                errmsg_set(err, errlen, "%s: option '--%s' requires an argument", prog,
                           spelled->name);
                return FLAGTAB_BAD_USAGE;
            }
            value = argv[++i];
        }
        if (r->kind == FLAGTAB_HELP)
            return FLAGTAB_SHOW_HELP;
        if (r->kind == FLAGTAB_VERSION)
            return FLAGTAB_SHOW_VERSION;
        if (set_value(t, r, value, out, err, errlen) != 0)
            return FLAGTAB_BAD_VALUE;
    }
    if (stray != NULL) {
        errmsg_set(err, errlen, "%s: unexpected argument \"%s\"", t->program, stray);
        return FLAGTAB_BAD_VALUE;
    }
    return FLAGTAB_RUN;
}

/* ---- --help ------------------------------------------------------------- */

/* Appends text, each line break followed by the help column's indent. */
static void help_text(strbuf *b, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            strbuf_printf(b, "\n%*s", HELP_COLUMN, "");
        else
            strbuf_printf(b, "%c", text[i]);
    }
}

static void help_row(strbuf *b, const flagtab_row *r)
{
    /* "  -h, --help", "  --flag=true|false", "  --flag METAVAR" */
    char head[128], shortname[8] = "";
    if (r->short_name != '\0')
        snprintf(shortname, sizeof(shortname), "-%c, ", r->short_name);
    int n = snprintf(head, sizeof(head), "  %s--%s%s%s", shortname, r->name,
                     r->kind == FLAGTAB_BOOL ? "=true|false" : r->metavar != NULL ? " " : "",
                     r->kind != FLAGTAB_BOOL && r->metavar != NULL ? r->metavar : "");
    const char *help = r->help != NULL ? r->help : "";
    const char *slot = r->dflt != NULL ? strstr(help, "{}") : NULL;
    int says_default = r->dflt != NULL && slot == NULL;
    if (help[0] == '\0' && !says_default) {
        strbuf_printf(b, "%s\n", head);
        return;
    }
    int gap = n >= 0 && n + HELP_GAP < HELP_COLUMN ? HELP_COLUMN - n : HELP_GAP;
    strbuf_printf(b, "%s%*s", head, gap, "");
    if (slot != NULL) {
        help_text(b, help, (size_t)(slot - help));
        strbuf_printf(b, "%s", r->dflt);
        help_text(b, slot + 2, strlen(slot + 2));
    } else {
        size_t len = strlen(help);
        help_text(b, help, len);
        if (says_default)
            strbuf_printf(b, "%s(default %s)", len == 0 || help[len - 1] == '\n' ? "" : " ",
                          r->dflt);
    }
    strbuf_printf(b, "\n");
}

void flagtab_help(const flagtab *t, strbuf *b)
{
    strbuf_printf(b, "%s", t->synopsis);
    for (size_t i = 0; i < t->n_rows; i++)
        if (t->rows[i].kind != FLAGTAB_ALIAS)
            help_row(b, &t->rows[i]);
    strbuf_printf(b, "%s", t->epilogue != NULL ? t->epilogue : "");
}

int flagtab_report(const flagtab *t, flagtab_result r, const char *err, const char *version,
                   const char *commit, int json)
{
    if (r == FLAGTAB_RUN)
        return -1;
    size_t plen = strlen(t->program);
    if (r == FLAGTAB_BAD_VALUE && json) {
        /* err is "PROGRAM: why": the line carries the program on its own */
        if (strncmp(err, t->program, plen) == 0 && strncmp(err + plen, ": ", 2) == 0)
            err += plen + 2;
        log_set_format(LOG_FORMAT_JSON);
        log_startup_error(t->program, err);
        return 2;
    }
    if (r == FLAGTAB_SHOW_VERSION) {
        printf("%s %s (commit %s)\n", t->program, version, commit);
        return 0;
    }
    FILE *to = r == FLAGTAB_SHOW_HELP ? stdout : stderr;
    if (r != FLAGTAB_SHOW_HELP)
        fprintf(stderr, "%s\n", err);
    if (r == FLAGTAB_SHOW_HELP || r == FLAGTAB_BAD_USAGE) {
        strbuf help = {0};
        flagtab_help(t, &help);
        if (help.data != NULL)
            fputs(help.data, to);
        strbuf_free(&help);
    }
    return r == FLAGTAB_SHOW_HELP ? 0 : 2;
}

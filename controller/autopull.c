/*
 * autopull.c - see autopull.h.
 */
#include "autopull.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ota_names.h"

/* Annotation values are bounded before anything reads them. */
#define VALUE_MAX 128

static int bounded(const char *v)
{
    return v != NULL && strnlen(v, VALUE_MAX + 1) <= VALUE_MAX;
}

/* Digits only (no sign, no space), at most 9 of them: 0 and *out, or -1. */
static int digits(const char *s, size_t len, long *out)
{
    if (len == 0 || len > 9)
        return -1;
    long n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        n = n * 10 + (s[i] - '0');
    }
    *out = n;
    return 0;
}

int autopull_parse_parallelism(const char *v, long *out)
{
    if (!bounded(v))
        return -1;
    if (v[0] == '\0') {
        *out = 1; /* Kruise's default */
        return 0;
    }
    long n;
    if (digits(v, strlen(v), &n) != 0 || n < 1 || n > AUTOPULL_PARALLELISM_MAX)
        return -1;
    *out = n;
    return 0;
}

int autopull_parse_timeout(const char *v, long *out)
{
    long n;
    if (!bounded(v) || digits(v, strlen(v), &n) != 0 || n < OTA_PREPULL_TIMEOUT_MIN ||
        n > OTA_PREPULL_TIMEOUT_MAX)
        return -1;
    *out = n;
    return 0;
}

int autopull_parse_min_ready(const char *v, long *n, int *percent)
{
    if (!bounded(v))
        return -1;
    size_t len = strlen(v);
    if (len == 0) {
        *n = 0;
        *percent = 0;
        return 0;
    }
    int pct = v[len - 1] == '%';
    long x;
    if (digits(v, len - (size_t)pct, &x) != 0 || x > (pct ? 100 : AUTOPULL_MIN_READY_MAX))
        return -1;
    *n = x;
    *percent = pct;
    return 0;
}

/* "HH:MM" (hour of 1 or 2 digits) at s, up to len: minutes, or -1. */
static int clock_time(const char *s, size_t len)
{
    const char *colon = memchr(s, ':', len);
    if (colon == NULL)
        return -1;
    size_t hl = (size_t)(colon - s), ml = len - hl - 1;
    long h, m;
    if (hl < 1 || hl > 2 || ml != 2 || digits(s, hl, &h) != 0 || digits(colon + 1, ml, &m) != 0 ||
        h > 23 || m > 59)
        return -1;
    return (int)(h * 60 + m);
}

/* An IANA zone name as a path under the zoneinfo folder: letters, digits
 * and _ + - /, no empty, "." or ".." component, not absolute. */
static int zone_name_ok(const char *z, size_t len)
{
    if (len == 0 || len >= AUTOPULL_ZONE_MAX || z[0] == '/' || z[len - 1] == '/')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = z[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '+' || c == '-' || c == '/' || c == '.';
        if (!ok)
            return 0;
        if (c == '/' && z[i + 1] == '/')
            return 0;
        if (c == '.' && (i == 0 || z[i - 1] == '/'))
            return 0; /* ".", "..", hidden: never a zone */
    }
    return 1;
}

int autopull_parse_window(const char *v, autopull_window *w)
{
    if (!bounded(v))
        return -1;
    const char *s = v, *end = v + strlen(v);
    while (s < end && *s == ' ')
        s++;
    while (end > s && end[-1] == ' ')
        end--;
    const char *sp = memchr(s, ' ', (size_t)(end - s));
    const char *range_end = sp != NULL ? sp : end;
    const char *dash = memchr(s, '-', (size_t)(range_end - s));
    if (dash == NULL)
        return -1;
    int a = clock_time(s, (size_t)(dash - s));
    int b = clock_time(dash + 1, (size_t)(range_end - dash - 1));
    if (a < 0 || b < 0 || a == b)
        return -1;
    autopull_window out = {1, a, b, ""};
    if (sp != NULL) {
        const char *z = sp;
        while (z < end && *z == ' ')
            z++;
        size_t zl = (size_t)(end - z);
        if (!zone_name_ok(z, zl))
            return -1;
        memcpy(out.zone, z, zl);
        out.zone[zl] = '\0';
    }
    *w = out;
    return 0;
}

static void bad(autopull_spec *s, const char *ann, const char *v, const char *want)
{
    if (s->bad_annotation != NULL)
        return;
    s->bad_annotation = ann;
    snprintf(s->bad_why, sizeof(s->bad_why), "%.40s is not %s", v, want);
}

void autopull_spec_parse(autopull_spec *s, const char *parallelism, const char *timeout,
                         const char *min_ready, const char *window)
{
    memset(s, 0, sizeof(*s));
    if (parallelism == NULL)
        return; /* not opted in; the other annotations mean nothing alone */
    int ok = 1;
    if (autopull_parse_parallelism(parallelism, &s->parallelism) != 0) {
        bad(s, OTA_ANN_PREDOWNLOAD_PARALLELISM, parallelism, "a positive integer");
        ok = 0;
    }
    if (min_ready != NULL &&
        autopull_parse_min_ready(min_ready, &s->min_ready, &s->min_ready_percent) != 0) {
        bad(s, OTA_ANN_PREDOWNLOAD_MIN_READY, min_ready, "an integer or a percentage");
        ok = 0;
    }
    if (window != NULL && autopull_parse_window(window, &s->window) != 0) {
        bad(s, OTA_ANN_PREPULL_WINDOW, window, "\"HH:MM-HH:MM [IANA zone]\"");
        ok = 0;
    }
    if (timeout != NULL && autopull_parse_timeout(timeout, &s->timeout_s) != 0) {
        s->timeout_s = 0; /* the usual deadline */
        bad(s, OTA_ANN_PREDOWNLOAD_TIMEOUT, timeout, "a whole number of seconds from 30 to 86400");
    }
    s->opted_in = ok;
    if (!ok) {
        s->parallelism = 0;
        s->window.present = 0;
    }
}

size_t autopull_min_ready_needed(const autopull_spec *s, size_t desired)
{
    if (s->min_ready <= 0)
        return 0;
    if (!s->min_ready_percent)
        return (size_t)s->min_ready;
    return (desired * (size_t)s->min_ready + 99) / 100; /* rounded up, as Kruise */
}

int autopull_window_open(const autopull_window *w, int minute)
{
    if (!w->present)
        return 1;
    if (w->start < w->end)
        return minute >= w->start && minute < w->end;
    return minute >= w->start || minute < w->end; /* wraps midnight */
}

long autopull_next_open_s(const autopull_window *w, int minute, int second)
{
    if (autopull_window_open(w, minute))
        return 0;
    /* closed: minute is not w->start, so the opening is 1 to 1439 minutes
     * ahead, less the seconds of this minute gone */
    long minutes = ((long)w->start - minute + 1440) % 1440;
    return minutes * 60 - second;
}

int autopull_minute_now(const autopull_window *w, long long now_epoch, int *minute, int *second)
{
    time_t t = (time_t)now_epoch;
    struct tm tm;
    if (w->zone[0] == '\0' || strcmp(w->zone, "UTC") == 0) {
        if (gmtime_r(&t, &tm) == NULL)
            return -1;
        goto found;
    }
    /* glibc falls back to UTC silently for a zone it cannot find: look
     * first, so that a misspelt zone is said, not guessed. */
    const char *dir = getenv("TZDIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir != NULL && dir[0] != '\0' ? dir : "/usr/share/zoneinfo",
             w->zone);
    if (access(path, R_OK) != 0)
        return -1;
    const char *old = getenv("TZ");
    char saved[256];
    int had = old != NULL && strlen(old) < sizeof(saved);
    if (had)
        snprintf(saved, sizeof(saved), "%s", old);
    int rc = -1;
    /* glibc's tzset reads a zone's file only when TZ differs from the
     * value of its last call (and then only when the file's inode, device
     * or mtime changed): with the controller's own TZ equal to the
     * window's zone, a rewritten file would never be read.  A POSIX value
     * in between ("UTC0", no file) makes every call read the file anew. */
    if (setenv("TZ", "UTC0", 1) == 0) {
        tzset();
        if (setenv("TZ", w->zone, 1) == 0) {
            tzset();
            if (localtime_r(&t, &tm) != NULL)
                rc = 0;
        }
    }
    if (had)
        setenv("TZ", saved, 1);
    else
        unsetenv("TZ");
    tzset();
    if (rc != 0)
        return -1;
found:
    *minute = tm.tm_hour * 60 + tm.tm_min;
    if (second != NULL)
        *second = tm.tm_sec > 59 ? 59 : tm.tm_sec; /* a leap second counts as :59 */
    return 0;
}

autopull_cond autopull_cond_of(int present, const char *status, const char *reason,
                               const char *message, const char *hash)
{
    if (!present)
        return AUTOPULL_COND_ABSENT;
    size_t pl = strlen(OTA_MSG_REVISION_PREFIX);
    int for_h = message != NULL && hash != NULL &&
                strncmp(message, OTA_MSG_REVISION_PREFIX, pl) == 0 && strcmp(message + pl, hash) == 0;
    if (status != NULL && strcmp(status, "True") == 0)
        return for_h ? AUTOPULL_COND_TRUE_H : AUTOPULL_COND_TRUE_OTHER;
    if (reason != NULL && strcmp(reason, OTA_REASON_AUTO_NODE_USER) == 0 && for_h)
        return AUTOPULL_COND_USER_H;
    if (reason != NULL && strcmp(reason, OTA_REASON_AUTO_OPTED_OUT) == 0)
        return AUTOPULL_COND_OPTED_OUT;
    return AUTOPULL_COND_FALSE_OTHER;
}

autopull_pod_verdict autopull_pod(const autopull_pod_in *in)
{
    if (in->cond == AUTOPULL_COND_TRUE_H) {
        switch (in->state) {
        case OTA_STATE_PENDING_UPGRADE:
            /* not started: an opt-out takes it back; else it waits its turn */
            if (!in->opted_in)
                return AUTOPULL_OPT_OUT;
            return in->node_not_ready ? AUTOPULL_WAITING : AUTOPULL_PENDING;
        case OTA_STATE_PULLING:
            return AUTOPULL_RUNNING; /* started: finishes and is reported */
        case OTA_STATE_READY:
            return AUTOPULL_READY;
        case OTA_STATE_FAILED:
            return AUTOPULL_FAILED;
        default:
            return AUTOPULL_NONE;
        }
    }
    if (!in->opted_in) {
        /* a mark of an older revision, never started: taken back too */
        if (in->cond == AUTOPULL_COND_TRUE_OTHER)
            return AUTOPULL_OPT_OUT;
        return AUTOPULL_NONE;
    }
    /* Opted in, not marked for H: mark a pod that needs H and whose
     * pre-pull nobody asked for.  A node user's request (Pulling, Ready,
     * Failed, or the condition handed over: USER_H) stays the node user's. */
    if (!in->needs_upgrade || in->cond == AUTOPULL_COND_USER_H ||
        in->state != OTA_STATE_PENDING_UPGRADE)
        return AUTOPULL_NONE;
    return AUTOPULL_MARK;
}

const char *autopull_pod_verdict_name(autopull_pod_verdict v)
{
    static const char *const names[] = {"none",    "mark",    "opt-out", "pending",
                                        "waiting", "running", "ready",   "failed"};
    return (size_t)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

void autopull_count(autopull_counts *c, autopull_pod_verdict v)
{
    switch (v) {
    case AUTOPULL_PENDING:
        c->pending++;
        break;
    case AUTOPULL_WAITING:
        c->waiting++;
        break;
    case AUTOPULL_RUNNING:
        c->running++;
        break;
    case AUTOPULL_READY:
        c->ready++;
        break;
    case AUTOPULL_FAILED:
        c->failed++;
        break;
    default:
        break;
    }
}

size_t autopull_starts(const autopull_spec *s, const autopull_gate *g, const autopull_counts *c,
                       autopull_hold *hold)
{
    autopull_hold h = AUTOPULL_GO;
    size_t n = 0;
    if (!s->opted_in)
        h = AUTOPULL_HOLD_OPTED_OUT;
    else if (!g->window_open)
        h = AUTOPULL_HOLD_WINDOW;
    else if (g->updated_ready < g->needed_ready)
        h = AUTOPULL_HOLD_CANARY;
    else if (c->running >= (size_t)s->parallelism)
        h = AUTOPULL_HOLD_PARALLELISM;
    else {
        n = (size_t)s->parallelism - c->running;
        if (n > c->pending)
            n = c->pending;
    }
    if (hold != NULL)
        *hold = h;
    return n;
}

const char *autopull_hold_name(autopull_hold h)
{
    static const char *const names[] = {"go", "opted-out", "outside-window",
                                        "min-updated-ready-pods", "parallelism"};
    return (size_t)h < sizeof(names) / sizeof(names[0]) ? names[h] : "?";
}

int autopull_started_due(const autopull_counts *c)
{
    return c->running > 0;
}

int autopull_finished_due(const autopull_counts *c)
{
    return c->ready + c->failed > 0 && c->running == 0 && c->pending == 0;
}

autopull_serve autopull_serve_of(int ota, int asked, int opted_in, int unfinished)
{
    if (ota)
        return AUTOPULL_SERVE_OTA;
    if (opted_in)
        return AUTOPULL_SERVE_AUTO;
    if (unfinished)
        return AUTOPULL_SERVE_DRAIN; /* the opt-out path: not started ones OptedOut */
    if (asked)
        return AUTOPULL_SERVE_WARN;
    return AUTOPULL_SERVE_NONE; /* never opted in: costs nothing */
}

const char *autopull_serve_name(autopull_serve s)
{
    static const char *const names[] = {"none", "ota", "auto", "drain", "warn"};
    return (size_t)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

int autopull_unfinished(int auto_prepull_true, ota_state state)
{
    return auto_prepull_true &&
           (state == OTA_STATE_PENDING_UPGRADE || state == OTA_STATE_PULLING);
}

int autopull_pod_served(autopull_serve s, int unfinished)
{
    switch (s) {
    case AUTOPULL_SERVE_OTA:
    case AUTOPULL_SERVE_AUTO:
        return 1;
    case AUTOPULL_SERVE_DRAIN:
        return unfinished;
    default:
        return 0;
    }
}

void autopull_finished_what(const autopull_counts *c, char *buf, size_t len)
{
    snprintf(buf, len, "finished|%zu", c->waiting);
}

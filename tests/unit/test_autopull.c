/*
 * test_autopull.c - automatic pre-pull's decisions (controller/autopull.h):
 * the annotations (Kruise's values and defaults, our window), where a pod
 * stands, how many start this pass, the DaemonSet's Events, and which
 * DaemonSets are served (an OTA one, or another that opted in).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "autopull.h"
#include "ota_names.h"
#include "row_check.h"

/* ---- annotations ------------------------------------------------------------ */

typedef struct num_row {
    const char *what, *value;
    int want_rc;
    long want;
} num_row;

static const num_row parallelism_rows[] = {
    {"Kruise's example", "10", 0, 10},
    {"empty: Kruise's default 1", "", 0, 1},
    {"one", "1", 0, 1},
    {"zero is no opt-in", "0", -1, 0},
    {"negative", "-5", -1, 0},
    {"a sign", "+5", -1, 0},
    {"a space", " 5", -1, 0},
    {"a percent is not a parallelism", "50%", -1, 0},
    {"words", "ten", -1, 0},
    {"the bound", "100000", 0, 100000},
    {"above the bound", "100001", -1, 0},
    {"ten digits", "1234567890", -1, 0},
};

static void test_parallelism(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(parallelism_rows) / sizeof(parallelism_rows[0]); i++) {
        const num_row *r = &parallelism_rows[i];
        long got = 0;
        int rc = autopull_parse_parallelism(r->value, &got);
        ROW_CHECK(r->what, rc == r->want_rc, "rc %d", rc);
        if (rc == 0)
            ROW_CHECK(r->what, got == r->want, "got %ld", got);
    }
}

static const num_row timeout_rows[] = {
    {"Kruise's default", "600", 0, 600},
    {"the lower bound", "30", 0, 30},
    {"below it", "29", -1, 0},
    {"the upper bound", "86400", 0, 86400},
    {"above it", "86401", -1, 0},
    {"empty", "", -1, 0},
    {"a duration is not seconds", "10m", -1, 0},
};

static void test_timeout(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(timeout_rows) / sizeof(timeout_rows[0]); i++) {
        const num_row *r = &timeout_rows[i];
        long got = 0;
        int rc = autopull_parse_timeout(r->value, &got);
        ROW_CHECK(r->what, rc == r->want_rc, "rc %d", rc);
        if (rc == 0)
            ROW_CHECK(r->what, got == r->want, "got %ld", got);
    }
}

typedef struct min_ready_row {
    const char *what, *value;
    int want_rc;
    long n;
    int percent;
    size_t desired, needed;
} min_ready_row;

static const min_ready_row min_ready_rows[] = {
    {"empty: 0", "", 0, 0, 0, 50, 0},
    {"a count", "3", 0, 3, 0, 50, 3},
    {"a count above the pods asks for them all and more", "80", 0, 80, 0, 50, 80},
    {"a percent, rounded up", "10%", 0, 10, 1, 55, 6},
    {"a percent, exact", "10%", 0, 10, 1, 50, 5},
    {"0%", "0%", 0, 0, 1, 50, 0},
    {"100%", "100%", 0, 100, 1, 50, 50},
    {"above 100%", "101%", -1, 0, 0, 0, 0},
    {"a bare percent sign", "%", -1, 0, 0, 0, 0},
    {"negative", "-1", -1, 0, 0, 0, 0},
    {"a fraction", "1.5", -1, 0, 0, 0, 0},
};

static void test_min_ready(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(min_ready_rows) / sizeof(min_ready_rows[0]); i++) {
        const min_ready_row *r = &min_ready_rows[i];
        long n = -1;
        int pct = -1;
        int rc = autopull_parse_min_ready(r->value, &n, &pct);
        ROW_CHECK(r->what, rc == r->want_rc, "rc %d", rc);
        if (rc != 0)
            continue;
        ROW_CHECK(r->what, n == r->n && pct == r->percent, "n %ld pct %d", n, pct);
        autopull_spec s;
        autopull_spec_parse(&s, "5", NULL, r->value, NULL);
        size_t need = autopull_min_ready_needed(&s, r->desired);
        ROW_CHECK(r->what, need == r->needed, "needed %zu", need);
    }
}

typedef struct window_row {
    const char *what, *value;
    int want_rc;
    int start, end;
    const char *zone;
    /* minutes that are inside, and outside (-1 ends the list) */
    int inside[4], outside[4];
} window_row;

static const window_row window_rows[] = {
    {"the night in Shanghai, wrapping midnight", "22:00-06:00 Asia/Shanghai", 0, 1320, 360,
     "Asia/Shanghai", {1320, 1439, 0, 359}, {360, 720, 1319, -1}},
    {"no zone: UTC", "01:30-04:00", 0, 90, 240, "", {90, 239, -1, -1}, {89, 240, 0, -1}},
    {"one-digit hour", "1:30-4:00", 0, 90, 240, "", {90, -1, -1, -1}, {240, -1, -1, -1}},
    {"spaces around", "  22:00-06:00   UTC  ", 0, 1320, 360, "UTC", {0, -1, -1, -1},
     {720, -1, -1, -1}},
    {"start equals end: no window", "06:00-06:00", -1, 0, 0, NULL, {-1}, {-1}},
    {"24:00 is not a time", "22:00-24:00", -1, 0, 0, NULL, {-1}, {-1}},
    {"minutes above 59", "22:60-06:00", -1, 0, 0, NULL, {-1}, {-1}},
    {"one-digit minutes", "22:0-06:00", -1, 0, 0, NULL, {-1}, {-1}},
    {"no dash", "22:00 06:00", -1, 0, 0, NULL, {-1}, {-1}},
    {"empty", "", -1, 0, 0, NULL, {-1}, {-1}},
    {"a path out of zoneinfo", "22:00-06:00 ../../etc/passwd", -1, 0, 0, NULL, {-1}, {-1}},
    {"an absolute path", "22:00-06:00 /etc/localtime", -1, 0, 0, NULL, {-1}, {-1}},
    {"a zone with a space", "22:00-06:00 Asia/ Shanghai", -1, 0, 0, NULL, {-1}, {-1}},
    {"a zone too long", "22:00-06:00 Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     -1, 0, 0, NULL, {-1}, {-1}},
};

static void test_window(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(window_rows) / sizeof(window_rows[0]); i++) {
        const window_row *r = &window_rows[i];
        autopull_window w;
        memset(&w, 0, sizeof(w));
        int rc = autopull_parse_window(r->value, &w);
        ROW_CHECK(r->what, rc == r->want_rc, "rc %d", rc);
        if (rc != 0)
            continue;
        ROW_CHECK(r->what, w.present && w.start == r->start && w.end == r->end,
                  "start %d end %d", w.start, w.end);
        ROW_CHECK(r->what, strcmp(w.zone, r->zone) == 0, "zone \"%s\"", w.zone);
        for (size_t k = 0; k < 4 && r->inside[k] >= 0; k++)
            ROW_CHECK(r->what, autopull_window_open(&w, r->inside[k]), "minute %d closed",
                      r->inside[k]);
        for (size_t k = 0; k < 4 && r->outside[k] >= 0; k++)
            ROW_CHECK(r->what, !autopull_window_open(&w, r->outside[k]), "minute %d open",
                      r->outside[k]);
    }
    autopull_window none = {0, 0, 0, ""};
    assert_true(autopull_window_open(&none, 0));
    assert_true(autopull_window_open(&none, 1439));
}

/* Seconds until the window next opens, from a minute and second of the
 * day in its zone. */
typedef struct open_row {
    const char *what, *window;
    int minute, second;
    long want;
} open_row;

static const open_row open_rows[] = {
    {"open: 0", "02:00-03:00", 2 * 60 + 30, 17, 0},
    {"at the opening: 0", "02:00-03:00", 2 * 60, 0, 0},
    {"the last second inside: 0", "02:00-03:00", 2 * 60 + 59, 59, 0},
    {"one second before the opening", "02:00-03:00", 1 * 60 + 59, 59, 1},
    {"a minute before", "02:00-03:00", 1 * 60 + 59, 0, 60},
    {"at the close: a day less the hour", "02:00-03:00", 3 * 60, 0, 23 * 3600},
    {"a second after the close", "02:00-03:00", 3 * 60, 1, 23 * 3600 - 1},
    {"midnight, before the opening", "02:00-03:00", 0, 0, 2 * 3600},
    {"the last second of the day", "02:00-03:00", 23 * 60 + 59, 59, 2 * 3600 + 1},
    /* wrapping midnight: 22:00 to 06:00 */
    {"wrap: open before midnight", "22:00-06:00", 23 * 60, 0, 0},
    {"wrap: open after midnight", "22:00-06:00", 60, 0, 0},
    {"wrap: the last second inside", "22:00-06:00", 5 * 60 + 59, 59, 0},
    {"wrap: at the close", "22:00-06:00", 6 * 60, 0, 16 * 3600},
    {"wrap: a second before the opening", "22:00-06:00", 21 * 60 + 59, 59, 1},
    {"an opening at midnight, a second before", "00:00-01:00", 23 * 60 + 59, 59, 1},
    {"the longest wait: a day less a minute", "00:01-00:00", 0, 0, 60},
    {"a one-minute window, just closed", "12:00-12:01", 12 * 60 + 1, 0, 24 * 3600 - 60},
};

static void test_next_open(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(open_rows) / sizeof(open_rows[0]); i++) {
        const open_row *r = &open_rows[i];
        autopull_window w;
        assert_int_equal(autopull_parse_window(r->window, &w), 0);
        long got = autopull_next_open_s(&w, r->minute, r->second);
        ROW_CHECK(r->what, got == r->want, "%ld s, want %ld", got, r->want);
        ROW_CHECK(r->what, (got == 0) == autopull_window_open(&w, r->minute), "%ld s", got);
    }
    autopull_window none = {0, 0, 0, ""};
    assert_int_equal(autopull_next_open_s(&none, 12 * 60, 30), 0);
}

/* The glue reads the system's tzdata: 2026-11-27T14:30:00Z is 22:30 in
 * Shanghai (UTC+8, no DST) and 14:30 in UTC; a zone not there is said. */
static void test_minute_in_zone(void **state)
{
    (void)state;
    long long t = 1795789807LL; /* 2026-11-27T14:30:07Z */
    autopull_window w;
    int minute = -1, second = -1;
    assert_int_equal(autopull_parse_window("22:00-06:00", &w), 0);
    assert_int_equal(autopull_minute_now(&w, t, &minute, &second), 0);
    assert_int_equal(minute, 14 * 60 + 30);
    assert_int_equal(second, 7);
    assert_int_equal(autopull_parse_window("22:00-06:00 Asia/Shanghai", &w), 0);
    assert_int_equal(autopull_minute_now(&w, t, &minute, NULL), 0);
    assert_int_equal(minute, 22 * 60 + 30);
    assert_true(autopull_window_open(&w, minute));
    /* TZ is as it was */
    assert_null(getenv("TZ"));
    assert_int_equal(autopull_parse_window("22:00-06:00 Mars/Olympus_Mons", &w), 0);
    assert_int_equal(autopull_minute_now(&w, t, &minute, &second), -1);
}

/* A version-1 TZif file (tzfile(5)) of one fixed offset, no transitions:
 * the e2e's simulated clock (tests/e2e/test_auto_prepull.py) in C. */
static void write_zone(const char *path, long offset)
{
    unsigned char b[44 + 6 + 4];
    memset(b, 0, sizeof(b));
    memcpy(b, "TZif", 4);
    /* counts at 20: isutcnt isstdcnt leapcnt timecnt typecnt charcnt */
    b[20 + 4 * 4 + 3] = 1;
    b[20 + 5 * 4 + 3] = 4;
    unsigned long u = (unsigned long)offset;
    for (int i = 0; i < 4; i++)
        b[44 + i] = (unsigned char)(u >> (24 - 8 * i));
    memcpy(b + 50, "SIM", 4);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, sizeof(b), f), sizeof(b));
    assert_int_equal(fclose(f), 0);
}

/* A zone's file rewritten in place (same inode, likely the same mtime
 * second) is read again on the next call, even when the process's own TZ
 * names that zone (glibc's tzset would otherwise keep what it read). */
static void test_zone_file_read_again(void **state)
{
    (void)state;
    char dir[] = "/tmp/ota-autopull-tz-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[64], path[96];
    snprintf(sub, sizeof(sub), "%s/Sim", dir);
    snprintf(path, sizeof(path), "%s/Edge", sub);
    assert_int_equal(mkdir(sub, 0700), 0);
    const char *old_dir = getenv("TZDIR");
    char saved_dir[512] = "";
    if (old_dir != NULL)
        snprintf(saved_dir, sizeof(saved_dir), "%s", old_dir);
    assert_int_equal(setenv("TZDIR", dir, 1), 0);
    autopull_window w;
    assert_int_equal(autopull_parse_window("02:00-03:00 Sim/Edge", &w), 0);
    long long t = 1795737600LL; /* 2026-11-27T00:00:00Z */
    for (int own_tz = 0; own_tz < 2; own_tz++) {
        if (own_tz)
            assert_int_equal(setenv("TZ", "Sim/Edge", 1), 0);
        int minute, second;
        write_zone(path, 2 * 3600 + 30 * 60);
        assert_int_equal(autopull_minute_now(&w, t, &minute, &second), 0);
        assert_int_equal(minute, 2 * 60 + 30);
        write_zone(path, 3 * 3600 + 5 * 60);
        assert_int_equal(autopull_minute_now(&w, t, &minute, &second), 0);
        assert_int_equal(minute, 3 * 60 + 5);
        assert_false(autopull_window_open(&w, minute));
        write_zone(path, 3600 + 59 * 60 + 55);
        assert_int_equal(autopull_minute_now(&w, t, &minute, &second), 0);
        assert_int_equal(minute * 60 + second, 3600 + 59 * 60 + 55);
        assert_int_equal(autopull_next_open_s(&w, minute, second), 5);
    }
    assert_string_equal(getenv("TZ"), "Sim/Edge");
    unsetenv("TZ");
    if (saved_dir[0] != '\0')
        setenv("TZDIR", saved_dir, 1);
    else
        unsetenv("TZDIR");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(sub), 0);
    assert_int_equal(rmdir(dir), 0);
}

typedef struct spec_row {
    const char *what;
    const char *par, *timeout, *min_ready, *window;
    int opted_in;
    long parallelism, timeout_s;
    const char *bad; /* the annotation named, or NULL */
} spec_row;

static const spec_row spec_rows[] = {
    {"no annotation: no opt-in", NULL, NULL, NULL, NULL, 0, 0, 0, NULL},
    {"the others alone are no opt-in", NULL, "600", "1", "22:00-06:00", 0, 0, 0, NULL},
    {"parallelism alone", "5", NULL, NULL, NULL, 1, 5, 0, NULL},
    {"empty parallelism: 1", "", NULL, NULL, NULL, 1, 1, 0, NULL},
    {"all four", "10", "900", "10%", "22:00-06:00 Asia/Shanghai", 1, 10, 900, NULL},
    {"a bad parallelism: no opt-in, said", "x", NULL, NULL, NULL, 0, 0, 0,
     OTA_ANN_PREDOWNLOAD_PARALLELISM},
    {"a bad timeout: opted in, the usual deadline, said", "5", "5s", NULL, NULL, 1, 5, 0,
     OTA_ANN_PREDOWNLOAD_TIMEOUT},
    {"a bad canary: no opt-in, said", "5", NULL, "half", NULL, 0, 0, 0,
     OTA_ANN_PREDOWNLOAD_MIN_READY},
    {"a bad window: no opt-in, said", "5", NULL, NULL, "nights", 0, 0, 0, OTA_ANN_PREPULL_WINDOW},
};

static void test_spec(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(spec_rows) / sizeof(spec_rows[0]); i++) {
        const spec_row *r = &spec_rows[i];
        autopull_spec s;
        autopull_spec_parse(&s, r->par, r->timeout, r->min_ready, r->window);
        ROW_CHECK(r->what, s.opted_in == r->opted_in, "opted_in %d", s.opted_in);
        ROW_CHECK(r->what, s.parallelism == r->parallelism, "parallelism %ld", s.parallelism);
        ROW_CHECK(r->what, s.timeout_s == r->timeout_s, "timeout %ld", s.timeout_s);
        if (r->bad == NULL)
            ROW_CHECK(r->what, s.bad_annotation == NULL, "bad %s", s.bad_annotation);
        else
            ROW_CHECK(r->what, s.bad_annotation != NULL && strcmp(s.bad_annotation, r->bad) == 0,
                      "bad %s", s.bad_annotation != NULL ? s.bad_annotation : "(none)");
        if (r->bad != NULL)
            ROW_CHECK(r->what, s.bad_why[0] != '\0', "no why");
    }
}

/* ---- a pod ------------------------------------------------------------------ */

#define H "h2"
#define MSG_H OTA_MSG_REVISION_PREFIX H
#define MSG_OLD OTA_MSG_REVISION_PREFIX "h1"

static void test_cond_of(void **state)
{
    (void)state;
    assert_int_equal(autopull_cond_of(0, NULL, NULL, NULL, H), AUTOPULL_COND_ABSENT);
    assert_int_equal(autopull_cond_of(1, "True", OTA_REASON_AUTO_OPTED_IN, MSG_H, H),
                     AUTOPULL_COND_TRUE_H);
    assert_int_equal(autopull_cond_of(1, "True", OTA_REASON_AUTO_OPTED_IN, MSG_OLD, H),
                     AUTOPULL_COND_TRUE_OTHER);
    assert_int_equal(autopull_cond_of(1, "True", OTA_REASON_AUTO_OPTED_IN, MSG_H "x", H),
                     AUTOPULL_COND_TRUE_OTHER);
    assert_int_equal(autopull_cond_of(1, "False", OTA_REASON_AUTO_NODE_USER, MSG_H, H),
                     AUTOPULL_COND_USER_H);
    assert_int_equal(autopull_cond_of(1, "False", OTA_REASON_AUTO_NODE_USER, MSG_OLD, H),
                     AUTOPULL_COND_FALSE_OTHER);
    assert_int_equal(autopull_cond_of(1, "False", OTA_REASON_AUTO_OPTED_OUT, MSG_H, H),
                     AUTOPULL_COND_OPTED_OUT);
    assert_int_equal(autopull_cond_of(1, "Unknown", NULL, NULL, H), AUTOPULL_COND_FALSE_OTHER);
}

#define PEND OTA_STATE_PENDING_UPGRADE
#define PULL OTA_STATE_PULLING
#define RDY OTA_STATE_READY
#define FAIL OTA_STATE_FAILED
#define CUR OTA_STATE_CURRENT

typedef struct pod_row {
    const char *what;
    autopull_pod_in in;
    autopull_pod_verdict want;
} pod_row;

static const pod_row pod_rows[] = {
    /* opted in */
    {"a new revision: marked", {1, 1, PEND, AUTOPULL_COND_ABSENT, 0}, AUTOPULL_MARK},
    {"marked for the old revision: marked again", {1, 1, PEND, AUTOPULL_COND_TRUE_OTHER, 0},
     AUTOPULL_MARK},
    {"opted out before, in again: marked", {1, 1, PEND, AUTOPULL_COND_OPTED_OUT, 0},
     AUTOPULL_MARK},
    {"a node user's hand-over of an old revision: marked", {1, 1, PEND, AUTOPULL_COND_FALSE_OTHER, 0},
     AUTOPULL_MARK},
    {"a current pod: nothing to pull", {1, 0, CUR, AUTOPULL_COND_ABSENT, 0}, AUTOPULL_NONE},
    {"a node user asked first: the node user's", {1, 1, PULL, AUTOPULL_COND_ABSENT, 0},
     AUTOPULL_NONE},
    {"a node user's request Ready: not marked", {1, 1, RDY, AUTOPULL_COND_ABSENT, 0},
     AUTOPULL_NONE},
    {"a node user's request Failed: not marked", {1, 1, FAIL, AUTOPULL_COND_ABSENT, 0},
     AUTOPULL_NONE},
    {"handed over to the node user: theirs", {1, 1, PULL, AUTOPULL_COND_USER_H, 0}, AUTOPULL_NONE},
    {"handed over, then failed: not taken back", {1, 1, FAIL, AUTOPULL_COND_USER_H, 0},
     AUTOPULL_NONE},
    {"marked, not started: pending", {1, 1, PEND, AUTOPULL_COND_TRUE_H, 0}, AUTOPULL_PENDING},
    {"marked, node NotReady: waiting", {1, 1, PEND, AUTOPULL_COND_TRUE_H, 1}, AUTOPULL_WAITING},
    {"started: running", {1, 1, PULL, AUTOPULL_COND_TRUE_H, 0}, AUTOPULL_RUNNING},
    {"started, node gone NotReady: still running (the Job's deadline)",
     {1, 1, PULL, AUTOPULL_COND_TRUE_H, 1}, AUTOPULL_RUNNING},
    {"done", {1, 1, RDY, AUTOPULL_COND_TRUE_H, 0}, AUTOPULL_READY},
    {"failed: not retried on its own", {1, 1, FAIL, AUTOPULL_COND_TRUE_H, 0}, AUTOPULL_FAILED},
    /* opted out */
    {"not opted in: nothing", {0, 1, PEND, AUTOPULL_COND_ABSENT, 0}, AUTOPULL_NONE},
    {"dropped, not started: taken back", {0, 1, PEND, AUTOPULL_COND_TRUE_H, 0}, AUTOPULL_OPT_OUT},
    {"dropped, node NotReady, not started: taken back", {0, 1, PEND, AUTOPULL_COND_TRUE_H, 1},
     AUTOPULL_OPT_OUT},
    {"dropped, an old mark: taken back", {0, 1, PEND, AUTOPULL_COND_TRUE_OTHER, 0},
     AUTOPULL_OPT_OUT},
    {"dropped, running: finishes", {0, 1, PULL, AUTOPULL_COND_TRUE_H, 0}, AUTOPULL_RUNNING},
    {"dropped, done: stays reported", {0, 1, RDY, AUTOPULL_COND_TRUE_H, 0}, AUTOPULL_READY},
    {"dropped, already OptedOut: nothing", {0, 1, PEND, AUTOPULL_COND_OPTED_OUT, 0},
     AUTOPULL_NONE},
};

static void test_pod(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(pod_rows) / sizeof(pod_rows[0]); i++) {
        const pod_row *r = &pod_rows[i];
        autopull_pod_verdict v = autopull_pod(&r->in);
        ROW_CHECK(r->what, v == r->want, "got %s, want %s", autopull_pod_verdict_name(v),
                  autopull_pod_verdict_name(r->want));
    }
}

/* ---- how many start ---------------------------------------------------------- */

typedef struct starts_row {
    const char *what;
    const char *par, *min_ready;
    int window_open;
    size_t updated_ready, desired;
    autopull_counts c;
    size_t want;
    autopull_hold hold;
} starts_row;

static const starts_row starts_rows[] = {
    {"50 pending, parallelism 5: 5", "5", NULL, 1, 0, 50, {50, 0, 0, 0, 0}, 5, AUTOPULL_GO},
    {"3 run: 2 more", "5", NULL, 1, 0, 50, {47, 0, 3, 0, 0}, 2, AUTOPULL_GO},
    {"5 run: none", "5", NULL, 1, 0, 50, {45, 0, 5, 0, 0}, 0, AUTOPULL_HOLD_PARALLELISM},
    {"more run than allowed (lowered): none", "2", NULL, 1, 0, 50, {45, 0, 5, 0, 0}, 0,
     AUTOPULL_HOLD_PARALLELISM},
    {"fewer pending than slots", "5", NULL, 1, 0, 50, {2, 0, 1, 40, 0}, 2, AUTOPULL_GO},
    {"waiting nodes take no slot and do not start", "5", NULL, 1, 0, 50, {0, 4, 0, 40, 0}, 0,
     AUTOPULL_GO},
    {"outside the window: none", "5", NULL, 0, 0, 50, {50, 0, 0, 0, 0}, 0, AUTOPULL_HOLD_WINDOW},
    {"outside the window, running ones go on (none more)", "5", NULL, 0, 0, 50, {47, 0, 3, 0, 0},
     0, AUTOPULL_HOLD_WINDOW},
    {"canary 2 of 1 ready: none", "5", "2", 1, 1, 50, {50, 0, 0, 0, 0}, 0, AUTOPULL_HOLD_CANARY},
    {"canary 2 of 2 ready: go", "5", "2", 1, 2, 50, {50, 0, 0, 0, 0}, 5, AUTOPULL_GO},
    {"canary 10% of 50 = 5, 4 ready: none", "5", "10%", 1, 4, 50, {50, 0, 0, 0, 0}, 0,
     AUTOPULL_HOLD_CANARY},
    {"canary 10% of 50 = 5, 5 ready: go", "5", "10%", 1, 5, 50, {50, 0, 0, 0, 0}, 5, AUTOPULL_GO},
    {"parallelism 1 (empty)", "", NULL, 1, 0, 50, {50, 0, 0, 0, 0}, 1, AUTOPULL_GO},
    {"not opted in: none", NULL, NULL, 1, 0, 50, {50, 0, 0, 0, 0}, 0, AUTOPULL_HOLD_OPTED_OUT},
};

static void test_starts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(starts_rows) / sizeof(starts_rows[0]); i++) {
        const starts_row *r = &starts_rows[i];
        autopull_spec s;
        autopull_spec_parse(&s, r->par, NULL, r->min_ready, NULL);
        autopull_gate g = {r->window_open, r->updated_ready,
                           autopull_min_ready_needed(&s, r->desired)};
        autopull_hold hold;
        size_t n = autopull_starts(&s, &g, &r->c, &hold);
        ROW_CHECK(r->what, n == r->want, "starts %zu", n);
        ROW_CHECK(r->what, hold == r->hold, "hold %s", autopull_hold_name(hold));
    }
}

/* Replayed pass by pass: 50 pods, parallelism 5, each pull taking one
 * pass: never more than 5 at once, and all done in 10 passes. */
static void test_starts_replayed(void **state)
{
    (void)state;
    autopull_spec s;
    autopull_spec_parse(&s, "5", NULL, NULL, NULL);
    autopull_gate g = {1, 0, 0};
    autopull_counts c = {50, 0, 0, 0, 0};
    size_t passes = 0;
    while (c.pending > 0 || c.running > 0) {
        c.ready += c.running; /* last pass's pulls are done */
        c.running = 0;
        size_t n = autopull_starts(&s, &g, &c, NULL);
        c.pending -= n;
        c.running += n;
        assert_true(c.running <= 5);
        passes++;
        assert_true(passes <= 20);
    }
    assert_int_equal(c.ready, 50);
    assert_int_equal(passes, 11);
}

/* ---- the DaemonSet's Events --------------------------------------------------- */

typedef struct event_row {
    const char *what;
    autopull_counts c;
    int started, finished;
} event_row;

static const event_row event_rows[] = {
    {"marked, none started yet", {50, 0, 0, 0, 0}, 0, 0},
    {"started", {45, 0, 5, 0, 0}, 1, 0},
    {"the last ones run", {0, 0, 2, 47, 1}, 1, 0},
    {"all done", {0, 0, 0, 49, 1}, 0, 1},
    {"all done but NotReady nodes: finished, they are the waiting count", {0, 2, 0, 47, 1}, 0, 1},
    {"outside the window with pods left: not finished", {10, 0, 0, 40, 0}, 0, 0},
    {"nothing was pulled (all waiting): not finished", {0, 3, 0, 0, 0}, 0, 0},
    {"nothing at all", {0, 0, 0, 0, 0}, 0, 0},
};

static void test_events(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(event_rows) / sizeof(event_rows[0]); i++) {
        const event_row *r = &event_rows[i];
        ROW_CHECK(r->what, autopull_started_due(&r->c) == r->started, "started");
        ROW_CHECK(r->what, autopull_finished_due(&r->c) == r->finished, "finished");
    }
    autopull_counts c = {0};
    autopull_pod_verdict vs[] = {AUTOPULL_PENDING, AUTOPULL_WAITING, AUTOPULL_RUNNING,
                                 AUTOPULL_READY,   AUTOPULL_READY,   AUTOPULL_FAILED,
                                 AUTOPULL_MARK,    AUTOPULL_NONE,    AUTOPULL_OPT_OUT};
    for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
        autopull_count(&c, vs[i]);
    assert_int_equal(c.pending, 1);
    assert_int_equal(c.waiting, 1);
    assert_int_equal(c.running, 1);
    assert_int_equal(c.ready, 2);
    assert_int_equal(c.failed, 1);
}

/* ---- which DaemonSets are served ------------------------------------------------ */

typedef struct serve_row {
    const char *what;
    int ota, asked, opted_in, unfinished;
    autopull_serve want;
    /* a pod of it goes through the pass: with an unfinished automatic pull, without */
    int pod_unfinished, pod_other;
} serve_row;

static const serve_row serve_rows[] = {
    {"OTA, not opted in", 1, 0, 0, 0, AUTOPULL_SERVE_OTA, 1, 1},
    {"OTA, opted in", 1, 1, 1, 0, AUTOPULL_SERVE_OTA, 1, 1},
    {"OTA, opted out with pulls left: OTA all the same", 1, 0, 0, 1, AUTOPULL_SERVE_OTA, 1, 1},
    {"RollingUpdate, opted in", 0, 1, 1, 0, AUTOPULL_SERVE_AUTO, 1, 1},
    {"RollingUpdate, opted in, pulls running", 0, 1, 1, 1, AUTOPULL_SERVE_AUTO, 1, 1},
    {"RollingUpdate, annotation dropped, pulls left: those pods only", 0, 0, 0, 1,
     AUTOPULL_SERVE_DRAIN, 1, 0},
    {"RollingUpdate, a value we cannot read, pulls left: those pods only", 0, 1, 0, 1,
     AUTOPULL_SERVE_DRAIN, 1, 0},
    {"RollingUpdate, a value we cannot read: its Event, no pod", 0, 1, 0, 0, AUTOPULL_SERVE_WARN,
     0, 0},
    {"RollingUpdate, never opted in: nothing", 0, 0, 0, 0, AUTOPULL_SERVE_NONE, 0, 0},
};

static void test_serve(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(serve_rows) / sizeof(serve_rows[0]); i++) {
        const serve_row *r = &serve_rows[i];
        autopull_serve got = autopull_serve_of(r->ota, r->asked, r->opted_in, r->unfinished);
        ROW_CHECK(r->what, got == r->want, "%s", autopull_serve_name(got));
        ROW_CHECK(r->what, autopull_pod_served(got, 1) == r->pod_unfinished, "pod, unfinished");
        ROW_CHECK(r->what, autopull_pod_served(got, 0) == r->pod_other, "pod, other");
    }
}

typedef struct unfinished_row {
    const char *what;
    int ap_true;
    ota_state state;
    int want;
} unfinished_row;

static const unfinished_row unfinished_rows[] = {
    {"marked, not started", 1, OTA_STATE_PENDING_UPGRADE, 1},
    {"marked, pulling", 1, OTA_STATE_PULLING, 1},
    {"marked, pulled", 1, OTA_STATE_READY, 0},
    {"marked, failed", 1, OTA_STATE_FAILED, 0},
    {"marked, at the revision now", 1, OTA_STATE_CURRENT, 0},
    {"a node user's pull (AutoPrePull False)", 0, OTA_STATE_PULLING, 0},
    {"opted out, not started", 0, OTA_STATE_PENDING_UPGRADE, 0},
};

static void test_unfinished(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(unfinished_rows) / sizeof(unfinished_rows[0]); i++) {
        const unfinished_row *r = &unfinished_rows[i];
        ROW_CHECK(r->what, autopull_unfinished(r->ap_true, r->state) == r->want, "unfinished");
    }
    assert_string_equal(autopull_serve_name(AUTOPULL_SERVE_DRAIN), "drain");
    assert_string_equal(autopull_serve_name((autopull_serve)99), "?");
}

/* AutoPrePullFinished's key within the revision: the same while the pods
 * waited for stay (pods upgrading after their pull count fewer ready), a
 * new one when a node waited for was pulled. */
static void test_finished_what(void **state)
{
    (void)state;
    char first[64], upgraded[64], back[64], again[64];
    autopull_counts c = {.ready = 5, .waiting = 1};
    assert_true(autopull_finished_due(&c));
    autopull_finished_what(&c, first, sizeof(first));
    assert_string_equal(first, "finished|1");
    c.ready = 3; /* two node users upgraded: their new pods are not counted */
    autopull_finished_what(&c, upgraded, sizeof(upgraded));
    assert_string_equal(upgraded, first);
    c = (autopull_counts){.ready = 3, .running = 1}; /* the node came back: not due yet */
    assert_false(autopull_finished_due(&c));
    c = (autopull_counts){.ready = 4};
    assert_true(autopull_finished_due(&c));
    autopull_finished_what(&c, back, sizeof(back));
    assert_string_equal(back, "finished|0");
    assert_string_not_equal(back, first);
    c.failed = 1;
    autopull_finished_what(&c, again, sizeof(again));
    assert_string_equal(again, back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallelism), cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_min_ready),   cmocka_unit_test(test_window),
        cmocka_unit_test(test_minute_in_zone), cmocka_unit_test(test_spec),
        cmocka_unit_test(test_next_open),   cmocka_unit_test(test_zone_file_read_again),
        cmocka_unit_test(test_cond_of),     cmocka_unit_test(test_pod),
        cmocka_unit_test(test_starts),      cmocka_unit_test(test_starts_replayed),
        cmocka_unit_test(test_events),      cmocka_unit_test(test_finished_what),
        cmocka_unit_test(test_serve),       cmocka_unit_test(test_unfinished),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

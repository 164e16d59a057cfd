/*
 * ratelimit.c - see ratelimit.h.  The bucket is advanced lazily: tokens is
 * correct at last_ns, and each call first adds what was refilled since.
 */
#include "ratelimit.h"

#include <string.h>

#define NS 1000000000.0
#define BLANK(ch) ((ch) == ' ' || (ch) == '\t' || (ch) == '\r' || (ch) == '\n')

int ratelimit_init(ratelimit *r, double qps, int burst, uint64_t now_ns)
{
    if (!(qps > 0) || burst < 1) /* !(x > 0) also catches NaN */
        return -1;
    r->qps = qps;
    r->burst = burst;
    r->tokens = burst;
    r->last_ns = now_ns;
    return 0;
}

static void advance(ratelimit *r, uint64_t now_ns)
{
    if (now_ns <= r->last_ns) /* a pause, or a clock that did not move */
        return;
    double refill = (double)(now_ns - r->last_ns) * r->qps / NS;
    r->tokens = r->tokens + refill > r->burst ? r->burst : r->tokens + refill;
    r->last_ns = now_ns;
}

uint64_t ratelimit_take(ratelimit *r, uint64_t now_ns)
{
    advance(r, now_ns);
    if (now_ns >= r->last_ns && r->tokens >= 1) {
        r->tokens -= 1;
        return 0;
    }
    /* a token is whole at last_ns (the end of a pause, or now) plus the
     * time to refill what is missing */
    uint64_t ready = r->last_ns;
    if (r->tokens < 1) {
        double wait = (1 - r->tokens) * NS / r->qps;
        uint64_t w = wait >= 9e18 ? (uint64_t)9e18 : (uint64_t)wait;
        if ((double)w < wait)
            w++; /* round up: never early */
        ready += w;
    }
    return ready > now_ns ? ready - now_ns : 1; /* > 0: rounding left it a hair short */
}

void ratelimit_pause_until(ratelimit *r, uint64_t now_ns, uint64_t until_ns)
{
    advance(r, now_ns);
    if (until_ns <= r->last_ns)
        return;
    /* Nothing refills during the pause, and at most one call is ready at
     * its end: the rest follow at qps. */
    if (r->tokens > 1)
        r->tokens = 1;
    r->last_ns = until_ns;
}

/* ---- Retry-After ------------------------------------------------------------ */

typedef struct cursor {
    const char *p, *end;
} cursor;

static int lit(cursor *c, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
        return 0;
    c->p += n;
    return 1;
}

/* Exactly n digits. */
static int num(cursor *c, int n, int *out)
{
    if (c->end - c->p < n)
        return 0;
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (c->p[i] < '0' || c->p[i] > '9')
            return 0;
        v = v * 10 + (c->p[i] - '0');
    }
    c->p += n;
    *out = v;
    return 1;
}

static int one_of(cursor *c, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (lit(c, names[i]))
            return i + 1;
    return 0;
}

static const char *const short_days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const long_days[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                        "Friday", "Saturday", "Sunday"};
static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

static int time_of_day(cursor *c, int *h, int *mi, int *s)
{
    return num(c, 2, h) && lit(c, ":") && num(c, 2, mi) && lit(c, ":") && num(c, 2, s);
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* One of the three HTTP-date forms; seconds since the epoch in *t. */
static int http_date(cursor *c, int64_t *t)
{
    int y, m, d, h, mi, s;
    cursor save = *c;
    if (one_of(c, long_days, 7)) {
        /* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" */
        int yy;
        if (!(lit(c, ", ") && num(c, 2, &d) && lit(c, "-") && (m = one_of(c, months, 12)) &&
              lit(c, "-") && num(c, 2, &yy) && lit(c, " ") && time_of_day(c, &h, &mi, &s) &&
              lit(c, " GMT")))
            return 0;
        y = yy < 70 ? 2000 + yy : 1900 + yy;
    } else if (*c = save, one_of(c, short_days, 7) && lit(c, ",")) {
        /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
        if (!(lit(c, " ") && num(c, 2, &d) && lit(c, " ") && (m = one_of(c, months, 12)) &&
              lit(c, " ") && num(c, 4, &y) && lit(c, " ") && time_of_day(c, &h, &mi, &s) &&
              lit(c, " GMT")))
            return 0;
    } else if (*c = save, one_of(c, short_days, 7)) {
        /* asctime: "Sun Nov  6 08:49:37 1994" */
        if (!(lit(c, " ") && (m = one_of(c, months, 12)) && lit(c, " ")))
            return 0;
        if (!(lit(c, " ") ? num(c, 1, &d) : num(c, 2, &d)))
            return 0;
        if (!(lit(c, " ") && time_of_day(c, &h, &mi, &s) && lit(c, " ") && num(c, 4, &y)))
            return 0;
    } else {
        return 0;
    }
    if (c->p != c->end || d < 1 || d > days_in_month(y, m) || h > 23 || mi > 59 || s > 60)
        return 0;
    *t = days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + s;
    return 1;
}

int ratelimit_parse_retry_after(const char *v, size_t len, int64_t now_unix, unsigned *seconds)
{
    /* Blanks around the value, and the CRLF that ends a header line as
     * libcurl's header callback passes it. */
    cursor c = {v, v + len};
    while (c.p < c.end && BLANK(*c.p))
        c.p++;
    while (c.end > c.p && BLANK(c.end[-1]))
        c.end--;
    if (c.p == c.end)
        return -1;

    int64_t wait = 0;
    if (*c.p >= '0' && *c.p <= '9') {
        for (const char *p = c.p; p < c.end; p++) {
            if (*p < '0' || *p > '9')
                return -1;
            if (wait <= RATELIMIT_RETRY_AFTER_MAX_S) /* stop growing: no overflow */
                wait = wait * 10 + (*p - '0');
        }
    } else {
        int64_t t;
        if (!http_date(&c, &t))
            return -1;
        wait = t - now_unix;
    }
    if (wait < 0)
        wait = 0;
    if (wait > RATELIMIT_RETRY_AFTER_MAX_S)
        wait = RATELIMIT_RETRY_AFTER_MAX_S;
    *seconds = (unsigned)wait;
    return 0;
}

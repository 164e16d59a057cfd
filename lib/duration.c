/*
 * duration.c - see duration.h.
 */
#include "duration.h"

#include <stdio.h>
#include <string.h>

#define NS_PER_S 1000000000ull

static const struct {
    const char *name;
    uint64_t ns;
} units[] = {
    /* longest names first: "ms" before "m", "ns" before nothing */
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000}, /* µs, as Go spells it */
    {"ms", 1000000},
    {"h", 3600 * NS_PER_S},
    {"m", 60 * NS_PER_S},
    {"s", NS_PER_S},
};

/* The unit at *p (advanced past it), or 0 when none is. */
static uint64_t unit_at(const char **p)
{
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i].name);
        if (strncmp(*p, units[i].name, n) == 0) {
            *p += n;
            return units[i].ns;
        }
    }
    return 0;
}

/* The whole duration, or -1 on bad syntax or overflow. */
static int parse(const char *s, uint64_t *out)
{
    const char *p = s;
    uint64_t total = 0;
    if (*p == '\0')
        return -1;
    int terms = 0;
    while (*p != '\0') {
        uint64_t whole = 0;
        double frac = 0, scale = 1;
        int digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (whole > (UINT64_MAX - 9) / 10)
                return -1;
            whole = whole * 10 + (uint64_t)(*p - '0');
        }
        if (*p == '.') {
            p++;
            for (; *p >= '0' && *p <= '9'; p++, digits++) {
                if (scale < 1e18) { /* further digits are below a nanosecond */
                    scale *= 10;
                    frac += (*p - '0') / scale;
                }
            }
        }
        if (digits == 0)
            return -1;
        uint64_t unit = unit_at(&p);
        if (unit == 0) {
            /* a plain number of seconds, alone: "600", "0.5" */
            if (terms > 0 || *p != '\0')
                return -1;
            unit = NS_PER_S;
        }
        /* the fraction first: whole * unit + part must not wrap either */
        double f = frac * (double)unit;
        uint64_t part = f < (double)unit ? (uint64_t)f : unit;
        if (whole > (UINT64_MAX - part) / unit)
            return -1;
        uint64_t term = whole * unit + part;
        if (term > UINT64_MAX - total)
            return -1;
        total += term;
        terms++;
    }
    *out = total;
    return 0;
}

void duration_format(uint64_t ns, char *buf, size_t len)
{
    if (ns == 0) {
        snprintf(buf, len, "0s");
    } else if (ns < 1000) {
        snprintf(buf, len, "%lluns", (unsigned long long)ns);
    } else if (ns < 1000000) {
        snprintf(buf, len, "%gus", (double)ns / 1e3);
    } else if (ns < NS_PER_S) {
        snprintf(buf, len, "%gms", (double)ns / 1e6);
    } else {
        uint64_t h = ns / (3600 * NS_PER_S), m = ns / (60 * NS_PER_S) % 60;
        double sec = (double)(ns % (60 * NS_PER_S)) / 1e9;
        if (h > 0)
            snprintf(buf, len, "%lluh%llum%gs", (unsigned long long)h, (unsigned long long)m, sec);
        else if (m > 0)
            snprintf(buf, len, "%llum%gs", (unsigned long long)m, sec);
        else
            snprintf(buf, len, "%gs", sec);
    }
}

int duration_parse(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *ns, char *err,
                   size_t errlen)
{
    uint64_t v = 0;
    if (parse(s, &v) == 0 && v >= min_ns && v <= max_ns) {
        *ns = v;
        return 0;
    }
    char lo[32], hi[32];
    duration_format(min_ns, lo, sizeof(lo));
    duration_format(max_ns, hi, sizeof(hi));
    snprintf(err, errlen,
             "wants a duration such as 15s, 10m or 1h30m (units ns, us, ms, s, m, h; a plain "
             "number is seconds) from %s to %s, got \"%.64s\"",
             lo, hi, s);
    return -1;
}

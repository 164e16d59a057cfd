/*
 * clock.c - see clock.h.
 */
#include "clock.h"

#include <stdio.h>
#include <time.h>

uint64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void clock_rfc3339(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int clock_format_rfc3339(long long secs, char *buf, size_t size)
{
    time_t t = (time_t)secs;
    struct tm tm;
    if (size > 0)
        buf[0] = '\0';
    if ((long long)t != secs || gmtime_r(&t, &tm) == NULL || tm.tm_year < -1900 ||
        tm.tm_year > 9999 - 1900)
        return -1;
    int n = snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (n < 0 || (size_t)n >= size) {
        if (size > 0)
            buf[0] = '\0';
        return -1;
    }
    return 0;
}

void clock_rfc3339_micro(char *buf, size_t size)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%06ldZ", base, ts.tv_nsec / 1000);
}

/* The n digits at s as a number, or -1 if one is not a digit. */
static int digits(const char *s, size_t n)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

int clock_parse_rfc3339(sv text, long long *secs)
{
    const char *s = text.ptr;
    size_t n = text.len;
    /* "2006-01-02T15:04:05" is 19 bytes, and "Z" at least one more */
    if (s == NULL || n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':')
        return -1;
    int year = digits(s, 4), month = digits(s + 5, 2), day = digits(s + 8, 2);
    int hour = digits(s + 11, 2), minute = digits(s + 14, 2), second = digits(s + 17, 2);
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
        hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
        return -1;
    size_t i = 19;
    if (s[i] == '.') {
        size_t first = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == first)
            return -1;
    }
    long long offset = 0; /* seconds east of UTC */
    if (i + 1 == n && s[i] == 'Z') {
        /* UTC */
    } else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh = digits(s + i + 1, 2), om = digits(s + i + 4, 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59)
            return -1;
        offset = (s[i] == '-' ? -1 : 1) * (oh * 3600LL + om * 60LL);
    } else {
        return -1;
    }
    struct tm tm = {0};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    /* every field is in range, so timegm has nothing to normalize */
    *secs = (long long)timegm(&tm) - offset;
    return 0;
}

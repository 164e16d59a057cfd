/*
 * log.c - see log.h.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static log_level min_level = LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(log_level level)
{
    min_level = level;
}

int log_level_parse(const char *name, log_level *out)
{
    for (int i = LOG_DEBUG; i <= LOG_ERROR; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *out = (log_level)i;
            return 0;
        }
    }
    return -1;
}

static void put(log_line *l, const char *s, size_t n)
{
    size_t room = sizeof(l->buf) - 1 - l->len; /* keep one byte for '\n' */
    if (n > room) {
        n = room;
        l->truncated = 1;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_value(log_line *l, const char *s, size_t n)
{
    int quote = n == 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ' ' || s[i] == '"' || s[i] == '=' || s[i] == '\\' ||
                (unsigned char)s[i] < 0x20;
    if (!quote) {
        put(l, s, n);
        return;
    }
    put(l, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put(l, esc, 2);
        } else if (c < 0x20) {
            char esc[8];
            int k = snprintf(esc, sizeof(esc), "\\x%02x", c);
            put(l, esc, (size_t)k);
        } else {
            put(l, (const char *)&s[i], 1);
        }
    }
    put(l, "\"", 1);
}

static void put_key(log_line *l, const char *key)
{
    put(l, " ", 1);
    put(l, key, strlen(key));
    put(l, "=", 1);
}

void log_begin(log_line *l, log_level level, const char *msg)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    l->len = 0;
    l->truncated = 0;
    l->len = (size_t)snprintf(l->buf, sizeof(l->buf),
                              "time=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s msg=",
                              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                              tm.tm_sec, ts.tv_nsec / 1000000, level_names[level]);
    put_value(l, msg, strlen(msg));
}

void log_str(log_line *l, const char *key, const char *value)
{
    put_key(l, key);
    put_value(l, value != NULL ? value : "", value != NULL ? strlen(value) : 0);
}

void log_sv(log_line *l, const char *key, sv value)
{
    put_key(l, key);
    put_value(l, value.ptr != NULL ? value.ptr : "", value.len);
}

void log_int(log_line *l, const char *key, long long value)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%lld", value);
    put_key(l, key);
    put(l, num, (size_t)n);
}

void log_end(log_line *l, log_level level)
{
    if (level < min_level)
        return;
    l->buf[l->len++] = '\n';
    /* One write per line; a short write to stderr is not worth a retry loop. */
    ssize_t r = write(STDERR_FILENO, l->buf, l->len);
    (void)r;
}

void log_msg(log_level level, const char *msg, const char *fmt, ...)
{
    if (level < min_level)
        return;
    log_line l;
    log_begin(&l, level, msg);
    if (fmt != NULL) {
        char detail[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        log_str(&l, "detail", detail);
    }
    log_end(&l, level);
}

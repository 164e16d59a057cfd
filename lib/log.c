/*
 * log.c - see log.h.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"

static log_level min_level = LOG_INFO;
static log_format line_format = LOG_FORMAT_TEXT;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

/* json keeps room for `,"truncated":true}` and the newline. */
#define JSON_RESERVE 24

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

void log_set_format(log_format format)
{
    line_format = format;
}

int log_format_parse(const char *name, log_format *out)
{
    if (strcmp(name, "text") == 0)
        *out = LOG_FORMAT_TEXT;
    else if (strcmp(name, "json") == 0)
        *out = LOG_FORMAT_JSON;
    else
        return -1;
    return 0;
}

int log_level_from_flag(const char *value, log_level *out, char *err, size_t errlen)
{
    if (log_level_parse(value, out) == 0)
        return 0;
    return errmsg_set(err, errlen, "--log-level wants debug, info, warn or error, got \"%s\"",
                      value);
}

int log_format_from_flag(const char *value, log_format *out, char *err, size_t errlen)
{
    if (log_format_parse(value, out) == 0)
        return 0;
    return errmsg_set(err, errlen, "--log-format wants text or json, got \"%s\"", value);
}

/* ---- text ---------------------------------------------------------------- */

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

/* ---- json ---------------------------------------------------------------- */

/* Appends n bytes if they fit below the json limit; 0, or -1 (nothing
 * appended, the line is marked truncated). */
static int jput(log_line *l, const char *s, size_t n)
{
    if (l->len + n > sizeof(l->buf) - JSON_RESERVE) {
        l->truncated = 1;
        return -1;
    }
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    return 0;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if it is not one
 * (overlong, surrogate, beyond U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    unsigned cp = c & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* A JSON string: escapes quotes, backslashes and control characters, and
 * replaces bytes that are not UTF-8 by U+FFFD, so every line parses.  Cut
 * between two characters when the line is full, and closed. */
static void jstring(log_line *l, const char *s, size_t n)
{
    if (jput(l, "\"", 1) != 0)
        return;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        char esc[8];
        const char *unit = esc;
        size_t k, step = 1;
        unsigned char c = u[i];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            k = 2;
        } else if (c == '\n' || c == '\t' || c == '\r') {
            esc[0] = '\\';
            esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
            k = 2;
        } else if (c < 0x20 || c == 0x7f) {
            k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c);
        } else if ((step = utf8_len(u + i, n - i)) == 0) {
            unit = "\\ufffd";
            k = 6;
            step = 1;
        } else {
            unit = s + i;
            k = step;
        }
        /* one byte stays for the closing quote */
        if (l->len + k + 1 > sizeof(l->buf) - JSON_RESERVE) {
            l->truncated = 1;
            break;
        }
        memcpy(l->buf + l->len, unit, k);
        l->len += k;
        i += step;
    }
    l->buf[l->len++] = '"'; /* room kept above */
}

/* `,"key":` when there is room for it and an empty value after it. */
static int jkey(log_line *l, const char *key)
{
    if (l->truncated)
        return -1; /* nothing after a cut */
    size_t klen = strlen(key);
    if (l->len + klen + 6 > sizeof(l->buf) - JSON_RESERVE) {
        l->truncated = 1;
        return -1;
    }
    jput(l, ",", 1);
    jstring(l, key, klen);
    jput(l, ":", 1);
    return 0;
}

/* ---- both ---------------------------------------------------------------- */

static void field_str(log_line *l, const char *key, const char *value, size_t n)
{
    if (l->format == LOG_FORMAT_JSON) {
        if (jkey(l, key) == 0)
            jstring(l, value, n);
        return;
    }
    put_key(l, key);
    put_value(l, value, n);
}

void log_begin(log_line *l, log_level level, const char *msg)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char when[96];
    snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    l->len = 0;
    l->truncated = 0;
    l->format = line_format;
    if (l->format == LOG_FORMAT_JSON) {
        l->len = (size_t)snprintf(l->buf, sizeof(l->buf), "{\"ts\":\"%s\",\"level\":\"%s\"", when,
                                  level_names[level]);
    } else {
        l->len = (size_t)snprintf(l->buf, sizeof(l->buf), "ts=%s level=%s", when,
                                  level_names[level]);
    }
    field_str(l, "msg", msg, strlen(msg));
}

void log_str(log_line *l, const char *key, const char *value)
{
    field_str(l, key, value != NULL ? value : "", value != NULL ? strlen(value) : 0);
}

void log_sv(log_line *l, const char *key, sv value)
{
    field_str(l, key, value.ptr != NULL ? value.ptr : "", value.ptr != NULL ? value.len : 0);
}

void log_int(log_line *l, const char *key, long long value)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%lld", value);
    if (l->format == LOG_FORMAT_JSON) {
        if (jkey(l, key) == 0 && jput(l, num, (size_t)n) != 0)
            jstring(l, "", 0); /* the key is there: give it a value */
        return;
    }
    put_key(l, key);
    put(l, num, (size_t)n);
}

void log_finish(log_line *l)
{
    if (l->format == LOG_FORMAT_JSON) {
        /* JSON_RESERVE keeps room for this */
        const char *end = l->truncated ? ",\"truncated\":true}\n" : "}\n";
        size_t n = strlen(end);
        memcpy(l->buf + l->len, end, n);
        l->len += n;
        return;
    }
    l->buf[l->len++] = '\n';
}

void log_end(log_line *l, log_level level)
{
    if (level < min_level)
        return;
    log_finish(l);
    /* One write per line; a short write to stderr is not worth a retry loop. */
    ssize_t r = write(STDERR_FILENO, l->buf, l->len);
    (void)r;
}

void log_startup_line(log_line *l, const char *program, const char *err)
{
    if (line_format == LOG_FORMAT_JSON) {
        log_begin(l, LOG_ERROR, "cannot start");
        log_str(l, "program", program);
        log_str(l, "error", err);
        log_finish(l);
        return;
    }
    int n = snprintf(l->buf, sizeof(l->buf) - 1, "%s: %s", program, err);
    l->len = n < 0 ? 0 : ((size_t)n < sizeof(l->buf) - 1 ? (size_t)n : sizeof(l->buf) - 2);
    l->truncated = (size_t)n >= sizeof(l->buf) - 1;
    l->format = LOG_FORMAT_TEXT;
    log_finish(l);
}

void log_startup_error(const char *program, const char *err)
{
    log_line l;
    log_startup_line(&l, program, err);
    ssize_t r = write(STDERR_FILENO, l.buf, l.len);
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

void log_kv(log_level level, const char *msg, ...)
{
    if (level < min_level)
        return;
    log_line l;
    log_begin(&l, level, msg);
    va_list ap;
    va_start(ap, msg);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (key == NULL)
            break;
        log_str(&l, key, va_arg(ap, const char *));
    }
    va_end(ap);
    log_end(&l, level);
}

/*
 * log.h - one line per event on stderr, in logfmt (key=value), which both
 * `kubectl logs | grep` and log shippers read.
 *
 *   time=2026-11-21T21:00:00.123Z level=info msg=denied uid=... rule=...
 *
 * A line is formatted into a local buffer and written with one write(2),
 * so lines from several threads never interleave.
 */
#ifndef OTA_LOG_H
#define OTA_LOG_H

#include <stddef.h>

#include "sv.h"

typedef enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

/* Lines below this level are dropped (default LOG_INFO). */
void log_set_level(log_level level);
/* "debug", "info", "warn" or "error" into *out: 0, or -1 for anything else.
 * Both programs' --log-level flag goes through this. */
int log_level_parse(const char *name, log_level *out);

/* A line being built; values are quoted when they need it. */
typedef struct log_line {
    char buf[2048];
    size_t len;
    int truncated;
} log_line;

void log_begin(log_line *l, log_level level, const char *msg);
void log_str(log_line *l, const char *key, const char *value);
void log_sv(log_line *l, const char *key, sv value);
void log_int(log_line *l, const char *key, long long value);
void log_end(log_line *l, log_level level);

/* A whole line with one "msg" and an optional printf-formatted "detail". */
void log_msg(log_level level, const char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

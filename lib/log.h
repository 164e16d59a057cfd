/*
 * log.h - one line per event on stderr, with the objects named as keys.
 * Two formats, chosen once at start (--log-format):
 *
 *   text (logfmt, what `kubectl logs | grep` reads):
 *     ts=2026-11-21T21:00:00.123Z level=info msg=denied uid=... rule=...
 *   json (one object per line, what log shippers read):
 *     {"ts":"2026-11-21T21:00:00.123Z","level":"info","msg":"denied","uid":"..."}
 *
 * A line is formatted into a local buffer and written with one write(2),
 * so lines from several threads never interleave.  A line that does not fit
 * its buffer is cut, and stays a valid line of its format: in json the cut
 * string is closed and "truncated":true is added.
 */
#ifndef OTA_LOG_H
#define OTA_LOG_H

#include <stddef.h>

#include "sv.h"

typedef enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;
typedef enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON } log_format;

/* Lines below this level are dropped (default LOG_INFO). */
void log_set_level(log_level level);
/* "debug", "info", "warn" or "error" into *out: 0, or -1 for anything else.
 * Both programs' --log-level flag goes through this. */
int log_level_parse(const char *name, log_level *out);
/* Set once at start, before any thread logs (default LOG_FORMAT_TEXT). */
void log_set_format(log_format format);
/* "text" or "json" into *out: 0, or -1.  Both programs' --log-format. */
int log_format_parse(const char *name, log_format *out);
/* A program's --log-level and --log-format values (lib/flagtab's log
 * kinds): into *out and 0, or -1 with what the flag wants in err (at most
 * errlen bytes), for the program to print.  Pure: the program sets them. */
int log_level_from_flag(const char *value, log_level *out, char *err, size_t errlen);
int log_format_from_flag(const char *value, log_format *out, char *err, size_t errlen);

/* A line being built; values are quoted when they need it. */
typedef struct log_line {
    char buf[2048];
    size_t len;
    int truncated;
    log_format format; /* taken from log_set_format at log_begin */
} log_line;

void log_begin(log_line *l, log_level level, const char *msg);
void log_str(log_line *l, const char *key, const char *value);
void log_sv(log_line *l, const char *key, sv value);
void log_int(log_line *l, const char *key, long long value);
/* Ends the line (newline; in json the closing brace) without writing it:
 * l->buf[0..l->len) is the whole line.  log_end calls it. */
void log_finish(log_line *l);
void log_end(log_line *l, log_level level);

/* The line that says a program cannot start (err: why, as its flag and
 * config parsers word it), in the format set: in text the plain
 * "program: err" people and scripts read; in json a line like any other
 * (level error, msg "cannot start", program, error), so that a collector
 * that reads JSON gets this one too.  log_startup_line builds it (unwritten,
 * finished) into l; log_startup_error writes it, whatever the level. */
void log_startup_line(log_line *l, const char *program, const char *err);
void log_startup_error(const char *program, const char *err);

/* A whole line with one "msg" and an optional printf-formatted "detail". */
void log_msg(log_level level, const char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A whole line with string keys: key, value pairs ending with NULL, e.g.
 *   log_kv(LOG_INFO, "job created", "pod", "edge/a", "job", j, NULL);
 * A NULL value is logged as "". */
void log_kv(log_level level, const char *msg, ...) __attribute__((sentinel));

#endif

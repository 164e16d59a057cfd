/*
 * strbuf.h - a growing text buffer in malloc memory, for answers built a
 * piece at a time: /metrics pages (lib/metrics renders into one) and the
 * controller's probe bodies.
 *
 * A write that fails (out of memory, or a format vsnprintf cannot render)
 * sets failed and the buffer takes nothing more: callers write everything
 * and look once, at the end, since incomplete text must not be served.
 */
#ifndef OTA_STRBUF_H
#define OTA_STRBUF_H

#include <stddef.h>

/* Starts as {0}: empty, no memory. */
typedef struct strbuf {
    char *data; /* NUL-terminated once anything was written, else NULL */
    size_t len, cap;
    int failed; /* a write failed: data is incomplete */
} strbuf;

/* Appends printf-style text. */
void strbuf_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Releases the memory; the buffer is empty again (failed is kept). */
void strbuf_free(strbuf *b);

#endif

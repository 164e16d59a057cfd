/*
 * jspec.h - the frame of a spec decoder (lib/ipj_spec.c for ImagePullJobs,
 * lib/ic_spec.c for ImageCaches): one object's span of a request body,
 * already held to the review decoder's rules (UTF-8, depth, no key twice),
 * read with yajl's parser in arena memory, its events folded into four
 * (a scalar, a container opened, closed, a key), with one error sink.
 * What a decoder keeps, and which JSON types it takes where, is its own.
 */
#ifndef OTA_JSPEC_H
#define OTA_JSPEC_H

#include <stddef.h>

#include "arena.h"

/* A decoder's side.  Each returns 1 to go on, 0 to stop (after
 * jspec_fail).  scalar's kind: 's' string, 'n' number (its text), 'b'
 * boolean, 'z' null. */
typedef struct jspec_events {
    int (*scalar)(void *ctx, char kind, const char *p, size_t len);
    int (*open)(void *ctx, int is_map);
    int (*close)(void *ctx);
    int (*key)(void *ctx, const char *key, size_t len);
} jspec_events;

/* Where a decoder's first failure goes. */
typedef struct jspec_sink {
    char *err;
    size_t errlen;
    int failed;
} jspec_sink;

/* Sets the sink's message (printf) and its failed flag; returns 0, what an
 * event returns to stop the parse. */
int jspec_fail(jspec_sink *sink, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The containers open, by a decoder's contexts (an enum whose 0 is "a
 * value no one reads").  Deeper than JSPEC_DEPTH, or inside a value no one
 * reads, only counted. */
#define JSPEC_DEPTH 8
#define JSPEC_SKIP 0
#define JSPEC_TOP (-1)

typedef struct jspec_stack {
    int at[JSPEC_DEPTH];
    size_t depth;
    size_t skipped; /* containers open inside (or past) the stack */
} jspec_stack;

/* The innermost container's context: JSPEC_SKIP inside a value no one
 * reads, JSPEC_TOP when none is open. */
int jspec_top(const jspec_stack *st);
/* A container of context c opens (JSPEC_SKIP: one no one reads). */
void jspec_open(jspec_stack *st, int c);
/* The innermost container closes: its context, JSPEC_SKIP for one that
 * was only counted (or none open). */
int jspec_close(jspec_stack *st);

/*
 * Parses json[0..len) with ev on ctx, yajl's memory from a.  Returns 0, or
 * -1 with sink's message: the span is longer than max_bytes ("spec is N
 * bytes, more than the M an object can have"), an event failed, memory ran
 * out, or the span is not JSON.
 */
int jspec_parse(const jspec_events *ev, void *ctx, jspec_sink *sink, const char *json, size_t len,
                size_t max_bytes, arena *a);

#endif

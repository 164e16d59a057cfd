/*
 * jscan.h - a strict one-pass JSON scanner that feeds yajl's callbacks and
 * checks, without any, the values its consumer does not read.
 *
 * The review decoder reads two dozen short fields of a body that is mostly
 * managedFields, spec and container statuses.  yajl lexes every token of
 * those into a callback the decoder ignores; this scanner asks the consumer
 * before each value whether it reads it, and when not, only checks the value
 * (grammar, RFC 3629 UTF-8, escapes, nesting), sixteen bytes at a time
 * inside strings (eight without SSE2).  A skipped subtree of a hostile body
 * is still checked: a body two decoders could read differently is refused
 * wherever the flaw hides.
 *
 * What it accepts is what jcheck_body() + yajl 2.1 accept with nothing but
 * whitespace after the value and no key twice in one object, read or
 * skipped (webhook/jkeys.h; checked on the fuzz corpora, the fixtures and
 * their mutants: tests/unit/test_jscan.c, tests/fuzz/fuzz_jscan.c).  It
 * names no errors: a refusal is one return code, and the review decoder then
 * decodes the body again with jcheck + yajl, whose messages it keeps.
 */
#ifndef OTA_JSCAN_H
#define OTA_JSCAN_H

#include <stddef.h>

#include <yajl/yajl_parse.h>

/* The deepest nesting jscan_parse() can be asked to allow. */
#define JSCAN_MAX_DEPTH 256

typedef struct jscan_sink {
    /* Called in yajl's order, with yajl's arguments: strings unescaped (in
     * place in the text when they have no escape, else in a buffer valid
     * until the callback returns), numbers as their text through
     * yajl_number (yajl_integer and yajl_double are never called).  A NULL
     * member is not called; a callback that returns 0 stops the scan. */
    const yajl_callbacks *cb;
    void *ctx;
    /* Asked before each value (NULL: never): nonzero when the consumer reads
     * nothing of it.  The value, however deep, is then checked without a
     * callback, its opening and closing included. */
    int (*skips)(void *ctx);
    /* Set before each callback: the bytes up to and including the token, as
     * yajl_get_bytes_consumed() would say for one yajl_parse() of the text. */
    size_t consumed;
} jscan_sink;

enum {
    JSCAN_OK = 0,
    JSCAN_REFUSED = -1, /* not one strict JSON value, a key twice in an object, nested past
                           max_depth, or out of memory */
    JSCAN_STOPPED = -2, /* a callback returned 0 */
};

/*
 * Scans text[0..len): exactly one JSON value with optional whitespace around
 * it, no more than max_depth (at most JSCAN_MAX_DEPTH) arrays and objects
 * open at once.  Returns JSCAN_OK, JSCAN_REFUSED or JSCAN_STOPPED.
 */
int jscan_parse(const char *text, size_t len, int max_depth, jscan_sink *sink);

#endif

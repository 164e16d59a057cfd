/*
 * jcheck.h - the strict pass over a request body: what RFC 8259 and RFC 3629
 * forbid and yajl 2.1 lets through, in the one pass over every byte.
 *
 * yajl checks the grammar, but it also takes vertical tab and form feed as
 * whitespace, rewrites a lone high surrogate escape (`"\ud800zz"` becomes
 * `"?zz"`, `\ud800\u0041` becomes U+10041), decodes a lone low one into
 * bytes that are not UTF-8, and checks only the shape of raw multi-byte
 * sequences.  Conditions are copied verbatim from the body into patches and
 * strings are echoed into responses, so the body must be JSON that every
 * decoder reads the same way.
 *
 * The pass needs no idea of where strings are, which keeps it as fast as a
 * plain UTF-8 check (eight bytes at a time): a control character other
 * than tab, LF and CR is wrong everywhere (between tokens RFC 8259 has only
 * those and space, and inside a string none raw), and a backslash only
 * belongs inside a string, where it starts an escape.  The third thing yajl
 * lets through, bytes after the top-level value (`{...}"abc` when they form
 * an unfinished token), the review decoder checks from where yajl says the
 * value ended.  An escaped NUL (\u0000) is allowed: strings carry their
 * length everywhere (docs/DECISIONS.md, "Embedded NUL").
 */
#ifndef OTA_JCHECK_H
#define OTA_JCHECK_H

#include <stddef.h>

/*
 * Checks s[0..len).  Returns 0, or -1 with a one-line message in err (at
 * most errlen bytes, NUL-terminated) naming the problem and its byte offset:
 * invalid UTF-8, a control character, or a \u escape that is half of a
 * UTF-16 surrogate pair.  What else is wrong (grammar, bad escapes) is left
 * to the parser, which names it better.
 */
int jcheck_body(const char *s, size_t len, char *err, size_t errlen);

/* The length of the RFC 3629 sequence at s[0..n) (s[0] >= 0x80), or 0 when
 * it is not one: overlong forms, encoded UTF-16 surrogates, code points past
 * U+10FFFF, stray continuation bytes, C0, C1, F5..FF, cut sequences. */
size_t jcheck_utf8_seq(const unsigned char *s, size_t n);

/* The UTF-16 code unit of the four hex digits at s[0..n), or -1. */
long jcheck_hex4(const unsigned char *s, size_t n);

/* The first byte of s[from..len) that is not JSON whitespace, or len. */
size_t jcheck_skip_space(const char *s, size_t len, size_t from);

#endif

/*
 * jcheck.h - the strict pass over a request body: what RFC 8259 and RFC 3629
 * forbid and yajl 2.1 lets through.
 *
 * yajl checks the grammar, but it also takes vertical tab and form feed as
 * whitespace, accepts bytes after the top-level value when they form an
 * unfinished token (`{...}"abc`), rewrites a lone high surrogate escape
 * (`"\ud800zz"` becomes `"?zz"`, `\ud800\u0041` becomes U+10041), decodes a
 * lone low one into bytes that are not UTF-8, and checks only the shape of
 * raw multi-byte sequences.  Conditions are copied verbatim from the body
 * into patches and strings are echoed into responses, so the body must be
 * JSON that every decoder reads the same way.
 *
 * jcheck_body() walks every byte once (eight at a time through plain string
 * text) and refuses those cases; the review decoder runs it instead of a
 * separate UTF-8 pass, then hands yajl only the bytes up to the end of the
 * top-level value.  An escaped NUL (\u0000) is allowed: strings carry their
 * length everywhere (docs/DECISIONS.md, "Embedded NUL").
 */
#ifndef OTA_JCHECK_H
#define OTA_JCHECK_H

#include <stddef.h>

typedef struct jcheck_result {
    size_t end;      /* the bytes to parse: through the end of the top-level value
                      * (a container's closing bracket, a string's closing quote,
                      * a number's or literal's last character), or the whole body
                      * when it does not end */
    size_t trailing; /* the first byte after `end` that is not whitespace, or the body's length */
} jcheck_result;

/*
 * Checks s[0..len).  Returns 0 with *r filled (the caller parses s[0..r->end)
 * and refuses the body when r->trailing < len, once the parser had nothing
 * to say about what comes first), or -1 with a one-line message in err (at
 * most errlen bytes, NUL-terminated) naming the problem and its byte offset:
 * invalid UTF-8, a control character outside a string, or a \u escape that
 * is half of a UTF-16 surrogate pair.  Grammar errors are left to the
 * parser, which names them better.
 */
int jcheck_body(const char *s, size_t len, jcheck_result *r, char *err, size_t errlen);

#endif

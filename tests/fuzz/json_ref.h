/*
 * json_ref.h - a reference JSON checker for the fuzz harnesses, written for
 * nothing else: a plain recursive descent over RFC 8259's grammar, with RFC
 * 3629 UTF-8 and paired surrogate escapes, and an object or array at the
 * top.  It shares no code with the webhook (webhook/jcheck.c, yajl), so it
 * can judge both.  Recursive: callers bound the input (4 KB nests 4096
 * deep at most).
 */
#ifndef OTA_FUZZ_JSON_REF_H
#define OTA_FUZZ_JSON_REF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct ref {
    const unsigned char *s;
    size_t n, i;
} ref;

static int peek(const ref *r)
{
    return r->i < r->n ? r->s[r->i] : -1;
}

static void ws(ref *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' ||
                           r->s[r->i] == '\r'))
        r->i++;
}

static int lit(ref *r, const char *w)
{
    size_t k = strlen(w);
    if (r->n - r->i < k || memcmp(r->s + r->i, w, k) != 0)
        return 0;
    r->i += k;
    return 1;
}

static int digits(ref *r)
{
    size_t start = r->i;
    while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9')
        r->i++;
    return r->i > start;
}

static int number(ref *r)
{
    if (peek(r) == '-')
        r->i++;
    if (peek(r) == '0')
        r->i++;
    else if (!(peek(r) >= '1' && peek(r) <= '9') || !digits(r))
        return 0;
    if (peek(r) == '.') {
        r->i++;
        if (!digits(r))
            return 0;
    }
    if (peek(r) == 'e' || peek(r) == 'E') {
        r->i++;
        if (peek(r) == '+' || peek(r) == '-')
            r->i++;
        if (!digits(r))
            return 0;
    }
    return 1;
}

static long hex4(ref *r)
{
    if (r->n - r->i < 4)
        return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int c = r->s[r->i + (size_t)k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    r->i += 4;
    return v;
}

/* One UTF-8 character from r->i, decoded, checked against RFC 3629's ranges. */
static int utf8_char(ref *r)
{
    unsigned c = r->s[r->i];
    size_t len = c >= 0xf8 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (len == 0 || r->n - r->i < len)
        return 0;
    unsigned long cp = c & (0x7f >> len);
    for (size_t k = 1; k < len; k++) {
        unsigned b = r->s[r->i + k];
        if ((b & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (b & 0x3f);
    }
    static const unsigned long min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    r->i += len;
    return 1;
}

static int string(ref *r)
{
    r->i++; /* the opening quote */
    for (;;) {
        int c = peek(r);
        if (c < 0 || c < 0x20)
            return 0;
        if (c == '"') {
            r->i++;
            return 1;
        }
        if (c >= 0x80) {
            if (!utf8_char(r))
                return 0;
            continue;
        }
        r->i++;
        if (c != '\\')
            continue;
        c = peek(r);
        if (c < 0)
            return 0;
        r->i++;
        if (strchr("\"\\/bfnrt", c) != NULL && c != 0)
            continue;
        if (c != 'u')
            return 0;
        long u = hex4(r);
        if (u < 0 || (u >= 0xdc00 && u <= 0xdfff))
            return 0;
        if (u >= 0xd800 && u <= 0xdbff) {
            if (!lit(r, "\\u"))
                return 0;
            long low = hex4(r);
            if (low < 0xdc00 || low > 0xdfff)
                return 0;
        }
    }
}

static int value(ref *r);

static int members(ref *r, int close, int keyed)
{
    r->i++; /* the opening bracket */
    ws(r);
    if (peek(r) == close) {
        r->i++;
        return 1;
    }
    for (;;) {
        if (keyed) {
            if (peek(r) != '"' || !string(r))
                return 0;
            ws(r);
            if (peek(r) != ':')
                return 0;
            r->i++;
            ws(r);
        }
        if (!value(r))
            return 0;
        ws(r);
        if (peek(r) == close) {
            r->i++;
            return 1;
        }
        if (peek(r) != ',')
            return 0;
        r->i++;
        ws(r);
    }
}

static int value(ref *r)
{
    switch (peek(r)) {
    case '{':
        return members(r, '}', 1);
    case '[':
        return members(r, ']', 0);
    case '"':
        return string(r);
    case 't':
        return lit(r, "true");
    case 'f':
        return lit(r, "false");
    case 'n':
        return lit(r, "null");
    default:
        return number(r);
    }
}

/* s[0..n) is one JSON object or array by RFC 8259, RFC 3629 and paired
 * surrogates. */
static int json_ref_accepts(const uint8_t *s, size_t n)
{
    ref r = {s, n, 0};
    ws(&r);
    if ((peek(&r) != '{' && peek(&r) != '[') || !value(&r))
        return 0;
    ws(&r);
    return r.i == n;
}

#endif

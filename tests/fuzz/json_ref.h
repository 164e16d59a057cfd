/*
 * json_ref.h - a reference JSON checker for the fuzz harnesses, written for
 * nothing else: a plain recursive descent over RFC 8259's grammar, with RFC
 * 3629 UTF-8 and paired surrogate escapes, and an object or array at the
 * top; it also says whether an object has a key twice.  It shares no code with the webhook (webhook/jcheck.c, yajl), so it
 * can judge both.  Recursive: callers bound the input (4 KB nests 4096
 * deep at most).
 */
#ifndef OTA_FUZZ_JSON_REF_H
#define OTA_FUZZ_JSON_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref {
    const unsigned char *s;
    size_t n, i;
    int repeated; /* an object had a key twice (decoded), see json_ref_keys_unique */
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

/* The string whose opening quote is at s[at] (string() passed it),
 * decoded into out (at least as long as the raw text): its length. */
static size_t decode_key(const unsigned char *s, size_t at, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = at + 1; s[i] != '"';) {
        if (s[i] != '\\') {
            out[o++] = s[i++];
            continue;
        }
        unsigned char c = s[i + 1];
        i += 2;
        if (c != 'u') {
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            out[o++] = (unsigned char)to[strchr(from, c) - from];
            continue;
        }
        ref h = {s, i + 4, i, 0};
        unsigned long cp = (unsigned long)hex4(&h);
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            h.i = i + 2;
            h.n = i + 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)hex4(&h) - 0xdc00);
            i += 6;
        }
        if (cp < 0x80) {
            out[o++] = (unsigned char)cp;
        } else if (cp < 0x800) {
            out[o++] = (unsigned char)(0xc0 | cp >> 6);
            out[o++] = (unsigned char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out[o++] = (unsigned char)(0xe0 | cp >> 12);
            out[o++] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
            out[o++] = (unsigned char)(0x80 | (cp & 0x3f));
        } else {
            out[o++] = (unsigned char)(0xf0 | cp >> 18);
            out[o++] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
            out[o++] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
            out[o++] = (unsigned char)(0x80 | (cp & 0x3f));
        }
    }
    return o;
}

/* The key at s[at] equals one of the earlier keys at s[keys[0..n)]:
 * naively, each decoded again (the inputs are small). */
static int key_seen(const ref *r, const size_t *keys, size_t n, size_t at)
{
    unsigned char *a = malloc(r->n), *b = malloc(r->n);
    if (a == NULL || b == NULL)
        abort();
    size_t la = decode_key(r->s, at, a);
    int seen = 0;
    for (size_t k = 0; k < n && !seen; k++) {
        size_t lb = decode_key(r->s, keys[k], b);
        seen = la == lb && memcmp(a, b, la) == 0;
    }
    free(a);
    free(b);
    return seen;
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
    size_t *keys = NULL, n_keys = 0; /* where this object's keys start */
    int ok = 0;
    for (;;) {
        if (keyed) {
            size_t at = r->i;
            if (peek(r) != '"' || !string(r))
                break;
            if (!r->repeated && key_seen(r, keys, n_keys, at))
                r->repeated = 1;
            size_t *grown = realloc(keys, (n_keys + 1) * sizeof(*keys));
            if (grown == NULL)
                abort();
            keys = grown;
            keys[n_keys++] = at;
            ws(r);
            if (peek(r) != ':')
                break;
            r->i++;
            ws(r);
        }
        if (!value(r))
            break;
        ws(r);
        if (peek(r) == close) {
            r->i++;
            ok = 1;
            break;
        }
        if (peek(r) != ',')
            break;
        r->i++;
        ws(r);
    }
    free(keys);
    return ok;
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
 * surrogates.  *repeated (when not NULL) says whether an object had a key
 * twice, compared decoded, in what was read before the first flaw. */
static int json_ref_parse(const uint8_t *s, size_t n, int *repeated)
{
    ref r = {s, n, 0, 0};
    ws(&r);
    int ok = (peek(&r) == '{' || peek(&r) == '[') && value(&r);
    ws(&r);
    if (repeated != NULL)
        *repeated = r.repeated;
    return ok && r.i == n;
}

static __attribute__((unused)) int json_ref_accepts(const uint8_t *s, size_t n)
{
    return json_ref_parse(s, n, NULL);
}

/* An object had a key twice before the first flaw, if any (issue 19). */
static __attribute__((unused)) int json_ref_key_repeats(const uint8_t *s, size_t n)
{
    int repeated = 0;
    json_ref_parse(s, n, &repeated);
    return repeated;
}

#endif

/*
 * jscan.c - see jscan.h.
 *
 * One loop over the text with an explicit stack of open containers.  Each
 * turn reads a value (an opening bracket counts as one and goes on with its
 * first member), then closes what ends after it and reads the comma and key
 * that lead to the next.  While a value the consumer skips is open, `quiet`
 * holds the depth it began at, and no callback is made until the loop is
 * back at that depth.
 */
#include "jscan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "jcheck.h"
#include "jkeys.h"

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

typedef struct scanner {
    const unsigned char *base, *end;
    jscan_sink *k;
    const yajl_callbacks *cb;
    unsigned char *buf; /* unescaped strings, grown as needed */
    size_t cap;
    int rc;             /* the answer when the loop stops early */
    jkeys *keys;        /* of each open object, skipped ones too */
} scanner;

static const yajl_callbacks no_callbacks;

static const unsigned char *skip_space(const unsigned char *s, const unsigned char *end)
{
    while (s < end && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
        s++;
    return s;
}

static unsigned char closer(unsigned char open)
{
    return open == '{' ? '}' : ']';
}

#if defined(__SSE2__)
/* Of the sixteen bytes v, those string_end() stops at: a quote, a
 * backslash, a control character or a byte from 0x80 (one signed compare
 * flags both of the last), one bit each, the first byte lowest. */
static inline unsigned stops16(__m128i v)
{
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                          _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                             _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
    return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* A string, s just past its opening quote: past its closing quote, or NULL
 * when it is not RFC 8259 + RFC 3629 (a raw control character, a bad
 * escape, a lone surrogate escape, bad UTF-8, no closing quote).  *escaped
 * is set when it holds an escape.  string_end() below is the entry. */
static const unsigned char *string_end_loop(const unsigned char *s, const unsigned char *end,
                                            int *escaped)
{
    for (;;) {
#if defined(__SSE2__)
        /* sixteen bytes at a time to the first quote, backslash, control
         * character or byte from 0x80: most keys and values of a
         * Kubernetes object in one step */
        while (end - s >= 16) {
            unsigned bits = stops16(_mm_loadu_si128((const __m128i *)(const void *)s));
            if (bits != 0) {
                s += __builtin_ctz(bits);
                goto look;
            }
            s += 16;
        }
#endif
        /* eight bytes at a time to the same (the lowest flagged byte is
         * exact: a borrow only carries upwards) */
        while (end - s >= 8) {
            uint64_t w;
            memcpy(&w, s, 8);
            uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
            uint64_t m = ((w - ONES * 0x20) | w | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS;
            if (m != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                s += __builtin_ctzll(m) >> 3;
#endif
                break;
            }
            s += 8;
        }
#if defined(__SSE2__)
    look:
#endif
        if (s >= end)
            return NULL;
        unsigned char c = *s;
        if (c == '"')
            return s + 1;
        if (c < 0x20)
            return NULL;
        if (c >= 0x80) {
            size_t n = jcheck_utf8_seq(s, (size_t)(end - s));
            if (n == 0)
                return NULL;
            s += n;
            continue;
        }
        if (c != '\\') {
            s++;
            continue;
        }
        *escaped = 1;
        if (end - s < 2)
            return NULL;
        c = s[1];
        if (c != 'u') {
            if (memchr("\"\\/bfnrt", c, 8) == NULL)
                return NULL;
            s += 2;
            continue;
        }
        long v = jcheck_hex4(s + 2, (size_t)(end - s - 2));
        if (v < 0 || (v >= 0xdc00 && v <= 0xdfff))
            return NULL;
        s += 6;
        if (v >= 0xd800 && v <= 0xdbff) { /* a high surrogate wants its low half */
            if (end - s < 2 || s[0] != '\\' || s[1] != 'u')
                return NULL;
            long lo = jcheck_hex4(s + 2, (size_t)(end - s - 2));
            if (lo < 0xdc00 || lo > 0xdfff)
                return NULL;
            s += 6;
        }
    }
}

#if defined(__SSE2__)
/* The common string, found by one load without a call: under 16 plain
 * bytes (two thirds of a Kubernetes object's string values, most of its
 * keys), so that the first byte string_end_loop() would stop at is its
 * closing quote.  s is just past the opening quote; *v gets the 16 bytes
 * from s.  Its length, or -1 for any other string or fewer than 16 bytes
 * left. */
static inline int short_plain(const unsigned char *s, const unsigned char *end, __m128i *v)
{
    if (end - s < 16)
        return -1;
    *v = _mm_loadu_si128((const __m128i *)(const void *)s);
    unsigned bits = stops16(*v);
    if (bits == 0 || s[__builtin_ctz(bits)] != '"')
        return -1;
    return __builtin_ctz(bits);
}
#endif

/* string_end_loop(), a short plain string inline. */
static inline const unsigned char *string_end(const unsigned char *s, const unsigned char *end,
                                              int *escaped)
{
#if defined(__SSE2__)
    __m128i v;
    int n = short_plain(s, end, &v);
    if (n >= 0)
        return s + n + 1;
#endif
    return string_end_loop(s, end, escaped);
}

static size_t put_utf8(unsigned char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The string s[0..n), which string_end() passed, with its escapes decoded
 * (never longer: an escape is at least as long as what it stands for), in
 * sc->buf; NULL when out of memory.  An escaped NUL is a NUL byte, as yajl
 * decodes it. */
static const unsigned char *unescape(scanner *sc, const unsigned char *s, size_t n, size_t *out)
{
    if (n > sc->cap) {
        unsigned char *b = realloc(sc->buf, n);
        if (b == NULL)
            return NULL;
        sc->buf = b;
        sc->cap = n;
    }
    unsigned char *o = sc->buf;
    const unsigned char *e = s + n;
    while (s < e) {
        const unsigned char *bs = memchr(s, '\\', (size_t)(e - s));
        size_t plain = bs != NULL ? (size_t)(bs - s) : (size_t)(e - s);
        memcpy(o, s, plain);
        o += plain;
        s += plain;
        if (bs == NULL)
            break;
        unsigned char c = s[1];
        if (c != 'u') {
            *o++ = c == 'b'   ? '\b'
                   : c == 'f' ? '\f'
                   : c == 'n' ? '\n'
                   : c == 'r' ? '\r'
                   : c == 't' ? '\t'
                              : c; /* " \ / */
            s += 2;
            continue;
        }
        unsigned long cp = (unsigned long)jcheck_hex4(s + 2, 4);
        s += 6;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned long)jcheck_hex4(s + 2, 4) - 0xdc00);
            s += 6;
        }
        o += put_utf8(o, cp);
    }
    *out = (size_t)(o - sc->buf);
    return sc->buf;
}

/* A number at s: past it, or NULL (RFC 8259 section 6). */
static const unsigned char *number_end(const unsigned char *s, const unsigned char *end)
{
    if (s < end && *s == '-')
        s++;
    if (s >= end)
        return NULL;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (s < end && *s >= '0' && *s <= '9')
            s++;
    else
        return NULL;
    if (s < end && *s == '.') {
        const unsigned char *d = ++s;
        while (s < end && *s >= '0' && *s <= '9')
            s++;
        if (s == d)
            return NULL;
    }
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < end && (*s == '+' || *s == '-'))
            s++;
        const unsigned char *d = s;
        while (s < end && *s >= '0' && *s <= '9')
            s++;
        if (s == d)
            return NULL;
    }
    return s;
}

/* Calls f, when there is one, with the bytes up to at consumed: 0 when it
 * stopped the scan. */
static int emit(scanner *sc, const unsigned char *at, int (*f)(void *))
{
    if (f == NULL)
        return 1;
    sc->k->consumed = (size_t)(at - sc->base);
    if (f(sc->k->ctx))
        return 1;
    sc->rc = JSCAN_STOPPED;
    return 0;
}

/* The string at s (its opening quote), handed to f when there is one: past
 * it, or NULL. */
static const unsigned char *string_token(scanner *sc, const unsigned char *s,
                                         int (*f)(void *, const unsigned char *, size_t))
{
    int escaped = 0;
    const unsigned char *e = string_end(s + 1, sc->end, &escaped);
    if (e == NULL || f == NULL)
        return e;
    const unsigned char *str = s + 1;
    size_t n = (size_t)(e - 1 - str);
    if (escaped && (str = unescape(sc, str, n, &n)) == NULL)
        return NULL;
    sc->k->consumed = (size_t)(e - sc->base);
    if (f(sc->k->ctx, str, n))
        return e;
    sc->rc = JSCAN_STOPPED;
    return NULL;
}

/* A member's key and colon, s at the key: the start of its value, or NULL.
 * A key the object already has is refused, read or skipped (decoded, so
 * `"a"` and `"\u0061"` are one key): Kubernetes' decoder keeps the last of
 * two, and a reader that kept the first would read another object. */
static const unsigned char *member_key(scanner *sc, const unsigned char *s,
                                       const yajl_callbacks *cb)
{
    if (s >= sc->end || *s != '"')
        return NULL;
    const unsigned char *key = s + 1, *e = NULL;
    size_t n = 0;
    int known = 0;
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Most keys of a Kubernetes object are short and plain: the 16 bytes
     * that short_plain() loads to find the closing quote also give the
     * key's tag (no second read for jkeys_tag16()), and a key in the text
     * under jkeys' fast_end is kept by view.  Every other key takes the
     * general way below. */
    __m128i v;
    int len;
    if ((uintptr_t)key - (uintptr_t)sc->keys->text < sc->keys->fast_end &&
        (len = short_plain(key, sc->end, &v)) >= 0) {
        n = (size_t)len;
        e = key + n + 1;
        if (jkeys_add_view(sc->keys, key, n, jkeys_tag_m128(v, (unsigned)n)) != 0)
            return NULL;
        known = 1;
    }
#endif
    if (!known) { /* short_plain() has already looked: straight to the loop */
        int escaped = 0;
        if ((e = string_end_loop(key, sc->end, &escaped)) == NULL)
            return NULL;
        n = (size_t)(e - 1 - key);
        if (escaped && (key = unescape(sc, key, n, &n)) == NULL)
            return NULL;
        if (jkeys_add(sc->keys, key, n) != 0)
            return NULL;
    }
    if (cb->yajl_map_key != NULL) {
        sc->k->consumed = (size_t)(e - sc->base);
        if (!cb->yajl_map_key(sc->k->ctx, key, n)) {
            sc->rc = JSCAN_STOPPED;
            return NULL;
        }
    }
    s = e;
    if (s < sc->end && *s != ':') /* compact JSON, as the apiserver sends, has no space */
        s = skip_space(s, sc->end);
    if (s >= sc->end || *s != ':')
        return NULL;
    return skip_space(s + 1, sc->end);
}

_Static_assert(JSCAN_MAX_DEPTH <= JKEYS_MAX_DEPTH, "jkeys must hold every open object");

int jscan_parse(const char *text, size_t len, int max_depth, jscan_sink *k)
{
    scanner sc = {.base = (const unsigned char *)text,
                  .end = (const unsigned char *)text + len,
                  .k = k,
                  .cb = k->cb != NULL ? k->cb : &no_callbacks,
                  .rc = JSCAN_REFUSED};
    jkeys keys; /* not in sc's initialiser: that would zero its 4 KB */
    jkeys_init(&keys, text, len);
    sc.keys = &keys;
    const unsigned char *s = skip_space(sc.base, sc.end), *end = sc.end;
    unsigned char open[JSCAN_MAX_DEPTH]; /* '{' or '[' of each open container */
    int depth = 0;
    int quiet = -1; /* the depth a skipped value began at, while it is open */
    if (max_depth > JSCAN_MAX_DEPTH)
        max_depth = JSCAN_MAX_DEPTH;
    for (;;) {
        /* a value */
        if (s >= end)
            goto done;
        if (quiet < 0 && k->skips != NULL && k->skips(k->ctx))
            quiet = depth;
        const yajl_callbacks *cb = quiet < 0 ? sc.cb : &no_callbacks;
        unsigned char c = *s;
        switch (c) {
        case '{':
        case '[':
            if (depth >= max_depth)
                goto done;
            open[depth++] = c;
            if (c == '{')
                jkeys_open(&keys); /* cannot fail: depth is bounded below it */
            s++;
            if (!emit(&sc, s, c == '{' ? cb->yajl_start_map : cb->yajl_start_array))
                goto done;
            s = skip_space(s, end);
            if (s < end && *s == closer(c))
                break; /* empty: closed below */
            if (c == '{')
                goto key; /* the first member's */
            continue;     /* the first element */
        case '"':
            s = string_token(&sc, s, cb->yajl_string);
            break;
        case 't':
        case 'f': {
            size_t n = c == 't' ? 4 : 5;
            if ((size_t)(end - s) < n || memcmp(s, c == 't' ? "true" : "false", n) != 0)
                goto done;
            s += n;
            k->consumed = (size_t)(s - sc.base);
            if (cb->yajl_boolean != NULL && !cb->yajl_boolean(k->ctx, c == 't')) {
                sc.rc = JSCAN_STOPPED;
                goto done;
            }
            break;
        }
        case 'n':
            if (end - s < 4 || memcmp(s, "null", 4) != 0)
                goto done;
            s += 4;
            if (!emit(&sc, s, cb->yajl_null))
                goto done;
            break;
        default: {
            const unsigned char *num = s;
            s = number_end(s, end);
            if (s == NULL)
                goto done;
            k->consumed = (size_t)(s - sc.base);
            if (cb->yajl_number != NULL &&
                !cb->yajl_number(k->ctx, (const char *)num, (size_t)(s - num))) {
                sc.rc = JSCAN_STOPPED;
                goto done;
            }
            break;
        }
        }
        if (s == NULL)
            goto done;
        /* after a value: the containers that close, then a comma and the
         * next member */
        for (;;) {
            s = skip_space(s, end);
            if (quiet == depth)
                quiet = -1; /* the skipped value is over */
            if (depth == 0) {
                if (s == end)
                    sc.rc = JSCAN_OK;
                goto done;
            }
            if (s >= end)
                goto done;
            unsigned char o = open[depth - 1];
            if (*s == closer(o)) {
                depth--;
                s++;
                if (o == '{')
                    jkeys_close(&keys);
                if (quiet < 0 &&
                    !emit(&sc, s, o == '{' ? sc.cb->yajl_end_map : sc.cb->yajl_end_array))
                    goto done;
                continue;
            }
            if (*s != ',')
                goto done;
            s = skip_space(s + 1, end);
            if (o == '{')
                goto key;
            break; /* the next element */
        }
        continue;
    key:
        /* A member's key, the first after '{' or the next after a comma:
         * one call site, so that member_key() is inlined into the loop (a
         * call per key cost more than the key's own check).  The callbacks
         * are the value's: none inside a skipped one. */
        if ((s = member_key(&sc, s, quiet < 0 ? sc.cb : &no_callbacks)) == NULL)
            goto done;
    }
done:
    free(sc.buf);
    jkeys_free(&keys);
    return sc.rc;
}

/*
 * jcheck.c - see jcheck.h.
 *
 * One loop over every byte, no state: see jcheck.h for why none is needed.
 * Where the parser is sure to refuse what comes next (a bad \u escape) the
 * pass stops and lets the parser say so: its message names the grammar
 * error, and nothing past that point can matter.
 */
#include "jcheck.h"

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "errmsg.h"

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* Some byte of w is below n (n <= 0x80), or has its high bit set. */
static uint64_t below_or_high(uint64_t w, uint64_t n)
{
    return ((w - ONES * n) | w) & HIGHS;
}

/* Some byte of w is c. */
static uint64_t has_byte(uint64_t w, unsigned char c)
{
    uint64_t x = w ^ (ONES * c);
    return (x - ONES) & ~x & HIGHS;
}

size_t jcheck_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t len;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong below U+0800 */
        else if (c == 0xed)
            hi = 0x9f; /* U+D800..U+DFFF */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong below U+10000 */
        else if (c == 0xf4)
            hi = 0x8f; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (len > n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return len;
}

long jcheck_hex4(const unsigned char *s, size_t n)
{
    if (n < 4)
        return -1;
    long v = 0;
    for (size_t k = 0; k < 4; k++) {
        unsigned char c = s[k];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

size_t jcheck_skip_space(const char *s, size_t len, size_t from)
{
    while (from < len && (s[from] == ' ' || s[from] == '\n' || s[from] == '\r' || s[from] == '\t'))
        from++;
    return from;
}

int jcheck_body(const char *body, size_t len, char *err, size_t errlen)
{
    const unsigned char *s = (const unsigned char *)body;
    size_t i = 0;
    if (errlen > 0)
        err[0] = '\0';
    while (i < len) {
        /* Eight bytes at a time, straight to the first that needs a look
         * (a control character, a backslash, a byte from 0x80): in each test
         * the lowest flagged byte is exact (a borrow only carries upwards),
         * and on a little-endian machine that is the first in memory. */
#if defined(__SSE2__)
        /* Sixteen at a time where SSE2 is (every x86-64): one signed
         * compare flags both a control character and a byte from 0x80
         * (negative as a signed char); half the steps of the loop below, the
         * larger share of a compact body (bench/webhook_decide.c). */
        if (i + 64 <= len) {
            /* a clean 64-byte stretch (most of a compact body) in one test */
            __m128i any = _mm_setzero_si128();
            for (size_t k = 0; k < 64; k += 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i + k));
                any = _mm_or_si128(any, _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
            }
            if (_mm_movemask_epi8(any) == 0) {
                i += 64;
                continue;
            }
        }
        if (i + 16 <= len) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            __m128i flagged = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                           _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
            unsigned m = (unsigned)_mm_movemask_epi8(flagged);
            if (m == 0) {
                i += 16;
                continue;
            }
            i += (size_t)__builtin_ctz(m);
        } else
#endif
        if (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t m = below_or_high(w, 0x20) | has_byte(w, '\\');
            if (m == 0) {
                i += 8;
                continue;
            }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            i += (size_t)__builtin_ctzll(m) >> 3;
#endif
        }
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t n = jcheck_utf8_seq(s + i, len - i);
            if (n == 0)
                return errmsg_set(
                    err, errlen,
                    "the body is not valid UTF-8 (RFC 3629): bad byte sequence at byte %zu", i);
            i += n;
        } else if (c == '\\') {
            /* Only a string holds a backslash (anywhere else the parser
             * refuses it), and it starts an escape: two bytes, or six for
             * \uXXXX, which must not be half of a surrogate pair. */
            if (i + 1 >= len || s[i + 1] != 'u') {
                i += i + 1 < len && s[i + 1] < 0x80 ? 2 : 1;
                continue;
            }
            long u = jcheck_hex4(s + i + 2, len - i - 2);
            if (u < 0)
                return 0; /* a bad escape: the parser's to name */
            if (u >= 0xdc00 && u <= 0xdfff)
                return errmsg_set(
                    err, errlen,
                    "invalid JSON (RFC 8259): \\u%.4s at byte %zu is a lone UTF-16 low "
                    "surrogate",
                    body + i + 2, i);
            if (u >= 0xd800 && u <= 0xdbff) {
                long low = i + 7 < len && s[i + 6] == '\\' && s[i + 7] == 'u'
                               ? jcheck_hex4(s + i + 8, len - i - 8)
                               : -1;
                if (low < 0xdc00 || low > 0xdfff)
                    return errmsg_set(
                        err, errlen,
                        "invalid JSON (RFC 8259): \\u%.4s at byte %zu is a lone UTF-16 "
                        "high surrogate (it must be followed by a \\udc00-\\udfff "
                        "escape)",
                        body + i + 2, i);
                i += 6; /* the pair */
            }
            i += 6;
        } else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            return errmsg_set(
                err, errlen,
                "invalid JSON (RFC 8259): control character 0x%02x at byte %zu; only "
                "space, tab, line feed and carriage return separate tokens, and a string "
                "escapes them",
                c, i);
        } else {
            i++;
        }
    }
    return 0;
}

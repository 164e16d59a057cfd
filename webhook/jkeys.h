/*
 * jkeys.h - the keys of each open JSON object, so that a key that repeats
 * in one object is found (issue 19: the webhook read the first of two
 * `groups` and merged, Kubernetes' decoder keeps the last, so the two read
 * different objects).
 *
 * Both decode paths of webhook/review.c ask it about every key of the body,
 * read or skipped: jscan.c from its loop, the reference path from yajl's
 * callbacks.  Keys are compared decoded (`"a"` and `"\u0061"` are one key).
 *
 * Cost and bounds: the keys of every object still open are kept (a view
 * into the text, or a copy of a key that had escapes), and dropped when
 * the object closes; an object of up to JKEYS_LINEAR keys is searched
 * linearly (a 64-bit tag of each key first, and not at all when the key's
 * bit in the object's 64-bit set of tags is clear: most keys are new), a
 * larger one through a hash index keyed with a per-process random seed
 * (SipHash-1-3), so a hostile body cannot make its keys collide.  Work is
 * linear in the number of keys, memory at most 16 bytes per open key plus
 * 8 per indexed one, freed by jkeys_free(); nesting is bounded by
 * JKEYS_MAX_DEPTH objects, as the decoders bound it anyway.
 */
#ifndef OTA_JKEYS_H
#define OTA_JKEYS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define JKEYS_MAX_DEPTH 256
#define JKEYS_LINEAR 16 /* keys an object holds before it gets an index */
#define JKEYS_INLINE 64 /* keys held without an allocation */
#define JKEYS_COPIED UINT32_C(0x80000000)

typedef struct jkeys_entry {
    /* In a linear object, the key's first and last eight bytes and length
     * folded together (jkeys_tag: no seed, only a filter before memcmp);
     * in an indexed one, its SipHash. */
    uint64_t tag;
    uint32_t off; /* in the text, or in the copies when copied */
    uint32_t len; /* JKEYS_COPIED: a copy */
} jkeys_entry;

typedef struct jkeys {
    const unsigned char *text; /* a key within text[0..text_len) is kept by view */
    size_t text_len;
    jkeys_entry *keys; /* of every open object, the innermost's last */
    size_t n, cap;
    uint32_t *slots; /* index of the indexed objects' keys: entry + 1, or 0 */
    size_t nslots, indexed;
    unsigned char *copies; /* keys that lie outside the text */
    size_t ncopies, capcopies;
    int depth;
    /* The inline path of jkeys_add(): a key at an offset under fast_end (16
     * bytes readable from its start, for jkeys_tag16()) while n is under
     * limit (the innermost object linear, under JKEYS_LINEAR keys, and room
     * in keys); begin is the innermost object's first entry (the copy of
     * level[depth - 1].begin the inline search starts from). */
    size_t fast_end, limit, begin;
    /* The innermost object's keys while it is linear, one bit each
     * (jkeys_bit()): a key whose bit is not set is new without a search.
     * Set on every path that keeps a key of a linear object. */
    uint64_t seen;
    struct {
        uint32_t begin, copies; /* first entry and copy byte of the object */
        int indexed;
        /* The enclosing object's begin, limit and seen, back as they were
         * when this one closes (that object gets no key meanwhile; its
         * limit can only be low if keys grew: a key then takes the slow
         * path, which sets limit anew). */
        uint32_t outer_begin;
        size_t outer_limit;
        uint64_t outer_seen;
    } level[JKEYS_MAX_DEPTH];
    jkeys_entry inline_keys[JKEYS_INLINE];
} jkeys;

/* Ready for a body; keys inside text[0..len) are kept without a copy. */
void jkeys_init(jkeys *k, const char *text, size_t len);

/* Frees what jkeys_add() allocated; k can be initialised again. */
void jkeys_free(jkeys *k);

/* Sets limit for the innermost open object. */
static inline void jkeys_set_limit(jkeys *k)
{
    size_t begin = k->depth > 0 ? k->level[k->depth - 1].begin : 0;
    k->begin = begin;
    k->limit = k->depth == 0 || k->level[k->depth - 1].indexed ? 0
               : begin + JKEYS_LINEAR < k->cap                ? begin + JKEYS_LINEAR
                                                              : k->cap;
}

/* An object opens: 0, or -1 past JKEYS_MAX_DEPTH objects. */
static inline int jkeys_open(jkeys *k)
{
    if (k->depth >= JKEYS_MAX_DEPTH)
        return -1;
    k->level[k->depth].begin = (uint32_t)k->n;
    k->level[k->depth].copies = (uint32_t)k->ncopies;
    k->level[k->depth].indexed = 0;
    k->level[k->depth].outer_begin = (uint32_t)k->begin;
    k->level[k->depth].outer_limit = k->limit;
    k->level[k->depth].outer_seen = k->seen;
    k->seen = 0;
    k->depth++;
    k->begin = k->n;
    k->limit = k->n + JKEYS_LINEAR < k->cap ? k->n + JKEYS_LINEAR : k->cap;
    return 0;
}

/* The innermost object's level is left: its keys and copies forgotten, the
 * enclosing object's inline state back.  Not for callers (jkeys_close()). */
static inline void jkeys_pop(jkeys *k)
{
    k->depth--;
    k->n = k->level[k->depth].begin;
    k->ncopies = k->level[k->depth].copies;
    k->begin = k->level[k->depth].outer_begin;
    k->limit = k->level[k->depth].outer_limit;
    k->seen = k->level[k->depth].outer_seen;
}

/* jkeys_add() and jkeys_close() for what the inline parts leave: copies,
 * growth, indexed objects.  Not for callers. */
int jkeys_add_slow(jkeys *k, const unsigned char *key, size_t len);
void jkeys_close_indexed(jkeys *k);

/* The key of entry e equals key[0..len). */
static inline int jkeys_same(const jkeys *k, const jkeys_entry *e, const unsigned char *key,
                             size_t len)
{
    const unsigned char *at = (e->len & JKEYS_COPIED) ? k->copies + e->off : k->text + e->off;
    return (e->len & ~JKEYS_COPIED) == len && memcmp(at, key, len) == 0;
}

/*
 * The filter tag of a key in a linear object: a pure function of its bytes
 * and length, compared before memcmp (a filter only: two keys with one tag
 * are still told apart by memcmp, so a body whose keys share tags costs
 * at most JKEYS_LINEAR compares per key).  Its bytes 0..7 and 8..15, zero
 * past the key's end, and for a key over 16 bytes its last eight, folded
 * with the length.  The same value whichever way it is computed:
 * jkeys_tag16() when 16 bytes can be read from key, jkeys_tag_m128() from
 * the 16 bytes jscan.c has already loaded, jkeys_tag() when only the key
 * can be read (tests/unit/test_jkeys.c holds the three to one answer).
 */
static inline uint64_t jkeys_tag_mix(uint64_t lo, uint64_t hi, size_t len)
{
    /* the product by an odd constant loses nothing, and its top bits,
     * which jkeys_bit() takes, depend on every bit below (a short key's
     * bytes are all in the low half of lo) */
    return ((lo ^ (hi << 29 | hi >> 35)) + len) * UINT64_C(0x9e3779b97f4a7c15);
}

/* A tag's bit in jkeys.seen: its top six bits. */
static inline uint64_t jkeys_bit(uint64_t tag)
{
    return UINT64_C(1) << (tag >> 58);
}

/* The tag of key[0..len), of which nothing past its end is read. */
uint64_t jkeys_tag(const unsigned char *key, size_t len);

/* The tag of key[0..len), 16 bytes from key readable whatever len is. */
static inline uint64_t jkeys_tag16(const unsigned char *key, size_t len)
{
    uint64_t lo, hi, last = 0;
    memcpy(&lo, key, 8);
    memcpy(&hi, key + 8, 8);
    /* little-endian: the first bytes of a word are its low bits */
    if (len < 8) {
        lo &= (UINT64_C(1) << (8 * len)) - 1;
        hi = 0;
    } else if (len < 16) {
        hi &= (UINT64_C(1) << (8 * (len - 8))) - 1;
    } else if (len > 16) {
        memcpy(&last, key + len - 8, 8);
    }
    return jkeys_tag_mix(lo, hi ^ last, len);
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* The tag of a key of len < 16 bytes whose first 16 bytes (and what
 * follows it) are v. */
static inline uint64_t jkeys_tag_m128(__m128i v, unsigned len)
{
    const __m128i at = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    v = _mm_and_si128(v, _mm_cmplt_epi8(at, _mm_set1_epi8((char)len)));
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(v);
    uint64_t hi = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
    return jkeys_tag_mix(lo, hi, len);
}
#endif

/* A key kept by view, its tag known: the caller has checked that key lies
 * in the text at an offset under fast_end.  The inline case: an object
 * under JKEYS_LINEAR keys, room in keys. */
static inline int jkeys_add_view(jkeys *k, const unsigned char *key, size_t len, uint64_t tag)
{
    size_t n = k->n;
    if (n < k->limit) {
        jkeys_entry *e = k->keys;
        uint64_t bit = jkeys_bit(tag);
        if (k->seen & bit) /* else no key of the object has this tag */
            for (size_t i = k->begin; i < n; i++)
                if (e[i].tag == tag && jkeys_same(k, &e[i], key, len))
                    return 1;
        k->seen |= bit;
        e[n] = (jkeys_entry){tag, (uint32_t)(key - k->text), (uint32_t)len};
        k->n = n + 1;
        return 0;
    }
    return jkeys_add_slow(k, key, len);
}

/* A key of the innermost open object: 0 when it is new, 1 when the object
 * already has it, -1 when out of memory (or the text is over 4 GiB).  The
 * common case inline: a key in the text, an object under JKEYS_LINEAR. */
static inline int jkeys_add(jkeys *k, const unsigned char *key, size_t len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uintptr_t off = (uintptr_t)key - (uintptr_t)k->text;
    if (off < k->fast_end && len <= k->text_len - off)
        return jkeys_add_view(k, key, len, jkeys_tag16(key, len));
#endif
    return jkeys_add_slow(k, key, len);
}

/* The innermost open object closes: its keys are forgotten. */
static inline void jkeys_close(jkeys *k)
{
    if (k->depth == 0)
        return;
    if (k->level[k->depth - 1].indexed) {
        jkeys_close_indexed(k);
        return;
    }
    jkeys_pop(k);
}

#endif

/*
 * jkeys.c - see jkeys.h.
 *
 * The keys of all open objects lie in one array, outer objects first: an
 * outer object gets no key while an inner one is open, so the innermost
 * object's keys are always the array's tail, and closing it truncates the
 * array.  The hash index is one linear-probing table for every indexed
 * object.  Entries enter it in array order and leave it in reverse, so
 * clearing a leaving entry's slot restores the table exactly as it was
 * before that entry came (no tombstones); a growing table is rebuilt in
 * array order, which keeps that true.
 */
#include "jkeys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static uint64_t seed[2];
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_init(void)
{
    if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        /* no entropy source: still differs per process and start */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed[0] = (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&ts;
        seed[1] = (uint64_t)ts.tv_sec * UINT64_C(0x9e3779b97f4a7c15);
    }
}

static uint64_t rotl(uint64_t x, int b)
{
    return x << b | x >> (64 - b);
}

#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = rotl(v1, 13) ^ v0;                                                                    \
        v0 = rotl(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = rotl(v3, 16) ^ v2;                                                                    \
        v0 += v3;                                                                                  \
        v3 = rotl(v3, 21) ^ v0;                                                                    \
        v2 += v1;                                                                                  \
        v1 = rotl(v1, 17) ^ v2;                                                                    \
        v2 = rotl(v2, 32);                                                                         \
    } while (0)

/* SipHash-1-3 (one compression round, three finalisation rounds) of s[0..n)
 * under the process's seed. */
static uint64_t key_hash(const unsigned char *s, size_t n)
{
    uint64_t v0 = seed[0] ^ UINT64_C(0x736f6d6570736575), v1 = seed[1] ^ UINT64_C(0x646f72616e646f6d),
             v2 = seed[0] ^ UINT64_C(0x6c7967656e657261), v3 = seed[1] ^ UINT64_C(0x7465646279746573);
    uint64_t m;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        m = 0;
        for (int b = 7; b >= 0; b--)
            m = m << 8 | s[i + (size_t)b];
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    m = (uint64_t)(n & 0xff) << 56;
    for (size_t b = 0; i + b < n; b++)
        m |= (uint64_t)s[i + b] << (8 * b);
    v3 ^= m;
    SIPROUND;
    v0 ^= m;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t jkeys_tag(const unsigned char *key, size_t len)
{
    unsigned char b[16] = {0};
    if (len >= 16)
        return jkeys_tag16(key, len);
    memcpy(b, key, len);
    return jkeys_tag16(b, len);
}

void jkeys_init(jkeys *k, const char *text, size_t len)
{
    pthread_once(&seed_once, seed_init);
    k->text = (const unsigned char *)text;
    k->text_len = len;
    k->keys = k->inline_keys;
    k->n = 0;
    k->cap = JKEYS_INLINE;
    k->slots = NULL;
    k->nslots = k->indexed = 0;
    k->copies = NULL;
    k->ncopies = k->capcopies = 0;
    k->depth = 0;
    k->seen = 0;
    /* offsets and lengths of keys kept by view fit an entry */
    k->fast_end = len >= 16 && len - 16 < JKEYS_COPIED ? len - 16 : 0;
    k->limit = 0;
    k->begin = 0;
}

void jkeys_free(jkeys *k)
{
    if (k->keys != k->inline_keys)
        free(k->keys);
    free(k->slots);
    free(k->copies);
    jkeys_init(k, (const char *)k->text, k->text_len);
}

static const unsigned char *entry_key(const jkeys *k, const jkeys_entry *e)
{
    return (e->len & JKEYS_COPIED) ? k->copies + e->off : k->text + e->off;
}

/* Puts entry i (its tag the SipHash) into the table, which has room. */
static void slot_put(jkeys *k, size_t i)
{
    size_t mask = k->nslots - 1;
    size_t at = (size_t)k->keys[i].tag & mask;
    while (k->slots[at] != 0)
        at = (at + 1) & mask;
    k->slots[at] = (uint32_t)i + 1;
    k->indexed++;
}

/* Room in the table for `more` entries: 0, or -1 when out of memory. */
static int slots_reserve(jkeys *k, size_t more)
{
    if ((k->indexed + more) * 2 <= k->nslots)
        return 0;
    size_t n = k->nslots == 0 ? 64 : k->nslots;
    while (n < (k->indexed + more) * 2)
        n *= 2;
    uint32_t *s = calloc(n, sizeof(*s));
    if (s == NULL)
        return -1;
    free(k->slots);
    k->slots = s;
    k->nslots = n;
    k->indexed = 0;
    for (int l = 0; l < k->depth; l++) {
        if (!k->level[l].indexed)
            continue;
        size_t end = l + 1 < k->depth ? k->level[l + 1].begin : k->n;
        for (size_t i = k->level[l].begin; i < end; i++)
            slot_put(k, i);
    }
    return 0;
}

/* The innermost object passes JKEYS_LINEAR keys: its tags become SipHashes
 * and it is indexed.  0 or -1. */
static int index_level(jkeys *k)
{
    size_t begin = k->level[k->depth - 1].begin;
    for (size_t i = begin; i < k->n; i++) {
        const jkeys_entry *e = &k->keys[i];
        k->keys[i].tag = key_hash(entry_key(k, e), e->len & ~JKEYS_COPIED);
    }
    /* reserved before the level counts as indexed: a rebuild leaves it out */
    if (slots_reserve(k, k->n - begin) != 0)
        return -1;
    k->level[k->depth - 1].indexed = 1;
    for (size_t i = begin; i < k->n; i++)
        slot_put(k, i);
    return 0;
}

/* A new entry for key at the end of the array: 0 or -1. */
static int push_entry(jkeys *k, const unsigned char *key, size_t len, uint64_t tag)
{
    if (k->n == k->cap) {
        size_t cap = k->cap * 2;
        jkeys_entry *keys = k->keys == k->inline_keys ? malloc(cap * sizeof(*keys))
                                                       : realloc(k->keys, cap * sizeof(*keys));
        if (keys == NULL)
            return -1;
        if (k->keys == k->inline_keys)
            memcpy(keys, k->inline_keys, sizeof(k->inline_keys));
        k->keys = keys;
        k->cap = cap;
    }
    jkeys_entry e = {tag, 0, (uint32_t)len};
    uintptr_t off = (uintptr_t)key - (uintptr_t)k->text;
    if (k->text != NULL && off < k->text_len && len <= k->text_len - off) {
        e.off = (uint32_t)off;
    } else {
        if (k->ncopies + len > k->capcopies) {
            size_t cap = k->capcopies == 0 ? 256 : k->capcopies;
            while (cap < k->ncopies + len)
                cap *= 2;
            unsigned char *c = realloc(k->copies, cap);
            if (c == NULL)
                return -1;
            k->copies = c;
            k->capcopies = cap;
        }
        if (len > 0)
            memcpy(k->copies + k->ncopies, key, len);
        e.off = (uint32_t)k->ncopies;
        e.len |= JKEYS_COPIED;
        k->ncopies += len;
    }
    k->keys[k->n++] = e;
    return 0;
}

int jkeys_add_slow(jkeys *k, const unsigned char *key, size_t len)
{
    if (k->depth == 0 || len >= JKEYS_COPIED || k->text_len > UINT32_MAX ||
        k->ncopies + len > UINT32_MAX)
        return -1;
    size_t begin = k->level[k->depth - 1].begin;
    if (!k->level[k->depth - 1].indexed) {
        uint64_t tag = jkeys_tag(key, len);
        for (size_t i = begin; i < k->n; i++)
            if (k->keys[i].tag == tag && jkeys_same(k, &k->keys[i], key, len))
                return 1;
        if (push_entry(k, key, len, tag) != 0)
            return -1;
        k->seen |= jkeys_bit(tag); /* the inline path trusts it */
        if (k->n - begin > JKEYS_LINEAR && index_level(k) != 0)
            return -1;
        jkeys_set_limit(k);
        return 0;
    }
    uint64_t h = key_hash(key, len);
    size_t mask = k->nslots - 1;
    for (size_t at = (size_t)h & mask; k->slots[at] != 0; at = (at + 1) & mask) {
        size_t i = k->slots[at] - 1;
        if (i >= begin && k->keys[i].tag == h && jkeys_same(k, &k->keys[i], key, len))
            return 1;
    }
    if (slots_reserve(k, 1) != 0 || push_entry(k, key, len, h) != 0)
        return -1;
    slot_put(k, k->n - 1);
    return 0;
}

void jkeys_close_indexed(jkeys *k)
{
    size_t begin = k->level[k->depth - 1].begin;
    size_t mask = k->nslots - 1;
    for (size_t i = k->n; i-- > begin;) {
        size_t at = (size_t)k->keys[i].tag & mask;
        while (k->slots[at] != (uint32_t)i + 1)
            at = (at + 1) & mask;
        k->slots[at] = 0;
        k->indexed--;
    }
    jkeys_pop(k);
}

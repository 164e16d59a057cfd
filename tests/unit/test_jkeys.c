/*
 * test_jkeys.c - the keys of each open object (webhook/jkeys.c): a table of
 * open/add/close steps with the answer each must give (keys in the text and
 * copied ones, the same key in nested and sibling objects), and objects
 * past the linear bound held to a naive search: thousands of keys in nested
 * indexed objects, each object's keys forgotten when it closes.  The tag
 * of a key is one value however it is computed (jkeys_tag, jkeys_tag16,
 * jkeys_tag_m128), and keys that share a tag or a bit of the object's set
 * are still told apart, on the inline path and the slow one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "jkeys.h"
#include "row_check.h"

typedef enum op { OPEN, ADD, CLOSE, END } op;

typedef struct step {
    op op;
    const char *key; /* ADD: in TEXT when it starts with '@' (the rest), else a copy */
    int want;        /* ADD: 0 new, 1 repeated */
} step;

/* Keys are kept as views into the text; those in its first 16 bytes (16
 * readable from their start, as jkeys_tag16 wants) take the inline path,
 * the others the slow one; the rest are copies. */
static const char TEXT[] = "groups username groups a________";

static void test_steps_table(void **state)
{
    (void)state;
    static const step steps[] = {
        {OPEN, NULL, 0},
        {ADD, "@groups", 0},
        {ADD, "username", 0},
        {ADD, "groups", 1}, /* a copy equals the view */
        {ADD, "group", 0},
        {ADD, "", 0},
        {ADD, "", 1},
        {OPEN, NULL, 0}, /* a nested object has keys of its own */
        {ADD, "groups", 0},
        {ADD, "@a", 0},
        {ADD, "a", 1},
        {CLOSE, NULL, 0},
        {OPEN, NULL, 0}, /* a sibling starts empty */
        {ADD, "a", 0},
        {CLOSE, NULL, 0},
        {ADD, "@username", 1}, /* the outer object still knows its keys */
        {ADD, "a", 0},
        {OPEN, NULL, 0}, /* a copy first, then the same key inline: the slow
                            path set the key's bit for the inline one */
        {ADD, "username", 0},
        {ADD, "@username", 1},
        {ADD, "@groups", 0},
        {CLOSE, NULL, 0},
        {ADD, "@groups", 1},
        {CLOSE, NULL, 0},
        {END, NULL, 0},
    };
    jkeys k;
    jkeys_init(&k, TEXT, sizeof(TEXT) - 1);
    for (size_t i = 0; steps[i].op != END; i++) {
        const step *s = &steps[i];
        char name[64];
        snprintf(name, sizeof(name), "step %zu %s", i, s->key != NULL ? s->key : "");
        if (s->op == OPEN) {
            ROW_CHECK(name, jkeys_open(&k) == 0, "open");
        } else if (s->op == CLOSE) {
            jkeys_close(&k);
        } else {
            const char *src = s->key[0] == '@' ? s->key + 1 : s->key;
            char copy[64] = {0}; /* a key outside the text */
            snprintf(copy, sizeof(copy), "%s", src);
            const char *key = s->key[0] == '@' ? strstr(TEXT, src) : copy;
            int got = jkeys_add(&k, (const unsigned char *)key, strlen(src));
            ROW_CHECK(name, got == s->want, "got %d, want %d", got, s->want);
        }
    }
    assert_int_equal(k.depth, 0);
    assert_int_equal(k.n, 0);
    jkeys_free(&k);
}

/* Past JKEYS_LINEAR keys: n keys ("k<i>", copies) in each of three nested
 * objects, every one new, every one repeated after, then again in a
 * sibling after the inner ones closed. */
static void fill(jkeys *k, int n, int tag)
{
    char key[32] = {0};
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            int len = snprintf(key, sizeof(key), "k%d.%d", tag, i);
            int got = jkeys_add(k, (const unsigned char *)key, (size_t)len);
            if (got != pass)
                fail_msg("%s (pass %d): %d", key, pass, got);
        }
    }
}

static void test_indexed_objects(void **state)
{
    (void)state;
    jkeys k;
    jkeys_init(&k, NULL, 0);
    assert_int_equal(jkeys_open(&k), 0);
    fill(&k, JKEYS_LINEAR + 1, 0);
    assert_int_equal(jkeys_open(&k), 0);
    fill(&k, 5000, 0); /* the same names as outside: not repeats here */
    assert_int_equal(jkeys_open(&k), 0);
    fill(&k, JKEYS_LINEAR, 1); /* linear, inside two indexed ones */
    jkeys_close(&k);
    jkeys_close(&k);
    assert_int_equal(jkeys_open(&k), 0);
    fill(&k, 300, 0); /* a sibling: the 5000 are forgotten */
    jkeys_close(&k);
    /* the outer object kept its keys and its index */
    unsigned char key[16] = "k0.3";
    assert_int_equal(jkeys_add(&k, key, 4), 1);
    memcpy(key, "k0.5000", 7);
    assert_int_equal(jkeys_add(&k, key, 7), 0);
    jkeys_close(&k);
    assert_int_equal(k.n, 0);
    assert_int_equal(k.indexed, 0);
    jkeys_free(&k);
}

/* One tag however it is computed, for every length around the 8- and
 * 16-byte edges, and nothing past the key's end counts. */
static void test_tags_agree(void **state)
{
    (void)state;
    unsigned char a[64], b[64];
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof(a); i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[i] = (unsigned char)x;
            b[i] = (unsigned char)(x >> 8);
        }
        for (size_t len = 0; len <= 40; len++) {
            memcpy(b, a, len); /* b: the same key, other bytes after it */
            uint64_t t = jkeys_tag(a, len);
            if (jkeys_tag16(a, len) != t || jkeys_tag16(b, len) != t || jkeys_tag(b, len) != t)
                fail_msg("len %zu: tags differ", len);
#if defined(__SSE2__)
            if (len < 16 &&
                (jkeys_tag_m128(_mm_loadu_si128((const __m128i *)(const void *)a), (unsigned)len) !=
                     t ||
                 jkeys_tag_m128(_mm_loadu_si128((const __m128i *)(const void *)b), (unsigned)len) !=
                     t))
                fail_msg("len %zu: jkeys_tag_m128 differs", len);
#endif
        }
    }
}

/* Keys that share a tag (over 16 bytes, the same first 16 and last 8, the
 * same length) or only a bit of the object's set: each new, each repeat
 * found, as views (the inline path) and as copies (the slow one), a repeat
 * also the other way; and in an object of many keys in the text, nested,
 * past JKEYS_LINEAR. */
static void test_shared_tags(void **state)
{
    (void)state;
    static const char *const same_tag[] = {
        "0123456789abcdefXXXXXXX_last8by", "0123456789abcdefYYYYYYY_last8by",
        "0123456789abcdefXXXXXXZ_last8by", "0123456789abcdefX_______last8by"};
    enum { N = sizeof(same_tag) / sizeof(same_tag[0]) };
    for (int i = 1; i < N; i++)
        assert_true(jkeys_tag((const unsigned char *)same_tag[i], strlen(same_tag[i])) ==
                    jkeys_tag((const unsigned char *)same_tag[0], strlen(same_tag[0])));
    /* two short keys with one bit in the set and different tags */
    char bit_a[8] = "b0", bit_b[8] = "";
    uint64_t ta = jkeys_tag((const unsigned char *)bit_a, 2);
    for (int i = 1; i < 100000 && bit_b[0] == '\0'; i++) {
        char c[8];
        int len = snprintf(c, sizeof(c), "b%d", i);
        uint64_t t = jkeys_tag((const unsigned char *)c, (size_t)len);
        if (t != ta && jkeys_bit(t) == jkeys_bit(ta))
            memcpy(bit_b, c, sizeof(c));
    }
    assert_true(bit_b[0] != '\0');

    /* the text: every key twice, then padding, so that the first copy of
     * each is inline (16 bytes readable) */
    char text[1024];
    size_t at = 0, off[N + 2];
    const char *keys[N + 2];
    for (int i = 0; i < N; i++)
        keys[i] = same_tag[i];
    keys[N] = bit_a;
    keys[N + 1] = bit_b;
    for (int i = 0; i < N + 2; i++) {
        off[i] = at;
        at += (size_t)snprintf(text + at, sizeof(text) - at, "%s,", keys[i]);
    }
    memset(text + at, '_', 32);
    at += 32;
    jkeys k;
    jkeys_init(&k, text, at);
    /* each pass's keys as views (inline) or as copies (the slow path):
     * both views, both copies, and a repeat found the other way */
    static const int as_copy[4][2] = {{0, 0}, {1, 1}, {1, 0}, {0, 1}};
    for (int way = 0; way < 4; way++) {
        assert_int_equal(jkeys_open(&k), 0);
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < N + 2; i++) {
                size_t len = strlen(keys[i]);
                char copy[64];
                memcpy(copy, keys[i], len);
                const unsigned char *key = as_copy[way][pass] ? (const unsigned char *)copy
                                                               : (const unsigned char *)text + off[i];
                int got = jkeys_add(&k, key, len);
                if (got != pass)
                    fail_msg("way %d pass %d %s: %d", way, pass, keys[i], got);
            }
        jkeys_close(&k);
    }
    jkeys_free(&k);

    /* many keys in the text in one object, nested ones between them */
    char big[4096];
    size_t blen = 0, boff[40];
    for (int i = 0; i < 40; i++) {
        boff[i] = blen;
        blen += (size_t)snprintf(big + blen, sizeof(big) - blen, "key%02d,", i);
    }
    memset(big + blen, '_', 32);
    blen += 32;
    jkeys_init(&k, big, blen);
    assert_int_equal(jkeys_open(&k), 0);
    for (int i = 0; i < 40; i++) {
        if (jkeys_add(&k, (const unsigned char *)big + boff[i], 5) != 0)
            fail_msg("key%02d new: not", i);
        if (i % 7 == 0) { /* an inner object with the outer's names: new there */
            assert_int_equal(jkeys_open(&k), 0);
            for (int j = 0; j <= i; j++)
                assert_int_equal(jkeys_add(&k, (const unsigned char *)big + boff[j], 5), 0);
            assert_int_equal(jkeys_add(&k, (const unsigned char *)big + boff[0], 5), 1);
            jkeys_close(&k);
        }
        for (int j = 0; j <= i; j++) /* the outer still has all of its keys */
            if (jkeys_add(&k, (const unsigned char *)big + boff[j], 5) != 1)
                fail_msg("key%02d after key%02d: not a repeat", j, i);
    }
    jkeys_close(&k);
    assert_int_equal(k.n, 0);
    jkeys_free(&k);
}

/* No more open objects than JKEYS_MAX_DEPTH. */
static void test_depth_bound(void **state)
{
    (void)state;
    jkeys k;
    jkeys_init(&k, NULL, 0);
    for (int i = 0; i < JKEYS_MAX_DEPTH; i++)
        assert_int_equal(jkeys_open(&k), 0);
    assert_int_equal(jkeys_open(&k), -1);
    jkeys_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_table),
        cmocka_unit_test(test_indexed_objects),
        cmocka_unit_test(test_tags_agree),
        cmocka_unit_test(test_shared_tags),
        cmocka_unit_test(test_depth_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

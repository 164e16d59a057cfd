/*
 * test_jkeys.c - the keys of each open object (webhook/jkeys.c): a table of
 * open/add/close steps with the answer each must give (keys in the text and
 * copied ones, the same key in nested and sibling objects), and objects
 * past the linear bound held to a naive search: thousands of keys in nested
 * indexed objects, each object's keys forgotten when it closes.
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

/* Keys are kept as views into the text, then, past its last 8 bytes
 * (where the inline path may not load a word), as copies. */
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
        cmocka_unit_test(test_depth_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

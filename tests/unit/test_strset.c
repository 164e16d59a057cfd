/*
 * test_strset.c - the executor's string sets (in flight, done lately,
 * Events sent): a table of add/has/remove steps with the answer each must
 * give, growth past thousands of keys, and a freed set that is empty and
 * usable again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "strset.h"

typedef enum op { ADD, HAS, REMOVE, END } op;

typedef struct set_step {
    op op;
    const char *key;
    int want;   /* ADD: 0; HAS: member?; REMOVE: was it there? */
    size_t len; /* members afterwards */
} set_step;

typedef struct set_row {
    const char *name;
    set_step steps[8];
} set_row;

/* clang-format off */
static const set_row rows[] = {
    {"an empty set has nothing, and removing says so",
     {{HAS, "a", 0, 0}, {REMOVE, "a", 0, 0}, {END, NULL, 0, 0}}},
    {"add, then it is a member; others are not",
     {{ADD, "status:u1:ready", 0, 1}, {HAS, "status:u1:ready", 1, 1},
      {HAS, "status:u1:read", 0, 1}, {HAS, "status:u1:readyy", 0, 1}, {HAS, "", 0, 1},
      {END, NULL, 0, 0}}},
    {"adding a member again changes nothing",
     {{ADD, "k", 0, 1}, {ADD, "k", 0, 1}, {HAS, "k", 1, 1}, {END, NULL, 0, 0}}},
    {"remove says it was there, once",
     {{ADD, "k", 0, 1}, {ADD, "j", 0, 2}, {REMOVE, "k", 1, 1}, {REMOVE, "k", 0, 1},
      {HAS, "k", 0, 1}, {HAS, "j", 1, 1}, {END, NULL, 0, 0}}},
    {"a removed key can come back",
     {{ADD, "k", 0, 1}, {REMOVE, "k", 1, 0}, {ADD, "k", 0, 1}, {HAS, "k", 1, 1},
      {END, NULL, 0, 0}}},
    {"the empty string is a key",
     {{ADD, "", 0, 1}, {HAS, "", 1, 1}, {HAS, "x", 0, 1}, {REMOVE, "", 1, 0},
      {END, NULL, 0, 0}}},
};
/* clang-format on */

static void test_steps_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const set_row *r = &rows[i];
        strset s;
        strset_init(&s);
        for (size_t k = 0; k < 8 && r->steps[k].op != END; k++) {
            const set_step *st = &r->steps[k];
            int got = st->op == ADD ? strset_add(&s, st->key)
                      : st->op == HAS ? strset_has(&s, st->key)
                                      : strset_remove(&s, st->key);
            if (got != st->want || strset_len(&s) != st->len) {
                print_error("row \"%s\", step %zu (%s): got %d and %zu members, want %d and %zu\n",
                            r->name, k, st->key, got, strset_len(&s), st->want, st->len);
                fail();
            }
        }
        strset_free(&s);
    }
}

/* Keys are copied: changing the caller's buffer changes no member. */
static void test_keys_copied(void **state)
{
    (void)state;
    strset s;
    strset_init(&s);
    char key[16];
    snprintf(key, sizeof(key), "event:u1");
    assert_int_equal(strset_add(&s, key), 0);
    snprintf(key, sizeof(key), "event:u2");
    assert_int_equal(strset_has(&s, "event:u1"), 1);
    assert_int_equal(strset_has(&s, "event:u2"), 0);
    strset_free(&s);
}

static void test_growth_and_reuse(void **state)
{
    (void)state;
    enum { N = 5000 };
    strset s;
    strset_init(&s);
    char key[64];
    for (unsigned i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "create-job:edge/ota-prepull-%u", i);
        assert_int_equal(strset_add(&s, key), 0);
    }
    assert_int_equal(strset_len(&s), N);
    for (unsigned i = 0; i < N; i += 2) {
        snprintf(key, sizeof(key), "create-job:edge/ota-prepull-%u", i);
        assert_int_equal(strset_remove(&s, key), 1);
    }
    assert_int_equal(strset_len(&s), N / 2);
    for (unsigned i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "create-job:edge/ota-prepull-%u", i);
        assert_int_equal(strset_has(&s, key), i % 2 == 1);
    }
    strset_free(&s);
    /* a freed set is an empty one, ready for use */
    assert_int_equal(strset_len(&s), 0);
    assert_int_equal(strset_has(&s, "create-job:edge/ota-prepull-1"), 0);
    assert_int_equal(strset_add(&s, "again"), 0);
    assert_int_equal(strset_has(&s, "again"), 1);
    strset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_table),
        cmocka_unit_test(test_keys_copied),
        cmocka_unit_test(test_growth_and_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

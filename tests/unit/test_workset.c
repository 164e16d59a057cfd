/*
 * test_workset.c - the executor's bookkeeping of action keys: a table of
 * steps (add, done, hold until, settle, expire, forget) with what may
 * start after each; held keys falling due, by their times, making a pass
 * due; growth past thousands of held keys; and a freed workset that is
 * empty and usable again (ASan's leak check sees every key freed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "row_check.h"

#include "workset.h"

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))
#define SEC ((uint64_t)1000000000)
#define T0 (500 * SEC)

/* ---- steps ----------------------------------------------------------------------- */

typedef enum op {
    END,
    ADD,    /* workset_add; want: its return */
    DONE,   /* workset_done */
    HOLD,   /* workset_hold_until T0 + at seconds */
    SETTLE, /* workset_settle; want: its return */
    EXPIRE, /* workset_expire at T0 + at seconds; want: fell due */
    FORGET, /* workset_forget of the settled keys but those starting with "keep"; want: how many */
    MAY,    /* workset_may_add; want: may it start */
} op;

typedef struct step {
    op op;
    const char *key;
    int at; /* seconds after T0 */
    int want;
} step;

typedef struct steps_row {
    const char *name;
    step steps[10];
} steps_row;

/* clang-format off */
static const steps_row steps_rows[] = {
    {"a new key may start; in flight it may not",
     {{MAY, "k", 0, 1}, {ADD, "k", 0, 0}, {MAY, "k", 0, 0}, {MAY, "j", 0, 1}, {END, NULL, 0, 0}}},
    {"done and not held: it may start again (a node read, a write dropped)",
     {{ADD, "k", 0, 0}, {DONE, "k", 0, 0}, {MAY, "k", 0, 1}, {END, NULL, 0, 0}}},
    {"done and held: not before its time",
     {{ADD, "k", 0, 0}, {DONE, "k", 0, 0}, {HOLD, "k", 3, 0}, {MAY, "k", 0, 0},
      {EXPIRE, NULL, 2, 0}, {MAY, "k", 0, 0}, {EXPIRE, NULL, 3, 1}, {MAY, "k", 0, 1},
      {END, NULL, 0, 0}}},
    {"held again while held: the first time stands",
     {{HOLD, "k", 3, 0}, {HOLD, "k", 10, 0}, {EXPIRE, NULL, 3, 1}, {MAY, "k", 0, 1},
      {END, NULL, 0, 0}}},
    {"held after its hold fell due: held anew",
     {{HOLD, "k", 1, 0}, {EXPIRE, NULL, 1, 1}, {HOLD, "k", 5, 0}, {EXPIRE, NULL, 4, 0},
      {MAY, "k", 0, 0}, {EXPIRE, NULL, 5, 1}, {MAY, "k", 0, 1}, {END, NULL, 0, 0}}},
    {"settled (an Event sent): never again, even once its hold falls due",
     {{ADD, "event:a", 0, 0}, {DONE, "event:a", 0, 0}, {SETTLE, "event:a", 0, 0},
      {HOLD, "event:a", 3, 0}, {EXPIRE, NULL, 9, 1}, {MAY, "event:a", 0, 0}, {END, NULL, 0, 0}}},
    {"a settled key forgotten may start again; one kept may not",
     {{SETTLE, "event:a", 0, 0}, {SETTLE, "keep:b", 0, 0}, {SETTLE, "event:c", 0, 0},
      {FORGET, NULL, 0, 2}, {MAY, "event:a", 0, 1}, {MAY, "event:c", 0, 1},
      {MAY, "keep:b", 0, 0}, {FORGET, NULL, 0, 0}, {END, NULL, 0, 0}}},
    {"forgetting leaves what is in flight and held alone",
     {{ADD, "f", 0, 0}, {HOLD, "h", 5, 0}, {FORGET, NULL, 0, 0}, {MAY, "f", 0, 0},
      {MAY, "h", 0, 0}, {END, NULL, 0, 0}}},
    {"nothing held: nothing falls due",
     {{ADD, "k", 0, 0}, {EXPIRE, NULL, 100, 0}, {MAY, "k", 0, 0}, {END, NULL, 0, 0}}},
    {"done for a key not in flight changes nothing",
     {{DONE, "k", 0, 0}, {MAY, "k", 0, 1}, {HOLD, "k", 1, 0}, {DONE, "k", 0, 0},
      {MAY, "k", 0, 0}, {END, NULL, 0, 0}}},
};
/* clang-format on */

static int keep_prefixed(const char *key, void *data)
{
    (void)data;
    return strncmp(key, "keep", 4) == 0;
}

static void test_steps_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(steps_rows); i++) {
        const steps_row *r = &steps_rows[i];
        workset w;
        workset_init(&w);
        for (size_t k = 0; k < N_ROWS(r->steps) && r->steps[k].op != END; k++) {
            const step *st = &r->steps[k];
            uint64_t at = T0 + (uint64_t)st->at * SEC;
            int got = 0;
            switch (st->op) {
            case ADD:
                got = workset_add(&w, st->key);
                break;
            case DONE:
                workset_done(&w, st->key);
                break;
            case HOLD:
                workset_hold_until(&w, st->key, at);
                break;
            case SETTLE:
                got = workset_settle(&w, st->key);
                break;
            case EXPIRE:
                got = workset_expire(&w, at);
                break;
            case FORGET:
                got = (int)workset_forget(&w, keep_prefixed, NULL);
                break;
            case MAY:
                got = workset_may_add(&w, st->key);
                break;
            case END:
                break;
            }
            ROW_CHECK(r->name, got == st->want, "step %zu (op %d, %s): %d, want %d", k,
                      (int)st->op, st->key != NULL ? st->key : "-", got, st->want);
        }
        workset_free(&w);
    }
}

/* ---- held keys falling due ------------------------------------------------------- */

typedef struct expire_row {
    const char *name;
    int64_t until_s[5]; /* relative to now; the list ends at INT64_MIN */
    const char *kept;   /* the keys still held: "bd" */
    int fell_due;       /* a pass is due */
} expire_row;

#define NO_MORE INT64_MIN

static const expire_row expire_rows[] = {
    {"nothing held back", {NO_MORE}, "", 0},
    {"held back, not yet due", {5, NO_MORE}, "a", 0},
    /* bd018451: a failed write held back RECENT_FAILED_NS fell due, and
     * no pass looked until an unrelated change or the 30 s resync */
    {"a failed write falls due: a pass is due", {0, NO_MORE}, "", 1},
    {"past due", {-1, NO_MORE}, "", 1},
    {"some due, the rest still held", {-1, 2, 0, 10, NO_MORE}, "bd", 1},
    {"none due", {1, 2, 3, NO_MORE}, "abc", 0},
    {"all due", {-3, -2, 0, NO_MORE}, "", 1},
};

static void test_expire_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(expire_rows); i++) {
        const expire_row *r = &expire_rows[i];
        workset w;
        workset_init(&w);
        size_t n = 0;
        for (; n < 5 && r->until_s[n] != NO_MORE; n++) {
            char key[2] = {(char)('a' + n), '\0'};
            workset_hold_until(&w, key, (uint64_t)((int64_t)T0 + r->until_s[n] * (int64_t)SEC));
        }
        int due = workset_expire(&w, T0);
        ROW_CHECK(r->name, due == r->fell_due, "fell due %d, want %d", due, r->fell_due);
        char held[6] = "";
        size_t n_held = 0;
        for (size_t k = 0; k < n; k++) {
            char key[2] = {(char)('a' + k), '\0'};
            if (!workset_may_add(&w, key))
                held[n_held++] = key[0];
        }
        ROW_CHECK(r->name, strcmp(held, r->kept) == 0, "held \"%s\", want \"%s\"", held, r->kept);
        /* what stays held falls due at its own time, not before */
        int again = workset_expire(&w, T0);
        ROW_CHECK(r->name, again == 0, "fell due twice at the same time");
        ROW_CHECK(r->name, workset_expire(&w, T0 + 60 * SEC) == (n_held > 0), "the rest fell due");
        workset_free(&w);
    }
}

/* ---- many keys -------------------------------------------------------------------- */

/* A rollout's pass: thousands of writes in flight, then held, then let go
 * in two halves by their times; freed, the workset is empty and usable. */
static void test_growth_and_reuse(void **state)
{
    (void)state;
    enum { N = 5000 };
    workset w;
    workset_init(&w);
    char key[48];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "status:u-%d@1:ready", i);
        assert_int_equal(workset_add(&w, key), 0);
    }
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "status:u-%d@1:ready", i);
        workset_done(&w, key);
        workset_hold_until(&w, key, T0 + (uint64_t)(i % 2 + 1) * SEC);
    }
    assert_int_equal(workset_expire(&w, T0 + SEC), 1);
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof(key), "status:u-%d@1:ready", i);
        assert_int_equal(workset_may_add(&w, key), i % 2 == 0);
    }
    assert_int_equal(workset_expire(&w, T0 + 2 * SEC), 1);
    assert_int_equal(w.n_holds, 0);
    workset_free(&w);
    workset_hold_until(&w, "k", T0);
    assert_int_equal(workset_settle(&w, "event:x"), 0);
    assert_int_equal(workset_may_add(&w, "k"), 0);
    assert_int_equal(workset_may_add(&w, "event:x"), 0);
    workset_free(&w);
    assert_int_equal(workset_may_add(&w, "k"), 1);
    assert_int_equal(workset_may_add(&w, "event:x"), 1);
    workset_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_table),
        cmocka_unit_test(test_expire_table),
        cmocka_unit_test(test_growth_and_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

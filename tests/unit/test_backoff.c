/*
 * test_backoff.c - exponential backoff with equal jitter: the delays double
 * from base to cap, every wait lies in [d/2, d] and uses that whole range,
 * the attempt count resets, nothing overflows after many attempts or with
 * huge caps, and an injected random source decides the jitter.
 */
#include "review_fixture.h"

#include "backoff.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

static uint64_t zero_rand(void *ctx)
{
    (*(unsigned *)ctx)++;
    return 0;
}

/* Returns the numbers of a script in turn. */
typedef struct script {
    const uint64_t *values;
    size_t n, i;
} script;

static uint64_t script_rand(void *ctx)
{
    script *s = ctx;
    return s->values[s->i++ % s->n];
}

typedef struct row {
    const char *name;
    uint64_t base, cap;
    uint64_t want[10]; /* successive waits with a random source that gives 0 */
} row;

static const row rows[] = {
    {"800 ms to 30 s, as client-go's reflector",
     800 * MS,
     30 * SEC,
     {400 * MS, 800 * MS, 1600 * MS, 3200 * MS, 6400 * MS, 12800 * MS, 15 * SEC, 15 * SEC, 15 * SEC,
      15 * SEC}},
    {"1 s to 30 s",
     SEC,
     30 * SEC,
     {500 * MS, SEC, 2 * SEC, 4 * SEC, 8 * SEC, 15 * SEC, 15 * SEC, 15 * SEC, 15 * SEC, 15 * SEC}},
    {"base equals cap",
     5 * SEC,
     5 * SEC,
     {2500 * MS, 2500 * MS, 2500 * MS, 2500 * MS, 2500 * MS, 2500 * MS, 2500 * MS, 2500 * MS,
      2500 * MS, 2500 * MS}},
    {"1 ns base: d/2 rounds down", 1, 8, {0, 1, 2, 4, 4, 4, 4, 4, 4, 4}},
};

/* With no jitter drawn, the waits are exactly half of base * 2^n, capped. */
static void test_lower_bounds_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        unsigned calls = 0;
        backoff b;
        FX_CHECK(r->name, backoff_init(&b, r->base, r->cap, zero_rand, &calls) == 0, "init");
        for (size_t k = 0; k < 10; k++) {
            uint64_t got = backoff_next(&b);
            FX_CHECK(r->name, got == r->want[k], "wait %zu: %llu ns, want %llu", k,
                     (unsigned long long)got, (unsigned long long)r->want[k]);
        }
        FX_CHECK(r->name, calls == 10, "random source called %u times", calls);
    }
}

/* The random part is what the source says, within [d/2, d]. */
static void test_injected_jitter(void **state)
{
    (void)state;
    /* d = 1 s: 0.5 s + r mod (0.5 s + 1) */
    const uint64_t values[] = {0, 1, 250 * MS, 500 * MS, 500 * MS + 1};
    script s = {values, 5, 0};
    backoff b;
    assert_int_equal(backoff_init(&b, SEC, SEC, script_rand, &s), 0);
    assert_int_equal(backoff_next(&b), 500 * MS);
    assert_int_equal(backoff_next(&b), 500 * MS + 1);
    assert_int_equal(backoff_next(&b), 750 * MS);
    assert_int_equal(backoff_next(&b), SEC);      /* the top of the range */
    assert_int_equal(backoff_next(&b), 500 * MS); /* wraps: never above d */
}

/* With the built-in generator every wait lies in [d/2, d], both ends of the
 * range are reached, and two backoffs do not move in lockstep. */
static void test_builtin_generator_range(void **state)
{
    (void)state;
    backoff a, b;
    assert_int_equal(backoff_init(&a, SEC, 8 * SEC, NULL, NULL), 0);
    assert_int_equal(backoff_init(&b, SEC, 8 * SEC, NULL, NULL), 0);
    int differ = 0;
    for (unsigned attempt = 0; attempt < 6; attempt++) {
        uint64_t d = SEC << (attempt < 3 ? attempt : 3);
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int i = 0; i < 2000; i++) {
            a.attempt = b.attempt = attempt;
            uint64_t w = backoff_next(&a);
            differ |= w != backoff_next(&b);
            assert_true(w >= d / 2 && w <= d);
            lo = w < lo ? w : lo;
            hi = w > hi ? w : hi;
        }
        assert_true(lo < d / 2 + d / 16); /* the low end is reached */
        assert_true(hi > d - d / 16);     /* and the high end */
    }
    assert_true(differ);
}

static void test_reset(void **state)
{
    (void)state;
    unsigned calls = 0;
    backoff b;
    assert_int_equal(backoff_init(&b, SEC, 60 * SEC, zero_rand, &calls), 0);
    backoff_next(&b);
    backoff_next(&b);
    assert_int_equal(backoff_next(&b), 2 * SEC);
    backoff_reset(&b);
    assert_int_equal(backoff_next(&b), 500 * MS);
    assert_int_equal(backoff_next(&b), SEC);
}

/* Thousands of attempts and caps near the top of uint64_t: no overflow. */
static void test_no_overflow(void **state)
{
    (void)state;
    unsigned calls = 0;
    backoff b;
    assert_int_equal(backoff_init(&b, 3, UINT64_MAX, zero_rand, &calls), 0);
    uint64_t prev = 0;
    for (int i = 0; i < 5000; i++) {
        uint64_t w = backoff_next(&b);
        assert_true(w >= prev); /* never wraps to something small */
        prev = w;
    }
    assert_int_equal(prev, UINT64_MAX / 2);

    const uint64_t top[] = {UINT64_MAX};
    script s = {top, 1, 0};
    assert_int_equal(backoff_init(&b, UINT64_MAX, UINT64_MAX, script_rand, &s), 0);
    uint64_t w = backoff_next(&b);
    assert_true(w >= UINT64_MAX / 2);
}

static void test_init_rejects(void **state)
{
    (void)state;
    backoff b;
    assert_int_equal(backoff_init(&b, 0, SEC, NULL, NULL), -1);
    assert_int_equal(backoff_init(&b, 2 * SEC, SEC, NULL, NULL), -1);
    assert_int_equal(backoff_init(&b, SEC, SEC, NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lower_bounds_table),
        cmocka_unit_test(test_injected_jitter),
        cmocka_unit_test(test_builtin_generator_range),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_no_overflow),
        cmocka_unit_test(test_init_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

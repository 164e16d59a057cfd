/*
 * test_pullq.c - the pull queue's decisions (controller/pullq.h): the fair
 * order across classes and within one, and the verdict for a unit given
 * the global cap, its node's slot and its node's readiness.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pullq.h"

#define R PULLQ_NODE_READY
#define NR PULLQ_NODE_NOT_READY
#define UNK PULLQ_NODE_UNKNOWN
#define I PULLQ_INTERACTIVE
#define B PULLQ_BULK

/* ---- the order ---------------------------------------------------------------- */

/* An interactive unit asked for late still goes before a bulk unit asked
 * for early: a node user waiting on an upgrade is never queued behind a
 * 1 000-node ImagePullJob.  Within a class, FIFO; equal times, the id. */
static void test_order(void **state)
{
    (void)state;
    pullq_unit u[] = {
        {PULLQ_BULK, "n1", "2026-11-21T20:00:00Z", "ipj-a", R},
        {PULLQ_INTERACTIVE, "n2", "2026-11-21T21:30:00Z", "ota-late", R},
        {PULLQ_BULK, "n3", "2026-11-21T20:00:00Z", "ipj-0", R},
        {PULLQ_INTERACTIVE, "n4", "2026-11-21T21:00:00Z", "ota-b", R},
        {PULLQ_INTERACTIVE, "n5", "2026-11-21T21:00:00Z", "ota-a", R},
        {PULLQ_BULK, "n6", "2026-11-21T19:00:00Z", "ipj-z", R},
    };
    static const char *const want[] = {"ota-a", "ota-b", "ota-late", "ipj-z", "ipj-0", "ipj-a"};
    size_t n = sizeof(u) / sizeof(u[0]);
    qsort(u, n, sizeof(u[0]), pullq_cmp);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(u[i].id, want[i]);
}

/* ---- one verdict at a time ---------------------------------------------------- */

typedef struct verdict_row {
    const char *what;
    pullq_class cls;
    size_t cap, per_node;
    size_t running;            /* Jobs running, none on the unit's node */
    size_t on_node;            /* Jobs running on the unit's node (counted in cap too) */
    size_t terminating_on_node; /* terminating pull pods there (node slot only) */
    pullq_node node_state;
    pullq_verdict want;
} verdict_row;

static const verdict_row verdicts[] = {
    {"an empty queue starts", I, 10, 1, 0, 0, 0, R, PULLQ_START},
    {"below the cap starts", I, 10, 1, 9, 0, 0, R, PULLQ_START},
    {"at the cap waits", I, 10, 1, 10, 0, 0, R, PULLQ_WAIT_CAP},
    {"no cap (0) never waits for it", I, 0, 1, 5000, 0, 0, R, PULLQ_START},
    {"its node pulls already: waits for the node's slot", I, 10, 1, 0, 1, 0, R,
     PULLQ_WAIT_NODE_SLOT},
    {"a terminating pull pod holds the node's slot", I, 10, 1, 0, 0, 1, R, PULLQ_WAIT_NODE_SLOT},
    {"a terminating pull pod takes no global slot", I, 1, 2, 0, 0, 1, R, PULLQ_START},
    {"two per node: one running leaves room", I, 10, 2, 0, 1, 0, R, PULLQ_START},
    {"two per node: one running, one terminating", I, 10, 2, 0, 1, 1, R, PULLQ_WAIT_NODE_SLOT},
    {"no bound per node (0)", I, 10, 0, 0, 3, 2, R, PULLQ_START},
    {"a NotReady node waits for the node", I, 10, 1, 0, 0, 0, NR, PULLQ_WAIT_NODE},
    {"waiting for the node is said before the cap", I, 1, 1, 1, 0, 0, NR, PULLQ_WAIT_NODE},
    {"waiting for the node is said before its slot", I, 10, 1, 0, 1, 0, NR, PULLQ_WAIT_NODE},
    {"a node being read holds its place", I, 10, 1, 0, 0, 0, UNK, PULLQ_HOLD},
    {"a node being read waits at the cap like any", I, 1, 1, 1, 0, 0, UNK, PULLQ_WAIT_CAP},
    {"a node being read holds even with its slot busy", I, 10, 1, 0, 1, 0, UNK, PULLQ_HOLD},
    /* the interactive reserve: bulk units leave the last slot free */
    {"bulk below cap - 1 starts", B, 10, 1, 8, 0, 0, R, PULLQ_START},
    {"bulk at cap - 1 waits: the last slot is a node user's", B, 10, 1, 9, 0, 0, R, PULLQ_WAIT_CAP},
    {"interactive at cap - 1 takes the last slot", I, 10, 1, 9, 0, 0, R, PULLQ_START},
    {"cap 2: bulk has one slot", B, 2, 1, 0, 0, 0, R, PULLQ_START},
    {"cap 2: bulk with one running waits", B, 2, 1, 1, 0, 0, R, PULLQ_WAIT_CAP},
    {"cap 1: no reserve, bulk may run", B, 1, 1, 0, 0, 0, R, PULLQ_START},
    {"no cap: no reserve", B, 0, 1, 5000, 0, 0, R, PULLQ_START},
};

static void test_verdicts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
        const verdict_row *r = &verdicts[i];
        pullq q;
        pullq_init(&q, r->cap, r->per_node);
        for (size_t j = 0; j < r->running; j++)
            pullq_occupy(&q, "elsewhere", 1);
        for (size_t j = 0; j < r->on_node; j++)
            pullq_occupy(&q, "edge-1", 1);
        for (size_t j = 0; j < r->terminating_on_node; j++)
            pullq_occupy(&q, "edge-1", 0);
        pullq_unit u = {r->cls, "edge-1", "2026-11-21T21:00:00Z", "u", r->node_state};
        pullq_verdict got = pullq_admit(&q, &u);
        if (got != r->want)
            fail_msg("%s: got %s, want %s", r->what, pullq_verdict_name(got),
                     pullq_verdict_name(r->want));
        pullq_free(&q);
    }
}

/* ---- a pass: units in order, each taking what it starts ---------------------- */

/* Cap 2, one per node: the first unit on a node starts, the second on it
 * waits for the slot and takes no global slot, so a later unit on another
 * node still starts; a NotReady node's unit takes nothing; a unit whose
 * node is being read keeps its slots (the last one finds the cap full). */
static void test_pass(void **state)
{
    (void)state;
    pullq_unit u[] = {
        {PULLQ_INTERACTIVE, "a", "t1", "1", R},
        {PULLQ_INTERACTIVE, "a", "t2", "2", R},
        {PULLQ_INTERACTIVE, "b", "t3", "3", NR},
        {PULLQ_INTERACTIVE, "c", "t4", "4", UNK},
        {PULLQ_INTERACTIVE, "d", "t5", "5", R},
        {PULLQ_BULK, "e", "t0", "6", R},
    };
    static const pullq_verdict want[] = {PULLQ_START, PULLQ_WAIT_NODE_SLOT, PULLQ_WAIT_NODE,
                                         PULLQ_HOLD, PULLQ_WAIT_CAP, PULLQ_WAIT_CAP};
    size_t n = sizeof(u) / sizeof(u[0]);
    qsort(u, n, sizeof(u[0]), pullq_cmp);
    pullq q;
    pullq_init(&q, 2, 1);
    for (size_t i = 0; i < n; i++) {
        pullq_verdict v = pullq_admit(&q, &u[i]);
        if (v != want[i])
            fail_msg("unit %s: got %s, want %s", u[i].id, pullq_verdict_name(v),
                     pullq_verdict_name(want[i]));
        if (v == PULLQ_START || v == PULLQ_HOLD)
            pullq_take(&q, &u[i]);
    }
    assert_int_equal(q.running, 2);
    pullq_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

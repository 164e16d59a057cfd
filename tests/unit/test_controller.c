/*
 * test_controller.c - the executor's decisions, as tables: which pull
 * counter an action done adds to (by the outcome reconcile gave it, not by
 * its key).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "controller.h"

/* Fails the running test, naming the table row, when cond is false. */
#define ROW_CHECK(row, cond, ...)                                                                  \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            print_error("row \"%s\": check failed: %s\n  ", (row), #cond);                         \
            print_error(__VA_ARGS__);                                                              \
            print_error("\n");                                                                     \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#define N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- pulls by outcome -------------------------------------------------------- */

typedef struct pull_row {
    const char *name;
    action_kind kind;
    action_outcome outcome;
    pull_outcome want; /* PULL_N_OUTCOMES: counted nowhere */
} pull_row;

static const pull_row pull_rows[] = {
    {"a Job created starts a pull", ACTION_CREATE_JOB, ACTION_OUTCOME_NONE, PULL_STARTED},
    {"Ready patched: succeeded", ACTION_PATCH_POD_STATUS, ACTION_OUTCOME_PULL_SUCCEEDED,
     PULL_SUCCEEDED},
    {"PullImageFail patched: failed", ACTION_PATCH_POD_STATUS, ACTION_OUTCOME_PULL_FAILED,
     PULL_FAILED},
    {"PodNeedUpgrade patched: no pull", ACTION_PATCH_POD_STATUS, ACTION_OUTCOME_NONE,
     PULL_N_OUTCOMES},
    {"an Event: no pull", ACTION_CREATE_EVENT, ACTION_OUTCOME_NONE, PULL_N_OUTCOMES},
    {"a Job deleted: no pull", ACTION_DELETE_JOB, ACTION_OUTCOME_NONE, PULL_N_OUTCOMES},
    {"a node read: no pull", ACTION_GET_NODE, ACTION_OUTCOME_NONE, PULL_N_OUTCOMES},
    /* only a status patch reports an outcome, whatever else says so */
    {"an Event tagged succeeded: no pull", ACTION_CREATE_EVENT, ACTION_OUTCOME_PULL_SUCCEEDED,
     PULL_N_OUTCOMES},
};

static void test_pull_outcome_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_ROWS(pull_rows); i++) {
        const pull_row *r = &pull_rows[i];
        pull_outcome got = controller_pull_outcome(r->kind, r->outcome);
        ROW_CHECK(r->name, got == r->want, "counter %d, want %d", (int)got, (int)r->want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pull_outcome_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

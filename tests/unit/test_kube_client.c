/*
 * test_kube_client.c - what the client does when a call ends, as a table:
 * retried or not (client-go's cases: a broken connection, 429, 5xx; never
 * a call whose caller reconnects itself, a refused body, or spent
 * attempts), after how long (a 429's Retry-After, else the backoff), and
 * whether every call is paused (a 429's Retry-After, whoever got it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "kube_client.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define BACKOFF (300 * MS) /* the call's next backoff delay, whatever it is */
#define MAX 8

typedef struct retry_row {
    const char *name;
    int no_retry, aborted, attempts;
    long status;
    int transport_error;
    long retry_after_s;
    /* wanted */
    int retry;
    uint64_t delay_ns;
    int pause;
    uint64_t pause_ns;
    /* the call (after the wanted columns: 0 in the rows above is a read) */
    int write, not_sent, idempotent;
} retry_row;

/* clang-format off */
static const retry_row rows[] = {
    /* ea45a62: a 429's Retry-After pauses every call, also when the call
     * that got it is not retried here (a watch reconnects itself, the
     * Lease is read again by the election) */
    {"a watch's 429 with Retry-After pauses every call",  1, 0, 1, 429, 0, 5,  0, 0, 1, 5 * SEC, 0, 0, 0},
    {"a Lease read's 429 with Retry-After pauses every call", 1, 0, 1, 429, 0, 2, 0, 0, 1, 2 * SEC, 0, 0, 0},
    {"a write's 429 with Retry-After: retried after it, all paused", 0, 0, 1, 429, 0, 3,
     1, 3 * SEC, 1, 3 * SEC, 0, 0, 0},
    {"Retry-After 0: retried at once, reservations still withdrawn", 0, 0, 1, 429, 0, 0,
     1, 0, 1, 0, 0, 0, 0},
    {"Retry-After 600 (the most honoured)", 0, 0, 1, 429, 0, 600, 1, 600 * SEC, 1, 600 * SEC, 0, 0, 0},
    {"a 429 on the last attempt: not retried, still pauses", 0, 0, MAX, 429, 0, 4, 0, 0, 1, 4 * SEC, 0, 0, 0},
    {"a 429 with Retry-After on an aborted call still pauses", 0, 1, 1, 429, 0, 1, 0, 0, 1, SEC, 0, 0, 0},
    {"429 without Retry-After: backoff, no pause", 0, 0, 1, 429, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"a watch's 429 without Retry-After: nothing", 1, 0, 1, 429, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    /* only a 429's Retry-After is a pause; a 503's is ignored */
    {"503 with Retry-After: backoff, no pause", 0, 0, 1, 503, 0, 7, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"500: backoff", 0, 0, 1, 500, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"502: backoff", 0, 0, 3, 502, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"504 on attempt 7 of 8: backoff", 0, 0, MAX - 1, 504, 0, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"500 on the last attempt: given up", 0, 0, MAX, 500, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"connection refused: backoff", 0, 0, 1, 0, 1, -1, 1, BACKOFF, 0, 0, 0, 0, 0},
    {"a timeout on the last attempt: given up", 0, 0, MAX, 0, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a watch cut mid-stream: its owner reconnects", 1, 0, 1, 0, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a body too big (aborted): not retried", 0, 1, 1, 0, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a list page refused by its parser (aborted 200)", 0, 1, 1, 200, 1, -1, 0, 0, 0, 0, 0, 0, 0},
    {"a Lease write's 503: the election decides", 1, 0, 1, 503, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"200", 0, 0, 1, 200, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"201", 0, 0, 2, 201, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"400", 0, 0, 1, 400, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"404", 0, 0, 1, 404, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"409", 0, 0, 1, 409, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"410 Gone: the informer relists", 0, 0, 1, 410, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"422", 0, 0, 1, 422, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    {"499", 0, 0, 1, 499, 0, -1, 0, 0, 0, 0, 0, 0, 0},
    /* issue 10 §3: a write is retried only when it cannot have been
     * applied, or when a repeat is harmless */
    {"a write that could not connect: never sent, retried", 0, 0, 1, 0, 1, -1,
     1, BACKOFF, 0, 0, 1, 1, 0},
    {"a write whose connection broke after sending: not retried", 0, 0, 1, 0, 1, -1,
     0, 0, 0, 0, 1, 0, 0},
    {"a write that timed out waiting for the answer: not retried", 0, 0, 2, 0, 1, -1,
     0, 0, 0, 0, 1, 0, 0},
    {"an idempotent write (create 409 / delete 404 = done) after a reset: retried", 0, 0, 1, 0, 1, -1,
     1, BACKOFF, 0, 0, 1, 0, 1},
    {"a write's 429 with Retry-After: retried after it", 0, 0, 1, 429, 0, 2,
     1, 2 * SEC, 1, 2 * SEC, 1, 0, 0},
    {"a write's 429 without Retry-After: backoff", 0, 0, 1, 429, 0, -1, 1, BACKOFF, 0, 0, 1, 0, 0},
    {"a write's 503: not taken, retried", 0, 0, 1, 503, 0, -1, 1, BACKOFF, 0, 0, 1, 0, 0},
    {"a write's 500: may have landed, not retried", 0, 0, 1, 500, 0, -1, 0, 0, 0, 0, 1, 0, 0},
    {"a write's 504: may have landed, not retried", 0, 0, 1, 504, 0, -1, 0, 0, 0, 0, 1, 0, 0},
    {"an idempotent write's 500: retried", 0, 0, 1, 500, 0, -1, 1, BACKOFF, 0, 0, 1, 0, 1},
    {"a write never sent, attempts spent: given up", 0, 0, MAX, 0, 1, -1, 0, 0, 0, 0, 1, 1, 0},
    {"a write's 409: not retried", 0, 0, 1, 409, 0, -1, 0, 0, 0, 0, 1, 0, 0},
    {"a read whose connection broke after sending: retried", 0, 0, 1, 0, 1, -1,
     1, BACKOFF, 0, 0, 0, 0, 0},
};
/* clang-format on */

static void test_retry_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const retry_row *r = &rows[i];
        kube_retry_input in = {
            .no_retry = r->no_retry,
            .aborted = r->aborted,
            .attempts = r->attempts,
            .max_attempts = MAX,
            .status = r->status,
            .transport_error = r->transport_error,
            .not_sent = r->not_sent,
            .write = r->write,
            .idempotent = r->idempotent,
            .retry_after_s = r->retry_after_s,
            .backoff_ns = BACKOFF,
        };
        kube_retry_decision d = kube_retry_decide(&in);
        if (d.retry != r->retry || (r->retry && d.delay_ns != r->delay_ns) || d.pause != r->pause ||
            (r->pause && d.pause_ns != r->pause_ns)) {
            print_error("row \"%s\": retry %d after %llu ns, pause %d for %llu ns; "
                        "want retry %d after %llu ns, pause %d for %llu ns\n",
                        r->name, d.retry, (unsigned long long)d.delay_ns, d.pause,
                        (unsigned long long)d.pause_ns, r->retry, (unsigned long long)r->delay_ns,
                        r->pause, (unsigned long long)r->pause_ns);
            fail();
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

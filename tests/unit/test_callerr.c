/*
 * test_callerr.c - what a failed call says about the configuration, and
 * when it is said (kube/callerr.h; issue 19 §1: a 401 or an x509 error was
 * "watch interrupted" five times per round for a list that never
 * succeeded): the causes, table-driven from the answers the apiserver and
 * curl give; and a configuration cause said once per change of cause,
 * again after a success, never for passing faults.
 */
#include "review_fixture.h"

#include "callerr.h"
#include "row_check.h"

static void test_classify_table(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        long status;
        const char *error;
        callerr_cause want;
    } rows[] = {
        {"200", 200, NULL, CALLERR_NONE},
        {"201 (a create)", 201, NULL, CALLERR_NONE},
        {"401: a token the apiserver does not accept", 401, NULL, CALLERR_UNAUTHORIZED},
        {"403: RBAC, per resource (said per call)", 403, NULL, CALLERR_OTHER},
        {"410 Gone", 410, NULL, CALLERR_OTHER},
        {"429", 429, NULL, CALLERR_OTHER},
        {"500", 500, NULL, CALLERR_OTHER},
        {"the CA does not verify the server",
         0, "SSL certificate problem: unable to get local issuer certificate", CALLERR_TLS},
        {"a self-signed server", 0, "SSL certificate problem: self-signed certificate in certificate chain",
         CALLERR_TLS},
        {"the server name", 0, "SSL: no alternative certificate subject name matches target host name '127.0.0.1'",
         CALLERR_TLS},
        {"curl 60's own words", 0, "SSL peer certificate or SSH remote key was not OK", CALLERR_TLS},
        {"a Go client's words", 0, "x509: certificate signed by unknown authority", CALLERR_TLS},
        {"connection refused", 0, "Failed to connect to 127.0.0.1 port 1: Connection refused",
         CALLERR_OTHER},
        {"timeout", 0, "Operation timed out after 10000 milliseconds", CALLERR_OTHER},
        {"no answer, no words", 0, NULL, CALLERR_OTHER},
        {"a 401 with transport words is still the credentials", 401, "whatever", CALLERR_UNAUTHORIZED},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        callerr_cause got = callerr_classify(rows[i].status, rows[i].error);
        ROW_CHECK(rows[i].name, got == rows[i].want, "cause %d, want %d", (int)got,
                  (int)rows[i].want);
        int config = rows[i].want == CALLERR_UNAUTHORIZED || rows[i].want == CALLERR_TLS;
        ROW_CHECK(rows[i].name, callerr_is_config(got) == config, "config %d", config);
        ROW_CHECK(rows[i].name, (callerr_hint(got)[0] != '\0') == config, "hint \"%s\"",
                  callerr_hint(got));
    }
    assert_non_null(strstr(callerr_hint(CALLERR_UNAUTHORIZED), "check the token"));
    assert_non_null(strstr(callerr_hint(CALLERR_TLS), "check the CA"));
}

/* Five informers retrying a list that never succeeds, round after round:
 * one line in all; a passing fault in between changes nothing; another
 * configuration cause is said; a success forgets, and the same trouble
 * coming back is said again. */
static void test_say_once_per_change(void **state)
{
    (void)state;
    callerr_state st = {0};
    static const struct {
        callerr_cause cause;
        int say;
    } script[] = {
        {CALLERR_UNAUTHORIZED, 1}, {CALLERR_UNAUTHORIZED, 0}, {CALLERR_UNAUTHORIZED, 0},
        {CALLERR_UNAUTHORIZED, 0}, {CALLERR_UNAUTHORIZED, 0}, /* round 1: 5 informers */
        {CALLERR_UNAUTHORIZED, 0}, {CALLERR_UNAUTHORIZED, 0}, /* round 2 */
        {CALLERR_OTHER, 0},        {CALLERR_UNAUTHORIZED, 0}, /* a 500 between: no change */
        {CALLERR_TLS, 1},          {CALLERR_TLS, 0},          /* the CA now: a new cause */
        {CALLERR_UNAUTHORIZED, 1},                            /* and back */
        {CALLERR_NONE, 0},                                    /* fixed: forgotten */
        {CALLERR_UNAUTHORIZED, 1},                            /* broken again: said again */
        {CALLERR_OTHER, 0},        {CALLERR_NONE, 0},         {CALLERR_OTHER, 0},
    };
    for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++) {
        int got = callerr_say_now(&st, script[i].cause);
        if (got != script[i].say)
            fail_msg("step %zu (cause %d): say %d, want %d", i, (int)script[i].cause, got,
                     script[i].say);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify_table),
        cmocka_unit_test(test_say_once_per_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

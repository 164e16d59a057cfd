/*
 * test_leader.c - the Lease election's decision as a table (client-go's
 * rules: take a free or locally expired Lease, renew ours, wait while
 * another holds a live one, step down when the renew deadline passes
 * without a renewal, before another candidate may take over), the
 * Lease as read from the apiserver's JSON, its nesting bounded, and what
 * is logged about failing Lease calls (issue 19: a missing namespace or
 * RBAC used to fail silently), with the Status they are read from, and
 * the release at shutdown (a renewal in flight, a 409 on the release).
 */
#include "kobj_fixture.h"

#include "kapi.h"
#include "leader.h"

#define MS 1000000ll
#define T 1000000ll /* now, in ms of an arbitrary monotonic clock */
#define NEVER INT64_MIN
#define SAME (INT64_MIN + 1) /* expected: unchanged */

static const leader_config cfg = {
    .namespace = "kube-system",
    .name = "ota-controller",
    .identity = "me",
    .lease_ns = 15000 * MS,
    .renew_deadline_ns = 10000 * MS,
    .retry_ns = 2000 * MS,
};

/* ms relative to T (or NEVER) as the clock's nanoseconds */
static uint64_t at(int64_t rel_ms)
{
    return rel_ms == NEVER ? 0 : (uint64_t)((T + rel_ms) * MS);
}

typedef struct leader_row {
    const char *name;
    /* the state before */
    int is_leader, busy;
    int64_t next_try, last_renew, observed_at;
    /* what was observed at T */
    leader_event event;
    const char *holder;
    int changed;
    /* wanted */
    leader_step step;
    int leader_after;
    int64_t next_try_after, last_renew_after, observed_at_after; /* or SAME */
    int held, held_after; /* we hold the Lease as our last write returned it */
} leader_row;

/* clang-format off */
static const leader_row rows[] = {
    /* reads */
    {"no Lease (404): create it",
     0, 0, 0, NEVER, NEVER, LEADER_READ_MISSING, NULL, 0, LEADER_CREATE, 0, SAME, SAME, SAME, 0, 0},
    {"a free Lease: take it",
     0, 0, 0, NEVER, NEVER, LEADER_READ, "", 1, LEADER_TAKE, 0, SAME, SAME, 0, 0, 0},
    {"a free Lease seen before: take it",
     0, 0, 0, NEVER, -1000, LEADER_READ, "", 0, LEADER_TAKE, 0, SAME, SAME, SAME, 0, 0},
    {"someone else's live Lease: wait a retry period, not leader",
     0, 0, 0, NEVER, -3000, LEADER_READ, "other", 1, LEADER_WAIT, 0, 2000, SAME, 0, 0, 0},
    {"someone else's Lease unchanged for less than a lease duration: wait",
     0, 0, 0, NEVER, -14000, LEADER_READ, "other", 0, LEADER_WAIT, 0, 2000, SAME, SAME, 0, 0},
    {"unchanged for exactly a lease duration: not expired yet",
     0, 0, 0, NEVER, -15000, LEADER_READ, "other", 0, LEADER_WAIT, 0, 2000, SAME, SAME, 0, 0},
    {"expired by local observation (unchanged for more than a lease duration): take it",
     0, 0, 0, NEVER, -15001, LEADER_READ, "other", 0, LEADER_TAKE, 0, SAME, SAME, SAME, 0, 0},
    /* the writer's renewTime may be old by our clock (clock skew): what
     * counts is that the record changed, seen here just now */
    {"a record that just changed is live, however old it was: wait",
     0, 0, 0, NEVER, -60000, LEADER_READ, "other", 1, LEADER_WAIT, 0, 2000, SAME, 0, 0, 0},
    {"someone else's Lease never observed changing: take it",
     0, 0, 0, NEVER, NEVER, LEADER_READ, "other", 0, LEADER_TAKE, 0, SAME, SAME, SAME, 0, 0},
    {"someone else's live Lease while we thought we led: not leader",
     1, 0, 0, -3000, -3000, LEADER_READ, "other", 1, LEADER_WAIT, 0, 2000, SAME, 0, 0, 0},
    {"ours: renew it",
     1, 0, 0, -2000, -2000, LEADER_READ, "me", 0, LEADER_RENEW, 1, SAME, SAME, SAME, 0, 0},
    {"ours after a restart: renew it (leader once written)",
     0, 0, 0, NEVER, NEVER, LEADER_READ, "me", 1, LEADER_RENEW, 0, SAME, SAME, 0, 0, 0},
    {"ours, even unchanged past a lease duration: renew it",
     0, 0, 0, NEVER, -20000, LEADER_READ, "me", 0, LEADER_RENEW, 0, SAME, SAME, SAME, 0, 0},
    {"a read that failed: try again in a retry period",
     0, 0, 0, NEVER, -3000, LEADER_READ_FAILED, NULL, 0, LEADER_WAIT, 0, 2000, SAME, SAME, 0, 0},
    {"a read that failed, within the renew deadline: still leader",
     1, 0, 0, -4000, -4000, LEADER_READ_FAILED, NULL, 0, LEADER_WAIT, 1, 2000, SAME, SAME, 0, 0},
    {"a read that failed past the renew deadline: step down",
     1, 0, 0, -11000, -11000, LEADER_READ_FAILED, NULL, 0, LEADER_WAIT, 0, 2000, SAME, SAME, 0, 0},
    /* writes */
    {"written: leader, renewed now, next renewal in a retry period",
     0, 0, 0, NEVER, -20000, LEADER_WRITTEN, NULL, 1, LEADER_WAIT, 1, 2000, 0, 0, 0, 1},
    {"renewed: still leader",
     1, 0, 0, -2000, -2000, LEADER_WRITTEN, NULL, 1, LEADER_WAIT, 1, 2000, 0, 0, 1, 1},
    {"409 on write: another candidate wrote first, wait a retry period",
     0, 0, 0, NEVER, -16000, LEADER_WRITE_FAILED, NULL, 0, LEADER_WAIT, 0, 2000, SAME, SAME, 0, 0},
    {"409 on renew within the renew deadline: still leader, read it again next",
     1, 0, 0, -3000, -3000, LEADER_WRITE_FAILED, NULL, 0, LEADER_WAIT, 1, 2000, SAME, SAME, 1, 0},
    {"a renew that failed past the renew deadline: step down",
     1, 0, 0, -10500, -10500, LEADER_WRITE_FAILED, NULL, 0, LEADER_WAIT, 0, 2000, SAME, SAME, 1, 0},
    /* issue 10: a renewal is one PUT of the Lease we hold (our last
     * write's answer), not a GET and a PUT; read only after a conflict or
     * an unknown outcome */
    {"leader holding its Lease at next_try: renew it, no read",
     1, 0, 0, -2000, -2000, LEADER_TICK, NULL, 0, LEADER_RENEW, 1, SAME, SAME, SAME, 1, 1},
    {"holding it, a call in flight: wait",
     1, 1, 0, -2000, -2000, LEADER_TICK, NULL, 0, LEADER_WAIT, 1, SAME, SAME, SAME, 1, 1},
    {"holding it, before next_try: wait",
     1, 0, 1, -2000, -2000, LEADER_TICK, NULL, 0, LEADER_WAIT, 1, SAME, SAME, SAME, 1, 1},
    {"a read replaces what we held",
     1, 0, 0, -2000, -2000, LEADER_READ, "me", 0, LEADER_RENEW, 1, SAME, SAME, SAME, 1, 0},
    /* time passing */
    {"idle at next_try: read the Lease",
     0, 0, 0, NEVER, NEVER, LEADER_TICK, NULL, 0, LEADER_GET, 0, SAME, SAME, SAME, 0, 0},
    {"idle before next_try: wait",
     0, 0, 1, NEVER, NEVER, LEADER_TICK, NULL, 0, LEADER_WAIT, 0, SAME, SAME, SAME, 0, 0},
    {"a call in flight: wait for it",
     0, 1, -5000, NEVER, NEVER, LEADER_TICK, NULL, 0, LEADER_WAIT, 0, SAME, SAME, SAME, 0, 0},
    {"leader at next_try: read, then renew",
     1, 0, 0, -2000, -2000, LEADER_TICK, NULL, 0, LEADER_GET, 1, SAME, SAME, SAME, 0, 0},
    {"exactly the renew deadline: still leader",
     1, 0, 1, -10000, -10000, LEADER_TICK, NULL, 0, LEADER_WAIT, 1, SAME, SAME, SAME, 0, 0},
    {"renew deadline passed without renewal: step down, before another may take over",
     1, 0, 1, -10001, -10001, LEADER_TICK, NULL, 0, LEADER_WAIT, 0, SAME, SAME, SAME, 0, 0},
    /* a partitioned leader's GET hangs until its timeout: the deadline
     * must not wait for it */
    {"renew deadline passed while a read hangs: step down now",
     1, 1, -500, -10500, -10500, LEADER_TICK, NULL, 0, LEADER_WAIT, 0, SAME, SAME, SAME, 0, 0},
};
/* clang-format on */

static const char *step_name(leader_step s)
{
    static const char *const names[] = {"wait", "get", "create", "take", "renew"};
    return (size_t)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static int same_time(int64_t want, uint64_t before, uint64_t got)
{
    return want == SAME ? got == before : got == at(want);
}

static void test_decide_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const leader_row *r = &rows[i];
        leader_state st = {
            .is_leader = r->is_leader,
            .busy = r->busy,
            .next_try = at(r->next_try),
            .last_renew = at(r->last_renew),
            .observed_at = at(r->observed_at),
            .held = r->held,
        };
        leader_observation obs = {r->event, r->holder, r->changed};
        uint64_t now = at(0);
        leader_decision d = leader_decide(&cfg, &st, &obs, now);
        const leader_state *s = &d.state;
        int ok = d.step == r->step && s->is_leader == r->leader_after && s->busy == st.busy &&
                 s->held == r->held_after &&
                 same_time(r->next_try_after, st.next_try, s->next_try) &&
                 same_time(r->last_renew_after, st.last_renew, s->last_renew) &&
                 same_time(r->observed_at_after, st.observed_at, s->observed_at);
        if (!ok) {
            print_error("row \"%s\": %s, leader %d, busy %d, next_try %lld, last_renew %lld, "
                        "observed_at %lld ms (from now); want %s, leader %d\n",
                        r->name, step_name(d.step), s->is_leader, s->busy,
                        ((long long)s->next_try - T * MS) / MS,
                        ((long long)s->last_renew - T * MS) / MS,
                        ((long long)s->observed_at - T * MS) / MS, step_name(r->step),
                        r->leader_after);
            fail();
        }
        /* whoever leads renewed within the renew deadline, so it stops
         * before a lease duration has passed: no two leaders */
        if (s->is_leader && now > s->last_renew + cfg.renew_deadline_ns) {
            print_error("row \"%s\": leader past the renew deadline\n", r->name);
            fail();
        }
    }
}

/* A leader cut off from the apiserver, ticking every 100 ms while its
 * calls fail: it leads until the renew deadline and not a tick longer,
 * which is before a candidate elsewhere can take the Lease over (a lease
 * duration after the last renewal it saw). */
static void test_partitioned_leader_steps_down_in_time(void **state)
{
    (void)state;
    leader_state st = {.is_leader = 1, .last_renew = at(0), .next_try = at(2000),
                       .observed_at = at(0)};
    uint64_t stepped_down = 0;
    for (int64_t ms = 100; ms <= 20000 && stepped_down == 0; ms += 100) {
        leader_observation obs = {LEADER_TICK, NULL, 0};
        leader_decision d = leader_decide(&cfg, &st, &obs, at(ms));
        if (d.step == LEADER_GET) {
            /* the read fails at once (connection refused) */
            leader_observation failed = {LEADER_READ_FAILED, NULL, 0};
            d = leader_decide(&cfg, &d.state, &failed, at(ms));
        }
        st = d.state;
        if (!st.is_leader)
            stepped_down = at(ms);
    }
    assert_int_equal(stepped_down, at(10100));
    assert_true(stepped_down < at(0) + cfg.lease_ns);
}

/* ---- reading the Lease -------------------------------------------------------- */

static void test_lease_read(void **state)
{
    (void)state;
    size_t len;
    char *json = kf_read("lease.json", &len);
    leader_lease l;
    assert_int_equal(leader_lease_read(json, len, &l), 0);
    assert_string_equal(l.holder, "ota-controller-7d9f8b6c5-x2k4p");
    assert_string_equal(l.record, "ota-controller-7d9f8b6c5-x2k4p|2026-11-21T21:29:58.731042Z|15");
    assert_string_equal(l.resource_version, "48213");
    assert_string_equal(l.acquire_time, "2026-11-21T21:02:11.204518Z");
    assert_int_equal(l.transitions, 3);
    free(json);

    /* released (holder "", as leader_release writes it) or never held */
    static const char released[] =
        "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{"
        "\"name\":\"ota-controller\",\"namespace\":\"kube-system\",\"resourceVersion\":\"9\"},"
        "\"spec\":{\"holderIdentity\":\"\",\"leaseDurationSeconds\":1,"
        "\"renewTime\":\"2026-11-21T21:30:00.000001Z\",\"leaseTransitions\":4}}";
    assert_int_equal(leader_lease_read(released, strlen(released), &l), 0);
    assert_string_equal(l.holder, "");
    assert_string_equal(l.record, "|2026-11-21T21:30:00.000001Z|1");
    assert_int_equal(l.transitions, 4);
    static const char bare[] = "{\"metadata\":{\"name\":\"ota-controller\"},\"spec\":{}}";
    assert_int_equal(leader_lease_read(bare, strlen(bare), &l), 0);
    assert_string_equal(l.holder, "");
    assert_string_equal(l.record, "||0");
    assert_string_equal(l.acquire_time, "");
    assert_int_equal(l.transitions, 0);

    /* only len bytes are read */
    assert_int_equal(leader_lease_read(bare, strlen(bare) - 1, &l), -1);
    static const char not_json[] = "<html>502 Bad Gateway</html>";
    assert_int_equal(leader_lease_read(not_json, strlen(not_json), &l), -1);
    assert_int_equal(leader_lease_read("", 0, &l), -1);
}

/* A body nested n deep inside spec: {"spec":{"holderIdentity":"x","x":[[...]]}}. */
static char *nested(size_t n, size_t *len)
{
    static const char head[] = "{\"spec\":{\"holderIdentity\":\"x\",\"x\":";
    size_t arrays = n - 2; /* the two objects count */
    size_t size = sizeof(head) - 1 + 2 * arrays + 2;
    char *b = malloc(size + 1);
    assert_non_null(b);
    memcpy(b, head, sizeof(head) - 1);
    size_t o = sizeof(head) - 1;
    memset(b + o, '[', arrays);
    o += arrays;
    memset(b + o, ']', arrays);
    o += arrays;
    b[o++] = '}';
    b[o++] = '}';
    b[o] = '\0';
    *len = o;
    return b;
}

/* yajl frees its tree recursively: a hostile body a million levels deep
 * overflowed the stack when the Lease was parsed without a bound. */
static void test_lease_nesting_bounded(void **state)
{
    (void)state;
    leader_lease l;
    size_t len;
    char *b = nested(64, &len);
    assert_int_equal(leader_lease_read(b, len, &l), 0);
    assert_string_equal(l.holder, "x");
    free(b);
    b = nested(65, &len);
    assert_int_equal(leader_lease_read(b, len, &l), -1);
    free(b);
    b = nested(1000000, &len);
    assert_int_equal(leader_lease_read(b, len, &l), -1);
    free(b);
}

/* ---- what is said about failing Lease calls ------------------------------- */

typedef struct say_row {
    const char *name;
    /* before: failing, last said with (code, reason, call) at said_at */
    int failing;
    long code;
    const char *reason;
    leader_step said_call;
    int64_t said_at, first_at;
    unsigned long unsaid, total;
    /* the call that ended at T, and what the election does next */
    leader_step call;
    leader_event event;
    long end_code;
    const char *end_reason;
    leader_step next;
    /* wanted */
    leader_say say;
    const char *hint; /* the whole hint; NULL: "" */
    unsigned long failures;
    int failing_after;
} say_row;

#define NS_HINT "create namespace kube-system or pass --leader-elect-resource-namespace"
#define RBAC_HINT "grant get/create/update on leases (coordination.k8s.io) in namespace " \
                  "kube-system to the controller's service account (and create that namespace " \
                  "if it is missing)"
#define HEALTHY 0, 0, "", LEADER_WAIT, NEVER, NEVER, 0, 0
#define FAILING_NS(said, unsaid) 1, 404, "NotFound", LEADER_CREATE, said, -4000, unsaid, 2 + unsaid
/* failing for 4 s with (code, reason, call), said 2 s ago */
#define FAILING(code, reason, call) 1, code, reason, call, -2000, -4000, 0, 2

/* clang-format off */
static const say_row say_rows[] = {
    /* the first failure, by cause: said at once, with what to do */
    {"create 404 (no namespace): warn with the namespace hint",
     HEALTHY, LEADER_CREATE, LEADER_WRITE_FAILED, 404, "NotFound", LEADER_WAIT,
     LEADER_SAY_FAILED, NS_HINT, 1, 1},
    {"get 403: warn with the RBAC hint",
     HEALTHY, LEADER_GET, LEADER_READ_FAILED, 403, "Forbidden", LEADER_WAIT,
     LEADER_SAY_FAILED, RBAC_HINT, 1, 1},
    {"create 403 (get granted, create not): the RBAC hint",
     HEALTHY, LEADER_CREATE, LEADER_WRITE_FAILED, 403, "Forbidden", LEADER_WAIT,
     LEADER_SAY_FAILED, RBAC_HINT, 1, 1},
    {"take 403 (update not granted): the RBAC hint",
     HEALTHY, LEADER_TAKE, LEADER_WRITE_FAILED, 403, "Forbidden", LEADER_WAIT,
     LEADER_SAY_FAILED, RBAC_HINT, 1, 1},
    {"401: check the credentials",
     HEALTHY, LEADER_GET, LEADER_READ_FAILED, 401, "Unauthorized", LEADER_WAIT,
     LEADER_SAY_FAILED, "check the token or client certificate the controller uses", 1, 1},
    {"renew 404: the Lease was deleted under us, not the namespace",
     HEALTHY, LEADER_RENEW, LEADER_WRITE_FAILED, 404, "NotFound", LEADER_WAIT,
     LEADER_SAY_FAILED, "the Lease was deleted meanwhile: it is made again at the next try", 1, 1},
    {"500: warn, no hint",
     HEALTHY, LEADER_GET, LEADER_READ_FAILED, 500, "InternalError", LEADER_WAIT,
     LEADER_SAY_FAILED, NULL, 1, 1},
    {"no answer (code 0): warn",
     HEALTHY, LEADER_RENEW, LEADER_WRITE_FAILED, 0, "", LEADER_WAIT,
     LEADER_SAY_FAILED, NULL, 1, 1},
    {"200 with a Lease that does not parse: a failed read",
     HEALTHY, LEADER_GET, LEADER_READ_FAILED, 200, "", LEADER_WAIT,
     LEADER_SAY_FAILED, NULL, 1, 1},
    /* the same cause again: at most once a minute */
    {"the same failure 2 s later: nothing",
     FAILING_NS(-2000, 0), LEADER_CREATE, LEADER_WRITE_FAILED, 404, "NotFound", LEADER_WAIT,
     LEADER_SAY_NOTHING, NULL, 0, 1},
    {"the same failure just under a minute later: nothing",
     FAILING_NS(-59999, 28), LEADER_CREATE, LEADER_WRITE_FAILED, 404, "NotFound", LEADER_WAIT,
     LEADER_SAY_NOTHING, NULL, 0, 1},
    {"the same failure a minute later: said again, counting the unsaid",
     FAILING_NS(-60000, 29), LEADER_CREATE, LEADER_WRITE_FAILED, 404, "NotFound", LEADER_WAIT,
     LEADER_SAY_FAILED, NS_HINT, 30, 1},
    /* another cause: at once */
    {"another code: said at once",
     FAILING_NS(-2000, 0), LEADER_GET, LEADER_READ_FAILED, 403, "Forbidden", LEADER_WAIT,
     LEADER_SAY_FAILED, RBAC_HINT, 1, 1},
    {"another reason, same code: said at once",
     FAILING(500, "InternalError", LEADER_GET),
     LEADER_GET, LEADER_READ_FAILED, 500, "ServerTimeout", LEADER_WAIT,
     LEADER_SAY_FAILED, NULL, 1, 1},
    {"another verb, same code and reason: said at once",
     FAILING(403, "Forbidden", LEADER_GET),
     LEADER_TAKE, LEADER_WRITE_FAILED, 403, "Forbidden", LEADER_WAIT,
     LEADER_SAY_FAILED, RBAC_HINT, 1, 1},
    {"take then renew 403: both are update, the same cause",
     FAILING(403, "Forbidden", LEADER_TAKE),
     LEADER_RENEW, LEADER_WRITE_FAILED, 403, "Forbidden", LEADER_WAIT,
     LEADER_SAY_NOTHING, NULL, 0, 1},
    /* neither a failure nor the election working */
    {"409 on a write: the election at work, not a failure",
     HEALTHY, LEADER_TAKE, LEADER_WRITE_FAILED, 409, "Conflict", LEADER_WAIT,
     LEADER_SAY_NOTHING, NULL, 0, 0},
    {"409 while failing: nothing, still failing",
     FAILING_NS(-2000, 0), LEADER_CREATE, LEADER_WRITE_FAILED, 409, "AlreadyExists", LEADER_WAIT,
     LEADER_SAY_NOTHING, NULL, 0, 1},
    {"get 404 while failing (no Lease yet, a create follows): not cleared",
     FAILING_NS(-2000, 0), LEADER_GET, LEADER_READ_MISSING, 404, "NotFound", LEADER_CREATE,
     LEADER_SAY_NOTHING, NULL, 0, 1},
    {"a read that leads to a take while failing: not cleared yet",
     FAILING(403, "Forbidden", LEADER_TAKE),
     LEADER_GET, LEADER_READ, 200, "", LEADER_TAKE,
     LEADER_SAY_NOTHING, NULL, 0, 1},
    /* the election works again */
    {"written while failing: cleared, counting every failure",
     FAILING_NS(-2000, 5), LEADER_CREATE, LEADER_WRITTEN, 201, "", LEADER_WAIT,
     LEADER_SAY_CLEARED, NULL, 7, 0},
    {"another's live Lease read while failing (we follow): cleared",
     FAILING_NS(-2000, 0), LEADER_GET, LEADER_READ, 200, "", LEADER_WAIT,
     LEADER_SAY_CLEARED, NULL, 2, 0},
    {"written, nothing failing: nothing",
     HEALTHY, LEADER_RENEW, LEADER_WRITTEN, 200, "", LEADER_WAIT,
     LEADER_SAY_NOTHING, NULL, 0, 0},
};
/* clang-format on */

static void test_say_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(say_rows) / sizeof(say_rows[0]); i++) {
        const say_row *r = &say_rows[i];
        leader_say_state st;
        memset(&st, 0, sizeof(st));
        st.failing = r->failing;
        st.code = r->code;
        snprintf(st.reason, sizeof(st.reason), "%s", r->reason);
        st.call = r->said_call;
        st.said_at = at(r->said_at);
        st.first_at = at(r->first_at);
        st.unsaid = r->unsaid;
        st.total = r->total;
        leader_call_end end = {r->call, r->event, r->end_code, r->end_reason, r->next};
        leader_say_decision d = leader_say_decide(&cfg, &st, &end, at(0));
        const char *hint = r->hint != NULL ? r->hint : "";
        if (d.say != r->say || strcmp(d.hint, hint) != 0 ||
            (r->say != LEADER_SAY_NOTHING && d.failures != r->failures) ||
            d.state.failing != r->failing_after)
            fail_msg("%s: say %d hint \"%s\" failures %lu failing %d, want %d \"%s\" %lu %d",
                     r->name, d.say, d.hint, d.failures, d.state.failing, r->say, hint,
                     r->failures, r->failing_after);
        if (d.say == LEADER_SAY_FAILED &&
            (d.state.said_at != at(0) || d.state.unsaid != 0 || d.state.code != r->end_code))
            fail_msg("%s: the cause said is not remembered", r->name);
        if (d.say == LEADER_SAY_CLEARED && d.lasted_ns != at(0) - at(r->first_at))
            fail_msg("%s: lasted %llu ns", r->name, (unsigned long long)d.lasted_ns);
    }
}

/* The namespace is missing for three minutes (a get 404, a create 404,
 * every 2 s), then made: three warnings (at 0, 60 and 120 s), not ninety,
 * then one info line. */
static void test_say_missing_namespace(void **state)
{
    (void)state;
    leader_say_state st;
    memset(&st, 0, sizeof(st));
    int warned = 0, cleared = 0;
    unsigned long said = 0;
    for (int64_t ms = 0; ms <= 180000; ms += 2000) {
        int made = ms == 180000;
        leader_call_end get = {LEADER_GET, LEADER_READ_MISSING, 404, "NotFound", LEADER_CREATE};
        leader_say_decision d = leader_say_decide(&cfg, &st, &get, at(ms));
        assert_int_equal(d.say, LEADER_SAY_NOTHING);
        st = d.state;
        leader_call_end create = {LEADER_CREATE, made ? LEADER_WRITTEN : LEADER_WRITE_FAILED,
                                  made ? 201 : 404, made ? "" : "NotFound", LEADER_WAIT};
        d = leader_say_decide(&cfg, &st, &create, at(ms + 10));
        st = d.state;
        if (d.say == LEADER_SAY_FAILED) {
            assert_int_equal(ms % 60000, 0);
            assert_string_equal(d.hint, NS_HINT);
            assert_int_equal(d.failures, warned == 0 ? 1 : 30);
            said += d.failures;
            warned++;
        } else if (d.say == LEADER_SAY_CLEARED) {
            assert_int_equal(d.failures, 90);
            assert_int_equal(d.lasted_ns, 180000 * MS);
            cleared++;
        }
    }
    assert_int_equal(warned, 3);
    assert_int_equal(said, 61); /* the last 29 were never said: the clear counts them */
    assert_int_equal(cleared, 1);
    assert_false(st.failing);
}

static void test_status_read(void **state)
{
    (void)state;
    char reason[16], message[256];
    static const char ns404[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"namespaces \\\"nope\\\" not found\",\"reason\":\"NotFound\","
        "\"details\":{\"name\":\"nope\",\"kind\":\"namespaces\"},\"code\":404}";
    kapi_status_read(ns404, strlen(ns404), reason, sizeof(reason), message, sizeof(message));
    assert_string_equal(reason, "NotFound");
    assert_string_equal(message, "namespaces \"nope\" not found");
    static const char rbac403[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"leases.coordination.k8s.io \\\"ota-controller\\\" is forbidden: User "
        "\\\"system:serviceaccount:ota-system:ota-controller\\\" cannot get resource "
        "\\\"leases\\\" in API group \\\"coordination.k8s.io\\\" in the namespace "
        "\\\"ota-system\\\"\",\"reason\":\"Forbidden\",\"details\":{\"name\":\"ota-controller\","
        "\"group\":\"coordination.k8s.io\",\"kind\":\"leases\"},\"code\":403}";
    kapi_status_read(rbac403, strlen(rbac403), reason, sizeof(reason), message, 40);
    assert_string_equal(reason, "Forbidden");
    assert_string_equal(message, "leases.coordination.k8s.io \"ota-control"); /* cut to 39 */
    /* a reason longer than its buffer is cut too */
    static const char long_reason[] = "{\"reason\":\"RequestEntityTooLarge\",\"message\":\"m\"}";
    kapi_status_read(long_reason, strlen(long_reason), reason, sizeof(reason), message,
                       sizeof(message));
    assert_string_equal(reason, "RequestEntityTo");
    /* not a Status: nothing */
    static const char html[] = "<html>502 Bad Gateway</html>";
    kapi_status_read(html, strlen(html), reason, sizeof(reason), message, sizeof(message));
    assert_string_equal(reason, "");
    assert_string_equal(message, "");
    kapi_status_read(NULL, 0, reason, sizeof(reason), message, sizeof(message));
    assert_string_equal(reason, "");
    static const char wrong_types[] = "{\"reason\":7,\"message\":[\"x\"]}";
    kapi_status_read(wrong_types, strlen(wrong_types), reason, sizeof(reason), message,
                       sizeof(message));
    assert_string_equal(reason, "");
    assert_string_equal(message, "");
    /* only len bytes are read */
    kapi_status_read(ns404, strlen(ns404) - 1, reason, sizeof(reason), message,
                       sizeof(message));
    assert_string_equal(reason, "");
    /* a hostile depth is refused, not recursed into */
    size_t len;
    char *deep = nested(100000, &len);
    kapi_status_read(deep, len, reason, sizeof(reason), message, sizeof(message));
    assert_string_equal(message, "");
    free(deep);
}

/* Giving the Lease up at shutdown.  The CI failure it answers: SIGTERM
 * while a renewal was in flight sent the release with the resourceVersion
 * the renewal was about to replace; the renewal landed first, the release
 * got 409 and the successor waited out the whole lease. */
typedef struct release_row {
    const char *name;
    leader_release_in in;
    leader_release_step want;
} release_row;

/* clang-format off */
static const release_row release_rows[] = {
    {"begins, ours, nothing in flight: write the release",
     {.ours = 1}, LEADER_RELEASE_PUT},
    {"begins with a renewal in flight: wait for its answer",
     {.busy = 1, .ours = 1}, LEADER_RELEASE_WAIT},
    {"begins, not ours (following): nothing to give up",
     {.ours = 0}, LEADER_RELEASE_DONE},
    {"begins, not leader but a read in flight: wait, it may say ours",
     {.busy = 1}, LEADER_RELEASE_WAIT},
    {"the awaited renewal landed: release over its resourceVersion",
     {.started = 1, .ended = LEADER_WRITTEN, .code = 200, .ours = 1}, LEADER_RELEASE_PUT},
    {"the awaited renewal got 409: read before writing",
     {.started = 1, .ended = LEADER_WRITE_FAILED, .code = 409, .ours = 1}, LEADER_RELEASE_GET},
    {"the awaited read says ours: release",
     {.started = 1, .ended = LEADER_READ, .code = 200, .ours = 1}, LEADER_RELEASE_PUT},
    {"the awaited read says another holds it: done",
     {.started = 1, .ended = LEADER_READ, .code = 200, .ours = 0}, LEADER_RELEASE_DONE},
    {"the awaited read found no Lease: done",
     {.started = 1, .ended = LEADER_READ_MISSING, .code = 404}, LEADER_RELEASE_DONE},
    {"the awaited read failed: done (the Lease expires)",
     {.started = 1, .ended = LEADER_READ_FAILED, .code = 503, .ours = 1}, LEADER_RELEASE_DONE},
    {"the release was written: done",
     {.started = 1, .release_write = 1, .ended = LEADER_WRITTEN, .code = 200, .calls = 1},
     LEADER_RELEASE_DONE},
    {"the release got 409 (a renewal landed first): read again",
     {.started = 1, .release_write = 1, .ended = LEADER_WRITE_FAILED, .code = 409, .ours = 1,
      .calls = 1}, LEADER_RELEASE_GET},
    {"the read after a 409 says still ours: release again",
     {.started = 1, .ended = LEADER_READ, .code = 200, .ours = 1, .calls = 2},
     LEADER_RELEASE_PUT},
    {"the release got 409 with no calls left: done",
     {.started = 1, .release_write = 1, .ended = LEADER_WRITE_FAILED, .code = 409, .ours = 1,
      .calls = LEADER_RELEASE_CALLS}, LEADER_RELEASE_DONE},
    {"a read says ours but no calls left: done",
     {.started = 1, .ended = LEADER_READ, .code = 200, .ours = 1,
      .calls = LEADER_RELEASE_CALLS}, LEADER_RELEASE_DONE},
    {"the release failed otherwise (500): done",
     {.started = 1, .release_write = 1, .ended = LEADER_WRITE_FAILED, .code = 500, .ours = 1,
      .calls = 1}, LEADER_RELEASE_DONE},
    {"the release got no answer: done",
     {.started = 1, .release_write = 1, .ended = LEADER_WRITE_FAILED, .code = 0, .ours = 1,
      .calls = 1}, LEADER_RELEASE_DONE},
};
/* clang-format on */

static void test_release_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(release_rows) / sizeof(release_rows[0]); i++) {
        const release_row *r = &release_rows[i];
        leader_release_step got = leader_release_next(&r->in);
        if (got != r->want)
            fail_msg("%s: step %d, want %d", r->name, (int)got, (int)r->want);
    }
}

/* The release never loops: whatever the apiserver answers, it is done
 * within LEADER_RELEASE_CALLS calls. */
static void test_release_bounded(void **state)
{
    (void)state;
    leader_release_in in = {.ours = 1};
    int calls = 0;
    for (leader_release_step s = leader_release_next(&in); s != LEADER_RELEASE_DONE;
         s = leader_release_next(&in)) {
        assert_true(s == LEADER_RELEASE_GET || s == LEADER_RELEASE_PUT);
        calls++;
        assert_true(calls <= LEADER_RELEASE_CALLS);
        /* every write 409s, every read says still ours */
        in = (leader_release_in){.started = 1, .release_write = s == LEADER_RELEASE_PUT,
                                 .ended = s == LEADER_RELEASE_PUT ? LEADER_WRITE_FAILED
                                                                   : LEADER_READ,
                                 .code = s == LEADER_RELEASE_PUT ? 409 : 200, .ours = 1,
                                 .calls = calls};
    }
    assert_int_equal(calls, LEADER_RELEASE_CALLS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_table),
        cmocka_unit_test(test_partitioned_leader_steps_down_in_time),
        cmocka_unit_test(test_lease_read),
        cmocka_unit_test(test_lease_nesting_bounded),
        cmocka_unit_test(test_say_table),
        cmocka_unit_test(test_say_missing_namespace),
        cmocka_unit_test(test_status_read),
        cmocka_unit_test(test_release_table),
        cmocka_unit_test(test_release_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

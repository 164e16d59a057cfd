/*
 * test_leader.c - the Lease election's decision as a table (client-go's
 * rules: take a free or locally expired Lease, renew ours, wait while
 * another holds a live one, step down when the renew deadline passes
 * without a renewal, before another candidate may take over), and the
 * Lease as read from the apiserver's JSON, its nesting bounded.
 */
#include "kobj_fixture.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_table),
        cmocka_unit_test(test_partitioned_leader_steps_down_in_time),
        cmocka_unit_test(test_lease_read),
        cmocka_unit_test(test_lease_nesting_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

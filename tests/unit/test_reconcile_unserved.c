/*
 * test_reconcile_unserved.c - the controller's decisions about requests it
 * cannot serve (issue 19 §1): a pre-pull request on a pod that no OTA
 * DaemonSet with a revision owns (orphaned by --cascade=orphan, owner gone,
 * owner not OTA, no revision) is answered PodImageReady False PullImageFail
 * with the reason in words and a Warning Event, and a PodNeedUpgrade True
 * nothing justifies any more is removed; and the deadline of a DaemonSet's
 * Jobs, with where it comes from (a bad annotation is said once, as a
 * Warning Event on the DaemonSet).
 *
 * On the main of before, each of these pods was skipped: no action at all.
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

#define POD "edge-agent-x7k2p"
#define POD_UID "u-x7k2p"

/* ---- reconcile_serve_of, the pure decision ------------------------------------- */

static void test_serve_of_table(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_ds(&w, "edge-agent", DS_UID, "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 0);
    add_ds(&w, "plain", OTHER_DS_UID, "{}", 0);
    add_ds(&w, "going", "ds-going", "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 1);
    add_pod_full(&w, "orphan", "u-orphan", NULL, NODE, OLD, PULLING(RT1), 0);
    add_pod_full(&w, "owned", "u-owned", DS_UID, NODE, OLD, PULLING(RT1), 0);
    const kobj *orphan = store_get(&w.pods, "u-orphan"), *owned = store_get(&w.pods, "u-owned");
    const kobj *ota = store_get(&w.ds, DS_UID), *plain = store_get(&w.ds, OTHER_DS_UID),
               *going = store_get(&w.ds, "ds-going");
    static const struct {
        int pod; /* 0 orphan, 1 owned */
        int owner; /* 0 none, 1 OTA, 2 not OTA, 3 deleting */
        int has_revision;
        reconcile_serve want;
        const char *why; /* NULL: not written */
    } rows[] = {
        {0, 0, 0, RECONCILE_NO_OWNER,
         "pod edge/orphan has no owner: its DaemonSet was deleted with --cascade=orphan, or it "
         "never had one"},
        {1, 0, 0, RECONCILE_OWNER_GONE,
         "the owner of pod edge/owned (uid " DS_UID ") is not a DaemonSet that exists"},
        {1, 2, 1, RECONCILE_NOT_OTA,
         "DaemonSet edge/plain, the owner of pod edge/owned, is not an OTA DaemonSet (annotation "
         OTA_ANN_UPDATE_STRATEGY " is not OTA)"},
        {1, 1, 0, RECONCILE_NO_REVISION,
         "DaemonSet edge/edge-agent, the owner of pod edge/owned, has no ControllerRevision"},
        {1, 3, 1, RECONCILE_WAIT, NULL},
        {1, 1, 1, RECONCILE_SERVED, NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const kobj *owners[] = {NULL, ota, plain, going};
        char why[512] = "(untouched)";
        reconcile_serve got = reconcile_serve_of(rows[i].pod ? owned : orphan,
                                                 owners[rows[i].owner], rows[i].has_revision, why,
                                                 sizeof(why));
        if (got != rows[i].want)
            fail_msg("row %zu: %d, want %d", i, (int)got, (int)rows[i].want);
        assert_string_equal(why, rows[i].why != NULL ? rows[i].why : "(untouched)");
    }
    /* cut to the buffer, NUL-terminated */
    char small[10];
    assert_int_equal(reconcile_serve_of(orphan, NULL, 0, small, sizeof(small)),
                     RECONCILE_NO_OWNER);
    assert_string_equal(small, "pod edge/");
    world_free(&w);
}

/* ---- through a pass ------------------------------------------------------------ */

/* The one status write of an unserved request: PullImageFail with why, and
 * PodNeedUpgrade removed (unless keep_nu); and its Warning Event with the
 * same words. */
static void expect_unserved_nu(const world *w, const char *why, int keep_nu)
{
    char want[1024];
    snprintf(want, sizeof(want), OTA_MSG_UNSERVED_PREFIX "%s", why);
    expect_count(w, ACTION_PATCH_POD_STATUS, 1);
    const action *a = the(w, ACTION_PATCH_POD_STATUS, POD);
    assert_string_equal(a->key, "status:" POD_UID "@" POD_RV ":unserved");
    assert_int_equal(a->outcome, ACTION_OUTCOME_PULL_FAILED);
    patched ir = patch_cond(a, OTA_COND_IMAGE_READY);
    assert_int_equal(ir.n, keep_nu ? 1 : 2);
    assert_string_equal(ir.status, "False");
    assert_string_equal(ir.reason, OTA_REASON_PULL_FAIL);
    assert_string_equal(ir.message, want);
    /* no earlier than the request */
    assert_string_equal(ir.ltt, NOW);
    patched nu = patch_cond(a, OTA_COND_NEED_UPGRADE);
    assert_true(keep_nu ? !nu.found : nu.found && nu.deleted);
    const action *e = find_event(w, OTA_EVENT_FAILED, POD);
    assert_non_null(e);
    yajl_val ev = tree(e);
    assert_string_equal(str_at(ev, (const char *[]){"type", NULL}), "Warning");
    assert_string_equal(str_at(ev, (const char *[]){"message", NULL}), want);
    yajl_tree_free(ev);
    expect_count(w, ACTION_CREATE_JOB, 0);
    expect_total(w, 2);
}

static void expect_unserved(const world *w, const char *why)
{
    expect_unserved_nu(w, why, 0);
}

/* The reproduction of the issue: the DaemonSet was deleted with
 * --cascade=orphan (the GC dropped the pod's ownerReference), and a node
 * user's request sat in WaitPullImage forever. */
static void test_orphan_request_failed(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod_full(&w, POD, POD_UID, NULL, NODE, OLD, PULLING(RT1), 0);
    run(&w);
    expect_unserved(&w, "pod edge/" POD " has no owner: its DaemonSet was deleted with "
                        "--cascade=orphan, or it never had one");
    /* the executor's note: the pod and why, for its "pre-pull finished" line */
    const action *a = the(&w, ACTION_PATCH_POD_STATUS, POD);
    assert_string_equal(a->note.subject, "edge/" POD);
    assert_non_null(strstr(a->note.reason, "has no owner"));
    world_free(&w);
}

static void test_owner_gone_request_failed(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_pod(&w, POD, POD_UID, OLD, PULLING(RT1)); /* owned by DS_UID, not cached */
    run(&w);
    /* the request is answered; PodNeedUpgrade is left to the garbage
     * collector, which deletes the pod or drops its reference next */
    expect_unserved_nu(&w, "the owner of pod edge/" POD " (uid " DS_UID ") is not a DaemonSet "
                           "that exists", 1);
    /* without a request: nothing, not one write per pod of a DaemonSet
     * deleted in the background */
    store_delete(&w.pods, POD_UID);
    add_pod(&w, POD, POD_UID, OLD, "[" READY "," NU("True", H) "]");
    run(&w);
    expect_total(&w, 0);
    world_free(&w);
}

static void test_not_ota_request_failed(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    store_delete(&w.ds, DS_UID);
    /* the admin removed the annotation */
    add_ds(&w, "edge-agent", DS_UID, "{}", 0);
    add_pod(&w, POD, POD_UID, OLD, PULLING(RT1));
    run(&w);
    expect_unserved(&w, "DaemonSet edge/edge-agent, the owner of pod edge/" POD
                        ", is not an OTA DaemonSet (annotation " OTA_ANN_UPDATE_STRATEGY
                        " is not OTA)");
    world_free(&w);
}

static void test_no_revision_request_failed(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_ds(&w, "edge-agent", DS_UID, "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 0);
    add_pod(&w, POD, POD_UID, OLD, PULLING(RT1));
    run(&w);
    expect_unserved(&w, "DaemonSet edge/edge-agent, the owner of pod edge/" POD
                        ", has no ControllerRevision");
    world_free(&w);
}

/* No request, but a PodNeedUpgrade True that nothing justifies: removed,
 * with no Event (nobody asked), and the pre-pull state left as it is. */
static void test_stale_need_upgrade_removed(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_pod_full(&w, POD, POD_UID, NULL, NODE, OLD,
                 "[" READY "," NU("True", H) "," IR("True", OTA_REASON_PULL_SUCCESS, H, RT1) "]",
                 0);
    run(&w);
    expect_total(&w, 1);
    const action *a = the(&w, ACTION_PATCH_POD_STATUS, POD);
    assert_string_equal(a->key, "status:" POD_UID "@" POD_RV ":need-upgrade-cleared");
    assert_int_equal(a->outcome, ACTION_OUTCOME_NONE);
    patched nu = patch_cond(a, OTA_COND_NEED_UPGRADE);
    assert_int_equal(nu.n, 1);
    assert_true(nu.found && nu.deleted);
    assert_non_null(strstr(a->note.reason, "has no owner"));
    world_free(&w);
}

/* What stays untouched: a pod with nothing of ours on it; a pod whose
 * PodNeedUpgrade is False; a pod being deleted; a pod whose DaemonSet is
 * being deleted (the GC decides first); the pod after the write (Current,
 * with a failure on it: no second write, no loop). */
static void test_unserved_quiet(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_ds(&w, "going", "ds-going", "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 1);
    add_pod_full(&w, "plain", "u-plain", NULL, NODE, OLD, "[" READY "]", 0);
    add_pod_full(&w, "nu-false", "u-nu-false", NULL, NODE, OLD, "[" READY "," NU("False", H) "]",
                 0);
    add_pod_full(&w, "deleted", "u-deleted", NULL, NODE, OLD, PULLING(RT1), 1);
    add_pod_full(&w, "ds-going", "u-ds-going", "ds-going", NODE, OLD, PULLING(RT1), 0);
    add_pod_full(&w, "answered", "u-answered", NULL, NODE, OLD,
                 "[" READY ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\""
                 OTA_REASON_PULL_FAIL "\",\"message\":\"" OTA_MSG_UNSERVED_PREFIX "x\"}]",
                 0);
    run(&w);
    expect_total(&w, 0);
    world_free(&w);
}

/* A request written with no PodNeedUpgrade at all (while the webhook was
 * down) on an orphan is answered too; there is nothing to remove. */
static void test_request_without_need_upgrade(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_pod_full(&w, POD, POD_UID, NULL, NODE, OLD,
                 "[" READY "," IR("False", "", H, RT1) "]", 0);
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 1);
    patched ir = patch_cond(the(&w, ACTION_PATCH_POD_STATUS, POD), OTA_COND_IMAGE_READY);
    assert_int_equal(ir.n, 1);
    assert_string_equal(ir.reason, OTA_REASON_PULL_FAIL);
    assert_non_null(find_event(&w, OTA_EVENT_FAILED, POD));
    world_free(&w);
}

/* ---- the deadline and where it comes from ---------------------------------- */

static void test_deadline_source(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_ds(&w, "a", "ds-a", "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT
                            "\":\"900\"}", 0);
    add_ds(&w, "b", "ds-b", "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 0);
    add_ds(&w, "c", "ds-c", "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT
                            "\":\"10m\"}", 0);
    add_ds(&w, "d", "ds-d", "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT
                            "\":5}", 0);
    static const struct {
        const char *uid;
        long want;
        reconcile_deadline_source source;
        const char *bad;
    } rows[] = {
        {"ds-a", 900, RECONCILE_DEADLINE_ANNOTATION, NULL},
        {"ds-b", 600, RECONCILE_DEADLINE_FLAG, NULL},
        {"ds-c", 600, RECONCILE_DEADLINE_BAD_ANNOTATION, "10m"},
        {"ds-d", 600, RECONCILE_DEADLINE_BAD_ANNOTATION, "(not a string)"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const kobj *ds = store_get(&w.ds, rows[i].uid);
        reconcile_deadline_source source = (reconcile_deadline_source)-1;
        assert_int_equal(reconcile_deadline(ds, &w.cfg, &source), rows[i].want);
        assert_int_equal(source, rows[i].source);
        if (rows[i].bad == NULL)
            assert_null(ds->u.ds.bad_timeout);
        else
            assert_string_equal(ds->u.ds.bad_timeout, rows[i].bad);
    }
    assert_string_equal(reconcile_deadline_source_name(RECONCILE_DEADLINE_BAD_ANNOTATION),
                        "--pull-timeout (annotation " OTA_ANN_PREPULL_TIMEOUT " is not valid)");
    world_free(&w);
}

/* A bad annotation: the Job gets --pull-timeout and says where it came
 * from; the DaemonSet gets one Warning Event, not repeated once sent. */
static void test_bad_timeout_said(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    store_delete(&w.ds, DS_UID);
    add_ds(&w, "edge-agent", DS_UID,
           "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT "\":\"10m\"}", 0);
    add_node(&w, NODE, "[]");
    add_pod(&w, POD, POD_UID, OLD, PULLING(RT1));
    run(&w);
    const action *job = the(&w, ACTION_CREATE_JOB, NULL);
    assert_int_equal(job->note.deadline_s, 600);
    assert_int_equal(job->note.deadline_source, RECONCILE_DEADLINE_BAD_ANNOTATION);
    if (strstr(job->body, "\"activeDeadlineSeconds\": 600") == NULL)
        fail_msg("%s", job->body);
    const action *e = find_event(&w, OTA_EVENT_BAD_TIMEOUT, "edge-agent");
    assert_non_null(e);
    assert_string_equal(e->key, RECONCILE_TIMEOUT_EVENT_KEY DS_UID "|10m");
    assert_true(e->note.warn);
    yajl_val ev = tree(e);
    assert_string_equal(str_at(ev, (const char *[]){"type", NULL}), "Warning");
    assert_string_equal(str_at(ev, (const char *[]){"involvedObject", "kind", NULL}), "DaemonSet");
    assert_string_equal(str_at(ev, (const char *[]){"message", NULL}),
                        "annotation " OTA_ANN_PREPULL_TIMEOUT " is 10m, not a whole number of "
                        "seconds from 30 to 86400: pre-pull Jobs get the default deadline of "
                        "600 s (--pull-timeout)");
    yajl_tree_free(ev);
    assert_int_equal(strset_add(&w.events_sent, e->key), 0);
    run(&w);
    assert_null(find_event(&w, OTA_EVENT_BAD_TIMEOUT, "edge-agent"));
    world_free(&w);
}

/* A good annotation: no Event, and the Job says the annotation set it. */
static void test_good_timeout_quiet(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_node(&w, NODE, "[]");
    add_pod(&w, POD, POD_UID, OLD, PULLING(RT1));
    run(&w);
    const action *job = the(&w, ACTION_CREATE_JOB, NULL);
    assert_int_equal(job->note.deadline_s, 900);
    assert_int_equal(job->note.deadline_source, RECONCILE_DEADLINE_ANNOTATION);
    assert_int_equal(count_events(&w, OTA_EVENT_BAD_TIMEOUT), 0);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serve_of_table),
        cmocka_unit_test(test_orphan_request_failed),
        cmocka_unit_test(test_owner_gone_request_failed),
        cmocka_unit_test(test_not_ota_request_failed),
        cmocka_unit_test(test_no_revision_request_failed),
        cmocka_unit_test(test_stale_need_upgrade_removed),
        cmocka_unit_test(test_unserved_quiet),
        cmocka_unit_test(test_request_without_need_upgrade),
        cmocka_unit_test(test_deadline_source),
        cmocka_unit_test(test_bad_timeout_said),
        cmocka_unit_test(test_good_timeout_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

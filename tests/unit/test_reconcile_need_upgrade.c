/*
 * test_reconcile_need_upgrade.c - the controller's decisions: PodNeedUpgrade
 * marking (docs/design.md §5 "PodNeedUpgrade"): True on exactly the stale pods
 * of an OTA DaemonSet, False on the current ones, written only when it changes
 * something and with the pod's resourceVersion as precondition; keys in flight
 * left out of a pass; a new revision dropping old image state and stale Jobs;
 * and the DaemonSet's one Event per revision.
 *
 * The world, the pass and the readers of actions: reconcile_fixture.h.
 */
#include "reconcile_fixture.h"

/* ---- PodNeedUpgrade ----------------------------------------------------------- */

typedef struct nu_row {
    const char *pod, *uid, *owner, *hash, *conditions;
    int deleting;
    const char *want; /* the status patched, or NULL for no action */
} nu_row;

static const nu_row nu_rows[] = {
    /* stale pods without the condition, current ones without it */
    {"stale-a", "u-stale-a", DS_UID, OLD, "[" READY "]", 0, "True"},
    {"stale-b", "u-stale-b", DS_UID, MID, "[]", 0, "True"},
    {"current-a", "u-current-a", DS_UID, H, "[" READY "]", 0, "False"},
    /* already right: nothing to write */
    {"stale-ok", "u-stale-ok", DS_UID, OLD, "[" READY "," NU("True", H) "]", 0, NULL},
    {"current-ok", "u-current-ok", DS_UID, H, "[" NU("False", H) "," READY "]", 0, NULL},
    /* right status, message about an older revision */
    {"stale-old-msg", "u-stale-old-msg", DS_UID, OLD, "[" NU("True", MID) "]", 0, "True"},
    /* the pod came back to H (a rollback made H newest again) */
    {"current-was-stale", "u-current-was-stale", DS_UID, H, "[" NU("True", H) "]", 0, "False"},
    /* being deleted (the upgrade): left alone */
    {"deleting", "u-deleting", DS_UID, OLD, "[]", 1, NULL},
    /* not an OTA DaemonSet's, or no controller at all */
    {"rolling", "u-rolling", OTHER_DS_UID, OLD, "[]", 0, NULL},
    {"orphan", "u-orphan", NULL, OLD, "[]", 0, NULL},
    /* owned by the OTA DaemonSet being deleted */
    {"ds-deleting", "u-ds-deleting", "ds-gone-uid", OLD, "[]", 0, NULL},
};

static void test_need_upgrade(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_ds(&w, "rolling", OTHER_DS_UID, "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"AdvancedRollingUpdate\"}",
           0);
    add_ds(&w, "gone", "ds-gone-uid", "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 1);
    add_rev(&w, "ds-gone-uid", "abcabcabc", 4, "[]", "[{\"name\":\"g\",\"image\":\"g:1\"}]", "[]");
    size_t n_rows = sizeof(nu_rows) / sizeof(nu_rows[0]), want = 0;
    for (size_t i = 0; i < n_rows; i++) {
        const nu_row *r = &nu_rows[i];
        add_pod_full(&w, r->pod, r->uid, r->owner, NODE, r->hash, r->conditions, r->deleting);
        want += r->want != NULL;
    }
    run(&w);
    expect_total(&w, want + 1); /* and one NewRevision Event on the DaemonSet */
    for (size_t i = 0; i < n_rows; i++) {
        const nu_row *r = &nu_rows[i];
        const action *a = find(&w, ACTION_PATCH_POD_STATUS, r->pod);
        if (r->want == NULL) {
            if (a != NULL)
                fail_msg("%s: patched: %s", r->pod, a->body);
            continue;
        }
        if (a == NULL) {
            dump(&w.out);
            fail_msg("%s: not patched", r->pod);
        }
        assert_string_equal(a->namespace, NS);
        char key[256];
        snprintf(key, sizeof(key), "status:%s@" POD_RV ":need-upgrade:%s:%s", r->uid, r->want, H);
        assert_string_equal(a->key, key);
        patched p = patch_cond(a, OTA_COND_NEED_UPGRADE);
        assert_int_equal(p.n, 1);
        assert_true(p.found && !p.deleted);
        assert_string_equal(p.status, r->want);
        assert_string_equal(p.message, REV_MSG(H));
        assert_int_equal(p.has_reason, 0); /* DESIGN §2: reason empty */
        assert_string_equal(p.ltt, NOW);
        /* the precondition: the version the decision was made from */
        yajl_val body = tree(a);
        assert_string_equal(str_at(body, (const char *[]){"metadata", "resourceVersion", NULL}),
                            POD_RV);
        yajl_tree_free(body);
    }
    /* level-triggered: the same caches give the same actions */
    size_t before = w.out.n;
    run(&w);
    expect_total(&w, before);
    world_free(&w);
}

/* issue 10 §1: keys the executor has in flight or did lately are left
 * out of a pass (their bodies are not built): during a rollout a pass
 * costs the new pods' patches, not one body per pod every 100 ms.  The
 * two sets are both read; a key in neither is emitted as before. */
static void test_skip_keys(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_pod(&w, "pod-a", "u-a", OLD, "[" READY "]");
    add_pod(&w, "pod-b", "u-b", OLD, "[" READY "]");
    add_pod(&w, "pod-c", "u-c", MID, "[" READY "]");
    add_pod(&w, "pod-d", "u-d", H, "[" READY "]");
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 4);
    strset in_flight, recent;
    strset_init(&in_flight);
    strset_init(&recent);
    assert_int_equal(strset_add(&in_flight, "status:u-a@" POD_RV ":need-upgrade:True:" H), 0);
    assert_int_equal(strset_add(&recent, "status:u-d@" POD_RV ":need-upgrade:False:" H), 0);
    /* a key about another revision does not hide this one */
    assert_int_equal(strset_add(&recent, "status:u-b@" POD_RV ":need-upgrade:True:" MID), 0);
    w.in.skip[0] = &in_flight;
    w.in.skip[1] = &recent;
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 2);
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, "pod-a"));
    assert_null(find(&w, ACTION_PATCH_POD_STATUS, "pod-d"));
    assert_non_null(find(&w, ACTION_PATCH_POD_STATUS, "pod-b"));
    assert_non_null(find(&w, ACTION_PATCH_POD_STATUS, "pod-c"));
    strset_free(&in_flight);
    strset_free(&recent);
    world_free(&w);
}

/* No revision yet (the DaemonSet controller has not written one): nothing
 * to compare with, nothing written. */
static void test_no_revision(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    add_ds(&w, "edge-agent", DS_UID, "{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 0);
    add_pod(&w, "p", "u-p", OLD, "[]");
    run(&w);
    expect_total(&w, 0);
    world_free(&w);
}

/* ---- a new revision --------------------------------------------------------- */

static void test_new_revision_drops_old_state(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    char old_job[64], other_job[64], current_job[64];
    /* Ready at MID, with the Job that pulled it */
    add_pod(&w, "ready-mid", "u-ready-mid", OLD,
            "[" READY "," NU("True", MID) "," IR("True", OTA_REASON_PULL_SUCCESS, MID, RT1) "]");
    add_job(&w, job_name_of(old_job, "ready-mid", "u-ready-mid", MID, RT1), "u-ready-mid", MID, RT1,
            JOB_COMPLETE, 0);
    /* Pulling at MID, its Job running; and a Job of OLD already going away */
    add_pod(&w, "pulling-mid", "u-pulling-mid", OLD,
            "[" NU("True", MID) "," IR("False", OTA_REASON_WAIT_PULL, MID, RT1) "]");
    add_job(&w, job_name_of(other_job, "pulling-mid", "u-pulling-mid", MID, RT1), "u-pulling-mid",
            MID, RT1, JOB_RUNNING, 0);
    add_job(&w, "ota-prepull-pulling-mid-deadbeef", "u-pulling-mid", OLD, RT1, JOB_RUNNING, 1);
    /* already asking for H before its PodNeedUpgrade caught up: its image
     * state is about H and stays; its Job for H stays */
    add_pod(&w, "asks-h", "u-asks-h", OLD,
            "[" NU("True", MID) "," IR("False", OTA_REASON_WAIT_PULL, H, RT2) "]");
    add_job(&w, job_name_of(current_job, "asks-h", "u-asks-h", H, RT2), "u-asks-h", H, RT2,
            JOB_RUNNING, 0);
    /* Failed at MID */
    add_pod(&w, "failed-mid", "u-failed-mid", OLD,
            "[" NU("True", MID) ",{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\""
            OTA_REASON_PULL_FAIL "\",\"message\":\"pull image job j failed: ErrImagePull: x\"}]");
    run(&w);

    /* PodNeedUpgrade to H, and PodImageReady of MID dropped */
    static const char *const dropped[] = {"ready-mid", "pulling-mid", "failed-mid"};
    for (size_t i = 0; i < 3; i++) {
        const action *a = the(&w, ACTION_PATCH_POD_STATUS, dropped[i]);
        patched nu = patch_cond(a, OTA_COND_NEED_UPGRADE), ir = patch_cond(a, OTA_COND_IMAGE_READY);
        assert_int_equal(nu.n, 2);
        assert_string_equal(nu.status, "True");
        assert_string_equal(nu.message, REV_MSG(H));
        assert_true(ir.found && ir.deleted);
        /* a delete directive carries nothing else */
        assert_string_equal(ir.status, "");
        assert_string_equal(ir.message, "");
    }
    const action *a = the(&w, ACTION_PATCH_POD_STATUS, "asks-h");
    patched nu = patch_cond(a, OTA_COND_NEED_UPGRADE);
    assert_int_equal(nu.n, 1);
    assert_string_equal(nu.message, REV_MSG(H));
    expect_count(&w, ACTION_PATCH_POD_STATUS, 4);

    /* the Jobs of MID deleted; the one going away and the one for H not */
    expect_count(&w, ACTION_DELETE_JOB, 2);
    const action *d = the(&w, ACTION_DELETE_JOB, old_job);
    assert_string_equal(d->namespace, NS);
    assert_null(d->body);
    char key[128];
    snprintf(key, sizeof(key), "delete-job:job-uid-%s", old_job);
    assert_string_equal(d->key, key);
    the(&w, ACTION_DELETE_JOB, other_job);
    assert_null(find(&w, ACTION_DELETE_JOB, current_job));
    /* nothing is started before the pods say what they want at H */
    expect_count(&w, ACTION_CREATE_JOB, 0);
    expect_count(&w, ACTION_GET_NODE, 0);
    expect_total(&w, 7); /* and the DaemonSet's NewRevision Event */
    world_free(&w);
}

/* A revision without its hash label (not one the DaemonSet controller
 * wrote) is never the newest, whatever its number. */
static void test_revision_without_hash(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    put(&w.revs, KOBJ_REVISION, NULL,
        "{\"metadata\":{\"name\":\"edge-agent-manual\",\"namespace\":\"" NS "\",\"uid\":"
        "\"rev-manual\",\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"uid\":\"" DS_UID "\","
        "\"controller\":true}]},\"revision\":10}");
    add_pod(&w, "p", "u-p", OLD, "[]");
    run(&w);
    expect_total(&w, 2); /* the patch, and the DaemonSet's NewRevision Event */
    patched nu = patch_cond(the(&w, ACTION_PATCH_POD_STATUS, "p"), OTA_COND_NEED_UPGRADE);
    assert_string_equal(nu.message, REV_MSG(H));
    world_free(&w);
}

/* ---- the DaemonSet's Event -------------------------------------------------- */

/* A new revision marks its pods, and says so once on the DaemonSet: one
 * Event with the count, not one per pod; nothing when no pod is marked,
 * nothing again once sent. */
static void test_revision_event_once_per_revision(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    standard(&w);
    add_pod(&w, "a", "u-a", OLD, "[]");
    add_pod(&w, "b", "u-b", MID, "[" NU("True", MID) "]");
    add_pod(&w, "c", "u-c", OLD, "[" READY "," NU("True", H) "]"); /* marked before */
    add_pod(&w, "d", "u-d", H, "[]");                               /* current: not marked */
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 3);
    assert_int_equal(count_events(&w, OTA_EVENT_REVISION_MARKED), 1);
    const action *e = find_event(&w, OTA_EVENT_REVISION_MARKED, "edge-agent");
    assert_non_null(e);
    yajl_val v = tree(e);
    assert_string_equal(str_at(v, (const char *[]){"involvedObject", "kind", NULL}), "DaemonSet");
    assert_string_equal(str_at(v, (const char *[]){"involvedObject", "apiVersion", NULL}),
                        "apps/v1");
    assert_string_equal(str_at(v, (const char *[]){"involvedObject", "uid", NULL}), DS_UID);
    assert_string_equal(str_at(v, (const char *[]){"metadata", "namespace", NULL}), NS);
    assert_string_equal(str_at(v, (const char *[]){"type", NULL}), "Normal");
    assert_string_equal(str_at(v, (const char *[]){"message", NULL}),
                        "marked 2 pods PendingUpgrade for revision " H);
    yajl_tree_free(v);
    assert_string_equal(e->namespace, NS);
    assert_string_equal(e->note.subject, NS "/edge-agent");
    assert_string_equal(e->note.reason, H);
    assert_int_equal(e->note.count, 2);
    /* sent: the next pass (the patches not seen yet) does not send it again */
    assert_int_equal(strset_add(&w.events_sent, e->key), 0);
    run(&w);
    expect_count(&w, ACTION_PATCH_POD_STATUS, 3);
    assert_int_equal(count_events(&w, OTA_EVENT_REVISION_MARKED), 0);
    world_free(&w);

    /* every pod already marked: no Event */
    world_init(&w);
    standard(&w);
    add_pod(&w, "c", "u-c", OLD, "[" READY "," NU("True", H) "]");
    add_pod(&w, "d", "u-d", H, "[" NU("False", H) "]");
    run(&w);
    expect_total(&w, 0);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_revision_event_once_per_revision),
        cmocka_unit_test(test_need_upgrade),
        cmocka_unit_test(test_skip_keys),
        cmocka_unit_test(test_no_revision),
        cmocka_unit_test(test_revision_without_hash),
        cmocka_unit_test(test_new_revision_drops_old_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

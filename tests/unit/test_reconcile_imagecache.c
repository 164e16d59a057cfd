/*
 * test_reconcile_imagecache.c - the ImageCache glue of a pass (docs/design.md
 * "ImageCache controller: mechanics"): nothing is written before discovery
 * says how; a new cache's start goes alone (with our CRD its record first,
 * the Processing status read back from it on the next pass; one PUT
 * keeping every field with kube-fledged's), once per version read; once
 * the object holds the action, the Jobs follow (targets as containers,
 * owned by the cache, pinned); the containers' outcomes make the final
 * status (a container queued behind a slow pull is not judged), every
 * target's outcome goes on a Job that ends and is read back after a
 * restart; the end's Event only with its status write; Jobs of another
 * action are deleted only while an action runs; a cache kube-fledged
 * finished is adopted by its record alone (a metadata patch with ours, a
 * PUT keeping the status with kube-fledged's); a pass asks to be woken
 * when a periodic refresh is due (action_list.wake_after_s).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "reconcile_fixture.h"

#define IC_NS "kube-fledged"
#define IC_UID "ic-uid-1"
#define T0 "2026-11-21T21:29:00Z"
#define HASH16 "0123456789abcdef"
#define IMG_OK "registry.example.com/ic/ok:1.0"
#define IMG_BAD "registry.example.com/ic/Bad:1.0"
#define PULL_ID "pull/ImageCacheCreate/" T0 "/" HASH16
#define RECORD "{\\\"hash\\\":\\\"" HASH16 "\\\",\\\"start\\\":\\\"" T0 "\\\"}"

static store ics;

static void ic_world(world *w, int served)
{
    world_init(w);
    store_init(&ics, kobj_free_any, kobj_uid);
    w->in.imagecaches = &ics;
    w->in.ic_status_served = served;
    w->cfg.ic_pull_deadline_s = 300;
    for (int i = 1; i <= 2; i++)
        put(&w->node_states, KOBJ_NODE_STATE, i == 1 ? "node-1" : "node-2",
            "{\"metadata\":{\"name\":\"node-%d\",\"uid\":\"n%d\",\"labels\":{"
            "\"kubernetes.io/hostname\":\"host-%d\"}},\"status\":{\"conditions\":[{\"type\":"
            "\"Ready\",\"status\":\"True\"}],\"images\":[]}}",
            i, i, i);
}

static void ic_world_free(world *w)
{
    store_free(&ics);
    world_free(w);
}

/* The cache; status and annotations as JSON members ("" for none). */
static void add_cache(const char *annotations, const char *status)
{
    put(&ics, KOBJ_IMAGECACHE, NULL,
        "{\"apiVersion\":\"kubefledged.io/v1alpha2\",\"kind\":\"ImageCache\",\"metadata\":{"
        "\"name\":\"c1\",\"namespace\":\"" IC_NS "\",\"uid\":\"" IC_UID "\",\"resourceVersion\":"
        "\"77\",\"labels\":{\"team\":\"edge\"}%s},\"spec\":{\"cacheSpec\":[{\"images\":[\"" IMG_OK
        "\",\"" IMG_BAD "\"]}]}%s,\"future\":{\"x\":[1,2.50]}}",
        annotations, status);
}

#define PROCESSING                                                                                 \
    ",\"status\":{\"status\":\"Processing\",\"reason\":\"ImageCacheCreate\",\"message\":"          \
    "\"Images are being pulled on to the nodes. Please view the status after some time\","        \
    "\"startTime\":\"" T0 "\"}"

/* A Job of the cache on node with identity id; pod: its containerStatuses
 * JSON, or NULL for no pod. */
static void add_ic_job(world *w, const char *node, const char *id, const char *pod)
{
    put(&w->jobs, KOBJ_JOB, NULL,
        "{\"metadata\":{\"name\":\"ota-ic-c1-%s\",\"namespace\":\"" IC_NS "\",\"uid\":\"j-%s-%s\","
        "\"labels\":{\"" OTA_LABEL_MANAGED_BY "\":\"" OTA_MANAGED_BY_VALUE "\"},\"annotations\":{\""
        OTA_ANN_JOB_SPEC_HASH "\":\"%s\"},\"ownerReferences\":[{\"uid\":\"" IC_UID "\","
        "\"controller\":true}]},\"spec\":{\"template\":{\"spec\":{\"nodeName\":\"%s\","
        "\"containers\":[{\"name\":\"pull-0\",\"image\":\"" IMG_OK "\"},{\"name\":\"pull-1\","
        "\"image\":\"" IMG_BAD "\"}]}}},\"status\":{\"active\":1,\"startTime\":\"" T0 "\"}}",
        node, node, id, id, node);
    if (pod != NULL)
        put(&w->job_pods, KOBJ_JOB_POD, NULL,
            "{\"metadata\":{\"name\":\"ota-ic-c1-%s-x\",\"namespace\":\"" IC_NS "\",\"uid\":"
            "\"p-%s-%s\",\"labels\":{\"job-name\":\"ota-ic-c1-%s\"}},\"spec\":{\"nodeName\":\"%s\"},"
            "\"status\":{\"containerStatuses\":%s}}",
            node, node, id, node, node, pod);
}

static const action *only(const world *w, action_kind kind)
{
    for (size_t i = 0; i < w->out.n; i++)
        if (w->out.v[i].kind == kind)
            return &w->out.v[i];
    dump(&w->out);
    fail_msg("no %s action", action_kind_name(kind));
    return NULL;
}

static void test_nothing_before_discovery(void **state)
{
    (void)state;
    world w;
    ic_world(&w, -1);
    add_cache("", "");
    run(&w);
    expect_total(&w, 1);
    expect_count(&w, ACTION_GET_IC_DISCOVERY, 1);
    ic_world_free(&w);
}

static void test_new_cache_our_crd(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache("", "");
    run(&w);
    /* the record alone, under the version read, naming the action it
     * starts: the Processing status follows once it is read back */
    expect_total(&w, 1);
    const action *a = only(&w, ACTION_PATCH_IC);
    assert_string_equal(a->namespace, IC_NS);
    assert_string_equal(a->name, "c1");
    yajl_val t = tree(a);
    const char *p_rv[] = {"metadata", "resourceVersion", NULL};
    const char *p_rec[] = {"metadata", "annotations", OTA_ANN_IC_SPEC, NULL};
    const char *p_start[] = {"metadata", "annotations", OTA_ANN_IC_START, NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_rv, yajl_t_string)), "77");
    const char *rec = YAJL_GET_STRING(yajl_tree_get(t, p_rec, yajl_t_string));
    assert_non_null(rec);
    assert_non_null(strstr(rec, NOW));
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_start, yajl_t_string)),
                        "ImageCacheCreate|" NOW);
    yajl_tree_free(t);
    ic_world_free(&w);
}

static void test_new_cache_upstream_crd(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 0);
    add_cache("", "");
    run(&w);
    expect_total(&w, 1);
    const action *a = only(&w, ACTION_PUT_IC);
    yajl_val t = tree(a);
    const char *p_rv[] = {"metadata", "resourceVersion", NULL};
    const char *p_label[] = {"metadata", "labels", "team", NULL};
    const char *p_future[] = {"future", "x", NULL};
    const char *p_rec[] = {"metadata", "annotations", OTA_ANN_IC_SPEC, NULL};
    const char *p_st[] = {"status", "status", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_rv, yajl_t_string)), "77");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_label, yajl_t_string)), "edge");
    assert_non_null(yajl_tree_get(t, p_future, yajl_t_array)); /* a field we do not know: kept */
    assert_non_null(yajl_tree_get(t, p_rec, yajl_t_string));   /* record and status in one */
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_st, yajl_t_string)), "Processing");
    assert_non_null(strstr(a->body, "2.50")); /* numbers as they came */
    yajl_tree_free(t);
    ic_world_free(&w);
}

/* Processing, its record not landed: the record first, and the Jobs,
 * one per node, targets as containers, owned by the cache. */
static void test_processing_makes_jobs(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache("", PROCESSING);
    run(&w);
    expect_count(&w, ACTION_PATCH_IC, 1);
    expect_count(&w, ACTION_PATCH_IC_STATUS, 0);
    expect_count(&w, ACTION_CREATE_JOB, 2);
    for (size_t i = 0; i < w.out.n; i++) {
        const action *a = &w.out.v[i];
        if (a->kind != ACTION_CREATE_JOB)
            continue;
        assert_string_equal(a->namespace, IC_NS);
        assert_true(strncmp(a->name, "ota-ic-c1-", 10) == 0);
        yajl_val t = tree(a);
        const char *p_c0[] = {"spec", "template", "spec", "containers", NULL};
        yajl_val cs = yajl_tree_get(t, p_c0, yajl_t_array);
        assert_int_equal(cs->u.array.len, 2);
        assert_string_equal(kobj_member_str(cs->u.array.values[1], "name"), "pull-1");
        const char *p_owner[] = {"metadata", "ownerReferences", NULL};
        yajl_val o = yajl_tree_get(t, p_owner, yajl_t_array)->u.array.values[0];
        assert_string_equal(kobj_member_str(o, "kind"), "ImageCache");
        assert_true(YAJL_IS_TRUE(kobj_member(o, "controller")));
        yajl_tree_free(t);
    }
    const action *meta = only(&w, ACTION_PATCH_IC);
    assert_non_null(strstr(meta->body, "\"resourceVersion\":\"77\""));
    ic_world_free(&w);
}

/* A node's images beyond 64 go into more Jobs, one per part, each its
 * own name; on the next pass every part's Job is the action's (none
 * deleted as an older action's, none made again). */
static void test_images_in_parts(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    w.cfg.max_pulls_per_node = 0; /* no per-node slot: every part at once */
    char images[70 * 40] = "";
    for (int i = 0; i < 70; i++)
        snprintf(images + strlen(images), sizeof(images) - strlen(images), "%s\"r.example.com/p%d:1\"",
                 i ? "," : "", i);
    put(&ics, KOBJ_IMAGECACHE, NULL,
        "{\"apiVersion\":\"kubefledged.io/v1alpha2\",\"kind\":\"ImageCache\",\"metadata\":{"
        "\"name\":\"c1\",\"namespace\":\"" IC_NS "\",\"uid\":\"" IC_UID "\",\"resourceVersion\":"
        "\"77\"},\"spec\":{\"cacheSpec\":[{\"images\":[%s]}]}" PROCESSING "}",
        images);
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 4);
    const char *names[4];
    size_t containers[4], n = 0;
    for (size_t i = 0; i < w.out.n; i++) {
        const action *a = &w.out.v[i];
        if (a->kind != ACTION_CREATE_JOB)
            continue;
        for (size_t k = 0; k < n; k++)
            assert_string_not_equal(names[k], a->name);
        names[n] = a->name;
        yajl_val t = tree(a);
        const char *p_c[] = {"spec", "template", "spec", "containers", NULL};
        containers[n++] = yajl_tree_get(t, p_c, yajl_t_array)->u.array.len;
        yajl_tree_free(t);
    }
    size_t big = 0, small = 0;
    for (size_t k = 0; k < n; k++) {
        big += containers[k] == 64;
        small += containers[k] == 6;
    }
    assert_int_equal(big, 2);
    assert_int_equal(small, 2);
    /* the four Jobs made (no pod yet): the next pass keeps them all */
    for (size_t i = 0; i < w.out.n; i++) {
        const action *a = &w.out.v[i];
        if (a->kind != ACTION_CREATE_JOB)
            continue;
        yajl_val t = tree(a);
        const char *p_id[] = {"metadata", "annotations", OTA_ANN_JOB_SPEC_HASH, NULL};
        const char *p_node[] = {"spec", "template", "spec", "nodeName", NULL};
        const char *p_c[] = {"spec", "template", "spec", "containers", NULL};
        char *cs = NULL;
        json_writer jw;
        assert_int_equal(json_writer_init(&jw, NULL), 0);
        json_tree(&jw, yajl_tree_get(t, p_c, yajl_t_array));
        cs = json_writer_take(&jw);
        put(&w.jobs, KOBJ_JOB, NULL,
            "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"" IC_NS "\",\"uid\":\"j-%s\","
            "\"labels\":{\"" OTA_LABEL_MANAGED_BY "\":\"" OTA_MANAGED_BY_VALUE "\"},"
            "\"annotations\":{\"" OTA_ANN_JOB_SPEC_HASH "\":\"%s\"},\"ownerReferences\":[{"
            "\"uid\":\"" IC_UID "\",\"controller\":true}]},\"spec\":{\"template\":{\"spec\":{"
            "\"nodeName\":\"%s\",\"containers\":%s}}},\"status\":{\"active\":1,"
            "\"startTime\":\"" T0 "\"}}",
            a->name, a->name, YAJL_GET_STRING(yajl_tree_get(t, p_id, yajl_t_string)),
            YAJL_GET_STRING(yajl_tree_get(t, p_node, yajl_t_string)), cs);
        free(cs);
        yajl_tree_free(t);
    }
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 0);
    expect_count(&w, ACTION_DELETE_JOB, 0);
    ic_world_free(&w);
}

#define PURGING                                                                                    \
    ",\"status\":{\"status\":\"Processing\",\"reason\":\"ImageCachePurge\",\"message\":"           \
    "\"Image cache is being purged. Please view the status after some time\","                       \
    "\"startTime\":\"" T0 "\"}"

/* A purge waits on a node while a pod of the cache's earlier Jobs is
 * there: its containers use the images (CRI-O refuses to remove them, and
 * a clean-clone CI run saw crictl fail so on the create's pull pods, their
 * Jobs deleted in the same pass the purge Jobs were made).  node-1 has the
 * create's Job (deleted now): no purge Job there yet; node-2 has none: its
 * purge Job is made.  Then node-1's Job is gone but its pod is still
 * there: still waiting.  The pod gone: node-1's purge Job is made. */
static void test_purge_waits_for_pull_pods(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    w.cfg.ic_purge_image = "registry.example.com/tools/crictl:1.30";
    w.cfg.cri_socket_path = "/run/containerd/containerd.sock";
    w.cfg.max_pulls_per_node = 0;
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\"}", PURGING);
    add_ic_job(&w, "node-1", PULL_ID, NULL);
    run(&w);
    expect_count(&w, ACTION_DELETE_JOB, 1);
    expect_count(&w, ACTION_CREATE_JOB, 1);
    const action *c = only(&w, ACTION_CREATE_JOB);
    yajl_val t = tree(c);
    const char *p_node[] = {"spec", "template", "spec", "nodeName", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_node, yajl_t_string)), "node-2");
    yajl_tree_free(t);

    /* the Job gone, a pod of the cache's (its name as ic_job_name makes
     * them) still on node-1 */
    store_free(&w.jobs);
    store_init(&w.jobs, kobj_free_any, kobj_uid);
    char name[PREPULL_JOB_NAME_MAX + 1];
    ic_job_name(name, "c1", IC_UID, "node-1", "pull/before");
    put(&w.job_pods, KOBJ_JOB_POD, NULL,
        "{\"metadata\":{\"name\":\"%s-x\",\"namespace\":\"" IC_NS "\",\"uid\":\"p-old\","
        "\"labels\":{\"job-name\":\"%s\"}},\"spec\":{\"nodeName\":\"node-1\"},\"status\":{"
        "\"containerStatuses\":[{\"name\":\"pull-0\",\"state\":{\"terminated\":{\"exitCode\":0}}}]}}",
        name, name);
    run(&w);
    for (size_t i = 0; i < w.out.n; i++)
        if (w.out.v[i].kind == ACTION_CREATE_JOB) {
            yajl_val u = tree(&w.out.v[i]);
            assert_string_not_equal(YAJL_GET_STRING(yajl_tree_get(u, p_node, yajl_t_string)),
                                    "node-1");
            yajl_tree_free(u);
        }
    store_free(&w.job_pods);
    store_init(&w.job_pods, kobj_free_any, kobj_uid);
    run(&w);
    int node1 = 0;
    for (size_t i = 0; i < w.out.n; i++)
        if (w.out.v[i].kind == ACTION_CREATE_JOB) {
            yajl_val u = tree(&w.out.v[i]);
            const char *nn = YAJL_GET_STRING(yajl_tree_get(u, p_node, yajl_t_string));
            node1 += nn != NULL && strcmp(nn, "node-1") == 0;
            yajl_tree_free(u);
        }
    assert_int_equal(node1, 1);
    ic_world_free(&w);
}

/* The outcomes: node-1 pulled both; node-2 pulled one, and the other's
 * name the kubelet will not try again.  Failed, one failures entry with
 * node-2's hostname label and the kubelet's words; the words on node-2's
 * Job, which ends (no container is open). */
static void test_outcomes_to_status(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\"}", PROCESSING);
    add_ic_job(&w, "node-1", PULL_ID,
               "[{\"name\":\"pull-0\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
               "{\"name\":\"pull-1\",\"state\":{\"running\":{}}}]");
    add_ic_job(&w, "node-2", PULL_ID,
               "[{\"name\":\"pull-0\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
               "{\"name\":\"pull-1\",\"state\":{\"waiting\":{\"reason\":\"InvalidImageName\","
               "\"message\":\"repository name must be lowercase\"}}}]");
    /* a Job of an action before: goes while this one runs */
    add_ic_job(&w, "node-1", "pull/ImageCacheCreate/2026-11-20T00:00:00Z/" HASH16, NULL);
    run(&w);
    expect_count(&w, ACTION_CREATE_JOB, 0);
    expect_count(&w, ACTION_DELETE_JOB, 1);
    const action *st = only(&w, ACTION_PATCH_IC_STATUS);
    yajl_val t = tree(st);
    const char *p_st[] = {"status", "status", NULL};
    const char *p_f[] = {"status", "failures", IMG_BAD, NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_st, yajl_t_string)), "Failed");
    yajl_val f = yajl_tree_get(t, p_f, yajl_t_array);
    assert_non_null(f);
    assert_int_equal(f->u.array.len, 1);
    assert_string_equal(kobj_member_str(f->u.array.values[0], "node"), "host-2");
    assert_string_equal(kobj_member_str(f->u.array.values[0], "reason"), "InvalidImageName");
    assert_string_equal(kobj_member_str(f->u.array.values[0], "message"),
                        "repository name must be lowercase");
    yajl_tree_free(t);
    const action *words = only(&w, ACTION_PATCH_JOB);
    assert_string_equal(words->name, "ota-ic-c1-node-2");
    assert_non_null(strstr(words->body, "\"ota-prepull/given-up-reason-1\":\"InvalidImageName\""));
    assert_non_null(strstr(words->body, "\"activeDeadlineSeconds\":1"));
    /* the pulled image's outcome goes on the Job too: its pod goes */
    assert_non_null(strstr(words->body, "\"ota-prepull/given-up-reason-0\":\"Pulled\""));
    expect_count(&w, ACTION_CREATE_EVENT, 1);
    ic_world_free(&w);
}

/* Finished: the last action's Jobs stay until the next one runs. */
static void test_finished_keeps_jobs(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\"}",
              ",\"status\":{\"status\":\"Succeeded\",\"reason\":\"ImageCacheCreate\",\"message\":"
              "\"All requested images pulled succesfully to respective nodes\",\"startTime\":\"" T0
              "\",\"completionTime\":\"" NOW "\"}");
    add_ic_job(&w, "node-1", PULL_ID, NULL);
    run(&w);
    expect_count(&w, ACTION_DELETE_JOB, 0);
    ic_world_free(&w);
}

/* The kubelet pulls one container after another: the first image's pull
 * ran past its deadline (still ContainerCreating) and fails; the second,
 * queued behind it, has not begun: it stays open, so the Job goes on. */
static void test_queued_pull_waits(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    w.cfg.ic_pull_deadline_s = 40; /* T0 is 60s ago */
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\"}", PROCESSING);
    const char *slow = "[{\"name\":\"pull-0\",\"state\":{\"waiting\":{\"reason\":"
                       "\"ContainerCreating\"}}},{\"name\":\"pull-1\",\"state\":{\"waiting\":"
                       "{\"reason\":\"ContainerCreating\"}}}]";
    add_ic_job(&w, "node-1", PULL_ID, slow);
    add_ic_job(&w, "node-2", PULL_ID, slow);
    run(&w);
    expect_count(&w, ACTION_PATCH_IC_STATUS, 0); /* still Processing */
    for (size_t i = 0; i < w.out.n; i++) {
        const action *a = &w.out.v[i];
        if (a->kind != ACTION_PATCH_JOB)
            continue;
        assert_non_null(strstr(a->body, "given-up-reason-0"));
        assert_null(strstr(a->body, "given-up-reason-1"));
        assert_null(strstr(a->body, "activeDeadlineSeconds")); /* not ended */
    }
    expect_count(&w, ACTION_PATCH_JOB, 2);
    ic_world_free(&w);
}

/* After a restart, a Job ended by its words and its pod gone: the
 * outcome kept on it reads as it was, the pulled image pulled. */
static void test_kept_outcomes_after_restart(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\"}", PROCESSING);
    for (int i = 1; i <= 2; i++)
        put(&w.jobs, KOBJ_JOB, NULL,
            "{\"metadata\":{\"name\":\"ota-ic-c1-node-%d\",\"namespace\":\"" IC_NS "\","
            "\"uid\":\"j-%d\",\"labels\":{\"" OTA_LABEL_MANAGED_BY "\":\"" OTA_MANAGED_BY_VALUE
            "\"},\"annotations\":{\"" OTA_ANN_JOB_SPEC_HASH "\":\"" PULL_ID "\","
            "\"ota-prepull/given-up-reason-0\":\"Pulled\",\"ota-prepull/given-up-reason-1\":"
            "\"%s\",\"ota-prepull/given-up-message-1\":\"%s\"},\"ownerReferences\":[{\"uid\":\""
            IC_UID "\",\"controller\":true}]},\"spec\":{\"template\":{\"spec\":{\"nodeName\":"
            "\"node-%d\",\"containers\":[{\"name\":\"pull-0\",\"image\":\"" IMG_OK "\"},"
            "{\"name\":\"pull-1\",\"image\":\"" IMG_BAD "\"}]}}},\"status\":{\"startTime\":\""
            T0 "\",\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":"
            "\"DeadlineExceeded\"}]}}",
            i, i, i == 1 ? "Pulled" : "InvalidImageName",
            i == 1 ? "" : "repository name must be lowercase", i);
    run(&w);
    const action *st = only(&w, ACTION_PATCH_IC_STATUS);
    yajl_val t = tree(st);
    const char *p_st[] = {"status", "status", NULL};
    const char *p_ok[] = {"status", "failures", IMG_OK, NULL};
    const char *p_f[] = {"status", "failures", IMG_BAD, NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_st, yajl_t_string)), "Failed");
    assert_null(yajl_tree_get(t, p_ok, yajl_t_any));
    yajl_val f = yajl_tree_get(t, p_f, yajl_t_array);
    assert_non_null(f);
    assert_int_equal(f->u.array.len, 1);
    assert_string_equal(kobj_member_str(f->u.array.values[0], "node"), "host-2");
    yajl_tree_free(t);
    ic_world_free(&w);
}

/* Hostile cost: each Job's words are found among its own rows, not among
 * every container of the cache (2 000 Jobs of 64 containers: 128 000
 * rows, once each, not 128 000 times each). */
static void test_words_cost_linear(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\"}", PROCESSING);
    char containers[64 * 80 + 2] = "[";
    for (int c = 0; c < 64; c++)
        snprintf(containers + strlen(containers), sizeof(containers) - strlen(containers),
                 "%s{\"name\":\"pull-%d\",\"image\":\"r.example.com/i%d:1\"}", c ? "," : "", c,
                 c);
    strcat(containers, "]");
    for (int i = 0; i < 2000; i++)
        put(&w.jobs, KOBJ_JOB, NULL,
            "{\"metadata\":{\"name\":\"ota-ic-c1-n%d\",\"namespace\":\"" IC_NS "\","
            "\"uid\":\"j-%d\",\"labels\":{\"" OTA_LABEL_MANAGED_BY "\":\"" OTA_MANAGED_BY_VALUE
            "\"},\"annotations\":{\"" OTA_ANN_JOB_SPEC_HASH "\":\"" PULL_ID "\"},"
            "\"ownerReferences\":[{\"uid\":\"" IC_UID "\",\"controller\":true}]},\"spec\":{"
            "\"template\":{\"spec\":{\"nodeName\":\"n%d\",\"containers\":%s}}},\"status\":{"
            "\"active\":1,\"startTime\":\"" T0 "\"}}",
            i, i, i, containers);
    /* Timing is no pass/fail here (the rule: benchmarks measure speed);
     * what is checked is the pass at that size: every Job still pulling
     * (no pod yet), so nothing is given up, nothing ended, the cache
     * still Processing.  Quadratic, this pass took 27 s, linear 0.3 s. */
    run(&w);
    expect_count(&w, ACTION_PATCH_JOB, 0);
    expect_count(&w, ACTION_DELETE_JOB, 0);
    expect_count(&w, ACTION_PATCH_IC_STATUS, 0);
    ic_world_free(&w);
}

/* The start is written once per version read: a pass a second later
 * that still reads the old object (the write in flight, or done and the
 * cache lags) sends no second Processing with a new startTime. */
static void test_start_once_per_version(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache("", "");
    run(&w);
    const action *a = only(&w, ACTION_PATCH_IC);
    strset inflight;
    strset_init(&inflight);
    assert_int_equal(strset_add(&inflight, a->key), 0);
    w.in.skip[0] = &inflight;
    w.in.now = "2026-11-21T21:30:01Z";
    w.in.now_epoch = NOW_EPOCH + 1;
    run(&w);
    expect_count(&w, ACTION_PATCH_IC_STATUS, 0);
    expect_count(&w, ACTION_PATCH_IC, 0);
    w.in.skip[0] = NULL;
    strset_free(&inflight);
    ic_world_free(&w);
}

/* The record of a start landed, its status not, and the spec was edited
 * since: the status written is that start's (its action and startTime,
 * once per version read), not a new one on the edited spec (which is the
 * next action's); no Job before it holds. */
static void test_start_read_back(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    /* RECORD's hash is not the spec's: the spec moved on since */
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\",\"" OTA_ANN_IC_START
              "\":\"ImageCacheCreate|" T0 "\"}",
              "");
    run(&w);
    expect_total(&w, 1);
    const action *a = only(&w, ACTION_PATCH_IC_STATUS);
    assert_string_equal(a->key, "ic-start:" IC_UID ":77");
    yajl_val t = tree(a);
    const char *p_st[] = {"status", "status", NULL}, *p_reason[] = {"status", "reason", NULL};
    const char *p_start[] = {"status", "startTime", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_st, yajl_t_string)), "Processing");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_reason, yajl_t_string)),
                        "ImageCacheCreate");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_start, yajl_t_string)), T0);
    yajl_tree_free(t);
    ic_world_free(&w);
}

/* The end's Event goes with its status write: while that write is in
 * flight (or was refused and is held), no Event says the action ended. */
static void test_event_with_status(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache(",\"annotations\":{\"" OTA_ANN_IC_SPEC "\":\"" RECORD "\"}", PROCESSING);
    const char *pulled = "[{\"name\":\"pull-0\",\"state\":{\"running\":{}}},"
                         "{\"name\":\"pull-1\",\"state\":{\"running\":{}}}]";
    add_ic_job(&w, "node-1", PULL_ID, pulled);
    add_ic_job(&w, "node-2", PULL_ID, pulled);
    run(&w);
    expect_count(&w, ACTION_CREATE_EVENT, 1); /* with its status */
    strset inflight;
    strset_init(&inflight);
    assert_int_equal(strset_add(&inflight, only(&w, ACTION_PATCH_IC_STATUS)->key), 0);
    w.in.skip[0] = &inflight;
    run(&w);
    expect_count(&w, ACTION_PATCH_IC_STATUS, 0);
    expect_count(&w, ACTION_CREATE_EVENT, 0);
    w.in.skip[0] = NULL;
    strset_free(&inflight);
    ic_world_free(&w);
}

/* A finished purge of kube-fledged's, as it left it: no record of ours. */
#define KF_PURGED                                                                                  \
    ",\"status\":{\"status\":\"Succeeded\",\"reason\":\"ImageCachePurge\",\"message\":"          \
    "\"All cached images succesfully deleted from respective nodes\",\"startTime\":\"" T0      \
    "\",\"completionTime\":\"" T0 "\"}"

/* Adopted with our CRD: the record alone, a metadata patch carrying the
 * resourceVersion; no status write, no Job, no Event. */
static void test_adopt_our_crd(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 1);
    add_cache("", KF_PURGED);
    run(&w);
    expect_total(&w, 1);
    const action *a = only(&w, ACTION_PATCH_IC);
    yajl_val t = tree(a);
    const char *p_rv[] = {"metadata", "resourceVersion", NULL};
    const char *p_rec[] = {"metadata", "annotations", OTA_ANN_IC_SPEC, NULL};
    const char *p_st[] = {"status", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_rv, yajl_t_string)), "77");
    const char *rec = YAJL_GET_STRING(yajl_tree_get(t, p_rec, yajl_t_string));
    assert_non_null(rec);
    assert_non_null(strstr(rec, "\"start\":\"" T0 "\""));
    assert_null(yajl_tree_get(t, p_st, yajl_t_any));
    yajl_tree_free(t);
    ic_world_free(&w);
}

/* Adopted with kube-fledged's CRD: one PUT, the record added and the
 * status exactly as read. */
static void test_adopt_upstream_crd(void **state)
{
    (void)state;
    world w;
    ic_world(&w, 0);
    add_cache("", KF_PURGED);
    run(&w);
    expect_total(&w, 1);
    const action *a = only(&w, ACTION_PUT_IC);
    yajl_val t = tree(a);
    const char *p_rec[] = {"metadata", "annotations", OTA_ANN_IC_SPEC, NULL};
    const char *p_st[] = {"status", "status", NULL}, *p_reason[] = {"status", "reason", NULL};
    const char *p_msg[] = {"status", "message", NULL};
    const char *p_done[] = {"status", "completionTime", NULL};
    assert_non_null(yajl_tree_get(t, p_rec, yajl_t_string));
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_st, yajl_t_string)), "Succeeded");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_reason, yajl_t_string)),
                        "ImageCachePurge");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_msg, yajl_t_string)),
                        "All cached images succesfully deleted from respective nodes");
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(t, p_done, yajl_t_string)), T0);
    yajl_tree_free(t);
    ic_world_free(&w);
}

#define SUCCEEDED_AT_T0                                                                            \
    ",\"status\":{\"status\":\"Succeeded\",\"reason\":\"ImageCacheCreate\",\"message\":"         \
    "\"All requested images pulled succesfully to respective nodes\",\"startTime\":\"" T0       \
    "\",\"completionTime\":\"" T0 "\"}"

/* The pass asks to be woken when the periodic refresh is due (T0 + the
 * period, NOW being T0 + 60 s), not a resync later; none without one.  A
 * cache kube-fledged finished (adopted in this pass: its record written,
 * the refresh counted from its completionTime all the same). */
static void test_refresh_wakes_the_pass(void **state)
{
    (void)state;
    static const struct {
        uint64_t period_s;
        long long want;
    } rows[] = {{600, 540}, {61, 1}, {0, 0}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        world w;
        ic_world(&w, 1);
        w.cfg.ic_refresh_s = rows[i].period_s;
        add_cache("", SUCCEEDED_AT_T0);
        run(&w);
        assert_int_equal(w.out.wake_after_s, rows[i].want);
        expect_total(&w, 1);
        expect_count(&w, ACTION_PATCH_IC, 1);
        ic_world_free(&w);
    }
}

static void test_wake_min(void **state)
{
    (void)state;
    assert_int_equal(reconcile_wake_min(0, 0), 0);
    assert_int_equal(reconcile_wake_min(0, -5), 0);
    assert_int_equal(reconcile_wake_min(0, 30), 30);
    assert_int_equal(reconcile_wake_min(30, 0), 30);
    assert_int_equal(reconcile_wake_min(30, 3), 3);
    assert_int_equal(reconcile_wake_min(3, 30), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_before_discovery),
        cmocka_unit_test(test_new_cache_our_crd),
        cmocka_unit_test(test_new_cache_upstream_crd),
        cmocka_unit_test(test_processing_makes_jobs),
        cmocka_unit_test(test_images_in_parts),
        cmocka_unit_test(test_purge_waits_for_pull_pods),
        cmocka_unit_test(test_outcomes_to_status),
        cmocka_unit_test(test_finished_keeps_jobs),
        cmocka_unit_test(test_queued_pull_waits),
        cmocka_unit_test(test_kept_outcomes_after_restart),
        cmocka_unit_test(test_words_cost_linear),
        cmocka_unit_test(test_start_once_per_version),
        cmocka_unit_test(test_event_with_status),
        cmocka_unit_test(test_start_read_back),
        cmocka_unit_test(test_adopt_our_crd),
        cmocka_unit_test(test_adopt_upstream_crd),
        cmocka_unit_test(test_refresh_wakes_the_pass),
        cmocka_unit_test(test_wake_min),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

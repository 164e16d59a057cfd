/*
 * test_kobj.c - decoding the few fields the controller caches, from objects
 * in the shapes the apiserver returns (tests/fixtures/objects/): DaemonSets
 * (OTA annotation in any case, timeout annotation valid or not), a
 * ControllerRevision's template (images, init images, pull secrets,
 * duplicates and holes), DaemonSet pods (OTA conditions among the kubelet's,
 * first of a type wins, the controller ownerReference, deletion), Jobs
 * (Complete, Failed with the first Failed condition's reason), Job pods (the
 * first waiting container that says something about a pull), Nodes
 * (status.images names).  Then kobj_parse_time and kobj_ref (the bounded
 * parser the objects come through is tested in test_json.c).
 */
#include "kobj_fixture.h"

#define DS_UID "3b1f6c2e-8d4a-4c7b-9e2f-1a5d7c9b0e3f"
#define POD_UID "9f3c1e7a-2b4d-4e8f-a1c3-5d7e9f0b2c4d"

/* ---- DaemonSets ----------------------------------------------------------- */

typedef struct ds_file_row {
    const char *file, *name, *uid;
    int ota;
    long timeout;
} ds_file_row;

static const ds_file_row ds_files[] = {
    {"daemonset-ota.json", "edge-agent", DS_UID, 1, 900},
    {"daemonset-ota-lowercase-bad-timeout.json", "edge-logger", "7c2d9e1f-4a6b-4f8c-b3d5-2e7a9c1f4b6d",
     1, 0},
    {"daemonset-advanced.json", "edge-proxy", "a4e8c2f6-1b3d-4e5f-8a7c-9d0b2e4f6a8c", 0, 0},
    /* its last-applied-configuration mentions OTA: only the annotation counts */
    {"daemonset-plain.json", "node-exporter", "c9f1a3e5-7b2d-4c6e-9f8a-0b1c3d5e7f9a", 0, 0},
};

static void test_daemonset_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(ds_files) / sizeof(ds_files[0]); i++) {
        const ds_file_row *r = &ds_files[i];
        kobj *o = kf_decode_file(KOBJ_DAEMONSET, r->file);
        assert_int_equal(o->kind, KOBJ_DAEMONSET);
        assert_string_equal(o->meta.namespace, "edge");
        assert_string_equal(o->meta.name, r->name);
        assert_string_equal(o->meta.uid, r->uid);
        assert_null(o->meta.owner_uid);
        assert_int_equal(o->meta.deleting, 0);
        if (o->u.ds.ota != r->ota || o->u.ds.timeout_seconds != r->timeout)
            fail_msg("%s: ota %d timeout %ld, want %d %ld", r->file, o->u.ds.ota,
                     o->u.ds.timeout_seconds, r->ota, r->timeout);
        kobj_free(o);
    }
}

/* The annotations object, as JSON text, decides ota and timeout_seconds. */
typedef struct ds_ann_row {
    const char *annotations; /* JSON object text, or NULL for no annotations */
    int ota;
    long timeout;
} ds_ann_row;

static const ds_ann_row ds_anns[] = {
    {NULL, 0, 0},
    {"{}", 0, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\"}", 1, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"ota\"}", 1, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"oTa\"}", 1, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA \"}", 0, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTAX\"}", 0, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"\"}", 0, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"AdvancedRollingUpdate\"}", 0, 0},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":true}", 0, 0},
    /* annotation keys are case-sensitive */
    {"{\"Apps.OpenYurt.io/update-strategy\":\"OTA\"}", 0, 0},
    /* the timeout is read whatever the strategy: the reconciler only looks
     * at OTA DaemonSets anyway */
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"600\"}", 0, 600},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT "\":\"30\"}", 1, 30},
    {"{\"" OTA_ANN_UPDATE_STRATEGY "\":\"OTA\",\"" OTA_ANN_PREPULL_TIMEOUT "\":\"86400\"}", 1, 86400},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"29\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"86401\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"0\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"-600\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"60s\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"1e3\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"99999999999999999999999\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":600}", 0, 0},
    /* what the webhook rejects (lib/ota_daemonset.h, the same function) is "bad" here too, so
     * an object that got in before the webhook did gets --pull-timeout,
     * not a reading the contract never allowed */
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\" 600\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"+600\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"0600\"}", 0, 0},
    {"{\"" OTA_ANN_PREPULL_TIMEOUT "\":\"600 \"}", 0, 0},
};

static void test_daemonset_annotations(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(ds_anns) / sizeof(ds_anns[0]); i++) {
        const ds_ann_row *r = &ds_anns[i];
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"ds\",\"namespace\":\"edge\","
                 "\"uid\":\"u-1\"%s%s}}",
                 r->annotations != NULL ? ",\"annotations\":" : "",
                 r->annotations != NULL ? r->annotations : "");
        kobj *o = kf_decode_text(KOBJ_DAEMONSET, json);
        assert_non_null(o);
        if (o->u.ds.ota != r->ota || o->u.ds.timeout_seconds != r->timeout)
            fail_msg("annotations %s: ota %d timeout %ld, want %d %ld",
                     r->annotations != NULL ? r->annotations : "(none)", o->u.ds.ota,
                     o->u.ds.timeout_seconds, r->ota, r->timeout);
        kobj_free(o);
    }
}

static void test_daemonset_deleting(void **state)
{
    (void)state;
    kobj *o = kf_decode_text(KOBJ_DAEMONSET,
                             "{\"metadata\":{\"name\":\"ds\",\"uid\":\"u\",\"deletionTimestamp\":"
                             "\"2026-11-21T21:10:00Z\",\"finalizers\":[\"foregroundDeletion\"]}}");
    assert_non_null(o);
    assert_int_equal(o->meta.deleting, 1);
    assert_null(o->meta.namespace);
    kobj_free(o);
    /* null is how a client may spell "not set" */
    o = kf_decode_text(KOBJ_DAEMONSET,
                       "{\"metadata\":{\"name\":\"ds\",\"uid\":\"u\",\"deletionTimestamp\":null}}");
    assert_non_null(o);
    assert_int_equal(o->meta.deleting, 0);
    kobj_free(o);
}

/* ---- ControllerRevisions ---------------------------------------------------- */

static void assert_list(char **got, size_t n, const char *const *want, size_t n_want,
                        const char *what)
{
    if (n != n_want) {
        for (size_t i = 0; i < n; i++)
            print_error("  %s[%zu] = %s\n", what, i, got[i]);
        fail_msg("%s: %zu entries, want %zu", what, n, n_want);
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(got[i], want[i]) != 0)
            fail_msg("%s[%zu] = \"%s\", want \"%s\"", what, i, got[i], want[i]);
}

static void test_revision_fixture(void **state)
{
    (void)state;
    kobj *o = kf_decode_file(KOBJ_REVISION, "controllerrevision.json");
    assert_int_equal(o->kind, KOBJ_REVISION);
    assert_string_equal(o->meta.name, "edge-agent-6d5f8b7c9");
    assert_string_equal(o->meta.namespace, "edge");
    assert_string_equal(o->meta.owner_uid, DS_UID);
    assert_true(o->u.rev.revision == 3);
    assert_string_equal(o->u.rev.hash, "6d5f8b7c9");
    /* in order, each once, none empty; the env value that looks like an
     * image is not one */
    static const char *const init[] = {"registry.example.com/edge/config-init:v3", "busybox:1.36"};
    static const char *const images[] = {"registry.example.com/edge/agent:v3", "nginx:1.25"};
    static const char *const secrets[] = {"regcred", "mirror-cred"};
    assert_list(o->u.rev.init_images, o->u.rev.n_init_images, init, 2, "init_images");
    assert_list(o->u.rev.images, o->u.rev.n_images, images, 2, "images");
    assert_list(o->u.rev.pull_secrets, o->u.rev.n_pull_secrets, secrets, 2, "pull_secrets");
    kobj_free(o);
}

typedef struct rev_row {
    const char *name;
    const char *tail; /* JSON after metadata: "revision" and "data" members */
    long long revision;
    size_t n_init, n_images, n_secrets;
} rev_row;

static const rev_row revs[] = {
    {"no data", ",\"revision\":7", 7, 0, 0, 0},
    {"no revision", ",\"data\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"a\"}]}}}}",
     0, 0, 1, 0},
    {"revision as a string", ",\"revision\":\"7\"", 0, 0, 0, 0},
    {"big revision", ",\"revision\":9007199254740993", 9007199254740993LL, 0, 0, 0},
    {"data without template spec", ",\"revision\":1,\"data\":{\"spec\":{\"template\":{}}}", 1, 0, 0, 0},
    {"containers not an array",
     ",\"revision\":1,\"data\":{\"spec\":{\"template\":{\"spec\":{\"containers\":{\"image\":\"a\"}}}}}",
     1, 0, 0, 0},
    {"images not strings",
     ",\"revision\":1,\"data\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":5},"
     "{\"image\":null},\"x\",{\"image\":\"b\"}],\"initContainers\":[{\"image\":\"b\"}]}}}}",
     1, 1, 1, 0},
    {"secrets without names",
     ",\"revision\":1,\"data\":{\"spec\":{\"template\":{\"spec\":{\"imagePullSecrets\":[{},"
     "{\"name\":null},{\"name\":\"s\"},\"s\"]}}}}",
     1, 0, 0, 1},
    /* a template at the top of data is not where a DaemonSet's revision
     * keeps it */
    {"template elsewhere",
     ",\"revision\":1,\"data\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"a\"}]}}}", 1, 0, 0,
     0},
};

static void test_revision_shapes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(revs) / sizeof(revs[0]); i++) {
        const rev_row *r = &revs[i];
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"r\",\"uid\":\"u\",\"labels\":{\"" OTA_LABEL_REVISION_HASH
                 "\":\"h\"}}%s}",
                 r->tail);
        kobj *o = kf_decode_text(KOBJ_REVISION, json);
        assert_non_null(o);
        if (o->u.rev.revision != r->revision || o->u.rev.n_init_images != r->n_init ||
            o->u.rev.n_images != r->n_images || o->u.rev.n_pull_secrets != r->n_secrets)
            fail_msg("%s: revision %lld, %zu/%zu/%zu, want %lld, %zu/%zu/%zu", r->name,
                     o->u.rev.revision, o->u.rev.n_init_images, o->u.rev.n_images,
                     o->u.rev.n_pull_secrets, r->revision, r->n_init, r->n_images, r->n_secrets);
        assert_string_equal(o->u.rev.hash, "h");
        kobj_free(o);
    }
}

/* A revision's image volumes (KEP-4639): references, distinct, in order;
 * other volumes and image volumes without a reference are not images;
 * bounded at KOBJ_MAX_VOLUME_IMAGES. */
static void test_revision_volume_images(void **state)
{
    (void)state;
    const char *json =
        "{\"metadata\":{\"name\":\"r\",\"uid\":\"u\",\"labels\":{\"" OTA_LABEL_REVISION_HASH
        "\":\"h\"}},\"revision\":2,\"data\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":"
        "\"agent:v2\"}],\"volumes\":[{\"name\":\"m\",\"image\":{\"reference\":\"reg/models/m:1\","
        "\"pullPolicy\":\"IfNotPresent\"}},{\"name\":\"e\",\"emptyDir\":{}},{\"name\":\"n\","
        "\"image\":{}},{\"name\":\"o\",\"image\":{\"reference\":5}},{\"name\":\"d\",\"image\":{"
        "\"reference\":\"reg/data/d:2\"}},{\"name\":\"m2\",\"image\":{\"reference\":"
        "\"reg/models/m:1\"}},{\"name\":\"z\",\"image\":{\"reference\":\"\"}}]}}}}}";
    kobj *o = kf_decode_text(KOBJ_REVISION, json);
    assert_non_null(o);
    assert_int_equal(o->u.rev.n_images, 1);
    assert_int_equal(o->u.rev.n_volume_images, 2);
    assert_string_equal(o->u.rev.volume_images[0], "reg/models/m:1");
    assert_string_equal(o->u.rev.volume_images[1], "reg/data/d:2");
    kobj_free(o);
    /* none: a revision as before */
    o = kf_decode_text(KOBJ_REVISION, "{\"metadata\":{\"name\":\"r\",\"uid\":\"u\"},\"data\":{"
                                      "\"template\":{\"spec\":{\"volumes\":null}}}}");
    assert_non_null(o);
    assert_int_equal(o->u.rev.n_volume_images, 0);
    assert_null(o->u.rev.volume_images);
    kobj_free(o);
    /* bounded */
    size_t n = KOBJ_MAX_VOLUME_IMAGES + 20, cap = 64 * n + 512, len = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    len += (size_t)snprintf(big + len, cap - len,
                            "{\"metadata\":{\"name\":\"r\",\"uid\":\"u\"},\"data\":{\"spec\":{"
                            "\"template\":{\"spec\":{\"volumes\":[");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(big + len, cap - len,
                                "%s{\"name\":\"v%zu\",\"image\":{\"reference\":\"a/m:%zu\"}}",
                                i > 0 ? "," : "", i, i);
    snprintf(big + len, cap - len, "]}}}}}");
    o = kf_decode_text(KOBJ_REVISION, big);
    free(big);
    assert_non_null(o);
    assert_int_equal(o->u.rev.n_volume_images, KOBJ_MAX_VOLUME_IMAGES);
    assert_string_equal(o->u.rev.volume_images[KOBJ_MAX_VOLUME_IMAGES - 1], "a/m:63");
    kobj_free(o);
}

/* ---- DaemonSet pods --------------------------------------------------------- */

static void test_pod_fixture(void **state)
{
    (void)state;
    kobj *o = kf_decode_file(KOBJ_POD, "pod-agent-pulling.json");
    assert_int_equal(o->kind, KOBJ_POD);
    assert_string_equal(o->meta.name, "edge-agent-x7k2p");
    assert_string_equal(o->meta.uid, POD_UID);
    /* the controller reference, not the first one */
    assert_string_equal(o->meta.owner_uid, DS_UID);
    assert_int_equal(o->meta.deleting, 0);
    assert_string_equal(o->meta.resource_version, "48377"); /* status writes' precondition */
    assert_string_equal(o->u.pod.node_name, "edge-node-1");
    assert_string_equal(o->u.pod.hash, "5c4b9a8d7");
    /* the first of each type wins; the Ready condition's message is not ours */
    const kobj_cond *nu = &o->u.pod.need_upgrade, *ir = &o->u.pod.image_ready;
    assert_int_equal(nu->present, 1);
    assert_string_equal(nu->status, "True");
    assert_null(nu->reason);
    assert_string_equal(nu->message, OTA_MSG_REVISION_PREFIX "6d5f8b7c9");
    assert_string_equal(nu->last_transition_time, "2026-11-21T19:30:03Z");
    assert_int_equal(ir->present, 1);
    assert_string_equal(ir->status, "False");
    assert_string_equal(ir->reason, OTA_REASON_WAIT_PULL);
    assert_string_equal(ir->message, OTA_MSG_REVISION_PREFIX "6d5f8b7c9");
    assert_string_equal(ir->last_transition_time, "2026-11-21T19:40:05Z");
    kobj_free(o);

    o = kf_decode_file(KOBJ_POD, "pod-agent-terminating.json");
    assert_int_equal(o->meta.deleting, 1);
    /* an ownerReference without "controller": true is not the controller */
    assert_null(o->meta.owner_uid);
    assert_null(o->u.pod.node_name);
    assert_string_equal(o->u.pod.hash, "6d5f8b7c9");
    assert_int_equal(o->u.pod.need_upgrade.present, 0);
    assert_int_equal(o->u.pod.image_ready.present, 0);
    assert_null(o->u.pod.need_upgrade.status);
    kobj_free(o);
}

typedef struct owner_row {
    const char *name;
    const char *owners; /* ownerReferences JSON */
    const char *want;   /* owner_uid */
} owner_row;

static const owner_row owners[] = {
    {"one controller", "[{\"kind\":\"DaemonSet\",\"uid\":\"ds\",\"controller\":true}]", "ds"},
    {"controller false", "[{\"kind\":\"DaemonSet\",\"uid\":\"ds\",\"controller\":false}]", NULL},
    {"controller as a string", "[{\"kind\":\"DaemonSet\",\"uid\":\"ds\",\"controller\":\"true\"}]",
     NULL},
    {"no controller field", "[{\"kind\":\"DaemonSet\",\"uid\":\"ds\"}]", NULL},
    {"controller after others",
     "[{\"uid\":\"a\"},{\"uid\":\"b\",\"controller\":false},{\"uid\":\"c\",\"controller\":true}]", "c"},
    {"the first of two controllers",
     "[{\"uid\":\"c1\",\"controller\":true},{\"uid\":\"c2\",\"controller\":true}]", "c1"},
    {"controller without uid", "[{\"kind\":\"DaemonSet\",\"controller\":true}]", NULL},
    {"empty", "[]", NULL},
    {"not an array", "{\"uid\":\"ds\",\"controller\":true}", NULL},
    {"null", "null", NULL},
};

static void test_pod_owners(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++) {
        const owner_row *r = &owners[i];
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"edge\",\"uid\":\"u\","
                 "\"ownerReferences\":%s}}",
                 r->owners);
        kobj *o = kf_decode_text(KOBJ_POD, json);
        assert_non_null(o);
        if ((o->meta.owner_uid == NULL) != (r->want == NULL) ||
            (r->want != NULL && strcmp(o->meta.owner_uid, r->want) != 0))
            fail_msg("%s: owner_uid %s, want %s", r->name,
                     o->meta.owner_uid != NULL ? o->meta.owner_uid : "(null)",
                     r->want != NULL ? r->want : "(null)");
        kobj_free(o);
    }
}

typedef struct cond_row {
    const char *name;
    const char *conditions; /* status.conditions JSON */
    int nu_present;
    const char *nu_status, *nu_message;
    int ir_present;
    const char *ir_status, *ir_reason;
} cond_row;

static const cond_row conds[] = {
    {"none", "[]", 0, NULL, NULL, 0, NULL, NULL},
    {"not an array", "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\"}", 0, NULL, NULL, 0, NULL,
     NULL},
    {"kubelet's only", "[{\"type\":\"Ready\",\"status\":\"True\"}]", 0, NULL, NULL, 0, NULL, NULL},
    {"no type first, then one",
     "[{\"status\":\"True\"},{\"type\":5,\"status\":\"True\"},"
     "{\"type\":\"PodNeedUpgrade\",\"status\":\"False\",\"message\":\"m\"}]",
     1, "False", "m", 0, NULL, NULL},
    {"first of each wins",
     "[{\"type\":\"PodImageReady\",\"status\":\"True\",\"reason\":\"PullImageSuccess\"},"
     "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"message\":\"a\"},"
     "{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"PullImageFail\"},"
     "{\"type\":\"PodNeedUpgrade\",\"status\":\"False\",\"message\":\"b\"}]",
     1, "True", "a", 1, "True", "PullImageSuccess"},
    /* present with no fields: present, everything NULL */
    {"bare", "[{\"type\":\"PodImageReady\"}]", 0, NULL, NULL, 1, NULL, NULL},
    /* types are case-sensitive */
    {"wrong case", "[{\"type\":\"podneedupgrade\",\"status\":\"True\"}]", 0, NULL, NULL, 0, NULL,
     NULL},
};

static void test_pod_conditions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(conds) / sizeof(conds[0]); i++) {
        const cond_row *r = &conds[i];
        char json[2048];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"status\":{\"conditions\":%s}}",
                 r->conditions);
        kobj *o = kf_decode_text(KOBJ_POD, json);
        assert_non_null(o);
        const kobj_cond *nu = &o->u.pod.need_upgrade, *ir = &o->u.pod.image_ready;
        print_message("row %s\n", r->name);
        assert_int_equal(nu->present, r->nu_present);
        assert_str_or_null(nu->status, r->nu_status);
        assert_str_or_null(nu->message, r->nu_message);
        assert_int_equal(ir->present, r->ir_present);
        assert_str_or_null(ir->status, r->ir_status);
        assert_str_or_null(ir->reason, r->ir_reason);
        kobj_free(o);
    }
}

/* ---- Jobs ------------------------------------------------------------------- */

typedef struct job_row {
    const char *file, *name;
    int complete, failed;
    const char *reason, *message;
} job_row;

static const job_row jobs[] = {
    {"job-complete.json", "ota-prepull-edge-agent-x7k2p-2bb6b70d", 1, 0, NULL, NULL},
    /* FailureTarget comes first and is not Failed; the first Failed wins */
    {"job-failed-deadline.json", "ota-prepull-edge-agent-x7k2p-7e0c4a19", 0, 1, "DeadlineExceeded",
     "Job was active longer than specified deadline"},
    /* conditions with status False mean nothing */
    {"job-running.json", "ota-prepull-edge-agent-x7k2p-5d21f8e3", 0, 0, NULL, NULL},
};

static void test_job_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
        const job_row *r = &jobs[i];
        kobj *o = kf_decode_file(KOBJ_JOB, r->file);
        print_message("%s\n", r->file);
        assert_int_equal(o->kind, KOBJ_JOB);
        assert_string_equal(o->meta.name, r->name);
        assert_string_equal(o->meta.namespace, "edge");
        /* our Jobs' pod reference is not a controller reference */
        assert_null(o->meta.owner_uid);
        assert_string_equal(o->u.job.pod_uid, POD_UID);
        assert_string_equal(o->u.job.revision_hash, "6d5f8b7c9");
        assert_string_equal(o->u.job.request_time, "2026-11-21T19:40:05Z");
        assert_true(o->u.job.start_epoch == 1795290006LL); /* 2026-11-21T19:40:06Z */
        assert_int_equal(o->u.job.complete, r->complete);
        assert_int_equal(o->u.job.failed, r->failed);
        assert_str_or_null(o->u.job.failed_reason, r->reason);
        assert_str_or_null(o->u.job.failed_message, r->message);
        kobj_free(o);
    }
}

static void test_job_bare(void **state)
{
    (void)state;
    /* just created: no status, no labels of ours */
    kobj *o = kf_decode_text(KOBJ_JOB, "{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\"},"
                                       "\"spec\":{},\"status\":{}}");
    assert_non_null(o);
    assert_null(o->u.job.pod_uid);
    assert_null(o->u.job.revision_hash);
    assert_null(o->u.job.request_time);
    assert_int_equal(o->u.job.complete, 0);
    assert_int_equal(o->u.job.failed, 0);
    assert_true(o->u.job.start_epoch == 0);
    kobj_free(o);
    /* Failed without reason or message */
    o = kf_decode_text(KOBJ_JOB, "{\"metadata\":{\"name\":\"j\",\"uid\":\"u\"},\"status\":"
                                 "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}],"
                                 "\"startTime\":\"garbage\"}}");
    assert_non_null(o);
    assert_int_equal(o->u.job.failed, 1);
    assert_null(o->u.job.failed_reason);
    assert_null(o->u.job.failed_message);
    assert_true(o->u.job.start_epoch == 0);
    kobj_free(o);
}

/* ---- Job pods --------------------------------------------------------------- */

typedef struct job_pod_row {
    const char *file;
    const char *job_name, *reason, *message_part;
} job_pod_row;

static const job_pod_row job_pods[] = {
    /* helper and pull-0 done, pull-1 failing, pull-2 and ota-done waiting
     * their turn */
    {"jobpod-errimagepull.json", "ota-prepull-edge-agent-x7k2p-7e0c4a19", "ErrImagePull",
     "registry.example.com/edge/agent:v3: not found"},
    /* an older Job controller sets only job-name */
    {"jobpod-backoff-legacy-label.json", "ota-prepull-edge-agent-m2n4b-0a1b2c3d",
     "ImagePullBackOff", "Back-off pulling image"},
    /* PodInitializing and ContainerCreating say nothing; the
     * batch.kubernetes.io label wins over the legacy one */
    {"jobpod-initializing.json", "ota-prepull-edge-agent-h5j6k-99aa88bb", NULL, NULL},
};

static void test_job_pod_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(job_pods) / sizeof(job_pods[0]); i++) {
        const job_pod_row *r = &job_pods[i];
        kobj *o = kf_decode_file(KOBJ_JOB_POD, r->file);
        print_message("%s\n", r->file);
        assert_int_equal(o->kind, KOBJ_JOB_POD);
        assert_string_equal(o->meta.namespace, "edge");
        assert_string_equal(o->u.job_pod.job_name, r->job_name);
        if (strcmp(r->file, "jobpod-errimagepull.json") == 0) /* its node's pull slot */
            assert_string_equal(o->u.job_pod.node_name, "edge-node-1");
        assert_str_or_null(o->u.job_pod.waiting_reason, r->reason);
        if (r->message_part != NULL) {
            assert_non_null(o->u.job_pod.waiting_message);
            assert_non_null(strstr(o->u.job_pod.waiting_message, r->message_part));
        } else {
            assert_null(o->u.job_pod.waiting_message);
        }
        kobj_free(o);
    }
}

typedef struct waiting_row {
    const char *name;
    const char *status; /* the pod's status JSON */
    const char *reason, *message;
} waiting_row;

static const waiting_row waitings[] = {
    {"PodInitializing skipped for a later pull error",
     "{\"initContainerStatuses\":[{\"name\":\"a\",\"image\":\"a:1\",\"state\":{\"waiting\":"
     "{\"reason\":\"PodInitializing\"}}},{\"name\":\"b\",\"image\":\"b:1\",\"state\":{\"waiting\":"
     "{\"reason\":\"ImagePullBackOff\",\"message\":\"Back-off pulling image \\\"b:1\\\"\"}}}]}",
     "ImagePullBackOff", "Back-off pulling image \"b:1\""},
    {"init containers before containers",
     "{\"containerStatuses\":[{\"image\":\"c:1\",\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\"}}}],"
     "\"initContainerStatuses\":[{\"image\":\"i:1\",\"state\":{\"waiting\":"
     "{\"reason\":\"InvalidImageName\",\"message\":\"bad\"}}}]}",
     "InvalidImageName", "bad"},
    {"a container when the init containers are done",
     "{\"initContainerStatuses\":[{\"image\":\"i:1\",\"state\":{\"terminated\":{\"exitCode\":0}}}],"
     "\"containerStatuses\":[{\"image\":\"c:1\",\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\","
     "\"message\":\"m\"}}}]}",
     "ErrImagePull", "m"},
    {"waiting without reason", "{\"initContainerStatuses\":[{\"state\":{\"waiting\":{}}}]}", NULL,
     NULL},
    {"no statuses", "{\"phase\":\"Pending\"}", NULL, NULL},
    {"statuses not arrays", "{\"initContainerStatuses\":{\"state\":{\"waiting\":{\"reason\":\"X\"}}}}",
     NULL, NULL},
    {"first of two pull errors",
     "{\"initContainerStatuses\":[{\"image\":\"a\",\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\"}}},"
     "{\"image\":\"b\",\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\"}}}]}",
     "ErrImagePull", NULL},
};

static void test_job_pod_waiting(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(waitings) / sizeof(waitings[0]); i++) {
        const waiting_row *r = &waitings[i];
        char json[2048];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"jp\",\"uid\":\"u\",\"labels\":{\"job-name\":\"j\"}},"
                 "\"status\":%s}",
                 r->status);
        kobj *o = kf_decode_text(KOBJ_JOB_POD, json);
        assert_non_null(o);
        print_message("row %s\n", r->name);
        assert_string_equal(o->u.job_pod.job_name, "j");
        assert_str_or_null(o->u.job_pod.waiting_reason, r->reason);
        assert_str_or_null(o->u.job_pod.waiting_message, r->message);
        kobj_free(o);
    }
}

/* ---- Nodes ------------------------------------------------------------------ */

static void test_node_fixture(void **state)
{
    (void)state;
    kobj *o = kf_decode_file(KOBJ_NODE, "node.json");
    assert_int_equal(o->kind, KOBJ_NODE);
    assert_string_equal(o->meta.name, "edge-node-1");
    assert_null(o->meta.namespace);
    /* every name of every image, each once; entries without names and
     * names that are not strings skipped */
    static const char *const want[] = {
        "registry.example.com/edge/agent@sha256:"
        "4f7c0b5b1c8e7a3d2f9e6b1a0c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d",
        "registry.example.com/edge/agent:v2",
        "docker.io/library/nginx@sha256:2d194184b067db3598771b4cf326cfe6ad5051937ba1132b8b7d4b0184e0d0a6",
        "docker.io/library/nginx:1.25",
        "registry.k8s.io/pause:3.9",
    };
    assert_list(o->u.node.images, o->u.node.n_images, want, 5, "node images");
    kobj_free(o);

    o = kf_decode_text(KOBJ_NODE, "{\"metadata\":{\"name\":\"n\",\"uid\":\"u\"},\"status\":{}}");
    assert_non_null(o);
    assert_int_equal(o->u.node.n_images, 0);
    assert_null(o->u.node.images);
    kobj_free(o);
}

/* The informer on Nodes keeps whether a pod bound there can start, its
 * labels, and its image names, bounded (an ImageCache's "already
 * present"); the fixture's node is Ready, with a NoSchedule taint that is
 * not the unreachable one. */
typedef struct node_state_row {
    const char *spec, *conditions;
    int not_ready;
} node_state_row;

static const node_state_row node_states[] = {
    {"{}", "[{\"type\":\"Ready\",\"status\":\"True\"}]", 0},
    {"{}", "[{\"type\":\"Ready\",\"status\":\"False\"}]", 1},
    {"{}", "[{\"type\":\"Ready\",\"status\":\"Unknown\"}]", 1},
    {"{}", "[{\"type\":\"Ready\"}]", 1},
    {"{}", "[{\"type\":\"MemoryPressure\",\"status\":\"False\"}]", 0}, /* no word: Ready */
    {"{}", "[]", 0},
    {"{\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]}",
     "[{\"type\":\"Ready\",\"status\":\"True\"}]", 1},
    {"{\"taints\":[{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoSchedule\"}]}", "[]",
     1},
    {"{\"taints\":[{\"key\":\"node-role.kubernetes.io/edge\",\"effect\":\"NoSchedule\"}]}",
     "[{\"type\":\"Ready\",\"status\":\"True\"}]", 0},
    {"{\"taints\":5}", "7", 0},
};

/* A node reporting more image names than a KOBJ_NODE_STATE keeps: the
 * first KOBJ_NODE_STATE_MAX_IMAGE_NAMES distinct ones (absence proves
 * nothing, so the rest are not needed); no hostname label: the name. */
static void test_node_state_images_bounded(void **state)
{
    (void)state;
    size_t n = KOBJ_NODE_STATE_MAX_IMAGE_NAMES + 100, cap = 64 * n + 256, len = 0;
    char *json = malloc(cap);
    assert_non_null(json);
    len += (size_t)snprintf(json + len, cap - len,
                            "{\"metadata\":{\"name\":\"big\",\"uid\":\"u\","
                            "\"labels\":{\"zone\":\"a\"}},\"status\":{\"images\":[");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(json + len, cap - len, "%s{\"names\":[\"img-%zu:1\",\"img-%zu:1\"]}",
                                i > 0 ? "," : "", i, i);
    snprintf(json + len, cap - len, "]}}");
    kobj *o = kf_decode_text(KOBJ_NODE_STATE, json);
    free(json);
    assert_non_null(o);
    assert_int_equal(o->u.node.n_images, KOBJ_NODE_STATE_MAX_IMAGE_NAMES);
    assert_string_equal(o->u.node.images[0], "img-0:1");
    assert_string_equal(o->u.node.images[KOBJ_NODE_STATE_MAX_IMAGE_NAMES - 1],
                        "img-511:1");
    assert_string_equal(kobj_node_hostname(o), "big");
    assert_string_equal(kobj_node_label(o, "zone"), "a");
    kobj_free(o);
}

/* An ImageCache pod's targets: regular containers "pull-<i>" (and purge's
 * "rmi-<i>"), each with its own outcome. */
typedef struct target_row {
    const char *name;
    const char *statuses; /* containerStatuses JSON */
    size_t n;             /* n_targets */
    struct {
        int state;
        const char *reason, *message;
    } want[3];
} target_row;

static const target_row target_rows[] = {
    {"one pulled, one backing off, one creating",
     "[{\"name\":\"pull-0\",\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}},"
     "{\"name\":\"pull-1\",\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\",\"message\":"
     "\"Back-off pulling image \\\"x:1\\\"\"}}},"
     "{\"name\":\"pull-2\",\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}}]",
     3,
     {{KOBJ_TARGET_DONE, NULL, NULL},
      {KOBJ_TARGET_WAITING, "ImagePullBackOff", "Back-off pulling image \"x:1\""},
      {KOBJ_TARGET_PENDING, NULL, NULL}}},
    {"running is pulled; a gap reads pending",
     "[{\"name\":\"pull-2\",\"state\":{\"running\":{\"startedAt\":\"2026-11-27T10:00:05Z\"}}},{\"name\":\"pull-0\",\"state\":"
     "{\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"not found\"}}}]",
     3,
     {{KOBJ_TARGET_WAITING, "ErrImagePull", "not found"},
      {KOBJ_TARGET_PENDING, NULL, NULL},
      {KOBJ_TARGET_DONE, NULL, NULL}}},
    {"purge: exit 1 with its termination message",
     "[{\"name\":\"rmi-0\",\"state\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\","
     "\"message\":\"image is in use by a container\"}}}]",
     1,
     {{KOBJ_TARGET_FAILED, "Error", "image is in use by a container"}}},
    {"not ours: ota-done, pull-x, pull-01, pull-64, no name, not an array entry",
     "[{\"name\":\"ota-done\",\"state\":{\"running\":{}}},{\"name\":\"pull-x\"},"
     "{\"name\":\"pull-01\"},{\"name\":\"pull-64\"},{\"state\":{}},7]",
     0,
     {{0, NULL, NULL}}},
    {"statuses not an array", "{\"name\":\"pull-0\"}", 0, {{0, NULL, NULL}}},
};

static void test_job_pod_targets(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(target_rows) / sizeof(target_rows[0]); i++) {
        const target_row *r = &target_rows[i];
        char json[2048];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"jp\",\"uid\":\"u\",\"labels\":{\"job-name\":\"j\"}},"
                 "\"status\":{\"containerStatuses\":%s}}",
                 r->statuses);
        kobj *o = kf_decode_text(KOBJ_JOB_POD, json);
        assert_non_null(o);
        print_message("row %s\n", r->name);
        assert_int_equal(o->u.job_pod.n_targets, r->n);
        if (i == 0) /* ended, as a purge's crictl must have to count */
            assert_int_equal(o->u.job_pod.targets[0].terminated, 1);
        if (i == 1) { /* running: not ended */
            assert_int_equal(o->u.job_pod.targets[2].terminated, 0);
        }
        if (i == 1) /* when the image was there: the next pull began after */
            assert_int_equal(o->u.job_pod.targets[2].started_epoch,
                             kobj_parse_time("2026-11-27T10:00:05Z"));
        for (size_t t = 0; t < r->n; t++) {
            assert_int_equal(o->u.job_pod.targets[t].state, r->want[t].state);
            assert_str_or_null(o->u.job_pod.targets[t].reason, r->want[t].reason);
            assert_str_or_null(o->u.job_pod.targets[t].message, r->want[t].message);
        }
        /* the copy the controller keeps carries the targets, in its own memory */
        kobj *c = kobj_copy_job_pod(o);
        assert_non_null(c);
        assert_int_equal(c->u.job_pod.n_targets, r->n);
        if (r->n > 0) {
            assert_ptr_not_equal(c->u.job_pod.targets, o->u.job_pod.targets);
            assert_int_equal(kobj_job_pod_set_target_words(c, 0, "ErrImagePull", "kept"), 0);
            assert_string_equal(c->u.job_pod.targets[0].message, "kept");
        }
        assert_int_equal(kobj_job_pod_set_target_words(c, r->n, "X", NULL), -1);
        kobj_free(o);
        kobj_free(c);
    }
    assert_int_equal(kobj_interned(), 0);
}

/* An ImageCache: identity and resourceVersion (the writes' precondition),
 * the spec and the whole object as compact JSON (the PUT of the upstream
 * CRD), the request annotations by presence, ours by value, the status
 * and the images its failures name. */
static void test_imagecache(void **state)
{
    (void)state;
    const char *json =
        "{\"apiVersion\":\"kubefledged.io/v1alpha2\",\"kind\":\"ImageCache\",\"metadata\":{"
        "\"name\":\"imagecache1\",\"namespace\":\"kube-fledged\",\"uid\":\"u-1\","
        "\"resourceVersion\":\"42\",\"generation\":3,\"annotations\":{"
        "\"kubefledged.io/refresh-imagecache\":\"\","
        "\"ota-prepull.openyurt.io/imagecache-spec\":\"h1\"}},"
        "\"spec\":{\"cacheSpec\":[{\"images\":[\"nginx:1.25\"]}]},"
        "\"status\":{\"status\":\"Failed\",\"reason\":\"ImageCacheCreate\",\"message\":\"m\","
        "\"startTime\":\"2026-11-27T10:00:00Z\",\"completionTime\":\"2026-11-27T10:05:00Z\","
        "\"failures\":{\"nginx:1.25\":[{\"node\":\"n1\"}],\"x:1\":[]}},\"future\":1.50}";
    kobj *o = kf_decode_text(KOBJ_IMAGECACHE, json);
    assert_non_null(o);
    assert_string_equal(o->meta.namespace, "kube-fledged");
    assert_string_equal(o->meta.resource_version, "42");
    assert_string_equal(o->u.ic.spec, "{\"cacheSpec\":[{\"images\":[\"nginx:1.25\"]}]}");
    assert_string_equal(o->u.ic.object, json);
    assert_int_equal(o->u.ic.generation, 3);
    assert_int_equal(o->u.ic.refresh, 1);
    assert_int_equal(o->u.ic.purge, 0);
    assert_string_equal(o->u.ic.acted_spec, "h1");
    assert_int_equal(o->u.ic.has_status, 1);
    assert_string_equal(o->u.ic.status, "Failed");
    assert_string_equal(o->u.ic.reason, "ImageCacheCreate");
    assert_string_equal(o->u.ic.completion_time, "2026-11-27T10:05:00Z");
    assert_int_equal(o->u.ic.n_failure_images, 2);
    assert_string_equal(o->u.ic.failure_images[1], "x:1");
    kobj_free(o);
    /* a new one: no status, no annotations, purge asked */
    o = kf_decode_text(KOBJ_IMAGECACHE,
                       "{\"metadata\":{\"name\":\"c\",\"uid\":\"u\",\"annotations\":{"
                       "\"kubefledged.io/purge-imagecache\":\"x\"}},\"spec\":null,\"status\":7}");
    assert_non_null(o);
    assert_null(o->u.ic.spec);
    assert_int_equal(o->u.ic.purge, 1);
    assert_int_equal(o->u.ic.has_status, 0);
    assert_null(o->u.ic.status);
    assert_null(o->u.ic.acted_spec);
    assert_int_equal(o->u.ic.n_failure_images, 0);
    kobj_free(o);
    assert_int_equal(kobj_interned(), 0);
}

static void test_node_state(void **state)
{
    (void)state;
    kobj *o = kf_decode_file(KOBJ_NODE_STATE, "node.json");
    assert_int_equal(o->kind, KOBJ_NODE_STATE);
    assert_string_equal(kobj_name(o), "edge-node-1");
    assert_int_equal(o->u.node.not_ready, 0);
    assert_int_equal(o->u.node.n_images, 5);
    assert_string_equal(o->u.node.images[1], "registry.example.com/edge/agent:v2");
    assert_string_equal(o->u.node.images[4], "registry.k8s.io/pause:3.9");
    assert_string_equal(kobj_node_label(o, "kubernetes.io/os"), "linux");
    assert_null(kobj_node_label(o, "kubernetes.io/arch"));
    assert_string_equal(kobj_node_hostname(o), "edge-node-1");
    kobj_free(o);
    for (size_t i = 0; i < sizeof(node_states) / sizeof(node_states[0]); i++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"n\",\"uid\":\"u\"},\"spec\":%s,\"status\":{"
                 "\"conditions\":%s,\"images\":[{\"names\":[\"x:1\"]}]}}",
                 node_states[i].spec, node_states[i].conditions);
        o = kf_decode_text(KOBJ_NODE_STATE, json);
        assert_non_null(o);
        if (o->u.node.not_ready != node_states[i].not_ready)
            fail_msg("%s: not_ready %d", json, o->u.node.not_ready);
        assert_int_equal(o->u.node.n_images, 1);
        kobj_free(o);
        /* the images shortcut's node (ACTION_GET_NODE) says the same */
        o = kf_decode_text(KOBJ_NODE, json);
        assert_int_equal(o->u.node.not_ready, node_states[i].not_ready);
        assert_int_equal(o->u.node.n_images, 1);
        kobj_free(o);
    }
    /* the runtime (pull methods): both kinds, bounded */
    static const struct {
        const char *info, *want;
    } rts[] = {
        {"{\"containerRuntimeVersion\":\"containerd://2.1.4\"}", "containerd://2.1.4"},
        {"{\"containerRuntimeVersion\":5}", NULL},
        {"{}", NULL},
        {"null", NULL},
    };
    for (size_t i = 0; i < sizeof(rts) / sizeof(rts[0]); i++) {
        char json[512];
        snprintf(json, sizeof(json),
                 "{\"metadata\":{\"name\":\"n\",\"uid\":\"u\"},\"status\":{\"nodeInfo\":%s}}",
                 rts[i].info);
        for (int k = 0; k < 2; k++) {
            o = kf_decode_text(k == 0 ? KOBJ_NODE_STATE : KOBJ_NODE, json);
            assert_non_null(o);
            if (rts[i].want == NULL)
                assert_null(o->u.node.runtime_version);
            else
                assert_string_equal(o->u.node.runtime_version, rts[i].want);
            kobj_free(o);
        }
    }
    char json[512], longv[200];
    memset(longv, 'x', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"n\",\"uid\":\"u\"},\"status\":{\"nodeInfo\":{"
             "\"containerRuntimeVersion\":\"%s\"}}}",
             longv);
    o = kf_decode_text(KOBJ_NODE_STATE, json);
    assert_non_null(o);
    assert_null(o->u.node.runtime_version);
    kobj_free(o);
}

/* ---- identity --------------------------------------------------------------- */

typedef struct ident_row {
    const char *json;
    int decodes;
} ident_row;

static const ident_row idents[] = {
    {"{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"}}", 1},
    {"{\"metadata\":{\"uid\":\"u\"}}", 0},
    {"{\"metadata\":{\"name\":\"x\"}}", 0},
    {"{\"metadata\":{\"name\":5,\"uid\":\"u\"}}", 0},
    {"{\"metadata\":{\"name\":\"x\",\"uid\":null}}", 0},
    {"{\"metadata\":null}", 0},
    {"{\"name\":\"x\",\"uid\":\"u\"}", 0},
    {"{}", 0},
    {"[{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"}}]", 0},
    {"\"x\"", 0},
    {"null", 0},
};

static void test_name_and_uid_required(void **state)
{
    (void)state;
    for (int kind = 0; kind < KOBJ_N_KINDS; kind++) {
        if (kind == KOBJ_POD_NODES)
            continue; /* made from a list by kobj_pod_nodes_of, never decoded */
        for (size_t i = 0; i < sizeof(idents) / sizeof(idents[0]); i++) {
            kobj *o = kf_decode_text((kobj_kind)kind, idents[i].json);
            if ((o != NULL) != idents[i].decodes)
                fail_msg("kind %d, %s: %s", kind, idents[i].json,
                         o != NULL ? "decoded" : "refused");
            if (o != NULL)
                assert_int_equal(o->kind, kind);
            kobj_free(o);
        }
    }
    assert_null(kobj_decode(KOBJ_POD, NULL));
    assert_null(kobj_decode(KOBJ_N_KINDS, NULL));
    /* an unknown kind is refused even with a name and uid */
    yajl_val v = json_parse_tree(idents[0].json, strlen(idents[0].json), 64, NULL, 0);
    assert_non_null(v);
    assert_null(kobj_decode(KOBJ_N_KINDS, v));
    yajl_tree_free(v);
    kobj_free(NULL);
}

/* ---- kobj_parse_time and kobj_ref ------------------------------------------ */

typedef struct time_row {
    const char *text;
    long long epoch;
} time_row;

static const time_row times[] = {
    {"2026-11-21T21:00:00Z", 1795294800LL},
    {"2026-11-21T19:40:05Z", 1795290005LL},
    {"2000-02-29T12:34:56Z", 951827696LL},
    {"1970-01-01T00:00:01Z", 1LL},
    /* metav1.MicroTime: the fraction is dropped */
    {"2026-11-21T21:00:00.987654Z", 1795294800LL},
    {"", 0},
    {"garbage", 0},
    {"2026-11-21", 0},
    {"2026-11-21 21:00:00Z", 0},
    {"2026-11-21T21:00Z", 0},
};

static void test_parse_time(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
        if (kobj_parse_time(times[i].text) != times[i].epoch)
            fail_msg("%s: %lld, want %lld", times[i].text, kobj_parse_time(times[i].text),
                     times[i].epoch);
    assert_true(kobj_parse_time(NULL) == 0);
    /* later is larger, across a month and a year */
    assert_true(kobj_parse_time("2026-12-01T00:00:00Z") > kobj_parse_time("2026-11-30T23:59:59Z"));
    assert_true(kobj_parse_time("2027-01-01T00:00:00Z") - kobj_parse_time("2026-12-31T23:59:59Z") ==
                1);
}

static void test_ref(void **state)
{
    (void)state;
    kobj *pod = kf_decode_file(KOBJ_POD, "pod-agent-pulling.json");
    kobj *node = kf_decode_file(KOBJ_NODE, "node.json");
    char buf[64], small[8];
    assert_string_equal(kobj_ref(pod, buf, sizeof(buf)), "edge/edge-agent-x7k2p");
    assert_string_equal(kobj_ref(node, buf, sizeof(buf)), "/edge-node-1");
    /* cut to the buffer, still terminated */
    assert_string_equal(kobj_ref(pod, small, sizeof(small)), "edge/ed");
    kobj_free(pod);
    kobj_free(node);
}

/* The copy the controller keeps of why a Job's pod waited (the pod itself
 * goes at the deadline): equal, and its own memory. */
static void test_copy_job_pod(void **state)
{
    (void)state;
    kobj *o = kf_decode_file(KOBJ_JOB_POD, "jobpod-errimagepull.json");
    kobj *c = kobj_copy_job_pod(o);
    assert_non_null(c);
    assert_int_equal(c->kind, KOBJ_JOB_POD);
    assert_string_equal(c->meta.namespace, o->meta.namespace);
    assert_string_equal(c->meta.name, o->meta.name);
    assert_string_equal(c->meta.uid, o->meta.uid);
    assert_string_equal(c->u.job_pod.job_name, o->u.job_pod.job_name);
    assert_string_equal(c->u.job_pod.waiting_reason, "ErrImagePull");
    assert_string_equal(c->u.job_pod.waiting_message, o->u.job_pod.waiting_message);
    /* the name is the copy's own; the reason is shared from the pool */
    assert_ptr_not_equal(c->meta.name, o->meta.name);
    assert_ptr_not_equal(c->u.job_pod.job_name, o->u.job_pod.job_name);
    kobj_free(o);
    /* still readable with the original gone (ASan would see otherwise) */
    assert_string_equal(c->u.job_pod.waiting_reason, "ErrImagePull");
    kobj_free(c);
    /* nothing waiting: NULLs copied as NULLs */
    o = kf_decode_file(KOBJ_JOB_POD, "jobpod-initializing.json");
    c = kobj_copy_job_pod(o);
    assert_non_null(c);
    assert_null(c->u.job_pod.waiting_reason);
    assert_null(c->u.job_pod.waiting_message);
    assert_null(c->meta.owner_uid);
    kobj_free(o);
    kobj_free(c);
}

/* ---- the packed form -------------------------------------------------------
 * One allocation per object (struct, list arrays, its own strings); strings
 * that repeat across objects shared from the intern pool, counted so that
 * the pool is empty again once every object is freed. */

static int inside(const kobj *o, const void *p)
{
    const char *a = (const char *)o, *x = p;
    return x >= a && x < a + o->block_size;
}

/* Where each string of a decoded pod lives: 1 its own block, 0 the pool. */
typedef struct pod_field_row {
    const char *what;
    size_t offset; /* of the char * in kobj */
    int own;
} pod_field_row;

#define POD_FIELD(f, own) {#f, offsetof(kobj, f), own}
static const pod_field_row pod_fields[] = {
    POD_FIELD(meta.namespace, 0),
    POD_FIELD(meta.name, 1),
    POD_FIELD(meta.uid, 1),
    POD_FIELD(meta.owner_uid, 0),
    POD_FIELD(meta.resource_version, 1),
    POD_FIELD(u.pod.node_name, 1),
    POD_FIELD(u.pod.hash, 0),
    POD_FIELD(u.pod.need_upgrade.status, 0),
    POD_FIELD(u.pod.need_upgrade.message, 0),
    POD_FIELD(u.pod.need_upgrade.last_transition_time, 1),
    POD_FIELD(u.pod.image_ready.status, 0),
    POD_FIELD(u.pod.image_ready.reason, 0),
    POD_FIELD(u.pod.image_ready.message, 0),
    POD_FIELD(u.pod.image_ready.last_transition_time, 1),
};

static const char *field_at(const kobj *o, size_t offset)
{
    const char *const *f = (const char *const *)(const void *)((const char *)o + offset);
    return *f;
}

static void test_packed_pod(void **state)
{
    (void)state;
    size_t base = kobj_interned();
    kobj *a = kf_decode_file(KOBJ_POD, "pod-agent-pulling.json");
    kobj *b = kf_decode_file(KOBJ_POD, "pod-agent-pulling.json");
    assert_true(a->block_size > sizeof(kobj));
    assert_true(a->block_size < 512); /* the point of packing */
    size_t interned = kobj_interned();
    assert_true(interned > base);
    for (size_t i = 0; i < sizeof(pod_fields) / sizeof(pod_fields[0]); i++) {
        const pod_field_row *r = &pod_fields[i];
        const char *fa = field_at(a, r->offset), *fb = field_at(b, r->offset);
        if (fa == NULL || fb == NULL || strcmp(fa, fb) != 0)
            fail_msg("%s: missing or not equal", r->what);
        if (inside(a, fa) != r->own || inside(b, fb) != r->own)
            fail_msg("%s: want it %s", r->what, r->own ? "in the object's block" : "in the pool");
        /* shared strings are one copy for both objects, own ones are not */
        if ((fa == fb) == r->own)
            fail_msg("%s: %s pointer for two objects", r->what, r->own ? "same" : "different");
    }
    /* the second object added no string to the pool */
    assert_int_equal(kobj_interned(), interned);
    kobj_free(a);
    /* b's shared strings outlive a (ASan would see a use after free) */
    assert_string_equal(b->meta.namespace, "edge");
    assert_string_equal(b->u.pod.image_ready.reason, OTA_REASON_WAIT_PULL);
    assert_int_equal(kobj_interned(), interned);
    kobj_free(b);
    assert_int_equal(kobj_interned(), base);
}

/* Lists: the arrays in the block, their items shared (images repeat on
 * every revision and node). */
static void test_packed_lists(void **state)
{
    (void)state;
    size_t base = kobj_interned();
    kobj *rev = kf_decode_file(KOBJ_REVISION, "controllerrevision.json");
    assert_true(rev->u.rev.n_images > 0);
    assert_true(inside(rev, rev->u.rev.images));
    assert_true(inside(rev, rev->u.rev.hash));
    for (size_t i = 0; i < rev->u.rev.n_images; i++)
        assert_false(inside(rev, rev->u.rev.images[i]));
    kobj *node = kf_decode_file(KOBJ_NODE, "node.json");
    assert_true(node->u.node.n_images > 0);
    assert_true(inside(node, node->u.node.images));
    kobj *node2 = kobj_pack(node); /* a copy shares the items */
    assert_non_null(node2);
    assert_ptr_not_equal(node2->u.node.images, node->u.node.images);
    assert_true(inside(node2, node2->u.node.images));
    for (size_t i = 0; i < node->u.node.n_images; i++)
        assert_ptr_equal(node2->u.node.images[i], node->u.node.images[i]);
    kobj_free(node);
    for (size_t i = 0; i < node2->u.node.n_images; i++)
        assert_true(strlen(node2->u.node.images[i]) > 0);
    kobj_free(node2);
    kobj_free(rev);
    assert_int_equal(kobj_interned(), base);
}

/* kobj_pack of a hand-made draft: strings from anywhere (here literals and
 * a stack buffer that is overwritten afterwards), NULLs kept, the draft
 * left as it was. */
static void test_pack_draft(void **state)
{
    (void)state;
    size_t base = kobj_interned();
    char name[] = "edge-agent-1";
    char *images[] = {(char *)(uintptr_t)"registry/a:1", (char *)(uintptr_t)"registry/b:2"};
    kobj d;
    memset(&d, 0, sizeof(d));
    d.kind = KOBJ_REVISION;
    d.meta.namespace = (char *)(uintptr_t)"edge";
    d.meta.name = name;
    d.meta.uid = (char *)(uintptr_t)"uid-1";
    d.u.rev.revision = 7;
    d.u.rev.images = images;
    d.u.rev.n_images = 2;
    kobj *o = kobj_pack(&d);
    assert_non_null(o);
    strcpy(name, "overwritten!");
    images[0] = NULL;
    assert_string_equal(o->meta.name, "edge-agent-1");
    assert_string_equal(o->meta.namespace, "edge");
    assert_null(o->meta.owner_uid);
    assert_null(o->u.rev.hash);
    assert_null(o->u.rev.init_images);
    assert_int_equal(o->u.rev.n_images, 2);
    assert_string_equal(o->u.rev.images[0], "registry/a:1");
    assert_string_equal(o->u.rev.images[1], "registry/b:2");
    assert_int_equal(o->u.rev.revision, 7);
    /* the draft is not touched */
    assert_ptr_equal(d.meta.name, name);
    assert_ptr_equal(d.u.rev.images, images);
    kobj_free(o);
    assert_int_equal(kobj_interned(), base);
}

/* keep_pull_error's change: reason and message replaced by copies, from
 * another object or from the object's own fields; NULL message allowed. */
static void test_set_waiting(void **state)
{
    (void)state;
    size_t base = kobj_interned();
    kobj *err = kf_decode_file(KOBJ_JOB_POD, "jobpod-errimagepull.json");
    kobj *back = kf_decode_file(KOBJ_JOB_POD, "jobpod-backoff-legacy-label.json");
    assert_string_equal(back->u.job_pod.waiting_reason, "ImagePullBackOff");
    assert_int_equal(kobj_job_pod_set_waiting(back, err->u.job_pod.waiting_reason,
                                              err->u.job_pod.waiting_message), 0);
    char *message = strdup(err->u.job_pod.waiting_message);
    assert_non_null(message);
    kobj_free(err);
    assert_string_equal(back->u.job_pod.waiting_reason, "ErrImagePull");
    assert_string_equal(back->u.job_pod.waiting_message, message);
    /* its own fields as arguments */
    assert_int_equal(kobj_job_pod_set_waiting(back, back->u.job_pod.waiting_reason,
                                              back->u.job_pod.waiting_message), 0);
    assert_string_equal(back->u.job_pod.waiting_reason, "ErrImagePull");
    assert_string_equal(back->u.job_pod.waiting_message, message);
    assert_int_equal(kobj_job_pod_set_waiting(back, "Other", NULL), 0);
    assert_string_equal(back->u.job_pod.waiting_reason, "Other");
    assert_null(back->u.job_pod.waiting_message);
    kobj_free(back);
    free(message);
    assert_int_equal(kobj_interned(), base);
}

/* ---- ImagePullJobs, node labels, pull Jobs' client fields ----------------- */

static void test_imagepulljob(void **state)
{
    (void)state;
    kobj *o = kf_decode_text(
        KOBJ_IMAGEPULLJOB,
        "{\"apiVersion\":\"apps.kruise.io/v1beta1\",\"kind\":\"ImagePullJob\","
        "\"metadata\":{\"name\":\"pull\",\"namespace\":\"default\",\"uid\":\"u1\","
        "\"resourceVersion\":\"42\",\"generation\":3,"
        "\"creationTimestamp\":\"2026-11-27T08:00:00Z\","
        "\"annotations\":{\"ota-prepull/completed-generation\":\"2\"},"
        "\"finalizers\":[\"apps.kruise.io/deletion-protection\",\"x/y\"]},"
        "\"spec\":{\"image\":\"nginx:1.25\",\"parallelism\":2.5e0,\"selector\":{\"names\":[\"a\"]},"
        "\"completionPolicy\":{\"type\":\"Always\"},\"x\":null,\"t\":true},"
        "\"status\":{\"desired\":4,\"active\":1,\"succeeded\":2,\"failed\":1,"
        "\"failedNodes\":[\"n2\"],\"startTime\":\"2026-11-27T08:00:01Z\","
        "\"message\":\"job is running, progress 75.0%\"}}");
    const kobj_imagepulljob *j = &o->u.ipj;
    assert_string_equal(o->meta.resource_version, "42");
    assert_int_equal(j->generation, 3);
    assert_string_equal(j->creation_time, "2026-11-27T08:00:00Z");
    assert_string_equal(j->completed_generation, "2");
    assert_int_equal(j->n_finalizers, 2);
    assert_string_equal(j->finalizers[1], "x/y");
    /* the spec's text, numbers as written, for ipj_decode */
    assert_string_equal(j->spec, "{\"image\":\"nginx:1.25\",\"parallelism\":2.5e0,"
                                 "\"selector\":{\"names\":[\"a\"]},"
                                 "\"completionPolicy\":{\"type\":\"Always\"},\"x\":null,\"t\":true}");
    assert_int_equal(j->has_status, 1);
    assert_int_equal(j->desired, 4);
    assert_int_equal(j->active, 1);
    assert_int_equal(j->succeeded, 2);
    assert_int_equal(j->failed, 1);
    assert_int_equal(j->n_failed_nodes, 1);
    assert_string_equal(j->failed_nodes[0], "n2");
    assert_string_equal(j->start_time, "2026-11-27T08:00:01Z");
    assert_null(j->completion_time);
    assert_string_equal(j->message, "job is running, progress 75.0%");
    kobj_free(o);

    /* no spec, no status: nothing invented */
    o = kf_decode_text(KOBJ_IMAGEPULLJOB, "{\"metadata\":{\"name\":\"p\",\"uid\":\"u2\"}}");
    assert_null(o->u.ipj.spec);
    assert_int_equal(o->u.ipj.has_status, 0);
    assert_int_equal(o->u.ipj.n_finalizers, 0);
    kobj_free(o);
    assert_int_equal(kobj_interned(), 0);
}

static void test_node_state_labels(void **state)
{
    (void)state;
    kobj *o = kf_decode_text(
        KOBJ_NODE_STATE,
        "{\"metadata\":{\"name\":\"edge-1\",\"uid\":\"n1\",\"labels\":{\"zone\":\"b\","
        "\"kubernetes.io/hostname\":\"edge-1\",\"bad\":7,\"arch\":\"arm64\"}},"
        "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    const kobj_node *n = &o->u.node;
    assert_int_equal(n->not_ready, 1);
    /* sorted by key; a value that is not a string is no label */
    assert_int_equal(n->n_labels, 3);
    assert_string_equal(n->label_keys[0], "arch");
    assert_string_equal(n->label_keys[1], "kubernetes.io/hostname");
    assert_string_equal(n->label_keys[2], "zone");
    assert_string_equal(n->label_values[2], "b");
    kobj_free(o);
    assert_int_equal(kobj_interned(), 0);
}

static void test_pull_job_client_fields(void **state)
{
    (void)state;
    kobj *o = kf_decode_text(
        KOBJ_JOB,
        "{\"metadata\":{\"name\":\"ota-ipj-p-1\",\"namespace\":\"default\",\"uid\":\"j1\","
        "\"ownerReferences\":[{\"uid\":\"u1\",\"controller\":true}],"
        "\"annotations\":{\"ota-prepull/spec-hash\":\"abcd0123\","
        "\"ota-prepull/given-up-reason\":\"ErrImagePull\","
        "\"ota-prepull/given-up-message\":\"not found\"}},"
        "\"spec\":{\"template\":{\"spec\":{\"nodeName\":\"edge-1\"}}},"
        "\"status\":{\"startTime\":\"2026-11-27T08:00:00Z\",\"conditions\":[{\"type\":\"Failed\","
        "\"status\":\"True\",\"reason\":\"DeadlineExceeded\","
        "\"lastTransitionTime\":\"2026-11-27T08:00:09Z\"}]}}");
    const kobj_job *j = &o->u.job;
    assert_string_equal(o->meta.owner_uid, "u1");
    assert_null(j->pod_uid);
    assert_string_equal(j->node_name, "edge-1");
    assert_string_equal(j->spec_hash, "abcd0123");
    assert_string_equal(j->given_up_reason, "ErrImagePull");
    assert_string_equal(j->given_up_message, "not found");
    assert_int_equal(j->failed, 1);
    assert_int_equal(j->finish_epoch - j->start_epoch, 9);
    kobj_free(o);
    assert_int_equal(kobj_interned(), 0);
}

/* What a podSelector picks: the nodes of scheduled, unfinished pods that
 * are not being deleted (one pod at a time, as the list streams), kept
 * once each in a KOBJ_POD_NODES. */
static void test_pod_nodes(void **state)
{
    (void)state;
    static const struct {
        const char *pod, *node;
    } rows[] = {
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}", "n1"},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Pending\"}}", "n1"},
        {"{\"spec\":{},\"status\":{\"phase\":\"Pending\"}}", NULL},
        {"{\"spec\":{\"nodeName\":\"\"}}", NULL},
        {"{\"spec\":{\"nodeName\":\"n2\"},\"status\":{\"phase\":\"Succeeded\"}}", NULL},
        {"{\"spec\":{\"nodeName\":\"n3\"},\"status\":{\"phase\":\"Failed\"}}", NULL},
        {"{\"metadata\":{\"deletionTimestamp\":\"2026-11-27T08:00:00Z\"},"
         "\"spec\":{\"nodeName\":\"n4\"}}",
         NULL},
        {"{\"spec\":{\"nodeName\":\"n5\"}}", "n5"},
        {"{\"spec\":{\"nodeName\":7}}", NULL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char err[128];
        yajl_val pod = json_parse_tree(rows[i].pod, strlen(rows[i].pod), 64, err, sizeof(err));
        assert_non_null(pod);
        const char *got = kobj_active_pod_node(pod);
        if ((got == NULL) != (rows[i].node == NULL) ||
            (got != NULL && strcmp(got, rows[i].node) != 0))
            fail_msg("row %zu: %s", i, got != NULL ? got : "(none)");
        yajl_tree_free(pod);
    }
    char *nodes[] = {"n1", "n5"};
    kobj *o = kobj_pod_nodes_new("ipj-uid", "labelSelector=app%3Dweb", nodes, 2);
    assert_non_null(o);
    assert_int_equal(o->kind, KOBJ_POD_NODES);
    assert_string_equal(o->meta.uid, "ipj-uid");
    assert_string_equal(o->u.pod_nodes.query, "labelSelector=app%3Dweb");
    assert_int_equal(o->u.pod_nodes.n_nodes, 2);
    assert_string_equal(o->u.pod_nodes.nodes[1], "n5");
    assert_true(o->u.pod_nodes.nodes != nodes); /* its own copy */
    kobj_free(o);
    assert_null(kobj_pod_nodes_new(NULL, "", nodes, 2));
    assert_int_equal(kobj_interned(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_daemonset_fixtures),
        cmocka_unit_test(test_daemonset_annotations),
        cmocka_unit_test(test_daemonset_deleting),
        cmocka_unit_test(test_revision_fixture),
        cmocka_unit_test(test_revision_shapes),
        cmocka_unit_test(test_revision_volume_images),
        cmocka_unit_test(test_pod_fixture),
        cmocka_unit_test(test_pod_owners),
        cmocka_unit_test(test_pod_conditions),
        cmocka_unit_test(test_job_fixtures),
        cmocka_unit_test(test_job_bare),
        cmocka_unit_test(test_job_pod_fixtures),
        cmocka_unit_test(test_job_pod_waiting),
        cmocka_unit_test(test_copy_job_pod),
        cmocka_unit_test(test_node_fixture),
        cmocka_unit_test(test_node_state),
        cmocka_unit_test(test_node_state_images_bounded),
        cmocka_unit_test(test_job_pod_targets),
        cmocka_unit_test(test_imagecache),
        cmocka_unit_test(test_name_and_uid_required),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_ref),
        cmocka_unit_test(test_packed_pod),
        cmocka_unit_test(test_packed_lists),
        cmocka_unit_test(test_pack_draft),
        cmocka_unit_test(test_set_waiting),
        cmocka_unit_test(test_imagepulljob),
        cmocka_unit_test(test_node_state_labels),
        cmocka_unit_test(test_pull_job_client_fields),
        cmocka_unit_test(test_pod_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_prepull_job.c - the pre-pull Job: its name (stable hash, cut to 63
 * characters, always a DNS-1123 label), its JSON compared byte for byte with
 * golden files, the facts docs/design.md §5 asks for checked on the parsed JSON
 * (so a golden file regenerated in a hurry cannot hide a broken Job), and
 * the specs it must refuse.
 *
 * Golden files live in tests/fixtures/jobs/<case>.json; the test runs from
 * the repository root (as `make unit` does).  After an intended change to
 * the Job, regenerate them with
 *
 *     OTA_UPDATE_GOLDEN=1 build/tests/test_prepull_job
 *
 * and review the diff before committing it.
 */
#include "review_fixture.h"

#include <ctype.h>

#include "kobj.h"
#include "ota_names.h"
#include "prepull_job.h"

#define GOLDEN_DIR "tests/fixtures/jobs/"
#define UID "9f3c1e7a-2b4d-4e8f-a1c3-5d7e9f0b2c4d"
#define HASH "6d5f8b7c9"
#define REQ "2026-11-21T21:30:00Z"
#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* ---- names ------------------------------------------------------------------ */

static int dns1123_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return 0;
    return 1;
}

typedef struct name_row {
    const char *why, *pod;
    const char *want; /* the part between "ota-prepull-" and "-<hash>" */
} name_row;

#define A10 "aaaaaaaaaa"
static const name_row names[] = {
    {"a DaemonSet pod", "agent-x7k2p", "agent-x7k2p"},
    {"42 characters fit exactly", A10 A10 A10 A10 "b2", A10 A10 A10 A10 "b2"},
    {"longer names keep their beginning", A10 A10 A10 A10 "bcdefghij-x7k2p", A10 A10 A10 A10 "bc"},
    {"a cut before a dash drops it", A10 A10 A10 A10 "b-cdefgh", A10 A10 A10 A10 "b"},
    {"a cut before dashes drops them all", A10 A10 A10 "abcdefghi---xyz", A10 A10 A10 "abcdefghi"},
    {"dots become dashes", "kube-proxy.edge.node1", "kube-proxy-edge-node1"},
    {"uppercase is lowered", "Agent-X7K2P", "agent-x7k2p"},
    {"a 253-character name",
     A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10
         A10 "abc",
     A10 A10 A10 A10 "aa"},
};

static void test_name_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const name_row *row = &names[i];
        char got[PREPULL_JOB_NAME_MAX + 1], want[128];
        memset(got, 'Z', sizeof(got));
        prepull_job_name(got, row->pod, UID, HASH, REQ);
        snprintf(want, sizeof(want), "ota-prepull-%s-2bb6b70d", row->want);
        FX_CHECK(row->why, strcmp(got, want) == 0, "got %s, want %s", got, want);
        FX_CHECK(row->why, dns1123_label(got), "%s is not a DNS-1123 label", got);
    }
}

/* Nothing usable of the pod name is left: the name is prefix + hash. */
static void test_name_without_pod_part(void **state)
{
    (void)state;
    const char *pods[] = {"", "...", "-", NULL};
    for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
        char got[PREPULL_JOB_NAME_MAX + 1];
        prepull_job_name(got, pods[i], UID, HASH, REQ);
        assert_string_equal(got, "ota-prepull-2bb6b70d");
    }
}

/* Every pod name of every length gives a valid label of at most 63. */
static void test_name_lengths(void **state)
{
    (void)state;
    char pod[300];
    for (size_t n = 1; n < sizeof(pod); n++) {
        for (size_t i = 0; i < n; i++)
            pod[i] = (i % 7 == 6) ? '-' : (i % 11 == 10) ? '.' : (char)('a' + i % 26);
        pod[n] = '\0';
        char got[PREPULL_JOB_NAME_MAX + 1];
        prepull_job_name(got, pod, UID, HASH, REQ);
        FX_CHECK(pod, strlen(got) <= PREPULL_JOB_NAME_MAX && dns1123_label(got), "%s", got);
    }
}

/* The hash is FNV-1a 64 folded to 32 bits, with NUL after each field; the
 * expected values were computed independently (Python). */
static void test_hash_is_stable(void **state)
{
    (void)state;
    assert_int_equal(prepull_job_hash(UID, HASH, REQ), 0x2bb6b70d);
    assert_int_equal(prepull_job_hash("", "", ""), 0xb5423daf);
    assert_int_equal(prepull_job_hash("ab", "c", "d"), 0x99ee9be2);
    assert_int_equal(prepull_job_hash("a", "bc", "d"), 0x190fc698);
    /* each input changes the name */
    char a[64], b[64];
    prepull_job_name(a, "p", UID, HASH, REQ);
    prepull_job_name(b, "p", UID, HASH, "2026-11-21T21:30:01Z");
    assert_string_not_equal(a, b);
    prepull_job_name(b, "p", UID, "6d5f8b7ca", REQ);
    assert_string_not_equal(a, b);
    prepull_job_name(b, "p", "9f3c1e7a-2b4d-4e8f-a1c3-5d7e9f0b2c4e", REQ, REQ);
    assert_string_not_equal(a, b);
}

/* ---- golden files ------------------------------------------------------------- */

static const char *const agent_images[] = {"registry.example.com/edge/agent:v2"};
static const char *const full_init[] = {"busybox:1.36",
                                        "registry.example.com/edge/setup@sha256:" D64};
static const char *const full_images[] = {
    "nginx",                              /* :latest implied: Always */
    "registry.example.com/edge/agent:v2", /* */
    "docker.io/library/nginx:latest",     /* same as "nginx": pulled once */
    "busybox:1.36",                       /* same as an init image */
    "localhost:5000/tools/probe:1.0",
};
static const char *const full_secrets[] = {"regcred", "mirror-cred"};
static const char *const private_images[] = {"registry.example.com/private/app:2.0"};
static const char *const private_secrets[] = {"regcred"};

typedef struct golden_row {
    const char *file;
    prepull_job_spec spec;
} golden_row;

static const golden_row goldens[] = {
    {"agent.json",
     {"edge", "agent-x7k2p", UID, "edge-node-1", HASH, REQ, NULL, 0, agent_images, 1, NULL, 0,
      "busybox:1.36-musl", 0, 600, PULL_JOB_METHOD_HELPER}},
    {"full.json",
     {"kube-system", "edge-monitoring-agent.with.a.very-long-daemonset-name-x7k2p",
      "0b8e2d4c-6a1f-4c3e-9d5b-7f2a1e3c5b7d", "edge-node-with-a-long-name.example.com", "7c9d5f6b8",
      "2026-11-21T22:05:17Z", full_init, 2, full_images, 5, full_secrets, 2,
      "registry.example.com/mirror/busybox:1.36-musl", 2, 86400, PULL_JOB_METHOD_HELPER}},
    {"private.json",
     {"apps", "app-4jq9z", "5e1d3b7f-8c2a-4f6e-b9d1-3a5c7e9f1b2d", "edge-node-2", "5b7c9d6f8",
      "2026-11-21T23:00:00Z", NULL, 0, private_images, 1, private_secrets, 1, "busybox:1.36-musl",
      1, 30, PULL_JOB_METHOD_HELPER}},
};

static char *read_file(arena *a, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = arena_alloc(a, (size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void test_golden_files(void **state)
{
    (void)state;
    int update = getenv("OTA_UPDATE_GOLDEN") != NULL;
    for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
        const golden_row *row = &goldens[i];
        arena a;
        arena_init(&a);
        char err[256] = "", path[256];
        const char *json = NULL;
        size_t len = 0;
        FX_CHECK(row->file, prepull_job_render(&row->spec, &a, &json, &len, err, sizeof(err)) == 0,
                 "%s", err);
        FX_CHECK(row->file, strlen(json) == len, "length");
        snprintf(path, sizeof(path), GOLDEN_DIR "%s", row->file);
        if (update) {
            FILE *f = fopen(path, "wb");
            FX_CHECK(row->file, f != NULL && fwrite(json, 1, len, f) == len && fclose(f) == 0,
                     "cannot write %s", path);
        }
        size_t want_len = 0;
        const char *want = read_file(&a, path, &want_len);
        FX_CHECK(row->file, want != NULL, "cannot read %s (run from the repository root)", path);
        if (want_len != len || memcmp(want, json, len) != 0) {
            print_error("%s differs from the rendered Job:\n%s\n", path, json);
            fail_msg("golden file %s (OTA_UPDATE_GOLDEN=1 regenerates it)", path);
        }
        arena_free(&a);
    }
}

/* ---- facts on the parsed Job --------------------------------------------------- */

static yajl_val at(yajl_val v, const char **path)
{
    return yajl_tree_get(v, path, yajl_t_any);
}

static const char *str_at(yajl_val v, const char **path)
{
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    return s != NULL ? YAJL_GET_STRING(s) : NULL;
}

static yajl_val parse(const char *json)
{
    char err[256];
    yajl_val root = yajl_tree_parse(json, err, sizeof(err));
    if (root == NULL)
        fail_msg("rendered Job is not JSON: %s", err);
    return root;
}

/* Both present and equal. */
static int streq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int is_false(yajl_val v)
{
    return v != NULL && YAJL_IS_FALSE(v);
}

static long long int_at(yajl_val v, const char **path)
{
    yajl_val n = yajl_tree_get(v, path, yajl_t_number);
    if (n == NULL || !YAJL_IS_INTEGER(n))
        fail_msg("%s is not an integer", path[0]);
    return YAJL_GET_INTEGER(n);
}

static yajl_val elem(yajl_val v, const char **path, size_t i)
{
    yajl_val arr = yajl_tree_get(v, path, yajl_t_array);
    if (arr == NULL || i >= YAJL_GET_ARRAY(arr)->len)
        return NULL;
    return YAJL_GET_ARRAY(arr)->values[i];
}

static size_t count(yajl_val v, const char **path)
{
    yajl_val arr = yajl_tree_get(v, path, yajl_t_array);
    return arr != NULL ? YAJL_GET_ARRAY(arr)->len : 0;
}

typedef struct want_container {
    const char *name, *image, *policy;
    const char *command[4];
    int read_only;
} want_container;

static void check_container(yajl_val c, const want_container *w)
{
    const char *p_name[] = {"name", NULL}, *p_image[] = {"image", NULL};
    const char *p_policy[] = {"imagePullPolicy", NULL}, *p_cmd[] = {"command", NULL};
    const char *p_mount[] = {"volumeMounts", NULL},
               *p_req_cpu[] = {"resources", "requests", "cpu", NULL};
    const char *p_req_mem[] = {"resources", "requests", "memory", NULL};
    const char *p_lim_mem[] = {"resources", "limits", "memory", NULL};
    const char *p_priv[] = {"securityContext", "allowPrivilegeEscalation", NULL};
    const char *p_args[] = {"args", NULL};
    assert_non_null(c);
    FX_CHECK(w->name, streq(str_at(c, p_name), w->name), "name");
    FX_CHECK(w->name, streq(str_at(c, p_image), w->image), "image %s", str_at(c, p_image));
    FX_CHECK(w->name, streq(str_at(c, p_policy), w->policy), "policy %s", str_at(c, p_policy));
    size_t n = 0;
    while (n < 4 && w->command[n] != NULL)
        n++;
    FX_CHECK(w->name, count(c, p_cmd) == n, "command has %zu words", count(c, p_cmd));
    for (size_t i = 0; i < n; i++) {
        yajl_val word = elem(c, p_cmd, i);
        FX_CHECK(w->name, YAJL_IS_STRING(word) && streq(YAJL_GET_STRING(word), w->command[i]),
                 "command word %zu", i);
    }
    FX_CHECK(w->name, at(c, p_args) == NULL, "args would reach the image's entrypoint");
    yajl_val mount = elem(c, p_mount, 0);
    const char *p_mname[] = {"name", NULL}, *p_mpath[] = {"mountPath", NULL},
               *p_ro[] = {"readOnly", NULL};
    FX_CHECK(w->name,
             count(c, p_mount) == 1 && streq(str_at(mount, p_mname), "ota-bin") &&
                 streq(str_at(mount, p_mpath), "/ota-bin"),
             "volume mount");
    yajl_val ro = at(mount, p_ro);
    FX_CHECK(w->name, ro != NULL && (w->read_only ? YAJL_IS_TRUE(ro) : YAJL_IS_FALSE(ro)),
             "readOnly should be %d", w->read_only);
    FX_CHECK(w->name, streq(str_at(c, p_req_cpu), "1m"), "cpu request");
    FX_CHECK(w->name, streq(str_at(c, p_req_mem), "8Mi"), "memory request");
    FX_CHECK(w->name, str_at(c, p_lim_mem) != NULL, "memory limit");
    FX_CHECK(w->name, is_false(at(c, p_priv)), "allowPrivilegeEscalation");
}

static void check_marks(yajl_val meta, const prepull_job_spec *s)
{
    const char *managed[] = {"labels", OTA_LABEL_MANAGED_BY, NULL};
    const char *pod_uid[] = {"labels", OTA_LABEL_POD_UID, NULL};
    const char *rev[] = {"annotations", OTA_ANN_JOB_REVISION, NULL};
    const char *time[] = {"annotations", OTA_ANN_JOB_REQUEST_TIME, NULL};
    assert_non_null(meta);
    assert_string_equal(str_at(meta, managed), "ota-prepull");
    assert_string_equal(str_at(meta, pod_uid), s->pod_uid);
    assert_string_equal(str_at(meta, rev), s->revision_hash);
    assert_string_equal(str_at(meta, time), s->request_time);
}

/* docs/design.md §5 item by item, on the case with everything in it. */
static void test_full_job_facts(void **state)
{
    (void)state;
    const prepull_job_spec *s = &goldens[1].spec;
    arena a;
    arena_init(&a);
    char err[256];
    const char *json;
    size_t len;
    assert_int_equal(prepull_job_render(s, &a, &json, &len, err, sizeof(err)), 0);
    yajl_val job = parse(json);

    const char *p_api[] = {"apiVersion", NULL}, *p_kind[] = {"kind", NULL};
    assert_string_equal(str_at(job, p_api), "batch/v1");
    assert_string_equal(str_at(job, p_kind), "Job");
    const char *p_name[] = {"metadata", "name", NULL}, *p_ns[] = {"metadata", "namespace", NULL};
    char want_name[64];
    prepull_job_name(want_name, s->pod_name, s->pod_uid, s->revision_hash, s->request_time);
    assert_string_equal(str_at(job, p_name), want_name);
    assert_string_equal(want_name,
                        "ota-prepull-edge-monitoring-agent-with-a-very-long-dae-4f57302d");
    assert_string_equal(str_at(job, p_ns), "kube-system");
    const char *p_meta[] = {"metadata", NULL};
    check_marks(at(job, p_meta), s);

    const char *p_owners[] = {"metadata", "ownerReferences", NULL};
    assert_int_equal(count(job, p_owners), 1);
    yajl_val owner = elem(job, p_owners, 0);
    const char *o_api[] = {"apiVersion", NULL}, *o_kind[] = {"kind", NULL},
               *o_name[] = {"name", NULL};
    const char *o_uid[] = {"uid", NULL}, *o_ctl[] = {"controller", NULL};
    const char *o_block[] = {"blockOwnerDeletion", NULL};
    assert_string_equal(str_at(owner, o_api), "v1");
    assert_string_equal(str_at(owner, o_kind), "Pod");
    assert_string_equal(str_at(owner, o_name), s->pod_name);
    assert_string_equal(str_at(owner, o_uid), s->pod_uid);
    assert_true(is_false(at(owner, o_ctl)));
    assert_true(is_false(at(owner, o_block)));

    const char *p_backoff[] = {"spec", "backoffLimit", NULL};
    const char *p_deadline[] = {"spec", "activeDeadlineSeconds", NULL};
    const char *p_ttl[] = {"spec", "ttlSecondsAfterFinished", NULL};
    assert_int_equal(int_at(job, p_backoff), 2);
    assert_int_equal(int_at(job, p_deadline), 86400);
    assert_null(at(job, p_ttl));

    const char *p_tmeta[] = {"spec", "template", "metadata", NULL};
    check_marks(at(job, p_tmeta), s);
    const char *p_pod[] = {"spec", "template", "spec", NULL};
    yajl_val pod = at(job, p_pod);
    assert_non_null(pod);
    const char *p_restart[] = {"restartPolicy", NULL}, *p_node[] = {"nodeName", NULL};
    const char *p_tol[] = {"tolerations", NULL}, *p_sa[] = {"automountServiceAccountToken", NULL};
    const char *p_links[] = {"enableServiceLinks", NULL}, *p_secrets[] = {"imagePullSecrets", NULL};
    const char *p_nonroot[] = {"securityContext", "runAsNonRoot", NULL};
    const char *p_user[] = {"securityContext", "runAsUser", NULL};
    assert_string_equal(str_at(pod, p_restart), "Never");
    assert_string_equal(str_at(pod, p_node), "edge-node-with-a-long-name.example.com");
    assert_int_equal(count(pod, p_tol), 1);
    const char *t_op[] = {"operator", NULL}, *t_key[] = {"key", NULL}, *t_eff[] = {"effect", NULL};
    assert_string_equal(str_at(elem(pod, p_tol, 0), t_op), "Exists");
    assert_null(at(elem(pod, p_tol, 0), t_key));
    assert_null(at(elem(pod, p_tol, 0), t_eff));
    assert_true(is_false(at(pod, p_sa)));
    assert_true(is_false(at(pod, p_links)));
    assert_true(YAJL_IS_TRUE(at(pod, p_nonroot)));
    assert_int_not_equal(int_at(pod, p_user), 0);
    assert_int_equal(count(pod, p_secrets), 2);
    assert_string_equal(str_at(elem(pod, p_secrets, 0), o_name), "regcred");
    assert_string_equal(str_at(elem(pod, p_secrets, 1), o_name), "mirror-cred");
    const char *p_vols[] = {"volumes", NULL}, *v_empty[] = {"emptyDir", NULL};
    assert_int_equal(count(pod, p_vols), 1);
    assert_string_equal(str_at(elem(pod, p_vols, 0), o_name), "ota-bin");
    assert_non_null(at(elem(pod, p_vols, 0), v_empty));

    const char *helper = "registry.example.com/mirror/busybox:1.36-musl";
    /* clang-format off */
    const want_container inits[] = {
        {"ota-helper", helper, "IfNotPresent",
         {"/bin/busybox", "cp", "/bin/busybox", "/ota-bin/true"}, 0},
        {"pull-0", "busybox:1.36", "IfNotPresent", {"/ota-bin/true"}, 1},
        {"pull-1", "registry.example.com/edge/setup@sha256:" D64, "IfNotPresent",
         {"/ota-bin/true"}, 1},
        {"pull-2", "nginx", "Always", {"/ota-bin/true"}, 1},
        {"pull-3", "registry.example.com/edge/agent:v2", "IfNotPresent", {"/ota-bin/true"}, 1},
        {"pull-4", "localhost:5000/tools/probe:1.0", "IfNotPresent", {"/ota-bin/true"}, 1},
    };
    /* clang-format on */
    const char *p_inits[] = {"initContainers", NULL}, *p_ctrs[] = {"containers", NULL};
    assert_int_equal(count(pod, p_inits), sizeof(inits) / sizeof(inits[0]));
    for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]); i++)
        check_container(elem(pod, p_inits, i), &inits[i]);
    const want_container done = {"ota-done", helper, "IfNotPresent", {"/ota-bin/true"}, 1};
    assert_int_equal(count(pod, p_ctrs), 1);
    check_container(elem(pod, p_ctrs, 0), &done);

    yajl_tree_free(job);
    arena_free(&a);
}

/* A helper image tagged :latest is pulled Always by ota-helper, like any
 * other image, and then only used by ota-done. */
static void test_helper_policy(void **state)
{
    (void)state;
    prepull_job_spec s = goldens[0].spec;
    s.helper_image = "busybox";
    arena a;
    arena_init(&a);
    char err[256];
    const char *json;
    size_t len;
    assert_int_equal(prepull_job_render(&s, &a, &json, &len, err, sizeof(err)), 0);
    yajl_val job = parse(json);
    const char *p_inits[] = {"spec", "template", "spec", "initContainers", NULL};
    const want_container helper = {"ota-helper",
                                   "busybox",
                                   "Always",
                                   {"/bin/busybox", "cp", "/bin/busybox", PREPULL_JOB_TRUE},
                                   0};
    check_container(elem(job, p_inits, 0), &helper);
    /* ota-done finds the image ota-helper pulled: no second registry call */
    const char *p_ctrs[] = {"spec", "template", "spec", "containers", NULL};
    const want_container done = {"ota-done", "busybox", "IfNotPresent", {"/ota-bin/true"}, 1};
    check_container(elem(job, p_ctrs, 0), &done);
    yajl_tree_free(job);
    arena_free(&a);
}

/* A request without a time (written while the mutating webhook was away)
 * still gets its Job: NULL and "" are the same request. */
static void test_request_without_time(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    prepull_job_spec s = goldens[0].spec;
    char err[256] = "", with_null[64], with_empty[64];
    const char *json;
    size_t len;
    s.request_time = NULL;
    assert_int_equal(prepull_job_render(&s, &a, &json, &len, err, sizeof(err)), 0);
    yajl_val job = parse(json);
    const char *p_time[] = {"metadata", "annotations", OTA_ANN_JOB_REQUEST_TIME, NULL};
    const char *p_name[] = {"metadata", "name", NULL};
    assert_string_equal(str_at(job, p_time), "");
    prepull_job_name(with_null, s.pod_name, s.pod_uid, s.revision_hash, NULL);
    prepull_job_name(with_empty, s.pod_name, s.pod_uid, s.revision_hash, "");
    assert_string_equal(with_null, with_empty);
    assert_string_equal(str_at(job, p_name), with_empty);
    yajl_tree_free(job);
    arena_free(&a);
}

/* 64 distinct images fit; a 65th does not; repeats of one image do not
 * count. */
static void test_image_limits(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    const char *images[PREPULL_JOB_MAX_IMAGES + 1];
    for (size_t i = 0; i <= PREPULL_JOB_MAX_IMAGES; i++)
        images[i] = arena_printf(&a, "registry.example.com/app:v%zu", i);
    prepull_job_spec s = goldens[0].spec;
    s.images = images;
    s.n_images = PREPULL_JOB_MAX_IMAGES;
    char err[256] = "";
    const char *json;
    size_t len;
    assert_int_equal(prepull_job_render(&s, &a, &json, &len, err, sizeof(err)), 0);
    assert_contains(json, "\"pull-63\"");
    assert_contains(json, "\"registry.example.com/app:v63\"");
    s.n_images = PREPULL_JOB_MAX_IMAGES + 1;
    assert_int_equal(prepull_job_render(&s, &a, &json, &len, err, sizeof(err)), -1);
    assert_contains(err, "more than 64 distinct images");

    const char *same[200];
    for (size_t i = 0; i < 200; i++)
        same[i] = i % 2 ? "nginx:1.25" : "docker.io/library/nginx:1.25";
    s.images = same;
    s.n_images = 200;
    assert_int_equal(prepull_job_render(&s, &a, &json, &len, err, sizeof(err)), 0);
    assert_contains(json, "\"pull-0\"");
    assert_null(strstr(json, "\"pull-1\""));
    arena_free(&a);
}

typedef struct bad_row {
    const char *why;
    void (*edit)(prepull_job_spec *s);
} bad_row;

static const char *const bad_images[] = {"nginx:1.25", "Nginx:1.25"};
static const char *const null_secret[] = {NULL};
static const char *const empty_secret[] = {""};

/* clang-format off */
static void no_namespace(prepull_job_spec *s) { s->pod_namespace = NULL; }
static void empty_name(prepull_job_spec *s) { s->pod_name = ""; }
static void no_uid(prepull_job_spec *s) { s->pod_uid = NULL; }
static void no_node(prepull_job_spec *s) { s->node_name = ""; }
static void no_hash(prepull_job_spec *s) { s->revision_hash = NULL; }
static void no_helper(prepull_job_spec *s) { s->helper_image = NULL; }
static void bad_helper(prepull_job_spec *s) { s->helper_image = "busybox:"; }
static void backoff_3(prepull_job_spec *s) { s->backoff_limit = 3; }
static void backoff_neg(prepull_job_spec *s) { s->backoff_limit = -1; }
static void deadline_0(prepull_job_spec *s) { s->active_deadline_seconds = 0; }
static void deadline_neg(prepull_job_spec *s) { s->active_deadline_seconds = -5; }
static void no_images(prepull_job_spec *s) { s->n_images = 0; }
static void bad_image(prepull_job_spec *s) { s->images = bad_images; s->n_images = 2; }
static void bad_init_image(prepull_job_spec *s)
{ s->init_images = bad_images + 1; s->n_init_images = 1; }
static void secret_null(prepull_job_spec *s)
{ s->pull_secrets = null_secret; s->n_pull_secrets = 1; }
static void secret_empty(prepull_job_spec *s)
{ s->pull_secrets = empty_secret; s->n_pull_secrets = 1; }
/* clang-format on */

static const bad_row bads[] = {
    {"pod namespace is missing", no_namespace},
    {"pod name is missing", empty_name},
    {"pod uid is missing", no_uid},
    {"node name is missing", no_node},
    {"revision hash is missing", no_hash},
    {"helper image is missing", no_helper},
    {"invalid image reference \"busybox:\": empty tag", bad_helper},
    {"backoff limit 3 is not within 0..2", backoff_3},
    {"backoff limit -1 is not within 0..2", backoff_neg},
    {"active deadline 0 s is not above 0", deadline_0},
    {"active deadline -5 s is not above 0", deadline_neg},
    {"no image to pull", no_images},
    {"invalid image reference \"Nginx:1.25\": repository name must be lowercase", bad_image},
    {"invalid image reference \"Nginx:1.25\"", bad_init_image},
    {"pull secret 0 has no name", secret_null},
    {"pull secret 0 has no name", secret_empty},
};

static void test_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        prepull_job_spec s = goldens[0].spec;
        bads[i].edit(&s);
        arena a;
        arena_init(&a);
        char err[256] = "";
        const char *json = NULL;
        size_t len = 0;
        FX_CHECK(bads[i].why, prepull_job_render(&s, &a, &json, &len, err, sizeof(err)) == -1,
                 "rendered");
        FX_CHECK(bads[i].why, strstr(err, bads[i].why) != NULL, "error \"%s\"", err);
        FX_CHECK(bads[i].why, json == NULL, "output set");
        arena_free(&a);
    }
}

/* ---- an ImagePullJob node's Job: the generic pull_job_spec ----------------- */

static void test_ipj_job_name(void **state)
{
    (void)state;
    char a[PREPULL_JOB_NAME_MAX + 1], b[PREPULL_JOB_NAME_MAX + 1], c[PREPULL_JOB_NAME_MAX + 1];
    ipj_job_name(a, "Pull.Nginx", "u1", "node-1", "abcd0123");
    assert_true(strncmp(a, IPJ_JOB_NAME_PREFIX "pull-nginx-", 19) == 0);
    /* 16 hex digits: 64 bits, as a fleet's nodes share one namespace */
    assert_int_equal(strlen(a), strlen(IPJ_JOB_NAME_PREFIX "pull-nginx-") + 16);
    for (size_t i = strlen(a) - 16; i < strlen(a); i++)
        assert_true((a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f'));
    /* each of uid, node and spec hash makes another Job */
    ipj_job_name(b, "Pull.Nginx", "u1", "node-2", "abcd0123");
    ipj_job_name(c, "Pull.Nginx", "u1", "node-1", "abcd0124");
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, c);
    /* a 253-character name is cut to a label value */
    char longname[254];
    memset(longname, 'x', 253);
    longname[253] = '\0';
    ipj_job_name(a, longname, "u1", "node-1", "abcd0123");
    assert_int_equal(strlen(a), PREPULL_JOB_NAME_MAX);
    assert_int_equal(pull_job_hash3("u1", "node-1", "abcd0123"),
                     pull_job_hash3("u1", "node-1", "abcd0123"));
    assert_int_not_equal(pull_job_hash3("u1", "node-1", "x"), pull_job_hash3("u1", "node-", "1x"));
}

static void test_ipj_job_body(void **state)
{
    (void)state;
    const char *images[] = {"nginx:1.25"};
    const char *secrets[] = {"regcred"};
    const char *ann[] = {OTA_ANN_JOB_SPEC_HASH, "abcd0123"};
    pull_job_spec s = {
        .namespace = "default",
        .name = "ota-ipj-pull-nginx-12345678",
        .node_name = "edge-1",
        .owner = {"apps.kruise.io/v1alpha1", "ImagePullJob", "pull-nginx", "ipj-uid", 1},
        .annotations = ann,
        .n_annotations = 1,
        .images = images,
        .n_images = 1,
        .pull_secrets = secrets,
        .n_pull_secrets = 1,
        .pull_policy = "Always",
        .helper_image = "registry.local/ota-helper:1.0",
        .backoff_limit = 0,
        .active_deadline_seconds = 2460,
    };
    arena a;
    arena_init(&a);
    char err[256];
    const char *json;
    size_t len;
    assert_int_equal(pull_job_render(&s, &a, &json, &len, err, sizeof(err)), 0);
    yajl_val job = parse(json);
    const char *p_name[] = {"metadata", "name", NULL};
    assert_string_equal(str_at(job, p_name), "ota-ipj-pull-nginx-12345678");
    const char *p_owner[] = {"metadata", "ownerReferences", NULL};
    yajl_val owner = at(job, p_owner)->u.array.values[0];
    assert_string_equal(kobj_member_str(owner, "apiVersion"), "apps.kruise.io/v1alpha1");
    assert_string_equal(kobj_member_str(owner, "kind"), "ImagePullJob");
    assert_true(YAJL_IS_TRUE(kobj_member(owner, "controller")));
    assert_true(YAJL_IS_FALSE(kobj_member(owner, "blockOwnerDeletion")));
    const char *p_hash[] = {"metadata", "annotations", OTA_ANN_JOB_SPEC_HASH, NULL};
    assert_string_equal(str_at(job, p_hash), "abcd0123");
    const char *p_tmpl_managed[] = {"spec", "template", "metadata", "labels", OTA_LABEL_MANAGED_BY,
                                    NULL};
    assert_string_equal(str_at(job, p_tmpl_managed), OTA_MANAGED_BY_VALUE);
    const char *p_pod_label[] = {"metadata", "labels", OTA_LABEL_POD_UID, NULL};
    assert_null(at(job, p_pod_label)); /* OTA's own label: not on another client's Job */
    const char *p_init[] = {"spec", "template", "spec", "initContainers", NULL};
    yajl_val init = at(job, p_init);
    assert_int_equal(init->u.array.len, 2); /* the helper, then pull-0 */
    assert_string_equal(kobj_member_str(init->u.array.values[1], "image"), "nginx:1.25");
    /* the spec's policy, where the tag alone would say IfNotPresent */
    assert_string_equal(kobj_member_str(init->u.array.values[1], "imagePullPolicy"), "Always");
    const char *p_node[] = {"spec", "template", "spec", "nodeName", NULL};
    assert_string_equal(str_at(job, p_node), "edge-1");
    const char *p_secret[] = {"spec", "template", "spec", "imagePullSecrets", NULL};
    assert_string_equal(kobj_member_str(at(job, p_secret)->u.array.values[0], "name"), "regcred");
    yajl_tree_free(job);

    /* refusals name the field */
    static const struct {
        const char *field;
        const char *want;
    } rows[] = {{"owner", "owner uid is missing"},
                {"policy", "pull policy Never is neither Always nor IfNotPresent"},
                {"node", "node name is missing"}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        pull_job_spec bad = s;
        if (strcmp(rows[i].field, "owner") == 0)
            bad.owner.uid = NULL;
        else if (strcmp(rows[i].field, "policy") == 0)
            bad.pull_policy = "Never";
        else
            bad.node_name = "";
        assert_int_equal(pull_job_render(&bad, &a, &json, &len, err, sizeof(err)), -1);
        assert_string_equal(err, rows[i].want);
    }
    arena_free(&a);
}

/* An ImageCache's Job: the targets are the regular containers, one per
 * distinct string in order (two spellings of one image are two, so each
 * image as written has its own "pull-<i>"), the helper the only init
 * container, no ota-done; golden file cache.json.  The OTA and
 * ImagePullJob shapes are unchanged by the option (goldens above). */
static void test_targets_as_containers(void **state)
{
    (void)state;
    const char *images[] = {"nginx", "docker.io/library/nginx:latest", "nginx",
                            "registry.example.com/edge/agent:v2"};
    const char *secrets[] = {"regcred"};
    const char *labels[] = {"ota-prepull.openyurt.io/imagecache", "cache-uid"};
    pull_job_spec s = {
        .namespace = "kube-fledged",
        .name = "ota-ic-imagecache1-0123456789abcdef",
        .node_name = "edge-1",
        .owner = {"kubefledged.io/v1alpha2", "ImageCache", "imagecache1", "cache-uid", 1},
        .labels = labels,
        .n_labels = 1,
        .images = images,
        .n_images = 4,
        .pull_secrets = secrets,
        .n_pull_secrets = 1,
        .pull_policy = "IfNotPresent",
        .helper_image = "busybox:1.36-musl",
        .backoff_limit = 0,
        .active_deadline_seconds = 300,
        .targets_as_containers = 1,
    };
    arena a;
    arena_init(&a);
    char err[256] = "", path[] = GOLDEN_DIR "cache.json";
    const char *json = NULL;
    size_t len = 0;
    FX_CHECK("cache.json", pull_job_render(&s, &a, &json, &len, err, sizeof(err)) == 0, "%s",
             err);
    if (getenv("OTA_UPDATE_GOLDEN") != NULL) {
        FILE *f = fopen(path, "wb");
        FX_CHECK("cache.json", f != NULL && fwrite(json, 1, len, f) == len && fclose(f) == 0,
                 "cannot write %s", path);
    }
    size_t want_len = 0;
    const char *want = read_file(&a, path, &want_len);
    FX_CHECK("cache.json", want != NULL, "cannot read %s (run from the repository root)", path);
    if (want_len != len || memcmp(want, json, len) != 0) {
        print_error("%s differs from the rendered Job:\n%s\n", path, json);
        fail_msg("golden file %s (OTA_UPDATE_GOLDEN=1 regenerates it)", path);
    }

    yajl_val job = parse(json);
    const char *p_init[] = {"spec", "template", "spec", "initContainers", NULL};
    const char *p_cont[] = {"spec", "template", "spec", "containers", NULL};
    assert_int_equal(count(job, p_init), 1);
    const want_container helper = {"ota-helper", "busybox:1.36-musl", "IfNotPresent",
                                   {"/bin/busybox", "cp", "/bin/busybox", "/ota-bin/true"}, 0};
    check_container(elem(job, p_init, 0), &helper);
    assert_int_equal(count(job, p_cont), 3);
    const want_container want_c[] = {
        {"pull-0", "nginx", "IfNotPresent", {"/ota-bin/true"}, 1},
        {"pull-1", "docker.io/library/nginx:latest", "IfNotPresent", {"/ota-bin/true"}, 1},
        {"pull-2", "registry.example.com/edge/agent:v2", "IfNotPresent", {"/ota-bin/true"}, 1},
    };
    for (size_t i = 0; i < 3; i++)
        check_container(elem(job, p_cont, i), &want_c[i]);
    const char *p_restart[] = {"spec", "template", "spec", "restartPolicy", NULL};
    assert_string_equal(str_at(job, p_restart), "Never");
    yajl_tree_free(job);

    /* the same spec as init containers: one nginx, then ota-done */
    s.targets_as_containers = 0;
    assert_int_equal(pull_job_render(&s, &a, &json, &len, err, sizeof(err)), 0);
    job = parse(json);
    assert_int_equal(count(job, p_init), 3);
    assert_int_equal(count(job, p_cont), 1);
    const char *p_name[] = {"name", NULL};
    assert_string_equal(str_at(elem(job, p_cont, 0), p_name), "ota-done");
    yajl_tree_free(job);
    arena_free(&a);
}

/* The per-target words patch reads back through kobj_job as the same
 * words (what the controller reads after the pod is gone). */
static void test_words_patch(void **state)
{
    (void)state;
    const pull_job_words w[] = {{0, "ErrImagePull", "manifest unknown"},
                                {12, "ImagePullBackOff", NULL}};
    char *body = pull_job_words_patch(w, 2, 1);
    assert_non_null(body);
    assert_string_equal(body,
                        "{\"metadata\":{\"annotations\":{"
                        "\"ota-prepull/given-up-reason-0\":\"ErrImagePull\","
                        "\"ota-prepull/given-up-message-0\":\"manifest unknown\","
                        "\"ota-prepull/given-up-reason-12\":\"ImagePullBackOff\","
                        "\"ota-prepull/given-up-message-12\":\"\"}},"
                        "\"spec\":{\"activeDeadlineSeconds\":1}}");
    /* a Job carrying them: its view has both, by index; targets from the
     * containers (rmi-<i>: the command's last word) */
    char job[2048];
    snprintf(job, sizeof(job),
             "{\"metadata\":{\"name\":\"j\",\"uid\":\"u\",\"annotations\":%.*s},"
             "\"spec\":{\"template\":{\"spec\":{\"containers\":["
             "{\"name\":\"pull-0\",\"image\":\"nginx\"},{\"name\":\"rmi-1\",\"image\":\"crictl\","
             "\"command\":[\"crictl\",\"rmi\",\"busybox:1.36\"]},{\"name\":\"ota-done\"}]}}}}",
             (int)(strstr(body, "}},") + 1 - (body + strlen("{\"metadata\":{\"annotations\":"))),
             body + strlen("{\"metadata\":{\"annotations\":"));
    free(body);
    char perr[256];
    yajl_val tree = yajl_tree_parse(job, perr, sizeof(perr));
    assert_non_null(tree);
    kobj *o = kobj_decode(KOBJ_JOB, tree);
    yajl_tree_free(tree);
    assert_non_null(o);
    assert_int_equal(o->u.job.n_targets, 13);
    assert_string_equal(o->u.job.target_images[0], "nginx");
    assert_string_equal(o->u.job.target_images[1], "busybox:1.36");
    assert_null(o->u.job.target_images[2]);
    assert_string_equal(o->u.job.target_reasons[0], "ErrImagePull");
    assert_string_equal(o->u.job.target_messages[0], "manifest unknown");
    assert_null(o->u.job.target_reasons[1]);
    assert_string_equal(o->u.job.target_reasons[12], "ImagePullBackOff");
    assert_string_equal(o->u.job.target_messages[12], "");
    kobj_free(o);
    body = pull_job_words_patch(w, 0, 0);
    assert_string_equal(body, "{\"metadata\":{\"annotations\":{}}}");
    free(body);
}

/* As containers, a reference the kubelet refuses is left for the kubelet
 * to refuse (InvalidImageName, that image alone); one the apiserver would
 * refuse still stops the Job.  As init containers, both stop it. */
static void test_containers_keep_bad_references(void **state)
{
    (void)state;
    static const struct {
        const char *image;
        int as_containers, renders;
        const char *err_part;
    } rows[] = {
        {"registry.example.com/ic/Bad:1.0", 1, 1, NULL},
        {"nginx:", 1, 1, NULL},
        {"registry.example.com/ic/Bad:1.0", 0, 0, "repository name must be lowercase"},
        {" nginx:1.25", 1, 0, "whitespace"},
        {"nginx:1.25 ", 1, 0, "whitespace"},
        {"", 1, 0, "empty"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const char *images[] = {"nginx:1.25", rows[i].image};
        pull_job_spec s = {
            .namespace = "ns", .name = "ota-ic-c-0123456789abcdef", .node_name = "n1",
            .owner = {"kubefledged.io/v1alpha2", "ImageCache", "c", "u", 1},
            .images = images, .n_images = 2, .helper_image = "busybox:1.36-musl",
            .active_deadline_seconds = 60, .targets_as_containers = rows[i].as_containers,
        };
        arena a;
        arena_init(&a);
        char err[256] = "";
        const char *json = NULL;
        size_t len = 0;
        int rc = pull_job_render(&s, &a, &json, &len, err, sizeof(err));
        FX_CHECK(rows[i].image, (rc == 0) == rows[i].renders, "rc %d (%s)", rc, err);
        if (rows[i].renders) {
            yajl_val job = parse(json);
            const char *p_cont[] = {"spec", "template", "spec", "containers", NULL};
            yajl_val c = elem(job, p_cont, 1);
            const char *p_image[] = {"image", NULL}, *p_policy[] = {"imagePullPolicy", NULL};
            FX_CHECK(rows[i].image, streq(str_at(c, p_image), rows[i].image), "image");
            FX_CHECK(rows[i].image, streq(str_at(c, p_policy), "IfNotPresent"), "policy");
            yajl_tree_free(job);
        } else {
            FX_CHECK(rows[i].image, strstr(err, rows[i].err_part) != NULL, "err %s", err);
        }
        arena_free(&a);
    }
}

/* The image-volume method (prepull_job.h): the OTA request's Job with every
 * target an image volume "img-<i>" (one per distinct string, the policy the
 * helper shape gives it), one container "pull-<i>" per volume running the
 * helper image's own true with exactly its volume read-only, no init
 * container, no emptyDir; golden file full-image-volume.json.  kobj reads
 * each target's image from its volume, and a container's status as the
 * targets-as-containers reading does (CreateContainerError included). */
static void test_image_volume_job(void **state)
{
    (void)state;
    prepull_job_spec spec = goldens[1].spec;
    spec.method = PULL_JOB_METHOD_IMAGE_VOLUME;
    arena a;
    arena_init(&a);
    char err[256] = "", path[] = GOLDEN_DIR "full-image-volume.json";
    const char *json = NULL;
    size_t len = 0;
    FX_CHECK("full-image-volume.json", prepull_job_render(&spec, &a, &json, &len, err, sizeof(err)) == 0,
             "%s", err);
    if (getenv("OTA_UPDATE_GOLDEN") != NULL) {
        FILE *f = fopen(path, "wb");
        FX_CHECK(path, f != NULL && fwrite(json, 1, len, f) == len && fclose(f) == 0,
                 "cannot write %s", path);
    }
    size_t want_len = 0;
    const char *want = read_file(&a, path, &want_len);
    FX_CHECK(path, want != NULL, "cannot read %s (run from the repository root)", path);
    if (want_len != len || memcmp(want, json, len) != 0) {
        print_error("%s differs from the rendered Job:\n%s\n", path, json);
        fail_msg("golden file %s (OTA_UPDATE_GOLDEN=1 regenerates it)", path);
    }

    yajl_val job = parse(json);
    const char *p_init[] = {"spec", "template", "spec", "initContainers", NULL};
    const char *p_cont[] = {"spec", "template", "spec", "containers", NULL};
    const char *p_vols[] = {"spec", "template", "spec", "volumes", NULL};
    assert_null(at(job, p_init));
    /* distinct strings: busybox:1.36 twice is one, nginx and
     * docker.io/library/nginx:latest two */
    static const struct {
        const char *ref, *policy;
    } want_t[] = {
        {"busybox:1.36", "IfNotPresent"},
        {"registry.example.com/edge/setup@sha256:" D64, "IfNotPresent"},
        {"nginx", "Always"},
        {"registry.example.com/edge/agent:v2", "IfNotPresent"},
        {"docker.io/library/nginx:latest", "Always"},
        {"localhost:5000/tools/probe:1.0", "IfNotPresent"},
    };
    size_t n = sizeof(want_t) / sizeof(want_t[0]);
    assert_int_equal(count(job, p_vols), n);
    assert_int_equal(count(job, p_cont), n);
    const char *p_name[] = {"name", NULL}, *p_image[] = {"image", NULL},
               *p_policy[] = {"imagePullPolicy", NULL}, *p_cmd[] = {"command", NULL},
               *p_ref[] = {"image", "reference", NULL}, *p_vpol[] = {"image", "pullPolicy", NULL},
               *p_mounts[] = {"volumeMounts", NULL}, *p_ro[] = {"readOnly", NULL},
               *p_priv[] = {"securityContext", "allowPrivilegeEscalation", NULL},
               *p_keys_empty[] = {"emptyDir", NULL};
    for (size_t i = 0; i < n; i++) {
        char vname[16], cname[16];
        snprintf(vname, sizeof(vname), "img-%zu", i);
        snprintf(cname, sizeof(cname), "pull-%zu", i);
        yajl_val v = elem(job, p_vols, i), c = elem(job, p_cont, i);
        FX_CHECK(vname, streq(str_at(v, p_name), vname), "volume name");
        FX_CHECK(vname, streq(str_at(v, p_ref), want_t[i].ref), "reference %s", str_at(v, p_ref));
        FX_CHECK(vname, streq(str_at(v, p_vpol), want_t[i].policy), "pullPolicy");
        FX_CHECK(vname, at(v, p_keys_empty) == NULL, "no emptyDir");
        FX_CHECK(cname, streq(str_at(c, p_name), cname), "container name");
        /* nothing from the target runs: the helper image's own true */
        FX_CHECK(cname, streq(str_at(c, p_image), spec.helper_image), "image");
        FX_CHECK(cname, streq(str_at(c, p_policy), "IfNotPresent"), "helper policy");
        FX_CHECK(cname,
                 count(c, p_cmd) == 2 && YAJL_IS_STRING(elem(c, p_cmd, 0)) &&
                     streq(YAJL_GET_STRING(elem(c, p_cmd, 0)), "/bin/busybox") &&
                     streq(YAJL_GET_STRING(elem(c, p_cmd, 1)), "true"),
                 "command");
        yajl_val m = elem(c, p_mounts, 0);
        FX_CHECK(cname, count(c, p_mounts) == 1 && streq(str_at(m, p_name), vname),
                 "mounts exactly its volume");
        FX_CHECK(cname, at(m, p_ro) != NULL && YAJL_IS_TRUE(at(m, p_ro)), "read-only");
        FX_CHECK(cname, is_false(at(c, p_priv)), "allowPrivilegeEscalation");
    }
    const char *p_restart[] = {"spec", "template", "spec", "restartPolicy", NULL};
    assert_string_equal(str_at(job, p_restart), "Never");
    /* its own name: the request's helper Job may exist beside it */
    char helper_name[PREPULL_JOB_NAME_MAX + 1], volume_name[PREPULL_JOB_NAME_MAX + 1];
    prepull_job_method_name(helper_name, spec.pod_name, spec.pod_uid, spec.revision_hash,
                            spec.request_time, PULL_JOB_METHOD_HELPER);
    prepull_job_method_name(volume_name, spec.pod_name, spec.pod_uid, spec.revision_hash,
                            spec.request_time, PULL_JOB_METHOD_IMAGE_VOLUME);
    const char *p_jname[] = {"metadata", "name", NULL};
    assert_string_equal(str_at(job, p_jname), volume_name);
    assert_string_not_equal(helper_name, volume_name);
    char plain[PREPULL_JOB_NAME_MAX + 1];
    prepull_job_name(plain, spec.pod_name, spec.pod_uid, spec.revision_hash, spec.request_time);
    assert_string_equal(helper_name, plain);

    /* kobj: targets by their volume's reference (the Job as created: a uid) */
    const char *meta = strstr(json, "\"metadata\": {");
    assert_non_null(meta);
    size_t head = (size_t)(meta - json) + strlen("\"metadata\": {");
    const char *created = arena_printf(&a, "%.*s\"uid\": \"job-uid\", %s", (int)head, json,
                                       json + head);
    assert_non_null(created);
    yajl_tree_free(job);
    job = parse(created);
    kobj *o = kobj_decode(KOBJ_JOB, job);
    assert_non_null(o);
    assert_int_equal(o->u.job.n_targets, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(o->u.job.target_images[i], want_t[i].ref);
    kobj_free(o);
    yajl_tree_free(job);

    /* the same spec, helper method: today's shape (full.json) */
    spec.method = PULL_JOB_METHOD_HELPER;
    assert_int_equal(prepull_job_render(&spec, &a, &json, &len, err, sizeof(err)), 0);
    job = parse(json);
    assert_int_equal(count(job, p_init), 6); /* ota-helper, 5 distinct images */
    yajl_tree_free(job);
    /* an unknown method is refused */
    spec.method = (pull_job_method)7;
    assert_int_equal(prepull_job_render(&spec, &a, &json, &len, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "pull method"));
    arena_free(&a);
}

/* An image-volume Job's pod, read per target: pulled, pulling, the
 * volume's pull error on the container that mounts it, and
 * CreateContainerError (the node's runtime has no image volumes) as a
 * waiting target with the kubelet's words. */
static void test_image_volume_pod_reading(void **state)
{
    (void)state;
    static const struct {
        const char *status; /* containerStatuses[0] after "name" */
        unsigned char state;
        const char *reason;
    } rows[] = {
        {"\"state\":{\"terminated\":{\"exitCode\":0,\"startedAt\":\"2026-11-21T21:00:00Z\"}}",
         KOBJ_TARGET_DONE, NULL},
        {"\"state\":{\"waiting\":{\"reason\":\"ContainerCreating\"}}", KOBJ_TARGET_PENDING, NULL},
        {"\"state\":{\"waiting\":{\"reason\":\"ErrImagePull\",\"message\":\"not found\"}}",
         KOBJ_TARGET_WAITING, "ErrImagePull"},
        {"\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\",\"message\":\"Back-off\"}}",
         KOBJ_TARGET_WAITING, "ImagePullBackOff"},
        {"\"state\":{\"waiting\":{\"reason\":\"CreateContainerError\",\"message\":\"image "
         "volumes are not supported\"}}",
         KOBJ_TARGET_WAITING, "CreateContainerError"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char pod[1024], perr[256];
        snprintf(pod, sizeof(pod),
                 "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\",\"labels\":{\"batch.kubernetes.io/"
                 "job-name\":\"j\"}},\"spec\":{\"nodeName\":\"n1\"},\"status\":{"
                 "\"containerStatuses\":[{\"name\":\"pull-1\",%s}]}}",
                 rows[i].status);
        yajl_val tree = yajl_tree_parse(pod, perr, sizeof(perr));
        assert_non_null(tree);
        kobj *o = kobj_decode(KOBJ_JOB_POD, tree);
        yajl_tree_free(tree);
        assert_non_null(o);
        FX_CHECK(rows[i].status, o->u.job_pod.n_targets == 2, "targets %zu", o->u.job_pod.n_targets);
        const kobj_target *t = &o->u.job_pod.targets[1];
        FX_CHECK(rows[i].status, t->state == rows[i].state, "state %d", t->state);
        FX_CHECK(rows[i].status,
                 rows[i].reason == NULL ? t->reason == NULL : streq(t->reason, rows[i].reason),
                 "reason %s", t->reason != NULL ? t->reason : "(null)");
        kobj_free(o);
    }
}

static void test_ic_job_name(void **state)
{
    (void)state;
    char a[PREPULL_JOB_NAME_MAX + 1], b[PREPULL_JOB_NAME_MAX + 1], c[PREPULL_JOB_NAME_MAX + 1];
    ic_job_name(a, "imagecache1", "u1", "node-1", "pull:abcd");
    assert_true(strncmp(a, "ota-ic-imagecache1-", 19) == 0);
    assert_int_equal(strlen(a), 19 + 16);
    ic_job_name(b, "imagecache1", "u1", "node-1", "pull:abcd");
    assert_string_equal(a, b); /* a restarted controller computes the same */
    ic_job_name(c, "imagecache1", "u1", "node-1", "purge:abcd");
    assert_string_not_equal(a, c);
    ic_job_name(c, "imagecache1", "u1", "node-2", "pull:abcd");
    assert_string_not_equal(a, c);
    char longname[254];
    memset(longname, 'y', 253);
    longname[253] = '\0';
    ic_job_name(a, longname, "u1", "node-1", "pull:abcd");
    assert_int_equal(strlen(a), PREPULL_JOB_NAME_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_table),           cmocka_unit_test(test_name_without_pod_part),
        cmocka_unit_test(test_name_lengths),         cmocka_unit_test(test_hash_is_stable),
        cmocka_unit_test(test_golden_files),         cmocka_unit_test(test_full_job_facts),
        cmocka_unit_test(test_helper_policy),        cmocka_unit_test(test_image_limits),
        cmocka_unit_test(test_request_without_time), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_ipj_job_name),         cmocka_unit_test(test_ipj_job_body),
        cmocka_unit_test(test_targets_as_containers), cmocka_unit_test(test_ic_job_name),
        cmocka_unit_test(test_image_volume_job), cmocka_unit_test(test_image_volume_pod_reading),
        cmocka_unit_test(test_words_patch),
        cmocka_unit_test(test_containers_keep_bad_references),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

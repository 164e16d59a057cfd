/*
 * test_purge_job.c - the ImageCache purge Job (controller/purge_job.h): every
 * field docs/design.md "Purge Job" fixes, checked on the parsed JSON (owner,
 * pinning, one crictl container per image with its exact argv, the socket's
 * hostPath volume and mount, the security context that is the only
 * privileged one this project writes), and the specs it must refuse.
 */
#include "review_fixture.h"

#include "ota_names.h"
#include "purge_job.h"

#define UID "3c5e7a9b-1d2f-4a6c-8e0b-2d4f6a8c0e1f"
#define JOB "ota-ic-imagecache1-0123456789abcdef"
#define SOCK "/run/containerd/containerd.sock"
#define CRICTL_IMAGE "registry.example.com/tools/crictl:v1.30.0"

static const char *const images3[] = {
    "nginx",                                  /* as the cache writes it */
    "registry.example.com/edge/agent:v2",     /* */
    "localhost:5000/tools/probe@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
};
static const char *const labels[] = {"ota-prepull/imagecache-uid", UID};
static const char *const annotations[] = {"ota-prepull/action", "ImageCachePurge"};

static purge_job_spec base_spec(void)
{
    return (purge_job_spec){
        .namespace = "kube-fledged",
        .name = JOB,
        .node_name = "edge-node-1",
        .owner = {"kubefledged.io/v1alpha2", "ImageCache", "imagecache1", UID, 1},
        .labels = labels,
        .n_labels = 1,
        .annotations = annotations,
        .n_annotations = 1,
        .images = images3,
        .n_images = 3,
        .purge_image = CRICTL_IMAGE,
        .socket_path = SOCK,
        .active_deadline_seconds = 300,
    };
}

/* ---- reading the parsed Job ------------------------------------------------- */

static yajl_val at(yajl_val v, const char **path)
{
    return v != NULL ? yajl_tree_get(v, path, yajl_t_any) : NULL;
}

static const char *str_at(yajl_val v, const char **path)
{
    yajl_val s = v != NULL ? yajl_tree_get(v, path, yajl_t_string) : NULL;
    return s != NULL ? YAJL_GET_STRING(s) : NULL;
}

static const char *shown(const char *s)
{
    return s != NULL ? s : "(absent)";
}

static int streq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static int is_false(yajl_val v)
{
    return v != NULL && YAJL_IS_FALSE(v);
}

static int is_true(yajl_val v)
{
    return v != NULL && YAJL_IS_TRUE(v);
}

static long long int_at(yajl_val v, const char **path)
{
    yajl_val n = v != NULL ? yajl_tree_get(v, path, yajl_t_number) : NULL;
    if (n == NULL || !YAJL_IS_INTEGER(n))
        fail_msg("%s is not an integer", path[0]);
    return YAJL_GET_INTEGER(n);
}

static yajl_val elem(yajl_val v, const char **path, size_t i)
{
    yajl_val arr = v != NULL ? yajl_tree_get(v, path, yajl_t_array) : NULL;
    if (arr == NULL || i >= YAJL_GET_ARRAY(arr)->len)
        return NULL;
    return YAJL_GET_ARRAY(arr)->values[i];
}

static size_t count(yajl_val v, const char **path)
{
    yajl_val arr = v != NULL ? yajl_tree_get(v, path, yajl_t_array) : NULL;
    return arr != NULL ? YAJL_GET_ARRAY(arr)->len : 0;
}

/* Number of members of the object at path (0 when absent or not one). */
static size_t keys(yajl_val v, const char **path)
{
    yajl_val o = v != NULL ? yajl_tree_get(v, path, yajl_t_object) : NULL;
    return o != NULL ? YAJL_GET_OBJECT(o)->len : 0;
}

static yajl_val render_parse(const purge_job_spec *s, arena *a)
{
    char err[256] = "";
    const char *json = NULL;
    size_t len = 0;
    if (purge_job_render(s, a, &json, &len, err, sizeof(err)) != 0)
        fail_msg("render: %s", err);
    assert_int_equal(strlen(json), len);
    char perr[256];
    yajl_val root = yajl_tree_parse(json, perr, sizeof(perr));
    if (root == NULL)
        fail_msg("rendered Job is not JSON: %s", perr);
    return root;
}

/* The marks on the Job and on its pod template. */
static void check_marks(yajl_val meta)
{
    const char *managed[] = {"labels", OTA_LABEL_MANAGED_BY, NULL};
    const char *mine[] = {"labels", "ota-prepull/imagecache-uid", NULL};
    const char *p_labels[] = {"labels", NULL}, *p_ann[] = {"annotations", NULL};
    const char *action[] = {"annotations", "ota-prepull/action", NULL};
    assert_non_null(meta);
    assert_string_equal(str_at(meta, managed), OTA_MANAGED_BY_VALUE);
    assert_string_equal(str_at(meta, mine), UID);
    /* ours only: never upstream's app/kubefledged labels */
    assert_int_equal(keys(meta, p_labels), 2);
    assert_int_equal(keys(meta, p_ann), 1);
    assert_string_equal(str_at(meta, action), "ImageCachePurge");
}

static void check_rmi(yajl_val c, size_t i, const char *image, const char *policy,
                      const char *sock)
{
    char name[16], row[32], rt[160], ie[160];
    snprintf(name, sizeof(name), "rmi-%zu", i);
    snprintf(row, sizeof(row), "container %zu", i);
    snprintf(rt, sizeof(rt), "--runtime-endpoint=unix://%s", sock);
    snprintf(ie, sizeof(ie), "--image-endpoint=unix://%s", sock);
    const char *p_name[] = {"name", NULL}, *p_image[] = {"image", NULL};
    const char *p_policy[] = {"imagePullPolicy", NULL}, *p_cmd[] = {"command", NULL};
    const char *p_args[] = {"args", NULL}, *p_tmp[] = {"terminationMessagePolicy", NULL};
    const char *p_mounts[] = {"volumeMounts", NULL}, *p_sc[] = {"securityContext", NULL};
    const char *p_user[] = {"securityContext", "runAsUser", NULL};
    const char *p_nonroot[] = {"securityContext", "runAsNonRoot", NULL};
    const char *p_esc[] = {"securityContext", "allowPrivilegeEscalation", NULL};
    const char *p_drop[] = {"securityContext", "capabilities", "drop", NULL};
    const char *p_caps[] = {"securityContext", "capabilities", NULL};
    const char *p_lim[] = {"resources", "limits", "memory", NULL};
    const char *p_env[] = {"env", NULL};
    FX_CHECK(row, c != NULL, "missing");
    FX_CHECK(row, streq(str_at(c, p_name), name), "name %s", shown(str_at(c, p_name)));
    FX_CHECK(row, streq(str_at(c, p_image), CRICTL_IMAGE), "image %s", shown(str_at(c, p_image)));
    FX_CHECK(row, streq(str_at(c, p_policy), policy), "policy %s", shown(str_at(c, p_policy)));
    const char *argv[] = {"crictl", rt, ie, "rmi", image};
    FX_CHECK(row, count(c, p_cmd) == 5, "command has %zu words", count(c, p_cmd));
    for (size_t w = 0; w < 5; w++) {
        yajl_val word = elem(c, p_cmd, w);
        FX_CHECK(row, word != NULL && YAJL_IS_STRING(word) && streq(YAJL_GET_STRING(word), argv[w]),
                 "command word %zu: want %s", w, argv[w]);
    }
    FX_CHECK(row, at(c, p_args) == NULL && at(c, p_env) == NULL, "args or env");
    FX_CHECK(row, streq(str_at(c, p_tmp), "FallbackToLogsOnError"), "terminationMessagePolicy");
    yajl_val m = elem(c, p_mounts, 0);
    const char *m_name[] = {"name", NULL}, *m_path[] = {"mountPath", NULL},
               *m_ro[] = {"readOnly", NULL};
    FX_CHECK(row,
             count(c, p_mounts) == 1 && streq(str_at(m, m_name), "cri-socket") &&
                 streq(str_at(m, m_path), sock) && is_true(at(m, m_ro)),
             "the socket's mount");
    FX_CHECK(row, keys(c, p_sc) == 4, "securityContext has %zu fields", keys(c, p_sc));
    FX_CHECK(row, int_at(c, p_user) == 0, "runAsUser");
    FX_CHECK(row, is_false(at(c, p_nonroot)), "runAsNonRoot");
    FX_CHECK(row, is_false(at(c, p_esc)), "allowPrivilegeEscalation");
    yajl_val d0 = elem(c, p_drop, 0);
    FX_CHECK(row,
             keys(c, p_caps) == 1 && count(c, p_drop) == 1 && d0 != NULL &&
                 streq(YAJL_GET_STRING(d0), "ALL"),
             "capabilities drop ALL, add nothing");
    FX_CHECK(row, str_at(c, p_lim) != NULL, "memory limit");
}

/* ---- the Job, field by field ------------------------------------------------- */

static void test_job_facts(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    purge_job_spec s = base_spec();
    yajl_val job = render_parse(&s, &a);

    const char *p_api[] = {"apiVersion", NULL}, *p_kind[] = {"kind", NULL};
    const char *p_name[] = {"metadata", "name", NULL}, *p_ns[] = {"metadata", "namespace", NULL};
    const char *p_gen[] = {"metadata", "generateName", NULL}, *p_meta[] = {"metadata", NULL};
    assert_string_equal(str_at(job, p_api), "batch/v1");
    assert_string_equal(str_at(job, p_kind), "Job");
    assert_string_equal(str_at(job, p_name), JOB);
    assert_null(at(job, p_gen));
    assert_string_equal(str_at(job, p_ns), "kube-fledged");
    check_marks(at(job, p_meta));

    const char *p_owners[] = {"metadata", "ownerReferences", NULL};
    const char *o_api[] = {"apiVersion", NULL}, *o_kind[] = {"kind", NULL},
               *o_name[] = {"name", NULL}, *o_uid[] = {"uid", NULL},
               *o_ctl[] = {"controller", NULL}, *o_block[] = {"blockOwnerDeletion", NULL};
    assert_int_equal(count(job, p_owners), 1);
    yajl_val owner = elem(job, p_owners, 0);
    assert_string_equal(str_at(owner, o_api), "kubefledged.io/v1alpha2");
    assert_string_equal(str_at(owner, o_kind), "ImageCache");
    assert_string_equal(str_at(owner, o_name), "imagecache1");
    assert_string_equal(str_at(owner, o_uid), UID);
    assert_true(is_true(at(owner, o_ctl)));
    assert_true(is_false(at(owner, o_block)));

    const char *p_backoff[] = {"spec", "backoffLimit", NULL};
    const char *p_deadline[] = {"spec", "activeDeadlineSeconds", NULL};
    const char *p_ttl[] = {"spec", "ttlSecondsAfterFinished", NULL};
    const char *p_tmeta[] = {"spec", "template", "metadata", NULL};
    assert_int_equal(int_at(job, p_backoff), 0);
    assert_int_equal(int_at(job, p_deadline), 300);
    assert_null(at(job, p_ttl));
    check_marks(at(job, p_tmeta));

    const char *p_pod[] = {"spec", "template", "spec", NULL};
    yajl_val pod = at(job, p_pod);
    assert_non_null(pod);
    const char *p_restart[] = {"restartPolicy", NULL}, *p_node[] = {"nodeName", NULL};
    const char *p_sel[] = {"nodeSelector", NULL}, *p_aff[] = {"affinity", NULL};
    const char *p_tol[] = {"tolerations", NULL}, *t_op[] = {"operator", NULL};
    const char *p_sa[] = {"automountServiceAccountToken", NULL};
    const char *p_hostpid[] = {"hostPID", NULL}, *p_hostnet[] = {"hostNetwork", NULL};
    const char *p_inits[] = {"initContainers", NULL}, *p_pull[] = {"imagePullSecrets", NULL};
    const char *p_podsc_nonroot[] = {"securityContext", "runAsNonRoot", NULL};
    assert_string_equal(str_at(pod, p_restart), "Never");
    assert_string_equal(str_at(pod, p_node), "edge-node-1");
    assert_null(at(pod, p_sel));
    assert_null(at(pod, p_aff));
    assert_int_equal(count(pod, p_tol), 1);
    assert_int_equal(keys(elem(pod, p_tol, 0), (const char *[]){NULL}), 1);
    assert_string_equal(str_at(elem(pod, p_tol, 0), t_op), "Exists");
    assert_true(is_false(at(pod, p_sa)));
    assert_null(at(pod, p_hostpid));
    assert_null(at(pod, p_hostnet));
    assert_null(at(pod, p_inits));
    assert_null(at(pod, p_pull));
    /* a pod-level runAsNonRoot: true would stop every container */
    assert_null(at(pod, p_podsc_nonroot));
    const char *p_podsc[] = {"securityContext", NULL};
    const char *p_seccomp[] = {"securityContext", "seccompProfile", "type", NULL};
    assert_int_equal(keys(pod, p_podsc), 1);
    assert_string_equal(str_at(pod, p_seccomp), "RuntimeDefault");

    const char *p_vols[] = {"volumes", NULL}, *v_name[] = {"name", NULL};
    const char *v_path[] = {"hostPath", "path", NULL}, *v_type[] = {"hostPath", "type", NULL};
    const char *v_host[] = {"hostPath", NULL};
    assert_int_equal(count(pod, p_vols), 1);
    yajl_val vol = elem(pod, p_vols, 0);
    assert_string_equal(str_at(vol, v_name), "cri-socket");
    assert_string_equal(str_at(vol, v_path), SOCK);
    assert_string_equal(str_at(vol, v_type), "Socket");
    assert_int_equal(keys(vol, v_host), 2);

    /* regular containers, one per image, in the order given */
    const char *p_ctrs[] = {"containers", NULL};
    assert_int_equal(count(pod, p_ctrs), 3);
    for (size_t i = 0; i < 3; i++)
        check_rmi(elem(pod, p_ctrs, i), i, images3[i], "IfNotPresent", SOCK);

    yajl_tree_free(job);
    arena_free(&a);
}

/* Same spec, same bytes: a restarted controller renders the Job it made. */
static void test_deterministic(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    purge_job_spec s = base_spec();
    char err[256];
    const char *j1, *j2;
    size_t l1, l2;
    assert_int_equal(purge_job_render(&s, &a, &j1, &l1, err, sizeof(err)), 0);
    assert_int_equal(purge_job_render(&s, &a, &j2, &l2, err, sizeof(err)), 0);
    assert_int_equal(l1, l2);
    assert_memory_equal(j1, j2, l1);
    assert_int_equal(j1[l1 - 1], '\n');
    assert_null(strstr(j1, "\"privileged\""));
    arena_free(&a);
}

/* CRI-O's socket, a :latest purge image (pulled Always, as the apiserver
 * would default it), no labels or annotations of the caller's. */
static void test_other_socket_and_policy(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    purge_job_spec s = base_spec();
    s.socket_path = "/var/run/crio/crio.sock";
    s.purge_image = CRICTL_IMAGE;
    s.n_labels = 0;
    s.n_annotations = 0;
    s.n_images = 1;
    yajl_val job = render_parse(&s, &a);
    const char *p_ctrs[] = {"spec", "template", "spec", "containers", NULL};
    check_rmi(elem(job, p_ctrs, 0), 0, "nginx", "IfNotPresent", "/var/run/crio/crio.sock");
    const char *p_path[] = {"spec", "template", "spec", "volumes", NULL};
    const char *v_path[] = {"hostPath", "path", NULL};
    assert_string_equal(str_at(elem(job, p_path, 0), v_path), "/var/run/crio/crio.sock");
    const char *p_labels[] = {"metadata", "labels", NULL};
    const char *p_ann[] = {"metadata", "annotations", NULL};
    assert_int_equal(keys(job, p_labels), 1);
    assert_null(at(job, p_ann));
    yajl_tree_free(job);

    s.purge_image = "crictl";
    job = render_parse(&s, &a);
    const char *p_policy[] = {"imagePullPolicy", NULL};
    assert_string_equal(str_at(elem(job, p_ctrs, 0), p_policy), "Always");
    yajl_tree_free(job);
    arena_free(&a);
}

/* 64 images fit, a 65th does not. */
static void test_image_limit(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    const char *many[PURGE_JOB_MAX_IMAGES + 1];
    for (size_t i = 0; i <= PURGE_JOB_MAX_IMAGES; i++)
        many[i] = arena_printf(&a, "registry.example.com/app:v%zu", i);
    purge_job_spec s = base_spec();
    s.images = many;
    s.n_images = PURGE_JOB_MAX_IMAGES;
    yajl_val job = render_parse(&s, &a);
    const char *p_ctrs[] = {"spec", "template", "spec", "containers", NULL};
    assert_int_equal(count(job, p_ctrs), PURGE_JOB_MAX_IMAGES);
    check_rmi(elem(job, p_ctrs, 63), 63, "registry.example.com/app:v63", "IfNotPresent", SOCK);
    yajl_tree_free(job);
    char err[256] = "";
    const char *json = NULL;
    size_t len;
    s.n_images = PURGE_JOB_MAX_IMAGES + 1;
    assert_int_equal(purge_job_render(&s, &a, &json, &len, err, sizeof(err)), -1);
    assert_contains(err, "more than 64 images");
    assert_null(json);
    arena_free(&a);
}

/* ---- refusals ------------------------------------------------------------------ */

typedef struct bad_row {
    const char *why;
    void (*edit)(purge_job_spec *s);
} bad_row;

static const char *const upper[] = {"nginx", "Nginx:1.25"};
static const char *const twice[] = {"nginx", "registry.example.com/a:1", "nginx"};
static const char *const spelled_twice[] = {"nginx:1.25", "docker.io/library/nginx:1.25"};
static const char *const with_null[] = {"nginx", NULL};
static const char *const bad_label[] = {"", "v"};
static const char *const null_value[] = {"k", NULL};
#define LONG_SOCK                                                                                  \
    "/run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
    "aaaaaaaaaaaaaaa.sock"

/* clang-format off */
static void no_namespace(purge_job_spec *s) { s->namespace = NULL; }
static void no_name(purge_job_spec *s) { s->name = ""; }
static void no_node(purge_job_spec *s) { s->node_name = NULL; }
static void no_owner_api(purge_job_spec *s) { s->owner.api_version = ""; }
static void no_owner_kind(purge_job_spec *s) { s->owner.kind = NULL; }
static void no_owner_name(purge_job_spec *s) { s->owner.name = NULL; }
static void no_owner_uid(purge_job_spec *s) { s->owner.uid = ""; }
static void no_purge_image(purge_job_spec *s) { s->purge_image = NULL; }
static void empty_purge_image(purge_job_spec *s) { s->purge_image = ""; }
static void bad_purge_image(purge_job_spec *s) { s->purge_image = "crictl:"; }
static void no_socket(purge_job_spec *s) { s->socket_path = NULL; }
static void relative_socket(purge_job_spec *s) { s->socket_path = "run/containerd/containerd.sock"; }
static void dotdot_socket(purge_job_spec *s) { s->socket_path = "/run/../etc/shadow"; }
static void dotdot_end(purge_job_spec *s) { s->socket_path = "/run/containerd/.."; }
static void newline_socket(purge_job_spec *s) { s->socket_path = "/run/containerd.sock\nx"; }
static void del_socket(purge_job_spec *s) { s->socket_path = "/run/\x7f.sock"; }
static void long_socket(purge_job_spec *s) { s->socket_path = LONG_SOCK; }
static void deadline_0(purge_job_spec *s) { s->active_deadline_seconds = 0; }
static void deadline_neg(purge_job_spec *s) { s->active_deadline_seconds = -1; }
static void no_images(purge_job_spec *s) { s->n_images = 0; }
static void bad_image(purge_job_spec *s) { s->images = upper; s->n_images = 2; }
static void null_image(purge_job_spec *s) { s->images = with_null; s->n_images = 2; }
static void same_image(purge_job_spec *s) { s->images = twice; s->n_images = 3; }
static void same_spelled(purge_job_spec *s) { s->images = spelled_twice; s->n_images = 2; }
static void empty_label(purge_job_spec *s) { s->labels = bad_label; s->n_labels = 1; }
static void null_annotation(purge_job_spec *s) { s->annotations = null_value; s->n_annotations = 1; }
/* clang-format on */

static const bad_row bads[] = {
    {"namespace is missing", no_namespace},
    {"job name is missing", no_name},
    {"node name is missing", no_node},
    {"owner apiVersion is missing", no_owner_api},
    {"owner kind is missing", no_owner_kind},
    {"owner name is missing", no_owner_name},
    {"owner uid is missing", no_owner_uid},
    {"purge image is missing", no_purge_image},
    {"purge image is missing", empty_purge_image},
    {"purge image: invalid image reference \"crictl:\"", bad_purge_image},
    {"CRI socket path is missing", no_socket},
    {"CRI socket path run/containerd/containerd.sock is not absolute", relative_socket},
    {"CRI socket path /run/../etc/shadow has a '..' element", dotdot_socket},
    {"CRI socket path /run/containerd/.. has a '..' element", dotdot_end},
    {"CRI socket path has a control character at 20", newline_socket},
    {"CRI socket path has a control character at 5", del_socket},
    {"CRI socket path is longer than 107 bytes", long_socket},
    {"active deadline 0 s is not above 0", deadline_0},
    {"active deadline -1 s is not above 0", deadline_neg},
    {"no image to delete", no_images},
    {"invalid image reference \"Nginx:1.25\": repository name must be lowercase", bad_image},
    {"image 1 is missing", null_image},
    {"image 2 (nginx) is image 0 (nginx) again", same_image},
    {"image 1 (docker.io/library/nginx:1.25) is image 0 (nginx:1.25) again", same_spelled},
    {"label 0 is missing", empty_label},
    {"annotation 0 is missing", null_annotation},
};

static void test_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        purge_job_spec s = base_spec();
        bads[i].edit(&s);
        arena a;
        arena_init(&a);
        char err[256] = "";
        const char *json = NULL;
        size_t len = 0;
        FX_CHECK(bads[i].why, purge_job_render(&s, &a, &json, &len, err, sizeof(err)) == -1,
                 "rendered");
        FX_CHECK(bads[i].why, strstr(err, bads[i].why) != NULL, "error \"%s\"", err);
        FX_CHECK(bads[i].why, json == NULL, "output set");
        arena_free(&a);
    }
}

/* Paths the apiserver and the kernel both take: exactly 107 bytes, "." and
 * names that merely contain "..". */
static void test_socket_paths_accepted(void **state)
{
    (void)state;
    char p107[PURGE_JOB_SOCKET_MAX + 1];
    memset(p107, 'a', PURGE_JOB_SOCKET_MAX);
    p107[0] = '/';
    p107[PURGE_JOB_SOCKET_MAX] = '\0';
    const char *ok[] = {p107, "/run/./containerd.sock", "/run/..d/x..sock", "/k3s.sock",
                        "//run//containerd.sock"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        purge_job_spec s = base_spec();
        s.socket_path = ok[i];
        arena a;
        arena_init(&a);
        char err[256] = "";
        const char *json = NULL;
        size_t len = 0;
        FX_CHECK(ok[i], purge_job_render(&s, &a, &json, &len, err, sizeof(err)) == 0, "%s", err);
        arena_free(&a);
    }
}

/* The same check on its own, as --cri-socket-path is checked at start. */
static void test_check_socket_path(void **state)
{
    (void)state;
    char err[128] = "";
    assert_int_equal(purge_job_check_socket_path(SOCK, err, sizeof(err)), 0);
    assert_int_equal(purge_job_check_socket_path("/var/run/crio/crio.sock", err, sizeof(err)), 0);
    assert_int_equal(purge_job_check_socket_path(NULL, err, sizeof(err)), -1);
    assert_string_equal(err, "CRI socket path is missing");
    assert_int_equal(purge_job_check_socket_path("", err, sizeof(err)), -1);
    assert_int_equal(purge_job_check_socket_path("unix:///run/x.sock", err, sizeof(err)), -1);
    assert_contains(err, "is not absolute");
    assert_int_equal(purge_job_check_socket_path("/a/../b", err, sizeof(err)), -1);
    assert_contains(err, "'..' element");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_facts),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_other_socket_and_policy),
        cmocka_unit_test(test_image_limit),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_socket_paths_accepted),
        cmocka_unit_test(test_check_socket_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * prepull_job.c - see prepull_job.h.  The body is written with yajl_gen into
 * arena memory, keys in a fixed order, so the same spec always gives the
 * same bytes (the golden files in tests/fixtures/jobs/ rely on it).
 *
 * Targets are init containers, not regular containers.  The kubelet pulls a
 * pod's images one after another either way (SyncPod starts containers in a
 * loop and each start waits for its own pull), so regular containers would
 * not pull faster; what they change is that a failed pull no longer stops
 * the others.  Init containers give instead:
 *  - one unambiguous failure: the first image that cannot be pulled is the
 *    one the Job is stuck on, and PullImageFail names it; with regular
 *    containers some images would be pulled, some backing off, and the pod
 *    would never say which outcome is "the" result;
 *  - the order the upgraded pod itself needs its images in (init images
 *    first), so a Job cut short by its deadline has pulled what is needed
 *    first;
 *  - a pod that requests max(init containers), not the sum, so a revision
 *    with many images still asks the node for 1m CPU and 8Mi.
 * A pod needs one regular container; "ota-done" runs /ota-bin/true from the
 * helper image, which the first init container has already pulled.
 *
 * The ownerReference to the pod says controller: false.  The pod does not
 * manage the Job (this controller does); claiming controller: true would
 * make `kubectl describe` and tools that follow controller references treat
 * the Job as the pod's workload.  blockOwnerDeletion is false so a
 * foreground deletion of the pod (the upgrade) never waits for the Job, and
 * so creating the Job needs no update right on pods/finalizers.
 */
#include "prepull_job.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "imageref.h"
#include "ota_names.h"

#define HELPER_BUSYBOX "/bin/busybox"
#define NON_ROOT_ID 65534 /* "nobody"; emptyDir directories are 0777, so cp still works */

uint32_t prepull_job_hash(const char *pod_uid, const char *revision_hash, const char *request_time)
{
    const char *fields[3] = {pod_uid, revision_hash, request_time};
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 offset basis */
    for (size_t f = 0; f < 3; f++) {
        const unsigned char *p = (const unsigned char *)(fields[f] != NULL ? fields[f] : "");
        for (;; p++) {
            h ^= *p;
            h *= 0x100000001b3ULL; /* FNV 64 prime */
            if (*p == '\0')
                break;
        }
    }
    return (uint32_t)(h ^ (h >> 32));
}

void prepull_job_name(char *out, const char *pod_name, const char *pod_uid,
                      const char *revision_hash, const char *request_time)
{
    enum {
        PREFIX_LEN = sizeof(PREPULL_JOB_NAME_PREFIX) - 1,
        ROOM = PREPULL_JOB_NAME_MAX - PREFIX_LEN - 1 - 8, /* the pod name's share: 42 */
    };
    memcpy(out, PREPULL_JOB_NAME_PREFIX, PREFIX_LEN);
    size_t n = 0;
    for (const char *c = pod_name != NULL ? pod_name : ""; *c != '\0' && n < ROOM; c++) {
        char ch = *c;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            ch = '-';
        out[PREFIX_LEN + n++] = ch;
    }
    while (n > 0 && out[PREFIX_LEN + n - 1] == '-')
        n--;
    char *o = out + PREFIX_LEN + n;
    if (n > 0)
        *o++ = '-';
    snprintf(o, 9, "%08x", (unsigned)prepull_job_hash(pod_uid, revision_hash, request_time));
}

/* ---- JSON ---------------------------------------------------------------- */

typedef struct gen {
    yajl_gen g;
    int failed;
} gen;

static void ok(gen *w, yajl_gen_status st)
{
    if (st != yajl_gen_status_ok)
        w->failed = 1;
}

static void str(gen *w, const char *s)
{
    ok(w, yajl_gen_string(w->g, (const unsigned char *)s, strlen(s)));
}

static void open_map(gen *w, const char *key)
{
    if (key != NULL)
        str(w, key);
    ok(w, yajl_gen_map_open(w->g));
}

static void close_map(gen *w)
{
    ok(w, yajl_gen_map_close(w->g));
}

static void open_array(gen *w, const char *key)
{
    str(w, key);
    ok(w, yajl_gen_array_open(w->g));
}

static void close_array(gen *w)
{
    ok(w, yajl_gen_array_close(w->g));
}

static void kv_str(gen *w, const char *key, const char *value)
{
    str(w, key);
    str(w, value);
}

static void kv_int(gen *w, const char *key, long long value)
{
    str(w, key);
    ok(w, yajl_gen_integer(w->g, value));
}

static void kv_bool(gen *w, const char *key, int value)
{
    str(w, key);
    ok(w, yajl_gen_bool(w->g, value));
}

/* Labels and annotations go on the Job and on its pod template alike. */
static void object_meta_marks(gen *w, const prepull_job_spec *s)
{
    open_map(w, "labels");
    kv_str(w, OTA_LABEL_MANAGED_BY, OTA_MANAGED_BY_VALUE);
    kv_str(w, OTA_LABEL_POD_UID, s->pod_uid);
    close_map(w);
    open_map(w, "annotations");
    kv_str(w, OTA_ANN_JOB_REVISION, s->revision_hash);
    kv_str(w, OTA_ANN_JOB_REQUEST_TIME, s->request_time != NULL ? s->request_time : "");
    close_map(w);
}

/* The parts every container shares: tiny resources, no privileges, a
 * working directory that exists in any image (the mount), the volume. */
static void container_common(gen *w, int volume_read_only)
{
    str(w, "workingDir");
    str(w, "/" PREPULL_JOB_VOLUME);
    open_map(w, "resources");
    open_map(w, "requests");
    kv_str(w, "cpu", "1m");
    kv_str(w, "memory", "8Mi");
    close_map(w);
    /* Limits too: namespaces with a ResourceQuota on limits reject pods
     * without them.  32Mi leaves room for the runtime's own setup. */
    open_map(w, "limits");
    kv_str(w, "cpu", "100m");
    kv_str(w, "memory", "32Mi");
    close_map(w);
    close_map(w);
    open_array(w, "volumeMounts");
    open_map(w, NULL);
    kv_str(w, "name", PREPULL_JOB_VOLUME);
    kv_str(w, "mountPath", "/" PREPULL_JOB_VOLUME);
    kv_bool(w, "readOnly", volume_read_only);
    close_map(w);
    close_array(w);
    open_map(w, "securityContext");
    kv_bool(w, "allowPrivilegeEscalation", 0);
    kv_bool(w, "readOnlyRootFilesystem", 1);
    open_map(w, "capabilities");
    open_array(w, "drop");
    str(w, "ALL");
    close_array(w);
    close_map(w);
    close_map(w);
}

static void container(gen *w, const char *name, const char *image, const char *policy,
                      const char *const *command, size_t n_command, int volume_read_only)
{
    open_map(w, NULL);
    kv_str(w, "name", name);
    kv_str(w, "image", image);
    kv_str(w, "imagePullPolicy", policy);
    open_array(w, "command");
    for (size_t i = 0; i < n_command; i++)
        str(w, command[i]);
    close_array(w);
    container_common(w, volume_read_only);
    close_map(w);
}

/* ---- validation ------------------------------------------------------------ */

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    if (errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

typedef struct target {
    const char *image;  /* as the revision spells it */
    const char *normal; /* imageref_format, for deduplication */
    const char *policy;
} target;

/* Collects the distinct images, init images first, into t; returns their
 * number or -1 with err set. */
static int collect_targets(const prepull_job_spec *s, arena *a, target *t, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_init_images + s->n_images; i++) {
        const char *image =
            i < s->n_init_images ? s->init_images[i] : s->images[i - s->n_init_images];
        if (image == NULL)
            return fail(err, errlen, "image %zu is missing", i);
        imageref r;
        if (imageref_parse(&r, image, strlen(image), a, err, errlen) != 0)
            return -1;
        const char *normal = imageref_format(&r, a);
        if (normal == NULL)
            return fail(err, errlen, "out of memory");
        size_t j = 0;
        while (j < n && strcmp(t[j].normal, normal) != 0)
            j++;
        if (j < n)
            continue; /* same image under another spelling: pulled once */
        if (n == PREPULL_JOB_MAX_IMAGES)
            return fail(err, errlen, "more than %d distinct images", PREPULL_JOB_MAX_IMAGES);
        t[n++] = (target){image, normal, imageref_pull_policy(&r)};
    }
    if (n == 0)
        return fail(err, errlen, "no image to pull");
    return (int)n;
}

static int check_spec(const prepull_job_spec *s, char *err, size_t errlen)
{
    const struct {
        const char *name, *value;
    } required[] = {
        {"pod namespace", s->pod_namespace},
        {"pod name", s->pod_name},
        {"pod uid", s->pod_uid},
        {"node name", s->node_name},
        {"revision hash", s->revision_hash},
        {"helper image", s->helper_image},
    };
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (required[i].value == NULL || required[i].value[0] == '\0')
            return fail(err, errlen, "%s is missing", required[i].name);
    if (s->backoff_limit < 0 || s->backoff_limit > 2)
        return fail(err, errlen, "backoff limit %d is not within 0..2", s->backoff_limit);
    if (s->active_deadline_seconds <= 0)
        return fail(err, errlen, "active deadline %ld s is not above 0",
                    s->active_deadline_seconds);
    for (size_t i = 0; i < s->n_pull_secrets; i++)
        if (s->pull_secrets[i] == NULL || s->pull_secrets[i][0] == '\0')
            return fail(err, errlen, "pull secret %zu has no name", i);
    return 0;
}

/* ---- the Job --------------------------------------------------------------- */

static void pod_spec(gen *w, const prepull_job_spec *s, const target *helper, const target *t,
                     size_t n, arena *a)
{
    static const char *const copy[] = {HELPER_BUSYBOX, "cp", HELPER_BUSYBOX, PREPULL_JOB_TRUE};
    static const char *const run_true[] = {PREPULL_JOB_TRUE};

    open_map(w, "spec");
    kv_str(w, "restartPolicy", "Never");
    kv_str(w, "nodeName", s->node_name);
    open_array(w, "tolerations");
    open_map(w, NULL);
    kv_str(w, "operator", "Exists");
    close_map(w);
    close_array(w);
    kv_bool(w, "automountServiceAccountToken", 0);
    kv_bool(w, "enableServiceLinks", 0);
    open_map(w, "securityContext");
    kv_bool(w, "runAsNonRoot", 1);
    kv_int(w, "runAsUser", NON_ROOT_ID);
    kv_int(w, "runAsGroup", NON_ROOT_ID);
    open_map(w, "seccompProfile");
    kv_str(w, "type", "RuntimeDefault");
    close_map(w);
    close_map(w);
    if (s->n_pull_secrets > 0) {
        open_array(w, "imagePullSecrets");
        for (size_t i = 0; i < s->n_pull_secrets; i++) {
            open_map(w, NULL);
            kv_str(w, "name", s->pull_secrets[i]);
            close_map(w);
        }
        close_array(w);
    }
    open_array(w, "volumes");
    open_map(w, NULL);
    kv_str(w, "name", PREPULL_JOB_VOLUME);
    open_map(w, "emptyDir");
    kv_str(w, "sizeLimit", "16Mi"); /* a static busybox is 1-2 MB */
    close_map(w);
    close_map(w);
    close_array(w);

    open_array(w, "initContainers");
    container(w, PREPULL_JOB_HELPER_CONTAINER, helper->image, helper->policy, copy,
              sizeof(copy) / sizeof(copy[0]), 0);
    for (size_t i = 0; i < n; i++) {
        const char *name = arena_printf(a, PREPULL_JOB_TARGET_PREFIX "%zu", i);
        if (name == NULL) {
            w->failed = 1;
            return;
        }
        container(w, name, t[i].image, t[i].policy, run_true, 1, 1);
    }
    close_array(w);
    /* ota-helper has just pulled the helper image on this node: asking the
     * registry again (Always, for a :latest helper) could only fail. */
    open_array(w, "containers");
    container(w, PREPULL_JOB_DONE_CONTAINER, helper->image, "IfNotPresent", run_true, 1, 1);
    close_array(w);
    close_map(w);
}

int prepull_job_render(const prepull_job_spec *s, arena *a, const char **json, size_t *len,
                       char *err, size_t errlen)
{
    target t[PREPULL_JOB_MAX_IMAGES];
    int n = -1;
    gen w = {NULL, 0};
    int rc = -1;

    if (check_spec(s, err, errlen) != 0)
        goto cleanup;
    imageref hr;
    if (imageref_parse(&hr, s->helper_image, strlen(s->helper_image), a, err, errlen) != 0)
        goto cleanup;
    target helper = {s->helper_image, NULL, imageref_pull_policy(&hr)};
    n = collect_targets(s, a, t, err, errlen);
    if (n < 0)
        goto cleanup;

    char name[PREPULL_JOB_NAME_MAX + 1];
    prepull_job_name(name, s->pod_name, s->pod_uid, s->revision_hash, s->request_time);

    yajl_alloc_funcs funcs = arena_yajl_funcs(a);
    w.g = yajl_gen_alloc(&funcs);
    if (w.g == NULL) {
        fail(err, errlen, "out of memory");
        goto cleanup;
    }
    yajl_gen_config(w.g, yajl_gen_beautify, 1);
    yajl_gen_config(w.g, yajl_gen_indent_string, "  ");

    open_map(&w, NULL);
    kv_str(&w, "apiVersion", "batch/v1");
    kv_str(&w, "kind", "Job");
    open_map(&w, "metadata");
    kv_str(&w, "name", name);
    kv_str(&w, "namespace", s->pod_namespace);
    object_meta_marks(&w, s);
    open_array(&w, "ownerReferences");
    open_map(&w, NULL);
    kv_str(&w, "apiVersion", "v1");
    kv_str(&w, "kind", "Pod");
    kv_str(&w, "name", s->pod_name);
    kv_str(&w, "uid", s->pod_uid);
    kv_bool(&w, "controller", 0);
    kv_bool(&w, "blockOwnerDeletion", 0);
    close_map(&w);
    close_array(&w);
    close_map(&w);

    open_map(&w, "spec");
    kv_int(&w, "backoffLimit", s->backoff_limit);
    kv_int(&w, "activeDeadlineSeconds", s->active_deadline_seconds);
    /* no ttlSecondsAfterFinished: see prepull_job.h */
    open_map(&w, "template");
    open_map(&w, "metadata");
    object_meta_marks(&w, s);
    close_map(&w);
    pod_spec(&w, s, &helper, t, (size_t)n, a);
    close_map(&w);
    close_map(&w);
    close_map(&w);

    const unsigned char *buf = NULL;
    if (!w.failed && yajl_gen_get_buf(w.g, &buf, len) != yajl_gen_status_ok)
        w.failed = 1;
    if (w.failed) {
        fail(err, errlen, "could not write the Job");
        goto cleanup;
    }
    *json = (const char *)buf;
    rc = 0;

cleanup:
    if (w.g != NULL)
        yajl_gen_free(w.g); /* the buffer is arena memory and stays */
    return rc;
}

/*
 * prepull_job.c - see prepull_job.h.  The body is written with lib/json into
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
 * An ImageCache reports every (image, node) on its own (its "failures"
 * name each image that failed, with the kubelet's words), so its Jobs ask
 * for targets_as_containers: the targets are then the regular containers,
 * each pulled and started independently; no image waits for another's
 * back-off, and the pod ends Succeeded once each has run /ota-bin/true.
 * Their requests add up (1m and 8Mi each, 64 images at most: 512Mi asked
 * of a node for seconds), the price of one outcome per image.
 *
 * The ownerReference to the pod says controller: false.  The pod does not
 * manage the Job (this controller does); claiming controller: true would
 * make `kubectl describe` and tools that follow controller references treat
 * the Job as the pod's workload.  blockOwnerDeletion is false so a
 * foreground deletion of the pod (the upgrade) never waits for the Job, and
 * so creating the Job needs no update right on pods/finalizers.
 */
#include "prepull_job.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "imageref.h"
#include "json.h"
#include "ota_names.h"

#define HELPER_BUSYBOX "/bin/busybox"
#define NON_ROOT_ID 65534 /* "nobody"; emptyDir directories are 0777, so cp still works */

uint64_t pull_job_hash64(const char *a, const char *b, const char *c)
{
    const char *fields[3] = {a, b, c};
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
    return h;
}

uint32_t pull_job_hash3(const char *a, const char *b, const char *c)
{
    uint64_t h = pull_job_hash64(a, b, c);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t prepull_job_hash(const char *pod_uid, const char *revision_hash, const char *request_time)
{
    return pull_job_hash3(pod_uid, revision_hash, request_time);
}

/* "<prefix><base cut to fit>-<hex digits of hash>" (prepull_job.h's
 * rules); digits is 8 or 16. */
static void job_name(char *out, const char *prefix, const char *base, uint64_t hash, int digits)
{
    size_t prefix_len = strlen(prefix), room = PREPULL_JOB_NAME_MAX - prefix_len - 1 - (size_t)digits;
    memcpy(out, prefix, prefix_len);
    size_t n = 0;
    for (const char *c = base != NULL ? base : ""; *c != '\0' && n < room; c++) {
        char ch = *c;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            ch = '-';
        out[prefix_len + n++] = ch;
    }
    while (n > 0 && out[prefix_len + n - 1] == '-')
        n--;
    char *o = out + prefix_len + n;
    if (n > 0)
        *o++ = '-';
    snprintf(o, (size_t)digits + 1, "%0*" PRIx64, digits, hash);
}

void prepull_job_name(char *out, const char *pod_name, const char *pod_uid,
                      const char *revision_hash, const char *request_time)
{
    job_name(out, PREPULL_JOB_NAME_PREFIX, pod_name,
             prepull_job_hash(pod_uid, revision_hash, request_time), 8);
}

void prepull_job_method_name(char *out, const char *pod_name, const char *pod_uid,
                             const char *revision_hash, const char *request_time,
                             pull_job_method method)
{
    char rt[160];
    if (method == PULL_JOB_METHOD_IMAGE_VOLUME) {
        snprintf(rt, sizeof(rt), "%.128s/image-volume", request_time != NULL ? request_time : "");
        request_time = rt;
    }
    prepull_job_name(out, pod_name, pod_uid, revision_hash, request_time);
}

void ipj_job_name(char *out, const char *ipj_name, const char *ipj_uid, const char *node,
                  const char *spec_hash)
{
    /* 64 bits: 10 000 nodes share one namespace's names, and 32 would
     * collide about once in a hundred such jobs (a collision is a 409
     * read as made before, and the node would never be pulled) */
    job_name(out, IPJ_JOB_NAME_PREFIX, ipj_name, pull_job_hash64(ipj_uid, node, spec_hash), 16);
}

void ic_job_name(char *out, const char *cache_name, const char *cache_uid, const char *node,
                 const char *action)
{
    job_name(out, IC_JOB_NAME_PREFIX, cache_name, pull_job_hash64(cache_uid, node, action), 16);
}

char *pull_job_words_patch(const pull_job_words *words, size_t n, int end)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    char key[64];
    json_map_open(&w, NULL);
    json_map_open(&w, "metadata");
    json_map_open(&w, "annotations");
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof(key), OTA_ANN_JOB_GIVEN_UP_REASON_PREFIX "%zu", words[i].index);
        json_kv_str(&w, key, words[i].reason != NULL ? words[i].reason : "");
        snprintf(key, sizeof(key), OTA_ANN_JOB_GIVEN_UP_MESSAGE_PREFIX "%zu", words[i].index);
        json_kv_str(&w, key, words[i].message != NULL ? words[i].message : "");
    }
    json_map_close(&w);
    json_map_close(&w);
    if (end) {
        json_map_open(&w, "spec");
        json_kv_int(&w, "activeDeadlineSeconds", 1);
        json_map_close(&w);
    }
    json_map_close(&w);
    return json_writer_take(&w);
}

/* ---- JSON ---------------------------------------------------------------- */

/* Labels and annotations go on the Job and on its pod template alike. */
void pull_job_write_marks(json_writer *w, const pull_job_marks *m)
{
    json_map_open(w, "labels");
    json_kv_str(w, OTA_LABEL_MANAGED_BY, OTA_MANAGED_BY_VALUE);
    for (size_t i = 0; i < m->n_labels; i++)
        json_kv_str(w, m->labels[2 * i], m->labels[2 * i + 1]);
    json_map_close(w);
    if (m->n_annotations > 0) {
        json_map_open(w, "annotations");
        for (size_t i = 0; i < m->n_annotations; i++)
            json_kv_str(w, m->annotations[2 * i], m->annotations[2 * i + 1]);
        json_map_close(w);
    }
}

void pull_job_write_head(json_writer *w, const char *namespace, const char *name,
                         const pull_job_owner *owner, const pull_job_marks *m)
{
    json_kv_str(w, "apiVersion", "batch/v1");
    json_kv_str(w, "kind", "Job");
    json_map_open(w, "metadata");
    json_kv_str(w, "name", name);
    json_kv_str(w, "namespace", namespace);
    pull_job_write_marks(w, m);
    json_array_open(w, "ownerReferences");
    json_map_open(w, NULL);
    json_kv_str(w, "apiVersion", owner->api_version);
    json_kv_str(w, "kind", owner->kind);
    json_kv_str(w, "name", owner->name);
    json_kv_str(w, "uid", owner->uid);
    json_kv_bool(w, "controller", owner->controller);
    json_kv_bool(w, "blockOwnerDeletion", 0);
    json_map_close(w);
    json_array_close(w);
    json_map_close(w);
}

static pull_job_marks marks_of(const pull_job_spec *s)
{
    return (pull_job_marks){s->labels, s->n_labels, s->annotations, s->n_annotations};
}

/* The parts every container shares: tiny resources, no privileges, a
 * working directory that exists in any image (the mount), the volume. */
static void container_common(json_writer *w, const char *volume, const char *mount_path,
                             int volume_read_only)
{
    json_kv_str(w, "workingDir", mount_path);
    json_map_open(w, "resources");
    json_map_open(w, "requests");
    json_kv_str(w, "cpu", "1m");
    json_kv_str(w, "memory", "8Mi");
    json_map_close(w);
    /* Limits too: namespaces with a ResourceQuota on limits reject pods
     * without them.  32Mi leaves room for the runtime's own setup. */
    json_map_open(w, "limits");
    json_kv_str(w, "cpu", "100m");
    json_kv_str(w, "memory", "32Mi");
    json_map_close(w);
    json_map_close(w);
    json_array_open(w, "volumeMounts");
    json_map_open(w, NULL);
    json_kv_str(w, "name", volume);
    json_kv_str(w, "mountPath", mount_path);
    json_kv_bool(w, "readOnly", volume_read_only);
    json_map_close(w);
    json_array_close(w);
    json_map_open(w, "securityContext");
    json_kv_bool(w, "allowPrivilegeEscalation", 0);
    json_kv_bool(w, "readOnlyRootFilesystem", 1);
    json_map_open(w, "capabilities");
    json_array_open(w, "drop");
    json_str(w, "ALL");
    json_array_close(w);
    json_map_close(w);
    json_map_close(w);
}

static void container(json_writer *w, const char *name, const char *image, const char *policy,
                      const char *const *command, size_t n_command, int volume_read_only)
{
    json_map_open(w, NULL);
    json_kv_str(w, "name", name);
    json_kv_str(w, "image", image);
    json_kv_str(w, "imagePullPolicy", policy);
    json_array_open(w, "command");
    for (size_t i = 0; i < n_command; i++)
        json_str(w, command[i]);
    json_array_close(w);
    container_common(w, PREPULL_JOB_VOLUME, "/" PREPULL_JOB_VOLUME, volume_read_only);
    json_map_close(w);
}

/* The image-volume method's target container: the helper image's own true,
 * with exactly the target's volume mounted read-only (prepull_job.h). */
static void volume_container(json_writer *w, const char *name, const char *helper_image,
                             const char *helper_policy, const char *volume)
{
    static const char *const own_true[] = {HELPER_BUSYBOX, "true"};
    json_map_open(w, NULL);
    json_kv_str(w, "name", name);
    json_kv_str(w, "image", helper_image);
    json_kv_str(w, "imagePullPolicy", helper_policy);
    json_array_open(w, "command");
    for (size_t i = 0; i < sizeof(own_true) / sizeof(own_true[0]); i++)
        json_str(w, own_true[i]);
    json_array_close(w);
    container_common(w, volume, PREPULL_JOB_IMAGE_MOUNT, 1);
    json_map_close(w);
}

/* ---- validation ------------------------------------------------------------ */

typedef struct target {
    const char *image;  /* as the revision spells it */
    const char *normal; /* imageref_format, for deduplication */
    const char *policy;
} target;

/* Collects the distinct images, init images first, into t; returns their
 * number or -1 with err set. */
static int collect_targets(const pull_job_spec *s, arena *a, target *t, char *err, size_t errlen)
{
    size_t n = 0;
    int as_containers = s->targets_as_containers || s->method == PULL_JOB_METHOD_IMAGE_VOLUME;
    for (size_t i = 0; i < s->n_init_images + s->n_images; i++) {
        const char *image =
            i < s->n_init_images ? s->init_images[i] : s->images[i - s->n_init_images];
        if (image == NULL)
            return errmsg_set(err, errlen, "image %zu is missing", i);
        imageref r;
        const char *policy = "IfNotPresent", *normal = image;
        size_t len = strlen(image);
        if (imageref_parse(&r, image, len, a, err, errlen) == 0) {
            if ((normal = imageref_format(&r, a)) == NULL)
                return errmsg_set(err, errlen, "out of memory");
            policy = imageref_pull_policy(&r);
        } else if (!as_containers || len == 0 || isspace((unsigned char)image[0]) ||
                   isspace((unsigned char)image[len - 1])) {
            /* as containers, a reference the kubelet refuses is its to
             * say (InvalidImageName, in its words, for that image alone);
             * one the apiserver refuses would fail the whole Job */
            return -1;
        }
        /* as containers, "pull-<i>" is the i-th distinct string: the
         * caller finds each image's outcome by it */
        size_t j = 0;
        while (j < n && strcmp(as_containers ? t[j].image : t[j].normal,
                               as_containers ? image : normal) != 0)
            j++;
        if (j < n)
            continue; /* same image under another spelling: pulled once */
        if (n == PREPULL_JOB_MAX_IMAGES)
            return errmsg_set(err, errlen, "more than %d distinct images", PREPULL_JOB_MAX_IMAGES);
        t[n++] = (target){image, normal, s->pull_policy != NULL ? s->pull_policy : policy};
    }
    if (n == 0)
        return errmsg_set(err, errlen, "no image to pull");
    return (int)n;
}

static int check_required(const char *const (*fields)[2], size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (fields[i][1] == NULL || fields[i][1][0] == '\0')
            return errmsg_set(err, errlen, "%s is missing", fields[i][0]);
    return 0;
}

static int check_spec(const pull_job_spec *s, char *err, size_t errlen)
{
    const char *const required[][2] = {
        {"namespace", s->namespace},       {"job name", s->name},
        {"node name", s->node_name},       {"owner apiVersion", s->owner.api_version},
        {"owner kind", s->owner.kind},     {"owner name", s->owner.name},
        {"owner uid", s->owner.uid},       {"helper image", s->helper_image},
    };
    if (check_required(required, sizeof(required) / sizeof(required[0]), err, errlen) != 0)
        return -1;
    if (s->backoff_limit < 0 || s->backoff_limit > 2)
        return errmsg_set(err, errlen, "backoff limit %d is not within 0..2", s->backoff_limit);
    if (s->active_deadline_seconds <= 0)
        return errmsg_set(err, errlen, "active deadline %ld s is not above 0",
                          s->active_deadline_seconds);
    if (s->pull_policy != NULL && strcmp(s->pull_policy, "Always") != 0 &&
        strcmp(s->pull_policy, "IfNotPresent") != 0)
        return errmsg_set(err, errlen, "pull policy %s is neither Always nor IfNotPresent",
                          s->pull_policy);
    if (s->method != PULL_JOB_METHOD_HELPER && s->method != PULL_JOB_METHOD_IMAGE_VOLUME)
        return errmsg_set(err, errlen, "pull method %d is unknown", (int)s->method);
    for (size_t i = 0; i < s->n_pull_secrets; i++)
        if (s->pull_secrets[i] == NULL || s->pull_secrets[i][0] == '\0')
            return errmsg_set(err, errlen, "pull secret %zu has no name", i);
    return 0;
}

/* ---- the Job --------------------------------------------------------------- */

/* The image-volume method's volumes and containers, closing the pod spec
 * (prepull_job.h): volume "img-<i>" and container "pull-<i>" per target. */
static void image_volume_pod(json_writer *w, const target *helper, const target *t, size_t n,
                             arena *a)
{
    const char **vols = arena_alloc(a, (n > 0 ? n : 1) * sizeof(*vols));
    if (vols == NULL) {
        w->failed = 1;
        return;
    }
    json_array_open(w, "volumes");
    for (size_t i = 0; i < n; i++) {
        if ((vols[i] = arena_printf(a, PREPULL_JOB_IMAGE_VOLUME_PREFIX "%zu", i)) == NULL) {
            w->failed = 1;
            return;
        }
        json_map_open(w, NULL);
        json_kv_str(w, "name", vols[i]);
        json_map_open(w, "image");
        json_kv_str(w, "reference", t[i].image);
        json_kv_str(w, "pullPolicy", t[i].policy);
        json_map_close(w);
        json_map_close(w);
    }
    json_array_close(w);
    json_array_open(w, "containers");
    for (size_t i = 0; i < n; i++) {
        const char *name = arena_printf(a, PREPULL_JOB_TARGET_PREFIX "%zu", i);
        if (name == NULL) {
            w->failed = 1;
            return;
        }
        volume_container(w, name, helper->image, helper->policy, vols[i]);
    }
    json_array_close(w);
    json_map_close(w);
}

static void pod_spec(json_writer *w, const pull_job_spec *s, const target *helper,
                     const target *t, size_t n, arena *a)
{
    static const char *const copy[] = {HELPER_BUSYBOX, "cp", HELPER_BUSYBOX, PREPULL_JOB_TRUE};
    static const char *const run_true[] = {PREPULL_JOB_TRUE};

    json_map_open(w, "spec");
    json_kv_str(w, "restartPolicy", "Never");
    json_kv_str(w, "nodeName", s->node_name);
    json_array_open(w, "tolerations");
    json_map_open(w, NULL);
    json_kv_str(w, "operator", "Exists");
    json_map_close(w);
    json_array_close(w);
    json_kv_bool(w, "automountServiceAccountToken", 0);
    json_kv_bool(w, "enableServiceLinks", 0);
    json_map_open(w, "securityContext");
    json_kv_bool(w, "runAsNonRoot", 1);
    json_kv_int(w, "runAsUser", NON_ROOT_ID);
    json_kv_int(w, "runAsGroup", NON_ROOT_ID);
    json_map_open(w, "seccompProfile");
    json_kv_str(w, "type", "RuntimeDefault");
    json_map_close(w);
    json_map_close(w);
    if (s->n_pull_secrets > 0) {
        json_array_open(w, "imagePullSecrets");
        for (size_t i = 0; i < s->n_pull_secrets; i++) {
            json_map_open(w, NULL);
            json_kv_str(w, "name", s->pull_secrets[i]);
            json_map_close(w);
        }
        json_array_close(w);
    }
    if (s->method == PULL_JOB_METHOD_IMAGE_VOLUME) {
        image_volume_pod(w, helper, t, n, a);
        return;
    }
    json_array_open(w, "volumes");
    json_map_open(w, NULL);
    json_kv_str(w, "name", PREPULL_JOB_VOLUME);
    json_map_open(w, "emptyDir");
    json_kv_str(w, "sizeLimit", "16Mi"); /* a static busybox is 1-2 MB */
    json_map_close(w);
    json_map_close(w);
    json_array_close(w);

    json_array_open(w, "initContainers");
    container(w, PREPULL_JOB_HELPER_CONTAINER, helper->image, helper->policy, copy,
              sizeof(copy) / sizeof(copy[0]), 0);
    if (s->targets_as_containers) {
        /* the targets are the pod's regular containers (prepull_job.h) */
        json_array_close(w);
        json_array_open(w, "containers");
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = arena_printf(a, PREPULL_JOB_TARGET_PREFIX "%zu", i);
        if (name == NULL) {
            w->failed = 1;
            return;
        }
        container(w, name, t[i].image, t[i].policy, run_true, 1, 1);
    }
    if (!s->targets_as_containers) {
        json_array_close(w);
        /* ota-helper has just pulled the helper image on this node: asking
         * the registry again (Always, for a :latest helper) could only
         * fail. */
        json_array_open(w, "containers");
        container(w, PREPULL_JOB_DONE_CONTAINER, helper->image, "IfNotPresent", run_true, 1, 1);
    }
    json_array_close(w);
    json_map_close(w);
}

int pull_job_render(const pull_job_spec *s, arena *a, const char **json, size_t *len, char *err,
                    size_t errlen)
{
    target t[PREPULL_JOB_MAX_IMAGES];
    int n = -1;
    json_writer w = {0};
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

    if (json_writer_init(&w, a) != 0) {
        errmsg_set(err, errlen, "out of memory");
        goto cleanup;
    }
    json_writer_indent(&w, "  ");

    json_map_open(&w, NULL);
    pull_job_marks marks = marks_of(s);
    pull_job_write_head(&w, s->namespace, s->name, &s->owner, &marks);

    json_map_open(&w, "spec");
    json_kv_int(&w, "backoffLimit", s->backoff_limit);
    json_kv_int(&w, "activeDeadlineSeconds", s->active_deadline_seconds);
    /* no ttlSecondsAfterFinished: see prepull_job.h */
    json_map_open(&w, "template");
    json_map_open(&w, "metadata");
    pull_job_write_marks(&w, &marks);
    json_map_close(&w);
    pod_spec(&w, s, &helper, t, (size_t)n, a);
    json_map_close(&w);
    json_map_close(&w);
    json_map_close(&w);

    const char *text = json_writer_finish(&w, len); /* arena memory */
    if (text == NULL) {
        errmsg_set(err, errlen, "could not write the Job");
        goto cleanup;
    }
    *json = text;
    rc = 0;

cleanup:
    json_writer_free(&w);
    return rc;
}

int prepull_job_render(const prepull_job_spec *s, arena *a, const char **json, size_t *len,
                       char *err, size_t errlen)
{
    const char *const required[][2] = {
        {"pod namespace", s->pod_namespace}, {"pod name", s->pod_name},
        {"pod uid", s->pod_uid},             {"node name", s->node_name},
        {"revision hash", s->revision_hash},
    };
    if (check_required(required, sizeof(required) / sizeof(required[0]), err, errlen) != 0)
        return -1;
    char name[PREPULL_JOB_NAME_MAX + 1];
    prepull_job_method_name(name, s->pod_name, s->pod_uid, s->revision_hash, s->request_time,
                            s->method);
    const char *labels[] = {OTA_LABEL_POD_UID, s->pod_uid};
    const char *annotations[] = {OTA_ANN_JOB_REVISION, s->revision_hash, OTA_ANN_JOB_REQUEST_TIME,
                                 s->request_time != NULL ? s->request_time : ""};
    /* The pod does not manage the Job (this controller does): see the top. */
    pull_job_spec p = {
        .namespace = s->pod_namespace,
        .name = name,
        .node_name = s->node_name,
        .owner = {"v1", "Pod", s->pod_name, s->pod_uid, 0},
        .labels = labels,
        .n_labels = 1,
        .annotations = annotations,
        .n_annotations = 2,
        .init_images = s->init_images,
        .n_init_images = s->n_init_images,
        .images = s->images,
        .n_images = s->n_images,
        .pull_secrets = s->pull_secrets,
        .n_pull_secrets = s->n_pull_secrets,
        .helper_image = s->helper_image,
        .backoff_limit = s->backoff_limit,
        .active_deadline_seconds = s->active_deadline_seconds,
        .method = s->method,
    };
    return pull_job_render(&p, a, json, len, err, errlen);
}

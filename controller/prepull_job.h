/*
 * prepull_job.h - the batch/v1 Job that pre-pulls a revision's images on one
 * node (docs/design.md §5): its name, derived only from the request so that a
 * restarted controller computes the same one (and gets 409 instead of
 * creating a second Job), and its JSON body.
 *
 * The Job runs in the pod's namespace (pull secrets are namespaced), is
 * owned by the pod (the upgrade deletes the pod, the garbage collector then
 * deletes the Job and cancels a pull still queued), is pinned to the pod's
 * node and tolerates every taint.  Target images need no shell: an init
 * container from the helper image (a statically linked busybox) copies
 * itself into an emptyDir as "true", and every target container runs
 * /ota-bin/true.  The Job has no ttlSecondsAfterFinished: its finished pod
 * keeps exited containers that reference the images, which keeps the
 * kubelet's image garbage collector away from them until the upgrade.
 *
 * Shape of the pod, for whoever reads its status:
 *   initContainers: "ota-helper", then "pull-0" .. "pull-<n-1>", one per
 *                   distinct target image (the revision's init-container
 *                   images first, then its container images);
 *   containers:     "ota-done", the helper image running /ota-bin/true.
 * An image that cannot be pulled shows as the waiting reason
 * (ErrImagePull, ImagePullBackOff, InvalidImageName) of its "pull-<i>" entry
 * in status.initContainerStatuses; the pod stays Pending until
 * activeDeadlineSeconds fails the Job.
 */
#ifndef OTA_PREPULL_JOB_H
#define OTA_PREPULL_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "json.h"
#include "ota_names.h"

/* Longest Job name: the Job controller copies it into the pod label
 * batch.kubernetes.io/job-name, and label values are at most 63. */
#define PREPULL_JOB_NAME_MAX 63
#define PREPULL_JOB_NAME_PREFIX "ota-prepull-"

/* Container and volume names in the Job's pod. */
#define PREPULL_JOB_HELPER_CONTAINER "ota-helper"
#define PREPULL_JOB_TARGET_PREFIX OTA_JOB_PULL_CONTAINER_PREFIX /* kubectl-ota reads it */
#define PREPULL_JOB_DONE_CONTAINER "ota-done"
#define PREPULL_JOB_VOLUME "ota-bin"
#define PREPULL_JOB_TRUE "/ota-bin/true"

/* The image-volume method's volumes and their mount (pull_job_method). */
#define PREPULL_JOB_IMAGE_VOLUME_PREFIX "img-"
#define PREPULL_JOB_IMAGE_MOUNT "/ota-img"

/*
 * How a pull Job gets a target image onto its node.
 *  HELPER: a container runs from the target image itself (the helper's
 *    /ota-bin/true copied into an emptyDir): the shapes described above.
 *  IMAGE_VOLUME: the target is an image volume (KEP-4639, spec.volumes[]
 *    .image {reference, pullPolicy}) "img-<i>", and the regular container
 *    "pull-<i>" runs the helper image's own static true (/bin/busybox true)
 *    with exactly that volume mounted read-only at /ota-img: nothing from
 *    the target runs, so an OCI artifact that is no runnable image is
 *    pulled too.  No init container, no emptyDir, no "ota-done".  Targets
 *    are one per distinct image string, each with its own outcome, as
 *    targets_as_containers (which it implies).  The kubelet pulls every
 *    image volume before it starts any container; a volume's pull error
 *    shows on the container that mounts it (ErrImagePull,
 *    ImagePullBackOff), and a runtime without image volumes fails that
 *    container with CreateContainerError.  Needs Kubernetes >= 1.33 with
 *    the ImageVolume gate (the apiserver refuses the Job 422 "must specify
 *    a volume type" without it) and containerd >= 2.1 or CRI-O >= 1.31.
 */
typedef enum pull_job_method {
    PULL_JOB_METHOD_HELPER = 0,
    PULL_JOB_METHOD_IMAGE_VOLUME,
} pull_job_method;

/* Most distinct target images one Job pulls (a pod with more is absurd). */
#define PREPULL_JOB_MAX_IMAGES 64

typedef struct prepull_job_spec {
    const char *pod_namespace, *pod_name, *pod_uid, *node_name;
    const char *revision_hash; /* H, the newest ControllerRevision's hash */
    const char *request_time;  /* identifies the request: the PodImageReady
                                  lastTransitionTime the pull was asked with;
                                  may be "" or NULL (a request written
                                  without one, when the mutating webhook,
                                  failurePolicy Ignore, was not there to add
                                  it): the Job is then one per pod and hash */
    /* From revision H's pod template (not the live DaemonSet template). */
    const char *const *init_images;
    size_t n_init_images;
    const char *const *images;
    size_t n_images;
    const char *const *pull_secrets; /* imagePullSecrets names */
    size_t n_pull_secrets;
    const char *helper_image;     /* --helper-image */
    int backoff_limit;            /* 0..2 */
    long active_deadline_seconds; /* > 0: the DaemonSet's timeout or --pull-timeout */
    pull_job_method method;       /* 0: the helper's shape (above) */
} prepull_job_spec;

/*
 * Any client's pull Job: one pull unit (controller/pullq.h), an owner's
 * images on one node.  The OTA request's Job (prepull_job_spec, below) and
 * an ImagePullJob node's are both rendered from one of these, so every
 * pull Job has the same pod: the helper, one "pull-<i>" init container
 * per distinct image, "ota-done".
 */
typedef struct pull_job_owner {
    const char *api_version, *kind, *name, *uid;
    int controller; /* the ownerReference's controller flag */
} pull_job_owner;

/* Labels and annotations (key, value, key, value...: the counts are
 * pairs) that go on a Job and on its pod template alike, the managed-by
 * label always first. */
typedef struct pull_job_marks {
    const char *const *labels;
    size_t n_labels;
    const char *const *annotations;
    size_t n_annotations;
} pull_job_marks;

/* Writes a Job's opening, as every Job of ours has it: apiVersion, kind
 * and metadata (name, namespace, the marks, the owner as its only
 * ownerReference, blockOwnerDeletion false).  The caller goes on with
 * "spec".  purge_job.c writes its Jobs with it too. */
void pull_job_write_head(json_writer *w, const char *namespace, const char *name,
                         const pull_job_owner *owner, const pull_job_marks *m);
/* The marks alone: a pod template's metadata. */
void pull_job_write_marks(json_writer *w, const pull_job_marks *m);

typedef struct pull_job_spec {
    const char *namespace, *name, *node_name;
    pull_job_owner owner;
    /* Key, value, key, value, ...: n_labels and n_annotations count pairs.
     * The managed-by label is always added; labels and annotations go on
     * the Job and on its pod template alike. */
    const char *const *labels;
    size_t n_labels;
    const char *const *annotations;
    size_t n_annotations;
    const char *const *init_images; /* pulled first, in order */
    size_t n_init_images;
    const char *const *images;
    size_t n_images;
    const char *const *pull_secrets;
    size_t n_pull_secrets;
    /* NULL: each image's own default, as the kubelet would (Always for
     * :latest or no tag); else "Always" or "IfNotPresent" for every target */
    const char *pull_policy;
    const char *helper_image;
    int backoff_limit;            /* 0..2 */
    long active_deadline_seconds; /* > 0 */
    /* 0: the shape above (targets are init containers, one after another,
     * the first failure stops the rest, deduplicated by normalised
     * reference).  1: targets are the regular containers "pull-<i>", one
     * per distinct image string in the order given (init_images, then
     * images; two spellings of one image are two containers), and there is
     * no "ota-done": each image gets its own outcome (a container whose
     * image fails does not stop the others), and the pod ends Succeeded
     * when every target ran /ota-bin/true.  A reference the kubelet
     * refuses is rendered all the same (its container then says
     * InvalidImageName in the kubelet's words), unless the apiserver
     * would refuse the pod for it (empty, or whitespace at either end).
     * An ImageCache's Job. */
    int targets_as_containers;
    pull_job_method method; /* 0: HELPER; IMAGE_VOLUME implies targets_as_containers */
} pull_job_spec;

/*
 * Renders the Job as JSON (indented, ending in a newline).  Returns 0 with
 * the text in *json (arena memory, NUL-terminated) and its length in *len,
 * or -1 with the reason in err (at most errlen bytes): a missing field, a
 * backoff limit outside 0..2, a deadline not above 0, a pull policy other
 * than those two, no target image, too many, or an image reference the
 * kubelet would reject (the message is imageref_parse's, so it can go into
 * a result as InvalidImageName).
 */
int pull_job_render(const pull_job_spec *s, arena *a, const char **json, size_t *len, char *err,
                    size_t errlen);

/*
 * 32 bits of FNV-1a 64 (upper half xor lower half) over three fields, each
 * followed by a NUL byte so that moving a character from one field to the
 * next changes the hash (NULL reads as "").  Stable across processes,
 * versions and machines.
 */
uint32_t pull_job_hash3(const char *a, const char *b, const char *c);
/* The whole 64 bits of that FNV-1a. */
uint64_t pull_job_hash64(const char *a, const char *b, const char *c);

/* 32 bits of FNV-1a 64 over pod_uid, revision hash and request time:
 * pull_job_hash3 of the three. */
uint32_t prepull_job_hash(const char *pod_uid, const char *revision_hash, const char *request_time);

/*
 * "ota-prepull-<pod name cut to fit>-<8 lowercase hex of prepull_job_hash>",
 * at most PREPULL_JOB_NAME_MAX characters and a DNS-1123 label: the pod
 * name keeps its beginning (the DaemonSet's name), characters other than
 * [a-z0-9-] become '-' (a pod name may contain '.'), and a cut never leaves
 * a '-' before the hash separator.  Writes the NUL-terminated name into out,
 * which holds at least PREPULL_JOB_NAME_MAX + 1 bytes.
 */
void prepull_job_name(char *out, const char *pod_name, const char *pod_uid,
                      const char *revision_hash, const char *request_time);

/* The name of an OTA request's Job by method: the helper's is
 * prepull_job_name's; the image-volume Job's is prepull_job_name's with
 * the request time followed by "/image-volume" (a request has both when
 * its artifacts follow its runnable images, controller/pullmethod.h). */
void prepull_job_method_name(char *out, const char *pod_name, const char *pod_uid,
                             const char *revision_hash, const char *request_time,
                             pull_job_method method);

/* An ImagePullJob node's Job: "ota-ipj-<ImagePullJob name cut to fit>-<16
 * hex of pull_job_hash64(ImagePullJob uid, node, spec hash)>", by
 * prepull_job_name's rules.  One name per (ImagePullJob, node, version of
 * its pull), so a restarted controller or a second replica gets 409. */
#define IPJ_JOB_NAME_PREFIX "ota-ipj-"
void ipj_job_name(char *out, const char *ipj_name, const char *ipj_uid, const char *node,
                  const char *spec_hash);

/* An ImageCache's Job on a node: "ota-ic-<cache name cut to fit>-<16 hex
 * of pull_job_hash64(cache uid, node, action)>", by prepull_job_name's
 * rules.  action names what the Job does for this (cache, node) (the pull
 * of one action, a purge), so a restarted controller computes the same
 * name and gets 409. */
#define IC_JOB_NAME_PREFIX "ota-ic-"
void ic_job_name(char *out, const char *cache_name, const char *cache_uid, const char *node,
                 const char *action);

/* The words the controller keeps on a Job whose targets are regular
 * containers, for target index (kobj_job's target_reasons/messages): they
 * outlive the pod (the Job controller deletes it at the deadline). */
typedef struct pull_job_words {
    size_t index;
    const char *reason, *message; /* NULL reads "" */
} pull_job_words;

/* A merge patch of the Job: annotations ota-prepull/given-up-reason-<i>
 * and -message-<i> for each of w[0..n) and, when end, activeDeadlineSeconds
 * 1 (the Job controller ends the pod now: every target has its outcome).
 * JSON in malloc memory (caller frees), or NULL when out of memory. */
char *pull_job_words_patch(const pull_job_words *w, size_t n, int end);

/*
 * The OTA request's Job (prepull_job_spec): pull_job_render of the shape
 * docs/design.md §5 gives it (owned by the pod, not as controller; the
 * labels and annotations the controller finds it by).  Same returns.
 */
int prepull_job_render(const prepull_job_spec *s, arena *a, const char **json, size_t *len,
                       char *err, size_t errlen);

#endif

/*
 * pullmethod.h - which pull method (controller/prepull_job.h pull_job_method)
 * a pull Job uses for one image on one node, and what the cluster's answers
 * teach about image volumes (docs/design.md "Pull methods").
 *
 * The helper method runs a container from the target image itself; the
 * image-volume method mounts it as an image volume (KEP-4639) and runs
 * nothing from it, which is the only way to pre-pull an OCI artifact that
 * is no runnable image.  Image volumes need the ImageVolume feature gate
 * (the apiserver drops volumes[].image without it and refuses the Job 422
 * "must specify a volume type") and a runtime that mounts them (containerd
 * >= 2.1, CRI-O >= 1.31; an older one, or cri-dockerd, fails the container
 * with CreateContainerError).
 *
 * The rules, per (node, image), mode being --pull-method:
 *   artifact (the workload mounts it as an image volume, and no container of
 *   the workload runs it): image-volume where the node may (below), else
 *   FAIL with a message saying why;
 *   runnable, mode helper: helper;
 *   runnable, mode image-volume: image-volume where the node may, else helper;
 *   runnable, mode auto: image-volume where the node surely can (its
 *   runtime version says so), else helper.
 * A node "may" unless the gate is remembered off, the node is remembered to
 * have answered CreateContainerError, or its runtime version says it cannot
 * (an unknown runtime may: its answer is then remembered).
 *
 * Pure: no I/O.  The memory is bounded (PULLMETHOD_MAX_NODES nodes, the
 * oldest forgotten first: a forgotten node is tried again and answers
 * again) and lives until the controller restarts, as does the gate's.
 */
#ifndef OTA_PULLMETHOD_H
#define OTA_PULLMETHOD_H

#include <stddef.h>

#include "flagtab.h"
#include "prepull_job.h"
#include "strset.h"

/* --pull-method */
typedef enum pullmethod_mode {
    PULLMETHOD_MODE_HELPER = 0,
    PULLMETHOD_MODE_IMAGE_VOLUME,
    PULLMETHOD_MODE_AUTO,
} pullmethod_mode;

/* The flag's choices (flagtab CHOICE rows): helper, image-volume, auto. */
extern const flagtab_choice pullmethod_choices[];

/* What Node.status.nodeInfo.containerRuntimeVersion says of image volumes:
 * "containerd://2.1.4" (>= 2.1) and "cri-o://1.31.0" (>= 1.31) YES (a "v"
 * before the version and a suffix such as "-k3s1" are read); older ones and
 * "docker://" NO; anything else (NULL, "", another runtime, a version that
 * does not read) UNKNOWN. */
typedef enum pullmethod_runtime {
    PULLMETHOD_RUNTIME_UNKNOWN,
    PULLMETHOD_RUNTIME_YES,
    PULLMETHOD_RUNTIME_NO,
} pullmethod_runtime;
pullmethod_runtime pullmethod_runtime_of(const char *container_runtime_version);

/* Most nodes remembered as unable to mount image volumes. */
#define PULLMETHOD_MAX_NODES 10000

typedef struct pullmethod_memory {
    int gate_off;  /* the apiserver refused an image-volume Job: cluster-wide */
    strset nodes;  /* nodes that answered CreateContainerError */
    char **order;  /* the same names, oldest at head (a ring of cap) */
    size_t n, head, cap;
} pullmethod_memory;

/* cap 0 reads PULLMETHOD_MAX_NODES. */
void pullmethod_memory_init(pullmethod_memory *m, size_t cap);
void pullmethod_memory_free(pullmethod_memory *m);
int pullmethod_node_cannot(const pullmethod_memory *m, const char *node);

/* What one answer of the cluster says about image volumes. */
typedef enum pullmethod_answer {
    PULLMETHOD_ANSWER_NONE,       /* nothing about image volumes */
    PULLMETHOD_ANSWER_NODE_CANNOT, /* the node's runtime cannot mount them */
    PULLMETHOD_ANSWER_GATE_OFF,   /* the apiserver drops volumes[].image */
} pullmethod_answer;

/* An image-volume Job's create answered status with the Status message:
 * 422 naming "must specify a volume type" is the gate off. */
pullmethod_answer pullmethod_create_answer(int http_status, const char *message);

/* An image-volume Job's target container waiting with reason:
 * CreateContainerError is the node's runtime (the method unsupported on
 * this node, not a pull failure: the image may well be there). */
pullmethod_answer pullmethod_target_answer(const char *waiting_reason);

/* Remembers an answer (NODE_CANNOT for node).  0, or -1 when memory runs
 * out (nothing remembered). */
int pullmethod_remember(pullmethod_memory *m, pullmethod_answer a, const char *node);

/* Whether image is an artifact of a revision: one of its image volumes'
 * references, run by none of its containers (init or regular).  Exact
 * strings, as the kubelet pulls them. */
int pullmethod_is_artifact(const char *image, const char *const *volume_images, size_t n_volumes,
                           const char *const *container_images, size_t n_containers);

typedef enum pullmethod_verdict {
    PULLMETHOD_USE_HELPER,
    PULLMETHOD_USE_IMAGE_VOLUME,
    PULLMETHOD_FAIL, /* an artifact the node cannot pull: why says so */
} pullmethod_verdict;

/* The rules above for one image on node (runtime_version its
 * containerRuntimeVersion, NULL when unknown).  On FAIL, why (at most
 * whylen bytes) gets the message PodImageReady shows; else why is "". */
pullmethod_verdict pullmethod_choose(pullmethod_mode mode, int artifact, const char *node,
                                     const char *runtime_version, const pullmethod_memory *m,
                                     char *why, size_t whylen);

/* Most artifacts one request plans (kobj's KOBJ_MAX_VOLUME_IMAGES). */
#define PULLMETHOD_MAX_ARTIFACTS 64

/*
 * One OTA request's pull on a node: the revision's runnable images (its
 * init containers' and containers' images) and its artifacts, each group
 * with its verdict (all runnable images of a request share one, and so do
 * all its artifacts: the rules depend on the node, not the image).  The
 * Jobs that follow (controller/reconcile.c), in this order:
 *   the helper Job: the runnable images, when runnable_verdict is HELPER;
 *   the image-volume Job: the runnable images when runnable_verdict is
 *   IMAGE_VOLUME, then the artifacts when artifact_verdict is; none when
 *   it would have no image.
 * An artifact FAIL fails the request with why once its Jobs are done.
 */
typedef struct pullmethod_plan {
    int runnable; /* the revision has runnable images */
    pullmethod_verdict runnable_verdict;
    const char *artifacts[PULLMETHOD_MAX_ARTIFACTS]; /* borrowed from the arguments */
    size_t n_artifacts;
    pullmethod_verdict artifact_verdict; /* when n_artifacts > 0 */
    char why[768];                       /* artifact_verdict FAIL: the message */
} pullmethod_plan;

void pullmethod_plan_request(pullmethod_mode mode, const char *node, const char *runtime_version,
                             const pullmethod_memory *m, const char *const *init_images,
                             size_t n_init, const char *const *images, size_t n_images,
                             const char *const *volume_images, size_t n_volumes,
                             pullmethod_plan *plan);

/* Whether the plan wants the helper Job, the image-volume Job. */
int pullmethod_plan_wants_helper(const pullmethod_plan *plan);
int pullmethod_plan_wants_volume(const pullmethod_plan *plan);

/* The Job method of a verdict that is not FAIL. */
pull_job_method pullmethod_job_method(pullmethod_verdict v);

#endif

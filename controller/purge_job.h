/*
 * purge_job.h - the batch/v1 Job that deletes an ImageCache's images from
 * one node (docs/design.md "Purge Job"): one regular container per image,
 * each running a CRI client's `crictl rmi <image>` against the node's
 * container runtime socket, mounted from the host.
 *
 * It is the only privileged thing this project creates (a hostPath volume,
 * root), and only when --image-cache-purge-image names the CRI client's
 * image; the namespace must allow it (Pod Security "privileged" level).
 * Owner, namespace and naming follow the ImageCache's pull Jobs; the caller
 * computes the name.
 *
 * Shape of the pod, for whoever reads its status:
 *   containers: "rmi-0" .. "rmi-<n-1>", one per image in the order given,
 *               each the purge image running
 *               crictl --runtime-endpoint=unix://<sock>
 *                      --image-endpoint=unix://<sock> rmi <image>
 *               with terminationMessagePolicy FallbackToLogsOnError.
 * Container "rmi-<i>" terminated with exit code 0: image i was deleted;
 * any other code: it was not, and the termination message (crictl's output)
 * says why.  Regular containers, so one failure does not stop the others.
 */
#ifndef OTA_PURGE_JOB_H
#define OTA_PURGE_JOB_H

#include <stddef.h>

#include "arena.h"
#include "prepull_job.h" /* pull_job_owner, PREPULL_JOB_NAME_MAX, PREPULL_JOB_MAX_IMAGES */

#define PURGE_JOB_CONTAINER_PREFIX "rmi-"
#define PURGE_JOB_VOLUME "cri-socket"
#define PURGE_JOB_DEFAULT_SOCKET "/run/containerd/containerd.sock"
/* Most images one purge Job deletes: one container each, as a pull Job. */
#define PURGE_JOB_MAX_IMAGES PREPULL_JOB_MAX_IMAGES
/* Longest socket path: a sockaddr_un's sun_path holds 108 bytes with the
 * NUL, so crictl could not connect to a longer one anyway. */
#define PURGE_JOB_SOCKET_MAX 107

typedef struct purge_job_spec {
    const char *namespace, *name, *node_name;
    pull_job_owner owner;
    /* Key, value, key, value, ...: n_labels and n_annotations count pairs.
     * The managed-by label is always added; labels and annotations go on
     * the Job and on its pod template alike. */
    const char *const *labels;
    size_t n_labels;
    const char *const *annotations;
    size_t n_annotations;
    /* The images to delete, as the cache writes them; crictl resolves
     * "nginx" as the runtime does.  Two spellings of one image are refused
     * (the second rmi would race the first and find nothing): the caller
     * passes each image once and reports its outcome under every spelling. */
    const char *const *images;
    size_t n_images;
    const char *purge_image; /* --image-cache-purge-image: has crictl on its PATH */
    const char *socket_path; /* --cri-socket-path: absolute */
    long active_deadline_seconds; /* > 0 */
} purge_job_spec;

/*
 * 0 when p can be the CRI socket path of a purge Job, else -1 with the
 * reason in err (at most errlen bytes): not absolute, longer than
 * PURGE_JOB_SOCKET_MAX, a ".." element (the apiserver refuses such a
 * hostPath) or a control character.  For --cri-socket-path at start too,
 * so a path that can never work stops the start instead of every purge.
 */
int purge_job_check_socket_path(const char *p, char *err, size_t errlen);

/*
 * Renders the Job as JSON (indented, ending in a newline).  Returns 0 with
 * the text in *json (arena memory, NUL-terminated) and its length in *len,
 * or -1 with the reason in err (at most errlen bytes): a missing field, a
 * deadline not above 0, no image, more than PURGE_JOB_MAX_IMAGES, an image
 * reference the runtime would reject or one given twice, a purge image that
 * is not a reference, or a socket path that is not absolute, is longer than
 * PURGE_JOB_SOCKET_MAX, has a ".." element or a control character.
 */
int purge_job_render(const purge_job_spec *s, arena *a, const char **json, size_t *len,
                     char *err, size_t errlen);

#endif

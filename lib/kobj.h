/*
 * kobj.h - the few fields of Kubernetes objects ota-prepull reads, decoded
 * from one object's JSON (a list item, a watch event's object, a GET's
 * body): the OTA projection of DaemonSets, ControllerRevisions, pods, the
 * pre-pull Jobs and their pods, and Nodes.  The controller's informers
 * cache these (kube/informer.h takes kobj_decode as their decoder) and
 * kubectl-ota reads the same objects through them, so both see a pod as
 * the rulebook does (kobj_pod_view).
 *
 * Caches hold these, never whole objects: a pod here is a few hundred bytes
 * where client-go's cached Pod is tens of kilobytes, which is what lets the
 * controller hold 10 000 pods in a few MiB.
 *
 * Memory: one kobj is one allocation (the struct, its list arrays and its
 * strings, packed).  Strings that repeat across objects (namespace, owner
 * uid, revision hashes, condition status/reason/message, image names) are
 * not copied into each object but shared from a reference-counted pool of
 * interned strings.  So the fields are read-only: never free or assign one;
 * kobj_free releases an object, kobj_job_pod_set_waiting is the one change
 * made after decoding.  The pool is process-global and not locked: kobj is
 * used from one thread (both programs run one event loop).
 */
#ifndef OTA_KOBJ_H
#define OTA_KOBJ_H

#include <stddef.h>

#include "json.h" /* json_parse_tree makes the trees kobj_decode reads */

#include "ota_state.h"

typedef enum kobj_kind {
    KOBJ_DAEMONSET,
    KOBJ_REVISION, /* apps/v1 ControllerRevision */
    KOBJ_POD,      /* a DaemonSet's pod */
    KOBJ_JOB,      /* one of our pre-pull Jobs */
    KOBJ_JOB_POD,  /* a pre-pull Job's pod */
    KOBJ_NODE,
    KOBJ_NODE_STATE, /* a Node in the controller's informer: not_ready and labels, no images */
    KOBJ_IMAGEPULLJOB, /* apps.kruise.io ImagePullJob (any served version) */
    KOBJ_POD_NODES,    /* the nodes of the pods a list answered (kobj_pod_nodes_of) */
    KOBJ_IMAGECACHE,   /* kubefledged.io/v1alpha2 ImageCache */
    KOBJ_N_KINDS
} kobj_kind;

typedef struct kobj_meta {
    char *namespace, *name, *uid;
    char *owner_uid; /* the controller ownerReference's uid, or NULL */
    char *resource_version; /* metadata.resourceVersion, or NULL: a write's
                               precondition (pods, ImagePullJobs and
                               ImageCaches only) */
    int deleting;    /* deletionTimestamp set */
} kobj_meta;

typedef struct kobj_cond {
    int present;
    char *status, *reason, *message, *last_transition_time;
} kobj_cond;

typedef struct kobj_daemonset {
    int ota;              /* update-strategy annotation is OTA */
    long timeout_seconds; /* image-prepull-timeout-seconds, 0 if unset or bad */
    char *bad_timeout;    /* the annotation's value when it is there but bad, else NULL */
    /* Automatic pre-pull (controller/autopull.h): the annotations' values
     * as written (NULL: absent; a value that is not a string: "") */
    char *auto_parallelism, *auto_timeout, *auto_min_ready, *auto_window;
} kobj_daemonset;

typedef struct kobj_revision {
    long long revision;
    char *hash; /* controller-revision-hash label */
    char **init_images; /* the template's initContainers' images, in order */
    size_t n_init_images;
    char **images;      /* its containers' images, in order */
    size_t n_images;
    char **pull_secrets;
    size_t n_pull_secrets;
    /* The template's image volumes' references (volumes[].image.reference,
     * KEP-4639), distinct, in order; at most KOBJ_MAX_VOLUME_IMAGES (more
     * would not fit a pull Job). */
    char **volume_images;
    size_t n_volume_images;
} kobj_revision;

#define KOBJ_MAX_VOLUME_IMAGES 64

typedef struct kobj_pod {
    char *node_name;
    char *hash; /* controller-revision-hash label */
    kobj_cond need_upgrade, image_ready;
    kobj_cond auto_prepull; /* OTA_COND_AUTO_PREPULL (controller/autopull.h) */
    int ready;              /* condition Ready is True */
} kobj_pod;

typedef struct kobj_job {
    char *pod_uid;        /* ota-prepull/pod-uid label (an OTA request's Job) */
    char *revision_hash;  /* annotation */
    char *request_time;   /* annotation */
    char *node_name;      /* spec.template.spec.nodeName: the node it pulls on */
    char *spec_hash;      /* annotation ota-prepull/spec-hash (an ImagePullJob's Job:
                             which version of the pull it runs) */
    /* Annotations ota-prepull/given-up-reason and -message: the controller
     * ended the Job early (fail fast, or attempts used up) and kept the
     * kubelet's words on it; NULL when it did not. */
    char *given_up_reason, *given_up_message;
    /* A Job whose targets are regular containers "pull-<i>" (an
     * ImageCache's pull) or "rmi-<i>" (its purge): target i's image (the
     * container's image; for rmi-<i>, the last word of its command; for
     * a container that mounts an image volume, the image-volume method's,
     * that volume's reference), and
     * the words the controller kept for it in the annotations
     * ota-prepull/given-up-reason-<i> and -message-<i> (NULL where none).
     * n_targets is one above the highest index (below KOBJ_MAX_TARGETS);
     * 0 for other Jobs. */
    char **target_images, **target_reasons, **target_messages;
    size_t n_targets;
    int complete, failed;
    char *failed_reason, *failed_message;
    long long start_epoch; /* status.startTime, seconds since 1970; 0 if unset */
    long long finish_epoch; /* the Complete or Failed condition's lastTransitionTime; 0 if none */
} kobj_job;

/* One target of a pull Job whose targets are regular containers
 * ("pull-<i>", an ImageCache's Job; prepull_job.h targets_as_containers):
 * its container status.  Purge Jobs' "rmi-<i>" containers read the same. */
typedef enum kobj_target_state {
    KOBJ_TARGET_PENDING, /* no status yet, or waiting for no pull error
                            (ContainerCreating, PodInitializing) */
    KOBJ_TARGET_WAITING, /* waiting with another reason (ErrImagePull,
                            ImagePullBackOff, InvalidImageName, ...) */
    KOBJ_TARGET_DONE,    /* running, or terminated with exit code 0 */
    KOBJ_TARGET_FAILED,  /* terminated with another exit code */
} kobj_target_state;

typedef struct kobj_target {
    char *reason, *message; /* waiting's or terminated's (FAILED); else NULL */
    long long started_epoch; /* running's or terminated's startedAt (its image was there
                                then), seconds since 1970; 0 if none */
    unsigned char state;    /* kobj_target_state */
    unsigned char terminated; /* DONE or FAILED: it ended (not running) */
    /* Kept by the controller as versions of the pod arrive, as
     * kobj_job_pod's own (0 from kobj_decode). */
    unsigned char backing_off;
    unsigned short failed_attempts, pull_errors;
} kobj_target;

/* Most targets a pod's view reads (prepull_job.h's PREPULL_JOB_MAX_IMAGES):
 * a container named with a higher index is not one of ours. */
#define KOBJ_MAX_TARGETS 64

typedef struct kobj_job_pod {
    char *job_name;   /* job-name label */
    char *node_name;  /* spec.nodeName: a terminating pull pod keeps its node's slot */
    char *waiting_reason, *waiting_message; /* the first waiting container's */
    /* Kept by the controller as versions of the pod arrive (0 from
     * kobj_decode): whether the kubelet's own reason is ImagePullBackOff
     * (waiting_reason may then hold the error remembered from before it),
     * and how many pull attempts in a row ended in an error that waiting
     * will not heal. */
    int backing_off;
    int failed_attempts;
    /* Pull attempts that ended in an error of any kind (an ImagePullJob's
     * backoffLimit counts these): kept as failed_attempts is. */
    int pull_errors;
    /* Regular containers named "pull-<i>" or "rmi-<i>" (i below
     * KOBJ_MAX_TARGETS): targets[i] is container i's; n_targets is one
     * above the highest index seen, 0 for a pod without such containers
     * (an OTA or ImagePullJob Job's, whose targets are init containers).
     * An index with no status reads KOBJ_TARGET_PENDING. */
    kobj_target *targets;
    size_t n_targets;
    /* spec.volumes has an image volume: the image-volume method's pod
     * (a CreateContainerError there is the node's runtime) */
    int image_volumes;
} kobj_job_pod;

/* Most image names a KOBJ_NODE_STATE keeps (the kubelet reports 50 images
 * by default, each with a name or two): the rest are dropped, which is
 * safe, as the absence of a name proves nothing. */
#define KOBJ_NODE_STATE_MAX_IMAGE_NAMES 512

typedef struct kobj_node {
    /* every name of every image in status.images (KOBJ_NODE_STATE: at most
     * KOBJ_NODE_STATE_MAX_IMAGE_NAMES, distinct) */
    char **images;
    size_t n_images;
    /* The Ready condition is there and not True, or the node carries the
     * node.kubernetes.io/unreachable taint: a Job pinned to it would sit
     * Pending until its deadline (controller/pullq.h). */
    int not_ready;
    /* metadata.labels, sorted by key (KOBJ_NODE_STATE only: what an
     * ImagePullJob's or an ImageCache's selector matches) */
    char **label_keys, **label_values;
    size_t n_labels;
    /* status.nodeInfo.containerRuntimeVersion ("containerd://2.1.4"), or
     * NULL: which pull methods the node can run (controller/pullmethod.h) */
    char *runtime_version;
} kobj_node;

/* An ImagePullJob as its controller reads it.  The spec is kept as JSON
 * text (lib/ipj_spec.h decodes it, as the webhook does); the status as
 * the controller last wrote it, to write only what changed. */
typedef struct kobj_imagepulljob {
    char *spec;          /* .spec as compact JSON, or NULL when absent */
    long long generation;  /* metadata.generation */
    char *creation_time; /* metadata.creationTimestamp */
    char *completed_generation; /* annotation ota-prepull/completed-generation, or NULL */
    char **finalizers;   /* metadata.finalizers, in order */
    size_t n_finalizers;
    int has_status;      /* .status is an object */
    long long desired, active, succeeded, failed;
    char *start_time, *completion_time, *message; /* NULL when absent */
    char **failed_nodes; /* status.failedNodes, in order */
    size_t n_failed_nodes;
} kobj_imagepulljob;

/* A kube-fledged ImageCache as its controller reads it.  The spec is kept
 * as JSON text (lib/ic_spec.h decodes it, as the webhook does), and the
 * whole object too: with kube-fledged's CRD (no /status) the status is
 * written by a PUT of the object as read (controller/ic_write.h). */
typedef struct kobj_imagecache {
    char *spec;       /* .spec as compact JSON, or NULL when absent */
    char *object;     /* the whole object as compact JSON */
    long long generation;
    int refresh, purge; /* annotations kubefledged.io/refresh-, purge-imagecache present */
    char *acted_spec;   /* annotation ota-prepull.openyurt.io/imagecache-spec, or NULL */
    char *acted_start;  /* annotation ota-prepull.openyurt.io/imagecache-start, or NULL */
    int has_status;     /* .status is an object */
    char *status, *reason, *message, *start_time, *completion_time; /* NULL when absent */
    char **failure_images; /* the keys of status.failures, in order */
    size_t n_failure_images;
} kobj_imagecache;

/* The nodes that the active, scheduled pods of one pod list run on: what
 * an ImagePullJob's podSelector selects.  meta.name and meta.uid are the
 * key the answer is kept under (the ImagePullJob's uid). */
typedef struct kobj_pod_nodes {
    char *query;  /* the list's query: which selector this answers */
    char **nodes; /* distinct, in the list's order */
    size_t n_nodes;
} kobj_pod_nodes;

typedef struct kobj {
    kobj_kind kind;
    unsigned block_size; /* bytes of the one allocation (struct + packed data) */
    kobj_meta meta;
    union {
        kobj_daemonset ds;
        kobj_revision rev;
        kobj_pod pod;
        kobj_job job;
        kobj_job_pod job_pod;
        kobj_node node;
        kobj_imagepulljob ipj;
        kobj_pod_nodes pod_nodes;
        kobj_imagecache ic;
    } u;
} kobj;

/* Decodes one object of the given kind from a parsed tree (json_parse_tree).
 * Returns a new kobj (free with kobj_free), or NULL when the object lacks a
 * name/uid or memory runs out. */
kobj *kobj_decode(kobj_kind kind, yajl_val obj);

/* Member `key` of a yajl object (keys with dots or slashes read plainly this
 * way), or NULL when obj is not an object or has no such key. */
yajl_val kobj_member(yajl_val obj, const char *key);

/* The string value of member `key`, or NULL when absent or not a string. */
const char *kobj_member_str(yajl_val obj, const char *key);

/* The OTA rulebook's view of a cached pod (lib/ota_state.h): string views
 * into o, valid while o is. */
ota_pod kobj_pod_view(const kobj *pod);

/* A copy of a Job pod's identity and waiting reason, or NULL. */
kobj *kobj_copy_job_pod(const kobj *o);

/* A new packed kobj with draft's fields: strings copied into its block (or
 * shared from the pool), list arrays copied; draft's block_size is ignored
 * and draft is left as it was (its strings may live anywhere: a yajl tree,
 * another kobj, string literals).  NULL when memory runs out.  Free with
 * kobj_free. */
kobj *kobj_pack(const kobj *draft);

/* The value of a KOBJ_NODE_STATE's label key, or NULL. */
const char *kobj_node_label(const kobj *node, const char *key);

/* The name an ImageCache's failures give a node (upstream's): its
 * kubernetes.io/hostname label, else its name. */
const char *kobj_node_hostname(const kobj *node);

/* Replaces a Job pod's waiting reason and message (message may be NULL) by
 * copies (the arguments may be another kobj's fields, or o's own).  0, or
 * -1 when memory runs out (o unchanged). */
int kobj_job_pod_set_waiting(kobj *o, const char *reason, const char *message);

/* The same for target i (below n_targets). */
int kobj_job_pod_set_target_words(kobj *o, size_t i, const char *reason, const char *message);

/* Interned strings alive in the pool (for tests and benchmarks: 0 once
 * every kobj is freed). */
size_t kobj_interned(void);

void kobj_free(kobj *o);

/* kobj_free and the object's uid in the shape a generic cache takes
 * (kube/store.h holds objects as void *): an informer's free and key. */
void kobj_free_any(void *o);
const char *kobj_uid(const void *o);
/* The object's name: the cache key of a cluster-scoped object (a Node),
 * which is looked up by the name a pod's spec.nodeName gives. */
const char *kobj_name(const void *o);

/* The node of one pod of a list when it counts for a podSelector: it is
 * scheduled (spec.nodeName), not finished (phase neither Succeeded nor
 * Failed) and not being deleted, as Kruise counts a pod "active"; else
 * NULL.  A string view into pod. */
const char *kobj_active_pod_node(yajl_val pod);

/* A KOBJ_POD_NODES of nodes[0..n) (distinct, kept in order) under key
 * (meta.name and meta.uid), answering query.  NULL when memory runs out. */
kobj *kobj_pod_nodes_new(const char *key, const char *query, char *const *nodes, size_t n);

/* Seconds since 1970 of an RFC 3339 time as clock_parse_rfc3339 reads it
 * ("2026-11-21T21:00:00Z"), or 0 when it does not parse. */
long long kobj_parse_time(const char *rfc3339);

/* "namespace/name" into buf. */
const char *kobj_ref(const kobj *o, char *buf, size_t size);

#endif

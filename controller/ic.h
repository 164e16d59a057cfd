/*
 * ic.h - the decisions for one kube-fledged ImageCache (kubefledged.io/
 * v1alpha2, issue 21) in one pass, as pure functions: no I/O, no clock,
 * no globals; arena memory.
 *
 * Usage (the glue, controller/reconcile.c), once per cache per reconcile:
 *
 *     ic_input in = {0};
 *     in.spec = &spec;                       // ic_decode'd .spec
 *     in.status = ...; in.reason = ...;      // .status as last read (NULL: absent)
 *     in.start_time = ...; in.completion_time = ...;
 *     in.has_refresh = ...; in.has_purge = ...;   // annotation presence
 *     in.record = ...; in.record_len = ...;  // IC_ANN_SPEC's value, or NULL
 *     in.nodes = nodes; in.n_nodes = n;      // every Node (labels, readiness,
 *                                            // status.images names)
 *     in.seen = seen; in.n_seen = k;         // what the action's Jobs say, one
 *                                            // row per (node, op, image) found,
 *                                            // its state by ic_container_outcome
 *     in.now = "..."; in.now_epoch = ...;    // and the three flags
 *     ic_plan plan;
 *     if (ic_decide(&in, a, &plan) != 0) ... out of memory ...
 *
 * then, in order:
 *   1. plan.write_status: write plan.status (ic_write_status) and the
 *      metadata: plan.record as IC_ANN_SPEC's value when not NULL, the
 *      annotations plan.remove_refresh / plan.remove_purge name removed.
 *      Upstream's CRD (no /status): all in one PUT of the whole object as
 *      last read.  Ours: when an action starts, the metadata merge patch
 *      first (the record, the removals and OTA_ANN_IC_START naming the
 *      action, under the resourceVersion read), then, read back, the
 *      /status merge patch (reconcile.c ic_start_read_back; a record that
 *      did not land is written again on the next pass: the record names
 *      the startTime it was written for).  A 409 re-reads the cache and
 *      decides again: never a stale plan.
 *   2. only when plan.started is 0: create the Jobs of plan.units that do
 *      not exist yet (one per (node, op, part); the name derives from the
 *      cache uid, the node and unit.identity, so a restarted controller
 *      finds its Job again: 409 = already made), pulls through the pull
 *      queue.  A Job is the action's when ic_identity_part(its op's base
 *      identity, its identity annotation) >= 0.
 *   3. after a successful write with plan.event set: the Event on the
 *      cache (event_type, event_reason, event_message); plan.done: the
 *      action's Jobs may go.
 *   4. plan.requeue_after_s > 0: look again that many seconds from now
 *      (the cache deadline of a waited-on node, a periodic refresh): the
 *      pass's action_list.wake_after_s, the earliest over its caches;
 *      controller.c runs a pass then, whatever the resync.
 *
 * Level-triggered: everything an action needs is on the object (status
 * Processing + reason + startTime, IC_ANN_SPEC) and in its Jobs; a
 * restarted controller continues the action it finds, never Aborted.
 * docs/design.md "ImageCache controller: decisions".
 */
#ifndef OTA_IC_H
#define OTA_IC_H

#include <stddef.h>

#include "arena.h"
#include "ic_spec.h"
#include "json.h"

/* ---- kube-fledged's words (SEED-SYSTEMS §1.3, §1.4), byte for byte ----------- */

#define IC_STATUS_PROCESSING "Processing"
#define IC_STATUS_SUCCEEDED "Succeeded"
#define IC_STATUS_FAILED "Failed"
#define IC_STATUS_ABORTED "Aborted"
#define IC_STATUS_NONE "NoImagesPulledOrDeleted"

#define IC_REASON_CREATE "ImageCacheCreate"
#define IC_REASON_UPDATE "ImageCacheUpdate"
#define IC_REASON_REFRESH "ImageCacheRefresh"
#define IC_REASON_PURGE "ImageCachePurge"

#define IC_MSG_CREATE "Images are being pulled on to the nodes. Please view the status after some time"
#define IC_MSG_UPDATE "Image cache is being updated. Please view the status after some time"
#define IC_MSG_REFRESH "Image cache is being refreshed. Please view the status after some time"
#define IC_MSG_PURGE "Image cache is being purged. Please view the status after some time"
#define IC_MSG_PULLED "All requested images pulled succesfully to respective nodes"
#define IC_MSG_DELETED "All cached images succesfully deleted from respective nodes"
#define IC_MSG_PULL_FAILED "Image pull failed for some images. Please see \"failures\" section"
#define IC_MSG_DELETE_FAILED "Image deletion failed for some images. Please see \"failures\" section"
#define IC_MSG_NO_NODES                                                                            \
    "No images were pulled or deleted because nodeSelector specified did not match any nodes"
/* a failure entry whose kubelet words are unknown (kube-fledged's words) */
#define IC_FAIL_UNKNOWN_REASON "ImagePullStatusUnknown"
#define IC_FAIL_UNKNOWN_MESSAGE                                                                    \
    "Unable to get the status of Image pull. Retry after some time or contact cluster administrator"

/* ---- ours ---------------------------------------------------------------------- */

/* Purge asked for while purge is off (docs/DECISIONS.md). */
#define IC_MSG_PURGE_DISABLED                                                                      \
    "Image purge is disabled in ota-controller: start it with --image-cache-purge-image to "      \
    "delete cached images"
/* Appended to the Processing message while items wait on NotReady nodes. */
#define IC_MSG_WAITING_PREFIX " Waiting for nodes: "
#define IC_WAITING_NAMES_MAX 10
/* A waited-on item failed at the cache deadline. */
#define IC_FAIL_NODE_NOT_READY "NodeNotReady"
/* A pull past its deadline with no words of the kubelet's. */
#define IC_FAIL_DEADLINE_REASON "ImagePullDeadlineExceeded"
/* An image no Job can carry (the apiserver would refuse the pod: "", null,
 * surrounding whitespace; for a purge, any reference that does not parse):
 * its items fail at once with this reason and the parser's words. */
#define IC_FAIL_INVALID_REASON "InvalidImageName"
/* The most images one Job carries (PREPULL_JOB_MAX_IMAGES and
 * PURGE_JOB_MAX_IMAGES, one container each): a node's images beyond it are
 * split into parts, one Job each. */
#define IC_JOB_MAX_IMAGES 64
/* A purge container that failed without words. */
#define IC_FAIL_DELETE_REASON "ImageDeleteFailed"
#define IC_FAIL_DELETE_MESSAGE "crictl rmi failed and left no message"

#define IC_ANN_REFRESH "kubefledged.io/refresh-imagecache"
#define IC_ANN_PURGE "kubefledged.io/purge-imagecache"
/* The record of the spec the current or last action ran on. */
#define IC_ANN_SPEC "ota-prepull.openyurt.io/imagecache-spec"
#define IC_LABEL_HOSTNAME "kubernetes.io/hostname"

/* The most (image, node, op) items one action holds (a hostile spec of
 * 100 000 images on 500 nodes would be 50 million); past it the action
 * ends Failed with IC_MSG_TOO_LARGE (printf: the bound). */
#define IC_MAX_ITEMS 200000
#define IC_MSG_TOO_LARGE                                                                           \
    "Image cache is too large: more than %d (image, node) pairs; split it into smaller caches"
/* The record's bound: above it the images are left out (no removal purge). */
#define IC_RECORD_MAX (64 * 1024)
/* The cache's own deadline for nodes waited on: the larger of this and
 * IC_CACHE_DEADLINE_PULLS pull deadlines, from status.startTime. */
#define IC_CACHE_DEADLINE_MIN_S 3600
#define IC_CACHE_DEADLINE_PULLS 2

/* ---- actions -------------------------------------------------------------------- */

typedef enum ic_action {
    IC_ACT_NONE,
    IC_ACT_CREATE,
    IC_ACT_UPDATE,
    IC_ACT_REFRESH,
    IC_ACT_PURGE,
} ic_action;

/* status.reason of an action (IC_REASON_*), NULL for IC_ACT_NONE. */
const char *ic_action_reason(ic_action act);
/* The Processing message of an action (IC_MSG_CREATE...), NULL for none. */
const char *ic_action_message(ic_action act);
/* The action a reason names, IC_ACT_NONE for any other (NULL too). */
ic_action ic_action_of_reason(const char *reason);

/* What the object alone says to do (the rules of docs/design.md "ImageCache
 * controller: decisions"): */
typedef struct ic_state {
    const char *status, *reason, *completion_time; /* NULL or "": absent */
    int has_refresh, has_purge;                     /* annotations present */
    const char *spec_hash;                          /* the spec as it is now */
    const char *acted_hash;                         /* IC_ANN_SPEC's hash, NULL: none */
    long long now_epoch;
    long long refresh_period_s;                     /* 0: no periodic refresh */
} ic_state;

typedef enum ic_step {
    IC_STEP_NOTHING,
    IC_STEP_CONTINUE, /* status Processing: go on with its action */
    IC_STEP_START,    /* start an action */
    IC_STEP_ADOPT,    /* a finished cache another controller (kube-fledged) served, with
                       * no record of ours: its spec is recorded as acted on and nothing
                       * runs, so a purged cache stays dormant and a Failed one waits
                       * for an edit or an annotation, as they would have there */
} ic_step;

/* The step and its action (*act; NONE with NOTHING). */
ic_step ic_next(const ic_state *s, ic_action *act);

/* Seconds until the periodic refresh of a finished cache is due (0: due
 * now), or -1 when none will be (period 0, Failed, a purge, no or an
 * unreadable completionTime). */
long long ic_refresh_in(const ic_state *s);

/* ---- image references ------------------------------------------------------------ */

/* The normal form containerd stores and Node.status.images lists
 * ("nginx" -> "docker.io/library/nginx:latest"; a digest wins over a
 * tag), arena memory; NULL when ref is not a valid reference. */
const char *ic_ref_normalize(const char *ref, arena *a);

/* ref names one of names[0..n) exactly, both normalised.  Absence proves
 * nothing (the kubelet reports at most 50 images per node by default). */
int ic_image_present(const char *ref, const char *const *names, size_t n, arena *a);

/* Whether ref needs no pull on a node that lists names: present and its
 * pull policy is IfNotPresent (a tag other than latest, or a digest). */
int ic_already_present(const char *ref, const char *const *names, size_t n, arena *a);

/* ---- nodes and the images each should hold ----------------------------------------- */

typedef struct ic_node {
    const char *name;
    const char *const *label_keys; /* metadata.labels */
    const char *const *label_values;
    size_t n_labels;
    int not_ready;         /* Ready is not True, or the node is unreachable */
    const char *not_ready_why; /* the Ready condition in words ("reason: message"), or NULL */
    const char *const *images; /* every name of every entry of status.images */
    size_t n_images;
} ic_node;

/* The node's kubernetes.io/hostname label, else its name (a failure's node). */
const char *ic_node_hostname(const ic_node *n);

/* A list's nodeSelector matches n: every pair equal to a label; an absent,
 * null or empty selector matches every node. */
int ic_selector_matches(const ic_list *l, const ic_node *n);

/* Strings, and the lists an action works with: images per list, as written. */
typedef struct ic_strs {
    const char **v;
    size_t n;
} ic_strs;
typedef struct ic_lists {
    ic_strs *list; /* list[i].v[j]: cacheSpec[i].images[j] */
    size_t n;
} ic_lists;

/* A spec's lists as ic_lists (arena copies). 0, or -1 out of memory. */
int ic_lists_of_spec(const ic_spec *s, arena *a, ic_lists *out);

/* One image a node should hold. */
typedef struct ic_want {
    const char *image; /* as written */
    size_t list, pos;  /* where it first appears: cacheSpec[list].images[pos] */
} ic_want;

/* The union over the lists whose nodeSelector (that of sel's list of the
 * same index; none beyond sel's count) matches n of their images in
 * images: exact-string dedup, first appearance order.  *matched: some list
 * matched (even an empty one).  The count, or (size_t)-1 out of memory. */
size_t ic_node_images(const ic_spec *sel, const ic_lists *images, const ic_node *n, arena *a,
                      ic_want **out, int *matched);

/* An update's change on one node: images the new lists want there that
 * the old did not (*added), and images the old lists put there that no new
 * list wants there any more (*removed); both in first-appearance order.
 * 0, or -1 out of memory. */
int ic_update_diff(const ic_spec *sel, const ic_lists *old_lists, const ic_lists *new_lists,
                   const ic_node *n, arena *a, ic_want **added, size_t *n_added, ic_want **removed,
                   size_t *n_removed);

/* ---- the record of what was acted on (IC_ANN_SPEC) ------------------------------------ */

/* 16 lowercase hex of FNV-1a 64 over the whole spec (lists, selectors,
 * pull secrets; nil and empty told apart as reflect.DeepEqual does), into
 * out (17 bytes). */
void ic_spec_hash(const ic_spec *s, char out[17]);

typedef struct ic_record {
    char hash[17];
    const char *start; /* the startTime of the action it was written for, or NULL */
    int has_images;    /* images known: an update may purge what it removed */
    ic_lists images;   /* the lists the action runs on */
    int has_removed;   /* an update started with purge on: what it removed */
    ic_lists removed;  /* per list */
} ic_record;

/* {"hash":"..","start":"..","images":[[..],..],"removed":[[..],..]}
 * compact, arena memory; start and removed written when not NULL.  Above
 * IC_RECORD_MAX without images and removed.  NULL out of memory. */
const char *ic_record_encode(const char *hash, const char *start, const ic_lists *images,
                             const ic_lists *removed, arena *a);

/* Reads a record (hostile: anyone who may edit the cache wrote it).  0, or
 * -1 with *r zeroed when it is not one: larger than IC_RECORD_MAX, not
 * JSON, nested deeper than a record, a hash that is not 16 lowercase hex,
 * images or removed not arrays of arrays of strings. */
int ic_record_decode(ic_record *r, const char *json, size_t len, arena *a);

/* ---- per (image, node) items, and the cache's outcome --------------------------------- */

typedef enum ic_op { IC_OP_PULL, IC_OP_PURGE } ic_op;

typedef enum ic_item_state {
    IC_ITEM_PENDING, /* no Job yet */
    IC_ITEM_WAITING, /* its node is NotReady: waited for until the cache deadline */
    IC_ITEM_RUNNING, /* its Job's container has no outcome yet */
    IC_ITEM_PULLED,
    IC_ITEM_PRESENT, /* already on the node (IfNotPresent): no container */
    IC_ITEM_DELETED,
    IC_ITEM_FAILED,  /* reason, message */
} ic_item_state;

const char *ic_item_state_name(ic_item_state s);

typedef struct ic_item {
    const char *image; /* as written */
    const char *node;  /* the node's name */
    ic_op op;
    ic_item_state state;
    const char *reason, *message; /* FAILED: the kubelet's (or crictl's) words */
} ic_item;

/* One container of an action's Job as the glue read it (pull-<i> or
 * rmi-<i>), for ic_container_outcome. */
typedef struct ic_container {
    ic_op op;
    int started;        /* running, or terminated */
    int terminated;     /* terminated (started and not terminated: running) */
    int exit_code;      /* terminated: its exit code (any non-zero will do) */
    const char *term_reason, *term_message; /* terminated: its reason, its message */
    const char *waiting_reason, *waiting_message; /* the pull's words as pullerr_seen keeps them */
    int attempts;       /* pullerr_seen.attempts */
    long long pull_start_epoch; /* when this container's pull began; 0: not yet */
    int job_ended;      /* its Job ended (deadline, given up) without this one's outcome */
    const char *given_up_reason, *given_up_message; /* the Job's give-up annotations */
} ic_container;

/* The item state of one container, its words in *reason and *message
 * (borrowed, or ours; NULL unless FAILED): a pull container running, or
 * terminated with exit 0, pulled its image; one terminated otherwise
 * (ContainerStatusUnknown, 137 after the pod was killed: it may never have
 * run) failed with its words, else kube-fledged's unknown ones; a purge container's exit 0 deleted
 * it, another exit failed with crictl's words; a pull the kubelet will not
 * retry, or the registry refused (pullerr_judge GIVE_UP), fails at once;
 * a pull that began pull_deadline_s or more ago fails with the kubelet's
 * last words (IC_FAIL_DEADLINE_REASON when it has none); a Job that ended
 * around it fails it with the Job's give-up words, else kube-fledged's
 * unknown ones; anything else runs. */
ic_item_state ic_container_outcome(const ic_container *c, long long now_epoch,
                                   long long pull_deadline_s, arena *a, const char **reason,
                                   const char **message);

/* One failures entry: failures[image] holds {node, reason, message}. */
typedef struct ic_failure {
    const char *image, *node, *reason, *message;
} ic_failure;

typedef struct ic_status {
    const char *status, *reason, *message;
    const char *start_time, *completion_time; /* NULL: absent */
    ic_failure *failures; /* sorted by image, then node (bytes) */
    size_t n_failures;
} ic_status;

/* The failures map's bounds, so the final status write always fits in
 * etcd's 1.5 MiB (20 images failing on 500 nodes is some 2.5 MB): a
 * message is cut to IC_FAIL_MESSAGE_MAX bytes and a reason to
 * IC_FAIL_REASON_MAX (on a UTF-8 boundary, ending in "…"); an image lists
 * IC_FAIL_NODES_MAX nodes (by name), then one entry for the rest,
 * {node: "<N more nodes>", reason: the most common of theirs, message:
 * IC_FAIL_MORE_NODES_MESSAGE}; and past IC_FAIL_BUDGET bytes of JSON the
 * images left (by name) are one entry, failures["<K more images>"] =
 * [{node: "<N more failures>", reason: the most common, message:
 * IC_FAIL_MORE_IMAGES_MESSAGE}]. */
#define IC_FAIL_MESSAGE_MAX 512
#define IC_FAIL_REASON_MAX 128
#define IC_FAIL_NODES_MAX 50
#define IC_FAIL_BUDGET (512 * 1024)
#define IC_FAIL_MORE_NODES_MESSAGE                                                                 \
    "%zu more nodes failed for this image, %zu of them with this reason; their entries are left "  \
    "out to keep the status within its size bound"
#define IC_FAIL_MORE_IMAGES_MESSAGE                                                                \
    "%zu more failures on %zu more images, %zu of them with this reason; left out to keep the "    \
    "status within its size bound"

/* Bounds failures f[0..n) (sorted by image, then node) in place as above;
 * the new count, or (size_t)-1 out of memory. */
size_t ic_failures_bound(ic_failure *f, size_t n, arena *a);

/* "status": the status object, into an open map of w.  merge: a merge
 * patch (fields the status lacks are sent as null, so none of the last
 * action's stays); else the whole status of a PUT. */
void ic_write_status(json_writer *w, const ic_status *s, int merge);

/* A Job a node gets for one op of the action: the node's images of that op
 * (valid ones; for a purge one spelling per normalised reference) in
 * parts of IC_JOB_MAX_IMAGES, in order; part k holds the k-th such run,
 * whatever was already present when it was made. */
typedef struct ic_unit {
    const char *node;
    ic_op op;
    size_t part;
    const char *const *images; /* the images of its containers, in order */
    size_t n_images;
    const char *identity; /* the action's identity for op and part: the Job name's input and
                           * its OTA_ANN_JOB_SPEC_HASH value */
} ic_unit;

/* A unit's identity is "<pull|purge>/<reason>/<startTime>/<hash>" (base)
 * for part 0, base + "/<part>" for a part above 0.  The part a Job's
 * identity id names under base, or -1 when id is not one of base's. */
long ic_identity_part(const char *base, const char *id);

typedef struct ic_input {
    const ic_spec *spec;      /* .spec, ic_decode'd */
    const char *status, *reason, *message, *start_time, *completion_time; /* NULL: absent */
    int has_refresh, has_purge;
    const char *record; /* IC_ANN_SPEC's value, or NULL */
    size_t record_len;
    const ic_node *nodes;
    size_t n_nodes;
    const ic_item *seen; /* the action's Jobs, read: RUNNING, PULLED, DELETED, FAILED */
    size_t n_seen;
    const char *now; /* RFC 3339 */
    long long now_epoch;
    long long refresh_period_s; /* --image-cache-refresh-frequency; 0: off */
    long long pull_deadline_s;  /* --image-pull-deadline-duration */
    int purge_enabled;          /* --image-cache-purge-image set */
} ic_input;

typedef struct ic_plan {
    ic_step step;
    ic_action action;   /* the action of this pass; NONE: nothing to do */
    int started;        /* this pass writes its Processing status: no Job yet */
    int done;           /* this pass writes its final status */
    char spec_hash[17]; /* the spec as it is now */
    ic_item *items;     /* every (image, node, op) of the action, node by node */
    size_t n_items;
    ic_unit *units;     /* Jobs wanted: (node, op, part) with items and none seen */
    size_t n_units;
    ic_status status;
    int write_status;
    const char *record; /* IC_ANN_SPEC's new value, or NULL: leave it */
    int remove_refresh, remove_purge;
    int event;          /* with the final status */
    const char *event_type, *event_reason, *event_message;
    long long requeue_after_s; /* > 0: look again then */
} ic_plan;

/* One pass's decisions into *out (arena memory, valid while a and the
 * inputs are).  0, or -1 when memory runs out. */
int ic_decide(const ic_input *in, arena *a, ic_plan *out);

#endif

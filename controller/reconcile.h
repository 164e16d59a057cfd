/*
 * reconcile.h - the controller's decisions (docs/design.md §5) as a pure function:
 * the caches in, the API calls to make out.
 *
 * Level-triggered, like every Kubernetes controller: each pass looks at the
 * whole state and says what is missing, so a restart, a lost watch event or
 * a failed call is repaired by the next pass.  Nothing here does I/O; the
 * executor (controller.c) runs the actions.  Jobs are named here, from the
 * request alone (prepull_job_name), so that a repeated create is a harmless
 * 409.
 */
#ifndef OTA_RECONCILE_H
#define OTA_RECONCILE_H

#include <stddef.h>

#include "kobj.h"
#include "store.h"
#include "strset.h"

typedef enum action_kind {
    ACTION_PATCH_POD_STATUS, /* strategic merge patch of pods/status */
    ACTION_CREATE_JOB,
    ACTION_DELETE_JOB,       /* propagationPolicy Background */
    ACTION_CREATE_EVENT,
    ACTION_GET_NODE,         /* read a node's status.images for the shortcut */
    ACTION_LIST_PODS,        /* read the pods an ImagePullJob's podSelector picks: in namespace,
                                with query "labelSelector=..."; name is the ImagePullJob's uid,
                                the key its answer is kept under (ipj_pod_nodes) */
    /* An ImagePullJob's (apps.kruise.io, written as v1alpha1, which every
     * Kruise CRD and ours serve; conversion is None): */
    ACTION_PATCH_JOB,        /* merge patch of a pull Job: end it early (given up) */
    ACTION_PATCH_IPJ_STATUS, /* merge patch of imagepulljobs/status: {"status": {...}}; the
                                executor sends one per object per second at most */
    ACTION_PATCH_IPJ,        /* merge patch of the object's metadata (finalizers,
                                annotations), with its resourceVersion: a 409 re-reads */
    ACTION_DELETE_IPJ,       /* ttlSecondsAfterFinished: body DeleteOptions with the uid
                                as precondition, propagationPolicy Background */
    /* A kube-fledged ImageCache's (kubefledged.io/v1alpha2; controller/ic_write.h): */
    ACTION_GET_IC_DISCOVERY, /* read the group version's resources: is imagecaches/status
                                served (our CRD) or not (kube-fledged's) */
    ACTION_PATCH_IC_STATUS,  /* merge patch of imagecaches/status (our CRD) */
    ACTION_PATCH_IC,         /* merge patch of the object's annotations, with its
                                resourceVersion: a 409 re-reads */
    ACTION_PUT_IC,           /* kube-fledged's CRD: the whole object with its new status and
                                annotations, with its resourceVersion: a 409 re-reads */
} action_kind;

/* What an action reports, for the executor to count (pulls by outcome)
 * without reading keys or bodies. */
typedef enum action_outcome {
    ACTION_OUTCOME_NONE,           /* no pull's outcome */
    ACTION_OUTCOME_PULL_SUCCEEDED, /* a status patch: PodImageReady True */
    ACTION_OUTCOME_PULL_FAILED,    /* a status patch: PodImageReady False, PullImageFail */
} action_outcome;

/* What the executor says about an action done, in its log line and
 * histograms; NULL or 0 where it does not apply. */
typedef struct action_note {
    char *subject;           /* "namespace/name" of the pod (a DaemonSet for its Event) */
    char *node;              /* a created Job's node */
    char *reason;            /* a pull's outcome in words; a marking's revision */
    long long request_epoch; /* the pull request's time (seconds since 1970) */
    size_t count;            /* pods marked PendingUpgrade (a DaemonSet's Event) */
    long deadline_s;         /* a created Job's activeDeadlineSeconds */
    int deadline_source;     /* and where it came from (reconcile_deadline_source) */
    int warn;                /* an Event that says something is wrong: a warning line */
    int auto_start;          /* a status write that starts an automatic pre-pull */
} action_note;

typedef struct action {
    action_kind kind;
    char *namespace, *name; /* the target (for GET_NODE: name only) */
    char *body;             /* JSON, or NULL */
    char *key;              /* what this action is about: equal keys are duplicates */
    action_outcome outcome;
    action_note note;
    char *query;            /* a read's query string (without '?'), or NULL */
} action;

typedef struct action_list {
    action *v;
    size_t n, cap;
    size_t waiting; /* pull requests left waiting for a free slot */
    int more;       /* writes held back by reconcile_input.max_writes: pass again */
    long long wake_after_s; /* > 0: pass again this many seconds from now, whatever the
                             * resync (the earliest ImageCache plan.requeue_after_s: a
                             * periodic refresh, the deadline of a waited-on node; the
                             * opening of a pull window automatic pulls wait for) */
} action_list;

/* The earlier of a wake already due in have seconds and one in after_s
 * (each 0 or less: none): 0 for none. */
long long reconcile_wake_min(long long have, long long after_s);

typedef struct reconcile_config {
    int max_concurrent_pulls;  /* running Jobs at most (DESIGN: default 10) */
    int max_pulls_per_node;    /* pull Jobs on one node at most (default 1); 0: no bound */
    long pull_timeout_s;       /* activeDeadlineSeconds unless the DaemonSet says */
    const char *helper_image;  /* static busybox for /ota-bin/true */
    int backoff_limit;         /* Job backoffLimit, 0..2 */
    int pull_method;           /* --pull-method: a pullmethod_mode (controller/pullmethod.h) */
    /* ImageCaches (--imagecaches): the periodic refresh (0: none), the
     * deadline of one (image, node) pull from its start, and purge: the
     * image of a CRI client with crictl ("" or NULL: purge disabled) and
     * the runtime's socket on the node it is given as a hostPath. */
    uint64_t ic_refresh_s;
    long ic_pull_deadline_s;
    const char *ic_purge_image;
    const char *cri_socket_path;
} reconcile_config;

/* What the reconciler reads.  nodes holds kobj_node by node name, for the
 * images shortcut; events_sent the keys of the Events already created, so
 * each is sent once. */
typedef struct reconcile_input {
    const store *daemonsets, *revisions, *pods, *jobs, *job_pods, *nodes;
    /* uid -> kobj (KOBJ_IMAGEPULLJOB); NULL: none served (the CRD is not
     * installed).  Their Jobs are in jobs (controller ownerReference:
     * meta.owner_uid), their pods in job_pods. */
    const store *imagepulljobs;
    /* uid -> kobj (KOBJ_IMAGECACHE); NULL: none served (--imagecaches off,
     * or no CRD).  Their Jobs are in jobs (controller ownerReference). */
    const store *imagecaches;
    /* Whether the ImageCaches' CRD serves /status (ic_status_served): 1
     * ours, 0 kube-fledged's, -1 not known yet (ACTION_GET_IC_DISCOVERY
     * asks; no status is written meanwhile). */
    int ic_status_served;
    /* Ask discovery again though ic_status_served is known (every resync:
     * one CRD may replace the other). */
    int ic_rediscover;
    /* ImagePullJob uid -> kobj (KOBJ_POD_NODES): the nodes its podSelector
     * picked when last listed (ACTION_LIST_PODS), with the query asked;
     * emptied every resync, so pods that come and go are followed. */
    const store *ipj_pod_nodes;
    /* node name -> kobj (KOBJ_NODE_STATE) from the informer on Nodes: a
     * node there that is NotReady or unreachable gets no Job (pullq.h).
     * NULL, or a node not there: Ready. */
    const store *node_states;
    /* What the cluster answered about image volumes (--pull-method,
     * controller/pullmethod.h); NULL: nothing known */
    const struct pullmethod_memory *pull_memory;
    const strset *events_sent;
    /* "namespace/job name" -> the last kobj_job_pod seen waiting on an
     * image: the Job controller deletes the pod at the deadline, and the
     * kubelet's reason must outlive it. */
    const store *job_waiting;
    const reconcile_config *cfg;
    /* Keys of actions not to emit (the executor's in flight and done
     * lately: it would skip them), so their bodies are not built: a pass
     * during a rollout costs what is new, not N bodies.  Up to two sets,
     * NULL when none. */
    const strset *skip[2];
    /* Writes (every action but ACTION_GET_NODE) this pass may emit at
     * most; 0: no bound.  Once reached, no body is built for a further
     * write and out->more says some were held back: the executor's queue
     * stays bounded, and the next pass (level-triggered) emits the rest.
     * Writes come in this order, so a bound serves the urgent first: what
     * each pod's pull needs (results, Events, stale Jobs deleted) in pod
     * order, then Job creates (FIFO; ImagePullJob nodes after every OTA
     * request), then each ImagePullJob's writes (give-ups, Events, Jobs
     * deleted, status, metadata, TTL delete), then PodNeedUpgrade marks
     * in pod order.  The one Event per DaemonSet and revision ("marked N pods")
     * is not bounded: it is sent once, and at most one per DaemonSet. */
    size_t max_writes;
    const char *now;      /* RFC 3339 */
    long long now_epoch;  /* the same, in seconds since 1970 */
} reconcile_input;

/* The key of an Event about a pod's pull request:
 * "event:<pod uid>|<request time>|<reason>:<what>". */
#define RECONCILE_EVENT_KEY "event:"
/* The key of the Event on a DaemonSet for a new revision:
 * "event-ds:<daemonset uid>|<revision hash>". */
#define RECONCILE_REVISION_EVENT_KEY "event-ds:"

/* The key of an Event on an ImagePullJob: "event-ipj:<uid>|<what>", what
 * being "<node>|<spec hash>:PullImageFailed", "<node>:PrePullQueued",
 * "spec" or "render|<spec hash>". */
#define RECONCILE_IPJ_EVENT_KEY "event-ipj:"

/* The key of an Event on an ImageCache: "event-ic:<uid>|<what>", what
 * being "done|<startTime>|<reason>|<status>", "spec|<generation>" or
 * "render|<identity>". */
#define RECONCILE_IC_EVENT_KEY "event-ic:"

/* Whether the OTA state of a cached DaemonSet pod can be served, and if
 * not, why (issue 19: a request nobody answers sits in WaitPullImage
 * forever).  Anything but SERVED and WAIT means: a pull request on the pod
 * is answered PullImageFail with the reason in words; and but for
 * OWNER_GONE (the garbage collector acts on the pod next), a PodNeedUpgrade
 * True is no longer justified and is removed. */
typedef enum reconcile_serve {
    RECONCILE_SERVED,      /* an OTA DaemonSet with a revision owns the pod */
    RECONCILE_WAIT,        /* its DaemonSet is being deleted: the GC decides first */
    RECONCILE_NO_OWNER,    /* no controller ownerReference (--cascade=orphan) */
    RECONCILE_OWNER_GONE,  /* the owner is not a DaemonSet the controller sees */
    RECONCILE_NOT_OTA,     /* the DaemonSet is not (or no longer) OTA */
    RECONCILE_NO_REVISION, /* an OTA DaemonSet without a ControllerRevision */
} reconcile_serve;

/* Decides for pod, owner being the DaemonSet of its controller
 * ownerReference from the cache (NULL: none cached) and has_revision
 * whether owner has a ControllerRevision.  Unless SERVED or WAIT, writes
 * why in words, NUL-terminated (cut to size), into why: "pod edge/x has
 * no owner: ...". */
reconcile_serve reconcile_serve_of(const kobj *pod, const kobj *owner, int has_revision,
                                   char *why, size_t size);

/* The deadline of the pre-pull Jobs of a DaemonSet, and where it comes
 * from, for the log and the Event that say so. */
typedef enum reconcile_deadline_source {
    RECONCILE_DEADLINE_FLAG,       /* --pull-timeout: no annotation */
    RECONCILE_DEADLINE_ANNOTATION, /* the DaemonSet's annotation */
    RECONCILE_DEADLINE_BAD_ANNOTATION, /* --pull-timeout: the annotation is not valid */
    RECONCILE_DEADLINE_IMAGEPULLJOB,   /* an ImagePullJob node's: its pullPolicy (ipj.h D1) */
    RECONCILE_DEADLINE_IMAGECACHE,     /* an ImageCache node's: --image-pull-deadline-duration
                                          per image, + 60 s */
    RECONCILE_DEADLINE_AUTO_ANNOTATION, /* an automatic pre-pull's: Kruise's timeout annotation */
} reconcile_deadline_source;

/* The deadline in seconds for a DaemonSet (its annotation as decoded into
 * ds->u.ds) under cfg, its source into *source. */
long reconcile_deadline(const kobj *ds, const reconcile_config *cfg,
                        reconcile_deadline_source *source);
const char *reconcile_deadline_source_name(reconcile_deadline_source s);

/* The key of an Event on an ImagePullJob (a node's failure, a node waited
 * for): "event-ipj:<ImagePullJob uid>|<what>". */
#define RECONCILE_IPJ_EVENT_KEY "event-ipj:"

/* The keys of the Events on a DaemonSet about its automatic pre-pull:
 * "event-ds-auto:<daemonset uid>|<hash>|started" (or "|finished|<pods
 * waited for>", autopull_finished_what), and
 * "event-ds-auto:<daemonset uid>|bad|<hash of the message>". */
#define RECONCILE_AUTO_EVENT_KEY "event-ds-auto:"

/* The key of the Warning Event on a DaemonSet whose timeout annotation is
 * not valid: "event-ds-timeout:<daemonset uid>|<value>". */
#define RECONCILE_TIMEOUT_EVENT_KEY "event-ds-timeout:"

/* Appends the actions of one pass to out.  0, or -1 when out of memory. */
int reconcile(const reconcile_input *in, action_list *out);

void action_list_free(action_list *l);
/* A read (GET_NODE, LIST_PODS): not a write, sent by any replica, not
 * bounded by max_writes. */
int action_is_read(action_kind k);
const char *action_kind_name(action_kind k);

#endif

/*
 * ipj.h - the decisions for one OpenKruise ImagePullJob in one pass
 * (issue 20; the lead's design D1-D11), as pure functions: the CR, its
 * decoded spec, the Nodes, the CR's Jobs and what their pods wait on in;
 * each selected node's state, the status to write, the nodes to offer to
 * the shared pull queue, the Jobs to delete or give up, the metadata patch
 * and the TTL delete out.  reconcile.c turns a plan into actions (and
 * admits the offered nodes with the OTA requests, controller/pullq.h);
 * nothing here does I/O or reads a clock.
 *
 * The semantics are Kruise's (SEED-SYSTEMS §2): its defaults, its status
 * fields and message strings, completion, activeDeadlineSeconds and
 * ttlSecondsAfterFinished; a node is pulled by one batch/v1 Job per
 * (ImagePullJob, node, spec hash) instead of kruise-daemon.
 */
#ifndef OTA_IPJ_H
#define OTA_IPJ_H

#include <stddef.h>

#include "arena.h"
#include "ipj_spec.h"
#include "kobj.h"
#include "prepull_job.h"

/* Kruise's defaults (its mutating webhook and controller). */
#define IPJ_DEFAULT_TIMEOUT_S 600
#define IPJ_DEFAULT_BACKOFF_LIMIT 3
#define IPJ_DEFAULT_PARALLELISM 1
/* completionPolicy Never: a node's result is checked again this long
 * after its Job finished (Kruise: the NodeImage tag's 24 h TTL). */
#define IPJ_REVERIFY_S (24 * 3600)
/* A Job's deadline beyond its attempts' timeouts: the pod's start (D1). */
#define IPJ_JOB_DEADLINE_SLACK_S 60

/* Kruise's status messages. */
#define IPJ_MSG_COMPLETED "job has completed"
#define IPJ_MSG_DEADLINE "job exceeds activeDeadlineSeconds"
#define IPJ_MSG_NO_PROGRESS "job is running, no progress"
#define IPJ_MSG_PROGRESS "job is running, progress %.1f%%"

/* The spec with Kruise's defaults applied. */
typedef struct ipj_values {
    long long timeout_s;     /* pullPolicy.timeoutSeconds: 600 unless set above 0 */
    long long backoff_limit; /* pullPolicy.backoffLimit: 3 unless set to 0 or more */
    long long parallelism;   /* 1 when absent; 0: paused (so is a string that is not a
                                whole number, as Kruise <= 1.8 reads "50%") */
    int never;               /* completionPolicy.type Never (empty or absent: Always) */
    int has_deadline, has_ttl;
    long long deadline_s, ttl_s; /* activeDeadlineSeconds, ttlSecondsAfterFinished */
    const char *pull_policy; /* "IfNotPresent" or "Always" */
} ipj_values;

void ipj_effective(const ipj_spec *s, ipj_values *v);

/* The integer of parallelism, int or integer string; 1 when absent, 0
 * when paused or not a whole number at or above 0. */
long long ipj_parallelism(const ipj_spec *s);

/* D2: 8 lowercase hex of pull_job_hash3 over the normalised image, the
 * pull secrets joined with ",", and "<imagePullPolicy>/<timeoutSeconds>/
 * <backoffLimit>" (defaults applied), into out (9 bytes).  The image as
 * written when it does not normalise (the Job's render then says why).
 * 0, or -1 when out of memory (no hash: never another spec's). */
int ipj_spec_hash(const ipj_spec *s, const ipj_values *v, arena *a, char out[9]);

/* Why the controller cannot run spec as written, in words (arena
 * memory), or NULL when it can: an image distribution/reference refuses,
 * a selector or podSelector that does not parse, a podSelector longer
 * than a pod list's query may be (IPJ_SELECTOR_STRING_MAX).  The webhook
 * refuses each of these; a CR written around it, or before it was
 * installed, may carry them, and the controller trusts no input. */
const char *ipj_unservable(const ipj_spec *s, arena *a);

/* The selected nodes' names in name order, de-duplicated, into *out (arena
 * memory); their count.  nodes: KOBJ_NODE_STATE sorted by name.
 * selector.names: the nodes that exist; matchLabels/matchExpressions: the
 * nodes whose labels match; no selector: every node; podSelector (D10):
 * the nodes of pod_nodes (KOBJ_POD_NODES, the nodes of its active,
 * scheduled pods; NULL: none) that exist. */
size_t ipj_select_nodes(const ipj_spec *s, const kobj *const *nodes, size_t n_nodes,
                        const kobj *pod_nodes, arena *a, const char ***out);

/* A selected node's state (D3). */
typedef enum ipj_node_state {
    IPJ_NODE_UNSYNCED,  /* no Job of the current spec hash: wants one */
    IPJ_NODE_WAITING,   /* no Job and the node is NotReady or unreachable */
    IPJ_NODE_PULLING,   /* its Job runs */
    IPJ_NODE_SUCCEEDED, /* its Job is Complete */
    IPJ_NODE_FAILED,    /* its Job Failed, or was given up */
} ipj_node_state;

const char *ipj_node_state_name(ipj_node_state s);

/* D3 from the node's Job of the current spec hash (NULL: none) and
 * readiness; a given-up annotation is a failure already. */
ipj_node_state ipj_node_state_of(const kobj *job, int not_ready);

/* D4: whether the pull of a running Job is to be given up now, from its
 * pod's waiting info (a KOBJ_JOB_POD, NULL: nothing known): pull attempts
 * that ended in an error reach backoffLimit + 1, or the kubelet's words
 * say waiting will not help (pullerr_judge: PULLERR_GIVE_UP). */
int ipj_give_up(const kobj *waiting, long long backoff_limit);

/* Status.message (Kruise's strings) into buf. */
typedef enum ipj_phase {
    IPJ_RUNNING,
    IPJ_COMPLETED, /* every selected node finished (Always) */
    IPJ_DEADLINE,  /* activeDeadlineSeconds passed (Always) */
} ipj_phase;
void ipj_message(char *buf, size_t size, ipj_phase phase, long long desired, long long succeeded,
                 long long failed);

/* D7, Always: whether the CR completes now and how: active == 0 (also
 * when desired is 0), or activeDeadlineSeconds after start_epoch passed.
 * Never: IPJ_RUNNING always. */
ipj_phase ipj_completion(const ipj_values *v, long long active, long long start_epoch,
                         long long now_epoch);

/* D7: a completed CR's ttlSecondsAfterFinished has run out. */
int ipj_ttl_due(const ipj_values *v, long long completion_epoch, long long now_epoch);

/* D7: what the CR's metadata and status say about its last completion. */
typedef enum ipj_done {
    IPJ_NOT_DONE,  /* no completionTime */
    IPJ_DONE,      /* completed; nothing more to do */
    IPJ_RERUN,     /* completed, and the spec was edited since (generation >
                      the completed-generation annotation): runs again */
} ipj_done;
ipj_done ipj_done_of(const kobj *ipj);

/* D7, Never: a finished Job whose result is older than IPJ_REVERIFY_S is
 * deleted, and the node pulled again. */
int ipj_reverify_due(const ipj_values *v, const kobj *job, long long now_epoch);

/* ---- one pass --------------------------------------------------------------- */

typedef struct ipj_input {
    const kobj *ipj;           /* KOBJ_IMAGEPULLJOB */
    const ipj_spec *spec;      /* its spec, ipj_decode'd */
    const kobj *const *nodes;  /* KOBJ_NODE_STATE, sorted by name */
    size_t n_nodes;
    const kobj *const *jobs;   /* its Jobs (meta.owner_uid == its uid) */
    const kobj *const *waiting; /* per Job: what its pod waits on (KOBJ_JOB_POD), or NULL */
    size_t n_jobs;
    /* podSelector: the nodes of its pods, listed for the selector as it is
     * now (KOBJ_POD_NODES), or NULL while they are being listed */
    const kobj *pod_nodes;
    const char *now;           /* RFC 3339 */
    long long now_epoch;
} ipj_input;

typedef struct ipj_node {
    const char *name;
    ipj_node_state state;
    const kobj *job;               /* its Job of the current spec hash, or NULL */
    const char *reason, *message;  /* FAILED: the kubelet's words (D3) */
    int give_up;                   /* FAILED from this pass: patch its Job (D4) */
    int keep_words;                /* FAILED by its own deadline, the kubelet's words known
                                      only in memory: annotate its Job with them, so a
                                      restart still says why */
    int offer;                     /* UNSYNCED, offered to the pull queue this pass (D5) */
} ipj_node;

typedef struct ipj_plan {
    ipj_values v;
    char spec_hash[9];
    int running;          /* the CR is to be worked on: not being deleted, not done */
    size_t running_elsewhere; /* its unfinished Jobs on nodes no longer selected (they
                                 count against parallelism) */
    int list_pods;        /* a podSelector CR whose pods are not listed: nothing decided
                             until they are (D10) */
    ipj_node *nodes;      /* the selected nodes, in name order (running only) */
    size_t n_nodes;
    const kobj **deletes; /* Jobs to delete: another spec hash, a deadline, a re-verify */
    size_t n_deletes;
    kobj_imagepulljob status; /* the status as it should be (arena strings) */
    int write_status;     /* it differs from the cached one */
    const char *completed_generation; /* set the annotation to this, or NULL */
    int drop_finalizer;   /* D9 */
    int delete_cr;        /* D7 TTL */
} ipj_plan;

/* One pass's decisions for in->ipj into *out (arena memory, valid while a
 * and the inputs are).  0, or -1 when memory runs out. */
int ipj_decide(const ipj_input *in, arena *a, ipj_plan *out);

/* D1: the pull_job_spec of node's Job (named job_name) under plan: the
 * spec's image, pull secrets and pull policy; owned by the CR as its
 * controller; the spec-hash annotation; backoffLimit 0 and a deadline of
 * timeoutSeconds x (backoffLimit + 1) + IPJ_JOB_DEADLINE_SLACK_S.
 * Strings in a or borrowed from the arguments.  0, or -1 when memory runs
 * out. */
int ipj_job_spec(pull_job_spec *out, const kobj *ipj, const ipj_spec *s, const ipj_plan *plan,
                 const char *node, const char *job_name, const char *helper_image, arena *a);

/* ---- bodies: JSON in malloc memory (caller frees), or NULL when out of memory */

/* D6: {"status":{...}}; a field the cached status has and the new one
 * lacks (completionTime, failedNodes) is sent as null. */
char *ipj_status_patch(const kobj_imagepulljob *want, const kobj_imagepulljob *cached);
/* D4: the given-up annotations (the kubelet's reason and message) and,
 * when end, activeDeadlineSeconds 1 (the Job ended now); without end the
 * words alone, kept on a Job its own deadline ended. */
char *ipj_give_up_patch(const char *reason, const char *message, int end);
/* D7/D9: resourceVersion, the completed-generation annotation (when
 * generation is not NULL) and the finalizers but Kruise's (when
 * drop_finalizer). */
char *ipj_meta_patch(const kobj *ipj, const char *generation, int drop_finalizer);
/* D7: DeleteOptions, Background, preconditions.uid. */
char *ipj_delete_options(const char *uid);

#endif

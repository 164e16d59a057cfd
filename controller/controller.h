/*
 * controller.h - ota-controller's moving parts on one loop: the informers
 * that fill the caches, leader election, reconcile passes, and the executor
 * that turns a pass's actions into API calls (skipping what is already in
 * flight or was just done, so a lagging cache never causes a second write).
 */
#ifndef OTA_CONTROLLER_H
#define OTA_CONTROLLER_H

#include <stdint.h>

#include "informer.h"
#include "kobj.h"
#include "kube_client.h"
#include "leader.h"
#include "metrics.h"
#include "pullmethod.h"
#include "reconcile.h"
#include "store.h"
#include "workset.h"

typedef struct controller_config {
    reconcile_config reconcile;
    int leader_elect;
    leader_config leader;
    uint64_t resync_ns; /* a full pass at least this often */
    /* --imagepulljobs: read and serve ImagePullJobs; off, their informer
     * never starts (and counts as synced, with nothing in it) */
    int imagepulljobs;
    /* --imagecaches: the same for kube-fledged's ImageCaches */
    int imagecaches;
    /* Writes the executor keeps queued or in flight at most (the bound on
     * a pass's writes, reconcile_input.max_writes); 0: no bound.  main
     * sets controller_write_cap(). */
    size_t max_queued_writes;
} controller_config;

enum {
    INF_DAEMONSETS,
    INF_REVISIONS,
    INF_PODS,
    INF_JOBS,
    INF_JOB_PODS,
    INF_NODES,
    INF_IMAGEPULLJOBS, /* optional: no CRD, no ImagePullJobs */
    INF_IMAGECACHES,   /* optional: kube-fledged's CRD or ours (--imagecaches) */
    INF_COUNT
};

/* Pulls by outcome, for /metrics. */
typedef enum pull_outcome {
    PULL_STARTED,
    PULL_SUCCEEDED,
    PULL_FAILED,
    PULL_N_OUTCOMES
} pull_outcome;

/* How long an action's key is held back after its call: the same action
 * of the passes in between is skipped. */
#define RECENT_OK_NS (3ull * 1000000000ull)     /* a write just done: the cache lags */
#define RECENT_FAILED_NS (5ull * 1000000000ull) /* a write that failed: try again later */

/* How an action's call ended. */
typedef enum exec_outcome {
    EXEC_DONE,        /* 2xx */
    EXEC_MADE_BEFORE, /* 409 on create-job: made before a restart (names are deterministic) */
    EXEC_GONE,        /* 404 on delete-job (gone already), or on a status patch (pod deleted) */
    EXEC_CONFLICT,    /* 409 on a status patch: the pod moved on since the cached version the
                         patch was decided from (its precondition); decided again once the
                         cache shows the newer pod */
    EXEC_FAILED,      /* anything else: held back RECENT_FAILED_NS, then tried again */
} exec_outcome;

typedef struct controller {
    controller_config cfg;
    kube_client *client;
    informer informers[INF_COUNT];
    callerr_state trouble; /* a 401 or TLS error, said once for informers and writes */
    leader election;
    int leading;
    store nodes;      /* node name -> kobj_node, fetched on demand */
    store job_waiting;  /* see reconcile_input.job_waiting */
    pullmethod_memory pull_memory; /* see reconcile_input.pull_memory */
    store ipj_pod_nodes; /* see reconcile_input.ipj_pod_nodes */
    int ic_status_served; /* see reconcile_input.ic_status_served */
    int ic_rediscover;    /* see reconcile_input.ic_rediscover: set every resync */
    workset work;       /* action keys in flight, held back after their call, Events sent */
    int dirty;
    size_t writes_queued; /* writes handed to the client and not ended */
    int held_back;      /* the last pass held writes back (action_list.more) */
    int drop_queued;    /* leadership lost: drop the queued writes */
    size_t dropped;     /* writes dropped since last said (one log line) */
    uint64_t last_pass;
    uint64_t wake_at;   /* a pass due then whatever the resync (controller_wake_at); 0: none */
    size_t queue_depth;
    metrics_counter pulls[PULL_N_OUTCOMES];
    metrics_histogram pass_latency;
    metrics_histogram prepull_duration[2]; /* succeeded, failed; metrics_long_bounds */
    metrics_histogram queue_wait;          /* request to Job created; metrics_long_bounds */
} controller;

int controller_init(controller *c, kube_client *client, const controller_config *cfg);
/* One turn of the loop's work (not the waiting): informers, election, a
 * pass if due. */
void controller_tick(controller *c, uint64_t now);
/* All informers listed once. */
int controller_synced(const controller *c);
void controller_render_metrics(controller *c, strbuf *t);
/* At shutdown, before the client is freed: what ends then is no news. */
void controller_stop(controller *c);
void controller_free(controller *c);

/* ---- the executor's decisions (pure: no I/O, no clock of their own) ---- */

/* When a pass must run whatever the resync: after_s seconds (the last
 * pass's action_list.wake_after_s: an ImageCache's periodic refresh or
 * cache deadline) after that pass began at now (monotonic ns); 0 for none
 * (after_s 0 or less).  Never early: the plans count from a wall clock
 * truncated to the second, at or before now. */
uint64_t controller_wake_at(uint64_t now, long long after_s);

/* The least bound on writes queued (controller_write_cap), so that a
 * pass still hands over a batch at a low QPS. */
#define CONTROLLER_MIN_WRITE_CAP 8

/* Writes queued or in flight at most: about two seconds of the rate
 * limit's budget (2 x qps), at least the burst (which may go out at once)
 * and CONTROLLER_MIN_WRITE_CAP. */
size_t controller_write_cap(double qps, int burst);

/* The bound on the writes of a pass about to run (reconcile_input's
 * max_writes) with queued writes not ended yet; 0 when cap is 0 (no
 * bound).  Asked only when controller_pass_may_run said yes, so the room
 * left is never 0 under a cap. */
size_t controller_write_room(size_t cap, size_t queued);

/* Whether a pass may run now as far as the queue of writes goes: not
 * while it is full; after a pass that held writes back, not before it
 * has drained to half the cap (so a pass hands over a batch, not one write
 * per call that ends, and a rollout's pass over every pod runs about
 * 2 x qps / cap times a second, not every 100 ms).  Always with cap 0. */
int controller_pass_may_run(size_t cap, size_t queued, int held_back);

/* Which pull counter an action done (2xx) adds to: a created Job starts a
 * pull, a status patch reporting its outcome ends one.  PULL_N_OUTCOMES
 * when it counts for none. */
pull_outcome controller_pull_outcome(action_kind kind, action_outcome outcome);

/* Whether the key of an Event sent (events_sent) may still be asked for:
 * reconcile sends Events only about a pod's current request, so a key of a
 * pod that is gone from pods (keyed by uid), or of a request the pod no
 * longer carries (another PodImageReady lastTransitionTime), can never come
 * back and is forgotten.  Keys of another shape are kept. */
int controller_event_key_live(const char *key, const store *pods);

/* The same for the key of a revision's Event on its DaemonSet: forgotten
 * once the DaemonSet (by uid) is gone or no cached ControllerRevision has
 * the hash any more (the DaemonSet controller keeps revisionHistoryLimit
 * of them).  Keys of another shape are kept. */
int controller_revision_event_key_live(const char *key, const store *daemonsets,
                                       const store *revisions);

/* The same for the key of the Warning Event about a DaemonSet's bad
 * timeout annotation: forgotten once the DaemonSet is gone or its
 * annotation no longer has that bad value.  Keys of another shape are
 * kept. */
int controller_timeout_event_key_live(const char *key, const store *daemonsets);

/* The same for the key of an Event on an ImagePullJob
 * (RECONCILE_IPJ_EVENT_KEY): forgotten once the ImagePullJob (by uid) is
 * gone.  Keys of another shape are kept. */
int controller_ipj_event_key_live(const char *key, const store *imagepulljobs);
/* The same for an ImageCache's Event keys (RECONCILE_IC_EVENT_KEY). */
int controller_ic_event_key_live(const char *key, const store *imagecaches);

/* The outcome of an action's call from its HTTP status (0: no answer). */
exec_outcome controller_exec_outcome(action_kind kind, long status);
/* How long the action's key is then held back (RECENT_OK_NS or
 * RECENT_FAILED_NS).  A conflict holds back only that pod version's write
 * (its key names the resourceVersion): the newer pod, once the watch
 * brings it, is decided at once; while the watch lags, the stale decision
 * is tried again no more often than a failure. */
uint64_t controller_hold_ns(exec_outcome outcome);

/* How the log names an action's object: the key ("pod", "job", "node",
 * "event_namespace") and "namespace/name" into buf (a cluster-scoped
 * object's name alone; an Event's namespace, its name being the
 * apiserver's to choose), as the README promises: pod=ns/name. */
const char *controller_object_key(action_kind kind);
const char *controller_object_ref(action_kind kind, const char *ns, const char *name, char *buf,
                                  size_t size);

/* Only the leader writes: whether an action may go out now.  Asked when a
 * pass hands it over and again before each attempt of its call (its turn
 * in the rate limit, a retry), so a write still waiting when the lease is
 * lost never goes out.  Reading a node is no write. */
int controller_may_send(action_kind kind, int leading);

/* The API call of an action: its path with any query into path, and the
 * method, content type and whether a repeat is harmless into call (from a
 * table by action kind).  0, or -1 when the action's namespace and name
 * make no path (path then holds nothing usable). */
int controller_action_call(const action *a, strbuf *path, kube_call *call);

#endif

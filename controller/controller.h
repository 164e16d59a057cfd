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
#include "kube_client.h"
#include "leader.h"
#include "metrics.h"
#include "reconcile.h"
#include "store.h"
#include "strset.h"

typedef struct controller_config {
    reconcile_config reconcile;
    int leader_elect;
    leader_config leader;
    uint64_t resync_ns; /* a full pass at least this often */
} controller_config;

enum { INF_DAEMONSETS, INF_REVISIONS, INF_PODS, INF_JOBS, INF_JOB_PODS, INF_COUNT };

/* Pulls by outcome, for /metrics. */
typedef enum pull_outcome { PULL_STARTED, PULL_SUCCEEDED, PULL_FAILED, PULL_N_OUTCOMES } pull_outcome;

typedef struct recent_key {
    char *key;
    uint64_t until;
} recent_key;

typedef struct controller {
    controller_config cfg;
    kube_client *client;
    informer informers[INF_COUNT];
    leader election;
    int leading;
    store nodes;      /* node name -> kobj_node, fetched on demand */
    strset events_sent; /* keys of Events created (each is sent once) */
    store job_waiting;  /* see reconcile_input.job_waiting */
    strset in_flight;   /* action keys being executed */
    strset recent;      /* action keys done lately (see recent_keys) */
    recent_key *recent_keys;
    size_t n_recent, cap_recent;
    int dirty;
    uint64_t last_pass;
    size_t queue_depth;
    metrics_counter pulls[PULL_N_OUTCOMES];
    metrics_histogram pass_latency;
} controller;

int controller_init(controller *c, kube_client *client, const controller_config *cfg);
/* One turn of the loop's work (not the waiting): informers, election, a
 * pass if due. */
void controller_tick(controller *c, uint64_t now);
/* All informers listed once. */
int controller_synced(const controller *c);
void controller_render_metrics(controller *c, metrics_text *t);
void controller_free(controller *c);

/* ---- the executor's decisions (pure: no I/O, no clock of their own) ---- */

/* Which pull counter an action done (2xx) adds to: a created Job starts a
 * pull, a status patch reporting its outcome ends one.  PULL_N_OUTCOMES
 * when it counts for none. */
pull_outcome controller_pull_outcome(action_kind kind, action_outcome outcome);

#endif

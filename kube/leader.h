/*
 * leader.h - leader election on a coordination.k8s.io/v1 Lease, with
 * client-go's rules and timings (15 s lease, 10 s renew deadline, 2 s retry).
 *
 * Only the leader writes.  A candidate takes the Lease when it is free or
 * when its holder has not renewed it for a lease duration *as observed
 * locally* (no trust in other machines' clocks, as in client-go).  The
 * leader renews every retry period; if it cannot renew within the renew
 * deadline it stops being leader at once, before another candidate can
 * take over.  Conflicts (409) mean someone else wrote first.
 */
#ifndef OTA_LEADER_H
#define OTA_LEADER_H

#include <stdint.h>

#include "kube_client.h"

typedef struct leader_config {
    const char *namespace, *name, *identity;
    uint64_t lease_ns, renew_deadline_ns, retry_ns;
} leader_config;

typedef struct leader {
    kube_client *client;
    leader_config cfg;
    int is_leader;
    int busy;              /* a request of ours is in flight */
    int releasing, released;
    uint64_t next_try;     /* when to try (or renew) again */
    uint64_t last_renew;   /* our last successful write, monotonic */
    /* the last Lease we saw, and when its record last changed (locally) */
    char holder[256];
    char record[512];      /* holder + renewTime + duration, to spot changes */
    uint64_t observed_at;
    char resource_version[64];
    char acquire_time[40];
    long long transitions;
    int exists;
    void (*on_change)(void *data, int is_leader);
    void *data;
} leader;

void leader_init(leader *l, kube_client *client, const leader_config *cfg,
                 void (*on_change)(void *data, int is_leader), void *data);
/* Drives the election; call often (every loop turn). */
void leader_tick(leader *l, uint64_t now);
/* Gives the Lease up (holder "", duration 1 s) so a successor need not wait
 * out the lease; leader_released() turns true when done or hopeless. */
void leader_release(leader *l);
int leader_released(const leader *l);

#endif

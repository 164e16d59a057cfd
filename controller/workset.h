/*
 * workset.h - the executor's bookkeeping of action keys, as client-go's
 * workqueue keeps its items: a key in flight is not started twice; a key
 * whose call ended is held back until a time (the cache lags behind a
 * write just done; a write that failed is tried again later); a key done
 * for good (an Event: each is sent once) is not started again until it is
 * forgotten.
 *
 * Reconcile passes read the three sets (reconcile_input's skip sets and
 * events_sent), so that they build no body for a key the executor would
 * skip; only these functions change them.  Pure: no I/O, and no clock of
 * its own (times are the caller's monotonic nanoseconds).
 */
#ifndef OTA_WORKSET_H
#define OTA_WORKSET_H

#include <stddef.h>
#include <stdint.h>

#include "strset.h"

typedef struct workset_hold {
    char *key;
    uint64_t until;
} workset_hold;

typedef struct workset {
    /* read-only outside workset.c */
    strset in_flight; /* keys being executed */
    strset held;      /* keys held back until their time (holds) */
    strset settled;   /* keys done for good */
    workset_hold *holds;
    size_t n_holds, cap_holds;
} workset;

void workset_init(workset *w);
/* Frees every key; w is empty and ready for use again. */
void workset_free(workset *w);

/* Whether key may be started now: not in flight, held or settled. */
int workset_may_add(const workset *w, const char *key);
/* key is in flight.  0, or -1 when out of memory (then it is not). */
int workset_add(workset *w, const char *key);
/* key's call ended, however: it is no longer in flight. */
void workset_done(workset *w, const char *key);
/* key is held back until `until` (a key held already keeps its time).
 * Out of memory: it is not held, and the next pass may start it again. */
void workset_hold_until(workset *w, const char *key, uint64_t until);
/* key is done for good: not started again until workset_forget drops it.
 * 0, or -1 when out of memory. */
int workset_settle(workset *w, const char *key);

/* Lets go of the keys held until now or before (until <= now).  Returns 1
 * when any fell due: what was held back (a write that failed, or one the
 * cache did not show yet) must be looked at again by a pass, even if
 * nothing else changes. */
int workset_expire(workset *w, uint64_t now);
/* Forgets the settled keys for which keep(key, data) is 0 (their object
 * is gone, so they can never be asked for again); returns how many. */
size_t workset_forget(workset *w, int (*keep)(const char *key, void *data), void *data);

#endif

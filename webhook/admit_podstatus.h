/*
  * admit_podstatus.h - the mutations of a pods/status UPDATE (docs/design.md §4):
 * stamping a pre-pull request, and restoring OTA conditions that a
 * non-controller write dropped or altered.
 *
 * And AutoPrePull: kept as stored, except that a node user's pull request
 * on a pod whose stored AutoPrePull is True turns it False, reason
 * NodeUserRequest, for the revision asked (ota_state_auto_prepull_taken):
 * the request is the node user's now, and the controller serves it first.
 *
 * Why restore: YurtHub's merge patch replaces the whole conditions array,
 * built from its cache, so it can drop PodNeedUpgrade or carry an old copy
 * of it when it races the controller.  The kubelet never does this: it keeps
 * conditions it does not own when it writes status.
 */
#ifndef OTA_ADMIT_PODSTATUS_H
#define OTA_ADMIT_PODSTATUS_H

#include "arena.h"
#include "jpatch.h"
#include "ota_state.h"
#include "review.h"

/* What a mutation did; a bit set. */
enum {
    ADMIT_MUT_STAMP_REASON = 1 << 0,   /* reason WaitPullImage (and the request's time) */
    ADMIT_MUT_FILL_MESSAGE = 1 << 1,   /* message copied from PodNeedUpgrade */
    ADMIT_MUT_RESTORE_NEED_UPGRADE = 1 << 2,
    ADMIT_MUT_RESTORE_IMAGE_READY = 1 << 3,
    ADMIT_MUT_KEEP_REQUEST_TIME = 1 << 4,  /* a repeated request keeps the stored time (its Job) */
    ADMIT_MUT_REQUEST_TIME_AFTER = 1 << 5, /* a new request's time set after the stored one */
    ADMIT_MUT_RESTORE_AUTO_PREPULL = 1 << 6, /* AutoPrePull kept as stored */
    ADMIT_MUT_AUTO_PREPULL_TAKEN = 1 << 7,   /* AutoPrePull False/NodeUserRequest: a node
                                              * user's request on an auto-marked pod */
};

/*
 * Appends to p the operations for a pods/status UPDATE of rv by who, at
 * time now (RFC 3339, UTC).  Returns the ADMIT_MUT_* bits of what it did
 * (0: no change).  The patch is built against rv->object.
 */
unsigned admit_podstatus_mutate(const review *rv, const ota_requester *who, const char *now,
                              jpatch *p, arena *a);

/*
 * The admission warnings for what admit_podstatus_mutate() did (its bits in
 * did): one per condition it restored, naming it and why it was kept, so
 * that `kubectl` shows more than "patched (no change)".  pod_ref is
 * "namespace/name".  Stores at most max warnings (arena memory) in out and
 * returns how many.
 */
size_t admit_podstatus_warnings(const review *rv, unsigned did, const char *pod_ref, arena *a,
                                const char **out, size_t max);

#endif

/*
 * admit_daemonset.h - the DaemonSet half of the webhook (docs/design.md §2, §4):
 * denying invalid OTA annotations, and the OnDelete fix-up for OTA
 * DaemonSets, which OpenYurt would otherwise silently ignore.  What the
 * annotations mean is the rulebook's (lib/ota_daemonset.h).
 */
#ifndef OTA_ADMIT_DAEMONSET_H
#define OTA_ADMIT_DAEMONSET_H

#include "arena.h"
#include "jpatch.h"
#include "ota_state.h"
#include "review.h"

/* Validates the annotations and that an OTA DaemonSet is OnDelete.
 * ds_ref is "namespace/name" for messages (arena memory). */
ota_verdict admit_daemonset_check(const review_object *ds, const char *ds_ref, arena *a);

/*
 * Appends to p the operations that make an OTA DaemonSet OnDelete, and sets
 * *warning (arena memory) to the text that tells the user so.  Returns 1 if
 * it added any, 0 if the DaemonSet needs none.
 */
int admit_daemonset_mutate(const review_object *ds, const char *ds_ref, jpatch *p, arena *a,
                         const char **warning);

#endif

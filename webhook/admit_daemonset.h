/*
 * admit_daemonset.h - the DaemonSet half of the webhook's mutations
 * (docs/design.md §2, §4): the OnDelete fix-up for OTA DaemonSets, which
 * OpenYurt would otherwise silently ignore.  The verdict on a DaemonSet and
 * what its annotations mean are the rulebook's (lib/ota_daemonset.h).
 */
#ifndef OTA_ADMIT_DAEMONSET_H
#define OTA_ADMIT_DAEMONSET_H

#include "arena.h"
#include "jpatch.h"
#include "review.h"

/*
 * Appends to p the operations that make an OTA DaemonSet OnDelete, and sets
 * *warning (arena memory) to the text that tells the user so.  Returns 1 if
 * it added any, 0 if the DaemonSet needs none.
 */
int admit_daemonset_mutate(const review_object *ds, const char *ds_ref, jpatch *p, arena *a,
                         const char **warning);

#endif

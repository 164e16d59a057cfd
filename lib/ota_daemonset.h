/*
 * ota_daemonset.h - the OTA rules about a DaemonSet's annotations
 * (docs/design.md §2): which update strategy it asks for, and its pre-pull
 * deadline.
 *
 * Part of the OTA rulebook: the webhook validates DaemonSets with these
 * (webhook/admit_daemonset.c) and the controller's cache reads them with the
 * same functions (lib/kobj.c), so an annotation means one thing everywhere.
 */
#ifndef OTA_DAEMONSET_H
#define OTA_DAEMONSET_H

#include "sv.h"

typedef enum ota_update_strategy {
    OTA_UPDATE_UNSET,    /* no annotation */
    OTA_UPDATE_OTA,      /* "OTA", in any case: ours */
    OTA_UPDATE_ADVANCED, /* "AdvancedRollingUpdate", in any case: valid, not ours */
    OTA_UPDATE_UNKNOWN,  /* anything else: the webhook rejects it */
} ota_update_strategy;

/* What apps.openyurt.io/update-strategy says (absent: OTA_UPDATE_UNSET). */
ota_update_strategy ota_daemonset_strategy(sv annotation);

/*
 * Reads apps.openyurt.io/image-prepull-timeout-seconds: a plain decimal
 * within OTA_PREPULL_TIMEOUT_MIN..MAX, with no sign, space, unit or leading
 * zero.  Returns 0 with the value in *seconds, or -1 (absent or invalid;
 * *seconds untouched).
 */
int ota_daemonset_timeout(sv annotation, long *seconds);

#endif

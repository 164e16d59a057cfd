/*
 * ota_daemonset.h - the OTA rules about a DaemonSet (docs/design.md §2):
 * which update strategy its annotation asks for, its pre-pull deadline, and
 * the verdict on a DaemonSet written with them.
 *
 * Part of the OTA rulebook: the webhook validates DaemonSets with
 * ota_daemonset_check (webhook/admit.c) and the controller's cache reads the
 * annotations with the same functions (lib/kobj.c), so an annotation means
 * one thing everywhere.
 */
#ifndef OTA_DAEMONSET_H
#define OTA_DAEMONSET_H

#include "arena.h"
#include "ota_rule.h"
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

/* What the DaemonSet rules read of a DaemonSet: string views the webhook's
 * review decoder fills (webhook/review.h). */
typedef struct ota_daemonset {
    sv update_strategy;       /* annotation OTA_ANN_UPDATE_STRATEGY; absent when not annotated */
    sv prepull_timeout;       /* annotation OTA_ANN_PREPULL_TIMEOUT; absent likewise */
    int has_update_strategy;  /* spec.updateStrategy is an object */
    sv update_strategy_type;  /* spec.updateStrategy.type */
} ota_daemonset;

/* True when spec.updateStrategy.type is OnDelete (case matters, as to
 * Kubernetes). */
int ota_daemonset_on_delete(const ota_daemonset *ds);

/*
 * The verdict on a DaemonSet as written: its update-strategy annotation is
 * one we know, an OTA DaemonSet is OnDelete (OpenYurt ignores it
 * otherwise), and its pre-pull timeout is valid.  ds_ref is
 * "namespace/name" for messages, which come from a and end with the rule
 * (ota_rule_deny).
 */
ota_verdict ota_daemonset_check(const ota_daemonset *ds, const char *ds_ref, arena *a);

#endif

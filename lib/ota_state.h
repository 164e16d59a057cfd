/*
 * ota_state.h - the OTA pre-pull state machine (DESIGN.md §3): what state a
 * pod is in, and who may move it where.
 *
 * This is where "a node may only ask for a pull of its own pods" lives, with
 * every other rule about PodNeedUpgrade and PodImageReady.  Pure functions of
 * the decoded review; the webhook only turns the verdict into HTTP.
 */
#ifndef OTA_STATE_H
#define OTA_STATE_H

#include "arena.h"
#include "review.h"
#include "sv.h"

typedef enum ota_state {
    OTA_STATE_CURRENT,
    OTA_STATE_PENDING_UPGRADE,
    OTA_STATE_PULLING,
    OTA_STATE_READY,
    OTA_STATE_FAILED,
} ota_state;

/* Who is asking, as far as the rules care. */
typedef enum ota_requester_kind {
    OTA_REQ_MASTER,     /* in system:masters: may do anything */
    OTA_REQ_CONTROLLER, /* username == --controller-username */
    OTA_REQ_NODE_USER,  /* anyone else RBAC let write pods/status */
} ota_requester_kind;

typedef struct ota_requester {
    ota_requester_kind kind;
    sv username;
} ota_requester;

typedef struct ota_verdict {
    int allowed;
    const char *rule;    /* on denial: a stable name, also a metrics label */
    const char *message; /* on denial: names the pod, the rule and the state (arena) */
} ota_verdict;

/* Classifies from the pod's PodNeedUpgrade and PodImageReady conditions. */
ota_state ota_state_of_pod(const review_object *pod);

/* "Current", "PendingUpgrade", ... as in DESIGN.md §3. */
const char *ota_state_name(ota_state s);

/* Masters first, then the controller, then everyone else. */
ota_requester ota_requester_of(const review *rv, const char *controller_username);

/* True when status, reason or message of either OTA condition differ, or
 * one appeared or disappeared.  Timestamps alone are no change. */
int ota_state_conditions_changed(const review_object *old_pod, const review_object *new_pod);

/* True when the two conditions are the same by that definition. */
int ota_state_cond_same(const review_cond *a, const review_cond *b);

/* A write of PodImageReady=False that asks for a pull: reason WaitPullImage
 * or empty. */
int ota_state_is_pull_request(const review_cond *image_ready);

/*
 * Decides a pods/status UPDATE from oldObject to object by the requester.
 * pod_ref is "namespace/name" for messages.  Messages come from a.
 */
ota_verdict ota_state_check_update(const review_object *old_pod, const review_object *new_pod,
                                   const ota_requester *who, const char *pod_ref, arena *a);

#endif

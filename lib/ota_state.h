/*
 * ota_state.h - the OTA pre-pull state machine (docs/design.md §3): what state a
 * pod is in, and who may move it where.
 *
 * This is where "a node may only ask for a pull of its own pods" lives, with
 * every other rule about PodNeedUpgrade and PodImageReady.  The rules read a
 * pod through ota_pod, a few string views that both the webhook's review
 * decoder (webhook/review.h) and the controller's cache (lib/kobj.h) fill,
 * so the webhook and the controller ask the same rulebook.  Pure functions;
 * the webhook only turns a verdict into HTTP.
 */
#ifndef OTA_STATE_H
#define OTA_STATE_H

#include "arena.h"
#include "ota_rule.h"
#include "sv.h"

/* One OTA condition as the rules read it (type and timestamps aside). */
typedef struct ota_cond {
    int present;
    sv status, reason, message;
} ota_cond;

/* One entry of status.conditions of an OTA type. */
typedef struct ota_entry {
    int need_upgrade; /* PodNeedUpgrade, else PodImageReady ... */
    ota_cond cond;
    int auto_prepull; /* ... or AutoPrePull (then need_upgrade is 0) */
} ota_entry;

/* What the rules read of a pod: its node and the first condition of each
 * OTA type (the first wins, as in the apiserver's own lookups).
 *
 * A reader that sees every entry (the webhook) also counts the entries of
 * each OTA type and lists them in order, up to a bound, for the duplicate
 * rule; a reader that keeps only the first (the controller's cache) leaves
 * the counts at 0 and the list empty. */
typedef struct ota_pod {
    sv node_name; /* spec.nodeName */
    ota_cond need_upgrade, image_ready;
    /* AutoPrePull (OTA_COND_AUTO_PREPULL): the controller's word that the
     * pod's DaemonSet opted in to automatic pre-pull for the revision its
     * message names (docs/DECISIONS.md "How the webhook knows a DaemonSet
     * opted in").  It decides no state; it decides who may start a pull. */
    ota_cond auto_prepull;
    size_t n_need_upgrade, n_image_ready; /* entries of each type, 0: not counted */
    size_t n_auto_prepull;
    const ota_entry *entries;             /* every OTA entry in order ... */
    size_t n_entries;                     /* ... as far as the reader kept them */
    int entries_cut;                      /* there were more than n_entries */
    /* A reader that reads metadata.ownerReferences (the webhook) sets
     * owners_read, and daemonset_owned when one of them is the controller
     * reference of a DaemonSet; a reader that does not (the controller's
     * cache, which asks its own caches instead) leaves both 0, and the
     * rule that needs them is not applied. */
    int owners_read;
    int daemonset_owned;
} ota_pod;

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
    OTA_REQ_CO_WRITER,  /* in --co-writer-usernames: another controller of
                         * PodNeedUpgrade (yurt-manager's daemonpodupdater) */
    OTA_REQ_NODE_USER,  /* anyone else RBAC let write pods/status */
} ota_requester_kind;

typedef struct ota_requester {
    ota_requester_kind kind;
    sv username;
} ota_requester;

/* Classifies from the pod's PodNeedUpgrade and PodImageReady conditions. */
ota_state ota_state_of_pod(const ota_pod *pod);

/* "Current", "PendingUpgrade", ... as in docs/design.md §3. */
const char *ota_state_name(ota_state s);

/* Masters first (is_master: system:masters is among the groups), then the
 * controller, then the co-writers (co_writers: usernames separated by
 * commas, each compared whole; NULL or "": none), then everyone else. */
ota_requester ota_requester_of(sv username, int is_master, const char *controller_username,
                               const char *co_writers);

/* True when username is one of the comma-separated names in list (NULL: none). */
int ota_state_name_listed(sv username, const char *list);

/* True when status, reason or message of an OTA condition (PodNeedUpgrade,
 * PodImageReady, AutoPrePull) differ, or one appeared or disappeared.
 * Timestamps alone are no change. */
int ota_state_conditions_changed(const ota_pod *old_pod, const ota_pod *new_pod);

/* True when the two conditions are the same by that definition. */
int ota_state_cond_same(const ota_cond *a, const ota_cond *b);

/* True when both lists of OTA entries are complete and equal by that
 * definition, entry by entry. */
int ota_state_entries_same(const ota_pod *a, const ota_pod *b);

/* A write of PodImageReady=False that asks for a pull: reason WaitPullImage
 * or empty. */
int ota_state_is_pull_request(const ota_cond *image_ready);

/* True when a node user's PodImageReady False carries a result's reason
 * (PullImageSuccess or PullImageFail) only because the stored condition had
 * it: a strategic merge patch that names status and message but not reason
 * keeps the stored reason.  The denial then says to write "reason":"". */
int ota_state_reason_is_stale(const ota_cond *stored, const ota_cond *asked);

/* AutoPrePull lets the controller start a pull of revision message
 * ("controllerrevision: H"): it is True and names that same revision. */
int ota_state_auto_prepull_allows(const ota_cond *auto_prepull, sv message);

/* The AutoPrePull a node user's pull request leaves behind, when the stored
 * one (stored) is True: False, reason NodeUserRequest, the request's
 * message (the revision asked for).  Returns 0 and leaves *out alone when
 * the stored one is not True (nothing to take over). */
int ota_state_auto_prepull_taken(const ota_cond *stored, sv request_message, ota_cond *out);

/* Which rule ota_state_request_time applied. */
typedef enum ota_request_time_rule {
    OTA_RT_AS_ASKED, /* the request's own time (kubectl's complete request) */
    OTA_RT_NOW,      /* now: the request came without a reason or without a time */
    OTA_RT_KEPT,     /* the stored time: a repeat of the pull already asked for */
    OTA_RT_BUMPED,   /* one second after the stored condition's time */
} ota_request_time_rule;

/*
 * The lastTransitionTime a pull request is stored with.  asked is the
 * written PodImageReady (a pull request) and asked_time its time, was and
 * was_time the stored one (was->present 0: none), now RFC 3339 UTC with
 * seconds; asked's message is the one it will be stored with (the webhook
 * fills an empty one from PodNeedUpgrade).  The controller names a
 * request's Job after this time, hence:
 *  - a repeat of the pull already asked for (the stored condition is a
 *    request with a time, and this one names the same revision)
 *    keeps the stored time: the running Job goes on (YurtHub repeats a
 *    request with no reason, which would otherwise be stamped anew);
 *  - any other request gets a time strictly after the stored condition's:
 *    metav1.Time has whole seconds, and a retry in the second the result
 *    was written (the controller writes a result no earlier than its
 *    request) would otherwise name the finished Job again.
 * Writes the time, NUL-terminated, into out (size >= 32) and returns the
 * rule.  Times are read by clock_parse_rfc3339 (offsets too, as the
 * apiserver reads them); one that does not parse counts as absent, and a
 * kept or asked time too long for out is written in our spelling.
 */
ota_request_time_rule ota_state_request_time(const ota_cond *was, sv was_time,
                                             const ota_cond *asked, sv asked_time,
                                             const char *now, char *out, size_t size);

/*
 * AutoPrePull is the controller's (and masters'): anyone else who adds,
 * changes or removes it is denied (auto-prepull-owned-by-controller), but
 * for one change: a node user's pull request may turn a stored True into
 * ota_state_auto_prepull_taken()'s value (the mutating webhook writes it).
 * The controller may move a pod into Pulling only when the stored
 * AutoPrePull allows that revision (auto-prepull-needs-opt-in; no
 * AutoPrePull at all: pull-requested-by-node-users, as before).
 *
 * A co-writer (OTA_REQ_CO_WRITER) may write PodNeedUpgrade only as it is
 * stored: the status and message the controller wrote (the revision it
 * names), timestamps aside; it may not change PodImageReady at all
 * (docs/DECISIONS.md "Co-writers of PodNeedUpgrade").
 *
 * Decides a pods/status UPDATE from old_pod (as stored) to new_pod by the
 * requester.  pod_ref is "namespace/name" for messages.  A denial's
 * message ends with its rule and the stored pod's state (ota_rule_deny).
 * Messages come from a.
 */
ota_verdict ota_state_check_update(const ota_pod *old_pod, const ota_pod *new_pod,
                                   const ota_requester *who, const char *pod_ref, arena *a);

#endif

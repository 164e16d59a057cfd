/*
 * ota_state.c - see ota_state.h.  The transition rules are docs/design.md §3 with
 * the choices of docs/DECISIONS.md ("Who may do what").
 */
#include "ota_state.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ota_names.h"

/* A value from the request, quoted and escaped for a message (arena.h). */
#define QUOTE(v) arena_quote(a, (v).ptr, (v).len)

int ota_state_cond_same(const ota_cond *a, const ota_cond *b)
{
    if (a->present != b->present)
        return 0;
    return !a->present || (sv_same(a->status, b->status) && sv_same(a->reason, b->reason) &&
                           sv_same(a->message, b->message));
}

int ota_state_conditions_changed(const ota_pod *old_pod, const ota_pod *new_pod)
{
    return !ota_state_cond_same(&old_pod->need_upgrade, &new_pod->need_upgrade) ||
           !ota_state_cond_same(&old_pod->image_ready, &new_pod->image_ready) ||
           !ota_state_cond_same(&old_pod->auto_prepull, &new_pod->auto_prepull);
}

int ota_state_entries_same(const ota_pod *a, const ota_pod *b)
{
    if (a->entries_cut || b->entries_cut || a->n_entries != b->n_entries)
        return 0;
    for (size_t i = 0; i < a->n_entries; i++)
        if (a->entries[i].need_upgrade != b->entries[i].need_upgrade ||
            a->entries[i].auto_prepull != b->entries[i].auto_prepull ||
            !ota_state_cond_same(&a->entries[i].cond, &b->entries[i].cond))
            return 0;
    return 1;
}

int ota_state_is_pull_request(const ota_cond *ir)
{
    return ir->present && sv_eq(ir->status, "False") &&
           (sv_empty(ir->reason) || sv_eq(ir->reason, OTA_REASON_WAIT_PULL));
}

int ota_state_auto_prepull_allows(const ota_cond *ap, sv message)
{
    return ap->present && sv_eq(ap->status, "True") &&
           sv_starts_with(ap->message, OTA_MSG_REVISION_PREFIX) && sv_same(ap->message, message);
}

int ota_state_auto_prepull_taken(const ota_cond *stored, sv request_message, ota_cond *out)
{
    if (!stored->present || !sv_eq(stored->status, "True"))
        return 0;
    *out = (ota_cond){1, sv_from("False"), sv_from(OTA_REASON_AUTO_NODE_USER), request_message};
    return 1;
}

static void format_utc(long long secs, char *out, size_t size)
{
    if (clock_format_rfc3339(secs, out, size) != 0)
        snprintf(out, size, "%s", "1970-01-01T00:00:00Z");
}

/* A time as it came, or in our spelling when it would not fit out (a long
 * fraction): cut short, it would no longer be a time. */
static void copy_time(sv text, long long secs, char *out, size_t size)
{
    if (text.len < size)
        snprintf(out, size, "%.*s", (int)text.len, text.ptr);
    else
        format_utc(secs, out, size);
}

ota_request_time_rule ota_state_request_time(const ota_cond *was, sv was_time,
                                             const ota_cond *asked, sv asked_time,
                                             const char *now, char *out, size_t size)
{
    long long stored = 0, own = 0, t = 0;
    int has_stored = was->present && clock_parse_rfc3339(was_time, &stored) == 0;
    if (ota_state_is_pull_request(was) && has_stored && sv_same(asked->message, was->message)) {
        copy_time(was_time, stored, out, size);
        return OTA_RT_KEPT;
    }
    ota_request_time_rule rule = OTA_RT_NOW;
    int has_t = clock_parse_rfc3339(sv_from(now), &t) == 0;
    if (!sv_empty(asked->reason) && clock_parse_rfc3339(asked_time, &own) == 0) {
        t = own;
        has_t = 1;
        rule = OTA_RT_AS_ASKED;
    }
    if (has_stored && has_t && t <= stored) {
        t = stored + 1;
        rule = OTA_RT_BUMPED;
    }
    if (rule == OTA_RT_AS_ASKED)
        copy_time(asked_time, own, out, size);
    else if (rule == OTA_RT_NOW)
        snprintf(out, size, "%s", now);
    else
        format_utc(t, out, size);
    return rule;
}

ota_state ota_state_of_pod(const ota_pod *pod)
{
    const ota_cond *nu = &pod->need_upgrade, *ir = &pod->image_ready;
    if (!nu->present || !sv_eq(nu->status, "True"))
        return OTA_STATE_CURRENT;
    if (!ir->present)
        return OTA_STATE_PENDING_UPGRADE;
    /* A failure names the job, not the hash: it stands until a new request
     * or a new revision replaces it. */
    if (sv_eq(ir->status, "False") && sv_eq(ir->reason, OTA_REASON_PULL_FAIL))
        return OTA_STATE_FAILED;
    int about_h = sv_starts_with(nu->message, OTA_MSG_REVISION_PREFIX) &&
                  sv_same(ir->message, nu->message);
    if (!about_h)
        return OTA_STATE_PENDING_UPGRADE; /* about an older revision */
    if (ota_state_is_pull_request(ir))
        return OTA_STATE_PULLING;
    if (sv_eq(ir->status, "True") && sv_eq(ir->reason, OTA_REASON_PULL_SUCCESS))
        return OTA_STATE_READY;
    return OTA_STATE_PENDING_UPGRADE;
}

const char *ota_state_name(ota_state s)
{
    switch (s) {
    case OTA_STATE_CURRENT:
        return "Current";
    case OTA_STATE_PENDING_UPGRADE:
        return "PendingUpgrade";
    case OTA_STATE_PULLING:
        return "Pulling";
    case OTA_STATE_READY:
        return "Ready";
    case OTA_STATE_FAILED:
        return "Failed";
    }
    return "Unknown";
}

int ota_state_name_listed(sv username, const char *list)
{
    if (list == NULL || sv_empty(username))
        return 0;
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == username.len && memcmp(p, username.ptr, len) == 0)
            return 1;
        if (end == NULL)
            return 0;
        p = end + 1;
    }
}

ota_requester ota_requester_of(sv username, int is_master, const char *controller_username,
                               const char *co_writers)
{
    ota_requester who = {OTA_REQ_NODE_USER, username};
    if (is_master)
        who.kind = OTA_REQ_MASTER;
    else if (sv_eq(username, controller_username))
        who.kind = OTA_REQ_CONTROLLER;
    else if (ota_state_name_listed(username, co_writers))
        who.kind = OTA_REQ_CO_WRITER;
    return who;
}

int ota_state_reason_is_stale(const ota_cond *stored, const ota_cond *asked)
{
    int result_reason = sv_eq(asked->reason, OTA_REASON_PULL_SUCCESS) ||
                        sv_eq(asked->reason, OTA_REASON_PULL_FAIL);
    return stored->present && asked->present && sv_eq(asked->status, "False") && result_reason &&
           sv_same(asked->reason, stored->reason);
}

/* What is wrong with a node user's PodImageReady that is not a pull request
 * about H (the caller knows it is not one).  state: the stored pod's. */
static ota_verdict deny_image_ready(const ota_pod *old_pod, const ota_pod *new_pod,
                                    const char *pod_ref, const char *state, arena *a)
{
    const ota_cond *ir = &new_pod->image_ready;
    if (!ir->present)
        return ota_rule_deny(a, OTA_RULE_IMAGE_READY_OWNED_BY_CONTROLLER, state,
                             "only the controller may remove PodImageReady from pod %s", pod_ref);
    /* A strategic merge patch merges conditions by type and keeps every
     * field it does not name: a request written without "reason":"" after a
     * result still carries the controller's reason. */
    if (ota_state_reason_is_stale(&old_pod->image_ready, ir))
        return ota_rule_deny(a, OTA_RULE_RESULT_OWNED_BY_CONTROLLER, state,
                             "only the controller may report a pre-pull result for pod %s "
                             "(PodImageReady status %s, reason %s); the reason is the stored "
                             "one, kept by a merge patch that does not name it: to ask for a "
                             "pre-pull, write \"reason\":\"\"",
                             pod_ref, QUOTE(ir->status), QUOTE(ir->reason));
    if (!sv_eq(ir->status, "False") || sv_eq(ir->reason, OTA_REASON_PULL_SUCCESS) ||
        sv_eq(ir->reason, OTA_REASON_PULL_FAIL))
        return ota_rule_deny(a, OTA_RULE_RESULT_OWNED_BY_CONTROLLER, state,
                             "only the controller may report a pre-pull result for pod %s "
                             "(PodImageReady status %s, reason %s)",
                             pod_ref, QUOTE(ir->status), QUOTE(ir->reason));
    if (!ota_state_is_pull_request(ir))
        return ota_rule_deny(a, OTA_RULE_BAD_PULL_REQUEST, state,
                             "a pre-pull request for pod %s sets PodImageReady status False "
                             "with reason " OTA_REASON_WAIT_PULL " or none, got reason %s",
                             pod_ref, QUOTE(ir->reason));
    return ota_rule_deny(a, OTA_RULE_PULL_WRONG_REVISION, state,
                         "the pre-pull request for pod %s names %s but PodNeedUpgrade names %s",
                         pod_ref, QUOTE(ir->message), QUOTE(new_pod->need_upgrade.message));
}

/* A condition for a message: its status and message, or "none". */
static const char *describe(const ota_cond *c, arena *a)
{
    if (!c->present)
        return "none";
    return arena_printf(a, "status %s, message %s", QUOTE(c->status), QUOTE(c->message));
}

/* AutoPrePull for a message: status, reason and message, or "none". */
static const char *describe_ap(const ota_cond *c, arena *a)
{
    if (!c->present)
        return "none";
    return arena_printf(a, "status %s, reason %s, message %s", QUOTE(c->status), QUOTE(c->reason),
                        QUOTE(c->message));
}

/* Someone other than the controller and masters added, changed or removed
 * AutoPrePull.  who: escaped, for the message. */
static ota_verdict deny_auto_prepull(const ota_pod *old_pod, const ota_pod *new_pod,
                                     const char *who, const char *pod_ref, const char *state,
                                     arena *a)
{
    return ota_rule_deny(a, OTA_RULE_AUTO_PREPULL_OWNED_BY_CONTROLLER, state,
                         "%s may not change " OTA_COND_AUTO_PREPULL " of pod %s (%s, not %s): "
                         "only the controller writes it, for a DaemonSet that opted in to "
                         "automatic pre-pull; a node user's pull request is served as asked",
                         who, pod_ref, describe_ap(&old_pod->auto_prepull, a),
                         describe_ap(&new_pod->auto_prepull, a));
}

/* A co-writer's change (the caller knows one of the OTA conditions
 * changed).  Another controller of PodNeedUpgrade computes the same value
 * from the same DaemonSet, but the webhook reads no DaemonSet: what it
 * knows is right is what ota-controller stored, so a co-writer may repeat
 * that (its own timestamps) and nothing else.  Its write of a new revision
 * is refused; ota-controller writes it, and the co-writer's retry finds it
 * written and writes nothing. */
static ota_verdict check_co_writer(const ota_pod *old_pod, const ota_pod *new_pod,
                                   const ota_requester *who, const char *pod_ref,
                                   const char *state, arena *a)
{
    const char *name = arena_escape(a, who->username.ptr, who->username.len);
    if (!ota_state_cond_same(&old_pod->auto_prepull, &new_pod->auto_prepull))
        return deny_auto_prepull(old_pod, new_pod, name, pod_ref, state, a);
    if (!ota_state_cond_same(&old_pod->image_ready, &new_pod->image_ready))
        return ota_rule_deny(a, OTA_RULE_CO_WRITER_NEED_UPGRADE_ONLY, state,
                             "%s may write only PodNeedUpgrade of pod %s (a co-writer, "
                             "--co-writer-usernames); PodImageReady is ota-prepull's: a "
                             "yurt-manager that writes it runs its imagepreheat controller, "
                             "which must be off (--controllers=-imagepreheat,..., "
                             "docs/operations.md \"Installing into an OpenYurt cluster\")",
                             name, pod_ref);
    return ota_rule_deny(a, OTA_RULE_CO_WRITER_SAME_REVISION, state,
                         "%s may write PodNeedUpgrade of pod %s only as ota-controller has it "
                         "(%s), not %s: ota-controller writes each new revision, and a retry "
                         "from the stored pod then has nothing to change",
                         name, pod_ref, describe(&old_pod->need_upgrade, a),
                         describe(&new_pod->need_upgrade, a));
}

ota_verdict ota_state_check_update(const ota_pod *old_pod, const ota_pod *new_pod,
                                   const ota_requester *who, const char *pod_ref, arena *a)
{
    const ota_verdict allow = {1, OTA_RULE_NONE, NULL};
    ota_state from = ota_state_of_pod(old_pod);
    const char *state = ota_state_name(from); /* every denial names it */
    /* Two entries of one type: the rules read the first, a reader that
     * takes the last (a jsonpath filter does) reads the other.  A node user
     * may not leave that behind; the same entries as stored are no change
     * (the kubelet carries whatever is there), and the controller and
     * masters are trusted to tidy up (DECISIONS, "Duplicate condition
     * types"). */
    if ((who->kind == OTA_REQ_NODE_USER || who->kind == OTA_REQ_CO_WRITER) &&
        (new_pod->n_need_upgrade > 1 || new_pod->n_image_ready > 1 ||
         new_pod->n_auto_prepull > 1) &&
        !ota_state_entries_same(old_pod, new_pod)) {
        int nu = new_pod->n_need_upgrade > 1, ir = !nu && new_pod->n_image_ready > 1;
        return ota_rule_deny(a, OTA_RULE_DUPLICATE_CONDITION, state,
                             "pod %s would have %zu %s conditions; a pod carries one of each "
                             "type (readers disagree on which of two counts): write one",
                             pod_ref,
                             nu   ? new_pod->n_need_upgrade
                             : ir ? new_pod->n_image_ready
                                  : new_pod->n_auto_prepull,
                             nu   ? OTA_COND_NEED_UPGRADE
                             : ir ? OTA_COND_IMAGE_READY
                                  : OTA_COND_AUTO_PREPULL);
    }
    if (!ota_state_conditions_changed(old_pod, new_pod) || who->kind == OTA_REQ_MASTER)
        return allow;

    ota_state to = ota_state_of_pod(new_pod);
    if (who->kind == OTA_REQ_CONTROLLER) {
        /* Staying in Pulling is fine (say, tidying YurtHub's reason-less
         * request), but not when the pull now names another revision: that
         * is a new request, and only a node user makes one. */
        int new_pull = to == OTA_STATE_PULLING &&
                       (from != OTA_STATE_PULLING ||
                        !sv_same(old_pod->image_ready.message, new_pod->image_ready.message));
        /* ... or an automatic pull its DaemonSet opted in to, for this
         * revision: the stored AutoPrePull says so (not the written one:
         * the controller writes the mark first, then starts the pull). */
        const ota_cond *ap = &old_pod->auto_prepull;
        if (!new_pull || ota_state_auto_prepull_allows(ap, new_pod->image_ready.message))
            return allow;
        if (!ap->present)
            return ota_rule_deny(a, OTA_RULE_PULL_REQUESTED_BY_NODE_USERS, state,
                                 "the controller may not request a pre-pull of pod %s; "
                                 "node users do",
                                 pod_ref);
        return ota_rule_deny(a, OTA_RULE_AUTO_PREPULL_NEEDS_OPT_IN, state,
                             "the controller may start an automatic pre-pull of pod %s only for "
                             "the revision its " OTA_COND_AUTO_PREPULL " True names; "
                             OTA_COND_AUTO_PREPULL " is %s, the pull names %s",
                             pod_ref, describe_ap(ap, a),
                             QUOTE(new_pod->image_ready.message));
    }
    if (who->kind == OTA_REQ_CO_WRITER)
        return check_co_writer(old_pod, new_pod, who, pod_ref, state, a);

    /* A node may only touch the OTA state of pods that run on it: the
     * stored pod's node, since the object carries whatever spec the client
     * sent (the apiserver resets spec of a status write only after the
     * mutating webhooks, and another caller may never do it). */
    if (sv_starts_with(who->username, OTA_NODE_USER_PREFIX)) {
        size_t skip = strlen(OTA_NODE_USER_PREFIX);
        sv node = {who->username.ptr + skip, who->username.len - skip};
        if (!sv_same(node, old_pod->node_name) || sv_empty(node))
            return ota_rule_deny(a, OTA_RULE_OWN_NODE_ONLY, state,
                                 "node %s may not change the OTA conditions of pod %s, "
                                 "which runs on node %s",
                                 arena_escape(a, node.ptr, node.len), pod_ref,
                                 QUOTE(old_pod->node_name));
    }
    if (!ota_state_cond_same(&old_pod->need_upgrade, &new_pod->need_upgrade))
        return ota_rule_deny(a, OTA_RULE_NEED_UPGRADE_OWNED_BY_CONTROLLER, state,
                             "only the controller may change PodNeedUpgrade of pod %s", pod_ref);
    /* AutoPrePull: as stored, or taken over by this pull request (a
     * request, whatever its revision: the request's own rules below say
     * what is wrong with it). */
    if (!ota_state_cond_same(&old_pod->auto_prepull, &new_pod->auto_prepull)) {
        ota_cond taken;
        int takes = ota_state_is_pull_request(&new_pod->image_ready) &&
                    ota_state_auto_prepull_taken(&old_pod->auto_prepull,
                                                 new_pod->image_ready.message, &taken) &&
                    ota_state_cond_same(&taken, &new_pod->auto_prepull);
        if (!takes)
            return deny_auto_prepull(old_pod, new_pod,
                                     arena_escape(a, who->username.ptr, who->username.len),
                                     pod_ref, state, a);
    }
    if (from == OTA_STATE_CURRENT)
        return ota_rule_deny(a, OTA_RULE_PULL_NEEDS_UPGRADE, state,
                             "pod %s does not need an upgrade (PodNeedUpgrade is not True)",
                             pod_ref);
    /* No DaemonSet owns the pod (deleted with --cascade=orphan, or never
     * one's): no revision to pull and nobody to serve the request, which
     * would sit in WaitPullImage.  Known without an API call: the stored
     * pod's ownerReferences.  (Whether the DaemonSet is still OTA, or has
     * a revision, the controller answers: PullImageFail with why.) */
    if (to == OTA_STATE_PULLING && old_pod->owners_read && !old_pod->daemonset_owned)
        return ota_rule_deny(a, OTA_RULE_PULL_NEEDS_DAEMONSET, state,
                             "pod %s has no DaemonSet owner (no controller ownerReference of "
                             "kind DaemonSet: its DaemonSet was deleted with --cascade=orphan, "
                             "or it never had one), so there is no revision to pre-pull",
                             pod_ref);
    if (to == OTA_STATE_PULLING)
        return allow; /* from PendingUpgrade, Failed, Ready, or a repeat while Pulling */
    return deny_image_ready(old_pod, new_pod, pod_ref, state, a);
}

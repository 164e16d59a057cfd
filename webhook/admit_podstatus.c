/*
 * admit_podstatus.c - see admit_podstatus.h.
 */
#include "admit_podstatus.h"

#include <stdio.h>
#include <string.h>

#include "ota_names.h"

/* Same in every field a condition carries, timestamps included: anything
 * else is an alteration worth undoing. */
static int cond_identical(const review_cond *a, const review_cond *b)
{
    ota_cond va = review_cond_view(a), vb = review_cond_view(b);
    return ota_state_cond_same(&va, &vb) &&
           (!a->present || sv_same(a->last_transition_time, b->last_transition_time));
}

static const char *cond_path(arena *a, size_t index, const char *field)
{
    char idx[24];
    snprintf(idx, sizeof(idx), "%zu", index);
    const char *tokens[] = {"status", "conditions", idx, field};
    return jpatch_pointer(a, tokens, field != NULL ? 4 : 3);
}

static void add_conditions(const review *rv, const review_cond *const *restore, size_t n,
                           jpatch *p, arena *a)
{
    const review_object *pod = &rv->object;
    if (pod->has_conditions) {
        static const char *const append[] = {"status", "conditions", "-"};
        for (size_t i = 0; i < n; i++)
            jpatch_add_raw(p, "add", jpatch_pointer(a, append, 3), rv->body + restore[i]->raw_off,
                           restore[i]->raw_len);
        return;
    }
    /* No array to append to: add it whole (and status with it). */
    size_t len = 32;
    for (size_t i = 0; i < n; i++)
        len += restore[i]->raw_len + 1;
    char *json = arena_alloc(a, len);
    if (json == NULL) {
        p->failed = 1;
        return;
    }
    size_t off = 0;
    if (!pod->has_status)
        off += (size_t)sprintf(json, "{\"conditions\":");
    json[off++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            json[off++] = ',';
        memcpy(json + off, rv->body + restore[i]->raw_off, restore[i]->raw_len);
        off += restore[i]->raw_len;
    }
    json[off++] = ']';
    if (!pod->has_status)
        json[off++] = '}';
    static const char *const status[] = {"status"};
    static const char *const conditions[] = {"status", "conditions"};
    if (pod->has_status)
        jpatch_add_raw(p, "add", jpatch_pointer(a, conditions, 2), json, off);
    else
        jpatch_add_raw(p, "add", jpatch_pointer(a, status, 1), json, off);
}

unsigned admit_podstatus_mutate(const review *rv, const ota_requester *who, const char *now,
                              jpatch *p, arena *a)
{
    const review_object *old_pod = &rv->old_object, *new_pod = &rv->object;
    unsigned did = 0;
    /* A co-writer's write is taken as written or refused (ota_state.h):
     * restored, a co-writer's new revision would pass as a no-op, and its
     * writer would never learn that ota-controller writes it. */
    if (who->kind == OTA_REQ_CONTROLLER || who->kind == OTA_REQ_CO_WRITER)
        return 0;

    /* The PodNeedUpgrade the pod will have once we are done. */
    const review_cond *need_upgrade = &new_pod->need_upgrade;
    const review_cond *restore[3];
    size_t n_restore = 0;
    int replace_need_upgrade = 0;
    if (who->kind != OTA_REQ_MASTER && old_pod->need_upgrade.present &&
        !cond_identical(&old_pod->need_upgrade, &new_pod->need_upgrade)) {
        need_upgrade = &old_pod->need_upgrade;
        did |= ADMIT_MUT_RESTORE_NEED_UPGRADE;
        if (new_pod->need_upgrade.present)
            replace_need_upgrade = 1;
        else
            restore[n_restore++] = &old_pod->need_upgrade;
    }
    if (who->kind != OTA_REQ_MASTER && old_pod->image_ready.present &&
        !new_pod->image_ready.present) {
        did |= ADMIT_MUT_RESTORE_IMAGE_READY;
        restore[n_restore++] = &old_pod->image_ready;
    }
    /* AutoPrePull: where it will be once restored (its index), and whether
     * it is the stored one (a master may write it as it likes). */
    int replace_auto_prepull = 0, ap_as_stored = 1;
    size_t ap_index = new_pod->auto_prepull.index;
    if (old_pod->auto_prepull.present &&
        !cond_identical(&old_pod->auto_prepull, &new_pod->auto_prepull)) {
        if (who->kind == OTA_REQ_MASTER) {
            ap_as_stored = 0;
        } else {
            did |= ADMIT_MUT_RESTORE_AUTO_PREPULL;
            if (new_pod->auto_prepull.present) {
                replace_auto_prepull = 1;
            } else {
                ap_index = (new_pod->has_conditions ? new_pod->n_conditions : 0) + n_restore;
                restore[n_restore++] = &old_pod->auto_prepull;
            }
        }
    }
    ota_cond ap_taken = {0};

    const review_cond *ir = &new_pod->image_ready;
    ota_cond was = review_cond_view(&old_pod->image_ready), asked = review_cond_view(ir);
    if (ota_state_is_pull_request(&asked) &&
        (!ota_state_cond_same(&was, &asked) ||
         !sv_same(old_pod->image_ready.last_transition_time, ir->last_transition_time))) {
        int fill = sv_empty(ir->message) && need_upgrade->present &&
                   sv_starts_with(need_upgrade->message, OTA_MSG_REVISION_PREFIX);
        if (fill)
            asked.message = need_upgrade->message; /* as it will be stored */
        if (sv_empty(ir->reason)) {
            jpatch_add_string(p, "add", cond_path(a, ir->index, "reason"), OTA_REASON_WAIT_PULL,
                              strlen(OTA_REASON_WAIT_PULL));
            did |= ADMIT_MUT_STAMP_REASON;
        }
        /* The request's time names its Job (ota_state_request_time). */
        char when[32];
        ota_request_time_rule rule =
            ota_state_request_time(&was, old_pod->image_ready.last_transition_time, &asked,
                                   ir->last_transition_time, now, when, sizeof(when));
        if (!sv_eq(ir->last_transition_time, when)) {
            char *t = arena_strndup(a, when, strlen(when));
            if (t == NULL)
                p->failed = 1;
            else
                jpatch_add_string(p, "add", cond_path(a, ir->index, "lastTransitionTime"), t,
                                  strlen(t));
        }
        if (rule == OTA_RT_KEPT && !sv_eq(ir->last_transition_time, when))
            did |= ADMIT_MUT_KEEP_REQUEST_TIME;
        else if (rule == OTA_RT_BUMPED)
            did |= ADMIT_MUT_REQUEST_TIME_AFTER;
        if (fill) {
            jpatch_add_string(p, "add", cond_path(a, ir->index, "message"),
                              need_upgrade->message.ptr, need_upgrade->message.len);
            did |= ADMIT_MUT_FILL_MESSAGE;
        }
        /* The pull is the node user's now: served first, and no longer
         * the controller's to start (ota_state.h). */
        ota_cond stored_ap = review_cond_view(&old_pod->auto_prepull);
        if (ap_as_stored && ota_state_auto_prepull_taken(&stored_ap, asked.message, &ap_taken))
            did = (did & ~(unsigned)ADMIT_MUT_RESTORE_AUTO_PREPULL) | ADMIT_MUT_AUTO_PREPULL_TAKEN;
    }

    if (replace_need_upgrade)
        jpatch_add_raw(p, "replace", cond_path(a, new_pod->need_upgrade.index, NULL),
                       rv->body + old_pod->need_upgrade.raw_off, old_pod->need_upgrade.raw_len);
    if (replace_auto_prepull)
        jpatch_add_raw(p, "replace", cond_path(a, new_pod->auto_prepull.index, NULL),
                       rv->body + old_pod->auto_prepull.raw_off, old_pod->auto_prepull.raw_len);
    if (n_restore > 0)
        add_conditions(rv, restore, n_restore, p, a);
    if (ap_taken.present) {
        /* on the stored AutoPrePull, restored above where the write lost it */
        static const char *const fields[] = {"status", "reason", "message",
                                             "lastTransitionTime"};
        sv values[] = {ap_taken.status, ap_taken.reason, ap_taken.message, sv_from(now)};
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
            jpatch_add_string(p, "add", cond_path(a, ap_index, fields[i]), values[i].ptr,
                              values[i].len);
    }
    return did;
}

size_t admit_podstatus_warnings(const review *rv, unsigned did, const char *pod_ref, arena *a,
                                const char **out, size_t max)
{
    size_t n = 0;
    if ((did & ADMIT_MUT_RESTORE_NEED_UPGRADE) && n < max) {
        int dropped = !rv->object.need_upgrade.present;
        out[n] = arena_printf(a,
                              "ota-prepull: kept " OTA_COND_NEED_UPGRADE " of pod %s as stored: "
                              "this write %s it, and only the controller may change it",
                              pod_ref, dropped ? "dropped" : "changed");
        n += out[n] != NULL;
    }
    if ((did & ADMIT_MUT_RESTORE_IMAGE_READY) && n < max) {
        out[n] = arena_printf(a,
                              "ota-prepull: kept " OTA_COND_IMAGE_READY " of pod %s as stored: "
                              "this write dropped it, and only the controller may remove it",
                              pod_ref);
        n += out[n] != NULL;
    }
    if ((did & ADMIT_MUT_RESTORE_AUTO_PREPULL) && n < max) {
        out[n] = arena_printf(a,
                              "ota-prepull: kept " OTA_COND_AUTO_PREPULL " of pod %s as stored: "
                              "this write %s it, and only the controller may change it",
                              pod_ref, rv->object.auto_prepull.present ? "changed" : "dropped");
        n += out[n] != NULL;
    }
    if ((did & ADMIT_MUT_AUTO_PREPULL_TAKEN) && n < max) {
        out[n] = arena_printf(a,
                              "ota-prepull: " OTA_COND_AUTO_PREPULL " of pod %s set False, "
                              "reason " OTA_REASON_AUTO_NODE_USER ": this pre-pull is the node "
                              "user's request now, served before automatic ones",
                              pod_ref);
        n += out[n] != NULL;
    }
    return n;
}

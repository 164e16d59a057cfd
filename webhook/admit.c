/*
 * admit.c - see admit.h.
 */
#include "admit.h"

#include <string.h>

#include "admit_daemonset.h"
#include "admit_imagecache.h"
#include "admit_imagepulljob.h"
#include "admit_podstatus.h"
#include "jpatch.h"
#include "ota_daemonset.h"
#include "ota_names.h"
#include "ota_state.h"

static const struct {
    unsigned bit;
    const char *name;
} mutation_names[] = {
    {ADMIT_MUT_ONDELETE, "ondelete"},
    {ADMIT_MUT_STAMP_REASON, "stamp-reason"},
    {ADMIT_MUT_FILL_MESSAGE, "fill-message"},
    {ADMIT_MUT_RESTORE_NEED_UPGRADE, "restore-need-upgrade"},
    {ADMIT_MUT_RESTORE_IMAGE_READY, "restore-image-ready"},
    {ADMIT_MUT_KEEP_REQUEST_TIME, "keep-request-time"},
    {ADMIT_MUT_REQUEST_TIME_AFTER, "request-time-after-stored"},
    {ADMIT_MUT_RESTORE_AUTO_PREPULL, "restore-auto-prepull"},
    {ADMIT_MUT_AUTO_PREPULL_TAKEN, "auto-prepull-taken"},
    {ADMIT_MUT_IPJ_DEFAULTS, "imagepulljob-defaults"},
};

const char *admit_result_name(admit_result r)
{
    switch (r) {
    case ADMIT_ALLOWED:
        return "allowed";
    case ADMIT_PATCHED:
        return "patched";
    case ADMIT_DENIED:
        return "denied";
    case ADMIT_INVALID:
        return "invalid";
    }
    return "unknown";
}

const char *admit_mutation_name(unsigned bit)
{
    for (size_t i = 0; i < sizeof(mutation_names) / sizeof(mutation_names[0]); i++)
        if (mutation_names[i].bit == 1u << bit)
            return mutation_names[i].name;
    return NULL;
}

const char *admit_mutation_names(unsigned mutations, arena *a)
{
    size_t len = 1;
    for (size_t i = 0; i < sizeof(mutation_names) / sizeof(mutation_names[0]); i++)
        len += strlen(mutation_names[i].name) + 1;
    char *out = arena_alloc(a, len);
    if (out == NULL)
        return "";
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(mutation_names) / sizeof(mutation_names[0]); i++) {
        if (mutations & mutation_names[i].bit) {
            if (out[0] != '\0')
                strcat(out, ",");
            strcat(out, mutation_names[i].name);
        }
    }
    return out;
}

enum target { T_OTHER, T_DAEMONSET, T_POD_STATUS, T_IMAGEPULLJOB, T_IMAGECACHE };

static enum target target_of(const review *rv)
{
    int create = sv_eq(rv->operation, "CREATE"), update = sv_eq(rv->operation, "UPDATE");
    if (sv_eq(rv->group, "apps") && sv_eq(rv->resource, "daemonsets") &&
        sv_empty(rv->sub_resource) && (create || update))
        return T_DAEMONSET;
    if (sv_empty(rv->group) && sv_eq(rv->resource, "pods") && sv_eq(rv->sub_resource, "status") &&
        update)
        return T_POD_STATUS;
    /* both versions Kruise serves (v1alpha1 through 1.8, v1beta1 since 1.9) */
    if (sv_eq(rv->group, OTA_KRUISE_GROUP) && sv_eq(rv->resource, OTA_KRUISE_IMAGEPULLJOBS) &&
        sv_empty(rv->sub_resource) && (create || update) &&
        (sv_eq(rv->version, OTA_KRUISE_V1ALPHA1) || sv_eq(rv->version, OTA_KRUISE_V1BETA1)))
        return T_IMAGEPULLJOB;
    if (sv_eq(rv->group, OTA_FLEDGED_GROUP) && sv_eq(rv->resource, OTA_FLEDGED_IMAGECACHES) &&
        sv_empty(rv->sub_resource) && (create || update) && sv_eq(rv->version, OTA_FLEDGED_V1ALPHA2))
        return T_IMAGECACHE;
    return T_OTHER;
}

/* A denial: v's rule and message, with status code code. */
static void deny(review_response *resp, admit_outcome *out, ota_verdict v, int code)
{
    resp->allowed = 0;
    resp->code = code;
    resp->message = v.message;
    out->result = ADMIT_DENIED;
    out->rule = v.rule;
    out->message = v.message;
}

static int invalid(admit_outcome *out, const char *message, arena *a)
{
    out->http_status = 400;
    out->result = ADMIT_INVALID;
    out->message = message;
    out->body = review_encode_status(400, "BadRequest", message, a, &out->body_len);
    return out->body == NULL ? -1 : 0;
}

/* One ImagePullJob request, as Kruise's webhooks answer it: its defaults
 * (mutate) or its verdict (validate).  A spec Kruise could not decode is
 * denied with 400, as Kruise's admission.Errored does, not a failed call. */
static int admit_imagepulljob(admit_phase phase, const review *rv, review_response *resp, arena *a,
                              admit_outcome *out)
{
    char err[256];
    ipj_spec spec, old;
    int has_old = sv_eq(rv->operation, "UPDATE") && rv->old_object.present;
    const review_object *bad = NULL;
    if (ipj_decode(&spec, rv->body + rv->object.spec_off, rv->object.spec_len, a, err, sizeof(err)) != 0)
        bad = &rv->object;
    else if (phase == ADMIT_VALIDATE && has_old &&
             ipj_decode(&old, rv->body + rv->old_object.spec_off, rv->old_object.spec_len, a, err,
                        sizeof(err)) != 0)
        bad = &rv->old_object;
    ipj_verdict v = {{1, OTA_RULE_NONE, NULL}, 0};
    if (bad != NULL) {
        const char *msg = arena_printf(a, "%s%s", bad == &rv->old_object ? "oldObject: " : "", err);
        v = (ipj_verdict){{0, OTA_RULE_IPJ_MALFORMED, msg != NULL ? msg : "malformed"}, 400};
    } else if (phase == ADMIT_VALIDATE) {
        v = ipj_validate(has_old ? &old : NULL, &spec, a);
    }
    if (!v.v.allowed) {
        deny(resp, out, v.v, v.code);
        return 0;
    }
    if (phase == ADMIT_MUTATE) {
        jpatch p;
        if (jpatch_init(&p, a) != 0)
            return -1;
        unsigned did = ipj_defaults(&spec, &p, a);
        if (jpatch_finish(&p, &resp->patch, &resp->patch_len) != 0)
            return -1;
        if (did == 0) {
            resp->patch = NULL;
        } else {
            out->mutations |= ADMIT_MUT_IPJ_DEFAULTS;
            out->result = ADMIT_PATCHED;
        }
    }
    return 0;
}

int admit_review(admit_phase phase, const char *body, size_t len, const char *now,
                 const admit_config *cfg, arena *a, admit_outcome *out)
{
    memset(out, 0, sizeof(*out));
    review rv;
    char err[256];
    if (review_decode(&rv, body, len, a, err, sizeof(err)) != 0) {
        const char *msg = arena_strndup(a, err, strlen(err));
        return msg == NULL ? -1 : invalid(out, msg, a);
    }
    out->uid = rv.uid;
    out->username = rv.username;

    enum target t = target_of(&rv);
    if (t == T_DAEMONSET && !rv.object.present)
        return invalid(out, "request.object is required for a DaemonSet CREATE or UPDATE", a);
    if (t == T_IMAGEPULLJOB && !rv.object.present)
        return invalid(out, "request.object is required for an ImagePullJob CREATE or UPDATE", a);
    if (t == T_IMAGECACHE && !rv.object.present)
        return invalid(out, "request.object is required for an ImageCache CREATE or UPDATE", a);
    /* kube-fledged decodes the old object of an update, and refuses one
     * that is not there; checked as a create, it could pass */
    if (t == T_IMAGECACHE && sv_eq(rv.operation, "UPDATE") && !rv.old_object.present)
        return invalid(out, "request.oldObject is required for an ImageCache UPDATE", a);
    if (t == T_POD_STATUS && (!rv.object.present || !rv.old_object.present))
        return invalid(out, "request.object and request.oldObject are required for a pods/status UPDATE",
                       a);

    /* The apiserver sets request.name for updates; on a create with
     * generateName it is empty until after admission. */
    sv name = sv_empty(rv.name) ? rv.object.name : rv.name;
    /* escaped: a name is not validated yet when a create is mutated */
    const char *ref = arena_printf(a, "%s/%s", arena_escape(a, rv.namespace.ptr, rv.namespace.len),
                                   arena_escape(a, name.ptr, name.len));
    if (ref == NULL)
        return -1;
    if (t != T_OTHER)
        out->object_ref = arena_printf(a, "%s %s",
                                       t == T_DAEMONSET       ? "daemonset"
                                       : t == T_IMAGEPULLJOB ? "imagepulljob"
                                       : t == T_IMAGECACHE   ? "imagecache"
                                                             : "pod",
                                       ref);

    review_response resp = {.uid = rv.uid, .allowed = 1};
    ota_requester who = ota_requester_of(rv.username, rv.is_master, cfg->controller_username,
                                        cfg->co_writer_usernames);
    if (t == T_IMAGEPULLJOB) {
        if (admit_imagepulljob(phase, &rv, &resp, a, out) != 0)
            return -1;
    } else if (t == T_IMAGECACHE) {
        /* kube-fledged has no mutating webhook: a mutate request passes */
        ota_verdict v = phase == ADMIT_VALIDATE ? ic_review_verdict(&rv, a) : (ota_verdict){1, OTA_RULE_NONE, NULL};
        if (!v.allowed)
            deny(&resp, out, v, 400);
    } else if (phase == ADMIT_VALIDATE && t != T_OTHER) {
        ota_pod old_pod = review_pod_view(&rv.old_object), new_pod = review_pod_view(&rv.object);
        ota_daemonset ds = review_daemonset_view(&rv.object);
        ota_verdict v = t == T_DAEMONSET ? ota_daemonset_check(&ds, ref, a)
                                         : ota_state_check_update(&old_pod, &new_pod, &who, ref, a);
        if (!v.allowed)
            deny(&resp, out, v, 403);
    } else if (phase == ADMIT_MUTATE && t != T_OTHER) {
        jpatch p;
        if (jpatch_init(&p, a) != 0)
            return -1;
        if (t == T_DAEMONSET) {
            const char *warning = NULL;
            if (admit_daemonset_mutate(&rv.object, ref, &p, a, &warning)) {
                out->mutations |= ADMIT_MUT_ONDELETE;
                if (warning != NULL)
                    resp.warnings[resp.n_warnings++] = warning;
            }
        } else {
            unsigned did = admit_podstatus_mutate(&rv, &who, now, &p, a);
            out->mutations |= did;
            resp.n_warnings += admit_podstatus_warnings(&rv, did, ref, a,
                                                        resp.warnings + resp.n_warnings,
                                                        sizeof(resp.warnings) / sizeof(resp.warnings[0]) -
                                                            resp.n_warnings);
        }
        size_t n_ops = p.n_ops;
        if (jpatch_finish(&p, &resp.patch, &resp.patch_len) != 0)
            return -1;
        if (n_ops == 0)
            resp.patch = NULL;
        else
            out->result = ADMIT_PATCHED;
    }
    out->http_status = 200;
    out->body = review_encode_response(&resp, a, &out->body_len);
    return out->body == NULL ? -1 : 0;
}

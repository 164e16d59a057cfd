/*
 * admit_imagepulljob.c - see admit_imagepulljob.h.  The spec's decoder and
 * the image and selector checks are lib/ipj_spec's (the controller reads
 * the spec with them too).
 */
#include "admit_imagepulljob.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

unsigned ipj_defaults(const ipj_spec *s, jpatch *p, arena *a)
{
    unsigned did = 0;
    if (!s->present) {
        static const char v[] = "{\"completionPolicy\":{\"type\":\"Always\"},"
                                "\"pullPolicy\":{\"timeoutSeconds\":600,\"backoffLimit\":3},"
                                "\"imagePullPolicy\":\"IfNotPresent\"}";
        jpatch_add_raw(p, "add", "/spec", v, sizeof(v) - 1);
        return IPJ_DEFAULT_COMPLETION_TYPE | IPJ_DEFAULT_TIMEOUT | IPJ_DEFAULT_BACKOFF |
               IPJ_DEFAULT_IMAGE_PULL_POLICY;
    }
    (void)a;
    /* "add" replaces a member that is there (null, ""): RFC 6902 §4.1 */
    if (!s->has_completion_policy) {
        static const char v[] = "{\"type\":\"Always\"}";
        jpatch_add_raw(p, "add", "/spec/completionPolicy", v, sizeof(v) - 1);
        did |= IPJ_DEFAULT_COMPLETION_TYPE;
    } else if (sv_empty(s->completion_type)) {
        jpatch_add_string(p, "add", "/spec/completionPolicy/type", "Always", 6);
        did |= IPJ_DEFAULT_COMPLETION_TYPE;
    }
    if (!s->has_pull_policy) {
        static const char v[] = "{\"timeoutSeconds\":600,\"backoffLimit\":3}";
        jpatch_add_raw(p, "add", "/spec/pullPolicy", v, sizeof(v) - 1);
        did |= IPJ_DEFAULT_TIMEOUT | IPJ_DEFAULT_BACKOFF;
    } else {
        if (!s->timeout_seconds.set) {
            jpatch_add_raw(p, "add", "/spec/pullPolicy/timeoutSeconds", "600", 3);
            did |= IPJ_DEFAULT_TIMEOUT;
        }
        if (!s->backoff_limit.set) {
            jpatch_add_raw(p, "add", "/spec/pullPolicy/backoffLimit", "3", 1);
            did |= IPJ_DEFAULT_BACKOFF;
        }
    }
    if (sv_empty(s->image_pull_policy)) {
        jpatch_add_string(p, "add", "/spec/imagePullPolicy", "IfNotPresent", 12);
        did |= IPJ_DEFAULT_IMAGE_PULL_POLICY;
    }
    return did;
}

static ipj_verdict deny(ota_rule rule, int code, const char *message)
{
    return (ipj_verdict){{0, rule, message != NULL ? message : ota_rule_name(rule)}, code};
}

/* strconv.Atoi's error for s, or NULL when s is a whole number in int64. */
static const char *atoi_error(sv s, arena *a)
{
    size_t i = 0;
    if (s.len > 0 && (s.ptr[0] == '+' || s.ptr[0] == '-'))
        i = 1;
    int ok = i < s.len;
    for (size_t j = i; j < s.len; j++)
        if (s.ptr[j] < '0' || s.ptr[j] > '9')
            ok = 0;
    const char *q = arena_quote(a, s.ptr, s.len);
    if (!ok)
        return arena_printf(a, "strconv.Atoi: parsing %s: invalid syntax", q);
    /* in range: at most 19 digits below 9223372036854775808 */
    size_t lead = i;
    while (lead < s.len - 1 && s.ptr[lead] == '0')
        lead++;
    size_t digits = s.len - lead;
    int neg = s.ptr[0] == '-';
    const char *lim = neg ? "9223372036854775808" : "9223372036854775807";
    if (digits > 19 || (digits == 19 && memcmp(s.ptr + lead, lim, 19) > 0))
        return arena_printf(a, "strconv.Atoi: parsing %s: value out of range", q);
    return NULL;
}

ipj_verdict ipj_validate(const ipj_spec *old, const ipj_spec *s, arena *a)
{
    ipj_verdict ok = {{1, OTA_RULE_NONE, NULL}, 0};
    if (old != NULL && (old->has_pull_secrets != s->has_pull_secrets ||
                        !sv_list_same(old->pull_secrets, old->n_pull_secrets, s->pull_secrets,
                                        s->n_pull_secrets)))
        return deny(OTA_RULE_IPJ_PULL_SECRETS_IMMUTABLE, 403, "spec.pullSecrets is immutable");
    if (sv_empty(s->image))
        return deny(OTA_RULE_IPJ_IMAGE_EMPTY, 400, "image can not be empty");
    const char *why = ipj_image_error(s->image, a);
    if (why != NULL)
        return deny(OTA_RULE_IPJ_INVALID_IMAGE, 400,
                    arena_printf(a, "invalid image %s: %s", arena_escape(a, s->image.ptr, s->image.len), why));
    const ipj_selector *sel = &s->selector;
    if (sel->present) {
        if (sel->has_labels || sel->has_exprs) {
            if (sel->has_names)
                return deny(OTA_RULE_IPJ_NAMES_AND_LABELS, 400,
                            "can not set both names and labelSelector in this spec.selector");
            const char *e = ipj_selector_error(sel, a);
            if (e != NULL)
                return deny(OTA_RULE_IPJ_INVALID_SELECTOR, 400, arena_printf(a, "invalid selector: %s", e));
        }
        if (sel->has_names && sel->n_names > 1) {
            sv *sorted = arena_alloc(a, sel->n_names * sizeof(sv));
            if (sorted == NULL)
                return deny(OTA_RULE_IPJ_DUPLICATED_NAMES, 400, NULL);
            memcpy(sorted, sel->names, sel->n_names * sizeof(sv));
            qsort(sorted, sel->n_names, sizeof(sv), sv_order);
            for (size_t i = 1; i < sel->n_names; i++)
                if (sv_same(sorted[i - 1], sorted[i]))
                    return deny(OTA_RULE_IPJ_DUPLICATED_NAMES, 400, "duplicated name in selector names");
        }
    }
    if (s->pod_selector.present) {
        if (sel->present)
            return deny(OTA_RULE_IPJ_SELECTOR_AND_POD_SELECTOR, 400, "can not set both selector and podSelector");
        const char *e = ipj_selector_error(&s->pod_selector, a);
        if (e != NULL)
            return deny(OTA_RULE_IPJ_INVALID_POD_SELECTOR, 400, arena_printf(a, "invalid podSelector: %s", e));
    }
    if (s->parallelism_set && s->parallelism_is_string) {
        sv p = s->parallelism_str;
        if (p.len > 0 && p.ptr[p.len - 1] == '%')
            return deny(OTA_RULE_IPJ_PARALLELISM_PERCENTAGE, 400, "parallelism does not support percentage value");
        const char *e = atoi_error(p, a);
        if (e != NULL)
            return deny(OTA_RULE_IPJ_PARALLELISM_NOT_INTEGER, 400,
                        arena_printf(a, "parallelism must be a valid integer: %s", e));
    }
    if (sv_eq(s->completion_type, "Always")) {
        if (s->active_deadline_seconds.set) {
            int64_t timeout = s->timeout_seconds.set ? s->timeout_seconds.v : 600;
            if (timeout > s->active_deadline_seconds.v)
                return deny(OTA_RULE_IPJ_DEADLINE_BELOW_TIMEOUT, 400,
                            "completionPolicy.activeDeadlineSeconds must be greater than "
                            "pullPolicy.timeoutSeconds(default 600)");
        }
    } else if (sv_eq(s->completion_type, "Never")) {
        if (s->active_deadline_seconds.set || s->ttl_seconds_after_finished.set)
            return deny(OTA_RULE_IPJ_DEADLINE_TTL_NEED_ALWAYS, 400,
                        "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always "
                        "CompletionPolicyType");
    } else {
        return deny(OTA_RULE_IPJ_UNKNOWN_COMPLETION_POLICY, 400,
                    arena_printf(a, "unknown type of completionPolicy: %s",
                                 arena_escape(a, s->completion_type.ptr, s->completion_type.len)));
    }
    return ok;
}

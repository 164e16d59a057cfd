/*
 * admit_daemonset.c - see admit_daemonset.h.
 */
#include "admit_daemonset.h"

#include "ota_daemonset.h"
#include "ota_names.h"

/* A value from the request, quoted and escaped for a message (arena.h). */
#define QUOTE(v) arena_quote(a, (v).ptr, (v).len)

#define ONDELETE_JSON "{\"type\":\"OnDelete\"}"

static int is_ota(const review_object *ds)
{
    return ota_daemonset_strategy(ds->ann_update_strategy) == OTA_UPDATE_OTA;
}

static int is_on_delete(const review_object *ds)
{
    return ds->has_update_strategy && sv_eq(ds->update_strategy_type, "OnDelete");
}

static ota_verdict deny(const char *rule, const char *message)
{
    return (ota_verdict){0, rule, message != NULL ? message : rule};
}

ota_verdict admit_daemonset_check(const review_object *ds, const char *ds_ref, arena *a)
{
    sv strategy = ds->ann_update_strategy;
    if (ota_daemonset_strategy(strategy) == OTA_UPDATE_UNKNOWN)
        return deny("unknown-update-strategy",
                    arena_printf(a,
                                 "DaemonSet %s: annotation " OTA_ANN_UPDATE_STRATEGY
                                 " has unknown value %s; valid values are " OTA_STRATEGY_OTA
                                 " and " OTA_STRATEGY_ADVANCED " (case-insensitive); "
                                 "rule: unknown-update-strategy",
                                 ds_ref, QUOTE(strategy)));
    if (is_ota(ds) && !is_on_delete(ds))
        return deny("ota-requires-ondelete",
                    arena_printf(a,
                                 "DaemonSet %s is an OTA DaemonSet (" OTA_ANN_UPDATE_STRATEGY
                                 "=%s) but spec.updateStrategy.type is %s, not OnDelete; "
                                 "OpenYurt ignores it that way; rule: ota-requires-ondelete",
                                 ds_ref, QUOTE(strategy), QUOTE(ds->update_strategy_type)));
    sv timeout = ds->ann_prepull_timeout;
    long seconds;
    if (sv_present(timeout) && ota_daemonset_timeout(timeout, &seconds) != 0)
        return deny("bad-prepull-timeout",
                    arena_printf(a,
                                 "DaemonSet %s: annotation " OTA_ANN_PREPULL_TIMEOUT
                                 " must be a whole number of seconds from %d to %d, got %s; "
                                 "rule: bad-prepull-timeout",
                                 ds_ref, OTA_PREPULL_TIMEOUT_MIN, OTA_PREPULL_TIMEOUT_MAX,
                                 QUOTE(timeout)));
    return (ota_verdict){1, NULL, NULL};
}

int admit_daemonset_mutate(const review_object *ds, const char *ds_ref, jpatch *p, arena *a,
                         const char **warning)
{
    if (!is_ota(ds) || (is_on_delete(ds) && !ds->update_strategy_extra))
        return 0;
    static const char *const spec[] = {"spec"};
    static const char *const strategy[] = {"spec", "updateStrategy"};
    if (!ds->has_spec) {
        const char *v = "{\"updateStrategy\":" ONDELETE_JSON "}";
        jpatch_add_raw(p, "add", jpatch_pointer(a, spec, 1), v, strlen(v));
    } else {
        /* "add" replaces a member that exists (RFC 6902 §4.1), so one op
         * covers a missing, null, RollingUpdate or half-OnDelete strategy. */
        jpatch_add_raw(p, "add", jpatch_pointer(a, strategy, 2), ONDELETE_JSON,
                       strlen(ONDELETE_JSON));
    }
    const char *was = !ds->has_update_strategy                 ? "unset"
                      : sv_present(ds->update_strategy_type) ? QUOTE(ds->update_strategy_type)
                                                             : "without a type";
    /* the value as the user wrote it ("ota" is valid too) */
    *warning = arena_printf(a,
                            "ota-prepull: DaemonSet %s has " OTA_ANN_UPDATE_STRATEGY
                            "=%s, which needs spec.updateStrategy OnDelete; it was %s and "
                            "has been set to {\"type\":\"OnDelete\"}",
                            ds_ref, QUOTE(ds->ann_update_strategy), was);
    return 1;
}

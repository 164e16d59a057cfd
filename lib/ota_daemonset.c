/*
 * ota_daemonset.c - see ota_daemonset.h.
 */
#include "ota_daemonset.h"

#include "ota_names.h"

ota_update_strategy ota_daemonset_strategy(sv annotation)
{
    if (!sv_present(annotation))
        return OTA_UPDATE_UNSET;
    if (sv_eq_case(annotation, OTA_STRATEGY_OTA))
        return OTA_UPDATE_OTA;
    if (sv_eq_case(annotation, OTA_STRATEGY_ADVANCED))
        return OTA_UPDATE_ADVANCED;
    return OTA_UPDATE_UNKNOWN;
}

/* One spelling per number: "0060" would otherwise pass while "000060"
 * fails the length bound, and strtol(s, NULL, 0) or YAML 1.1 read "0060" as
 * octal 48. */
int ota_daemonset_timeout(sv annotation, long *seconds)
{
    if (annotation.len == 0 || annotation.len > 5 || annotation.ptr[0] == '0')
        return -1;
    long n = 0;
    for (size_t i = 0; i < annotation.len; i++) {
        if (annotation.ptr[i] < '0' || annotation.ptr[i] > '9')
            return -1;
        n = n * 10 + (annotation.ptr[i] - '0');
    }
    if (n < OTA_PREPULL_TIMEOUT_MIN || n > OTA_PREPULL_TIMEOUT_MAX)
        return -1;
    *seconds = n;
    return 0;
}

/* A value from the request, quoted and escaped for a message (arena.h). */
#define QUOTE(v) arena_quote(a, (v).ptr, (v).len)

int ota_daemonset_on_delete(const ota_daemonset *ds)
{
    return ds->has_update_strategy && sv_eq(ds->update_strategy_type, "OnDelete");
}

ota_verdict ota_daemonset_check(const ota_daemonset *ds, const char *ds_ref, arena *a)
{
    ota_update_strategy strategy = ota_daemonset_strategy(ds->update_strategy);
    if (strategy == OTA_UPDATE_UNKNOWN)
        return ota_rule_deny(a, OTA_RULE_UNKNOWN_UPDATE_STRATEGY, NULL,
                             "DaemonSet %s: annotation " OTA_ANN_UPDATE_STRATEGY
                             " has unknown value %s; valid values are " OTA_STRATEGY_OTA
                             " and " OTA_STRATEGY_ADVANCED " (case-insensitive)",
                             ds_ref, QUOTE(ds->update_strategy));
    if (strategy == OTA_UPDATE_OTA && !ota_daemonset_on_delete(ds))
        return ota_rule_deny(a, OTA_RULE_OTA_REQUIRES_ONDELETE, NULL,
                             "DaemonSet %s is an OTA DaemonSet (" OTA_ANN_UPDATE_STRATEGY
                             "=%s) but spec.updateStrategy.type is %s, not OnDelete; "
                             "OpenYurt ignores it that way",
                             ds_ref, QUOTE(ds->update_strategy), QUOTE(ds->update_strategy_type));
    long seconds;
    if (sv_present(ds->prepull_timeout) && ota_daemonset_timeout(ds->prepull_timeout, &seconds) != 0)
        return ota_rule_deny(a, OTA_RULE_BAD_PREPULL_TIMEOUT, NULL,
                             "DaemonSet %s: annotation " OTA_ANN_PREPULL_TIMEOUT
                             " must be a whole number of seconds from %d to %d, got %s",
                             ds_ref, OTA_PREPULL_TIMEOUT_MIN, OTA_PREPULL_TIMEOUT_MAX,
                             QUOTE(ds->prepull_timeout));
    return (ota_verdict){1, OTA_RULE_NONE, NULL};
}

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

/*
 * ota_rule.c - see ota_rule.h.
 */
#include "ota_rule.h"

#include <stdarg.h>

const char *ota_rule_name(ota_rule rule)
{
    /* no default: -Wswitch names a rule added without its name */
    switch (rule) {
    case OTA_RULE_NONE:
    case OTA_N_RULES:
        return NULL;
    case OTA_RULE_OWN_NODE_ONLY:
        return "own-node-only";
    case OTA_RULE_NEED_UPGRADE_OWNED_BY_CONTROLLER:
        return "need-upgrade-owned-by-controller";
    case OTA_RULE_PULL_NEEDS_UPGRADE:
        return "pull-needs-upgrade";
    case OTA_RULE_IMAGE_READY_OWNED_BY_CONTROLLER:
        return "image-ready-owned-by-controller";
    case OTA_RULE_RESULT_OWNED_BY_CONTROLLER:
        return "result-owned-by-controller";
    case OTA_RULE_BAD_PULL_REQUEST:
        return "bad-pull-request";
    case OTA_RULE_PULL_WRONG_REVISION:
        return "pull-wrong-revision";
    case OTA_RULE_PULL_REQUESTED_BY_NODE_USERS:
        return "pull-requested-by-node-users";
    case OTA_RULE_DUPLICATE_CONDITION:
        return "duplicate-condition";
    case OTA_RULE_CO_WRITER_SAME_REVISION:
        return "co-writer-same-revision";
    case OTA_RULE_CO_WRITER_NEED_UPGRADE_ONLY:
        return "co-writer-need-upgrade-only";
    case OTA_RULE_PULL_NEEDS_DAEMONSET:
        return "pull-needs-daemonset";
    case OTA_RULE_AUTO_PREPULL_OWNED_BY_CONTROLLER:
        return "auto-prepull-owned-by-controller";
    case OTA_RULE_AUTO_PREPULL_NEEDS_OPT_IN:
        return "auto-prepull-needs-opt-in";
    case OTA_RULE_UNKNOWN_UPDATE_STRATEGY:
        return "unknown-update-strategy";
    case OTA_RULE_OTA_REQUIRES_ONDELETE:
        return "ota-requires-ondelete";
    case OTA_RULE_BAD_PREPULL_TIMEOUT:
        return "bad-prepull-timeout";
    case OTA_RULE_IPJ_MALFORMED:
        return "imagepulljob-malformed";
    case OTA_RULE_IPJ_IMAGE_EMPTY:
        return "imagepulljob-image-empty";
    case OTA_RULE_IPJ_INVALID_IMAGE:
        return "imagepulljob-invalid-image";
    case OTA_RULE_IPJ_NAMES_AND_LABELS:
        return "imagepulljob-names-and-labels";
    case OTA_RULE_IPJ_DUPLICATED_NAMES:
        return "imagepulljob-duplicated-names";
    case OTA_RULE_IPJ_INVALID_SELECTOR:
        return "imagepulljob-invalid-selector";
    case OTA_RULE_IPJ_SELECTOR_AND_POD_SELECTOR:
        return "imagepulljob-selector-and-pod-selector";
    case OTA_RULE_IPJ_INVALID_POD_SELECTOR:
        return "imagepulljob-invalid-pod-selector";
    case OTA_RULE_IPJ_PARALLELISM_PERCENTAGE:
        return "imagepulljob-parallelism-percentage";
    case OTA_RULE_IPJ_PARALLELISM_NOT_INTEGER:
        return "imagepulljob-parallelism-not-integer";
    case OTA_RULE_IPJ_UNKNOWN_COMPLETION_POLICY:
        return "imagepulljob-unknown-completion-policy";
    case OTA_RULE_IPJ_DEADLINE_BELOW_TIMEOUT:
        return "imagepulljob-deadline-below-timeout";
    case OTA_RULE_IPJ_DEADLINE_TTL_NEED_ALWAYS:
        return "imagepulljob-deadline-ttl-need-always";
    case OTA_RULE_IPJ_PULL_SECRETS_IMMUTABLE:
        return "imagepulljob-pull-secrets-immutable";
    case OTA_RULE_IC_MALFORMED:
        return "imagecache-malformed";
    case OTA_RULE_IC_NO_IMAGES:
        return "imagecache-no-images";
    case OTA_RULE_IC_DUPLICATE_IMAGE:
        return "imagecache-duplicate-image";
    case OTA_RULE_IC_LIST_COUNT_CHANGED:
        return "imagecache-list-count-changed";
    case OTA_RULE_IC_NODE_SELECTOR_CHANGED:
        return "imagecache-node-selector-changed";
    }
    return NULL;
}

ota_verdict ota_rule_deny(arena *a, ota_rule rule, const char *state, const char *fmt, ...)
{
    const char *name = ota_rule_name(rule);
    ota_verdict v = {0, rule, name};
    va_list ap;
    va_start(ap, fmt);
    const char *what = arena_vprintf(a, fmt, ap);
    va_end(ap);
    if (what == NULL)
        return v;
    const char *message = state != NULL ? arena_printf(a, "%s; rule: %s, state: %s", what, name, state)
                                        : arena_printf(a, "%s; rule: %s", what, name);
    if (message != NULL)
        v.message = message;
    return v;
}

/*
 * ota_rule.h - the rules a denial names, each spelled once.
 *
 * Every verdict of the rulebook (ota_state.h for pods/status, ota_daemonset.h
 * for DaemonSets) and of the webhook's ImagePullJob and ImageCache checks
 * that denies names one of these.  The name is part of the wire: it ends
 * every denial message ("...; rule: own-node-only") and is the rule label
 * of ota_webhook_denials_total, which the webhook reads from the enum,
 * never from the text.
 */
#ifndef OTA_RULE_H
#define OTA_RULE_H

#include "arena.h"

/* In the order of the metrics page. */
typedef enum ota_rule {
    OTA_RULE_NONE, /* nothing denied */
    /* pods/status (ota_state.c) */
    OTA_RULE_OWN_NODE_ONLY,
    OTA_RULE_NEED_UPGRADE_OWNED_BY_CONTROLLER,
    OTA_RULE_PULL_NEEDS_UPGRADE,
    OTA_RULE_IMAGE_READY_OWNED_BY_CONTROLLER,
    OTA_RULE_RESULT_OWNED_BY_CONTROLLER,
    OTA_RULE_BAD_PULL_REQUEST,
    OTA_RULE_PULL_WRONG_REVISION,
    OTA_RULE_PULL_REQUESTED_BY_NODE_USERS,
    OTA_RULE_DUPLICATE_CONDITION,
    OTA_RULE_CO_WRITER_SAME_REVISION,
    OTA_RULE_CO_WRITER_NEED_UPGRADE_ONLY,
    OTA_RULE_PULL_NEEDS_DAEMONSET,
    OTA_RULE_AUTO_PREPULL_OWNED_BY_CONTROLLER,
    OTA_RULE_AUTO_PREPULL_NEEDS_OPT_IN,
    /* DaemonSets (ota_daemonset.c) */
    OTA_RULE_UNKNOWN_UPDATE_STRATEGY,
    OTA_RULE_OTA_REQUIRES_ONDELETE,
    OTA_RULE_BAD_PREPULL_TIMEOUT,
    /* ImagePullJobs (webhook/admit_imagepulljob.c): Kruise's rules, whose
     * messages are Kruise's own (no "; rule:" suffix) */
    OTA_RULE_IPJ_MALFORMED,
    OTA_RULE_IPJ_IMAGE_EMPTY,
    OTA_RULE_IPJ_INVALID_IMAGE,
    OTA_RULE_IPJ_NAMES_AND_LABELS,
    OTA_RULE_IPJ_DUPLICATED_NAMES,
    OTA_RULE_IPJ_INVALID_SELECTOR,
    OTA_RULE_IPJ_SELECTOR_AND_POD_SELECTOR,
    OTA_RULE_IPJ_INVALID_POD_SELECTOR,
    OTA_RULE_IPJ_PARALLELISM_PERCENTAGE,
    OTA_RULE_IPJ_PARALLELISM_NOT_INTEGER,
    OTA_RULE_IPJ_UNKNOWN_COMPLETION_POLICY,
    OTA_RULE_IPJ_DEADLINE_BELOW_TIMEOUT,
    OTA_RULE_IPJ_DEADLINE_TTL_NEED_ALWAYS,
    OTA_RULE_IPJ_PULL_SECRETS_IMMUTABLE,
    /* ImageCaches (webhook/admit_imagecache.c): kube-fledged's rules,
     * whose messages are kube-fledged's own (no "; rule:" suffix) */
    OTA_RULE_IC_MALFORMED,
    OTA_RULE_IC_NO_IMAGES,
    OTA_RULE_IC_DUPLICATE_IMAGE,
    OTA_RULE_IC_LIST_COUNT_CHANGED,
    OTA_RULE_IC_NODE_SELECTOR_CHANGED,
    OTA_N_RULES
} ota_rule;

/* "own-node-only", ...: lower case, digits and dashes, a metrics label
 * value as it is.  NULL for OTA_RULE_NONE and anything not a rule. */
const char *ota_rule_name(ota_rule rule);

typedef struct ota_verdict {
    int allowed;
    ota_rule rule;       /* on denial: which rule (OTA_RULE_NONE when allowed) */
    const char *message; /* on denial: names the object and the rule (arena) */
} ota_verdict;

/*
 * The one way to deny: the message is fmt's text, then "; rule: NAME",
 * then ", state: STATE" when state is not NULL (a pod's OTA state).  From
 * a; when a is out of memory the message is the rule's name alone.
 */
ota_verdict ota_rule_deny(arena *a, ota_rule rule, const char *state, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

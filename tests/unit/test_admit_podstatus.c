/*
 * test_admit_podstatus.c - the pods/status mutations of docs/design.md §4, each case
 * through admit_review(ADMIT_MUTATE, ...): the response's base64 patch is
 * decoded and compared with the exact RFC 6902 operations (op, path,
 * value) we expect, built against the object the apiserver sent.
 */
#include "review_fixture.h"

#include "admit_podstatus.h"

#define H "5d8f6c9b7d"
#define H_OLD "7c9d5f8b64"

/* ---- conditions, as JSON text ------------------------------------------- */

#define C_INIT                                                                                     \
    "{\"type\":\"Initialized\",\"status\":\"True\",\"lastProbeTime\":null,"                       \
    "\"lastTransitionTime\":\"2026-11-02T07:14:33Z\"}"
#define C_READY                                                                                    \
    "{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null,"                             \
    "\"lastTransitionTime\":\"2026-11-21T20:58:12Z\"}"
#define C_NOT_READY                                                                                \
    "{\"type\":\"Ready\",\"status\":\"False\",\"lastProbeTime\":null,"                            \
    "\"lastTransitionTime\":\"2026-11-21T21:29:58Z\",\"reason\":\"ContainersNotReady\"}"
#define C_NU                                                                                       \
    "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"lastProbeTime\":null,"                    \
    "\"lastTransitionTime\":\"2026-11-21T19:40:05Z\",\"message\":\"controllerrevision: " H "\"}"
/* The same condition as another encoder spells it: whitespace, key order
 * and escapes must reach the patch byte for byte. */
#define C_NU_SPELLED                                                                               \
    "{ \"message\" : \"controllerrevision: \\u0035d8f6c9b7d\",\n\t\"type\": \"PodNeedUpgrade\", "  \
    "\"status\": \"True\", \"lastTransitionTime\": \"2026-11-21T19:40:05Z\" }"
#define C_NU_STALE                                                                                 \
    "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"lastProbeTime\":null,"                    \
    "\"lastTransitionTime\":\"2026-11-20T08:00:00Z\",\"message\":\"controllerrevision: " H_OLD "\"}"
#define C_NU_RETIMED                                                                               \
    "{\"type\":\"PodNeedUpgrade\",\"status\":\"True\",\"lastProbeTime\":null,"                    \
    "\"lastTransitionTime\":\"2026-11-21T21:00:00Z\",\"message\":\"controllerrevision: " H "\"}"
#define C_NU_FALSE                                                                                 \
    "{\"type\":\"PodNeedUpgrade\",\"status\":\"False\",\"lastProbeTime\":null,"                   \
    "\"lastTransitionTime\":\"2026-11-21T19:40:05Z\"}"
#define C_IR_WAIT                                                                                  \
    "{\"type\":\"PodImageReady\",\"status\":\"False\",\"lastProbeTime\":null,"                    \
    "\"lastTransitionTime\":\"2026-11-21T21:02:00Z\",\"reason\":\"WaitPullImage\","               \
    "\"message\":\"controllerrevision: " H "\"}"
#define C_IR_WAIT_NO_MSG                                                                           \
    "{\"type\":\"PodImageReady\",\"status\":\"False\",\"lastProbeTime\":null,"                    \
    "\"lastTransitionTime\":\"2026-11-21T21:02:00Z\",\"reason\":\"WaitPullImage\"}"
/* YurtHub's imagepull: status and message, nothing else */
#define C_IR_ASK "{\"type\":\"PodImageReady\",\"status\":\"False\",\"message\":\"controllerrevision: " H "\"}"
#define C_IR_BARE "{\"type\":\"PodImageReady\",\"status\":\"False\"}"
#define C_IR_EMPTY "{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"\",\"message\":\"\"}"
#define C_IR_OK                                                                                    \
    "{\"type\":\"PodImageReady\",\"status\":\"True\",\"lastProbeTime\":null,"                     \
    "\"lastTransitionTime\":\"2026-11-21T21:05:41Z\",\"reason\":\"PullImageSuccess\","            \
    "\"message\":\"controllerrevision: " H "\"}"
/* kubectl's complete request, its own time in the second of the failure
 * before it (C_IR_FAIL_T), or later */
#define C_IR_WAIT_AT(t)                                                                            \
    "{\"type\":\"PodImageReady\",\"status\":\"False\",\"lastTransitionTime\":\"" t "\","         \
    "\"reason\":\"WaitPullImage\",\"message\":\"controllerrevision: " H "\"}"
#define C_IR_FAIL_T                                                                                \
    "{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"PullImageFail\","              \
    "\"lastTransitionTime\":\"2026-11-21T21:30:00Z\","                                           \
    "\"message\":\"pull image job ota-prepull-q7x failed: ErrImagePull\"}"
#define C_IR_WAIT_AT_OLD                                                                           \
    "{\"type\":\"PodImageReady\",\"status\":\"False\",\"lastTransitionTime\":\"2026-11-21T21:02:00Z\"," \
    "\"reason\":\"WaitPullImage\",\"message\":\"controllerrevision: " H_OLD "\"}"
/* a result written in the future of FX_NOW (clocks apart, or a retry in
 * the same second) */
#define C_IR_OK_LATER                                                                              \
    "{\"type\":\"PodImageReady\",\"status\":\"True\",\"lastTransitionTime\":\"2099-01-01T00:00:00Z\"," \
    "\"reason\":\"PullImageSuccess\",\"message\":\"controllerrevision: " H "\"}"
#define C_IR_FAIL                                                                                  \
    "{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"PullImageFail\","              \
    "\"message\":\"pull image job ota-prepull-q7x failed: ErrImagePull\"}"

/* AutoPrePull (issue 22): the controller's mark that the DaemonSet opted in
 * for revision H, its opt-out, and a forgery's older revision */
#define C_AP                                                                                       \
    "{\"type\":\"ota-prepull.openyurt.io/AutoPrePull\",\"status\":\"True\",\"lastProbeTime\":null," \
    "\"lastTransitionTime\":\"2026-11-21T19:40:05Z\",\"reason\":\"DaemonSetOptedIn\","          \
    "\"message\":\"controllerrevision: " H "\"}"
#define C_AP_OUT                                                                                   \
    "{\"type\":\"ota-prepull.openyurt.io/AutoPrePull\",\"status\":\"False\",\"lastProbeTime\":null," \
    "\"lastTransitionTime\":\"2026-11-21T20:00:00Z\",\"reason\":\"OptedOut\","                  \
    "\"message\":\"controllerrevision: " H "\"}"
#define C_AP_STALE                                                                                 \
    "{\"type\":\"ota-prepull.openyurt.io/AutoPrePull\",\"status\":\"True\","                     \
    "\"lastTransitionTime\":\"2026-11-20T08:00:00Z\",\"reason\":\"DaemonSetOptedIn\","          \
    "\"message\":\"controllerrevision: " H_OLD "\"}"

/* A pod of a DaemonSet, owners: its ownerReferences (JSON array text). */
#define POD_OWNED(owners, status)                                                                  \
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"agent-x7k2p\","             \
    "\"namespace\":\"edge\",\"labels\":{\"controller-revision-hash\":\"" H_OLD "\"},"              \
    "\"ownerReferences\":" owners "},"                                                            \
    "\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{\"name\":\"agent\",\"image\":\"a:v1\"}]}" \
    status "}"
#define DS_OWNER                                                                                   \
    "[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"agent\",\"uid\":\"ds-1\","     \
    "\"controller\":true,\"blockOwnerDeletion\":true}]"
#define POD_WITH(status) POD_OWNED(DS_OWNER, status)
#define POD(...) POD_WITH(",\"status\":{\"phase\":\"Running\",\"conditions\":[" __VA_ARGS__ "]}")

/* ---- expected operations ------------------------------------------------- */

#define OP_STR(op, path, v) "{\"op\":\"" op "\",\"path\":\"" path "\",\"value\":\"" v "\"}"
#define OP_RAW(op, path, raw) "{\"op\":\"" op "\",\"path\":\"" path "\",\"value\":" raw "}"
#define COND(i) "/status/conditions/" #i
#define STAMP(i)                                                                                   \
    OP_STR("add", COND(i) "/reason", "WaitPullImage") ","                                          \
        OP_STR("add", COND(i) "/lastTransitionTime", FX_NOW)
#define FILL(i) OP_STR("add", COND(i) "/message", "controllerrevision: " H)
#define APPEND(raw) OP_RAW("add", "/status/conditions/-", raw)
/* AutoPrePull at index i taken over by a node user's request for H */
#define TAKEN(i)                                                                                   \
    OP_STR("add", COND(i) "/status", "False") "," OP_STR("add", COND(i) "/reason", "NodeUserRequest") \
        "," OP_STR("add", COND(i) "/message", "controllerrevision: " H) ","                        \
        OP_STR("add", COND(i) "/lastTransitionTime", FX_NOW)
#define PATCH(...) "[" __VA_ARGS__ "]"

#define NODE "system:node:node-1", "[\"system:nodes\",\"system:authenticated\"]"
#define OTHER_NODE "system:node:node-2", "[\"system:nodes\",\"system:authenticated\"]"
#define ALICE "alice", "[\"system:authenticated\"]"
#define CONTROLLER FX_CONTROLLER, "[\"system:serviceaccounts\"]"
#define CO_WRITER FX_CO_WRITER, "[\"system:serviceaccounts\"]"
/* yurt-manager's imagepreheat, not in FX_CO_WRITERS: a node user */
#define PREHEAT "system:serviceaccount:kube-system:yurt-manager-image-preheat-controller", \
                "[\"system:serviceaccounts\"]"
#define MASTER "kubernetes-admin", "[\"system:masters\",\"system:authenticated\"]"

#define STAMPED ADMIT_MUT_STAMP_REASON
#define KEPT ADMIT_MUT_KEEP_REQUEST_TIME
#define AFTER ADMIT_MUT_REQUEST_TIME_AFTER
#define FILLED ADMIT_MUT_FILL_MESSAGE
#define NU_BACK ADMIT_MUT_RESTORE_NEED_UPGRADE
#define IR_BACK ADMIT_MUT_RESTORE_IMAGE_READY
#define AP_BACK ADMIT_MUT_RESTORE_AUTO_PREPULL
#define AP_TAKEN ADMIT_MUT_AUTO_PREPULL_TAKEN

typedef struct mutation_row {
    const char *name;
    const char *username, *groups;
    const char *old_pod, *new_pod;
    const char *patch; /* exact text, or NULL: no patch at all */
    unsigned mutations;
    const char *mutation_names;
} mutation_row;

static const mutation_row rows[] = {
    /* ---- pre-pull requests ---- */
    {"kubectl's complete request: nothing to add", NODE, POD(C_INIT "," C_READY "," C_NU),
     POD(C_INIT "," C_READY "," C_NU "," C_IR_WAIT), NULL, 0, ""},
    {"YurtHub's request (no reason, array rewritten and reordered)", NODE,
     POD(C_INIT "," C_READY "," C_NU), POD(C_IR_ASK "," C_NU "," C_READY "," C_INIT),
     PATCH(STAMP(0)), STAMPED, "stamp-reason"},
    {"request without reason at the end of the array", ALICE, POD(C_INIT "," C_READY "," C_NU),
     POD(C_INIT "," C_READY "," C_NU "," C_IR_ASK), PATCH(STAMP(3)), STAMPED, "stamp-reason"},
    {"request without reason or message", NODE, POD(C_INIT "," C_READY "," C_NU),
     POD(C_INIT "," C_READY "," C_NU "," C_IR_BARE), PATCH(STAMP(3) "," FILL(3)), STAMPED | FILLED,
     "stamp-reason,fill-message"},
    {"request with reason, without message", NODE, POD(C_NU),
     POD(C_NU "," C_IR_WAIT_NO_MSG), PATCH(FILL(1)), FILLED, "fill-message"},
    {"request with reason \"\" and message \"\"", NODE, POD(C_NU), POD(C_IR_EMPTY "," C_NU),
     PATCH(STAMP(0) "," FILL(0)), STAMPED | FILLED, "stamp-reason,fill-message"},
    {"retry after a failure", NODE, POD(C_READY "," C_NU "," C_IR_FAIL),
     POD(C_READY "," C_NU "," C_IR_ASK), PATCH(STAMP(2)), STAMPED, "stamp-reason"},
    {"repeat of an unchanged reason-less request: no new time", NODE, POD(C_NU "," C_IR_ASK),
     POD(C_IR_ASK "," C_NU "," C_READY), NULL, 0, ""},
    {"no message to copy: PodNeedUpgrade absent", NODE, POD(C_READY), POD(C_READY "," C_IR_BARE),
     PATCH(STAMP(1)), STAMPED, "stamp-reason"},
    {"no message to copy: PodNeedUpgrade without one", NODE, POD(C_NU_FALSE),
     POD(C_NU_FALSE "," C_IR_BARE), PATCH(STAMP(1)), STAMPED, "stamp-reason"},
    /* ---- the request's time names its Job (issue 10 §4) ---- */
    {"YurtHub repeats the request while it is pulled: the stored time stays", NODE,
     POD(C_READY "," C_NU "," C_IR_WAIT), POD(C_IR_ASK "," C_NU "," C_READY),
     PATCH(OP_STR("add", COND(0) "/reason", "WaitPullImage") ","
           OP_STR("add", COND(0) "/lastTransitionTime", "2026-11-21T21:02:00Z")),
     STAMPED | KEPT, "stamp-reason,keep-request-time"},
    {"bare repeat while pulled: message filled, stored time", NODE, POD(C_NU "," C_IR_WAIT),
     POD(C_NU "," C_IR_BARE),
     PATCH(OP_STR("add", COND(1) "/reason", "WaitPullImage") ","
           OP_STR("add", COND(1) "/lastTransitionTime", "2026-11-21T21:02:00Z") "," FILL(1)),
     STAMPED | KEPT | FILLED, "stamp-reason,fill-message,keep-request-time"},
    {"kubectl repeats the request with a new time: the stored time stays", NODE,
     POD(C_NU "," C_IR_WAIT), POD(C_NU "," C_IR_WAIT_AT("2026-11-21T21:29:00Z")),
     PATCH(OP_STR("add", COND(1) "/lastTransitionTime", "2026-11-21T21:02:00Z")), KEPT,
     "keep-request-time"},
    {"repeat with a fraction of a second: the stored time stays", NODE,
     POD(C_NU "," C_IR_WAIT), POD(C_NU "," C_IR_WAIT_AT("2026-11-21T21:02:00.5Z")),
     PATCH(OP_STR("add", COND(1) "/lastTransitionTime", "2026-11-21T21:02:00Z")), KEPT,
     "keep-request-time"},
    {"kubectl's retry in the second of the failure: one second later", NODE,
     POD(C_NU "," C_IR_FAIL_T), POD(C_NU "," C_IR_WAIT_AT("2026-11-21T21:30:00Z")),
     PATCH(OP_STR("add", COND(1) "/lastTransitionTime", "2026-11-21T21:30:01Z")), AFTER,
     "request-time-after-stored"},
    {"kubectl's retry with a time before the failure: one second after it", NODE,
     POD(C_NU "," C_IR_FAIL_T), POD(C_NU "," C_IR_WAIT_AT("2026-11-21T21:29:59Z")),
     PATCH(OP_STR("add", COND(1) "/lastTransitionTime", "2026-11-21T21:30:01Z")), AFTER,
     "request-time-after-stored"},
    {"kubectl's retry after the failure's second: its own time", NODE,
     POD(C_NU "," C_IR_FAIL_T), POD(C_NU "," C_IR_WAIT_AT("2026-11-21T21:30:01Z")), NULL, 0, ""},
    {"YurtHub's re-pull after a result stamped later than now: one second after it", NODE,
     POD(C_NU "," C_IR_OK_LATER), POD(C_NU "," C_IR_ASK),
     PATCH(OP_STR("add", COND(1) "/reason", "WaitPullImage") ","
           OP_STR("add", COND(1) "/lastTransitionTime", "2099-01-01T00:00:01Z")),
     STAMPED | AFTER, "stamp-reason,request-time-after-stored"},
    {"request for another revision than the pending one: a new time", NODE,
     POD(C_NU "," C_IR_WAIT_AT_OLD), POD(C_NU "," C_IR_ASK), PATCH(STAMP(1)), STAMPED,
     "stamp-reason"},
    {"a result is not a request", NODE, POD(C_NU "," C_IR_WAIT), POD(C_NU "," C_IR_FAIL), NULL, 0,
     ""},

    /* ---- restoring what a non-controller write dropped or altered ---- */
    {"PodNeedUpgrade dropped by YurtHub's rewrite", NODE, POD(C_INIT "," C_READY "," C_NU),
     POD(C_IR_ASK "," C_READY "," C_INIT), PATCH(STAMP(0) "," APPEND(C_NU)), STAMPED | NU_BACK,
     "stamp-reason,restore-need-upgrade"},
    {"PodNeedUpgrade dropped, message filled from oldObject's", NODE, POD(C_READY "," C_NU),
     POD(C_IR_BARE "," C_READY), PATCH(STAMP(0) "," FILL(0) "," APPEND(C_NU)),
     STAMPED | FILLED | NU_BACK, "stamp-reason,fill-message,restore-need-upgrade"},
    {"PodNeedUpgrade dropped by a routine write", ALICE, POD(C_READY "," C_NU),
     POD(C_NOT_READY), PATCH(APPEND(C_NU)), NU_BACK, "restore-need-upgrade"},
    {"PodNeedUpgrade copied back verbatim, as oldObject spells it", NODE,
     POD(C_READY "," C_NU_SPELLED), POD(C_READY), PATCH(APPEND(C_NU_SPELLED)), NU_BACK,
     "restore-need-upgrade"},
    {"PodNeedUpgrade altered (a stale cache): replaced at its index", NODE,
     POD(C_INIT "," C_READY "," C_NU), POD(C_IR_ASK "," C_NU_STALE "," C_READY "," C_INIT),
     PATCH(STAMP(0) "," OP_RAW("replace", COND(1), C_NU)), STAMPED | NU_BACK,
     "stamp-reason,restore-need-upgrade"},
    {"PodNeedUpgrade altered: the message comes from the restored one", NODE,
     POD(C_READY "," C_NU), POD(C_READY "," C_NU_STALE "," C_IR_BARE),
     PATCH(STAMP(2) "," FILL(2) "," OP_RAW("replace", COND(1), C_NU)), STAMPED | FILLED | NU_BACK,
     "stamp-reason,fill-message,restore-need-upgrade"},
    {"indexes count null elements of the array", NODE, POD(C_NU),
     POD("null," C_NU_STALE ",null," C_IR_BARE),
     PATCH(STAMP(3) "," FILL(3) "," OP_RAW("replace", COND(1), C_NU)), STAMPED | FILLED | NU_BACK,
     "stamp-reason,fill-message,restore-need-upgrade"},
    {"PodNeedUpgrade with only a new lastTransitionTime: replaced", ALICE,
     POD(C_READY "," C_NU), POD(C_READY "," C_NU_RETIMED),
     PATCH(OP_RAW("replace", COND(1), C_NU)), NU_BACK, "restore-need-upgrade"},
    {"PodNeedUpgrade set to False by a node: replaced", NODE, POD(C_NU), POD(C_NU_FALSE),
     PATCH(OP_RAW("replace", COND(0), C_NU)), NU_BACK, "restore-need-upgrade"},
    {"PodNeedUpgrade re-spelled but identical: left alone", NODE, POD(C_READY "," C_NU_SPELLED),
     POD(C_NU "," C_READY), NULL, 0, ""},
    {"PodNeedUpgrade added by a node: nothing to restore", NODE, POD(C_READY),
     POD(C_READY "," C_NU), NULL, 0, ""},
    {"PodImageReady dropped", NODE, POD(C_INIT "," C_NU "," C_IR_OK), POD(C_INIT "," C_NU),
     PATCH(APPEND(C_IR_OK)), IR_BACK, "restore-image-ready"},
    {"PodImageReady altered: not restored (validation decides)", NODE, POD(C_NU "," C_IR_OK),
     POD(C_NU "," C_IR_FAIL), NULL, 0, ""},
    {"both dropped: appended in order", NODE, POD(C_INIT "," C_NU "," C_IR_OK "," C_READY),
     POD(C_NOT_READY "," C_INIT), PATCH(APPEND(C_NU) "," APPEND(C_IR_OK)), NU_BACK | IR_BACK,
     "restore-need-upgrade,restore-image-ready"},
    {"PodNeedUpgrade altered and PodImageReady dropped", NODE, POD(C_INIT "," C_NU "," C_IR_OK),
     POD(C_NU_STALE "," C_INIT), PATCH(OP_RAW("replace", COND(0), C_NU) "," APPEND(C_IR_OK)),
     NU_BACK | IR_BACK, "restore-need-upgrade,restore-image-ready"},
    {"dropped by the node of another node: restored too", OTHER_NODE, POD(C_NU "," C_IR_OK),
     POD(C_READY), PATCH(APPEND(C_NU) "," APPEND(C_IR_OK)), NU_BACK | IR_BACK,
     "restore-need-upgrade,restore-image-ready"},

    /* ---- objects without the array to append to ---- */
    {"status without conditions: the whole array", NODE, POD(C_NU "," C_IR_OK),
     POD_WITH(",\"status\":{\"phase\":\"Running\"}"),
     PATCH(OP_RAW("add", "/status/conditions", "[" C_NU "," C_IR_OK "]")), NU_BACK | IR_BACK,
     "restore-need-upgrade,restore-image-ready"},
    {"status.conditions null: the whole array", NODE, POD(C_NU),
     POD_WITH(",\"status\":{\"conditions\":null,\"phase\":\"Running\"}"),
     PATCH(OP_RAW("add", "/status/conditions", "[" C_NU "]")), NU_BACK, "restore-need-upgrade"},
    {"no status: the whole status", NODE, POD(C_NU "," C_IR_OK), POD_WITH(""),
     PATCH(OP_RAW("add", "/status", "{\"conditions\":[" C_NU "," C_IR_OK "]}")), NU_BACK | IR_BACK,
     "restore-need-upgrade,restore-image-ready"},
    {"status null: the whole status", NODE, POD(C_IR_OK "," C_NU_SPELLED),
     POD_WITH(",\"status\":null"),
     PATCH(OP_RAW("add", "/status", "{\"conditions\":[" C_NU_SPELLED "," C_IR_OK "]}")),
     NU_BACK | IR_BACK, "restore-need-upgrade,restore-image-ready"},
    {"empty conditions array: appended", NODE, POD(C_NU), POD(""), PATCH(APPEND(C_NU)), NU_BACK,
     "restore-need-upgrade"},

    /* ---- who is never mutated ---- */
    {"controller drops both: its word", CONTROLLER, POD(C_NU "," C_IR_OK), POD(C_READY), NULL, 0,
     ""},
    {"controller alters PodNeedUpgrade", CONTROLLER, POD(C_NU), POD(C_NU_STALE), NULL, 0, ""},
    {"controller writes a reason-less request: not stamped", CONTROLLER, POD(C_NU),
     POD(C_NU "," C_IR_BARE), NULL, 0, ""},
    /* a co-writer's write is taken as written or refused by the validating
     * webhook (DECISIONS, "Co-writers of PodNeedUpgrade") */
    {"co-writer alters PodNeedUpgrade: not restored", CO_WRITER, POD(C_NU), POD(C_NU_STALE), NULL,
     0, ""},
    {"co-writer drops both: not restored", CO_WRITER, POD(C_NU "," C_IR_OK), POD(C_READY), NULL, 0,
     ""},
    {"co-writer writes a reason-less request: not stamped", CO_WRITER, POD(C_NU),
     POD(C_NU "," C_IR_BARE), NULL, 0, ""},
    {"an identity not listed as a co-writer: restored as any node user's", PREHEAT, POD(C_NU),
     POD(C_NU_STALE), PATCH(OP_RAW("replace", COND(0), C_NU)), NU_BACK, "restore-need-upgrade"},
    {"system:masters drops both: not restored", MASTER, POD(C_NU "," C_IR_OK), POD(C_READY), NULL,
     0, ""},
    {"system:masters alters PodNeedUpgrade: not restored", MASTER, POD(C_NU), POD(C_NU_FALSE), NULL,
     0, ""},
    {"system:masters' reason-less request: stamped", MASTER, POD(C_NU), POD(C_NU "," C_IR_BARE),
     PATCH(STAMP(1) "," FILL(1)), STAMPED | FILLED, "stamp-reason,fill-message"},
    {"system:masters' request, PodNeedUpgrade dropped: no message to copy", MASTER, POD(C_NU),
     POD(C_IR_BARE), PATCH(STAMP(0)), STAMPED, "stamp-reason"},

    /* ---- AutoPrePull (issue 22): the controller's, kept as stored; a node
     * user's request takes it over (False, NodeUserRequest, for H) ---- */
    {"AutoPrePull dropped by YurtHub's merge: appended", NODE, POD(C_READY "," C_NU "," C_AP),
     POD(C_NOT_READY "," C_NU), PATCH(APPEND(C_AP)), AP_BACK, "restore-auto-prepull"},
    {"AutoPrePull set False by a node: replaced", NODE, POD(C_NU "," C_AP),
     POD(C_NU "," C_AP_OUT), PATCH(OP_RAW("replace", COND(1), C_AP)), AP_BACK,
     "restore-auto-prepull"},
    {"AutoPrePull opt-out turned True by a user: replaced", ALICE, POD(C_NU "," C_AP_OUT),
     POD(C_AP "," C_NU), PATCH(OP_RAW("replace", COND(0), C_AP_OUT)), AP_BACK,
     "restore-auto-prepull"},
    {"all three dropped: appended in order", NODE, POD(C_NU "," C_IR_OK "," C_AP), POD(C_READY),
     PATCH(APPEND(C_NU) "," APPEND(C_IR_OK) "," APPEND(C_AP)), NU_BACK | IR_BACK | AP_BACK,
     "restore-need-upgrade,restore-image-ready,restore-auto-prepull"},
    {"AutoPrePull in a status without conditions: the whole array", NODE, POD(C_NU "," C_AP),
     POD_WITH(",\"status\":{\"phase\":\"Running\"}"),
     PATCH(OP_RAW("add", "/status/conditions", "[" C_NU "," C_AP "]")), NU_BACK | AP_BACK,
     "restore-need-upgrade,restore-auto-prepull"},
    {"AutoPrePull added by a node: nothing to restore (validation refuses)", NODE, POD(C_NU),
     POD(C_NU "," C_AP), NULL, 0, ""},
    {"request on an auto-marked pod: AutoPrePull taken", NODE, POD(C_INIT "," C_NU "," C_AP),
     POD(C_INIT "," C_NU "," C_AP "," C_IR_ASK), PATCH(STAMP(3) "," TAKEN(2)), STAMPED | AP_TAKEN,
     "stamp-reason,auto-prepull-taken"},
    {"kubectl's complete request on an auto-marked pod: only taken", NODE, POD(C_NU "," C_AP),
     POD(C_NU "," C_AP "," C_IR_WAIT), PATCH(TAKEN(1)), AP_TAKEN, "auto-prepull-taken"},
    {"YurtHub's request dropping AutoPrePull: restored, then taken", NODE,
     POD(C_INIT "," C_READY "," C_NU "," C_AP), POD(C_IR_ASK "," C_NU "," C_READY "," C_INIT),
     PATCH(STAMP(0) "," APPEND(C_AP) "," TAKEN(4)), STAMPED | AP_TAKEN,
     "stamp-reason,auto-prepull-taken"},
    {"request carrying a stale AutoPrePull: replaced, then taken", NODE, POD(C_NU "," C_AP),
     POD(C_NU "," C_AP_STALE "," C_IR_ASK),
     PATCH(STAMP(2) "," OP_RAW("replace", COND(1), C_AP) "," TAKEN(1)), STAMPED | AP_TAKEN,
     "stamp-reason,auto-prepull-taken"},
    /* the stored request time is kept: the running Job goes on, now the
     * node user's */
    {"request during the automatic pull of H: taken (served first)", NODE,
     POD(C_NU "," C_AP "," C_IR_WAIT), POD(C_NU "," C_AP "," C_IR_ASK),
     PATCH(OP_STR("add", COND(2) "/reason", "WaitPullImage") ","
           OP_STR("add", COND(2) "/lastTransitionTime", "2026-11-21T21:02:00Z") "," TAKEN(1)),
     STAMPED | KEPT | AP_TAKEN, "stamp-reason,keep-request-time,auto-prepull-taken"},
    {"request on an opted-out pod: AutoPrePull as it is", NODE, POD(C_NU "," C_AP_OUT),
     POD(C_NU "," C_AP_OUT "," C_IR_ASK), PATCH(STAMP(2)), STAMPED, "stamp-reason"},
    {"routine write during an automatic pull", NODE, POD(C_NU "," C_AP "," C_IR_WAIT),
     POD(C_NOT_READY "," C_NU "," C_AP "," C_IR_WAIT), NULL, 0, ""},
    {"controller writes the mark with PodNeedUpgrade: its word", CONTROLLER, POD(C_READY),
     POD(C_READY "," C_NU "," C_AP), NULL, 0, ""},
    {"controller drops AutoPrePull: its word", CONTROLLER, POD(C_NU "," C_AP), POD(C_NU), NULL, 0,
     ""},
    {"co-writer drops AutoPrePull: not restored (refused)", CO_WRITER, POD(C_NU "," C_AP),
     POD(C_NU), NULL, 0, ""},
    {"system:masters drops AutoPrePull: not restored", MASTER, POD(C_NU "," C_AP), POD(C_NU),
     NULL, 0, ""},
    {"system:masters' request on an auto-marked pod: taken", MASTER, POD(C_NU "," C_AP),
     POD(C_NU "," C_AP "," C_IR_BARE), PATCH(STAMP(2) "," FILL(2) "," TAKEN(1)),
     STAMPED | FILLED | AP_TAKEN, "stamp-reason,fill-message,auto-prepull-taken"},
    {"system:masters' request writing AutoPrePull itself: its word", MASTER, POD(C_NU "," C_AP),
     POD(C_NU "," C_AP_OUT "," C_IR_WAIT), NULL, 0, ""},

    /* ---- routine writes ---- */
    {"kubelet's routine write", NODE, POD(C_INIT "," C_READY "," C_NU "," C_IR_WAIT),
     POD(C_INIT "," C_NOT_READY "," C_NU "," C_IR_WAIT), NULL, 0, ""},
    {"routine write of a pod without OTA conditions", NODE, POD(C_INIT "," C_READY),
     POD(C_INIT "," C_NOT_READY), NULL, 0, ""},
    {"routine write of a pod with an unstamped request", NODE, POD(C_NU "," C_IR_BARE),
     POD(C_NOT_READY "," C_NU "," C_IR_BARE), NULL, 0, ""},
};

static void test_mutation_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const mutation_row *row = &rows[i];
        arena a;
        arena_init(&a);
        const char *body =
            fx_pod_status_review(&a, row->username, row->groups, row->old_pod, row->new_pod);
        admit_outcome out;
        const char *patch = fx_mutate(&a, body, &out);
        if (row->patch == NULL)
            FX_CHECK(row->name, patch == NULL, "unexpected patch %s", patch);
        else
            FX_CHECK(row->name, patch != NULL && strcmp(patch, row->patch) == 0,
                     "patch\n  got  %s\n  want %s", patch != NULL ? patch : "(none)", row->patch);
        FX_CHECK(row->name, out.mutations == row->mutations, "mutations 0x%x, want 0x%x",
                 out.mutations, row->mutations);
        const char *names = admit_mutation_names(out.mutations, &a);
        FX_CHECK(row->name, strcmp(names, row->mutation_names) == 0, "names \"%s\"", names);
        FX_CHECK(row->name, out.object_ref != NULL && strcmp(out.object_ref, "pod edge/agent-x7k2p") == 0,
                 "object_ref %s", out.object_ref);
        /* a warning per restored condition, naming it and why (issue 9:
         * kubectl printed "patched (no change)" and nothing else) */
        fx_response resp;
        fx_parse_response(&a, out.body, out.body_len, &resp);
        size_t want_n = (row->mutations & NU_BACK ? 1u : 0u) + (row->mutations & IR_BACK ? 1u : 0u) +
                        (row->mutations & AP_BACK ? 1u : 0u) + (row->mutations & AP_TAKEN ? 1u : 0u);
        FX_CHECK(row->name, resp.n_warnings == want_n, "%zu warnings, want %zu", resp.n_warnings,
                 want_n);
        size_t w = 0;
        if (row->mutations & NU_BACK) {
            int dropped = strstr(row->new_pod, "PodNeedUpgrade") == NULL;
            char want[200];
            snprintf(want, sizeof(want),
                     "ota-prepull: kept PodNeedUpgrade of pod edge/agent-x7k2p as stored: this "
                     "write %s it, and only the controller may change it",
                     dropped ? "dropped" : "changed");
            FX_CHECK(row->name, strcmp(resp.warnings[w], want) == 0, "warning\n  got  %s\n  want %s",
                     resp.warnings[w], want);
            w++;
        }
        if (row->mutations & IR_BACK) {
            FX_CHECK(row->name,
                     strcmp(resp.warnings[w],
                            "ota-prepull: kept PodImageReady of pod edge/agent-x7k2p as stored: this "
                            "write dropped it, and only the controller may remove it") == 0,
                     "warning %s", resp.warnings[w]);
            w++;
        }
        if (row->mutations & AP_BACK) {
            int dropped = strstr(row->new_pod, "AutoPrePull") == NULL;
            char want[200];
            snprintf(want, sizeof(want),
                     "ota-prepull: kept ota-prepull.openyurt.io/AutoPrePull of pod "
                     "edge/agent-x7k2p as stored: this write %s it, and only the controller may "
                     "change it",
                     dropped ? "dropped" : "changed");
            FX_CHECK(row->name, strcmp(resp.warnings[w], want) == 0, "warning\n  got  %s\n  want %s",
                     resp.warnings[w], want);
            w++;
        }
        if (row->mutations & AP_TAKEN)
            FX_CHECK(row->name,
                     strcmp(resp.warnings[w],
                            "ota-prepull: ota-prepull.openyurt.io/AutoPrePull of pod "
                            "edge/agent-x7k2p set False, reason NodeUserRequest: this pre-pull is "
                            "the node user's request now, served before automatic ones") == 0,
                     "warning %s", resp.warnings[w]);
        arena_free(&a);
    }
}

/* A pre-pull request on a pod no DaemonSet owns (issue 19: its DaemonSet
 * was deleted with --cascade=orphan, and the request sat in WaitPullImage
 * forever) is refused at admission: the stored pod's ownerReferences say
 * so without an API call.  The owner must be the controller reference, of
 * kind DaemonSet; what the write claims does not count.  The controller's
 * answer to such a request (PullImageFail, PodNeedUpgrade removed) is
 * allowed. */
static void test_pull_needs_daemonset(void **state)
{
    (void)state;
    static const char *const orphan_owners[] = {
        "[]",
        "null", /* absent, as Go's encoder omits an empty list */
        "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"x\",\"uid\":\"r\","
        "\"controller\":true}]",
        "[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"agent\",\"uid\":\"d\","
        "\"controller\":false}]",
        "[{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"agent\",\"uid\":\"d\"}]",
    };
#define ORPHAN(owners, ...)                                                                        \
    POD_OWNED(owners, ",\"status\":{\"phase\":\"Running\",\"conditions\":[" __VA_ARGS__ "]}")
    for (size_t i = 0; i < sizeof(orphan_owners) / sizeof(orphan_owners[0]); i++) {
        arena a;
        arena_init(&a);
        const char *owners = orphan_owners[i];
        char *old_pod = arena_printf(&a, ORPHAN("%s", C_READY "," C_NU), owners);
        /* the write claims a DaemonSet owner: the stored pod counts */
        const char *sent = fx_pod_status_review(&a, NODE, old_pod, POD(C_READY "," C_NU "," C_IR_WAIT));
        admit_outcome out;
        fx_response resp;
        fx_admit(&a, ADMIT_VALIDATE, sent, &out, &resp);
        if (resp.allowed)
            fail_msg("owners %s: allowed", owners);
        assert_string_equal(ota_rule_name(out.rule), "pull-needs-daemonset");
        assert_string_equal(resp.message,
                            "pod edge/agent-x7k2p has no DaemonSet owner (no controller "
                            "ownerReference of kind DaemonSet: its DaemonSet was deleted with "
                            "--cascade=orphan, or it never had one), so there is no revision to "
                            "pre-pull; rule: pull-needs-daemonset, state: PendingUpgrade");
        /* YurtHub's reason-less request too, and after a failure */
        sent = fx_pod_status_review(&a, NODE, old_pod, POD(C_READY "," C_NU "," C_IR_BARE));
        fx_admit(&a, ADMIT_VALIDATE, sent, &out, &resp);
        assert_false(resp.allowed);
        /* the controller's answer, and a master's write, are allowed */
        char *pulling = arena_printf(&a, ORPHAN("%s", C_READY "," C_NU "," C_IR_WAIT), owners);
        char *answered = arena_printf(&a, ORPHAN("%s", C_READY "," C_IR_FAIL), owners);
        sent = fx_pod_status_review(&a, CONTROLLER, pulling, answered);
        fx_admit(&a, ADMIT_VALIDATE, sent, &out, &resp);
        assert_true(resp.allowed);
        sent = fx_pod_status_review(&a, MASTER, old_pod, pulling);
        fx_admit(&a, ADMIT_VALIDATE, sent, &out, &resp);
        assert_true(resp.allowed);
        arena_free(&a);
    }
#undef ORPHAN
    /* and the DaemonSet's own pod is served, as every other row says */
    arena a;
    arena_init(&a);
    admit_outcome out;
    fx_response resp;
    fx_admit(&a, ADMIT_VALIDATE,
             fx_pod_status_review(&a, NODE, POD(C_READY "," C_NU),
                                  POD(C_READY "," C_NU "," C_IR_WAIT)),
             &out, &resp);
    assert_true(resp.allowed);
    arena_free(&a);
}

/* Mutation and validation work together: what the mutation restored and
 * stamped is what validation then allows (checked by applying the patch to
 * the new object's conditions by hand for YurtHub's request). */
static void test_yurthub_request_then_validation(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    /* What YurtHub sends after losing PodNeedUpgrade from its cache ... */
    const char *sent = fx_pod_status_review(&a, NODE, POD(C_READY "," C_NU),
                                            POD(C_IR_BARE "," C_READY));
    admit_outcome out;
    const char *patch = fx_mutate(&a, sent, &out);
    assert_non_null(patch);
    /* ... denied as sent (the mutating webhook's failurePolicy is Ignore) */
    fx_response resp;
    fx_admit(&a, ADMIT_VALIDATE, sent, &out, &resp);
    assert_false(resp.allowed);
    assert_string_equal(ota_rule_name(out.rule), "need-upgrade-owned-by-controller");
    /* ... and allowed as the patch leaves it. */
    const char *patched = fx_pod_status_review(
        &a, NODE, POD(C_READY "," C_NU),
        POD("{\"type\":\"PodImageReady\",\"status\":\"False\",\"reason\":\"WaitPullImage\","
            "\"lastTransitionTime\":\"" FX_NOW "\",\"message\":\"controllerrevision: " H "\"},"
            C_READY "," C_NU));
    fx_admit(&a, ADMIT_VALIDATE, patched, &out, &resp);
    assert_true(resp.allowed);
    assert_null(fx_mutate(&a, patched, &out)); /* and a fixed point */
    arena_free(&a);
}

/* admit_podstatus_mutate on its own: the bits it returns, and it appends to a
 * patch that already has operations. */
static void test_mutate_appends_to_patch(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    const char *body =
        fx_pod_status_review(&a, NODE, POD(C_NU "," C_IR_OK), POD(C_IR_BARE));
    review rv;
    char err[256];
    assert_int_equal(review_decode(&rv, body, strlen(body), &a, err, sizeof(err)), 0);
    jpatch p;
    assert_int_equal(jpatch_init(&p, &a), 0);
    jpatch_add_string(&p, "add", "/x", "y", 1);
    ota_requester who = ota_requester_of(rv.username, rv.is_master, FX_CONTROLLER, NULL);
    unsigned did = admit_podstatus_mutate(&rv, &who, "T", &p, &a);
    assert_int_equal(did, STAMPED | FILLED | NU_BACK);
    assert_int_equal(p.n_ops, 5);
    const char *out;
    size_t len;
    assert_int_equal(jpatch_finish(&p, &out, &len), 0);
    assert_string_equal(out, PATCH(OP_STR("add", "/x", "y") ","
                                   OP_STR("add", COND(0) "/reason", "WaitPullImage") ","
                                   OP_STR("add", COND(0) "/lastTransitionTime", "T") ","
                                   FILL(0) "," APPEND(C_NU)));
    assert_int_equal(len, strlen(out));
    arena_free(&a);
}

/* The first PodNeedUpgrade is the one restored and the one replaced. */
static void test_duplicate_conditions(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    admit_outcome out;
    const char *patch = fx_mutate(
        &a,
        fx_pod_status_review(&a, NODE, POD(C_NU "," C_NU_STALE),
                             POD(C_READY "," C_NU_STALE "," C_NU)),
        &out);
    assert_non_null(patch);
    assert_string_equal(patch, PATCH(OP_RAW("replace", COND(1), C_NU)));
    arena_free(&a);
}

/* Anything but a pods/status UPDATE is left alone, even with OTA-looking
 * conditions dropped. */
static void test_other_requests_untouched(void **state)
{
    (void)state;
    static const struct {
        const char *group, *resource, *sub, *operation;
    } others[] = {
        {"", "pods", NULL, "UPDATE"},          /* the main resource */
        {"", "pods", "ephemeralcontainers", "UPDATE"},
        {"", "pods", "status", "CREATE"},
        {"", "pods", "status", "DELETE"},
        {"apps", "pods", "status", "UPDATE"}, /* not the core group */
        {"", "nodes", "status", "UPDATE"},
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        arena a;
        arena_init(&a);
        fx_request r = {.group = others[i].group, .version = "v1", .resource = others[i].resource,
                        .sub_resource = others[i].sub, .operation = others[i].operation,
                        .namespace = "edge", .name = "agent-x7k2p", .username = "alice",
                        .object = POD(C_IR_BARE), .old_object = POD(C_NU "," C_IR_OK)};
        admit_outcome out;
        FX_CHECK(others[i].resource, fx_mutate(&a, fx_review(&a, &r), &out) == NULL, "patched");
        FX_CHECK(others[i].resource, out.object_ref == NULL, "object_ref %s", out.object_ref);
        arena_free(&a);
    }
}

static void test_mutation_names(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    assert_string_equal(admit_mutation_names(0, &a), "");
    assert_string_equal(admit_mutation_names(ADMIT_MUT_ONDELETE, &a), "ondelete");
    assert_string_equal(admit_mutation_names(~0u, &a),
                        "ondelete,stamp-reason,fill-message,restore-need-upgrade,"
                        "restore-image-ready,keep-request-time,request-time-after-stored,"
                        "restore-auto-prepull,auto-prepull-taken,imagepulljob-defaults");
    assert_string_equal(admit_result_name(ADMIT_ALLOWED), "allowed");
    assert_string_equal(admit_result_name(ADMIT_PATCHED), "patched");
    assert_string_equal(admit_result_name(ADMIT_DENIED), "denied");
    assert_string_equal(admit_result_name(ADMIT_INVALID), "invalid");
    arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutation_table),
        cmocka_unit_test(test_yurthub_request_then_validation),
        cmocka_unit_test(test_pull_needs_daemonset),
        cmocka_unit_test(test_mutate_appends_to_patch),
        cmocka_unit_test(test_duplicate_conditions),
        cmocka_unit_test(test_other_requests_untouched),
        cmocka_unit_test(test_mutation_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

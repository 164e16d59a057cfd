/*
 * test_ota_state.c - the transition table of docs/design.md §3 (with the choices
 * of docs/DECISIONS.md, "Who may do what") as one table: one row per
 * allowed and per forbidden transition, per requester kind.
 *
 * Every row is rendered into the AdmissionReview text the apiserver sends
 * for a pods/status UPDATE, decoded, classified with ota_state_of_pod(),
 * decided with ota_state_check_update(), and run end to end through
 * admit_review(ADMIT_VALIDATE, ...) whose response is read back as JSON.
 */
#include "review_fixture.h"

#include "ota_state.h"
#include "review.h"

#define H1 "7c9d5f8b64" /* an older revision */
#define H2 "5d8f6c9b7d" /* the revision PodNeedUpgrade names: H */
#define H3 "9f1e2d3c4b" /* a newer one */
#define REV(h) OTA_MSG_REVISION_PREFIX h
#define POD_REF "edge/agent-x7k2p"

/* ---- requesters ---------------------------------------------------------- */

enum who { CTRL, NODE_SELF, NODE_OTHER, USER, MASTER, CO_WRITER, N_WHO };

static const struct {
    const char *label, *username, *groups;
    ota_requester_kind kind;
} whos[N_WHO] = {
    [CTRL] = {"controller", FX_CONTROLLER,
              "[\"system:serviceaccounts\",\"system:serviceaccounts:ota-system\","
              "\"system:authenticated\"]",
              OTA_REQ_CONTROLLER},
    [NODE_SELF] = {"node-1 (the pod's node)", "system:node:node-1",
                   "[\"system:nodes\",\"system:authenticated\"]", OTA_REQ_NODE_USER},
    [NODE_OTHER] = {"node-2 (another node)", "system:node:node-2",
                    "[\"system:nodes\",\"system:authenticated\"]", OTA_REQ_NODE_USER},
    [USER] = {"alice (ordinary user)", "alice", "[\"edge-operators\",\"system:authenticated\"]",
              OTA_REQ_NODE_USER},
    [MASTER] = {"system:masters", "kubernetes-admin",
                "[\"kubeadm:cluster-admins\",\"system:masters\",\"system:authenticated\"]",
                OTA_REQ_MASTER},
    [CO_WRITER] = {"yurt-manager's daemonpodupdater (a co-writer)", FX_CO_WRITER,
                   "[\"system:serviceaccounts\",\"system:serviceaccounts:kube-system\","
                   "\"system:authenticated\"]",
                   OTA_REQ_CO_WRITER},
};

/* ---- pods, as (PodNeedUpgrade, PodImageReady) --------------------------- */

#define ABSENT {NULL, NULL, NULL, NULL}
#define NU(h) {"True", NULL, REV(h), NULL}
#define NU_FALSE {"False", NULL, NULL, NULL}
#define IR_WAIT(h) {"False", OTA_REASON_WAIT_PULL, REV(h), NULL}
#define IR_ASK(h) {"False", NULL, REV(h), NULL} /* YurtHub's request: no reason */
#define IR_OK(h) {"True", OTA_REASON_PULL_SUCCESS, REV(h), NULL}
#define IR_FAIL {"False", OTA_REASON_PULL_FAIL, "pull image job ota-prepull-q7x failed: ErrImagePull", NULL}

#define CURRENT ABSENT, ABSENT
#define CURRENT_FALSE NU_FALSE, ABSENT
#define PENDING NU(H2), ABSENT
#define PENDING_STALE_READY NU(H2), IR_OK(H1)    /* Ready for an older revision */
#define PENDING_STALE_PULL NU(H2), IR_WAIT(H1)   /* pulling an older revision */
#define PULLING NU(H2), IR_WAIT(H2)
#define PULLING_ASKED NU(H2), IR_ASK(H2)         /* as YurtHub writes it */
#define READY NU(H2), IR_OK(H2)
#define FAILED NU(H2), IR_FAIL
#define ANSWERED ABSENT, IR_FAIL /* the controller's answer to a request nobody serves */
#define NEXT NU(H3), ABSENT                      /* yet another revision */
#define NEXT_KEEPS_READY NU(H3), IR_OK(H2)       /* ... leaving the old result */
/* Forbidden shapes */
#define CURRENT_ASKS ABSENT, IR_WAIT(H2)         /* a pull without PodNeedUpgrade */
#define FALSE_ASKS NU_FALSE, IR_WAIT(H2)
#define ASKS_OLD NU(H2), IR_WAIT(H1)             /* a pull of the wrong revision */
#define ASKS_BADLY NU(H2), {"False", "Downloading", REV(H2), NULL}
#define ASKS_TRUE NU(H2), {"True", OTA_REASON_WAIT_PULL, REV(H2), NULL}
#define DROPS_NU ABSENT, IR_WAIT(H2)
#define REWINDS NU(H1), IR_WAIT(H1)              /* PodNeedUpgrade moved back, pull of it */
#define READY_RETIMED NU(H2) /* lastTransitionTime only */, IR_OK(H2)
#define PULLING_NEXT NU(H3), IR_WAIT(H3)          /* a pull of a revision nobody asked for */
/* a request patched over a result without "reason":"": the reason stays */
#define ASKS_KEEPING_FAIL NU(H2), {"False", OTA_REASON_PULL_FAIL, REV(H2), NULL}
#define ASKS_KEEPING_OK NU(H2), {"False", OTA_REASON_PULL_SUCCESS, REV(H2), NULL}

/* How the write is shaped besides the OTA conditions. */
enum shape {
    KUBECTL, /* `kubectl patch --subresource=status`: other conditions untouched */
    YURTHUB, /* whole array rewritten from a cache: reordered, lastProbeTime gone */
    KUBELET, /* a routine kubelet write: Ready flips, new timestamps */
    RETIMED, /* the OTA conditions get new lastTransitionTimes, nothing else */
    /* Duplicates (issue 9): a second entry of an OTA type at the end of the
     * array, which a reader that takes the last match would believe. */
    ADD_DUP_IR,  /* the write appends PodImageReady True/PullImageSuccess */
    ADD_DUP_NU,  /* the write appends a second PodNeedUpgrade */
    KEPT_DUP_IR, /* the stored pod has the duplicate already, the write keeps it */
    DROP_DUP_IR, /* the stored pod has it, the write removes it */
    /* Issue 19: the stored pod has no ownerReferences (its DaemonSet was
     * deleted with --cascade=orphan); otherwise as KUBECTL. */
    ORPHANED,
    /* Issue 22: AutoPrePull, as (stored, written); otherwise as KUBECTL. */
    AP_KEPT,        /* True for H on both: the DaemonSet opted in for H */
    AP_KEPT_OLD,    /* True for an older revision on both */
    AP_KEPT_OUT,    /* False/OptedOut on both */
    AP_KEPT_TAKEN,  /* False/NodeUserRequest on both: a node user's pull */
    AP_MARK,        /* none stored, True for H written */
    AP_OPT_OUT,     /* True stored, False/OptedOut written */
    AP_DROP,        /* True stored, none written */
    AP_TAKE,        /* True stored, False/NodeUserRequest for H written */
    AP_TAKE_OLD,    /* True stored, False/NodeUserRequest for an older revision */
    AP_TAKE_OUT,    /* False/OptedOut stored, False/NodeUserRequest written */
    AP_FORGE_RETIMED, /* True stored, True with another reason written */
    AP_ADD_DUP,     /* True stored, a second True appended */
};

#define AP_TRUE(h) {"True", OTA_REASON_AUTO_OPTED_IN, REV(h), NULL}
#define AP_OUT {"False", OTA_REASON_AUTO_OPTED_OUT, REV(H2), NULL}
#define AP_USER(h) {"False", OTA_REASON_AUTO_NODE_USER, REV(h), NULL}

/* The AutoPrePull of one side of a row (status NULL: none). */
static fx_cond ap_of(enum shape shape, int is_new)
{
    const fx_cond none = ABSENT, t = AP_TRUE(H2), old = AP_TRUE(H1), out = AP_OUT,
                  user = AP_USER(H2), user_old = AP_USER(H1),
                  other = {"True", "Forged", REV(H2), NULL};
    switch (shape) {
    case AP_KEPT:
    case AP_ADD_DUP:
        return t;
    case AP_KEPT_OLD:
        return old;
    case AP_KEPT_OUT:
        return out;
    case AP_KEPT_TAKEN:
        return user;
    case AP_MARK:
        return is_new ? t : none;
    case AP_OPT_OUT:
        return is_new ? out : t;
    case AP_DROP:
        return is_new ? none : t;
    case AP_TAKE:
        return is_new ? user : t;
    case AP_TAKE_OLD:
        return is_new ? user_old : t;
    case AP_TAKE_OUT:
        return is_new ? user : out;
    case AP_FORGE_RETIMED:
        return is_new ? other : t;
    default:
        return none;
    }
}

typedef struct transition_row {
    const char *name;
    enum who who;
    fx_cond old_nu, old_ir, new_nu, new_ir;
    enum shape shape;
    ota_state from, to;
    int allowed;
    const char *rule;
} transition_row;

#define OK 1, NULL
#define DENY(rule) 0, rule
#define ROW(who, from, to, shape, from_state, to_state, verdict)                                   \
    {#from " -> " #to " (" #shape ")", who, from, to, shape, OTA_STATE_##from_state,              \
     OTA_STATE_##to_state, verdict}

#define R_NU "need-upgrade-owned-by-controller"
#define R_IR "image-ready-owned-by-controller"
#define R_RESULT "result-owned-by-controller"
#define R_NODE "own-node-only"
#define R_NOT_NEEDED "pull-needs-upgrade"
#define R_BY_NODES "pull-requested-by-node-users"
#define R_WRONG_REV "pull-wrong-revision"
#define R_BAD_PULL "bad-pull-request"
#define R_DUP "duplicate-condition"
#define R_CW_REV "co-writer-same-revision"
#define R_CW_ONLY "co-writer-need-upgrade-only"
#define R_ORPHAN "pull-needs-daemonset"
#define R_AP_OWNED "auto-prepull-owned-by-controller"
#define R_AP_OPT_IN "auto-prepull-needs-opt-in"

static const transition_row transitions[] = {
    /* ---- duplicate OTA entries (DECISIONS, "Duplicate condition types") ---- */
    /* Appending a second entry changes nothing the first-match rules read;
     * node users may not, the controller and masters may. */
    ROW(NODE_SELF, PULLING, PULLING, ADD_DUP_IR, PULLING, PULLING, DENY(R_DUP)),
    ROW(NODE_OTHER, PULLING, PULLING, ADD_DUP_IR, PULLING, PULLING, DENY(R_DUP)),
    ROW(USER, PULLING, PULLING, ADD_DUP_IR, PULLING, PULLING, DENY(R_DUP)),
    ROW(USER, FAILED, FAILED, ADD_DUP_IR, FAILED, FAILED, DENY(R_DUP)),
    ROW(CTRL, PULLING, PULLING, ADD_DUP_IR, PULLING, PULLING, OK),
    ROW(MASTER, PULLING, PULLING, ADD_DUP_IR, PULLING, PULLING, OK),
    ROW(NODE_SELF, PENDING, PENDING, ADD_DUP_NU, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_DUP)),
    ROW(USER, READY, READY, ADD_DUP_NU, READY, READY, DENY(R_DUP)),
    ROW(CTRL, READY, READY, ADD_DUP_NU, READY, READY, OK),
    ROW(MASTER, READY, READY, ADD_DUP_NU, READY, READY, OK),
    /* A duplicate already stored: carrying it unchanged is no change (the
     * kubelet keeps what is there), removing it is fine, but a node user's
     * change that leaves it is not. */
    ROW(NODE_SELF, PULLING, PULLING, KEPT_DUP_IR, PULLING, PULLING, OK),
    ROW(USER, READY, READY, KEPT_DUP_IR, READY, READY, OK),
    ROW(NODE_SELF, FAILED, PULLING, KEPT_DUP_IR, FAILED, PULLING, DENY(R_DUP)),
    ROW(NODE_SELF, FAILED, PULLING, DROP_DUP_IR, FAILED, PULLING, OK),
    ROW(USER, PULLING, PULLING, DROP_DUP_IR, PULLING, PULLING, OK),
    ROW(CTRL, PULLING, READY, KEPT_DUP_IR, PULLING, READY, OK),

    /* ---- no DaemonSet owns the pod (issue 19) ---- */
    /* Nobody can serve a request on it: refused, after the own-node rule;
     * the controller's answer (PullImageFail, PodNeedUpgrade removed) and
     * a master's write go through. */
    ROW(NODE_SELF, PENDING, PULLING, ORPHANED, PENDING_UPGRADE, PULLING, DENY(R_ORPHAN)),
    ROW(USER, PENDING, PULLING, ORPHANED, PENDING_UPGRADE, PULLING, DENY(R_ORPHAN)),
    ROW(NODE_SELF, FAILED, PULLING, ORPHANED, FAILED, PULLING, DENY(R_ORPHAN)),
    ROW(USER, READY, PULLING, ORPHANED, READY, PULLING, DENY(R_ORPHAN)),
    ROW(NODE_OTHER, PENDING, PULLING, ORPHANED, PENDING_UPGRADE, PULLING, DENY(R_NODE)),
    ROW(CTRL, PENDING, PULLING, ORPHANED, PENDING_UPGRADE, PULLING, DENY(R_BY_NODES)),
    ROW(MASTER, PENDING, PULLING, ORPHANED, PENDING_UPGRADE, PULLING, OK),
    ROW(CTRL, PULLING, ANSWERED, ORPHANED, PULLING, CURRENT, OK),
    ROW(CTRL, PENDING, CURRENT, ORPHANED, PENDING_UPGRADE, CURRENT, OK),
    /* a request already stored, repeated: still nobody to serve it */
    ROW(NODE_SELF, PULLING, PULLING_ASKED, ORPHANED, PULLING, PULLING, DENY(R_ORPHAN)),

    /* ---- DESIGN §3, allowed transitions ---- */
    /* Current -> PendingUpgrade: the controller, on a new DaemonSet revision. */
    ROW(CTRL, CURRENT, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, CURRENT, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_NU)),
    ROW(NODE_OTHER, CURRENT, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, CURRENT, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_NU)),
    ROW(MASTER, CURRENT, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, OK),
    ROW(CTRL, CURRENT_FALSE, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, CURRENT_FALSE, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_NU)),
    ROW(NODE_OTHER, CURRENT_FALSE, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, CURRENT_FALSE, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_NU)),
    ROW(MASTER, CURRENT_FALSE, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, OK),

    /* PendingUpgrade -> Pulling: a node user asks for the pre-pull. */
    ROW(CTRL, PENDING, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, PENDING, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_OTHER, PENDING, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, DENY(R_NODE)),
    ROW(USER, PENDING, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, OK),
    ROW(MASTER, PENDING, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, OK),
    /* ... the same request as YurtHub's imagepull endpoint writes it */
    ROW(CTRL, PENDING, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, PENDING, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_OTHER, PENDING, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, DENY(R_NODE)),
    ROW(USER, PENDING, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, OK),
    ROW(MASTER, PENDING, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, OK),
    /* ... when PodImageReady still speaks of an older revision */
    ROW(CTRL, PENDING_STALE_READY, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, PENDING_STALE_READY, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_OTHER, PENDING_STALE_READY, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, DENY(R_NODE)),
    ROW(USER, PENDING_STALE_READY, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, OK),
    ROW(MASTER, PENDING_STALE_READY, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_SELF, PENDING_STALE_PULL, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, OK),
    ROW(CTRL, PENDING_STALE_PULL, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, DENY(R_BY_NODES)),

    /* Failed -> Pulling: a retry. */
    ROW(CTRL, FAILED, PULLING, KUBECTL, FAILED, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, FAILED, PULLING, KUBECTL, FAILED, PULLING, OK),
    ROW(NODE_OTHER, FAILED, PULLING, KUBECTL, FAILED, PULLING, DENY(R_NODE)),
    ROW(USER, FAILED, PULLING, KUBECTL, FAILED, PULLING, OK),
    ROW(MASTER, FAILED, PULLING, KUBECTL, FAILED, PULLING, OK),
    ROW(NODE_SELF, FAILED, PULLING_ASKED, YURTHUB, FAILED, PULLING, OK),

    /* Ready -> Pulling: the image went away, pull again. */
    ROW(CTRL, READY, PULLING, KUBECTL, READY, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, READY, PULLING, KUBECTL, READY, PULLING, OK),
    ROW(NODE_OTHER, READY, PULLING, KUBECTL, READY, PULLING, DENY(R_NODE)),
    ROW(USER, READY, PULLING, KUBECTL, READY, PULLING, OK),
    ROW(MASTER, READY, PULLING, KUBECTL, READY, PULLING, OK),
    ROW(NODE_SELF, READY, PULLING_ASKED, YURTHUB, READY, PULLING, OK),

    /* Pulling -> Pulling: YurtHub's reason-less request again (a repeat). */
    ROW(CTRL, PULLING, PULLING_ASKED, YURTHUB, PULLING, PULLING, OK),
    ROW(NODE_SELF, PULLING, PULLING_ASKED, YURTHUB, PULLING, PULLING, OK),
    ROW(NODE_OTHER, PULLING, PULLING_ASKED, YURTHUB, PULLING, PULLING, DENY(R_NODE)),
    ROW(USER, PULLING, PULLING_ASKED, YURTHUB, PULLING, PULLING, OK),
    ROW(MASTER, PULLING, PULLING_ASKED, YURTHUB, PULLING, PULLING, OK),

    /* Pulling -> Ready / Failed: the controller reports the Job's outcome. */
    ROW(CTRL, PULLING, READY, KUBECTL, PULLING, READY, OK),
    ROW(NODE_SELF, PULLING, READY, KUBECTL, PULLING, READY, DENY(R_RESULT)),
    ROW(NODE_OTHER, PULLING, READY, KUBECTL, PULLING, READY, DENY(R_NODE)),
    ROW(USER, PULLING, READY, KUBECTL, PULLING, READY, DENY(R_RESULT)),
    ROW(MASTER, PULLING, READY, KUBECTL, PULLING, READY, OK),
    ROW(NODE_SELF, PULLING, READY, YURTHUB, PULLING, READY, DENY(R_RESULT)),
    ROW(CTRL, PULLING, FAILED, KUBECTL, PULLING, FAILED, OK),
    ROW(NODE_SELF, PULLING, FAILED, KUBECTL, PULLING, FAILED, DENY(R_RESULT)),
    ROW(NODE_OTHER, PULLING, FAILED, KUBECTL, PULLING, FAILED, DENY(R_NODE)),
    ROW(USER, PULLING, FAILED, KUBECTL, PULLING, FAILED, DENY(R_RESULT)),
    ROW(MASTER, PULLING, FAILED, KUBECTL, PULLING, FAILED, OK),
    ROW(CTRL, PULLING_ASKED, READY, KUBECTL, PULLING, READY, OK),

    /* Pulling/Ready/Failed -> PendingUpgrade: yet another revision. */
    ROW(CTRL, PULLING, NEXT, KUBECTL, PULLING, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, PULLING, NEXT, KUBECTL, PULLING, PENDING_UPGRADE, DENY(R_NU)),
    ROW(NODE_OTHER, PULLING, NEXT, KUBECTL, PULLING, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, PULLING, NEXT, KUBECTL, PULLING, PENDING_UPGRADE, DENY(R_NU)),
    ROW(MASTER, PULLING, NEXT, KUBECTL, PULLING, PENDING_UPGRADE, OK),
    ROW(CTRL, READY, NEXT, KUBECTL, READY, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, READY, NEXT, KUBECTL, READY, PENDING_UPGRADE, DENY(R_NU)),
    ROW(NODE_OTHER, READY, NEXT, KUBECTL, READY, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, READY, NEXT, KUBECTL, READY, PENDING_UPGRADE, DENY(R_NU)),
    ROW(MASTER, READY, NEXT, KUBECTL, READY, PENDING_UPGRADE, OK),
    ROW(CTRL, READY, NEXT_KEEPS_READY, KUBECTL, READY, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, READY, NEXT_KEEPS_READY, KUBECTL, READY, PENDING_UPGRADE, DENY(R_NU)),
    ROW(CTRL, FAILED, NEXT, KUBECTL, FAILED, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, FAILED, NEXT, KUBECTL, FAILED, PENDING_UPGRADE, DENY(R_NU)),
    ROW(NODE_OTHER, FAILED, NEXT, KUBECTL, FAILED, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, FAILED, NEXT, KUBECTL, FAILED, PENDING_UPGRADE, DENY(R_NU)),
    ROW(MASTER, FAILED, NEXT, KUBECTL, FAILED, PENDING_UPGRADE, OK),

    /* ---- DECISIONS.md: transitions the table implies ---- */
    /* PendingUpgrade -> Current: the DaemonSet was rolled back. */
    ROW(CTRL, PENDING, CURRENT, KUBECTL, PENDING_UPGRADE, CURRENT, OK),
    ROW(NODE_SELF, PENDING, CURRENT, KUBECTL, PENDING_UPGRADE, CURRENT, DENY(R_NU)),
    ROW(NODE_OTHER, PENDING, CURRENT, KUBECTL, PENDING_UPGRADE, CURRENT, DENY(R_NODE)),
    ROW(USER, PENDING, CURRENT, KUBECTL, PENDING_UPGRADE, CURRENT, DENY(R_NU)),
    ROW(MASTER, PENDING, CURRENT, KUBECTL, PENDING_UPGRADE, CURRENT, OK),
    ROW(CTRL, PENDING, CURRENT_FALSE, KUBECTL, PENDING_UPGRADE, CURRENT, OK),
    ROW(USER, PENDING, CURRENT_FALSE, KUBECTL, PENDING_UPGRADE, CURRENT, DENY(R_NU)),
    /* PendingUpgrade -> PendingUpgrade with a newer H. */
    ROW(CTRL, PENDING, NEXT, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, PENDING, NEXT, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_NU)),
    ROW(NODE_OTHER, PENDING, NEXT, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, PENDING, NEXT, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_NU)),
    ROW(MASTER, PENDING, NEXT, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, OK),

    /* ---- forbidden ---- */
    /* A pull of a pod that needs no upgrade. */
    ROW(CTRL, CURRENT, CURRENT_ASKS, KUBECTL, CURRENT, CURRENT, OK),
    ROW(NODE_SELF, CURRENT, CURRENT_ASKS, KUBECTL, CURRENT, CURRENT, DENY(R_NOT_NEEDED)),
    ROW(NODE_OTHER, CURRENT, CURRENT_ASKS, KUBECTL, CURRENT, CURRENT, DENY(R_NODE)),
    ROW(USER, CURRENT, CURRENT_ASKS, KUBECTL, CURRENT, CURRENT, DENY(R_NOT_NEEDED)),
    ROW(MASTER, CURRENT, CURRENT_ASKS, KUBECTL, CURRENT, CURRENT, OK),
    ROW(NODE_SELF, CURRENT_FALSE, FALSE_ASKS, KUBECTL, CURRENT, CURRENT, DENY(R_NOT_NEEDED)),
    ROW(USER, CURRENT_FALSE, FALSE_ASKS, YURTHUB, CURRENT, CURRENT, DENY(R_NOT_NEEDED)),
    /* The controller may not ask for a pull, even together with the upgrade. */
    ROW(CTRL, CURRENT, PULLING, KUBECTL, CURRENT, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, CURRENT, PULLING, KUBECTL, CURRENT, PULLING, DENY(R_NU)),
    ROW(NODE_OTHER, CURRENT, PULLING, KUBECTL, CURRENT, PULLING, DENY(R_NODE)),
    ROW(USER, CURRENT, PULLING, KUBECTL, CURRENT, PULLING, DENY(R_NU)),
    ROW(MASTER, CURRENT, PULLING, KUBECTL, CURRENT, PULLING, OK),
    /* A node claims the result itself. */
    ROW(CTRL, PENDING, READY, KUBECTL, PENDING_UPGRADE, READY, OK),
    ROW(NODE_SELF, PENDING, READY, KUBECTL, PENDING_UPGRADE, READY, DENY(R_RESULT)),
    ROW(NODE_OTHER, PENDING, READY, KUBECTL, PENDING_UPGRADE, READY, DENY(R_NODE)),
    ROW(USER, PENDING, READY, KUBECTL, PENDING_UPGRADE, READY, DENY(R_RESULT)),
    ROW(MASTER, PENDING, READY, KUBECTL, PENDING_UPGRADE, READY, OK),
    ROW(NODE_SELF, PENDING, FAILED, KUBECTL, PENDING_UPGRADE, FAILED, DENY(R_RESULT)),
    ROW(USER, FAILED, READY, KUBECTL, FAILED, READY, DENY(R_RESULT)),
    ROW(NODE_SELF, READY, FAILED, KUBECTL, READY, FAILED, DENY(R_RESULT)),
    ROW(NODE_SELF, PULLING, ASKS_TRUE, KUBECTL, PULLING, PENDING_UPGRADE, DENY(R_RESULT)),
    ROW(CTRL, PULLING, ASKS_TRUE, KUBECTL, PULLING, PENDING_UPGRADE, OK),
    /* A pull of a revision PodNeedUpgrade does not name. */
    ROW(CTRL, PENDING, ASKS_OLD, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, PENDING, ASKS_OLD, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_WRONG_REV)),
    ROW(NODE_OTHER, PENDING, ASKS_OLD, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, PENDING, ASKS_OLD, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_WRONG_REV)),
    ROW(MASTER, PENDING, ASKS_OLD, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    /* A reason that is neither a request nor a result. */
    ROW(CTRL, PENDING, ASKS_BADLY, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, PENDING, ASKS_BADLY, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_BAD_PULL)),
    ROW(NODE_OTHER, PENDING, ASKS_BADLY, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, PENDING, ASKS_BADLY, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_BAD_PULL)),
    ROW(MASTER, PENDING, ASKS_BADLY, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    /* PodImageReady removed (validation sees it when no mutation restored it). */
    ROW(CTRL, READY, PENDING, KUBECTL, READY, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, READY, PENDING, KUBECTL, READY, PENDING_UPGRADE, DENY(R_IR)),
    ROW(NODE_OTHER, READY, PENDING, KUBECTL, READY, PENDING_UPGRADE, DENY(R_NODE)),
    ROW(USER, READY, PENDING, YURTHUB, READY, PENDING_UPGRADE, DENY(R_IR)),
    ROW(MASTER, READY, PENDING, YURTHUB, READY, PENDING_UPGRADE, OK),
    /* PodNeedUpgrade dropped by a whole-array rewrite. */
    ROW(CTRL, PULLING, DROPS_NU, YURTHUB, PULLING, CURRENT, OK),
    ROW(NODE_SELF, PULLING, DROPS_NU, YURTHUB, PULLING, CURRENT, DENY(R_NU)),
    ROW(NODE_OTHER, PULLING, DROPS_NU, YURTHUB, PULLING, CURRENT, DENY(R_NODE)),
    ROW(USER, PULLING, DROPS_NU, YURTHUB, PULLING, CURRENT, DENY(R_NU)),
    ROW(MASTER, PULLING, DROPS_NU, YURTHUB, PULLING, CURRENT, OK),
    /* PodNeedUpgrade rewound to an older revision, with a pull of that one. */
    ROW(CTRL, PENDING, REWINDS, KUBECTL, PENDING_UPGRADE, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, PENDING, REWINDS, YURTHUB, PENDING_UPGRADE, PULLING, DENY(R_NU)),
    ROW(NODE_OTHER, PENDING, REWINDS, YURTHUB, PENDING_UPGRADE, PULLING, DENY(R_NODE)),
    ROW(USER, PENDING, REWINDS, KUBECTL, PENDING_UPGRADE, PULLING, DENY(R_NU)),
    ROW(MASTER, PENDING, REWINDS, KUBECTL, PENDING_UPGRADE, PULLING, OK),

    /* Pulling H -> Pulling a newer H: the controller would be asking for a
     * pull itself; its way to a new revision is PendingUpgrade. */
    ROW(CTRL, PULLING, PULLING_NEXT, KUBECTL, PULLING, PULLING, DENY(R_BY_NODES)),
    ROW(NODE_SELF, PULLING, PULLING_NEXT, KUBECTL, PULLING, PULLING, DENY(R_NU)),
    ROW(NODE_OTHER, PULLING, PULLING_NEXT, KUBECTL, PULLING, PULLING, DENY(R_NODE)),
    ROW(USER, PULLING, PULLING_NEXT, KUBECTL, PULLING, PULLING, DENY(R_NU)),
    ROW(MASTER, PULLING, PULLING_NEXT, KUBECTL, PULLING, PULLING, OK),

    /* ---- no change to either OTA condition: always allowed ---- */
    /* A routine kubelet write (Ready flips), on pods in every state. */
    ROW(CTRL, PULLING, PULLING, KUBELET, PULLING, PULLING, OK),
    ROW(NODE_SELF, PULLING, PULLING, KUBELET, PULLING, PULLING, OK),
    ROW(NODE_OTHER, PULLING, PULLING, KUBELET, PULLING, PULLING, OK),
    ROW(USER, PULLING, PULLING, KUBELET, PULLING, PULLING, OK),
    ROW(MASTER, PULLING, PULLING, KUBELET, PULLING, PULLING, OK),
    ROW(NODE_SELF, CURRENT, CURRENT, KUBELET, CURRENT, CURRENT, OK),
    ROW(NODE_SELF, PENDING, PENDING, KUBELET, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(NODE_SELF, READY, READY, KUBELET, READY, READY, OK),
    ROW(NODE_SELF, FAILED, FAILED, KUBELET, FAILED, FAILED, OK),
    ROW(NODE_OTHER, FAILED, FAILED, KUBELET, FAILED, FAILED, OK),
    /* The same conditions in YurtHub's whole-array rewrite, reordered. */
    ROW(NODE_SELF, READY, READY, YURTHUB, READY, READY, OK),
    ROW(USER, PULLING, PULLING, YURTHUB, PULLING, PULLING, OK),
    /* Only lastTransitionTime of the OTA conditions changed: no change. */
    ROW(CTRL, READY, READY_RETIMED, RETIMED, READY, READY, OK),
    ROW(NODE_SELF, READY, READY_RETIMED, RETIMED, READY, READY, OK),
    ROW(NODE_OTHER, READY, READY_RETIMED, RETIMED, READY, READY, OK),
    ROW(USER, READY, READY_RETIMED, RETIMED, READY, READY, OK),
    ROW(MASTER, READY, READY_RETIMED, RETIMED, READY, READY, OK),
    ROW(USER, FAILED, FAILED, RETIMED, FAILED, FAILED, OK),

    /* ---- a co-writer (DECISIONS, "Co-writers of PodNeedUpgrade") ---- */
    /* PodNeedUpgrade as stored, with its own timestamps, or no change at
     * all: accepted.  (yurt-manager's daemonpodupdater writes only when its
     * value differs from what it read, and its Update carries the
     * resourceVersion it read.) */
    ROW(CO_WRITER, READY, READY_RETIMED, RETIMED, READY, READY, OK),
    ROW(CO_WRITER, PENDING, PENDING, RETIMED, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(CO_WRITER, PULLING, PULLING, KUBELET, PULLING, PULLING, OK),
    ROW(CO_WRITER, PULLING, PULLING, YURTHUB, PULLING, PULLING, OK),
    /* Any other PodNeedUpgrade: the webhook cannot tell a new revision from
     * a stale one (it reads no DaemonSet); ota-controller writes it. */
    ROW(CO_WRITER, CURRENT, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_CW_REV)),
    ROW(CO_WRITER, CURRENT_FALSE, PENDING, KUBECTL, CURRENT, PENDING_UPGRADE, DENY(R_CW_REV)),
    ROW(CO_WRITER, PENDING, NEXT, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_CW_REV)),
    ROW(CO_WRITER, PENDING, CURRENT, KUBECTL, PENDING_UPGRADE, CURRENT, DENY(R_CW_REV)),
    ROW(CO_WRITER, PENDING, CURRENT_FALSE, KUBECTL, PENDING_UPGRADE, CURRENT, DENY(R_CW_REV)),
    ROW(CO_WRITER, NEXT, PENDING, KUBECTL, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_CW_REV)),
    /* PodImageReady in any way: yurt-manager's imagepreheat reporting its
     * own Job, or anyone asking for a pull under a co-writer's name. */
    ROW(CO_WRITER, PULLING, READY, KUBECTL, PULLING, READY, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, PULLING, FAILED, KUBECTL, PULLING, FAILED, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, PULLING_ASKED, READY, KUBECTL, PULLING, READY, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, PENDING, PULLING, KUBECTL, PENDING_UPGRADE, PULLING, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, PENDING, PULLING_ASKED, YURTHUB, PENDING_UPGRADE, PULLING, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, FAILED, PULLING, KUBECTL, FAILED, PULLING, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, READY, PULLING, KUBECTL, READY, PULLING, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, PENDING, READY, KUBECTL, PENDING_UPGRADE, READY, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, CURRENT, CURRENT_ASKS, KUBECTL, CURRENT, CURRENT, DENY(R_CW_ONLY)),
    /* a new revision that also drops the old pre-pull state, as
     * ota-controller writes it: PodImageReady changed, so that rule speaks */
    ROW(CO_WRITER, PULLING, NEXT, KUBECTL, PULLING, PENDING_UPGRADE, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, READY, NEXT, KUBECTL, READY, PENDING_UPGRADE, DENY(R_CW_ONLY)),
    ROW(CO_WRITER, FAILED, NEXT, KUBECTL, FAILED, PENDING_UPGRADE, DENY(R_CW_ONLY)),
    /* a new revision leaving the old result as it is: PodNeedUpgrade's rule */
    ROW(CO_WRITER, READY, NEXT_KEEPS_READY, KUBECTL, READY, PENDING_UPGRADE, DENY(R_CW_REV)),
    /* duplicates: as for node users */
    ROW(CO_WRITER, PULLING, PULLING, ADD_DUP_NU, PULLING, PULLING, DENY(R_DUP)),
    ROW(CO_WRITER, PULLING, PULLING, KEPT_DUP_IR, PULLING, PULLING, OK),

    /* ---- AutoPrePull (issue 22; DECISIONS "How the webhook knows a
     * DaemonSet opted in") ---- */
    /* (2) the controller starts a pull only for the revision the stored
     * AutoPrePull True names */
    ROW(CTRL, PENDING, PULLING, AP_KEPT, PENDING_UPGRADE, PULLING, OK),
    ROW(CTRL, PENDING_STALE_READY, PULLING, AP_KEPT, PENDING_UPGRADE, PULLING, OK),
    ROW(CTRL, FAILED, PULLING, AP_KEPT, FAILED, PULLING, OK),
    ROW(CTRL, PENDING, PULLING_ASKED, AP_KEPT, PENDING_UPGRADE, PULLING, OK),
    ROW(CTRL, PENDING_STALE_PULL, PULLING, AP_KEPT, PENDING_UPGRADE, PULLING, OK),
    ROW(CTRL, PENDING, PULLING, AP_KEPT_OLD, PENDING_UPGRADE, PULLING, DENY(R_AP_OPT_IN)),
    ROW(CTRL, PENDING, PULLING, AP_KEPT_OUT, PENDING_UPGRADE, PULLING, DENY(R_AP_OPT_IN)),
    ROW(CTRL, PENDING, PULLING, AP_KEPT_TAKEN, PENDING_UPGRADE, PULLING, DENY(R_AP_OPT_IN)),
    ROW(CTRL, PENDING, PULLING, AP_OPT_OUT, PENDING_UPGRADE, PULLING, OK), /* stored True */
    ROW(CTRL, PENDING, PULLING_NEXT, AP_KEPT, PENDING_UPGRADE, PULLING, DENY(R_AP_OPT_IN)),
    ROW(CTRL, PULLING, PULLING_NEXT, AP_KEPT, PULLING, PULLING, DENY(R_AP_OPT_IN)),
    /* the mark and the pull in one write: the evidence must be stored */
    ROW(CTRL, PENDING, PULLING, AP_MARK, PENDING_UPGRADE, PULLING, DENY(R_BY_NODES)),
    ROW(CTRL, CURRENT, PULLING, AP_MARK, CURRENT, PULLING, DENY(R_BY_NODES)),
    /* the controller's own writes of AutoPrePull and of outcomes */
    ROW(CTRL, CURRENT, PENDING, AP_MARK, CURRENT, PENDING_UPGRADE, OK),
    ROW(CTRL, READY, NEXT, AP_MARK, READY, PENDING_UPGRADE, OK),
    ROW(CTRL, PENDING, PENDING, AP_OPT_OUT, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(CTRL, PENDING, PENDING, AP_DROP, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(CTRL, PULLING, READY, AP_KEPT, PULLING, READY, OK),
    ROW(CTRL, PULLING, FAILED, AP_KEPT, PULLING, FAILED, OK),
    ROW(CTRL, PULLING, READY, AP_OPT_OUT, PULLING, READY, OK),
    /* (1) nobody else adds, changes or removes it */
    ROW(NODE_SELF, PENDING, PENDING, AP_MARK, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PENDING, PULLING, AP_MARK, PENDING_UPGRADE, PULLING, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PENDING, PENDING, AP_OPT_OUT, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PENDING, PENDING, AP_DROP, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PENDING, PENDING, AP_FORGE_RETIMED, PENDING_UPGRADE, PENDING_UPGRADE,
        DENY(R_AP_OWNED)),
    ROW(USER, PENDING, PENDING, AP_MARK, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PULLING, PULLING, AP_ADD_DUP, PULLING, PULLING, DENY(R_DUP)),
    ROW(CO_WRITER, PENDING, PENDING, AP_DROP, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_AP_OWNED)),
    ROW(CO_WRITER, PENDING, PENDING, AP_MARK, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_AP_OWNED)),
    ROW(CO_WRITER, PENDING, PENDING, AP_KEPT, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(MASTER, PENDING, PENDING, AP_MARK, PENDING_UPGRADE, PENDING_UPGRADE, OK),
    ROW(MASTER, PENDING, PULLING, AP_DROP, PENDING_UPGRADE, PULLING, OK),
    /* (3) a node user's request takes it over: False, NodeUserRequest, for
     * the revision asked, and only with a request */
    ROW(NODE_SELF, PENDING, PULLING, AP_TAKE, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_SELF, PENDING, PULLING_ASKED, AP_TAKE, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_SELF, FAILED, PULLING, AP_TAKE, FAILED, PULLING, OK),
    ROW(NODE_SELF, PULLING, PULLING, AP_TAKE, PULLING, PULLING, OK),
    ROW(USER, READY, PULLING, AP_TAKE, READY, PULLING, OK),
    ROW(NODE_SELF, PENDING, PENDING, AP_TAKE, PENDING_UPGRADE, PENDING_UPGRADE, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PULLING, READY, AP_TAKE, PULLING, READY, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PENDING, PULLING, AP_TAKE_OLD, PENDING_UPGRADE, PULLING, DENY(R_AP_OWNED)),
    ROW(NODE_SELF, PENDING, PULLING, AP_TAKE_OUT, PENDING_UPGRADE, PULLING, DENY(R_AP_OWNED)),
    ROW(NODE_OTHER, PENDING, PULLING, AP_TAKE, PENDING_UPGRADE, PULLING, DENY(R_NODE)),
    ROW(CO_WRITER, PENDING, PULLING, AP_TAKE, PENDING_UPGRADE, PULLING, DENY(R_AP_OWNED)),
    /* the request's own rules still apply */
    ROW(NODE_SELF, PENDING, ASKS_OLD, AP_TAKE_OLD, PENDING_UPGRADE, PENDING_UPGRADE,
        DENY(R_WRONG_REV)),
    /* (4) node users keep every right: a request with AutoPrePull as
     * stored (the mutating webhook not run, or an opted-out pod) */
    ROW(NODE_SELF, PENDING, PULLING, AP_KEPT, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_SELF, PENDING, PULLING, AP_KEPT_OUT, PENDING_UPGRADE, PULLING, OK),
    ROW(NODE_SELF, FAILED, PULLING, AP_KEPT_TAKEN, FAILED, PULLING, OK),
    ROW(NODE_SELF, PULLING, PULLING, AP_KEPT, PULLING, PULLING, OK),
    ROW(NODE_SELF, PULLING, READY, AP_KEPT, PULLING, READY, DENY(R_RESULT)),
};

/* Words every denial of a rule carries, besides pod, rule and state. */
static const struct {
    const char *rule, *phrase;
} rule_phrases[] = {
    {R_NU, "only the controller may change PodNeedUpgrade of pod " POD_REF},
    {R_IR, "only the controller may remove PodImageReady from pod " POD_REF},
    {R_RESULT, "only the controller may report a pre-pull result for pod " POD_REF},
    {R_NODE, "may not change the OTA conditions of pod " POD_REF ", which runs on node \"node-1\""},
    {R_NOT_NEEDED, "pod " POD_REF " does not need an upgrade (PodNeedUpgrade is not True)"},
    {R_BY_NODES, "the controller may not request a pre-pull of pod " POD_REF "; node users do"},
    {R_WRONG_REV, "names \"" REV(H1) "\" but PodNeedUpgrade names \"" REV(H2) "\""},
    {R_BAD_PULL, "with reason WaitPullImage or none, got reason \"Downloading\""},
    {R_DUP, "pod " POD_REF " would have 2 "},
    {R_CW_REV, FX_CO_WRITER " may write PodNeedUpgrade of pod " POD_REF
               " only as ota-controller has it ("},
    {R_CW_ONLY, FX_CO_WRITER " may write only PodNeedUpgrade of pod " POD_REF
                " (a co-writer, --co-writer-usernames); PodImageReady is ota-prepull's: a "
                "yurt-manager that writes it runs its imagepreheat controller, which must be off "
                "(--controllers=-imagepreheat,..., docs/operations.md \"Installing into an "
                "OpenYurt cluster\")"},
    {R_ORPHAN, "pod " POD_REF " has no DaemonSet owner (no controller ownerReference of kind "
               "DaemonSet"},
    {R_AP_OWNED, " may not change " OTA_COND_AUTO_PREPULL " of pod " POD_REF " ("},
    {R_AP_OPT_IN, "the controller may start an automatic pre-pull of pod " POD_REF " only for "
                  "the revision its " OTA_COND_AUTO_PREPULL " True names; " OTA_COND_AUTO_PREPULL
                  " is status "},
};

/* The conditions array of one side of a row. */
static char *conditions_json(arena *a, const fx_cond *nu, const fx_cond *ir, enum shape shape,
                             int is_new)
{
    fx_cond retimed_nu = *nu, retimed_ir = *ir;
    if (is_new && shape == RETIMED) {
        retimed_nu.ltt = "2026-11-21T23:59:59Z";
        retimed_ir.ltt = "2026-11-21T23:59:59Z";
        nu = &retimed_nu;
        ir = &retimed_ir;
    }
    const char *nu_json = nu->status != NULL ? fx_cond_json(a, OTA_COND_NEED_UPGRADE, nu) : NULL;
    const char *ir_json = ir->status != NULL ? fx_cond_json(a, OTA_COND_IMAGE_READY, ir) : NULL;
    const char *ready = is_new && shape == KUBELET
                            ? "{\"type\":\"Ready\",\"status\":\"False\",\"lastProbeTime\":null,"
                              "\"lastTransitionTime\":\"2026-11-21T21:29:58Z\",\"reason\":"
                              "\"ContainersNotReady\"}"
                            : "{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null,"
                              "\"lastTransitionTime\":\"2026-11-21T20:58:12Z\"}";
    const char *init = "{\"type\":\"Initialized\",\"status\":\"True\",\"lastProbeTime\":null,"
                       "\"lastTransitionTime\":\"2026-11-02T07:14:33Z\"}";
    const char *sched = "{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastProbeTime\":null,"
                        "\"lastTransitionTime\":\"2026-11-02T07:14:29Z\"}";
    char *s;
    int dup_ir = shape == KEPT_DUP_IR || (is_new ? shape == ADD_DUP_IR : shape == DROP_DUP_IR);
    if (dup_ir || (is_new && shape == ADD_DUP_NU)) {
        const fx_cond fake_ir = IR_OK(H2), fake_nu = NU(H1);
        s = arena_printf(a, "[%s,%s,%s%s%s%s%s,%s]", init, ready, sched, nu_json != NULL ? "," : "",
                         nu_json != NULL ? nu_json : "", ir_json != NULL ? "," : "",
                         ir_json != NULL ? ir_json : "",
                         dup_ir ? fx_cond_json(a, OTA_COND_IMAGE_READY, &fake_ir)
                                : fx_cond_json(a, OTA_COND_NEED_UPGRADE, &fake_nu));
    } else if (is_new && shape == YURTHUB) {
        /* YurtHub merges from its cache: the whole array, its own order, and
         * lastProbeTime (always null) left out. */
        sched = "{\"lastTransitionTime\":\"2026-11-02T07:14:29Z\",\"status\":\"True\","
                "\"type\":\"PodScheduled\"}";
        s = arena_printf(a, "[%s%s%s%s%s,{\"type\":\"Ready\",\"status\":\"True\","
                            "\"lastTransitionTime\":\"2026-11-21T20:58:12Z\"},%s]",
                         ir_json != NULL ? ir_json : "", ir_json != NULL ? "," : "",
                         nu_json != NULL ? nu_json : "", nu_json != NULL ? "," : "", sched, init);
    } else {
        s = arena_printf(a, "[%s,%s,%s%s%s%s%s]", init, ready, sched, nu_json != NULL ? "," : "",
                         nu_json != NULL ? nu_json : "", ir_json != NULL ? "," : "",
                         ir_json != NULL ? ir_json : "");
    }
    assert_non_null(s);
    fx_cond ap = ap_of(shape, is_new);
    if (ap.status != NULL) {
        /* after the others, as the controller's merge patch appends it */
        const char *ap_json = fx_cond_json(a, OTA_COND_AUTO_PREPULL, &ap);
        if (is_new && shape == AP_ADD_DUP)
            ap_json = arena_printf(a, "%s,%s", ap_json, ap_json);
        s[strlen(s) - 1] = '\0';
        s = arena_printf(a, "%s,%s]", s, ap_json);
        assert_non_null(s);
    }
    return s;
}

static int same_text(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static int same_spec(const fx_cond *a, const fx_cond *b)
{
    if (a->status == NULL || b->status == NULL)
        return a->status == b->status;
    return same_text(a->status, b->status) && same_text(a->reason, b->reason) &&
           same_text(a->message, b->message);
}

static char *row_review(arena *a, const transition_row *row)
{
    char *old_conds = conditions_json(a, &row->old_nu, &row->old_ir, row->shape, 0);
    char *old_pod = row->shape == ORPHANED ? fx_pod_owned(a, "node-1", old_conds, NULL)
                                           : fx_pod(a, "node-1", old_conds);
    char *new_pod = fx_pod(a, "node-1", conditions_json(a, &row->new_nu, &row->new_ir, row->shape, 1));
    return fx_pod_status_review(a, whos[row->who].username, whos[row->who].groups, old_pod, new_pod);
}

static void check_row(const transition_row *row, const char *name)
{
    arena a;
    arena_init(&a);
    const char *body = row_review(&a, row);

    /* The library's pieces, one by one. */
    review rv;
    char err[256];
    FX_CHECK(name, review_decode(&rv, body, strlen(body), &a, err, sizeof(err)) == 0, "%s", err);
    ota_pod old_pod = review_pod_view(&rv.old_object), new_pod = review_pod_view(&rv.object);
    ota_state from = ota_state_of_pod(&old_pod), to = ota_state_of_pod(&new_pod);
    FX_CHECK(name, from == row->from, "old pod classified %s, want %s", ota_state_name(from),
             ota_state_name(row->from));
    FX_CHECK(name, to == row->to, "new pod classified %s, want %s", ota_state_name(to),
             ota_state_name(row->to));
    ota_requester who = ota_requester_of(rv.username, rv.is_master, FX_CONTROLLER, FX_CO_WRITERS);
    FX_CHECK(name, who.kind == whos[row->who].kind, "requester kind %d", who.kind);
    /* "Changed" is a difference in status, reason or message, whatever the
     * timestamps and the rest of the array do. */
    fx_cond old_ap = ap_of(row->shape, 0), new_ap = ap_of(row->shape, 1);
    int want_changed = !same_spec(&row->old_nu, &row->new_nu) ||
                       !same_spec(&row->old_ir, &row->new_ir) || !same_spec(&old_ap, &new_ap);
    FX_CHECK(name, ota_state_conditions_changed(&old_pod, &new_pod) == want_changed,
             "conditions_changed != %d", want_changed);
    ota_verdict v = ota_state_check_update(&old_pod, &new_pod, &who, POD_REF, &a);
    FX_CHECK(name, v.allowed == row->allowed, "verdict %s (%s)", v.allowed ? "allowed" : "denied",
             v.message != NULL ? v.message : "");
    if (!row->allowed) {
        const char *rule = ota_rule_name(v.rule);
        FX_CHECK(name, rule != NULL && strcmp(rule, row->rule) == 0, "rule %s, want %s",
                 rule != NULL ? rule : "(none)", row->rule);
    }

    /* End to end, through the response the apiserver reads. */
    admit_outcome out;
    fx_response resp;
    fx_admit(&a, ADMIT_VALIDATE, body, &out, &resp);
    FX_CHECK(name, strcmp(resp.uid, "uid-1") == 0, "uid %s", resp.uid);
    FX_CHECK(name, resp.allowed == row->allowed, "response allowed = %d: %s", resp.allowed,
             resp.message != NULL ? resp.message : "");
    FX_CHECK(name, resp.patch == NULL && resp.patch_type == NULL, "validation patched");
    FX_CHECK(name, strcmp(out.object_ref, "pod " POD_REF) == 0, "object_ref %s", out.object_ref);
    if (row->allowed) {
        FX_CHECK(name, out.result == ADMIT_ALLOWED && out.rule == OTA_RULE_NONE && !resp.has_status,
                 "result %s", admit_result_name(out.result));
    } else {
        FX_CHECK(name, out.result == ADMIT_DENIED, "result %s", admit_result_name(out.result));
        FX_CHECK(name, out.rule == v.rule, "rule %d, the verdict's %d", (int)out.rule, (int)v.rule);
        FX_CHECK(name, resp.has_status && resp.code == 403, "status code %lld", resp.code);
        FX_CHECK(name, strcmp(resp.status_reason, "Forbidden") == 0, "reason %s", resp.status_reason);
        const char *msg = resp.message;
        FX_CHECK(name, strcmp(msg, out.message) == 0, "message differs: %s / %s", msg, out.message);
        FX_CHECK(name, strstr(msg, "pod " POD_REF) != NULL, "pod not named: %s", msg);
        char want[128];
        snprintf(want, sizeof(want), "rule: %s, state: %s", row->rule, ota_state_name(row->from));
        FX_CHECK(name, strstr(msg, want) != NULL, "\"%s\" not in: %s", want, msg);
        for (size_t i = 0; i < sizeof(rule_phrases) / sizeof(rule_phrases[0]); i++)
            if (strcmp(rule_phrases[i].rule, row->rule) == 0)
                FX_CHECK(name, strstr(msg, rule_phrases[i].phrase) != NULL, "\"%s\" not in: %s",
                         rule_phrases[i].phrase, msg);
    }
    arena_free(&a);
}

static void test_transition_table(void **state)
{
    (void)state;
    size_t denied = 0;
    for (size_t i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++) {
        char name[192];
        snprintf(name, sizeof(name), "%s by %s", transitions[i].name, whos[transitions[i].who].label);
        check_row(&transitions[i], name);
        denied += !transitions[i].allowed;
    }
    /* Keeps the table honest about having both kinds of rows. */
    assert_true(denied > 40);
    assert_true(sizeof(transitions) / sizeof(transitions[0]) - denied > 40);
}

/* Every transition of DESIGN §3 appears for all five requester kinds. */
static void test_table_covers_every_requester(void **state)
{
    (void)state;
    static const char *const design[] = {
        "CURRENT -> PENDING (KUBECTL)", "PENDING -> PULLING (KUBECTL)",
        "PENDING -> PULLING_ASKED (YURTHUB)", "FAILED -> PULLING (KUBECTL)",
        "READY -> PULLING (KUBECTL)", "PULLING -> READY (KUBECTL)", "PULLING -> FAILED (KUBECTL)",
        "PULLING -> NEXT (KUBECTL)", "READY -> NEXT (KUBECTL)", "FAILED -> NEXT (KUBECTL)",
        "PENDING -> CURRENT (KUBECTL)", "PENDING -> NEXT (KUBECTL)",
        "CURRENT -> CURRENT_ASKS (KUBECTL)", "PENDING -> READY (KUBECTL)",
        "PULLING -> PULLING (KUBELET)", "READY -> READY_RETIMED (RETIMED)",
    };
    for (size_t d = 0; d < sizeof(design) / sizeof(design[0]); d++) {
        int seen[N_WHO] = {0};
        for (size_t i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++)
            if (strcmp(transitions[i].name, design[d]) == 0)
                seen[transitions[i].who]++;
        for (int w = 0; w < N_WHO; w++)
            if (seen[w] != 1)
                fail_msg("%s by %s: %d rows", design[d], whos[w].label, seen[w]);
    }
}

/* Every pod-status rule (ota_rule.h, the metrics' rule label) has a row
 * that produces it; the DaemonSet ones are in test_ota_daemonset.c and,
 * through admit_review, test_admit_daemonset.c; the ImagePullJob ones in
 * test_admit_imagepulljob.c. */
static void test_every_rule_has_a_row(void **state)
{
    (void)state;
    int found = 0;
    for (int r = OTA_RULE_NONE + 1; r < OTA_N_RULES; r++) {
        if (r == OTA_RULE_UNKNOWN_UPDATE_STRATEGY || r == OTA_RULE_OTA_REQUIRES_ONDELETE ||
            r == OTA_RULE_BAD_PREPULL_TIMEOUT || r >= OTA_RULE_IPJ_MALFORMED)
            continue;
        const char *rule = ota_rule_name((ota_rule)r);
        int rows = 0;
        for (size_t i = 0; i < sizeof(transitions) / sizeof(transitions[0]); i++)
            rows += !transitions[i].allowed && strcmp(transitions[i].rule, rule) == 0;
        if (rows == 0)
            fail_msg("no row is denied by %s", rule);
        found++;
    }
    assert_int_equal(found, OTA_RULE_IPJ_MALFORMED - 1 - 3);
}

/* ---- classification ------------------------------------------------------ */

typedef struct class_row {
    const char *name;
    fx_cond nu, ir;
    ota_state want;
} class_row;

static const class_row classes[] = {
    {"no OTA conditions", CURRENT, OTA_STATE_CURRENT},
    {"PodNeedUpgrade False", CURRENT_FALSE, OTA_STATE_CURRENT},
    {"PodNeedUpgrade False, Ready about H", NU_FALSE, IR_OK(H2), OTA_STATE_CURRENT},
    {"PodNeedUpgrade \"true\" is not True", {"true", NULL, REV(H2), NULL}, ABSENT, OTA_STATE_CURRENT},
    {"PodNeedUpgrade Unknown", {"Unknown", NULL, REV(H2), NULL}, IR_WAIT(H2), OTA_STATE_CURRENT},
    {"only PodImageReady", ABSENT, IR_OK(H2), OTA_STATE_CURRENT},
    {"PodNeedUpgrade True, no PodImageReady", PENDING, OTA_STATE_PENDING_UPGRADE},
    {"Ready about an older hash", PENDING_STALE_READY, OTA_STATE_PENDING_UPGRADE},
    {"pulling an older hash", PENDING_STALE_PULL, OTA_STATE_PENDING_UPGRADE},
    {"request without message", NU(H2), {"False", OTA_REASON_WAIT_PULL, NULL, NULL},
     OTA_STATE_PENDING_UPGRADE},
    {"pulling H", PULLING, OTA_STATE_PULLING},
    {"pulling H, no reason (YurtHub)", PULLING_ASKED, OTA_STATE_PULLING},
    {"pulling H, reason \"\"", NU(H2), {"False", "", REV(H2), NULL}, OTA_STATE_PULLING},
    {"PodNeedUpgrade message without prefix", {"True", NULL, H2, NULL}, {"False", NULL, H2, NULL},
     OTA_STATE_PENDING_UPGRADE},
    {"Ready about H", READY, OTA_STATE_READY},
    {"True with reason WaitPullImage", ASKS_TRUE, OTA_STATE_PENDING_UPGRADE},
    {"True without reason", NU(H2), {"True", NULL, REV(H2), NULL}, OTA_STATE_PENDING_UPGRADE},
    {"PullImageSuccess with status False", NU(H2), {"False", OTA_REASON_PULL_SUCCESS, REV(H2), NULL},
     OTA_STATE_PENDING_UPGRADE},
    {"Failed (message names a job)", FAILED, OTA_STATE_FAILED},
    {"Failed whatever the message", NU(H2), {"False", OTA_REASON_PULL_FAIL, REV(H1), NULL},
     OTA_STATE_FAILED},
    {"PullImageFail with status True", NU(H2), {"True", OTA_REASON_PULL_FAIL, REV(H2), NULL},
     OTA_STATE_PENDING_UPGRADE},
    {"unknown reason", ASKS_BADLY, OTA_STATE_PENDING_UPGRADE},
    {"PodImageReady Unknown", NU(H2), {"Unknown", NULL, REV(H2), NULL}, OTA_STATE_PENDING_UPGRADE},
};

static void test_classification(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
        const class_row *row = &classes[i];
        arena a;
        arena_init(&a);
        char *conds = conditions_json(&a, &row->nu, &row->ir, KUBECTL, 0);
        const char *body = fx_pod_status_review(&a, "alice", NULL, fx_pod(&a, "node-1", conds),
                                                fx_pod(&a, "node-1", conds));
        review rv;
        char err[256];
        FX_CHECK(row->name, review_decode(&rv, body, strlen(body), &a, err, sizeof(err)) == 0,
                 "%s", err);
        ota_pod pod = review_pod_view(&rv.object);
        ota_state got = ota_state_of_pod(&pod);
        FX_CHECK(row->name, got == row->want, "got %s, want %s", ota_state_name(got),
                 ota_state_name(row->want));
        arena_free(&a);
    }
}

static void test_state_names(void **state)
{
    (void)state;
    assert_string_equal(ota_state_name(OTA_STATE_CURRENT), "Current");
    assert_string_equal(ota_state_name(OTA_STATE_PENDING_UPGRADE), "PendingUpgrade");
    assert_string_equal(ota_state_name(OTA_STATE_PULLING), "Pulling");
    assert_string_equal(ota_state_name(OTA_STATE_READY), "Ready");
    assert_string_equal(ota_state_name(OTA_STATE_FAILED), "Failed");
}

/* ---- "changed" ------------------------------------------------------------ */

static review_cond cond(const char *status, const char *reason, const char *message,
                        const char *ltt)
{
    review_cond c = {0};
    c.present = status != NULL;
    c.status = sv_from(status);
    c.reason = sv_from(reason);
    c.message = sv_from(message);
    c.last_transition_time = sv_from(ltt);
    return c;
}

/* The rulebook's answers on the decoder's view of two conditions. */
static int cond_same(const review_cond *a, const review_cond *b)
{
    ota_cond va = review_cond_view(a), vb = review_cond_view(b);
    return ota_state_cond_same(&va, &vb);
}

static int pull_request(const review_cond *c)
{
    ota_cond v = review_cond_view(c);
    return ota_state_is_pull_request(&v);
}

static void test_cond_same(void **state)
{
    (void)state;
    review_cond a = cond("False", "WaitPullImage", REV(H2), "2026-11-21T19:40:05Z");
    review_cond b = a;
    assert_true(cond_same(&a, &b));
    b.last_transition_time = sv_from("2026-11-21T23:00:00Z");
    assert_true(cond_same(&a, &b)); /* timestamps alone are no change */
    b.last_transition_time = SV_NULL;
    assert_true(cond_same(&a, &b));
    b = a;
    b.status = sv_from("True");
    assert_false(cond_same(&a, &b));
    b = a;
    b.reason = sv_from("PullImageFail");
    assert_false(cond_same(&a, &b));
    b = a;
    b.message = sv_from(REV(H1));
    assert_false(cond_same(&a, &b));
    b = a;
    b.message = SV_NULL;
    assert_false(cond_same(&a, &b));
    /* Go leaves empty strings out: absent and "" are the same reason. */
    review_cond c = cond("False", NULL, REV(H2), NULL), d = cond("False", "", REV(H2), NULL);
    assert_true(cond_same(&c, &d));
    review_cond none = cond(NULL, NULL, NULL, NULL), none2 = cond(NULL, NULL, NULL, NULL);
    assert_true(cond_same(&none, &none2));
    assert_false(cond_same(&none, &c));
    assert_false(cond_same(&c, &none));
}

static void test_pull_request_shape(void **state)
{
    (void)state;
    review_cond c = cond("False", NULL, REV(H2), NULL);
    assert_true(pull_request(&c));
    c = cond("False", "", NULL, NULL);
    assert_true(pull_request(&c));
    c = cond("False", OTA_REASON_WAIT_PULL, NULL, NULL);
    assert_true(pull_request(&c));
    c = cond("False", OTA_REASON_PULL_FAIL, NULL, NULL);
    assert_false(pull_request(&c));
    c = cond("True", OTA_REASON_WAIT_PULL, NULL, NULL);
    assert_false(pull_request(&c));
    c = cond(NULL, NULL, NULL, NULL);
    assert_false(pull_request(&c));
    c = cond("false", NULL, NULL, NULL);
    assert_false(pull_request(&c));
}

/* ---- requesters ------------------------------------------------------------ */

static ota_verdict decide(arena *a, const char *username, const char *groups, const char *node,
                          const transition_row *shape_of, const char *controller)
{
    char *old_pod =
        fx_pod(a, node, conditions_json(a, &shape_of->old_nu, &shape_of->old_ir, KUBECTL, 0));
    char *new_pod =
        fx_pod(a, node, conditions_json(a, &shape_of->new_nu, &shape_of->new_ir, KUBECTL, 1));
    const char *body = fx_pod_status_review(a, username, groups, old_pod, new_pod);
    review rv;
    char err[256];
    assert_int_equal(review_decode(&rv, body, strlen(body), a, err, sizeof(err)), 0);
    ota_requester who = ota_requester_of(rv.username, rv.is_master, controller, NULL);
    ota_pod was = review_pod_view(&rv.old_object), asked = review_pod_view(&rv.object);
    return ota_state_check_update(&was, &asked, &who, POD_REF, a);
}

/* A node identity must match spec.nodeName exactly, not by prefix. */
static void test_node_identity(void **state)
{
    (void)state;
    static const transition_row ask = ROW(NODE_SELF, PENDING, PULLING, KUBECTL, PENDING_UPGRADE,
                                          PULLING, OK);
    static const struct {
        const char *username, *node;
        int allowed;
    } rows[] = {
        {"system:node:node-1", "node-1", 1},
        {"system:node:node-1", "node-10", 0},
        {"system:node:node-10", "node-1", 0},
        {"system:node:node-", "node-1", 0},
        {"system:node:", "node-1", 0},
        {"system:node:", NULL, 0},      /* empty node name matches no pod */
        {"system:node:node-1", NULL, 0}, /* an unscheduled pod is no node's */
        {"system:node:NODE-1", "node-1", 0},
        {"system:nodes:node-1", "node-1", 1}, /* not a node identity: a node user */
        {"alice", NULL, 1},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ota_verdict v = decide(&a, rows[i].username, "[\"system:nodes\"]", rows[i].node, &ask,
                               FX_CONTROLLER);
        FX_CHECK(rows[i].username, v.allowed == rows[i].allowed, "pod on %s: %s",
                 rows[i].node != NULL ? rows[i].node : "(none)", v.message != NULL ? v.message : "");
        if (!v.allowed)
            assert_string_equal(ota_rule_name(v.rule), R_NODE);
        arena_free(&a);
    }
}

/* Issue 19: a plain `kubectl patch` request after a failure (or after a
 * success) that leaves out "reason":"" keeps the stored result's reason; the
 * denial says so, and a result the user wrote on purpose gets no such hint. */
static void test_stale_reason_hint(void **state)
{
    (void)state;
#define STALE_HINT "the reason is the stored one, kept by a merge patch that does not name it: " \
                   "to ask for a pre-pull, write \"reason\":\"\""
    static const struct {
        transition_row shape_of;
        int hint;
    } rows[] = {
        /* the README's old form after a failure: reason PullImageFail kept */
        {ROW(NODE_SELF, FAILED, ASKS_KEEPING_FAIL, KUBECTL, FAILED, FAILED, DENY(R_RESULT)),
         1},
        /* ... after a success, status False over PullImageSuccess */
        {ROW(NODE_SELF, READY, ASKS_KEEPING_OK, KUBECTL, READY, PENDING_UPGRADE, DENY(R_RESULT)),
         1},
        /* results written on purpose: the reason is new, or the status True */
        {ROW(NODE_SELF, PULLING, FAILED, KUBECTL, PULLING, FAILED, DENY(R_RESULT)), 0},
        {ROW(NODE_SELF, PULLING, READY, KUBECTL, PULLING, READY, DENY(R_RESULT)), 0},
        {ROW(NODE_SELF, FAILED, READY, KUBECTL, FAILED, READY, DENY(R_RESULT)), 0},
        {ROW(NODE_SELF, READY, PENDING_STALE_READY, KUBECTL, READY, PENDING_UPGRADE,
             DENY(R_RESULT)),
         0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        ota_verdict v = decide(&a, "system:node:node-1", "[\"system:nodes\"]", "node-1",
                               &rows[i].shape_of, FX_CONTROLLER);
        FX_CHECK(rows[i].shape_of.name, !v.allowed && v.rule == OTA_RULE_RESULT_OWNED_BY_CONTROLLER,
                 "%s", v.message != NULL ? v.message : "(allowed)");
        assert_non_null(v.message);
        FX_CHECK(rows[i].shape_of.name, (strstr(v.message, STALE_HINT) != NULL) == rows[i].hint,
                 "%s", v.message);
        assert_non_null(strstr(v.message, "only the controller may report a pre-pull result"));
        arena_free(&a);
    }
#undef STALE_HINT
}

/* The node that counts is the stored pod's: a status write cannot move a
 * pod, and the apiserver only resets spec after the mutating webhooks, so
 * the object's spec.nodeName is whatever the client sent. */
static void test_node_of_stored_pod(void **state)
{
    (void)state;
    static const fx_cond nu = NU(H2), none = ABSENT, ask = IR_WAIT(H2);
    static const struct {
        const char *username, *old_node, *new_node;
        int allowed;
    } rows[] = {
        {"system:node:node-2", "node-1", "node-2", 0}, /* claims the pod moved to it */
        {"system:node:node-2", "node-1", NULL, 0},
        {"system:node:node-1", "node-1", "node-2", 1},
        {"system:node:node-1", "node-1", NULL, 1},
        {"system:node:node-2", NULL, "node-2", 0},     /* unscheduled: no node's */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        const char *body = fx_pod_status_review(
            &a, rows[i].username, "[\"system:nodes\"]",
            fx_pod(&a, rows[i].old_node, conditions_json(&a, &nu, &none, KUBECTL, 0)),
            fx_pod(&a, rows[i].new_node, conditions_json(&a, &nu, &ask, KUBECTL, 1)));
        admit_outcome out;
        fx_response resp;
        fx_admit(&a, ADMIT_VALIDATE, body, &out, &resp);
        FX_CHECK(rows[i].username, resp.allowed == rows[i].allowed, "pod on %s, object says %s: %s",
                 rows[i].old_node, rows[i].new_node, resp.message != NULL ? resp.message : "allowed");
        if (!rows[i].allowed) {
            assert_string_equal(ota_rule_name(out.rule), R_NODE);
            char want[64];
            snprintf(want, sizeof(want), "which runs on node \"%s\"",
                     rows[i].old_node != NULL ? rows[i].old_node : "");
            assert_contains(resp.message, want);
        }
        arena_free(&a);
    }
}

/* --controller-username decides who the controller is; masters win. */
static void test_requester_kinds(void **state)
{
    (void)state;
    static const transition_row upgrade = ROW(CTRL, CURRENT, PENDING, KUBECTL, CURRENT,
                                              PENDING_UPGRADE, OK);
    arena a;
    arena_init(&a);
    const char *other = "system:serviceaccount:kube-system:ota";
    assert_true(decide(&a, other, NULL, "node-1", &upgrade, other).allowed);
    ota_verdict v = decide(&a, FX_CONTROLLER, NULL, "node-1", &upgrade, other);
    assert_false(v.allowed);
    assert_string_equal(ota_rule_name(v.rule), R_NU);
    /* system:masters only as a group, not as a username or a prefix */
    assert_true(decide(&a, "x", "[\"a\",\"system:masters\"]", "node-1", &upgrade, other).allowed);
    assert_false(decide(&a, "system:masters", "[]", "node-1", &upgrade, other).allowed);
    assert_false(decide(&a, "x", "[\"system:masters2\",\"system:master\"]", "node-1", &upgrade,
                        other).allowed);

    const char *body = fx_pod_status_review(&a, FX_CONTROLLER, "[\"system:masters\"]",
                                            fx_pod(&a, "n", NULL), fx_pod(&a, "n", NULL));
    review rv;
    char err[256];
    assert_int_equal(review_decode(&rv, body, strlen(body), &a, err, sizeof(err)), 0);
    ota_requester who = ota_requester_of(rv.username, rv.is_master, FX_CONTROLLER, NULL);
    assert_int_equal(who.kind, OTA_REQ_MASTER); /* masters first */
    assert_true(sv_eq(who.username, FX_CONTROLLER));
    arena_free(&a);
}

/* --co-writer-usernames: whole names, after masters and the controller. */
static void test_co_writer_list(void **state)
{
    (void)state;
    static const struct {
        const char *username, *list;
        int listed;
    } rows[] = {
        {"a", "a", 1},
        {"b", "a,b,c", 1},
        {"c", "a,b,c", 1},
        {"a", NULL, 0},
        {"a", "", 0},
        {"", "a,,b", 0},  /* an empty name matches nobody (flags refuse the list) */
        {"ab", "a,b", 0}, /* whole names, not prefixes ... */
        {"a", "ab,ba", 0},
        {"a,b", "a,b", 0}, /* ... nor two names */
        {"system:serviceaccount:kube-system:yurt-manager", FX_CO_WRITERS, 1},
        {FX_CO_WRITER, FX_CO_WRITERS, 1},
        {"system:serviceaccount:kube-system:yurt-manager-image-preheat-controller",
         FX_CO_WRITERS, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (ota_state_name_listed(sv_from(rows[i].username), rows[i].list) != rows[i].listed)
            fail_msg("\"%s\" in \"%s\": want %d", rows[i].username,
                     rows[i].list != NULL ? rows[i].list : "(null)", rows[i].listed);
    sv cw = sv_from(FX_CO_WRITER);
    assert_int_equal(ota_requester_of(cw, 0, FX_CONTROLLER, FX_CO_WRITERS).kind, OTA_REQ_CO_WRITER);
    assert_int_equal(ota_requester_of(cw, 1, FX_CONTROLLER, FX_CO_WRITERS).kind, OTA_REQ_MASTER);
    assert_int_equal(ota_requester_of(cw, 0, FX_CO_WRITER, FX_CO_WRITERS).kind,
                     OTA_REQ_CONTROLLER);
    assert_int_equal(ota_requester_of(cw, 0, FX_CONTROLLER, NULL).kind, OTA_REQ_NODE_USER);
}

/* The configured name reaches the decision through admit_review. */
static void test_admit_uses_configured_controller(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    static const fx_cond nu = NU(H2), none = ABSENT;
    const char *body = fx_pod_status_review(
        &a, FX_CONTROLLER, NULL,
        fx_pod(&a, "node-1", conditions_json(&a, &none, &none, KUBECTL, 0)),
        fx_pod(&a, "node-1", conditions_json(&a, &nu, &none, KUBECTL, 1)));
    const admit_config other = {.controller_username = "system:serviceaccount:kube-system:ota"};
    admit_outcome out;
    assert_int_equal(admit_review(ADMIT_VALIDATE, body, strlen(body), FX_NOW, &other, &a, &out), 0);
    assert_int_equal(out.result, ADMIT_DENIED);
    assert_string_equal(ota_rule_name(out.rule), R_NU);
    const admit_config dflt = {.controller_username = FX_CONTROLLER};
    assert_int_equal(admit_review(ADMIT_VALIDATE, body, strlen(body), FX_NOW, &dflt, &a, &out), 0);
    assert_int_equal(out.result, ADMIT_ALLOWED);
    arena_free(&a);
}

/* Deleting the pod is the upgrade itself: never blocked, whatever its state. */
static void test_delete_never_blocked(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    static const fx_cond nu = NU(H2), ir = IR_WAIT(H2);
    char *pod = fx_pod(&a, "node-1", conditions_json(&a, &nu, &ir, KUBECTL, 0));
    fx_request r = {.group = "", .version = "v1", .resource = "pods", .operation = "DELETE",
                    .namespace = "edge", .name = "agent-x7k2p", .username = "system:node:node-2",
                    .old_object = pod};
    for (int phase = ADMIT_MUTATE; phase <= ADMIT_VALIDATE; phase++) {
        admit_outcome out;
        fx_response resp;
        fx_admit(&a, (admit_phase)phase, fx_review(&a, &r), &out, &resp);
        assert_true(resp.allowed);
        assert_null(resp.patch);
        assert_int_equal(out.result, ADMIT_ALLOWED);
        assert_null(out.object_ref);
    }
    arena_free(&a);
}

/* A pods/status write without oldObject cannot be judged: a bad request. */
static void test_pod_status_needs_both_objects(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    const char *pod = fx_pod(&a, "node-1", "[]");
    const char *bodies[] = {
        fx_pod_status_review(&a, "alice", NULL, NULL, pod),
        fx_pod_status_review(&a, "alice", NULL, pod, NULL),
        fx_pod_status_review(&a, "alice", NULL, "null", pod),
    };
    const admit_config cfg = {.controller_username = FX_CONTROLLER};
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        for (int phase = ADMIT_MUTATE; phase <= ADMIT_VALIDATE; phase++) {
            admit_outcome out;
            assert_int_equal(admit_review((admit_phase)phase, bodies[i], strlen(bodies[i]), FX_NOW,
                                          &cfg, &a, &out),
                             0);
            assert_int_equal(out.http_status, 400);
            assert_int_equal(out.result, ADMIT_INVALID);
            assert_contains(out.message, "request.oldObject");
            assert_contains(out.body, "\"kind\":\"Status\"");
        }
    }
    arena_free(&a);
}

/* ota_state_request_time, rule by rule (the webhook's rows in
 * test_admit_podstatus.c show the same through a review). */
typedef struct rt_row {
    const char *name;
    const char *was_status, *was_reason, *was_msg, *was_time; /* status NULL: none */
    const char *asked_reason, *asked_msg, *asked_time;
    const char *now, *want;
    ota_request_time_rule rule;
} rt_row;

#define T0 "2026-11-21T21:02:00Z"
#define NOW_T "2026-11-21T21:30:00Z"

static const rt_row rt_rows[] = {
    {"first request, no reason: now", NULL, NULL, NULL, NULL, "", REV(H2), "", NOW_T, NOW_T,
     OTA_RT_NOW},
    {"first request, kubectl's time", NULL, NULL, NULL, NULL, OTA_REASON_WAIT_PULL, REV(H2),
     "2026-11-21T21:29:00Z", NOW_T, "2026-11-21T21:29:00Z", OTA_RT_AS_ASKED},
    {"kubectl's request without a time: now", NULL, NULL, NULL, NULL, OTA_REASON_WAIT_PULL,
     REV(H2), "", NOW_T, NOW_T, OTA_RT_NOW},
    {"reason-less request with a time: now all the same", NULL, NULL, NULL, NULL, "", REV(H2),
     "2026-11-21T21:29:00Z", NOW_T, NOW_T, OTA_RT_NOW},
    {"repeat while pending: stored", "False", OTA_REASON_WAIT_PULL, REV(H2), T0, "", REV(H2), "",
     NOW_T, T0, OTA_RT_KEPT},
    {"repeat of an unstamped pending request: stored", "False", "", REV(H2), T0, "", REV(H2),
     "", NOW_T, T0, OTA_RT_KEPT},
    {"pending request without a time: not kept", "False", OTA_REASON_WAIT_PULL, REV(H2), "", "",
     REV(H2), "", NOW_T, NOW_T, OTA_RT_NOW},
    {"pending request with a bad time: not kept", "False", OTA_REASON_WAIT_PULL, REV(H2),
     "yesterday", "", REV(H2), "", NOW_T, NOW_T, OTA_RT_NOW},
    {"pending for another revision: new", "False", OTA_REASON_WAIT_PULL, REV(H1), T0, "", REV(H2),
     "", NOW_T, NOW_T, OTA_RT_NOW},
    {"after a failure in this second: +1 s", "False", OTA_REASON_PULL_FAIL, "pull image job x failed",
     NOW_T, "", REV(H2), "", NOW_T, "2026-11-21T21:30:01Z", OTA_RT_BUMPED},
    {"after a success in this second: +1 s", "True", OTA_REASON_PULL_SUCCESS, REV(H2), NOW_T, "",
     REV(H2), "", NOW_T, "2026-11-21T21:30:01Z", OTA_RT_BUMPED},
    {"after a success with a fraction: +1 s, whole seconds", "True", OTA_REASON_PULL_SUCCESS,
     REV(H2), "2026-11-21T21:30:00.999999Z", "", REV(H2), "", NOW_T, "2026-11-21T21:30:01Z",
     OTA_RT_BUMPED},
    {"after an older result: now", "True", OTA_REASON_PULL_SUCCESS, REV(H2), T0, "", REV(H2), "",
     NOW_T, NOW_T, OTA_RT_NOW},
    {"across a year's end", "True", OTA_REASON_PULL_SUCCESS, REV(H2), "2026-12-31T23:59:59Z", "",
     REV(H2), "", "2026-12-31T23:59:58Z", "2027-01-01T00:00:00Z", OTA_RT_BUMPED},
    {"kubectl's bad time: now", NULL, NULL, NULL, NULL, OTA_REASON_WAIT_PULL, REV(H2),
     "2026-11-21 21:29:00", NOW_T, NOW_T, OTA_RT_NOW},
    /* offsets read as the apiserver reads them (lib/clock.h); the apiserver
     * stores the time in UTC */
    {"kubectl's time with an offset: as asked", NULL, NULL, NULL, NULL, OTA_REASON_WAIT_PULL,
     REV(H2), "2026-11-21T23:29:00+02:00", NOW_T, "2026-11-21T23:29:00+02:00", OTA_RT_AS_ASKED},
    {"an offset time no later than the stored one: +1 s", "True", OTA_REASON_PULL_SUCCESS,
     REV(H2), "2026-11-21T21:29:00Z", OTA_REASON_WAIT_PULL, REV(H2), "2026-11-21T23:29:00+02:00",
     NOW_T, "2026-11-21T21:29:01Z", OTA_RT_BUMPED},
    {"kubectl's time with a bad offset: now", NULL, NULL, NULL, NULL, OTA_REASON_WAIT_PULL,
     REV(H2), "2026-11-21T21:29:00+0200", NOW_T, NOW_T, OTA_RT_NOW},
    {"a stored year before 1000: +1 s, four digits", "True", OTA_REASON_PULL_SUCCESS, REV(H2),
     "0999-01-01T00:00:00Z", OTA_REASON_WAIT_PULL, REV(H2), "0998-06-01T00:00:00Z", NOW_T,
     "0999-01-01T00:00:01Z", OTA_RT_BUMPED},
    {"kubectl's time on February 30th: now", NULL, NULL, NULL, NULL, OTA_REASON_WAIT_PULL,
     REV(H2), "2026-02-30T21:29:00Z", NOW_T, NOW_T, OTA_RT_NOW},
    /* a time too long for the stamp is written whole, in our spelling,
     * never cut short */
    {"kubectl's time with a long fraction: whole seconds", NULL, NULL, NULL, NULL,
     OTA_REASON_WAIT_PULL, REV(H2), "2026-11-21T21:29:00.1234567890123Z", NOW_T,
     "2026-11-21T21:29:00Z", OTA_RT_AS_ASKED},
};

static void test_request_time(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rt_rows) / sizeof(rt_rows[0]); i++) {
        const rt_row *r = &rt_rows[i];
        ota_cond was = {0};
        if (r->was_status != NULL)
            was = (ota_cond){1, sv_from(r->was_status), sv_from(r->was_reason), sv_from(r->was_msg)};
        ota_cond asked = {1, sv_from("False"), sv_from(r->asked_reason), sv_from(r->asked_msg)};
        char out[32];
        ota_request_time_rule rule =
            ota_state_request_time(&was, sv_from(r->was_time != NULL ? r->was_time : ""), &asked,
                                   sv_from(r->asked_time), r->now, out, sizeof(out));
        if (strcmp(out, r->want) != 0 || rule != r->rule)
            fail_msg("%s: got %s (rule %d), want %s (rule %d)", r->name, out, (int)rule, r->want,
                     (int)r->rule);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transition_table),
        cmocka_unit_test(test_table_covers_every_requester),
        cmocka_unit_test(test_every_rule_has_a_row),
        cmocka_unit_test(test_classification),
        cmocka_unit_test(test_state_names),
        cmocka_unit_test(test_cond_same),
        cmocka_unit_test(test_pull_request_shape),
        cmocka_unit_test(test_node_identity),
        cmocka_unit_test(test_stale_reason_hint),
        cmocka_unit_test(test_node_of_stored_pod),
        cmocka_unit_test(test_requester_kinds),
        cmocka_unit_test(test_co_writer_list),
        cmocka_unit_test(test_admit_uses_configured_controller),
        cmocka_unit_test(test_delete_never_blocked),
        cmocka_unit_test(test_pod_status_needs_both_objects),
        cmocka_unit_test(test_request_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

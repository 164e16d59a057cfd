/*
 * podview.h - what kubectl-ota reads of a pod and decides from it: the OTA
 * state (lib/ota_state's classification, through lib/kobj's pod view: the
 * same rulebook the webhook and the controller ask), the columns of
 * `kubectl ota list`, and whether pull, upgrade or a watch may go on.
 *
 * Pure: objects come in as parsed JSON trees (json_parse_tree, whose depth
 * bound makes them safe to walk), decisions go out as values.
 */
#ifndef OTA_CLI_PODVIEW_H
#define OTA_CLI_PODVIEW_H

#include <stddef.h>

#include "json.h"
#include "kobj.h"
#include "ota_state.h"
#include "pullerr.h"

/* kubectl-ota's exit codes (`kubectl ota --help` lists them). */
typedef enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_ERROR = 1,         /* the cluster or the configuration failed us */
    CLI_EXIT_USAGE = 2,         /* bad flags or arguments */
    CLI_EXIT_NOT_FOUND = 3,     /* the pod does not exist */
    CLI_EXIT_NOT_OTA = 4,       /* the pod is not in an OTA DaemonSet */
    CLI_EXIT_NO_UPGRADE = 5,    /* PodNeedUpgrade is not True */
    CLI_EXIT_DENIED = 6,        /* the apiserver refused: a webhook's denial, or a 403 on
                                 * another node's pod or for want of RBAC (format.h) */
    CLI_EXIT_NOT_READY = 7,     /* upgrade refused: the new image is not pre-pulled */
    CLI_EXIT_TIMEOUT = 8,       /* --timeout ran out */
    CLI_EXIT_PULL_FAILED = 9,   /* status --watch ended Failed, or the request was dropped */
} cli_exit;

/* Most images of one revision kubectl-ota keeps (a hostile object could
 * list thousands). */
#define CLI_MAX_IMAGES 64

typedef struct cli_pod {
    kobj *k;                 /* kobj_decode(KOBJ_POD): identity, node, hash, OTA conditions */
    char *owner_kind, *owner_name; /* the controller ownerReference, or NULL */
    char *created;           /* metadata.creationTimestamp, or NULL */
    char *resource_version;  /* or NULL */
    int ready;               /* condition Ready is True */
} cli_pod;

/* Decodes a pod; NULL when it lacks a name or uid, or memory runs out.
 * Free with cli_pod_free. */
cli_pod *cli_pod_decode(yajl_val obj);
void cli_pod_free(cli_pod *p);

/* The pod's state (DESIGN §3). */
ota_state cli_pod_state(const cli_pod *p);

/* The revision the pod is to run: the hash PodNeedUpgrade=True names
 * ("controllerrevision: H"), else the revision it runs (its
 * controller-revision-hash label).  Absent when neither is known. */
sv cli_pod_target(const cli_pod *p);

/* The pod's pre-pull of its target revision is an automatic one (issue
 * 22): AutoPrePull is True and names the revision PodNeedUpgrade names (its
 * DaemonSet opted in, and no node user took the pull over: that turns it
 * False, NodeUserRequest).  Pending, Pulling, Ready or Failed alike: the
 * pull is (or was) the controller's own.  `kubectl ota list` marks the
 * STATE cell with CLI_AUTO_MARK. */
int cli_pod_auto(const cli_pod *p);
#define CLI_AUTO_MARK " (auto)"

/* When the pod entered its state, as the condition that decides it says
 * (RFC 3339): PodImageReady's lastTransitionTime for Pulling, Ready and
 * Failed; PodNeedUpgrade's for PendingUpgrade and Current; the pod's
 * creation when the condition carries no time.  NULL when nothing says. */
const char *cli_pod_state_since(const cli_pod *p);

/* Is p in an OTA DaemonSet?  From what the GET of its controller (a
 * DaemonSet, checked before) answered: ds_status its HTTP status, ds the
 * DaemonSet decoded when 200.  A 403 (a node's credentials may not read
 * DaemonSets) leaves it to the pod's PodNeedUpgrade: ota-controller writes
 * it, True or False, on every pod of an OTA DaemonSet, and the webhook lets
 * no one else write it. */
typedef enum cli_ota_verdict {
    CLI_OTA_YES,
    CLI_OTA_NOT,      /* the DaemonSet is not served (cli_ds_served; or is another of that name) */
    CLI_OTA_GONE,     /* 404: the DaemonSet is gone */
    CLI_OTA_UNKNOWN,  /* 403 and no PodNeedUpgrade: nothing a node may read tells */
    CLI_OTA_ERROR,    /* any other answer: the call failed */
} cli_ota_verdict;

cli_ota_verdict cli_ota_of(const cli_pod *p, long ds_status, const kobj *ds);

/* Whether ota-controller serves ds's pods: an OTA DaemonSet, or one that is
 * not (RollingUpdate) and asks for automatic pre-pull (it carries
 * apps.kruise.io/image-predownload-parallelism; a value the controller
 * cannot read is said by its Warning Event, and its pods show Current). */
int cli_ds_served(const kobj *ds);

/* A pre-pull Job's pod, which a node may read (it is bound to the node,
 * unlike its Job): the Job's name, the pod and the revision and request it
 * serves, its phase, the target images (its init containers named
 * OTA_JOB_PULL_CONTAINER_PREFIX<i>, in order, at most CLI_MAX_IMAGES) and
 * the first waiting container's reason and message (k's). */
typedef struct cli_jobpod {
    kobj *k;                /* kobj_decode(KOBJ_JOB_POD): name, job_name, waiting */
    char *pod_uid;          /* label OTA_LABEL_POD_UID */
    char *revision;         /* annotation OTA_ANN_JOB_REVISION */
    char *request_time;     /* annotation OTA_ANN_JOB_REQUEST_TIME */
    char *created;          /* metadata.creationTimestamp */
    char *phase;            /* status.phase */
    char *images[CLI_MAX_IMAGES];
    size_t n_images;
} cli_jobpod;

/* Decodes a Job's pod; NULL when it is not one of ours (no pod-uid label),
 * lacks a name or uid, or memory runs out.  Free with cli_jobpod_free. */
cli_jobpod *cli_jobpod_decode(yajl_val obj);
void cli_jobpod_free(cli_jobpod *j);

/* Its Job as the pod's phase tells it: "complete" (Succeeded), "failed"
 * (Failed), else "running". */
const char *cli_jobpod_state(const cli_jobpod *j);

/* Of n Job pods, the newest (by creation; a later one wins a tie) of the
 * pod pod_uid, or NULL. */
const cli_jobpod *cli_jobpod_newest(const cli_jobpod *const *jps, size_t n, const char *pod_uid);

/* An OTA DaemonSet and the revisions kubectl-ota knows of. */
typedef struct cli_revision {
    const char *owner_uid, *hash;
    const char *const *init_images;
    size_t n_init_images;
    const char *const *images;
    size_t n_images;
} cli_revision;

/* One row of `kubectl ota list`. */
typedef enum cli_col {
    CLI_COL_NAMESPACE,
    CLI_COL_POD,
    CLI_COL_NODE,
    CLI_COL_DAEMONSET,
    CLI_COL_STATE,
    CLI_COL_TARGET,
    CLI_COL_IMAGES,
    CLI_COL_AGE,
    CLI_N_COLS
} cli_col;

extern const char *const cli_col_names[CLI_N_COLS];

/* What a row is made from: the revisions read (none when revs_hidden: the
 * identity may not read ControllerRevisions) and the pre-pull Job pods
 * read (those a node may read: on its node).  The IMAGES cell's texts when
 * none tells are in format.h. */
typedef struct cli_list_data {
    const cli_revision *revs;
    size_t n_revs;
    int revs_hidden;
    const cli_jobpod *const *jobpods;
    size_t n_jobpods;
} cli_list_data;

/* The cells of p's row, each a malloc'd string in cells[] (free them with
 * cli_row_free): images are the target revision's (init containers first,
 * comma-separated): of the revision of the pod's DaemonSet with the target
 * hash, else of the pod's newest pre-pull Job pod when it pulls that hash,
 * else CLI_IMAGES_HIDDEN or CLI_IMAGES_UNKNOWN; the age is now_epoch minus
 * cli_pod_state_since.  0, or -1 when memory ran out. */
int cli_row_of(const cli_pod *p, const char *ds_name, const char *ds_uid,
               const cli_list_data *d, long long now_epoch, char *cells[CLI_N_COLS]);
void cli_row_free(char *cells[CLI_N_COLS]);

/* ---- decisions ---- */

typedef enum cli_pull_verdict {
    CLI_PULL_WRITE,           /* PendingUpgrade or Failed: ask for the pull */
    CLI_PULL_ALREADY_PULLING, /* a pull of the target runs: nothing to write */
    CLI_PULL_ALREADY_READY,   /* the target's images are there: upgrade next */
    CLI_PULL_NO_UPGRADE,      /* Current: nothing to pull */
} cli_pull_verdict;

cli_pull_verdict cli_pull_decide(ota_state s);

typedef enum cli_upgrade_verdict {
    CLI_UPGRADE_DELETE,     /* Ready, or forced: delete the pod */
    CLI_UPGRADE_NO_UPGRADE, /* Current: PodNeedUpgrade is not True */
    CLI_UPGRADE_NOT_READY,  /* the new image is not pre-pulled and no --force */
} cli_upgrade_verdict;

cli_upgrade_verdict cli_upgrade_decide(ota_state s, int force);

/* `status --watch` goes on while the pull runs (-1); when it stops, the
 * exit code it ends with: Ready 0, Failed CLI_EXIT_PULL_FAILED, a request
 * gone (PendingUpgrade: a newer revision dropped it) CLI_EXIT_PULL_FAILED,
 * Current CLI_EXIT_NO_UPGRADE. */
int cli_watch_exit(ota_state s);

/* `status --watch` prints a line when the state changes, or when the
 * kubelet says something new (not when its word goes: the Job's pod was
 * removed). */
int cli_watch_line(ota_state last, ota_state now, const char *last_word, const char *word);

/* Why a pull failed, best source first: PodImageReady's message (the
 * controller's, with the kubelet's reason), the Job's failure, the
 * kubelet's latest word; "" when none says. */
const char *cli_failure_reason(const char *image_ready_message, const char *job_why,
                               const char *kubelet);

/* What a failure (cli_failure_reason's words: the controller's message
 * carries the kubelet's reason, "... failed: ErrImagePull: <the runtime's
 * answer>") asks for: PULLERR_REFUSED_NOT when a retry may help (a timeout,
 * a busy registry, an unknown cause), else what the DaemonSet's admin must
 * fix, the image reference or the pull secret (lib/pullerr's words, the
 * controller's too). */
pullerr_refusal cli_failure_refusal(const char *why);

/* `upgrade --wait`: is p the Ready replacement of the pod old_uid of the
 * DaemonSet ds_uid on node? */
int cli_is_replacement(const cli_pod *p, const char *ds_uid, const char *node, const char *old_uid);

/* Of a list of Events (an "items" array), the kubelet's latest (source or
 * reporting component "kubelet", by lastTimestamp, else eventTime; a later
 * item wins a tie), or NULL. */
yajl_val cli_latest_kubelet_event(yajl_val items);

#endif

/*
 * autopull.h - automatic pre-pull of a DaemonSet's new revision (an OTA
 * DaemonSet's, or any other's that opted in: autopull_serve_of)
 * (issue 22 §1; docs/design.md "Automatic pre-pull"): the decisions, pure.
 *
 * A DaemonSet opts in with Kruise's annotation
 * apps.kruise.io/image-predownload-parallelism (a positive integer as a
 * string; empty: Kruise's default 1).  Its knobs:
 *   - apps.kruise.io/image-predownload-timeout-seconds: a pull's deadline
 *     (from OTA_PREPULL_TIMEOUT_MIN to _MAX, as ours); absent: ours or
 *     --pull-timeout as for a node user's request;
 *   - apps.kruise.io/image-predownload-min-updated-ready-pods: "N" or
 *     "N%" of the DaemonSet's desired pods (rounded up, as Kruise's
 *     GetScaledValueFromIntOrPercent(..., true)): automatic pulls start
 *     only once that many pods run the new revision and are Ready;
 *   - ota-prepull.openyurt.io/prepull-window "HH:MM-HH:MM [Zone]": the
 *     hours automatic pulls may START in (wrapping midnight when the end
 *     is earlier), in an IANA zone (default UTC).
 *
 * Where the words are not valid: a bad parallelism, min-updated-ready-pods
 * or window is no opt-in (the DaemonSet asked for something we cannot read:
 * a canary or the cheap hours); a bad timeout is an opt-in with the usual
 * deadline.  Either way a Warning Event says which and why (bad_*).
 *
 * The pod side: each pod of an opted-in DaemonSet that needs revision H
 * carries the condition OTA_COND_AUTO_PREPULL True/DaemonSetOptedIn
 * "controllerrevision: H", written with its PodNeedUpgrade (the webhook
 * lets the controller move a pod into Pulling only then).  autopull_pod
 * says where a pod stands; autopull_starts how many may start this pass;
 * the Event decisions say when to tell the DaemonSet's owner.
 */
#ifndef OTA_AUTOPULL_H
#define OTA_AUTOPULL_H

#include <stddef.h>

#include "ota_state.h"

#define AUTOPULL_ZONE_MAX 64
#define AUTOPULL_PARALLELISM_MAX 100000
#define AUTOPULL_MIN_READY_MAX 1000000

typedef struct autopull_window {
    int present;
    int start, end;               /* minutes since midnight, 0..1439, start != end */
    char zone[AUTOPULL_ZONE_MAX]; /* an IANA name; "": UTC */
} autopull_window;

typedef struct autopull_spec {
    int opted_in;           /* automatic pulls for this DaemonSet */
    long parallelism;       /* >= 1 when opted in */
    long timeout_s;         /* 0: not given or not valid: ours / --pull-timeout */
    long min_ready;         /* a count, or a percent when min_ready_percent */
    int min_ready_percent;
    autopull_window window;
    const char *bad_annotation; /* the first annotation not valid, or NULL */
    char bad_why[160];          /* why, in words */
} autopull_spec;

/* Each: 0 and *out set, or -1 (not valid).  NULL is "absent": only the
 * callers below know what absent means. */
int autopull_parse_parallelism(const char *v, long *out); /* "" -> 1 */
int autopull_parse_timeout(const char *v, long *out);
int autopull_parse_min_ready(const char *v, long *n, int *percent); /* "" -> 0 */
int autopull_parse_window(const char *v, autopull_window *w);

/* The four annotations' values (NULL: absent) into s. */
void autopull_spec_parse(autopull_spec *s, const char *parallelism, const char *timeout,
                         const char *min_ready, const char *window);

/* How many pods of the new revision must be Ready before automatic pulls
 * start, for a DaemonSet that wants desired pods. */
size_t autopull_min_ready_needed(const autopull_spec *s, size_t desired);

/* Whether minute (since midnight in the window's zone) is inside w; an
 * absent window is always open. */
int autopull_window_open(const autopull_window *w, int minute);

/* Seconds from minute:second (of the day, in w's zone) until w next
 * opens: 0 when it is open now (or absent), else 1 to 86400.  Counted in
 * the zone's offset now: on a day the offset changes (DST) between now
 * and the opening it may be an hour off; the pass then, or the resync,
 * sees the window as it is (autopull_window_open decides, not this). */
long autopull_next_open_s(const autopull_window *w, int minute, int second);

/* Glue (not pure): the minute (and second, if second is not NULL) of the
 * day at now_epoch in w's zone, read from the system's tzdata (TZDIR or
 * /usr/share/zoneinfo) through glibc's localtime_r with TZ set around it:
 * the controller is single-threaded.  The zone's file is read again on
 * every call (a tzdata update is seen without a restart).  0 and *minute,
 * or -1 when the zone is not known there (the window then counts as
 * closed, and the caller warns). */
int autopull_minute_now(const autopull_window *w, long long now_epoch, int *minute, int *second);

/* Which DaemonSets the controller serves (docs/design.md "Automatic
 * pre-pull", "DaemonSets that are not OTA"). */
typedef enum autopull_serve {
    AUTOPULL_SERVE_NONE,  /* not ours: its pods are unserved (nothing written
                           * unless a request or a PodNeedUpgrade of ours stands) */
    AUTOPULL_SERVE_OTA,   /* an OTA DaemonSet: every pod, requests and automatic pulls */
    AUTOPULL_SERVE_AUTO,  /* not OTA, opted in: every pod, as an OTA DaemonSet's
                           * (the rollout is the DaemonSet controller's) */
    AUTOPULL_SERVE_DRAIN, /* not OTA, no longer opted in, some automatic pull
                           * not finished: those pods only, until they are */
    AUTOPULL_SERVE_WARN,  /* not OTA, an opt-in we cannot read: its Warning
                           * Event only, no pod */
} autopull_serve;

/* ota: the DaemonSet is OTA; asked: it carries the parallelism annotation
 * (any value); opted_in: autopull_spec's; unfinished: one of its pods has
 * an automatic pull not finished (autopull_unfinished). */
autopull_serve autopull_serve_of(int ota, int asked, int opted_in, int unfinished);
const char *autopull_serve_name(autopull_serve s);

/* A pod's automatic pull not finished: its AutoPrePull is True (any
 * revision) and it is PendingUpgrade (marked, not started) or Pulling. */
int autopull_unfinished(int auto_prepull_true, ota_state state);

/* Whether a pod of a DaemonSet served so goes through the pass (else it is
 * unserved); unfinished as autopull_unfinished for this pod. */
int autopull_pod_served(autopull_serve s, int unfinished);

/* What the pod's AutoPrePull condition says, against the newest H. */
typedef enum autopull_cond {
    AUTOPULL_COND_ABSENT,
    AUTOPULL_COND_TRUE_H,      /* True, "controllerrevision: H" */
    AUTOPULL_COND_TRUE_OTHER,  /* True, about another revision */
    AUTOPULL_COND_USER_H,      /* False NodeUserRequest about H: the node user's now */
    AUTOPULL_COND_OPTED_OUT,   /* False OptedOut */
    AUTOPULL_COND_FALSE_OTHER, /* any other False */
} autopull_cond;

/* Classifies a stored condition (present 0: absent). */
autopull_cond autopull_cond_of(int present, const char *status, const char *reason,
                               const char *message, const char *hash);

typedef struct autopull_pod_in {
    int opted_in;          /* its DaemonSet's spec */
    int needs_upgrade;     /* its revision is not H */
    ota_state state;       /* from the rulebook (PodNeedUpgrade already says H) */
    autopull_cond cond;
    int node_not_ready;
} autopull_pod_in;

typedef enum autopull_pod_verdict {
    AUTOPULL_NONE,     /* nothing automatic about it */
    AUTOPULL_MARK,     /* write AutoPrePull True H (with PodNeedUpgrade) */
    AUTOPULL_OPT_OUT,  /* write AutoPrePull False OptedOut */
    AUTOPULL_PENDING,  /* marked, not started: may be moved into Pulling */
    AUTOPULL_WAITING,  /* marked, not started, its node NotReady: waited for */
    AUTOPULL_RUNNING,  /* an automatic pull (Pulling, AutoPrePull True H): counts */
    AUTOPULL_READY,    /* an automatic pull done: Ready for H */
    AUTOPULL_FAILED,   /* an automatic pull failed */
} autopull_pod_verdict;

autopull_pod_verdict autopull_pod(const autopull_pod_in *in);
const char *autopull_pod_verdict_name(autopull_pod_verdict v);

/* A DaemonSet's automatic pulls this pass, per revision. */
typedef struct autopull_counts {
    size_t pending, waiting, running, ready, failed;
} autopull_counts;

void autopull_count(autopull_counts *c, autopull_pod_verdict v);

typedef struct autopull_gate {
    int window_open;      /* autopull_window_open (and the zone known) */
    size_t updated_ready; /* pods at H that are Ready */
    size_t needed_ready;  /* autopull_min_ready_needed */
} autopull_gate;

/* Why no (more) pod starts, for the log. */
typedef enum autopull_hold {
    AUTOPULL_GO,
    AUTOPULL_HOLD_OPTED_OUT,
    AUTOPULL_HOLD_WINDOW,
    AUTOPULL_HOLD_CANARY,
    AUTOPULL_HOLD_PARALLELISM,
} autopull_hold;

/* How many PENDING pods (in a stable order: the caller's, by pod name)
 * may move into Pulling this pass: parallelism less what runs, 0 outside
 * the window or before min-updated-ready-pods is met; why into *hold
 * (may be NULL). */
size_t autopull_starts(const autopull_spec *s, const autopull_gate *g,
                       const autopull_counts *c, autopull_hold *hold);
const char *autopull_hold_name(autopull_hold h);

/* AutoPrePullStarted for a revision: once automatic pulls run (say once
 * per revision: the caller keys it "<ds uid>|H"). */
int autopull_started_due(const autopull_counts *c);
/* AutoPrePullFinished: something was pulled or failed, nothing runs and
 * nothing can start now (left: pods on NotReady nodes, "waiting"). */
int autopull_finished_due(const autopull_counts *c);
/* What keys an AutoPrePullFinished Event within its revision: "finished|W"
 * with W the pods waited for (NotReady nodes).  A node that comes back and
 * is pulled (or whose pod goes) makes W smaller: a second Event with the
 * new counts.  Pods that upgrade after their pull (fewer counted ready)
 * keep W: no Event for them.  W never grows once finished: pods of a new
 * node are created at the new revision. */
void autopull_finished_what(const autopull_counts *c, char *buf, size_t len);

#endif

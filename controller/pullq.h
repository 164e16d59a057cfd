/*
 * pullq.h - which waiting pull units may start a Job now (issue 20 §1).
 *
 * A pull unit is one owner object's pull of images on one node, run as one
 * Job pinned to that node.  Its clients are the owner kinds: today the OTA
 * request on a DaemonSet pod; an ImagePullJob node or an ImageCache node
 * will be a unit of class PULLQ_BULK, sorted and admitted by the same
 * calls.  Every client shares the machinery decided here:
 *
 *   - one global cap on pull Jobs running (--max-concurrent-pulls), of
 *     which bulk units may fill all but PULLQ_INTERACTIVE_RESERVE slots:
 *     a node user's request finds a slot free however many fleet-wide
 *     pulls run;
 *   - a fair order: units sort by their class's rank first (an interactive
 *     OTA request, a node user waiting on an upgrade, before any bulk
 *     unit), then by the time they were asked for (FIFO), then by id (a
 *     total order, the same every pass);
 *   - a per-node slot (--max-pulls-per-node, default 1): the kubelet pulls
 *     one image at a time unless told otherwise (serializeImagePulls), so
 *     a second Job on the node would only wait while its deadline runs;
 *     a pull pod that is terminating still holds its node's slot (a
 *     deleted pod does not cancel an in-flight CRI pull);
 *   - a readiness gate: a node that is NotReady or unreachable gets no Job
 *     (it would sit Pending until its deadline); its unit waits, and
 *     waiting for a node takes neither a global nor a node slot.
 *
 * The caller sorts its units with pullq_cmp, feeds what already runs
 * (pullq_occupy), then asks pullq_admit for each unit in that order and
 * says pullq_take for each one it started (or holds the slot for).  Pure:
 * no I/O, no clock.
 */
#ifndef OTA_PULLQ_H
#define OTA_PULLQ_H

#include <stddef.h>

#include "store.h"

/* Slots of the global cap (when it is 2 or more) that only interactive
 * units may take: a bulk unit waits for the cap at cap - this. */
#define PULLQ_INTERACTIVE_RESERVE 1

/* An owner kind's class: its rank in the fair order.  A lower rank goes
 * first whatever the times. */
typedef enum pullq_class {
    PULLQ_INTERACTIVE, /* an OTA request: a node user waits on it */
    PULLQ_BULK,        /* a fleet-wide pull (ImagePullJob, ImageCache nodes) */
    PULLQ_N_CLASSES
} pullq_class;

/* What the queue knows of a unit's node. */
typedef enum pullq_node {
    PULLQ_NODE_READY,
    PULLQ_NODE_NOT_READY, /* NotReady or unreachable: no Job until it is Ready */
    PULLQ_NODE_UNKNOWN,   /* being read: the unit holds its place (and slots) */
} pullq_node;

typedef struct pullq_unit {
    pullq_class cls;
    const char *node;   /* the node the Job is pinned to */
    const char *queued; /* when it was asked for, RFC 3339 (sorts as text) */
    const char *id;     /* unique among units: the tie-break */
    pullq_node node_state;
} pullq_unit;

typedef enum pullq_verdict {
    PULLQ_START,          /* start its Job now (then pullq_take) */
    PULLQ_HOLD,           /* its node is being read: keep its slots (pullq_take), start nothing */
    PULLQ_WAIT_CAP,       /* --max-concurrent-pulls Jobs run */
    PULLQ_WAIT_NODE_SLOT, /* its node runs --max-pulls-per-node pulls (or terminating ones) */
    PULLQ_WAIT_NODE,      /* its node is NotReady or unreachable */
} pullq_verdict;

typedef struct pullq {
    size_t cap, per_node; /* 0: no bound */
    size_t running;       /* Jobs counted against the global cap */
    store per_node_busy;  /* node name -> pulls on it, as (uintptr_t) */
    int failed;           /* out of memory once: every later admit waits */
} pullq;

/* cap and per_node: the flags (0: no bound). */
void pullq_init(pullq *q, size_t cap, size_t per_node);
void pullq_free(pullq *q);

/* Something that already holds slots: a running pull Job (global: 1, and
 * its node) or a terminating pull pod (global: 0, its node only; its Job
 * may be gone, but the runtime still pulls).  node NULL: no node slot. */
void pullq_occupy(pullq *q, const char *node, int global);

/* The fair order of units (qsort comparator over pullq_unit). */
int pullq_cmp(const void *a, const void *b);

/* The verdict for the next unit in pullq_cmp order.  Changes nothing. */
pullq_verdict pullq_admit(const pullq *q, const pullq_unit *u);
/* u started (or holds its slots): it takes a global slot and its node's. */
void pullq_take(pullq *q, const pullq_unit *u);

const char *pullq_verdict_name(pullq_verdict v);

#endif

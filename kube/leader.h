/*
 * leader.h - leader election on a coordination.k8s.io/v1 Lease, with
 * client-go's rules and timings (15 s lease, 10 s renew deadline, 2 s retry).
 *
 * Only the leader writes.  A candidate takes the Lease when it is free or
 * when its holder has not renewed it for a lease duration *as observed
 * locally* (no trust in other machines' clocks, as in client-go).  The
 * leader renews every retry period; if it cannot renew within the renew
 * deadline it stops being leader at once, before another candidate can
 * take over.  Conflicts (409) mean someone else wrote first.  Its calls go
 * in the client's Lease lane (own rate limit, ahead of every queued call),
 * so a leader busy with thousands of writes still renews in time.
 */
#ifndef OTA_LEADER_H
#define OTA_LEADER_H

#include <stddef.h>
#include <stdint.h>

#include "kube_client.h"

typedef struct leader_config {
    const char *namespace, *name, *identity;
    uint64_t lease_ns, renew_deadline_ns, retry_ns;
} leader_config;

/* ---- the decision (pure: leader_tick and the callbacks carry it out) ---- */

/* Where the election stands between two steps. */
typedef struct leader_state {
    int is_leader;
    int busy;             /* a call of ours is in flight (kept by the caller) */
    uint64_t next_try;    /* when to read the Lease again */
    uint64_t last_renew;  /* our last successful write, monotonic */
    uint64_t observed_at; /* when the Lease's record last changed, by our clock; 0: never */
    int held;             /* our last write succeeded: we hold the Lease as it answered
                           * (its resourceVersion), so a renewal needs no read */
} leader_state;

/* What happened since the last step. */
typedef enum leader_event {
    LEADER_TICK,         /* time passed; no call of ours ended */
    LEADER_READ_MISSING, /* GET: 404, there is no Lease */
    LEADER_READ_FAILED,  /* GET: no answer, another status, a body that does not parse,
                          * or the call could not start */
    LEADER_READ,         /* GET: the Lease, as observed */
    LEADER_WRITTEN,      /* PUT/POST: 200 or 201, the Lease is ours */
    LEADER_WRITE_FAILED, /* PUT/POST: 409 (another candidate wrote first), or anything else */
} leader_event;

typedef struct leader_observation {
    leader_event event;
    const char *holder; /* LEADER_READ: spec.holderIdentity, "" when free */
    int changed;        /* LEADER_READ, LEADER_WRITTEN: the Lease's holder, renewTime or
                         * duration differ from what was seen before */
} leader_observation;

typedef enum leader_step {
    LEADER_WAIT,   /* nothing to send before next_try, or before our call ends */
    LEADER_GET,    /* read the Lease */
    LEADER_CREATE, /* POST a Lease held by us: there is none */
    LEADER_TAKE,   /* PUT us as holder: it is free, or expired as observed here */
    LEADER_RENEW,  /* PUT: it is ours */
} leader_step;

typedef struct leader_decision {
    leader_step step;
    leader_state state; /* after the step (busy as it was) */
} leader_decision;

/* One step of the election: the state and what was observed in, what to
 * send and the new state out.  A Lease is expired when it is free or its
 * record has not changed for a lease duration by our clock (no trust in
 * the writer's); we stop being leader the moment the renew deadline passes
 * without a renewal, which is before another candidate may take over (a
 * lease duration after our last renewal). */
leader_decision leader_decide(const leader_config *cfg, const leader_state *st,
                              const leader_observation *obs, uint64_t now);

/* ---- what to say about failed Lease calls (pure: leader.c logs it) ---- */

/* A failure that lasts is said again at most this often. */
#define LEADER_SAY_REPEAT_NS (60ull * 1000000000ull)

/* One Lease call that ended, as the log decision sees it. */
typedef struct leader_call_end {
    leader_step call;   /* LEADER_GET, LEADER_CREATE, LEADER_TAKE or LEADER_RENEW */
    leader_event event; /* what it came to */
    long code;          /* HTTP status; 0: no answer, or the call could not start */
    const char *reason; /* the Status' reason ("NotFound", "Forbidden"), "" when none */
    leader_step next;   /* what leader_decide said to do next */
} leader_call_end;

/* What has been said about failing Lease calls. */
typedef struct leader_say_state {
    int failing;          /* a failure was said and has not cleared */
    long code;            /* the cause last said: its code, Status reason and verb */
    char reason[64];
    leader_step call;
    uint64_t first_at;    /* when the failures began */
    uint64_t said_at;     /* when the cause was last said */
    unsigned long unsaid; /* failed calls since then (the next line counts them) */
    unsigned long total;  /* failed calls since the failures began */
} leader_say_state;

typedef enum leader_say {
    LEADER_SAY_NOTHING,
    LEADER_SAY_FAILED,  /* warn: the call failed (first, a new cause, or a minute on) */
    LEADER_SAY_CLEARED, /* info: the election works again */
} leader_say;

typedef struct leader_say_decision {
    leader_say say;
    char hint[256];         /* LEADER_SAY_FAILED: what to do, or "" */
    unsigned long failures; /* FAILED: failed calls since the last line, this one
                             * included (1 the first time); CLEARED: in all */
    uint64_t lasted_ns;     /* CLEARED: since the failures began */
    leader_say_state state;
} leader_say_decision;

/* Whether and what to log for a Lease call that ended at now.  A failed
 * call is any that failed but a 409 (another candidate wrote first: the
 * election at work).  The first failure is said at once, as is one of
 * another cause (code, reason and verb: get, create or update); the same
 * cause again at most every LEADER_SAY_REPEAT_NS.  The failure clears when
 * the election works again: a write of ours succeeded, or a read found
 * another's live Lease (we follow).  A 404 from a read is neither: there is no Lease yet, and a
 * create follows.  For 404 on a create (the namespace is missing), 403
 * and 401 the hint says what to do. */
leader_say_decision leader_say_decide(const leader_config *cfg, const leader_say_state *st,
                                      const leader_call_end *end, uint64_t now);

/* The fields of a Lease the election keeps. */
typedef struct leader_lease {
    char holder[256];
    char record[512]; /* holder + renewTime + duration, to spot changes */
    char resource_version[64];
    char acquire_time[40];
    long long transitions;
} leader_lease;

/* Reads a Lease from its JSON body[0..len), its nesting bounded first (a
 * hostile, deeply nested body must not exhaust the stack when the tree is
 * freed).  0, or -1 when it does not parse. */
int leader_lease_read(const char *body, size_t len, leader_lease *out);

/* ---- giving the Lease up at shutdown (pure: leader.c carries it out) ---- */

typedef enum leader_release_step {
    LEADER_RELEASE_DONE, /* released, not ours, or hopeless (the Lease then expires) */
    LEADER_RELEASE_WAIT, /* a call of the election is in flight: its answer comes first,
                          * since a renewal it carries changes the resourceVersion */
    LEADER_RELEASE_GET,  /* read the Lease again: our release met a newer one (409) */
    LEADER_RELEASE_PUT,  /* write holder "" and a 1 s duration over the Lease last seen */
} leader_release_step;

/* A release makes at most this many calls (reads and writes together). */
#define LEADER_RELEASE_CALLS 4

/* Where a release stands when a step is decided. */
typedef struct leader_release_in {
    int started;         /* 0: the release begins now (no call of its own ended yet) */
    int busy;            /* begins: a call of the election is in flight */
    leader_event ended;  /* started: what the call that just ended came to */
    int release_write;   /* started: that call was our release write */
    long code;           /* its HTTP status (0: no answer) */
    int ours;            /* the Lease as last seen is held by us */
    int calls;           /* calls the release has made so far */
} leader_release_in;

/* The release's next step.  A release write answered 409 (a renewal
 * landed before it) reads the Lease again and releases it if it is still
 * ours, so a successor never waits out a lease we meant to give up. */
leader_release_step leader_release_next(const leader_release_in *in);

/* ---- the election on a kube_client ---- */

typedef struct leader {
    kube_client *client;
    leader_config cfg;
    leader_state st;
    int releasing, released;
    int release_calls; /* reads and writes the release made */
    int release_write; /* the call in flight is the release's write */
    /* the last Lease we saw (its record's last change: st.observed_at) */
    char holder[256];
    char record[512];      /* holder + renewTime + duration, to spot changes */
    char resource_version[64];
    char acquire_time[40];
    long long transitions;
    int exists;
    leader_step call;     /* the call in flight: GET, CREATE, TAKE or RENEW */
    leader_say_state say; /* what has been said about failing calls */
    void (*on_change)(void *data, int is_leader);
    void *data;
} leader;

void leader_init(leader *l, kube_client *client, const leader_config *cfg,
                 void (*on_change)(void *data, int is_leader), void *data);
/* Drives the election; call often (every loop turn). */
void leader_tick(leader *l, uint64_t now);
/* Gives the Lease up (holder "", duration 1 s) so a successor need not wait
 * out the lease; leader_released() turns true when done or hopeless. */
void leader_release(leader *l);
int leader_released(const leader *l);

#endif

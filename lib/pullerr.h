/*
 * pullerr.h - the kubelet's words on an image pull, and what they mean for
 * whoever waits on it.
 *
 * A container whose image cannot be pulled waits with a reason: the kubelet
 * says ErrImagePull with the runtime's answer (containerd's, CRI-O's,
 * Docker's: not found, 401 Unauthorized, a timeout), then ImagePullBackOff
 * until its next try; kubelets before 1.32 then say only "Back-off pulling
 * image", and forget the answer.  InvalidImageName and ErrImageNeverPull
 * are the kubelet's own last word.  These rules read those words: how a
 * pull error is classified, how attempts are counted as versions of a
 * container's status arrive, which words a back-off keeps, and the verdict
 * that follows.
 *
 * Pure functions over strings: no pod, Job or OTA type, so every
 * reconciler that watches pulls (the pre-pull Job's pod today) reads them
 * the same way.  Strings are borrowed, never copied.
 */
#ifndef OTA_PULLERR_H
#define OTA_PULLERR_H

/* What a waiting reason and message say, as far as waiting goes. */
typedef enum pullerr_kind {
    PULLERR_NONE,      /* no pull error (a crash, a missing Secret, NULL, ...) */
    PULLERR_TRANSIENT, /* may heal: a timeout, 429, 5xx, a network error, or unknown */
    PULLERR_PERMANENT, /* the registry said no (not found, manifest unknown, 401/403,
                          denied) or the reference is invalid: waiting will not help,
                          but one answer may be a glitch */
    PULLERR_FINAL,     /* the kubelet itself will not try again (InvalidImageName,
                          ErrImageNeverPull) */
} pullerr_kind;

/* Permanent answers in a row (PULLERR_PERMANENT) before a pull is given
 * up: a registry being pushed to, or a replica catching up, may answer
 * "not found" once. */
#define PULLERR_PERMANENT_ATTEMPTS 2

/* Classifies a container's waiting reason and message (either may be
 * NULL).  A message that names both a busy network and a refusal is
 * transient: a proxy's 503 page can say "not found". */
pullerr_kind pullerr_classify(const char *reason, const char *message);

/* What a refused pull asks of whoever can fix it: nothing (not refused, or
 * a retry may help), the image reference (not found, or no valid name), or
 * the credentials (401, 403, denied). */
typedef enum pullerr_refusal {
    PULLERR_REFUSED_NOT,
    PULLERR_REFUSED_IMAGE,
    PULLERR_REFUSED_CREDENTIALS,
} pullerr_refusal;

/* Of a reason and message pullerr_classify calls PERMANENT or FINAL, what
 * the registry (or the kubelet) refused; PULLERR_REFUSED_NOT otherwise. */
pullerr_refusal pullerr_refusal_of(const char *reason, const char *message);

/* The kubelet is waiting before its next try: reason is ImagePullBackOff. */
int pullerr_backing_off(const char *reason);

/* Whether the words (reason, then before_reason) of two sightings of one
 * pull make the later say less: a back-off after an error that was not
 * one.  The error is then what to tell (kubelets before 1.32 forget it).
 * 0 when either is NULL. */
int pullerr_says_less(const char *reason, const char *before_reason);

/* Whether a longer wait would not have helped: the registry or the
 * kubelet refused (PULLERR_PERMANENT or PULLERR_FINAL).  A timeout's hint
 * ("the deadline was too short") is wrong then. */
int pullerr_refused(const char *reason, const char *message);

/* A container's pull as last seen: what a reconciler keeps between
 * versions of its status. */
typedef struct pullerr_seen {
    const char *reason, *message; /* the words to tell: the kubelet's, or the error kept
                                     through the back-off that followed it */
    int backing_off;              /* the kubelet's own reason is ImagePullBackOff */
    int attempts;                 /* pull attempts in a row that ended in a
                                     PULLERR_PERMANENT answer */
    int kept;                     /* reason and message are before's (pullerr_says_less) */
    int errors;                   /* pull attempts that ended in an error of any kind, in
                                     all (an ImagePullJob's backoffLimit counts these) */
} pullerr_seen;

/* The pull after the kubelet's fresh words (reason, message: the first
 * waiting container's), given what was seen of it before (NULL: nothing).
 * A new attempt is an error that follows a back-off; the same reason seen
 * again is the same attempt; a transient error, or anything that is no
 * pull error, starts the count of permanent answers over; a back-off keeps
 * it.  The count of errors of any kind never starts over: an error that
 * follows a back-off, or another error, is one more.  Strings are borrowed
 * from the arguments. */
pullerr_seen pullerr_next(const pullerr_seen *before, const char *reason, const char *message);

/* What a reconciler does about a pull as seen (reason and message as
 * pullerr_seen keeps them). */
typedef enum pullerr_verdict {
    PULLERR_NOT_STUCK, /* no pull error: nothing about images to do */
    PULLERR_STUCK,     /* stuck on an image, nothing new to tell: wait (a deadline
                          applies: a pod that cannot pull never fails by itself) */
    PULLERR_RETRYING,  /* stuck for a cause that may heal, and the runtime's words say
                          which: worth telling (once per message) */
    PULLERR_GIVE_UP,   /* fail now: the kubelet will not try again, or the registry
                          refused PULLERR_PERMANENT_ATTEMPTS times in a row */
} pullerr_verdict;

pullerr_verdict pullerr_judge(const char *reason, const char *message, int attempts);

#endif

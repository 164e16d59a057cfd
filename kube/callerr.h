/*
 * callerr.h - what a failed call to the apiserver says about the
 * configuration, and when to say it.
 *
 * A 401 (the token or client certificate is not accepted) or a TLS error
 * (the server's certificate does not verify against the CA, or ours is
 * refused) is no passing fault: every call fails the same way until an
 * operator fixes the kubeconfig, the service-account token or the CA.  The
 * controller's five informers each retry with a backoff, so saying it per
 * call is five "watch interrupted" lines per round for a list that never
 * succeeded.  Such a cause is said once per change of cause, with a hint,
 * and the per-call lines go to debug; any other failure is said as before.
 * Pure: the caller keeps a callerr_state (one per client) and reads the
 * Status body itself (kapi_status_read).
 */
#ifndef OTA_CALLERR_H
#define OTA_CALLERR_H

typedef enum callerr_cause {
    CALLERR_NONE,         /* a success */
    CALLERR_OTHER,        /* anything that may pass: 5xx, 429, 410, a dropped connection */
    CALLERR_UNAUTHORIZED, /* 401: the credentials */
    CALLERR_TLS,          /* a certificate that does not verify, or is refused */
} callerr_cause;

/* The cause of a call that ended with HTTP status (0: no answer) and
 * transport error (curl's words, or NULL). */
callerr_cause callerr_classify(long status, const char *error);

/* A configuration cause: the same for every call until someone fixes it. */
int callerr_is_config(callerr_cause c);

/* What to do about it, for the log; "" for a cause that is no
 * configuration error. */
const char *callerr_hint(callerr_cause c);

typedef struct callerr_state {
    callerr_cause said; /* the configuration cause said last, until a success */
} callerr_state;

/* Whether a call that ended with cause c is to be said as a configuration
 * error now: 1 for a configuration cause other than the one said last;
 * 0 otherwise (said already, or no configuration cause: the caller says
 * those as it did).  A success (CALLERR_NONE) forgets what was said, so
 * the same trouble coming back is said again. */
int callerr_say_now(callerr_state *st, callerr_cause c);

#endif

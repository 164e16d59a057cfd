/*
 * pullerr.c - see pullerr.h.
 */
#include "pullerr.h"

#include <stddef.h>
#include <string.h>

#define BACKOFF_REASON "ImagePullBackOff"
/* What a back-off says when it says nothing else (kubelets before 1.32;
 * from 1.32 the error follows). */
#define BACKOFF_ONLY "Back-off pulling image"

/* Case-insensitive: does hay contain needle (lowercase)? */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *h = hay; *h != '\0'; h++) {
        size_t i = 0;
        while (i < n && h[i] != '\0' &&
               (h[i] >= 'A' && h[i] <= 'Z' ? (char)(h[i] - 'A' + 'a') : h[i]) == needle[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* The registry said no: to the credentials, or to the name (or the
 * reference is no name at all). */
static const char *const refused_credentials[] = {
    "401 unauthorized", "unauthorized", "403 forbidden", "pull access denied",
    "requested access to the resource is denied", "authentication required", "insufficient_scope",
};
static const char *const refused_image[] = {
    "not found", "manifest unknown", "name unknown", "repository does not exist",
    "invalid reference format", "no matching manifest",
};
#define N_CREDENTIALS (sizeof(refused_credentials) / sizeof(refused_credentials[0]))
#define N_IMAGE (sizeof(refused_image) / sizeof(refused_image[0]))

static int says_any(const char *message, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (contains_ci(message, words[i]))
            return 1;
    return 0;
}

pullerr_kind pullerr_classify(const char *reason, const char *message)
{
    if (reason == NULL)
        return PULLERR_NONE;
    if (strcmp(reason, "InvalidImageName") == 0 || strcmp(reason, "ErrImageNeverPull") == 0)
        return PULLERR_FINAL;
    if (strcmp(reason, "ErrImagePull") != 0 && strcmp(reason, BACKOFF_REASON) != 0)
        return PULLERR_NONE;
    if (message == NULL)
        return PULLERR_TRANSIENT;
    /* What the network or a busy registry says first: such an answer may
     * also mention a name (a "not found" in a proxy's 502 page, say). */
    static const char *const transient[] = {
        " 429 ", "too many requests", "toomanyrequests", "rate limit", " 500 ", " 502 ",
        " 503 ", " 504 ", "internal server error", "bad gateway", "service unavailable",
        "gateway timeout", "timeout", "timed out", "deadline exceeded", "connection refused",
        "connection reset", "no such host", "network is unreachable", "no route to host",
        "unexpected eof", "tls handshake", "temporary failure", "broken pipe",
        /* containerd's own store, not the registry: a layer or blob that a
         * concurrent pull of the same image moved or removed meanwhile */
        "content digest", "failed to extract layer", "failed to unpack", "failed to commit",
    };
    for (size_t i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
        if (contains_ci(message, transient[i]))
            return PULLERR_TRANSIENT;
    if (says_any(message, refused_credentials, N_CREDENTIALS) ||
        says_any(message, refused_image, N_IMAGE))
        return PULLERR_PERMANENT;
    return PULLERR_TRANSIENT;
}

pullerr_refusal pullerr_refusal_of(const char *reason, const char *message)
{
    pullerr_kind kind = pullerr_classify(reason, message);
    if (kind == PULLERR_FINAL)
        return PULLERR_REFUSED_IMAGE;
    if (kind != PULLERR_PERMANENT)
        return PULLERR_REFUSED_NOT;
    /* Docker's "pull access denied ..., repository does not exist or may
     * require 'docker login'" names both: the credentials are asked about */
    return says_any(message, refused_credentials, N_CREDENTIALS) ? PULLERR_REFUSED_CREDENTIALS
                                                                 : PULLERR_REFUSED_IMAGE;
}

int pullerr_backing_off(const char *reason)
{
    return reason != NULL && strcmp(reason, BACKOFF_REASON) == 0;
}

int pullerr_says_less(const char *reason, const char *before_reason)
{
    return before_reason != NULL && pullerr_backing_off(reason) &&
           !pullerr_backing_off(before_reason);
}

int pullerr_refused(const char *reason, const char *message)
{
    pullerr_kind kind = pullerr_classify(reason, message);
    return kind == PULLERR_PERMANENT || kind == PULLERR_FINAL;
}

static int attempts_after(const pullerr_seen *before, const char *reason, const char *message)
{
    if (pullerr_backing_off(reason))
        return before != NULL ? before->attempts : 0;
    if (pullerr_classify(reason, message) != PULLERR_PERMANENT)
        return 0;
    if (before == NULL)
        return 1;
    if (before->backing_off)
        return before->attempts + 1;
    /* before's reason may be an error kept through a back-off: the same
     * error with no back-off seen in between is the same attempt */
    if (before->reason != NULL && strcmp(before->reason, reason) == 0)
        return before->attempts > 0 ? before->attempts : 1;
    return 1;
}

static int errors_after(const pullerr_seen *before, const char *reason, const char *message)
{
    int had = before != NULL ? before->errors : 0;
    if (pullerr_backing_off(reason) || pullerr_classify(reason, message) == PULLERR_NONE)
        return had;
    if (before == NULL || before->backing_off || before->reason == NULL ||
        strcmp(before->reason, reason) != 0)
        return had + 1;
    return had > 0 ? had : 1; /* the same error seen again: the same attempt */
}

pullerr_seen pullerr_next(const pullerr_seen *before, const char *reason, const char *message)
{
    pullerr_seen next = {reason, message, pullerr_backing_off(reason),
                         attempts_after(before, reason, message), 0,
                         errors_after(before, reason, message)};
    if (before != NULL && pullerr_says_less(reason, before->reason)) {
        next.reason = before->reason;
        next.message = before->message;
        next.kept = 1;
    }
    return next;
}

pullerr_verdict pullerr_judge(const char *reason, const char *message, int attempts)
{
    pullerr_kind kind = pullerr_classify(reason, message);
    if (kind == PULLERR_FINAL ||
        (kind == PULLERR_PERMANENT && attempts >= PULLERR_PERMANENT_ATTEMPTS))
        return PULLERR_GIVE_UP;
    if (kind == PULLERR_NONE)
        return PULLERR_NOT_STUCK;
    /* a bare back-off says nothing the error before it did not */
    if (kind == PULLERR_TRANSIENT && message != NULL &&
        strncmp(message, BACKOFF_ONLY, sizeof(BACKOFF_ONLY) - 1) != 0)
        return PULLERR_RETRYING;
    return PULLERR_STUCK;
}

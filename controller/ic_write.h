/*
 * ic_write.h - how an ImageCache's status and annotations are written,
 * as pure decisions and body builders (issue 21).
 *
 * Two CRDs serve `imagecaches.kubefledged.io`: kube-fledged's own, which
 * has no status subresource (its controller writes the status with a PUT
 * of the whole object), and ours (manifests/components/imagecache-crd),
 * which adds /status.  The controller asks discovery once which it has
 * (ic_status_served on GET /apis/kubefledged.io/v1alpha2), then:
 *
 *  - /status served: the status is a JSON merge patch of
 *    imagecaches/<name>/status (controller/ic.h's ic_write_status), and
 *    annotations (the
 *    refresh/purge requests removed, ours recorded) a merge patch of the
 *    object carrying metadata.resourceVersion (ic_meta_patch);
 *  - not served: one PUT of the whole object as last read (ic_put_body):
 *    every field kept as it came (fields this controller does not know
 *    included), the status replaced, the annotations edited, and
 *    metadata.resourceVersion as read.
 *
 * Either way a write that carries resourceVersion answered 409 means the
 * object changed since it was read (a user's annotation, a spec edit):
 * the controller reads it again and decides again (ic_write_next); it
 * never sends the same body twice, so it never clobbers a concurrent edit.
 */
#ifndef OTA_IC_WRITE_H
#define OTA_IC_WRITE_H

#include <stddef.h>

#include "json.h"

/* The resource whose presence in discovery (kapi_discovery_path of
 * KAPI_IMAGECACHES) says /status is served. */
#define IC_STATUS_RESOURCE "imagecaches/status"

/* Writes the member "status" (key and value) into the open map of w: the
 * status of a PUT (controller/ic.h's ic_write_status with merge 0). */
typedef void (*ic_status_writer)(json_writer *w, const void *arg);

/* Whether an APIResourceList (the discovery document of the group
 * version) lists IC_STATUS_RESOURCE: 1 yes, 0 no, -1 when doc is not a
 * resource list (ask again later). */
int ic_status_served(yajl_val doc);

/* {"metadata":{"resourceVersion":rv,"annotations":{k: v, ..., drop: null}}}
 * for PATCH .../imagecaches/<name>: set holds n_set key/value pairs, drop
 * n_drop keys (a key in both is set).  rv NULL: no precondition.  JSON in
 * malloc memory, or NULL. */
char *ic_meta_patch(const char *rv, const char *const *set, size_t n_set,
                    const char *const *drop, size_t n_drop);

/* The body of PUT .../imagecaches/<name>: obj (the object as last read)
 * with every member in its order and as it came, except "status" (what
 * write_status(w, arg) writes, in its place, or appended when obj had
 * none; NULL write_status: the status as read)
 * and metadata.annotations (the drop keys removed, the set pairs replaced
 * in place or appended; an annotations map created when there is
 * something to set).  metadata.resourceVersion is the one read: the
 * apiserver answers 409 when the object moved since.  JSON in malloc
 * memory, or NULL when out of memory or obj is not an object. */
char *ic_put_body(yajl_val obj, ic_status_writer write_status, const void *arg,
                  const char *const *set, size_t n_set, const char *const *drop, size_t n_drop);

/* Which writes one pass sends for a cache (bits). */
enum {
    IC_SEND_PUT = 1,    /* kube-fledged's CRD: status and annotations in one PUT */
    IC_SEND_STATUS = 2, /* our CRD: the /status merge patch */
    IC_SEND_META = 4,   /* our CRD: the annotations' merge patch, with resourceVersion */
};

/* The writes of a pass, given whether /status is served (served > 0;
 * unknown: nothing), whether the plan starts an action (started), whether
 * it has a status to write and annotations to change (meta), whether the
 * object as read holds the action already (holds: Processing, the plan's
 * reason and startTime) and whether the status as read says the plan's
 * words (same_words: status, reason and message).  With /status, each
 * write bumps the resourceVersion the annotations' patch carries: sent
 * together, that patch would lose to its sibling every time, so one goes
 * per pass.  A start: the annotations first (the record and
 * OTA_ANN_IC_START, which names the action, so removing its request
 * annotation loses nothing; under the version read: an edit in between
 * is a 409, decided again), the Processing status on the next pass, read
 * back from them (an edit after the record is the next action's, never
 * folded into this one).  Once the object holds the action, the
 * annotations first (the status follows on the next pass, the action
 * still held); before, the status (an end at once, purge disabled:
 * removing its request annotation first would lose it); the annotations
 * alone when the status already says the same words. */
int ic_write_sends(int served, int started, int write_status, int meta, int holds,
                   int same_words);

/* What the controller does after a write's answer. */
typedef enum ic_write_next_step {
    IC_WRITE_DONE,        /* 2xx */
    IC_WRITE_REREAD,      /* 409: the object moved; read it and decide again */
    IC_WRITE_REDISCOVER,  /* 404 on /status, or 405: the CRD changed; ask discovery again */
    IC_WRITE_GONE,        /* 404 on the object: deleted, nothing to write */
    IC_WRITE_REFUSED,     /* 400, 403, 422: the body or the rights; logged, the next
                             pass decides again (never a loop of the same call) */
    IC_WRITE_RETRY,       /* anything else (5xx, 429, no answer): later */
} ic_write_next_step;

ic_write_next_step ic_write_next(int http_code, int to_status);

#endif

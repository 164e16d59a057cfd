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
 *    imagecaches/<name>/status (ic_status_patch), and annotations (the
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

/* One failed (image, node): status.failures[image] gets {node, reason,
 * message}. */
typedef struct ic_failure {
    const char *image;   /* as written in the spec */
    const char *node;    /* the node's kubernetes.io/hostname label, else its name */
    const char *reason, *message;
} ic_failure;

/* The status an action writes (SEED-SYSTEMS §1.3 field names). */
typedef struct ic_status_body {
    const char *status;          /* Processing, Succeeded, Failed, NoImagesPulledOrDeleted */
    const char *reason;          /* the action: ImageCacheCreate, ... */
    const char *message;
    const char *start_time;      /* RFC 3339 */
    const char *completion_time; /* NULL while Processing: absent */
    /* Grouped by image in order of first appearance; none: no failures
     * field (upstream's omitempty). */
    const ic_failure *failures;
    size_t n_failures;
} ic_status_body;

/* Whether an APIResourceList (the discovery document of the group
 * version) lists IC_STATUS_RESOURCE: 1 yes, 0 no, -1 when doc is not a
 * resource list (ask again later). */
int ic_status_served(yajl_val doc);

/* {"status":{...}} for PATCH .../imagecaches/<name>/status
 * (application/merge-patch+json).  A merge patch merges maps, so the
 * images of the failures as cached (old_images[0..n_old)) that the new
 * status does not name are sent as null, and "failures" itself as null
 * when the new status has none and the cached one had some;
 * completionTime null when the new status has none.  JSON in malloc
 * memory (caller frees), or NULL when out of memory. */
char *ic_status_patch(const ic_status_body *st, const char *const *old_images, size_t n_old);

/* {"metadata":{"resourceVersion":rv,"annotations":{k: v, ..., drop: null}}}
 * for PATCH .../imagecaches/<name>: set holds n_set key/value pairs, drop
 * n_drop keys (a key in both is set).  rv NULL: no precondition.  JSON in
 * malloc memory, or NULL. */
char *ic_meta_patch(const char *rv, const char *const *set, size_t n_set,
                    const char *const *drop, size_t n_drop);

/* The body of PUT .../imagecaches/<name>: obj (the object as last read)
 * with every member in its order and as it came, except "status" (st in
 * its place, or appended when obj had none; NULL st: the status as read)
 * and metadata.annotations (the drop keys removed, the set pairs replaced
 * in place or appended; an annotations map created when there is
 * something to set).  metadata.resourceVersion is the one read: the
 * apiserver answers 409 when the object moved since.  JSON in malloc
 * memory, or NULL when out of memory or obj is not an object. */
char *ic_put_body(yajl_val obj, const ic_status_body *st, const char *const *set, size_t n_set,
                  const char *const *drop, size_t n_drop);

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

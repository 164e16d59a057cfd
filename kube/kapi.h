/*
 * kapi.h - the Kubernetes API's wire shapes, spelled once: which resources
 * ota-prepull calls and where they live, URL escaping, label and field
 * selectors, and the bodies more than one caller writes (a status-conditions
 * patch with its resourceVersion precondition, DeleteOptions).
 *
 * Pure: text in, text out, nothing sent.  Every API path of the programs is
 * built here, from one table with a row per resource (group/version,
 * plural, namespaced or not, subresources); a new resource, a CRD included,
 * is one row.  `make layout` fails on an API path written anywhere else.
 */
#ifndef OTA_KAPI_H
#define OTA_KAPI_H

#include <stddef.h>

#include "strbuf.h"

/* Content types of request bodies. */
#define KAPI_CT_JSON "application/json"
/* Lists merge by their key (conditions by type), so a status write leaves
 * the kubelet's own conditions alone. */
#define KAPI_CT_STRATEGIC_MERGE "application/strategic-merge-patch+json"
/* RFC 7386: what a custom resource takes (it has no strategic merge) */
#define KAPI_CT_MERGE "application/merge-patch+json"

typedef enum kapi_resource {
    KAPI_PODS,
    KAPI_NODES,
    KAPI_EVENTS,
    KAPI_DAEMONSETS,
    KAPI_CONTROLLERREVISIONS,
    KAPI_JOBS,
    KAPI_LEASES,
    KAPI_SELFSUBJECTREVIEWS,
    KAPI_IMAGEPULLJOBS, /* apps.kruise.io/v1alpha1: every Kruise CRD and ours serve it */
    KAPI_IMAGECACHES,   /* kubefledged.io/v1alpha2: /status with our CRD only (ic_write.h) */
    KAPI_N_RESOURCES
} kapi_resource;

typedef struct kapi_resource_def {
    const char *group_version;        /* "v1" for the core group, else "group/version" */
    const char *plural;
    int namespaced;
    const char *const *subresources;  /* NULL-terminated, or NULL: none */
} kapi_resource_def;

/* The table's row of r; NULL for a value out of the enum. */
const kapi_resource_def *kapi_resource_of(kapi_resource r);

/* Appends s escaped for a path segment or a query value: RFC 3986's
 * unreserved characters as they are, every other byte as %XX (base64
 * continue tokens carry '+', '/' and '='). */
void kapi_escape(strbuf *b, const char *s);

/* Appends the path of r to b: /api/v1 or /apis/GROUP/VERSION, then
 * "/namespaces/NS" when ns is not NULL, the plural, "/NAME" when name is
 * not NULL and "/SUB" when sub is not NULL; every segment escaped.  With
 * name NULL it is the collection, across all namespaces when ns is NULL
 * too.  0, or -1 (nothing appended) for a path the API does not have: a
 * namespace for a cluster-scoped resource, an object of a namespaced one
 * without its namespace, a subresource without an object or one the table
 * does not list, an empty segment.  b->failed says out of memory. */
int kapi_path(strbuf *b, kapi_resource r, const char *ns, const char *name, const char *sub);

/* Appends the path of r's group version's discovery document (an
 * APIResourceList: which resources and subresources it serves), /api/v1
 * or /apis/GROUP/VERSION.  0, or -1 for a value out of the enum. */
int kapi_discovery_path(strbuf *b, kapi_resource r);

/* One requirement of a selector: key=value, or (value NULL, labels only)
 * that the key exists.  A list of them ends with {NULL, NULL}. */
typedef struct kapi_requirement {
    const char *key, *value;
} kapi_requirement;

typedef enum kapi_selector_kind {
    KAPI_LABEL_SELECTOR, /* labelSelector= */
    KAPI_FIELD_SELECTOR, /* fieldSelector= */
} kapi_selector_kind;

/* Appends "labelSelector=" or "fieldSelector=" and the requirements joined
 * by ',', escaped as one query value.  0, or -1 (nothing appended) when the
 * list is empty, a key is empty, a key or value holds a character the
 * selector grammar gives a meaning (',', '=', '!') or a field requirement
 * has no value. */
int kapi_selector(strbuf *b, kapi_selector_kind kind, const kapi_requirement *reqs);

/* One condition of a status patch: type, status, reason (NULL: left out;
 * "" is written, as Go omits an empty reason) and message, stamped with the
 * patch's time; or, remove set, {"type":T,"$patch":"delete"}. */
typedef struct kapi_condition {
    const char *type, *status, *reason, *message;
    int remove;
} kapi_condition;

/* The strategic merge patch of pods/status that writes conds:
 * {"metadata":{"resourceVersion":RV},"status":{"conditions":[...]}}, each
 * condition stamped lastTransitionTime now (RFC 3339).  Merged by type, so
 * the kubelet's conditions are left alone; the resourceVersion is the
 * precondition (the apiserver answers 409 Conflict unless the object is
 * still at RV), left out when rv is NULL or "".  Malloc'd; NULL when out of
 * memory. */
char *kapi_conditions_patch(const kapi_condition *conds, size_t n, const char *rv,
                            const char *now);

/* DeleteOptions whose preconditions are the object's uid and, when rv is
 * not NULL, its resourceVersion: the delete lands on the object decided
 * about, in the version decided from, or answers 409.  Malloc'd; NULL when
 * out of memory. */
char *kapi_delete_options(const char *uid, const char *rv);

/* The reason and message of a meta/v1 Status body[0..len) (what the
 * apiserver answers a failed call with), each cut to fit its buffer (a
 * NULL buffer is not written); "" for what is missing or when the body is
 * not JSON.  Returns 1 when the body has a message string (even ""), else
 * 0. */
int kapi_status_read(const char *body, size_t len, char *reason, size_t reason_size,
                     char *message, size_t message_size);

#endif

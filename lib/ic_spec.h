/*
 * ic_spec.h - kube-fledged's ImageCache spec (kubefledged.io/v1alpha2) as
 * both programs read it: ota-webhook to validate it as kube-fledged's
 * webhook does (docs/design.md "ImageCache admission"), ota-controller to
 * serve it (controller/ic.h).
 *
 * The decoder keeps what kube-fledged's Go types keep (ImageCacheSpec:
 * cacheSpec[] {images, nodeSelector}, imagePullSecrets[].name), with the
 * JSON types Go's decoder accepts, and what reflect.DeepEqual tells apart:
 * an absent or null list or map (Go's nil) is not an empty one.
 */
#ifndef OTA_IC_SPEC_H
#define OTA_IC_SPEC_H

#include <stddef.h>

#include "arena.h"
#include "sv.h"

/* Largest spec we read: etcd's default request limit
 * (--max-request-bytes, 1.5 MiB), as for ImagePullJobs (ipj_spec.h): no
 * ImageCache the apiserver can store is larger. */
#define IC_MAX_SPEC_BYTES (1536 * 1024)

/* One element of spec.cacheSpec (Go's CacheSpecImages). */
typedef struct ic_list {
    int has_images;         /* images is an array (Go: non-nil) */
    sv *images;             /* as written, in order; a null element is "" */
    size_t n_images;
    int has_node_selector;  /* nodeSelector is an object (Go: non-nil map) */
    sv *selector;           /* pairs: key, value, key, value... sorted by key */
    size_t n_selector;      /* pairs */
} ic_list;

typedef struct ic_spec {
    int present;            /* spec is an object */
    int has_cache_spec;     /* an array */
    ic_list *lists;
    size_t n_lists;
    int has_pull_secrets;   /* an array */
    sv *pull_secrets;       /* each element's name ("" for none or null) */
    size_t n_pull_secrets;
} ic_spec;

/*
 * Reads spec json[0..len) (len 0: no spec) into *s.  Strings are arena
 * copies.  Returns 0, or -1 with a message naming the field in err when a
 * field kube-fledged reads has the wrong JSON type (its decoder refuses
 * these too, in Go's words; ours are our own), or the spec is larger than
 * IC_MAX_SPEC_BYTES.
 */
int ic_decode(ic_spec *s, const char *json, size_t len, arena *a, char *err, size_t errlen);

/* reflect.DeepEqual of the two ImageCacheSpecs Go would decode: the same
 * lists in the same order, nil only equal to nil, maps as sets. */
int ic_spec_equal(const ic_spec *x, const ic_spec *y);

/* reflect.DeepEqual of two lists' nodeSelector maps. */
int ic_selector_equal(const ic_list *x, const ic_list *y);

/* The index of the first image of l that repeats an earlier one (the
 * lowest such index, as kube-fledged's nested loop finds it), or
 * l->n_images when none does.  n log n: the list is hostile and may hold
 * hundreds of thousands of names.  Returns (size_t)-1 when out of memory. */
size_t ic_first_duplicate(const ic_list *l, arena *a);

#endif

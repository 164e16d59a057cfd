/*
 * admit_imagecache.h - kube-fledged's ImageCache (kubefledged.io/v1alpha2)
 * validated as kube-fledged's own webhook validates it (docs/design.md
 * "ImageCache admission"), each denial with its message byte for byte:
 * on CREATE, and on an UPDATE that changes the spec, every list has
 * images and no image twice; on such an UPDATE also, as many lists as
 * before, each with the nodeSelector it had.  An UPDATE that leaves the
 * spec as it was (status, annotations, labels) is not looked at.
 *
 * Not denied, where kube-fledged's unreleased v0.11 denies it: an edit
 * or a refresh/purge annotation while the cache is Processing (the
 * controller queues it: docs/DECISIONS.md "ImageCache edits while
 * Processing").
 *
 * The spec is read from the review's span of the body (review.h: spec_off,
 * spec_len) into an ic_spec (ic_spec.h); the decision is a pure function
 * of the two specs.
 */
#ifndef OTA_ADMIT_IMAGECACHE_H
#define OTA_ADMIT_IMAGECACHE_H

#include "arena.h"
#include "ota_rule.h"
#include "review.h"

#include "ic_spec.h"

/*
 * kube-fledged's validation of s, old non-NULL on UPDATE: the first
 * failure's message, in kube-fledged's order (lists in order: empty, then
 * a repeat; then the number of lists; then each nodeSelector).  Every
 * denial is answered with code 400, as the apiserver turns kube-fledged's
 * code-less denial into 400.  Messages in arena memory.
 */
ota_verdict ic_validate(const ic_spec *old, const ic_spec *s, arena *a);

/*
 * The verdict on an ImageCache review: both specs decoded (a spec that
 * does not decode is denied, rule imagecache-malformed, the message
 * naming the field, "oldObject: " first for the old one), then
 * ic_validate.
 */
ota_verdict ic_review_verdict(const review *rv, arena *a);

#endif

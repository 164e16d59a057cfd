/*
 * admit_imagecache.c - see admit_imagecache.h.  The messages are
 * kube-fledged's (v0.10.0, pkg/webhook: ValidateImageCache), typos and
 * capitals included.
 */
#include "admit_imagecache.h"

static ota_verdict deny(ota_rule rule, const char *message)
{
    return (ota_verdict){0, rule, message != NULL ? message : ota_rule_name(rule)};
}

ota_verdict ic_validate(const ic_spec *old, const ic_spec *s, arena *a)
{
    ota_verdict ok = {1, OTA_RULE_NONE, NULL};
    /* reflect.DeepEqual(old.Spec, new.Spec): nothing to validate */
    if (old != NULL && ic_spec_equal(old, s))
        return ok;
    for (size_t i = 0; i < s->n_lists; i++) {
        const ic_list *l = &s->lists[i];
        if (l->n_images == 0)
            return deny(OTA_RULE_IC_NO_IMAGES, "No images specified within image list");
        size_t m = ic_first_duplicate(l, a);
        if (m == (size_t)-1)
            return deny(OTA_RULE_IC_DUPLICATE_IMAGE, NULL);
        if (m < l->n_images)
            return deny(OTA_RULE_IC_DUPLICATE_IMAGE,
                        arena_printf(a, "Duplicate image names within image list: %s",
                                     arena_escape(a, l->images[m].ptr, l->images[m].len)));
    }
    if (old == NULL)
        return ok;
    if (old->n_lists != s->n_lists)
        return deny(OTA_RULE_IC_LIST_COUNT_CHANGED, "Mismatch in no. of image lists");
    for (size_t i = 0; i < old->n_lists; i++)
        if (!ic_selector_equal(&old->lists[i], &s->lists[i]))
            return deny(OTA_RULE_IC_NODE_SELECTOR_CHANGED, "Mismatch in node selector");
    return ok;
}

ota_verdict ic_review_verdict(const review *rv, arena *a)
{
    char err[256];
    ic_spec spec, old;
    int has_old = sv_eq(rv->operation, "UPDATE") && rv->old_object.present;
    const char *bad = NULL;
    if (ic_decode(&spec, rv->body + rv->object.spec_off, rv->object.spec_len, a, err, sizeof(err)) != 0)
        bad = "";
    else if (has_old && ic_decode(&old, rv->body + rv->old_object.spec_off, rv->old_object.spec_len, a, err,
                                  sizeof(err)) != 0)
        bad = "oldObject: ";
    if (bad != NULL)
        return deny(OTA_RULE_IC_MALFORMED, arena_printf(a, "%s%s", bad, err));
    return ic_validate(has_old ? &old : NULL, &spec, a);
}

/*
 * admit_daemonset.c - see admit_daemonset.h.
 */
#include "admit_daemonset.h"

#include "ota_daemonset.h"
#include "ota_names.h"

/* A value from the request, quoted and escaped for a message (arena.h). */
#define QUOTE(v) arena_quote(a, (v).ptr, (v).len)

#define ONDELETE_JSON "{\"type\":\"OnDelete\"}"

int admit_daemonset_mutate(const review_object *ds, const char *ds_ref, jpatch *p, arena *a,
                         const char **warning)
{
    ota_daemonset view = review_daemonset_view(ds);
    if (ota_daemonset_strategy(view.update_strategy) != OTA_UPDATE_OTA ||
        (ota_daemonset_on_delete(&view) && !ds->update_strategy_extra))
        return 0;
    static const char *const spec[] = {"spec"};
    static const char *const strategy[] = {"spec", "updateStrategy"};
    if (!ds->has_spec) {
        const char *v = "{\"updateStrategy\":" ONDELETE_JSON "}";
        jpatch_add_raw(p, "add", jpatch_pointer(a, spec, 1), v, strlen(v));
    } else {
        /* "add" replaces a member that exists (RFC 6902 §4.1), so one op
         * covers a missing, null, RollingUpdate or half-OnDelete strategy. */
        jpatch_add_raw(p, "add", jpatch_pointer(a, strategy, 2), ONDELETE_JSON,
                       strlen(ONDELETE_JSON));
    }
    const char *was = !ds->has_update_strategy                 ? "unset"
                      : sv_present(ds->update_strategy_type) ? QUOTE(ds->update_strategy_type)
                                                             : "without a type";
    /* the value as the user wrote it ("ota" is valid too) */
    *warning = arena_printf(a,
                            "ota-prepull: DaemonSet %s has " OTA_ANN_UPDATE_STRATEGY
                            "=%s, which needs spec.updateStrategy OnDelete; it was %s and "
                            "has been set to {\"type\":\"OnDelete\"}",
                            ds_ref, QUOTE(ds->ann_update_strategy), was);
    return 1;
}

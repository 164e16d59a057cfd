/*
 * podview.c - see podview.h.  The state is never worked out here: it is
 * ota_state_of_pod on kobj_pod_view, the rulebook's own answer.
 */
#include "podview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "format.h"
#include "ota_names.h"
#include "strbuf.h"

const char *const cli_col_names[CLI_N_COLS] = {
    "NAMESPACE", "POD", "NODE", "DAEMONSET", "STATE", "TARGET REVISION", "IMAGES", "AGE",
};

static char *member_dup(yajl_val obj, const char *key)
{
    const char *s = kobj_member_str(obj, key);
    return s != NULL ? strdup(s) : NULL;
}

cli_pod *cli_pod_decode(yajl_val obj)
{
    cli_pod *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->k = kobj_decode(KOBJ_POD, obj);
    if (p->k == NULL) {
        free(p);
        return NULL;
    }
    yajl_val meta = kobj_member(obj, "metadata");
    p->created = member_dup(meta, "creationTimestamp");
    p->resource_version = member_dup(meta, "resourceVersion");
    yajl_val owners = kobj_member(meta, "ownerReferences");
    if (YAJL_IS_ARRAY(owners)) {
        for (size_t i = 0; i < owners->u.array.len; i++) {
            yajl_val ref = owners->u.array.values[i];
            if (YAJL_IS_TRUE(kobj_member(ref, "controller"))) {
                p->owner_kind = member_dup(ref, "kind");
                p->owner_name = member_dup(ref, "name");
                break;
            }
        }
    }
    yajl_val conds = kobj_member(kobj_member(obj, "status"), "conditions");
    if (YAJL_IS_ARRAY(conds)) {
        for (size_t i = 0; i < conds->u.array.len; i++) {
            yajl_val c = conds->u.array.values[i];
            const char *type = kobj_member_str(c, "type"), *status = kobj_member_str(c, "status");
            if (type != NULL && strcmp(type, "Ready") == 0) {
                p->ready = status != NULL && strcmp(status, "True") == 0;
                break; /* the first of a type wins */
            }
        }
    }
    return p;
}

void cli_pod_free(cli_pod *p)
{
    if (p == NULL)
        return;
    kobj_free(p->k);
    free(p->owner_kind);
    free(p->owner_name);
    free(p->created);
    free(p->resource_version);
    free(p);
}

ota_state cli_pod_state(const cli_pod *p)
{
    ota_pod view = kobj_pod_view(p->k);
    return ota_state_of_pod(&view);
}

sv cli_pod_target(const cli_pod *p)
{
    ota_pod view = kobj_pod_view(p->k);
    const ota_cond *nu = &view.need_upgrade;
    size_t prefix = strlen(OTA_MSG_REVISION_PREFIX);
    if (nu->present && sv_eq(nu->status, "True") &&
        sv_starts_with(nu->message, OTA_MSG_REVISION_PREFIX) && nu->message.len > prefix)
        return (sv){nu->message.ptr + prefix, nu->message.len - prefix};
    const char *own = p->k->u.pod.hash;
    return own != NULL && own[0] != '\0' ? sv_from(own) : SV_NULL;
}

int cli_pod_auto(const cli_pod *p)
{
    ota_pod view = kobj_pod_view(p->k);
    return ota_state_of_pod(&view) != OTA_STATE_CURRENT &&
           ota_state_auto_prepull_allows(&view.auto_prepull, view.need_upgrade.message);
}

const char *cli_pod_state_since(const cli_pod *p)
{
    const kobj_pod *k = &p->k->u.pod;
    const kobj_cond *c;
    switch (cli_pod_state(p)) {
    case OTA_STATE_PULLING:
    case OTA_STATE_READY:
    case OTA_STATE_FAILED:
        c = &k->image_ready;
        break;
    default:
        c = &k->need_upgrade;
        break;
    }
    if (c->present && c->last_transition_time != NULL && c->last_transition_time[0] != '\0')
        return c->last_transition_time;
    return p->created;
}

int cli_ds_served(const kobj *ds)
{
    return ds->u.ds.ota || ds->u.ds.auto_parallelism != NULL;
}

cli_ota_verdict cli_ota_of(const cli_pod *p, long ds_status, const kobj *ds)
{
    switch (ds_status) {
    case 200:
        return ds != NULL && ds->kind == KOBJ_DAEMONSET && cli_ds_served(ds) &&
                       p->k->meta.owner_uid != NULL &&
                       strcmp(ds->meta.uid, p->k->meta.owner_uid) == 0
                   ? CLI_OTA_YES
                   : CLI_OTA_NOT;
    case 404:
        return CLI_OTA_GONE;
    case 403:
        return p->k->u.pod.need_upgrade.present ? CLI_OTA_YES : CLI_OTA_UNKNOWN;
    default:
        return CLI_OTA_ERROR;
    }
}

cli_jobpod *cli_jobpod_decode(yajl_val obj)
{
    yajl_val meta = kobj_member(obj, "metadata");
    const char *uid = kobj_member_str(kobj_member(meta, "labels"), OTA_LABEL_POD_UID);
    if (uid == NULL || uid[0] == '\0')
        return NULL;
    cli_jobpod *j = calloc(1, sizeof(*j));
    if (j == NULL)
        return NULL;
    yajl_val ann = kobj_member(meta, "annotations");
    j->k = kobj_decode(KOBJ_JOB_POD, obj);
    j->pod_uid = strdup(uid);
    j->revision = member_dup(ann, OTA_ANN_JOB_REVISION);
    j->request_time = member_dup(ann, OTA_ANN_JOB_REQUEST_TIME);
    j->created = member_dup(meta, "creationTimestamp");
    j->phase = member_dup(kobj_member(obj, "status"), "phase");
    int bad = j->k == NULL || j->pod_uid == NULL;
    yajl_val inits = kobj_member(kobj_member(obj, "spec"), "initContainers");
    size_t prefix = strlen(OTA_JOB_PULL_CONTAINER_PREFIX);
    for (size_t i = 0; !bad && YAJL_IS_ARRAY(inits) && i < inits->u.array.len &&
                       j->n_images < CLI_MAX_IMAGES;
         i++) {
        yajl_val c = inits->u.array.values[i];
        const char *name = kobj_member_str(c, "name"), *image = kobj_member_str(c, "image");
        if (name == NULL || image == NULL ||
            strncmp(name, OTA_JOB_PULL_CONTAINER_PREFIX, prefix) != 0)
            continue; /* the helper, which is not a target */
        if ((j->images[j->n_images++] = strdup(image)) == NULL)
            bad = 1;
    }
    if (bad) {
        cli_jobpod_free(j);
        return NULL;
    }
    return j;
}

void cli_jobpod_free(cli_jobpod *j)
{
    if (j == NULL)
        return;
    kobj_free(j->k);
    free(j->pod_uid);
    free(j->revision);
    free(j->request_time);
    free(j->created);
    free(j->phase);
    for (size_t i = 0; i < j->n_images; i++)
        free(j->images[i]);
    free(j);
}

const char *cli_jobpod_state(const cli_jobpod *j)
{
    if (j->phase != NULL && strcmp(j->phase, "Succeeded") == 0)
        return "complete";
    if (j->phase != NULL && strcmp(j->phase, "Failed") == 0)
        return "failed";
    return "running";
}

const cli_jobpod *cli_jobpod_newest(const cli_jobpod *const *jps, size_t n, const char *pod_uid)
{
    const cli_jobpod *best = NULL;
    for (size_t i = 0; pod_uid != NULL && i < n; i++) {
        const cli_jobpod *j = jps[i];
        if (strcmp(j->pod_uid, pod_uid) != 0)
            continue;
        /* RFC 3339 times in UTC compare as text */
        if (best == NULL || strcmp(j->created != NULL ? j->created : "",
                                   best->created != NULL ? best->created : "") >= 0)
            best = j;
    }
    return best;
}

/* Appends images, comma-separated after the n already there; the count. */
static size_t join_images(strbuf *b, size_t n, const char *const *images, size_t count)
{
    for (size_t j = 0; j < count && n < CLI_MAX_IMAGES; j++, n++)
        strbuf_printf(b, "%s%s", n > 0 ? "," : "", images[j]);
    return n;
}

/* The images of the target hash of pod p (DaemonSet ds_uid), joined: from
 * a revision, else from the pod's newest Job pod pulling that hash. */
static void images_cell(strbuf *b, const cli_pod *p, sv hash, const char *ds_uid,
                        const cli_list_data *d)
{
    for (size_t i = 0; sv_present(hash) && ds_uid != NULL && i < d->n_revs; i++) {
        const cli_revision *r = &d->revs[i];
        if (r->owner_uid == NULL || r->hash == NULL || strcmp(r->owner_uid, ds_uid) != 0 ||
            !sv_eq(hash, r->hash))
            continue;
        size_t n = join_images(b, 0, r->init_images, r->n_init_images);
        if (join_images(b, n, r->images, r->n_images) > 0)
            return;
    }
    const cli_jobpod *j = cli_jobpod_newest(d->jobpods, d->n_jobpods, p->k->meta.uid);
    if (sv_present(hash) && j != NULL && j->revision != NULL && sv_eq(hash, j->revision) &&
        join_images(b, 0, (const char *const *)j->images, j->n_images) > 0)
        return;
    strbuf_printf(b, "%s", d->revs_hidden ? CLI_IMAGES_HIDDEN : CLI_IMAGES_UNKNOWN);
}

int cli_row_of(const cli_pod *p, const char *ds_name, const char *ds_uid,
               const cli_list_data *d, long long now_epoch, char *cells[CLI_N_COLS])
{
    memset(cells, 0, CLI_N_COLS * sizeof(cells[0]));
    const kobj *k = p->k;
    sv target = cli_pod_target(p);
    char age[32] = "<unknown>";
    const char *since = cli_pod_state_since(p);
    long long t = since != NULL ? kobj_parse_time(since) : 0;
    if (t != 0)
        cli_age(age, sizeof(age), now_epoch - t);
    strbuf images = {0};
    images_cell(&images, p, target, ds_uid, d);
    char target_buf[CLI_NAME_MAX + 1];
    snprintf(target_buf, sizeof(target_buf), "%.*s", SV_ARG(target));
    char state[32];
    snprintf(state, sizeof(state), "%s%s", ota_state_name(cli_pod_state(p)),
             cli_pod_auto(p) ? CLI_AUTO_MARK : "");
    const char *raw[CLI_N_COLS] = {
        [CLI_COL_NAMESPACE] = k->meta.namespace,
        [CLI_COL_POD] = k->meta.name,
        [CLI_COL_NODE] = k->u.pod.node_name != NULL ? k->u.pod.node_name : "<none>",
        [CLI_COL_DAEMONSET] = ds_name,
        [CLI_COL_STATE] = state,
        [CLI_COL_TARGET] = sv_present(target) ? target_buf : CLI_IMAGES_UNKNOWN,
        [CLI_COL_IMAGES] = images.data,
        [CLI_COL_AGE] = age,
    };
    int rc = images.failed ? -1 : 0;
    for (int i = 0; i < CLI_N_COLS && rc == 0; i++) {
        const char *s = raw[i] != NULL ? raw[i] : "";
        size_t cap = i == CLI_COL_IMAGES ? CLI_CELL_MAX_WIDE : CLI_CELL_MAX;
        if ((cells[i] = malloc(cap + 1)) == NULL)
            rc = -1;
        else
            cli_sanitize(cells[i], cap + 1, s, strlen(s));
    }
    strbuf_free(&images);
    if (rc != 0)
        cli_row_free(cells);
    return rc;
}

void cli_row_free(char *cells[CLI_N_COLS])
{
    for (int i = 0; i < CLI_N_COLS; i++) {
        free(cells[i]);
        cells[i] = NULL;
    }
}

cli_pull_verdict cli_pull_decide(ota_state s)
{
    switch (s) {
    case OTA_STATE_PENDING_UPGRADE:
    case OTA_STATE_FAILED:
        return CLI_PULL_WRITE;
    case OTA_STATE_PULLING:
        return CLI_PULL_ALREADY_PULLING;
    case OTA_STATE_READY:
        return CLI_PULL_ALREADY_READY;
    case OTA_STATE_CURRENT:
        break;
    }
    return CLI_PULL_NO_UPGRADE;
}

cli_upgrade_verdict cli_upgrade_decide(ota_state s, int force)
{
    if (s == OTA_STATE_CURRENT)
        return CLI_UPGRADE_NO_UPGRADE;
    if (s == OTA_STATE_READY || force)
        return CLI_UPGRADE_DELETE;
    return CLI_UPGRADE_NOT_READY;
}

int cli_watch_exit(ota_state s)
{
    switch (s) {
    case OTA_STATE_PULLING:
        return -1;
    case OTA_STATE_READY:
        return CLI_EXIT_OK;
    case OTA_STATE_FAILED:
    case OTA_STATE_PENDING_UPGRADE:
        return CLI_EXIT_PULL_FAILED;
    case OTA_STATE_CURRENT:
        break;
    }
    return CLI_EXIT_NO_UPGRADE;
}

int cli_watch_line(ota_state last, ota_state now, const char *last_word, const char *word)
{
    return now != last || (word[0] != '\0' && strcmp(word, last_word) != 0);
}

const char *cli_failure_reason(const char *image_ready_message, const char *job_why,
                               const char *kubelet)
{
    if (image_ready_message != NULL && image_ready_message[0] != '\0')
        return image_ready_message;
    if (job_why != NULL && job_why[0] != '\0')
        return job_why;
    return kubelet != NULL ? kubelet : "";
}

pullerr_refusal cli_failure_refusal(const char *why)
{
    /* the kubelet's reasons for a pull, as the controller's message names
     * them; the first one named is the one the words are about */
    static const char *const reasons[] = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                                          "ErrImageNeverPull"};
    const char *first = NULL, *reason = NULL;
    if (why == NULL)
        return PULLERR_REFUSED_NOT;
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        const char *at = strstr(why, reasons[i]);
        if (at != NULL && (first == NULL || at < first)) {
            first = at;
            reason = reasons[i];
        }
    }
    return reason != NULL ? pullerr_refusal_of(reason, why) : PULLERR_REFUSED_NOT;
}

int cli_is_replacement(const cli_pod *p, const char *ds_uid, const char *node, const char *old_uid)
{
    const kobj *k = p->k;
    return k->meta.owner_uid != NULL && strcmp(k->meta.owner_uid, ds_uid) == 0 &&
           k->u.pod.node_name != NULL && strcmp(k->u.pod.node_name, node) == 0 &&
           strcmp(k->meta.uid, old_uid) != 0 && !k->meta.deleting && p->ready;
}

static const char *event_time(yajl_val ev)
{
    const char *t = kobj_member_str(ev, "lastTimestamp");
    if (t == NULL || t[0] == '\0')
        t = kobj_member_str(ev, "eventTime");
    return t != NULL ? t : "";
}

yajl_val cli_latest_kubelet_event(yajl_val items)
{
    yajl_val best = NULL;
    if (!YAJL_IS_ARRAY(items))
        return NULL;
    for (size_t i = 0; i < items->u.array.len; i++) {
        yajl_val ev = items->u.array.values[i];
        const char *src = kobj_member_str(kobj_member(ev, "source"), "component"),
                   *rep = kobj_member_str(ev, "reportingComponent");
        int kubelet = (src != NULL && strcmp(src, "kubelet") == 0) ||
                      (rep != NULL && strcmp(rep, "kubelet") == 0);
        if (kubelet && (best == NULL || strcmp(event_time(ev), event_time(best)) >= 0))
            best = ev;
    }
    return best;
}

/*
 * target.c - see target.h.
 */
#include "target.h"

#include <stdio.h>
#include <string.h>

#include "format.h"
#include "kapi.h"
#include "ota_names.h"

void cli_target_free(cli_target *t)
{
    cli_pod_free(t->pod);
    t->pod = NULL;
}

/* GETs the object name of r in the namespace into reply; its status. */
static long get_object(cli_app *a, kapi_resource r, const char *name, kube_reply *reply)
{
    strbuf path = {0};
    long status = 0;
    memset(reply, 0, sizeof(*reply));
    if (kapi_path(&path, r, a->ns, name, NULL) == 0 && !path.failed)
        status = kube_sync_call(a->client, "GET", path.data, NULL, NULL, reply);
    else
        snprintf(reply->error, sizeof(reply->error), "out of memory");
    strbuf_free(&path);
    return status;
}

int cli_target_load(cli_app *a, const char *name, cli_target *t, int quiet_forbidden)
{
    memset(t, 0, sizeof(*t));
    char what[400];
    snprintf(what, sizeof(what), "pod %s/%s", a->ns, name);
    kube_reply r;
    long status = get_object(a, KAPI_PODS, name, &r);
    if (status == 404) {
        cli_errorf("pod \"%s\" not found in namespace \"%s\"", name, a->ns);
        kube_reply_free(&r);
        return CLI_EXIT_NOT_FOUND;
    }
    if (status == 403 && quiet_forbidden) {
        t->pod_forbidden = 1;
        kube_reply_free(&r);
        return CLI_EXIT_DENIED;
    }
    if (status != 200) {
        int rc = cli_fail_pod_call(a, what, name, &r);
        kube_reply_free(&r);
        return rc;
    }
    yajl_val tree;
    int rc = cli_decode(&r, what, &tree);
    kube_reply_free(&r);
    if (rc != 0)
        return rc;
    t->pod = cli_pod_decode(tree);
    yajl_tree_free(tree);
    if (t->pod == NULL) {
        cli_errorf("%s: the apiserver's answer is not a pod", what);
        return CLI_EXIT_ERROR;
    }
    const cli_pod *p = t->pod;
    if (p->owner_kind == NULL || strcmp(p->owner_kind, "DaemonSet") != 0 ||
        !cli_name_valid(p->owner_name, CLI_NAME_MAX, 1) || p->k->meta.owner_uid == NULL) {
        char owner[300];
        cli_sanitize(owner, sizeof(owner), p->owner_kind != NULL ? p->owner_kind : "",
                     p->owner_kind != NULL ? strlen(p->owner_kind) : 0);
        cli_errorf("%s is not in an OTA DaemonSet: %s%s", what,
                   p->owner_kind != NULL ? "its controller is a " : "it has no controller",
                   owner);
        return CLI_EXIT_NOT_OTA;
    }
    snprintf(t->ds_name, sizeof(t->ds_name), "%s", p->owner_name);
    snprintf(t->ds_uid, sizeof(t->ds_uid), "%s", p->k->meta.owner_uid);
    /* The DaemonSet, when the identity may read it (a node's may not). */
    status = get_object(a, KAPI_DAEMONSETS, t->ds_name, &r);
    kobj *ds = NULL;
    if (status == 200) {
        rc = cli_decode(&r, "its DaemonSet", &tree);
        if (rc != 0) {
            kube_reply_free(&r);
            return rc;
        }
        ds = kobj_decode(KOBJ_DAEMONSET, tree);
        yajl_tree_free(tree);
    }
    cli_ota_verdict v = cli_ota_of(p, status, ds);
    kobj_free(ds);
    switch (v) {
    case CLI_OTA_YES:
        break;
    case CLI_OTA_NOT:
        cli_errorf("%s is not in an OTA DaemonSet: DaemonSet %s is not annotated %s: %s "
                   "(nor %s, automatic pre-pull)",
                   what, t->ds_name, OTA_ANN_UPDATE_STRATEGY, OTA_STRATEGY_OTA,
                   OTA_ANN_PREDOWNLOAD_PARALLELISM);
        rc = CLI_EXIT_NOT_OTA;
        break;
    case CLI_OTA_GONE:
        cli_errorf("%s is not in an OTA DaemonSet: its DaemonSet %s is gone", what, t->ds_name);
        rc = CLI_EXIT_NOT_OTA;
        break;
    case CLI_OTA_UNKNOWN:
        cli_errorf("%s is not known to be in an OTA DaemonSet: it has no %s condition "
                   "(ota-controller writes one on every pod of an OTA DaemonSet), and these "
                   "credentials may not read its DaemonSet %s to tell",
                   what, OTA_COND_NEED_UPGRADE, t->ds_name);
        rc = CLI_EXIT_NOT_OTA;
        break;
    case CLI_OTA_ERROR:
        rc = cli_fail_call(a, "its DaemonSet", &r);
        break;
    }
    kube_reply_free(&r);
    return rc;
}

int cli_target_decidable(cli_app *a, cli_target *t, ota_state *s, char *hash, size_t size,
                         int quiet_forbidden)
{
    int rc = cli_target_load(a, a->args.pod, t, quiet_forbidden);
    if (rc != 0) {
        cli_target_free(t);
        return rc;
    }
    *s = cli_pod_state(t->pod);
    cli_target_hash(t, hash, size);
    return 0;
}

const char *cli_target_node(const cli_target *t)
{
    return t->pod->k->u.pod.node_name != NULL ? t->pod->k->u.pod.node_name : "<no node>";
}

const char *cli_target_hash(const cli_target *t, char *buf, size_t size)
{
    sv h = cli_pod_target(t->pod);
    char raw[CLI_NAME_MAX + 1];
    snprintf(raw, sizeof(raw), "%.*s", SV_ARG(h));
    return cli_sanitize(buf, size, raw, strlen(raw));
}

int cli_no_upgrade(const cli_app *a)
{
    cli_errorf("pod %s/%s needs no upgrade: PodNeedUpgrade is not True (state Current)", a->ns,
               a->args.pod);
    return CLI_EXIT_NO_UPGRADE;
}

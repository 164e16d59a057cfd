/*
 * cmd_list.c - `kubectl ota list`: the OTA pods (of a node, a namespace or
 * all), with their state, target revision and its images.  "OTA pods" are
 * those ota-controller serves (cli_ds_served): an OTA DaemonSet's, and a
 * RollingUpdate DaemonSet's that opted in to automatic pre-pull.
 *
 * A node's credentials may list only the pods on that node (fieldSelector
 * spec.nodeName), not DaemonSets or ControllerRevisions: then a pod is an
 * OTA pod by its PodNeedUpgrade condition (cli_ota_of) and the images come
 * from its pre-pull Job's pod, which is on the node too.
 */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "json.h"
#include "kapi.h"
#include "ota_names.h"
#include "podview.h"

typedef struct list_ctx {
    kobj **ds;
    size_t n_ds, cap_ds;
    kobj **revs;
    size_t n_revs, cap_revs;
    cli_pod **pods;
    size_t n_pods, cap_pods;
    cli_jobpod **jobpods;
    size_t n_jobpods, cap_jobpods;
    int ds_hidden, revs_hidden; /* the identity may not list them (403) */
} list_ctx;

static int push(void ***arr, size_t *n, size_t *cap, void *item)
{
    if (item == NULL)
        return 0; /* an object without a name or uid: skipped */
    if (*n == *cap) {
        size_t want = *cap != 0 ? *cap * 2 : 64;
        void **grown = realloc(*arr, want * sizeof(void *));
        if (grown == NULL)
            return CLI_EXIT_ERROR;
        *arr = grown;
        *cap = want;
    }
    (*arr)[(*n)++] = item;
    return 0;
}

static int on_ds(void *data, yajl_val item)
{
    list_ctx *l = data;
    kobj *ds = kobj_decode(KOBJ_DAEMONSET, item);
    if (ds != NULL && !cli_ds_served(ds)) {
        kobj_free(ds);
        return 0;
    }
    return push((void ***)&l->ds, &l->n_ds, &l->cap_ds, ds);
}

static const kobj *ota_ds(const list_ctx *l, const char *uid)
{
    for (size_t i = 0; uid != NULL && i < l->n_ds; i++)
        if (strcmp(l->ds[i]->meta.uid, uid) == 0)
            return l->ds[i];
    return NULL;
}

static int on_rev(void *data, yajl_val item)
{
    list_ctx *l = data;
    kobj *rev = kobj_decode(KOBJ_REVISION, item);
    if (rev != NULL && ota_ds(l, rev->meta.owner_uid) == NULL) {
        kobj_free(rev);
        return 0;
    }
    return push((void ***)&l->revs, &l->n_revs, &l->cap_revs, rev);
}

static int on_pod(void *data, yajl_val item)
{
    list_ctx *l = data;
    cli_jobpod *jp = cli_jobpod_decode(item);
    if (jp != NULL)
        return push((void ***)&l->jobpods, &l->n_jobpods, &l->cap_jobpods, jp);
    cli_pod *p = cli_pod_decode(item);
    int ota = p != NULL && (l->ds_hidden ? p->owner_kind != NULL &&
                                               strcmp(p->owner_kind, "DaemonSet") == 0 &&
                                               cli_ota_of(p, 403, NULL) == CLI_OTA_YES
                                         : ota_ds(l, p->k->meta.owner_uid) != NULL);
    if (p != NULL && !ota) {
        cli_pod_free(p);
        return 0;
    }
    return push((void ***)&l->pods, &l->n_pods, &l->cap_pods, p);
}

static int by_namespace_name(const void *x, const void *y)
{
    const kobj *a = (*(cli_pod *const *)x)->k, *b = (*(cli_pod *const *)y)->k;
    int c = strcmp(a->meta.namespace != NULL ? a->meta.namespace : "",
                   b->meta.namespace != NULL ? b->meta.namespace : "");
    return c != 0 ? c : strcmp(a->meta.name, b->meta.name);
}

/* Who the server says we are (what `kubectl auth whoami` asks): the node
 * name of a system:node:<n> identity into node, else "". */
static void whoami_node(cli_app *a, char *node, size_t size)
{
    node[0] = '\0';
    kube_reply r = {0};
    static const char body[] =
        "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}";
    char *path = cli_path(KAPI_SELFSUBJECTREVIEWS, NULL, NULL, NULL);
    long status =
        path != NULL ? kube_sync_call(a->client, "POST", path, KAPI_CT_JSON, body, &r) : 0;
    free(path);
    if (status == 200 || status == 201) {
        char err[64];
        yajl_val tree = json_parse_tree(r.body, r.len, CLI_JSON_DEPTH, err, sizeof(err));
        static const char *const p_user[] = {"status", "userInfo", "username", NULL};
        yajl_val user = tree != NULL ? yajl_tree_get(tree, (const char **)p_user, yajl_t_string) : NULL;
        const char *u = user != NULL ? YAJL_GET_STRING(user) : "";
        size_t prefix = strlen(OTA_NODE_USER_PREFIX);
        if (strncmp(u, OTA_NODE_USER_PREFIX, prefix) == 0 &&
            cli_name_valid(u + prefix, CLI_NAME_MAX, 1))
            snprintf(node, size, "%s", u + prefix);
        if (tree != NULL)
            yajl_tree_free(tree);
    }
    /* an older server (no SelfSubjectReview before 1.28): no default node */
    kube_reply_free(&r);
}

int cli_cmd_list(cli_app *a)
{
    list_ctx l = {0};
    char node[CLI_NAME_MAX + 1] = "";
    if (a->args.node != NULL)
        snprintf(node, sizeof(node), "%s", a->args.node);
    else
        whoami_node(a, node, sizeof(node));
    const char *ns = a->args.all_namespaces ? NULL : a->ns;
    char *ds_path = cli_path(KAPI_DAEMONSETS, ns, NULL, NULL);
    char *rev_path = cli_path(KAPI_CONTROLLERREVISIONS, ns, NULL, NULL);
    char *pod_path = cli_path(KAPI_PODS, ns, NULL, NULL);
    strbuf q = {0};
    int bad = ds_path == NULL || rev_path == NULL || pod_path == NULL;
    if (node[0] != '\0')
        bad |= kapi_selector(&q, KAPI_FIELD_SELECTOR,
                             (const kapi_requirement[]){{"spec.nodeName", node}, {NULL, NULL}}) != 0;
    int rc = bad || q.failed ? CLI_EXIT_ERROR
                             : cli_list_optional(a, "listing DaemonSets", ds_path, "", on_ds, &l,
                                                 &l.ds_hidden);
    l.revs_hidden = l.ds_hidden;
    if (rc == 0 && l.n_ds > 0)
        rc = cli_list_optional(a, "listing ControllerRevisions", rev_path, "", on_rev, &l,
                               &l.revs_hidden);
    if (rc == 0 && (l.n_ds > 0 || l.ds_hidden))
        rc = cli_list_all(a, "listing pods", pod_path, q.data != NULL ? q.data : "", on_pod, &l);
    strbuf_free(&q);
    free(ds_path);
    free(rev_path);
    free(pod_path);
    if (rc == 0 && l.n_pods == 0) {
        char where[400];
        int n = a->args.all_namespaces
                    ? snprintf(where, sizeof(where), "in any namespace")
                    : snprintf(where, sizeof(where), "in namespace %s", a->ns);
        if (node[0] != '\0' && n > 0 && (size_t)n < sizeof(where))
            snprintf(where + n, sizeof(where) - (size_t)n, " on node %s", node);
        fprintf(stderr, "No OTA pods found %s.\n", where);
    }
    if (rc == 0 && l.n_pods > 0) {
        qsort(l.pods, l.n_pods, sizeof(l.pods[0]), by_namespace_name);
        cli_revision *revs = calloc(l.n_revs + 1, sizeof(*revs));
        char *(*rows)[CLI_N_COLS] = calloc(l.n_pods, sizeof(*rows));
        char ***cells = calloc(l.n_pods, sizeof(*cells));
        if (revs == NULL || rows == NULL || cells == NULL)
            rc = CLI_EXIT_ERROR;
        for (size_t i = 0; rc == 0 && i < l.n_revs; i++) {
            const kobj_revision *r = &l.revs[i]->u.rev;
            revs[i] = (cli_revision){l.revs[i]->meta.owner_uid, r->hash,
                                     (const char *const *)r->init_images, r->n_init_images,
                                     (const char *const *)r->images, r->n_images};
        }
        long long now = (long long)time(NULL);
        cli_list_data d = {revs, l.n_revs, l.revs_hidden,
                           (const cli_jobpod *const *)l.jobpods, l.n_jobpods};
        int hidden_images = 0;
        for (size_t i = 0; rc == 0 && i < l.n_pods; i++) {
            const cli_pod *p = l.pods[i];
            const kobj *ds = ota_ds(&l, p->k->meta.owner_uid);
            if (cli_row_of(p, ds != NULL ? ds->meta.name : p->owner_name,
                           ds != NULL ? ds->meta.uid : p->k->meta.owner_uid, &d, now,
                           rows[i]) != 0)
                rc = CLI_EXIT_ERROR;
            else
                hidden_images |= strcmp(rows[i][CLI_COL_IMAGES], CLI_IMAGES_HIDDEN) == 0;
            /* without -A, no NAMESPACE column (as kubectl) */
            cells[i] = rows[i] + (a->args.all_namespaces ? 0 : 1);
        }
        if (rc == 0) {
            strbuf out = {0};
            size_t skip = a->args.all_namespaces ? 0 : 1;
            cli_table_render(&out, cli_col_names + skip, CLI_N_COLS - skip,
                             (char *const *const *)cells, l.n_pods);
            if (out.failed)
                rc = CLI_EXIT_ERROR;
            cli_put(&out, stdout);
            if (hidden_images)
                fprintf(stderr, "%s\n", cli_list_hidden_note());
        }
        for (size_t i = 0; rows != NULL && i < l.n_pods; i++)
            cli_row_free(rows[i]);
        free(rows);
        free(cells);
        free(revs);
        if (rc != 0)
            cli_errorf("out of memory");
    }
    for (size_t i = 0; i < l.n_ds; i++)
        kobj_free(l.ds[i]);
    for (size_t i = 0; i < l.n_revs; i++)
        kobj_free(l.revs[i]);
    for (size_t i = 0; i < l.n_pods; i++)
        cli_pod_free(l.pods[i]);
    for (size_t i = 0; i < l.n_jobpods; i++)
        cli_jobpod_free(l.jobpods[i]);
    free(l.jobpods);
    free(l.ds);
    free(l.revs);
    free(l.pods);
    return rc;
}

/*
 * main.c - kubectl-ota: the node users' kubectl plugin (docs/node-users.md).
 *
 * The I/O shell: it finds the cluster as kubectl does, makes the API calls
 * one at a time on kube/'s client, and prints.  What the calls mean is
 * decided elsewhere: arguments in args.c, states, columns and verdicts in
 * podview.c (the state itself is lib/ota_state's), text in format.c.
 *
 * Everything read from the server is bounded: a body by kube_client
 * (64 MiB), a parsed object's nesting by json_parse_tree, lists by pages of
 * CLI_PAGE items and at most CLI_MAX_PAGES pages, a continue token by
 * CLI_TOKEN_MAX bytes, what is printed by format.c's cell and message caps.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "clock.h"
#include "format.h"
#include "json.h"
#include "kobj.h"
#include "kube_client.h"
#include "kube_config.h"
#include "log.h"

#ifndef OTA_VERSION
#define OTA_VERSION "0.0.0"
#endif
#ifndef OTA_COMMIT
#define OTA_COMMIT "unknown"
#endif
#include "ota_names.h"
#include "podview.h"
#include "strbuf.h"

#define CLI_PAGE 500
#define CLI_MAX_PAGES 200 /* 100 000 objects */
#define CLI_TOKEN_MAX 8192
#define CLI_JSON_DEPTH 64
#define CLI_WRITE_ATTEMPTS 5 /* re-read and decide again after a conflict */
#define CLI_WAIT_POLL_NS (200 * 1000000ull)
#define CLI_WATCH_POLL_NS (500 * 1000000ull)

typedef struct app {
    cli_args args;
    kube_config cfg;
    kube_client *client;
    const char *ns;
} app;

/* ---- output ---- */

static void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void put(strbuf *b, FILE *f)
{
    if (b->data != NULL)
        fputs(b->data, f);
    strbuf_free(b);
}

/* ---- calls ---- */

typedef struct reply {
    int done;
    long status;
    char *body;
    size_t len;
    char error[256];
} reply;

static void reply_free(reply *r)
{
    free(r->body);
    memset(r, 0, sizeof(*r));
}

static void on_done(void *data, const kube_result *res)
{
    reply *r = data;
    r->done = 1;
    r->status = res->status;
    r->body = malloc(res->body_len + 1);
    if (r->body != NULL) {
        memcpy(r->body, res->body, res->body_len);
        r->body[res->body_len] = '\0';
        r->len = res->body_len;
    }
    if (res->error != NULL)
        snprintf(r->error, sizeof(r->error), "%s", res->error);
}

/* One call, waited for.  Reads are retried by the client where client-go
 * retries; writes are not (one that may have landed is never resent: the
 * caller reads again and decides).  Returns the HTTP status, 0 when no
 * answer came (r->error says why). */
static long call(app *a, const char *method, const char *path, const char *ctype,
                 const char *body, reply *r)
{
    memset(r, 0, sizeof(*r));
    kube_call c = {
        .method = method,
        .path = path,
        .content_type = ctype,
        .body = body,
        .body_len = body != NULL ? strlen(body) : 0,
        .on_done = on_done,
        .data = r,
        .no_retry = strcmp(method, "GET") != 0,
    };
    if (kube_client_call(a->client, &c) != 0) {
        snprintf(r->error, sizeof(r->error), "cannot queue the call");
        return 0;
    }
    while (!r->done)
        kube_client_step(a->client, 100);
    if (r->body == NULL && r->status != 0) {
        snprintf(r->error, sizeof(r->error), "out of memory");
        r->status = 0;
    }
    return r->status;
}

/* Prints why a call failed; returns the exit code it means. */
static int fail_call(app *a, const char *what, const reply *r)
{
    if (r->status == 0) {
        errorf("%s: cannot reach the apiserver at %s: %s", what, a->cfg.server, r->error);
        return CLI_EXIT_ERROR;
    }
    char msg[CLI_MESSAGE_MAX];
    cli_status_message(msg, sizeof(msg), r->status, r->body, r->len);
    if (cli_is_webhook_denial(msg)) {
        /* the webhook's words, as the apiserver passed them on */
        fprintf(stderr, "%s\n", msg);
        return CLI_EXIT_DENIED;
    }
    errorf("%s: %s", what, msg);
    return CLI_EXIT_ERROR;
}

static yajl_val parse(const reply *r, char *err, size_t errlen)
{
    return json_parse_tree(r->body, r->len, CLI_JSON_DEPTH, err, errlen);
}

static yajl_val field(yajl_val v, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    return v != NULL ? yajl_tree_get(v, path, yajl_t_any) : NULL;
}

static const char *field_str(yajl_val v, const char *a, const char *b)
{
    yajl_val s = field(v, a, b);
    return YAJL_IS_STRING(s) ? YAJL_GET_STRING(s) : NULL;
}

typedef int (*item_fn)(void *data, yajl_val item);

/* GETs a list (path has no query; query is "" or "k=v&...") page by page
 * and hands each item to fn.  0, or the exit code after printing why. */
static int list_all(app *a, const char *what, const char *path, const char *query, item_fn fn,
                    void *data)
{
    char *token = NULL;
    int rc = 0;
    for (int page = 0;; page++) {
        if (page == CLI_MAX_PAGES) {
            errorf("%s: more than %d objects; narrow it with -n or --node", what,
                   CLI_PAGE * CLI_MAX_PAGES);
            rc = CLI_EXIT_ERROR;
            break;
        }
        strbuf url = {0};
        strbuf_printf(&url, "%s?limit=%d%s%s", path, CLI_PAGE, query[0] != '\0' ? "&" : "", query);
        if (token != NULL) {
            strbuf_printf(&url, "&continue=");
            cli_query_escape(&url, token);
        }
        reply r = {0};
        long status = url.failed ? 0 : call(a, "GET", url.data, NULL, NULL, &r);
        strbuf_free(&url);
        free(token);
        token = NULL;
        if (status != 200) {
            rc = fail_call(a, what, &r);
            reply_free(&r);
            break;
        }
        char err[128];
        yajl_val tree = parse(&r, err, sizeof(err));
        reply_free(&r);
        yajl_val items = field(tree, "items", NULL);
        if (tree == NULL || !YAJL_IS_ARRAY(items)) {
            errorf("%s: the apiserver's answer is not a list: %s", what,
                   tree == NULL ? err : "no items");
            if (tree != NULL)
                yajl_tree_free(tree);
            rc = CLI_EXIT_ERROR;
            break;
        }
        for (size_t i = 0; i < items->u.array.len && rc == 0; i++)
            rc = fn(data, items->u.array.values[i]);
        const char *next = field_str(tree, "metadata", "continue");
        if (rc == 0 && next != NULL && next[0] != '\0') {
            if (strlen(next) > CLI_TOKEN_MAX) {
                errorf("%s: the apiserver's continue token is longer than %d bytes", what,
                       CLI_TOKEN_MAX);
                rc = CLI_EXIT_ERROR;
            } else if ((token = strdup(next)) == NULL) {
                rc = CLI_EXIT_ERROR;
            }
        }
        yajl_tree_free(tree);
        if (rc != 0 || token == NULL)
            break;
    }
    free(token);
    return rc;
}

/* ---- a pod and its DaemonSet ---- */

typedef struct target {
    cli_pod *pod;
    char ds_name[CLI_NAME_MAX + 1];
    char ds_uid[128];
} target;

static void target_free(target *t)
{
    cli_pod_free(t->pod);
    t->pod = NULL;
}

static int decode_one(const reply *r, const char *what, yajl_val *tree)
{
    char err[128];
    *tree = parse(r, err, sizeof(err));
    if (*tree == NULL) {
        errorf("%s: unreadable answer: %s", what, err);
        return CLI_EXIT_ERROR;
    }
    return 0;
}

/* Reads the pod and checks it belongs to an OTA DaemonSet.  0, or the exit
 * code after printing why. */
static int load_target(app *a, const char *name, target *t)
{
    memset(t, 0, sizeof(*t));
    char path[512], what[400];
    snprintf(what, sizeof(what), "pod %s/%s", a->ns, name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", a->ns, name);
    reply r = {0};
    long status = call(a, "GET", path, NULL, NULL, &r);
    if (status == 404) {
        errorf("pod \"%s\" not found in namespace \"%s\"", name, a->ns);
        reply_free(&r);
        return CLI_EXIT_NOT_FOUND;
    }
    if (status != 200) {
        int rc = fail_call(a, what, &r);
        reply_free(&r);
        return rc;
    }
    yajl_val tree;
    int rc = decode_one(&r, what, &tree);
    reply_free(&r);
    if (rc != 0)
        return rc;
    t->pod = cli_pod_decode(tree);
    yajl_tree_free(tree);
    if (t->pod == NULL) {
        errorf("%s: the apiserver's answer is not a pod", what);
        return CLI_EXIT_ERROR;
    }
    const cli_pod *p = t->pod;
    if (p->owner_kind == NULL || strcmp(p->owner_kind, "DaemonSet") != 0 ||
        !cli_name_valid(p->owner_name, CLI_NAME_MAX, 1) || p->k->meta.owner_uid == NULL) {
        char owner[300];
        cli_sanitize(owner, sizeof(owner), p->owner_kind != NULL ? p->owner_kind : "",
                     p->owner_kind != NULL ? strlen(p->owner_kind) : 0);
        errorf("%s is not in an OTA DaemonSet: %s%s", what,
               p->owner_kind != NULL ? "its controller is a " : "it has no controller",
               owner);
        return CLI_EXIT_NOT_OTA;
    }
    snprintf(t->ds_name, sizeof(t->ds_name), "%s", p->owner_name);
    snprintf(t->ds_uid, sizeof(t->ds_uid), "%s", p->k->meta.owner_uid);
    snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/daemonsets/%s", a->ns, t->ds_name);
    status = call(a, "GET", path, NULL, NULL, &r);
    if (status == 403 && p->k->u.pod.need_upgrade.present) {
        /* An identity that may not read DaemonSets (a node's, in a real
         * cluster): PodNeedUpgrade is written on OTA pods only. */
        reply_free(&r);
        return 0;
    }
    if (status == 404) {
        errorf("%s is not in an OTA DaemonSet: its DaemonSet %s is gone", what, t->ds_name);
        reply_free(&r);
        return CLI_EXIT_NOT_OTA;
    }
    if (status != 200) {
        rc = fail_call(a, "its DaemonSet", &r);
        reply_free(&r);
        return rc;
    }
    rc = decode_one(&r, "its DaemonSet", &tree);
    reply_free(&r);
    if (rc != 0)
        return rc;
    kobj *ds = kobj_decode(KOBJ_DAEMONSET, tree);
    yajl_tree_free(tree);
    int ota = ds != NULL && ds->u.ds.ota && strcmp(ds->meta.uid, t->ds_uid) == 0;
    kobj_free(ds);
    if (!ota) {
        errorf("%s is not in an OTA DaemonSet: DaemonSet %s is not annotated %s: %s", what,
               t->ds_name, OTA_ANN_UPDATE_STRATEGY, OTA_STRATEGY_OTA);
        return CLI_EXIT_NOT_OTA;
    }
    return 0;
}

static const char *node_of(const target *t)
{
    return t->pod->k->u.pod.node_name != NULL ? t->pod->k->u.pod.node_name : "<no node>";
}

/* The target hash as a C string ("" when unknown). */
static const char *target_hash(const target *t, char *buf, size_t size)
{
    sv h = cli_pod_target(t->pod);
    char raw[CLI_NAME_MAX + 1];
    snprintf(raw, sizeof(raw), "%.*s", SV_ARG(h));
    return cli_sanitize(buf, size, raw, strlen(raw));
}

/* ---- list ---- */

typedef struct list_ctx {
    kobj **ds;
    size_t n_ds, cap_ds;
    kobj **revs;
    size_t n_revs, cap_revs;
    cli_pod **pods;
    size_t n_pods, cap_pods;
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
    if (ds != NULL && !ds->u.ds.ota) {
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
    cli_pod *p = cli_pod_decode(item);
    if (p != NULL && ota_ds(l, p->k->meta.owner_uid) == NULL) {
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
static void whoami_node(app *a, char *node, size_t size)
{
    node[0] = '\0';
    reply r = {0};
    static const char body[] =
        "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}";
    long status = call(a, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                       "application/json", body, &r);
    if (status == 200 || status == 201) {
        char err[64];
        yajl_val tree = parse(&r, err, sizeof(err));
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
    reply_free(&r);
}

static int cmd_list(app *a)
{
    list_ctx l = {0};
    char node[CLI_NAME_MAX + 1] = "";
    if (a->args.node != NULL)
        snprintf(node, sizeof(node), "%s", a->args.node);
    else
        whoami_node(a, node, sizeof(node));
    char scope[128] = "";
    if (!a->args.all_namespaces)
        snprintf(scope, sizeof(scope), "/namespaces/%s", a->ns);
    char ds_path[200], rev_path[200], pod_path[200];
    snprintf(ds_path, sizeof(ds_path), "/apis/apps/v1%s/daemonsets", scope);
    snprintf(rev_path, sizeof(rev_path), "/apis/apps/v1%s/controllerrevisions", scope);
    snprintf(pod_path, sizeof(pod_path), "/api/v1%s/pods", scope);
    strbuf q = {0};
    if (node[0] != '\0') {
        strbuf_printf(&q, "fieldSelector=");
        char sel[CLI_NAME_MAX + 32];
        snprintf(sel, sizeof(sel), "spec.nodeName=%s", node);
        cli_query_escape(&q, sel);
    }
    int rc = q.failed ? CLI_EXIT_ERROR : list_all(a, "listing DaemonSets", ds_path, "", on_ds, &l);
    if (rc == 0 && l.n_ds > 0)
        rc = list_all(a, "listing ControllerRevisions", rev_path, "", on_rev, &l);
    if (rc == 0 && l.n_ds > 0)
        rc = list_all(a, "listing pods", pod_path, q.data != NULL ? q.data : "", on_pod, &l);
    strbuf_free(&q);
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
        for (size_t i = 0; rc == 0 && i < l.n_pods; i++) {
            const kobj *ds = ota_ds(&l, l.pods[i]->k->meta.owner_uid);
            if (cli_row_of(l.pods[i], ds->meta.name, ds->meta.uid, revs, l.n_revs, now, rows[i]) !=
                0)
                rc = CLI_EXIT_ERROR;
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
            put(&out, stdout);
        }
        for (size_t i = 0; rows != NULL && i < l.n_pods; i++)
            cli_row_free(rows[i]);
        free(rows);
        free(cells);
        free(revs);
        if (rc != 0)
            errorf("out of memory");
    }
    for (size_t i = 0; i < l.n_ds; i++)
        kobj_free(l.ds[i]);
    for (size_t i = 0; i < l.n_revs; i++)
        kobj_free(l.revs[i]);
    for (size_t i = 0; i < l.n_pods; i++)
        cli_pod_free(l.pods[i]);
    free(l.ds);
    free(l.revs);
    free(l.pods);
    return rc;
}

/* The pod named on the command line, its state and target hash: what pull
 * and upgrade decide from.  On failure t is freed and the exit code is
 * returned. */
static int load_decidable(app *a, target *t, ota_state *s, char *hash, size_t size)
{
    int rc = load_target(a, a->args.pod, t);
    if (rc != 0) {
        target_free(t);
        return rc;
    }
    *s = cli_pod_state(t->pod);
    target_hash(t, hash, size);
    return 0;
}

static int no_upgrade(const app *a)
{
    errorf("pod %s/%s needs no upgrade: PodNeedUpgrade is not True (state Current)", a->ns,
           a->args.pod);
    return CLI_EXIT_NO_UPGRADE;
}

/* ---- pull ---- */

static int cmd_pull(app *a)
{
    for (int attempt = 1;; attempt++) {
        target t;
        ota_state s;
        char hash[CLI_NAME_MAX + 1];
        int rc = load_decidable(a, &t, &s, hash, sizeof(hash));
        if (rc != 0)
            return rc;
        switch (cli_pull_decide(s)) {
        case CLI_PULL_NO_UPGRADE:
            target_free(&t);
            return no_upgrade(a);
        case CLI_PULL_ALREADY_PULLING:
            printf("pod %s/%s: a pre-pull of revision %s is already running on %s.\n"
                   "Follow it:   kubectl ota status %s -n %s --watch\n",
                   a->ns, a->args.pod, hash, node_of(&t), a->args.pod, a->ns);
            target_free(&t);
            return CLI_EXIT_OK;
        case CLI_PULL_ALREADY_READY:
            printf("pod %s/%s: the images of revision %s are already pre-pulled on %s (Ready).\n"
                   "Upgrade:     kubectl ota upgrade %s -n %s --wait\n",
                   a->ns, a->args.pod, hash, node_of(&t), a->args.pod, a->ns);
            target_free(&t);
            return CLI_EXIT_OK;
        case CLI_PULL_WRITE:
            break;
        }
        /* The write YurtHub's imagepull makes (PodImageReady False, no
         * reason, message "controllerrevision: H"), as a strategic merge
         * by condition type that leaves the kubelet's conditions alone, on
         * the resourceVersion we decided from (docs/DECISIONS.md,
         * "kubectl ota"). */
        char now[40], message[CLI_NAME_MAX + 32];
        clock_rfc3339(now, sizeof(now));
        snprintf(message, sizeof(message), "%s%s", OTA_MSG_REVISION_PREFIX, hash);
        json_writer w;
        json_writer_init(&w, NULL);
        json_map_open(&w, NULL);
        json_map_open(&w, "metadata");
        json_kv_str(&w, "resourceVersion",
                    t.pod->resource_version != NULL ? t.pod->resource_version : "");
        json_map_close(&w);
        json_map_open(&w, "status");
        json_array_open(&w, "conditions");
        json_map_open(&w, NULL);
        json_kv_str(&w, "type", OTA_COND_IMAGE_READY);
        json_kv_str(&w, "status", "False");
        json_kv_str(&w, "reason", ""); /* Go omits an empty reason: none */
        json_kv_str(&w, "message", message);
        json_kv_str(&w, "lastTransitionTime", now);
        json_map_close(&w);
        json_array_close(&w);
        json_map_close(&w);
        json_map_close(&w);
        char *body = json_writer_take(&w);
        if (body == NULL) {
            target_free(&t);
            errorf("out of memory");
            return CLI_EXIT_ERROR;
        }
        char path[512];
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", a->ns, a->args.pod);
        reply r = {0};
        long status =
            call(a, "PATCH", path, "application/strategic-merge-patch+json", body, &r);
        free(body);
        if (status == 409 && attempt < CLI_WRITE_ATTEMPTS) {
            /* the pod changed since we read it: read again, decide again */
            reply_free(&r);
            target_free(&t);
            continue;
        }
        if (status == 404) {
            errorf("pod \"%s\" not found in namespace \"%s\"", a->args.pod, a->ns);
            rc = CLI_EXIT_NOT_FOUND;
        } else if (status != 200) {
            char what[400];
            snprintf(what, sizeof(what), "requesting the pre-pull of pod %s/%s", a->ns,
                     a->args.pod);
            rc = fail_call(a, what, &r);
        } else {
            strbuf out = {0};
            cli_say_pulled(&out, a->ns, a->args.pod, node_of(&t), hash);
            put(&out, stdout);
        }
        reply_free(&r);
        target_free(&t);
        return rc;
    }
}

/* ---- status ---- */

typedef struct pull_status {
    char job[CLI_NAME_MAX + 1];      /* "" when there is none */
    char job_state[64];              /* running, complete, failed */
    char job_why[CLI_MESSAGE_MAX];   /* a failed Job's reason and message */
    char request_time[40];           /* the request the Job serves */
    char kubelet[CLI_MESSAGE_MAX];   /* the kubelet's latest word on the Job's pod */
} pull_status;

typedef struct newest {
    yajl_val tree;  /* the page the newest item is in, kept */
    yajl_val item;
    char created[40];
} newest;

/* Keeps the newest item of a list by creationTimestamp (RFC 3339 compares
 * as text). */
static int on_newest(void *data, yajl_val item)
{
    newest *n = data;
    const char *c = field_str(item, "metadata", "creationTimestamp");
    if (c != NULL && strlen(c) < sizeof(n->created) && strcmp(c, n->created) >= 0) {
        snprintf(n->created, sizeof(n->created), "%s", c);
        n->item = item;
    }
    return 0;
}

/* Reads one page of a list into a tree the caller frees; the newest item
 * (by creation) or NULL. */
static int newest_of(app *a, const char *what, const char *path, const char *query, newest *n)
{
    memset(n, 0, sizeof(*n));
    strbuf url = {0};
    strbuf_printf(&url, "%s?limit=%d&%s", path, CLI_PAGE, query);
    reply r = {0};
    long status = url.failed ? 0 : call(a, "GET", url.data, NULL, NULL, &r);
    strbuf_free(&url);
    if (status != 200) {
        int rc = fail_call(a, what, &r);
        reply_free(&r);
        return rc;
    }
    int rc = decode_one(&r, what, &n->tree);
    reply_free(&r);
    if (rc != 0)
        return rc;
    yajl_val items = field(n->tree, "items", NULL);
    for (size_t i = 0; YAJL_IS_ARRAY(items) && i < items->u.array.len; i++)
        on_newest(n, items->u.array.values[i]);
    return 0;
}

static const char *sel_value(strbuf *q, const char *key, const char *value)
{
    char sel[600];
    snprintf(sel, sizeof(sel), "%s=%s", key, value);
    cli_query_escape(q, sel);
    return q->data;
}

/* The kubelet's latest Event on the Job's pod: "Reason: message". */
static int kubelet_word(app *a, const char *pod, char *out, size_t size)
{
    strbuf q = {0};
    strbuf_printf(&q, "fieldSelector=");
    sel_value(&q, "involvedObject.name", pod);
    char path[200];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", a->ns);
    strbuf url = {0};
    strbuf_printf(&url, "%s?limit=%d&%s", path, CLI_PAGE, q.data != NULL ? q.data : "");
    strbuf_free(&q);
    reply r = {0};
    long status = url.failed ? 0 : call(a, "GET", url.data, NULL, NULL, &r);
    strbuf_free(&url);
    if (status != 200) {
        reply_free(&r);
        return 0; /* Events are a help, not a need: say nothing */
    }
    char err[64];
    yajl_val tree = parse(&r, err, sizeof(err));
    reply_free(&r);
    yajl_val items = field(tree, "items", NULL);
    yajl_val best = cli_latest_kubelet_event(items);
    if (best != NULL) {
        const char *reason = field_str(best, "reason", NULL), *msg = field_str(best, "message", NULL);
        char raw[CLI_MESSAGE_MAX];
        snprintf(raw, sizeof(raw), "%s: %s", reason != NULL ? reason : "",
                 msg != NULL ? msg : "");
        cli_sanitize(out, size, raw, strlen(raw));
    }
    if (tree != NULL)
        yajl_tree_free(tree);
    return 0;
}

static int read_pull_status(app *a, const target *t, pull_status *ps)
{
    memset(ps, 0, sizeof(*ps));
    strbuf q = {0};
    strbuf_printf(&q, "labelSelector=");
    sel_value(&q, OTA_LABEL_POD_UID, t->pod->k->meta.uid);
    char path[200];
    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/%s/jobs", a->ns);
    newest job = {0};
    int rc = q.failed ? CLI_EXIT_ERROR
                      : newest_of(a, "listing pre-pull Jobs", path, q.data, &job);
    strbuf_free(&q);
    if (rc != 0 || job.item == NULL) {
        if (job.tree != NULL)
            yajl_tree_free(job.tree);
        return rc;
    }
    kobj *j = kobj_decode(KOBJ_JOB, job.item);
    if (j != NULL) {
        cli_sanitize(ps->job, sizeof(ps->job), j->meta.name, strlen(j->meta.name));
        snprintf(ps->job_state, sizeof(ps->job_state), "%s",
                 j->u.job.complete ? "complete" : j->u.job.failed ? "failed" : "running");
        if (j->u.job.failed) {
            char raw[CLI_MESSAGE_MAX];
            snprintf(raw, sizeof(raw), "%s: %s",
                     j->u.job.failed_reason != NULL ? j->u.job.failed_reason : "",
                     j->u.job.failed_message != NULL ? j->u.job.failed_message : "");
            cli_sanitize(ps->job_why, sizeof(ps->job_why), raw, strlen(raw));
        }
        if (j->u.job.request_time != NULL)
            cli_sanitize(ps->request_time, sizeof(ps->request_time), j->u.job.request_time,
                         strlen(j->u.job.request_time));
    }
    kobj_free(j);
    yajl_tree_free(job.tree);
    if (ps->job[0] == '\0' || !cli_name_valid(ps->job, CLI_NAME_MAX, 1))
        return 0;
    /* the Job's pod: its waiting reason, else the kubelet's latest Event */
    strbuf q2 = {0};
    strbuf_printf(&q2, "labelSelector=");
    sel_value(&q2, "batch.kubernetes.io/job-name", ps->job);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", a->ns);
    newest jp = {0};
    rc = q2.failed ? CLI_EXIT_ERROR : newest_of(a, "listing the Job's pods", path, q2.data, &jp);
    strbuf_free(&q2);
    if (rc == 0 && jp.item != NULL) {
        kobj *k = kobj_decode(KOBJ_JOB_POD, jp.item);
        if (k != NULL && k->u.job_pod.waiting_reason != NULL) {
            char raw[CLI_MESSAGE_MAX];
            snprintf(raw, sizeof(raw), "%s: %s", k->u.job_pod.waiting_reason,
                     k->u.job_pod.waiting_message != NULL ? k->u.job_pod.waiting_message : "");
            cli_sanitize(ps->kubelet, sizeof(ps->kubelet), raw, strlen(raw));
        } else if (k != NULL && cli_name_valid(k->meta.name, CLI_NAME_MAX, 1)) {
            rc = kubelet_word(a, k->meta.name, ps->kubelet, sizeof(ps->kubelet));
        }
        kobj_free(k);
    }
    if (jp.tree != NULL)
        yajl_tree_free(jp.tree);
    return rc;
}

/* "25s" since the request, or "took 12s" from request to outcome. */
static void elapsed(const target *t, const pull_status *ps, char *out, size_t size)
{
    const kobj_cond *ir = &t->pod->k->u.pod.image_ready;
    ota_state s = cli_pod_state(t->pod);
    const char *req = ps->request_time[0] != '\0' ? ps->request_time
                      : s == OTA_STATE_PULLING    ? ir->last_transition_time
                                                  : NULL;
    long long t0 = kobj_parse_time(req), t1 = 0;
    char age[32];
    if (t0 == 0) {
        snprintf(out, size, "-");
        return;
    }
    if (s == OTA_STATE_PULLING) {
        cli_age(age, sizeof(age), (long long)time(NULL) - t0);
        snprintf(out, size, "%s since the request", age);
        return;
    }
    if ((s == OTA_STATE_READY || s == OTA_STATE_FAILED) &&
        (t1 = kobj_parse_time(ir->last_transition_time)) != 0) {
        cli_age(age, sizeof(age), t1 - t0);
        snprintf(out, size, "took %s", age);
        return;
    }
    snprintf(out, size, "-");
}

static void say_status(app *a, const target *t, const pull_status *ps, strbuf *b)
{
    char hash[CLI_NAME_MAX + 1], took[64];
    target_hash(t, hash, sizeof(hash));
    ota_state s = cli_pod_state(t->pod);
    const kobj_cond *ir = &t->pod->k->u.pod.image_ready;
    elapsed(t, ps, took, sizeof(took));
    strbuf_printf(b, "Pod:        %s/%s\n", a->ns, a->args.pod);
    strbuf_printf(b, "Node:       %s\n", node_of(t));
    strbuf_printf(b, "DaemonSet:  %s\n", t->ds_name);
    strbuf_printf(b, "State:      %s\n", ota_state_name(s));
    strbuf_printf(b, "Revision:   %s%s\n", hash, s == OTA_STATE_CURRENT ? " (running)" : " (target)");
    if (ir->present && s != OTA_STATE_CURRENT) {
        char msg[CLI_MESSAGE_MAX];
        const char *m = ir->message != NULL ? ir->message : "";
        cli_sanitize(msg, sizeof(msg), m, strlen(m));
        strbuf_printf(b, "Condition:  PodImageReady=%s %s \"%s\"\n",
                      ir->status != NULL ? ir->status : "",
                      ir->reason != NULL && ir->reason[0] != '\0' ? ir->reason : "(no reason)", msg);
    }
    strbuf_printf(b, "Elapsed:    %s\n", took);
    if (ps->job[0] != '\0')
        strbuf_printf(b, "Job:        %s (%s)%s%s\n", ps->job, ps->job_state,
                      ps->job_why[0] != '\0' ? " " : "", ps->job_why);
    else
        strbuf_printf(b, "Job:        none\n");
    if (ps->kubelet[0] != '\0')
        strbuf_printf(b, "Kubelet:    %s\n", ps->kubelet);
}

static int cmd_status(app *a)
{
    target t;
    pull_status ps;
    int rc = load_target(a, a->args.pod, &t);
    if (rc == 0)
        rc = read_pull_status(a, &t, &ps);
    if (rc != 0) {
        target_free(&t);
        return rc;
    }
    strbuf out = {0};
    say_status(a, &t, &ps, &out);
    put(&out, stdout);
    fflush(stdout);
    if (!a->args.watch) {
        target_free(&t);
        return CLI_EXIT_OK;
    }
    uint64_t start = clock_mono_ns(), deadline = start + a->args.timeout_ns;
    ota_state last = cli_pod_state(t.pod);
    char last_word[CLI_MESSAGE_MAX];
    snprintf(last_word, sizeof(last_word), "%s", ps.kubelet);
    for (;;) {
        rc = cli_watch_exit(cli_pod_state(t.pod));
        if (rc >= 0)
            break;
        if (clock_mono_ns() >= deadline) {
            errorf("timed out: pod %s/%s still Pulling after --timeout", a->ns, a->args.pod);
            rc = CLI_EXIT_TIMEOUT;
            break;
        }
        struct timespec ts = {0, (long)CLI_WATCH_POLL_NS};
        nanosleep(&ts, NULL);
        target_free(&t);
        rc = load_target(a, a->args.pod, &t);
        if (rc == 0)
            rc = read_pull_status(a, &t, &ps);
        if (rc != 0)
            break;
        ota_state s = cli_pod_state(t.pod);
        if (cli_watch_line(last, s, last_word, ps.kubelet)) {
            double secs = (double)(clock_mono_ns() - start) / 1e9;
            printf("[%6.1fs] %-14s %s\n", secs, ota_state_name(s), ps.kubelet);
            fflush(stdout);
            last = s;
            snprintf(last_word, sizeof(last_word), "%s", ps.kubelet);
        }
    }
    /* the watch ended on a state (not on an error or the timeout): say what next */
    if (t.pod != NULL &&
        (rc == CLI_EXIT_OK || rc == CLI_EXIT_PULL_FAILED || rc == CLI_EXIT_NO_UPGRADE)) {
        ota_state s = cli_pod_state(t.pod);
        char took[64];
        elapsed(&t, &ps, took, sizeof(took));
        if (s == OTA_STATE_READY)
            printf("Ready: the images are on %s (%s). Next: kubectl ota upgrade %s -n %s --wait\n",
                   node_of(&t), took, a->args.pod, a->ns);
        else if (s == OTA_STATE_FAILED) {
            const char *m = cli_failure_reason(t.pod->k->u.pod.image_ready.message, ps.job_why,
                                               ps.kubelet);
            char why[CLI_MESSAGE_MAX];
            cli_sanitize(why, sizeof(why), m, strlen(m));
            printf("Failed: %s\nRetry with: kubectl ota pull %s -n %s\n", why, a->args.pod, a->ns);
        }
        else if (s == OTA_STATE_PENDING_UPGRADE)
            printf("No pre-pull is running (a newer revision drops an older request).\n"
                   "Ask for one: kubectl ota pull %s -n %s\n", a->args.pod, a->ns);
        else
            printf("The pod needs no upgrade (Current).\n");
    }
    target_free(&t);
    return rc;
}

/* ---- upgrade ---- */

typedef struct find_ctx {
    const char *node, *ds_uid, *old_uid;
    char name[CLI_NAME_MAX + 1];
    int found;
} find_ctx;

static int on_candidate(void *data, yajl_val item)
{
    find_ctx *f = data;
    if (f->found)
        return 0;
    cli_pod *p = cli_pod_decode(item);
    if (p != NULL && cli_is_replacement(p, f->ds_uid, f->node, f->old_uid)) {
        f->found = 1;
        cli_sanitize(f->name, sizeof(f->name), p->k->meta.name, strlen(p->k->meta.name));
    }
    cli_pod_free(p);
    return 0;
}

/* Polls the node's pods until the DaemonSet's replacement of old_uid is
 * Ready.  0 (name in f->name), or the exit code after printing why. */
static int wait_replacement(app *a, find_ctx *f, uint64_t deadline)
{
    char path[200];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", a->ns);
    strbuf q = {0};
    strbuf_printf(&q, "fieldSelector=");
    sel_value(&q, "spec.nodeName", f->node);
    int rc = q.failed ? CLI_EXIT_ERROR : CLI_EXIT_TIMEOUT;
    while (rc == CLI_EXIT_TIMEOUT && clock_mono_ns() < deadline) {
        int lrc = list_all(a, "waiting for the replacement pod", path, q.data, on_candidate, f);
        if (lrc != 0)
            rc = lrc;
        else if (f->found)
            rc = 0;
        else {
            struct timespec ts = {0, (long)CLI_WAIT_POLL_NS};
            nanosleep(&ts, NULL);
        }
    }
    strbuf_free(&q);
    return rc;
}

static int cmd_upgrade(app *a)
{
    for (int attempt = 1;; attempt++) {
        target t;
        ota_state s;
        char hash[CLI_NAME_MAX + 1];
        int rc = load_decidable(a, &t, &s, hash, sizeof(hash));
        if (rc != 0)
            return rc;
        switch (cli_upgrade_decide(s, a->args.force)) {
        case CLI_UPGRADE_NO_UPGRADE:
            target_free(&t);
            return no_upgrade(a);
        case CLI_UPGRADE_NOT_READY: {
            strbuf out = {0};
            strbuf_printf(&out, "error: ");
            cli_say_not_ready(&out, a->ns, a->args.pod, node_of(&t), hash, ota_state_name(s));
            put(&out, stderr);
            target_free(&t);
            return CLI_EXIT_NOT_READY;
        }
        case CLI_UPGRADE_DELETE:
            break;
        }
        if (s != OTA_STATE_READY && attempt == 1)
            fprintf(stderr,
                    "warning: --force: the images of revision %s are not pre-pulled on %s "
                    "(state %s); the pod is down until its replacement has pulled them\n",
                    hash, node_of(&t), ota_state_name(s));
        /* The pod we decided about, not a replacement of the same name,
         * and in the state we decided from. */
        json_writer w;
        json_writer_init(&w, NULL);
        json_map_open(&w, NULL);
        json_kv_str(&w, "apiVersion", "v1");
        json_kv_str(&w, "kind", "DeleteOptions");
        json_map_open(&w, "preconditions");
        json_kv_str(&w, "uid", t.pod->k->meta.uid);
        if (t.pod->resource_version != NULL)
            json_kv_str(&w, "resourceVersion", t.pod->resource_version);
        json_map_close(&w);
        json_map_close(&w);
        char *body = json_writer_take(&w);
        if (body == NULL) {
            target_free(&t);
            errorf("out of memory");
            return CLI_EXIT_ERROR;
        }
        char path[512];
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", a->ns, a->args.pod);
        uint64_t t_delete = clock_mono_ns();
        reply r = {0};
        long status = call(a, "DELETE", path, "application/json", body, &r);
        free(body);
        if (status == 409 && attempt < CLI_WRITE_ATTEMPTS) {
            reply_free(&r);
            target_free(&t);
            continue;
        }
        if (status == 404) {
            errorf("pod \"%s\" not found in namespace \"%s\" (deleted meanwhile?)", a->args.pod,
                   a->ns);
            rc = CLI_EXIT_NOT_FOUND;
        } else if (status != 200 && status != 202) {
            char what[400];
            snprintf(what, sizeof(what), "deleting pod %s/%s", a->ns, a->args.pod);
            rc = fail_call(a, what, &r);
        }
        reply_free(&r);
        if (rc != 0) {
            target_free(&t);
            return rc;
        }
        printf("pod %s/%s deleted: its DaemonSet %s recreates it on %s at revision %s.\n", a->ns,
               a->args.pod, t.ds_name, node_of(&t), hash);
        if (!a->args.wait) {
            printf("Follow it:   kubectl get pods -n %s --field-selector spec.nodeName=%s -w\n",
                   a->ns, node_of(&t));
            target_free(&t);
            return CLI_EXIT_OK;
        }
        fflush(stdout);
        find_ctx f = {node_of(&t), t.ds_uid, t.pod->k->meta.uid, "", 0};
        rc = wait_replacement(a, &f, t_delete + a->args.timeout_ns);
        if (rc == 0) {
            double secs = (double)(clock_mono_ns() - t_delete) / 1e9;
            printf("pod %s/%s is Ready on %s.\nDowntime: %.1fs (from the delete to the "
                   "replacement Ready)\n",
                   a->ns, f.name, node_of(&t), secs);
        } else if (rc == CLI_EXIT_TIMEOUT) {
            errorf("timed out: no Ready replacement of pod %s/%s on %s within --timeout", a->ns,
                   a->args.pod, node_of(&t));
        }
        target_free(&t);
        return rc;
    }
}

/* ---- configuration ---- */

/* --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else in-cluster:
 * kubectl's order. */
static int load_config(app *a)
{
    char err[600], home_config[4096];
    const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
    int rc;
    if (a->args.kubeconfig != NULL || (env != NULL && env[0] != '\0')) {
        rc = kube_config_load(&a->cfg, a->args.kubeconfig, env, a->args.context, err, sizeof(err));
    } else {
        snprintf(home_config, sizeof(home_config), "%s/.kube/config", home != NULL ? home : "");
        FILE *f = home != NULL ? fopen(home_config, "r") : NULL;
        if (f != NULL) {
            fclose(f);
            rc = kube_config_load(&a->cfg, home_config, NULL, a->args.context, err, sizeof(err));
        } else {
            rc = kube_config_load_incluster(&a->cfg, KUBE_SA_DIR, err, sizeof(err));
            if (rc != 0)
                snprintf(err, sizeof(err),
                         "no configuration: pass --kubeconfig, set KUBECONFIG, or create "
                         "~/.kube/config");
        }
    }
    if (rc != 0) {
        errorf("%s", err);
        return CLI_EXIT_ERROR;
    }
    a->ns = a->args.namespace != NULL         ? a->args.namespace
            : a->cfg.namespace != NULL &&
                    cli_name_valid(a->cfg.namespace, CLI_NAMESPACE_MAX, 0)
                ? a->cfg.namespace
                : "default";
    return 0;
}

int main(int argc, char **argv)
{
    static app a;
    char err[512];
    if (cli_args_parse(argc, argv, &a.args, err, sizeof(err)) != 0) {
        errorf("%s", err);
        fprintf(stderr, "See 'kubectl ota --help' for usage.\n");
        return CLI_EXIT_USAGE;
    }
    if (a.args.command == CLI_CMD_HELP) {
        fputs(cli_usage(), stdout);
        return CLI_EXIT_OK;
    }
    if (a.args.command == CLI_CMD_VERSION) {
        printf("kubectl-ota %s (commit %s)\n", OTA_VERSION, OTA_COMMIT);
        return CLI_EXIT_OK;
    }
    log_set_level(LOG_ERROR); /* the client's retries are not the user's business */
    int rc = load_config(&a);
    if (rc != 0)
        return rc;
    a.client = kube_client_new(&a.cfg, 50, 100, err, sizeof(err));
    if (a.client == NULL) {
        errorf("%s", err);
        kube_config_free(&a.cfg);
        return CLI_EXIT_ERROR;
    }
    switch (a.args.command) {
    case CLI_CMD_LIST:
        rc = cmd_list(&a);
        break;
    case CLI_CMD_PULL:
        rc = cmd_pull(&a);
        break;
    case CLI_CMD_STATUS:
        rc = cmd_status(&a);
        break;
    case CLI_CMD_UPGRADE:
        rc = cmd_upgrade(&a);
        break;
    default:
        rc = CLI_EXIT_USAGE;
        break;
    }
    kube_client_free(a.client);
    kube_config_free(&a.cfg);
    return rc;
}

/*
 * cmd_upgrade.c - `kubectl ota upgrade`: delete a pod whose images are
 * pre-pulled, so its DaemonSet recreates it at the target revision; with
 * --wait, until the replacement is Ready.
 */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "format.h"
#include "kapi.h"
#include "target.h"

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
static int wait_replacement(cli_app *a, find_ctx *f, uint64_t deadline)
{
    char *path = cli_path(KAPI_PODS, a->ns, NULL, NULL);
    strbuf q = {0};
    int rc = path == NULL ||
                     kapi_selector(&q, KAPI_FIELD_SELECTOR,
                                   (const kapi_requirement[]){{"spec.nodeName", f->node},
                                                              {NULL, NULL}}) != 0 ||
                     q.failed
                 ? CLI_EXIT_ERROR
                 : CLI_EXIT_TIMEOUT;
    while (rc == CLI_EXIT_TIMEOUT && clock_mono_ns() < deadline) {
        int lrc = cli_list_all(a, "waiting for the replacement pod", path, q.data, on_candidate, f);
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
    free(path);
    return rc;
}

/* --force on a pod the identity may not read (a node's credentials on
 * another node's pod): the delete, as a dry run, lets the apiserver say
 * whether this identity may delete it (NodeRestriction decides from the
 * stored pod) without deleting anything unread.  0 when it may (the pod is
 * to be read again), else the exit code after printing why. */
static int may_delete(cli_app *a)
{
    char *path = cli_path(KAPI_PODS, a->ns, a->args.pod, NULL);
    strbuf url = {0};
    strbuf_printf(&url, "%s?dryRun=All", path != NULL ? path : "");
    kube_reply r = {0};
    long status = path != NULL && !url.failed
                      ? kube_sync_call(a->client, "DELETE", url.data, NULL, NULL, &r)
                      : 0;
    int rc = 0;
    if (status == 404) {
        cli_errorf("pod \"%s\" not found in namespace \"%s\"", a->args.pod, a->ns);
        rc = CLI_EXIT_NOT_FOUND;
    } else if (status != 200 && status != 202) {
        char what[400];
        snprintf(what, sizeof(what), "deleting pod %s/%s", a->ns, a->args.pod);
        rc = cli_fail_pod_call(a, what, a->args.pod, &r);
    }
    kube_reply_free(&r);
    strbuf_free(&url);
    free(path);
    return rc;
}

int cli_cmd_upgrade(cli_app *a)
{
    int probed = 0;
    for (int attempt = 1;; attempt++) {
        cli_target t;
        ota_state s;
        char hash[CLI_NAME_MAX + 1];
        int rc = cli_target_decidable(a, &t, &s, hash, sizeof(hash), a->args.force && !probed);
        if (rc == CLI_EXIT_DENIED && t.pod_forbidden) {
            probed = 1;
            if ((rc = may_delete(a)) == 0 && attempt < CLI_WRITE_ATTEMPTS)
                continue; /* it may: read it again, and say why if that fails */
        }
        if (rc != 0)
            return rc;
        switch (cli_upgrade_decide(s, a->args.force)) {
        case CLI_UPGRADE_NO_UPGRADE:
            cli_target_free(&t);
            return cli_no_upgrade(a);
        case CLI_UPGRADE_NOT_READY: {
            strbuf out = {0};
            strbuf_printf(&out, "error: ");
            cli_say_not_ready(&out, a->ns, a->args.pod, cli_target_node(&t), hash, ota_state_name(s));
            cli_put(&out, stderr);
            cli_target_free(&t);
            return CLI_EXIT_NOT_READY;
        }
        case CLI_UPGRADE_DELETE:
            break;
        }
        if (s != OTA_STATE_READY && attempt == 1)
            fprintf(stderr,
                    "warning: --force: the images of revision %s are not pre-pulled on %s "
                    "(state %s); the pod is down until its replacement has pulled them\n",
                    hash, cli_target_node(&t), ota_state_name(s));
        /* The pod we decided about, not a replacement of the same name,
         * and in the state we decided from. */
        char *body = kapi_delete_options(t.pod->k->meta.uid, t.pod->resource_version);
        if (body == NULL) {
            cli_target_free(&t);
            cli_errorf("out of memory");
            return CLI_EXIT_ERROR;
        }
        char *path = cli_path(KAPI_PODS, a->ns, a->args.pod, NULL);
        uint64_t t_delete = clock_mono_ns();
        kube_reply r = {0};
        long status =
            path != NULL ? kube_sync_call(a->client, "DELETE", path, KAPI_CT_JSON, body, &r) : 0;
        free(path);
        free(body);
        if (status == 409 && attempt < CLI_WRITE_ATTEMPTS) {
            kube_reply_free(&r);
            cli_target_free(&t);
            continue;
        }
        if (status == 404) {
            cli_errorf("pod \"%s\" not found in namespace \"%s\" (deleted meanwhile?)", a->args.pod,
                   a->ns);
            rc = CLI_EXIT_NOT_FOUND;
        } else if (status != 200 && status != 202) {
            char what[400];
            snprintf(what, sizeof(what), "deleting pod %s/%s", a->ns, a->args.pod);
            rc = cli_fail_pod_call(a, what, a->args.pod, &r);
        }
        kube_reply_free(&r);
        if (rc != 0) {
            cli_target_free(&t);
            return rc;
        }
        printf("pod %s/%s deleted: its DaemonSet %s recreates it on %s at revision %s.\n", a->ns,
               a->args.pod, t.ds_name, cli_target_node(&t), hash);
        if (!a->args.wait) {
            printf("Follow it:   kubectl get pods -n %s --field-selector spec.nodeName=%s -w\n",
                   a->ns, cli_target_node(&t));
            cli_target_free(&t);
            return CLI_EXIT_OK;
        }
        fflush(stdout);
        find_ctx f = {cli_target_node(&t), t.ds_uid, t.pod->k->meta.uid, "", 0};
        rc = wait_replacement(a, &f, t_delete + a->args.timeout_ns);
        if (rc == 0) {
            double secs = (double)(clock_mono_ns() - t_delete) / 1e9;
            printf("pod %s/%s is Ready on %s.\nDowntime: %.1fs (from the delete to the "
                   "replacement Ready)\n",
                   a->ns, f.name, cli_target_node(&t), secs);
        } else if (rc == CLI_EXIT_TIMEOUT) {
            cli_errorf("timed out: no Ready replacement of pod %s/%s on %s within --timeout", a->ns,
                   a->args.pod, cli_target_node(&t));
        }
        cli_target_free(&t);
        return rc;
    }
}

/*
 * cmd_pull.c - `kubectl ota pull`: ask for the pre-pull of a pod's target
 * revision, with the status write YurtHub's imagepull makes.
 */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "format.h"
#include "kapi.h"
#include "ota_names.h"
#include "target.h"

int cli_cmd_pull(cli_app *a)
{
    for (int attempt = 1;; attempt++) {
        cli_target t;
        ota_state s;
        char hash[CLI_NAME_MAX + 1];
        int rc = cli_target_decidable(a, &t, &s, hash, sizeof(hash), 0);
        if (rc != 0)
            return rc;
        switch (cli_pull_decide(s)) {
        case CLI_PULL_NO_UPGRADE:
            cli_target_free(&t);
            return cli_no_upgrade(a);
        case CLI_PULL_ALREADY_PULLING:
            printf("pod %s/%s: a pre-pull of revision %s is already running on %s.\n"
                   "Follow it:   kubectl ota status %s -n %s --watch\n",
                   a->ns, a->args.pod, hash, cli_target_node(&t), a->args.pod, a->ns);
            cli_target_free(&t);
            return CLI_EXIT_OK;
        case CLI_PULL_ALREADY_READY:
            printf("pod %s/%s: the images of revision %s are already pre-pulled on %s (Ready).\n"
                   "Upgrade:     kubectl ota upgrade %s -n %s --wait\n",
                   a->ns, a->args.pod, hash, cli_target_node(&t), a->args.pod, a->ns);
            cli_target_free(&t);
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
        /* an empty reason, as Go leaves it: none */
        kapi_condition request = {OTA_COND_IMAGE_READY, "False", "", message, 0};
        char *body = kapi_conditions_patch(&request, 1, t.pod->resource_version, now);
        if (body == NULL) {
            cli_target_free(&t);
            cli_errorf("out of memory");
            return CLI_EXIT_ERROR;
        }
        char *path = cli_path(KAPI_PODS, a->ns, a->args.pod, "status");
        kube_reply r = {0};
        long status = path != NULL ? kube_sync_call(a->client, "PATCH", path,
                                                    KAPI_CT_STRATEGIC_MERGE, body, &r)
                                   : 0;
        free(path);
        free(body);
        if (status == 409 && attempt < CLI_WRITE_ATTEMPTS) {
            /* the pod changed since we read it: read again, decide again */
            kube_reply_free(&r);
            cli_target_free(&t);
            continue;
        }
        if (status == 404) {
            cli_errorf("pod \"%s\" not found in namespace \"%s\"", a->args.pod, a->ns);
            rc = CLI_EXIT_NOT_FOUND;
        } else if (status != 200) {
            char what[400];
            snprintf(what, sizeof(what), "requesting the pre-pull of pod %s/%s", a->ns,
                     a->args.pod);
            rc = cli_fail_pod_call(a, what, a->args.pod, &r);
        } else {
            strbuf out = {0};
            cli_say_pulled(&out, a->ns, a->args.pod, cli_target_node(&t), hash);
            cli_put(&out, stdout);
        }
        kube_reply_free(&r);
        cli_target_free(&t);
        return rc;
    }
}

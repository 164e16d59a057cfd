/*
 * cmd_status.c - `kubectl ota status`: a pod's state, its pre-pull Job,
 * the kubelet's latest word on it and the time taken; with --watch, each
 * change until the pull ends.
 */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "format.h"
#include "json.h"
#include "kapi.h"
#include "ota_names.h"
#include "target.h"

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
    const char *c = cli_field_str(item, "metadata", "creationTimestamp");
    if (c != NULL && strlen(c) < sizeof(n->created) && strcmp(c, n->created) >= 0) {
        snprintf(n->created, sizeof(n->created), "%s", c);
        n->item = item;
    }
    return 0;
}

/* GETs the first page of r's collection in the namespace selected by
 * key=value (a label or field selector); the status, 0 when no answer came. */
static long get_page(cli_app *a, kapi_resource r, kapi_selector_kind kind, const char *key,
                     const char *value, kube_reply *reply)
{
    memset(reply, 0, sizeof(*reply));
    char *path = cli_path(r, a->ns, NULL, NULL);
    strbuf q = {0}, url = {0};
    long status = 0;
    if (path != NULL &&
        kapi_selector(&q, kind, (const kapi_requirement[]){{key, value}, {NULL, NULL}}) == 0 &&
        !q.failed) {
        kube_pager p = {path, q.data, CLI_PAGE, 1, CLI_TOKEN_MAX, CLI_JSON_DEPTH};
        kube_sync_page_url(&url, &p, NULL);
        if (!url.failed)
            status = kube_sync_call(a->client, "GET", url.data, NULL, NULL, reply);
    }
    free(path);
    strbuf_free(&q);
    strbuf_free(&url);
    return status;
}

/* Reads one page of a list into a tree the caller frees; the newest item
 * (by creation) or NULL. */
static int newest_of(cli_app *a, const char *what, kapi_resource r, const char *label,
                     const char *value, newest *n)
{
    memset(n, 0, sizeof(*n));
    kube_reply reply;
    long status = get_page(a, r, KAPI_LABEL_SELECTOR, label, value, &reply);
    if (status != 200) {
        int rc = cli_fail_call(a, what, &reply);
        kube_reply_free(&reply);
        return rc;
    }
    int rc = cli_decode(&reply, what, &n->tree);
    kube_reply_free(&reply);
    if (rc != 0)
        return rc;
    yajl_val items = cli_field(n->tree, "items", NULL);
    for (size_t i = 0; YAJL_IS_ARRAY(items) && i < items->u.array.len; i++)
        on_newest(n, items->u.array.values[i]);
    return 0;
}

/* The kubelet's latest Event on the Job's pod: "Reason: message". */
static int kubelet_word(cli_app *a, const char *pod, char *out, size_t size)
{
    kube_reply r;
    long status = get_page(a, KAPI_EVENTS, KAPI_FIELD_SELECTOR, "involvedObject.name", pod, &r);
    if (status != 200) {
        kube_reply_free(&r);
        return 0; /* Events are a help, not a need: say nothing */
    }
    char err[64];
    yajl_val tree = json_parse_tree(r.body, r.len, CLI_JSON_DEPTH, err, sizeof(err));
    kube_reply_free(&r);
    yajl_val items = cli_field(tree, "items", NULL);
    yajl_val best = cli_latest_kubelet_event(items);
    if (best != NULL) {
        const char *reason = cli_field_str(best, "reason", NULL);
        const char *msg = cli_field_str(best, "message", NULL);
        char raw[CLI_MESSAGE_MAX];
        snprintf(raw, sizeof(raw), "%s: %s", reason != NULL ? reason : "",
                 msg != NULL ? msg : "");
        cli_sanitize(out, size, raw, strlen(raw));
    }
    if (tree != NULL)
        yajl_tree_free(tree);
    return 0;
}

static int read_pull_status(cli_app *a, const cli_target *t, pull_status *ps)
{
    memset(ps, 0, sizeof(*ps));
    newest job = {0};
    int rc = newest_of(a, "listing pre-pull Jobs", KAPI_JOBS, OTA_LABEL_POD_UID,
                       t->pod->k->meta.uid, &job);
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
    newest jp = {0};
    rc = newest_of(a, "listing the Job's pods", KAPI_PODS, "batch.kubernetes.io/job-name", ps->job,
                   &jp);
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
static void elapsed(const cli_target *t, const pull_status *ps, char *out, size_t size)
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

static void say_status(cli_app *a, const cli_target *t, const pull_status *ps, strbuf *b)
{
    char hash[CLI_NAME_MAX + 1], took[64];
    cli_target_hash(t, hash, sizeof(hash));
    ota_state s = cli_pod_state(t->pod);
    const kobj_cond *ir = &t->pod->k->u.pod.image_ready;
    elapsed(t, ps, took, sizeof(took));
    strbuf_printf(b, "Pod:        %s/%s\n", a->ns, a->args.pod);
    strbuf_printf(b, "Node:       %s\n", cli_target_node(t));
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

int cli_cmd_status(cli_app *a)
{
    cli_target t;
    pull_status ps;
    int rc = cli_target_load(a, a->args.pod, &t);
    if (rc == 0)
        rc = read_pull_status(a, &t, &ps);
    if (rc != 0) {
        cli_target_free(&t);
        return rc;
    }
    strbuf out = {0};
    say_status(a, &t, &ps, &out);
    cli_put(&out, stdout);
    fflush(stdout);
    if (!a->args.watch) {
        cli_target_free(&t);
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
            cli_errorf("timed out: pod %s/%s still Pulling after --timeout", a->ns, a->args.pod);
            rc = CLI_EXIT_TIMEOUT;
            break;
        }
        struct timespec ts = {0, (long)CLI_WATCH_POLL_NS};
        nanosleep(&ts, NULL);
        cli_target_free(&t);
        rc = cli_target_load(a, a->args.pod, &t);
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
                   cli_target_node(&t), took, a->args.pod, a->ns);
        else if (s == OTA_STATE_FAILED) {
            const char *m = cli_failure_reason(t.pod->k->u.pod.image_ready.message, ps.job_why,
                                               ps.kubelet);
            char why[CLI_MESSAGE_MAX];
            cli_sanitize(why, sizeof(why), m, strlen(m));
            strbuf next = {0};
            cli_say_failed_next(&next, a->ns, a->args.pod, t.ds_name, cli_failure_refusal(m));
            printf("Failed: %s\n%s", why, next.data != NULL ? next.data : "");
            strbuf_free(&next);
        }
        else if (s == OTA_STATE_PENDING_UPGRADE)
            printf("No pre-pull is running (a newer revision drops an older request).\n"
                   "Ask for one: kubectl ota pull %s -n %s\n", a->args.pod, a->ns);
        else
            printf("The pod needs no upgrade (Current).\n");
    }
    cli_target_free(&t);
    return rc;
}

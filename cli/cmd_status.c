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
    /* Reads the identity may not make (a node's may not read Jobs or
     * Events): tried once, not again while --watch polls. */
    int jobs_hidden, events_hidden;
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

/* The newest pre-pull Job of the pod, when the identity may list Jobs
 * (*hidden set on a 403: a node's may not).  0, or the exit code after
 * printing why. */
static int newest_job(cli_app *a, const cli_target *t, newest *n, int *hidden)
{
    memset(n, 0, sizeof(*n));
    if (*hidden)
        return 0;
    kube_reply reply;
    long status = get_page(a, KAPI_JOBS, KAPI_LABEL_SELECTOR, OTA_LABEL_POD_UID,
                           t->pod->k->meta.uid, &reply);
    int rc = 0;
    if (status == 403)
        *hidden = 1;
    else if (status != 200)
        rc = cli_fail_call(a, "listing pre-pull Jobs", &reply);
    else if ((rc = cli_decode(&reply, "listing pre-pull Jobs", &n->tree)) == 0) {
        yajl_val items = cli_field(n->tree, "items", NULL);
        for (size_t i = 0; YAJL_IS_ARRAY(items) && i < items->u.array.len; i++)
            on_newest(n, items->u.array.values[i]);
    }
    kube_reply_free(&reply);
    return rc;
}

/* The Job pods of one pod, read as a node may: its node's pods
 * (fieldSelector spec.nodeName) with the pod's uid label. */
typedef struct jobpods {
    cli_jobpod **items;
    size_t n;
} jobpods;

static int on_jobpod(void *data, yajl_val item)
{
    jobpods *j = data;
    if (j->n >= CLI_PAGE)
        return 0; /* one pod's Jobs: a retry each, never this many */
    cli_jobpod *jp = cli_jobpod_decode(item);
    if (jp != NULL)
        j->items[j->n++] = jp;
    return 0;
}

/* The newest Job pod of the target, copied out; 0, or the exit code after
 * printing why.  *out is NULL when there is none (or the pod has no node). */
static int newest_jobpod(cli_app *a, const cli_target *t, cli_jobpod **out)
{
    *out = NULL;
    const char *node = t->pod->k->u.pod.node_name;
    if (node == NULL || !cli_name_valid(node, CLI_NAME_MAX, 1))
        return 0;
    char *path = cli_path(KAPI_PODS, a->ns, NULL, NULL);
    strbuf q = {0};
    int rc = path == NULL ? CLI_EXIT_ERROR : 0;
    if (rc == 0 &&
        (kapi_selector(&q, KAPI_FIELD_SELECTOR,
                       (const kapi_requirement[]){{"spec.nodeName", node}, {NULL, NULL}}) != 0 ||
         (strbuf_printf(&q, "&"), kapi_selector(&q, KAPI_LABEL_SELECTOR,
                                                (const kapi_requirement[]){
                                                    {OTA_LABEL_POD_UID, t->pod->k->meta.uid},
                                                    {NULL, NULL}})) != 0 ||
         q.failed))
        rc = CLI_EXIT_ERROR;
    jobpods j = {calloc(CLI_PAGE, sizeof(cli_jobpod *)), 0};
    if (rc == 0 && j.items == NULL)
        rc = CLI_EXIT_ERROR;
    if (rc == 0)
        rc = cli_list_all(a, "listing the pre-pull Job's pods", path, q.data, on_jobpod, &j);
    const cli_jobpod *best = rc == 0 ? cli_jobpod_newest((const cli_jobpod *const *)j.items, j.n,
                                                         t->pod->k->meta.uid)
                                     : NULL;
    for (size_t i = 0; i < j.n; i++) {
        if (j.items[i] == best)
            *out = j.items[i];
        else
            cli_jobpod_free(j.items[i]);
    }
    free(j.items);
    strbuf_free(&q);
    free(path);
    return rc;
}

/* The kubelet's latest Event on the Job's pod: "Reason: message" (none,
 * and *hidden set, when the identity may not read Events: a node's may
 * not). */
static void kubelet_word(cli_app *a, const char *pod, char *out, size_t size, int *hidden)
{
    if (*hidden)
        return;
    kube_reply r;
    long status = get_page(a, KAPI_EVENTS, KAPI_FIELD_SELECTOR, "involvedObject.name", pod, &r);
    if (status != 200) {
        *hidden = status == 403;
        kube_reply_free(&r);
        return; /* Events are a help, not a need: say nothing */
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
}

static void copy_safe(char *out, size_t size, const char *s)
{
    if (s != NULL)
        cli_sanitize(out, size, s, strlen(s));
}

/* What the pre-pull is doing: the newest Job pod of the target (a node may
 * read it: it is bound to the node), and, when the identity may read them,
 * its Job (the Job's own state and failure) and the kubelet's Events. */
static int read_pull_status(cli_app *a, const cli_target *t, pull_status *ps)
{
    int jobs_hidden = ps->jobs_hidden, events_hidden = ps->events_hidden;
    memset(ps, 0, sizeof(*ps));
    ps->jobs_hidden = jobs_hidden;
    ps->events_hidden = events_hidden;
    cli_jobpod *jp = NULL;
    int rc = newest_jobpod(a, t, &jp);
    if (rc != 0)
        return rc;
    if (jp != NULL) {
        copy_safe(ps->job, sizeof(ps->job), jp->k->u.job_pod.job_name);
        snprintf(ps->job_state, sizeof(ps->job_state), "%s", cli_jobpod_state(jp));
        copy_safe(ps->request_time, sizeof(ps->request_time), jp->request_time);
    }
    newest job;
    rc = newest_job(a, t, &job, &ps->jobs_hidden);
    kobj *j = rc == 0 && job.item != NULL ? kobj_decode(KOBJ_JOB, job.item) : NULL;
    if (j != NULL) {
        /* the Job says it best (the newest Job is at least as new as the
         * newest Job pod): its name, state and why it failed */
        copy_safe(ps->job, sizeof(ps->job), j->meta.name);
        snprintf(ps->job_state, sizeof(ps->job_state), "%s",
                 j->u.job.complete ? "complete" : j->u.job.failed ? "failed" : "running");
        if (j->u.job.failed) {
            char raw[CLI_MESSAGE_MAX];
            snprintf(raw, sizeof(raw), "%s: %s",
                     j->u.job.failed_reason != NULL ? j->u.job.failed_reason : "",
                     j->u.job.failed_message != NULL ? j->u.job.failed_message : "");
            cli_sanitize(ps->job_why, sizeof(ps->job_why), raw, strlen(raw));
        }
        copy_safe(ps->request_time, sizeof(ps->request_time), j->u.job.request_time);
    }
    kobj_free(j);
    if (job.tree != NULL)
        yajl_tree_free(job.tree);
    if (ps->job[0] != '\0' && !cli_name_valid(ps->job, CLI_NAME_MAX, 1))
        ps->job[0] = '\0';
    /* the Job's pod (when it is this Job's): its waiting reason, else the
     * kubelet's latest Event */
    if (jp != NULL && (jp->k->u.job_pod.job_name == NULL ||
                       strcmp(jp->k->u.job_pod.job_name, ps->job) != 0)) {
        cli_jobpod_free(jp);
        jp = NULL;
    }
    if (rc == 0 && jp != NULL && jp->k->u.job_pod.waiting_reason != NULL) {
        char raw[CLI_MESSAGE_MAX];
        snprintf(raw, sizeof(raw), "%s: %s", jp->k->u.job_pod.waiting_reason,
                 jp->k->u.job_pod.waiting_message != NULL ? jp->k->u.job_pod.waiting_message : "");
        cli_sanitize(ps->kubelet, sizeof(ps->kubelet), raw, strlen(raw));
    } else if (rc == 0 && jp != NULL && cli_name_valid(jp->k->meta.name, CLI_NAME_MAX, 1)) {
        kubelet_word(a, jp->k->meta.name, ps->kubelet, sizeof(ps->kubelet), &ps->events_hidden);
    }
    cli_jobpod_free(jp);
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
    const char *hidden = cli_status_hidden(ps->jobs_hidden, ps->events_hidden);
    if (hidden != NULL)
        strbuf_printf(b, "Not shown:  %s\n", hidden);
}

int cli_cmd_status(cli_app *a)
{
    cli_target t;
    pull_status ps = {0};
    int rc = cli_target_load(a, a->args.pod, &t, 0);
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
        rc = cli_target_load(a, a->args.pod, &t, 0);
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

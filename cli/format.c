/*
 * format.c - see format.h.
 */
#include "format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kapi.h"

void cli_age(char *buf, size_t size, long long s)
{
    /* the steps of kubectl's `get` AGE column: precise while it matters,
     * coarser as the duration grows */
    long long m = s / 60, h = s / 3600, d = h / 24;
    if (s < -1)
        snprintf(buf, size, "<invalid>");
    else if (s < 0)
        snprintf(buf, size, "0s");
    else if (s < 120)
        snprintf(buf, size, "%llds", s);
    else if (m < 10)
        snprintf(buf, size, s % 60 != 0 ? "%lldm%llds" : "%lldm", m, s % 60);
    else if (m < 180)
        snprintf(buf, size, "%lldm", m);
    else if (h < 8)
        snprintf(buf, size, m % 60 != 0 ? "%lldh%lldm" : "%lldh", h, m % 60);
    else if (h < 48)
        snprintf(buf, size, "%lldh", h);
    else if (h < 24 * 8)
        snprintf(buf, size, h % 24 != 0 ? "%lldd%lldh" : "%lldd", d, h % 24);
    else if (h < 24 * 365 * 2)
        snprintf(buf, size, "%lldd", d);
    else if (h < 24 * 365 * 8)
        snprintf(buf, size, d % 365 != 0 ? "%lldy%lldd" : "%lldy", d / 365, d % 365);
    else
        snprintf(buf, size, "%lldy", d / 365);
}

char *cli_sanitize(char *out, size_t size, const char *s, size_t n)
{
    if (size == 0)
        return out;
    size_t keep = n;
    int cut = 0;
    if (n >= size) {
        /* room for "..." and the NUL; back up to a UTF-8 lead byte */
        keep = size >= 4 ? size - 4 : 0;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--;
        cut = size >= 4;
    }
    for (size_t i = 0; i < keep; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    if (cut) {
        memcpy(out + keep, "...", 3);
        keep += 3;
    }
    out[keep] = '\0';
    return out;
}

void cli_table_render(strbuf *out, const char *const *header, size_t ncols,
                      char *const *const *rows, size_t nrows)
{
    size_t width[16] = {0};
    if (ncols > sizeof(width) / sizeof(width[0]))
        ncols = sizeof(width) / sizeof(width[0]);
    for (size_t c = 0; c < ncols; c++) {
        width[c] = strlen(header[c]);
        for (size_t r = 0; r < nrows; r++) {
            size_t n = strlen(rows[r][c]);
            if (n > width[c])
                width[c] = n;
        }
    }
    for (size_t r = 0; r <= nrows; r++) {
        for (size_t c = 0; c < ncols; c++) {
            const char *cell = r == 0 ? header[c] : rows[r - 1][c];
            if (c + 1 == ncols)
                strbuf_printf(out, "%s\n", cell);
            else
                strbuf_printf(out, "%-*s   ", (int)width[c], cell);
        }
    }
}

char *cli_status_message(char *out, size_t size, long status, const char *body, size_t len)
{
    /* a message is never longer than the body it came in */
    char *msg = malloc(len + 1);
    if (msg != NULL && kapi_status_read(body, len, NULL, 0, msg, len + 1)) {
        cli_sanitize(out, size, msg, strlen(msg));
    } else {
        char head[201];
        cli_sanitize(head, sizeof(head), body != NULL ? body : "", body != NULL ? len : 0);
        snprintf(out, size, "HTTP %ld%s%s", status, head[0] != '\0' ? ": " : "", head);
    }
    free(msg);
    return out;
}

int cli_is_webhook_denial(const char *message)
{
    static const char prefix[] = "admission webhook \"";
    if (strncmp(message, prefix, sizeof(prefix) - 1) != 0)
        return 0;
    const char *end = strchr(message + sizeof(prefix) - 1, '"');
    return end != NULL && strncmp(end, "\" denied the request", 20) == 0;
}

/* Copies the name that starts at s and ends at the first end character
 * into who, made safe; 0 when there is none or it is empty. */
static int name_until(const char *s, char end, char *who, size_t size)
{
    const char *e = strchr(s, end);
    if (e == NULL || e == s)
        return 0;
    cli_sanitize(who, size, s, (size_t)(e - s));
    return 1;
}

cli_refusal cli_refusal_of(const char *message, char *who, size_t size)
{
    /* the apiserver's words (Kubernetes 1.32): the Node authorizer's reason,
     * appended to RBAC's "cannot get resource" sentence, and NodeRestriction's
     * admission errors */
    static const char node_read[] = "no relationship found between node '";
    static const char nr_delete[] = "\" can only delete pods with spec.nodeName set to itself";
    static const char nr_status[] =
        "\" can only update pod status for pods with spec.nodeName set to itself";
    static const char node_q[] = "node \"";
    static const char user_q[] = "User \"";
    const char *at;
    if ((at = strstr(message, node_read)) != NULL &&
        name_until(at + sizeof(node_read) - 1, '\'', who, size))
        return CLI_REFUSED_NODE_READ;
    const char *tails[] = {nr_delete, nr_status};
    for (int i = 0; i < 2; i++) {
        const char *tail = strstr(message, tails[i]);
        /* the node's name is the quoted word right before the tail */
        for (at = message; tail != NULL && (at = strstr(at, node_q)) != NULL && at < tail;
             at += sizeof(node_q) - 1) {
            const char *name = at + sizeof(node_q) - 1;
            if (strchr(name, '"') == tail && name_until(name, '"', who, size))
                return i == 0 ? CLI_REFUSED_NODE_DELETE : CLI_REFUSED_NODE_STATUS;
        }
    }
    if ((at = strstr(message, user_q)) != NULL && strstr(at, "\" cannot ") != NULL &&
        name_until(at + sizeof(user_q) - 1, '"', who, size))
        return CLI_REFUSED_RBAC;
    if (size > 0)
        who[0] = '\0';
    return CLI_REFUSED_OTHER;
}

cli_refusal cli_say_refusal(strbuf *b, const char *ns, const char *pod, const char *message)
{
    char who[CLI_CELL_MAX + 1];
    cli_refusal r = cli_refusal_of(message, who, sizeof(who));
    switch (r) {
    case CLI_REFUSED_NODE_READ:
        strbuf_printf(b,
                      "error: pod %s/%s is not on node %s, or does not exist: a node's "
                      "credentials may read only the pods that run on that node; use the "
                      "credentials of the pod's own node.\n",
                      ns, pod, who);
        break;
    case CLI_REFUSED_NODE_DELETE:
        strbuf_printf(b,
                      "error: node %s may not upgrade pod %s/%s: the pod runs on another node, "
                      "and the apiserver lets a node delete only the pods that run on it; ask "
                      "the user of the pod's node to upgrade it.\n",
                      who, ns, pod);
        break;
    case CLI_REFUSED_NODE_STATUS:
        strbuf_printf(b,
                      "error: node %s may not ask for the pre-pull of pod %s/%s: the pod runs "
                      "on another node, and the apiserver lets a node change only the status "
                      "of the pods that run on it; ask the user of the pod's node.\n",
                      who, ns, pod);
        break;
    case CLI_REFUSED_RBAC:
        strbuf_printf(b,
                      "error: %s may not read or change pod %s/%s: no RBAC rule grants it; a "
                      "node's user pre-pulls and upgrades with the node's own credentials "
                      "(system:node:<node>), anyone else needs a Role from the cluster's "
                      "admin.\n",
                      who, ns, pod);
        break;
    case CLI_REFUSED_OTHER:
        return r;
    }
    strbuf_printf(b, "The apiserver said: %s\n", message);
    return r;
}

const char *cli_status_hidden(int jobs_hidden, int events_hidden)
{
    if (jobs_hidden && events_hidden)
        return "the Job itself and the kubelet's Events: these credentials may not read them "
               "(a node's may read its pods: the Job's state above is its pod's)";
    if (jobs_hidden)
        return "the Job itself: these credentials may not read Jobs (the Job's state above is "
               "its pod's)";
    if (events_hidden)
        return "the kubelet's Events: these credentials may not read them";
    return NULL;
}

const char *cli_list_hidden_note(void)
{
    return "IMAGES " CLI_IMAGES_HIDDEN ": these credentials may not read DaemonSets or "
           "ControllerRevisions (a node's may read its pods); a revision's images show once its "
           "pre-pull Job's pod runs on the node (kubectl ota pull).";
}

const char *cli_usage(void)
{
    return "kubectl ota: pre-pull the new image of an OpenYurt OTA DaemonSet pod, then upgrade it\n"
           "\n"
           "Usage:\n"
           "  kubectl ota list [--node NODE] [-n NS | -A]\n"
           "      OTA pods: NAMESPACE (with -A), POD, NODE, DAEMONSET, STATE, TARGET REVISION,\n"
           "      IMAGES (the target revision's), AGE (of the state).  STATE ends \"(auto)\"\n"
           "      when the pre-pull is the DaemonSet's automatic one.  As a node identity\n"
           "      (system:node:NODE) the default is that node's pods, and IMAGES shows once\n"
           "      a pre-pull Job runs (a node may not read ControllerRevisions).\n"
           "  kubectl ota pull POD [-n NS]\n"
           "      Ask for the pre-pull of the pod's target revision (the status write YurtHub's\n"
           "      imagepull makes); the pod keeps running.\n"
           "  kubectl ota status POD [-n NS] [--watch [--timeout D]]\n"
           "      State, the pre-pull Job, the kubelet's latest word on it, time taken;\n"
           "      --watch (-w) follows until Ready or Failed.\n"
           "  kubectl ota upgrade POD [-n NS] [--force] [--wait [--timeout D]]\n"
           "      Delete the pod so that its DaemonSet recreates it at the target revision.\n"
           "      Refused unless the new image is pre-pulled (Ready), unless --force;\n"
           "      --wait waits for the replacement to be Ready and prints the downtime.\n"
           "\n"
           "States: Current, PendingUpgrade, Pulling, Ready, Failed.\n"
           "\n"
           "Flags:\n"
           "  --kubeconfig FILE       default: $KUBECONFIG (a colon-separated list), else\n"
           "                          ~/.kube/config, else the in-cluster configuration\n"
           "  --context NAME          a kubeconfig context other than the current one\n"
           "  -n, --namespace NS      default: the context's namespace, else \"default\"\n"
           "  -A, --all-namespaces    list: every namespace\n"
           "  --node NODE             list: only the pods on NODE\n"
           "  -w, --watch             status: follow until Ready or Failed\n"
           "  --wait                  upgrade: wait for the replacement to be Ready\n"
           "  --force                 upgrade: even when the new image is not pre-pulled\n"
           "  --timeout D             for --watch and --wait: 90s, 10m, 1h30m (default 10m)\n"
           "  --version               print version and commit (also: kubectl ota version)\n"
           "  -h, --help\n"
           "\n"
           "Exit codes:\n"
           "  0  done\n"
           "  1  error from the cluster or the configuration (message on stderr)\n"
           "  2  usage error\n"
           "  3  the pod does not exist\n"
           "  4  the pod is not in an OTA DaemonSet (apps.openyurt.io/update-strategy: OTA)\n"
           "  5  the pod needs no upgrade (PodNeedUpgrade is not True)\n"
           "  6  the apiserver refused: an admission webhook's denial (printed as is), or\n"
           "     these credentials may not touch the pod (another node's pod, no RBAC)\n"
           "  7  upgrade refused: the new image is not pre-pulled (pull first, or --force)\n"
           "  8  --timeout ran out\n"
           "  9  status --watch: the pre-pull failed, or its request was dropped by a newer\n"
           "     revision\n";
}

void cli_say_pulled(strbuf *b, const char *ns, const char *pod, const char *node,
                    const char *hash)
{
    strbuf_printf(b,
                  "pod %s/%s: pre-pull of revision %s requested.\n"
                  "Next: the ota-prepull controller starts a Job on %s that pulls the revision's "
                  "images while the pod keeps running.\n"
                  "When the images are there, the pod's state becomes Ready (PodImageReady True); "
                  "if the pull fails, Failed with the kubelet's reason.\n"
                  "Follow it:   kubectl ota status %s -n %s --watch\n"
                  "Then:        kubectl ota upgrade %s -n %s --wait\n",
                  ns, pod, hash, node, pod, ns, pod, ns);
}

void cli_say_failed_next(strbuf *b, const char *ns, const char *pod, const char *ds,
                         pullerr_refusal refusal)
{
    switch (refusal) {
    case PULLERR_REFUSED_IMAGE:
        strbuf_printf(b,
                      "A retry cannot help: the registry has no such image, or its name is not "
                      "valid.\nAsk the admin of DaemonSet %s/%s about the image and its tag.\n",
                      ns, ds);
        return;
    case PULLERR_REFUSED_CREDENTIALS:
        strbuf_printf(b,
                      "A retry cannot help: the registry refused the node's credentials.\n"
                      "Ask the admin of DaemonSet %s/%s about the pull secret "
                      "(imagePullSecrets).\n",
                      ns, ds);
        return;
    case PULLERR_REFUSED_NOT:
        break;
    }
    strbuf_printf(b, "Retry with: kubectl ota pull %s -n %s\n", pod, ns);
}

void cli_say_not_ready(strbuf *b, const char *ns, const char *pod, const char *node,
                       const char *hash, const char *state)
{
    strbuf_printf(b,
                  "pod %s/%s is %s: the images of revision %s are not pre-pulled on %s.\n"
                  "Deleting it now, its replacement pulls them first: the pod's service is down "
                  "for the whole pull (minutes for a large image over a slow link), and longer if "
                  "the pull fails.\n",
                  ns, pod, state, hash, node);
    if (strcmp(state, "Pulling") == 0)
        strbuf_printf(b, "A pre-pull is running: kubectl ota status %s -n %s --watch\n", pod, ns);
    else
        strbuf_printf(b, "Pre-pull first: kubectl ota pull %s -n %s\n", pod, ns);
    strbuf_printf(b, "Or accept that downtime: kubectl ota upgrade %s -n %s --force\n", pod, ns);
}

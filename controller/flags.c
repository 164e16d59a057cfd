/*
 * flags.c - see flags.h.  One row per flag; --help is written from these
 * rows, so the text right of each name and the defaults are here and
 * nowhere else.
 */
#include "flags.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "errmsg.h"
#include "imageref.h"
#include "pullmethod.h"
#include "purge_job.h"

#define AT(field) FLAGTAB_FIELD(flags, field)
#define SECONDS(s) ((uint64_t)((s) * 1e9))

static const flagtab_row rows[] = {
    {"kubeconfig", FLAGTAB_STRING, "FILE", NULL,
     "default: $KUBECONFIG, else in-cluster configuration", AT(kubeconfig)},
    {"kube-api-qps", FLAGTAB_NUMBER, "N", "20", "client-side rate limit", AT(qps),
     .real_min = 0.1, .real_max = 100000},
    {"kube-api-burst", FLAGTAB_NUMBER, "N", "30", NULL, AT(burst), .real_min = 1,
     .real_max = 100000},
    {"max-concurrent-pulls", FLAGTAB_NUMBER, "N", "10", "pre-pull Jobs running at once",
     AT(ctl.reconcile.max_concurrent_pulls), .real_min = 1, .real_max = 10000},
    {"max-pulls-per-node", FLAGTAB_NUMBER, "N", "1",
     "pre-pull Jobs on one node at once (more only\nwhere the kubelet pulls in parallel: its\nserializeImagePulls false)",
     AT(ctl.reconcile.max_pulls_per_node), .real_min = 1, .real_max = 100},
    /* activeDeadlineSeconds is whole seconds: a fraction rounds up */
    {"pull-timeout", FLAGTAB_DURATION, "DURATION", "10m",
     "Job deadline unless the DaemonSet says", AT(ctl.reconcile.pull_timeout_s),
     .min = SECONDS(1), .max = SECONDS(86400), .unit = SECONDS(1)},
    {"helper-image", FLAGTAB_STRING, "IMAGE", "busybox:1.36-musl",
     "static busybox that provides /ota-bin/true\n", AT(ctl.reconcile.helper_image)},
    {"pull-method", FLAGTAB_CHOICE, "M", "helper",
     "helper (runs a container from each image), image-volume\n(mounts each as an image volume, runs nothing\nfrom it; falls back to helper where it cannot)\nor auto (image-volume where the node's runtime\nsurely can); artifacts always image-volume",
     AT(ctl.reconcile.pull_method), .choices = pullmethod_choices},
    {"job-backoff-limit", FLAGTAB_NUMBER, "N", "0", "0..2", AT(ctl.reconcile.backoff_limit),
     .real_min = 0, .real_max = 2},
    {"imagepulljobs", FLAGTAB_BOOL, NULL, "false",
     "serve OpenKruise's ImagePullJobs (needs their\nCRD and manifests/components/imagepulljob's\nRBAC; off: they are not read)",
     AT(ctl.imagepulljobs)},
    {"imagecaches", FLAGTAB_BOOL, NULL, "false",
     "serve kube-fledged's ImageCaches (needs their\nCRD and manifests/components/imagecache's\nRBAC; off: they are not read)",
     AT(ctl.imagecaches)},
    {"image-cache-refresh-frequency", FLAGTAB_DURATION, "D", "15m",
     "ImageCaches refreshed this often (0s: never)", AT(ctl.reconcile.ic_refresh_s),
     .min = 0, .max = SECONDS(30 * 86400), .unit = SECONDS(1)},
    {"image-pull-deadline-duration", FLAGTAB_DURATION, "D", "5m",
     "an ImageCache's pull of one image on one\nnode, from that pull's start",
     AT(ctl.reconcile.ic_pull_deadline_s), .min = SECONDS(1), .max = SECONDS(86400),
     .unit = SECONDS(1)},
    {"image-cache-purge-image", FLAGTAB_STRING, "IMAGE", "",
     "image with crictl for the ImageCache purge Jobs,\nthe only privileged pods this project makes\n(a hostPath to the CRI socket, root); empty:\npurge disabled",
     AT(ctl.reconcile.ic_purge_image)},
    {"cri-socket-path", FLAGTAB_STRING, "PATH", "/run/containerd/containerd.sock",
     "the container runtime's socket on the nodes\n(purge Jobs)", AT(ctl.reconcile.cri_socket_path)},
    {"leader-elect", FLAGTAB_BOOL, NULL, "true", NULL, AT(ctl.leader_elect)},
    {"leader-elect-resource-namespace", FLAGTAB_STRING, "NS", NULL,
     "the Lease's namespace (default: the pod's\nown, from the service account mount, else\n"
     FLAGS_DEFAULT_LEASE_NAMESPACE "; never the kubeconfig context's)",
     AT(ctl.leader.namespace), .nonempty = 1},
    {"leader-elect-resource-name", FLAGTAB_STRING, "NAME", "ota-controller", "the Lease's name",
     AT(ctl.leader.name), .nonempty = 1},
    {.name = "leader-elect-namespace", .kind = FLAGTAB_ALIAS,
     .alias_of = "leader-elect-resource-namespace"},
    {.name = "leader-elect-lease-name", .kind = FLAGTAB_ALIAS,
     .alias_of = "leader-elect-resource-name"},
    {"leader-elect-identity", FLAGTAB_STRING, "ID", NULL, "(default: hostname_pid)",
     AT(ctl.leader.identity)},
    {"leader-elect-lease-duration", FLAGTAB_DURATION, "D", "15s", NULL, AT(ctl.leader.lease_ns),
     .min = SECONDS(1), .max = SECONDS(3600)},
    {"leader-elect-renew-deadline", FLAGTAB_DURATION, "D", "10s", NULL,
     AT(ctl.leader.renew_deadline_ns), .min = SECONDS(0.5), .max = SECONDS(3600)},
    {"leader-elect-retry-period", FLAGTAB_DURATION, "D", "2s", NULL, AT(ctl.leader.retry_ns),
     .min = SECONDS(0.1), .max = SECONDS(3600)},
    {"resync-period", FLAGTAB_DURATION, "D", "30s", "full reconcile at least this often",
     AT(ctl.resync_ns), .min = SECONDS(1), .max = SECONDS(86400)},
    {"health-probe-bind-address", FLAGTAB_STRING, "H:P", ":8081", "/livez, /healthz, /readyz",
     AT(health_address)},
    {"metrics-bind-address", FLAGTAB_STRING, "H:P", ":8080", "/metrics", AT(metrics_address)},
    FLAGTAB_COMMON_ROWS(flags, log_level, log_format),
};

const flagtab flags_flagtab = {
    .program = "ota-controller",
    .synopsis =
        "usage: ota-controller [options]\n"
        "\n"
        "Keeps PodNeedUpgrade current on the pods of OTA DaemonSets, turns pre-pull requests\n"
        "into Jobs pinned to the pod's node, and reports the outcome as PodImageReady.\n"
        "\n",
    .epilogue =
        "\n"
        "Durations (D) are Go durations (15s, 10m, 1h30m, 500ms) or plain seconds.\n"
        "--leader-elect-namespace and --leader-elect-lease-name are older spellings of\n"
        "--leader-elect-resource-namespace and --leader-elect-resource-name.\n",
    .rows = rows,
    .n_rows = sizeof(rows) / sizeof(rows[0]),
};

/* Every pre-pull Job runs the helper image (and every purge Job the purge
 * image), so one the kubelet cannot parse would fail each pull with
 * InvalidImageName: read it as the Job renderer will
 * (controller/prepull_job.c), once, at start.  0, or -1 with the line to
 * print in err. */
static int check_helper_image(const char *flag, const char *ref, char *err, size_t errlen)
{
    arena a;
    arena_init(&a);
    imageref r;
    char why[256];
    int rc = imageref_parse(&r, ref, strlen(ref), &a, why, sizeof(why));
    if (rc != 0) /* why names the reference */
        errmsg_set(err, errlen,
                   "ota-controller: %s wants an image reference the kubelet can pull: %s", flag,
                   why);
    arena_free(&a);
    return rc;
}

/* The purge Jobs mount the socket as a hostPath and hand it to crictl:
 * a path that can never work stops the start (purge_job.h's rules), not
 * every purge.  0, or -1 with the line in err. */
static int check_socket_path(const char *p, char *err, size_t errlen)
{
    char why[256];
    if (purge_job_check_socket_path(p, why, sizeof(why)) == 0)
        return 0;
    errmsg_set(err, errlen, "ota-controller: --cri-socket-path: %s", why);
    return -1;
}

flagtab_result flags_parse(int argc, char *const *argv, flags *f, char *err, size_t errlen)
{
    *f = (flags){0};
    flagtab_result r = flagtab_parse(&flags_flagtab, argc, argv, f, err, errlen);
    if (r != FLAGTAB_RUN)
        return r;
    const leader_config *l = &f->ctl.leader;
    if (l->renew_deadline_ns >= l->lease_ns || l->retry_ns >= l->renew_deadline_ns) {
        errmsg_set(err, errlen,
                   "ota-controller: want retry period < renew deadline < lease duration");
        return FLAGTAB_BAD_VALUE;
    }
    if (check_helper_image("--helper-image", f->ctl.reconcile.helper_image, err, errlen) != 0)
        return FLAGTAB_BAD_VALUE;
    const char *purge = f->ctl.reconcile.ic_purge_image;
    if (purge != NULL && purge[0] != '\0' &&
        check_helper_image("--image-cache-purge-image", purge, err, errlen) != 0)
        return FLAGTAB_BAD_VALUE;
    if (check_socket_path(f->ctl.reconcile.cri_socket_path, err, errlen) != 0)
        return FLAGTAB_BAD_VALUE;
    return r;
}

const char *flags_identity(char *buf, size_t len)
{
    char host[200] = "ota-controller";
    gethostname(host, sizeof(host) - 1);
    snprintf(buf, len, "%s_%d", host, (int)getpid());
    return buf;
}

const char *flags_lease_namespace(const char *flag, const char *sa_dir, char *buf, size_t len)
{
    if (flag != NULL && flag[0] != '\0')
        return flag;
    char path[512];
    snprintf(path, sizeof(path), "%s/namespace", sa_dir);
    FILE *f = fopen(path, "re");
    if (f != NULL && len > 0) {
        size_t n = fread(buf, 1, len - 1, f);
        buf[n] = '\0';
        while (n > 0 && isspace((unsigned char)buf[n - 1]))
            buf[--n] = '\0';
        fclose(f);
        /* a namespace name is a DNS label: anything else is not one */
        int ok = n > 0 && n <= 63;
        for (size_t i = 0; i < n && ok; i++)
            ok = (buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= '0' && buf[i] <= '9') ||
                 buf[i] == '-';
        if (ok)
            return buf;
    } else if (f != NULL) {
        fclose(f);
    }
    return FLAGS_DEFAULT_LEASE_NAMESPACE;
}

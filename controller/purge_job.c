/*
 * purge_job.c - see purge_job.h.  The body is written with lib/json into
 * arena memory, keys in a fixed order, so the same spec always gives the
 * same bytes.
 *
 * Why each privileged part is there, and nothing more:
 *  - the hostPath volume of type Socket: crictl talks to the runtime over
 *    its unix socket; type Socket makes the kubelet refuse to start the pod
 *    when the path is not a socket (a wrong --cri-socket-path fails loudly
 *    instead of creating a directory there).  The mount is read-only:
 *    connect(2) on a socket needs no writable filesystem.
 *  - runAsUser 0: the runtime's socket is root's (mode 0660 root:root).
 *    Every capability is still dropped (the socket's owner needs none) and
 *    privilege escalation is off.
 * No shell: command[] is crictl's own argv, so an image reference is one
 * argument whatever it contains (the webhook has validated it, and so does
 * this renderer).  terminationMessagePolicy FallbackToLogsOnError puts
 * crictl's output ("Deleted: ...", or its error) into the container's
 * terminated state without redirecting anything into /dev/termination-log.
 */
#include "purge_job.h"

#include <stdio.h>
#include <string.h>

#include "errmsg.h"
#include "imageref.h"
#include "json.h"
#include "ota_names.h"

static pull_job_marks marks_of(const purge_job_spec *s)
{
    return (pull_job_marks){s->labels, s->n_labels, s->annotations, s->n_annotations};
}

/* ---- validation ------------------------------------------------------------ */

int purge_job_check_socket_path(const char *p, char *err, size_t errlen)
{
    if (p == NULL || p[0] == '\0')
        return errmsg_set(err, errlen, "CRI socket path is missing");
    size_t n = strlen(p);
    if (p[0] != '/')
        return errmsg_set(err, errlen, "CRI socket path %.64s is not absolute", p);
    if (n > PURGE_JOB_SOCKET_MAX)
        return errmsg_set(err, errlen, "CRI socket path is longer than %d bytes",
                          PURGE_JOB_SOCKET_MAX);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
            return errmsg_set(err, errlen, "CRI socket path has a control character at %zu", i);
    /* The apiserver refuses a hostPath with a ".." element. */
    for (const char *e = p; *e != '\0';) {
        while (*e == '/')
            e++;
        size_t len = strcspn(e, "/");
        if (len == 2 && e[0] == '.' && e[1] == '.')
            return errmsg_set(err, errlen, "CRI socket path %s has a '..' element", p);
        e += len;
    }
    return 0;
}

static int check_pairs(const char *what, const char *const *kv, size_t n, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < 2 * n; i++)
        if (kv[i] == NULL || (i % 2 == 0 && kv[i][0] == '\0'))
            return errmsg_set(err, errlen, "%s %zu is missing", what, i / 2);
    return 0;
}

/* Checks s; 0 with the purge image's pull policy in *policy (static). */
static int check_spec(const purge_job_spec *s, arena *a, const char **policy, char *err,
                      size_t errlen)
{
    const char *const required[][2] = {
        {"namespace", s->namespace},     {"job name", s->name},
        {"node name", s->node_name},     {"owner apiVersion", s->owner.api_version},
        {"owner kind", s->owner.kind},   {"owner name", s->owner.name},
        {"owner uid", s->owner.uid},     {"purge image", s->purge_image},
        {"CRI socket path", s->socket_path},
    };
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (required[i][1] == NULL || required[i][1][0] == '\0')
            return errmsg_set(err, errlen, "%s is missing", required[i][0]);
    if (check_pairs("label", s->labels, s->n_labels, err, errlen) != 0 ||
        check_pairs("annotation", s->annotations, s->n_annotations, err, errlen) != 0)
        return -1;
    if (s->active_deadline_seconds <= 0)
        return errmsg_set(err, errlen, "active deadline %ld s is not above 0",
                          s->active_deadline_seconds);
    if (purge_job_check_socket_path(s->socket_path, err, errlen) != 0)
        return -1;
    char why[160];
    imageref r;
    if (imageref_parse(&r, s->purge_image, strlen(s->purge_image), a, why, sizeof(why)) != 0)
        return errmsg_set(err, errlen, "purge image: %s", why);
    *policy = imageref_pull_policy(&r);
    if (s->n_images == 0)
        return errmsg_set(err, errlen, "no image to delete");
    if (s->n_images > PURGE_JOB_MAX_IMAGES)
        return errmsg_set(err, errlen, "more than %d images", PURGE_JOB_MAX_IMAGES);
    const char *normal[PURGE_JOB_MAX_IMAGES];
    for (size_t i = 0; i < s->n_images; i++) {
        const char *image = s->images[i];
        if (image == NULL)
            return errmsg_set(err, errlen, "image %zu is missing", i);
        normal[i] = imageref_normalize(image, strlen(image), a, err, errlen);
        if (normal[i] == NULL)
            return -1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(normal[j], normal[i]) == 0)
                return errmsg_set(err, errlen, "image %zu (%s) is image %zu (%s) again", i,
                                  image, j, s->images[j]);
    }
    return 0;
}

/* ---- the Job --------------------------------------------------------------- */

static void rmi_container(json_writer *w, const purge_job_spec *s, const char *policy,
                          const char *endpoint_flags[2], size_t i, arena *a)
{
    const char *name = arena_printf(a, PURGE_JOB_CONTAINER_PREFIX "%zu", i);
    if (name == NULL) {
        w->failed = 1;
        return;
    }
    json_map_open(w, NULL);
    json_kv_str(w, "name", name);
    json_kv_str(w, "image", s->purge_image);
    json_kv_str(w, "imagePullPolicy", policy);
    json_array_open(w, "command");
    json_str(w, "crictl");
    json_str(w, endpoint_flags[0]);
    json_str(w, endpoint_flags[1]);
    json_str(w, "rmi");
    json_str(w, s->images[i]);
    json_array_close(w);
    json_kv_str(w, "terminationMessagePolicy", "FallbackToLogsOnError");
    json_map_open(w, "resources");
    json_map_open(w, "requests");
    json_kv_str(w, "cpu", "10m");
    json_kv_str(w, "memory", "16Mi");
    json_map_close(w);
    json_map_open(w, "limits"); /* a Go CLI's one request */
    json_kv_str(w, "cpu", "200m");
    json_kv_str(w, "memory", "128Mi");
    json_map_close(w);
    json_map_close(w);
    json_array_open(w, "volumeMounts");
    json_map_open(w, NULL);
    json_kv_str(w, "name", PURGE_JOB_VOLUME);
    json_kv_str(w, "mountPath", s->socket_path);
    json_kv_bool(w, "readOnly", 1);
    json_map_close(w);
    json_array_close(w);
    json_map_open(w, "securityContext");
    json_kv_int(w, "runAsUser", 0);
    json_kv_bool(w, "runAsNonRoot", 0);
    json_kv_bool(w, "allowPrivilegeEscalation", 0);
    json_map_open(w, "capabilities");
    json_array_open(w, "drop");
    json_str(w, "ALL");
    json_array_close(w);
    json_map_close(w);
    json_map_close(w);
    json_map_close(w);
}

static void pod_spec(json_writer *w, const purge_job_spec *s, const char *policy, arena *a)
{
    const char *flags[2] = {arena_printf(a, "--runtime-endpoint=unix://%s", s->socket_path),
                            arena_printf(a, "--image-endpoint=unix://%s", s->socket_path)};
    if (flags[0] == NULL || flags[1] == NULL) {
        w->failed = 1;
        return;
    }
    json_map_open(w, "spec");
    json_kv_str(w, "restartPolicy", "Never");
    json_kv_str(w, "nodeName", s->node_name);
    json_array_open(w, "tolerations");
    json_map_open(w, NULL);
    json_kv_str(w, "operator", "Exists");
    json_map_close(w);
    json_array_close(w);
    json_kv_bool(w, "automountServiceAccountToken", 0);
    json_kv_bool(w, "enableServiceLinks", 0);
    json_map_open(w, "securityContext");
    json_map_open(w, "seccompProfile");
    json_kv_str(w, "type", "RuntimeDefault"); /* crictl makes no unusual syscall */
    json_map_close(w);
    json_map_close(w);
    json_array_open(w, "volumes");
    json_map_open(w, NULL);
    json_kv_str(w, "name", PURGE_JOB_VOLUME);
    json_map_open(w, "hostPath");
    json_kv_str(w, "path", s->socket_path);
    json_kv_str(w, "type", "Socket");
    json_map_close(w);
    json_map_close(w);
    json_array_close(w);
    json_array_open(w, "containers");
    for (size_t i = 0; i < s->n_images; i++)
        rmi_container(w, s, policy, flags, i, a);
    json_array_close(w);
    json_map_close(w);
}

int purge_job_render(const purge_job_spec *s, arena *a, const char **json, size_t *len,
                     char *err, size_t errlen)
{
    json_writer w = {0};
    int rc = -1;

    const char *policy = NULL;
    if (check_spec(s, a, &policy, err, errlen) != 0)
        goto cleanup;

    if (json_writer_init(&w, a) != 0) {
        errmsg_set(err, errlen, "out of memory");
        goto cleanup;
    }
    json_writer_indent(&w, "  ");

    json_map_open(&w, NULL);
    pull_job_marks marks = marks_of(s);
    pull_job_write_head(&w, s->namespace, s->name, &s->owner, &marks);

    json_map_open(&w, "spec");
    /* One try: a second rmi of a deleted image could only say it is gone. */
    json_kv_int(&w, "backoffLimit", 0);
    json_kv_int(&w, "activeDeadlineSeconds", s->active_deadline_seconds);
    json_map_open(&w, "template");
    json_map_open(&w, "metadata");
    pull_job_write_marks(&w, &marks);
    json_map_close(&w);
    pod_spec(&w, s, policy, a);
    json_map_close(&w);
    json_map_close(&w);
    json_map_close(&w);

    const char *text = json_writer_finish(&w, len); /* arena memory */
    if (text == NULL) {
        errmsg_set(err, errlen, "could not write the Job");
        goto cleanup;
    }
    *json = text;
    rc = 0;

cleanup:
    json_writer_free(&w);
    return rc;
}

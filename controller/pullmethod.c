/*
 * pullmethod.c - see pullmethod.h.
 */
#include "pullmethod.h"

#include <stdlib.h>
#include <string.h>

#include "errmsg.h"

const flagtab_choice pullmethod_choices[] = {
    {"helper", PULLMETHOD_MODE_HELPER},
    {"image-volume", PULLMETHOD_MODE_IMAGE_VOLUME},
    {"auto", PULLMETHOD_MODE_AUTO},
    {NULL, 0},
};

/* "<major>.<minor>" after an optional "v"; -1 when it does not read. */
static int read_version(const char *p, long *major, long *minor)
{
    if (*p == 'v')
        p++;
    char *end;
    if (*p < '0' || *p > '9')
        return -1;
    *major = strtol(p, &end, 10);
    if (*end != '.' || end[1] < '0' || end[1] > '9')
        return -1;
    *minor = strtol(end + 1, &end, 10);
    return 0;
}

pullmethod_runtime pullmethod_runtime_of(const char *v)
{
    static const struct {
        const char *scheme;
        long major, minor; /* the first version that mounts image volumes; -1: none */
    } runtimes[] = {
        {"containerd://", 2, 1},
        {"cri-o://", 1, 31},
        {"docker://", -1, -1},
    };
    if (v == NULL)
        return PULLMETHOD_RUNTIME_UNKNOWN;
    for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
        size_t n = strlen(runtimes[i].scheme);
        if (strncmp(v, runtimes[i].scheme, n) != 0)
            continue;
        if (runtimes[i].major < 0)
            return PULLMETHOD_RUNTIME_NO;
        long major, minor;
        if (strlen(v + n) > 32 || read_version(v + n, &major, &minor) != 0)
            return PULLMETHOD_RUNTIME_UNKNOWN;
        if (major != runtimes[i].major)
            return major > runtimes[i].major ? PULLMETHOD_RUNTIME_YES : PULLMETHOD_RUNTIME_NO;
        return minor >= runtimes[i].minor ? PULLMETHOD_RUNTIME_YES : PULLMETHOD_RUNTIME_NO;
    }
    return PULLMETHOD_RUNTIME_UNKNOWN;
}

void pullmethod_memory_init(pullmethod_memory *m, size_t cap)
{
    memset(m, 0, sizeof(*m));
    strset_init(&m->nodes);
    m->cap = cap > 0 ? cap : PULLMETHOD_MAX_NODES;
}

void pullmethod_memory_free(pullmethod_memory *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->order[(m->head + i) % m->cap]);
    free(m->order);
    strset_free(&m->nodes);
    memset(m, 0, sizeof(*m));
}

int pullmethod_node_cannot(const pullmethod_memory *m, const char *node)
{
    return node != NULL && strset_has(&m->nodes, node);
}

pullmethod_answer pullmethod_create_answer(int http_status, const char *message)
{
    if (http_status == 422 && message != NULL && strstr(message, "must specify a volume type"))
        return PULLMETHOD_ANSWER_GATE_OFF;
    return PULLMETHOD_ANSWER_NONE;
}

pullmethod_answer pullmethod_target_answer(const char *waiting_reason)
{
    if (waiting_reason != NULL && strcmp(waiting_reason, "CreateContainerError") == 0)
        return PULLMETHOD_ANSWER_NODE_CANNOT;
    return PULLMETHOD_ANSWER_NONE;
}

int pullmethod_remember(pullmethod_memory *m, pullmethod_answer a, const char *node)
{
    if (a == PULLMETHOD_ANSWER_GATE_OFF) {
        m->gate_off = 1;
        return 0;
    }
    if (a != PULLMETHOD_ANSWER_NODE_CANNOT || node == NULL || node[0] == '\0' ||
        strset_has(&m->nodes, node))
        return 0;
    if (m->order == NULL && (m->order = calloc(m->cap, sizeof(*m->order))) == NULL)
        return -1;
    char *copy = strdup(node);
    if (copy == NULL)
        return -1;
    if (m->n == m->cap) { /* full: the oldest is forgotten */
        char *oldest = m->order[m->head];
        strset_remove(&m->nodes, oldest);
        free(oldest);
        m->head = (m->head + 1) % m->cap;
        m->n--;
    }
    if (strset_add(&m->nodes, copy) != 0) {
        free(copy);
        return -1;
    }
    m->order[(m->head + m->n) % m->cap] = copy;
    m->n++;
    return 0;
}

static int listed(const char *image, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] != NULL && strcmp(list[i], image) == 0)
            return 1;
    return 0;
}

int pullmethod_is_artifact(const char *image, const char *const *volume_images, size_t n_volumes,
                           const char *const *container_images, size_t n_containers)
{
    return image != NULL && listed(image, volume_images, n_volumes) &&
           !listed(image, container_images, n_containers);
}

pullmethod_verdict pullmethod_choose(pullmethod_mode mode, int artifact, const char *node,
                                     const char *runtime_version, const pullmethod_memory *m,
                                     char *why, size_t whylen)
{
    char scratch[8];
    if (why == NULL || whylen == 0) {
        why = scratch;
        whylen = sizeof(scratch);
    }
    why[0] = '\0';
    pullmethod_runtime rt = pullmethod_runtime_of(runtime_version);
    int gate_off = m != NULL && m->gate_off;
    int refused = m != NULL && pullmethod_node_cannot(m, node);
    int may = !gate_off && !refused && rt != PULLMETHOD_RUNTIME_NO;
    if (artifact) {
        if (may)
            return PULLMETHOD_USE_IMAGE_VOLUME;
        if (gate_off)
            errmsg_set(why, whylen,
                       "image volumes are off in this cluster (the apiserver drops "
                       "volumes[].image: the ImageVolume feature gate is off), and this image "
                       "is mounted as an image volume (an OCI artifact that cannot run as a "
                       "container), so it cannot be pre-pulled");
        else if (refused)
            errmsg_set(why, whylen,
                       "node %.253s cannot mount image volumes (its container runtime failed to "
                       "create a container mounting one: CreateContainerError), and this image "
                       "is mounted as an image volume (an OCI artifact that cannot run as a "
                       "container), so it cannot be pre-pulled there",
                       node != NULL ? node : "?");
        else
            errmsg_set(why, whylen,
                       "node %.253s cannot mount image volumes (its container runtime is %.64s; "
                       "containerd >= 2.1 or CRI-O >= 1.31 can), and this image is mounted as "
                       "an image volume (an OCI artifact that cannot run as a container), so it "
                       "cannot be pre-pulled there",
                       node != NULL ? node : "?", runtime_version);
        return PULLMETHOD_FAIL;
    }
    switch (mode) {
    case PULLMETHOD_MODE_IMAGE_VOLUME:
        return may ? PULLMETHOD_USE_IMAGE_VOLUME : PULLMETHOD_USE_HELPER;
    case PULLMETHOD_MODE_AUTO:
        return may && rt == PULLMETHOD_RUNTIME_YES ? PULLMETHOD_USE_IMAGE_VOLUME
                                                   : PULLMETHOD_USE_HELPER;
    case PULLMETHOD_MODE_HELPER:
    default:
        return PULLMETHOD_USE_HELPER;
    }
}

pull_job_method pullmethod_job_method(pullmethod_verdict v)
{
    return v == PULLMETHOD_USE_IMAGE_VOLUME ? PULL_JOB_METHOD_IMAGE_VOLUME : PULL_JOB_METHOD_HELPER;
}

void pullmethod_plan_request(pullmethod_mode mode, const char *node, const char *runtime_version,
                             const pullmethod_memory *m, const char *const *init_images,
                             size_t n_init, const char *const *images, size_t n_images,
                             const char *const *volume_images, size_t n_volumes,
                             pullmethod_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->runnable = n_init + n_images > 0;
    plan->runnable_verdict = pullmethod_choose(mode, 0, node, runtime_version, m, NULL, 0);
    for (size_t i = 0; i < n_volumes && plan->n_artifacts < PULLMETHOD_MAX_ARTIFACTS; i++) {
        const char *v = volume_images[i];
        if (!pullmethod_is_artifact(v, volume_images, n_volumes, init_images, n_init) ||
            listed(v, images, n_images) || listed(v, plan->artifacts, plan->n_artifacts))
            continue;
        plan->artifacts[plan->n_artifacts++] = v;
    }
    plan->artifact_verdict = PULLMETHOD_USE_IMAGE_VOLUME;
    if (plan->n_artifacts > 0)
        plan->artifact_verdict =
            pullmethod_choose(mode, 1, node, runtime_version, m, plan->why, sizeof(plan->why));
}

int pullmethod_plan_wants_helper(const pullmethod_plan *plan)
{
    return plan->runnable && plan->runnable_verdict == PULLMETHOD_USE_HELPER;
}

int pullmethod_plan_wants_volume(const pullmethod_plan *plan)
{
    return (plan->runnable && plan->runnable_verdict == PULLMETHOD_USE_IMAGE_VOLUME) ||
           (plan->n_artifacts > 0 && plan->artifact_verdict == PULLMETHOD_USE_IMAGE_VOLUME);
}

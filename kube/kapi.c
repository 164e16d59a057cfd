/*
 * kapi.c - see kapi.h.
 */
#include "kapi.h"

#include <stdio.h>
#include <string.h>

#include "json.h"

static const char *const with_status[] = {"status", NULL};

/* One row per resource: the only place an API path is spelled. */
static const kapi_resource_def resources[KAPI_N_RESOURCES] = {
    [KAPI_PODS] = {"v1", "pods", 1, with_status},
    [KAPI_NODES] = {"v1", "nodes", 0, NULL},
    [KAPI_EVENTS] = {"v1", "events", 1, NULL},
    [KAPI_DAEMONSETS] = {"apps/v1", "daemonsets", 1, NULL},
    [KAPI_CONTROLLERREVISIONS] = {"apps/v1", "controllerrevisions", 1, NULL},
    [KAPI_JOBS] = {"batch/v1", "jobs", 1, NULL},
    [KAPI_LEASES] = {"coordination.k8s.io/v1", "leases", 1, NULL},
    [KAPI_SELFSUBJECTREVIEWS] = {"authentication.k8s.io/v1", "selfsubjectreviews", 0, NULL},
    [KAPI_IMAGEPULLJOBS] = {"apps.kruise.io/v1alpha1", "imagepulljobs", 1, with_status},
    [KAPI_IMAGECACHES] = {"kubefledged.io/v1alpha2", "imagecaches", 1, with_status},
};

const kapi_resource_def *kapi_resource_of(kapi_resource r)
{
    return (unsigned)r < KAPI_N_RESOURCES ? &resources[r] : NULL;
}

static int unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

void kapi_escape(strbuf *b, const char *s)
{
    while (*s != '\0') {
        size_t run = 0;
        while (s[run] != '\0' && unreserved((unsigned char)s[run]))
            run++;
        if (run > 0)
            strbuf_printf(b, "%.*s", (int)run, s);
        s += run;
        if (*s != '\0')
            strbuf_printf(b, "%%%02X", (unsigned char)*s++);
    }
}

static int has_subresource(const kapi_resource_def *d, const char *sub)
{
    for (const char *const *s = d->subresources; s != NULL && *s != NULL; s++)
        if (strcmp(*s, sub) == 0)
            return 1;
    return 0;
}

static void segment(strbuf *b, const char *s)
{
    strbuf_printf(b, "/");
    kapi_escape(b, s);
}

int kapi_path(strbuf *b, kapi_resource r, const char *ns, const char *name, const char *sub)
{
    const kapi_resource_def *d = kapi_resource_of(r);
    if (d == NULL || (ns != NULL && (!d->namespaced || ns[0] == '\0')) ||
        (name != NULL && (name[0] == '\0' || (d->namespaced && ns == NULL))) ||
        (sub != NULL && (name == NULL || !has_subresource(d, sub))))
        return -1;
    /* the core group is the legacy /api; every other group is under /apis */
    strbuf_printf(b, strchr(d->group_version, '/') == NULL ? "/api/%s" : "/apis/%s",
                  d->group_version);
    if (ns != NULL) {
        strbuf_printf(b, "/namespaces");
        segment(b, ns);
    }
    segment(b, d->plural);
    if (name != NULL)
        segment(b, name);
    if (sub != NULL)
        segment(b, sub);
    return 0;
}

int kapi_discovery_path(strbuf *b, kapi_resource r)
{
    const kapi_resource_def *d = kapi_resource_of(r);
    if (d == NULL)
        return -1;
    strbuf_printf(b, strchr(d->group_version, '/') == NULL ? "/api/%s" : "/apis/%s",
                  d->group_version);
    return 0;
}

/* A key or value the selector would read as more than one term. */
static int plain_term(const char *s)
{
    return strpbrk(s, ",=!") == NULL;
}

int kapi_selector(strbuf *b, kapi_selector_kind kind, const kapi_requirement *reqs)
{
    if (reqs == NULL || reqs[0].key == NULL)
        return -1;
    for (const kapi_requirement *q = reqs; q->key != NULL; q++)
        if (q->key[0] == '\0' || !plain_term(q->key) ||
            (q->value == NULL ? kind == KAPI_FIELD_SELECTOR : !plain_term(q->value)))
            return -1;
    strbuf_printf(b, "%s=", kind == KAPI_FIELD_SELECTOR ? "fieldSelector" : "labelSelector");
    /* the whole selector is one query value: its ',' and '=' escaped too */
    for (const kapi_requirement *q = reqs; q->key != NULL; q++) {
        if (q != reqs)
            kapi_escape(b, ",");
        kapi_escape(b, q->key);
        if (q->value != NULL) {
            kapi_escape(b, "=");
            kapi_escape(b, q->value);
        }
    }
    return 0;
}

char *kapi_conditions_patch(const kapi_condition *conds, size_t n, const char *rv,
                            const char *now)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    if (rv != NULL && rv[0] != '\0') {
        json_map_open(&w, "metadata");
        json_kv_str(&w, "resourceVersion", rv);
        json_map_close(&w);
    }
    json_map_open(&w, "status");
    json_array_open(&w, "conditions");
    for (size_t i = 0; i < n; i++) {
        json_map_open(&w, NULL);
        json_kv_str(&w, "type", conds[i].type);
        if (conds[i].remove) {
            json_kv_str(&w, "$patch", "delete");
        } else {
            json_kv_str(&w, "status", conds[i].status);
            if (conds[i].reason != NULL)
                json_kv_str(&w, "reason", conds[i].reason);
            json_kv_str(&w, "message", conds[i].message);
            json_kv_str(&w, "lastTransitionTime", now);
        }
        json_map_close(&w);
    }
    json_array_close(&w);
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_take(&w);
}

char *kapi_delete_options(const char *uid, const char *rv)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    json_kv_str(&w, "apiVersion", "v1");
    json_kv_str(&w, "kind", "DeleteOptions");
    json_map_open(&w, "preconditions");
    json_kv_str(&w, "uid", uid);
    if (rv != NULL)
        json_kv_str(&w, "resourceVersion", rv);
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_take(&w);
}

int kapi_status_read(const char *body, size_t len, char *reason, size_t reason_size,
                     char *message, size_t message_size)
{
    static const char *const p_reason[] = {"reason", NULL};
    static const char *const p_message[] = {"message", NULL};
    char err[64];
    /* a Status is 4 deep (details.causes[].field) */
    yajl_val v = body != NULL && len > 0 ? json_parse_tree(body, len, 16, err, sizeof(err)) : NULL;
    yajl_val r = v != NULL ? yajl_tree_get(v, (const char **)p_reason, yajl_t_string) : NULL;
    yajl_val m = v != NULL ? yajl_tree_get(v, (const char **)p_message, yajl_t_string) : NULL;
    if (reason != NULL)
        snprintf(reason, reason_size, "%s", r != NULL ? YAJL_GET_STRING(r) : "");
    if (message != NULL)
        snprintf(message, message_size, "%s", m != NULL ? YAJL_GET_STRING(m) : "");
    if (v != NULL)
        yajl_tree_free(v);
    return m != NULL;
}

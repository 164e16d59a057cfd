/*
 * ic_write.c - see ic_write.h.
 */
#include "ic_write.h"

#include <string.h>

#include "kobj.h"

int ic_status_served(yajl_val doc)
{
    yajl_val resources = kobj_member(doc, "resources");
    if (!YAJL_IS_ARRAY(resources))
        return -1;
    for (size_t i = 0; i < resources->u.array.len; i++) {
        const char *name = kobj_member_str(resources->u.array.values[i], "name");
        if (name != NULL && strcmp(name, IC_STATUS_RESOURCE) == 0)
            return 1;
    }
    return 0;
}

static int in_keys(const char *key, const char *const *keys, size_t n, size_t stride)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i * stride] != NULL && strcmp(keys[i * stride], key) == 0)
            return 1;
    return 0;
}

char *ic_meta_patch(const char *rv, const char *const *set, size_t n_set,
                    const char *const *drop, size_t n_drop)
{
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    json_map_open(&w, "metadata");
    if (rv != NULL)
        json_kv_str(&w, "resourceVersion", rv);
    json_map_open(&w, "annotations");
    for (size_t i = 0; i < n_set; i++)
        json_kv_str(&w, set[2 * i], set[2 * i + 1]);
    for (size_t i = 0; i < n_drop; i++)
        if (!in_keys(drop[i], set, n_set, 2) && !in_keys(drop[i], drop, i, 1))
            json_kv_null(&w, drop[i]);
    json_map_close(&w);
    json_map_close(&w);
    json_map_close(&w);
    return json_writer_take(&w);
}

/* annotations as read, the drop keys removed, set replaced in place or
 * appended. */
static void write_annotations(json_writer *w, yajl_val ann, const char *const *set, size_t n_set,
                              const char *const *drop, size_t n_drop)
{
    json_map_open(w, "annotations");
    size_t n = YAJL_IS_OBJECT(ann) ? ann->u.object.len : 0;
    for (size_t i = 0; i < n; i++) {
        const char *key = ann->u.object.keys[i];
        size_t s = 0;
        while (s < n_set && strcmp(set[2 * s], key) != 0)
            s++;
        if (s < n_set) {
            json_kv_str(w, key, set[2 * s + 1]);
        } else if (!in_keys(key, drop, n_drop, 1)) {
            json_str(w, key);
            json_tree(w, ann->u.object.values[i]);
        }
    }
    for (size_t s = 0; s < n_set; s++)
        if (kobj_member(ann, set[2 * s]) == NULL)
            json_kv_str(w, set[2 * s], set[2 * s + 1]);
    json_map_close(w);
}

static void write_metadata(json_writer *w, yajl_val meta, const char *const *set, size_t n_set,
                           const char *const *drop, size_t n_drop)
{
    json_map_open(w, "metadata");
    int had_annotations = 0;
    for (size_t i = 0; i < meta->u.object.len; i++) {
        const char *key = meta->u.object.keys[i];
        if (strcmp(key, "annotations") == 0) {
            had_annotations = 1;
            write_annotations(w, meta->u.object.values[i], set, n_set, drop, n_drop);
        } else {
            json_str(w, key);
            json_tree(w, meta->u.object.values[i]);
        }
    }
    if (!had_annotations && n_set > 0)
        write_annotations(w, NULL, set, n_set, drop, n_drop);
    json_map_close(w);
}

char *ic_put_body(yajl_val obj, ic_status_writer write_status, const void *arg,
                  const char *const *set, size_t n_set, const char *const *drop, size_t n_drop)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    json_writer w;
    if (json_writer_init(&w, NULL) != 0)
        return NULL;
    json_map_open(&w, NULL);
    int had_status = 0;
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *key = obj->u.object.keys[i];
        yajl_val v = obj->u.object.values[i];
        if (strcmp(key, "status") == 0 && write_status != NULL) {
            had_status = 1;
            write_status(&w, arg);
        } else if (strcmp(key, "metadata") == 0 && YAJL_IS_OBJECT(v)) {
            write_metadata(&w, v, set, n_set, drop, n_drop);
        } else {
            json_str(&w, key);
            json_tree(&w, v);
        }
    }
    if (!had_status && write_status != NULL)
        write_status(&w, arg);
    json_map_close(&w);
    return json_writer_take(&w);
}

int ic_write_sends(int served, int started, int write_status, int meta, int holds,
                   int same_words)
{
    if (served < 0 || (!write_status && !meta))
        return 0;
    if (served == 0)
        return IC_SEND_PUT;
    if (!meta)
        return IC_SEND_STATUS;
    if (started)
        return IC_SEND_META;
    if (write_status && !holds && !same_words)
        return IC_SEND_STATUS;
    return IC_SEND_META;
}

ic_write_next_step ic_write_next(int http_code, int to_status)
{
    if (http_code >= 200 && http_code < 300)
        return IC_WRITE_DONE;
    switch (http_code) {
    case 409:
        return IC_WRITE_REREAD;
    case 404:
        return to_status ? IC_WRITE_REDISCOVER : IC_WRITE_GONE;
    case 405:
        return IC_WRITE_REDISCOVER;
    case 400:
    case 403:
    case 422:
        return IC_WRITE_REFUSED;
    default:
        return IC_WRITE_RETRY;
    }
}

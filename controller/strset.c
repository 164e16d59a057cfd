/*
 * strset.c - see strset.h.
 */
#include "strset.h"

void strset_init(strset *s)
{
    store_init(&s->map, NULL, NULL);
}

void strset_free(strset *s)
{
    store_free(&s->map);
}

int strset_has(const strset *s, const char *key)
{
    return store_has(&s->map, key);
}

int strset_add(strset *s, const char *key)
{
    return store_put(&s->map, key, NULL);
}

int strset_remove(strset *s, const char *key)
{
    return store_delete(&s->map, key);
}

size_t strset_len(const strset *s)
{
    return s->map.len;
}

/* strset_retain's question, as store_retain asks it */
typedef struct key_filter {
    int (*keep)(const char *key, void *data);
    void *data;
} key_filter;

static int keep_key(const char *key, const void *obj, void *data)
{
    (void)obj;
    const key_filter *f = data;
    return f->keep(key, f->data);
}

size_t strset_retain(strset *s, int (*keep)(const char *key, void *data), void *data)
{
    key_filter f = {keep, data};
    return store_retain(&s->map, keep_key, &f);
}

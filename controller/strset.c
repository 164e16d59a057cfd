/*
 * strset.c - see strset.h.
 */
#include "strset.h"

void strset_init(strset *s)
{
    store_init(&s->map);
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

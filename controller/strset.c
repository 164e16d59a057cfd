/*
 * strset.c - see strset.h.
 */
#include "strset.h"

#include <stdlib.h>
#include <string.h>

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

size_t strset_retain(strset *s, int (*keep)(const char *key, void *data), void *data)
{
    /* The store forbids deleting while iterating (backward-shift deletion
     * moves entries): collect first, then remove. */
    size_t n = 0;
    for (size_t i = 0; i < s->map.cap; i++)
        n += s->map.slots[i].key != NULL && !keep(s->map.slots[i].key, data);
    if (n == 0)
        return 0;
    char **gone = malloc(n * sizeof(*gone));
    if (gone == NULL)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < s->map.cap && k < n; i++)
        if (s->map.slots[i].key != NULL && !keep(s->map.slots[i].key, data))
            gone[k++] = s->map.slots[i].key;
    /* gone[] points at keys the store owns: copy each before it is freed */
    size_t removed = 0;
    for (size_t i = 0; i < k; i++) {
        char *copy = strdup(gone[i]);
        gone[i] = copy;
    }
    for (size_t i = 0; i < k; i++) {
        if (gone[i] != NULL)
            removed += (size_t)strset_remove(s, gone[i]);
        free(gone[i]);
    }
    free(gone);
    return removed;
}

/*
 * store.c - see store.h.
 */
#include "store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_key(const char *k)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *k; k++) {
        h ^= (unsigned char)*k;
        h *= 1099511628211ull;
    }
    return h;
}

/* The key is the object's own (the informers' caches): not a copy. */
static int borrowed(const store *s, const store_slot *slot)
{
    return slot->obj != NULL && s->key_of != NULL && slot->key == s->key_of(slot->obj);
}

static void drop(const store *s, void *obj)
{
    if (obj != NULL && s->free_obj != NULL)
        s->free_obj(obj);
}

void store_init(store *s, store_free_fn free_obj, store_key_fn key_of)
{
    memset(s, 0, sizeof(*s));
    s->free_obj = free_obj;
    s->key_of = key_of;
}

void store_free(store *s)
{
    for (size_t i = 0; i < s->cap; i++) {
        if (s->slots[i].key != NULL) {
            if (!borrowed(s, &s->slots[i]))
                free(s->slots[i].key);
            drop(s, s->slots[i].obj);
        }
    }
    free(s->slots);
    store_init(s, s->free_obj, s->key_of);
}

static size_t find(const store *s, const char *key)
{
    size_t mask = s->cap - 1, i = (size_t)hash_key(key) & mask;
    while (s->slots[i].key != NULL && strcmp(s->slots[i].key, key) != 0)
        i = (i + 1) & mask;
    return i;
}

void *store_get(const store *s, const char *key)
{
    if (s->cap == 0)
        return NULL;
    size_t i = find(s, key);
    return s->slots[i].key != NULL ? s->slots[i].obj : NULL;
}

int store_has(const store *s, const char *key)
{
    return s->cap != 0 && s->slots[find(s, key)].key != NULL;
}

static int grow(store *s)
{
    size_t cap = s->cap == 0 ? 16 : s->cap * 2;
    store_slot *old = s->slots;
    size_t old_cap = s->cap;
    s->slots = calloc(cap, sizeof(*s->slots));
    if (s->slots == NULL) {
        s->slots = old;
        return -1;
    }
    s->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key != NULL)
            s->slots[find(s, old[i].key)] = old[i];
    free(old);
    return 0;
}

int store_put(store *s, const char *key, void *obj)
{
    if ((s->len + 1) * 4 > s->cap * 3 && grow(s) != 0) {
        drop(s, obj);
        return -1;
    }
    size_t i = find(s, key);
    /* Borrow the key when it is the object's own (obj outlives its slot);
     * copy it otherwise.  The cast: slots hold keys as char * for the
     * copies they own, and never write through a borrowed one. */
    char *k = obj != NULL && s->key_of != NULL && key == s->key_of(obj) ? (char *)(uintptr_t)key
                                                                          : NULL;
    store_slot *slot = &s->slots[i];
    if (slot->key != NULL) {
        if (k == NULL && borrowed(s, slot) && (k = strdup(key)) == NULL) {
            drop(s, obj);
            return -1;
        }
        if (k != NULL && !borrowed(s, slot))
            free(slot->key);
        if (k != NULL)
            slot->key = k;
        drop(s, slot->obj);
        slot->obj = obj;
        return 0;
    }
    if (k == NULL && (k = strdup(key)) == NULL) {
        drop(s, obj);
        return -1;
    }
    s->slots[i] = (store_slot){k, obj};
    s->len++;
    return 0;
}

void *store_take(store *s, const char *key)
{
    if (s->cap == 0)
        return NULL;
    size_t mask = s->cap - 1, i = find(s, key);
    if (s->slots[i].key == NULL)
        return NULL;
    void *obj = s->slots[i].obj;
    if (!borrowed(s, &s->slots[i]))
        free(s->slots[i].key);
    s->slots[i] = (store_slot){NULL, NULL};
    s->len--;
    /* Backward shift: move later members of the probe run into the hole
     * when their home slot is at or before it. */
    for (size_t j = (i + 1) & mask; s->slots[j].key != NULL; j = (j + 1) & mask) {
        size_t home = (size_t)hash_key(s->slots[j].key) & mask;
        int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            s->slots[i] = s->slots[j];
            s->slots[j] = (store_slot){NULL, NULL};
            i = j;
        }
    }
    return obj;
}

int store_delete(store *s, const char *key)
{
    /* A set's members hold NULL: take's result cannot say it was there. */
    if (!store_has(s, key))
        return 0;
    drop(s, store_take(s, key));
    return 1;
}

void *store_next(const store *s, size_t *i)
{
    for (; *i < s->cap; (*i)++) {
        if (s->slots[*i].obj != NULL)
            return s->slots[(*i)++].obj;
    }
    return NULL;
}

size_t store_retain(store *s, int (*keep)(const char *key, const void *obj, void *data),
                    void *data)
{
    size_t removed = 0;
    for (size_t i = 0; i < s->cap;) {
        const store_slot *slot = &s->slots[i];
        if (slot->key == NULL || keep(slot->key, slot->obj, data)) {
            i++;
            continue;
        }
        /* store_delete finds the slot by this very key and reads it no
         * more once it has freed it.  The backward shift may move a later
         * member into slot i: i stays, to look at it. */
        removed += (size_t)store_delete(s, slot->key);
    }
    return removed;
}

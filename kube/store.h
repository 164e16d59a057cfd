/*
 * store.h - a string-keyed hash map of kobj, the controller's caches.
 *
 * Keys are copied, except a key that is the object's own meta.uid (the
 * informers' caches, keyed by uid): the slot then points at the object's
 * uid, 48 bytes less per pod.  So code that reaches into slots must not
 * detach an object from a slot whose key is its uid.  Values are owned by
 * the store (kobj_free on replace, delete and store_free).  Open addressing with linear probing and
 * backward-shift deletion, so there are no tombstones to clean.
 */
#ifndef OTA_STORE_H
#define OTA_STORE_H

#include <stddef.h>

#include "kobj.h"

typedef struct store_slot {
    char *key;
    kobj *obj;
} store_slot;

typedef struct store {
    store_slot *slots;
    size_t cap, len; /* cap is 0 or a power of two */
} store;

void store_init(store *s);
void store_free(store *s);

kobj *store_get(const store *s, const char *key);
/* The key is there (its object may be NULL: a store can be a set). */
int store_has(const store *s, const char *key);
/* Inserts or replaces (freeing the old object).  0 or -1 (out of memory,
 * in which case obj is freed too). */
int store_put(store *s, const char *key, kobj *obj);
/* Removes and frees; returns 1 if it was there. */
int store_delete(store *s, const char *key);
/* Removes without freeing and returns the object, or NULL. */
kobj *store_take(store *s, const char *key);

/* Iteration: for (size_t i = 0; store_next(s, &i, &obj);) ... ; do not
 * insert while iterating (deleting the current entry is not allowed either). */
int store_next(const store *s, size_t *i, kobj **obj);

#endif

/*
 * store.h - a string-keyed hash map of objects: the informers' caches and
 * the controller's own maps and sets.
 *
 * A store holds any kind of object as void *: it is told at store_init how
 * to free one and, optionally, where an object keeps its own key.  Keys
 * are copied, except a key that is the object's own (key(obj) itself, as
 * the informers put objects under their uid): the slot then points at the
 * object's copy, 48 bytes less per pod.  So code that reaches into slots
 * must not detach an object from a slot whose key is its own.  Values are
 * owned by the store (freed on replace, delete and store_free).  Open
 * addressing with linear probing and backward-shift deletion, so there are
 * no tombstones to clean.
 */
#ifndef OTA_STORE_H
#define OTA_STORE_H

#include <stddef.h>

/* Frees an object the store lets go of. */
typedef void (*store_free_fn)(void *obj);
/* The object's own key: a string inside obj that lives as long as it. */
typedef const char *(*store_key_fn)(const void *obj);

typedef struct store_slot {
    char *key;
    void *obj;
} store_slot;

typedef struct store {
    store_slot *slots;
    size_t cap, len; /* cap is 0 or a power of two */
    store_free_fn free_obj; /* NULL: the values are not owned (a set's are NULL) */
    store_key_fn key_of;    /* NULL: every key is copied */
} store;

/* An empty store of objects freed with free_obj, whose own keys key_of
 * finds (either may be NULL, see above). */
void store_init(store *s, store_free_fn free_obj, store_key_fn key_of);
/* Frees every key and object; the store is empty and ready for use again,
 * with the same functions. */
void store_free(store *s);

void *store_get(const store *s, const char *key);
/* The key is there (its object may be NULL: a store can be a set). */
int store_has(const store *s, const char *key);
/* Inserts or replaces (freeing the old object).  0 or -1 (out of memory,
 * in which case obj is freed too). */
int store_put(store *s, const char *key, void *obj);
/* Removes and frees; returns 1 if it was there. */
int store_delete(store *s, const char *key);
/* Removes without freeing and returns the object, or NULL. */
void *store_take(store *s, const char *key);

/* Removes and frees every entry for which keep(key, obj, data) is 0;
 * returns how many went.  keep must not change the store and must answer
 * the same for an entry each time: it may be asked twice about one (a
 * removal shifts later members of a probe run back, so the walk looks at
 * the slot again).  Needs no memory, so it cannot fail. */
size_t store_retain(store *s, int (*keep)(const char *key, const void *obj, void *data),
                    void *data);

/* Iteration over the objects: for (size_t i = 0; (o = store_next(s, &i)) != NULL;)
 * ... ; a key whose object is NULL (a set's member) is passed over.  Do not
 * insert while iterating (deleting the current entry is not allowed
 * either). */
void *store_next(const store *s, size_t *i);

#endif

/*
 * strset.h - a set of strings: the sets of action keys the executor keeps
 * (workset.h: in flight, held back, Events sent) and reconcile reads.
 *
 * A thin wrapper over store (a store whose values are all NULL), under its
 * own type so that a set cannot be handed where a cache of objects is
 * wanted, nor a cache where a set is.  Keys are copied.
 */
#ifndef OTA_STRSET_H
#define OTA_STRSET_H

#include <stddef.h>

#include "store.h"

typedef struct strset {
    store map; /* every value NULL */
} strset;

void strset_init(strset *s);
/* Frees every key; the set is empty and ready for use again. */
void strset_free(strset *s);

int strset_has(const strset *s, const char *key);
/* Adds key (a copy); adding a member again changes nothing.  0, or -1 when
 * out of memory (the set is unchanged). */
int strset_add(strset *s, const char *key);
/* Removes key; returns 1 if it was there, else 0. */
int strset_remove(strset *s, const char *key);
size_t strset_len(const strset *s);
/* Removes every key for which keep(key, data) is 0; returns how many went.
 * keep may be asked twice about a key (store_retain). */
size_t strset_retain(strset *s, int (*keep)(const char *key, void *data), void *data);

#endif

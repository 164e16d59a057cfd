/*
 * workset.c - see workset.h.  The held keys are a set (for the question
 * "held?") and an array of (key, until) (for the expiry walk); the array
 * owns its keys, the set its own copies.
 */
#include "workset.h"

#include <stdlib.h>
#include <string.h>

void workset_init(workset *w)
{
    memset(w, 0, sizeof(*w));
    strset_init(&w->in_flight);
    strset_init(&w->held);
    strset_init(&w->settled);
}

void workset_free(workset *w)
{
    strset_free(&w->in_flight);
    strset_free(&w->held);
    strset_free(&w->settled);
    for (size_t i = 0; i < w->n_holds; i++)
        free(w->holds[i].key);
    free(w->holds);
    workset_init(w);
}

int workset_may_add(const workset *w, const char *key)
{
    return !strset_has(&w->in_flight, key) && !strset_has(&w->held, key) &&
           !strset_has(&w->settled, key);
}

int workset_add(workset *w, const char *key)
{
    return strset_add(&w->in_flight, key);
}

void workset_done(workset *w, const char *key)
{
    strset_remove(&w->in_flight, key);
}

void workset_hold_until(workset *w, const char *key, uint64_t until)
{
    if (strset_has(&w->held, key))
        return;
    if (w->n_holds == w->cap_holds) {
        size_t cap = w->cap_holds == 0 ? 64 : w->cap_holds * 2;
        workset_hold *grown = realloc(w->holds, cap * sizeof(*grown));
        if (grown == NULL)
            return;
        w->holds = grown;
        w->cap_holds = cap;
    }
    char *k = strdup(key);
    if (k == NULL || strset_add(&w->held, key) != 0) {
        free(k);
        return;
    }
    w->holds[w->n_holds++] = (workset_hold){k, until};
}

int workset_settle(workset *w, const char *key)
{
    return strset_add(&w->settled, key);
}

int workset_expire(workset *w, uint64_t now)
{
    /* The holds not due move to the front, in their order; those due end
     * up behind them, to be let go. */
    size_t kept = 0;
    for (size_t i = 0; i < w->n_holds; i++) {
        if (w->holds[i].until > now) {
            workset_hold h = w->holds[kept];
            w->holds[kept++] = w->holds[i];
            w->holds[i] = h;
        }
    }
    int fell_due = kept != w->n_holds;
    for (size_t i = kept; i < w->n_holds; i++) {
        strset_remove(&w->held, w->holds[i].key);
        free(w->holds[i].key);
    }
    w->n_holds = kept;
    return fell_due;
}

size_t workset_forget(workset *w, int (*keep)(const char *key, void *data), void *data)
{
    return strset_retain(&w->settled, keep, data);
}

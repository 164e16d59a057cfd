/*
 * pullq.c - see pullq.h.  The pulls per node are a store of counts (the
 * value is the count itself, not a pointer), so a pass over a thousand
 * nodes asks a hash, not a list.
 */
#include "pullq.h"

#include <stdint.h>
#include <string.h>

void pullq_init(pullq *q, size_t cap, size_t per_node)
{
    memset(q, 0, sizeof(*q));
    q->cap = cap;
    q->per_node = per_node;
    store_init(&q->per_node_busy, NULL, NULL);
}

void pullq_free(pullq *q)
{
    store_free(&q->per_node_busy);
}

static size_t busy_on(const pullq *q, const char *node)
{
    return node != NULL ? (size_t)(uintptr_t)store_get(&q->per_node_busy, node) : 0;
}

static void add_on(pullq *q, const char *node)
{
    if (node == NULL)
        return;
    /* a count of 0 is never stored: store_get's NULL reads as 0 */
    if (store_put(&q->per_node_busy, node, (void *)(uintptr_t)(busy_on(q, node) + 1)) != 0)
        q->failed = 1;
}

void pullq_occupy(pullq *q, const char *node, int global)
{
    if (global)
        q->running++;
    add_on(q, node);
}

int pullq_cmp(const void *a, const void *b)
{
    const pullq_unit *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    int c = strcmp(x->queued, y->queued);
    return c != 0 ? c : strcmp(x->id, y->id);
}

pullq_verdict pullq_admit(const pullq *q, const pullq_unit *u)
{
    /* Waiting for a node comes first: such a unit takes no slot, so it
     * holds back no one behind it, and it says what it really waits for. */
    if (u->node_state == PULLQ_NODE_NOT_READY)
        return PULLQ_WAIT_NODE;
    /* Out of memory the counts are short: waiting is the safe answer, the
     * next pass decides again. */
    if (q->failed || (q->cap > 0 && q->running >= q->cap))
        return PULLQ_WAIT_CAP;
    /* The last slot of a cap of two or more is the interactive class's:
     * the order puts a node user's request first among those waiting, and
     * this keeps a slot free for it, so it never waits for a fleet-wide
     * Job to end (which may take that Job's whole deadline). */
    if (u->cls != PULLQ_INTERACTIVE && q->cap >= 2 && q->running + PULLQ_INTERACTIVE_RESERVE >= q->cap)
        return PULLQ_WAIT_CAP;
    /* A unit whose node is being read holds its global slot (FIFO: no
     * later unit passes it) and its node's, whatever it turns out to be. */
    if (u->node_state == PULLQ_NODE_UNKNOWN)
        return PULLQ_HOLD;
    if (q->per_node > 0 && busy_on(q, u->node) >= q->per_node)
        return PULLQ_WAIT_NODE_SLOT;
    return PULLQ_START;
}

void pullq_take(pullq *q, const pullq_unit *u)
{
    pullq_occupy(q, u->node, 1);
}

const char *pullq_verdict_name(pullq_verdict v)
{
    switch (v) {
    case PULLQ_START:
        return "start";
    case PULLQ_HOLD:
        return "hold";
    case PULLQ_WAIT_CAP:
        return "wait-cap";
    case PULLQ_WAIT_NODE_SLOT:
        return "wait-node-slot";
    case PULLQ_WAIT_NODE:
        return "wait-node";
    }
    return "?";
}

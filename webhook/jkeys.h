/*
 * jkeys.h - the keys of each open JSON object, so that a key that repeats
 * in one object is found (issue 19: the webhook read the first of two
 * `groups` and merged, Kubernetes' decoder keeps the last, so the two read
 * different objects).
 *
 * Both decode paths of webhook/review.c ask it about every key of the body,
 * read or skipped: jscan.c from its loop, the reference path from yajl's
 * callbacks.  Keys are compared decoded (`"a"` and `"\u0061"` are one key).
 *
 * Cost and bounds: the keys of every object still open are kept (a view
 * into the text, or a copy of a key that had escapes), and dropped when
 * the object closes; an object of up to JKEYS_LINEAR keys is searched
 * linearly (length first), a larger one through a hash index keyed with a
 * per-process random seed (SipHash-1-3), so a hostile body cannot make its
 * keys collide.  Work is linear in the number of keys, memory at most 16
 * bytes per open key plus 8 per indexed one, freed by jkeys_free(); nesting
 * is bounded by JKEYS_MAX_DEPTH objects, as the decoders bound it anyway.
 */
#ifndef OTA_JKEYS_H
#define OTA_JKEYS_H

#include <stddef.h>
#include <stdint.h>

#define JKEYS_MAX_DEPTH 256
#define JKEYS_LINEAR 16 /* keys an object holds before it gets an index */
#define JKEYS_INLINE 64 /* keys held without an allocation */

typedef struct jkeys_entry {
    uint32_t off;    /* in the text, or in the copies when copied */
    uint32_t len;    /* bit 31: copied */
    uint32_t hash;   /* of a key of an indexed object */
    uint32_t unused; /* keeps the entry 16 bytes */
} jkeys_entry;

typedef struct jkeys {
    const unsigned char *text; /* a key within text[0..text_len) is kept by view */
    size_t text_len;
    jkeys_entry *keys; /* of every open object, the innermost's last */
    size_t n, cap;
    uint32_t *slots; /* index of the indexed objects' keys: entry + 1, or 0 */
    size_t nslots, indexed;
    unsigned char *copies; /* keys that lie outside the text */
    size_t ncopies, capcopies;
    int depth;
    struct {
        uint32_t begin, copies; /* first entry and copy byte of the object */
        int indexed;
    } level[JKEYS_MAX_DEPTH];
    jkeys_entry inline_keys[JKEYS_INLINE];
} jkeys;

/* Ready for a body; keys inside text[0..len) are kept without a copy. */
void jkeys_init(jkeys *k, const char *text, size_t len);

/* An object opens: 0, or -1 past JKEYS_MAX_DEPTH objects. */
int jkeys_open(jkeys *k);

/* A key of the innermost open object: 0 when it is new, 1 when the object
 * already has it, -1 when out of memory (or the text is over 4 GiB). */
int jkeys_add(jkeys *k, const unsigned char *key, size_t len);

/* The innermost open object closes: its keys are forgotten. */
void jkeys_close(jkeys *k);

/* Frees what jkeys_add() allocated; k can be initialised again. */
void jkeys_free(jkeys *k);

#endif

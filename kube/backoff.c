/*
 * backoff.c - see backoff.h.
 */
#include "backoff.h"

#include <stdatomic.h>
#include <time.h>

/* splitmix64 (Steele, Lea, Flood): one add and a mix per number, good
 * enough to decorrelate retries. */
static uint64_t splitmix64(void *ctx)
{
    uint64_t *s = ctx;
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int backoff_init(backoff *b, uint64_t base_ns, uint64_t cap_ns, backoff_rand_fn rand_fn, void *ctx)
{
    if (base_ns == 0 || cap_ns < base_ns)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    b->base_ns = base_ns;
    b->cap_ns = cap_ns;
    b->attempt = 0;
    /* Two processes started together still differ in where b lives (ASLR)
     * and in the nanoseconds; two backoffs of one process also in a count,
     * mixed in, since time XOR address alone can coincide. */
    static atomic_uint_fast64_t made;
    uint64_t n = (uint64_t)atomic_fetch_add(&made, 1);
    b->seed = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^ (uint64_t)(uintptr_t)b;
    b->seed ^= splitmix64(&n);
    b->rand = rand_fn;
    b->rand_ctx = ctx;
    return 0;
}

uint64_t backoff_next(backoff *b)
{
    uint64_t d = b->base_ns;
    for (unsigned i = 0; i < b->attempt && d < b->cap_ns; i++)
        d = d > b->cap_ns / 2 ? b->cap_ns : d * 2;
    if (d > b->cap_ns)
        d = b->cap_ns;
    if (b->attempt < 64) /* past 64 doublings d is the cap anyway */
        b->attempt++;
    uint64_t half = d / 2;
    uint64_t span = d - half; /* the random part: 0..span inclusive */
    uint64_t r = b->rand != NULL ? b->rand(b->rand_ctx) : splitmix64(&b->seed);
    return half + (span == UINT64_MAX ? r : r % (span + 1));
}

void backoff_reset(backoff *b)
{
    b->attempt = 0;
}

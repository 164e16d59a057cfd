/*
 * backoff.h - how long to wait before trying again: exponential (factor 2
 * from a base up to a cap) with "equal jitter", for reconnecting watches
 * and retrying API calls after 5xx and broken connections.
 *
 * Equal jitter waits d/2 plus a random part of up to d/2, where d is the
 * exponential delay.  "Full jitter" (a random wait in 0..d) spreads a large
 * fleet of clients best, but this is one controller with a handful of
 * watches; what matters more here is that a retry against an apiserver that
 * is down never comes almost at once, and equal jitter keeps that floor of
 * d/2 while still pulling the watches of one process (and of two
 * controller replicas) apart.  client-go's reflector uses 800 ms to 30 s.
 *
 * The random source is injectable so tests can pin it; without one, each
 * backoff has its own splitmix64 generator seeded at init.  Times are
 * nanoseconds.  Not thread-safe: one backoff per retrying thing.
 */
#ifndef OTA_BACKOFF_H
#define OTA_BACKOFF_H

#include <stdint.h>

/* 64 uniformly random bits. */
typedef uint64_t (*backoff_rand_fn)(void *ctx);

typedef struct backoff {
    uint64_t base_ns, cap_ns;
    unsigned attempt; /* retries handed out since init or the last reset */
    backoff_rand_fn rand;
    void *rand_ctx;
    uint64_t seed; /* the built-in generator's state */
} backoff;

/* base_ns > 0 and cap_ns >= base_ns, else it returns -1.  rand_fn may be NULL
 * (the built-in generator); ctx is passed to it. */
int backoff_init(backoff *b, uint64_t base_ns, uint64_t cap_ns, backoff_rand_fn rand_fn, void *ctx);

/* The wait before the next try: with d = min(cap, base * 2^attempt), a
 * value in [d/2, d]; then counts the attempt. */
uint64_t backoff_next(backoff *b);

/* After a success: the next wait starts from base again. */
void backoff_reset(backoff *b);

#endif

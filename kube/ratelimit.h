/*
 * ratelimit.h - the client-side rate limit on calls to the kube-apiserver,
 * as client-go has it (--kube-api-qps 20, --kube-api-burst 30): a token
 * bucket that starts full, holds at most burst tokens and refills at qps
 * tokens a second; every call takes one token, and a call that finds none
 * waits until a token has been refilled.  Unlike golang.org/x/time/rate's
 * Reserve (client-go's token bucket), a token is taken only when a call
 * goes out, never reserved ahead (see ratelimit_take).
 *
 * A 429 answer pauses every call until its Retry-After has passed; after
 * the pause calls resume at the steady rate, not with a burst, so a server
 * that just said it is overloaded is not hit with 30 calls at once.
 *
 * The clock is the caller's: monotonic nanoseconds passed in, so tests need
 * no sleeping.  Not thread-safe: one limiter per event loop.
 */
#ifndef OTA_RATELIMIT_H
#define OTA_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#define RATELIMIT_DEFAULT_QPS 20.0
#define RATELIMIT_DEFAULT_BURST 30
/* Longest Retry-After we honour; a longer one is cut to this. */
#define RATELIMIT_RETRY_AFTER_MAX_S 600

typedef struct ratelimit {
    double qps, burst;
    double tokens;    /* 0..burst */
    uint64_t last_ns; /* when tokens was right; in the future during a pause */
} ratelimit;

/* qps > 0 and burst >= 1, else -1.  The bucket is full at now_ns. */
int ratelimit_init(ratelimit *r, double qps, int burst, uint64_t now_ns);

/* Takes a token for a call about to go out at now_ns: returns 0 when one
 * was there (taken: send now), else how many nanoseconds until one will be
 * (> 0, nothing taken: ask again then).  No token is ever promised ahead
 * (client-go's Wait reserves one; a queue of N calls that each reserved
 * would hold N future slots, and a call dropped or outranked later could
 * not give its slot to another): the bucket never goes below zero, so the
 * caller can choose at each slot which call goes out. */
uint64_t ratelimit_take(ratelimit *r, uint64_t now_ns);

/* No call goes out before until_ns (a 429's Retry-After); afterwards calls
 * resume one token at a time.  A pause never shortens an earlier one. */
void ratelimit_pause_until(ratelimit *r, uint64_t now_ns, uint64_t until_ns);

/*
 * Reads a Retry-After header value v[0..len): delay-seconds ("5") or an
 * HTTP-date in any of the three forms RFC 9110 §5.6.7 makes recipients
 * accept ("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37
 * GMT", "Sun Nov  6 08:49:37 1994"), a date being turned into seconds from
 * now_unix (wall-clock seconds since the epoch).  Surrounding blanks and
 * CR/LF are ignored, so the rest of a header line as libcurl passes it
 * (" 5\r\n") can be given as it is.  Sets *seconds to the wait bounded to
 * 0..RATELIMIT_RETRY_AFTER_MAX_S (a date in the past is 0) and returns 0, or returns -1 when v is
 * neither.
 */
int ratelimit_parse_retry_after(const char *v, size_t len, int64_t now_unix, unsigned *seconds);

#endif

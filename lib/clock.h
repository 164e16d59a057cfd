/*
 * clock.h - the two clocks of both programs.
 *
 * Timers and durations use the monotonic clock (it never jumps when NTP
 * steps the wall clock); what goes on the wire uses the wall clock in the
 * RFC 3339 UTC spellings Kubernetes writes: metav1.Time with seconds
 * (condition and Event times) and metav1.MicroTime (Lease times).
 */
#ifndef OTA_CLOCK_H
#define OTA_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "sv.h"

/* Monotonic nanoseconds, the clock of every timer and latency. */
uint64_t clock_mono_ns(void);

/* Now as RFC 3339 UTC with second precision ("2026-11-21T21:00:00Z") into
 * buf (at least 21 bytes). */
void clock_rfc3339(char *buf, size_t size);

/* secs (since 1970, UTC) as RFC 3339 with second precision into buf (at
 * least 21 bytes), the year always four digits ("0999-...", which strftime's
 * %Y would write as "999"); years outside 0..9999 give -1 and "" in buf. */
int clock_format_rfc3339(long long secs, char *buf, size_t size);

/* Now as RFC 3339 UTC with microseconds ("2026-11-21T21:00:00.123456Z"),
 * as Lease times are written, into buf (at least 28 bytes). */
void clock_rfc3339_micro(char *buf, size_t size);

/*
 * Reads an RFC 3339 time as metav1.Time and metav1.MicroTime accept it:
 * "2006-01-02T15:04:05" with every field of fixed width and in range (the
 * day within its month, no leap second), an optional fraction of one or
 * more digits after a '.', then "Z" or an offset "+07:00" / "-07:00".
 * Upper-case T and Z only, nothing before or after.  Writes the seconds
 * since 1970 (UTC, the fraction dropped: metav1.Time is whole seconds) to
 * *secs and returns 0, or returns -1 (*secs untouched).  The one reader of
 * times both programs compare: the webhook's request stamp and the
 * controller's conditions and Jobs.
 */
int clock_parse_rfc3339(sv text, long long *secs);

#endif

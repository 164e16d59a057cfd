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

/* Monotonic nanoseconds, the clock of every timer and latency. */
uint64_t clock_mono_ns(void);

/* Now as RFC 3339 UTC with second precision ("2026-11-21T21:00:00Z") into
 * buf (at least 21 bytes). */
void clock_rfc3339(char *buf, size_t size);

/* Now as RFC 3339 UTC with microseconds ("2026-11-21T21:00:00.123456Z"),
 * as Lease times are written, into buf (at least 28 bytes). */
void clock_rfc3339_micro(char *buf, size_t size);

#endif

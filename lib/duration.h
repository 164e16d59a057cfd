/*
 * duration.h - duration flags in the syntax of Go's time.ParseDuration (what
 * controller-runtime, the Kubernetes components and kubectl accept: "15s",
 * "10m", "1h30m", "500ms", "1.5h") and plain seconds ("600", "0.5"):
 * ota-controller's leader-election and resync flags, kubectl-ota's
 * --timeout.
 *
 * Pure: no I/O.  The webhook's few time flags are named in seconds
 * (--shutdown-grace-seconds) and keep whole numbers.
 */
#ifndef OTA_DURATION_H
#define OTA_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Parses s into *ns.  Units: ns, us (or µs), ms, s, m, h; a number
 * without a unit is seconds.  No sign, no spaces.  The value must lie in
 * [min_ns, max_ns].  0, or -1 with a message into err naming the units
 * and the bounds (e.g. `wants a duration such as 15s, 10m or 1h30m (plain
 * numbers are seconds) from 1s to 24h0m0s, got "10x"`). */
int duration_parse(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *ns, char *err,
                   size_t errlen);

/* ns in Go's shortest form ("1h30m0s", "500ms", "0s") into buf. */
void duration_format(uint64_t ns, char *buf, size_t len);

#endif

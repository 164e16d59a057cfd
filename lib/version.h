/*
 * version.h - the version and commit each program prints (--version, the
 * log line at start, the build_info metric).  The Makefile defines both
 * for the programs' main objects alone (VERSION_DEFS, so a new commit
 * rebuilds three objects, not the tree); a compile without them (an IDE,
 * a hand-run cc) gets these stand-ins.  Include it from a main.c only:
 * elsewhere it would always give the stand-ins.
 */
#ifndef OTA_VERSION_H
#define OTA_VERSION_H

#ifndef OTA_VERSION
#define OTA_VERSION "0.0.0"
#endif
#ifndef OTA_COMMIT
#define OTA_COMMIT "unknown"
#endif

#endif

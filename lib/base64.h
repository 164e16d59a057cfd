/*
 * base64.h - RFC 4648 base64 with padding, the encoding of
 * AdmissionResponse.patch (a []byte in Go's JSON).
 */
#ifndef OTA_BASE64_H
#define OTA_BASE64_H

#include <stddef.h>

#include "arena.h"

/* Encodes src[0..n) into arena memory, NUL-terminated; *out_len excludes
 * the NUL.  NULL when out of memory. */
char *base64_encode(arena *a, const void *src, size_t n, size_t *out_len);

/* Decodes base64 (padding optional, whitespace ignored) into a malloc'd,
 * NUL-terminated buffer the caller frees; *out_len excludes the NUL.  NULL
 * when the input is not base64 or memory runs out. */
char *base64_decode_malloc(const char *src, size_t n, size_t *out_len);

#endif

/*
 * jgen.h - two conveniences over yajl_gen for code that writes Kubernetes
 * objects: emit a C string, and take the finished text as a malloc'd,
 * NUL-terminated string (freeing the generator).
 */
#ifndef OTA_JGEN_H
#define OTA_JGEN_H

#include <string.h>

#include <yajl/yajl_gen.h>

static inline yajl_gen_status jgen_str(yajl_gen g, const char *s)
{
    return yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

/* The generated text (caller frees), or NULL; frees g either way. */
char *jgen_take(yajl_gen g);

#endif

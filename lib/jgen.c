/*
 * jgen.c - see jgen.h.
 */
#include "jgen.h"

#include <stdlib.h>

char *jgen_take(yajl_gen g)
{
    const unsigned char *buf;
    size_t len;
    char *out = NULL;
    if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok && (out = malloc(len + 1)) != NULL) {
        memcpy(out, buf, len);
        out[len] = '\0';
    }
    yajl_gen_free(g);
    return out;
}

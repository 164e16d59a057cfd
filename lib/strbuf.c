/*
 * strbuf.c - see strbuf.h.
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void strbuf_printf(strbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->data != NULL ? b->data + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            if (b->data != NULL)
                b->data[b->len] = '\0'; /* whatever vsnprintf left is not ours */
            b->failed = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap == 0 ? 4096 : b->cap * 2;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (p == NULL) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
}

void strbuf_free(strbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

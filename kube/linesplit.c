/*
 * linesplit.c - see linesplit.h.  The buffer holds max_line + 1 bytes: a
 * line of exactly max_line bytes may have its '\r' buffered before the '\n'
 * arrives in the next piece.
 */
#include "linesplit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int linesplit_init(linesplit *ls, size_t max_line)
{
    memset(ls, 0, sizeof(*ls));
    if (max_line == 0 || max_line == (size_t)-1)
        return -1;
    ls->buf = malloc(max_line + 1);
    if (ls->buf == NULL)
        return -1;
    ls->max_line = max_line;
    return 0;
}

void linesplit_free(linesplit *ls)
{
    free(ls->buf);
    memset(ls, 0, sizeof(*ls));
}

void linesplit_reset(linesplit *ls)
{
    ls->len = 0;
    ls->state = 0;
}

size_t linesplit_pending(const linesplit *ls)
{
    return ls->len;
}

static int too_long(linesplit *ls, char *err, size_t errlen)
{
    ls->state = -1;
    ls->len = 0;
    if (errlen > 0)
        snprintf(err, errlen, "line longer than %zu bytes", ls->max_line);
    return -1;
}

int linesplit_feed(linesplit *ls, const char *p, size_t n, linesplit_fn fn, void *data, char *err,
                   size_t errlen)
{
    if (ls->state != 0) {
        if (errlen > 0)
            snprintf(err, errlen, "line splitter %s; reset it first",
                     ls->state < 0 ? "failed on a line that was too long" : "was stopped");
        return -1;
    }
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        if (nl == NULL) {
            /* An unfinished line: keep it, unless it is already too long
             * (max_line bytes plus a '\r' that may precede the '\n'). */
            size_t total = ls->len + n;
            if (total > ls->max_line + 1 || (total == ls->max_line + 1 && p[n - 1] != '\r'))
                return too_long(ls, err, errlen);
            memcpy(ls->buf + ls->len, p, n);
            ls->len = total;
            return 0;
        }
        size_t k = (size_t)(nl - p);
        const char *line = p;
        size_t len = k;
        if (ls->len > 0) {
            if (ls->len + k > ls->max_line + 1)
                return too_long(ls, err, errlen);
            memcpy(ls->buf + ls->len, p, k);
            line = ls->buf;
            len = ls->len + k;
        }
        if (len > 0 && line[len - 1] == '\r')
            len--;
        if (len > ls->max_line)
            return too_long(ls, err, errlen);
        ls->len = 0;
        p = nl + 1;
        n -= k + 1;
        if (len > 0 && fn(data, line, len) != 0) {
            ls->state = 1;
            return 1;
        }
    }
    return 0;
}

/*
 * linesplit.c - see linesplit.h.  The buffer grows to at most max_line + 1
 * bytes: a line of exactly max_line bytes may have its '\r' buffered before
 * the '\n' arrives in the next piece.
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

/* Room for need bytes (at most max_line + 1) in the buffer, doubling from
 * LINESPLIT_KEEP / 16: 0, or -1 (out of memory) with the splitter failed. */
static int reserve(linesplit *ls, size_t need, char *err, size_t errlen)
{
    if (need <= ls->cap)
        return 0;
    size_t cap = ls->cap > 0 ? ls->cap : LINESPLIT_KEEP / 16;
    while (cap < need) /* doubling, up to the bound (need never passes it) */
        cap = cap > (ls->max_line + 1) / 2 ? ls->max_line + 1 : cap * 2;
    if (cap > ls->max_line + 1)
        cap = ls->max_line + 1;
    char *b = realloc(ls->buf, cap);
    if (b == NULL) {
        ls->state = -1;
        ls->len = 0;
        if (errlen > 0)
            snprintf(err, errlen, "out of memory for a line of %zu bytes", need);
        return -1;
    }
    ls->buf = b;
    ls->cap = cap;
    return 0;
}

/* After a line gathered in the buffer: a buffer grown past LINESPLIT_KEEP
 * (one large object) is given back rather than held for the stream's life. */
static void shrink(linesplit *ls)
{
    if (ls->cap > LINESPLIT_KEEP) {
        free(ls->buf);
        ls->buf = NULL;
        ls->cap = 0;
    }
}

int linesplit_feed(linesplit *ls, const char *p, size_t n, linesplit_fn fn, void *data, char *err,
                   size_t errlen)
{
    if (ls->state != 0) {
        if (errlen > 0)
            snprintf(err, errlen, "line splitter %s; reset it first",
                     ls->state < 0 ? "failed on a line that was too long or had no memory"
                                   : "was stopped");
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
            if (reserve(ls, total, err, errlen) != 0)
                return -1;
            memcpy(ls->buf + ls->len, p, n);
            ls->len = total;
            return 0;
        }
        size_t k = (size_t)(nl - p);
        const char *line = p;
        size_t len = k;
        int gathered = ls->len > 0;
        if (gathered) {
            if (ls->len + k > ls->max_line + 1)
                return too_long(ls, err, errlen);
            if (reserve(ls, ls->len + k, err, errlen) != 0)
                return -1;
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
        int stop = len > 0 && fn(data, line, len) != 0;
        if (gathered)
            shrink(ls);
        if (stop) {
            ls->state = 1;
            return 1;
        }
    }
    return 0;
}

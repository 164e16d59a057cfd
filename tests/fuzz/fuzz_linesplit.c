/*
 * fuzz_linesplit.c - the controller's watch-line splitter (kube/linesplit.c)
 * on a stream cut into pieces the input chooses.
 *
 * Input: one byte giving the longest line allowed (1..256), one byte seeding
 * the piece sizes, then the stream.  Properties: the lines come out the same
 * whether the stream arrives whole or in pieces (or the splitter fails on
 * both with a line too long); no line is empty, longer than the bound or
 * holds a '\n'; a line never ends in the '\r' of a "\r\n"; and what it
 * passed on, with the terminators put back, is the stream up to the last
 * '\n' less its empty lines.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "linesplit.h"

typedef struct lines {
    char *text; /* each line followed by '\n' */
    size_t len, cap;
    size_t max_line;
} lines;

static int on_line(void *data, const char *line, size_t len)
{
    lines *l = data;
    FUZZ_CHECK(len > 0 && len <= l->max_line, "line of %zu bytes (max %zu)", len, l->max_line);
    FUZZ_CHECK(memchr(line, '\n', len) == NULL, "a line holds a newline");
    if (l->len + len + 1 > l->cap) {
        l->cap = (l->len + len + 1) * 2;
        l->text = realloc(l->text, l->cap);
        FUZZ_CHECK(l->text != NULL, "out of memory");
    }
    memcpy(l->text + l->len, line, len);
    l->len += len;
    l->text[l->len++] = '\n';
    return 0;
}

/* Feeds s[0..n) in pieces of sizes from a small generator; returns the
 * last linesplit_feed result that was not 0, or 0. */
static int run(const char *s, size_t n, size_t max_line, unsigned seed, lines *out)
{
    linesplit ls;
    FUZZ_CHECK(linesplit_init(&ls, max_line) == 0, "out of memory");
    memset(out, 0, sizeof(*out));
    out->max_line = max_line;
    int rc = 0;
    size_t off = 0;
    unsigned x = seed * 2654435761u + 1;
    while (off < n && rc == 0) {
        x = x * 1103515245u + 12345u;
        size_t piece = seed == 0 ? n : 1 + (x >> 16) % 17;
        if (piece > n - off)
            piece = n - off;
        /* each piece in a buffer of its own size: ASan sees an overread */
        char *p = malloc(piece);
        FUZZ_CHECK(p != NULL, "out of memory");
        memcpy(p, s + off, piece);
        char err[128];
        rc = linesplit_feed(&ls, p, piece, on_line, out, err, sizeof(err));
        free(p);
        off += piece;
    }
    linesplit_free(&ls);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t max_line = (size_t)data[0] + 1;
    unsigned seed = (unsigned)data[1] | 1u;
    const char *s = (const char *)data + 2;
    size_t n = size - 2;
    lines whole, pieces;
    int rc_whole = run(s, n, max_line, 0, &whole);
    int rc_pieces = run(s, n, max_line, seed, &pieces);
    FUZZ_CHECK(rc_whole == rc_pieces, "whole: %d, in pieces: %d", rc_whole, rc_pieces);
    if (rc_whole == 0) {
        FUZZ_CHECK(whole.len == pieces.len && (whole.len == 0 || memcmp(whole.text, pieces.text, whole.len) == 0),
                   "the lines differ with the cut");
        /* the stream up to its last '\n', without "\r" before a '\n' and
         * without empty lines, is what came out */
        size_t k = n;
        while (k > 0 && s[k - 1] != '\n')
            k--;
        size_t o = 0, start = 0;
        for (size_t i = 0; i < k; i++) {
            if (s[i] != '\n')
                continue;
            size_t end = i > start && s[i - 1] == '\r' ? i - 1 : i;
            if (end > start) {
                FUZZ_CHECK(o + end - start + 1 <= whole.len &&
                               memcmp(whole.text + o, s + start, end - start) == 0 &&
                               whole.text[o + end - start] == '\n',
                           "line at byte %zu differs", start);
                o += end - start + 1;
            }
            start = i + 1;
        }
        FUZZ_CHECK(o == whole.len, "%zu bytes of lines, expected %zu", whole.len, o);
    }
    free(whole.text);
    free(pieces.text);
    return 0;
}

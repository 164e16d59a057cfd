/*
 * linesplit.h - cuts a watch stream into lines.
 *
 * A Kubernetes watch answers with one JSON event per line, and libcurl hands
 * the body over in whatever pieces the network produced: an event split
 * across reads, several events in one read.  The splitter takes those
 * pieces in order and calls back once per complete line, without its "\n"
 * or "\r\n"; empty lines are skipped.  A line that lies whole inside one
 * piece is passed as a pointer into that piece (no copy); only a line that
 * straddles pieces is gathered in the splitter's buffer, which grows as such
 * a line needs, up to the longest line allowed, and is given back after a
 * line that took it past LINESPLIT_KEEP: a watch allowed 8 MiB objects
 * holds a few KiB between them.  A longer line is an error (a watch that sends
 * one cannot be followed and must be restarted), after which the splitter
 * takes no input until linesplit_reset().
 */
#ifndef OTA_LINESPLIT_H
#define OTA_LINESPLIT_H

#include <stddef.h>

/* Called for each non-empty line; line[0..len) is valid only during the
 * call.  Return 0 to go on, anything else to stop (the rest of the piece
 * is dropped and the splitter needs a reset). */
typedef int (*linesplit_fn)(void *data, const char *line, size_t len);

/* The buffer kept between lines; past this it is freed after each line. */
#define LINESPLIT_KEEP ((size_t)64 * 1024)

typedef struct linesplit {
    char *buf;       /* the start of a line that straddles pieces; malloc, or NULL */
    size_t len;      /* bytes in buf */
    size_t cap;      /* bytes allocated at buf */
    size_t max_line; /* longest line allowed, terminator not counted */
    int state;       /* 0 taking input, 1 stopped by the callback, -1 line too long */
} linesplit;

/* Prepares a splitter for lines of at most max_line bytes (0 < max_line <
 * SIZE_MAX); allocates nothing yet.  Returns 0, or -1 for a bad max_line. */
int linesplit_init(linesplit *ls, size_t max_line);

/* Releases the buffer; the splitter can be initialised again. */
void linesplit_free(linesplit *ls);

/* Forgets any partial line and any error: ready for a new stream. */
void linesplit_reset(linesplit *ls);

/*
 * Feeds the next piece p[0..n) of the stream.  Returns 0 when all of it was
 * taken (a trailing partial line is kept for the next piece), 1 when the
 * callback stopped, or -1 with the reason in err (at most errlen bytes) when
 * a line is longer than max_line, there is no memory to gather it, or the
 * splitter already failed or stopped.
 */
int linesplit_feed(linesplit *ls, const char *p, size_t n, linesplit_fn fn, void *data, char *err,
                   size_t errlen);

/* Bytes of an unfinished line held from earlier pieces: non-zero at the
 * end of a stream means its last line was cut off. */
size_t linesplit_pending(const linesplit *ls);

#endif

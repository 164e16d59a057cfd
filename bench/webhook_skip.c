/*
 * webhook_skip.c - "beyond yajl": what a parse that skips the subtrees the
 * decision never reads would cost (docs/BENCHMARKS.md, "Webhook").
 *
 * Skipping a subtree of a hostile body still means checking it: a body
 * that is not JSON, or that two decoders read differently, must be refused
 * whatever subtree the flaw hides in (docs/DECISIONS.md, "Strict input").
 * So the prototype is a strict RFC 8259 checker without callbacks or
 * tokens, the least a skip can do: one forward pass, an explicit stack of
 * open containers (bounded at 100, as review.c), strings scanned eight
 * bytes at a time up to the next quote, backslash, control character or
 * byte from 0x80, and RFC 3629 UTF-8 checked in the same pass (so it
 * replaces jcheck_body() as well as yajl's lexer).  What ota-webhook reads
 * besides (two dozen short fields) would come on top; the decoder's own
 * work on them is measured by bench/webhook_decide.c.
 *
 * For each file it prints the CPU ns per body of yajl with empty callbacks,
 * of jcheck_body() + yajl (what ota-webhook pays for the bytes), and of this
 * checker; then checks that the checker accepts and refuses the same
 * inputs as jcheck_body() + yajl over every file given with --agree (the
 * fuzz corpora, tests/fuzz/corpus/).  It is a measurement, not the
 * webhook's parser: nothing in webhook/ uses it.
 *
 * --mutate N then checks agreement on N mutants of each file that follows
 * (a byte replaced by one of the JSON-significant ones, inserted or
 * deleted; a fixed seed, so a run repeats).
 *
 * Usage: webhook_skip FILE ... [--agree FILE ...] [--mutate N FILE ...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "jcheck.h"

#include "bench_util.h"

#define SKIP_MAX_DEPTH 100
#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The RFC 3629 sequence at s (s[0] >= 0x80): its length, or 0. */
static size_t utf8_len(const unsigned char *s, const unsigned char *end)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if ((size_t)(end - s) < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return n;
}

static int hex(unsigned char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                    : -1;
}

/* The code unit of \uXXXX at s (s points past the u), or -1. */
static long u4(const unsigned char *s, const unsigned char *end)
{
    if (end - s < 4)
        return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int d = hex(s[k]);
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/* A string, s just past its opening quote: past its closing quote, or NULL. */
static const unsigned char *string_end(const unsigned char *s, const unsigned char *end)
{
    for (;;) {
        while (end - s >= 8) {
            uint64_t w;
            memcpy(&w, s, 8);
            uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
            uint64_t m = ((w - ONES * 0x20) | w | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS;
            if (m != 0) {
                s += __builtin_ctzll(m) / 8;
                break;
            }
            s += 8;
        }
        if (s >= end)
            return NULL;
        unsigned char c = *s;
        if (c == '"')
            return s + 1;
        if (c < 0x20)
            return NULL;
        if (c >= 0x80) {
            size_t n = utf8_len(s, end);
            if (n == 0)
                return NULL;
            s += n;
            continue;
        }
        if (c != '\\') {
            s++;
            continue;
        }
        if (end - s < 2)
            return NULL;
        c = s[1];
        if (c == 'u') {
            long v = u4(s + 2, end);
            if (v < 0 || (v >= 0xdc00 && v <= 0xdfff))
                return NULL;
            s += 6;
            if (v >= 0xd800 && v <= 0xdbff) { /* a high surrogate wants its low half */
                if (end - s < 2 || s[0] != '\\' || s[1] != 'u')
                    return NULL;
                long lo = u4(s + 2, end);
                if (lo < 0xdc00 || lo > 0xdfff)
                    return NULL;
                s += 6;
            }
        } else if (strchr("\"\\/bfnrt", c) != NULL && c != '\0') {
            s += 2;
        } else {
            return NULL;
        }
    }
}

/* A number at s: past it, or NULL (RFC 8259 section 6). */
static const unsigned char *number_end(const unsigned char *s, const unsigned char *end)
{
    if (s < end && *s == '-')
        s++;
    if (s >= end)
        return NULL;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (s < end && *s >= '0' && *s <= '9')
            s++;
    else
        return NULL;
    if (s < end && *s == '.') {
        const unsigned char *d = ++s;
        while (s < end && *s >= '0' && *s <= '9')
            s++;
        if (s == d)
            return NULL;
    }
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < end && (*s == '+' || *s == '-'))
            s++;
        const unsigned char *d = s;
        while (s < end && *s >= '0' && *s <= '9')
            s++;
        if (s == d)
            return NULL;
    }
    return s;
}

static const unsigned char *skip_space(const unsigned char *s, const unsigned char *end)
{
    while (s < end && is_space(*s))
        s++;
    return s;
}

/* 0 when body[0..len) is exactly one JSON value (whitespace around it). */
static int skip_check(const char *body, size_t len)
{
    const unsigned char *s = (const unsigned char *)body, *end = s + len;
    char stack[SKIP_MAX_DEPTH]; /* '{' or '[' */
    int depth = 0;
    s = skip_space(s, end);
    for (;;) {
        /* a value */
        if (s >= end)
            return -1;
        switch (*s) {
        case '{':
        case '[':
            if (depth >= SKIP_MAX_DEPTH)
                return -1;
            stack[depth++] = (char)*s;
            s = skip_space(s + 1, end);
            if (s < end && *s == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
                s++;
                break;
            }
            if (stack[depth - 1] == '{') {
                if (s >= end || *s != '"' || (s = string_end(s + 1, end)) == NULL)
                    return -1;
                s = skip_space(s, end);
                if (s >= end || *s != ':')
                    return -1;
                s = skip_space(s + 1, end);
            }
            continue; /* the first member's value */
        case '"':
            s = string_end(s + 1, end);
            break;
        case 't':
            s = end - s >= 4 && memcmp(s, "true", 4) == 0 ? s + 4 : NULL;
            break;
        case 'f':
            s = end - s >= 5 && memcmp(s, "false", 5) == 0 ? s + 5 : NULL;
            break;
        case 'n':
            s = end - s >= 4 && memcmp(s, "null", 4) == 0 ? s + 4 : NULL;
            break;
        default:
            s = number_end(s, end);
            break;
        }
        if (s == NULL)
            return -1;
        /* after a value: a comma and the next member, or closing brackets */
        for (;;) {
            s = skip_space(s, end);
            if (depth == 0)
                return s == end ? 0 : -1;
            if (s >= end)
                return -1;
            char open = stack[depth - 1];
            if (*s == (open == '{' ? '}' : ']')) {
                depth--;
                s++;
                continue;
            }
            if (*s != ',')
                return -1;
            s = skip_space(s + 1, end);
            if (open == '{') {
                if (s >= end || *s != '"' || (s = string_end(s + 1, end)) == NULL)
                    return -1;
                s = skip_space(s, end);
                if (s >= end || *s != ':')
                    return -1;
                s = skip_space(s + 1, end);
            }
            break;
        }
    }
}

/* ---- the yajl side ------------------------------------------------------ */

/* yajl's own depth: a stack of maps and arrays; counted here with the same
 * bound so both sides refuse the same nesting. */
typedef struct {
    int depth, too_deep;
    yajl_handle h;
    size_t value_end; /* just past the top-level value, once it closed */
} depth_ctx;
static void mark_end(depth_ctx *d)
{
    if (d->depth == 0 && d->h != NULL)
        d->value_end = yajl_get_bytes_consumed(d->h);
}
static int on_scalar0(void *c)
{
    mark_end(c);
    return 1;
}
static int on_bool0(void *c, int b)
{
    (void)b;
    mark_end(c);
    return 1;
}
static int on_num0(void *c, const char *s, size_t n)
{
    (void)s;
    (void)n;
    mark_end(c);
    return 1;
}
static int on_str0(void *c, const unsigned char *s, size_t n)
{
    (void)s;
    (void)n;
    mark_end(c);
    return 1;
}
static int on_open(void *c)
{
    depth_ctx *d = c;
    if (++d->depth > SKIP_MAX_DEPTH) {
        d->too_deep = 1;
        return 0;
    }
    return 1;
}
static int on_close(void *c)
{
    ((depth_ctx *)c)->depth--;
    mark_end(c);
    return 1;
}
static const yajl_callbacks counting = {on_scalar0, on_bool0, NULL,     NULL,    on_num0, on_str0,
                                        on_open,    bench_ignore_string, on_close, on_open, on_close};

/* What ota-webhook accepts as bytes: jcheck_body() + yajl, nothing after
 * the value (review.c checks that with jcheck_skip_space; yajl refuses a
 * complete trailing token itself, yajl_allow_trailing_garbage is off). */
static int webhook_check(const char *body, size_t len)
{
    char err[128];
    if (len == 0 || jcheck_body(body, len, err, sizeof(err)) != 0)
        return -1;
    depth_ctx d = {0, 0, NULL, 0};
    yajl_handle h = yajl_alloc(&counting, NULL, &d);
    d.h = h;
    yajl_status st = yajl_parse(h, (const unsigned char *)body, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    yajl_free(h);
    if (st != yajl_status_ok)
        return -1;
    /* yajl takes an unfinished token after the value ("{}\"abc"): look
     * from where the value closed, as review.c does */
    return d.value_end > 0 && jcheck_skip_space(body, len, d.value_end) == len ? 0 : -1;
}

/* ---- measuring ---------------------------------------------------------- */

static double per_body(int (*f)(const char *, size_t, const yajl_callbacks *), const char *b,
                       size_t n)
{
    double best = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = bench_cpu_ns(), t1 = t0;
        long k = 0;
        while (t1 - t0 < 100e6) {
            for (int i = 0; i < 32; i++)
                f(b, n, &bench_empty_callbacks);
            k += 32;
            t1 = bench_cpu_ns();
        }
        double per = (t1 - t0) / (double)k;
        if (r == 0 || per < best)
            best = per;
    }
    return best;
}

static int f_yajl(const char *b, size_t n, const yajl_callbacks *cb)
{
    return bench_yajl_parse(b, n, cb, NULL);
}
static int f_webhook(const char *b, size_t n, const yajl_callbacks *cb)
{
    (void)cb;
    return webhook_check(b, n);
}
static int f_skip(const char *b, size_t n, const yajl_callbacks *cb)
{
    (void)cb;
    return skip_check(b, n);
}

int main(int argc, char **argv)
{
    int agree = 0;
    long mutants = 0;
    size_t n_agree = 0, n_disagree = 0, n_accepted = 0;
    uint64_t rng = 0x9e3779b97f4a7c15u;
    printf("%-24s %7s %12s %16s %12s\n", "fixture", "bytes", "yajl (ns)", "jcheck+yajl (ns)",
           "skip (ns)");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--agree") == 0) {
            agree = 1;
            continue;
        }
        if (strcmp(argv[i], "--mutate") == 0 && i + 1 < argc) {
            agree = 1;
            mutants = atol(argv[++i]);
            continue;
        }
        size_t len = 0;
        char *b = bench_slurp(argv[i], &len);
        if (b == NULL) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        if (agree && mutants > 0 && len > 0) {
            static const char sig[] = "{}[]\",:\\ \t\n0-.eEtfnu\x01\x7f\x80\xc3\xed\xa0\xf4";
            char *m = malloc(len + 1);
            for (long k = 0; m != NULL && k < mutants; k++) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                size_t at = (size_t)(rng >> 8) % len, ml = len;
                char c = sig[(rng >> 40) % (sizeof(sig) - 1)];
                memcpy(m, b, len);
                switch (rng % 3) {
                case 0:
                    m[at] = c;
                    break;
                case 1:
                    memmove(m + at + 1, m + at, len - at);
                    m[at] = c;
                    ml = len + 1;
                    break;
                default:
                    memmove(m + at, m + at + 1, len - at - 1);
                    ml = len - 1;
                    break;
                }
                int want = webhook_check(m, ml), got = skip_check(m, ml);
                if (want != got) {
                    if (++n_disagree <= 10)
                        printf("DISAGREE mutant of %s at byte %zu: webhook %s, skip %s\n", argv[i],
                               at, want == 0 ? "accepts" : "refuses", got == 0 ? "accepts" : "refuses");
                } else {
                    n_agree++;
                    n_accepted += want == 0;
                }
            }
            free(m);
        } else if (agree) {
            int want = webhook_check(b, len), got = skip_check(b, len);
            if (want != got) {
                n_disagree++;
                if (n_disagree <= 10)
                    printf("DISAGREE %s: webhook %s, skip %s\n", argv[i],
                           want == 0 ? "accepts" : "refuses", got == 0 ? "accepts" : "refuses");
            } else {
                n_agree++;
                n_accepted += want == 0;
            }
        } else {
            if (webhook_check(b, len) != 0 || skip_check(b, len) != 0) {
                printf("%-24s refused\n", argv[i]);
            } else {
                const char *base = strrchr(argv[i], '/');
                printf("%-24s %7zu %12.0f %16.0f %12.0f\n", base != NULL ? base + 1 : argv[i], len,
                       per_body(f_yajl, b, len), per_body(f_webhook, b, len),
                       per_body(f_skip, b, len));
            }
        }
        free(b);
    }
    if (agree)
        printf("agreement: %zu inputs the same (%zu accepted by both), %zu differ\n", n_agree,
               n_accepted, n_disagree);
    return n_disagree == 0 ? 0 : 1;
}

/*
 * test_linesplit.c - watch streams cut into lines: pieces of any size (a
 * line split across reads, several lines in one read), CRLF, empty lines,
 * the bound on line length and the reset after it, no copy for lines that
 * lie whole inside one piece, a callback that stops the stream, and the
 * buffer grown only as far as a line needs and given back after a large one.
 */
#include "review_fixture.h"

#include "linesplit.h"

/* What the callback saw: the lines joined with '|', and for each line
 * whether it pointed into the piece being fed ('p') or was copied ('c'). */
typedef struct seen {
    char lines[4096];
    char where[64];
    size_t n;
    const char *piece;
    size_t piece_len;
    size_t stop_after; /* 0: never stop */
} seen;

static int collect(void *data, const char *line, size_t len)
{
    seen *s = data;
    size_t used = strlen(s->lines);
    snprintf(s->lines + used, sizeof(s->lines) - used, "%s%.*s", s->n ? "|" : "", (int)len, line);
    int inside = line >= s->piece && line + len <= s->piece + s->piece_len;
    if (s->n < sizeof(s->where) - 1)
        s->where[s->n] = inside ? 'p' : 'c';
    s->n++;
    return s->stop_after != 0 && s->n >= s->stop_after;
}

static int count_line(void *data, const char *line, size_t len)
{
    (void)line;
    *(size_t *)data = len;
    return 0;
}

static int feed(linesplit *ls, seen *s, const char *p, size_t n, char *err, size_t errlen)
{
    s->piece = p;
    s->piece_len = n;
    return linesplit_feed(ls, p, n, collect, s, err, errlen);
}

typedef struct row {
    const char *name;
    size_t max_line;
    const char *pieces[6]; /* fed in order; NULL ends */
    const char *want;      /* lines joined with '|' */
    const char *where;     /* 'p' no copy, 'c' copied, per line */
    int rc;                /* of the last feed */
    size_t pending;        /* after the last feed */
} row;

/* clang-format off */
static const row rows[] = {
    {"one line", 100, {"{\"type\":\"ADDED\"}\n"}, "{\"type\":\"ADDED\"}", "p", 0, 0},
    {"several lines in one piece", 100, {"a\nbb\nccc\n"}, "a|bb|ccc", "ppp", 0, 0},
    {"a line across two pieces", 100, {"{\"type\":", "\"ADDED\"}\n"}, "{\"type\":\"ADDED\"}",
     "c", 0, 0},
    {"a line across four pieces", 100, {"ab", "cd", "ef", "g\n"}, "abcdefg", "c", 0, 0},
    {"the end of one line and the next whole", 100, {"ab", "c\nde\nf"}, "abc|de", "cp", 0, 1},
    {"the newline alone in the next piece", 100, {"abc", "\n"}, "abc", "c", 0, 0},
    {"CRLF", 100, {"a\r\nb\r\n"}, "a|b", "pp", 0, 0},
    {"CR and LF in different pieces", 100, {"a\r", "\nb\r", "\n"}, "a|b", "cc", 0, 0},
    {"a CR inside a line stays", 100, {"a\rb\n"}, "a\rb", "p", 0, 0},
    {"empty lines are skipped", 100, {"\n\na\n\r\n\nb\n", "\n"}, "a|b", "pp", 0, 0},
    {"no newline yet: nothing, kept", 100, {"abc"}, "", "", 0, 3},
    {"an empty piece changes nothing", 100, {"ab", "", "c\n"}, "abc", "c", 0, 0},
    {"exactly the bound, whole", 5, {"12345\n"}, "12345", "p", 0, 0},
    {"exactly the bound, with CRLF across pieces", 5, {"12345\r", "\n"}, "12345", "c", 0, 0},
    {"exactly the bound, gathered", 5, {"123", "45\n"}, "12345", "c", 0, 0},
    {"one over the bound, whole", 5, {"123456\n"}, "", "", -1, 0},
    {"one over the bound, gathered", 5, {"123", "456\n"}, "", "", -1, 0},
    {"over the bound before its newline", 5, {"123", "456"}, "", "", -1, 0},
    {"over the bound in one piece without newline", 5, {"1234567"}, "", "", -1, 0},
    {"a CR past the bound that is not a CRLF", 5, {"12345\r", "x"}, "", "", -1, 0},
    {"lines before the long one are delivered", 5, {"ok\nfine\n123456\nlater\n"}, "ok|fine",
     "pp", -1, 0},
};
/* clang-format on */

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        linesplit ls;
        assert_int_equal(linesplit_init(&ls, r->max_line), 0);
        seen s;
        memset(&s, 0, sizeof(s));
        char err[128] = "";
        int rc = 0;
        for (size_t j = 0; j < 6 && r->pieces[j] != NULL && rc == 0; j++)
            rc = feed(&ls, &s, r->pieces[j], strlen(r->pieces[j]), err, sizeof(err));
        FX_CHECK(r->name, rc == r->rc, "rc %d, want %d (%s)", rc, r->rc, err);
        FX_CHECK(r->name, strcmp(s.lines, r->want) == 0, "lines \"%s\", want \"%s\"", s.lines,
                 r->want);
        FX_CHECK(r->name, strcmp(s.where, r->where) == 0, "where \"%s\", want \"%s\"", s.where,
                 r->where);
        FX_CHECK(r->name, linesplit_pending(&ls) == r->pending, "pending %zu",
                 linesplit_pending(&ls));
        if (r->rc == -1) {
            char want[64];
            snprintf(want, sizeof(want), "line longer than %zu bytes", r->max_line);
            FX_CHECK(r->name, strcmp(err, want) == 0, "error \"%s\"", err);
        }
        linesplit_free(&ls);
    }
}

/* Every way of cutting a stream into two or three pieces gives the same
 * lines as feeding it whole. */
static void test_every_split(void **state)
{
    (void)state;
    static const char stream[] = "{\"type\":\"ADDED\",\"object\":{}}\r\n\n{\"type\":\"BOOKMARK\"}"
                                 "\nx\r\n\r\n{\"type\":\"DELETED\"}\n";
    const size_t n = sizeof(stream) - 1;
    const char *want =
        "{\"type\":\"ADDED\",\"object\":{}}|{\"type\":\"BOOKMARK\"}|x|{\"type\":\"DELETED\"}";
    for (size_t a = 0; a <= n; a++) {
        for (size_t b = a; b <= n; b++) {
            linesplit ls;
            assert_int_equal(linesplit_init(&ls, 40), 0);
            seen s;
            memset(&s, 0, sizeof(s));
            char err[64];
            assert_int_equal(feed(&ls, &s, stream, a, err, sizeof(err)), 0);
            assert_int_equal(feed(&ls, &s, stream + a, b - a, err, sizeof(err)), 0);
            assert_int_equal(feed(&ls, &s, stream + b, n - b, err, sizeof(err)), 0);
            if (strcmp(s.lines, want) != 0)
                fail_msg("cut at %zu and %zu: \"%s\"", a, b, s.lines);
            assert_int_equal(linesplit_pending(&ls), 0);
            linesplit_free(&ls);
        }
    }
}

/* One byte at a time: everything is gathered, nothing lost. */
static void test_byte_by_byte(void **state)
{
    (void)state;
    static const char stream[] = "first\nsecond\r\nthird\n";
    linesplit ls;
    assert_int_equal(linesplit_init(&ls, 8), 0);
    seen s;
    memset(&s, 0, sizeof(s));
    char err[64];
    for (size_t i = 0; i < sizeof(stream) - 1; i++)
        assert_int_equal(feed(&ls, &s, stream + i, 1, err, sizeof(err)), 0);
    assert_string_equal(s.lines, "first|second|third");
    assert_string_equal(s.where, "ccc");
    linesplit_free(&ls);
}

/* After a line that is too long nothing more is taken until a reset; the
 * reset forgets the partial line, and the splitter works again. */
static void test_reset_after_error(void **state)
{
    (void)state;
    linesplit ls;
    assert_int_equal(linesplit_init(&ls, 4), 0);
    seen s;
    memset(&s, 0, sizeof(s));
    char err[128];
    assert_int_equal(feed(&ls, &s, "abcdefgh", 8, err, sizeof(err)), -1);
    assert_string_equal(err, "line longer than 4 bytes");
    assert_int_equal(feed(&ls, &s, "ok\n", 3, err, sizeof(err)), -1);
    assert_contains(err, "reset it first");
    assert_int_equal(s.n, 0);

    linesplit_reset(&ls);
    assert_int_equal(feed(&ls, &s, "ab", 2, err, sizeof(err)), 0);
    assert_int_equal(linesplit_pending(&ls), 2);
    linesplit_reset(&ls); /* a new stream: the partial line is gone */
    assert_int_equal(linesplit_pending(&ls), 0);
    assert_int_equal(feed(&ls, &s, "ok\nfine\n", 8, err, sizeof(err)), 0);
    assert_string_equal(s.lines, "ok|fine");
    linesplit_free(&ls);
}

/* A callback that says stop ends the feed at once; the splitter wants a
 * reset before more input. */
static void test_callback_stops(void **state)
{
    (void)state;
    linesplit ls;
    assert_int_equal(linesplit_init(&ls, 16), 0);
    seen s;
    memset(&s, 0, sizeof(s));
    s.stop_after = 2;
    char err[128];
    assert_int_equal(feed(&ls, &s, "a\nb\nc\nd\n", 8, err, sizeof(err)), 1);
    assert_string_equal(s.lines, "a|b");
    assert_int_equal(feed(&ls, &s, "e\n", 2, err, sizeof(err)), -1);
    assert_contains(err, "was stopped");
    linesplit_reset(&ls);
    s.stop_after = 0;
    assert_int_equal(feed(&ls, &s, "e\n", 2, err, sizeof(err)), 0);
    assert_string_equal(s.lines, "a|b|e");
    linesplit_free(&ls);
}

static void test_init_bounds(void **state)
{
    (void)state;
    linesplit ls;
    assert_int_equal(linesplit_init(&ls, 0), -1);
    assert_null(ls.buf);
    assert_int_equal(linesplit_init(&ls, (size_t)-1), -1);
    assert_int_equal(linesplit_init(&ls, 1), 0);
    seen s;
    memset(&s, 0, sizeof(s));
    char err[64];
    assert_int_equal(feed(&ls, &s, "x\ny", 3, err, sizeof(err)), 0);
    assert_int_equal(feed(&ls, &s, "\r\n", 2, err, sizeof(err)), 0);
    assert_string_equal(s.lines, "x|y");
    linesplit_free(&ls);
    linesplit_free(&ls); /* twice is harmless */
}

/* A line of n bytes ('a'...) fed in pieces of k, then "\n": what the
 * callback saw, the length only. */
static size_t straddle(linesplit *ls, size_t n, size_t k)
{
    char *line = malloc(n + 1);
    assert_non_null(line);
    memset(line, 'a', n);
    line[n] = '\n';
    char err[64];
    size_t got = 0;
    for (size_t at = 0; at < n + 1; at += k) {
        size_t take = n + 1 - at < k ? n + 1 - at : k;
        /* the line itself is too long for seen.lines: count it instead */
        assert_int_equal(linesplit_feed(ls, line + at, take, count_line, &got, err, sizeof(err)), 0);
    }
    free(line);
    return got;
}

static void test_buffer_grows_and_is_given_back(void **state)
{
    (void)state;
    linesplit ls;
    assert_int_equal(linesplit_init(&ls, (size_t)8 << 20), 0);
    assert_null(ls.buf); /* nothing until a line straddles pieces */
    assert_int_equal(straddle(&ls, 100, 30), 100);
    assert_int_equal(ls.cap, LINESPLIT_KEEP / 16); /* 8 MiB allowed, 4 KiB taken */
    assert_int_equal(straddle(&ls, 5000, 1000), 5000);
    assert_int_equal(ls.cap, LINESPLIT_KEEP / 8);
    /* a 1 MiB object: the buffer grows for it, then is given back */
    assert_int_equal(straddle(&ls, (size_t)1 << 20, 65536), (size_t)1 << 20);
    assert_null(ls.buf);
    assert_int_equal(ls.cap, 0);
    assert_int_equal(straddle(&ls, 100, 30), 100);
    assert_int_equal(ls.cap, LINESPLIT_KEEP / 16);
    /* the cap never passes max_line + 1 */
    linesplit_free(&ls);
    assert_int_equal(linesplit_init(&ls, 5000), 0);
    assert_int_equal(straddle(&ls, 5000, 999), 5000);
    assert_true(ls.cap <= 5001);
    linesplit_free(&ls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),          cmocka_unit_test(test_every_split),
        cmocka_unit_test(test_byte_by_byte),   cmocka_unit_test(test_reset_after_error),
        cmocka_unit_test(test_callback_stops), cmocka_unit_test(test_init_bounds),
        cmocka_unit_test(test_buffer_grows_and_is_given_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

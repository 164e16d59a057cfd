/*
 * test_arena.c - bump allocation: 16-byte alignment, the limit, allocations
 * larger than a block, outside block providers, and the yajl allocation
 * functions (realloc copies, failures abort rather than hand yajl a NULL).
 */
#include "review_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#define ALIGNED(p) (((uintptr_t)(p) & 15) == 0)

static void test_alignment(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    for (size_t n = 0; n < 300; n++) {
        char *p = arena_alloc(&a, n % 37);
        assert_non_null(p);
        assert_true(ALIGNED(p));
        memset(p, 0xa5, n % 37); /* ASan: the whole size is usable */
    }
    /* strndup and printf results come from the same allocator */
    assert_true(ALIGNED(arena_strndup(&a, "abc", 3)));
    assert_true(ALIGNED(arena_printf(&a, "%d", 7)));
    arena_free(&a);
}

static void test_zero_and_distinct(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    char *p = arena_alloc(&a, 0), *q = arena_alloc(&a, 0);
    assert_non_null(p);
    assert_non_null(q);
    assert_ptr_not_equal(p, q);
    p[0] = 1; /* a zero-size block is still one usable byte */
    arena_free(&a);
}

/* Allocations never overlap, across blocks and oversized requests. */
static void test_large_allocations(void **state)
{
    (void)state;
    static const size_t sizes[] = {10, 16 * 1024, 5, 16 * 1024 - 16, 1 << 20, 3, 16 * 1024 + 1,
                                   100000, 1, 0, 40000};
    enum { N = sizeof(sizes) / sizeof(sizes[0]) };
    arena a;
    arena_init(&a);
    unsigned char *ptrs[N];
    for (size_t i = 0; i < N; i++) {
        ptrs[i] = arena_alloc(&a, sizes[i]);
        assert_non_null(ptrs[i]);
        assert_true(ALIGNED(ptrs[i]));
        memset(ptrs[i], (int)i + 1, sizes[i]);
    }
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < sizes[i]; j++)
            if (ptrs[i][j] != i + 1)
                fail_msg("allocation %zu overwritten at %zu", i, j);
    /* used counts what was handed out, rounded to the alignment */
    size_t want = 0;
    for (size_t i = 0; i < N; i++)
        want += sizes[i] == 0 ? 16 : (sizes[i] + 15) / 16 * 16;
    assert_int_equal(a.used, want);
    arena_free(&a);
    assert_int_equal(a.used, 0);
    assert_null(a.blocks);
    /* reusable after arena_free */
    assert_non_null(arena_alloc(&a, 100));
    arena_free(&a);
    arena_free(&a); /* and freeing twice is harmless */
}

static void test_limit(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    arena_set_limit(&a, 64);
    assert_non_null(arena_alloc(&a, 33)); /* 48 */
    assert_null(arena_alloc(&a, 17));     /* 32 more would be 80 */
    assert_non_null(arena_alloc(&a, 16)); /* exactly 64 */
    assert_null(arena_alloc(&a, 1));
    assert_null(arena_alloc(&a, 0));
    assert_null(arena_strndup(&a, "", 0));
    assert_null(arena_printf(&a, "x"));
    assert_int_equal(a.used, 64);
    arena_free(&a);

    arena_init(&a);
    arena_set_limit(&a, 100);
    assert_null(arena_alloc(&a, 101));
    assert_null(arena_alloc(&a, 200)); /* over the limit on its own */
    assert_non_null(arena_alloc(&a, 96));
    arena_free(&a);

    /* sizes that would overflow the rounding or the block header */
    arena_init(&a);
    assert_null(arena_alloc(&a, SIZE_MAX));
    assert_null(arena_alloc(&a, SIZE_MAX - 15));
    assert_null(arena_alloc(&a, SIZE_MAX / 2 + 1));
    assert_null(arena_strndup(&a, "x", SIZE_MAX));
    assert_int_equal(a.used, 0);
    arena_free(&a);
}

/* ---- blocks from an outside owner ------------------------------------------ */

typedef struct provider {
    void *blocks[64];
    size_t sizes[64];
    int n;
    int fail;
} provider;

static void *provide(void *ctx, size_t n)
{
    provider *pr = ctx;
    if (pr->fail || pr->n == 64)
        return NULL;
    void *b = malloc(n);
    pr->sizes[pr->n] = n;
    pr->blocks[pr->n++] = b;
    return b;
}

static void provider_free(provider *pr)
{
    for (int i = 0; i < pr->n; i++)
        free(pr->blocks[i]);
}

static void test_outside_blocks(void **state)
{
    (void)state;
    provider pr = {0};
    arena a;
    arena_init_with(&a, provide, &pr);
    char *p = arena_alloc(&a, 10);
    assert_non_null(p);
    assert_int_equal(pr.n, 1);
    assert_true(ALIGNED(p));
    assert_true(pr.sizes[0] >= 16 * 1024);
    for (int i = 0; i < 100; i++)
        assert_non_null(arena_alloc(&a, 1000));
    assert_true(pr.n > 1);
    char *big = arena_alloc(&a, 1 << 20);
    assert_non_null(big);
    memset(big, 1, 1 << 20);
    pr.fail = 1;
    assert_null(arena_alloc(&a, 1 << 20)); /* provider refuses: NULL, no crash */
    /* The arena never frees an owner's blocks (ASan would report a double
     * free below if it did). */
    arena_free(&a);
    provider_free(&pr);
}

static void test_strndup_printf(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    char *s = arena_strndup(&a, "hello world", 5);
    assert_string_equal(s, "hello");
    s = arena_strndup(&a, NULL, 0);
    assert_non_null(s);
    assert_string_equal(s, "");
    s = arena_strndup(&a, "a\0b", 3);
    assert_memory_equal(s, "a\0b\0", 4);
    assert_string_equal(arena_printf(&a, "%s/%.*s-%d", "ns", 3, "name!", 42), "ns/nam-42");
    assert_string_equal(arena_printf(&a, "%s", ""), "");
    /* longer than a block */
    char *big = arena_printf(&a, "%40000d|", 7);
    assert_non_null(big);
    assert_int_equal(strlen(big), 40001);
    assert_int_equal(big[39999], '7');
    arena_free(&a);
}

/* ---- yajl's allocation functions ------------------------------------------ */

/* A request's value for a message: whole (a NUL does not end it), quoted,
 * every control character and quote escaped as JSON escapes them. */
static void test_quote(void **state)
{
    (void)state;
    static const struct {
        const char *name, *in;
        size_t len;
        const char *quoted;
    } rows[] = {
        {"plain", "OTA", 3, "\"OTA\""},
        {"lower case kept", "ota", 3, "\"ota\""},
        {"empty", "", 0, "\"\""},
        {"absent", NULL, 0, "\"\""},
        {"NUL in the middle", "OTA\0x", 5, "\"OTA\\u0000x\""},
        {"NUL at the end", "a\0", 2, "\"a\\u0000\""},
        {"quote and backslash", "a\"b\\c", 5, "\"a\\\"b\\\\c\""},
        {"line breaks and tab", "a\nb\r\t", 5, "\"a\\nb\\r\\t\""},
        {"other controls", "\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\""},
        {"UTF-8 as is", "caf\xc3\xa9", 5, "\"caf\xc3\xa9\""},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        arena a;
        arena_init(&a);
        const char *q = arena_quote(&a, rows[i].in, rows[i].len);
        FX_CHECK(rows[i].name, strcmp(q, rows[i].quoted) == 0, "got %s, want %s", q, rows[i].quoted);
        const char *e = arena_escape(&a, rows[i].in, rows[i].len);
        size_t n = strlen(rows[i].quoted);
        FX_CHECK(rows[i].name, strlen(e) == n - 2 && strncmp(e, rows[i].quoted + 1, n - 2) == 0,
                 "escape %s", e);
        arena_free(&a);
    }
    /* out of memory: a constant that says so, never NULL */
    arena a;
    arena_init(&a);
    arena_set_limit(&a, 1);
    assert_string_equal(arena_quote(&a, "abc", 3), "\"(out of memory)\"");
    assert_string_equal(arena_escape(&a, "abc", 3), "(out of memory)");
    arena_free(&a);
}

static void test_yajl_funcs(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    yajl_alloc_funcs f = arena_yajl_funcs(&a);
    assert_ptr_equal(f.ctx, &a);
    unsigned char *p = f.malloc(f.ctx, 10);
    assert_non_null(p);
    assert_true(ALIGNED(p));
    memcpy(p, "0123456789", 10);
    /* growing copies the old contents */
    unsigned char *q = f.realloc(f.ctx, p, 5000);
    assert_non_null(q);
    assert_true(ALIGNED(q));
    assert_memory_equal(q, "0123456789", 10);
    memset(q + 10, 'x', 4990);
    /* shrinking copies what fits */
    unsigned char *r = f.realloc(f.ctx, q, 4);
    assert_memory_equal(r, "0123", 4);
    /* growing again copies only the 4 bytes r had, not q's 5000 */
    unsigned char *s = f.realloc(f.ctx, r, 8);
    assert_memory_equal(s, "0123", 4);
    /* realloc(NULL) is malloc; free is a no-op and p stays readable */
    unsigned char *t = f.realloc(f.ctx, NULL, 3);
    assert_non_null(t);
    f.free(f.ctx, q);
    assert_memory_equal(q, "0123456789", 10);
    f.free(f.ctx, NULL);
    arena_free(&a);
}

/* yajl's generator on the arena: many reallocs, the text intact. */
static void test_yajl_generator_on_arena(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    yajl_alloc_funcs f = arena_yajl_funcs(&a);
    yajl_gen g = yajl_gen_alloc(&f);
    assert_non_null(g);
    yajl_gen_array_open(g);
    for (int i = 0; i < 5000; i++)
        yajl_gen_integer(g, i);
    yajl_gen_array_close(g);
    const unsigned char *buf;
    size_t len;
    assert_int_equal(yajl_gen_get_buf(g, &buf, &len), yajl_gen_status_ok);
    yajl_gen_free(g); /* buf is arena memory: still valid */
    size_t off = 0;
    assert_int_equal(buf[off++], '[');
    for (int i = 0; i < 5000; i++) {
        char n[16];
        int k = snprintf(n, sizeof(n), "%s%d", i ? "," : "", i);
        if (memcmp(buf + off, n, (size_t)k) != 0)
            fail_msg("element %d differs at byte %zu", i, off);
        off += (size_t)k;
    }
    assert_int_equal(buf[off++], ']');
    assert_int_equal(off, len);
    arena_free(&a);
}

/* Runs fn in a child and returns the signal that ended it (0: exit). */
static int dies_with(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* cmocka's handlers would turn a crash into the next test */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        fn();
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void yajl_malloc_over_limit(void)
{
    arena a;
    arena_init(&a);
    arena_set_limit(&a, 64);
    yajl_alloc_funcs f = arena_yajl_funcs(&a);
    f.malloc(f.ctx, 100);
}

static void yajl_gen_over_limit(void)
{
    arena a;
    arena_init(&a);
    arena_set_limit(&a, 64);
    yajl_alloc_funcs f = arena_yajl_funcs(&a);
    yajl_gen g = yajl_gen_alloc(&f); /* yajl_buf_alloc would write to NULL */
    yajl_gen_free(g);
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    (void)ctx;
    (void)s;
    (void)len;
    return 1;
}

static void yajl_parse_past_limit(void)
{
    arena a;
    arena_init(&a);
    arena_set_limit(&a, 4096);
    yajl_alloc_funcs f = arena_yajl_funcs(&a);
    static const yajl_callbacks cbs = {.yajl_string = on_string};
    yajl_handle h = yajl_alloc(&cbs, &f, NULL);
    /* a string with escapes grows the lexer's buffer past the limit */
    static char text[20000];
    text[0] = '"';
    for (size_t i = 1; i < sizeof(text) - 2; i += 2)
        memcpy(text + i, "\\n", 2);
    text[sizeof(text) - 1] = '"';
    yajl_parse(h, (const unsigned char *)text, sizeof(text));
    yajl_free(h);
}

/* yajl 2.1 writes through NULL from its allocator: the arena aborts first. */
static void test_yajl_failure_aborts(void **state)
{
    (void)state;
    assert_int_equal(dies_with(yajl_malloc_over_limit), SIGABRT);
    assert_int_equal(dies_with(yajl_gen_over_limit), SIGABRT);
    assert_int_equal(dies_with(yajl_parse_past_limit), SIGABRT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_zero_and_distinct),
        cmocka_unit_test(test_large_allocations),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_outside_blocks),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_strndup_printf),
        cmocka_unit_test(test_yajl_funcs),
        cmocka_unit_test(test_yajl_generator_on_arena),
        cmocka_unit_test(test_yajl_failure_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

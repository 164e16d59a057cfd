/*
 * test_base64.c - RFC 4648 base64 with padding, the encoding of
 * AdmissionResponse.patch: the RFC's test vectors, every byte value, the
 * last two alphabet characters, and a round trip through an independent
 * decoder.
 */
#include "review_fixture.h"

#include "base64.h"

typedef struct vector {
    const char *in;
    size_t n;
    const char *out;
} vector;

#define V(in, out) {in, sizeof(in) - 1, out}

static const vector vectors[] = {
    /* RFC 4648 §10 */
    V("", ""),
    V("f", "Zg=="),
    V("fo", "Zm8="),
    V("foo", "Zm9v"),
    V("foob", "Zm9vYg=="),
    V("fooba", "Zm9vYmE="),
    V("foobar", "Zm9vYmFy"),
    /* '+' and '/' (not the URL alphabet), NUL and high bytes */
    V("\xfb\xff", "+/8="),
    V("\xff\xff\xff", "////"),
    V("\xf8", "+A=="),
    V("\x00", "AA=="),
    V("\x00\x00\x00", "AAAA"),
    V("\x14\xfb\x9c\x03\xd9\x7e", "FPucA9l+"),
    V("\x14\xfb\x9c\x03\xd9", "FPucA9k="),
    V("\x14\xfb\x9c\x03", "FPucAw=="),
    V("[]", "W10="),
    V("[{\"op\":\"add\"}]", "W3sib3AiOiJhZGQifV0="),
};

static void test_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        arena a;
        arena_init(&a);
        size_t len = 12345;
        char *out = base64_encode(&a, vectors[i].in, vectors[i].n, &len);
        FX_CHECK(vectors[i].out, out != NULL && strcmp(out, vectors[i].out) == 0, "got %s", out);
        FX_CHECK(vectors[i].out, len == strlen(vectors[i].out), "length %zu", len);
        arena_free(&a);
    }
}

/* Every byte value in every position of a 3-byte group. */
static void test_every_byte(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    unsigned char in[256 * 3];
    for (size_t i = 0; i < sizeof(in); i++)
        in[i] = (unsigned char)(i * 7 + i / 256);
    size_t len;
    char *out = base64_encode(&a, in, sizeof(in), &len);
    assert_int_equal(len, sizeof(in) / 3 * 4);
    char back[sizeof(in) + 1];
    size_t n;
    assert_int_equal(fx_base64_decode(out, len, back, &n), 0);
    assert_int_equal(n, sizeof(in));
    assert_memory_equal(back, in, sizeof(in));
    for (size_t i = 0; i < len; i++)
        assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                               out[i]));
    arena_free(&a);
}

/* Lengths 0..200: output length, padding, NUL terminator, round trip. */
static void test_lengths_round_trip(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (size_t n = 0; n <= 200; n++) {
        arena a;
        arena_init(&a);
        unsigned char in[200];
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            in[i] = (unsigned char)(seed >> 16);
        }
        size_t len;
        char *out = base64_encode(&a, in, n, &len);
        assert_non_null(out);
        assert_int_equal(len, (n + 2) / 3 * 4);
        assert_int_equal(out[len], '\0');
        size_t pad = n % 3 == 0 ? 0 : 3 - n % 3;
        for (size_t i = 0; i < pad; i++)
            assert_int_equal(out[len - 1 - i], '=');
        if (len > pad)
            assert_int_not_equal(out[len - 1 - pad], '=');
        char back[201];
        size_t m;
        assert_int_equal(fx_base64_decode(out, len, back, &m), 0);
        assert_int_equal(m, n);
        assert_memory_equal(back, in, n);
        arena_free(&a);
    }
}

/* The test's own decoder refuses what is not canonical base64, so the
 * round trips above mean something. */
static void test_decoder_is_strict(void **state)
{
    (void)state;
    static const char *const bad[] = {"Zg=", "Zg", "Z===", "=Zg=", "Zg==Zg==", "Zm9v\n", "Zm-_",
                                      "Zm9v===="};
    char out[16];
    size_t n;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        FX_CHECK(bad[i], fx_base64_decode(bad[i], strlen(bad[i]), out, &n) != 0, "accepted");
    assert_int_equal(fx_base64_decode("Zm8=", 4, out, &n), 0);
    assert_string_equal(out, "fo");
}

/* Out of memory and absurd sizes: NULL, *out_len untouched, input unread. */
static void test_out_of_memory(void **state)
{
    (void)state;
    arena a;
    arena_init(&a);
    arena_set_limit(&a, 32);
    size_t len = 7;
    assert_non_null(base64_encode(&a, "0123456789", 10, &len)); /* 17 bytes: 32 */
    assert_int_equal(len, 16);
    len = 7;
    assert_null(base64_encode(&a, "x", 1, &len));
    assert_int_equal(len, 7);
    arena_free(&a);

    arena_init(&a);
    assert_null(base64_encode(&a, "x", SIZE_MAX, &len));
    assert_null(base64_encode(&a, "x", SIZE_MAX / 4 * 3, &len));
    assert_null(base64_encode(&a, "x", (SIZE_MAX - 1) / 4 * 3 - 3, &len)); /* passes the guard */
    assert_int_equal(len, 7);
    assert_int_equal(a.used, 0);
    arena_free(&a);
}

/* ---- base64_decode_malloc (kubeconfig's -data fields) --------------------- */

static void test_decode_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        size_t len = 12345;
        char *out = base64_decode_malloc(vectors[i].out, strlen(vectors[i].out), &len);
        FX_CHECK(vectors[i].out, out != NULL, "refused");
        FX_CHECK(vectors[i].out, len == vectors[i].n && memcmp(out, vectors[i].in, len) == 0,
                 "decoded %zu bytes", len);
        FX_CHECK(vectors[i].out, out[len] == '\0', "not NUL-terminated");
        free(out);
    }
}

static void test_decode_lenient_forms(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } rows[] = {
        {"Zm9vYmFy", "foobar"},
        {"Zm9vYg", "foob"},             /* padding is optional */
        {"Zm9vYmE", "fooba"},
        {"Zm9v\nYmFy\n", "foobar"},     /* PEM-style line breaks */
        {" Zm 9v\tYm\r\nFy ", "foobar"}, /* any whitespace */
        {"Zg= =", "f"},
        {"", ""},
        {"  \n", ""},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t len;
        char *out = base64_decode_malloc(rows[i].in, strlen(rows[i].in), &len);
        FX_CHECK(rows[i].in, out != NULL && strcmp(out, rows[i].want) == 0 &&
                                 len == strlen(rows[i].want),
                 "got \"%s\"", out != NULL ? out : "(refused)");
        free(out);
    }
}

static void test_decode_refuses(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "Z",        /* one character: 6 bits, no byte */
        "Zm9vY",    /* a dangling character after whole groups */
        "Zg===",    /* too much padding */
        "=Zg",      /* data after padding */
        "Zg==Zg==", /* two padded groups */
        "Zm-_",     /* the URL alphabet */
        "Zm9v.",
        "Zm9v\x80",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t len = 7;
        char *out = base64_decode_malloc(bad[i], strlen(bad[i]), &len);
        FX_CHECK(bad[i], out == NULL, "accepted as \"%s\"", out);
        FX_CHECK(bad[i], len == 7, "out_len written");
    }
    /* a NUL in the input is not base64 either */
    size_t len;
    assert_null(base64_decode_malloc("Zm\0v", 4, &len));
}

/* Encoder and decoder agree on every length, from a buffer of exactly n
 * bytes (ASan sees a read past it). */
static void test_decode_round_trip(void **state)
{
    (void)state;
    for (size_t n = 0; n < 100; n++) {
        arena a;
        arena_init(&a);
        unsigned char in[100];
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)(255 - i * 13);
        size_t elen, dlen;
        char *enc = base64_encode(&a, in, n, &elen);
        char *exact = malloc(elen + 1);
        memcpy(exact, enc, elen);
        char *dec = base64_decode_malloc(exact, elen, &dlen);
        assert_non_null(dec);
        assert_int_equal(dlen, n);
        assert_memory_equal(dec, in, n);
        free(dec);
        free(exact);
        arena_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_every_byte),
        cmocka_unit_test(test_lengths_round_trip),
        cmocka_unit_test(test_decoder_is_strict),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_decode_vectors),
        cmocka_unit_test(test_decode_lenient_forms),
        cmocka_unit_test(test_decode_refuses),
        cmocka_unit_test(test_decode_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

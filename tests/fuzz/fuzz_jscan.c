/*
 * fuzz_jscan.c - the webhook's fast scanner (webhook/jscan.c) against the
 * reference it stands in for (tests/unit/jscan_ref.h: jcheck_body() + yajl,
 * nothing after the value, nesting bounded at 100).
 *
 * Properties, on every input:
 *  - with no value skipped, jscan accepts exactly what the reference
 *    accepts, with the same callbacks, arguments and bracket offsets;
 *  - with every value skipped, the same verdict and no callback;
 *  - review_decode() (fast path, reference on refusal) and
 *    review_decode_reference() give the same return, the same message and
 *    the same decoded review, and the fast path alone accepts every body the
 *    reference accepts.
 */
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "fuzz_check.h"
#include "jscan_ref.h"

static int skip_all(void *ctx)
{
    (void)ctx;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact copy: ASan sees a read past the end */
    char *text = malloc(size == 0 ? 1 : size);
    FUZZ_CHECK(text != NULL, "out of memory");
    memcpy(text, data, size);

    strbuf want = {0}, got = {0}, quiet = {0};
    int w = jref_reference(text, size, &want);
    int g = jref_scan(text, size, NULL, &got);
    FUZZ_CHECK((w == 0) == (g == JSCAN_OK), "reference %d, jscan %d", w, g);
    if (w == 0)
        FUZZ_CHECK(want.data != NULL && got.data != NULL && strcmp(want.data, got.data) == 0,
                   "events differ:\nreference %s\njscan     %s", want.data, got.data);
    int q = jref_scan(text, size, skip_all, &quiet);
    FUZZ_CHECK(q == g && quiet.data == NULL, "all skipped: %d and %d, events %s", q, g, quiet.data);
    strbuf_free(&want);
    strbuf_free(&got);
    strbuf_free(&quiet);

    arena a;
    arena_init(&a);
    review fast, ref;
    char err_fast[256], err_ref[256], diff[512];
    int f = review_decode(&fast, text, size, &a, err_fast, sizeof(err_fast));
    int r = review_decode_reference(&ref, text, size, &a, err_ref, sizeof(err_ref));
    FUZZ_CHECK(f == r && strcmp(err_fast, err_ref) == 0, "review_decode %d \"%s\", reference %d \"%s\"",
               f, err_fast, r, err_ref);
    FUZZ_CHECK(r != 0 || !jref_review_diff(&fast, &ref, diff, sizeof(diff)), "reviews differ: %s",
               diff);
    if (r == 0) { /* the fast path took it itself: no needless fall back */
        review alone;
        FUZZ_CHECK(review_decode_fast(&alone, text, size, &a) == 0,
                   "the fast path refuses what the reference accepts");
        FUZZ_CHECK(!jref_review_diff(&alone, &ref, diff, sizeof(diff)), "fast path alone: %s",
                   diff);
    }
    arena_free(&a);
    free(text);
    return 0;
}

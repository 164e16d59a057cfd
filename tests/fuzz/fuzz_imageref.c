/*
 * fuzz_imageref.c - the image reference parser (lib/imageref.c).
 *
 * Properties: an error has a one-line message; a valid reference's normal
 * form is itself valid and its own normal form (normalizing is
 * idempotent) and names the same image (imageref_same); the pull policy
 * is one of the two the kubelet knows.
 */
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "fuzz_check.h"
#include "imageref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena a;
    arena_init(&a);
    char *s = malloc(size == 0 ? 1 : size);
    FUZZ_CHECK(s != NULL, "out of memory");
    memcpy(s, data, size);
    imageref r;
    char err[256] = "";
    if (imageref_parse(&r, s, size, &a, err, sizeof(err)) != 0) {
        FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL, "message \"%s\"", err);
    } else {
        const char *policy = imageref_pull_policy(&r);
        FUZZ_CHECK(strcmp(policy, "Always") == 0 || strcmp(policy, "IfNotPresent") == 0,
                   "policy %s", policy);
        char *norm = imageref_format(&r, &a);
        FUZZ_CHECK(norm != NULL, "out of memory");
        char *again = imageref_normalize(norm, strlen(norm), &a, err, sizeof(err));
        FUZZ_CHECK(again != NULL, "the normal form %s does not parse: %s", norm, err);
        FUZZ_CHECK(strcmp(again, norm) == 0, "normalizing twice: %s then %s", norm, again);
        char *z = arena_strndup(&a, s, size);
        /* imageref_same takes C strings: only when the input holds no NUL */
        if (z != NULL && strlen(z) == size)
            FUZZ_CHECK(imageref_same(z, norm), "%s and its normal form %s differ", z, norm);
    }
    free(s);
    arena_free(&a);
    return 0;
}

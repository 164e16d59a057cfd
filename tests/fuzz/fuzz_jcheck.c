/*
 * fuzz_jcheck.c - the strict pass (webhook/jcheck.c) with yajl behind it and
 * the check for bytes after the value, as review_decode() runs them, against
 * a reference: a plain recursive descent over RFC 8259's grammar with RFC
 * 3629 UTF-8 and paired surrogates, written here for nothing but this
 * comparison.  Roots are objects or arrays, as for a review.
 *
 * Property: the pass plus yajl accept a body exactly when the reference
 * does.  A body one accepts and the other refuses is a hole in the
 * webhook's strictness (or in the reference, which is then fixed).
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "json_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* deep nesting is review.c's to bound (REVIEW_MAX_DEPTH); the
     * reference recurses, so keep it out of reach */
    if (size > 4096)
        return 0;
    char *body = malloc(size == 0 ? 1 : size);
    FUZZ_CHECK(body != NULL, "out of memory");
    memcpy(body, data, size);
    char err[256];
    int rc = jcheck_body(body, size, err, sizeof(err));
    if (rc != 0)
        FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL, "message \"%s\"", err);
    int ours = fuzz_strict_json(body, size), theirs = json_ref_accepts(data, size);
    FUZZ_CHECK(ours == theirs, "webhook %s, reference %s (jcheck rc %d: %s)",
               ours ? "accepts" : "refuses", theirs ? "accepts" : "refuses", rc, err);
    free(body);
    return 0;
}

/*
 * fuzz_review.c - the webhook's whole decision on hostile bytes: the strict
 * pass, the review decoder, the rules, the patch builder and the response
 * encoder, through admit_review() for /mutate and /validate.
 *
 * Besides "no crash, no leak, no undefined behaviour" (ASan, UBSan), every
 * answer must be what the apiserver can read: HTTP 200 with an
 * AdmissionReview or 400 with a Status, strict JSON either way, and a patch
 * that is itself strict JSON (conditions are copied from the body into it
 * verbatim, so a byte the strict pass missed would show here).  "Strict
 * JSON" is judged by json_ref.h, which shares no code with the webhook, and
 * so is a key twice in one object (issue 19): a body with one is never
 * answered 200, and a "duplicate key" 400 is only given to such a body.
 */
#include <stdint.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "admit.h"
#include "arena.h"
#include "fuzz_check.h"
#include "json_ref.h"

/* The decoded "patch" of a response, or NULL; the response is strict JSON. */
static void check_response(const admit_outcome *out, arena *a)
{
    FUZZ_CHECK(json_ref_accepts((const uint8_t *)out->body, out->body_len),
               "response is not strict JSON: %.*s", (int)out->body_len, out->body);
    char *text = arena_strndup(a, out->body, out->body_len);
    char err[128];
    yajl_val root = yajl_tree_parse(text, err, sizeof(err));
    FUZZ_CHECK(root != NULL, "yajl cannot read the response: %s", err);
    if (out->http_status == 400) {
        yajl_val kind = yajl_tree_get(root, (const char *[]){"kind", NULL}, yajl_t_string);
        FUZZ_CHECK(kind != NULL && strcmp(YAJL_GET_STRING(kind), "Status") == 0, "400 without a Status");
        FUZZ_CHECK(out->result == ADMIT_INVALID && out->message != NULL, "400 result");
    } else {
        FUZZ_CHECK(out->http_status == 200, "HTTP %d", out->http_status);
        yajl_val patch = yajl_tree_get(root, (const char *[]){"response", "patch", NULL}, yajl_t_string);
        FUZZ_CHECK((patch != NULL) == (out->result == ADMIT_PATCHED), "patch and result disagree");
        if (patch != NULL) {
            /* base64 back to bytes, then the patch must be strict JSON */
            const char *b64 = YAJL_GET_STRING(patch);
            size_t n = strlen(b64), o = 0;
            char *raw = arena_alloc(a, n / 4 * 3 + 1);
            FUZZ_CHECK(raw != NULL && n % 4 == 0, "patch base64 length %zu", n);
            static const char alphabet[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            for (size_t i = 0; i < n; i += 4) {
                uint32_t v = 0;
                int pad = 0;
                for (size_t j = 0; j < 4; j++) {
                    const char *p = b64[i + j] == '=' ? NULL : strchr(alphabet, b64[i + j]);
                    FUZZ_CHECK(p != NULL || b64[i + j] == '=', "bad base64");
                    pad += p == NULL;
                    v = v << 6 | (p != NULL ? (uint32_t)(p - alphabet) : 0);
                }
                raw[o++] = (char)(v >> 16);
                if (pad < 2)
                    raw[o++] = (char)(v >> 8);
                if (pad < 1)
                    raw[o++] = (char)v;
            }
            FUZZ_CHECK(json_ref_accepts((const uint8_t *)raw, o), "patch is not strict JSON: %.*s",
                       (int)o, raw);
            FUZZ_CHECK(raw[0] == '[', "patch is not an array");
        }
    }
    yajl_tree_free(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const admit_config cfg = {
        .controller_username = "system:serviceaccount:ota-system:ota-controller"};
    for (int phase = 0; phase < 2; phase++) {
        arena a;
        arena_init(&a);
        /* an exact copy: ASan sees a read past the end */
        char *body = malloc(size == 0 ? 1 : size);
        FUZZ_CHECK(body != NULL, "out of memory");
        memcpy(body, data, size);
        admit_outcome out;
        int rc = admit_review(phase == 0 ? ADMIT_MUTATE : ADMIT_VALIDATE, body, size,
                              "2026-11-21T21:30:00Z", &cfg, &a, &out);
        FUZZ_CHECK(rc == 0, "admit_review ran out of memory");
        check_response(&out, &a);
        int repeats = json_ref_key_repeats(data, size);
        FUZZ_CHECK(out.http_status != 200 || !repeats, "answered 200 to a body with a key twice");
        if (out.http_status == 400 && strncmp(out.message, "duplicate key ", 14) == 0)
            FUZZ_CHECK(repeats, "\"%s\" for a body without a key twice", out.message);
        free(body);
        arena_free(&a);
    }
    return 0;
}

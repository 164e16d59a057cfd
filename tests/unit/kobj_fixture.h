/*
 * kobj_fixture.h - what the controller's unit tests share: reading object
 * fixtures (tests/fixtures/objects/, in the shapes the apiserver returns)
 * and decoding them, or JSON text, into kobj.
 *
 * Header-only because the Makefile builds every tests/unit/test_*.c on its
 * own.  Every helper fails the running test instead of returning an error.
 */
#ifndef OTA_TEST_KOBJ_FIXTURE_H
#define OTA_TEST_KOBJ_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "kobj.h"
#include "ota_names.h"

#define KF_UNUSED __attribute__((unused))

#ifndef OBJECTS_DIR
#define OBJECTS_DIR "tests/fixtures/objects" /* `make unit` runs from the top */
#ifndef assert_contains
/* hay contains needle; both printed when not. */
#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        const char *hay_ = (hay), *needle_ = (needle);                                             \
        if (hay_ == NULL || strstr(hay_, needle_) == NULL)                                         \
            fail_msg("\"%s\" does not contain \"%s\"", hay_ != NULL ? hay_ : "(null)", needle_);   \
    } while (0)
#endif

#endif

/* The bytes of OBJECTS_DIR/name (malloc'd, NUL-terminated). */
KF_UNUSED static char *kf_read(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", OBJECTS_DIR, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s (run from the repository's top directory)", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = '\0';
    if (len != NULL)
        *len = (size_t)n;
    return b;
}

/* Decodes JSON text as kind; NULL when kobj_decode says so.  The text must
 * parse. */
KF_UNUSED static kobj *kf_decode_text(kobj_kind kind, const char *json)
{
    char err[256] = "";
    yajl_val v = json_parse_tree(json, strlen(json), 64, err, sizeof(err));
    if (v == NULL)
        fail_msg("fixture does not parse: %s\n%s", err, json);
    kobj *o = kobj_decode(kind, v);
    yajl_tree_free(v);
    return o;
}

/* Decodes a fixture file; it must decode. */
KF_UNUSED static kobj *kf_decode_file(kobj_kind kind, const char *name)
{
    char *json = kf_read(name, NULL);
    kobj *o = kf_decode_text(kind, json);
    free(json);
    if (o == NULL)
        fail_msg("%s does not decode", name);
    return o;
}

/* a and b are both NULL or equal strings; both printed when not. */
#define assert_str_or_null(a, b)                                                                   \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if ((a_ == NULL) != (b_ == NULL) || (a_ != NULL && strcmp(a_, b_) != 0))                   \
            fail_msg("%s: \"%s\" != \"%s\"", #a, a_ != NULL ? a_ : "(null)",                       \
                     b_ != NULL ? b_ : "(null)");                                                  \
    } while (0)

#ifndef assert_contains
/* hay contains needle; both printed when not. */
#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        const char *hay_ = (hay), *needle_ = (needle);                                             \
        if (hay_ == NULL || strstr(hay_, needle_) == NULL)                                         \
            fail_msg("\"%s\" does not contain \"%s\"", hay_ != NULL ? hay_ : "(null)", needle_);   \
    } while (0)
#endif

#endif

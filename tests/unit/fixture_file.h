/*
 * fixture_file.h - a test's input file, whole, in a malloc buffer of
 * exactly its size (so ASan sees a read past the end); the running cmocka
 * test fails when it cannot be read.  Paths are relative to the
 * repository's top directory, where `make unit` runs the tests.  Include
 * after <cmocka.h>.
 */
#ifndef OTA_TEST_FIXTURE_FILE_H
#define OTA_TEST_FIXTURE_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The caller frees the buffer (at least one byte, for an empty file). */
static __attribute__((unused)) char *fixture_file_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s (run from the repository's top directory)", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *b = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

#endif

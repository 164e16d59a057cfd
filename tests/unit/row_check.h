/*
 * row_check.h - the one failure report of table-driven tests: names the
 * row and the failed condition, then fails the running cmocka test.
 * Include after <cmocka.h>.
 */
#ifndef OTA_TEST_ROW_CHECK_H
#define OTA_TEST_ROW_CHECK_H

/* Fails the running test, naming the table row, when cond is false. */
#define ROW_CHECK(row, cond, ...)                                                                  \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            print_error("row \"%s\": check failed: %s\n  ", (row), #cond);                         \
            print_error(__VA_ARGS__);                                                              \
            print_error("\n");                                                                     \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

#endif

/* CHECK for the unit tests: counts every check and every failure, and names
 * a failed condition with its file and line; the test prints the counts
 * and exits non-zero when a check failed. */
#ifndef WEFT_TESTS_CHECK_H
#define WEFT_TESTS_CHECK_H

#include <stdio.h>

static int checks, failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#endif

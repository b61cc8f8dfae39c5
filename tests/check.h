/* A minimal harness for the tests that must also run under ThreadSanitizer.
 * Criterion cannot start there (its inheritable arena is mapped at a fixed
 * address TSan refuses: Snaipe/Criterion#274), so these are plain programs:
 * exit status 0 on success, a message and 1 on the first failed check. */
#ifndef CCKEY_TEST_CHECK_H
#define CCKEY_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#endif

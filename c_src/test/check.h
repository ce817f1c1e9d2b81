/* The assertion of the pure-C test programs: counts checks, reports a
 * failed one with its location and a printf-style message, and keeps going
 * so one run shows every failure. Each program ends with CHECK_SUMMARY(). */
#ifndef WB_CHECK_H
#define WB_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* prints the closing line CI reads and gives the exit status */
#define CHECK_SUMMARY()                                                                            \
    (printf("%d passed, %d failed\n", checks - failures, failures), failures == 0 ? 0 : 1)

#endif

/* The assertion of the pure-C test programs: counts checks, reports a
 * failed one with its location and a printf-style message, and keeps going
 * so one run shows every failure. Each program ends with CHECK_SUMMARY(). */
#ifndef WB_CHECK_H
#define WB_CHECK_H

#include <stdint.h>
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

/* A fixed pseudo-random sequence (xorshift64) for the tests' inputs;
 * check_seed picks where it starts. */
static uint64_t check_rng = 88172645463325252u;
static inline void check_seed(uint64_t seed) {
    check_rng = seed;
}
static inline uint64_t check_random(void) {
    check_rng ^= check_rng << 13;
    check_rng ^= check_rng >> 7;
    check_rng ^= check_rng << 17;
    return check_rng;
}

/* prints the closing line CI reads and gives the exit status */
#define CHECK_SUMMARY()                                                                            \
    (printf("%d passed, %d failed\n", checks - failures, failures), failures == 0 ? 0 : 1)

#endif

/*
 * Shared by the fuzz targets (libFuzzer): taking parameters off the front of
 * an input, a small PRNG seeded from it, and a check that aborts with a
 * message (libFuzzer then saves the input as a crash).
 */
#ifndef WB_FUZZ_H
#define WB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const uint8_t *data;
    size_t size;
} wb_fuzz_input;

/* the next byte of the input, 0 once it is used up */
static inline uint8_t wb_fuzz_byte(wb_fuzz_input *in) {
    if (in->size == 0) return 0;
    uint8_t b = in->data[0];
    in->data++;
    in->size--;
    return b;
}

/* xorshift32: chunk sizes and choices that vary with the input */
static inline uint32_t wb_fuzz_next(uint32_t *state) {
    uint32_t x = *state ? *state : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

#define WB_FUZZ_CHECK(cond)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif

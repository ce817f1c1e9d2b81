/*
 * Shared by the fuzz targets (libFuzzer): taking parameters off the front of
 * an input, a small PRNG seeded from it, and a check that aborts with a
 * message (libFuzzer then saves the input as a crash).
 */
#ifndef WB_FUZZ_H
#define WB_FUZZ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

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

/* How many bytes a simulated read or write moves this time: 1 to `most`,
 * at most `len`; or -1 with errno EINTR once in `eintr_every` calls. */
static inline ssize_t wb_fuzz_amount(uint32_t *rng, uint32_t eintr_every, size_t most, size_t len) {
    uint32_t r = wb_fuzz_next(rng);
    if (r % eintr_every == 0) {
        errno = EINTR;
        return -1;
    }
    size_t n = 1 + r % most;
    return (ssize_t)(n < len ? n : len);
}

/* An input handed out as a simulated read would: in pieces of 1 to `most`
 * bytes, interrupted once in `eintr_every` calls, 0 at the end. */
typedef struct {
    const uint8_t *data;
    size_t size, pos;
    uint32_t rng;
    size_t most;
    uint32_t eintr_every;
} wb_fuzz_source;

static inline ssize_t wb_fuzz_read(wb_fuzz_source *s, void *buf, size_t len) {
    size_t left = s->size - s->pos;
    ssize_t n = wb_fuzz_amount(&s->rng, s->eintr_every, s->most, len < left ? len : left);
    if (n > 0) {
        memcpy(buf, s->data + s->pos, (size_t)n);
        s->pos += (size_t)n;
    }
    return n;
}

#define WB_FUZZ_CHECK(cond)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif

#define _POSIX_C_SOURCE 199309L
#include "spin.h"

#include <time.h>

void wb_spin_init(wb_spin *s, uint64_t iterations) {
    s->remaining = iterations;
    s->value = UINT64_C(0x9E3779B97F4A7C15);
}

bool wb_spin_step(wb_spin *s, uint64_t budget, uint64_t *used) {
    uint64_t n = budget < s->remaining ? budget : s->remaining;
    if (n == 0 && s->remaining > 0) n = 1;
    uint64_t x = s->value;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    s->value = x;
    s->remaining -= n;
    *used += n;
    return s->remaining == 0;
}

uint64_t wb_spin_checksum(const wb_spin *s) {
    return s->value;
}

int64_t wb_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void wb_spin_until_init(wb_spin_until *s, uint64_t microseconds) {
    const uint64_t max_us = UINT64_C(1) << 40; /* ~12 days; keeps the sum below INT64_MAX */
    if (microseconds > max_us) microseconds = max_us;
    s->deadline_ns = wb_monotonic_ns() + (int64_t)microseconds * 1000;
    s->polls = 0;
}

bool wb_spin_until_step(wb_spin_until *s, uint64_t budget, uint64_t *used) {
    uint64_t n = 0;
    bool done;
    do {
        n++;
        done = wb_monotonic_ns() >= s->deadline_ns;
    } while (!done && n < budget);
    s->polls += n;
    *used += n;
    return done;
}

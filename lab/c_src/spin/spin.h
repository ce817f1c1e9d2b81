/*
 * Benchmark workloads, pure C.
 *
 * wb_spin: a fixed amount of CPU work. Each unit is one xorshift64 round on
 * a running value; the rounds have no closed form, so the compiler cannot
 * fold the loop, and the final value is a checksum that is the same however
 * the work was sliced.
 *
 * wb_spin_until: busy-waits until a monotonic-clock deadline. This is the
 * workload of the 2017 "spinsleep" measurements, kept for comparison: its
 * amount of work depends on when it runs, so queued calls do almost none.
 */
#ifndef WB_SPIN_H
#define WB_SPIN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint64_t remaining;
    uint64_t value;
} wb_spin;

void wb_spin_init(wb_spin *s, uint64_t iterations);
/* Runs up to budget iterations (at least one if any remain); adds them to
 * *used and returns true when all are done. */
bool wb_spin_step(wb_spin *s, uint64_t budget, uint64_t *used);
uint64_t wb_spin_checksum(const wb_spin *s);

typedef struct {
    int64_t deadline_ns;
    uint64_t polls;
} wb_spin_until;

int64_t wb_monotonic_ns(void);
void wb_spin_until_init(wb_spin_until *s, uint64_t microseconds);
/* Reads the clock up to budget times; true once the deadline has passed. */
bool wb_spin_until_step(wb_spin_until *s, uint64_t budget, uint64_t *used);

#endif

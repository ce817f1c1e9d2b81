/*
 * The calling thread's CPU time, for code that measures its own work
 * (such as a kernel choosing its fastest path): time the OS gave other
 * threads or processes meanwhile does not count. Header only; the
 * including file defines _POSIX_C_SOURCE 199309L or later before any
 * system header (clock_gettime under -std=c11).
 */
#ifndef WB_PROBE_CPU_CLOCK_H
#define WB_PROBE_CPU_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The thread's CPU time in ns; -1 when the clock cannot be read. */
static inline int64_t wb_thread_cpu_ns(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return -1;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

#endif

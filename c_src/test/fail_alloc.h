/*
 * Allocation failures on demand, for the out-of-memory paths of the
 * pure-C cores. A test binary links fail_alloc.c with the linker's
 * --wrap of malloc, calloc, realloc and aligned_alloc (FAIL_ALLOC_LDFLAGS
 * in the Makefile): every call to them in the binary's own objects then
 * goes through wrappers that fail the allocation asked for, and the
 * objects are the same as every other test's.
 */
#ifndef WB_TEST_FAIL_ALLOC_H
#define WB_TEST_FAIL_ALLOC_H

/* Arms a failure: the allocation `after` allocations from now (0: the
 * next one) fails, once. A negative `after` disarms. */
void wb_fail_alloc_arm(long long after);
/* The failures given since the start. */
unsigned long long wb_fail_alloc_given(void);

#endif

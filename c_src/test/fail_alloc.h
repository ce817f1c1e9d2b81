/*
 * Allocation failures on demand, for the out-of-memory paths of the
 * pure-C cores. A test binary compiles every source with `-include` of
 * this file and links fail_alloc.c: malloc, calloc, realloc and
 * aligned_alloc then go through wrappers that fail the allocation asked
 * for. No system header is included here, so that each source's feature
 * macros still come first.
 */
#ifndef WB_TEST_FAIL_ALLOC_H
#define WB_TEST_FAIL_ALLOC_H

/* Arms a failure: the allocation `after` allocations from now (0: the
 * next one) fails, once. A negative `after` disarms. */
void wb_fail_alloc_arm(long long after);
/* The failures given since the start. */
unsigned long long wb_fail_alloc_given(void);

void *wb_test_malloc(__SIZE_TYPE__ bytes);
void *wb_test_calloc(__SIZE_TYPE__ count, __SIZE_TYPE__ size);
void *wb_test_realloc(void *block, __SIZE_TYPE__ bytes);
void *wb_test_aligned_alloc(__SIZE_TYPE__ alignment, __SIZE_TYPE__ bytes);

#define malloc(bytes)                 wb_test_malloc(bytes)
#define calloc(count, size)           wb_test_calloc(count, size)
#define realloc(block, bytes)         wb_test_realloc(block, bytes)
#define aligned_alloc(alignment, len) wb_test_aligned_alloc(alignment, len)

#endif

/* The wrappers of fail_alloc.h (this file is compiled with it included,
 * as every other source of the binary: the names are undone here). */
#undef malloc
#undef calloc
#undef realloc
#undef aligned_alloc

#include <stdlib.h>

static long long countdown = -1;
static unsigned long long given;

void wb_fail_alloc_arm(long long after) {
    countdown = after;
}

unsigned long long wb_fail_alloc_given(void) {
    return given;
}

static int fail_now(void) {
    if (countdown < 0) return 0;
    if (countdown-- > 0) return 0;
    given++;
    return 1;
}

void *wb_test_malloc(size_t bytes) {
    return fail_now() ? NULL : malloc(bytes);
}

void *wb_test_calloc(size_t count, size_t size) {
    return fail_now() ? NULL : calloc(count, size);
}

void *wb_test_realloc(void *block, size_t bytes) {
    return fail_now() ? NULL : realloc(block, bytes);
}

void *wb_test_aligned_alloc(size_t alignment, size_t bytes) {
    return fail_now() ? NULL : aligned_alloc(alignment, bytes);
}

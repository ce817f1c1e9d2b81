/* The wrappers named by the linker's --wrap (fail_alloc.h): __real_X is
 * the allocator itself. */
#include "fail_alloc.h"

#include <stddef.h>

void *__real_malloc(size_t bytes);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *block, size_t bytes);
void *__real_aligned_alloc(size_t alignment, size_t bytes);
void *__wrap_malloc(size_t bytes);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *block, size_t bytes);
void *__wrap_aligned_alloc(size_t alignment, size_t bytes);

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

void *__wrap_malloc(size_t bytes) {
    return fail_now() ? NULL : __real_malloc(bytes);
}

void *__wrap_calloc(size_t count, size_t size) {
    return fail_now() ? NULL : __real_calloc(count, size);
}

void *__wrap_realloc(void *block, size_t bytes) {
    return fail_now() ? NULL : __real_realloc(block, bytes);
}

void *__wrap_aligned_alloc(size_t alignment, size_t bytes) {
    return fail_now() ? NULL : __real_aligned_alloc(alignment, bytes);
}

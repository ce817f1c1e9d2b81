/*
 * An allocator whose free is told the block's size again, for the pure-C
 * cores' large blocks: malloc and free unless a host sets its own (the
 * NIF sets the VM's, which caches freed memory and accounts for it).
 */
#ifndef WB_SIZED_ALLOC_H
#define WB_SIZED_ALLOC_H

#include <stdlib.h>

typedef struct {
    void *(*alloc)(size_t bytes);
    void (*free)(void *block, size_t bytes);
} wb_sized_allocator;

static inline void *wb_sized_malloc(size_t bytes) {
    return malloc(bytes);
}

static inline void wb_sized_free(void *block, size_t bytes) {
    (void)bytes;
    free(block);
}

/* malloc and free */
#define WB_SIZED_ALLOCATOR_DEFAULT                                                                 \
    { wb_sized_malloc, wb_sized_free }

#endif

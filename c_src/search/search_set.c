/*
 * A candidate set (search.h): the arrays of an owned set, its batches made
 * once (an index), and what a set tells a search before it starts. The
 * search's state is set up in search_init.c and stepped in search.c.
 */
#include "search.h"

#include <stdlib.h>
#include <string.h>

bool wb_search_set_alloc(wb_search_owned_set *s, size_t count, size_t total) {
    memset(s, 0, sizeof *s);
    if (count >= SIZE_MAX / sizeof(uint64_t) - 1 || total == SIZE_MAX) return false;
    s->offsets = calloc(count + 1, sizeof(uint64_t));
    s->bytes = calloc(total + 1, 1); /* never of size 0 */
    if (!s->offsets || !s->bytes) {
        wb_search_set_free(s);
        return false;
    }
    s->owned_bytes = (count + 1) * sizeof(uint64_t) + total + 1;
    s->set = (wb_search_set){.count = count, .bytes = s->bytes, .offsets = s->offsets};
    return true;
}

void wb_search_set_free(wb_search_owned_set *s) {
    free(s->offsets);
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

bool wb_search_batches_build(wb_search_batches *b, const wb_search_set *set) {
    return wb_lanes_index_build(b, set->bytes, set->offsets, set->count);
}

void wb_search_batches_begin(wb_search_batches *b, wb_search_batches_builder *builder) {
    wb_lanes_index_begin(b, builder);
}

wb_lanes_build_status wb_search_batches_step(wb_search_batches *b,
                                             wb_search_batches_builder *builder,
                                             const wb_search_set *set, uint64_t budget,
                                             uint64_t *used) {
    return wb_lanes_index_step(b, builder, set->bytes, set->offsets, set->count, budget, used);
}

uint64_t wb_search_batches_units(size_t count, uint64_t bytes) {
    return wb_lanes_index_units(count, bytes);
}

void wb_search_batches_free(wb_search_batches *b) {
    wb_lanes_index_free(b);
}

size_t wb_search_batches_bytes(const wb_search_batches *b) {
    return b->bytes;
}

const char *wb_search_lanes_name(void) {
    return wb_lanes_name(wb_lanes_current());
}

bool wb_search_bytes_suffice(const wb_search_set *set, const uint8_t *query, size_t qlen,
                             size_t most) {
    return set->ascii && qlen <= most && wb_text_ascii(query, qlen);
}

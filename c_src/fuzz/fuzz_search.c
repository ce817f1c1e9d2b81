/*
 * Fuzz target: the search core (c_src/search), byte mode, distances and
 * nearest with cutoffs, stepped in small budgets, against the plain dynamic
 * programming reference (c_src/test/reference.h).
 *
 * Input: a flags byte (bit 0: a cutoff; bit 1: nearest; bits 2-3: the lane
 * kernel, one of those the CPU has, or none; bit 4: batches made once, as
 * for an index), the cutoff, the
 * limit, the step budget, the query length, the query, then candidates
 * separated by 0xFF bytes.
 */
#include "../search/search.h"
#include "../test/reference.h"
#include "fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    uint8_t flags = wb_fuzz_byte(&in);
    wb_lanes_kernel kernel = (wb_lanes_kernel)((flags >> 2) % WB_LANES_KERNELS);
    if (!wb_lanes_force(kernel)) wb_lanes_force(WB_LANES_BASELINE);
    size_t k = (flags & 1) ? wb_fuzz_byte(&in) : WB_SEARCH_NO_LIMIT;
    size_t limit = (flags & 2) ? 1 + wb_fuzz_byte(&in) % 16 : 0;
    uint64_t budget = 1 + wb_fuzz_byte(&in);
    size_t qlen = wb_fuzz_byte(&in) % 100;
    if (qlen > in.size) qlen = in.size;
    const uint8_t *query = in.data;
    const uint8_t *rest = in.data + qlen;
    size_t rest_len = in.size - qlen;

    /* candidates: the pieces of rest between 0xFF bytes */
    size_t count = 1;
    for (size_t i = 0; i < rest_len; i++)
        count += rest[i] == 0xFF;
    wb_search_owned_set set;
    WB_FUZZ_CHECK(wb_search_set_alloc(&set, count, rest_len));
    size_t c = 0, at = 0;
    for (size_t i = 0; i < rest_len; i++) {
        if (rest[i] == 0xFF)
            set.offsets[++c] = at;
        else
            set.bytes[at++] = rest[i];
    }
    set.offsets[++c] = at;

    size_t *want = malloc(count * sizeof *want);
    WB_FUZZ_CHECK(want);
    for (size_t i = 0; i < count; i++) {
        size_t d = wb_ref_distance_bytes(query, qlen, set.bytes + set.offsets[i],
                                         (size_t)(set.offsets[i + 1] - set.offsets[i]));
        want[i] = k != WB_SEARCH_NO_LIMIT && d > k ? k + 1 : d;
    }
    wb_lanes_index prepared;
    WB_FUZZ_CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, count));
    if (flags & 16) set.set.prepared = &prepared;
    wb_search s;
    WB_FUZZ_CHECK(wb_search_init(&s, &set.set, query, qlen, false, k, limit) == WB_SEARCH_OK);
    uint64_t used = 0;
    size_t steps = 0;
    /* each step takes a candidate, advances a batch by a query byte, or a
     * pair by a column (one byte of the longer string) */
    while (!wb_search_step(&s, budget, &used))
        WB_FUZZ_CHECK(++steps <= count * (2 * qlen + 4) + rest_len);
    WB_FUZZ_CHECK(s.status == WB_SEARCH_OK);
    if (limit == 0) {
        for (size_t i = 0; i < count; i++)
            WB_FUZZ_CHECK(s.distances[i] == want[i]);
    } else {
        /* the hits: the first `limit` of (distance, index) within k */
        const wb_search_hit *hits;
        size_t got = wb_search_hits(&s, &hits), expect = 0;
        size_t top = k == WB_SEARCH_NO_LIMIT ? SIZE_MAX : k;
        for (size_t i = 0; i < count; i++) {
            if (want[i] > top) continue;
            size_t rank = 0; /* how many candidates come before i */
            for (size_t j = 0; j < count; j++)
                if (want[j] <= top && (want[j] < want[i] || (want[j] == want[i] && j < i))) rank++;
            if (rank < limit) {
                WB_FUZZ_CHECK(rank < got && hits[rank].index == i &&
                              hits[rank].distance == want[i]);
                expect++;
            }
        }
        WB_FUZZ_CHECK(got == expect);
    }
    wb_search_free(&s);
    wb_lanes_index_free(&prepared);
    wb_search_set_free(&set);
    free(want);
    return 0;
}

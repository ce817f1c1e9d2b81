/*
 * Fuzz target: the search core (c_src/search), byte mode, distances and
 * nearest with cutoffs, stepped in small budgets, against the plain dynamic
 * programming reference (c_src/test/reference.h). Then the operations of
 * wb_search_init_op on the same query and candidates, from the plain set
 * and from its batches made once, stepped in the same budgets (a budget
 * byte of 255: in one go): the LCS length, the OSA distance and Hamming's
 * equal positions of every candidate the batches hold, against the
 * references of c_src/test/fuzzy_reference.h, and WB_SEARCH_NOT_DONE for
 * every other; or Levenshtein, every candidate's distance.
 *
 * Input: a flags byte (bit 0: a cutoff; bit 1: nearest; bits 2-3: the lane
 * kernel, one of those the CPU has, or none; bit 4: batches made once, as
 * for an index; bits 5-6: the operation, LCS, OSA, Hamming (and Jaro) or
 * Levenshtein; bit 7: the operation in codepoint mode, the set marked
 * ASCII when it is), the cutoff, the
 * limit, the step budget, the query length, the query, then candidates
 * separated by 0xFF bytes.
 */
#include "../search/search.h"
#include "../test/fuzzy_reference.h"
#include "../test/reference.h"
#include "fuzz.h"

#include <string.h>

static const wb_search_op ops[] = {WB_SEARCH_LCS, WB_SEARCH_OSA, WB_SEARCH_HAMMING,
                                   WB_SEARCH_LEVENSHTEIN};

static bool is_ascii(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 0x80) return false;
    return true;
}

/* Units decoded as op's reference takes them: bytes, or codepoints (false
 * when invalid UTF-8); out has room for n. */
static bool units(const uint8_t *s, size_t n, bool codepoints, uint32_t *out, size_t *len) {
    if (codepoints) {
        long r = wb_ref_decode_utf8(s, n, out);
        *len = r < 0 ? 0 : (size_t)r;
        return r >= 0;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = s[i];
    *len = n;
    return true;
}

/* wb_search_init_op(op) on the plain set, then on its batches made once:
 * every candidate's value against the references. */
static void check_op(const wb_search_owned_set *set, const wb_lanes_index *prepared,
                     const uint8_t *query, size_t qlen, bool codepoints, wb_search_op op,
                     uint64_t budget) {
    size_t count = set->set.count, total = (size_t)set->offsets[count];
    /* codepoint mode is byte mode for an ASCII query in a set marked ASCII */
    bool bytes = !codepoints || (set->set.ascii && is_ascii(query, qlen));
    bool laned = wb_lanes_current() != WB_LANES_OFF && qlen >= 1 && bytes;
    uint32_t *wq = malloc((qlen + 1) * sizeof *wq), *wt = malloc((total + 1) * sizeof *wt);
    uint32_t *want = malloc((count + 1) * sizeof *want);
    WB_FUZZ_CHECK(wq && wt && want);
    size_t wqlen;
    bool query_ok = units(query, qlen, !bytes, wq, &wqlen);
    size_t first_bad = SIZE_MAX; /* Levenshtein: the first candidate not UTF-8 */
    for (size_t i = 0; query_ok && i < count; i++) {
        const uint8_t *t = set->bytes + set->offsets[i];
        size_t n = (size_t)(set->offsets[i + 1] - set->offsets[i]), wn;
        want[i] = WB_SEARCH_NOT_DONE;
        if (op == WB_SEARCH_LEVENSHTEIN) {
            if (units(t, n, !bytes, wt, &wn))
                want[i] = (uint32_t)wb_ref_distance(wq, wqlen, wt, wn);
            else if (first_bad == SIZE_MAX)
                first_bad = i;
        } else if (laned && n >= 1 && n <= WB_LANES_LONGEST) {
            units(t, n, false, wt, &wn);
            size_t trans, matches;
            if (op == WB_SEARCH_JARO) {
                matches = fzr_jaro_counts(wq, qlen, wt, n, &trans);
                want[i] = qlen <= WB_LANES_JARO_QUERY_MOST ? (uint32_t)(matches | trans << 8)
                                                           : WB_SEARCH_NOT_DONE;
            } else {
                want[i] = (uint32_t)(op == WB_SEARCH_LCS ? fzr_lcs(wq, qlen, wt, n)
                                     : op == WB_SEARCH_OSA
                                         ? fzr_osa(wq, qlen, wt, n)
                                         : (qlen > n ? qlen : n) - fzr_hamming(wq, qlen, wt, n));
            }
        }
    }
    wb_search_set sets[2] = {set->set, set->set};
    sets[0].prepared = NULL;
    sets[1].prepared = prepared;
    for (int which = 0; which < 2; which++) {
        wb_search s;
        wb_search_status st = wb_search_init_op(&s, &sets[which], query, qlen, codepoints, op);
        WB_FUZZ_CHECK(st == (query_ok ? WB_SEARCH_OK : WB_SEARCH_EUTF8_QUERY));
        if (st != WB_SEARCH_OK) continue;
        uint64_t used = 0;
        size_t steps = 0;
        /* as above; in codepoint mode, the pair core takes a few steps
         * more per candidate (about 6 for an empty one with a budget of 1) */
        while (!wb_search_step(&s, budget, &used))
            WB_FUZZ_CHECK(++steps <= count * (2 * qlen + 16) + 4 * total + 16);
        if (first_bad != SIZE_MAX) {
            WB_FUZZ_CHECK(s.status == WB_SEARCH_EUTF8_CANDIDATE && s.failed_at == first_bad);
        } else {
            WB_FUZZ_CHECK(s.status == WB_SEARCH_OK);
            for (size_t i = 0; i < count; i++) {
                if (s.distances[i] != want[i])
                    fprintf(stderr, "op %d %s candidate %zu: %u, want %u\n", (int)op,
                            which ? "prepared" : "plain", i, s.distances[i], want[i]);
                WB_FUZZ_CHECK(s.distances[i] == want[i]);
            }
        }
        wb_search_free(&s);
    }
    free(wq);
    free(wt);
    free(want);
}

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

    set.set.ascii = is_ascii(set.bytes, at);
    wb_search_op op = ops[(flags >> 5) & 3];
    check_op(&set, &prepared, query, qlen, (flags & 128) != 0, op,
             budget == 256 ? UINT64_MAX : budget);
    /* Jaro beside Hamming, the cheapest */
    if (op == WB_SEARCH_HAMMING)
        check_op(&set, &prepared, query, qlen, (flags & 128) != 0, WB_SEARCH_JARO,
                 budget == 256 ? UINT64_MAX : budget);
    wb_lanes_force(WB_LANES_KERNELS);
    wb_lanes_index_free(&prepared);
    wb_search_set_free(&set);
    free(want);
    return 0;
}

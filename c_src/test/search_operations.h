/*
 * The operations other than Levenshtein (included by test_search.c): the
 * LCS, OSA distance, equal positions and Jaro's counts of the candidates
 * the batches hold, against the references of fuzzy_reference.h.
 */
#ifndef WB_TEST_SEARCH_OPERATIONS_H
#define WB_TEST_SEARCH_OPERATIONS_H

/* The symbols of bytes as the references take them. */
static uint32_t *widen(const uint8_t *b, size_t n) {
    uint32_t *w = malloc((n ? n : 1) * sizeof *w);
    CHECK(w != NULL, "alloc");
    for (size_t i = 0; i < n; i++)
        w[i] = b[i];
    return w;
}

/* Jaro's value as WB_SEARCH_JARO gives it, by the reference */
static size_t ref_jaro(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    size_t trans, matches = fzr_jaro_counts(a, m, b, n, &trans);
    return matches | trans << 8;
}

/* The operations other than Levenshtein: every candidate the batches hold
 * (1..64 bytes, a query of at least one byte, the kernel on, bytes or
 * ASCII codepoints; Jaro: a query of up to 64) has its LCS, OSA
 * distance, equal positions or Jaro's counts as the references count them; every other one is left
 * WB_SEARCH_NOT_DONE. A list and its index, in one go and one unit at a time. */
static void test_operations(void) {
    const wb_search_op ops[] = {WB_SEARCH_LCS, WB_SEARCH_OSA, WB_SEARCH_HAMMING, WB_SEARCH_JARO};
    for (int round = 0; round < 36; round++) {
        wb_search_owned_set set;
        unsigned alphabets[] = {2, 4, 26, 256};
        unsigned alphabet = alphabets[round % 4];
        /* lengths past an index's byte for them too (WB_LANES_LENGTH_MOST) */
        size_t max_lens[] = {10, 34, 80, 300};
        random_set(&set, 1 + check_random() % 300, max_lens[(round / 4) % 4], alphabet);
        uint8_t q[300];
        size_t qlens[] = {0, 1, 5, 20, 63, 64, 65, 90, 300};
        size_t qlen = qlens[round % 9];
        random_query(q, qlen, alphabet);
        /* codepoint mode: in byte mode when the set and the query are ASCII
         * (alphabets up to 26), otherwise nothing in batches */
        bool ascii = alphabet <= 26, codepoints = round % 5 == 4 && (ascii || qlen == 0);
        set.set.ascii = ascii;
        wb_lanes_index prepared;
        CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, set.set.count), "build");
        wb_search_set indexed = set.set;
        indexed.prepared = &prepared;
        /* the batches know which candidates hold whitespace */
        for (size_t i = 0; i < set.set.count; i++) {
            bool space = false;
            for (uint64_t k = set.offsets[i]; k < set.offsets[i + 1]; k++)
                space = space || set.bytes[k] == ' ' || (set.bytes[k] >= 9 && set.bytes[k] <= 13) ||
                        (set.bytes[k] >= 0x1C && set.bytes[k] <= 0x1F);
            CHECK(((prepared.spaced[i / 64] >> (i % 64)) & 1) == space, "spaced %zu", i);
            /* and each one's length, up to WB_LANES_LENGTH_MOST */
            uint64_t n = set.offsets[i + 1] - set.offsets[i];
            CHECK(prepared.length[i] == (n < WB_LANES_LENGTH_MOST ? n : WB_LANES_LENGTH_MOST),
                  "length %zu", i);
        }
        uint32_t *wq = widen(q, qlen);
        for (size_t o = 0; o < 4; o++) {
            size_t *want = malloc(set.set.count * sizeof *want);
            for (size_t i = 0; i < set.set.count; i++) {
                const uint8_t *t = set.bytes + set.offsets[i];
                size_t n = (size_t)(set.offsets[i + 1] - set.offsets[i]);
                bool laned = wb_lanes_current() != WB_LANES_OFF && qlen >= 1 && n >= 1 &&
                             n <= WB_LANES_LONGEST && (!codepoints || ascii) &&
                             (ops[o] != WB_SEARCH_JARO || qlen <= WB_LANES_JARO_QUERY_MOST);
                uint32_t *wt = widen(t, n);
                want[i] = !laned                    ? WB_SEARCH_NOT_DONE
                          : ops[o] == WB_SEARCH_LCS ? fzr_lcs(wq, qlen, wt, n)
                          : ops[o] == WB_SEARCH_OSA ? fzr_osa(wq, qlen, wt, n)
                          : ops[o] == WB_SEARCH_JARO
                              ? ref_jaro(wq, qlen, wt, n)
                              : (qlen > n ? qlen : n) - fzr_hamming(wq, qlen, wt, n);
                free(wt);
            }
            const wb_search_set *sets[] = {&set.set, &indexed};
            for (int which = 0; which < 2; which++)
                for (uint64_t budget = 1; budget != 0; budget = budget == 1 ? UINT64_MAX : 0) {
                    wb_search s;
                    CHECK(wb_search_init_op(&s, sets[which], q, qlen, codepoints, ops[o]) ==
                              WB_SEARCH_OK,
                          "init");
                    run(&s, budget);
                    CHECK(s.status == WB_SEARCH_OK, "status");
                    for (size_t i = 0; i < set.set.count; i++)
                        CHECK(s.distances[i] == want[i],
                              "op %d candidate %zu: %u, want %zu (qlen %zu, len %zu, %s)",
                              (int)ops[o], i, s.distances[i], want[i], qlen,
                              (size_t)(set.offsets[i + 1] - set.offsets[i]),
                              which ? "index" : "list");
                    wb_search_free(&s);
                }
            free(want);
        }
        free(wq);
        wb_lanes_index_free(&prepared);
        wb_search_set_free(&set);
    }
}

#endif

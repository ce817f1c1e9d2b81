/*
 * The quick Damerau-Levenshtein's rows under a cut (included by
 * test_fuzzy.c): queries and their edited or random candidates over 2 to
 * 26 letters, at cuts around the distance, against the reference.
 */
#ifndef WB_TEST_FUZZY_DAMERAU_CUTS_H
#define WB_TEST_FUZZY_DAMERAU_CUTS_H

/* t: the query edited (swaps of neighbours and of bytes apart, with or
 * without edits between, substitutions, insertions, deletions), or
 * random; bytes from the first `letters` of the alphabet */
static size_t damerau_candidate(const uint8_t *a, size_t m, size_t letters, uint8_t *t,
                                size_t most) {
    size_t n = 0;
    if (check_random() % 4 == 0) {
        n = (size_t)(check_random() % (most + 1));
        for (size_t j = 0; j < n; j++)
            t[j] = (uint8_t)('a' + check_random() % letters);
        return n;
    }
    memcpy(t, a, m);
    n = m;
    size_t edits = (size_t)(check_random() % 8);
    for (size_t e = 0; e < edits; e++) {
        size_t at = n > 0 ? (size_t)(check_random() % n) : 0;
        switch (check_random() % 5) {
        case 0: /* a swap, `gap` bytes apart */
            if (n >= 2) {
                size_t gap = (size_t)(check_random() % 4), to = at + 1 + gap;
                if (to < n) {
                    uint8_t x = t[at];
                    t[at] = t[to];
                    t[to] = x;
                }
            }
            break;
        case 1:
            if (n > 0) t[at] = (uint8_t)('a' + check_random() % letters);
            break;
        case 2:
            if (n < most) {
                memmove(t + at + 1, t + at, n - at);
                t[at] = (uint8_t)('a' + check_random() % letters);
                n++;
            }
            break;
        case 3:
            if (n > 0) {
                memmove(t + at, t + at + 1, n - at - 1);
                n--;
            }
            break;
        default: /* a swap of neighbours with a byte put between */
            if (n >= 2 && n < most && at + 1 < n) {
                uint8_t x = t[at];
                t[at] = t[at + 1];
                t[at + 1] = x;
                memmove(t + at + 2, t + at + 1, n - at - 1);
                t[at + 1] = (uint8_t)('a' + check_random() % letters);
                n++;
            }
        }
    }
    return n;
}

/* Every cut from 1 to one past the distance, and none, against the
 * reference's distance: below the cut its own, else the cut (at least
 * the cut, never past its own) */
static void test_damerau_cuts(size_t count) {
    static const size_t letters_of[] = {2, 3, 4, 26};
    static uint8_t t[WB_FZ_QUICK_MATRIX_MOST];
    static wb_fz_quick q;
    size_t cuts = 0;
    wb_fz_options o = {
        .scorer = WB_FZ_DAMERAU_LEVENSHTEIN, .kind = WB_FZ_DISTANCE, .ins = 1, .del = 1, .sub = 1};
    for (size_t round = 0; round < count; round++) {
        size_t letters = letters_of[check_random() % 4];
        bool long_pair = round % 50 == 0;
        size_t m = 1 + (size_t)(check_random() % (long_pair ? 64 : 24));
        size_t most = long_pair ? WB_FZ_QUICK_MATRIX_MOST : 40;
        uint8_t a[64];
        for (size_t i = 0; i < m; i++)
            a[i] = (uint8_t)('a' + check_random() % letters);
        size_t n = damerau_candidate(a, m, letters, t, most);
        uint32_t a32[64], t32[WB_FZ_QUICK_MATRIX_MOST];
        for (size_t i = 0; i < m; i++)
            a32[i] = a[i];
        for (size_t j = 0; j < n; j++)
            t32[j] = t[j];
        size_t d = fzr_damerau(a32, m, t32, n), lcs = fzr_lcs(a32, m, t32, n);
        CHECK(wb_fz_quick_init(&q, &o, a, m), "quick init");
        /* the bits counted by shifts and adds too, where the CPU counts */
        q.popcnt = q.popcnt && round % 2 == 0;
        for (size_t cut = 1; cut <= d + 2; cut++) {
            size_t at = cut == d + 2 ? SIZE_MAX : cut;
            double score;
            bool passed;
            wb_fz_bar badness;
            wb_fz_quick_damerau(&q, t, n, lcs, NULL, at, &score, &passed, &badness);
            double want = (double)(d < at ? d : at);
            CHECK(score == want,
                  "Damerau-Levenshtein of %zu and %zu bytes (%zu letters) cut at "
                  "%zu: %.17g, want %.17g (its own %zu)",
                  m, n, letters, cut, score, want, d);
            cuts++;
        }
        wb_fz_quick_free(&q);
    }
    printf("the quick Damerau-Levenshtein at %zu cuts of %zu pairs\n", cuts, count);
}

#endif

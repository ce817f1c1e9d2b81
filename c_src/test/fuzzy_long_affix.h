/*
 * Ratios of long texts that share a long prefix and suffix (included by
 * test_fuzzy.c): the common affix is stripped a budget at a time before
 * the LCS kernel, so equal and near-equal texts of 100,000+ symbols score
 * in linear time. `:ratio`, `:token_sort_ratio`, `:token_ratio` and
 * `:wratio` on distinct sorted words of 100,000+ symbols (equal; equal
 * but one symbol), whose scores are known exactly (the reference's full
 * matrix is out of reach there), and on a disjoint pair of 100,000 and 200 symbols against
 * the reference; at budgets 1, 2, 3, 7, 64, 1000, each equal to the score
 * in one go, every step adding at least one unit and at most the budget
 * plus LA_SLACK, and the units of the whole run within wb_fz_units and,
 * for the equal and near-equal pairs, within 16 a symbol (linear).
 */
#ifndef WB_TEST_FUZZY_LONG_AFFIX_H
#define WB_TEST_FUZZY_LONG_AFFIX_H

/* what a step may add past its budget: a kernel's or a phase's last unit */
#define LA_SLACK 64

/* words of 9 letters and a space: 10,003 of them, less the last space */
#define LA_WORDS 10003
#define LA_LEN   (10 * LA_WORDS - 1)

static size_t long_affix_steps;
static uint64_t long_affix_over;

/* words of 1 to 7 letters, single spaces between them */
static size_t la_words(uint32_t *s, size_t len, uint32_t first, uint32_t letters) {
    size_t i = 0;
    while (i < len) {
        size_t w = 1 + check_random() % 7;
        for (size_t j = 0; j < w && i < len; j++)
            s[i++] = first + check_random() % letters;
        if (i < len - 1) s[i++] = ' ';
    }
    return len;
}

/* distinct words of 9 letters from b, c, d counting up (sorted already:
 * their sorted join is the text itself), single spaces between them */
static size_t la_sorted_words(uint32_t *s) {
    size_t i = 0;
    for (size_t w = 0; w < LA_WORDS; w++) {
        for (size_t j = 0, v = w, d = 19683 / 3; j < 9; j++, v %= d, d /= 3)
            s[i++] = 'b' + (uint32_t)(v / d);
        if (w + 1 < LA_WORDS) s[i++] = ' ';
    }
    return i;
}

static void la_check(wb_fz_scorer scorer, const char *what, const uint32_t *a, size_t m,
                     const uint32_t *b, size_t n, double lo, double hi) {
    static const uint64_t budgets[] = {1, 2, 3, 7, 64, 1000};
    wb_fz_options o = {.scorer = scorer, .kind = WB_FZ_SIMILARITY, .ins = 1, .del = 1, .sub = 1};
    double one;
    bool passed;
    bool ok = wb_fz_score(&o, a, m, b, n, &one, &passed);
    CHECK(ok && one >= lo && one <= hi, "%s %s (%zu, %zu): in one go %.17g, want %.17g..%.17g",
          scorer_names[scorer], what, m, n, one, lo, hi);
    uint64_t units = wb_fz_units(&o, m, n);
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        wb_fz s;
        if (!wb_fz_start(&s, &o, a, m, b, n)) {
            CHECK(false, "%s %s: start failed", scorer_names[scorer], what);
            continue;
        }
        uint64_t used = 0, before = 0;
        bool done = false, bounded = true;
        while (!done) {
            done = wb_fz_step(&s, budgets[i], &used);
            uint64_t add = used - before;
            before = used;
            long_affix_steps++;
            if (add > budgets[i] && add - budgets[i] > long_affix_over)
                long_affix_over = add - budgets[i];
            if ((!done && add == 0) || add > budgets[i] + LA_SLACK) bounded = false;
        }
        CHECK(bounded, "%s %s (%zu, %zu) at budget %llu: a step out of its bounds",
              scorer_names[scorer], what, m, n, (unsigned long long)budgets[i]);
        CHECK(!s.failed && s.score == one, "%s %s at budget %llu: %.17g, in one go %.17g",
              scorer_names[scorer], what, (unsigned long long)budgets[i], s.score, one);
        /* equal or near-equal: linear in the symbols, the affix stripped
         * (the kernel on the whole would take m * n / 64 units) */
        CHECK(lo < 99.0 || used <= 16 * (uint64_t)(m + n),
              "%s %s at budget %llu: %llu units, more than 16 per symbol", scorer_names[scorer],
              what, (unsigned long long)budgets[i], (unsigned long long)used);
        CHECK(used <= units, "%s %s at budget %llu: %llu units, wb_fz_units %llu",
              scorer_names[scorer], what, (unsigned long long)budgets[i], (unsigned long long)used,
              (unsigned long long)units);
        wb_fz_free(&s);
        if (getenv("LA_VERBOSE"))
            printf("%s %s budget %llu: %llu units\n", scorer_names[scorer], what,
                   (unsigned long long)budgets[i], (unsigned long long)used);
    }
}

static void test_long_affix(void) {
    static const wb_fz_scorer scorers[] = {WB_FZ_RATIO, WB_FZ_TOKEN_SORT_RATIO, WB_FZ_TOKEN_RATIO,
                                           WB_FZ_WRATIO};
    uint32_t *a = malloc(LA_LEN * sizeof *a), *b = malloc(LA_LEN * sizeof *b);
    if (!a || !b) {
        CHECK(false, "long affix: out of memory");
        free(a);
        free(b);
        return;
    }
    size_t m = la_sorted_words(a);
    memcpy(b, a, m * sizeof *a);
    for (size_t i = 0; i < sizeof scorers / sizeof scorers[0]; i++)
        la_check(scorers[i], "equal", a, m, b, m, 100.0, 100.0);
    /* a word's last letter b made a: a word of its own that sorts where
     * it was, so every measure is one substitution (2 indels) in 2 * m
     * symbols (the token sets' near 100 but below: the old and the new
     * word against the 10,000 others) */
    size_t at = (m / 20) * 10 + 8;
    while (b[at] != 'b')
        at += 10;
    b[at] = 'a';
    double near = wb_fz_ratio_of(2, 2 * m);
    for (size_t i = 0; i < sizeof scorers / sizeof scorers[0]; i++)
        la_check(scorers[i], "one symbol apart", a, m, b, m, near, near);
    /* disjoint: a long side of letters against a short one of digits */
    size_t n = la_words(b, 200, '0', 10);
    CHECK(m == LA_LEN, "long affix: %zu symbols", m);
    for (size_t i = 0; i < 2; i++) {
        fzr_raw r = fzr_compute(
            &(wb_fz_options){
                .scorer = scorers[i], .kind = WB_FZ_SIMILARITY, .ins = 1, .del = 1, .sub = 1},
            a, m, b, n);
        la_check(scorers[i], "disjoint", a, m, b, n, r.similarity, r.similarity);
    }
    printf("long affixes: %zu steps, at most %llu units past a budget\n", long_affix_steps,
           (unsigned long long)long_affix_over);
    free(a);
    free(b);
}

#endif

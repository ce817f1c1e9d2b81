/*
 * Part of test_fuzzy.c: the set-up of a kernel over a long side is done
 * in its steps, a budget at a time, not at init nor all at once. Counted
 * in the words set up, not in time, at budgets small against the input:
 *  - Levenshtein: the blocks entering the band (two words each) in a step
 *    are at most max(1, budget), from its own pattern and from a query's
 *    (wb_fz_lev_init_with, as an extract runs it);
 *  - the LCS: the words of its vector set up in a step, at most
 *    max(1, budget), and in a partial ratio's windows over a long needle;
 *  - Hamming: the positions compared in a step, at most 16 a chunk of
 *    HAMMING_CHUNK_UNITS (2) units, one chunk at least;
 * each answer equal to the reference's, or to the one-go answer where the
 * reference would take too long.
 */
#ifndef WB_TEST_FUZZY_SETUP_STEPS_H
#define WB_TEST_FUZZY_SETUP_STEPS_H

#include "../fuzzy/fuzzy.h"
#include "../metric/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzzy_reference.h"

#define SS_LONG (64 * 300) /* a pattern of 300 blocks */

static uint32_t ss_a[SS_LONG + 200], ss_b[SS_LONG + 200];

/* a of m symbols ('a'.. in 13), b of n ('a'.. in 11), b's first m those
 * of a with one in 97 changed when `near` */
static void ss_fill(size_t m, size_t n, bool near) {
    for (size_t i = 0; i < m; i++)
        ss_a[i] = 'a' + (uint32_t)(i * 7 % 13);
    for (size_t j = 0; j < n; j++)
        ss_b[j] = near && j < m ? (j % 97 == 5 ? 'z' : ss_a[j]) : 'a' + (uint32_t)(j * 5 % 11);
}

static uint64_t ss_most(uint64_t budget) {
    return budget > 0 ? budget : 1;
}

/* Levenshtein of ss_a (m) against ss_b (n) at `budget` a step: each
 * step's blocks entering the band (k.last's rise) and units bounded; the
 * distance. */
static size_t ss_lev_run(const wb_fz_pattern *query, size_t m, size_t n, size_t cutoff,
                         uint64_t budget) {
    wb_fz_lev k;
    bool ok = query ? wb_fz_lev_init_with(&k, query, ss_b, n, cutoff)
                    : wb_fz_lev_init(&k, ss_a, m, ss_b, n, cutoff);
    CHECK(ok, "lev init %zu x %zu", m, n);
    if (!ok) return SIZE_MAX;
    uint64_t used = 0;
    size_t worst = 0, worst_units = 0;
    bool done = false;
    while (!done) {
        size_t before = k.last;
        uint64_t was = used;
        done = wb_fz_lev_step(&k, budget, &used);
        if (k.last - before > worst) worst = k.last - before;
        if (used - was > worst_units) worst_units = (size_t)(used - was);
    }
    CHECK(worst <= ss_most(budget) && worst_units <= ss_most(budget),
          "lev %s %zu x %zu cutoff %lld budget %llu: %zu blocks entered in a step (at most "
          "%llu), %zu units",
          query ? "with a query" : "own pattern", m, n,
          cutoff == WB_FZ_NO_CUTOFF ? -1LL : (long long)cutoff, (unsigned long long)budget, worst,
          (unsigned long long)ss_most(budget), worst_units);
    size_t d = k.result;
    wb_fz_lev_free(&k);
    return d;
}

static void test_setup_lev(void) {
    static const uint64_t budgets[] = {1, 3, 64, 1000};
    /* a query of 300 blocks against a short text (the band is all of it
     * at column 1: no cutoff, or a wide one) */
    ss_fill(SS_LONG, 150, false);
    wb_fz_pattern query;
    CHECK(wb_fz_pattern_init(&query, ss_a, SS_LONG), "pattern init");
    static const size_t cutoffs[] = {WB_FZ_NO_CUTOFF, SS_LONG - 100, SS_LONG};
    for (size_t c = 0; c < sizeof cutoffs / sizeof *cutoffs; c++) {
        uint64_t want = fzr_levenshtein(ss_a, SS_LONG, ss_b, 150, 1, 1, 1);
        if (cutoffs[c] != WB_FZ_NO_CUTOFF && want > cutoffs[c]) want = cutoffs[c] + 1;
        for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
            size_t got = ss_lev_run(&query, SS_LONG, 150, cutoffs[c], budgets[i]);
            CHECK(got == want, "lev with a query cutoff %lld budget %llu: %zu, want %llu",
                  cutoffs[c] == WB_FZ_NO_CUTOFF ? -1LL : (long long)cutoffs[c],
                  (unsigned long long)budgets[i], got, (unsigned long long)want);
        }
    }
    wb_fz_pattern_free(&query);
    /* its own pattern of 300 blocks against a near text (a band of a
     * cutoff, and none), against the one-go distance */
    ss_fill(SS_LONG, SS_LONG + 100, true);
    static const size_t own[] = {WB_FZ_NO_CUTOFF, 400};
    for (size_t c = 0; c < sizeof own / sizeof *own; c++) {
        size_t want = ss_lev_run(NULL, SS_LONG, SS_LONG + 100, own[c], UINT64_MAX / 4);
        for (size_t i = 1; i < sizeof budgets / sizeof *budgets; i++) {
            size_t got = ss_lev_run(NULL, SS_LONG, SS_LONG + 100, own[c], budgets[i]);
            CHECK(got == want, "lev own pattern cutoff %lld budget %llu: %zu, in one go %zu",
                  own[c] == WB_FZ_NO_CUTOFF ? -1LL : (long long)own[c],
                  (unsigned long long)budgets[i], got, want);
        }
    }
}

/* The LCS of a query of 300 blocks against a short text: its vector's
 * words set up a budget at a time (none but the first at init). */
static void test_setup_lcs(void) {
    static const uint64_t budgets[] = {1, 3, 64, 1000};
    ss_fill(SS_LONG, 150, false);
    wb_fz_pattern query;
    CHECK(wb_fz_pattern_init(&query, ss_a, SS_LONG), "pattern init");
    size_t want = fzr_lcs(ss_a, SS_LONG, ss_b, 150);
    for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
        wb_fz_lcs k;
        CHECK(wb_fz_lcs_init_with(&k, &query, ss_b, 150), "lcs init");
        size_t worst = k.ready, worst_units = 0;
        uint64_t used = 0;
        bool done = false;
        while (!done) {
            size_t before = k.ready;
            uint64_t was = used;
            done = wb_fz_lcs_step(&k, budgets[i], &used);
            if (k.ready - before > worst) worst = k.ready - before;
            if (used - was > worst_units) worst_units = (size_t)(used - was);
        }
        CHECK(worst <= ss_most(budgets[i]) && worst_units <= ss_most(budgets[i]) &&
                  k.result == want,
              "lcs with a query budget %llu: %zu words set up at once (at most %llu), %zu units "
              "a step; %zu, want %zu",
              (unsigned long long)budgets[i], worst, (unsigned long long)ss_most(budgets[i]),
              worst_units, k.result, want);
        wb_fz_lcs_free(&k);
    }
    wb_fz_pattern_free(&query);
}

/* A partial ratio of a needle of 100 blocks in a text two symbols
 * longer: the LCS kernel of its passes and windows sets its vector up a
 * budget at a time; the score equals the one-go score. */
static void test_setup_partial(void) {
    enum { NEEDLE = 64 * 100 };
    ss_fill(NEEDLE, NEEDLE + 2, true);
    wb_fz_options o = {.scorer = WB_FZ_PARTIAL_RATIO, .kind = WB_FZ_SIMILARITY};
    double want = 0.0;
    bool passed;
    CHECK(wb_fz_score(&o, ss_a, NEEDLE, ss_b, NEEDLE + 2, &want, &passed), "partial in one go");
    static const uint64_t budgets[] = {7, 64};
    for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
        static wb_fz s;
        CHECK(wb_fz_start(&s, &o, ss_a, NEEDLE, ss_b, NEEDLE + 2), "partial start");
        uint64_t used = 0;
        size_t worst = 0;
        bool done = false;
        while (!done) {
            size_t before = s.kernel_live ? s.k.lcs.ready : 1;
            done = wb_fz_step(&s, budgets[i], &used);
            size_t after = s.kernel_live ? s.k.lcs.ready : 0;
            if (after > before && after - before > worst) worst = after - before;
        }
        double got = s.score;
        wb_fz_free(&s);
        CHECK(worst <= budgets[i] && got == want,
              "partial of a needle of %d at budget %llu: %zu words set up in a step (at most "
              "%llu); %.17g, in one go %.17g",
              NEEDLE, (unsigned long long)budgets[i], worst, (unsigned long long)budgets[i], got,
              want);
    }
}

/* Hamming on 1,000 bytes: 16 positions a chunk of 2 units, one chunk at
 * least a step. */
static void test_setup_hamming(void) {
    static const uint64_t budgets[] = {1, 2, 3, 7, 64};
    static uint8_t a[1000], b[1000];
    uint32_t wa[1000], wb[1000];
    for (size_t i = 0; i < 1000; i++) {
        wa[i] = a[i] = (uint8_t)('a' + i * 7 % 13);
        wb[i] = b[i] = (uint8_t)('a' + i * 5 % 11);
    }
    size_t want = fzr_hamming(wa, 1000, wb, 1000);
    for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++) {
        wb_fz_hamming k;
        wb_fz_hamming_init_bytes(&k, a, 1000, b, 1000, WB_FZ_NO_CUTOFF);
        size_t worst = 0;
        uint64_t used = 0;
        bool done = false;
        while (!done) {
            size_t before = k.at;
            done = wb_fz_hamming_step(&k, budgets[i], &used);
            if (k.at - before > worst) worst = k.at - before;
        }
        uint64_t most = 16 * (budgets[i] / 2 > 0 ? budgets[i] / 2 : 1);
        CHECK(worst <= most && k.result == want,
              "hamming bytes budget %llu: %zu positions in a step (at most %llu); %zu, want %zu",
              (unsigned long long)budgets[i], worst, (unsigned long long)most, k.result, want);
    }
}

static void test_setup_steps(void) {
    test_setup_lev();
    test_setup_lcs();
    test_setup_partial();
    test_setup_hamming();
}

#endif

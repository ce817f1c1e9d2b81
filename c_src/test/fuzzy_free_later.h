/*
 * Part of test_fuzzy.c: a pair scorer given a free_later (fuzzy.h) hands
 * Jaro's large blocks to it, a partial ratio's needle patterns, and the
 * Levenshtein, Indel and OSA kernels' own patterns, and
 * only those of 64 KiB and up, each once
 * (ASan: nothing freed twice or leaked), with the score of the pair
 * scored without it; without one, nothing is handed over.
 */
#ifndef WB_TEST_FUZZY_FREE_LATER_H
#define WB_TEST_FUZZY_FREE_LATER_H

#include "../fuzzy/fuzzy.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static size_t fl_handed, fl_small;

static void fl_free_later(void *block, size_t bytes) {
    fl_handed++;
    fl_small += bytes < 64 * 1024;
    free(block);
}

/* The score of o on a of m symbols ('a'.. in 13) against n ('a'.. in
 * 11), stepped at `budget` with free_later or not, against the score of
 * the pair in one call; fl_handed counts what was handed over. */
static void fl_score(const wb_fz_options *o, const char *name, size_t m, size_t n, bool hook,
                     uint64_t budget) {
    static uint32_t a[3000], b[8000];
    for (size_t i = 0; i < m; i++)
        a[i] = 'a' + (uint32_t)(i * 7 % 13);
    for (size_t i = 0; i < n; i++)
        b[i] = 'a' + (uint32_t)(i * 5 % 11);
    double want;
    bool want_passed;
    CHECK(wb_fz_score(o, a, m, b, n, &want, &want_passed), "score");
    static wb_fz s;
    CHECK(wb_fz_start(&s, o, a, m, b, n), "start");
    if (hook) s.free_later = fl_free_later;
    fl_handed = fl_small = 0;
    uint64_t used = 0;
    while (!wb_fz_step(&s, budget, &used)) {
    }
    double got = s.score;
    wb_fz_free(&s);
    CHECK(got == want, "%s with%s free_later at budget %llu: %.17g, without %.17g", name,
          hook ? "" : "out", (unsigned long long)budget, got, want);
    CHECK(fl_small == 0, "%zu blocks under 64 KiB handed to free_later, want 0", fl_small);
}

/* Jaro (and Jaro-Winkler) of a pair whose reach needs a pattern of 79
 * blocks (a table of 161 KiB, a map sized for any symbols) and flags of
 * a few KiB, at `budget` a step. */
static void fl_run(wb_fz_scorer scorer, bool hook, uint64_t budget) {
    wb_fz_options o = {.scorer = scorer, .kind = WB_FZ_SIMILARITY, .prefix_weight = 0.1};
    fl_score(&o, scorer == WB_FZ_JARO ? "jaro" : "jaro_winkler", 1000, 8000, hook, budget);
    CHECK(hook ? fl_handed >= 1 && fl_handed <= 2 : fl_handed == 0,
          "%s free_later: %zu blocks handed over, want %s", hook ? "with" : "without", fl_handed,
          hook ? "1 or 2 (the pattern's table and map)" : "0");
}

/* A partial ratio of a needle of 3,000 symbols in 3,200 (its patterns,
 * forwards and reversed: tables of 94 KiB and maps of 128 KiB, sized by
 * the needle; the short haystack keeps the windows between its ends, an
 * LCS each, few), at `budget` a step. */
static void fl_partial(bool hook, uint64_t budget) {
    wb_fz_options o = {.scorer = WB_FZ_PARTIAL_RATIO, .kind = WB_FZ_SIMILARITY};
    fl_score(&o, "partial_ratio", 3000, 3200, hook, budget);
    CHECK(hook ? fl_handed == 4 : fl_handed == 0,
          "partial_ratio with%s free_later: %zu blocks handed over, want %d", hook ? "" : "out",
          fl_handed, hook ? 4 : 0);
}

/* The edit kernels' own patterns: Levenshtein, Indel and OSA of 3,000
 * symbols against 8,000 (a table of 94 KiB; vectors of under 2 KiB). */
static void fl_edits(wb_fz_scorer scorer, const char *name, bool hook, uint64_t budget) {
    wb_fz_options o = {.scorer = scorer, .kind = WB_FZ_DISTANCE, .ins = 1, .del = 1, .sub = 1};
    fl_score(&o, name, 3000, 8000, hook, budget);
    CHECK(hook ? fl_handed >= 1 && fl_handed <= 2 : fl_handed == 0,
          "%s with%s free_later: %zu blocks handed over, want %s", name, hook ? "" : "out",
          fl_handed, hook ? "1 or 2 (the pattern's table and map)" : "0");
}

static void test_free_later(void) {
    static const uint64_t budgets[] = {1, 64, UINT64_MAX / 4};
    for (size_t i = 0; i < sizeof budgets / sizeof *budgets; i++)
        for (int hook = 0; hook < 2; hook++) {
            fl_run(WB_FZ_JARO, hook, budgets[i]);
            fl_run(WB_FZ_JARO_WINKLER, hook, budgets[i]);
            fl_partial(hook, budgets[i] > 1 ? budgets[i] : 4096);
            if (budgets[i] > 1) {
                fl_edits(WB_FZ_LEVENSHTEIN, "levenshtein", hook, budgets[i]);
                fl_edits(WB_FZ_INDEL, "indel", hook, budgets[i]);
                fl_edits(WB_FZ_OSA, "osa", hook, budgets[i]);
            }
        }
}

#endif

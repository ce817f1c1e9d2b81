/*
 * Part of test_fuzzy.c: weighted Levenshtein scores past 2^53 and up to
 * 2^64 - 1 are exact, and past it reported as too large, never as a
 * wrong number: against a whole-matrix Wagner-Fischer in 128-bit
 * integers, stepped in one go and one unit at a time, for the integer
 * kinds (with exact cutoffs at and around the score) and the normalized
 * ones.
 */
#ifndef WB_TEST_FUZZY_WIDE_WEIGHTS_H
#define WB_TEST_FUZZY_WIDE_WEIGHTS_H

#include "../fuzzy/fuzzy.h"

#include <stdio.h>
#include <stdlib.h>

#include "check.h"

__extension__ typedef unsigned __int128 ww_u128;

static ww_u128 ww_min3(ww_u128 x, ww_u128 y, ww_u128 z) {
    ww_u128 v = x < y ? x : y;
    return v < z ? v : z;
}

/* the distance, the whole matrix in 128 bits (lengths of a few symbols) */
static ww_u128 ww_distance(const uint32_t *a, size_t m, const uint32_t *b, size_t n, uint64_t ins,
                           uint64_t del, uint64_t sub) {
    ww_u128 d[8][8];
    for (size_t i = 0; i <= m; i++)
        d[i][0] = (ww_u128)i * del;
    for (size_t j = 0; j <= n; j++)
        d[0][j] = (ww_u128)j * ins;
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++)
            d[i][j] = ww_min3(d[i - 1][j] + del, d[i][j - 1] + ins,
                              d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : sub));
    return d[m][n];
}

static ww_u128 ww_maximum(size_t m, size_t n, uint64_t ins, uint64_t del, uint64_t sub) {
    ww_u128 all = (ww_u128)m * del + (ww_u128)n * ins;
    ww_u128 subs = m >= n ? (ww_u128)n * sub + (ww_u128)(m - n) * del
                          : (ww_u128)m * sub + (ww_u128)(n - m) * ins;
    return all < subs ? all : subs;
}

/* the value's top and bottom 64 bits, for messages */
#define WW_PARTS(x) (unsigned long long)((x) >> 64), (unsigned long long)(uint64_t)(x)

/* One score through wb_fz, budgets of `budget` units. */
static void ww_run(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                   uint64_t budget, wb_fz *out) {
    wb_fz s;
    CHECK(wb_fz_start(&s, o, a, m, b, n), "wb_fz_start");
    uint64_t used = 0;
    while (!wb_fz_step(&s, budget, &used)) {
    }
    CHECK(!s.failed, "out of memory");
    *out = s;
    wb_fz_free(&s);
}

static void ww_check(const uint32_t *a, size_t m, const uint32_t *b, size_t n, uint64_t ins,
                     uint64_t del, uint64_t sub) {
    ww_u128 d = ww_distance(a, m, b, n, ins, del, sub), most = ww_maximum(m, n, ins, del, sub);
    const ww_u128 u64 = UINT64_MAX;
    for (int kind = 0; kind < WB_FZ_KINDS; kind++) {
        wb_fz_options o = {.scorer = WB_FZ_LEVENSHTEIN, .kind = (wb_fz_kind)kind};
        o.ins = ins;
        o.del = del;
        o.sub = sub;
        ww_u128 want = kind == WB_FZ_SIMILARITY ? most - d : d;
        for (uint64_t budget = 1; budget <= UINT64_MAX / 4; budget = UINT64_MAX / 4) {
            wb_fz s;
            ww_run(&o, a, m, b, n, budget, &s);
            if (kind == WB_FZ_DISTANCE || kind == WB_FZ_SIMILARITY) {
                bool large = want > u64;
                CHECK(s.passed && s.too_large == large && (large || s.value == (uint64_t)want),
                      "kind %d weights (%llu, %llu, %llu) m %zu n %zu: value %llu too large %d, "
                      "want %llx:%016llx",
                      kind, (unsigned long long)ins, (unsigned long long)del,
                      (unsigned long long)sub, m, n, (unsigned long long)s.value, s.too_large,
                      WW_PARTS(want));
            } else {
                double nd = most == 0 ? 0.0 : (double)d / (double)most;
                double w = kind == WB_FZ_NORMALIZED_DISTANCE ? nd : 1.0 - nd;
                CHECK(s.passed && s.score == w, "kind %d: %.17g, want %.17g", kind, s.score, w);
            }
            if (budget != 1) break;
        }
        if ((kind != WB_FZ_DISTANCE && kind != WB_FZ_SIMILARITY) || want > u64) continue;
        /* exact cutoffs at the score and one either side */
        for (int delta = -1; delta <= 1; delta++) {
            if ((delta < 0 && want == 0) || (delta > 0 && want == u64)) continue;
            ww_u128 c = want + (ww_u128)(__int128)delta;
            o.has_cutoff = o.exact_cutoff = true;
            o.icutoff = (uint64_t)c;
            o.cutoff = (double)o.icutoff;
            wb_fz s;
            ww_run(&o, a, m, b, n, 1, &s);
            bool pass = kind == WB_FZ_DISTANCE ? want <= c : want >= c;
            CHECK(s.passed == pass && (!pass || s.value == (uint64_t)want),
                  "cutoff %llu kind %d: passed %d value %llu, want %d %llx:%016llx",
                  (unsigned long long)o.icutoff, kind, s.passed, (unsigned long long)s.value, pass,
                  WW_PARTS(want));
        }
    }
}

static void test_wide_weights(size_t count) {
    /* weights near 2^53 (a double's integers end there), 2^62, 2^63 and
     * 2^64 - 1: sums past 2^64 - 1 and largest distances past it */
    const uint64_t bases[] = {(1ull << 53) - 4, (1ull << 53), (1ull << 62), (1ull << 63),
                              UINT64_MAX - 8};
    uint32_t a[7], b[7];
    size_t cases = 0;
    for (size_t round = 0; round < count; round++) {
        uint64_t base = bases[round % (sizeof bases / sizeof *bases)];
        uint64_t w[3];
        for (int k = 0; k < 3; k++) {
            /* a weight of the base, or one of 1 or 0 now and then */
            uint64_t r = check_random() % 16;
            w[k] = r == 0 ? 0 : r == 1 ? 1 : base + check_random() % 8;
        }
        size_t m = check_random() % 7, n = check_random() % 7;
        for (size_t i = 0; i < m; i++)
            a[i] = 'a' + (uint32_t)(check_random() % 3);
        for (size_t j = 0; j < n; j++)
            b[j] = 'a' + (uint32_t)(check_random() % 3);
        ww_check(a, m, b, n, w[0], w[1], w[2]);
        cases++;
    }
    /* the cases of the reports: 2 x 4294967295 (past a 32-bit cell) and
     * 2^64 - 1 by substitution where the largest distance is past it */
    const uint32_t aa[] = {'a', 'a'}, ab[] = {'a', 'b'}, ac[] = {'a', 'c'};
    ww_check(aa, 2, NULL, 0, 4294967295u, 4294967295u, 4294967295u);
    ww_check(ab, 2, ac, 2, 1ull << 63, 1ull << 63, UINT64_MAX);
    ww_check(ab, 2, ac, 2, 1ull << 63, (1ull << 63) - 1, UINT64_MAX);
    ww_check(aa, 2, NULL, 0, 1, UINT64_MAX, 1);
    printf("wide weights: %zu random pairs\n", cases);
}

#endif

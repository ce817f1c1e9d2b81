/*
 * Prefix and Postfix through the pair scorer on the bytes themselves
 * (included by test_fuzzy.c): pairs of up to 100,000+ bytes sharing long
 * prefixes and suffixes, at budgets 1, 2, 3 and in one go, the bytes
 * moved between steps (wb_fz_rebind_bytes), with and without cutoffs,
 * against the reference (fuzzy_reference.h) and the same score on the
 * widened symbols; and Hamming without padding: sides of different
 * lengths end the score at once with `unequal`, equal ones score as
 * with padding.
 */
#ifndef WB_TEST_FUZZY_AFFIX_SCORES_H
#define WB_TEST_FUZZY_AFFIX_SCORES_H

#include "../fuzzy/fuzzy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzzy_reference.h"

static size_t as_runs;

/* A score on bytes at one budget, the bytes moved to fresh copies after
 * the first step when `move` (the old ones spoiled): the integer score
 * (UINT64_MAX: not passed), its units into *units. */
static uint64_t as_bytes_score(const wb_fz_options *o, uint8_t *a, size_t m, uint8_t *b, size_t n,
                               uint64_t budget, bool move, uint64_t *units) {
    wb_fz s;
    CHECK(wb_fz_reads_bytes(o) && wb_fz_start_bytes(&s, o, a, m, b, n), "affix start_bytes");
    *units = 0;
    bool done = wb_fz_step(&s, budget, units);
    uint8_t *ma = NULL, *mb = NULL;
    if (move && !done) {
        ma = malloc(m ? m : 1);
        mb = malloc(n ? n : 1);
        if (!ma || !mb) abort();
        memcpy(ma, a, m);
        memcpy(mb, b, n);
        wb_fz_rebind_bytes(&s, ma, mb);
        for (size_t i = 0; i < m; i++)
            a[i] ^= 0x55;
        for (size_t i = 0; i < n; i++)
            b[i] ^= 0xAA;
    }
    while (!done)
        done = wb_fz_step(&s, budget, units);
    uint64_t v = s.passed ? s.value : UINT64_MAX;
    wb_fz_free(&s);
    if (ma) {
        memcpy(a, ma, m);
        memcpy(b, mb, n);
    }
    free(ma);
    free(mb);
    as_runs++;
    return v;
}

/* A pair: random bytes, or b a copy of a with a byte changed somewhere
 * (long affixes on both ends) and its length changed a little. */
static void as_pair(uint8_t *a, size_t *m, uint8_t *b, size_t *n, size_t most) {
    *m = check_random() % 4 == 0 ? check_random() % 4 : check_random() % (most + 1);
    bool high = check_random() % 2;
    for (size_t i = 0; i < *m; i++)
        a[i] = (uint8_t)(high ? check_random() % 256 : 'a' + check_random() % 2);
    if (check_random() % 4 == 0) {
        *n = check_random() % (most + 1);
        for (size_t j = 0; j < *n; j++)
            b[j] = (uint8_t)(high ? check_random() % 256 : 'a' + check_random() % 2);
        return;
    }
    *n = *m;
    memcpy(b, a, *m);
    if (*m > 0 && check_random() % 4 != 0) b[check_random() % *m] ^= 0x40;
    if (check_random() % 3 == 0 && *n > 0) *n -= check_random() % (*n < 3 ? *n : 3);
}

static void as_check(const wb_fz_options *base, uint8_t *a, size_t m, uint8_t *b, size_t n,
                     uint32_t *wa, uint32_t *wb) {
    for (size_t i = 0; i < m; i++)
        wa[i] = a[i];
    for (size_t j = 0; j < n; j++)
        wb[j] = b[j];
    wb_fz_options o = *base;
    size_t most = m > n ? m : n;
    size_t d = most - fzr_affix(wa, m, wb, n, o.scorer == WB_FZ_POSTFIX);
    /* the integer kinds, a cutoff now and then: a distance's or a
     * similarity's */
    o.kind = check_random() % 2 ? WB_FZ_DISTANCE : WB_FZ_SIMILARITY;
    uint64_t want = o.kind == WB_FZ_DISTANCE ? d : most - d;
    if (check_random() % 3 == 0) {
        uint64_t c = check_random() % (want + 3);
        o.has_cutoff = o.exact_cutoff = true;
        o.icutoff = c;
        o.cutoff = (double)c;
        if (o.kind == WB_FZ_DISTANCE ? want > c : want < c) want = UINT64_MAX;
    }
    static const uint64_t budgets[] = {1, 2, 3, UINT64_MAX / 4};
    uint64_t one_go = 0;
    for (size_t i = 0; i < 4; i++) {
        uint64_t units;
        bool move = i < 3 && check_random() % 2;
        uint64_t got = as_bytes_score(&o, a, m, b, n, budgets[i], move, &units);
        CHECK(got == want && units <= wb_fz_units(&o, m, n),
              "%s bytes %zu x %zu kind %d budget %llu%s: %lld, want %lld (%llu units, bound %llu)",
              o.scorer == WB_FZ_PREFIX ? "prefix" : "postfix", m, n, (int)o.kind,
              (unsigned long long)budgets[i], move ? " moved" : "",
              got == UINT64_MAX ? -1LL : (long long)got,
              want == UINT64_MAX ? -1LL : (long long)want, (unsigned long long)units,
              (unsigned long long)wb_fz_units(&o, m, n));
        if (i == 3) one_go = units;
    }
    /* the same on the widened symbols, in the same units */
    wb_fz s;
    CHECK(wb_fz_start(&s, &o, wa, m, wb, n), "affix start");
    uint64_t units = 0;
    while (!wb_fz_step(&s, UINT64_MAX / 4, &units)) {
    }
    CHECK((s.passed ? s.value : UINT64_MAX) == want && units == one_go,
          "affix symbols %zu x %zu: %llu (%llu units), bytes %llu (%llu units)", m, n,
          (unsigned long long)(s.passed ? s.value : UINT64_MAX), (unsigned long long)units,
          (unsigned long long)want, (unsigned long long)one_go);
    wb_fz_free(&s);
}

static void test_affix_scores(size_t rounds, size_t long_rounds) {
    size_t cap = 100000 + 64;
    uint8_t *a = malloc(cap), *b = malloc(cap);
    uint32_t *wa = malloc(cap * sizeof *wa), *wb = malloc(cap * sizeof *wb);
    if (!a || !b || !wa || !wb) abort();
    for (size_t r = 0; r < rounds + long_rounds; r++) {
        size_t m, n;
        as_pair(a, &m, b, &n, r < rounds ? 150 : cap);
        for (int scorer = WB_FZ_PREFIX; scorer <= WB_FZ_POSTFIX; scorer++) {
            wb_fz_options o = {.scorer = (wb_fz_scorer)scorer, .ins = 1, .del = 1, .sub = 1};
            as_check(&o, a, m, b, n, wa, wb);
        }
    }
    free(a);
    free(b);
    free(wa);
    free(wb);
    printf("prefix and postfix on bytes: %zu runs\n", as_runs);
}

/* Hamming without padding: unequal lengths are `unequal` at once (done,
 * not passed, nothing allocated), on symbols and on bytes; equal ones
 * score as Hamming with padding does. */
static void test_hamming_no_pad(size_t rounds) {
    uint8_t a[64], b[64];
    uint32_t wa[64], wb[64];
    for (size_t r = 0; r < rounds; r++) {
        size_t m = check_random() % 65, n = check_random() % 3 ? m : check_random() % 65;
        for (size_t i = 0; i < m; i++)
            wa[i] = a[i] = (uint8_t)('a' + check_random() % 3);
        for (size_t j = 0; j < n; j++)
            wb[j] = b[j] = (uint8_t)('a' + check_random() % 3);
        wb_fz_options padded = {.scorer = WB_FZ_HAMMING, .kind = (wb_fz_kind)(r % WB_FZ_KINDS)};
        wb_fz_options strict = padded;
        strict.no_pad = true;
        double want;
        bool want_passed;
        CHECK(wb_fz_score(&padded, wa, m, wb, n, &want, &want_passed), "hamming padded");
        for (int bytes = 0; bytes < 2; bytes++) {
            wb_fz s;
            if (bytes)
                CHECK(wb_fz_start_bytes(&s, &strict, a, m, b, n), "no pad start_bytes");
            else
                CHECK(wb_fz_start(&s, &strict, wa, m, wb, n), "no pad start");
            uint64_t used = 0;
            while (!wb_fz_step(&s, 1 + check_random() % 3, &used)) {
            }
            if (m != n)
                CHECK(s.done && s.unequal && !s.passed && !s.failed && used == 1,
                      "no pad %zu x %zu (%s): unequal %d passed %d units %llu", m, n,
                      bytes ? "bytes" : "symbols", s.unequal, s.passed, (unsigned long long)used);
            else
                CHECK(!s.unequal && s.score == want && s.passed == want_passed,
                      "no pad %zu x %zu (%s): %.17g, padded %.17g", m, n,
                      bytes ? "bytes" : "symbols", s.score, want);
            wb_fz_free(&s);
        }
    }
}

#endif

/*
 * Damerau-Levenshtein's short form and Hamming on bytes (included by
 * test_fuzzy.c).
 *
 * Damerau-Levenshtein: pairs whose shorter side has 0..64 symbols (the
 * short form's) and a few past it, bytes and codepoints (some of 256 and
 * up), near copies (shared prefixes and suffixes, swaps) and fresh ones,
 * with and without cutoffs. wb_fz_damerau_short must equal the reference
 * (fuzzy_reference.h) and add the units of the resumable kernel in one
 * step; and the pair's score through wb_fz_step at every budget from 1 to
 * one past the kernel's units (the short form once the budget covers
 * them, the resumable kernel below) must be the reference's distance,
 * every step within its budget, the units of the whole run the same at
 * every budget.
 *
 * Hamming on bytes (wb_fz_start_bytes, byte mode): strings of any bytes
 * (0x80 and up too) of 0..100 bytes, at budgets 1, 2, 3 and in one go,
 * with the bytes moved between steps (wb_fz_rebind_bytes), against the
 * reference on the bytes widened; and a pair in codepoint mode against
 * the same pair in byte mode: codepoints count a multibyte symbol once.
 */
#ifndef WB_TEST_FUZZY_SHORT_EDITS_H
#define WB_TEST_FUZZY_SHORT_EDITS_H

#include "../fuzzy/fuzzy.h"
#include "../metric/kernels.h"

#include <string.h>

#include "check.h"
#include "fuzzy_reference.h"

#define SE_CAP 100

static size_t se_cut(size_t d, size_t cutoff) {
    return cutoff != WB_FZ_NO_CUTOFF && d > cutoff ? cutoff + 1 : d;
}

/* A string of len symbols from `letters` of a pool of bytes or codepoints. */
static void se_string(uint32_t *s, size_t len, bool codepoints, size_t letters) {
    static const uint32_t bytes[] = {'a', 'b', 0xFF, 'c', 0x80, 'd', 'e', 'f'};
    static const uint32_t cps[] = {'a', 0x4E2D, 'b', 0x1F600, 0x100, 'c', 0x10FFFF, 'd'};
    for (size_t i = 0; i < len; i++)
        s[i] = (codepoints ? cps : bytes)[check_random() % letters];
}

/* b: a with a few swaps of neighbours, changes, an insertion or a
 * deletion (their prefix and suffix mostly shared), or fresh. */
static size_t se_near(const uint32_t *a, size_t m, uint32_t *b, bool codepoints, size_t letters) {
    if (check_random() % 4 == 0) {
        size_t n = check_random() % (SE_CAP + 1);
        se_string(b, n, codepoints, letters);
        return n;
    }
    memcpy(b, a, m * sizeof *a);
    size_t n = m;
    for (size_t e = check_random() % 4; e > 0 && n > 1; e--) {
        size_t i = check_random() % (n - 1);
        switch (check_random() % 4) {
        case 0: {
            uint32_t x = b[i];
            b[i] = b[i + 1];
            b[i + 1] = x;
            break;
        }
        case 1:
            se_string(b + i, 1, codepoints, letters);
            break;
        case 2:
            if (n < SE_CAP) {
                memmove(b + i + 1, b + i, (n - i) * sizeof *b);
                se_string(b + i, 1, codepoints, letters);
                n++;
            }
            break;
        default:
            memmove(b + i, b + i + 1, (n - i - 1) * sizeof *b);
            n--;
        }
    }
    return n;
}

/* The resumable kernel in one step: its result and units. */
static size_t se_damerau_resumable(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                   size_t cutoff, uint64_t *units) {
    wb_fz_damerau k;
    *units = 0;
    if (!wb_fz_damerau_init(&k, a, m, b, n, cutoff)) return SIZE_MAX;
    bool done = wb_fz_damerau_step(&k, UINT64_MAX / 4, units);
    size_t r = done ? k.result : SIZE_MAX;
    wb_fz_damerau_free(&k);
    return r;
}

static void se_damerau_pair(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                            size_t cutoff) {
    size_t want = se_cut(fzr_damerau(a, m, b, n), cutoff);
    uint64_t units, used = 0, bound = wb_fz_damerau_units(m, n);
    size_t got = se_damerau_resumable(a, m, b, n, cutoff, &units);
    CHECK(got == want && units <= bound,
          "damerau resumable %zu x %zu cutoff %zu: %zu (%llu units), want %zu (bound %llu)", m, n,
          cutoff, got, (unsigned long long)units, want, (unsigned long long)bound);
    if ((m < n ? m : n) <= WB_FZ_SHORT) {
        got = wb_fz_damerau_short(a, m, b, n, cutoff, &used);
        CHECK(got == want && used == units,
              "damerau short %zu x %zu cutoff %zu: %zu (%llu units), want %zu (%llu)", m, n, cutoff,
              got, (unsigned long long)used, want, (unsigned long long)units);
    }
    /* the pair's score at every budget up to one past the kernel's units */
    wb_fz_options o = {.scorer = WB_FZ_DAMERAU_LEVENSHTEIN, .kind = WB_FZ_DISTANCE};
    o.ins = o.del = o.sub = 1;
    if (cutoff != WB_FZ_NO_CUTOFF) {
        o.has_cutoff = o.exact_cutoff = true;
        o.icutoff = cutoff;
        o.cutoff = (double)cutoff;
    }
    bool dl_passes = cutoff == WB_FZ_NO_CUTOFF || want <= cutoff;
    /* every budget for the short pairs, some for the others */
    uint64_t some[] = {1, 2, 3, 7, 64, bound / 2, bound - 1, bound, bound + 1};
    bool every = bound <= 400;
    size_t tries = every ? (size_t)bound + 1 : sizeof some / sizeof *some;
    uint64_t first_total = 0;
    for (size_t try = 0; try < tries; try++) {
        uint64_t budget = every ? try + 1 : some[try];
        if (budget == 0) continue;
        wb_fz s;
        CHECK(wb_fz_start(&s, &o, a, m, b, n), "damerau start");
        uint64_t total = 0;
        bool bounded = true;
        size_t steps = 0;
        for (;;) {
            uint64_t before = total;
            bool done = wb_fz_step(&s, budget, &total);
            if (total - before > budget + WB_FZ_STEP_OVER || total == before) bounded = false;
            if (done || ++steps > 4 * bound + 16) break;
        }
        CHECK(s.done && !s.failed && s.passed == dl_passes && (!dl_passes || s.value == want) &&
                  bounded && total <= bound,
              "damerau %zu x %zu cutoff %zu at budget %llu: done %d passed %d value %llu (want "
              "%zu, passes %d), %llu units (bound %llu), steps within budget %d",
              m, n, cutoff, (unsigned long long)budget, s.done, s.passed,
              (unsigned long long)s.value, want, dl_passes, (unsigned long long)total,
              (unsigned long long)bound, bounded);
        if (try == 0) first_total = total;
        CHECK(total == first_total,
              "damerau %zu x %zu cutoff %zu: %llu units at budget %llu, %llu at budget 1", m, n,
              cutoff, (unsigned long long)total, (unsigned long long)budget,
              (unsigned long long)first_total);
        wb_fz_free(&s);
    }
}

static void test_damerau_short(size_t rounds) {
    static const size_t sizes[] = {0, 1, 2, 3, 5, 8, 13, 31, 32, 63, 64, 65, 80};
    uint32_t a[SE_CAP], b[SE_CAP];
    for (size_t round = 0; round < rounds; round++) {
        bool cp = check_random() % 2;
        size_t letters = 1 + check_random() % 8;
        size_t m = sizes[check_random() % (sizeof sizes / sizeof *sizes)];
        se_string(a, m, cp, letters);
        size_t n = se_near(a, m, b, cp, letters);
        size_t cutoffs[] = {WB_FZ_NO_CUTOFF, WB_FZ_NO_CUTOFF, 0, 1, 2, 5};
        size_t cutoff = cutoffs[check_random() % 6];
        if (check_random() % 2)
            se_damerau_pair(a, m, b, n, cutoff);
        else
            se_damerau_pair(b, n, a, m, cutoff);
    }
}

/* Hamming on bytes at one budget, the bytes moved to `moved` (a copy)
 * after the first step when `move`: the score's distance (the cutoff + 1
 * past it). */
static uint64_t se_hamming_bytes(const wb_fz_options *o, const uint8_t *a, size_t m,
                                 const uint8_t *b, size_t n, uint64_t budget, bool move,
                                 uint64_t *units) {
    uint8_t ma[SE_CAP], mb[SE_CAP];
    wb_fz s;
    CHECK(wb_fz_reads_bytes(o) && wb_fz_start_bytes(&s, o, a, m, b, n), "hamming start_bytes");
    *units = 0;
    bool done = wb_fz_step(&s, budget, units);
    move = move && !done;
    if (move) {
        /* the old bytes spoiled: a score that kept reading them differs */
        memcpy(ma, a, m);
        memcpy(mb, b, n);
        wb_fz_rebind_bytes(&s, ma, mb);
        uint8_t *wa = (uint8_t *)a, *wb = (uint8_t *)b;
        for (size_t i = 0; i < m; i++)
            wa[i] ^= 0x55;
        for (size_t i = 0; i < n; i++)
            wb[i] ^= 0xAA;
    }
    while (!done)
        done = wb_fz_step(&s, budget, units);
    uint64_t d = s.passed ? s.value : UINT64_MAX;
    wb_fz_free(&s);
    if (move) {
        /* the bytes back as they were */
        memcpy((uint8_t *)a, ma, m);
        memcpy((uint8_t *)b, mb, n);
    }
    return d;
}

static void test_hamming_bytes(size_t rounds) {
    static const uint64_t budgets[] = {1, 2, 3, UINT64_MAX / 4};
    uint8_t a[SE_CAP], b[SE_CAP];
    uint32_t wa[SE_CAP], wb[SE_CAP];
    for (size_t round = 0; round < rounds; round++) {
        size_t m = check_random() % (SE_CAP + 1), n;
        bool high = check_random() % 2;
        for (size_t i = 0; i < m; i++)
            a[i] = (uint8_t)(high ? check_random() % 256 : 'a' + check_random() % 3);
        if (check_random() % 3 == 0) {
            n = check_random() % (SE_CAP + 1);
            for (size_t i = 0; i < n; i++)
                b[i] = (uint8_t)(high ? check_random() % 256 : 'a' + check_random() % 3);
        } else {
            n = m - (m > 0 ? check_random() % (m < 4 ? m : 4) : 0);
            memcpy(b, a, n);
            for (size_t e = check_random() % 5; e > 0 && n > 0; e--)
                b[check_random() % n] = (uint8_t)(0x80 + check_random() % 128);
        }
        for (size_t i = 0; i < m; i++)
            wa[i] = a[i];
        for (size_t j = 0; j < n; j++)
            wb[j] = b[j];
        size_t d = fzr_hamming(wa, m, wb, n);
        wb_fz_options o = {.scorer = WB_FZ_HAMMING, .kind = WB_FZ_DISTANCE};
        o.ins = o.del = o.sub = 1;
        size_t cutoff = WB_FZ_NO_CUTOFF;
        if (check_random() % 3 == 0) {
            cutoff = (size_t)(check_random() % (d + 3));
            o.has_cutoff = o.exact_cutoff = true;
            o.icutoff = cutoff;
            o.cutoff = (double)cutoff;
        }
        uint64_t want = cutoff != WB_FZ_NO_CUTOFF && d > cutoff ? UINT64_MAX : d;
        uint64_t one_go = 0;
        for (size_t i = 0; i < 4; i++) {
            uint64_t units;
            bool move = i < 3 && check_random() % 2;
            uint64_t got = se_hamming_bytes(&o, a, m, b, n, budgets[i], move, &units);
            CHECK(got == want && units <= wb_fz_hamming_units(m, n),
                  "hamming bytes %zu x %zu cutoff %lld budget %llu%s: %lld, want %lld (%llu "
                  "units, bound %llu)",
                  m, n, cutoff == WB_FZ_NO_CUTOFF ? -1LL : (long long)cutoff,
                  (unsigned long long)budgets[i], move ? " moved" : "",
                  got == UINT64_MAX ? -1LL : (long long)got,
                  want == UINT64_MAX ? -1LL : (long long)want, (unsigned long long)units,
                  (unsigned long long)wb_fz_hamming_units(m, n));
            if (i == 3) one_go = units;
        }
        /* the same units as on the widened symbols */
        wb_fz s;
        CHECK(wb_fz_start(&s, &o, wa, m, wb, n), "hamming start");
        uint64_t units = 0;
        while (!wb_fz_step(&s, UINT64_MAX / 4, &units)) {
        }
        CHECK((s.passed ? s.value : UINT64_MAX) == want && units == one_go,
              "hamming symbols %zu x %zu: %llu (%llu units), bytes %llu (%llu units)", m, n,
              (unsigned long long)s.value, (unsigned long long)units, (unsigned long long)want,
              (unsigned long long)one_go);
        wb_fz_free(&s);
    }
    /* codepoints count "é" (two bytes) as one symbol, bytes as two */
    static const struct {
        const char *a, *b;
        uint64_t bytes, codepoints;
    } known[] = {{"caf\xC3\xA9", "cafe", 2, 1},
                 {"\xC3\xA9t\xC3\xA9", "\xC3\xA8t\xC3\xA9", 1, 1},
                 {"\xE4\xB8\xAD", "\xE4\xB8\xAE", 1, 1},
                 {"\xE4\xB8\xAD"
                  "a",
                  "a\xE4\xB8\xAD", 4, 2}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        const uint8_t *x = (const uint8_t *)known[i].a, *y = (const uint8_t *)known[i].b;
        size_t xl = strlen(known[i].a), yl = strlen(known[i].b);
        wb_fz_options o = {.scorer = WB_FZ_HAMMING, .kind = WB_FZ_DISTANCE};
        o.ins = o.del = o.sub = 1;
        uint64_t units;
        uint64_t by_bytes = se_hamming_bytes(&o, x, xl, y, yl, UINT64_MAX / 4, false, &units);
        o.codepoints = true;
        size_t sx = wb_fz_symbols(x, xl, true, wa), sy = wb_fz_symbols(y, yl, true, wb);
        double score;
        bool passed;
        CHECK(!wb_fz_reads_bytes(&o) && wb_fz_score(&o, wa, sx, wb, sy, &score, &passed),
              "hamming codepoints: reads the bytes %d", wb_fz_reads_bytes(&o));
        CHECK(by_bytes == known[i].bytes && score == (double)known[i].codepoints,
              "hamming of \"%s\" and \"%s\": bytes %llu (want %llu), codepoints %g (want %llu)",
              known[i].a, known[i].b, (unsigned long long)by_bytes,
              (unsigned long long)known[i].bytes, score, (unsigned long long)known[i].codepoints);
    }
}

#endif

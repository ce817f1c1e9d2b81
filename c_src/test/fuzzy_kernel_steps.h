/*
 * The pair kernels of kernels.h stepped at small budgets (included by
 * test_fuzzy.c): LCS, unit-cost Levenshtein, weighted Levenshtein (64-
 * and 128-bit cells), OSA, Damerau-Levenshtein, Hamming, the common
 * prefix and suffix (their `least` the case's cutoff) and Jaro, on
 * random pairs of bytes and of codepoints (some of 256 and up), short
 * ones and ones with a side of 100,000+ symbols against a short side, in
 * both orders. At budgets 1, 2, 3, 7, 64, 1000 and in one go, each result
 * must equal the reference's (fuzzy_reference.h), and so each other;
 * every step call must add at least one unit and at most
 * max(budget, 1) + STEP_SLACK to *used, and the units of the whole run
 * must stay within the kernel's *_units(m, n); OSA also on pairs with
 * neighbours swapped across its blocks' edges. The inputs are written
 * only after init (init reads no symbol: it only allocates), but for
 * patterns of up to 256 symbols, which their alloc counts.
 */
#ifndef WB_TEST_FUZZY_KERNEL_STEPS_H
#define WB_TEST_FUZZY_KERNEL_STEPS_H

#include "../metric/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzzy_reference.h"

/* A step adds at most max(budget, 1) + this: the kernels stop within
 * their budget exactly. */
#define STEP_SLACK 0

/* Failures print their context up to this many; later ones are counted. */
#define KS_DETAILED 40
#define KS_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (failures < KS_DETAILED) {                                                              \
            CHECK(cond, __VA_ARGS__);                                                              \
        } else {                                                                                   \
            checks++;                                                                              \
            if (!(cond)) failures++;                                                               \
        }                                                                                          \
    } while (0)

typedef enum {
    KS_LCS,
    KS_LEV,
    KS_WEIGHTED,
    KS_OSA,
    KS_DAMERAU,
    KS_HAMMING,
    KS_PREFIX,
    KS_SUFFIX,
    KS_JARO,
    KS_KINDS
} ks_kind;

static const char *const ks_names[] = {"lcs",     "levenshtein", "weighted", "osa", "damerau",
                                       "hamming", "prefix",      "suffix",   "jaro"};

typedef struct {
    ks_kind kind;
    size_t cutoff;
    uint64_t ins, del, sub;
    bool wide;
} ks_case;

typedef union {
    wb_fz_lcs lcs;
    wb_fz_lev lev;
    wb_fz_weighted weighted;
    wb_fz_osa osa;
    wb_fz_damerau damerau;
    wb_fz_hamming hamming;
    wb_fz_affix affix;
    wb_fz_jaro jaro;
} ks_state;

/* the affix kernels' `least` from a case's cutoff */
static size_t ks_least(size_t cutoff) {
    return cutoff == WB_FZ_NO_CUTOFF ? 0 : cutoff;
}

static size_t ks_runs, ks_steps;

static bool ks_init(ks_state *k, const ks_case *c, const uint32_t *a, size_t m, const uint32_t *b,
                    size_t n) {
    switch (c->kind) {
    case KS_LCS:
        return wb_fz_lcs_init(&k->lcs, a, m, b, n);
    case KS_LEV:
        return wb_fz_lev_init(&k->lev, a, m, b, n, c->cutoff);
    case KS_WEIGHTED:
        return wb_fz_weighted_init(&k->weighted, a, m, b, n, c->ins, c->del, c->sub, c->cutoff,
                                   c->wide);
    case KS_OSA:
        return wb_fz_osa_init(&k->osa, a, m, b, n, c->cutoff);
    case KS_DAMERAU:
        return wb_fz_damerau_init(&k->damerau, a, m, b, n, c->cutoff);
    case KS_HAMMING:
        wb_fz_hamming_init(&k->hamming, a, m, b, n, c->cutoff);
        return true;
    case KS_PREFIX:
    case KS_SUFFIX:
        wb_fz_affix_init(&k->affix, a, m, b, n, c->kind == KS_SUFFIX, ks_least(c->cutoff));
        return true;
    default:
        return wb_fz_jaro_init(&k->jaro, a, m, b, n);
    }
}

static bool ks_step(ks_state *k, ks_kind kind, uint64_t budget, uint64_t *used) {
    switch (kind) {
    case KS_LCS:
        return wb_fz_lcs_step(&k->lcs, budget, used);
    case KS_LEV:
        return wb_fz_lev_step(&k->lev, budget, used);
    case KS_WEIGHTED:
        return wb_fz_weighted_step(&k->weighted, budget, used);
    case KS_OSA:
        return wb_fz_osa_step(&k->osa, budget, used);
    case KS_DAMERAU:
        return wb_fz_damerau_step(&k->damerau, budget, used);
    case KS_HAMMING:
        return wb_fz_hamming_step(&k->hamming, budget, used);
    case KS_PREFIX:
    case KS_SUFFIX:
        return wb_fz_affix_step(&k->affix, budget, used);
    default:
        return wb_fz_jaro_step(&k->jaro, budget, used);
    }
}

/* The result (a distance, the LCS, or Jaro's similarity's bits), and
 * frees the state. */
static uint64_t ks_end(ks_state *k, ks_kind kind) {
    uint64_t r = 0;
    switch (kind) {
    case KS_LCS:
        r = k->lcs.result;
        wb_fz_lcs_free(&k->lcs);
        break;
    case KS_LEV:
        r = k->lev.result;
        wb_fz_lev_free(&k->lev);
        break;
    case KS_WEIGHTED:
        r = (uint64_t)k->weighted.result;
        wb_fz_weighted_free(&k->weighted);
        break;
    case KS_OSA:
        r = k->osa.result;
        wb_fz_osa_free(&k->osa);
        break;
    case KS_DAMERAU:
        r = k->damerau.result;
        wb_fz_damerau_free(&k->damerau);
        break;
    case KS_HAMMING:
        r = k->hamming.result;
        break;
    case KS_PREFIX:
    case KS_SUFFIX:
        r = k->affix.result;
        break;
    default:
        memcpy(&r, &k->jaro.result, sizeof r);
        wb_fz_jaro_free(&k->jaro);
    }
    return r;
}

static void ks_abandon(ks_state *k, ks_kind kind) {
    (void)ks_end(k, kind);
}

static uint64_t ks_units(ks_kind kind, size_t m, size_t n) {
    switch (kind) {
    case KS_LCS:
        return wb_fz_lcs_units(m, n);
    case KS_LEV:
        return wb_fz_lev_units(m, n);
    case KS_WEIGHTED:
        return wb_fz_weighted_units(m, n);
    case KS_OSA:
        return wb_fz_osa_units(m, n);
    case KS_DAMERAU:
        return wb_fz_damerau_units(m, n);
    case KS_HAMMING:
        return wb_fz_hamming_units(m, n);
    case KS_PREFIX:
    case KS_SUFFIX:
        return wb_fz_affix_units(m, n);
    default:
        return wb_fz_jaro_units(m, n);
    }
}

/* A distance against a cutoff (the kernels' convention). */
static uint64_t ks_cut(uint64_t d, size_t cutoff) {
    return cutoff != WB_FZ_NO_CUTOFF && d > cutoff ? (uint64_t)cutoff + 1 : d;
}

static uint64_t ks_reference(const ks_case *c, const uint32_t *a, size_t m, const uint32_t *b,
                             size_t n) {
    double sim;
    uint64_t bits;
    switch (c->kind) {
    case KS_LCS:
        return fzr_lcs(a, m, b, n);
    case KS_LEV:
        return ks_cut(fzr_levenshtein(a, m, b, n, 1, 1, 1), c->cutoff);
    case KS_WEIGHTED:
        return ks_cut(fzr_levenshtein(a, m, b, n, c->ins, c->del, c->sub), c->cutoff);
    case KS_OSA:
        return ks_cut(fzr_osa(a, m, b, n), c->cutoff);
    case KS_DAMERAU:
        return ks_cut(fzr_damerau(a, m, b, n), c->cutoff);
    case KS_HAMMING:
        return ks_cut(fzr_hamming(a, m, b, n), c->cutoff);
    case KS_PREFIX:
    case KS_SUFFIX:
        /* none when the shorter side cannot hold `least` */
        return (m < n ? m : n) < ks_least(c->cutoff) ? 0
                                                     : fzr_affix(a, m, b, n, c->kind == KS_SUFFIX);
    default:
        sim = fzr_jaro(a, m, b, n);
        memcpy(&bits, &sim, sizeof bits);
        return bits;
    }
}

static const char *ks_describe(const ks_case *c, size_t m, size_t n, bool codepoints,
                               uint64_t budget) {
    static char text[200];
    snprintf(
        text, sizeof text, "%s m %zu n %zu %s budget %llu cutoff %lld weights (%llu, %llu, %llu)%s",
        ks_names[c->kind], m, n, codepoints ? "codepoints" : "bytes", (unsigned long long)budget,
        c->cutoff == WB_FZ_NO_CUTOFF ? -1LL : (long long)c->cutoff, (unsigned long long)c->ins,
        (unsigned long long)c->del, (unsigned long long)c->sub, c->wide ? " wide" : "");
    return text;
}

/* One run: init on the buffers a and b (their symbols copied in from
 * sa and sb only after init, unless `early`), steps of `budget` to the
 * end, each step's units checked; the result. */
static uint64_t ks_run(const ks_case *c, uint32_t *a, const uint32_t *sa, size_t m, uint32_t *b,
                       const uint32_t *sb, size_t n, bool early, bool codepoints, uint64_t budget) {
    ks_state k;
    memset(a, 0, m * sizeof *a);
    memset(b, 0, n * sizeof *b);
    if (early) {
        memcpy(a, sa, m * sizeof *a);
        memcpy(b, sb, n * sizeof *b);
    }
    if (!ks_init(&k, c, a, m, b, n)) {
        KS_CHECK(false, "init failed: %s", ks_describe(c, m, n, codepoints, budget));
        return UINT64_MAX;
    }
    memcpy(a, sa, m * sizeof *a);
    memcpy(b, sb, n * sizeof *b);
    uint64_t units = ks_units(c->kind, m, n), used = 0, most = budget > 0 ? budget : 1;
    size_t steps = 0;
    bool done = false, bounded = true;
    while (!done) {
        uint64_t before = used;
        done = ks_step(&k, c->kind, budget, &used);
        steps++;
        uint64_t took = used - before;
        if (bounded && (took == 0 || took > most + STEP_SLACK)) {
            KS_CHECK(false, "a step took %llu units at budget %llu (at most %llu): %s",
                     (unsigned long long)took, (unsigned long long)budget,
                     (unsigned long long)(most + STEP_SLACK),
                     ks_describe(c, m, n, codepoints, budget));
            bounded = false;
        }
        if (used > units) break; /* the check below reports it */
    }
    KS_CHECK(used <= units, "%llu units taken, %llu bound: %s", (unsigned long long)used,
             (unsigned long long)units, ks_describe(c, m, n, codepoints, budget));
    ks_steps += steps;
    ks_runs++;
    if (!done) {
        ks_abandon(&k, c->kind);
        return UINT64_MAX;
    }
    return ks_end(&k, c->kind);
}

/* Starts a run, takes a few steps of budget 3, frees it (ASan: no leak). */
static void ks_run_abandoned(const ks_case *c, const uint32_t *a, size_t m, const uint32_t *b,
                             size_t n, size_t steps) {
    ks_state k;
    if (!ks_init(&k, c, a, m, b, n)) return;
    uint64_t used = 0;
    for (size_t s = 0; s < steps; s++)
        if (ks_step(&k, c->kind, 3, &used)) break;
    ks_abandon(&k, c->kind);
}

static const uint64_t ks_budgets[] = {1, 2, 3, 7, 64, 1000, UINT64_MAX / 4};

/* The positions of the longer side Jaro's windows reach. */
static size_t ks_jaro_reach(size_t m, size_t n) {
    size_t s = m < n ? m : n, l = m < n ? n : m, bound = l / 2 > 0 ? l / 2 - 1 : 0;
    return l - bound > s ? s + bound : l;
}

/* Every budget on one pair (a, m), (b, n), against the reference. */
static void ks_check_pair(const ks_case *c, const uint32_t *sa, size_t m, const uint32_t *sb,
                          size_t n, bool codepoints) {
    uint64_t want = ks_reference(c, sa, m, sb, n);
    uint32_t *a = malloc((m ? m : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    if (!a || !b) abort();
    /* init reads no symbol, but a pattern's alloc those of a short side,
     * Jaro's those of b its windows reach, its pattern past one word */
    size_t reach = ks_jaro_reach(m, n);
    bool early =
        ((c->kind == KS_LCS || c->kind == KS_LEV || c->kind == KS_OSA) && (m < n ? m : n) <= 256) ||
        (c->kind == KS_JARO && reach > 64 && reach <= 256);
    for (size_t i = 0; i < sizeof ks_budgets / sizeof *ks_budgets; i++) {
        uint64_t got = ks_run(c, a, sa, m, b, sb, n, early, codepoints, ks_budgets[i]);
        if (c->kind == KS_JARO) {
            double g, w;
            memcpy(&g, &got, sizeof g);
            memcpy(&w, &want, sizeof w);
            KS_CHECK(got == want, "got %.17g, want %.17g: %s", g, w,
                     ks_describe(c, m, n, codepoints, ks_budgets[i]));
        } else {
            KS_CHECK(got == want, "got %llu, want %llu: %s", (unsigned long long)got,
                     (unsigned long long)want, ks_describe(c, m, n, codepoints, ks_budgets[i]));
        }
    }
    ks_run_abandoned(c, sa, m, sb, n, 1 + check_random() % 5);
    free(a);
    free(b);
}

/* Symbols: bytes, or codepoints with some of 256 and up. */
static const uint32_t ks_bytes[] = {'a', 'b', 'c', 'd', 'e', 0xFF, 0x80, 'f'};
static const uint32_t ks_codepoints[] = {'a', 0x4E2D, 'b', 0x1F600, 0xE9, 0x10FFFF, 0x100, 'c'};

/* A random string of `letters` symbols of the pool; now and then a
 * periodic one ("abab...", the long inputs of the scheduler tests). */
static void ks_string(uint32_t *s, size_t len, bool codepoints, size_t letters, bool periodic) {
    const uint32_t *pool = codepoints ? ks_codepoints : ks_bytes;
    for (size_t i = 0; i < len; i++)
        s[i] = pool[periodic ? i % letters : check_random() % letters];
}

static void ks_random_case(ks_case *c, ks_kind kind, size_t distance_hint) {
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->cutoff = WB_FZ_NO_CUTOFF;
    c->ins = c->del = c->sub = 1;
    if (kind == KS_WEIGHTED) {
        c->ins = 1 + check_random() % 4;
        c->del = 1 + check_random() % 4;
        c->sub = check_random() % 5; /* 0 too */
        c->wide = check_random() % 3 == 0;
    }
    if (kind != KS_LCS && kind != KS_JARO && check_random() % 3 == 0)
        c->cutoff = (size_t)(check_random() % (2 * distance_hint + 2));
}

/* Short pairs (0..150 symbols each: patterns of up to three blocks). */
static void ks_short_pairs(size_t count) {
    uint32_t a[150], b[150];
    for (size_t r = 0; r < count; r++) {
        bool cp = check_random() % 2;
        size_t letters = 1 + check_random() % 8;
        size_t m = check_random() % 4 == 0 ? check_random() % 4 : check_random() % 151;
        size_t n = check_random() % 4 == 0 ? check_random() % 4 : check_random() % 151;
        ks_string(a, m, cp, letters, false);
        ks_string(b, n, cp, letters, check_random() % 8 == 0);
        for (int kind = 0; kind < KS_KINDS; kind++) {
            ks_case c;
            ks_random_case(&c, (ks_kind)kind, m > n ? m : n);
            ks_check_pair(&c, a, m, b, n, cp);
        }
    }
}

/* A side of 100,000+ symbols against a short one (0..20, or 65..130 for
 * the bit-parallel kernels: a column of two or three blocks), in both
 * orders. */
static void ks_long_pairs(size_t count) {
    size_t cap = 100000 + 64;
    uint32_t *l = malloc(cap * sizeof *l), s[130];
    if (!l) abort();
    for (size_t r = 0; r < count; r++) {
        for (int kind = 0; kind < KS_KINDS; kind++) {
            bool cp = check_random() % 2;
            size_t letters = 2 + check_random() % 3;
            size_t ll = 100000 + check_random() % 64;
            bool blocks = (kind == KS_LCS || kind == KS_LEV || kind == KS_OSA) && r % 2 == 1;
            size_t sl = blocks ? 65 + check_random() % 66 : check_random() % 21;
            ks_string(l, ll, cp, letters, check_random() % 2 == 0);
            ks_string(s, sl, cp, letters, false);
            ks_case c;
            ks_random_case(&c, (ks_kind)kind, ll);
            /* cutoffs near the distances here: around the length gap */
            if (c.cutoff != WB_FZ_NO_CUTOFF) c.cutoff = ll - sl + check_random() % (sl + 2);
            if (check_random() % 2)
                ks_check_pair(&c, l, ll, s, sl, cp);
            else
                ks_check_pair(&c, s, sl, l, ll, cp);
        }
    }
    free(l);
}

/* OSA's transpositions across the blocks of a column: b is a with
 * neighbours swapped at the blocks' edges (63 and 64, 127 and 128, ...)
 * and elsewhere, and a symbol or two changed. */
static void ks_osa_edges(size_t count) {
    uint32_t a[260], b[260];
    for (size_t r = 0; r < count; r++) {
        bool cp = check_random() % 2;
        size_t m = 60 + check_random() % 200, letters = 2 + check_random() % 4;
        ks_string(a, m, cp, letters, false);
        memcpy(b, a, m * sizeof *b);
        for (size_t at = 63; at + 1 < m; at += 64) {
            if (check_random() % 4 == 0) continue;
            uint32_t t = b[at];
            b[at] = b[at + 1];
            b[at + 1] = t;
        }
        for (size_t e = check_random() % 4; e > 0; e--) {
            size_t at = check_random() % (m - 1);
            uint32_t t = b[at];
            b[at] = b[at + 1];
            b[at + 1] = t;
        }
        if (check_random() % 2) b[check_random() % m] = cp ? 0x4E2D : 'a';
        size_t n = check_random() % 3 == 0 ? m - check_random() % 3 : m;
        ks_case c;
        ks_random_case(&c, KS_OSA, 8);
        if (check_random() % 2)
            ks_check_pair(&c, a, m, b, n, cp);
        else
            ks_check_pair(&c, b, n, a, m, cp);
    }
}

/* A pattern filled a budget at a time equals the masks counted from its
 * symbols; symbols it lacks give none. */
/* A long pattern's fill charges the pages it writes first: with every
 * byte value in turn, each of the first 256 symbols writes a row of its
 * own, a page apart (rows of 3,125 blocks), so at a budget under two
 * pages' units each of the first 255 calls places one symbol (the next
 * is on a page of its own); and the
 * whole fill stays within wb_fz_pattern_units. */
static void ks_pattern_pages(void) {
    size_t m = 200000;
    uint32_t *s = malloc(m * sizeof *s);
    if (!s) {
        KS_CHECK(false, "pattern pages: out of memory");
        return;
    }
    for (size_t i = 0; i < m; i++)
        s[i] = (uint32_t)(i % 256);
    wb_fz_pattern p;
    if (!wb_fz_pattern_alloc(&p, s, m)) {
        KS_CHECK(false, "pattern pages: alloc failed");
        free(s);
        return;
    }
    uint64_t budget = WB_FZ_PATTERN_PAGE_UNITS + WB_FZ_PATTERN_PAGE_UNITS / 2, used = 0;
    size_t calls = 0, most = 0;
    bool done = false;
    while (!done) {
        uint64_t before = used;
        size_t filled = p.filled;
        done = wb_fz_pattern_fill(&p, budget, &used);
        KS_CHECK(used - before <= budget, "pattern pages: a fill took %llu units at budget %llu",
                 (unsigned long long)(used - before), (unsigned long long)budget);
        if (calls < 255 && p.filled - filled > most) most = p.filled - filled;
        calls++;
    }
    KS_CHECK(most == 1, "pattern pages: one of the first 255 fills placed %zu symbols, want 1",
             most);
    KS_CHECK(used >= 256 * (uint64_t)WB_FZ_PATTERN_PAGE_UNITS && used <= wb_fz_pattern_units(m),
             "pattern pages: %llu units, want %llu..%llu", (unsigned long long)used,
             (unsigned long long)(256 * (uint64_t)WB_FZ_PATTERN_PAGE_UNITS),
             (unsigned long long)wb_fz_pattern_units(m));
    bool same = true;
    for (size_t w = 0; w < p.nblocks && same; w++)
        for (uint32_t c = 0; c < 256 && same; c++) {
            uint64_t want = 0;
            for (size_t i = 64 * w; i < m && i < 64 * (w + 1); i++)
                if (s[i] == c) want |= (uint64_t)1 << (i % 64);
            same = wb_fz_pattern_get(&p, c, w) == want;
        }
    KS_CHECK(same, "pattern pages: the filled pattern differs from its symbols");
    wb_fz_pattern_free(&p);
    free(s);
}

static void ks_patterns(size_t count) {
    uint32_t s[700];
    for (size_t r = 0; r < count; r++) {
        bool cp = check_random() % 2;
        size_t m = check_random() % 700, letters = 1 + check_random() % 8;
        ks_string(s, m, cp, letters, false);
        uint64_t budget = ks_budgets[check_random() % 6], used = 0, units = wb_fz_pattern_units(m);
        wb_fz_pattern p;
        if (!wb_fz_pattern_alloc(&p, s, m)) {
            KS_CHECK(false, "pattern of %zu: alloc failed", m);
            continue;
        }
        bool bounded = true;
        for (;;) {
            uint64_t before = used;
            bool done = wb_fz_pattern_fill(&p, budget, &used);
            if (bounded && used - before > budget) {
                KS_CHECK(false, "pattern of %zu: a fill took %llu units at budget %llu", m,
                         (unsigned long long)(used - before), (unsigned long long)budget);
                bounded = false;
            }
            if (done) break;
        }
        KS_CHECK(used <= units, "pattern of %zu: %llu units, bound %llu", m,
                 (unsigned long long)used, (unsigned long long)units);
        const uint32_t *pool = cp ? ks_codepoints : ks_bytes;
        for (size_t w = 0; w < p.nblocks; w++) {
            for (size_t x = 0; x < 8; x++) {
                uint64_t want = 0;
                for (size_t i = 64 * w; i < m && i < 64 * (w + 1); i++)
                    if (s[i] == pool[x]) want |= (uint64_t)1 << (i % 64);
                uint64_t got = wb_fz_pattern_get(&p, pool[x], w);
                KS_CHECK(got == want, "pattern of %zu, block %zu, symbol %X: %llx, want %llx", m, w,
                         (unsigned)pool[x], (unsigned long long)got, (unsigned long long)want);
            }
            KS_CHECK(wb_fz_pattern_get(&p, 0x2603, w) == 0 && wb_fz_pattern_get(&p, 'z', w) == 0,
                     "pattern of %zu, block %zu: a symbol it lacks has positions", m, w);
        }
        wb_fz_pattern_free(&p);
    }
}

/* Jaro at the edges of its words: a side of 63, 64, 65, 127, 128, 129
 * or 1000+ symbols (windows of many words), against one of those sizes
 * or a random one; the other side a copy with edits (many matches, some
 * out of order) or random; codepoints with symbols of 256 and up, and
 * bytes. */
static void ks_jaro_edges(size_t count) {
    static const size_t sizes[] = {63, 64, 65, 127, 128, 129, 1000};
    size_t cap = 1100;
    uint32_t *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
    if (!a || !b) abort();
    for (size_t r = 0; r < count; r++) {
        bool cp = check_random() % 3 != 0;
        size_t letters = 1 + check_random() % 8;
        size_t m = sizes[check_random() % 7], n;
        if (m == 1000) m += check_random() % 64;
        switch (check_random() % 3) {
        case 0:
            n = m;
            break;
        case 1:
            n = sizes[check_random() % 7];
            break;
        default:
            n = check_random() % (m + 40);
        }
        ks_string(a, m, cp, letters, check_random() % 8 == 0);
        if (check_random() % 4 == 0) {
            ks_string(b, n, cp, letters, false);
        } else {
            /* a copy of a's start, and edits: swaps near and far, changes */
            for (size_t j = 0; j < n; j++)
                b[j] = j < m ? a[j] : (cp ? 0x1F600 : 'z');
            for (size_t e = n / 8 + 1; e > 0 && n > 1; e--) {
                size_t x = check_random() % n,
                       y = check_random() % 3 == 0 ? check_random() % n : (x + 1) % n;
                uint32_t t = b[x];
                b[x] = b[y];
                b[y] = t;
                if (check_random() % 4 == 0) b[check_random() % n] = cp ? 0x10FFFF : 0xFF;
            }
        }
        ks_case c;
        ks_random_case(&c, KS_JARO, 0);
        if (check_random() % 2)
            ks_check_pair(&c, a, m, b, n, cp);
        else
            ks_check_pair(&c, b, n, a, m, cp);
    }
    free(a);
    free(b);
}

static void test_kernel_steps(void) {
    ks_patterns(300);
    ks_pattern_pages();
    ks_short_pairs(150);
    ks_osa_edges(300);
    ks_long_pairs(2);
    ks_jaro_edges(300);
    printf("kernels stepped: %zu runs, %zu steps\n", ks_runs, ks_steps);
}

#endif

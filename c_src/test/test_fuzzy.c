/*
 * Unit test of the fuzzy scorers (c_src/fuzzy/), built with AddressSanitizer
 * and UBSan by `make test-c`: every scorer and every kind of score, on
 * random pairs over small alphabets with spaces (bytes, and codepoints with
 * large values and Unicode spaces; fuzzy_random_pairs.h), against the plain
 * references of fuzzy_reference.h, bit for bit; in one go (wb_fz_score) and
 * stepped in budgets of 1, 3 and 17 units; with cutoffs at, just past and
 * around the score; states freed half-way. Also the UTF-8 decoding of
 * wb_fz_symbols, the default ASCII processor, and weighted scores past 2^53
 * and up to 2^64 - 1 (fuzzy_wide_weights.h); each pair kernel at small
 * budgets, on short pairs and on a side of 100,000+ symbols
 * (fuzzy_kernel_steps.h); a partial ratio's needle past 64 KB at small
 * budgets (fuzzy_long_needle.h); the partial ratio's alignment against
 * rapidfuzz's choice of window (fuzzy_alignment.h).
 */
#include "../fuzzy/fuzzy.h"
#include "../fuzzy/scores.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzzy_affix_scores.h"
#include "fuzzy_free_later.h"
#include "fuzzy_kernel_steps.h"
#include "fuzzy_reference.h"
#include "fuzzy_setup_steps.h"
#include "fuzzy_short_edits.h"
#include "fuzzy_short_form.h"
#include "fuzzy_wide_weights.h"
#include "reference.h"

static const char *const scorer_names[] = WB_FZ_SCORER_NAMES;
static const char *const kind_names[] = WB_FZ_KIND_NAMES;

/* room for a random string */
#define CAP 160

/* Failures print their context up to this many; later ones are counted. */
#define DETAILED_FAILURES 40

#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (failures < DETAILED_FAILURES) {                                                        \
            CHECK(cond, __VA_ARGS__);                                                              \
        } else {                                                                                   \
            checks++;                                                                              \
            if (!(cond)) failures++;                                                               \
        }                                                                                          \
    } while (0)

/* ---- a readable description of a case ---------------------------------------- */

static size_t put_symbols(char *out, size_t room, const uint32_t *s, size_t n) {
    size_t at = 0;
    for (size_t i = 0; i < n && at + 16 < room; i++) {
        if (s[i] >= 0x20 && s[i] < 0x7F && s[i] != '"' && s[i] != '\\')
            out[at++] = (char)s[i];
        else
            at += (size_t)snprintf(out + at, room - at, "\\u{%X}", (unsigned)s[i]);
    }
    out[at] = 0;
    return at;
}

static char description[4096];

static const char *describe(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b,
                            size_t n) {
    char sa[1800], sb[1800];
    put_symbols(sa, sizeof sa, a, m);
    put_symbols(sb, sizeof sb, b, n);
    char cutoff[40] = "none";
    if (o->has_cutoff) snprintf(cutoff, sizeof cutoff, "%.17g", o->cutoff);
    snprintf(description, sizeof description,
             "%s %s%s cutoff %s weights (%llu, %llu, %llu) prefix_weight %g a (%zu) \"%s\" b "
             "(%zu) \"%s\"",
             scorer_names[o->scorer], kind_names[o->kind], o->codepoints ? " codepoints" : "",
             cutoff, (unsigned long long)o->ins, (unsigned long long)o->del,
             (unsigned long long)o->sub, o->prefix_weight, m, sa, n, sb);
    return description;
}

/* ---- doubles one step up or down (no libm) ------------------------------------ */

static double next_double(double x, bool up) {
    uint64_t bits;
    if (x == 0.0) {
        bits = 1; /* the smallest subnormal */
        double tiny;
        memcpy(&tiny, &bits, sizeof tiny);
        return up ? tiny : -tiny;
    }
    memcpy(&bits, &x, sizeof bits);
    /* positive doubles here: one more in the bits is the next one up */
    if (x > 0)
        bits = up ? bits + 1 : bits - 1;
    else
        bits = up ? bits - 1 : bits + 1;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* ---- running the core ------------------------------------------------------- */

static uint64_t max_used_per_unit_num, max_used_per_unit_den = 1;
static size_t runs, quick_runs, bar_runs, top_runs, wratio_runs, window_bar_runs, cut_runs;

/* wb_fz_start, then wb_fz_step(budget) until done; false when out of
 * memory or when it takes more steps than its units allow. */
static bool stepped(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b,
                    size_t n, uint64_t budget, double *score, bool *passed, size_t *steps) {
    wb_fz s;
    if (!wb_fz_start(&s, o, a, m, b, n)) return false;
    uint64_t units = wb_fz_units(o, m, n), used = 0;
    /* every step moves at least a column, a window or a part on, and the
     * units bound those */
    size_t most = 2 * (size_t)units + 16;
    *steps = 0;
    bool ok = true;
    while (!wb_fz_step(&s, budget, &used)) {
        if (++*steps > most) {
            ok = false;
            break;
        }
    }
    if (ok && budget > units) {
        /* in one go: wb_fz_units is an upper bound (fuzzy.h) */
        FZ_CHECK(used <= units, "%llu units taken, %llu predicted: %s", (unsigned long long)used,
                 (unsigned long long)units, describe(o, a, m, b, n));
        if (used * max_used_per_unit_den > max_used_per_unit_num * (units ? units : 1)) {
            max_used_per_unit_num = used;
            max_used_per_unit_den = units ? units : 1;
        }
    }
    ok = ok && !s.failed;
    *score = s.score;
    *passed = s.passed;
    wb_fz_free(&s);
    runs++;
    return ok;
}

/* Starts a score, takes `steps` steps of one unit, frees it (ASan reports
 * a leak). */
static void abandon(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b,
                    size_t n, size_t steps) {
    wb_fz s;
    FZ_CHECK(wb_fz_start(&s, o, a, m, b, n), "start: %s", describe(o, a, m, b, n));
    uint64_t used = 0;
    for (size_t i = 0; i < steps && !wb_fz_step(&s, 1, &used); i++) {
    }
    wb_fz_free(&s);
}

/* The quick partial ratio (or WRatio of single tokens apart, `lcs`
 * given) with a search's worst kept: at the pair's own score (a tie,
 * which the worst kept wins) never better than it, and a hair worse
 * than it its own score (windows that cannot beat the bar are left out,
 * never one that can). */
static void check_window_bars(wb_fz_quick *q, const uint8_t *t, size_t n, const uint32_t *a,
                              size_t m, const uint32_t *b, double score, bool wratio, size_t lcs) {
    const wb_fz_options *o = &q->o;
    double hair = wb_fz_kind_is_distance(o->kind) ? -1e-9 : 1e-9;
    double worsts[2] = {
        score,
        score - hair * (o->kind == WB_FZ_SIMILARITY || o->kind == WB_FZ_DISTANCE ? 100.0 : 1.0)};
    for (size_t i = 0; i < 2; i++) {
        double s;
        bool p;
        if (wratio)
            wb_fz_quick_wratio_apart(q, t, n, lcs, &worsts[i], &s, &p);
        else
            wb_fz_quick_partial(q, t, n, lcs, &worsts[i], &s, &p);
        FZ_CHECK(i == 0 ? !wb_fz_better(o->kind, s, score) : s == score,
                 "quick partial with the bar at %.17g: %.17g, its own %.17g: %s", worsts[i], s,
                 score, describe(o, a, m, b, n));
    }
    window_bar_runs++;
}

/* WRatio of single tokens apart from the quick partial ratio's query q */
static void check_wratio_apart(wb_fz_quick *q, const uint8_t *qb, size_t n, const uint32_t *a,
                               size_t m, const uint32_t *b, double score, bool passed,
                               const wb_fz_options *o) {
    double ws;
    bool wp;
    wb_fz_quick_wratio_apart(q, qb, n, fzr_lcs(a, m, b, n), NULL, &ws, &wp);
    FZ_CHECK(wp == passed && ws == score, "quick WRatio: %.17g %d, wb_fz_score %.17g %d: %s", ws,
             wp, score, passed, describe(o, a, m, b, n));
    check_window_bars(q, qb, n, a, m, b, score, true, fzr_lcs(a, m, b, n));
    wratio_runs++;
}

/* The quick score of q against qb (n bytes, fitting) and its bounds */
static void check_quick_fitting(wb_fz_quick *q, const uint8_t *qb, size_t n, const uint32_t *a,
                                size_t m, const uint32_t *b, double score, bool passed,
                                const wb_fz_options *o) {
    double qs;
    bool qp;
    wb_fz_bar badness;
    wb_fz_quick_score(q, qb, n, NULL, &qs, &qp, &badness);
    /* the same score, beyond the cutoff too (the kernels' bound + 1) */
    FZ_CHECK(qp == passed && qs == score, "quick: %.17g %d, wb_fz_score %.17g %d: %s", qs, qp,
             score, passed, describe(o, a, m, b, n));
    quick_runs++;
    if (o->scorer == WB_FZ_PARTIAL_RATIO)
        check_window_bars(q, qb, n, a, m, b, score, false, fzr_lcs(a, m, b, n));
    bool jaro = o->scorer == WB_FZ_JARO || o->scorer == WB_FZ_JARO_WINKLER;
    if (jaro && n <= 64) {
        /* the best a candidate of its length and matches can have: never
         * beaten by its score */
        double *top = wb_fz_jaro_tops(o, m);
        CHECK(top != NULL, "alloc");
        size_t transpositions, matches = fzr_jaro_counts(a, m, b, n, &transpositions);
        double best = top[n * 65 + matches];
        if (o->scorer == WB_FZ_JARO_WINKLER) {
            /* and with its transpositions, whatever its first bytes */
            double counted = wb_fz_jaro_top(o, m, n, matches, transpositions);
            FZ_CHECK(!wb_fz_better(o->kind, score, counted),
                     "Jaro-Winkler's top of the counts %.17g, score %.17g: %s", counted, score,
                     describe(o, a, m, b, n));
        }
        FZ_CHECK(!wb_fz_better(o->kind, score, best), "jaro top %.17g, score %.17g: %s", best,
                 score, describe(o, a, m, b, n));
        free(top);
        top_runs++;
    }
    if (o->scorer == WB_FZ_DAMERAU_LEVENSHTEIN && badness.den != 0) {
        /* the distance's lower bound is never above it: a bar one edit
         * worse than the pair's own badness keeps the pair, with its
         * score (a bound above the distance would end it there) */
        wb_fz_bar own = {badness.num + 1, badness.den}, again;
        double bs;
        bool bp;
        wb_fz_quick_score(q, qb, n, &own, &bs, &bp, &again);
        FZ_CHECK(bp == passed && (!bp || bs == score),
                 "quick with a bar one edit worse: %.17g %d: %s", bs, bp, describe(o, a, m, b, n));
        bar_runs++;
    }
    if (o->scorer == WB_FZ_DAMERAU_LEVENSHTEIN && o->kind == WB_FZ_DISTANCE && passed &&
        wb_fz_kernel_cutoff(o, m > n ? m : n) == WB_FZ_NO_CUTOFF) {
        /* a distance cut: the cut, its own when the cut is past it */
        size_t d = (size_t)score, lcs = fzr_lcs(a, m, b, n);
        for (size_t cut = 1; cut <= d + 1; cut++) {
            double cs;
            bool cp;
            wb_fz_bar again;
            wb_fz_quick_damerau(q, qb, n, lcs, NULL, cut, &cs, &cp, &again);
            FZ_CHECK(cs == (cut > d ? score : (double)cut),
                     "quick Damerau-Levenshtein cut at %zu: %.17g, its own %.17g: %s", cut, cs,
                     score, describe(o, a, m, b, n));
        }
        cut_runs++;
    }
}

/* The ways a search scores a pair give the score of wb_fz_score: with
 * a's pattern made once (wb_fz_start_with), stepped in `budget`; and the
 * quick score, when the scorer and the pair have one (a query of 1..64
 * bytes, or ASCII in codepoint mode). */
static void check_search_paths(const wb_fz_options *o, const uint32_t *a, size_t m,
                               const uint32_t *b, size_t n, double score, bool passed,
                               uint64_t budget) {
    wb_fz_pattern query;
    FZ_CHECK(wb_fz_pattern_init(&query, a, m), "pattern");
    wb_fz s;
    bool ok = wb_fz_start_with(&s, o, &query, a, m, b, n);
    FZ_CHECK(ok, "start_with: %s", describe(o, a, m, b, n));
    if (ok) {
        uint64_t used = 0, most = 2 * wb_fz_units(o, m, n) + 16, steps = 0;
        while (!wb_fz_step(&s, budget, &used) && ++steps <= most) {
        }
        FZ_CHECK(s.done && !s.failed && s.score == score && s.passed == passed,
                 "start_with (budget %llu): %.17g %d, wb_fz_score %.17g %d: %s",
                 (unsigned long long)budget, s.score, s.passed, score, passed,
                 describe(o, a, m, b, n));
        wb_fz_free(&s);
    }
    wb_fz_pattern_free(&query);

    uint32_t top = o->codepoints ? 128 : 256;
    uint8_t qa[64], qb[CAP];
    if (m == 0 || m > 64 || n > CAP) return;
    for (size_t i = 0; i < m; i++) {
        if (a[i] >= top) return;
        qa[i] = (uint8_t)a[i];
    }
    for (size_t j = 0; j < n; j++) {
        if (b[j] >= top) return;
        qb[j] = (uint8_t)b[j];
    }
    wb_fz_quick q;
    if (o->scorer == WB_FZ_WRATIO) {
        /* single tokens whose lengths are 1.5 apart: WRatio from the LCS */
        bool spaced = false;
        for (size_t i = 0; i < m; i++)
            spaced = spaced || wb_fz_ascii_space(qa[i]);
        for (size_t j = 0; j < n; j++)
            spaced = spaced || wb_fz_ascii_space(qb[j]);
        bool near = n > 0 && (double)(m > n ? m : n) / (double)(m < n ? m : n) < 1.5;
        if (spaced || n == 0 || n > WB_FZ_QUICK_MATRIX_MOST || near) return;
        wb_fz_options single = *o;
        single.scorer = WB_FZ_PARTIAL_RATIO;
        if (!wb_fz_quick_init(&q, &single, qa, m)) return;
        check_wratio_apart(&q, qb, n, a, m, b, score, passed, o);
        wb_fz_quick_free(&q);
        return;
    }
    if (!wb_fz_quick_init(&q, o, qa, m)) return;
    if (wb_fz_quick_fits(&q, n)) check_quick_fitting(&q, qb, n, a, m, b, score, passed, o);
    wb_fz_quick_free(&q);
}

/* The core's score in one go and stepped agree with each other and with
 * the reference's raw result r. */
static void check_case(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b,
                       size_t n, const fzr_raw *r, const uint64_t *budgets, size_t nbudgets) {
    double score;
    bool passed;
    bool ok = wb_fz_score(o, a, m, b, n, &score, &passed);
    FZ_CHECK(ok, "wb_fz_score failed: %s", describe(o, a, m, b, n));
    if (!ok) return;
    double want = fzr_kind_score(o->kind, r);
    FZ_CHECK(fzr_agrees(o, r, score, passed), "got %.17g%s, want %.17g%s: %s", score,
             passed ? "" : " (not passed)", want, fzr_passes(o, want) ? "" : " (not passed)",
             describe(o, a, m, b, n));
    FZ_CHECK(fzr_in_range(o, m, n, score), "out of range: %.17g: %s", score,
             describe(o, a, m, b, n));
    check_search_paths(o, a, m, b, n, score, passed, nbudgets ? budgets[0] : UINT64_MAX / 4);
    for (size_t i = 0; i < nbudgets; i++) {
        double s2;
        bool p2;
        size_t steps;
        ok = stepped(o, a, m, b, n, budgets[i], &s2, &p2, &steps);
        FZ_CHECK(ok, "stepped (budget %llu) failed or did not end (%zu steps): %s",
                 (unsigned long long)budgets[i], steps, describe(o, a, m, b, n));
        FZ_CHECK(!ok || (s2 == score && p2 == passed),
                 "stepped (budget %llu): %.17g %d, in one go %.17g %d: %s",
                 (unsigned long long)budgets[i], s2, p2, score, passed, describe(o, a, m, b, n));
    }
}

/* Every kind of score of one scorer on one pair, with and without
 * cutoffs, against the reference computed once. */
static void check_scorer(wb_fz_options o, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                         bool stepped_runs) {
    static const uint64_t all_budgets[] = {1, 3, 17, UINT64_MAX / 4};
    fzr_raw r = fzr_compute(&o, a, m, b, n);
    for (int kind = 0; kind < WB_FZ_KINDS; kind++) {
        o.kind = (wb_fz_kind)kind;
        o.has_cutoff = false;
        o.cutoff = 0;
        check_case(&o, a, m, b, n, &r, all_budgets, stepped_runs ? 4 : 1);
        abandon(&o, a, m, b, n, 1 + check_random() % 4);

        double want = fzr_kind_score(o.kind, &r);
        bool distance = wb_fz_kind_is_distance(o.kind);
        uint64_t one_budget[] = {all_budgets[check_random() % 3]};
        size_t nb = stepped_runs ? 1 : 0;
        /* the score itself passes; one double past it does not */
        o.has_cutoff = true;
        o.cutoff = want;
        check_case(&o, a, m, b, n, &r, one_budget, nb);
        o.cutoff = next_double(want, !distance);
        check_case(&o, a, m, b, n, &r, one_budget, nb);
        o.cutoff = next_double(want, distance);
        check_case(&o, a, m, b, n, &r, one_budget, nb);
        /* somewhere in the range */
        double top = o.kind >= WB_FZ_NORMALIZED_DISTANCE ? 1.0 : r.edit ? (double)r.maximum : r.top;
        o.cutoff = top * (double)(check_random() % 1001) / 1000.0;
        check_case(&o, a, m, b, n, &r, one_budget, nb);

        if (r.edit && o.kind == WB_FZ_DISTANCE) {
            /* integer cutoffs around the distance: passed iff d <= k */
            uint64_t d = r.distance;
            uint64_t ks[] = {0, d > 0 ? d - 1 : 0, d, d + 1, d + 2, check_random() % (d + 3)};
            for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
                o.cutoff = (double)ks[i];
                double score;
                bool passed;
                FZ_CHECK(wb_fz_score(&o, a, m, b, n, &score, &passed), "score");
                FZ_CHECK(passed == (d <= ks[i]) && (!passed || score == (double)d),
                         "cutoff %llu: %.17g %d, distance %llu: %s", (unsigned long long)ks[i],
                         score, passed, (unsigned long long)d, describe(&o, a, m, b, n));
                check_case(&o, a, m, b, n, &r, one_budget, nb);
            }
        }
    }
}

#include "fuzzy_random_pairs.h"

/* ---- fixed cases --------------------------------------------------------------- */

static size_t ascii(const char *s, uint32_t *out) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)s[i];
    return n;
}

static double close_to(double x, double y) {
    return x - y < 1e-12 && y - x < 1e-12;
}

/* A known score, from the reference and from the core (also checks the
 * reference). */
static void known(wb_fz_scorer scorer, const char *sa, const char *sb, double want) {
    uint32_t a[64], b[64];
    size_t m = ascii(sa, a), n = ascii(sb, b);
    wb_fz_options o = {.scorer = scorer,
                       .kind = fzr_is_edit(scorer) ? WB_FZ_DISTANCE : WB_FZ_SIMILARITY,
                       .ins = 1,
                       .del = 1,
                       .sub = 1,
                       .prefix_weight = 0.1};
    fzr_raw r = fzr_compute(&o, a, m, b, n);
    double ref = fzr_kind_score(o.kind, &r), score;
    bool passed;
    CHECK(close_to(ref, want), "reference %s(\"%s\", \"%s\") = %.17g, want %.17g",
          scorer_names[scorer], sa, sb, ref, want);
    CHECK(wb_fz_score(&o, a, m, b, n, &score, &passed) && score == ref,
          "%s(\"%s\", \"%s\") = %.17g, reference %.17g", scorer_names[scorer], sa, sb, score, ref);
}

static void test_known(void) {
    known(WB_FZ_LEVENSHTEIN, "kitten", "sitting", 3);
    known(WB_FZ_INDEL, "kitten", "sitting", 5);
    known(WB_FZ_OSA, "CA", "ABC", 3);
    known(WB_FZ_DAMERAU_LEVENSHTEIN, "CA", "ABC", 2);
    known(WB_FZ_HAMMING, "karolin", "kathrin", 3);
    known(WB_FZ_HAMMING, "abc", "abcde", 2);
    /* the distances rapidfuzz-cpp gives (max(m, n) less the LCS, the
     * common prefix, the common suffix) */
    known(WB_FZ_LCS_SEQ, "South Korea", "North Korea", 2);
    known(WB_FZ_LCS_SEQ, "aabc", "cccd", 3);
    known(WB_FZ_PREFIX, "hello", "help", 2);
    known(WB_FZ_PREFIX, "South Korea", "North Korea", 11);
    known(WB_FZ_POSTFIX, "postfix", "suffix", 4);
    known(WB_FZ_POSTFIX, "South Korea", "North Korea", 3);
    known(WB_FZ_POSTFIX, "", "", 0);
    known(WB_FZ_JARO, "MARTHA", "MARHTA", 17.0 / 18.0);
    known(WB_FZ_JARO_WINKLER, "MARTHA", "MARHTA", 0.9611111111111111);
    known(WB_FZ_JARO, "", "", 1.0);
    known(WB_FZ_JARO, "a", "", 0.0);
    known(WB_FZ_RATIO, "this is a test", "this is a test!", 100.0 * 28.0 / 29.0);
    known(WB_FZ_PARTIAL_RATIO, "this is a test", "this is a test!", 100.0);
    known(WB_FZ_TOKEN_SORT_RATIO, "fuzzy wuzzy was a bear", "wuzzy fuzzy was a bear", 100.0);
    known(WB_FZ_TOKEN_SET_RATIO, "fuzzy was a bear", "fuzzy fuzzy was a bear", 100.0);
    known(WB_FZ_QRATIO, "", "abc", 0.0);
    known(WB_FZ_RATIO, "", "", 100.0);
    known(WB_FZ_WRATIO, "", "", 0.0);
    known(WB_FZ_PARTIAL_TOKEN_SET_RATIO, "a b", "b c", 100.0);
}

#include "fuzzy_alignment.h"
#include "fuzzy_long_affix.h"
#include "fuzzy_long_needle.h"
#include "fuzzy_sorted_set.h"
#include "fuzzy_whitespace_parity.h"

/* ---- wb_fz_symbols, wb_fz_default_process_ascii --------------------------------- */

static void test_symbols(void) {
    uint32_t out[16];
    const char *bad[] = {"\xC0\x80", "\xED\xA0\x80", "\xF5\x80\x80\x80", "a\xE3\x80",
                         "\xE3",     "\x80",         "\xF4\x90\x80\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(wb_fz_symbols((const uint8_t *)bad[i], strlen(bad[i]), true, out) == SIZE_MAX,
              "invalid UTF-8 %zu decoded", i);
    const char *good = "a\xC3\xA9\xE3\x80\x80\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF";
    uint32_t want[] = {'a', 0xE9, 0x3000, 0x1F600, 0x10FFFF};
    size_t n = wb_fz_symbols((const uint8_t *)good, strlen(good), true, out);
    CHECK(n == 5 && memcmp(out, want, sizeof want) == 0, "valid UTF-8: %zu symbols", n);
    CHECK(wb_fz_symbols((const uint8_t *)"", 0, true, out) == 0, "empty");
    /* bytes: the bytes, invalid UTF-8 or not */
    n = wb_fz_symbols((const uint8_t *)"\xC0\x80z", 3, false, out);
    CHECK(n == 3 && out[0] == 0xC0 && out[1] == 0x80 && out[2] == 'z', "bytes");
    /* random bytes against the strict decoder of reference.h */
    for (int round = 0; round < 3000; round++) {
        uint8_t in[12];
        uint32_t got[12], ref[12];
        size_t len = check_random() % 13;
        static const uint8_t pool[] = {'a',  0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED,
                                       0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0x9F, 0xA0, 0x90};
        for (size_t i = 0; i < len; i++)
            in[i] = pool[check_random() % sizeof pool];
        size_t g = wb_fz_symbols(in, len, true, got);
        long r = wb_ref_decode_utf8(in, len, ref);
        CHECK((r < 0 && g == SIZE_MAX) ||
                  (r >= 0 && g == (size_t)r && memcmp(got, ref, g * sizeof *got) == 0),
              "decode round %d: %zu, reference %ld", round, g, r);
    }
}

static void process(const char *in, bool ok, const char *want) {
    uint8_t out[64];
    size_t len = 12345;
    bool got = wb_fz_default_process_ascii((const uint8_t *)in, strlen(in), out, &len);
    CHECK(got == ok, "process \"%s\": %d", in, got);
    if (got && ok)
        CHECK(len == strlen(want) && memcmp(out, want, len) == 0, "process \"%s\": \"%.*s\"", in,
              (int)len, out);
}

static void test_process(void) {
    process("  Hello, World! ", true, "hello  world");
    process("", true, "");
    process("!?, .;", true, "");
    process("   ", true, "");
    process("ABC-xyz_09", true, "abc xyz 09");
    process("\x01Z\x7F", true, "z");
    process("caf\xC3\xA9", false, "");
    process("\x80", false, "");
}

#include "fuzzy_damerau_cuts.h"

int main(void) {
    test_symbols();
    test_symbols_chunks(3000);
    test_short_form(3000);
    test_damerau_short(600);
    test_hamming_bytes(3000);
    test_affix_scores(3000, 6);
    test_hamming_no_pad(2000);
    test_process();
    test_known();
    test_whitespace_parity();
    test_long_affix();
    test_long_needle();
    test_alignment(3000);
    test_random_pairs(1500, false);
    test_random_pairs(40, true);
    test_partial_bounds(3000);
    test_damerau_cuts(20000);
    test_wide_weights(3000);
    test_kernel_steps();
    test_sorted_set(400);
    test_free_later();
    test_setup_steps();
    printf("%zu stepped runs, %zu quick scores (%zu against a bar one edit worse, %zu under "
           "Jaro's top), %zu quick WRatios of single tokens, %zu quick partial ratios against a "
           "search's worst kept, %zu Damerau-Levenshtein distances with cuts; in one go, the most "
           "units taken per unit of wb_fz_units: %.3f\n",
           runs, quick_runs, bar_runs, top_runs, wratio_runs, window_bar_runs, cut_runs,
           (double)max_used_per_unit_num / (double)max_used_per_unit_den);
    return CHECK_SUMMARY();
}

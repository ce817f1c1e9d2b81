/*
 * Unit test of the fuzzy scorers (c_src/fuzzy/), built with AddressSanitizer
 * and UBSan by `make test-c`: every scorer and every kind of score, on
 * random pairs over small alphabets with spaces (bytes, and codepoints with
 * large values and Unicode spaces), against the plain references of
 * fuzzy_reference.h, bit for bit; in one go (wb_fz_score) and stepped in
 * budgets of 1, 3 and 17 units; with cutoffs at, just past and around the
 * score; states freed half-way. Also the UTF-8 decoding of wb_fz_symbols,
 * the default ASCII processor, and weighted scores past 2^53 and up to
 * 2^64 - 1 (fuzzy_wide_weights.h); each pair kernel at small budgets, on
 * short pairs and on a side of 100,000+ symbols (fuzzy_kernel_steps.h);
 * a partial ratio's needle past 64 KB at small budgets (fuzzy_long_needle.h).
 */
#include "../fuzzy/fuzzy.h"
#include "../fuzzy/scores.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
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

/* ---- random pairs ------------------------------------------------------------ */

static const uint32_t byte_letters[] = {'a', 'b', 'c', 'd', 'e', '0', 0x85, 0xA0, 0xFF, 0};
static const uint32_t byte_spaces[] = {' ', ' ', ' ', '\t', '\n', 13};
static const uint32_t cp_letters[] = {'a',      'b',   0xE9, 0x4E2D, 0x1F600,
                                      0x10FFFF, 0x100, 'c',  0x200B};
static const uint32_t cp_spaces[] = {' ', 0x3000, ' ', 0x2003, 0xA0, 0x85, '\n', 0x205F};

typedef struct {
    bool codepoints;
    size_t letters, spaces_every; /* spaces: one symbol in spaces_every (0: none) */
} alphabet;

static uint32_t random_symbol(const alphabet *al) {
    if (al->spaces_every && check_random() % al->spaces_every == 0) {
        /* mostly the plain space */
        if (check_random() % 3) return ' ';
        return al->codepoints
                   ? cp_spaces[check_random() % (sizeof cp_spaces / sizeof(uint32_t))]
                   : byte_spaces[check_random() % (sizeof byte_spaces / sizeof(uint32_t))];
    }
    size_t k = check_random() % al->letters;
    /* now and then a rarer symbol of the pool */
    if (check_random() % 16 == 0)
        k = check_random() % (al->codepoints ? sizeof cp_letters / sizeof(uint32_t)
                                             : sizeof byte_letters / sizeof(uint32_t));
    return al->codepoints ? cp_letters[k] : byte_letters[k];
}

static size_t random_string(uint32_t *s, size_t len, const alphabet *al) {
    for (size_t i = 0; i < len; i++)
        s[i] = random_symbol(al);
    return len;
}

/* b from a by a few random edits (room: cap symbols) */
static size_t mutate(const uint32_t *a, size_t m, uint32_t *b, size_t cap, const alphabet *al) {
    memcpy(b, a, m * sizeof *b);
    size_t n = m, edits = check_random() % 6;
    for (size_t e = 0; e < edits; e++) {
        size_t at = n ? check_random() % n : 0;
        switch (check_random() % 4) {
        case 0: /* substitute */
            if (n) b[at] = random_symbol(al);
            break;
        case 1: /* insert */
            if (n < cap) {
                memmove(b + at + 1, b + at, (n - at) * sizeof *b);
                b[at] = random_symbol(al);
                n++;
            }
            break;
        case 2: /* delete */
            if (n) {
                memmove(b + at, b + at + 1, (n - at - 1) * sizeof *b);
                n--;
            }
            break;
        default: /* swap neighbours */
            if (at + 1 < n) {
                uint32_t t = b[at];
                b[at] = b[at + 1];
                b[at + 1] = t;
            }
        }
    }
    return n;
}

/* b: a's tokens shuffled, some dropped or doubled, joined by random spaces */
static size_t shuffle_tokens(const uint32_t *a, size_t m, uint32_t *b, size_t cap,
                             const alphabet *al) {
    fzr_tokens t = fzr_split(a, m, al->codepoints);
    for (size_t i = t.count; i > 1; i--) {
        size_t j = check_random() % i;
        fzr_token x = t.t[i - 1];
        t.t[i - 1] = t.t[j];
        t.t[j] = x;
    }
    size_t n = 0;
    for (size_t i = 0; i < t.count; i++) {
        size_t times = check_random() % 5 == 0 ? 0 : check_random() % 5 == 0 ? 2 : 1;
        for (size_t r = 0; r < times; r++) {
            if (n + t.t[i].len + 2 > cap) break;
            b[n++] = check_random() % 4 ? ' ' : random_symbol(al);
            memcpy(b + n, t.t[i].at, t.t[i].len * sizeof *b);
            n += t.t[i].len;
        }
    }
    free(t.t);
    return n;
}

/* b: a piece of a, maybe edited (partial ratios) */
static size_t piece(const uint32_t *a, size_t m, uint32_t *b, size_t cap, const alphabet *al) {
    size_t from = m ? check_random() % m : 0, len = m - from ? check_random() % (m - from + 1) : 0;
    return mutate(a + from, len, b, cap, al);
}

static size_t random_length(bool long_pair) {
    if (long_pair) return 60 + check_random() % 81;
    size_t pick = check_random() % 10;
    return pick == 0 ? 0 : pick == 1 ? 1 + check_random() % 3 : check_random() % 41;
}

static void random_pair(bool long_pair, wb_fz_options *o, uint32_t *a, size_t *m, uint32_t *b,
                        size_t *n) {
    alphabet al;
    al.codepoints = check_random() % 2;
    size_t pool = al.codepoints ? 8 : 6;
    size_t letters[] = {1, 2, 3, 5, pool};
    al.letters = letters[check_random() % 5];
    size_t every[] = {0, 2, 4, 6, 10};
    al.spaces_every = every[check_random() % 5];
    *m = random_string(a, random_length(long_pair), &al);
    switch (check_random() % 5) {
    case 0:
    case 1:
        *n = random_string(b, random_length(long_pair), &al);
        break;
    case 2:
        *n = mutate(a, *m, b, CAP, &al);
        break;
    case 3:
        *n = shuffle_tokens(a, *m, b, CAP, &al);
        break;
    default:
        *n = piece(a, *m, b, CAP, &al);
    }
    if (check_random() % 2) {
        /* either side the longer */
        uint32_t t[CAP];
        size_t tl = *m;
        memcpy(t, a, tl * sizeof *t);
        memcpy(a, b, *n * sizeof *a);
        memcpy(b, t, tl * sizeof *b);
        *m = *n;
        *n = tl;
    }
    memset(o, 0, sizeof *o);
    o->codepoints = al.codepoints;
    o->ins = o->del = o->sub = 1;
    size_t w = check_random() % 10;
    if (w >= 6 && w < 9) {
        o->ins = check_random() % 4;
        o->del = check_random() % 4;
        o->sub = check_random() % 4;
    } else if (w == 9) {
        static const uint64_t big[] = {1, 2, 7, 1000, 4294967295u};
        o->ins = big[check_random() % 5];
        o->del = big[check_random() % 5];
        o->sub = big[check_random() % 5];
    }
    static const double weights[] = {0.1, 0.1, 0.0, 0.25, 0.15, 0.05};
    o->prefix_weight =
        check_random() % 4 ? weights[check_random() % 6] : (double)(check_random() % 26) / 100.0;
}

static void test_random_pairs(size_t count, bool long_pairs) {
    uint32_t a[CAP], b[CAP];
    for (size_t round = 0; round < count; round++) {
        wb_fz_options o;
        size_t m, n;
        random_pair(long_pairs, &o, a, &m, b, &n);
        for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
            o.scorer = (wb_fz_scorer)scorer;
            /* long pairs: stepped now and then only (the references are slow) */
            check_scorer(o, a, m, b, n, !long_pairs || round % 4 == 0);
        }
    }
}

/* wb_fz_partial_bound never below the score: the partial ratio of any
 * pair, the partial token ratios and WRatio of single tokens; WRatio of
 * lengths within 1.5 the ratio itself; a bound past the cutoff only for a
 * score past it. Pairs from random_pair (pieces, mutations, shuffles:
 * high scores too), spaces taken out for the token scorers. */
static void test_partial_bounds(size_t count) {
    uint32_t a[CAP], b[CAP];
    const wb_fz_scorer scorers[] = {WB_FZ_PARTIAL_RATIO, WB_FZ_PARTIAL_TOKEN_SORT_RATIO,
                                    WB_FZ_PARTIAL_TOKEN_SET_RATIO, WB_FZ_PARTIAL_TOKEN_RATIO,
                                    WB_FZ_WRATIO};
    size_t bounded = 0, ratios = 0;
    for (size_t round = 0; round < count; round++) {
        wb_fz_options o;
        size_t m, n;
        random_pair(false, &o, a, &m, b, &n);
        o.kind = (wb_fz_kind)(round % WB_FZ_KINDS);
        o.has_cutoff = round % 3 == 0;
        o.cutoff = wb_fz_kind_is_distance(o.kind) ? 0.4 : 0.6;
        if (o.kind == WB_FZ_DISTANCE) o.cutoff = 40;
        if (o.kind == WB_FZ_SIMILARITY) o.cutoff = 60;
        for (size_t k = 0; k < sizeof scorers / sizeof *scorers; k++) {
            o.scorer = scorers[k];
            size_t mm = m, nn = n;
            if (o.scorer != WB_FZ_PARTIAL_RATIO) { /* single tokens */
                mm = nn = 0;
                for (size_t i = 0; i < m; i++)
                    if (!fzr_space(a[i], o.codepoints)) a[mm++] = a[i];
                for (size_t i = 0; i < n; i++)
                    if (!fzr_space(b[i], o.codepoints)) b[nn++] = b[i];
            }
            if (mm == 0 || nn == 0) continue;
            wb_fz_options plain = o, ratio = o;
            plain.has_cutoff = false;
            ratio.has_cutoff = false;
            ratio.scorer = WB_FZ_RATIO;
            fzr_raw r = fzr_compute(&plain, a, mm, b, nn);
            double want = fzr_kind_score(o.kind, &r), bound;
            bool passes;
            size_t lcs = fzr_lcs(a, mm, b, nn);
            if (wb_fz_partial_bound(&o, mm, nn, lcs, &bound, &passes) == WB_FZ_BOUND_RATIO) {
                fzr_raw rr = fzr_compute(&ratio, a, mm, b, nn);
                CHECK(o.scorer == WB_FZ_WRATIO && want == fzr_kind_score(o.kind, &rr),
                      "%s: the ratio %.17g, want %.17g (%zu, %zu)", scorer_names[o.scorer],
                      fzr_kind_score(o.kind, &rr), want, mm, nn);
                ratios++;
                continue;
            }
            bounded++;
            CHECK(!wb_fz_better(o.kind, want, bound), "%s kind %d: bound %.17g below %.17g",
                  scorer_names[o.scorer], (int)o.kind, bound, want);
            bool want_passes = !o.has_cutoff || (wb_fz_kind_is_distance(o.kind) ? want <= o.cutoff
                                                                                : want >= o.cutoff);
            CHECK(passes || !want_passes, "%s: bound %.17g fails a cutoff %.17g passes",
                  scorer_names[o.scorer], bound, want);
        }
    }
    printf("partial bounds: %zu bounded, %zu the ratio\n", bounded, ratios);
}

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
                       .kind = scorer <= WB_FZ_HAMMING ? WB_FZ_DISTANCE : WB_FZ_SIMILARITY,
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

/* ---- the quick Damerau-Levenshtein's rows under a cut ------------------ */

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

int main(void) {
    test_symbols();
    test_symbols_chunks(3000);
    test_short_form(3000);
    test_damerau_short(600);
    test_hamming_bytes(3000);
    test_process();
    test_known();
    test_whitespace_parity();
    test_long_affix();
    test_long_needle();
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

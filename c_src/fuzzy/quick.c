/* Quick scores (fuzzy.h): a query of 1..64 bytes against short candidates,
 * each score in one go with no state and nothing allocated, the query's
 * match masks made once. Levenshtein (Myers 1999 in Hyyro's form), OSA
 * (Hyyro 2003), Indel and its ratios (Allison-Dix / Hyyro 2004) take one
 * word step per candidate byte; Jaro matches a symbol per step, its
 * window a mask; Hamming compares bytes. */
#include "fuzzy.h"
#include "scores.h"

#include <stdlib.h>
#include <string.h>

bool wb_fz_quick_init(wb_fz_quick *q, const wb_fz_options *o, const uint8_t *query, size_t m) {
    switch (o->scorer) {
    case WB_FZ_LEVENSHTEIN:
        if (o->ins != 1 || o->del != 1 || o->sub != 1) return false;
        break;
    case WB_FZ_INDEL:
    case WB_FZ_RATIO:
    case WB_FZ_QRATIO:
    case WB_FZ_OSA:
    case WB_FZ_HAMMING:
    case WB_FZ_JARO:
    case WB_FZ_JARO_WINKLER:
    case WB_FZ_DAMERAU_LEVENSHTEIN:
    case WB_FZ_PARTIAL_RATIO:
        break;
    default:
        return false;
    }
    if (m == 0 || m > 64) return false;
    memset(q, 0, sizeof *q);
    q->o = *o;
    memcpy(q->query, query, m);
    q->m = m;
    for (size_t i = 0; i < m; i++) {
        q->peq[query[i]] |= (uint64_t)1 << i;
        q->rpeq[query[i]] |= (uint64_t)1 << (m - 1 - i);
        q->counts[query[i]]++;
    }
    return true;
}

bool wb_fz_quick_fits(const wb_fz_quick *q, size_t n) {
    switch (q->o.scorer) {
    case WB_FZ_JARO:
    case WB_FZ_JARO_WINKLER:
        return n <= 64;
    case WB_FZ_DAMERAU_LEVENSHTEIN:
    case WB_FZ_PARTIAL_RATIO:
        return n <= WB_FZ_QUICK_MATRIX_MOST;
    default:
        return n <= WB_FZ_QUICK_MOST;
    }
}

/* Levenshtein (Myers/Hyyro), or with `transpositions` OSA (Hyyro 2003):
 * the query's column of 1..64 rows, one step per candidate byte. Inlined
 * with a constant flag: each loop keeps only its own steps. */
static inline size_t hyyro(const wb_fz_quick *q, const uint8_t *t, size_t n, bool transpositions) {
    uint64_t vp = ~(uint64_t)0, vn = 0, d0 = 0, pm_old = 0, last = (uint64_t)1 << (q->m - 1);
    size_t score = q->m;
    for (size_t j = 0; j < n; j++) {
        uint64_t pm = q->peq[t[j]];
        /* a transposition: this symbol matches a row whose symbol the
         * previous column matched one row below, where no match was */
        uint64_t tr = transpositions ? (((~d0) & pm) << 1) & pm_old : 0;
        d0 = (((pm & vp) + vp) ^ vp) | pm | vn | tr;
        uint64_t hp = vn | ~(d0 | vp), hn = d0 & vp;
        score += (hp & last) != 0;
        score -= (hn & last) != 0;
        hp = (hp << 1) | 1;
        hn <<= 1;
        vp = hn | ~(d0 | hp);
        vn = hp & d0;
        pm_old = pm;
    }
    return score;
}

static size_t lcs(const wb_fz_quick *q, const uint8_t *t, size_t n) {
    uint64_t s = ~(uint64_t)0;
    for (size_t j = 0; j < n; j++)
        s = wb_fz_lcs_word(s, q->peq[t[j]]);
    return wb_fz_lcs_of(s, q->m);
}

static size_t hamming(const wb_fz_quick *q, const uint8_t *t, size_t n) {
    size_t common = q->m < n ? q->m : n, d = (q->m > n ? q->m : n) - common;
    for (size_t i = 0; i < common; i++)
        d += q->query[i] != t[i];
    return d;
}

/* The best window of a needle (nl of 1..64 bytes, its masks peq and
 * reversed rpeq) in a haystack (hl >= nl): prefixes of the haystack of 1
 * .. nl - 1 bytes (the needle's LCS with each, a word step a byte),
 * suffixes the same backwards, and every whole window but those fuzzy.c
 * passes over (their last byte not in the needle: the window one to the
 * left, or a shorter prefix, has their LCS over fewer bytes or as many).
 * The best as 2 LCS / (nl + window), kept as integers: the ratio of the
 * best (ratios are monotone in it, and equal quotients round equally) is
 * the best of the ratios fuzzy.c takes. */
typedef struct {
    size_t lcs2, total; /* the best window's 2 LCS and length + nl */
} best_window;

static inline void consider(best_window *b, size_t lcs, size_t total) {
    if (2 * lcs * b->total > b->lcs2 * total) *b = (best_window){2 * lcs, total};
}

static void windows(const uint64_t *peq, const uint64_t *rpeq, size_t nl, const uint8_t *hay,
                    size_t hl, best_window *best) {
    uint64_t v = ~(uint64_t)0, r = ~(uint64_t)0;
    for (size_t w = 1; w < nl; w++) {
        v = wb_fz_lcs_word(v, peq[hay[w - 1]]);
        r = wb_fz_lcs_word(r, rpeq[hay[hl - w]]);
        consider(best, wb_fz_lcs_of(v, nl), nl + w);
        consider(best, wb_fz_lcs_of(r, nl), nl + w);
    }
    for (size_t at = 0; at + nl <= hl && best->lcs2 != best->total; at++) {
        if (!peq[hay[at + nl - 1]]) continue;
        uint64_t s = ~(uint64_t)0;
        for (size_t j = at; j < at + nl; j++)
            s = wb_fz_lcs_word(s, peq[hay[j]]);
        consider(best, wb_fz_lcs_of(s, nl), 2 * nl);
    }
}

/* partial()'s word steps, about a unit each */
static uint64_t partial_units(size_t m, size_t n) {
    size_t shorter = m < n ? m : n, longer = m < n ? n : m;
    return 1 + 2 * shorter + (longer - shorter + 1) * shorter;
}

/* The partial ratio (0..100) of the query and t (n bytes, fitting): the
 * shorter side's windows in the longer, both ways when of one length. */
static double partial(wb_fz_quick *q, const uint8_t *t, size_t n) {
    size_t m = q->m;
    if (n == 0) return 0.0;
    best_window best = {0, 1};
    if (m <= n) windows(q->peq, q->rpeq, m, t, n, &best);
    if (n <= m && best.lcs2 != best.total) {
        for (size_t j = 0; j < n; j++) {
            q->scratch[t[j]] |= (uint64_t)1 << j;
            q->rscratch[t[j]] |= (uint64_t)1 << (n - 1 - j);
        }
        windows(q->scratch, q->rscratch, n, q->query, m, &best);
        for (size_t j = 0; j < n; j++)
            q->scratch[t[j]] = q->rscratch[t[j]] = 0;
    }
    return best.lcs2 == 0 ? 0.0 : wb_fz_ratio_of(best.total - best.lcs2, best.total);
}

uint64_t wb_fz_quick_wratio_apart(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                                  double *score, bool *passed) {
    size_t m = q->m;
    double scale, best = partial(q, t, n);
    wb_fz_wratio_near(m, n, &scale);
    /* fuzzy.c's parts, weighted as it weighs them: the ratio, the partial
     * ratio, the partial token ratio (the partial ratio again) */
    double base = wb_fz_ratio_of(m + n - 2 * lcs, m + n) * 1.0 * 1.0;
    if (best * scale * 1.0 > base) base = best * scale * 1.0;
    if (best * 0.95 * scale > base) base = best * 0.95 * scale;
    *score = wb_fz_similarity_score(q->o.kind, base, 100.0);
    *passed = wb_fz_passes(&q->o, *score);
    return partial_units(m, n);
}

/* Jaro's matches and transpositions (before halving) with both sides of
 * at most 64 bytes (kernels.h's conventions): the shorter side p is
 * walked, each of its symbols taking the lowest unmatched position of its
 * symbol in t within the window. */
static size_t jaro(wb_fz_quick *q, const uint8_t *t, size_t n, size_t *transpositions) {
    size_t m = q->m;
    *transpositions = 0;
    if (n == 0) return 0;
    const uint8_t *p = q->query, *other = t;
    size_t lp = m, lt = n;
    const uint64_t *masks = q->peq;
    if (m <= n) {
        /* the query is walked: the candidate's masks, made here */
        for (size_t j = 0; j < n; j++)
            q->scratch[t[j]] |= (uint64_t)1 << j;
        masks = q->scratch;
    } else {
        p = t;
        other = q->query;
        lp = n;
        lt = m;
    }
    size_t bound = lt / 2 > 0 ? lt / 2 - 1 : 0;
    uint64_t taken = 0, walked = 0;
    for (size_t i = 0; i < lp; i++) {
        size_t lo = i > bound ? i - bound : 0, hi = i + bound + 1 < lt ? i + bound + 1 : lt;
        uint64_t window = (hi - lo == 64 ? ~(uint64_t)0 : (((uint64_t)1 << (hi - lo)) - 1)) << lo;
        uint64_t open = masks[p[i]] & window & ~taken;
        if (open) {
            taken |= open & (~open + 1);
            walked |= (uint64_t)1 << i;
        }
    }
    if (m <= n)
        for (size_t j = 0; j < n; j++)
            q->scratch[t[j]] = 0;
    size_t matches = (size_t)wb_fz_popcount(walked);
    if (matches == 0) return 0;
    size_t out_of_order = 0;
    while (walked) {
        size_t i = (size_t)__builtin_ctzll(walked), j = (size_t)__builtin_ctzll(taken);
        out_of_order += p[i] != other[j];
        walked &= walked - 1;
        taken &= taken - 1;
    }
    *transpositions = out_of_order;
    return matches;
}

/* Damerau-Levenshtein of the query (rows, m <= 64) and t (columns, n <=
 * WB_FZ_QUICK_MATRIX_MOST): Zhao and Sahni's rows as edits.c computes
 * them, on bytes, the rows and the last row of each byte on the stack
 * and in q (left zero). */
static size_t damerau(wb_fz_quick *q, const uint8_t *t, size_t n) {
    size_t m = q->m;
    if (n == 0) return m;
    size_t rows[2][WB_FZ_QUICK_MATRIX_MOST + 2], fr_cells[WB_FZ_QUICK_MATRIX_MOST + 2];
    size_t big = (m > n ? m : n) + 1;
    /* column -1 at index 0; row 0 in rows[0], row -1 in rows[1] */
    rows[0][0] = big;
    for (size_t j = 0; j <= n; j++)
        rows[0][j + 1] = j;
    for (size_t j = 0; j < n + 2; j++)
        rows[1][j] = fr_cells[j] = big;
    size_t *fr = fr_cells + 1;
    uint8_t *last = q->last_row;
    for (size_t i = 1; i <= m; i++) {
        size_t *cur = rows[i & 1] + 1, *prev = rows[(i & 1) ^ 1] + 1;
        uint8_t c = q->query[i - 1];
        size_t l = 0, tt = big, two_up = cur[0];
        cur[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t v = wb_fz_zhao_cell(i, j, prev[j], cur[j - 1], prev[j - 1], c == t[j - 1],
                                       last[t[j - 1]], two_up, (prev - 1)[j - 1], &l, &tt, &fr[j]);
            two_up = cur[j];
            cur[j] = v;
        }
        last[c] = (uint8_t)i;
    }
    for (size_t i = 0; i < m; i++)
        last[q->query[i]] = 0;
    return rows[m & 1][n + 1];
}

/* The Damerau-Levenshtein distance's lower bound (wb_fz_quick_damerau) */
static size_t damerau_floor(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs) {
    size_t extra = 0; /* t's bytes beyond the query's counts */
    for (size_t j = 0; j < n; j++)
        extra += q->counts[t[j]]-- <= 0;
    for (size_t j = 0; j < n; j++)
        q->counts[t[j]]++;
    size_t missing = q->m - (n - extra); /* the query's bytes t lacks */
    size_t floor = (q->m + n - 2 * lcs + 1) / 2;
    if (extra > floor) floor = extra;
    return missing > floor ? missing : floor;
}

uint64_t wb_fz_quick_damerau(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                             const wb_fz_bar *bar, double *score, bool *passed,
                             wb_fz_bar *badness) {
    const wb_fz_options *o = &q->o;
    size_t m = q->m, maximum = m > n ? m : n, k = wb_fz_kernel_cutoff(o, maximum);
    size_t floor = damerau_floor(q, t, n, lcs);
    badness->num = badness->den = 0;
    if (k != WB_FZ_NO_CUTOFF && floor > k) {
        *passed = false;
        *score = wb_fz_edit_score(o->kind, k + 1, maximum);
        return 1 + n;
    }
    /* no better than the bar: the worst kept, of an earlier candidate,
     * wins the tie */
    bool normalized =
        o->kind == WB_FZ_NORMALIZED_DISTANCE || o->kind == WB_FZ_NORMALIZED_SIMILARITY;
    if (normalized && bar && bar->den != 0 && floor * bar->den >= bar->num * maximum) {
        *passed = false;
        return 1 + n;
    }
    wb_fz_verdict(o, m, n, damerau(q, t, n), bar, score, passed, badness);
    /* about a unit (2 ns) a cell or two */
    return 1 + n + m * n / 2;
}

double *wb_fz_jaro_tops(const wb_fz_options *o, size_t m) {
    double *top = malloc(WB_FZ_JARO_TOPS * sizeof(double));
    if (!top) return NULL;
    uint32_t prefix[4] = {0, 0, 0, 0};
    for (size_t n = 0; n <= 64; n++) {
        size_t lp = m < n ? m : n, lt = m < n ? n : m;
        for (size_t matches = 0; matches <= 64; matches++) {
            double sim = n == 0 || matches == 0 || matches > lp
                             ? 0.0
                             : ((double)matches / lp + (double)matches / lt + 1.0) / 3.0;
            if (o->scorer == WB_FZ_JARO_WINKLER) {
                size_t most = lp < 4 ? lp : 4;
                sim = wb_fz_winkler(sim, prefix, most, prefix, most, o->prefix_weight);
            }
            /* a hair beyond: the score's own rounding cannot pass it */
            double score = wb_fz_similarity_score(o->kind, sim, 1.0);
            top[n * 65 + matches] = score + (wb_fz_kind_is_distance(o->kind) ? -1e-9 : 1e-9);
        }
    }
    return top;
}

void wb_fz_jaro_verdict(const wb_fz_options *o, const uint8_t *query, size_t m, const uint8_t *t,
                        size_t n, size_t matches, size_t transpositions, double *score,
                        bool *passed) {
    size_t lp = m < n ? m : n, lt = m < n ? n : m, half = transpositions / 2;
    double sim =
        n == 0 || matches == 0
            ? 0.0
            : ((double)matches / lp + (double)matches / lt + (double)(matches - half) / matches) /
                  3.0;
    if (o->scorer == WB_FZ_JARO_WINKLER) {
        uint32_t a[4], b[4];
        size_t most = lp < 4 ? lp : 4;
        for (size_t i = 0; i < most; i++) {
            a[i] = query[i];
            b[i] = t[i];
        }
        sim = wb_fz_winkler(sim, a, most, b, most, o->prefix_weight);
    }
    *score = wb_fz_similarity_score(o->kind, sim, 1.0);
    *passed = wb_fz_passes(o, *score);
}

void wb_fz_verdict(const wb_fz_options *o, size_t m, size_t n, size_t d, const wb_fz_bar *bar,
                   double *score, bool *passed, wb_fz_bar *badness) {
    badness->num = badness->den = 0;
    if (o->scorer == WB_FZ_RATIO || o->scorer == WB_FZ_QRATIO) {
        bool empty = o->scorer == WB_FZ_QRATIO && n == 0;
        size_t total = empty ? 1 : m + n;
        if (empty) d = 1;
        /* every kind of a ratio is monotone in d / total, and so is its
         * rounding: a candidate past the bar cannot rank before it */
        *badness = (wb_fz_bar){d, total};
        if (wb_fz_below_bar(bar, d, total)) {
            *passed = false;
            return;
        }
        double r = empty ? 0.0 : wb_fz_ratio_of(d, total);
        *score = wb_fz_similarity_score(o->kind, r, 100.0);
        *passed = wb_fz_passes(o, *score);
        return;
    }
    size_t maximum = wb_fz_edit_maximum(o, m, n), k = wb_fz_kernel_cutoff(o, maximum);
    /* beyond the kernel's bound, the bound + 1, as the kernels report it */
    if (k != WB_FZ_NO_CUTOFF && d > k) d = k + 1;
    if (o->kind == WB_FZ_NORMALIZED_DISTANCE || o->kind == WB_FZ_NORMALIZED_SIMILARITY) {
        /* monotone in d / maximum (0 / 0 the best) */
        *badness = (wb_fz_bar){d, maximum > 0 ? maximum : 1};
        if (wb_fz_below_bar(bar, badness->num, badness->den)) {
            *passed = false;
            return;
        }
    }
    *score = wb_fz_edit_score(o->kind, d, maximum);
    *passed = wb_fz_passes(o, *score) && (k == WB_FZ_NO_CUTOFF || d <= k);
}

uint64_t wb_fz_quick_score(wb_fz_quick *q, const uint8_t *t, size_t n, const wb_fz_bar *bar,
                           double *score, bool *passed, wb_fz_bar *badness) {
    const wb_fz_options *o = &q->o;
    size_t m = q->m;
    badness->num = badness->den = 0;
    switch (o->scorer) {
    case WB_FZ_RATIO:
    case WB_FZ_QRATIO:
        wb_fz_verdict(o, m, n, m + n - 2 * lcs(q, t, n), bar, score, passed, badness);
        return 1 + n;
    case WB_FZ_JARO:
    case WB_FZ_JARO_WINKLER: {
        size_t transpositions, matches = jaro(q, t, n, &transpositions);
        wb_fz_jaro_verdict(o, q->query, m, t, n, matches, transpositions, score, passed);
        return 1 + m + n;
    }
    default:
        break;
    }
    if (o->scorer == WB_FZ_DAMERAU_LEVENSHTEIN)
        return n + wb_fz_quick_damerau(q, t, n, lcs(q, t, n), bar, score, passed, badness);
    if (o->scorer == WB_FZ_PARTIAL_RATIO) {
        /* as fuzzy.c weighs its one part: by 1.0, twice */
        *score = wb_fz_similarity_score(o->kind, partial(q, t, n) * 1.0 * 1.0, 100.0);
        *passed = wb_fz_passes(o, *score);
        return partial_units(m, n);
    }
    size_t maximum = wb_fz_edit_maximum(o, m, n), k = wb_fz_kernel_cutoff(o, maximum);
    size_t gap = m > n ? m - n : n - m, d;
    if (k != WB_FZ_NO_CUTOFF && gap > k) {
        /* every distance here is at least the lengths' difference */
        *passed = false;
        *score = wb_fz_edit_score(o->kind, k + 1, maximum);
        return 1;
    }
    switch (o->scorer) {
    case WB_FZ_LEVENSHTEIN:
        d = hyyro(q, t, n, false);
        break;
    case WB_FZ_OSA:
        d = hyyro(q, t, n, true);
        break;
    case WB_FZ_INDEL:
        d = m + n - 2 * lcs(q, t, n);
        break;
    default:
        d = hamming(q, t, n);
    }
    wb_fz_verdict(o, m, n, d, bar, score, passed, badness);
    return 1 + n;
}

wb_fz_bound_kind wb_fz_partial_bound(const wb_fz_options *o, size_t m, size_t n, size_t lcs,
                                     double *score, bool *passes) {
    size_t shorter = m < n ? m : n;
    double bound = wb_fz_ratio_of(shorter - lcs, shorter + lcs), scale;
    if (o->scorer == WB_FZ_WRATIO) {
        if (wb_fz_wratio_near(m, n, &scale)) return WB_FZ_BOUND_RATIO;
        bound = bound * scale;
        double ratio = wb_fz_ratio_of(m + n - 2 * lcs, m + n);
        if (ratio > bound) bound = ratio;
    }
    *score = wb_fz_similarity_score(o->kind, bound, 100.0);
    *passes = wb_fz_passes(o, *score);
    return WB_FZ_BOUND_AT_MOST;
}

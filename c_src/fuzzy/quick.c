/* Quick scores (fuzzy.h): a query of 1..64 bytes against short candidates,
 * each score in one go with no state and nothing allocated, the query's
 * match masks made once. Levenshtein (Myers 1999 in Hyyro's form), OSA
 * (Hyyro 2003), Indel, LCSseq and the ratios (Allison-Dix / Hyyro 2004)
 * take one word step per candidate byte; Jaro matches a symbol per step,
 * its window a mask; Hamming, Prefix and Postfix compare bytes.
 * One file: wb_fz_quick_score runs per candidate and calls the kernels,
 * the partial windows, Damerau and the verdicts here, which the compiler
 * can inline only within this translation unit. */
#include "fuzzy.h"
#include "scores.h"

#include "../metric/jaro_word.h"
#include "../metric/levenshtein_word.h"
#include "../metric/osa_word.h"

#include <stdlib.h>
#include <string.h>

/* Damerau-Levenshtein's table: m + 1 rows of the longest candidate's
 * cells */
static size_t cells_bytes(size_t m) {
    return (m + 1) * (WB_FZ_QUICK_MATRIX_MOST + 1) * sizeof(uint16_t);
}

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
    case WB_FZ_LCS_SEQ:
    case WB_FZ_PREFIX:
    case WB_FZ_POSTFIX:
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
#if WB_FZ_QUICK_POPCNT
    __builtin_cpu_init();
    q->popcnt = __builtin_cpu_supports("popcnt");
#endif
    for (size_t i = 0; i < m; i++) {
        q->peq[query[i]] |= (uint64_t)1 << i;
        q->rpeq[query[i]] |= (uint64_t)1 << (m - 1 - i);
    }
    if (o->scorer == WB_FZ_DAMERAU_LEVENSHTEIN) {
        q->cells = malloc(cells_bytes(m));
        if (!q->cells) return false;
    }
    return true;
}

size_t wb_fz_quick_memory(const wb_fz_quick *q) {
    return q->cells ? cells_bytes(q->m) : 0;
}

void wb_fz_quick_free(wb_fz_quick *q) {
    free(q->cells);
    q->cells = NULL;
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
 * the query's column of 1..64 rows, one word step (levenshtein_word.h,
 * osa_word.h) per candidate byte. Inlined with a constant flag. */
static inline size_t hyyro(const wb_fz_quick *q, const uint8_t *t, size_t n, bool transpositions) {
    uint64_t vp = ~(uint64_t)0, vn = 0, d0 = 0, pm_old = 0, last = (uint64_t)1 << (q->m - 1);
    size_t score = q->m;
    if (transpositions)
        for (size_t j = 0; j < n; j++)
            score += (size_t)wb_osa_word_column(q->peq[t[j]], &vp, &vn, &d0, &pm_old, last);
    else
        for (size_t j = 0; j < n; j++)
            score += (size_t)wb_lev_word_column(q->peq[t[j]], &vp, &vn, last);
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

/* The common prefix (suffix) of the query and t: Prefix's (Postfix's)
 * similarity. */
static size_t affix(const wb_fz_quick *q, const uint8_t *t, size_t n, bool suffix) {
    size_t common = q->m < n ? q->m : n, i = 0;
    if (suffix)
        while (i < common && q->query[q->m - 1 - i] == t[n - 1 - i])
            i++;
    else
        while (i < common && q->query[i] == t[i])
            i++;
    return i;
}

/* The partial ratio: the best window of a needle (the shorter side, nl
 * of 1..64 bytes) in a haystack (nl <= hl <= WB_FZ_QUICK_MATRIX_MOST):
 * prefixes of the haystack of 1 .. nl - 1 bytes, suffixes the same, and
 * the whole windows. Two passes give the needle's LCS with every prefix
 * and every suffix of the haystack: exact for the short ones, and a
 * whole window's LCS is at most both of those that hold it, so a window
 * whose bound cannot beat the best found, or the bar, is not computed.
 * The best as one integer (window_of), the larger the better: the ratio
 * of the best (ratios are monotone in 2 LCS / (nl + window), and equal
 * quotients round equally) is the best of the ratios fuzzy.c takes. */
typedef uint64_t best_window;

/* What a window must beat besides the best found: a search's worst kept
 * (`worst`, of kind `kind`, NULL: none), the ratio scaled by `scale` */
typedef struct {
    const double *worst;
    wb_fz_kind kind;
    double scale;
} window_bar;

/* 2^32 / t rounded up, for totals t of 2 .. 128 */
#define RECIP(t)   (uint32_t)((((uint64_t)1 << 32) + (t)-1) / ((t) < 2 ? 1 : (t)))
#define RECIP4(t)  RECIP(t), RECIP(t + 1), RECIP(t + 2), RECIP(t + 3)
#define RECIP16(t) RECIP4(t), RECIP4(t + 4), RECIP4(t + 8), RECIP4(t + 12)
#define RECIP64(t) RECIP16(t), RECIP16(t + 16), RECIP16(t + 32), RECIP16(t + 48)
static const uint32_t recip[129] = {RECIP64(0), RECIP64(64), RECIP(128)};

/* A window of `total` (+ nl) holding `lcs` of the needle: 2 LCS / total
 * in 32-bit fixed point rounded up (distinct quotients of totals up to
 * 128 stay apart: they differ by at least 2^32 / 128^2, the rounding by
 * at most 128), then the total and the LCS; the larger is the better,
 * with no branch to keep the best. 0: none. */
static inline best_window window_of(size_t lcs, size_t total) {
    return ((uint64_t)(2 * lcs) * recip[total]) << 15 | (uint64_t)total << 7 | lcs;
}

static inline size_t window_lcs(best_window b) {
    return (size_t)(b & 127);
}

static inline size_t window_total(best_window b) {
    return (size_t)((b >> 7) & 255);
}

static inline bool beats(const best_window *b, size_t lcs, size_t total) {
    return window_of(lcs, total) > *b;
}

static inline void consider(best_window *b, size_t lcs, size_t total) {
    best_window w = window_of(lcs, total);
    *b = w > *b ? w : *b;
}

/* Whether the best is a window holding all of the needle (no better) */
static inline bool whole_match(best_window b) {
    return b != 0 && 2 * window_lcs(b) == window_total(b);
}

/* Whether a window of `total` (+ nl) holding `lcs` of the needle scores
 * better than the bar: what a ratio's score is made of, monotone in it */
static bool clears(const window_bar *bar, size_t lcs, size_t total) {
    if (!bar->worst) return true;
    double ratio = wb_fz_ratio_of(total - 2 * lcs, total) * bar->scale;
    return wb_fz_better(bar->kind, wb_fz_similarity_score(bar->kind, ratio, 100.0), *bar->worst);
}

/* The least LCS of a window of `total` (+ nl) that clears the bar, one
 * that `top` does: clears is monotone in the LCS, so a search's windows of
 * one length compare integers to it, not ratios */
static size_t least_clearing(const window_bar *bar, size_t top, size_t total) {
    size_t lo = 0, hi = top; /* clears(hi) */
    if (!bar->worst) return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (clears(bar, mid, total))
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

/* The edge windows of one side from the rows (or steps) where its LCS
 * grows (`zeros`, under the needle's nl - 1): the k-th is where the LCS
 * with the side's first (or last) bytes reaches k, its fewest bytes (the
 * same LCS over more bytes scores lower) */
static void edges_of(uint64_t zeros, size_t nl, best_window *b) {
    for (size_t k = 1; zeros; k++, zeros &= zeros - 1)
        consider(b, k, nl + (size_t)__builtin_ctzll(zeros) + 1);
}

/* The query's whole windows in t (n bytes), from the query's LCS with
 * t's first w bytes (before[w]) and last w (after[w]): a window's LCS is
 * at most both of those that hold it; the best of those bounds first
 * (most candidates end there), then each window whose bound beats the
 * best found and the bar, exactly. */
static uint64_t whole(const wb_fz_quick *q, const uint8_t *t, size_t n, const uint8_t *before,
                      const uint8_t *after, const window_bar *bar, best_window *best) {
    best_window b = *best; /* a local: no stores */
    size_t m = q->m, top = 0;
    uint64_t units = 0;
    for (size_t at = 0; at + m <= n; at++) {
        size_t most = before[at + m] < after[n - at] ? before[at + m] : after[n - at];
        top = most > top ? most : top;
    }
    if (!beats(&b, top, 2 * m) || !clears(bar, top, 2 * m)) return units;
    size_t need = least_clearing(bar, top, 2 * m);
    for (size_t at = 0; at + m <= n && !whole_match(b); at++) {
        size_t most = before[at + m] < after[n - at] ? before[at + m] : after[n - at];
        /* fuzzy.c passes over a window whose last byte is not in the
         * query: the one to the left, or a shorter prefix, has its LCS
         * over fewer bytes or as many */
        if (!q->peq[t[at + m - 1]] || most < need || !beats(&b, most, 2 * m)) continue;
        uint64_t s = ~(uint64_t)0;
        for (size_t j = at; j < at + m; j++)
            s = wb_fz_lcs_word(s, q->peq[t[j]]);
        consider(&b, wb_fz_lcs_of(s, m), 2 * m);
        units += m;
    }
    *best = b;
    return units;
}

/* The query's windows in t (m <= n <= WB_FZ_QUICK_MATRIX_MOST), their
 * LCS `lcs`: a pass over t each way with the query's masks (the LCS with
 * each prefix and each suffix of t, no branch: the LCS grows by one at
 * most a step), the edges from their first m - 1 steps, the rest only
 * when a whole window holding the pair's LCS could beat the best found
 * and the bar */
static uint64_t query_in(const wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                         const window_bar *bar, best_window *best) {
    uint8_t before[WB_FZ_QUICK_MATRIX_MOST + 1], after[WB_FZ_QUICK_MATRIX_MOST + 1];
    uint64_t v = ~(uint64_t)0, r = ~(uint64_t)0, grew = 0, rgrew = 0;
    size_t m = q->m, ahead = 0, behind = 0, w = 1;
    before[0] = after[0] = 0;
    for (; w < m; w++) {
        size_t was = ahead, rwas = behind;
        v = wb_fz_lcs_word_counted(v, q->peq[t[w - 1]], &ahead);
        r = wb_fz_lcs_word_counted(r, q->rpeq[t[n - w]], &behind);
        before[w] = (uint8_t)ahead;
        after[w] = (uint8_t)behind;
        grew |= (uint64_t)(ahead - was) << (w - 1);
        rgrew |= (uint64_t)(behind - rwas) << (w - 1);
    }
    edges_of(grew, m, best);
    edges_of(rgrew, m, best);
    if (!beats(best, lcs, 2 * m) || !clears(bar, lcs, 2 * m)) return 2 * (m - 1);
    for (; w <= n; w++) {
        v = wb_fz_lcs_word_counted(v, q->peq[t[w - 1]], &ahead);
        r = wb_fz_lcs_word_counted(r, q->rpeq[t[n - w]], &behind);
        before[w] = (uint8_t)ahead;
        after[w] = (uint8_t)behind;
    }
    return 2 * n + whole(q, t, n, before, after, bar, best);
}

/* t's windows in the query (n <= m): t over the query's masks each way;
 * the zeros of the LCS vector in its first w rows are t's LCS with the
 * query's first w bytes (with the reversed masks, its last w); a whole
 * window's bound from the zeros at its two ends, moved a row a window */
static uint64_t in_query(const wb_fz_quick *q, const uint8_t *t, size_t n, const window_bar *bar,
                         best_window *best) {
    size_t m = q->m;
    uint64_t v = ~(uint64_t)0, r = ~(uint64_t)0, low = wb_fz_low_bits(n - 1),
             cut = wb_fz_low_bits(n);
    for (size_t j = 0; j < n; j++) {
        v = wb_fz_lcs_word(v, q->peq[t[j]]);
        r = wb_fz_lcs_word(r, q->rpeq[t[n - 1 - j]]);
    }
    uint64_t zf = ~v, zr = ~r, rows = wb_fz_low_bits(m);
    edges_of(zf & low, n, best);
    edges_of(zr & low, n, best);
    /* the window at `at`: the LCS with the query's first at + n bytes and
     * with its last m - at */
    best_window b = *best;
    size_t ahead = wb_fz_popcount(zf & cut), behind = wb_fz_popcount(zr & rows), top = 0;
    for (size_t at = 0, fa = ahead, be = behind; at + n <= m; at++) {
        size_t most = fa < be ? fa : be;
        top = most > top ? most : top;
        fa += at + n < m ? (zf >> (at + n)) & 1 : 0;
        be -= (zr >> (m - 1 - at)) & 1;
    }
    uint64_t units = 2 * n + (m - n + 1);
    if (!beats(&b, top, 2 * n) || !clears(bar, top, 2 * n)) return units;
    size_t need = least_clearing(bar, top, 2 * n);
    for (size_t at = 0; at + n <= m && !whole_match(b); at++) {
        size_t most = ahead < behind ? ahead : behind;
        ahead += at + n < m ? (zf >> (at + n)) & 1 : 0;
        behind -= (zr >> (m - 1 - at)) & 1;
        if (most < need || !beats(&b, most, 2 * n)) continue;
        uint64_t s = ~(uint64_t)0;
        for (size_t j = 0; j < n; j++)
            s = wb_fz_lcs_word(s, (q->peq[t[j]] >> at) & cut);
        consider(&b, wb_fz_lcs_of(s, n), 2 * n);
        units += n;
    }
    *best = b;
    return units;
}

/* The partial ratio (0..100) of the query and t (n bytes, fitting): the
 * shorter side's windows in the longer, both ways when of one length.
 * Below the bar, a lower ratio may come back. Adds the word steps taken
 * to *units. */
static double partial(const wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                      const window_bar *bar, uint64_t *units) {
    size_t m = q->m;
    *units += 1;
    if (n == 0) return 0.0;
    best_window best = 0;
    if (m <= n) *units += query_in(q, t, n, lcs, bar, &best);
    if (n <= m && !whole_match(best)) *units += in_query(q, t, n, bar, &best);
    size_t common = window_lcs(best), total = window_total(best);
    return common == 0 ? 0.0 : wb_fz_ratio_of(total - 2 * common, total);
}

uint64_t wb_fz_quick_partial(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                             const double *worst, double *score, bool *passed) {
    uint64_t units = 0;
    window_bar bar = {worst, q->o.kind, 1.0};
    /* as fuzzy.c weighs its one part: by 1.0, twice */
    *score =
        wb_fz_similarity_score(q->o.kind, partial(q, t, n, lcs, &bar, &units) * 1.0 * 1.0, 100.0);
    *passed = wb_fz_passes(&q->o, *score);
    return units;
}

uint64_t wb_fz_quick_wratio_apart(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                                  const double *worst, double *score, bool *passed) {
    size_t m = q->m;
    uint64_t units = 0;
    double scale;
    wb_fz_wratio_near(m, n, &scale);
    /* the partial ratio scaled (the larger of its two weights) must beat
     * the worst kept */
    window_bar bar = {worst, q->o.kind, scale * 1.0};
    double best = partial(q, t, n, lcs, &bar, &units);
    /* fuzzy.c's parts, weighted as it weighs them: the ratio, the partial
     * ratio, the partial token ratio (the partial ratio again) */
    double base = wb_fz_ratio_of(m + n - 2 * lcs, m + n) * 1.0 * 1.0;
    if (best * scale * 1.0 > base) base = best * scale * 1.0;
    if (best * 0.95 * scale > base) base = best * 0.95 * scale;
    *score = wb_fz_similarity_score(q->o.kind, base, 100.0);
    *passed = wb_fz_passes(&q->o, *score);
    return units;
}

/* Jaro's matches and transpositions (before halving) with both sides of
 * at most 64 bytes (kernels.h's conventions): the shorter side is walked
 * by the word form (jaro_word.h), on the other side's masks. */
static size_t jaro(wb_fz_quick *q, const uint8_t *t, size_t n, size_t *transpositions) {
    size_t m = q->m;
    *transpositions = 0;
    if (n == 0) return 0;
    if (m > n) return wb_jaro_word_bytes(t, n, m, q->peq, transpositions);
    /* the query is walked: the candidate's masks, made here */
    for (size_t j = 0; j < n; j++)
        q->scratch[t[j]] |= (uint64_t)1 << j;
    size_t matches = wb_jaro_word_bytes(q->query, m, n, q->scratch, transpositions);
    for (size_t j = 0; j < n; j++)
        q->scratch[t[j]] = 0;
    return matches;
}

/* A cell's value that no path below the cut goes through (and any
 * value read outside the cells a row computed) */
#define DL_OFF 0x7FFF

/* What a path on from cell (i, j) costs at least, `left` = m - i and
 * `rest` = n - j symbols of each side to go: the longer less their LCS
 * (an edit, a swap of neighbours included, changes that by one at most:
 * see wb_fz_quick_damerau). That LCS: the zeros of the query's reversed
 * LCS vector over t's last `rest` bytes (`gone`, see damerau) among its
 * first `left` bits (`under`: wb_fz_low_bits(left)), counted by the CPU's
 * instruction where `counts` (a constant where inlined). */
static inline size_t path_on(uint64_t gone, uint64_t under, size_t left, size_t rest, bool counts) {
    uint64_t bits = gone & under;
    size_t shared = counts ? (size_t)__builtin_popcountll(bits) : wb_fz_popcount(bits);
    return (left > rest ? left : rest) - shared;
}

/* A cell's value with a swap into it (`value` without): from the row two
 * up or the column two back only (a swap from further up and further
 * back costs no less than the cell up and back plus one), each from a
 * cell its row computed; `l` the row's last column holding its byte c */
static inline size_t swapped(const uint16_t *h, size_t s, const uint16_t *lo, const uint16_t *hi,
                             const uint8_t *last, const uint8_t *t, size_t i, size_t j, uint8_t c,
                             int above, size_t *l, size_t value) {
    uint8_t b = t[j - 1];
    if (b == c) {
        *l = j;
    } else if (j >= 2 && t[j - 2] == c) {
        /* from (k - 1, j - 2), the rows between deleted */
        size_t k = last[b];
        if (k != 0 && j - 2 >= lo[k - 1] && j - 2 <= hi[k - 1]) {
            size_t swap = h[(k - 1) * s + j - 2] + (i - k);
            value = swap < value ? swap : value;
        }
    } else if (b == above && *l != 0 && *l - 1 >= lo[i - 2] && *l - 1 <= hi[i - 2]) {
        /* from (i - 2, l - 1), the columns between inserted */
        size_t swap = h[(i - 2) * s + *l - 1] + (j - *l);
        value = swap < value ? swap : value;
    }
    return value;
}

/* Damerau-Levenshtein of the query (rows, m <= 64) and t (columns, n <=
 * WB_FZ_QUICK_MATRIX_MOST) below `cut` (SIZE_MAX: none): the distance if
 * below it, else `cut`. Lowrance and Wagner's cells on bytes, in q's
 * table, a swap only from the row two up or the column two back (as Zhao
 * and Sahni: swapped).
 *
 * A cell whose value and path on (path_on) add up past the cut is set
 * off (DL_OFF): what goes through it costs the cut at least. Any other
 * cell of a path below the cut is computed exactly, from its neighbour
 * on that path; and each row computes only from the first to one past
 * the last cell the row above did not set off, then on to the right
 * while its cells are not set off, so such a cell must be in that span.
 * For a swap, from (k - 1, l - 1) to (i, j) (a[k] = b[j], a[i] = b[l],
 * each the last before the other), the path on from (k - 1, l - 1) to
 * (i - 1, j - 1) diagonally then straight costs no more at any cell x
 * than D(k - 1, l - 1) plus its steps, and path_on(x) at most path_on(i,
 * j) plus x's steps to (i, j) (the longer side grows by as many, the LCS
 * does not shrink); so value and path on at x add up to no more than
 * those of (i, j) plus one, which that cell's being below the cut keeps
 * at the cut at most. Cells are set off past the cut, not at it, for
 * that one. A cell's neighbour on the left is taken as computed, set off
 * or not (a value never below the distance's). The rows end when one
 * sets off every cell. The cells computed go to *cells. */
static inline __attribute__((always_inline)) size_t damerau_cells(wb_fz_quick *q, const uint8_t *t,
                                                                  size_t n, size_t cut,
                                                                  uint64_t *cells, bool counts) {
    size_t m = q->m, s = n + 1, rows = 0, d = cut;
    *cells = 0;
    if (n == 0) return m < cut ? m : cut;
    /* the zeros of the query's reversed LCS vector over t's last n - j
     * bytes: the LCS of each of the query's suffixes with them */
    uint64_t gone[WB_FZ_QUICK_MATRIX_MOST + 1];
    uint64_t v = ~(uint64_t)0;
    gone[n] = 0;
    for (size_t j = n; j-- > 0;) {
        v = wb_fz_lcs_word(v, q->rpeq[t[j]]);
        gone[j] = ~v;
    }
    /* each row's first and last cell not set off; `h` the rows' cells */
    uint16_t lo[65], hi[65], *h = q->cells;
    uint8_t *last = q->last_row;
    size_t lo_now = SIZE_MAX, hi_now = 0;
    /* row 0: a cell past the cut is set off */
    size_t first = n < cut ? n : cut;
    for (size_t j = 0; j <= first; j++) {
        size_t value = j + path_on(gone[j], wb_fz_low_bits(m), m, n - j, counts) > cut ? DL_OFF : j;
        h[j] = (uint16_t)value;
        if (value != DL_OFF) {
            lo_now = lo_now == SIZE_MAX ? j : lo_now;
            hi_now = j;
        }
    }
    *cells += first + 1;
    for (size_t i = 1; lo_now != SIZE_MAX; i++) {
        lo[i - 1] = (uint16_t)lo_now;
        hi[i - 1] = (uint16_t)hi_now;
        uint16_t *up = h + (i - 1) * s, *row = h + i * s;
        if (lo_now > 0) up[lo_now - 1] = DL_OFF;
        if (hi_now < n) up[hi_now + 1] = DL_OFF;
        if (i > m) {
            if (hi_now == n) d = up[n];
            break;
        }
        rows = i;
        uint8_t c = q->query[i - 1];
        size_t start = lo_now, end = hi_now < n ? hi_now + 1 : n, to_go = m - i;
        uint64_t under = wb_fz_low_bits(to_go);
        /* the last column before `start` holding c, where a swap from
         * the row two up may begin (from its cells not set off) */
        size_t l = 0, from = i >= 2 ? (size_t)lo[i - 2] + 1 : start;
        for (size_t j = start; j-- > from;)
            if (t[j - 1] == c) {
                l = j;
                break;
            }
        size_t left = DL_OFF, j = start;
        lo_now = SIZE_MAX;
        if (j == 0) {
            left = i + path_on(gone[0], under, to_go, n, counts) > cut ? DL_OFF : i;
            row[0] = (uint16_t)left;
            if (left != DL_OFF) lo_now = hi_now = 0;
            j = 1;
        }
        /* the query's byte a row up: a swap from the row two up */
        int above = i >= 2 ? q->query[i - 2] : -1;
        bool off = left == DL_OFF;
        /* under the row above's span, then on while the cells are not
         * set off (from the left, or a swap) */
        for (; j <= n && (j <= end || !off); j++) {
            size_t value = left + 1;
            if (j <= end) {
                size_t over = up[j] + 1, diag = up[j - 1] + (t[j - 1] != c);
                value = over < value ? over : value;
                value = diag < value ? diag : value;
            }
            value = swapped(h, s, lo, hi, last, t, i, j, c, above, &l, value);
            left = value;
            off = value + path_on(gone[j], under, to_go, n - j, counts) > cut;
            row[j] = (uint16_t)(off ? DL_OFF : value);
            hi_now = off ? hi_now : j;
            lo_now = lo_now == SIZE_MAX && !off ? j : lo_now;
        }
        *cells += j - start;
        last[c] = (uint8_t)i;
    }
    for (size_t i = 0; i < rows; i++)
        last[q->query[i]] = 0;
    return d < cut ? d : cut;
}

/* Damerau-Levenshtein's cells with the bits counted by the CPU (x86's
 * popcnt, where the CPU has it: wb_fz_quick_init) or by shifts and adds */
#if WB_FZ_QUICK_POPCNT
__attribute__((target("popcnt"))) static size_t
damerau_popcnt(wb_fz_quick *q, const uint8_t *t, size_t n, size_t cut, uint64_t *cells) {
    return damerau_cells(q, t, n, cut, cells, true);
}
#endif

static size_t damerau(wb_fz_quick *q, const uint8_t *t, size_t n, size_t cut, uint64_t *cells) {
#if WB_FZ_QUICK_POPCNT
    if (q->popcnt) return damerau_popcnt(q, t, n, cut, cells);
#endif
    return damerau_cells(q, t, n, cut, cells, false);
}

uint64_t wb_fz_quick_damerau(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                             const wb_fz_bar *bar, size_t cut, double *score, bool *passed,
                             wb_fz_bar *badness) {
    const wb_fz_options *o = &q->o;
    size_t m = q->m, maximum = m > n ? m : n, k = wb_fz_kernel_cutoff(o, maximum);
    size_t floor = maximum - lcs;
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
    /* the rows end where the distance is sure to be past the cutoff
     * (scored as the bound + 1, as any past it), or at `cut` (a distance
     * that cannot rank: no better a score from a row's least) */
    if (k != WB_FZ_NO_CUTOFF && k + 1 < cut) cut = k + 1;
    if (cut == SIZE_MAX) {
        /* nothing to end early or set off (cdist with no cutoff): Zhao
         * and Sahni's rows on the stack, its pair's units (damerau.c) */
        uint64_t units = 0;
        size_t d = wb_fz_damerau_bytes(q->query, m, t, n, WB_FZ_NO_CUTOFF, &units);
        wb_fz_verdict(o, m, n, d, bar, score, passed, badness);
        return 1 + n + units;
    }
    uint64_t cells;
    wb_fz_verdict(o, m, n, damerau(q, t, n, cut, &cells), bar, score, passed, badness);
    /* four units a cell (4-5 ns each): 1.1-1.4 ns a unit on 1,557 pairs
     * a search's limit left to it */
    return 1 + n + 4 * cells;
}

size_t wb_fz_quick_damerau_most(const wb_fz_quick *q, const uint8_t *t, size_t n) {
    return hyyro(q, t, n, true);
}

/* The similarity of a query of m bytes and a candidate of n from Jaro's
 * matches (kernels.h's formula; no matches when n is 0). */
static double jaro_of(size_t m, size_t n, size_t matches, size_t transpositions) {
    return wb_fz_jaro_of(m < n ? m : n, m < n ? n : m, matches, transpositions);
}

double wb_fz_jaro_top(const wb_fz_options *o, size_t m, size_t n, size_t matches,
                      size_t transpositions) {
    static const uint32_t same[4] = {0, 0, 0, 0};
    double sim = jaro_of(m, n, matches, transpositions);
    if (o->scorer == WB_FZ_JARO_WINKLER) {
        size_t lp = m < n ? m : n, most = lp < 4 ? lp : 4;
        sim = wb_fz_winkler(sim, same, most, same, most, o->prefix_weight);
    }
    /* a hair beyond: the score's own rounding cannot pass it */
    double score = wb_fz_similarity_score(o->kind, sim, 1.0);
    return score + (wb_fz_kind_is_distance(o->kind) ? -1e-9 : 1e-9);
}

double *wb_fz_jaro_tops(const wb_fz_options *o, size_t m) {
    double *top = malloc(WB_FZ_JARO_TOPS * sizeof(double));
    if (!top) return NULL;
    for (size_t n = 0; n <= 64; n++) {
        size_t lp = m < n ? m : n;
        /* no transpositions; more matches than the shorter side: none */
        for (size_t matches = 0; matches <= 64; matches++)
            top[n * 65 + matches] = wb_fz_jaro_top(o, m, n, matches > lp ? 0 : matches, 0);
    }
    return top;
}

void wb_fz_jaro_verdict(const wb_fz_options *o, const uint8_t *query, size_t m, const uint8_t *t,
                        size_t n, size_t matches, size_t transpositions, double *score,
                        bool *passed) {
    size_t lp = m < n ? m : n;
    double sim = jaro_of(m, n, matches, transpositions);
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
        return n +
               wb_fz_quick_damerau(q, t, n, lcs(q, t, n), bar, SIZE_MAX, score, passed, badness);
    if (o->scorer == WB_FZ_PARTIAL_RATIO)
        return n + wb_fz_quick_partial(q, t, n, lcs(q, t, n), NULL, score, passed);
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
    case WB_FZ_LCS_SEQ:
        d = maximum - lcs(q, t, n);
        break;
    case WB_FZ_PREFIX:
    case WB_FZ_POSTFIX:
        d = maximum - affix(q, t, n, o->scorer == WB_FZ_POSTFIX);
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

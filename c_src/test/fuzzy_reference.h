/*
 * Plain references for the fuzzy scorers (c_src/fuzzy/fuzzy.h), the
 * project's one: shared by the C tests (test_fuzzy.c, test_search.c,
 * test_extract.c), the fuzz targets and, as a program
 * (fuzzy_reference_main.c), the Elixir tests: full-matrix dynamic
 * programs and the scorers' definitions (rapidfuzz's conventions),
 * written apart from the core, for inputs of a few hundred symbols at
 * most. Floats are computed in the reference's order, so that the core's
 * results must be bit-identical.
 */
#ifndef WB_TEST_FUZZY_REFERENCE_H
#define WB_TEST_FUZZY_REFERENCE_H

#include "../fuzzy/fuzzy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void *fzr_alloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) abort();
    return p;
}

static inline uint64_t fzr_min3(uint64_t x, uint64_t y, uint64_t z) {
    uint64_t v = x < y ? x : y;
    return v < z ? v : z;
}

/* ---- edit distances ------------------------------------------------------ */

/* x + y and x * y, or UINT64_MAX past it */
static inline uint64_t fzr_add(uint64_t x, uint64_t y) {
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static inline uint64_t fzr_mul(uint64_t x, uint64_t y) {
    return y != 0 && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

/* Wagner-Fischer with weights, the whole matrix; exact whenever the
 * distance fits 64 bits (a cell's sums and products saturate). */
static inline uint64_t fzr_levenshtein(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                       uint64_t ins, uint64_t del, uint64_t sub) {
    size_t w = n + 1;
    uint64_t *d = fzr_alloc((m + 1) * w, sizeof *d);
    for (size_t i = 0; i <= m; i++)
        d[i * w] = fzr_mul(i, del);
    for (size_t j = 0; j <= n; j++)
        d[j] = fzr_mul(j, ins);
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) {
            uint64_t cost = a[i - 1] == b[j - 1] ? 0 : sub;
            d[i * w + j] =
                fzr_min3(fzr_add(d[(i - 1) * w + j], del), fzr_add(d[i * w + j - 1], ins),
                         fzr_add(d[(i - 1) * w + j - 1], cost));
        }
    uint64_t r = d[m * w + n];
    free(d);
    return r;
}

static inline uint64_t fzr_levenshtein_maximum(size_t m, size_t n, uint64_t ins, uint64_t del,
                                               uint64_t sub) {
    uint64_t via_sub = m >= n ? n * sub + (m - n) * del : m * sub + (n - m) * ins;
    uint64_t all = m * del + n * ins;
    return all < via_sub ? all : via_sub;
}

static inline size_t fzr_lcs(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    size_t w = n + 1;
    size_t *d = fzr_alloc((m + 1) * w, sizeof *d);
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) {
            size_t up = d[(i - 1) * w + j], left = d[i * w + j - 1];
            d[i * w + j] =
                a[i - 1] == b[j - 1] ? d[(i - 1) * w + j - 1] + 1 : (up > left ? up : left);
        }
    size_t r = d[m * w + n];
    free(d);
    return r;
}

static inline size_t fzr_indel(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    return m + n - 2 * fzr_lcs(a, m, b, n);
}

/* Optimal string alignment (restricted Damerau-Levenshtein). */
static inline size_t fzr_osa(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    size_t w = n + 1;
    size_t *d = fzr_alloc((m + 1) * w, sizeof *d);
    for (size_t i = 0; i <= m; i++)
        d[i * w] = i;
    for (size_t j = 0; j <= n; j++)
        d[j] = j;
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t v = (size_t)fzr_min3(d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                        d[(i - 1) * w + j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[(i - 2) * w + j - 2] + 1 < v)
                v = d[(i - 2) * w + j - 2] + 1;
            d[i * w + j] = v;
        }
    size_t r = d[m * w + n];
    free(d);
    return r;
}

/* Unrestricted Damerau-Levenshtein (Lowrance-Wagner): the matrix has a
 * border row and column -1 holding `inf`; da, the last row of a holding
 * each symbol, is a plain list searched linearly. */
static inline size_t fzr_damerau(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    size_t w = n + 2, inf = m + n;
#define FZR_D(i, j) d[((i) + 1) * w + ((j) + 1)]
    size_t *d = fzr_alloc((m + 2) * w, sizeof *d);
    uint32_t *da_sym = fzr_alloc(m, sizeof *da_sym);
    size_t *da_row = fzr_alloc(m, sizeof *da_row), da_count = 0;
    for (long i = -1; i <= (long)m; i++)
        FZR_D(i, -1) = inf;
    for (long j = -1; j <= (long)n; j++)
        FZR_D(-1, j) = inf;
    for (size_t i = 0; i <= m; i++)
        FZR_D((long)i, 0) = i;
    for (size_t j = 0; j <= n; j++)
        FZR_D(0, (long)j) = j;
    for (long i = 1; i <= (long)m; i++) {
        long db = 0;
        for (long j = 1; j <= (long)n; j++) {
            long k = 0;
            for (size_t t = 0; t < da_count; t++)
                if (da_sym[t] == b[j - 1]) k = (long)da_row[t];
            long l = db;
            size_t cost = 1;
            if (a[i - 1] == b[j - 1]) {
                cost = 0;
                db = j;
            }
            size_t v = (size_t)fzr_min3(FZR_D(i - 1, j - 1) + cost, FZR_D(i, j - 1) + 1,
                                        FZR_D(i - 1, j) + 1);
            size_t swap = FZR_D(k - 1, l - 1) + (size_t)(i - k - 1) + 1 + (size_t)(j - l - 1);
            FZR_D(i, j) = v < swap ? v : swap;
        }
        size_t t = 0;
        while (t < da_count && da_sym[t] != a[i - 1])
            t++;
        if (t == da_count) da_count++;
        da_sym[t] = a[i - 1];
        da_row[t] = (size_t)i;
    }
    size_t r = FZR_D((long)m, (long)n);
#undef FZR_D
    free(d);
    free(da_sym);
    free(da_row);
    return r;
}

static inline size_t fzr_hamming(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    size_t common = m < n ? m : n, r = 0;
    for (size_t i = 0; i < common; i++)
        r += a[i] != b[i];
    return r + (m > n ? m - n : n - m);
}

/* LCSseq, Prefix and Postfix: similarities (the LCS, the common prefix,
 * the common suffix) made distances from max(m, n), as rapidfuzz does */
static inline size_t fzr_affix(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                               bool suffix) {
    size_t k = 0;
    while (k < m && k < n && (suffix ? a[m - 1 - k] == b[n - 1 - k] : a[k] == b[k]))
        k++;
    return k;
}

/* ---- Jaro, Jaro-Winkler ------------------------------------------------------ */

/* Jaro's matches, and in *transpositions the matched pairs out of order
 * (before halving): the shorter side p (a when equal) walked, each symbol
 * taking the first free equal symbol of t within max / 2 - 1. */
static inline size_t fzr_jaro_counts(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                     size_t *transpositions) {
    *transpositions = 0;
    if (m == 0 || n == 0) return 0;
    /* p the shorter (a when equal), t the other */
    const uint32_t *p = m <= n ? a : b, *t = m <= n ? b : a;
    size_t lp = m <= n ? m : n, lt = m <= n ? n : m;
    long bound = (long)(lt / 2) - 1;
    if (bound < 0) bound = 0;
    bool *p_used = fzr_alloc(lp, sizeof *p_used), *t_used = fzr_alloc(lt, sizeof *t_used);
    size_t matches = 0;
    for (long i = 0; i < (long)lp; i++) {
        long from = i - bound < 0 ? 0 : i - bound;
        long to = i + bound > (long)lt - 1 ? (long)lt - 1 : i + bound;
        for (long j = from; j <= to; j++)
            if (t[j] == p[i] && !t_used[j]) {
                p_used[i] = t_used[j] = true;
                matches++;
                break;
            }
    }
    /* the matched symbols of both, in their order, paired */
    size_t k = 0, j = 0;
    for (size_t i = 0; matches > 0 && i < lp; i++) {
        if (!p_used[i]) continue;
        while (!t_used[j])
            j++;
        k += p[i] != t[j];
        j++;
    }
    free(p_used);
    free(t_used);
    *transpositions = k;
    return matches;
}

static inline double fzr_jaro(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    if (m == 0 && n == 0) return 1.0;
    size_t lp = m <= n ? m : n, lt = m <= n ? n : m, k;
    size_t matches = fzr_jaro_counts(a, m, b, n, &k);
    if (matches == 0) return 0.0;
    double mf = (double)matches, tf = (double)(k / 2);
    return (mf / (double)lp + mf / (double)lt + (mf - tf) / mf) / 3.0;
}

static inline double fzr_jaro_winkler(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                      double prefix_weight) {
    double sim = fzr_jaro(a, m, b, n);
    size_t l = 0;
    while (l < 4 && l < m && l < n && a[l] == b[l])
        l++;
    return sim > 0.7 ? sim + (double)l * prefix_weight * (1.0 - sim) : sim;
}

/* ---- ratios ------------------------------------------------------------------ */

static inline double fzr_ratio(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    size_t total = m + n, indel = fzr_indel(a, m, b, n);
    return 100.0 * (1.0 - (total == 0 ? 0.0 : (double)indel / (double)total));
}

/* the shorter s against windows, prefixes and suffixes of the longer l */
static inline double fzr_partial_of(const uint32_t *s, size_t ls, const uint32_t *l, size_t ll) {
    double best = fzr_ratio(s, ls, l, ls);
    for (size_t i = 1; i <= ll - ls; i++) {
        double r = fzr_ratio(s, ls, l + i, ls);
        if (r > best) best = r;
    }
    for (size_t k = 1; k < ls; k++) {
        double r = fzr_ratio(s, ls, l, k);
        if (r > best) best = r;
        r = fzr_ratio(s, ls, l + ll - k, k);
        if (r > best) best = r;
    }
    return best;
}

static inline double fzr_partial_ratio(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    if (m == 0 && n == 0) return 100.0;
    if (m == 0 || n == 0) return 0.0;
    if (m > n) return fzr_partial_of(b, n, a, m);
    double score = fzr_partial_of(a, m, b, n);
    if (m == n) {
        double other = fzr_partial_of(b, n, a, m);
        if (other > score) score = other;
    }
    return score;
}

/* ---- tokens ------------------------------------------------------------------ */

typedef struct {
    const uint32_t *at;
    size_t len;
} fzr_token;

typedef struct {
    fzr_token *t;
    size_t count;
} fzr_tokens;

typedef struct {
    uint32_t *s;
    size_t len;
} fzr_seq;

static inline bool fzr_space(uint32_t c, bool codepoints) {
    static const uint32_t extra[] = {0x85,   0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
                                     0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
                                     0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
    if ((c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x1F) || c == 32) return true;
    if (codepoints)
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
            if (c == extra[i]) return true;
    return false;
}

static inline int fzr_compare(fzr_token x, fzr_token y) {
    for (size_t i = 0; i < x.len && i < y.len; i++)
        if (x.at[i] != y.at[i]) return x.at[i] < y.at[i] ? -1 : 1;
    return x.len == y.len ? 0 : x.len < y.len ? -1 : 1;
}

/* the tokens of s in input order */
static inline fzr_tokens fzr_split(const uint32_t *s, size_t n, bool codepoints) {
    fzr_tokens r = {fzr_alloc(n, sizeof(fzr_token)), 0};
    for (size_t i = 0; i < n; i++) {
        if (fzr_space(s[i], codepoints)) continue;
        if (i == 0 || fzr_space(s[i - 1], codepoints)) r.t[r.count++] = (fzr_token){s + i, 0};
        r.t[r.count - 1].len++;
    }
    return r;
}

/* insertion sort, and optionally without repeats */
static inline void fzr_sort(fzr_tokens *x, bool uniq) {
    for (size_t i = 1; i < x->count; i++)
        for (size_t j = i; j > 0 && fzr_compare(x->t[j - 1], x->t[j]) > 0; j--) {
            fzr_token s = x->t[j];
            x->t[j] = x->t[j - 1];
            x->t[j - 1] = s;
        }
    if (!uniq) return;
    size_t kept = 0;
    for (size_t i = 0; i < x->count; i++)
        if (kept == 0 || fzr_compare(x->t[kept - 1], x->t[i]) != 0) x->t[kept++] = x->t[i];
    x->count = kept;
}

static inline bool fzr_member(fzr_token t, const fzr_tokens *set) {
    for (size_t i = 0; i < set->count; i++)
        if (fzr_compare(t, set->t[i]) == 0) return true;
    return false;
}

/* the tokens of x in (keep) or not in (!keep) y */
static inline fzr_tokens fzr_filter(const fzr_tokens *x, const fzr_tokens *y, bool keep) {
    fzr_tokens r = {fzr_alloc(x->count, sizeof(fzr_token)), 0};
    for (size_t i = 0; i < x->count; i++)
        if (fzr_member(x->t[i], y) == keep) r.t[r.count++] = x->t[i];
    return r;
}

/* tokens joined by single spaces; after `head` and a space when head is
 * not empty and there are tokens */
static inline fzr_seq fzr_join_after(const fzr_seq *head, const fzr_tokens *x) {
    size_t len = head ? head->len : 0;
    for (size_t i = 0; i < x->count; i++)
        len += x->t[i].len + 1;
    fzr_seq r = {fzr_alloc(len, sizeof(uint32_t)), 0};
    if (head) {
        memcpy(r.s, head->s, head->len * sizeof(uint32_t));
        r.len = head->len;
    }
    for (size_t i = 0; i < x->count; i++) {
        if (r.len > 0) r.s[r.len++] = ' ';
        memcpy(r.s + r.len, x->t[i].at, x->t[i].len * sizeof(uint32_t));
        r.len += x->t[i].len;
    }
    return r;
}

static inline fzr_seq fzr_join(const fzr_tokens *x) {
    return fzr_join_after(NULL, x);
}

static inline fzr_seq fzr_sorted_join(const uint32_t *s, size_t n, bool cp) {
    fzr_tokens t = fzr_split(s, n, cp);
    fzr_sort(&t, false);
    fzr_seq r = fzr_join(&t);
    free(t.t);
    return r;
}

static inline double fzr_token_sort_ratio(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                          bool cp) {
    fzr_seq x = fzr_sorted_join(a, m, cp), y = fzr_sorted_join(b, n, cp);
    double r = fzr_ratio(x.s, x.len, y.s, y.len);
    free(x.s);
    free(y.s);
    return r;
}

static inline double fzr_partial_token_sort_ratio(const uint32_t *a, size_t m, const uint32_t *b,
                                                  size_t n, bool cp) {
    fzr_seq x = fzr_sorted_join(a, m, cp), y = fzr_sorted_join(b, n, cp);
    double r = fzr_partial_ratio(x.s, x.len, y.s, y.len);
    free(x.s);
    free(y.s);
    return r;
}

/* the token sets of a and b, their intersection and differences */
typedef struct {
    fzr_tokens ta, tb, sect, dab, dba;
} fzr_sets;

static inline fzr_sets fzr_make_sets(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                     bool cp) {
    fzr_sets s;
    s.ta = fzr_split(a, m, cp);
    s.tb = fzr_split(b, n, cp);
    fzr_sort(&s.ta, true);
    fzr_sort(&s.tb, true);
    s.sect = fzr_filter(&s.ta, &s.tb, true);
    s.dab = fzr_filter(&s.ta, &s.tb, false);
    s.dba = fzr_filter(&s.tb, &s.ta, false);
    return s;
}

static inline void fzr_free_sets(fzr_sets *s) {
    free(s->ta.t);
    free(s->tb.t);
    free(s->sect.t);
    free(s->dab.t);
    free(s->dba.t);
}

static inline double fzr_max(double x, double y) {
    return y > x ? y : x;
}

static inline double fzr_token_set_ratio(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                         bool cp) {
    fzr_sets s = fzr_make_sets(a, m, b, n, cp);
    double r;
    if (s.ta.count == 0 || s.tb.count == 0) {
        r = 0.0;
    } else if (s.sect.count > 0 && (s.dab.count == 0 || s.dba.count == 0)) {
        r = 100.0;
    } else {
        fzr_seq js = fzr_join(&s.sect);
        fzr_seq jab = fzr_join_after(&js, &s.dab), jba = fzr_join_after(&js, &s.dba);
        r = fzr_ratio(jab.s, jab.len, jba.s, jba.len);
        if (s.sect.count > 0) {
            r = fzr_max(r, fzr_ratio(js.s, js.len, jab.s, jab.len));
            r = fzr_max(r, fzr_ratio(js.s, js.len, jba.s, jba.len));
        }
        free(js.s);
        free(jab.s);
        free(jba.s);
    }
    fzr_free_sets(&s);
    return r;
}

static inline double fzr_token_ratio(const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                                     bool cp) {
    return fzr_max(fzr_token_sort_ratio(a, m, b, n, cp), fzr_token_set_ratio(a, m, b, n, cp));
}

static inline double fzr_partial_token_set_ratio(const uint32_t *a, size_t m, const uint32_t *b,
                                                 size_t n, bool cp) {
    fzr_sets s = fzr_make_sets(a, m, b, n, cp);
    double r;
    if (s.ta.count == 0 || s.tb.count == 0) {
        r = 0.0;
    } else if (s.sect.count > 0) {
        r = 100.0;
    } else {
        fzr_seq x = fzr_join(&s.dab), y = fzr_join(&s.dba);
        r = fzr_partial_ratio(x.s, x.len, y.s, y.len);
        free(x.s);
        free(y.s);
    }
    fzr_free_sets(&s);
    return r;
}

static inline double fzr_partial_token_ratio(const uint32_t *a, size_t m, const uint32_t *b,
                                             size_t n, bool cp) {
    fzr_sets s = fzr_make_sets(a, m, b, n, cp);
    double r;
    /* no test for a side without tokens (rapidfuzz's rule): the partial
     * ratio of two empty texts is 100, of an empty and a non-empty one 0 */
    if (s.sect.count > 0) {
        r = 100.0;
    } else {
        fzr_seq x = fzr_join(&s.dab), y = fzr_join(&s.dba);
        r = fzr_max(fzr_partial_token_sort_ratio(a, m, b, n, cp),
                    fzr_partial_ratio(x.s, x.len, y.s, y.len));
        free(x.s);
        free(y.s);
    }
    fzr_free_sets(&s);
    return r;
}

static inline double fzr_wratio(const uint32_t *a, size_t m, const uint32_t *b, size_t n, bool cp) {
    if (m == 0 || n == 0) return 0.0;
    double len_ratio = (double)(m > n ? m : n) / (double)(m < n ? m : n);
    double r = fzr_ratio(a, m, b, n);
    if (len_ratio < 1.5) return fzr_max(r, fzr_token_ratio(a, m, b, n, cp) * 0.95);
    double scale = len_ratio <= 8.0 ? 0.9 : 0.6;
    double r2 = fzr_max(r, fzr_partial_ratio(a, m, b, n) * scale);
    return fzr_max(r2, fzr_partial_token_ratio(a, m, b, n, cp) * 0.95 * scale);
}

static inline double fzr_qratio(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    if (m == 0 || n == 0) return 0.0;
    return fzr_ratio(a, m, b, n);
}

/* ---- scores of a kind --------------------------------------------------------- */

/* What a scorer computes, before the kind: a distance and its maximum
 * (edit distances) or a similarity (Jaro: 0 .. 1, the ratios: 0 .. 100). */
typedef struct {
    bool edit;
    uint64_t distance, maximum;
    double similarity, top;
} fzr_raw;

static inline bool fzr_is_edit(wb_fz_scorer scorer) {
    return scorer == WB_FZ_LEVENSHTEIN || scorer == WB_FZ_INDEL || scorer == WB_FZ_OSA ||
           scorer == WB_FZ_DAMERAU_LEVENSHTEIN || scorer == WB_FZ_HAMMING ||
           scorer == WB_FZ_LCS_SEQ || scorer == WB_FZ_PREFIX || scorer == WB_FZ_POSTFIX;
}

static inline uint64_t fzr_maximum(const wb_fz_options *o, size_t m, size_t n) {
    switch (o->scorer) {
    case WB_FZ_LEVENSHTEIN:
        return fzr_levenshtein_maximum(m, n, o->ins, o->del, o->sub);
    case WB_FZ_INDEL:
        return m + n;
    default:
        return m > n ? m : n;
    }
}

static inline fzr_raw fzr_compute(const wb_fz_options *o, const uint32_t *a, size_t m,
                                  const uint32_t *b, size_t n) {
    fzr_raw r = {.edit = fzr_is_edit(o->scorer), .top = 100.0};
    bool cp = o->codepoints;
    if (r.edit) r.maximum = fzr_maximum(o, m, n);
    switch (o->scorer) {
    case WB_FZ_LEVENSHTEIN:
        r.distance = fzr_levenshtein(a, m, b, n, o->ins, o->del, o->sub);
        break;
    case WB_FZ_INDEL:
        r.distance = fzr_indel(a, m, b, n);
        break;
    case WB_FZ_OSA:
        r.distance = fzr_osa(a, m, b, n);
        break;
    case WB_FZ_DAMERAU_LEVENSHTEIN:
        r.distance = fzr_damerau(a, m, b, n);
        break;
    case WB_FZ_HAMMING:
        r.distance = fzr_hamming(a, m, b, n);
        break;
    case WB_FZ_LCS_SEQ:
        r.distance = r.maximum - fzr_lcs(a, m, b, n);
        break;
    case WB_FZ_PREFIX:
    case WB_FZ_POSTFIX:
        r.distance = r.maximum - fzr_affix(a, m, b, n, o->scorer == WB_FZ_POSTFIX);
        break;
    case WB_FZ_JARO:
        r.similarity = fzr_jaro(a, m, b, n);
        r.top = 1.0;
        break;
    case WB_FZ_JARO_WINKLER:
        r.similarity = fzr_jaro_winkler(a, m, b, n, o->prefix_weight);
        r.top = 1.0;
        break;
    case WB_FZ_RATIO:
        r.similarity = fzr_ratio(a, m, b, n);
        break;
    case WB_FZ_PARTIAL_RATIO:
        r.similarity = fzr_partial_ratio(a, m, b, n);
        break;
    case WB_FZ_TOKEN_SORT_RATIO:
        r.similarity = fzr_token_sort_ratio(a, m, b, n, cp);
        break;
    case WB_FZ_TOKEN_SET_RATIO:
        r.similarity = fzr_token_set_ratio(a, m, b, n, cp);
        break;
    case WB_FZ_TOKEN_RATIO:
        r.similarity = fzr_token_ratio(a, m, b, n, cp);
        break;
    case WB_FZ_PARTIAL_TOKEN_SORT_RATIO:
        r.similarity = fzr_partial_token_sort_ratio(a, m, b, n, cp);
        break;
    case WB_FZ_PARTIAL_TOKEN_SET_RATIO:
        r.similarity = fzr_partial_token_set_ratio(a, m, b, n, cp);
        break;
    case WB_FZ_PARTIAL_TOKEN_RATIO:
        r.similarity = fzr_partial_token_ratio(a, m, b, n, cp);
        break;
    case WB_FZ_WRATIO:
        r.similarity = fzr_wratio(a, m, b, n, cp);
        break;
    default:
        r.similarity = fzr_qratio(a, m, b, n);
    }
    return r;
}

/* the score of the kind asked for */
static inline double fzr_kind_score(wb_fz_kind kind, const fzr_raw *r) {
    if (r->edit) {
        double nd = r->maximum == 0 ? 0.0 : (double)r->distance / (double)r->maximum;
        switch (kind) {
        case WB_FZ_DISTANCE:
            return (double)r->distance;
        case WB_FZ_SIMILARITY:
            return (double)(r->maximum - r->distance);
        case WB_FZ_NORMALIZED_DISTANCE:
            return nd;
        default:
            return 1.0 - nd;
        }
    }
    switch (kind) {
    case WB_FZ_DISTANCE:
        return r->top - r->similarity;
    case WB_FZ_SIMILARITY:
        return r->similarity;
    case WB_FZ_NORMALIZED_DISTANCE:
        return 1.0 - r->similarity / r->top;
    default:
        return r->similarity / r->top;
    }
}

static inline bool fzr_passes(const wb_fz_options *o, double score) {
    if (!o->has_cutoff) return true;
    if (o->kind == WB_FZ_DISTANCE || o->kind == WB_FZ_NORMALIZED_DISTANCE)
        return score <= o->cutoff;
    return score >= o->cutoff;
}

/* Whether the core's result (score, passed) agrees with the reference's
 * raw result: the same `passed`, and the same score, bit for bit, except
 * for an edit distance that fails its cutoff: the core may stop early, its
 * score then only has to fail the cutoff too. */
static inline bool fzr_agrees(const wb_fz_options *o, const fzr_raw *r, double score, bool passed) {
    double want = fzr_kind_score(o->kind, r);
    bool want_passed = fzr_passes(o, want);
    if (passed != want_passed) return false;
    if (r->edit && !want_passed) return !fzr_passes(o, score);
    return score == want;
}

/* Whether a score lies in its kind's range: normalized ones in 0 .. 1,
 * the others in 0 .. the maximum (edit distances), 1 (Jaro) or 100. */
static inline bool fzr_in_range(const wb_fz_options *o, size_t m, size_t n, double score) {
    double top;
    if (o->kind == WB_FZ_NORMALIZED_DISTANCE || o->kind == WB_FZ_NORMALIZED_SIMILARITY)
        top = 1.0;
    else if (fzr_is_edit(o->scorer))
        top = (double)fzr_maximum(o, m, n);
    else
        top = o->scorer == WB_FZ_JARO || o->scorer == WB_FZ_JARO_WINKLER ? 1.0 : 100.0;
    return score >= 0.0 && score <= top;
}

#endif

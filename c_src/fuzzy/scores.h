/* The kinds of score (fuzzy.h) from a distance or a similarity, the
 * cutoff's verdict, and the distance bound a kernel can stop at: shared
 * by the resumable scores (fuzzy.c) and the quick ones (quick.c). Private
 * to c_src/fuzzy. */
#ifndef WB_FUZZY_SCORES_H
#define WB_FUZZY_SCORES_H

#include "fuzzy.h"

static inline uint64_t wb_fz_sat_add(uint64_t x, uint64_t y) {
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static inline uint64_t wb_fz_sat_mul(uint64_t x, uint64_t y) {
    return y != 0 && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

/* ---- the kinds of score ------------------------------------------------ */

static inline bool wb_fz_is_edit(wb_fz_scorer scorer) {
    return scorer <= WB_FZ_HAMMING;
}

static inline size_t wb_fz_edit_maximum(const wb_fz_options *o, size_t m, size_t n) {
    switch (o->scorer) {
    case WB_FZ_INDEL:
        return m + n;
    case WB_FZ_LEVENSHTEIN: {
        if (o->ins == 1 && o->del == 1 && o->sub == 1) return m > n ? m : n;
        /* deleting a and inserting b, or substituting the shorter's
         * length and inserting or deleting the rest */
        uint64_t all = wb_fz_sat_add(wb_fz_sat_mul(m, o->del), wb_fz_sat_mul(n, o->ins));
        uint64_t subs = m >= n
                            ? wb_fz_sat_add(wb_fz_sat_mul(n, o->sub), wb_fz_sat_mul(m - n, o->del))
                            : wb_fz_sat_add(wb_fz_sat_mul(m, o->sub), wb_fz_sat_mul(n - m, o->ins));
        uint64_t most = all < subs ? all : subs;
        return most >= SIZE_MAX - 1 ? SIZE_MAX - 2 : (size_t)most;
    }
    default:
        return (m > n ? m : n);
    }
}

/* The score of the kind asked for, from a distance (edit) or a
 * similarity on a scale of `top` (1.0 or 100.0). */
static inline double wb_fz_edit_score(wb_fz_kind kind, size_t d, size_t maximum) {
    double nd = maximum == 0 ? 0.0 : (double)d / (double)maximum;
    switch (kind) {
    case WB_FZ_DISTANCE:
        return (double)d;
    case WB_FZ_SIMILARITY:
        return (double)(maximum - d);
    case WB_FZ_NORMALIZED_DISTANCE:
        return nd;
    default:
        return 1.0 - nd;
    }
}

static inline double wb_fz_similarity_score(wb_fz_kind kind, double s, double top) {
    switch (kind) {
    case WB_FZ_DISTANCE:
        return top - s;
    case WB_FZ_SIMILARITY:
        return s;
    case WB_FZ_NORMALIZED_DISTANCE:
        return top == 1.0 ? 1.0 - s : 1.0 - s / top;
    default:
        return top == 1.0 ? s : s / top;
    }
}

static inline bool wb_fz_passes(const wb_fz_options *o, double score) {
    if (!o->has_cutoff) return true;
    return wb_fz_kind_is_distance(o->kind) ? score <= o->cutoff : score >= o->cutoff;
}

/* A distance bound for the kernel: every distance that can pass the
 * cutoff is at most it (with a unit of room for rounding). */
static inline size_t wb_fz_kernel_cutoff(const wb_fz_options *o, size_t maximum) {
    if (!o->has_cutoff) return WB_FZ_NO_CUTOFF;
    double c = o->cutoff, bound;
    switch (o->kind) {
    case WB_FZ_DISTANCE:
        bound = c;
        break;
    case WB_FZ_SIMILARITY:
        bound = (double)maximum - c;
        break;
    case WB_FZ_NORMALIZED_DISTANCE:
        bound = c * (double)maximum;
        break;
    default:
        bound = (1.0 - c) * (double)maximum;
    }
    if (!(bound < (double)maximum)) return WB_FZ_NO_CUTOFF;
    /* below maximum, and not negative: the cast truncates (floor) */
    return bound < 0 ? 0 : (size_t)bound + 1;
}

/* WRatio's rule on the lengths (both non-zero): whether they are within
 * 1.5 of each other (the token scores then, scaled 0.95), else the scale
 * of the partial scores (*scale). */
static inline bool wb_fz_wratio_near(size_t m, size_t n, double *scale) {
    /* the lengths' ratio against 8 and 1.5, in integers: the same verdicts
     * as the rounded quotient's, which no ratio of lengths brings to
     * either; lengths of memory are far from overflowing 3 * shorter */
    size_t longer = m > n ? m : n, shorter = m < n ? m : n;
    *scale = longer / 8 < shorter ? 0.9 : 0.6; /* longer < 8 shorter */
    return 2 * longer < 3 * shorter;
}

/* 100 * the Indel similarity of a distance against `total` symbols */
static inline double wb_fz_ratio_of(size_t distance, size_t total) {
    return 100.0 * (1.0 - (total == 0 ? 0.0 : (double)distance / (double)total));
}

#endif

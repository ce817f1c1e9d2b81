/* The kinds of score (fuzzy.h) from a distance or a similarity, the
 * cutoff's verdict, and the distance bound a kernel can stop at: shared
 * by the resumable scores (fuzzy.c) and the quick ones (quick.c). Private
 * to c_src/fuzzy. */
#ifndef WB_FUZZY_SCORES_H
#define WB_FUZZY_SCORES_H

#include "fuzzy.h"

/* ---- the kinds of score ------------------------------------------------ */

static inline bool wb_fz_is_edit(wb_fz_scorer scorer) {
    return scorer <= WB_FZ_POSTFIX;
}

/* The largest distance the lengths allow, exactly. */
static inline wb_fz_wide wb_fz_edit_maximum_wide(const wb_fz_options *o, size_t m, size_t n) {
    switch (o->scorer) {
    case WB_FZ_INDEL:
        return (wb_fz_wide)m + n;
    case WB_FZ_LEVENSHTEIN: {
        if (o->ins == 1 && o->del == 1 && o->sub == 1) return m > n ? m : n;
        /* deleting a and inserting b, or substituting the shorter's
         * length and inserting or deleting the rest (lengths below 2^63
         * and weights below 2^64: no sum reaches 2^128) */
        wb_fz_wide all = (wb_fz_wide)m * o->del + (wb_fz_wide)n * o->ins;
        wb_fz_wide subs = m >= n ? (wb_fz_wide)n * o->sub + (wb_fz_wide)(m - n) * o->del
                                 : (wb_fz_wide)m * o->sub + (wb_fz_wide)(n - m) * o->ins;
        return all < subs ? all : subs;
    }
    default:
        return (m > n ? m : n);
    }
}

/* The same for the unit costs' kernels (the quick scores, the search
 * core's values), whose lengths keep it far below SIZE_MAX - 2. */
static inline size_t wb_fz_edit_maximum(const wb_fz_options *o, size_t m, size_t n) {
    wb_fz_wide most = wb_fz_edit_maximum_wide(o, m, n);
    return most >= (wb_fz_wide)SIZE_MAX - 1 ? SIZE_MAX - 2 : (size_t)most;
}

/* The integer kinds' cutoff as an integer: a distance passes when at
 * most it, a similarity when at least it (2^64: past every 64-bit
 * value). */
static inline wb_fz_wide wb_fz_integer_cutoff(const wb_fz_options *o) {
    if (o->exact_cutoff) return o->icutoff;
    double c = o->cutoff;
    if (!(c > 0)) return 0;
    if (c >= 0x1p64) return WB_FZ_U64_MOST + 1;
    uint64_t t = (uint64_t)c; /* the floor */
    if (o->kind == WB_FZ_SIMILARITY && (double)t < c) t++;
    return t;
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

/* Whether an integer kind's score v passes the cutoff (a negative or
 * NaN cutoff of a distance passes none, as a NaN one of a similarity). */
static inline bool wb_fz_integer_passes(const wb_fz_options *o, wb_fz_wide v) {
    if (!o->has_cutoff) return true;
    bool distance = o->kind == WB_FZ_DISTANCE;
    if (!o->exact_cutoff && !(distance ? o->cutoff >= 0 : o->cutoff == o->cutoff)) return false;
    wb_fz_wide c = wb_fz_integer_cutoff(o);
    return distance ? v <= c : v >= c;
}

/* A distance bound for the kernel: every distance that can pass the
 * cutoff is at most it (exact for the integer kinds, with room for
 * rounding for the normalized ones). */
static inline size_t wb_fz_kernel_cutoff_wide(const wb_fz_options *o, wb_fz_wide maximum) {
    if (!o->has_cutoff) return WB_FZ_NO_CUTOFF;
    wb_fz_wide bound;
    if (o->kind == WB_FZ_DISTANCE || o->kind == WB_FZ_SIMILARITY) {
        wb_fz_wide c = wb_fz_integer_cutoff(o);
        /* a unit of room, as the normalized kinds have */
        if (o->kind == WB_FZ_DISTANCE)
            bound = c + 1;
        else
            bound = c > maximum ? 1 : maximum - c + 1; /* none passes: stop at once */
    } else {
        double c = o->cutoff, most = (double)maximum;
        double b = o->kind == WB_FZ_NORMALIZED_DISTANCE ? c * most : (1.0 - c) * most;
        if (!(b >= 0)) b = 0;
        /* a unit and a relative hair of room: the product rounds */
        b += b * 0x1p-50 + 1.0;
        if (!(b < most) || !(b < 0x1p64)) return WB_FZ_NO_CUTOFF;
        bound = (uint64_t)b; /* the floor */
    }
    if (bound >= maximum || bound >= (wb_fz_wide)SIZE_MAX) return WB_FZ_NO_CUTOFF;
    return (size_t)bound;
}

static inline size_t wb_fz_kernel_cutoff(const wb_fz_options *o, size_t maximum) {
    return wb_fz_kernel_cutoff_wide(o, maximum);
}

/* WRatio's rule on the lengths (both non-zero): whether they are within
 * 1.5 of each other (the token scores then, scaled 0.95), else the scale
 * of the partial scores (*scale). */
static inline bool wb_fz_wratio_near(size_t m, size_t n, double *scale) {
    /* the lengths' ratio against 8 and 1.5, in integers: the same verdicts
     * as the rounded quotient's, which no ratio of lengths brings to
     * either; lengths of memory are far from overflowing 3 * shorter */
    size_t longer = m > n ? m : n, shorter = m < n ? m : n;
    *scale = (longer - 1) / 8 < shorter ? 0.9 : 0.6; /* longer <= 8 shorter */
    return 2 * longer < 3 * shorter;
}

/* 100 * the Indel similarity of a distance against `total` symbols */
static inline double wb_fz_ratio_of(size_t distance, size_t total) {
    return 100.0 * (1.0 - (total == 0 ? 0.0 : (double)distance / (double)total));
}

#endif

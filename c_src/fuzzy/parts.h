/*
 * A ratio scorer's parts, for the pair driver (fuzzy.c): each part is the
 * Indel ratio of two sequences, or their partial ratio (the best window
 * of the shorter in the longer).
 */
#ifndef WB_FUZZY_PARTS_H
#define WB_FUZZY_PARTS_H

#include "fuzzy.h"

/* The parts of a ratio scorer (the best of their similarities, each
 * weighted, is its score), its token work done; the scores known from
 * lengths alone go straight to s->base. */
void wb_fz_plan_ratio(wb_fz *s);

/* A part's weighted similarity, or one known without a part: the
 * scorer's score is the best of them. */
static inline void wb_fz_add_base(wb_fz *s, double value) {
    if (value > s->base) s->base = value;
}

/* Steps the current part (s->parts[s->part]); true when it is done (its
 * similarity in s->best), or failed (s->failed). */
bool wb_fz_step_part(wb_fz *s, uint64_t budget, uint64_t *used);
/* Frees a partial part's reversed needle, if any (any time). */
void wb_fz_end_reversed(wb_fz *s);
/* The windows of a needle of ls symbols in a haystack of ll >= ls, in one
 * direction (the prefixes, the whole windows, the suffixes). */
size_t wb_fz_windows_of(size_t ls, size_t ll);
/* The units a window may add when the alignment is asked for (a level of
 * rapidfuzz's halving found: one step a level, at most 64). */
#define WB_FZ_LEVEL_UNITS 8

#endif

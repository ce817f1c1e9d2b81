/* The token scorers' token work (tokens.c), a budget at a time, and the
 * budget meter the pair scorer (fuzzy.c) shares with it. Private to
 * c_src/fuzzy. */
#ifndef WB_FUZZY_TOKENS_H
#define WB_FUZZY_TOKENS_H

#include "fuzzy.h"

/* A step's budget and the units spent of it. An operation starts only
 * with room left, and takes at most that room and one unit more. */
typedef struct {
    uint64_t budget, spent;
} wb_fz_meter;

static inline uint64_t wb_fz_room(const wb_fz_meter *g) {
    return g->spent < g->budget ? g->budget - g->spent : 0;
}

/* How many of something an operation may take with r units of room, `per`
 * a unit. */
static inline size_t wb_fz_allowance(uint64_t r, size_t per) {
    return r >= SIZE_MAX / per ? SIZE_MAX : (size_t)r * per;
}

/* symbols copied or compared with memcmp a unit (about 2 ns, kernels.h) */
#define WB_FZ_COPY_SYMBOLS 32
/* symbols of two derived sequences compared a unit, to find a part like
 * an earlier one (fuzzy.c): read cold, 32 a unit took 9-10 ns */
#define WB_FZ_SAME_SYMBOLS 8
/* symbols of a ratio's sides compared a unit, finding their common
 * prefix and suffix (parts.c): 32 a unit took 14 ns on a million words */
#define WB_FZ_TRIM_SYMBOLS 8

/* Whether the scorer has token work for this pair (WRatio has none when a
 * side is empty: it is 0). */
bool wb_fz_needs_tokens(const wb_fz_options *o, size_t m, size_t n);
/* Starts the token work of s (s->tokenizing). */
void wb_fz_tokens_start(wb_fz *s);
/* Goes on with it within the meter's budget; true once done, or failed
 * (out of memory: s->failed). */
bool wb_fz_tokens_step(wb_fz *s, wb_fz_meter *g);
/* Ends it (done or not): its token blocks go back, the derived sequences
 * stay (s->derived, freed by wb_fz_free). */
void wb_fz_tokens_end(wb_fz *s);
/* The units of the token work at most, and of comparing parts. */
uint64_t wb_fz_tokens_units(const wb_fz_options *o, size_t m, size_t n);
/* A block from s->alloc (malloc), given back to s->release (free). */
void *wb_fz_take_block(const wb_fz *s, size_t bytes);
void wb_fz_give_back(const wb_fz *s, void *block, size_t bytes);

#endif

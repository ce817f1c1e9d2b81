/* Two binaries of a pair job decoded into symbols (bytes, or codepoints)
 * in steps, a budget at a time: the score job's (fuzzy_score_job.c) and
 * the edit script job's (fuzzy_editops_job.c). Header-only: both are
 * built into the NIF library and into the external server. */
#ifndef WB_PAIR_SYMBOLS_H
#define WB_PAIR_SYMBOLS_H

#include "jobs.h"

#include "../fuzzy/fuzzy.h"

typedef struct {
    const uint8_t *in_a, *in_b; /* this call's binaries (wb_pair_bind) */
    size_t len_a, len_b;
    uint32_t *a, *b; /* their symbols, blocks of `bytes` each */
    size_t bytes_a, bytes_b;
    wb_fz_decoding da, db;
    int invalid; /* the binary whose UTF-8 is invalid: 1 or 2 (0: none) */
} wb_pair_symbols;

/* a symbol block of len (its bytes in *bytes), at least one symbol */
static inline uint32_t *wb_pair_block(size_t len, size_t *bytes) {
    if (len > SIZE_MAX / sizeof(uint32_t) - 1) return NULL;
    *bytes = (len > 0 ? len : 1) * sizeof(uint32_t);
    return wb_block_alloc(*bytes);
}

/* Gives the symbol blocks back (off the scheduler when large). */
static inline void wb_pair_free(wb_pair_symbols *p) {
    wb_block_free(p->a, p->bytes_a);
    wb_block_free(p->b, p->bytes_b);
    p->a = p->b = NULL;
}

/* The blocks for binaries of `len_a` and `len_b` bytes; false when out of
 * memory (nothing held then). */
static inline bool wb_pair_alloc(wb_pair_symbols *p, size_t len_a, size_t len_b) {
    p->len_a = len_a;
    p->len_b = len_b;
    p->a = wb_pair_block(len_a, &p->bytes_a);
    p->b = p->a ? wb_pair_block(len_b, &p->bytes_b) : NULL;
    if (!p->b) wb_pair_free(p);
    return p->b != NULL;
}

/* This call's binaries (they may move between calls). */
static inline void wb_pair_bind(wb_pair_symbols *p, const ErlNifBinary *a, const ErlNifBinary *b) {
    p->in_a = a->data;
    p->in_b = b->data;
}

/* Decodes within `budget` units (counted in *used): true when both are
 * decoded or one is invalid UTF-8 (p->invalid), false for more steps. */
static inline bool wb_pair_decode_step(wb_pair_symbols *p, bool codepoints, uint64_t budget,
                                       uint64_t *used) {
    uint64_t start = *used;
    if (!wb_fz_symbols_step(&p->da, p->in_a, p->len_a, codepoints, p->a, budget, used))
        return false;
    if (p->da.invalid) {
        p->invalid = 1;
        return true;
    }
    uint64_t spent = *used - start;
    if (spent >= budget) return false;
    if (!wb_fz_symbols_step(&p->db, p->in_b, p->len_b, codepoints, p->b, budget - spent, used))
        return false;
    if (p->db.invalid) p->invalid = 2;
    return true;
}

#endif

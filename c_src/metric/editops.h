/*
 * Edit scripts: the operations that turn a source sequence of symbols
 * into a destination, as few as the metric allows (Levenshtein with unit
 * costs, Indel, optimal string alignment), found bit-parallel and traced
 * back. Pure C, no erl_nif; resumable a budget at a time, as the pair
 * kernels of kernels.h (the NIF glue: c_src/nif/fuzzy_editops_job.c).
 *
 * How: the common prefix and suffix are dropped; what is left is either
 * traced back on its matrix of vertical deltas (Hyyro's bit-parallel
 * column, 64 rows a word, the source the pattern, kept column by column:
 * VP and VN for Levenshtein, S for the LCS, VP, VN and the blocks' bottom
 * values for OSA), or split at the destination's middle column into two
 * halves whose scripts meet at the row where the forward and the
 * backward passes sum least (Hirschberg), each half then done the same
 * way, so that no matrix kept is larger than WB_EO_MATRIX_MOST bytes (but
 * for one column). Levenshtein and OSA compute only the band of cells a
 * script within the best bound known can reach (Ukkonen), the bound
 * lowered as the columns go.
 *
 * Which script among the equally short ones: rapidfuzz's (rapidfuzz-cpp's
 * levenshtein_editops and indel_editops): from the end, a deletion when
 * one is on a shortest path, else an insertion when the cell to the left
 * is lower than the one diagonally up-left, else the diagonal (a match,
 * or a substitution); the same rule for splitting (the destination cut
 * at its half, rounded down, the source at the first row of least sum)
 * and for when to split (rapidfuzz's bound on its matrix, 1 MiB of bits),
 * so the same script but where this core's own memory bound splits a
 * pair rapidfuzz does not (Indel pairs past WB_EO_MATRIX_MOST bytes of
 * matrix; Levenshtein pairs whose shorter side rapidfuzz never splits).
 * OSA (which rapidfuzz has no script for): a transposition first when
 * one is on a shortest path, then Levenshtein's rule.
 *
 * The script, in the order of the symbols: records of one byte of type
 * (wb_eo_op) and two positions (source, destination) of `width` bytes
 * each (4 when both lengths fit 32 bits, else 8), native byte order:
 *   insert (src, dest):    dest[dest] inserted before src[src]
 *   delete (src, dest):    src[src] deleted (dest: where it would be)
 *   replace (src, dest):   src[src] replaced by dest[dest]
 *   transpose (src, dest): src[src] and src[src + 1] swapped, giving
 *                          dest[dest] and dest[dest + 1]
 * Between two records the symbols not named are equal, in order.
 */
#ifndef WB_METRIC_EDITOPS_H
#define WB_METRIC_EDITOPS_H

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { WB_EO_LEVENSHTEIN, WB_EO_INDEL, WB_EO_OSA, WB_EO_METRICS } wb_eo_metric;

/* the record types (the Elixir side decodes the same numbers: a test
 * checks each) */
typedef enum {
    WB_EO_INSERT = 0,
    WB_EO_DELETE = 1,
    WB_EO_REPLACE = 2,
    WB_EO_TRANSPOSE = 3
} wb_eo_op;

/* The most bytes a kept matrix takes (a single column's may take more:
 * its vectors are the forward pass's own). */
#define WB_EO_MATRIX_MOST (8u << 20)
/* rapidfuzz's bound on a matrix it keeps, in bytes of its bits */
#define WB_EO_RAPIDFUZZ_MATRIX (1u << 20)

/* A step adds at most its budget and this many units to *used (a
 * phase's least work: a block a column, a pass's kept block, a row). */
#define WB_EO_STEP_OVER 4

/* A symbol-by-symbol comparison's symbols per unit (affixes), a scan's
 * rows per unit (a split's best row), records written per unit. */
#define WB_EO_COMPARE_PER_UNIT 8
#define WB_EO_SCAN_PER_UNIT    4
#define WB_EO_EMIT_PER_UNIT    4

/* A half of the work: source [a0, a1), destination [b0, b1), its
 * distance when known (k, else WB_EO_UNKNOWN), rapidfuzz's bound for it
 * (k_rf, which decides whether it is split), and where its records go. */
#define WB_EO_UNKNOWN SIZE_MAX
typedef struct {
    size_t a0, a1, b0, b1, k, k_rf, out;
} wb_eo_task;

/* A column pass of the bit-parallel kernels (editops_pass.c): rows of a
 * pattern, columns of a text read forwards or backwards, over a band
 * (Levenshtein, OSA) or whole (the LCS); its last column's vectors and
 * values, and optionally every column's (the kept matrix). */
typedef struct {
    wb_eo_metric metric;
    const wb_fz_pattern *pattern;
    const uint32_t *text; /* column c (from 0) reads text[c * dir] */
    ptrdiff_t dir;
    size_t m, n;   /* the problem's rows and columns */
    size_t cols;   /* the columns this pass computes (<= n) */
    size_t col;    /* the columns done */
    size_t blocks; /* of the pattern */
    uint64_t last; /* the bit of row m in the last block */
    bool banded;   /* Levenshtein, OSA */
    size_t k;      /* the band's bound: no path above it counts */
    size_t below, above;
    size_t first, end;                   /* the blocks of the column under way: [first, end) */
    size_t ready;                        /* the blocks with a state from the last column */
    size_t block;                        /* the next block of the column under way */
    bool open;                           /* a column under way */
    uint64_t hp, hn, d0_below, pm_below; /* the carries into that block (the LCS: hp) */
    /* a block each: the vectors (the LCS: S in vp), OSA's D0 and matches,
     * the value of the block's bottom row (the LCS: once done) */
    uint64_t *vp, *vn, *d0, *pm, *score;
    size_t finish, lcs; /* the LCS: blocks of score found after the last column,
                           and the rows matched above the next */
    bool done;
    /* the kept matrix (NULL: none): for column j (from 1) at (j - 1) *
     * stride words, `per` words a block from block kfirst[j - 1], kcount
     * blocks */
    uint64_t *keep;
    uint32_t *kfirst, *kcount;
    size_t per, width, stride;
    /* a snapshot of column `snap_at` (from 1; 0: none): its vectors and
     * values (OSA's splits look two columns apart) */
    size_t snap_at, snap_first, snap_end;
    bool snapped;
    uint64_t *svp, *svn, *sscore;
} wb_eo_pass;

/* An edit script under way. */
typedef struct {
    wb_eo_metric metric;
    const uint32_t *a, *b;
    size_t m, n;
    bool done, failed; /* failed: out of memory */
    bool broken;       /* a record fell outside the script (a defect: never) */
    /* the script: `distance` records of 1 + 2 width bytes (out NULL when
     * there are none), from malloc: the caller may take it (wb_eo_take) */
    uint8_t *out;
    size_t out_bytes, width, distance;
    bool out_ready;
    /* where blocks of WB_FZ_FREE_LATER_FROM bytes and up go when freed
     * (NULL: free), and the kept matrices' allocator (NULL: malloc and
     * free), set after wb_eo_start: a host's blocks, given back off its
     * schedulers */
    void (*free_later)(void *block, size_t bytes);
    void *(*alloc)(size_t bytes);
    void (*release)(void *block, size_t bytes);
    /* the bounds on a kept matrix (WB_EO_MATRIX_MOST and
     * WB_EO_RAPIDFUZZ_MATRIX from wb_eo_start; tests lower them to split
     * small pairs), and the splits made */
    size_t matrix_most, rf_matrix, splits;
    /* the halves left, the one under way and its phase */
    wb_eo_task stack[2 * 64 + 8];
    size_t depth;
    wb_eo_task t;
    int phase;
    size_t at; /* the phase's progress */
    size_t probe_k, kband, scan_i;
    uint64_t probe_units;
    /* the source reversed (backward passes), made when first needed */
    uint32_t *ra;
    size_t ra_done;
    /* the patterns of the half's source, forwards and reversed */
    wb_fz_pattern fwd, rev;
    bool fwd_live, rev_live;
    /* two passes: the probe or the kept matrix's, or a split's two */
    wb_eo_pass pass[2];
    uint64_t *vectors; /* the passes' blocks (one allocation) */
    size_t vectors_bytes;
    size_t keep_bytes; /* pass[0]'s kept matrix and its columns' bounds */
    void *keep_block;
    /* a split's best: the row, the distances each side, and whether it
     * is a transposition over the middle (OSA) */
    size_t best_row, best_left, best_right;
    bool best_swap;
    size_t best;
    /* the traceback: the cell, its value (OSA), the next record */
    size_t ti, tj, tval, tw;
} wb_eo;

/* Starts the script of a (m symbols, the source) into b (n, the
 * destination): records the pair, allocates nothing; every piece of work
 * is wb_eo_step's. a and b stay readable, unchanged, until wb_eo_free. */
void wb_eo_start(wb_eo *s, wb_eo_metric metric, const uint32_t *a, size_t m, const uint32_t *b,
                 size_t n);
/* About `budget` units (kernels.h), added to *used; true once done
 * (s->failed: out of memory on the way). */
bool wb_eo_step(wb_eo *s, uint64_t budget, uint64_t *used);
/* The script's block (NULL when empty), its bytes in *bytes: the caller's
 * to free from now on. */
uint8_t *wb_eo_take(wb_eo *s, size_t *bytes);
void wb_eo_free(wb_eo *s);
/* The units of a whole script, at most. */
uint64_t wb_eo_units(wb_eo_metric metric, size_t m, size_t n);

/* Record k of a script of `width`-byte positions. */
void wb_eo_record(const uint8_t *out, size_t width, size_t k, wb_eo_op *op, size_t *src,
                  size_t *dest);

/* ---- the passes (editops_pass.c) ---------------------------------------- */

/* Values above every distance: a row outside a pass's band. */
#define WB_EO_FAR (SIZE_MAX / 4)

/* Sets a pass up (nothing allocated: `vectors` holds 5 words a block of
 * the pattern, or 8 with a snapshot); k bounds the band (banded metrics;
 * at least |m - n|). */
void wb_eo_pass_init(wb_eo_pass *p, wb_eo_metric metric, const wb_fz_pattern *pattern,
                     const uint32_t *text, ptrdiff_t dir, size_t n, size_t cols, size_t k,
                     uint64_t *vectors, size_t snap_at);
/* The kept matrix's blocks a column, at most (its width), and its words
 * a block (per). */
size_t wb_eo_pass_width(wb_eo_metric metric, size_t m, size_t n, size_t k);
size_t wb_eo_pass_per(wb_eo_metric metric);
/* Keeps every column, in `keep` (width * per words a column) and the
 * columns' first blocks and counts. */
void wb_eo_pass_keep(wb_eo_pass *p, uint64_t *keep, uint32_t *kfirst, uint32_t *kcount);
/* Columns a budget at a time (units: a block a column, two when kept);
 * true once done. */
bool wb_eo_pass_step(wb_eo_pass *p, uint64_t budget, uint64_t *used);
/* After the pass: the value of row i (0..m) of its last column, or of
 * the snapshot (WB_EO_FAR outside the band). */
size_t wb_eo_pass_value(const wb_eo_pass *p, size_t i);
size_t wb_eo_pass_snap_value(const wb_eo_pass *p, size_t i);
/* In the kept matrix: the vertical deltas into row i (1..m) of column j
 * (0..cols): +1 (*up), -1 (*down), or neither (0 too outside the band). */
void wb_eo_kept_deltas(const wb_eo_pass *p, size_t j, size_t i, bool *up, bool *down);
/* In the kept matrix (OSA): the value of row i (0..m) of column j. */
size_t wb_eo_kept_value(const wb_eo_pass *p, size_t j, size_t i);

#ifdef __cplusplus
}
#endif

#endif

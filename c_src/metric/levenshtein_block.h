/*
 * Levenshtein's block form: Myers' bit-parallel column (Myers 1999) in
 * Hyyro's blocks of 64 pattern rows (Hyyro 2003), for patterns longer
 * than one word. The one block kernel of the project: the Levenshtein
 * kernel (wb_fz_lev, levenshtein.c) steps its columns with it, for the
 * fuzzy scorers and the distance of two texts (levenshtein_text.c: the
 * Levenshtein jobs, the search core's pairs). Defined in levenshtein.c.
 *
 * A column's state is one (vp, vn) pair of vertical delta words per block;
 * a column starts at the top with a +1 horizontal delta (row 0 grows by one
 * a column) and passes the horizontal deltas of each block's bottom row to
 * the block below. The caller owns the match rows (`eq`: the column's
 * symbol's match word per block, however it stores them) and the bottom
 * row's score: what a column's last block hands back, masked with the bit
 * of the pattern's last row, moves it.
 *
 * Several columns at once (a wavefront: block b of column j + 1 right after
 * block b + 1 of column j) overlap the carry chains that one column runs in
 * sequence. The ways of doing it (wb_lev_path) are chosen per process by
 * measurement (wb_lev_choose_path), since the widest is not the fastest on
 * every CPU.
 */
#ifndef WB_METRIC_LEVENSHTEIN_BLOCK_H
#define WB_METRIC_LEVENSHTEIN_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One block of one column: the block's vertical words in *bvp / *bvn, the
 * horizontal deltas from the row above the block in *hp / *hn (0 or 1) and
 * out of its bottom row (bit 63); the whole horizontal words of the block
 * in *hp_full / *hn_full (their bit of the pattern's last row moves the
 * score when this is the last block). */
static inline void wb_lev_block_advance(uint64_t eq, uint64_t *hp, uint64_t *hn, uint64_t *bvp,
                                        uint64_t *bvn, uint64_t *hp_full, uint64_t *hn_full) {
    uint64_t vp = *bvp, vn = *bvn;
    uint64_t x = eq | *hn;
    uint64_t d0 = (((x & vp) + vp) ^ vp) | x | vn;
    uint64_t hpf = vn | ~(d0 | vp), hnf = d0 & vp;
    uint64_t hps = (hpf << 1) | *hp, hns = (hnf << 1) | *hn;
    *hp = hpf >> 63;
    *hn = hnf >> 63;
    *bvp = hns | ~(d0 | hps);
    *bvn = hps & d0;
    *hp_full = hpf;
    *hn_full = hnf;
}

/* One column over `count` blocks: vp, vn and eq at the first of them (eq
 * indexed by block like vp; at least one block); *hp_full / *hn_full: the
 * last block's. */
static inline void wb_lev_block_column(uint64_t *restrict vp, uint64_t *restrict vn, size_t count,
                                       const uint64_t *restrict eq, uint64_t *hp_full,
                                       uint64_t *hn_full) {
    uint64_t hp = 1, hn = 0;
    size_t b = 0;
    for (; b + 1 < count; b++) { /* the horizontal words of the last block only */
        uint64_t bvp = vp[b], bvn = vn[b], hpf, hnf;
        wb_lev_block_advance(eq[b], &hp, &hn, &bvp, &bvn, &hpf, &hnf);
        vp[b] = bvp;
        vn[b] = bvn;
    }
    wb_lev_block_advance(eq[b], &hp, &hn, &vp[b], &vn[b], hp_full, hn_full);
}

/* The band (Ukkonen): with m pattern rows, n text columns and a cutoff
 * k >= |n - m| (max(m, n) when there is none: no distance is above it), a
 * cell (i, j) can lie on a path of cost <= k only if |i - j| + |(m - i) -
 * (n - j)| <= k, each term a lower bound of the cost before and after it:
 * rows j - below .. j + above of column j. */
static inline void wb_lev_band(size_t m, size_t n, size_t k, size_t *below, size_t *above) {
    if (n >= m) {
        *below = (k + (n - m)) / 2;
        *above = (k - (n - m)) / 2;
    } else {
        *below = (k - (m - n)) / 2;
        *above = (k + (m - n)) / 2;
    }
}

/* The blocks columns j0..j1 (1-based) need: *first and the last, *last.
 * A caller computes first..last; blocks entering the range at the bottom
 * start from all vertical deltas +1 (the score of their bottom row the
 * one above plus their rows), and the first block always takes the +1
 * carry: both over-estimate cells outside the band and leave the cells
 * inside it exact, so computing a few blocks more is harmless. */
static inline void wb_lev_band_blocks(size_t m, size_t below, size_t above, size_t j0, size_t j1,
                                      size_t *first, size_t *last) {
    size_t lo = j0 > below ? j0 - below : 1;
    size_t hi = j1 + above < m && j1 + above >= j1 ? j1 + above : m;
    *first = (lo - 1) / 64;
    *last = (hi - 1) / 64;
}

/* The most columns a wavefront takes at once. */
#define WB_LEV_WAVE_MOST 4

/* A wavefront of the path's columns (wb_lev_wave_columns) over `count`
 * blocks (at least one): vp and vn at the first block, eq[c] column c's
 * match rows at the first block, `bottom` the bit of the row whose score
 * the caller keeps in the last block. Returns the change of that score
 * over the columns (a wrapping uint64_t); the units are columns * count. */
typedef uint64_t (*wb_lev_wave_fn)(uint64_t *vp, uint64_t *vn, size_t count,
                                   const uint64_t *const *eq, uint64_t bottom);

/* The ways the wavefront is computed: two columns in scalar code, or four
 * in SIMD lanes (the instruction sets' copies of one body). One is in use
 * for the whole process. */
typedef enum {
    WB_LEV_PATH_SCALAR = 0,
    WB_LEV_PATH_SIMD,   /* four columns, SSE2 */
    WB_LEV_PATH_AVX2,   /* four columns, AVX2 */
    WB_LEV_PATH_AVX512, /* four columns, AVX-512 (x86-64-v4) */
    WB_LEV_PATHS
} wb_lev_path;

/* The path in use: its function, and its columns in *columns. */
wb_lev_wave_fn wb_lev_wave(size_t *columns);

/* Whether this build has the path and this CPU can run it. */
bool wb_lev_path_supported(wb_lev_path path);
/* Uses `path` from now on, if supported (true); for tests and benchmarks. */
bool wb_lev_force_path(wb_lev_path path);
/* Times every supported path on 16 blocks (a fraction of a millisecond
 * in all) and uses the fastest; returns it. Until it is called, the
 * scalar path is used. Call it once at start-up. */
wb_lev_path wb_lev_choose_path(void);
wb_lev_path wb_lev_current_path(void);
const char *wb_lev_path_name(wb_lev_path path);

#endif

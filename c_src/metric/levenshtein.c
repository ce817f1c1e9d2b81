/* Levenshtein (kernels.h): the unit-cost distance bit-parallel (Myers
 * 1999, in Hyyro's 2003 blocks): a pattern of one word through the word
 * step of levenshtein_word.h, a longer one in blocks of 64 positions
 * through the block form of levenshtein_block.h (defined here: the one
 * block kernel), a column resumable, which the distance of two texts
 * (levenshtein_text.c: the Levenshtein jobs, the search core's pairs)
 * runs too. The weighted distance is levenshtein_weighted.c; the lanes of
 * many short candidates are c_src/search/lanes*. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime (cpu_clock.h) */
#include "../probe/cpu_clock.h"
#include "common.h"
#include "levenshtein_block.h"
#include "levenshtein_word.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the block form (levenshtein_block.h): wavefronts and their paths ---- */

/* GCC or clang on x86-64: the four-column wavefront in SIMD lanes,
 * compiled for each instruction set (vector extensions and target
 * attributes) */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(WB_LEV_NO_SIMD)
#define LEV_X86 1
#else
#define LEV_X86 0
#endif

/* Two columns at once, block by block. Within a column each block waits
 * for the carry of the block above; interleaving two columns gives the CPU
 * two such chains to overlap. Two, not four: four columns' carries and
 * pointers no longer fit x86-64's 16 registers and the spills cost more
 * than the overlap gains. */
static uint64_t wave2(uint64_t *restrict vp, uint64_t *restrict vn, size_t count,
                      const uint64_t *const *eq, uint64_t bottom) {
    const uint64_t *restrict p0 = eq[0], *restrict p1 = eq[1];
    uint64_t hp0 = 1, hn0 = 0, hp1 = 1, hn1 = 0;
    uint64_t f0p, f0n, f1p, f1n;
    /* the horizontal words are kept from the last block only: four
     * registers fewer in the loop, which keeps both columns' rows in
     * registers too */
    size_t b = 0;
    for (; b + 1 < count; b++) {
        uint64_t bvp = vp[b], bvn = vn[b], x0, x1, x2, x3;
        wb_lev_block_advance(p0[b], &hp0, &hn0, &bvp, &bvn, &x0, &x1);
        wb_lev_block_advance(p1[b], &hp1, &hn1, &bvp, &bvn, &x2, &x3);
        vp[b] = bvp;
        vn[b] = bvn;
    }
    uint64_t bvp = vp[b], bvn = vn[b];
    wb_lev_block_advance(p0[b], &hp0, &hn0, &bvp, &bvn, &f0p, &f0n);
    wb_lev_block_advance(p1[b], &hp1, &hn1, &bvp, &bvn, &f1p, &f1n);
    vp[b] = bvp;
    vn[b] = bvn;
    return ((f0p & bottom) != 0) - (uint64_t)((f0n & bottom) != 0) + ((f1p & bottom) != 0) -
           (uint64_t)((f1n & bottom) != 0);
}

#if LEV_X86
typedef uint64_t lanes __attribute__((vector_size(32)));

/* Four columns as a wavefront across SIMD lanes. At iteration t, lane l
 * works on column l of the group and block t-l: its vertical vectors come
 * from lane l-1 of the previous iteration (the same block, one column
 * earlier), its carries from its own previous iteration (the block above),
 * lane 0 reads the block from memory and lane 3 writes it back. Lanes
 * outside the block range (the wavefront's ramps) compute nothing that is
 * kept. One body, compiled once per instruction set below. */
/* lane l takes lane l-1 (lane 0 keeps its own, replaced right after) */
#ifdef __clang__
#define SHIFT_UP(v) __builtin_shufflevector((v), (v), 0, 0, 1, 2)
#else
#define SHIFT_UP(v) __builtin_shuffle((v), (lanes){0, 0, 1, 2})
#endif

static inline __attribute__((always_inline)) uint64_t
wave4_body(uint64_t *vp, uint64_t *vn, size_t count, const uint64_t *const *eqs, uint64_t bottom) {
    uint64_t delta = 0;
    const uint64_t *p0 = eqs[0], *p1 = eqs[1], *p2 = eqs[2], *p3 = eqs[3];
    lanes bvp = {vp[0], 0, 0, 0}, bvn = {vn[0], 0, 0, 0};
    lanes hp = {1, 1, 1, 1}, hn = {0, 0, 0, 0};
    for (size_t t = 0; t < count + 3; t++) {
        lanes eq;
        bool steady = t >= 3 && t < count;
        if (steady) {
            eq = (lanes){p0[t], p1[t - 1], p2[t - 2], p3[t - 3]};
        } else {
            eq = (lanes){t < count ? p0[t] : 0, t >= 1 && t - 1 < count ? p1[t - 1] : 0,
                         t >= 2 && t - 2 < count ? p2[t - 2] : 0,
                         t >= 3 && t - 3 < count ? p3[t - 3] : 0};
        }
        lanes x = eq | hn;
        lanes d0 = (((x & bvp) + bvp) ^ bvp) | x | bvn;
        lanes hp_full = bvn | ~(d0 | bvp);
        lanes hn_full = d0 & bvp;
        lanes hp_shifted = (hp_full << 1) | hp;
        lanes hn_shifted = (hn_full << 1) | hn;
        lanes out_vp = hn_shifted | ~(d0 | hp_shifted);
        lanes out_vn = hp_shifted & d0;
        hp = hp_full >> 63;
        hn = hn_full >> 63;
        if (!steady) {
            /* lanes that have not reached the first block keep the +1 carry */
            for (size_t l = t + 1; l < 4; l++) {
                hp[l] = 1;
                hn[l] = 0;
            }
        }
        if (t + 1 >= count && t + 1 - count < 4) {
            size_t l = t + 1 - count; /* lane l finished the last block */
            delta += ((hp_full[l] & bottom) != 0) - (uint64_t)((hn_full[l] & bottom) != 0);
        }
        if (t >= 3 && t - 3 < count) {
            vp[t - 3] = out_vp[3];
            vn[t - 3] = out_vn[3];
        }
        bvp = SHIFT_UP(out_vp);
        bvn = SHIFT_UP(out_vn);
        bvp[0] = t + 1 < count ? vp[t + 1] : 0;
        bvn[0] = t + 1 < count ? vn[t + 1] : 0;
    }
    return delta;
}

__attribute__((target("arch=x86-64-v4"))) static uint64_t
wave4_avx512(uint64_t *vp, uint64_t *vn, size_t count, const uint64_t *const *eq, uint64_t bottom) {
    return wave4_body(vp, vn, count, eq, bottom);
}

__attribute__((target("avx2"))) static uint64_t
wave4_avx2(uint64_t *vp, uint64_t *vn, size_t count, const uint64_t *const *eq, uint64_t bottom) {
    return wave4_body(vp, vn, count, eq, bottom);
}

static uint64_t wave4_baseline(uint64_t *vp, uint64_t *vn, size_t count, const uint64_t *const *eq,
                               uint64_t bottom) {
    return wave4_body(vp, vn, count, eq, bottom);
}
#endif

static const struct {
    wb_lev_wave_fn step;
    size_t columns;
    const char *name;
} paths[WB_LEV_PATHS] = {
    [WB_LEV_PATH_SCALAR] = {wave2, 2, "scalar"},
#if LEV_X86
    [WB_LEV_PATH_SIMD] = {wave4_baseline, 4, "simd"},
    [WB_LEV_PATH_AVX2] = {wave4_avx2, 4, "avx2"},
    [WB_LEV_PATH_AVX512] = {wave4_avx512, 4, "avx512"},
#else
    [WB_LEV_PATH_SIMD] = {NULL, 0, "simd"},
    [WB_LEV_PATH_AVX2] = {NULL, 0, "avx2"},
    [WB_LEV_PATH_AVX512] = {NULL, 0, "avx512"},
#endif
};

/* The path in use: the scalar one until wb_lev_choose_path measures. */
static _Atomic int current_path = WB_LEV_PATH_SCALAR;

wb_lev_wave_fn wb_lev_wave(size_t *columns) {
    int path = atomic_load_explicit(&current_path, memory_order_relaxed);
    *columns = paths[path].columns;
    return paths[path].step;
}

bool wb_lev_path_supported(wb_lev_path path) {
    if (path >= WB_LEV_PATHS || !paths[path].step) return false;
#if LEV_X86
    __builtin_cpu_init();
    if (path == WB_LEV_PATH_AVX2) return __builtin_cpu_supports("avx2");
    if (path == WB_LEV_PATH_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#endif
    return true;
}

bool wb_lev_force_path(wb_lev_path path) {
    if (!wb_lev_path_supported(path)) return false;
    atomic_store(&current_path, (int)path);
    return true;
}

wb_lev_path wb_lev_current_path(void) {
    return (wb_lev_path)atomic_load(&current_path);
}

const char *wb_lev_path_name(wb_lev_path path) {
    return path < WB_LEV_PATHS ? paths[path].name : "unknown";
}

wb_lev_path wb_lev_choose_path(void) {
    /* a 1000-symbol pattern (16 blocks) against 1000 symbols, each path 5
     * times in turn: its fastest run counts, in thread CPU time (time the
     * OS gave others is not its own) */
    enum { BLOCKS = 16, SYMBOLS = 26, COLUMNS = 1000, ROUNDS = 5 };
    static uint64_t rows[SYMBOLS][BLOCKS], vp[BLOCKS], vn[BLOCKS];
    static uint8_t text[COLUMNS];
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < BLOCKS * 64; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rows[x % SYMBOLS][i / 64] |= UINT64_C(1) << (i % 64);
    }
    for (size_t j = 0; j < COLUMNS; j++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        text[j] = (uint8_t)(x % SYMBOLS);
    }
    int64_t best[WB_LEV_PATHS];
    for (int p = 0; p < WB_LEV_PATHS; p++)
        best[p] = INT64_MAX;
    for (int round = 0; round < ROUNDS; round++) {
        for (int p = 0; p < WB_LEV_PATHS; p++) {
            if (!wb_lev_path_supported((wb_lev_path)p)) continue;
            size_t columns = paths[p].columns;
            for (size_t w = 0; w < BLOCKS; w++) {
                vp[w] = ~UINT64_C(0);
                vn[w] = 0;
            }
            const uint64_t *eq[WB_LEV_WAVE_MOST];
            int64_t t0 = wb_thread_cpu_ns();
            for (size_t j = 0; j + columns <= COLUMNS; j += columns) {
                for (size_t c = 0; c < columns; c++)
                    eq[c] = rows[text[j + c]];
                (void)paths[p].step(vp, vn, BLOCKS, eq, UINT64_C(1) << 63);
            }
            int64_t took = wb_thread_cpu_ns() - t0;
            if (took < best[p]) best[p] = took;
        }
    }
    int chosen = WB_LEV_PATH_SCALAR;
    for (int p = 0; p < WB_LEV_PATHS; p++)
        if (best[p] < best[chosen]) chosen = p;
    atomic_store(&current_path, chosen);
    return (wb_lev_path)chosen;
}

/* columns between two looks at whether a cutoff's band can still end
 * under it */
#define LEV_LOOK_COLUMNS 8

/* ---- unit costs ------------------------------------------------------------ */

/* A block entering the band (its two words set up, in fresh memory: a
 * page of each 512 blocks faults in as it is first written, about 2 us
 * a page where measured) costs this many units. */
#define LEV_ENTER_UNITS 4

uint64_t wb_fz_lev_units(size_t m, size_t n) {
    return sat_add(pattern_kernel_units(m, n), sat_mul(blocks_of(min_size(m, n)), LEV_ENTER_UNITS));
}

/* The vectors, block 0's set up (VP all ones, VN zero: column 0's row i
 * is i); the others are set up as they enter the band (lev_enter). */
static bool lev_vectors(wb_fz_lev *k, size_t nblocks) {
    if (nblocks <= 1) {
        k->vp = &k->one_vp;
        k->vn = &k->one_vn;
    } else {
        k->vp = malloc(2 * nblocks * sizeof(uint64_t));
        if (!k->vp) return false;
        k->vn = k->vp + nblocks;
        k->owned_bytes += 2 * nblocks * sizeof(uint64_t);
    }
    k->vp[0] = ~(uint64_t)0;
    k->vn[0] = 0;
    return true;
}

bool wb_fz_lev_init_with(wb_fz_lev *k, const wb_fz_pattern *pattern, const uint32_t *b, size_t n,
                         size_t cutoff) {
    memset(k, 0, sizeof *k);
    if (!lev_vectors(k, pattern->nblocks)) return false;
    k->use = pattern;
    k->b = b;
    k->m = pattern->m;
    k->n = n;
    k->k = cutoff;
    /* the band of the cutoff, or of the longer length (no distance is
     * above it); none when the lengths' difference is already above */
    size_t m = pattern->m, longer = max_size(m, n), diff = longer - min_size(m, n);
    size_t band = cutoff < longer ? cutoff : longer;
    if (diff <= band) {
        wb_lev_band(m, n, band, &k->below, &k->above);
    } else {
        k->below = longer;
        k->above = longer;
    }
    /* column 0, block 0 (row i is i): the others enter as the band does */
    k->score = min_size(m, 64);
    /* row 0 of the matrix grows by one per column */
    k->hp_carry = 1;
    return true;
}

bool wb_fz_lev_init(wb_fz_lev *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                    size_t cutoff) {
    memset(k, 0, sizeof *k);
    shorter_first(&a, &m, &b, &n);
    wb_fz_pattern pattern;
    if (!wb_fz_pattern_alloc(&pattern, a, m)) return false;
    /* the vectors' count is known before the fill */
    if (!wb_fz_lev_init_with(k, &pattern, b, n, cutoff)) {
        wb_fz_pattern_free(&pattern);
        return false;
    }
    k->pattern = pattern;
    k->use = &k->pattern;
    k->owned_bytes += pattern.owned_bytes;
    return true;
}

/* Blocks k->last + 1 .. last enter the band at its bottom, set up
 * (column 0: every vertical delta +1). */
static void lev_enter(wb_fz_lev *k, size_t last) {
    size_t nblocks = k->use->nblocks;
    while (k->last < last) {
        size_t b = ++k->last;
        k->vp[b] = ~(uint64_t)0;
        k->vn[b] = 0;
        k->score += b + 1 == nblocks ? k->m - b * 64 : 64;
    }
}

/* The blocks columns j0..j1 (1-based) need, those entering the band set
 * up (lev_ready has entered them in the step). */
static void lev_select(wb_fz_lev *k, size_t j0, size_t j1) {
    size_t last;
    wb_lev_band_blocks(k->m, k->below, k->above, j0, j1, &k->first, &last);
    lev_enter(k, last);
}

/* Before a column (or a wave of `columns`) starts: the blocks entering
 * the band for it, as many as `left` units pay for (one at least),
 * adding their units to *spent; true when all are in. A band as wide as
 * a long pattern enters whole at column 1. */
static bool lev_ready(wb_fz_lev *k, size_t columns, uint64_t left, uint64_t *spent) {
    size_t first, last;
    wb_lev_band_blocks(k->m, k->below, k->above, k->col + 1, k->col + columns, &first, &last);
    if (k->last >= last) return true;
    uint64_t afford = left / LEV_ENTER_UNITS > 0 ? left / LEV_ENTER_UNITS : 1;
    size_t count = last - k->last <= afford ? last - k->last : (size_t)afford;
    lev_enter(k, k->last + count);
    uint64_t units = (uint64_t)count * LEV_ENTER_UNITS;
    *spent += units < left ? units : (left > 0 ? left : 1);
    return k->last >= last;
}

/* The bit of block last's bottom row: row m's in the pattern's last block. */
static uint64_t lev_bottom(const wb_fz_lev *k, uint64_t last_row) {
    return k->last + 1 == k->use->nblocks ? last_row : (uint64_t)1 << 63;
}

/* Text column j's symbol (0-based): from the bytes or the symbols. */
static inline uint32_t lev_symbol(const wb_fz_lev *k, size_t j) {
    return k->b8 ? k->b8[j] : k->b[j];
}

/* The next `columns` columns at once, from their tops, when their symbols
 * are all in the pattern's table (below 256) and `left` units pay for
 * them; false, having computed nothing, for any other. */
static bool lev_wave(wb_fz_lev *k, wb_lev_wave_fn wave, size_t columns, uint64_t last_row,
                     uint64_t left, uint64_t *spent) {
    const wb_fz_pattern *p = k->use;
    const uint64_t *eq[WB_LEV_WAVE_MOST];
    for (size_t c = 0; c < columns; c++) {
        uint32_t symbol = lev_symbol(k, k->col + c);
        if (symbol >= 256) return false;
        eq[c] = p->low + (size_t)symbol * p->nblocks;
    }
    /* (blocks set up for all of them: harmless when one column is done
     * instead) */
    lev_select(k, k->col + 1, k->col + columns);
    size_t count = k->last - k->first + 1;
    if (left < (uint64_t)columns * count) return false; /* (no division: columns <= 4) */
    for (size_t c = 0; c < columns; c++)
        eq[c] += k->first;
    k->score += wave(k->vp + k->first, k->vn + k->first, count, eq, lev_bottom(k, last_row));
    *spent += (uint64_t)columns * count;
    k->col += columns;
    return true;
}

/* Column col from its next block on, `left` blocks at most (one at least),
 * adding them to *spent; true when the column ended (its score moved, col
 * the next one). */
static bool lev_blocks(wb_fz_lev *k, uint64_t left, uint64_t last_row, uint64_t *spent) {
    const wb_fz_pattern *p = k->use;
    if (!k->mid) {
        lev_select(k, k->col + 1, k->col + 1);
        k->block = k->first;
        k->hp_carry = 1;
        k->hn_carry = 0;
        k->mid = true;
    }
    uint32_t c = lev_symbol(k, k->col);
    uint64_t hp = k->hp_carry, hn = k->hn_carry, hp_full = 0, hn_full = 0;
    size_t w = k->block, end = w + (size_t)min_size(k->last + 1 - w, left > 0 ? left : 1);
    for (; w < end; w++)
        wb_lev_block_advance(wb_fz_pattern_get(p, c, w), &hp, &hn, &k->vp[w], &k->vn[w], &hp_full,
                             &hn_full);
    *spent += end - k->block;
    if (w <= k->last) {
        k->block = w;
        k->hp_carry = hp;
        k->hn_carry = hn;
        return false;
    }
    k->mid = false;
    uint64_t bottom = lev_bottom(k, last_row);
    k->score = k->score + ((hp_full & bottom) != 0) - ((hn_full & bottom) != 0);
    k->col++;
    return true;
}

/* Whether, between two columns, no computed cell can still lie on a path
 * of cost <= the cutoff, so the distance is above it. Every path to
 * (m, n) crosses the column; from cell (i, j) it costs at least D[i][j]
 * plus |(m - i) - (n - j)|. Within a block, D[i] >= D[bottom] - (bottom -
 * i) (a column's values grow by at most one a row), which bounds each
 * block by its bottom row's score; the bottoms come from the last block's
 * (the kernel's score), the vertical deltas summed block by block
 * upwards. Computed values are the costs of real paths (at least the true
 * ones) and exact for every cell that can matter; cells outside the
 * blocks computed cannot matter (the band). */
static bool lev_hopeless(const wb_fz_lev *k) {
    int64_t c = (int64_t)k->col + (int64_t)k->m - (int64_t)k->n, cutoff = (int64_t)k->k;
    int64_t score = (int64_t)k->score;
    size_t nblocks = k->use->nblocks;
    for (size_t b = k->last + 1; b-- > k->first;) {
        bool final = b + 1 == nblocks;
        int64_t bottom = final ? (int64_t)k->m : (int64_t)((b + 1) * 64);
        int64_t top = (int64_t)(b * 64) + 1;
        /* min over rows i of the block of i + |i - c| */
        int64_t least = c >= top ? c : 2 * top - c;
        if (score - bottom + least <= cutoff) return false;
        uint64_t rows = final ? wb_fz_low_bits(k->m - b * 64) : ~(uint64_t)0;
        score -=
            (int64_t)wb_fz_popcount(k->vp[b] & rows) - (int64_t)wb_fz_popcount(k->vn[b] & rows);
    }
    return true;
}

/* After columns from..col of a cutoff's band: every LEV_LOOK_COLUMNS
 * columns, whether the band can still end under the cutoff (true: it
 * cannot, the distance is above). A look costs a unit per 4 blocks, paid
 * from the units the band's columns left of every block's (k->spare), so
 * the kernel's units stay within wb_fz_lev_units; skipped when the budget
 * or the spare units do not cover it. */
static bool lev_look(wb_fz_lev *k, size_t from, uint64_t budget, uint64_t *spent) {
    size_t count = k->last - k->first + 1, nblocks = k->use->nblocks;
    k->spare += (uint64_t)(nblocks - count) * (k->col - from);
    if (k->col / LEV_LOOK_COLUMNS == from / LEV_LOOK_COLUMNS || k->col >= k->n) return false;
    uint64_t cost = units_of(count, 4);
    if (k->spare < cost || budget - *spent < cost) return false;
    k->spare -= cost;
    *spent += cost;
    return lev_hopeless(k);
}

bool wb_fz_lev_step(wb_fz_lev *k, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    if (k->use == &k->pattern && !wb_fz_pattern_fill(&k->pattern, budget, &spent)) {
        charge(used, spent);
        return false;
    }
    const wb_fz_pattern *p = k->use;
    size_t nblocks = p->nblocks;
    if (k->m == 0 || k->n == 0) {
        /* one side empty: the other's length (no column adds the rows of
         * the blocks past the first) */
        k->score = k->m + k->n;
        k->col = k->n;
    }
    /* the bit of row m in the last block */
    uint64_t last = (uint64_t)1 << ((k->m - 1) % 64);
    if (nblocks == 1 && k->col < k->n) {
        /* one word, in registers: no carries between blocks */
        uint64_t left = budget > spent ? budget - spent : 0, vp = k->vp[0], vn = k->vn[0];
        size_t end = k->n - k->col > left ? k->col + (size_t)left : k->n, col = k->col;
        size_t score = k->score, cutoff = k->k;
        spent += end - col;
        while (col < end) {
            score += (size_t)wb_lev_word_column(wb_fz_pattern_get(p, lev_symbol(k, col), 0), &vp,
                                                &vn, last);
            col++;
            if (cutoff != WB_FZ_NO_CUTOFF && score > cutoff + (k->n - col)) {
                col = k->n;
                score = cutoff + 1;
                break;
            }
        }
        k->vp[0] = vp;
        k->vn[0] = vn;
        k->score = score;
        k->col = col;
    }
    size_t columns = 1;
    wb_lev_wave_fn wave = nblocks > 1 ? wb_lev_wave(&columns) : NULL;
    while (k->col < k->n && spent < budget) {
        if (!k->mid && k->last + 1 < nblocks) {
            size_t ahead = wave && k->n - k->col >= columns ? columns : 1;
            if (!lev_ready(k, ahead, budget - spent, &spent)) continue;
            if (spent >= budget) break;
        }
        size_t from = k->col;
        if (!(wave && !k->mid && k->n - k->col >= columns &&
              lev_wave(k, wave, columns, last, budget - spent, &spent)) &&
            !lev_blocks(k, budget - spent, last, &spent))
            continue; /* the budget ended inside the column */
        /* each column left can lower the last row by one at most (the
         * score is row m's once the band reaches it) */
        if (k->k != WB_FZ_NO_CUTOFF &&
            ((k->last + 1 == nblocks && k->score > k->k + (k->n - k->col)) ||
             lev_look(k, from, budget, &spent))) {
            k->col = k->n;
            k->score = k->k + 1;
        }
    }
    charge(used, spent);
    if (k->col < k->n) return false;
    k->result = k->k != WB_FZ_NO_CUTOFF && k->score > k->k ? k->k + 1 : k->score;
    return true;
}

void wb_fz_lev_free(wb_fz_lev *k) {
    if (k->vp && k->vp != &k->one_vp)
        wb_fz_free_block(k->vp, 2 * k->use->nblocks * sizeof(uint64_t), k->free_later);
    /* its own pattern (wb_fz_lev_init), if any: none with a borrowed one */
    if (k->pattern.low || k->pattern.map || k->pattern.written)
        wb_fz_pattern_free_with(&k->pattern, k->free_later);
    memset(k, 0, sizeof *k);
}

size_t wb_fz_lev_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                       uint64_t *used) {
    shorter_first(&a, &m, &b, &n);
    if (m == 0) {
        charge(used, 0);
        return cut(n, cutoff);
    }
    /* the units of the whole pair, whatever the affix saves */
    uint64_t units = units_of(m, WB_FZ_PATTERN_PER_UNIT) + n;
    drop_affix(&a, &m, &b, &n);
    if (m == 0) {
        charge(used, units);
        return cut(n, cutoff);
    }
    wb_fz_short p;
    wb_fz_short_begin(&p, a, m);
    uint64_t vp = ~(uint64_t)0, vn = 0, last = (uint64_t)1 << (m - 1);
    size_t score = m;
    for (size_t j = 0; j < n; j++) {
        score += (size_t)wb_lev_word_column(wb_fz_short_get(&p, b[j]), &vp, &vn, last);
        /* each column left can lower the last row by one at most */
        if (cutoff != WB_FZ_NO_CUTOFF && score > cutoff + (n - j - 1)) break;
    }
    wb_fz_short_end(&p);
    charge(used, units);
    return cut(score, cutoff);
}

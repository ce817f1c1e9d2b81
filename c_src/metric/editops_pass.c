/* The column passes of the edit scripts (editops.h): the bit-parallel
 * columns of Levenshtein (Myers, Hyyro's blocks: levenshtein_block.h),
 * OSA (Hyyro 2003: osa_word.h) and the LCS (Allison-Dix, Hyyro 2004),
 * over the rows of a pattern and the columns of a text read forwards or
 * backwards, resumable inside a column; what a script is traced back on
 * (every column kept) or split by (the last columns' values).
 *
 * Levenshtein and OSA compute a band (Ukkonen): with a bound k on the
 * distance, a cell (i, j) is on a path of cost <= k only if
 * |i - j| + |(m - i) - (n - j)| <= k, each term a lower bound of the
 * cost before and after it (a transposition keeps i - j). After each
 * column the bound is lowered to the last computed block's bottom value
 * plus the most the rest can cost (max(m - r, n - j)). Blocks entering
 * the band at the bottom start from all vertical deltas +1 below the
 * block above (the value of a path down the column), the first block
 * takes a +1 horizontal delta from above, and OSA's transpositions into a
 * new block are left out: each computed value is the cost of some path,
 * never below the distance, and exact on every path within the bound
 * (Ukkonen, Hyyro), which is all a traceback or a split reads. */
#include "editops.h"

#include "common.h"
#include "levenshtein_block.h"
#include "osa_word.h"

#include <string.h>

/* the words a kept block takes: VP and VN (OSA: and its bottom value);
 * the LCS: S */
size_t wb_eo_pass_per(wb_eo_metric metric) {
    return metric == WB_EO_INDEL ? 1 : metric == WB_EO_OSA ? 3 : 2;
}

/* the band's bound within what the lengths allow */
static size_t band_bound(size_t m, size_t n, size_t k) {
    size_t gap = m > n ? m - n : n - m, most = max_size(m, n);
    if (k < gap) k = gap;
    return k < most ? k : most;
}

size_t wb_eo_pass_width(wb_eo_metric metric, size_t m, size_t n, size_t k) {
    size_t blocks = blocks_of(m);
    if (metric == WB_EO_INDEL) return blocks;
    size_t below, above;
    wb_lev_band(m, n, band_bound(m, n, k), &below, &above);
    /* rows j - below .. j + above: below + above + 1 rows span at most
     * (below + above) / 64 + 2 blocks */
    size_t width = (below + above) / 64 + 2;
    return width < blocks ? width : blocks;
}

void wb_eo_pass_init(wb_eo_pass *p, wb_eo_metric metric, const wb_fz_pattern *pattern,
                     const uint32_t *text, ptrdiff_t dir, size_t n, size_t cols, size_t k,
                     uint64_t *vectors, size_t snap_at) {
    memset(p, 0, sizeof *p);
    p->metric = metric;
    p->pattern = pattern;
    p->text = text;
    p->dir = dir;
    p->m = pattern->m;
    p->n = n;
    p->cols = cols;
    p->blocks = blocks_of(p->m);
    p->last = (uint64_t)1 << ((p->m - 1) % 64);
    p->banded = metric != WB_EO_INDEL;
    if (p->banded) {
        p->k = band_bound(p->m, n, k);
        wb_lev_band(p->m, n, p->k, &p->below, &p->above);
    }
    size_t w = p->blocks;
    p->vp = vectors;
    p->vn = vectors + w;
    p->d0 = vectors + 2 * w;
    p->pm = vectors + 3 * w;
    p->score = vectors + 4 * w;
    p->snap_at = snap_at;
    p->svp = vectors + 5 * w;
    p->svn = vectors + 6 * w;
    p->sscore = vectors + 7 * w;
}

void wb_eo_pass_keep(wb_eo_pass *p, uint64_t *keep, uint32_t *kfirst, uint32_t *kcount) {
    p->keep = keep;
    p->kfirst = kfirst;
    p->kcount = kcount;
    p->per = wb_eo_pass_per(p->metric);
    p->width = wb_eo_pass_width(p->metric, p->m, p->n, p->k);
    p->stride = p->width * p->per;
}

/* the rows of block b */
static inline size_t rows_of(const wb_eo_pass *p, size_t b) {
    size_t top = 64 * b;
    return p->m - top < 64 ? p->m - top : 64;
}

/* Column col + 1's blocks: its band, the kept bounds. */
static void column_open(wb_eo_pass *p) {
    size_t j = p->col + 1;
    if (p->banded) {
        size_t lo = j > p->below ? j - p->below : 1;
        size_t hi = p->above < p->m && j < p->m - p->above ? j + p->above : p->m;
        p->first = (lo - 1) / 64;
        p->end = (hi - 1) / 64 + 1;
    } else {
        p->first = 0;
        p->end = p->blocks;
    }
    if (p->keep) {
        p->kfirst[p->col] = (uint32_t)p->first;
        p->kcount[p->col] = (uint32_t)(p->end - p->first);
    }
    p->block = p->first;
    p->hp = p->metric == WB_EO_INDEL ? 0 : 1;
    p->hn = 0;
    p->d0_below = ~(uint64_t)0;
    p->pm_below = 0;
    p->open = true;
}

/* A block entering the band (b >= ready): all +1 below the block above,
 * whose value before this column is its value now less the delta it
 * carried into b (none when b opens the column). */
static inline void fresh(wb_eo_pass *p, size_t b, uint64_t hp, uint64_t hn) {
    uint64_t base = 0;
    if (b > 0) base = b == p->first ? p->score[b - 1] : p->score[b - 1] - hp + hn;
    p->vp[b] = ~(uint64_t)0;
    p->vn[b] = 0;
    p->d0[b] = ~(uint64_t)0;
    p->pm[b] = 0;
    p->score[b] = base + rows_of(p, b);
}

static void lev_blocks(wb_eo_pass *p, uint32_t c, size_t from, size_t to) {
    const wb_fz_pattern *pat = p->pattern;
    const uint64_t *row = c < 256 ? pat->low + (size_t)c * pat->nblocks : NULL;
    uint64_t hp = p->hp, hn = p->hn, last = p->last;
    uint64_t *restrict vp = p->vp, *restrict vn = p->vn, *restrict score = p->score;
    size_t final = p->blocks - 1, ready = p->ready;
    uint64_t *kw = p->keep ? p->keep + p->col * p->stride + (from - p->first) * 2 : NULL;
    for (size_t b = from; b < to; b++) {
        if (b >= ready) fresh(p, b, hp, hn);
        uint64_t eq = row ? row[b] : wb_fz_pattern_get(pat, c, b), hpf, hnf;
        wb_lev_block_advance(eq, &hp, &hn, &vp[b], &vn[b], &hpf, &hnf);
        if (b == final)
            score[b] += ((hpf & last) != 0) - (uint64_t)((hnf & last) != 0);
        else
            score[b] += hp - hn;
        if (kw) {
            kw[0] = vp[b];
            kw[1] = vn[b];
            kw += 2;
        }
    }
    p->hp = hp;
    p->hn = hn;
}

static void osa_blocks(wb_eo_pass *p, uint32_t c, size_t from, size_t to) {
    const wb_fz_pattern *pat = p->pattern;
    uint64_t hp = p->hp, hn = p->hn, last = p->last;
    uint64_t d0_below = p->d0_below, pm_below = p->pm_below;
    size_t final = p->blocks - 1, ready = p->ready;
    uint64_t *kw = p->keep ? p->keep + p->col * p->stride + (from - p->first) * 3 : NULL;
    for (size_t b = from; b < to; b++) {
        if (b >= ready) fresh(p, b, hp, hn);
        uint64_t pm = wb_fz_pattern_get(pat, c, b), d0_old = p->d0[b], hpa, hna;
        wb_osa_block_column(pm, (~d0_below & pm_below) >> 63, &hp, &hn, &p->vp[b], &p->vn[b],
                            &p->d0[b], &p->pm[b], &hpa, &hna);
        d0_below = d0_old;
        pm_below = pm;
        if (b == final)
            p->score[b] += ((hpa & last) != 0) - (uint64_t)((hna & last) != 0);
        else
            p->score[b] += hp - hn;
        if (kw) {
            kw[0] = p->vp[b];
            kw[1] = p->vn[b];
            kw[2] = p->score[b];
            kw += 3;
        }
    }
    p->hp = hp;
    p->hn = hn;
    p->d0_below = d0_below;
    p->pm_below = pm_below;
}

static void lcs_blocks(wb_eo_pass *p, uint32_t c, size_t from, size_t to) {
    const wb_fz_pattern *pat = p->pattern;
    const uint64_t *row = c < 256 ? pat->low + (size_t)c * pat->nblocks : NULL;
    uint64_t carry = p->hp, *restrict sv = p->vp;
    size_t ready = p->ready;
    uint64_t *kw = p->keep ? p->keep + p->col * p->stride + from : NULL;
    for (size_t b = from; b < to; b++) {
        if (b >= ready) sv[b] = ~(uint64_t)0;
        uint64_t x = sv[b], u = x & (row ? row[b] : wb_fz_pattern_get(pat, c, b));
        uint64_t sum = x + u, total = sum + carry;
        carry = (uint64_t)(sum < x) | (uint64_t)(total < sum);
        sv[b] = total | (x - u);
        if (kw) *kw++ = sv[b];
    }
    p->hp = carry;
}

/* After a column: the blocks with a state, the bound lowered. */
static void column_close(wb_eo_pass *p) {
    p->ready = p->end;
    p->col++;
    p->open = false;
    if (!p->banded) return;
    size_t r = p->end == p->blocks ? p->m : 64 * p->end;
    size_t rest = max_size(p->m - r, p->n - p->col);
    size_t bound = (size_t)p->score[p->end - 1] + rest;
    if (bound < p->k) {
        p->k = bound;
        wb_lev_band(p->m, p->n, p->k, &p->below, &p->above);
    }
}

bool wb_eo_pass_step(wb_eo_pass *p, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0, cost = p->keep ? 2 : 1;
    if (budget == 0) budget = 1;
    while (!p->done && spent < budget) {
        if (p->snap_at != 0 && p->col == p->snap_at && !p->snapped) {
            /* the snapshot, a block a unit */
            size_t from = p->block, to = min_size(p->end, from + (size_t)(budget - spent));
            for (size_t b = from; b < to; b++) {
                p->svp[b] = p->vp[b];
                p->svn[b] = p->vn[b];
                p->sscore[b] = p->score[b];
            }
            spent += to - from;
            p->block = to;
            if (to == p->end) {
                p->snapped = true;
                p->snap_first = p->first;
                p->snap_end = p->end;
            }
            continue;
        }
        if (p->col == p->cols) {
            /* the LCS's values, from the blocks' counts of matched rows
             * (S's zeros), a block a unit */
            if (p->banded) {
                p->done = true;
                break;
            }
            size_t from = p->finish, to = min_size(p->blocks, from + (size_t)(budget - spent));
            size_t lcs = p->lcs;
            for (size_t b = from; b < to; b++) {
                size_t rows = rows_of(p, b);
                lcs += wb_fz_popcount(~p->vp[b] & wb_fz_low_bits(rows));
                p->score[b] = 64 * b + rows + p->cols - 2 * lcs;
            }
            p->lcs = lcs;
            spent += to - from;
            p->finish = to;
            p->done = to == p->blocks;
            continue;
        }
        if (!p->open) column_open(p);
        uint64_t room = (budget - spent) / cost;
        size_t from = p->block,
               to = room < p->end - from ? from + (size_t)(room ? room : 1) : p->end;
        uint32_t c = p->text[(ptrdiff_t)p->col * p->dir];
        if (p->metric == WB_EO_LEVENSHTEIN)
            lev_blocks(p, c, from, to);
        else if (p->metric == WB_EO_OSA)
            osa_blocks(p, c, from, to);
        else
            lcs_blocks(p, c, from, to);
        spent += (uint64_t)(to - from) * cost;
        p->block = to;
        if (to < p->end) continue;
        column_close(p);
        if (p->snap_at != 0 && p->col == p->snap_at) p->block = p->first;
    }
    charge(used, spent);
    return p->done;
}

/* The value of row i (0..m) from a column's blocks first..end - 1: row 0
 * is `col` (the top row's), the others their block's bottom value less
 * the deltas below them. */
static size_t value_in(const wb_eo_pass *p, size_t col, const uint64_t *vp, const uint64_t *vn,
                       const uint64_t *score, size_t first, size_t end, size_t i) {
    if (i == 0) return col;
    size_t b = (i - 1) / 64;
    if (b < first || b >= end) return WB_EO_FAR;
    uint64_t mask = wb_fz_low_bits(rows_of(p, b)) & ~wb_fz_low_bits(i - 64 * b);
    uint64_t up = vp[b] & mask, down = (p->metric == WB_EO_INDEL ? ~vp[b] : vn[b]) & mask;
    return (size_t)score[b] - wb_fz_popcount(up) + wb_fz_popcount(down);
}

size_t wb_eo_pass_value(const wb_eo_pass *p, size_t i) {
    return value_in(p, p->cols, p->vp, p->vn, p->score, p->first, p->end, i);
}

size_t wb_eo_pass_snap_value(const wb_eo_pass *p, size_t i) {
    if (p->snap_at == 0) return i; /* column 0 */
    return value_in(p, p->snap_at, p->svp, p->svn, p->sscore, p->snap_first, p->snap_end, i);
}

/* the kept words of row i's block in column j (NULL outside the band) */
static inline const uint64_t *kept_block(const wb_eo_pass *p, size_t j, size_t i) {
    size_t b = (i - 1) / 64, f = p->kfirst[j - 1];
    if (b < f || b - f >= p->kcount[j - 1]) return NULL;
    return p->keep + (j - 1) * p->stride + (b - f) * p->per;
}

void wb_eo_kept_deltas(const wb_eo_pass *p, size_t j, size_t i, bool *up, bool *down) {
    if (j == 0) {
        *up = true;
        *down = false;
        return;
    }
    const uint64_t *w = kept_block(p, j, i);
    uint64_t bit = (uint64_t)1 << ((i - 1) % 64);
    if (!w) {
        *up = *down = false;
    } else if (p->metric == WB_EO_INDEL) {
        *up = (w[0] & bit) != 0;
        *down = !*up;
    } else {
        *up = (w[0] & bit) != 0;
        *down = (w[1] & bit) != 0;
    }
}

size_t wb_eo_kept_value(const wb_eo_pass *p, size_t j, size_t i) {
    if (j == 0) return i;
    if (i == 0) return j;
    const uint64_t *w = kept_block(p, j, i);
    if (!w) return WB_EO_FAR;
    size_t b = (i - 1) / 64;
    uint64_t mask = wb_fz_low_bits(rows_of(p, b)) & ~wb_fz_low_bits(i - 64 * b);
    return (size_t)w[2] - wb_fz_popcount(w[0] & mask) + wb_fz_popcount(w[1] & mask);
}

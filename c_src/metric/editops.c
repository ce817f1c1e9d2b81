/* Edit scripts (editops.h): the halves of the work on a stack, each taken
 * through its phases a budget at a time: the common prefix and suffix
 * dropped, then either its matrix kept and traced back, or a split
 * (Hirschberg: a forward pass to the destination's middle column, a
 * backward one from its end, the best row between them), its two halves
 * pushed. The passes are editops_pass.c's. */
#include "editops.h"

#include "common.h"

#include <string.h>

enum {
    PH_NEXT,    /* the next half, or the end */
    PH_PREFIX,  /* its common prefix */
    PH_SUFFIX,  /* its common suffix */
    PH_PLAN,    /* what it needs */
    PH_FILL,    /* its source's pattern */
    PH_PROBE,   /* its distance in a narrow band (a large pair) */
    PH_DECIDE,  /* kept or split */
    PH_KEEP,    /* the pass keeping its matrix */
    PH_TRACE,   /* the traceback */
    PH_EMPTY,   /* a side empty: deletions or insertions */
    PH_LEFT,    /* a split's forward pass */
    PH_REVERSE, /* the source reversed, once */
    PH_RFILL,   /* the reversed pattern */
    PH_RIGHT,   /* a split's backward pass */
    PH_SCAN     /* the best row */
};

/* pairs of at least this many cells look for their distance in narrow
 * bands first (as long as the bands cost under a quarter of the matrix),
 * to compute their passes in the band of that distance */
#define PROBE_CELLS (1u << 22)
#define PROBE_FIRST 64

void wb_eo_start(wb_eo *s, wb_eo_metric metric, const uint32_t *a, size_t m, const uint32_t *b,
                 size_t n) {
    memset(s, 0, sizeof *s);
    s->metric = metric;
    s->a = a;
    s->b = b;
    s->m = m;
    s->n = n;
    s->width = m <= UINT32_MAX && n <= UINT32_MAX ? 4 : 8;
    s->matrix_most = WB_EO_MATRIX_MOST;
    s->rf_matrix = WB_EO_RAPIDFUZZ_MATRIX;
    s->stack[0] = (wb_eo_task){0, m, 0, n, WB_EO_UNKNOWN, WB_EO_UNKNOWN, 0};
    s->depth = 1;
    s->phase = PH_NEXT;
}

static void fail(wb_eo *s) {
    s->failed = true;
    s->done = true;
}

static void *take_block(wb_eo *s, size_t bytes) {
    return s->alloc ? s->alloc(bytes) : malloc(bytes);
}

static void give_block(wb_eo *s, void *block, size_t bytes) {
    if (!block) return;
    if (s->release)
        s->release(block, bytes);
    else
        wb_fz_free_block(block, bytes, s->free_later);
}

/* The script's block once its length is known (the first half's
 * distance, the whole pair's); false when out of memory. */
static bool ensure_output(wb_eo *s, size_t d) {
    if (s->out_ready) return true;
    size_t record = 1 + 2 * s->width;
    if (d > SIZE_MAX / record) return false;
    if (d > 0 && !(s->out = malloc(d * record))) return false;
    s->out_bytes = d * record;
    s->distance = d;
    s->out_ready = true;
    return true;
}

static inline void put(wb_eo *s, size_t k, wb_eo_op op, size_t src, size_t dest) {
    /* every half's records fall within the script, its distance exact;
     * a record past it would be a defect of the core: none is written */
    if (k >= s->distance) {
        s->broken = true;
        return;
    }
    uint8_t *r = s->out + k * (1 + 2 * s->width);
    r[0] = (uint8_t)op;
    if (s->width == 4) {
        uint32_t x = (uint32_t)src, y = (uint32_t)dest;
        memcpy(r + 1, &x, 4);
        memcpy(r + 5, &y, 4);
    } else {
        uint64_t x = src, y = dest;
        memcpy(r + 1, &x, 8);
        memcpy(r + 9, &y, 8);
    }
}

void wb_eo_record(const uint8_t *out, size_t width, size_t k, wb_eo_op *op, size_t *src,
                  size_t *dest) {
    const uint8_t *r = out + k * (1 + 2 * width);
    *op = (wb_eo_op)r[0];
    if (width == 4) {
        uint32_t x, y;
        memcpy(&x, r + 1, 4);
        memcpy(&y, r + 5, 4);
        *src = x;
        *dest = y;
    } else {
        uint64_t x, y;
        memcpy(&x, r + 1, 8);
        memcpy(&y, r + 9, 8);
        *src = (size_t)x;
        *dest = (size_t)y;
    }
}

/* ---- the kept matrix and its traceback ----------------------------------- */

static void drop_keep(wb_eo *s) {
    give_block(s, s->keep_block, s->keep_bytes);
    s->keep_block = NULL;
    s->keep_bytes = 0;
}

/* The matrix of the half under way, for pass 0 (k its band's bound). */
static bool keep_matrix(wb_eo *s, size_t mm, size_t nn, size_t k) {
    size_t words = wb_eo_pass_width(s->metric, mm, nn, k) * wb_eo_pass_per(s->metric);
    size_t bytes = 0;
    if (!add_bytes(&bytes, nn, words * sizeof(uint64_t)) ||
        !add_bytes(&bytes, nn, 2 * sizeof(uint32_t)))
        return false;
    s->keep_block = take_block(s, bytes);
    if (!s->keep_block) return false;
    s->keep_bytes = bytes;
    uint64_t *keep = s->keep_block;
    uint32_t *bounds = (uint32_t *)(keep + nn * words);
    wb_eo_pass_keep(&s->pass[0], keep, bounds, bounds + nn);
    return true;
}

/* The traceback, a cell a unit: from the end, a transposition (OSA) when
 * one is on a shortest path, else a deletion, else an insertion when the
 * cell to the left is lower than the one up-left, else the diagonal;
 * each record written before the last, from the half's end back. */
static bool trace(wb_eo *s, uint64_t budget, uint64_t *spent) {
    const wb_eo_pass *p = &s->pass[0];
    const uint32_t *a = s->a + s->t.a0, *b = s->b + s->t.b0;
    size_t a0 = s->t.a0, b0 = s->t.b0, i = s->ti, j = s->tj, w = s->tw, v = s->tval;
    uint64_t steps = 0;
    bool osa = s->metric == WB_EO_OSA;
    while (i > 0 && j > 0 && steps < budget) {
        steps++;
        bool up, down;
        if (osa && i >= 2 && j >= 2 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
            a[i - 1] != b[j - 1] && wb_eo_kept_value(p, j - 2, i - 2) + 1 == v) {
            i -= 2;
            j -= 2;
            v--;
            put(s, --w, WB_EO_TRANSPOSE, a0 + i, b0 + j);
            continue;
        }
        wb_eo_kept_deltas(p, j, i, &up, &down);
        if (up) {
            i--;
            v--;
            put(s, --w, WB_EO_DELETE, a0 + i, b0 + j);
            continue;
        }
        wb_eo_kept_deltas(p, j - 1, i, &up, &down);
        j--;
        if (j > 0 && down) {
            v--;
            put(s, --w, WB_EO_INSERT, a0 + i, b0 + j);
            continue;
        }
        i--;
        if (a[i] != b[j]) {
            v--;
            put(s, --w, WB_EO_REPLACE, a0 + i, b0 + j);
        }
    }
    /* what is left of one side: deletions, or insertions */
    while ((i > 0 || j > 0) && steps < budget) {
        steps++;
        if (i > 0) {
            i--;
            put(s, --w, WB_EO_DELETE, a0 + i, b0 + j);
        } else {
            j--;
            put(s, --w, WB_EO_INSERT, a0 + i, b0 + j);
        }
        v--;
    }
    s->ti = i;
    s->tj = j;
    s->tw = w;
    s->tval = v;
    *spent += steps;
    return i == 0 && j == 0;
}

/* ---- a split's best row ----------------------------------------------------- */

/* The rows (1..mm) of a pass's last column (snap: its snapshot) whose
 * value is known, [*lo, *hi] (row 0's always is). */
static void known_rows(const wb_eo_pass *p, bool snap, size_t mm, size_t *lo, size_t *hi) {
    if (snap && p->snap_at == 0) { /* column 0 */
        *lo = 1;
        *hi = mm;
        return;
    }
    size_t first = snap ? p->snap_first : p->first, end = snap ? p->snap_end : p->end;
    *lo = 64 * first + 1;
    *hi = min_size(mm, 64 * end);
}

/* A split's candidate rows i in order, for the cells of the middle
 * column (shift 0) or the transpositions over it (shift 2, OSA): the
 * left side's row i - shift and the right side's row mm - i known; i =
 * shift (the left side's row 0), the rows between, i = mm (the right
 * side's row 0). Range r of the three in [*lo, *hi] (empty: *lo > *hi). */
static void candidate_range(const wb_eo_pass *left, const wb_eo_pass *right, bool snap, size_t mm,
                            size_t shift, int r, size_t *lo, size_t *hi) {
    *lo = 1;
    *hi = 0;
    if (shift > mm) return;
    if (r == 0) {
        *lo = *hi = shift;
    } else if (r == 2) {
        if (mm > shift) *lo = *hi = mm;
    } else {
        size_t llo, lhi, rlo, rhi;
        known_rows(left, snap, mm, &llo, &lhi);
        known_rows(right, snap, mm, &rlo, &rhi);
        if (llo > lhi || rlo > rhi) return;
        *lo = max_size(max_size(llo + shift, mm - rhi), shift + 1);
        *hi = min_size(min_size(lhi + shift, mm - rlo), mm - 1);
    }
}

/* The scan, WB_EO_SCAN_PER_UNIT rows a unit: s->at counts the ranges of
 * the cells then those of the transpositions (OSA), s->scan_i the row. */
static bool scan(wb_eo *s, uint64_t budget, uint64_t *spent) {
    const wb_eo_pass *left = &s->pass[0], *right = &s->pass[1];
    size_t mm = s->t.a1 - s->t.a0, mid = (s->t.b1 - s->t.b0) / 2;
    const uint32_t *a = s->a + s->t.a0, *b = s->b + s->t.b0;
    size_t ranges = s->metric == WB_EO_OSA ? 6 : 3;
    uint64_t rows = 0, most = budget * WB_EO_SCAN_PER_UNIT;
    while (s->at < ranges && rows < most) {
        size_t kind = s->at / 3, lo, hi;
        candidate_range(left, right, kind == 1, mm, 2 * kind, (int)(s->at % 3), &lo, &hi);
        size_t i = s->scan_i > lo ? s->scan_i : lo;
        for (; i <= hi && rows < most; i++) {
            size_t l, r;
            rows++;
            if (kind == 0) {
                l = wb_eo_pass_value(left, i);
                r = wb_eo_pass_value(right, mm - i);
            } else {
                /* a[i - 2] a[i - 1] swapped give b[mid - 1] b[mid] */
                if (a[i - 1] != b[mid - 1] || a[i - 2] != b[mid] || a[i - 1] == a[i - 2]) continue;
                l = wb_eo_pass_snap_value(left, i - 2);
                r = wb_eo_pass_snap_value(right, mm - i);
            }
            if (l >= WB_EO_FAR || r >= WB_EO_FAR) continue;
            /* the first row of least sum; a transposition only where it
             * is less than every cell's */
            if (l + r + kind < s->best) {
                s->best = l + r + kind;
                s->best_row = i;
                s->best_left = l;
                s->best_right = r;
                s->best_swap = kind == 1;
            }
        }
        if (i > hi) {
            s->at++;
            s->scan_i = 0;
        } else {
            s->scan_i = i;
        }
    }
    *spent += rows / WB_EO_SCAN_PER_UNIT + 1;
    return s->at == ranges;
}

/* The halves of the best split, pushed (the left one on top). */
static bool push_halves(wb_eo *s) {
    wb_eo_task t = s->t;
    size_t mid = (t.b1 - t.b0) / 2, i = s->best_row, l = s->best_left, r = s->best_right;
    if (s->depth + 2 > sizeof s->stack / sizeof s->stack[0]) return false;
    wb_eo_task *st = s->stack;
    s->splits++;
    if (s->best_swap) {
        put(s, t.out + l, WB_EO_TRANSPOSE, t.a0 + i - 2, t.b0 + mid - 1);
        st[s->depth++] = (wb_eo_task){t.a0 + i, t.a1, t.b0 + mid + 1, t.b1, r, r, t.out + l + 1};
        st[s->depth++] = (wb_eo_task){t.a0, t.a0 + i - 2, t.b0, t.b0 + mid - 1, l, l, t.out};
    } else {
        st[s->depth++] = (wb_eo_task){t.a0 + i, t.a1, t.b0 + mid, t.b1, r, r, t.out + l};
        st[s->depth++] = (wb_eo_task){t.a0, t.a0 + i, t.b0, t.b0 + mid, l, l, t.out};
    }
    return true;
}

/* ---- the phases ---------------------------------------------------------------- */

/* Whether a half of mm x nn (a side of at least one) keeps its matrix
 * (k the band's bound, k_rf rapidfuzz's) or is split: rapidfuzz's rule
 * (Levenshtein: a matrix of bits under 1 MiB, or a source under 65
 * symbols, or a destination under 10) within this core's bound. */
static bool keeps(const wb_eo *s, size_t mm, size_t nn, size_t k, size_t k_rf) {
    wb_eo_metric metric = s->metric;
    if (nn <= 1) return true;
    size_t words = wb_eo_pass_width(metric, mm, nn, k) * wb_eo_pass_per(metric), bytes = 0;
    bool fits = add_bytes(&bytes, nn, words * sizeof(uint64_t) + 2 * sizeof(uint32_t)) &&
                bytes <= s->matrix_most;
    if (metric == WB_EO_INDEL) return fits;
    size_t band = k_rf < mm / 2 ? 2 * k_rf + 1 : mm;
    wb_fz_wide rf = (wb_fz_wide)2 * band * nn / 8;
    return fits && (rf < s->rf_matrix || mm < 65 || nn < 10);
}

/* the first half met that has both sides: the passes' blocks for it
 * (every half after it is within it) */
static bool ensure_vectors(wb_eo *s, size_t mm) {
    if (s->vectors) return true;
    size_t blocks = blocks_of(mm), bytes = 0;
    if (!add_bytes(&bytes, blocks, 16 * sizeof(uint64_t))) return false;
    if (!(s->vectors = take_block(s, bytes))) return false;
    s->vectors_bytes = bytes;
    return true;
}

static void drop_pattern(wb_eo *s, wb_fz_pattern *p, bool *live) {
    if (*live) wb_fz_pattern_free_with(p, s->free_later);
    *live = false;
}

/* the units of a probe's band of k over nn columns of mm rows */
static uint64_t band_units(size_t mm, size_t nn, size_t k) {
    return sat_mul(wb_eo_pass_width(WB_EO_LEVENSHTEIN, mm, nn, k), nn);
}

/* One phase's work on the half under way, within `left` units. */
static void phase_step(wb_eo *s, uint64_t left, uint64_t *spent) {
    wb_eo_task *t = &s->t;
    const uint32_t *a = s->a, *b = s->b;
    size_t mm = t->a1 - t->a0, nn = t->b1 - t->b0;
    switch (s->phase) {
    case PH_NEXT:
        *spent += 1;
        if (s->depth == 0) {
            if (!ensure_output(s, 0)) {
                fail(s);
                return;
            }
            s->done = true;
            return;
        }
        s->t = s->stack[--s->depth];
        s->phase = PH_PREFIX;
        return;
    case PH_PREFIX:
    case PH_SUFFIX: {
        size_t most = min_size(mm, nn), count = affordable(most, left, WB_EO_COMPARE_PER_UNIT);
        size_t k = 0;
        if (s->phase == PH_PREFIX) {
            while (k < count && a[t->a0 + k] == b[t->b0 + k])
                k++;
            t->a0 += k;
            t->b0 += k;
        } else {
            while (k < count && a[t->a1 - 1 - k] == b[t->b1 - 1 - k])
                k++;
            t->a1 -= k;
            t->b1 -= k;
        }
        *spent += units_of(k + 1, WB_EO_COMPARE_PER_UNIT);
        if (k == count && count < most) return; /* more to compare */
        s->phase = s->phase == PH_PREFIX ? PH_SUFFIX : PH_PLAN;
        return;
    }
    case PH_PLAN:
        *spent += 1;
        if (mm == 0 || nn == 0) {
            if (!ensure_output(s, mm + nn)) {
                fail(s);
                return;
            }
            s->at = 0;
            s->phase = PH_EMPTY;
            return;
        }
        if (!ensure_vectors(s, mm) || !wb_fz_pattern_alloc(&s->fwd, a + t->a0, mm)) {
            fail(s);
            return;
        }
        s->fwd_live = true;
        s->probe_k = 0;
        s->probe_units = 0;
        if (t->k == WB_EO_UNKNOWN && s->metric != WB_EO_INDEL && (wb_fz_wide)mm * nn >= PROBE_CELLS)
            s->probe_k = (mm > nn ? mm - nn : nn - mm) + PROBE_FIRST;
        s->at = 0;
        s->phase = PH_FILL;
        return;
    case PH_FILL:
        if (wb_fz_pattern_fill(&s->fwd, left, spent)) s->phase = s->probe_k ? PH_PROBE : PH_DECIDE;
        return;
    case PH_PROBE: {
        if (s->at == 0) {
            wb_eo_pass_init(&s->pass[0], s->metric, &s->fwd, b + t->b0, 1, nn, nn, s->probe_k,
                            s->vectors, 0);
            s->probe_units += band_units(mm, nn, s->probe_k);
            s->at = 1;
        }
        if (!wb_eo_pass_step(&s->pass[0], left, spent)) return;
        size_t d = wb_eo_pass_value(&s->pass[0], mm), next = s->probe_k * 2;
        s->at = 0;
        if (d <= s->probe_k) {
            t->k = d;
            s->phase = PH_DECIDE;
        } else if (next < s->probe_k || sat_add(s->probe_units, band_units(mm, nn, next)) >
                                            sat_mul(blocks_of(mm), nn) / 4) {
            s->phase = PH_DECIDE; /* no narrow band holds it */
        } else {
            s->probe_k = next;
        }
        return;
    }
    case PH_DECIDE: {
        *spent += 1;
        size_t most = max_size(mm, nn);
        s->kband = t->k != WB_EO_UNKNOWN ? t->k : most;
        size_t k_rf = t->k_rf != WB_EO_UNKNOWN ? min_size(t->k_rf, most) : most;
        if (keeps(s, mm, nn, s->kband, k_rf)) {
            wb_eo_pass_init(&s->pass[0], s->metric, &s->fwd, b + t->b0, 1, nn, nn, s->kband,
                            s->vectors, 0);
            if (!keep_matrix(s, mm, nn, s->kband)) {
                fail(s);
                return;
            }
            s->phase = PH_KEEP;
        } else {
            size_t mid = nn / 2;
            wb_eo_pass_init(&s->pass[0], s->metric, &s->fwd, b + t->b0, 1, nn, mid, s->kband,
                            s->vectors, s->metric == WB_EO_OSA && mid >= 2 ? mid - 1 : 0);
            s->phase = PH_LEFT;
        }
        return;
    }
    case PH_KEEP: {
        if (!wb_eo_pass_step(&s->pass[0], left, spent)) return;
        size_t d = wb_eo_pass_value(&s->pass[0], mm);
        drop_pattern(s, &s->fwd, &s->fwd_live);
        if (!ensure_output(s, d)) {
            fail(s);
            return;
        }
        s->ti = mm;
        s->tj = nn;
        s->tval = d;
        s->tw = t->out + d;
        s->phase = PH_TRACE;
        return;
    }
    case PH_TRACE:
        if (!trace(s, left, spent)) return;
        drop_keep(s);
        s->phase = PH_NEXT;
        return;
    case PH_EMPTY: {
        size_t d = mm + nn, count = affordable(d - s->at, left, WB_EO_EMIT_PER_UNIT);
        for (size_t r = s->at; r < s->at + count; r++) {
            if (mm > 0)
                put(s, t->out + r, WB_EO_DELETE, t->a0 + r, t->b0);
            else
                put(s, t->out + r, WB_EO_INSERT, t->a0, t->b0 + r);
        }
        s->at += count;
        *spent += units_of(count + 1, WB_EO_EMIT_PER_UNIT);
        if (s->at == d) s->phase = PH_NEXT;
        return;
    }
    case PH_LEFT:
        if (!wb_eo_pass_step(&s->pass[0], left, spent)) return;
        drop_pattern(s, &s->fwd, &s->fwd_live);
        if (!s->ra) {
            if (s->m > SIZE_MAX / sizeof(uint32_t) || !(s->ra = malloc(s->m * sizeof(uint32_t)))) {
                fail(s);
                return;
            }
            s->ra_done = 0;
        }
        s->phase = PH_REVERSE;
        return;
    case PH_REVERSE: {
        size_t count = affordable(s->m - s->ra_done, left, WB_EO_COMPARE_PER_UNIT);
        for (size_t x = s->ra_done; x < s->ra_done + count; x++)
            s->ra[x] = a[s->m - 1 - x];
        s->ra_done += count;
        *spent += units_of(count + 1, WB_EO_COMPARE_PER_UNIT);
        if (s->ra_done < s->m) return;
        if (!wb_fz_pattern_alloc(&s->rev, s->ra + (s->m - t->a1), mm)) {
            fail(s);
            return;
        }
        s->rev_live = true;
        s->phase = PH_RFILL;
        return;
    }
    case PH_RFILL: {
        if (!wb_fz_pattern_fill(&s->rev, left, spent)) return;
        size_t mid = nn / 2, cols = nn - mid;
        wb_eo_pass_init(&s->pass[1], s->metric, &s->rev, b + t->b1 - 1, -1, nn, cols, s->kband,
                        s->vectors + 8 * blocks_of(mm),
                        s->metric == WB_EO_OSA && cols >= 2 ? cols - 1 : 0);
        s->phase = PH_RIGHT;
        return;
    }
    case PH_RIGHT:
        if (!wb_eo_pass_step(&s->pass[1], left, spent)) return;
        drop_pattern(s, &s->rev, &s->rev_live);
        s->best = WB_EO_FAR;
        s->best_swap = false;
        s->at = 0;
        s->scan_i = 0;
        s->phase = PH_SCAN;
        return;
    case PH_SCAN:
        if (!scan(s, left, spent)) return;
        if (s->best >= WB_EO_FAR || !ensure_output(s, s->best) || !push_halves(s)) {
            fail(s);
            return;
        }
        s->phase = PH_NEXT;
        return;
    }
}

bool wb_eo_step(wb_eo *s, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    do
        phase_step(s, budget > spent ? budget - spent : 1, &spent);
    while (!s->done && spent < budget);
    if (s->broken) s->done = true;
    charge(used, spent);
    return s->done;
}

uint8_t *wb_eo_take(wb_eo *s, size_t *bytes) {
    uint8_t *out = s->out;
    *bytes = s->out_bytes;
    s->out = NULL;
    s->out_bytes = 0;
    return out;
}

void wb_eo_free(wb_eo *s) {
    drop_pattern(s, &s->fwd, &s->fwd_live);
    drop_pattern(s, &s->rev, &s->rev_live);
    drop_keep(s);
    give_block(s, s->vectors, s->vectors_bytes);
    s->vectors = NULL;
    wb_fz_free_block(s->ra, s->m * sizeof(uint32_t), s->free_later);
    s->ra = NULL;
    wb_fz_free_block(s->out, s->out_bytes, s->free_later);
    s->out = NULL;
}

uint64_t wb_eo_units(wb_eo_metric metric, size_t m, size_t n) {
    (void)metric;
    /* the levels of halves (a destination of n halves log2(n) times), the
     * matrix: its passes (the splits' twice over, halving, the kept one
     * at two a block, the probes a quarter), a column's rounding a level
     * (n), the patterns (two a level), affixes, scans, the traceback and
     * the records (m + n each) */
    uint64_t levels = 2, full = sat_mul(blocks_of(m), n);
    for (size_t x = n; x > 1; x /= 2)
        levels++;
    uint64_t per_level = sat_add(sat_add(sat_mul(2, wb_fz_pattern_units(m)), n), m + n);
    return sat_add(sat_add(sat_mul(5, full), sat_mul(levels, per_level)),
                   sat_add(sat_mul(4, sat_add(m, n)), 16));
}

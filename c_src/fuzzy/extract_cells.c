/*
 * cdist's cells from the search core's values (extract.h): for the
 * scorers whose score is their value's (Levenshtein, Indel, LCSseq and
 * the ratios, OSA, Hamming, the token scores on an index's sorted forms), a
 * row of cells in a tight loop, the float kinds' from a table by length
 * and value. The other scorers' cells come from extract_bars.c.
 */
#include "extract_keep.h"
#include "scores.h"

/* A cell's score from a candidate's distance d, as wb_fz_verdict gives it
 * without a bar (the same formulas, scores.h), inline in the cells'
 * loop: its call and its general tests cost cdist more than the lanes. */
static inline __attribute__((always_inline)) void cell_score(const wb_fz_options *o, bool ratio,
                                                             size_t m, size_t n, size_t d,
                                                             double *score, bool *passed) {
    if (ratio) {
        if (o->scorer == WB_FZ_QRATIO && n == 0) {
            *score = wb_fz_similarity_score(o->kind, 0.0, 100.0);
        } else {
            *score = wb_fz_similarity_score(o->kind, wb_fz_ratio_of(d, m + n), 100.0);
        }
        *passed = wb_fz_passes(o, *score);
        return;
    }
    size_t maximum = wb_fz_edit_maximum(o, m, n);
    size_t k = o->has_cutoff ? wb_fz_kernel_cutoff(o, maximum) : WB_FZ_NO_CUTOFF;
    if (k != WB_FZ_NO_CUTOFF && d > k) d = k + 1;
    *score = wb_fz_edit_score(o->kind, d, maximum);
    *passed = wb_fz_passes(o, *score) && (k == WB_FZ_NO_CUTOFF || d <= k);
}

/* The units of a row of the table of cells (cell_row): a score or two
 * divisions each */
#define CELL_ROW_UNITS (2 * WB_FZ_CELL_STRIDE)

/* Makes the table of cells' row for candidates of n symbols (n at most
 * WB_FZ_CELL_MOST, as the query): entry v the cell of value v, as
 * cell_score and store make it (the worst score of the kind beyond the
 * cutoff). A value past what n allows (none the search core gives) has
 * the cell of the most it allows. */
static __attribute__((noinline)) void cell_row(wb_fz_extract *job, size_t n) {
    const wb_fz_options *o = &job->lanes_o;
    const bool ratio = o->scorer == WB_FZ_RATIO || o->scorer == WB_FZ_QRATIO;
    const wb_search_op op = job->lanes_op;
    const size_t m = job->qlen;
    /* an LCS and equal positions reach the shorter length, a distance
     * the longer */
    size_t most =
        op == WB_SEARCH_LCS || op == WB_SEARCH_HAMMING ? (m < n ? m : n) : (m > n ? m : n);
    double worst = wb_fz_worst(o), *row = job->cell_table + n * WB_FZ_CELL_STRIDE;
    for (size_t v = 0; v < WB_FZ_CELL_STRIDE; v++) {
        double score;
        bool passed;
        cell_score(o, ratio, m, n, distance_of(op, o->scorer, m, n, v < most ? v : most), &score,
                   &passed);
        row[v] = passed ? score : worst;
    }
    job->cell_rows |= UINT64_C(1) << n;
}

/* The cell of a candidate of n symbols with value v, as cell_row makes
 * it, out of the table's loop */
static __attribute__((noinline)) double cell_of(const wb_fz_extract *job, size_t n, uint32_t v) {
    const wb_fz_options *o = &job->lanes_o;
    double score;
    bool passed;
    cell_score(o, o->scorer == WB_FZ_RATIO || o->scorer == WB_FZ_QRATIO, job->qlen, n,
               distance_of(job->lanes_op, o->scorer, job->qlen, n, v), &score, &passed);
    return passed ? score : wb_fz_worst(o);
}

/* plain_cells' loop for the float kinds with a query of at most
 * WB_FZ_CELL_MOST symbols: a candidate's cell read from the table of
 * cells by its length and value (its row made the first time), no
 * division in the loop; the longer candidates' (Levenshtein's values)
 * made as plain_cells makes them. The lengths from the index's bytes of
 * them when it has them, not two offsets. */
static inline __attribute__((always_inline)) size_t table_cells(wb_fz_extract *job, size_t i,
                                                                uint64_t room, uint64_t *units,
                                                                bool *general, const bool wide) {
    const wb_search_set *set = job->set;
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = set->offsets;
    const uint8_t *length = set->prepared ? set->prepared->length : NULL;
    const uint64_t *spaced = job->one_token ? set->prepared->spaced : NULL;
    const bool levenshtein = job->lanes_op == WB_SEARCH_LEVENSHTEIN;
    const double *table = job->cell_table;
    const size_t count = set->count;
    uint8_t *const cells = job->cells;
    const uint64_t each = 1 + CELL_UNITS;
    uint64_t u = *units;
    /* in a local: the stores into cells could alias the job */
    uint64_t rows = job->cell_rows;
    for (; i < count && u < room; i++) {
        uint32_t v = values[i];
        if ((!levenshtein && v == WB_SEARCH_NOT_DONE) ||
            (spaced && (spaced[i / 64] >> (i % 64)) & 1)) {
            *general = true;
            break;
        }
        size_t n = length ? length[i] : (size_t)(offsets[i + 1] - offsets[i]);
        u += each;
        double score;
        if (n <= WB_FZ_CELL_MOST && v < WB_FZ_CELL_STRIDE) {
            if (!((rows >> n) & 1)) {
                cell_row(job, n);
                rows |= UINT64_C(1) << n;
                u += CELL_ROW_UNITS;
            }
            score = table[n * WB_FZ_CELL_STRIDE + v];
        } else {
            score = cell_of(job, (size_t)(offsets[i + 1] - offsets[i]), v);
        }
        if (wide) {
            memcpy(cells + 8 * i, &score, 8);
        } else {
            float f = (float)score;
            memcpy(cells + 4 * i, &f, 4);
        }
    }
    *units = u;
    return i;
}

/* table_cells for cells of 8 bytes and of 4, out of line: in a loop of
 * their own, their values stay in registers */
static __attribute__((noinline)) size_t wide_cells(wb_fz_extract *job, size_t i, uint64_t room,
                                                   uint64_t *units, bool *general) {
    return table_cells(job, i, room, units, general, true);
}

static __attribute__((noinline)) size_t narrow_cells(wb_fz_extract *job, size_t i, uint64_t room,
                                                     uint64_t *units, bool *general) {
    return table_cells(job, i, room, units, general, false);
}

/* A row of cdist's cells from the search core's values, from candidate i
 * on (bytes are symbols, the scorer's score is its value's: no partial,
 * Jaro or Damerau-Levenshtein), until `units` reach `room` or one is for
 * the other paths (*general): returns the next candidate (with
 * job->failed when out of memory). */
static size_t plain_cells(wb_fz_extract *job, size_t i, uint64_t room, uint64_t *units,
                          bool *general) {
    const wb_search_set *set = job->set;
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = set->offsets;
    const uint64_t *spaced = job->one_token && set->prepared ? set->prepared->spaced : NULL;
    const wb_fz_options o = job->lanes_o;
    const bool ratio = o.scorer == WB_FZ_RATIO || o.scorer == WB_FZ_QRATIO;
    const wb_search_op op = job->lanes_op;
    const size_t m = job->qlen, count = set->count;
    const uint64_t each = 1 + CELL_UNITS;
    /* the float kinds' cells from the table (the token scores with the
     * index's note of whitespace) */
    if (!job->integers && m <= WB_FZ_CELL_MOST && (!job->one_token || spaced)) {
        if (!job->cell_table && !(job->cell_table = malloc(WB_FZ_CELL_STRIDE * WB_FZ_CELL_STRIDE *
                                                           sizeof *job->cell_table))) {
            job->failed = true;
            return i;
        }
        return job->width == 8 ? wide_cells(job, i, room, units, general)
                               : narrow_cells(job, i, room, units, general);
    }
    uint64_t u = *units;
    for (; i < count && u < room; i++) {
        uint32_t v = values[i];
        size_t n = (size_t)(offsets[i + 1] - offsets[i]);
        if ((op != WB_SEARCH_LEVENSHTEIN && v == WB_SEARCH_NOT_DONE) ||
            (job->one_token &&
             (spaced ? (spaced[i / 64] >> (i % 64)) & 1 : has_space(set->bytes + offsets[i], n)))) {
            *general = true;
            break;
        }
        u += each + (job->one_token && !spaced ? n / 8 : 0);
        double score;
        bool passed;
        cell_score(&o, ratio, m, n, distance_of(op, o.scorer, m, n, v), &score, &passed);
        store(job, i, score, job->integers && score > 0 && score < 0x1p64 ? (uint64_t)score : 0,
              passed);
        if (job->unfit) {
            i++;
            break;
        }
    }
    *units = u;
    return i;
}

bool wb_fz_extract_cells_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used) {
    size_t count = job->set->count, i = job->next;
    uint64_t units = 0, check_at = SPENT_PART;
    bool general = false; /* candidate i is for the other paths */
    /* every cell in a tight loop, a part at a time */
    while (i < count && !general && !job->unfit && !job->failed) {
        uint64_t spent = *used + units - start;
        if (units > 0 && spent >= budget) break;
        if (units >= check_at) {
            if (slice_spent(job)) break;
            check_at = units + SPENT_PART;
        }
        uint64_t left = budget - spent, part = left < SPENT_PART ? left : SPENT_PART;
        i = plain_cells(job, i, units + part, &units, &general);
    }
    job->next = i;
    *used += units;
    return i == count || general || job->unfit || job->failed;
}

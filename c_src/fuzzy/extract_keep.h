/*
 * What the parts of the extract engine share (extract.c: the search's
 * course, the pair scorer, the search core's values; extract_bars.c: the
 * scores from those values, the value bars, the seeds; extract_cells.c:
 * cdist's cells from those values): limits, and the keeping of hits and
 * cells, inline in all.
 * Internal to them: the engine's users include extract.h.
 */
#ifndef WB_FUZZY_EXTRACT_KEEP_H
#define WB_FUZZY_EXTRACT_KEEP_H

#include "extract.h"

#include <stdlib.h>
#include <string.h>

/* How many candidates the seeds are picked from (seed_step): on the
 * lab's set (a 20-letter query, 100,000 words of 10-30 letters, limit
 * 5), the partial ratio's worst seed was the worst kept in the end from
 * 128 picks (2,216 candidates scored, 5,000 with none; 64 picks: 2,821),
 * Damerau-Levenshtein's bar of OSA distances from 512 (780 candidates'
 * rows, as with an OSA distance for each of the 1,600 that could better
 * the seeds in order; 128 picks: 1,342) */
#define PARTIAL_PICKS 128
#define DAMERAU_PICKS 512

/* The units of a step's part after which it asks whether the slice's
 * time is up (the config's `spent`: in the
 * runtime, wb_slice_spent, a clock read): about 6 us of work, at the
 * 1.9-2.4 ns a unit the runtime learns of searches and cdist. A unit's
 * cost varies with the caches (an index's batches ran 3-4x slower after
 * any pause), so a step sized on the average can run a slice long: of
 * cdist's slices in :auto beside another worker (the slice 18 us), 1.4%
 * ran 30 us or more and 8-11% 20 us or more without the parts, 0.7% and
 * 3-5% with them (and the values freed at once, wb_fz_extract_free). */
#define SPENT_PART 3000

/* Whether the host's time for the step is up. */
static inline bool slice_spent(const wb_fz_extract *job) {
    return job->spent && job->spent(job->spent_context);
}

/* Whether n bytes hold whitespace (the token scores' separators in bytes
 * and in ASCII). */
static inline bool has_space(const uint8_t *b, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (wb_fz_ascii_space(b[k])) return true;
    return false;
}

/* whether score x (value xv) ranks before y (yv): the integer kinds by
 * their exact values */
static inline bool better(const wb_fz_extract *job, double x, uint64_t xv, double y, uint64_t yv) {
    if (!job->integers) return wb_fz_better(job->o.kind, x, y);
    return job->o.kind == WB_FZ_DISTANCE ? xv < yv : xv > yv;
}

/* whether x ranks after y: a worse score, or the same from a later candidate */
static inline bool worse(const wb_fz_extract *job, const wb_fz_hit *x, const wb_fz_hit *y) {
    if (better(job, y->score, y->value, x->score, x->value)) return true;
    return !better(job, x->score, x->value, y->score, y->value) && x->index > y->index;
}

static inline void sift_down(const wb_fz_extract *job, wb_fz_hit *heap, size_t len, size_t at) {
    for (;;) {
        size_t child = 2 * at + 1, top = at;
        if (child < len && worse(job, &heap[child], &heap[top])) top = child;
        if (child + 1 < len && worse(job, &heap[child + 1], &heap[top])) top = child + 1;
        if (top == at) return;
        wb_fz_hit t = heap[at];
        heap[at] = heap[top];
        heap[top] = t;
        at = top;
    }
}

/* A row's cell: the score, or the worst of its kind beyond the cutoff
 * (an integer kind's `value`, exact); a value past the cell's type ends
 * the job (unfit). */
static inline void store(wb_fz_extract *job, size_t i, double score, uint64_t value, bool passed) {
    if (!passed) score = wb_fz_worst(&job->o);
    if (!passed && job->integers && !wb_fz_worst_value(&job->o, &value)) {
        job->unfit = WB_FZ_EXTRACT_PAST_U64;
        return;
    }
    uint8_t *cell = job->cells + job->width * i;
    if (job->width == 8 && job->integers) {
        memcpy(cell, &value, 8);
    } else if (job->width == 8) {
        memcpy(cell, &score, 8);
    } else if (job->integers) {
        if (value > UINT32_MAX) {
            job->unfit = WB_FZ_EXTRACT_PAST_CELL;
            job->unfit_value = value;
            return;
        }
        uint32_t v = (uint32_t)value;
        memcpy(cell, &v, 4);
    } else {
        /* the float kinds are in 0.0..100.0: a float holds them, rounded */
        float v = (float)score;
        memcpy(cell, &v, 4);
    }
}

/* Keeps a hit among the `limit` best; false when out of memory. */
static inline bool keep(wb_fz_extract *job, wb_fz_hit h) {
    job->kept_generation++;
    if (job->heap_len == job->limit) {
        if (!worse(job, &job->heap[0], &h)) return true;
        job->heap[0] = h;
        sift_down(job, job->heap, job->heap_len, 0);
        return true;
    }
    if (job->heap_len == job->heap_room) {
        size_t room = job->heap_room ? 2 * job->heap_room : 64;
        if (room > job->limit) room = job->limit;
        if (room > SIZE_MAX / sizeof(wb_fz_hit)) return false;
        wb_fz_hit *grown = realloc(job->heap, room * sizeof(wb_fz_hit));
        if (!grown) return false;
        job->heap = grown;
        job->heap_room = room;
    }
    size_t at = job->heap_len++;
    job->heap[at] = h;
    while (at > 0 && worse(job, &job->heap[at], &job->heap[(at - 1) / 2])) {
        wb_fz_hit t = job->heap[at];
        job->heap[at] = job->heap[(at - 1) / 2];
        job->heap[(at - 1) / 2] = t;
        at = (at - 1) / 2;
    }
    return true;
}

/* Candidate i's score (an integer kind's exactly, `value`): into the
 * cdist row, or among the hits kept (candidates come in order: one no
 * better than the worst kept, once `limit` are, loses the tie and ends
 * here); false when out of memory. */
static inline bool record_value(wb_fz_extract *job, size_t i, double score, uint64_t value,
                                bool passed, wb_fz_bar badness) {
    if (job->cells) {
        store(job, i, score, value, passed);
        return true;
    }
    if (!passed) return true;
    if (job->heap_len == job->limit &&
        !better(job, score, value, job->heap[0].score, job->heap[0].value))
        return true;
    return keep(job, (wb_fz_hit){score, value, i, badness});
}

/* The same for the scores of unit costs (the quick scores, the search
 * core's values): integers far below 2^53 where they are integers, which
 * a double holds exactly. */
static inline bool record(wb_fz_extract *job, size_t i, double score, bool passed,
                          wb_fz_bar badness) {
    uint64_t value = job->integers && score > 0 && score < 0x1p64 ? (uint64_t)score : 0;
    return record_value(job, i, score, value, passed, badness);
}

/* A row of cdist scores every candidate, with a division and a store:
 * about 8 ns a candidate beyond a search's, which its one unit did not
 * count (the runtime learned 6.2 ns a unit from cdist, 2.4 from
 * searches, so a step sized on the search core's units ran several
 * slices long); 3 units more bring cdist's to 1.9 ns a unit. */
#define CELL_UNITS 3

/* The distance a value of the search core's gives for a pair of m and n
 * symbols: from the LCS the Indel distance (LCSseq's: the longer length
 * less it), Hamming's from the equal positions, Levenshtein's and OSA's
 * as they are */
static inline size_t distance_of(wb_search_op op, wb_fz_scorer scorer, size_t m, size_t n,
                                 size_t v) {
    if (op == WB_SEARCH_LCS) return scorer == WB_FZ_LCS_SEQ ? (m > n ? m : n) - v : m + n - 2 * v;
    return op == WB_SEARCH_HAMMING ? (m > n ? m : n) - v : v;
}

/* extract_bars.c: the seeds (true when done), and the scores from the
 * search core's values from job->next on (true when done with them or
 * at a candidate for the other paths), until the budget */
bool wb_fz_extract_seed_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used);
bool wb_fz_extract_lanes_scores(wb_fz_extract *job, uint64_t budget, uint64_t start,
                                uint64_t *used);

/* extract_cells.c: cdist's cells from the search core's values (no
 * partial, Jaro or Damerau-Levenshtein; bytes are symbols) from
 * job->next on, as wb_fz_extract_lanes_scores */
bool wb_fz_extract_cells_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used);

/* The hits' alignments (extract_align.c), once sorted: about `budget`
 * units from `start` in *used; true once done (or failed). */
bool wb_fz_extract_align_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used);

/* Starts decoding a candidate of `len` bytes into the job's text block
 * (grown to hold it, 64 symbols at least): false when out of memory (the
 * job then failed). One unit. */
static inline bool begin_decoding(wb_fz_extract *job, size_t len, uint64_t *used) {
    if (len > job->text_room || !job->text) {
        size_t room = len > 64 ? len : 64;
        uint32_t *grown = room <= SIZE_MAX / sizeof(uint32_t)
                              ? realloc(job->text, room * sizeof(uint32_t))
                              : NULL;
        if (!grown) {
            job->failed = true;
            return false;
        }
        job->text = grown;
        job->text_room = room;
    }
    job->decoding = true;
    memset(&job->decoded, 0, sizeof job->decoded);
    *used += 1;
    return true;
}

#endif

/*
 * The library's fuzzy C core as the bench drives it (wb_fzbench.cpp): a
 * pair scored as Fuzzy.score/3's job scores it (the bytes decoded into
 * symbols, the pair started, stepped to the end, freed), and one query
 * against an index of candidates (a packed set with its batches made
 * once, as Fuzzy.Index holds it) through the extract engine, with a
 * limit (extract/3) or a row of cells (cdist). Pure C, over the core's
 * public headers only; the bench's C++ side never sees them.
 *
 * Scores are of the kind `Fuzzy.score/3` gives by default, the
 * normalized similarity (0..1), in byte mode, with no cutoff.
 */
#ifndef WB_FZBENCH_OURS_H
#define WB_FZBENCH_OURS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The scorers, in the core's order (fuzzy.h's wb_fz_scorer): their count
 * and names. */
size_t fzb_scorers(void);
const char *fzb_scorer_name(size_t scorer);

/* Room for the symbols of pairs of up to `most` bytes a side. */
typedef struct {
    uint32_t *a, *b;
    size_t most;
} fzb_pair_room;

bool fzb_pair_room_init(fzb_pair_room *r, size_t most);
void fzb_pair_room_free(fzb_pair_room *r);

/* The normalized similarity of a and b (each at most r->most bytes) by
 * `scorer`, as Fuzzy.score/3 computes it at the C level; false when out
 * of memory or a side is too long. */
bool fzb_pair(fzb_pair_room *r, size_t scorer, const uint8_t *a, size_t m, const uint8_t *b,
              size_t n, double *score);

/* The Levenshtein edit script of a into b (each at most r->most bytes),
 * as Fuzzy.editops/3's job makes it (bytes decoded into symbols, the
 * script made to its end, its records' block handed over): the records
 * (fzb_editops_record) in *script, the caller's to free, NULL when
 * empty; their count in *distance. false when out of memory or a side is
 * too long. */
bool fzb_editops(fzb_pair_room *r, const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                 uint8_t **script, size_t *distance, size_t *width);
/* Record k of a script: its type (0 insert, 1 delete, 2 replace, 3
 * transpose), source and destination positions. */
void fzb_editops_record(const uint8_t *script, size_t width, size_t k, int *type, size_t *src,
                        size_t *dest);

/* An index of candidates (its set and batches, owned). */
typedef struct fzb_index fzb_index;

/* From `count` candidates, candidate i at bytes[offsets[i] ..
 * offsets[i + 1]); NULL when out of memory. */
fzb_index *fzb_index_new(const uint8_t *bytes, const uint64_t *offsets, size_t count);
void fzb_index_free(fzb_index *x);
size_t fzb_index_count(const fzb_index *x);

/* One query against every candidate of the index by `scorer`: with
 * `cells` (room for fzb_index_count doubles) every candidate's score in
 * order (cdist, limit ignored); without, the `limit` best (extract/3),
 * their indexes and scores written to index_out and score_out (room for
 * `limit`) and their number to *hits. false when the engine fails. */
bool fzb_extract(const fzb_index *x, size_t scorer, const uint8_t *query, size_t qlen, size_t limit,
                 double *cells, uint64_t *index_out, double *score_out, size_t *hits);

#ifdef __cplusplus
}
#endif

#endif

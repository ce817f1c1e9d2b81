/*
 * Many short candidates against one query, several per vector: the lane
 * kernels behind the search core (search.c). Internal to c_src/search/.
 *
 * Each candidate of 1..64 bytes is the pattern of a bit-parallel
 * Levenshtein automaton (Myers/Hyyro) in one lane of a 64-byte vector:
 * 64 lanes of 8 bits, 32 of 16, 16 of 32 or 8 of 64, the narrowest its
 * length and the query's allow. The query is the text: each step reads
 * one query byte and loads the match masks of every lane at once from a
 * table built for the batch, so a batch of up to 64 candidates costs one
 * vector step per query byte. Distances do not depend on which string is
 * the pattern.
 *
 * The same C source is compiled for the baseline instruction set and, on
 * x86-64, for AVX2 and AVX-512; the best one the CPU has is chosen at run
 * time, and tests can force any of them, or none.
 */
#ifndef WB_SEARCH_LANES_H
#define WB_SEARCH_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WB_LANES_BYTES           64 /* bytes per batch vector */
#define WB_LANES_MAX             64 /* lanes of 8 bits */
#define WB_LANES_LONGEST         64 /* longest candidate a lane holds */
#define WB_LANES_WINDOW          4096 /* candidates of an index sorted together: 16 KiB of distances */
#define WB_LANES_JARO_QUERY_MOST 64 /* longest query of Jaro's batches */

/* What the lanes compute (lanes_run.h): the Levenshtein distance, the
 * length of the longest common subsequence, the OSA distance (adjacent
 * transpositions), the number of equal positions (Hamming), or Jaro's
 * matches and transpositions (a query of at most WB_LANES_JARO_QUERY_MOST
 * bytes). */
typedef enum {
    WB_LANES_LEVENSHTEIN = 0,
    WB_LANES_LCS,
    WB_LANES_OSA,
    WB_LANES_HAMMING,
    WB_LANES_JARO,
    WB_LANES_OPS
} wb_lanes_op;

typedef enum {
    WB_LANES_OFF = 0,  /* no batches: one candidate at a time */
    WB_LANES_BASELINE, /* the compiler's baseline (SSE2 on x86-64) */
    WB_LANES_AVX2,
    WB_LANES_AVX512,
    WB_LANES_KERNELS
} wb_lanes_kernel;

/* A query's side of the batches. A table's row r holds, lane by lane,
 * the positions where the query byte of row r occurs in that lane's
 * candidate; rows[c] is the row of byte c: one per distinct query byte,
 * and one more shared by every other byte (if any), written but never
 * read. Four tables, for up to four batches in flight. */
typedef unsigned char (*wb_lanes_table)[WB_LANES_BYTES];
typedef struct {
    wb_lanes_table table[4]; /* 64-byte aligned, distinct (+ 1) rows each */
    size_t distinct;
    size_t bytes; /* the tables' size */
    uint8_t rows[256];
    uint8_t bytes_of_rows[256];
} wb_lanes_query;

/* false when out of memory (nothing allocated) */
bool wb_lanes_query_init(wb_lanes_query *q, const uint8_t *query, size_t qlen);
void wb_lanes_query_free(wb_lanes_query *q);

/* A batch of candidates, resumable between query bytes. Lane l's
 * vertical deltas are in vp/vn (bit i: between rows i and i + 1 of the
 * column of the last query byte done), so its distance to the query's
 * first pos bytes is pos + popcount(vp & mask) - popcount(vn & mask): no
 * score is carried from step to step. */
typedef struct {
    wb_lanes_op op; /* set by the user of the batch, kept by start and load */
    unsigned width; /* bits per lane: 8, 16, 32 or 64 */
    unsigned used;  /* lanes holding a candidate */
    size_t pos;     /* query bytes done */
    bool hopeless;  /* every lane ended up over `bound` */
    size_t bound;   /* the cutoff of the last wb_lanes_run */
    /* the candidates of the lanes: an index's (wb_lanes_start), or NULL
     * for `index` below (wb_lanes_load) */
    const uint64_t *of_index;
    uint64_t index[WB_LANES_MAX];
    /* the vectors between runs; no alignment promised (a runtime job's
     * state is only 8-byte aligned) */
    unsigned char vp[WB_LANES_BYTES];
    unsigned char vn[WB_LANES_BYTES];
    unsigned char d0[WB_LANES_BYTES]; /* OSA: the last step's d0 and match masks */
    unsigned char pm[WB_LANES_BYTES];
    unsigned char mask[WB_LANES_BYTES];  /* a lane's len low bits; 0 when unused */
    unsigned char score[WB_LANES_BYTES]; /* the distances, once pos is the query's length */
} wb_lanes;

/* The candidate in lane l. */
static inline uint64_t wb_lanes_candidate(const wb_lanes *b, unsigned l) {
    return b->of_index ? b->of_index[l] : b->index[l];
}

/* The lane width for a candidate of n bytes and a query of qlen: 0 when
 * no lane holds it (n of 0 or over 64). A lane's score reaches at most
 * max(n, qlen). */
static inline unsigned wb_lanes_width(size_t n, size_t qlen) {
    if (n == 0 || n > WB_LANES_LONGEST) return 0;
    unsigned w = n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 64;
    while (w < 64 && qlen > (UINT64_C(1) << w) - 1)
        w *= 2;
    return w;
}
/* 0, 1, 2, 3 for widths 8, 16, 32, 64 */
static inline unsigned wb_lanes_slot(unsigned width) {
    return width == 8 ? 0 : width == 16 ? 1 : width == 32 ? 2 : 3;
}
static inline unsigned wb_lanes_count(unsigned width) {
    return (WB_LANES_BYTES * 8) >> (3 + wb_lanes_slot(width)); /* no division */
}

/* Batches made once for a candidate set (an index; lanes_index.c): the
 * candidates of 1..64 bytes, window by window of WB_LANES_WINDOW candidates, by lane
 * width, by length within a width (so a batch's lengths are close and a
 * cutoff can pass over it whole; and the distances a batch writes fall in
 * one window's part of the result, which stays in the cache), each batch with
 * its match table: a row per byte its candidates hold, row 0 all zeros,
 * and after them the lanes' masks. A query then only reads rows; nothing
 * is built per search. */
typedef struct {
    uint8_t width, used;
    uint8_t min_len, max_len;
    uint32_t rows;       /* how many rows it has (at most 256), the masks after them */
    uint64_t first_row;  /* the batch's row 0, in the index's rows */
    uint64_t first_lane; /* its candidates: lane_index[first_lane .. + used) */
    uint8_t map[256];    /* byte -> row of the batch (0: none holds it) */
} wb_lanes_batch;

#define WB_LANES_LENGTH_MOST 255

typedef struct wb_lanes_index {
    size_t count; /* batches */
    wb_lanes_batch *batches;
    wb_lanes_table rows;  /* 64-byte aligned */
    uint64_t *lane_index; /* the candidates of the batches, batch after batch */
    uint8_t *lane_len;    /* and their lengths */
    uint64_t *rest;       /* the other candidates (empty, over 64 bytes), in order */
    size_t rest_count;
    /* bit i: candidate i holds ASCII whitespace (the token scorers' test,
     * made once here) */
    uint64_t *spaced;
    /* candidate i's length, WB_LANES_LENGTH_MOST for that or more: what a
     * pass over every candidate reads in a byte, not two offsets */
    uint8_t *length;
    size_t bytes; /* memory held */
} wb_lanes_index;

/* Builds the batches of `count` candidates; false when out of memory
 * (nothing allocated). */
bool wb_lanes_index_build(wb_lanes_index *x, const uint8_t *bytes, const uint64_t *offsets,
                          size_t count);

/* The same a budget at a time: the building under way, its phase and
 * cursors (the scan of a long candidate stops inside it). */
typedef struct {
    int phase;
    bool failed, open; /* out of memory; a batch is being filled */
    size_t i;          /* the phase's candidate, lane or batch cursor */
    uint64_t k;        /* and byte cursor */
    size_t laned, capacity, r, at, rows, distinct;
    unsigned lanes; /* of the batch being filled */
    size_t window, window_end, window_laned;
    size_t starts[WB_LANES_LONGEST + 2];
    /* wb_lanes_index_begin_like: the batches whose layout is taken (NULL:
     * none, or given up) */
    const struct wb_lanes_index *like;
} wb_lanes_builder;

typedef enum {
    WB_LANES_BUILDING = 0,
    WB_LANES_BUILT,
    WB_LANES_BUILD_ENOMEM, /* nothing left allocated */
} wb_lanes_build_status;

/* Starts building x (nothing allocated yet: wb_lanes_index_free frees
 * what a building stopped half-way holds). */
void wb_lanes_index_begin(wb_lanes_index *x, wb_lanes_builder *b);
/* Starts building x laid out as `like`, the batches of another set of as
 * many candidates (read, not changed, until the building ends): where
 * every candidate is as long as like's and holds no byte its batch of
 * like lacks (as the sorted tokens of a set's candidates are to them),
 * x gets like's batches, lanes and lengths copied, and only its spaces
 * and rows made from its own bytes. At the first candidate that differs
 * the building starts over as wb_lanes_index_begin's (x's answers are
 * the same either way; the work before, up to a pass over x's bytes, is
 * lost). */
void wb_lanes_index_begin_like(wb_lanes_index *x, wb_lanes_builder *b,
                               const struct wb_lanes_index *like);
/* Does about `budget` units (at least one; a unit is about a nanosecond's
 * work), adds them to *used. bytes, offsets and count are the same at
 * every step. */
wb_lanes_build_status wb_lanes_index_step(wb_lanes_index *x, wb_lanes_builder *b,
                                          const uint8_t *bytes, const uint64_t *offsets,
                                          size_t count, uint64_t budget, uint64_t *used);
/* An upper bound of the units building `count` candidates of `bytes`
 * bytes in all takes (usually within 2x). */
uint64_t wb_lanes_index_units(size_t count, uint64_t bytes);
void wb_lanes_index_free(wb_lanes_index *x);

/* Starts a batch of x: b gets its lanes, masks and starting vectors. */
void wb_lanes_start(wb_lanes *b, const wb_lanes_index *x, const wb_lanes_batch *batch);

/* Fills table q->table[which] (0..3) for b->index[0 .. b->used)
 * (candidate i being bytes[offsets[i] .. offsets[i + 1])) and starts the
 * batch: bit by bit with the baseline kernel (the portable way), by byte
 * compares with the AVX2 (SSE2 compares) and AVX-512 ones. */
void wb_lanes_load(wb_lanes_kernel kernel, wb_lanes *b, const wb_lanes_query *q, unsigned which,
                   const uint8_t *bytes, const uint64_t *offsets);

/* Up to max_steps query bytes (row of byte c: table[rows[c]]) (at least one unless done); returns
 * how many. Stops early, with b->hopeless, once no lane can end at or under bound. Jaro (a
 * query of at most 64 bytes) does the whole batch, both passes, and returns twice the query's
 * length. */
size_t wb_lanes_run(wb_lanes_kernel kernel, wb_lanes *b, const wb_lanes_table table,
                    const uint8_t *rows, const uint8_t *query, size_t qlen, size_t bound,
                    size_t max_steps);

/* Two batches of the same width at the same query byte (c with its own
 * table and rows), stepped together: up to max_steps bytes in both; stops
 * once either is hopeless, the same steps done in both. */
size_t wb_lanes_run2(wb_lanes_kernel kernel, wb_lanes *b, const wb_lanes_table table,
                     const uint8_t *rows, wb_lanes *c, const wb_lanes_table other_table,
                     const uint8_t *other_rows, const uint8_t *query, size_t qlen, size_t bound,
                     size_t max_steps);

/* Whether the kernel steps four batches at once (wb_lanes_run4). */
bool wb_lanes_has_run4(wb_lanes_kernel kernel);

/* Four batches of the same width at the same query byte (q[i] with its
 * own table and rows), stepped together: up to max_steps bytes in all;
 * a batch found hopeless is flagged and stepped on with the others, and
 * they stop once all four are hopeless. Each step asks for the row of its
 * query byte in fetch_tables[i] (by fetch_rows[i]) to be brought into the
 * cache: the batches to come. Only where wb_lanes_has_run4. */
size_t wb_lanes_run4(wb_lanes_kernel kernel, wb_lanes *const q[4], const wb_lanes_table tables[4],
                     const uint8_t *const rows[4], const wb_lanes_table fetch_tables[4],
                     const uint8_t *const fetch_rows[4], const uint8_t *query, size_t qlen,
                     size_t bound, size_t max_steps);

/* A finished batch's score in a lane (meaningful unless hopeless): its
 * operation's distance, LCS or equal positions. */
static inline uint64_t wb_lanes_score(const wb_lanes *b, unsigned lane) {
    const unsigned char *at = b->score + (size_t)lane * (b->width / 8);
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;
    switch (b->width) {
    case 8:
        return *at;
    case 16:
        memcpy(&v16, at, sizeof v16);
        return v16;
    case 32:
        memcpy(&v32, at, sizeof v32);
        return v32;
    default:
        memcpy(&v64, at, sizeof v64);
        return v64;
    }
}

/* The kernel searches use: the best the CPU has, or the one forced. */
wb_lanes_kernel wb_lanes_current(void);
bool wb_lanes_supported(wb_lanes_kernel kernel);
/* For tests: use this kernel from now on (false if the CPU lacks it);
 * WB_LANES_KERNELS returns to the automatic choice. Not thread-safe. */
bool wb_lanes_force(wb_lanes_kernel kernel);
const char *wb_lanes_name(wb_lanes_kernel kernel);

#endif

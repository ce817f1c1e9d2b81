/*
 * One query against many candidates: the Levenshtein distance to each
 * (distances), or the `limit` closest (nearest). Pure C, no erl_nif; the
 * NIF glue (c_src/nif/search_job.c) makes it a runtime job.
 *
 * Candidates are a packed set: their bytes one after another and the
 * offset of each. A search is a state advanced by wb_search_step in bounded
 * amounts of work, so any scheduler can slice it.
 *
 * In byte mode, candidates of 1..64 bytes go in batches of up to 64, one
 * per vector lane (lanes.h): a batch costs one vector step per query
 * byte, and stops once no lane can come under the cutoff. Longer
 * candidates of up to WB_SEARCH_WORD_LONGEST bytes (search.c), with a
 * query of at most 64 bytes, take one bit-parallel step per byte
 * (Myers/Hyyro, one machine word, the query's match table built once per
 * search) and stop as soon as they cannot come under the cutoff. A length
 * difference beyond the cutoff costs nothing, and a cutoff of at most 3
 * takes no table (mbleven). Anything else (a longer query with a longer
 * candidate, a longer candidate still, codepoint mode) goes through the
 * pair core (metric/levenshtein_text.h), resumable: a step can end inside a
 * candidate, so no step is much longer than its budget; in byte mode with
 * the query's pattern made once per search (wb_lev_pattern).
 *
 * In codepoint mode, an ASCII query in a set marked ASCII is searched in
 * byte mode. A search steps two batches of one lane width at once, an
 * index four where the kernel can (AVX-512).
 *
 * A set can come with its batches made once (wb_lanes_index_build, for an
 * index): then nothing is built per search, and a batch whose lengths are
 * all too far from the query's costs nothing.
 *
 * Candidates in batches finish out of input order; nearest still breaks
 * ties by input order, and distances are stored by index.
 *
 * The batches also compute, for the fuzzy scorers (wb_search_init_op),
 * the longest common subsequence (Indel and the ratios), the OSA distance
 * and Hamming's equal positions of every candidate they hold: the same
 * tables, another step per query byte (lanes_run.h).
 *
 * Unit of work (about 3 ns here): one scalar step (a candidate byte
 * against the query, the pair core's estimate on its path), two per
 * vector step of a batch, one per 2 lanes of a finished batch, one per
 * candidate plus one per 2 bytes put in a batch (its masks in the query's
 * table; none with batches made once).
 */
#ifndef WB_SEARCH_H
#define WB_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../metric/levenshtein_text.h"
#include "../text/sized_alloc.h"
#include "lanes.h"

/* Candidates: candidate i is bytes[offsets[i] .. offsets[i + 1]). */
typedef struct {
    size_t count;
    const uint8_t *bytes;
    const uint64_t *offsets; /* count + 1 entries, offsets[0] == 0 */
    /* the batches made once for this set (an index), or NULL */
    const wb_lanes_index *prepared;
    /* every byte is ASCII (below 0x80), as its maker found while writing
     * them (false when unknown): codepoints are then bytes */
    bool ascii;
} wb_search_set;

/* A set that owns its arrays (built by the caller, freed here). */
typedef struct {
    wb_search_set set;
    uint8_t *bytes;
    uint64_t *offsets;
    size_t owned_bytes;
} wb_search_owned_set;

/* A set's batches made once (an index): searches of a set whose
 * `prepared` points at them skip making them. The NIF glue uses these,
 * not lanes.h. */
typedef wb_lanes_index wb_search_batches;
/* false when out of memory (nothing left allocated) */
bool wb_search_batches_build(wb_search_batches *b, const wb_search_set *set);
/* The same a budget at a time (wb_lanes_index_step): a building under
 * way, begun by wb_search_batches_begin; a building stopped half-way is
 * freed by wb_search_batches_free. */
typedef wb_lanes_builder wb_search_batches_builder;
void wb_search_batches_begin(wb_search_batches *b, wb_search_batches_builder *builder);
wb_lanes_build_status wb_search_batches_step(wb_search_batches *b,
                                             wb_search_batches_builder *builder,
                                             const wb_search_set *set, uint64_t budget,
                                             uint64_t *used);
/* An upper bound of the units of building the batches of `count`
 * candidates of `bytes` bytes in all. */
uint64_t wb_search_batches_units(size_t count, uint64_t bytes);
void wb_search_batches_free(wb_search_batches *b);
/* bytes they hold */
size_t wb_search_batches_bytes(const wb_search_batches *b);

/* Allocates room for `count` candidates of `total` bytes; false when out
 * of memory (nothing left allocated). The caller then writes
 * offsets[1..count] and the bytes. */
bool wb_search_set_alloc(wb_search_owned_set *s, size_t count, size_t total);
void wb_search_set_free(wb_search_owned_set *s);

typedef struct {
    uint32_t distance;
    uint32_t pad;
    uint64_t index;
} wb_search_hit;

typedef enum {
    WB_SEARCH_OK = 0,
    WB_SEARCH_ENOMEM,
    WB_SEARCH_EUTF8_QUERY,     /* codepoint mode: the query is not UTF-8 */
    WB_SEARCH_EUTF8_CANDIDATE, /* codepoint mode: candidate `failed_at` is not */
    /* candidate `failed_at`'s distance (or its cutoff + 1) is past the
     * 32-bit distances and hits (a side of 4 GiB or more): never capped */
    WB_SEARCH_ETOO_FAR,
} wb_search_status;

#define WB_SEARCH_NO_LIMIT SIZE_MAX

/* What a search computes for each candidate (wb_search_init_op): the
 * Levenshtein distance, or, for the candidates of 1..64 bytes that go in
 * batches, the length of the longest common subsequence with the query,
 * the OSA distance, the number of equal positions (Hamming), or Jaro's
 * matches and transpositions (WB_SEARCH_JARO_*; a query of at most 64
 * bytes, else none). */
typedef enum {
    WB_SEARCH_LEVENSHTEIN = WB_LANES_LEVENSHTEIN,
    WB_SEARCH_LCS = WB_LANES_LCS,
    WB_SEARCH_OSA = WB_LANES_OSA,
    WB_SEARCH_HAMMING = WB_LANES_HAMMING,
    WB_SEARCH_JARO = WB_LANES_JARO,
} wb_search_op;

/* Jaro's value of a candidate: its matches with the query, and the
 * transpositions (before halving) from bit 8. */
#define WB_SEARCH_JARO_MATCHES(v)        ((v)&0xffu)
#define WB_SEARCH_JARO_TRANSPOSITIONS(v) ((v) >> 8)

/* The value of a candidate wb_search_init_op leaves to its caller. */
#define WB_SEARCH_NOT_DONE UINT32_MAX

typedef struct {
    const wb_search_set *set;
    wb_search_op op;
    uint8_t *query; /* owned copy */
    size_t qlen;
    bool codepoints;
    size_t max_distance; /* WB_SEARCH_NO_LIMIT or k */
    size_t limit;        /* nearest: how many hits; 0: distances */
    size_t next;         /* next candidate */
    bool fast;           /* byte mode, query of 1..64 bytes */
    uint64_t peq[256];   /* fast path: the query's match table */
    /* batches: the kernel, the query's tables, the candidates waiting for
     * batches by lane width (8, 16, 32, 64: `group` batches' worth, started
     * together: 4 where the kernel steps four, else 2) and the batch under
     * way */
    wb_lanes_kernel kernel;
    wb_lanes_query lanes;
    unsigned group;
    size_t waiting_len[4];
    uint64_t waiting[4][4 * WB_LANES_MAX];
    /* a candidate's place by its length n: 1 + the slot of its lane
     * width, 0 outside the batches (looked up: the lengths of a list come
     * in no order the processor could predict a branch on) */
    uint8_t lane_slot[WB_LANES_LONGEST + 1];
    bool running;
    /* the batches under way: 1, 2 or 4 of one lane width at the same query
     * byte (independent chains of vector steps for the processor to
     * overlap), each with its table and rows: the query's, or a prepared
     * batch's */
    unsigned flying;
    wb_lanes batch[4];
    wb_lanes_table batch_table[4];
    const uint8_t *batch_rows[4];
    /* four in flight: the tables and rows of the batches to come, whose
     * rows the steps fetch as they go */
    wb_lanes_table fetch_table[4];
    const uint8_t *fetch_rows[4];
    /* with a prepared set: the next batch, the next other candidate, and
     * in a batch whose lanes are too narrow for the query, its next lane */
    size_t next_batch, next_rest, next_lane;
    /* the pair core on candidate pair_index, under way */
    bool pair_running;
    size_t pair_index;
    wb_lev pair;
    /* byte mode: the query's match table for the pair core, built once,
     * when a candidate first needs it */
    wb_lev_pattern pattern;
    /* distances: one per candidate (k + 1 above the cutoff) */
    uint32_t *distances;
    /* nearest: a max-heap of the best hits so far, by (distance, index);
     * once every candidate is taken, sorted in place a budget at a time
     * (heapsort): heap[0 .. unsorted) is still a heap, the rest in order */
    wb_search_hit *heap;
    size_t heap_len;
    bool sorting;
    size_t unsorted;
    wb_search_status status;
    size_t failed_at;
    size_t owned_bytes;
} wb_search;

/* Where the blocks of results come from (every distance, the nearest
 * hits): malloc/free unless set; set once, before any search. A host
 * whose allocator keeps freed memory avoids a page fault per 4 KiB of a
 * fresh block on every search. wb_search_free gives them to its free;
 * wb_search_free_with to the release it is given, which must match. */
typedef wb_sized_allocator wb_search_block_allocator;

void wb_search_set_block_allocator(const wb_search_block_allocator *allocator);

/* Prepares a search of `query` (copied) in `set` (which must outlive the
 * search). limit 0 computes every distance; limit > 0 keeps the `limit`
 * nearest candidates within max_distance. Distances above max_distance
 * are max_distance + 1. In codepoint mode, an ASCII query in an ASCII set
 * is searched in byte mode (the same distances, the byte kernels). */
wb_search_status wb_search_init(wb_search *s, const wb_search_set *set, const uint8_t *query,
                                size_t qlen, bool codepoints, size_t max_distance, size_t limit);

/* Prepares the values of `op` for every candidate of `set`, with no
 * cutoff (wb_search_init with limit 0, for WB_SEARCH_LEVENSHTEIN). For
 * the other operations only the candidates the batches hold get a value
 * (1..64 bytes, a query of at least one byte, byte mode or an ASCII query
 * in an ASCII set, batches on): the others are WB_SEARCH_NOT_DONE, for the
 * caller to compute. */
wb_search_status wb_search_init_op(wb_search *s, const wb_search_set *set, const uint8_t *query,
                                   size_t qlen, bool codepoints, wb_search_op op);

/* Does about `budget` units (at least one candidate), adds them to *used;
 * true when finished (or stopped by an error, see s->status). */
bool wb_search_step(wb_search *s, uint64_t budget, uint64_t *used);

/* The instruction set of the batches of short candidates that searches
 * use on this CPU ("baseline", "avx2", "avx512", or "off"). */
const char *wb_search_lanes_name(void);

/* Packing a candidate: copies n bytes and answers their OR (as
 * wb_text_or_bytes: below 0x80 when ASCII). The short copies most
 * candidates are done in two overlapping moves of words, OR-ed on the
 * way: a compiler makes a copy whose size it knows to be bounded a
 * `rep movs`, which costs ~20 cycles to start. */
static inline uint8_t wb_search_copy_bytes(uint8_t *to, const uint8_t *from, size_t n) {
    uint64_t w[4];
    if (n >= 8 && n <= 16) {
        memcpy(&w[0], from, 8);
        memcpy(&w[1], from + n - 8, 8);
        memcpy(to, &w[0], 8);
        memcpy(to + n - 8, &w[1], 8);
        w[2] = w[3] = 0;
    } else if (n > 16 && n <= 32) {
        memcpy(&w[0], from, 16);
        memcpy(&w[2], from + n - 16, 16);
        memcpy(to, &w[0], 16);
        memcpy(to + n - 16, &w[2], 16);
    } else {
        memcpy(to, from, n);
        return wb_text_or_bytes(from, n);
    }
    return wb_text_or_word(w[0] | w[1] | w[2] | w[3]);
}

/* Whether a search in codepoint mode of `query` in `set` is the same in
 * byte mode: an ASCII set and an ASCII query. Looks at most `most` query
 * bytes (a longer query: false). */
bool wb_search_bytes_suffice(const wb_search_set *set, const uint8_t *query, size_t qlen,
                             size_t most);

/* Units a search of `count` candidates of `bytes` bytes in all will take,
 * estimated without looking at them; `prepared`: with batches made once. */
uint64_t wb_search_predict(size_t count, uint64_t bytes, size_t qlen, bool codepoints,
                           bool prepared);
/* Units that sorting `hits` hits of nearest takes, once every candidate is
 * done (to add to the prediction). */
uint64_t wb_search_sort_units(size_t hits);

/* nearest, once finished: the hits by (distance, index), and their number. */
size_t wb_search_hits(const wb_search *s, const wb_search_hit **hits);

/* Bytes owned from init on, and the query's table once built (not the
 * tables of a long candidate under way in the pair core, held from one
 * step to the next until it is done). */
size_t wb_search_memory(const wb_search *s);
void wb_search_free(wb_search *s);
/* The same, its blocks of results given to release(block, bytes) (a
 * host that frees large blocks elsewhere than where the search ran). */
void wb_search_free_with(wb_search *s, void (*release)(void *block, size_t bytes));

#endif

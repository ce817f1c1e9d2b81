/*
 * One query against many candidates with a fuzzy scorer: the `limit` best
 * candidates within the cutoff, best first, ties by input order (extract),
 * or every candidate's score written into a row of cells, in order
 * (cdist). Pure C, no erl_nif: the NIF glue (c_src/nif/fuzzy_job.c)
 * decodes the terms, makes it a runtime job and builds the result terms.
 *
 * Candidates are a packed set (search.h: their bytes one after another
 * and the offset of each; an index's batches made once, or none). An
 * extract is a state advanced by wb_fz_extract_step in bounded amounts
 * of work (the units of kernels.h, about 2 ns each), so any scheduler can
 * slice it:
 *
 *   wb_fz_extract_init(x, config)      prepares; the set and the cells
 *                                      must outlive the extract, the
 *                                      query its first steps
 *   wb_fz_extract_step(x, budget, used) about `budget` units, at least
 *                                      some; true once done (or stopped
 *                                      by an error: wb_fz_extract_status)
 *   wb_fz_extract_hits(x, &hits)       the hits, once done
 *   wb_fz_extract_free(x)              frees it, done or not
 *
 * The paths a candidate takes, fastest first: the search core's values
 * (search.h: every Levenshtein distance of unit costs; the LCS, OSA
 * distance, Hamming's equal positions and Jaro's matches of the short
 * candidates its batches hold) turned into scores, or into bounds that
 * end most candidates of a search with a limit before their bytes are
 * read (the value bars, the seeds); the quick scores (fuzzy.h) for short
 * candidates; the pair scorer (wb_fz_start_with) for the rest, resumable
 * inside a candidate. Every path gives the score wb_fz_score gives.
 */
#ifndef WB_FUZZY_EXTRACT_H
#define WB_FUZZY_EXTRACT_H

#include "../search/search.h"
#include "fuzzy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an extract is asked: `limit` hits (SIZE_MAX: all within the
 * cutoff), or with `cells` a row of cdist: a cell of `width` bytes (4 or
 * 8) per candidate, in order (a float or a double, an unsigned integer
 * of 32 or 64 bits for an edit distance's own scores; the worst score of
 * the kind beyond the cutoff), `limit` then ignored. */
typedef struct {
    const wb_search_set *set;
    const uint8_t *query; /* copied, in the first steps */
    size_t query_len;
    wb_fz_options o;
    size_t limit;
    uint8_t *cells;
    size_t width;
    /* an index's candidates with their tokens sorted and joined by one
     * space (split at wb_fz_ascii_space), in the set's order (NULL: none
     * kept): the token sort scores then score the query's tokens sorted
     * against them with the ratio (the partial ratio), the same scores,
     * where the tokens are bytes (codepoints: both sides ASCII) */
    const wb_search_set *sorted;
    /* asked between parts of a step (NULL: never): true once the host's
     * time for the step is up, and the step ends there */
    bool (*spent)(void *context);
    void *spent_context;
    /* where the search core's blocks of values go when freed (NULL: its
     * own free, search.h's wb_search_free) */
    void (*release)(void *block, size_t bytes);
    /* where the query's symbols and the pair scorer's token blocks come
     * from and go back to (NULL: malloc and free): a host gives large
     * blocks back off its schedulers */
    void *(*block_alloc)(size_t bytes);
    void (*block_free)(void *block, size_t bytes);
    /* where the engine's own large blocks (of malloc: the query's copy,
     * its pattern's tables) go when freed (NULL: free at once): a host
     * frees them off its schedulers */
    void (*free_later)(void *block, size_t bytes);
} wb_fz_extract_config;

typedef enum {
    WB_FZ_EXTRACT_OK = 0,
    WB_FZ_EXTRACT_ENOMEM,
    WB_FZ_EXTRACT_EUTF8_QUERY,     /* codepoint mode: the query is not UTF-8 */
    WB_FZ_EXTRACT_EUTF8_CANDIDATE, /* codepoint mode: candidate `at` is not */
    WB_FZ_EXTRACT_PAST_U64,        /* a score past 2^64 - 1 */
    WB_FZ_EXTRACT_PAST_CELL,       /* a score (`at`) past a 32-bit cell */
    /* candidate `at`'s Levenshtein distance is past the search core's
     * 32-bit values */
    WB_FZ_EXTRACT_PAST_LANES,
    /* hamming without padding (no_pad): candidate `at` is not as long as
     * the query (wb_fz_extract_lengths) */
    WB_FZ_EXTRACT_UNEQUAL_CANDIDATE,
} wb_fz_extract_status;

/* A hit: the candidate's index and its score (the integer kinds' exactly
 * in `value`) */
typedef struct {
    double score;
    uint64_t value;
    uint64_t index;
    wb_fz_bar badness; /* quick scores: for the bar (den 0: none) */
} wb_fz_hit;

/* A candidate picked for a seed: its bound's badness */
typedef struct {
    wb_fz_bar bound;
    size_t index;
} wb_fz_seed_pick;

/* The longest query (bytes) the search core's values serve: its set-up
 * reads the query at once, about 1.5 ns a byte */
#define WB_FZ_EXTRACT_LANES_QUERY_MOST 16384

/* the value bars' longest candidates, and the seeds' largest limit */
#define WB_FZ_VALUE_BAR_MOST 256
#define WB_FZ_SEED_MOST      64

/* cdist's table of cells: candidates and queries of at most
 * WB_FZ_CELL_MOST symbols */
#define WB_FZ_CELL_MOST   63
#define WB_FZ_CELL_STRIDE (WB_FZ_CELL_MOST + 1)

/* The state of an extract (its fields are the engine's own). */
typedef struct {
    wb_fz_options o;
    const wb_search_set *set;
    bool (*spent)(void *context);
    void *spent_context;
    void (*release)(void *block, size_t bytes);
    void *(*block_alloc)(size_t bytes);
    void (*block_free)(void *block, size_t bytes);
    void (*free_later)(void *block, size_t bytes);
    /* the query's set-up, the first steps' work (extract.c, query_step):
     * its bytes copied from query_from (the caller's, until copied),
     * decoded, its pattern made, then the paths chosen (ready) */
    bool ready, bad_query;
    const uint8_t *query_from;
    size_t copied;
    wb_fz_decoding query_decoded;
    uint32_t *query;
    size_t qlen, qlen_room; /* its symbols, and the room of its block */
    wb_fz_pattern pattern;  /* the query's, made once */
    bool has_pattern;
    /* the token scores: the query's token work (split, sorted, joined,
     * its repeats dropped), done once in the set-up for every candidate
     * the pair scorer takes (wb_fz_start_tokens), and the pattern of its
     * sorted tokens joined (the partial token scores' needle) */
    bool tokens_on, tokens_live, tokens_through, sorted_live, tokens_done;
    wb_fz query_tokens;
    wb_fz_pattern sorted_pattern;
    bool quick_on; /* short candidates take quick scores */
    /* or the quick partial ratio serves the partial token scores and
     * WRatio of single tokens (lanes_scores) */
    bool quick_single;
    wb_fz_quick quick;
    uint8_t *query_input; /* the query as given (the search core's) */
    size_t query_input_len;
    /* the search core's values first (its vector lanes, the batches an
     * index made once): Levenshtein with unit costs every distance; the
     * LCS (Indel, LCSseq and the ratios), OSA and Hamming for the
     * candidates its batches hold, the others left to the paths below;
     * then the scores */
    bool lanes_on, lanes_live, lanes_done;
    wb_search_op lanes_op;
    /* the token scores of a query of one token: the ratio, for every
     * candidate of one token (the others by the other paths) */
    bool one_token;
    /* the partial ratios and WRatio: the LCS bounds the score; only a
     * candidate whose bound can rank (or pass the cutoff) is scored, by
     * the other paths */
    bool partial;
    /* With a limit, once it is reached: the candidates that cannot rank
     * before the worst kept, known from their value alone, in a tight
     * loop (skip_below). For a candidate of n symbols (n <=
     * WB_FZ_VALUE_BAR_MOST), the bar on its value at value_bar[n], found
     * for the worst kept of generation bar_seen[n] (a kept hit makes a
     * new one): the least value that may rank where more is better (an
     * LCS, Hamming's or Jaro's matches), the most where less is (a
     * distance). The worst kept only gets better, so a bar moves one way
     * only, found from where it was. */
    uint32_t value_bar[WB_FZ_VALUE_BAR_MOST + 1];
    uint32_t bar_seen[WB_FZ_VALUE_BAR_MOST + 1];
    uint32_t kept_generation;
    bool value_bars, more_is_better;
    /* the cutoff alone bars values while fewer than the limit are kept */
    bool cutoff_bars;
    /* skip_below's look past the candidate it stops at: those from
     * ahead_from up to ahead_to are passed over, and ahead_to (when
     * ahead_hit) is the next that may rank, its bytes asked into the
     * cache while the one before is scored */
    size_t ahead_from, ahead_to;
    bool ahead_hit;
    uint64_t ahead_units;  /* theirs, counted when they are reached */
    wb_fz_options lanes_o; /* the options the values are scored by exactly */
    /* Jaro and Jaro-Winkler with a limit: the best score a candidate of n
     * bytes (n <= 64) with M matches can have, whatever its
     * transpositions and prefix, at jaro_top[n * 65 + M] (a hair above,
     * for rounding): the value bars on the matches (may_rank) */
    double *jaro_top;
    wb_search lanes;
    uint32_t *text; /* the candidate under way, decoded */
    size_t text_room;
    /* its decoding under way */
    bool decoding;
    wb_fz_decoding decoded;
    size_t next; /* the next candidate to start */
    bool scoring;
    wb_fz fz;
    /* the kept hits: a heap whose root is the worst, then sorted */
    wb_fz_hit *heap;
    size_t heap_len, heap_room, limit, unsorted;
    bool sorting, failed;
    /* a row of cdist: a cell per candidate, the worst score of the kind
     * for those beyond the cutoff */
    uint8_t *cells;
    size_t width;
    /* cdist's cells of the float kinds from the search core's values:
     * the cell of a candidate of n symbols with value v at
     * cell_table[n * WB_FZ_CELL_STRIDE + v] (n, v at most
     * WB_FZ_CELL_MOST), its row made when the first such candidate comes
     * (bit n of cell_rows) */
    double *cell_table;
    uint64_t cell_rows;
    bool integers; /* the scores are integers (hits and cells exact) */
    /* a score that does not fit (WB_FZ_EXTRACT_PAST_*), the extract ends
     * there */
    wb_fz_extract_status unfit;
    uint64_t unfit_value;
    size_t failed_at; /* codepoint mode: a candidate that is not UTF-8 (+ 1) */
    /* hamming without padding: the first candidate of another length than
     * the query (+ 1), and its length in symbols; the extract ends there */
    size_t unequal_at, unequal_len;
    /* Seeds, for a search with a limit of at most WB_FZ_SEED_MOST: the
     * partial ratios (but WRatio) and Damerau-Levenshtein with a
     * normalized score. Before the scores, a pass over the values picks
     * the pick_most candidates of the best bounds from their LCS
     * (seed_bound), then their scores (the partial ratio itself; OSA's
     * distance, never below Damerau-Levenshtein's) give the worst of the
     * limit best, seed_worst in seed_scores or seed (badness). A
     * candidate past it cannot rank (as many others are at least as good,
     * and pass the cutoff if it does): its bound ends it (partial_bound)
     * or its rows (lanes_scores), before any hit is kept. The pass skips
     * a candidate whose LCS is below seed_bar[n] (0: not made since the
     * bar moved; the last, for WB_LANES_LENGTH_MOST bytes or more,
     * never): its bound is no better than pick_bar, the worst of
     * pick_most picks. */
    bool seeding, seed_on;
    size_t seed_next, seed_scored, pick_len, pick_most, seed_len, seed_worst;
    wb_fz_seed_pick *pick; /* 2 pick_most (owned) */
    wb_fz_bar pick_bar;
    /* one more for the seed being weighed */
    wb_fz_bar seed[WB_FZ_SEED_MOST + 1];
    double seed_scores[WB_FZ_SEED_MOST + 1];
    uint32_t seed_bar[WB_LANES_LENGTH_MOST + 1];
    /* Jaro with a limit: the similarity below which none ranks
     * (jaro_tau), made for the worst kept of generation jaro_tau_seen */
    double jaro_tau;
    uint32_t jaro_tau_seen;
    /* the hits' alignments (the config's o.alignment; `o` has it off: the
     * candidates are scored without), found once the hits are sorted,
     * the first `aligned` of them so far (extract_align.c) */
    bool align;
    wb_fz_alignment *aligns;
    size_t aligned;
} wb_fz_extract;

/* A text's tokens (split at wb_fz_ascii_space) sorted by their bytes and
 * joined by one space into `out` (room for n bytes), as an index keeps
 * its candidates' (the config's `sorted`): the length, or SIZE_MAX when
 * out of memory. */
size_t wb_fz_sorted_tokens(const uint8_t *text, size_t n, uint8_t *out);

/* Prepares an extract (x need not be zeroed), work that does not grow
 * with the query (its copy, decoding and pattern are the first steps'):
 * WB_FZ_EXTRACT_OK, or ENOMEM with nothing left allocated. The query's
 * bytes are read until the steps have copied them: they must outlive
 * the steps until then (a host copies them first, or keeps them). */
wb_fz_extract_status wb_fz_extract_init(wb_fz_extract *x, const wb_fz_extract_config *c);
/* About `budget` units, added to *used; true once done, or stopped by an
 * error (wb_fz_extract_status). */
bool wb_fz_extract_step(wb_fz_extract *x, uint64_t budget, uint64_t *used);
/* Once stopped: WB_FZ_EXTRACT_OK, or what stopped it (EUTF8_QUERY: the
 * query is not UTF-8, found in the first steps), with *at the
 * candidate or the value it names (EUTF8_CANDIDATE, PAST_CELL,
 * PAST_LANES). */
wb_fz_extract_status wb_fz_extract_status_of(const wb_fz_extract *x, uint64_t *at);
/* Once stopped by WB_FZ_EXTRACT_UNEQUAL_CANDIDATE: the query's length and
 * the candidate's, in symbols. */
void wb_fz_extract_lengths(const wb_fz_extract *x, uint64_t *query_len, uint64_t *candidate_len);
/* Once done with WB_FZ_EXTRACT_OK, without cells: the hits, best first,
 * ties by index, and their number. */
size_t wb_fz_extract_hits(const wb_fz_extract *x, const wb_fz_hit **hits);
/* Whether an extract of these options finds its hits' alignments: the
 * ratio's and the partial ratio's, with o.alignment (the query is a,
 * each candidate b, in symbols; a pair's, whether or not it passes the
 * cutoff, as wb_fz gives it); then, once done, the hits' alignments in
 * their order (NULL otherwise). */
bool wb_fz_extract_aligns(const wb_fz_options *o);
const wb_fz_alignment *wb_fz_extract_alignments(const wb_fz_extract *x);
/* Bytes the extract holds now. */
size_t wb_fz_extract_memory(const wb_fz_extract *x);
void wb_fz_extract_free(wb_fz_extract *x);

/* The units an extract of a query of query_len bytes in `set` will take
 * (an estimate, from the lengths alone), and those of its init. */
uint64_t wb_fz_extract_units(const wb_fz_options *o, const wb_search_set *set, const uint8_t *query,
                             size_t query_len);
uint64_t wb_fz_extract_setup_units(size_t query_len);
/* The units of the alignments of an extract's hits (at most `limit`;
 * SIZE_MAX: all), 0 when not asked (wb_fz_extract_aligns). */
uint64_t wb_fz_extract_align_units(const wb_fz_options *o, const wb_search_set *set,
                                   size_t query_len, size_t limit);

#ifdef __cplusplus
}
#endif

#endif

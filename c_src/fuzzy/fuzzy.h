/*
 * Fuzzy scores of two sequences: the scorers (edit distances, Jaro, and
 * the ratios built on the Indel distance: partial, token sort, token set,
 * WRatio), each a resumable computation over the kernels of kernels.h.
 *
 * Pure C, no erl_nif: the NIF glue (c_src/nif/fuzzy_job.c) decodes the
 * arguments into symbols (bytes, or codepoints: wb_fz_symbols) and makes a
 * score, or a search of many candidates, a runtime job.
 *
 * Every scorer gives a score of the kind asked for:
 *   - edit distances (levenshtein, indel, osa, damerau_levenshtein,
 *     hamming, lcs_seq, prefix, postfix): an integer distance d and the
 *     largest distance the two lengths allow, `maximum`; similarity =
 *     maximum - d, normalized distance = d / maximum (0.0 when maximum is
 *     0), normalized similarity = 1.0 - normalized distance. lcs_seq,
 *     prefix and postfix are similarities at heart (rapidfuzz's LCSseq,
 *     Prefix, Postfix): the longest common subsequence, prefix or suffix
 *     s, maximum = max(m, n), d = maximum - s;
 *   - jaro, jaro_winkler: a similarity s in 0.0 .. 1.0; distance and
 *     normalized distance 1.0 - s, normalized similarity s;
 *   - the ratios: a similarity s in 0.0 .. 100.0; distance 100.0 - s,
 *     normalized similarity s / 100.0, normalized distance 1.0 - s / 100.0.
 * With a cutoff, a distance passes when it is at most the cutoff, a
 * similarity when it is at least the cutoff.
 */
#ifndef WB_FUZZY_H
#define WB_FUZZY_H

#include "../metric/kernels.h"
#include "../text/utf8.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The scorers, by the names the Elixir side gives them (its atoms;
 * WB_FZ_SCORER_NAMES in this order; a test compares the two lists). */
typedef enum {
    WB_FZ_LEVENSHTEIN,
    WB_FZ_INDEL,
    WB_FZ_OSA,
    WB_FZ_DAMERAU_LEVENSHTEIN,
    WB_FZ_HAMMING,
    WB_FZ_LCS_SEQ,
    WB_FZ_PREFIX,
    WB_FZ_POSTFIX,
    WB_FZ_JARO,
    WB_FZ_JARO_WINKLER,
    WB_FZ_RATIO,
    WB_FZ_PARTIAL_RATIO,
    WB_FZ_TOKEN_SORT_RATIO,
    WB_FZ_TOKEN_SET_RATIO,
    WB_FZ_TOKEN_RATIO,
    WB_FZ_PARTIAL_TOKEN_SORT_RATIO,
    WB_FZ_PARTIAL_TOKEN_SET_RATIO,
    WB_FZ_PARTIAL_TOKEN_RATIO,
    WB_FZ_WRATIO,
    WB_FZ_QRATIO,
    WB_FZ_SCORERS
} wb_fz_scorer;

#define WB_FZ_SCORER_NAMES                                                                         \
    {                                                                                              \
        "levenshtein", "indel", "osa", "damerau_levenshtein", "hamming", "lcs_seq", "prefix",      \
            "postfix", "jaro", "jaro_winkler", "ratio", "partial_ratio", "token_sort_ratio",       \
            "token_set_ratio", "token_ratio", "partial_token_sort_ratio",                          \
            "partial_token_set_ratio", "partial_token_ratio", "wratio", "qratio"                   \
    }

typedef enum {
    WB_FZ_DISTANCE,
    WB_FZ_SIMILARITY,
    WB_FZ_NORMALIZED_DISTANCE,
    WB_FZ_NORMALIZED_SIMILARITY,
    WB_FZ_KINDS
} wb_fz_kind;

#define WB_FZ_KIND_NAMES                                                                           \
    { "distance", "similarity", "normalized_distance", "normalized_similarity" }

typedef struct {
    wb_fz_scorer scorer;
    wb_fz_kind kind;
    bool codepoints; /* symbols are codepoints: Unicode white space splits tokens */
    bool has_cutoff;
    double cutoff;
    /* the integer kinds (wb_fz_integers): the cutoff exactly, when
     * exact_cutoff (the NIF's); otherwise taken from `cutoff` (a distance
     * passes at most its floor, a similarity at least its ceiling) */
    bool exact_cutoff;
    uint64_t icutoff;
    uint64_t ins, del, sub; /* levenshtein's costs */
    double prefix_weight;   /* jaro_winkler's */
    /* hamming's `pad: false`: sides of different lengths are an error (a
     * score's `unequal`, a search's WB_FZ_EXTRACT_UNEQUAL_CANDIDATE), not
     * padded; false (zero) pads, the default */
    bool no_pad;
    /* ratio and partial_ratio: where the score is (wb_fz's alignment) */
    bool alignment;
} wb_fz_options;

/* Where a ratio's score is (o.alignment), as rapidfuzz's ScoreAlignment:
 * [src_start, src_end) of a and [dest_start, dest_end) of b, in symbols.
 * The ratio's is the whole of both; the partial ratio's the shorter side
 * whole and its best window in the longer, picked among equal windows as
 * rapidfuzz-cpp's partial_ratio_alignment picks it (parts.c). */
typedef struct {
    size_t src_start, src_end, dest_start, dest_end;
} wb_fz_alignment;

/* The partial ratio's alignment under way, a direction of its windows
 * at a time (parts.c): the best of each of rapidfuzz's groups, visited
 * in its order, and the best direction so far. */
typedef struct {
    /* the whole windows but the last: the best LCS, its position and the
     * level of rapidfuzz's halving that visits it (found: an LCS > 0);
     * top: the best holds the whole needle */
    bool whole_found, top;
    size_t whole_lcs, whole_at, whole_level;
    /* a bound on the LCS of the dominated windows ahead (that of the
     * window before them) */
    size_t chain;
    /* the prefixes' best (the shortest), the windows from the last whole
     * one on (the longest) */
    double prefix_best, suffix_best;
    size_t prefix_len, suffix_start;
    /* the best direction's score and alignment (kept_score < 0: none) */
    double kept_score;
} wb_fz_aligner;

/* Whether the kind is a distance (lower is better). */
static inline bool wb_fz_kind_is_distance(wb_fz_kind kind) {
    return kind == WB_FZ_DISTANCE || kind == WB_FZ_NORMALIZED_DISTANCE;
}

/* Whether score x ranks before y for this kind. */
static inline bool wb_fz_better(wb_fz_kind kind, double x, double y) {
    return wb_fz_kind_is_distance(kind) ? x < y : x > y;
}

/* A ratio under way: Indel-based similarities of derived sequences,
 * whole (ratio) or the best window of the longer (partial). */
typedef struct {
    bool partial;
    const uint32_t *x, *y;
    size_t xl, yl;
    size_t total;  /* ratio: the lengths its distance is measured against */
    double w1, w2; /* the similarity is multiplied by w1, then by w2 */
    double result; /* its similarity, once done */
    /* a ratio's common prefix and suffix, found before its LCS kernel
     * (trim: 0 the prefix under way, 1 the suffix, 2 both found) */
    size_t pre, suf;
    unsigned char trim;
} wb_fz_part;

#define WB_FZ_PARTS 4
/* derived sequences of this many symbols and fewer live in the state */
#define WB_FZ_SMALL 512
/* and the tokens of pairs of up to WB_FZ_SMALL / 2 symbols in all: a's
 * and b's (m / 2 + 1 and n / 2 + 1 at most), and as many to sort into */
#define WB_FZ_SMALL_TOKENS (WB_FZ_SMALL / 2 + 4)

/* A token: a run of symbols that are not white space. */
typedef struct {
    const uint32_t *at;
    size_t len;
} wb_fz_token;

/* The token work of the token scorers under way (fuzzy.c): split, sort,
 * join, drop repeats, intersect, each phase resumable a budget at a
 * time (wb_fz_step), each token comparison charged by the symbols it
 * reads and resumable within. */
typedef struct {
    int phase;
    bool sorted_joins, sets;    /* what the scorer needs */
    size_t at;                  /* count, split: the next symbol, of a then of b (m + j) */
    size_t start;               /* split: where the token under way began (SIZE_MAX: none) */
    size_t a_count, b_count;    /* the tokens of each side */
    wb_fz_token *block;         /* a's, b's, then room to sort each into (or small_tokens) */
    size_t block_bytes;         /* 0: in the state */
    wb_fz_token *ta, *tb;       /* the tokens of each side: as split, sorted, unique */
    wb_fz_token *aux_a, *aux_b; /* room to sort each side into */
    size_t ua, ub;              /* unique tokens */
    /* the merge sort of one side: runs of `width` in src merged into dst */
    wb_fz_token *src, *dst;
    size_t count, width, lo, li, ri, out;
    bool merging;
    size_t cmp_at; /* a comparison under way: the symbols found equal so far */
    /* a token copy under way into a joined sequence */
    const uint32_t *copy_from;
    uint32_t *copy_to;
    size_t copy_left;
    size_t i, j; /* the token walks: joins, repeats dropped, intersection */
    /* what the parts are made of: the sorted tokens joined, the
     * differences of the token sets joined, the intersection's measure */
    uint32_t *sorted_a, *sorted_b, *diff_ab, *diff_ba;
    size_t sorted_al, sorted_bl, diff_abl, diff_bal;
    size_t sect_len, sect_count, ab_count, ba_count, ua_count;
    /* a's side taken from a search's query (wb_fz_start_tokens): only
     * b's tokens are split, sorted, joined and made unique */
    bool cached;
} wb_fz_tokens;

typedef struct {
    wb_fz_options o;
    const uint32_t *a, *b;
    const uint8_t *ab, *bb; /* the bytes themselves (wb_fz_start_bytes; a, b NULL) */
    size_t m, n;
    const wb_fz_pattern *query; /* a's, made once for many b (or NULL) */
    /* a's token work, done once for many b (wb_fz_query_tokens; or
     * NULL), and the pattern of a's sorted tokens joined (or NULL) */
    const wb_fz_tokens *query_tokens;
    const wb_fz_pattern *sorted_query;
    bool done, failed; /* failed: out of memory */
    /* done, not scored: hamming without padding (o.no_pad) of sides of
     * different lengths, an error for the caller to report */
    bool unequal;
    /* an edit distance or Jaro: its kernel is live */
    bool kernel_live;
    size_t cutoff; /* the kernel's: WB_FZ_NO_CUTOFF, or a bound with room */
    /* an edit distance and the largest the lengths allow, exactly */
    wb_fz_wide distance, maximum;
    /* the integer kinds: the score exactly (`score` is it rounded to a
     * double), unless too_large: past 2^64 - 1 (a passing score) */
    uint64_t value;
    bool too_large;
    /* the ratios: the best of `base` and of each part's similarity */
    double base;
    size_t nparts, part;
    uint32_t *derived; /* sorted tokens and their differences, when not in small */
    /* a part's windows: the shorter side's pattern, the direction (1: the
     * sides swapped, for equal lengths), the window, the best so far */
    bool pattern_live;  /* needle is built (not the query's) */
    bool reversed_live; /* rneedle and reversed are built */
    const wb_fz_pattern *needle_in_use;
    int direction;
    size_t window;
    double best;
    /* the result: the score of the kind asked for, within the cutoff */
    double similarity;         /* jaro and the ratios */
    wb_fz_alignment alignment; /* o.alignment: where (once done) */
    double score;
    bool passed;
    size_t owned_bytes;
    /* the token scorers: their token work is under way (tk) */
    bool tokenizing;
    /* same_as_earlier under way: the earlier part it compares with
     * (SIZE_MAX: the current part is checked), the side (0: x, 1: y) and
     * the symbols found equal so far */
    size_t same_i, same_at;
    int same_side;
    /* the blocks of the token work and the derived sequences: from
     * alloc(bytes) (NULL: malloc) and given back with release(block,
     * bytes) (NULL: free). Set after wb_fz_start (which clears them) and
     * before the first step: a runtime gives large blocks back off its
     * schedulers. */
    void *(*alloc)(size_t bytes);
    void (*release)(void *block, size_t bytes);
    /* where the kernels' blocks of malloc of 64 KiB and up go when
     * freed (NULL: free at once; Jaro's, jaro.c), set as alloc and
     * release are */
    void (*free_later)(void *block, size_t bytes);
    size_t derived_bytes;
    /* from here on, set before use: wb_fz_start sets only what is above
     * (each field by name: add a field there too) */
    union {
        wb_fz_lcs lcs;
        wb_fz_lev lev;
        wb_fz_weighted weighted;
        wb_fz_osa osa;
        wb_fz_damerau damerau;
        wb_fz_hamming hamming;
        wb_fz_affix affix;
        wb_fz_jaro jaro;
    } k;
    wb_fz_part parts[WB_FZ_PARTS];
    wb_fz_pattern needle;
    /* a long needle's suffix pass: the needle reversed, then the
     * haystack's last symbols reversed (reversed), and its pattern */
    wb_fz_pattern rneedle;
    uint32_t *reversed;
    wb_fz_tokens tk;
    uint32_t small[WB_FZ_SMALL]; /* derived sequences of short inputs */
    wb_fz_token small_tokens[WB_FZ_SMALL_TOKENS];
    /* a long needle's suffix pass, made a budget at a time: the symbols
     * of reversed copied so far, and rneedle allocated (both set once
     * reversed_live) */
    size_t reversed_at;
    bool rneedle_live;
    /* a many-block needle's whole window: the blocks looked through for
     * its last symbol (SIZE_MAX: found there) */
    size_t looked;
    wb_fz_aligner al; /* partial_ratio with o.alignment */
} wb_fz;

/* Starts a score of a (m symbols) and b (n): records the pair and plans
 * what it can from the lengths alone, in time independent of them; all
 * the work (the token scorers' splitting, sorting and set operations
 * too) is wb_fz_step's, a budget at a time. a and b stay readable,
 * unchanged, until wb_fz_free. false when out of memory (nothing left
 * allocated). */
bool wb_fz_start(wb_fz *s, const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b,
                 size_t n);
/* The same, with `query` the pattern of a (wb_fz_pattern_init), made
 * once for a search of many b: no pattern of a is built per pair. */
bool wb_fz_start_with(wb_fz *s, const wb_fz_options *o, const wb_fz_pattern *query,
                      const uint32_t *a, size_t m, const uint32_t *b, size_t n);
/* Whether the scorer compares the bytes themselves, with no symbols to
 * decode (Hamming, Prefix and Postfix in byte mode): then
 * wb_fz_start_bytes may take them. */
bool wb_fz_reads_bytes(const wb_fz_options *o);
/* wb_fz_start on the bytes of a and b themselves, for a scorer that
 * reads them (wb_fz_reads_bytes). */
bool wb_fz_start_bytes(wb_fz *s, const wb_fz_options *o, const uint8_t *a, size_t m,
                       const uint8_t *b, size_t n);
/* Points a score started on bytes at the same bytes where they are now
 * (a runtime's binaries may move between its steps). */
void wb_fz_rebind_bytes(wb_fz *s, const uint8_t *a, const uint8_t *b);
/* The same, a's token work done once for a search of many b (`tokens`,
 * wb_fz_query_tokens_step's, of the same a and options; `sorted` the
 * pattern of its sorted tokens joined, or NULL): only b's is done per
 * pair, the same score. Both must outlive s. */
bool wb_fz_start_tokens(wb_fz *s, const wb_fz_options *o, const wb_fz_pattern *query,
                        const wb_fz_tokens *tokens, const wb_fz_pattern *sorted, const uint32_t *a,
                        size_t m, const uint32_t *b, size_t n);
/* A query's token work for wb_fz_start_tokens, a budget at a time: q is
 * a token score of a (m symbols) against nothing, stopped once its
 * tokens are split, sorted, joined and without repeats (q->tk). Start it
 * (nothing allocated yet), step it (units added to *used; true once done
 * or failed: q->failed, out of memory), then wb_fz_free(q), done or not.
 * a stays readable until then. */
void wb_fz_query_tokens_start(wb_fz *q, const wb_fz_options *o, const uint32_t *a, size_t m);
bool wb_fz_query_tokens_step(wb_fz *q, uint64_t budget, uint64_t *used);
/* The units of a query's token work at most. */
uint64_t wb_fz_query_tokens_units(const wb_fz_options *o, size_t m);
/* About `budget` units (kernels.h), added to *used; true once done
 * (s->failed: out of memory on the way). A step adds at most budget +
 * WB_FZ_STEP_OVER units beyond the kernels' own (their rows or columns:
 * kernels.h) to *used, and makes progress whatever its budget. */
#define WB_FZ_STEP_OVER 24 /* a token comparison and a token emitted (tokens.c) */
bool wb_fz_step(wb_fz *s, uint64_t budget, uint64_t *used);
void wb_fz_free(wb_fz *s);

/* The units wb_fz_step will take in all (an upper bound, the token work
 * included), and those of wb_fz_start (a constant: it does no work that
 * grows with the input). */
uint64_t wb_fz_units(const wb_fz_options *o, size_t m, size_t n);
uint64_t wb_fz_setup_units(const wb_fz_options *o, size_t m, size_t n);

/* The whole score in one go (tests, the fuzzer); false when out of memory. */
bool wb_fz_score(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                 double *score, bool *passed);

/* Quick scores: a query of 1..64 bytes (byte mode, or ASCII text in
 * codepoint mode) against candidates of up to WB_FZ_QUICK_MOST bytes (64
 * for Jaro, WB_FZ_QUICK_MATRIX_MOST for Damerau-Levenshtein), for the
 * scorers whose kernels then take one machine word: levenshtein with unit
 * costs, indel, ratio, qratio, osa, hamming, lcs_seq, prefix, postfix,
 * jaro, jaro_winkler; and
 * damerau_levenshtein (its cells in the quick's table) and partial_ratio (the
 * shorter side's LCS with the longer's prefixes and suffixes a word step
 * a byte, then the windows that could be best), against candidates of up
 * to WB_FZ_QUICK_MATRIX_MOST bytes. Each score is done in one go (at most
 * some microseconds), with no state and nothing allocated: a search's
 * fast path. */
#define WB_FZ_QUICK_MOST        4096
#define WB_FZ_QUICK_MATRIX_MOST 256
/* x86: Damerau-Levenshtein counts bits with the CPU's popcnt if it has it */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WB_FZ_QUICK_POPCNT 1
#else
#define WB_FZ_QUICK_POPCNT 0
#endif
typedef struct {
    wb_fz_options o;
    uint8_t query[64]; /* a copy */
    size_t m;
    uint64_t peq[256];     /* the query's masks */
    uint64_t scratch[256]; /* a candidate's masks (jaro), zero between scores */
    uint64_t rpeq[256];    /* partial_ratio: the masks of the query reversed */
    /* Damerau-Levenshtein: the last query row holding each byte (zero
     * between scores) */
    uint8_t last_row[256];
    /* whether the CPU counts bits (x86's popcnt; false: shifts and adds) */
    bool popcnt;
    /* Damerau-Levenshtein: its rows' cells, (m + 1) rows of up to
     * WB_FZ_QUICK_MATRIX_MOST + 1, written before read (owned: freed by
     * wb_fz_quick_free) */
    uint16_t *cells;
} wb_fz_quick;

/* false when the scorer or the query has no quick scores, or out of
 * memory (Damerau-Levenshtein's cells); true: free it with
 * wb_fz_quick_free. */
bool wb_fz_quick_init(wb_fz_quick *q, const wb_fz_options *o, const uint8_t *query, size_t m);
/* Frees what wb_fz_quick_init took (none but for Damerau-Levenshtein);
 * a zeroed q too. */
void wb_fz_quick_free(wb_fz_quick *q);
/* The bytes wb_fz_quick_init took beside q. */
size_t wb_fz_quick_memory(const wb_fz_quick *q);
/* Whether a candidate of n bytes has a quick score. */
bool wb_fz_quick_fits(const wb_fz_quick *q, size_t n);
/* A score's badness for ranking, num / den (higher is worse), where a
 * kind of score is monotone in it (den 0: none). */
typedef struct {
    uint64_t num, den;
} wb_fz_bar;

/* ASCII whitespace: what separates tokens in bytes (and, with the Unicode
 * spaces, in codepoints) */
static inline bool wb_fz_ascii_space(uint32_t c) {
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x1F);
}

/* Whether badness num / den is strictly worse than the bar's (den 0: no
 * bar): a candidate that cannot rank before the worst kept. */
static inline bool wb_fz_below_bar(const wb_fz_bar *bar, uint64_t num, uint64_t den) {
    return bar && bar->den != 0 && num * bar->den > bar->num * den;
}

/* The score of a candidate of n bytes that fits, as wb_fz_step gives it
 * (s->score, s->passed); returns the units it took. `badness` is set for
 * the ratios and the normalized kinds of the edit distances; with a `bar`
 * (the worst a search keeps), a candidate strictly worse than it ends
 * there, not passed, its score not computed (no division). */
uint64_t wb_fz_quick_score(wb_fz_quick *q, const uint8_t *t, size_t n, const wb_fz_bar *bar,
                           double *score, bool *passed, wb_fz_bar *badness);

/* The score of a pair of m and n symbols from its distance d, found by
 * any kernel (the quick ones, the search core's lanes): the Levenshtein,
 * OSA, Hamming, Indel, LCSseq, Prefix or Postfix distance, or for the
 * ratio and qratio the Indel distance; as wb_fz_quick_score scores it,
 * with its badness and bar. */
void wb_fz_verdict(const wb_fz_options *o, size_t m, size_t n, size_t d, const wb_fz_bar *bar,
                   double *score, bool *passed, wb_fz_bar *badness);

/* For the partial ratio, and the partial token ratios and WRatio of two
 * single tokens (both sides non-empty), from the LCS of the pair (m and n
 * symbols): either the score is the ratio's (WB_FZ_BOUND_RATIO: WRatio of
 * lengths within 1.5 of each other), or *score (of the kind asked for)
 * is never worse than the score, and *passes whether it passes the
 * cutoff. The bound: a partial ratio's best window against the shorter
 * side (ls symbols) is at most 2 L / (ls + L) of the pair's LCS L (a full
 * window holds at most L of it, L / ls; an edge window of w < ls at most
 * min(L, w), 2 min(L, w) / (ls + w), largest at w = L); a ratio's score
 * is monotone in that quotient, and so is its rounding. WRatio of single
 * tokens past 1.5: the best of the ratio and the scaled partial ratio
 * (the partial token ratio is it scaled lower). */
typedef enum { WB_FZ_BOUND_RATIO, WB_FZ_BOUND_AT_MOST } wb_fz_bound_kind;
wb_fz_bound_kind wb_fz_partial_bound(const wb_fz_options *o, size_t m, size_t n, size_t lcs,
                                     double *score, bool *passes);

/* The Damerau-Levenshtein score of the quick query against t (n bytes,
 * n fitting), its LCS with the query known (`lcs`): as wb_fz_quick_score
 * scores it (which finds the LCS itself). The distance is at least the
 * longer side's length less the LCS: each insertion, deletion,
 * substitution or swap of neighbours (a transposition with edits
 * between is some of each, at one apiece) changes that by one at most: a
 * substitution or a swap keeps the lengths and moves the LCS by one at
 * most; an insertion (a deletion) raises (lowers) the longer length and
 * the LCS by none or one each. A candidate whose bound is past the
 * cutoff, or no better than the bar (a search's worst kept, which wins
 * a tie), ends there, not passed; the others are computed exactly below
 * `cut` (a distance that cannot rank; SIZE_MAX: none), and a distance at
 * or past it scores as the cut, no better than its own: only the cells
 * whose value and the bound of the path on from them (the same LCS
 * bound on what is left of each side) stay within the cut are computed.
 * With neither a cut nor a cutoff, Zhao and Sahni's rows instead
 * (wb_fz_damerau_bytes). Returns the units taken. */
uint64_t wb_fz_quick_damerau(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                             const wb_fz_bar *bar, size_t cut, double *score, bool *passed,
                             wb_fz_bar *badness);

/* The OSA distance of the quick query and t (n <= WB_FZ_QUICK_MOST
 * bytes): never below Damerau-Levenshtein's (its scripts are some of
 * Damerau-Levenshtein's, swaps without edits between), a bound in one
 * word step a byte. */
size_t wb_fz_quick_damerau_most(const wb_fz_quick *q, const uint8_t *t, size_t n);

/* The partial ratio of the quick query (made for it) and t (n bytes,
 * at most WB_FZ_QUICK_MATRIX_MOST), their LCS known (`lcs`), as
 * wb_fz_quick_score scores it. With `worst` (the score of a search's
 * worst kept, which wins a tie; NULL: none), the windows whose bound
 * cannot beat it are not computed: a candidate that cannot beat it may
 * get a worse score than its own, never a better one. Returns the units
 * taken. */
uint64_t wb_fz_quick_partial(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                             const double *worst, double *score, bool *passed);

/* WRatio of the quick query (made for the partial ratio, with WRatio's
 * kind and cutoff) and t (n bytes, at most WB_FZ_QUICK_MATRIX_MOST), both
 * single tokens (no whitespace, neither empty) whose lengths are 1.5 or
 * more apart, their LCS known (`lcs`): the best of the ratio and the
 * scaled partial ratio, as wb_fz_score weighs them (the partial token
 * ratio of single tokens is the partial ratio, scaled lower); `worst` as
 * for wb_fz_quick_partial. Returns the units taken. */
uint64_t wb_fz_quick_wratio_apart(wb_fz_quick *q, const uint8_t *t, size_t n, size_t lcs,
                                  const double *worst, double *score, bool *passed);

/* The Jaro or Jaro-Winkler score of a query of m bytes against t (n
 * bytes) from their matches and transpositions (before halving), found
 * by any kernel: as wb_fz_quick_score scores it. */
void wb_fz_jaro_verdict(const wb_fz_options *o, const uint8_t *query, size_t m, const uint8_t *t,
                        size_t n, size_t matches, size_t transpositions, double *score,
                        bool *passed);

/* Jaro's or Jaro-Winkler's best score of the kind asked for for a query
 * of m bytes and a candidate of n with these matches and transpositions
 * (before halving), whatever their first bytes (the longest prefix), a
 * hair beyond it for rounding: a search ends a candidate that cannot
 * beat the worst kept before reading its bytes. */
double wb_fz_jaro_top(const wb_fz_options *o, size_t m, size_t n, size_t matches,
                      size_t transpositions);

/* For Jaro and Jaro-Winkler with a query of m bytes (1..64): the best
 * score of the kind asked for that a candidate of n bytes (n <= 64) with
 * M matches can have, whatever its transpositions and prefix, at
 * [n * 65 + M] of a table of WB_FZ_JARO_TOPS (malloc'd, the caller's to
 * free; NULL when out of memory), a hair beyond it for rounding: a search
 * checks its bar before any division. Each transposition lowers the third
 * term of Jaro's mean; Winkler's boost grows with the prefix and with the
 * Jaro similarity (weights up to 0.25). */
#define WB_FZ_JARO_TOPS (65 * 65)
/* Jaro-Winkler's prefix weights: 0 up to this (past it Winkler's boost
 * would fall as the Jaro similarity rises; the Elixir side checks the
 * same bound, a test compares them) */
#define WB_FZ_PREFIX_WEIGHT_MOST 0.25
double *wb_fz_jaro_tops(const wb_fz_options *o, size_t m);

/* Whether the scores are integers: an edit distance's own (distance,
 * similarity). */
bool wb_fz_integers(const wb_fz_options *o);
/* The score reported beyond the cutoff, as rapidfuzz reports it: the
 * cutoff + 1 for an integer distance, otherwise the worst of the kind
 * (0.0 for a similarity, 1.0 or 100.0 for a distance). */
double wb_fz_worst(const wb_fz_options *o);
/* The integer kinds' score beyond the cutoff exactly (`worst` is it
 * rounded): the cutoff + 1 for a distance, 0 for a similarity; false
 * when that is past 2^64 - 1. */
bool wb_fz_worst_value(const wb_fz_options *o, uint64_t *v);

/* The default processor for ASCII text: letters lowercased, every byte
 * that is not a letter or a digit made a space, spaces trimmed at both
 * ends. Writes at most len bytes to out and their number to *out_len;
 * false (out untouched) when the text is not all ASCII. */
bool wb_fz_default_process_ascii(const uint8_t *in, size_t len, uint8_t *out, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif

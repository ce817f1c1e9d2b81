/*
 * The pair kernels of the fuzzy scorers: resumable computations on two
 * sequences of symbols (bytes or Unicode codepoints, as uint32_t), one
 * file of c_src/metric/ per metric (pattern.c, indel_lcs.c,
 * levenshtein.c and levenshtein_weighted.c, osa.c, damerau.c,
 * hamming.c, affix.c, jaro.c), their word steps in levenshtein_word.h and
 * osa_word.h.
 *
 * Pure C, no erl_nif. Every kernel is a state advanced by its step
 * function in bounded amounts of work, so that a scheduler can slice it:
 *
 *   init(k, a, m, b, n, ...)  prepares: allocates, and does no work that
 *                             grows with m or n (false: out of memory,
 *                             nothing left allocated); a and b must stay
 *                             readable, unchanged, until free
 *   step(k, budget, used)     does at most max(budget, 1) units and adds
 *                             exactly those to *used (one for a call that
 *                             finds nothing left to do); true once the
 *                             result is known
 *   free(k)                   frees what init allocated (finished or not)
 *
 * A unit is about 2 ns of work on the reference machine: one 64-row block
 * of a bit-parallel column, WB_FZ_PATTERN_PER_UNIT symbols placed in a
 * pattern, a few cells of a scalar dynamic-programming row (each file says
 * how many), 2 words of Jaro's window (jaro.c). *_units(m, n)
 * bounds the units of the whole computation, whatever the budgets.

 * Distances with a cutoff k: any distance above k is reported as k + 1,
 * and the work may stop as soon as the result is known to be above k.
 * WB_FZ_NO_CUTOFF means no cutoff.
 */
#ifndef WB_FUZZY_KERNELS_H
#define WB_FUZZY_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WB_FZ_NO_CUTOFF SIZE_MAX

/* Unsigned integers of 128 bits: the weighted edit distances and their
 * largest values exactly, past 2^64 - 1 (weights up to 2^64 - 1 each
 * times lengths far below 2^64 stay far below 2^128). gcc and clang have
 * them on every 64-bit target. */
#if defined(__SIZEOF_INT128__)
/* aligned as a uint64_t: the runtime's job states (enif_alloc) are aligned
 * to 8 bytes, and a 16-byte aligned access to one faults */
__extension__ typedef unsigned __int128 wb_fz_wide __attribute__((aligned(8)));
#else
#error "the fuzzy core needs unsigned __int128 (gcc or clang on a 64-bit target)"
#endif
#define WB_FZ_U64_MOST ((wb_fz_wide)UINT64_MAX)

/* The set bits of a word, inline: built for x86-64's baseline (no POPCNT
 * instruction), __builtin_popcountll is a call into the compiler's
 * library, which the LCS of a short candidate paid once per score. */
static inline unsigned wb_fz_popcount(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555u);
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
    return (unsigned)((x * 0x0101010101010101u) >> 56);
}

/* The LCS's vector S after one more text symbol, whose positions in the
 * pattern's word are `match` (Allison-Dix / Hyyro 2004): one word of the
 * kernel, of a partial ratio's window, of a quick score. */
static inline uint64_t wb_fz_lcs_word(uint64_t s, uint64_t match) {
    uint64_t u = s & match;
    return (s + u) | (s - u);
}

/* wb_fz_lcs_word keeping the LCS (*lcs) as it goes, with no count of
 * bits: it grows by one exactly when the step's sum carries out of the
 * word. U is a subset of S, so S - U borrows nothing; the sum clears the
 * lowest match of each run of ones holding one and sets the zero above
 * that run, which the OR with S - U takes back: a zero moves up a run,
 * but for the highest run, which the rows past the pattern (ones,
 * always) carry out of the word: a zero more. */
static inline uint64_t wb_fz_lcs_word_counted(uint64_t s, uint64_t match, size_t *lcs) {
    uint64_t u = s & match, sum = s + u;
    *lcs += sum < s;
    return sum | (s - u);
}

/* The bits of a word under n (0..64): a mask of n rows or bytes. */
static inline uint64_t wb_fz_low_bits(size_t n) {
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* The LCS that a one-word S holds: its zeros among the m pattern rows. */
static inline size_t wb_fz_lcs_of(uint64_t s, size_t m) {
    return (size_t)wb_fz_popcount(~s & wb_fz_low_bits(m));
}

/* ---- match vectors of a pattern (pattern.c) ---------------------------- *
 * For each symbol of the pattern and each block of 64 pattern positions,
 * the mask of the positions holding it: symbols below 256 in a table,
 * others in an open-addressing map of (symbol, block) entries, at most
 * one per position.
 *
 * wb_fz_pattern_init builds one whole. A long one is built in two parts:
 * wb_fz_pattern_alloc allocates (no pass over the symbols, but for
 * patterns of up to 256 of them), then wb_fz_pattern_fill places the
 * symbols a budget at a time: WB_FZ_PATTERN_PER_UNIT symbols a unit, and
 * WB_FZ_PATTERN_PAGE_UNITS for each page of a long pattern's tables that
 * the fill writes first (fresh memory faults in as it is first written),
 * at most `budget` units a call (one at least), added to *used exactly;
 * true once every symbol is placed. wb_fz_pattern_units(m) bounds the
 * units of the whole fill. s must stay readable, unchanged, until the
 * fill is done; wb_fz_pattern_get is for filled patterns only. */
typedef struct {
    uint32_t key; /* symbol + 1 (0: empty slot) */
    uint32_t block;
    uint64_t mask;
} wb_fz_pattern_entry;

typedef struct {
    size_t m, nblocks;
    uint64_t *low;            /* low[symbol * nblocks + block], symbols < 256 */
    wb_fz_pattern_entry *map; /* symbols >= 256 */
    size_t slots;             /* the map's slots (a power of two), or 0: no symbol >= 256 */
    size_t capacity;          /* the map's slots allocated (0: none) */
    const uint32_t *s;        /* the symbols, and how many are placed */
    const uint8_t *s8;        /* or bytes (s NULL, no map), set by the caller */
    size_t filled;
    size_t owned_bytes;
    uint64_t *written; /* a long pattern's fill: a bit a page of low and map written */
} wb_fz_pattern;

#define WB_FZ_PATTERN_PER_UNIT 2
/* A page first written: about 2 us a 4 KB page where measured (a 2 vCPU
 * VM), where a unit is 2-3 ns. */
#define WB_FZ_PATTERN_PAGE_UNITS 1024

bool wb_fz_pattern_init(wb_fz_pattern *p, const uint32_t *s, size_t m);
bool wb_fz_pattern_alloc(wb_fz_pattern *p, const uint32_t *s, size_t m);
/* wb_fz_pattern_alloc when the count of s's symbols of 256 and up is
 * known (`high`, at least that many): the map sized for them, none for 0. */
bool wb_fz_pattern_alloc_high(wb_fz_pattern *p, const uint32_t *s, size_t m, size_t high);
bool wb_fz_pattern_fill(wb_fz_pattern *p, uint64_t budget, uint64_t *used);
uint64_t wb_fz_pattern_units(size_t m);
void wb_fz_pattern_free(wb_fz_pattern *p);
/* The same, its tables of WB_FZ_FREE_LATER_FROM bytes and up handed to
 * free_later (when not NULL: a host's free off its scheduler). */
#define WB_FZ_FREE_LATER_FROM (64 * 1024)
void wb_fz_pattern_free_with(wb_fz_pattern *p, void (*free_later)(void *block, size_t bytes));

/* The map's slot to start looking for (c, block) at: block w's entries
 * start in its own run of 128 slots (a map of at least 2 m slots has one
 * per block; 64 entries at most go there), at a place hashed from c: the
 * blocks of a column, or of a fill, are looked up in order. */
static inline size_t wb_fz_pattern_hash(size_t mask, uint32_t c, size_t block) {
    return (block * 128 + (size_t)(((uint64_t)c * UINT64_C(0x9E3779B97F4A7C15)) >> 57)) & mask;
}

/* The mask of the positions of symbol c in block `block`. */
static inline uint64_t wb_fz_pattern_get(const wb_fz_pattern *p, uint32_t c, size_t block) {
    if (c < 256) return p->low[(size_t)c * p->nblocks + block];
    if (p->slots == 0) return 0;
    size_t mask = p->slots - 1, i = wb_fz_pattern_hash(mask, c, block);
    for (;;) {
        const wb_fz_pattern_entry *e = &p->map[i];
        if (e->key == 0) return 0;
        if (e->key == c + 1 && e->block == block) return e->mask;
        i = (i + 1) & mask;
    }
}

/* The LCS's word form over symbols: the vector S after the n symbols of
 * t, from S = s, against a pattern of one block (m <= 64): the one loop
 * of the LCS kernel's one-word patterns and of a partial ratio's windows
 * (wb_fz_lcs_of(S, m) is then the LCS). */
static inline uint64_t wb_fz_lcs_word_run(const wb_fz_pattern *p, const uint32_t *t, size_t n,
                                          uint64_t s) {
    for (size_t j = 0; j < n; j++)
        s = wb_fz_lcs_word(s, wb_fz_pattern_get(p, t[j], 0));
    return s;
}

/* ---- the short form: a pattern of at most 128 symbols, no heap --------- *
 * A pair whose shorter side has at most WB_FZ_SHORT symbols (the LCS and
 * OSA: at most WB_FZ_SHORT_LCS, two words), scored whole in one step (its budget
 * covers the kernel's units), takes a pattern with no allocation and no
 * table to zero: wb_fz_short_begin places the symbols in a table of the
 * calling thread that is all zero between uses (symbols of 256 and up in
 * a small map beside it), and wb_fz_short_end clears the entries it set.
 * Between the two, nothing else on the thread may begin one: the short
 * scores below begin and end theirs within the call, so a kernel that is
 * sliced over steps never holds it. */
#define WB_FZ_SHORT       64
#define WB_FZ_SHORT_LCS   128
#define WB_FZ_SHORT_SLOTS 256 /* the map's: at most half full */

typedef struct {
    uint32_t key; /* symbol + 1 (0: empty slot) */
    uint64_t mask[2];
} wb_fz_short_entry;

typedef struct {
    uint64_t (*low)[2];     /* the thread's table, for symbols < 256 */
    wb_fz_short_entry *map; /* the thread's map, for the others */
    size_t high;            /* the map's entries in use */
    const uint32_t *s;
    size_t m;
    uint8_t used[WB_FZ_SHORT_LCS]; /* the map's slots in use */
} wb_fz_short;

/* m <= WB_FZ_SHORT_LCS. */
void wb_fz_short_begin(wb_fz_short *p, const uint32_t *s, size_t m);
void wb_fz_short_end(wb_fz_short *p);

static inline size_t wb_fz_short_hash(uint32_t c) {
    return (size_t)(((uint64_t)c * UINT64_C(0x9E3779B97F4A7C15)) >> 56);
}

/* The entry of symbol c (>= 256), or NULL. */
static inline const wb_fz_short_entry *wb_fz_short_find(const wb_fz_short *p, uint32_t c) {
    if (p->high == 0) return NULL;
    for (size_t i = wb_fz_short_hash(c);; i = (i + 1) % WB_FZ_SHORT_SLOTS) {
        const wb_fz_short_entry *e = &p->map[i];
        if (e->key == c + 1) return e;
        if (e->key == 0) return NULL;
    }
}

/* The first word's mask of symbol c. */
static inline uint64_t wb_fz_short_get(const wb_fz_short *p, uint32_t c) {
    if (c < 256) return p->low[c][0];
    const wb_fz_short_entry *e = wb_fz_short_find(p, c);
    return e ? e->mask[0] : 0;
}

/* The short scores: the whole kernel at once, with the units its
 * resumable form would add to *used over any steps it takes with one
 * budget that covers them (at most its *_units). The shorter side has at
 * most WB_FZ_SHORT symbols (the LCS and OSA: WB_FZ_SHORT_LCS). */
size_t wb_fz_lcs_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, uint64_t *used);
size_t wb_fz_lev_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                       uint64_t *used);
size_t wb_fz_osa_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                       uint64_t *used);
/* Damerau-Levenshtein's rows on the stack (no table of symbols to clear:
 * damerau.c), with the same units as its resumable form. */
size_t wb_fz_damerau_short(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff,
                           uint64_t *used);
/* The same on bytes (the shorter side at most WB_FZ_SHORT of them), with
 * the same units. */
size_t wb_fz_damerau_bytes(const uint8_t *a, size_t m, const uint8_t *b, size_t n, size_t cutoff,
                           uint64_t *used);

/* ---- longest common subsequence (indel_lcs.c): Indel = m + n - 2 LCS ---- *
 * Bit-parallel (Allison-Dix / Hyyro 2004), the pattern in blocks of 64;
 * one unit per block per symbol of the text. wb_fz_lcs_init makes the
 * pattern of the shorter side (a when the lengths are equal; the LCS is
 * symmetric), in the first steps (wb_fz_pattern_fill); m and n are then
 * the pattern's and the text's lengths. A column of many blocks is
 * resumed where a step stopped: every step takes at most its budget of
 * units (one at least). */
typedef struct {
    const uint32_t *b;        /* the text */
    size_t m, n, col;         /* the pattern's length, the text's, the next column */
    size_t block;             /* the next block of column col (many blocks) */
    uint64_t carry;           /* the sum's carry into that block */
    size_t lcs;               /* so far (many blocks: carries out of the last block) */
    wb_fz_pattern pattern;    /* its own (wb_fz_lcs_init) */
    const wb_fz_pattern *use; /* the one in use */
    uint64_t *s;              /* one word per block */
    size_t ready;             /* the blocks of s set up (many blocks) */
    uint64_t one;
    size_t owned_bytes;
    size_t result;
    /* where blocks of WB_FZ_FREE_LATER_FROM bytes and up go when freed
     * (NULL: free at once), set after init: a host frees them off its
     * schedulers (as wb_fz_jaro's) */
    void (*free_later)(void *block, size_t bytes);
} wb_fz_lcs;

bool wb_fz_lcs_init(wb_fz_lcs *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n);
/* The same with a pattern made once for many texts (a search's query):
 * nothing is built; `pattern` must outlive k. Cannot fail when a is
 * short enough for the word kept in the state (m <= 64). */
bool wb_fz_lcs_init_with(wb_fz_lcs *k, const wb_fz_pattern *pattern, const uint32_t *b, size_t n);
bool wb_fz_lcs_step(wb_fz_lcs *k, uint64_t budget, uint64_t *used);
/* The units the first steps have left to set the vector of a pattern of
 * many blocks up (before any column): a step of exactly these finishes
 * it and computes nothing more. */
uint64_t wb_fz_lcs_setup_units(const wb_fz_lcs *k);
void wb_fz_lcs_free(wb_fz_lcs *k);
/* Bounds both inits' units (a pattern of either side). */
uint64_t wb_fz_lcs_units(size_t m, size_t n);

/* ---- Levenshtein, unit costs (levenshtein.c): Myers/Hyyro, blocks of 64 - *
 * As the LCS: wb_fz_lev_init makes the pattern of the shorter side (the
 * distance is symmetric), in the first steps; a column is resumable. The
 * columns of a longer pattern are the block form's (levenshtein_block.h),
 * in its band, several at once when the budget allows. */
typedef struct {
    const uint32_t *b;
    const uint8_t *b8; /* or the text's bytes (b NULL), set by the caller */
    size_t m, n, col, k;
    size_t below, above;         /* the band (levenshtein_block.h) */
    size_t first, last;          /* the blocks of column col (many blocks) */
    bool mid;                    /* column col under way: */
    size_t block;                /* its next block */
    uint64_t hp_carry, hn_carry; /* the horizontal deltas entering it */
    wb_fz_pattern pattern;       /* its own (wb_fz_lev_init) */
    const wb_fz_pattern *use;    /* the one in use */
    uint64_t *vp, *vn;           /* one word per block */
    uint64_t one_vp, one_vn;
    size_t score;   /* of block last's bottom row (row m once it is the last) */
    uint64_t spare; /* a cutoff's band: units its columns left of every block's,
                       paying for the looks at whether it can still end under */
    size_t owned_bytes;
    size_t result;
    /* where blocks of WB_FZ_FREE_LATER_FROM bytes and up go when freed
     * (NULL: free at once), set after init: a host frees them off its
     * schedulers (as wb_fz_jaro's) */
    void (*free_later)(void *block, size_t bytes);
} wb_fz_lev;

bool wb_fz_lev_init(wb_fz_lev *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                    size_t cutoff);
/* With a pattern made once (as wb_fz_lcs_init_with). */
bool wb_fz_lev_init_with(wb_fz_lev *k, const wb_fz_pattern *pattern, const uint32_t *b, size_t n,
                         size_t cutoff);
bool wb_fz_lev_step(wb_fz_lev *k, uint64_t budget, uint64_t *used);
void wb_fz_lev_free(wb_fz_lev *k);
uint64_t wb_fz_lev_units(size_t m, size_t n);

/* ---- optimal string alignment (osa.c): Hyyro 2003, in blocks of 64 ---- *
 * Levenshtein plus transposition of two adjacent symbols (cost 1), no
 * substring edited twice: Myers' vectors, with a transposition ending at
 * row i of a column taken from the previous column's D0 and match
 * vectors. As wb_fz_lev: the shorter side's pattern (the distance is
 * symmetric), made in the first steps; a column is resumable. */
typedef struct {
    const uint32_t *b;
    size_t m, n, col, cutoff;
    bool settled;                /* the result known from the lengths */
    size_t block;                /* the next block of column col */
    uint64_t hp_carry, hn_carry; /* the horizontal deltas entering it */
    uint64_t d0_below, pm_below; /* block - 1's D0 of column col - 1, and
                                    its matches in column col */
    wb_fz_pattern pattern;
    uint64_t *vp, *vn, *d0, *pm; /* one word each per block: VP, VN, and
                                    D0 and the matches of the last column */
    uint64_t one[4];
    size_t score;
    size_t owned_bytes;
    size_t result;
    /* where blocks of WB_FZ_FREE_LATER_FROM bytes and up go when freed
     * (NULL: free at once), set after init: a host frees them off its
     * schedulers (as wb_fz_jaro's) */
    void (*free_later)(void *block, size_t bytes);
} wb_fz_osa;

bool wb_fz_osa_init(wb_fz_osa *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                    size_t cutoff);
bool wb_fz_osa_step(wb_fz_osa *k, uint64_t budget, uint64_t *used);
void wb_fz_osa_free(wb_fz_osa *k);
uint64_t wb_fz_osa_units(size_t m, size_t n);

/* ---- the row kernels: they keep rows of a matrix ------------------------- *
 * Their rows run over the longer side, so that a row is short (the
 * distances are symmetric; the weighted one with the insertion and
 * deletion costs swapped along with the sides): in the structs, a is the
 * longer side (rows) and b the shorter (cells), m and n their lengths.
 * The first steps set up the first row (Damerau-Levenshtein's after its affix);
 * a row is resumed where a step stopped: every step takes at most its
 * budget of units (one at least). */

/* Levenshtein with weights (levenshtein_weighted.c): inserting a symbol
 * of b costs ins, deleting one of a costs del, substituting sub
 * (Wagner-Fischer, one row of n + 1 cells, walked over the m symbols of
 * a). The result is exact: cells of
 * 64 bits that saturate when the largest distance of the pair (`wide`
 * false) fits in 64 bits (a saturating sum is monotone, so each cell is
 * the least of its exact value and 2^64 - 1, and the last one is at
 * most the largest distance), of 128 bits otherwise. */
typedef struct {
    const uint32_t *a, *b;
    size_t m, n, row, cutoff;
    size_t col, prep; /* cells done of row `row` + 1, and of row 0 */
    uint64_t ins, del, sub;
    bool wide;
    uint64_t *cells;        /* n + 1, when not wide */
    wb_fz_wide *wcells;     /* n + 1, when wide */
    wb_fz_wide diag, least; /* the row under way's */
    size_t owned_bytes;
    wb_fz_wide result; /* the distance, or the cutoff + 1 above it */
} wb_fz_weighted;

/* `wide`: the pair's largest distance may pass 2^64 - 1. */
bool wb_fz_weighted_init(wb_fz_weighted *k, const uint32_t *a, size_t m, const uint32_t *b,
                         size_t n, uint64_t ins, uint64_t del, uint64_t sub, size_t cutoff,
                         bool wide);
bool wb_fz_weighted_step(wb_fz_weighted *k, uint64_t budget, uint64_t *used);
void wb_fz_weighted_free(wb_fz_weighted *k);
uint64_t wb_fz_weighted_units(size_t m, size_t n);

/* Damerau-Levenshtein (damerau.c), unrestricted (transpositions of symbols with any
 * edits between them): the common prefix and suffix dropped, then Zhao
 * and Sahni's algorithm, O(m n) time, rows of n + 2 cells and, per
 * column, the last row that matched its symbol (no map of symbols). */
typedef struct {
    const uint32_t *a, *b; /* without the affix once it is found */
    size_t m, n, row, cutoff;
    size_t big; /* max(m, n) + 1: above every distance */
    /* one allocation of four arrays of n + 2: rows 0 and 1, FR (the
     * matrix's cell two columns back at each column's last match) and
     * SEEN (each column's last matching row) */
    size_t *rows;
    int affix;       /* 0 the prefix under way, 1 the suffix, 2 both found */
    size_t pre, suf; /* their lengths so far */
    size_t prep;     /* the set-up's columns done */
    /* the row under way: its cells done, and Zhao's running values */
    size_t col, l, t, two_up, least;
    size_t owned_bytes;
    size_t result;
} wb_fz_damerau;

bool wb_fz_damerau_init(wb_fz_damerau *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                        size_t cutoff);
bool wb_fz_damerau_step(wb_fz_damerau *k, uint64_t budget, uint64_t *used);
void wb_fz_damerau_free(wb_fz_damerau *k);
uint64_t wb_fz_damerau_units(size_t m, size_t n);

/* Hamming (hamming.c): the positions below min(m, n) whose symbols differ, plus
 * |m - n| (the shorter padded). On symbols, or on bytes themselves
 * (wb_fz_hamming_init_bytes: byte mode, no symbols to decode); a and b,
 * or ab and bb, may be pointed at the same symbols where they have moved
 * to between steps. */
typedef struct {
    const uint32_t *a, *b;
    const uint8_t *ab, *bb; /* the bytes (NULL: symbols) */
    size_t m, n, at, cutoff, count;
    size_t result;
} wb_fz_hamming;

void wb_fz_hamming_init(wb_fz_hamming *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                        size_t cutoff);
void wb_fz_hamming_init_bytes(wb_fz_hamming *k, const uint8_t *a, size_t m, const uint8_t *b,
                              size_t n, size_t cutoff);
bool wb_fz_hamming_step(wb_fz_hamming *k, uint64_t budget, uint64_t *used);
uint64_t wb_fz_hamming_units(size_t m, size_t n);

/* The common prefix, or suffix, of a and b (affix.c): Prefix's and
 * Postfix's similarity, the symbols compared from the start (from the
 * end) until the first that differ, AFFIX_CHUNK a step's unit at a time.
 * On symbols, or on bytes themselves (wb_fz_affix_init_bytes), which may
 * be pointed at the same bytes where they have moved to between steps,
 * as Hamming's. `least`: a common affix shorter than it does not
 * matter, its exact length neither (the cutoff's: a pair whose shorter
 * side is below it is not read, its result 0). */
typedef struct {
    const uint32_t *a, *b;
    const uint8_t *ab, *bb; /* the bytes (NULL: symbols) */
    size_t m, n, at;
    bool suffix;
    size_t result; /* the common affix's length */
} wb_fz_affix;

void wb_fz_affix_init(wb_fz_affix *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                      bool suffix, size_t least);
void wb_fz_affix_init_bytes(wb_fz_affix *k, const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                            bool suffix, size_t least);
bool wb_fz_affix_step(wb_fz_affix *k, uint64_t budget, uint64_t *used);
uint64_t wb_fz_affix_units(size_t m, size_t n);

/* Jaro similarity (jaro.c, 0.0 .. 1.0), rapidfuzz's conventions: both empty 1.0,
 * one empty 0.0; the shorter input (a when the lengths are equal) is
 * walked, each of its symbols matched with the first unmatched equal
 * symbol of the other within max(m, n) / 2 - 1 positions (0 when that is
 * negative); with M matches and T = (matched symbols out of order) / 2
 * (integer division), the similarity is
 *   (M / m + M / n + (M - T) / M) / 3.0
 * computed in doubles in exactly that order, 0.0 when M is 0.
 * Jaro-Winkler adds l * prefix_weight * (1.0 - sim) when sim > 0.7, l the
 * common prefix of a and b, at most 4 symbols. */
/* Bit-parallel: the positions of b any window reaches (`reach` of them)
 * are a pattern, and each symbol of a takes the lowest set bit of its
 * symbol's mask, within its window and not yet taken; the matches are
 * then paired in order on the flags of both sides. Three routes: a pair
 * whose reach is at most 64 and whose symbols are all below 256 in one
 * step when the budget pays for it (jaro_word.h, masks on the stack);
 * any other such short pair on masks made per symbol of a (a of at most
 * 64 symbols: a's masks over b, in the state); a longer reach on a
 * pattern of blocks (pattern.c), the window's words scanned from its
 * lowest. init reads symbols only for a pattern of at most 256 (its
 * count of symbols of 256 and up: a reach of 65 .. 256). */
typedef struct {
    const uint32_t *a, *b; /* a: the shorter */
    size_t m, n, reach, bound;
    bool blocks; /* reach > 64: the pattern */
    bool wide;   /* reach <= 64, a symbol of 256 and up seen */
    bool done;
    int phase;     /* 0 masks or pattern, 1 flags, 2 pairs */
    size_t at;     /* phase 0: the next of a's masks' compares (a
                      flat index, i * reach + j); phase 1: the next
                      symbol of a */
    size_t word;   /* the window's next word of symbol at (blocks) */
    bool scanning; /* (word set) */
    size_t matches;
    uint64_t *taken;       /* b's matched positions (words of the reach) */
    uint64_t *walked;      /* a's matched symbols */
    size_t pa, pb;         /* the pairing: the words of a and b under way, */
    uint64_t abits, bbits; /* their flags left */
    size_t seen, trans;
    uint64_t *owned;  /* taken, walked and cursor (blocks) */
    uint32_t *cursor; /* per byte, the word its last scan ended in (blocks) */
    size_t owned_bytes;
    /* where blocks of 64 KiB and up go when freed (NULL: free at once),
     * set after init: a host frees them off its schedulers (the pattern
     * of a 16 MB reach and the flags took 320 us to free) */
    void (*free_later)(void *block, size_t bytes);
    double result;
    uint64_t small[2];     /* taken and walked (short pairs) */
    wb_fz_pattern pattern; /* b's reach (blocks; set by init only there) */
    uint64_t masks[64];    /* per symbol of a, its positions in b (short
                              pairs, but in one step on the stack's) */
} wb_fz_jaro;

/* Jaro's similarity from the matches M of a pair of `shorter` and
 * `longer` symbols and its transpositions before halving (2 T): the one
 * formula of the kernel, the word form and the lanes' scores (0.0 when M
 * is 0). */
static inline double wb_fz_jaro_of(size_t shorter, size_t longer, size_t matches,
                                   size_t transpositions) {
    size_t t = transpositions / 2;
    return matches == 0 ? 0.0
                        : ((double)matches / shorter + (double)matches / longer +
                           (double)(matches - t) / matches) /
                              3.0;
}

bool wb_fz_jaro_init(wb_fz_jaro *k, const uint32_t *a, size_t m, const uint32_t *b, size_t n);
bool wb_fz_jaro_step(wb_fz_jaro *k, uint64_t budget, uint64_t *used);
void wb_fz_jaro_free(wb_fz_jaro *k);
uint64_t wb_fz_jaro_units(size_t m, size_t n);
/* Jaro-Winkler from a finished Jaro similarity of a and b. */
double wb_fz_winkler(double jaro, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                     double prefix_weight);

#ifdef __cplusplus
}
#endif

#endif

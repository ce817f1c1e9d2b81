/*
 * Unit test of the extract engine (c_src/fuzzy/extract.h), built with
 * AddressSanitizer and UBSan by `make test-c`: every scorer and kind, with
 * limits of 1, 3 and all, cdist rows of 32- and 64-bit cells, with and
 * without cutoffs (one at a candidate's own score), bytes and codepoints,
 * a packed list and the same list with its batches made once (an
 * index), against "score every candidate with the pair scorer
 * (wb_fz_score), then sort" (extract_check.h): hit for hit, bit for bit,
 * ties in input order. Small sets at every budget from 1 to 64 units;
 * larger ones (the value bars, the seeds and their picks) and long
 * candidates (past 64, 256 and 4096 bytes: the quick scores' limits) at
 * a spread of budgets, the host's clock saying the time is up now and
 * then; candidate lists with duplicates, empty strings and ties; states
 * freed half-way; the hits' alignments (the ratio's, the partial ratio's)
 * against the pair scorer's. Then every error: a query or a candidate
 * that is not UTF-8, a score past 2^64 - 1, past a 32-bit cell, a
 * Levenshtein distance past the search core's 32-bit values, a candidate
 * of another length for Hamming without padding; and every allocation
 * of a pair score and of an extract failing in turn (out_of_memory.h).
 */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE */
#include "../fuzzy/extract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "extract_check.h"

static const char *const scorer_names[] = WB_FZ_SCORER_NAMES;
static const char *const kind_names[] = WB_FZ_KIND_NAMES;

/* Failures print their context up to this many; later ones are counted. */
#define DETAILED_FAILURES 30

/* ---- sets ------------------------------------------------------------------- */

/* A list being made: its candidates' bytes one after another. */
typedef struct {
    uint8_t *bytes;
    size_t len, room;
    uint64_t *offsets;
    size_t count, count_room;
} list_maker;

static void maker_add(list_maker *l, const uint8_t *b, size_t n) {
    if (!l->bytes || l->len + n > l->room) {
        l->room = 2 * (l->len + n) + 64;
        l->bytes = realloc(l->bytes, l->room);
    }
    if (l->count + 2 > l->count_room) {
        l->count_room = 2 * l->count + 16;
        l->offsets = realloc(l->offsets, l->count_room * sizeof *l->offsets);
    }
    if (!l->bytes || !l->offsets) abort();
    if (l->count == 0) l->offsets[0] = 0;
    if (n) memcpy(l->bytes + l->len, b, n);
    l->len += n;
    l->offsets[++l->count] = l->len;
}

/* A list and its index (the same list, its batches made once). */
typedef struct {
    wb_search_owned_set owned;
    wb_lanes_index prepared;
    wb_search_set list, index;
} test_set;

static bool all_ascii(const uint8_t *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (b[i] >= 0x80) return false;
    return true;
}

/* From what the maker holds (freed); `ascii`: the set marked ASCII when
 * it is, as a packer that looked finds it */
static void set_from(test_set *t, list_maker *l, bool ascii) {
    CHECK(wb_search_set_alloc(&t->owned, l->count, l->len), "set alloc");
    if (l->count) memcpy(t->owned.offsets, l->offsets, (l->count + 1) * sizeof *l->offsets);
    if (l->len) memcpy(t->owned.bytes, l->bytes, l->len);
    t->owned.set.ascii = ascii && all_ascii(l->bytes, l->len);
    CHECK(wb_lanes_index_build(&t->prepared, t->owned.bytes, t->owned.offsets, l->count),
          "index build");
    t->list = t->owned.set;
    t->index = t->owned.set;
    t->index.prepared = &t->prepared;
    free(l->bytes);
    free(l->offsets);
    memset(l, 0, sizeof *l);
}

static void set_free(test_set *t) {
    wb_lanes_index_free(&t->prepared);
    wb_search_set_free(&t->owned);
}

/* ---- random text ------------------------------------------------------------- */

/* Pieces of text: letters (a few, so that scores tie and LCSs are long),
 * spaces that split tokens, and in codepoint sets characters of 2, 3 and
 * 4 bytes and Unicode spaces; now and then a byte that is not UTF-8. */
typedef struct {
    bool codepoints, invalid;
    unsigned letters, spaces_every;
} alphabet;

static size_t random_piece(const alphabet *al, uint8_t *out) {
    static const char *const wide[] = {"\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80",
                                       "\xE3\x80\x80", "\xC2\xA0"};
    if (al->spaces_every && check_random() % al->spaces_every == 0) {
        static const uint8_t spaces[] = {' ', ' ', ' ', '\t', '\n'};
        out[0] = spaces[check_random() % sizeof spaces];
        return 1;
    }
    if (al->codepoints && check_random() % 6 == 0) {
        const char *w = wide[check_random() % 5];
        size_t n = strlen(w);
        memcpy(out, w, n);
        return n;
    }
    if (al->invalid && check_random() % 40 == 0) {
        out[0] = check_random() % 2 ? 0xFF : 0xC3; /* never valid; cut short */
        return 1;
    }
    out[0] = (uint8_t)('a' + check_random() % al->letters);
    if (!al->codepoints && check_random() % 30 == 0) out[0] = 0xE9; /* a byte past ASCII */
    return 1;
}

/* about `len` bytes of random text into out (room for len + 4) */
static size_t random_text(const alphabet *al, uint8_t *out, size_t len) {
    size_t n = 0;
    while (n < len)
        n += random_piece(al, out + n);
    return n;
}

/* b from a (n bytes) by a few byte edits: near candidates, high scores */
static size_t mutate(const alphabet *al, const uint8_t *a, size_t n, uint8_t *b) {
    memcpy(b, a, n);
    size_t edits = check_random() % 4;
    for (size_t e = 0; e < edits; e++) {
        size_t at = n ? check_random() % n : 0;
        uint8_t piece[4];
        random_piece(al, piece);
        switch (check_random() % 3) {
        case 0:
            if (n) b[at] = (uint8_t)('a' + check_random() % al->letters);
            break;
        case 1:
            memmove(b + at + 1, b + at, n - at);
            b[at] = piece[0] < 0x80 ? piece[0] : 'a';
            n++;
            break;
        default:
            if (n) {
                memmove(b + at, b + at + 1, n - at - 1);
                n--;
            }
        }
    }
    return n;
}

/* A candidate length: mostly short, some at the batches' and the quick
 * scores' edges, now and then long (`long_every`: one in so many; 0:
 * none) */
static size_t random_length(unsigned long_every) {
    if (long_every && check_random() % long_every == 0) {
        static const size_t longs[] = {65, 100, 256, 257, 300, 1000, 4096, 4097, 6000};
        return longs[check_random() % (sizeof longs / sizeof *longs)];
    }
    size_t pick = check_random() % 12;
    return pick == 0   ? 0
           : pick == 1 ? 63 + check_random() % 3
           : pick == 2 ? 1
                       : check_random() % 30;
}

/* `count` candidates from the query (near ones), duplicates and random
 * text; the query is `query` (qlen bytes) */
static void random_set(test_set *t, const alphabet *al, size_t count, unsigned long_every,
                       const uint8_t *query, size_t qlen) {
    list_maker l = {0};
    uint8_t *buf = malloc(6000 + 2 * qlen + 64);
    if (!buf) abort();
    for (size_t i = 0; i < count; i++) {
        size_t pick = check_random() % 8, n;
        if (pick == 0 && l.count > 0) { /* a duplicate of an earlier one */
            size_t j = check_random() % l.count;
            n = (size_t)(l.offsets[j + 1] - l.offsets[j]);
            memcpy(buf, l.bytes + l.offsets[j], n);
        } else if (pick <= 2) {
            n = mutate(al, query, qlen, buf);
        } else {
            n = random_text(al, buf, random_length(long_every));
        }
        maker_add(&l, buf, n);
    }
    free(buf);
    set_from(t, &l, check_random() % 4 != 0);
}

/* ---- running the checks -------------------------------------------------------- */

static size_t runs, steps_taken;

static void report(bool ok, const wb_fz_options *o, const char *which, size_t qlen, size_t count,
                   const xc_way *way, const char *why) {
    if (ok || failures >= DETAILED_FAILURES) {
        checks++;
        if (!ok) failures++;
        return;
    }
    char cutoff[64] = "none";
    if (o->has_cutoff) snprintf(cutoff, sizeof cutoff, "%.17g", o->cutoff);
    CHECK(ok,
          "%s %s%s, cutoff %s, %s of %zu, query of %zu bytes, limit %zu, cells %zu, budget "
          "%llu, spent every %u: %s (seed %llu)",
          scorer_names[o->scorer], kind_names[o->kind], o->codepoints ? " (codepoints)" : "",
          cutoff, which, count, qlen, way->limit, way->width, (unsigned long long)way->budget,
          way->spent_every, why, (unsigned long long)check_rng);
}

/* One set and query, one scorer's options: every way, on the list and
 * the index */
static void check_ways(const test_set *t, const uint8_t *query, size_t qlen, const wb_fz_options *o,
                       const xc_way *ways, size_t nways) {
    const wb_search_set *sets[2] = {&t->list, &t->index};
    xc_want w;
    xc_reference(&w, o, &t->list, query, qlen);
    for (size_t s = 0; s < 2; s++) {
        for (size_t k = 0; k < nways; k++) {
            char why[512] = "";
            size_t steps;
            bool ok = xc_run(o, sets[s], query, qlen, &w, &ways[k], why, sizeof why, &steps);
            runs++;
            steps_taken += steps;
            report(ok, o, s ? "index" : "list", qlen, t->list.count, &ways[k], why);
        }
    }
    xc_want_free(&w);
}

/* The cutoffs worth trying for these options: none, a candidate's own
 * score (ties at the cutoff pass), somewhere in the range */
static size_t cutoffs_of(const test_set *t, const uint8_t *query, size_t qlen, wb_fz_options o,
                         double *out) {
    size_t n = 0;
    xc_want w;
    o.has_cutoff = false;
    xc_reference(&w, &o, &t->list, query, qlen);
    if (w.status == WB_FZ_EXTRACT_OK && w.passing > 0)
        out[n++] = w.score[w.order[check_random() % w.passing]];
    xc_want_free(&w);
    bool integers = wb_fz_integers(&o);
    double top = o.kind >= WB_FZ_NORMALIZED_DISTANCE                        ? 1.0
                 : o.scorer >= WB_FZ_RATIO                                  ? 100.0
                 : o.scorer == WB_FZ_JARO || o.scorer == WB_FZ_JARO_WINKLER ? 1.0
                                                                            : 40.0;
    double r = top * (double)(check_random() % 1001) / 1000.0;
    out[n++] = integers ? (double)(uint64_t)r : r;
    return n;
}

static void with_cutoff(wb_fz_options *o, bool has, double cutoff) {
    o->has_cutoff = has;
    o->cutoff = has ? cutoff : 0.0;
    /* as the NIF gives them: the integer kinds' cutoff exactly */
    o->exact_cutoff = has && wb_fz_integers(o);
    o->icutoff = o->exact_cutoff ? (uint64_t)cutoff : 0;
}

static void random_options(wb_fz_options *o, wb_fz_scorer scorer, bool codepoints) {
    memset(o, 0, sizeof *o);
    o->scorer = scorer;
    o->codepoints = codepoints;
    o->ins = o->del = o->sub = 1;
    if (scorer == WB_FZ_LEVENSHTEIN && check_random() % 3 == 0) {
        static const uint64_t weights[] = {0, 1, 2, 3, 7, 4294967295u};
        o->ins = weights[check_random() % 6];
        o->del = weights[check_random() % 6];
        o->sub = weights[check_random() % 6];
    }
    static const double prefix[] = {0.1, 0.0, 0.25, 0.15};
    o->prefix_weight = prefix[check_random() % 4];
    /* the hits' alignments, where the scorer has them, half the time */
    o->alignment = (scorer == WB_FZ_RATIO || scorer == WB_FZ_PARTIAL_RATIO) && check_random() % 2;
}

/* random_options, and now and then Hamming without padding: the first
 * candidate of another length ends the search (the reference's status) */
static void random_search_options(wb_fz_options *o, wb_fz_scorer scorer, bool codepoints) {
    random_options(o, scorer, codepoints);
    o->no_pad = scorer == WB_FZ_HAMMING && check_random() % 4 == 0;
}

/* A spread of budgets */
static const uint64_t spread[] = {1, 2, 3, 7, 64, 1000, 3001, UINT64_MAX / 4};
#define SPREAD (sizeof spread / sizeof *spread)

static void random_query(const alphabet *al, uint8_t *q, size_t *qlen) {
    static const size_t lens[] = {0, 1, 2, 5, 8, 20, 30, 64, 65, 100};
    *qlen = random_text(al, q, lens[check_random() % 10]);
}

static void random_alphabet(alphabet *al, bool invalid) {
    al->codepoints = check_random() % 3 == 0;
    al->invalid = invalid && al->codepoints && check_random() % 4 == 0;
    static const unsigned letters[] = {1, 2, 3, 5, 26};
    al->letters = letters[check_random() % 5];
    static const unsigned every[] = {0, 3, 5, 8};
    al->spaces_every = every[check_random() % 4];
}

/* Small sets, every budget from 1 to 64 in one of the ways, the spread in
 * the others. */
static void test_small_sets(size_t rounds) {
    for (size_t round = 0; round < rounds; round++) {
        alphabet al;
        random_alphabet(&al, true);
        uint8_t q[200];
        size_t qlen;
        random_query(&al, q, &qlen);
        test_set t;
        random_set(&t, &al, 1 + check_random() % 9, 0, q, qlen);
        for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
            wb_fz_options o;
            random_search_options(&o, (wb_fz_scorer)scorer, al.codepoints);
            for (int kind = 0; kind < WB_FZ_KINDS; kind++) {
                o.kind = (wb_fz_kind)kind;
                double cutoffs[2];
                size_t nc = cutoffs_of(&t, q, qlen, o, cutoffs);
                for (size_t c = 0; c <= nc; c++) {
                    with_cutoff(&o, c > 0, c > 0 ? cutoffs[c - 1] : 0.0);
                    xc_way ways[64 + 4 * 4];
                    size_t nways = 0;
                    static const size_t limits[] = {1, 3, SIZE_MAX, SIZE_MAX, SIZE_MAX};
                    static const size_t widths[] = {0, 0, 0, 4, 8};
                    size_t full = check_random() % 5;
                    for (size_t m = 0; m < 5; m++) {
                        xc_way way = {.limit = limits[m], .width = widths[m]};
                        if (m == full) {
                            for (uint64_t b = 1; b <= 64; b++) {
                                way.budget = b;
                                way.spent_every = b % 5 == 0 ? 1 : 0;
                                ways[nways++] = way;
                            }
                            continue;
                        }
                        for (size_t k = 0; k < 4; k++) {
                            way.budget = spread[check_random() % SPREAD];
                            way.spent_every = (unsigned)(check_random() % 3);
                            way.abandon_after = k == 3 ? 1 + check_random() % 4 : 0;
                            ways[nways++] = way;
                        }
                    }
                    check_ways(&t, q, qlen, &o, ways, nways);
                }
            }
        }
        set_free(&t);
    }
}

/* Larger sets of short candidates: the batches fill, the value bars and
 * the look-ahead pass most candidates over, the seeds pick and cut. */
static void test_larger_sets(size_t rounds) {
    for (size_t round = 0; round < rounds; round++) {
        alphabet al;
        random_alphabet(&al, false);
        if (round % 2) al.codepoints = false;
        uint8_t q[200];
        size_t qlen;
        random_query(&al, q, &qlen);
        test_set t;
        static const size_t counts[] = {100, 300, 700, 1500};
        random_set(&t, &al, counts[round % 4], 0, q, qlen);
        for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
            wb_fz_options o;
            random_search_options(&o, (wb_fz_scorer)scorer, al.codepoints);
            /* the seeds' kinds (normalized) more often than the others */
            o.kind = check_random() % 2 ? WB_FZ_NORMALIZED_SIMILARITY
                                        : (wb_fz_kind)(check_random() % WB_FZ_KINDS);
            double cutoffs[2];
            size_t nc = cutoffs_of(&t, q, qlen, o, cutoffs);
            with_cutoff(&o, check_random() % 3 == 0 && nc > 0, cutoffs[0]);
            static const size_t limits[] = {1, 3, 10, 64, SIZE_MAX};
            xc_way ways[8];
            for (size_t k = 0; k < 8; k++) {
                ways[k] = (xc_way){
                    .limit = limits[check_random() % 5],
                    .width = k == 7 ? (check_random() % 2 ? 4 : 8) : 0,
                    .budget = spread[k],
                    .spent_every = (unsigned)(check_random() % 4),
                };
            }
            check_ways(&t, q, qlen, &o, ways, 8);
        }
        set_free(&t);
    }
}

/* Long candidates among short ones: past the batches (64 bytes), the
 * quick matrices (256) and the quick scores (4096), each scored inside
 * many steps at a small budget. */
static void test_long_candidates(size_t rounds) {
    for (size_t round = 0; round < rounds; round++) {
        alphabet al;
        random_alphabet(&al, true); /* not UTF-8 now and then: the parts' cuts */
        uint8_t q[200];
        size_t qlen;
        random_query(&al, q, &qlen);
        test_set t;
        random_set(&t, &al, 4 + check_random() % 8, 2, q, qlen);
        for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
            wb_fz_options o;
            random_search_options(&o, (wb_fz_scorer)scorer, al.codepoints);
            o.kind = (wb_fz_kind)(check_random() % WB_FZ_KINDS);
            double cutoffs[2];
            size_t nc = cutoffs_of(&t, q, qlen, o, cutoffs);
            with_cutoff(&o, check_random() % 2 == 0 && nc > 0, cutoffs[0]);
            static const uint64_t budgets[] = {1, 13, 500, UINT64_MAX / 4};
            static const size_t limits[] = {1, 3, SIZE_MAX, SIZE_MAX};
            xc_way ways[4];
            for (size_t k = 0; k < 4; k++)
                ways[k] = (xc_way){.limit = limits[k],
                                   .width = k == 3 ? 4 : 0,
                                   .budget = budgets[(k + round) % 4],
                                   .spent_every = (unsigned)(check_random() % 3)};
            check_ways(&t, q, qlen, &o, ways, 4);
        }
        set_free(&t);
    }
}

/* Long queries, at and past the search core's values' longest
 * (WB_FZ_EXTRACT_LANES_QUERY_MOST: their set-up reads the query at once)
 * and past the patterns whose tables a host frees later (extract_check.h's
 * free_later), each copied, decoded and its pattern made in the first
 * steps, against short candidates (one a piece of the query). */
static void test_long_queries(void) {
    static const size_t lens[] = {WB_FZ_EXTRACT_LANES_QUERY_MOST - 8,
                                  WB_FZ_EXTRACT_LANES_QUERY_MOST + 1, 20000};
    for (size_t round = 0; round < 6; round++) {
        alphabet al;
        random_alphabet(&al, false);
        size_t want = lens[round % 3];
        uint8_t *q = malloc(want + 8);
        if (!q) abort();
        size_t qlen = random_text(&al, q, want);
        list_maker l = {0};
        uint8_t word[64];
        for (size_t i = 0; i < 8; i++)
            maker_add(&l, word, random_text(&al, word, check_random() % 40));
        maker_add(&l, word, 0); /* empty: the distance is the query's length */
        /* a piece of the query, where a cut keeps it UTF-8 */
        if (!al.codepoints) maker_add(&l, q, 30);
        test_set t;
        set_from(&t, &l, true);
        for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
            wb_fz_options o;
            random_search_options(&o, (wb_fz_scorer)scorer, al.codepoints);
            o.kind = (wb_fz_kind)(check_random() % WB_FZ_KINDS);
            static const uint64_t budgets[] = {7, 3001, UINT64_MAX / 4};
            static const size_t limits[] = {2, SIZE_MAX, SIZE_MAX};
            xc_way ways[3];
            for (size_t k = 0; k < 3; k++)
                ways[k] = (xc_way){.limit = limits[k],
                                   .width = k == 2 ? 8 : 0,
                                   .budget = budgets[(k + round) % 3],
                                   .spent_every = (unsigned)(check_random() % 3)};
            check_ways(&t, q, qlen, &o, ways, 3);
        }
        set_free(&t);
        free(q);
    }
}

/* Ties: many candidates of the same score (duplicates, and others as
 * good) keep input order, at every budget, under every limit. */
static void test_ties(void) {
    list_maker l = {0};
    static const char *const words[] = {"abc", "abd", "xbc", "abc", "",    "abcd", "abd", "bc",
                                        "abc", "cab", "a",   "abc", "dba", "",     "ab"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        maker_add(&l, (const uint8_t *)words[i], strlen(words[i]));
    test_set t;
    set_from(&t, &l, true);
    const uint8_t *q = (const uint8_t *)"abc";
    for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
        wb_fz_options o;
        random_options(&o, (wb_fz_scorer)scorer, false);
        for (int kind = 0; kind < WB_FZ_KINDS; kind++) {
            o.kind = (wb_fz_kind)kind;
            xc_way ways[3 * 40];
            size_t nways = 0;
            static const size_t limits[] = {1, 3, SIZE_MAX};
            for (size_t m = 0; m < 3; m++)
                for (uint64_t b = 1; b <= 40; b++)
                    ways[nways++] = (xc_way){.limit = limits[m], .budget = b};
            check_ways(&t, q, 3, &o, ways, nways);
        }
    }
    set_free(&t);
}

/* ---- errors ---------------------------------------------------------------------- */

static void check_status(const char *what, const wb_search_set *set, const char *query,
                         const wb_fz_options *o, size_t limit, size_t width,
                         wb_fz_extract_status want, uint64_t want_at) {
    for (uint64_t budget = 1; budget <= UINT64_MAX / 4; budget = UINT64_MAX / 4) {
        uint8_t *cells = width ? calloc(set->count ? set->count : 1, width) : NULL;
        wb_fz_extract_config c = {.set = set,
                                  .query = (const uint8_t *)query,
                                  .query_len = strlen(query),
                                  .o = *o,
                                  .limit = limit,
                                  .cells = cells,
                                  .width = width};
        wb_fz_extract x;
        wb_fz_extract_status status = wb_fz_extract_init(&x, &c);
        uint64_t at = 0;
        if (status == WB_FZ_EXTRACT_OK) {
            uint64_t used = 0;
            while (!wb_fz_extract_step(&x, budget, &used))
                ;
            status = wb_fz_extract_status_of(&x, &at);
            wb_fz_extract_free(&x);
        }
        CHECK(status == want && at == want_at,
              "%s, budget %llu: status %d at %llu, want %d at %llu", what,
              (unsigned long long)budget, (int)status, (unsigned long long)at, (int)want,
              (unsigned long long)want_at);
        free(cells);
        if (budget != 1) break;
    }
}

static void test_errors(void) {
    list_maker l = {0};
    static const char *const words[] = {"abc", "", "ab\xC3\xA9", "a\xFF", "\xC3", "abc"};
    for (size_t i = 0; i < 6; i++)
        maker_add(&l, (const uint8_t *)words[i], strlen(words[i]));
    test_set t;
    set_from(&t, &l, true);
    for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
        wb_fz_options o;
        random_options(&o, (wb_fz_scorer)scorer, true);
        o.ins = o.del = o.sub = 1;
        o.kind = WB_FZ_NORMALIZED_SIMILARITY;
        char what[96];
        snprintf(what, sizeof what, "%s: a query not UTF-8", scorer_names[scorer]);
        check_status(what, &t.list, "a\xC3", &o, 3, 0, WB_FZ_EXTRACT_EUTF8_QUERY, 0);
        snprintf(what, sizeof what, "%s: a candidate not UTF-8", scorer_names[scorer]);
        for (size_t s = 0; s < 2; s++) {
            const wb_search_set *set = s ? &t.index : &t.list;
            check_status(what, set, "abc", &o, 3, 0, WB_FZ_EXTRACT_EUTF8_CANDIDATE, 3);
            check_status(what, set, "abc", &o, SIZE_MAX, 4, WB_FZ_EXTRACT_EUTF8_CANDIDATE, 3);
            /* in bytes, all is well */
            o.codepoints = false;
            check_status("bytes", set, "abc", &o, 3, 0, WB_FZ_EXTRACT_OK, 0);
            o.codepoints = true;
        }
    }
    set_free(&t);

    /* weighted Levenshtein: past 2^64 - 1, past a 32-bit cell (the first
     * such candidate's value); a 64-bit cell holds it */
    static const char *const more[] = {"ab", "abcd", "xyzw", "a"};
    for (size_t i = 0; i < 4; i++)
        maker_add(&l, (const uint8_t *)more[i], strlen(more[i]));
    set_from(&t, &l, true);
    wb_fz_options o = {.scorer = WB_FZ_LEVENSHTEIN, .kind = WB_FZ_DISTANCE};
    o.ins = o.del = o.sub = UINT64_MAX;
    check_status("past 2^64 - 1, hits", &t.list, "ab", &o, 3, 0, WB_FZ_EXTRACT_PAST_U64, 0);
    check_status("past 2^64 - 1, cells", &t.list, "ab", &o, SIZE_MAX, 8, WB_FZ_EXTRACT_PAST_U64, 0);
    o.ins = o.del = o.sub = 4294967295u;
    check_status("past a 32-bit cell", &t.list, "ab", &o, SIZE_MAX, 4, WB_FZ_EXTRACT_PAST_CELL,
                 2 * 4294967295ull);
    check_status("a 64-bit cell", &t.list, "ab", &o, SIZE_MAX, 8, WB_FZ_EXTRACT_OK, 0);
    check_status("hits", &t.list, "ab", &o, 2, 0, WB_FZ_EXTRACT_OK, 0);
    /* a similarity beyond the cutoff is 0 in a cell, whatever its type */
    o.kind = WB_FZ_SIMILARITY;
    with_cutoff(&o, true, 1e18);
    check_status("similarity past the cutoff", &t.list, "ab", &o, SIZE_MAX, 4, WB_FZ_EXTRACT_OK, 0);
    set_free(&t);

    /* a distance past the search core's 32-bit values: candidate 1, of
     * 2^32 + 1 bytes (mapped, never written: zeros) */
    size_t n = ((size_t)1 << 32) + 1;
    uint8_t *big = mmap(NULL, n + 1, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (big == MAP_FAILED) {
        printf("past the search core's values: no mapping of 4 GiB here, skipped\n");
        return;
    }
    const uint64_t offsets[3] = {0, 1, 1 + n};
    const wb_search_set huge = {.count = 2, .bytes = big, .offsets = offsets, .ascii = true};
    wb_fz_options lev = {.scorer = WB_FZ_LEVENSHTEIN, .kind = WB_FZ_DISTANCE};
    lev.ins = lev.del = lev.sub = 1;
    check_status("past the lanes' values", &huge, "", &lev, 2, 0, WB_FZ_EXTRACT_PAST_LANES, 1);
    munmap(big, n + 1);
}

#include "extract_sorted.h"
#include "extract_tokens.h"
#include "extract_unequal.h"
#include "out_of_memory.h"

/* A long candidate is decoded a budget at a time: one of 1 MB of
 * two-byte characters whose last byte is not UTF-8 takes many steps, none
 * much past its budget (its parts of 64 bytes at least), and is found
 * invalid; the same without that byte is scored as the pair scorer
 * scores it. */
static void test_long_decoding(void) {
    size_t len = (size_t)1 << 20;
    uint8_t *b = malloc(len + 1);
    if (!b) abort();
    for (size_t i = 0; i + 1 < len; i += 2) {
        b[i] = 0xC3;
        b[i + 1] = 0xA9;
    }
    b[len] = 0xC3; /* cut short */
    for (int invalid = 1; invalid >= 0; invalid--) {
        list_maker l = {0};
        maker_add(&l, (const uint8_t *)"ab", 2);
        maker_add(&l, b, len + (size_t)invalid);
        test_set t;
        set_from(&t, &l, false);
        wb_fz_options o = {.scorer = WB_FZ_HAMMING, .kind = WB_FZ_DISTANCE, .codepoints = true};
        o.ins = o.del = o.sub = 1;
        wb_fz_extract_config c = {
            .set = &t.list, .query = (const uint8_t *)"ab", .query_len = 2, .o = o, .limit = 2};
        wb_fz_extract x;
        CHECK(wb_fz_extract_init(&x, &c) == WB_FZ_EXTRACT_OK, "init");
        uint64_t used = 0, most = 0, budget = 100;
        size_t steps = 0;
        bool done = false;
        while (!done) {
            uint64_t before = used;
            done = wb_fz_extract_step(&x, budget, &used);
            most = used - before > most ? used - before : most;
            steps++;
        }
        uint64_t at = 0;
        wb_fz_extract_status status = wb_fz_extract_status_of(&x, &at);
        if (invalid) {
            CHECK(status == WB_FZ_EXTRACT_EUTF8_CANDIDATE && at == 1,
                  "1 MB cut short: status %d at %llu, want %d at 1", (int)status,
                  (unsigned long long)at, (int)WB_FZ_EXTRACT_EUTF8_CANDIDATE);
            /* decoding only: 800 bytes a step of 100 units */
            CHECK(steps >= len / 800 && most <= budget + 16,
                  "1 MB decoded in %zu steps (want %zu or more), the largest %llu units (budget "
                  "%llu)",
                  steps, len / 800, (unsigned long long)most, (unsigned long long)budget);
        } else {
            xc_want w;
            xc_reference(&w, &o, &t.list, (const uint8_t *)"ab", 2);
            const wb_fz_hit *hits;
            size_t got = wb_fz_extract_hits(&x, &hits);
            CHECK(status == WB_FZ_EXTRACT_OK && got == 2 && hits[1].index == 1 &&
                      hits[1].score == w.score[1],
                  "1 MB: status %d, %zu hits, the second %llu at %.17g; want 2 hits, 1 at %.17g",
                  (int)status, got, got == 2 ? (unsigned long long)hits[1].index : 0ull,
                  got == 2 ? hits[1].score : 0.0, w.score[1]);
            xc_want_free(&w);
        }
        wb_fz_extract_free(&x);
        set_free(&t);
    }
    free(b);
}

int main(void) {
    /* every kernel this CPU has, and none (no batches: the values'
     * paths give way to the others) */
    for (int k = WB_LANES_OFF; k < WB_LANES_KERNELS; k++) {
        if (!wb_lanes_force((wb_lanes_kernel)k)) {
            printf("lane kernel %s: not on this CPU, skipped\n", wb_lanes_name((wb_lanes_kernel)k));
            continue;
        }
        bool best = k == WB_LANES_KERNELS - 1 || !wb_lanes_supported((wb_lanes_kernel)(k + 1));
        printf("lane kernel %s\n", wb_lanes_name((wb_lanes_kernel)k));
        check_seed(1000 + (uint64_t)k);
        test_ties();
        test_small_sets(best ? 12 : 3);
        test_larger_sets(best ? 8 : 2);
        test_long_candidates(best ? 6 : 2);
    }
    wb_lanes_force(WB_LANES_KERNELS);
    test_sorted_tokens(12);
    test_query_tokens(16);
    test_errors();
    test_unequal_lengths();
    test_long_queries();
    test_long_decoding();
    test_out_of_memory();
    printf("%zu extracts, %zu steps\n", runs, steps_taken);
    return CHECK_SUMMARY();
}

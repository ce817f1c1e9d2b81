/*
 * The extract engine (c_src/fuzzy/extract.h) against "score every
 * candidate with the pair scorer, then sort", shared by its unit test
 * (test_extract.c) and its fuzz target (fuzz_extract.c).
 *
 * The reference (xc_reference) decodes the query and each candidate
 * (wb_fz_symbols) and scores the pair with wb_fz_score, which
 * test_fuzzy.c and fuzz_fuzzy.c hold to the plain references of
 * fuzzy_reference.h. The expected hits are the candidates that pass the
 * cutoff, best first, ties by input order, cut at the limit; a cdist row
 * holds every candidate's score in order, the worst of its kind beyond
 * the cutoff, in the cell's type. xc_run steps an extract in a given
 * budget (its host's clock answering "spent" every so many asks) and
 * compares, writing the first difference into a message.
 */
#ifndef WB_TEST_EXTRACT_CHECK_H
#define WB_TEST_EXTRACT_CHECK_H

#include "../fuzzy/extract.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the reference expects of one extract's query, set and options. */
typedef struct {
    /* EUTF8_QUERY, EUTF8_CANDIDATE or UNEQUAL_CANDIDATE (at), or OK */
    wb_fz_extract_status status;
    uint64_t at;
    size_t count;
    double *score; /* each candidate's */
    uint64_t *value;
    bool *passed;
    size_t *order; /* the passing candidates, best first, ties by index */
    size_t passing;
} xc_want;

static inline void *xc_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) abort();
    return p;
}

/* A host's block allocator that checks its use: every block given back
 * with the size it was asked with, none twice, none left (xc_blocks_live
 * after the extract is freed). */
#define XC_BLOCKS_MOST 4096
static void *xc_block_ptr[XC_BLOCKS_MOST];
static size_t xc_block_size[XC_BLOCKS_MOST], xc_blocks_live, xc_block_misuse;

static inline void *xc_block_alloc(size_t bytes) {
    if (xc_blocks_live == XC_BLOCKS_MOST) return NULL;
    void *p = malloc(bytes ? bytes : 1);
    if (p) {
        xc_block_ptr[xc_blocks_live] = p;
        xc_block_size[xc_blocks_live++] = bytes;
    }
    return p;
}

static inline void xc_block_free(void *block, size_t bytes) {
    for (size_t i = xc_blocks_live; i-- > 0;) {
        if (xc_block_ptr[i] != block) continue;
        if (xc_block_size[i] != bytes) xc_block_misuse++;
        xc_blocks_live--;
        xc_block_ptr[i] = xc_block_ptr[xc_blocks_live];
        xc_block_size[i] = xc_block_size[xc_blocks_live];
        free(block);
        return;
    }
    xc_block_misuse++; /* not one of ours, or given back twice */
}

/* A host's free_later: the engine's large blocks of malloc, freed here
 * (the sanitizers find one freed twice or of another allocator); those
 * under the engine's threshold are its own to free */
static size_t xc_freed_later, xc_freed_later_small;

static inline void xc_free_later(void *block, size_t bytes) {
    xc_freed_later++;
    xc_freed_later_small += bytes < 64 * 1024;
    free(block);
}

/* whether score x (value xv) ranks before y (yv), as the engine ranks:
 * the integer kinds by their exact values */
static inline bool xc_better(const wb_fz_options *o, double x, uint64_t xv, double y, uint64_t yv) {
    if (!wb_fz_integers(o)) return wb_fz_better(o->kind, x, y);
    return o->kind == WB_FZ_DISTANCE ? xv < yv : xv > yv;
}

static const wb_fz_options *xc_sort_options;
static const xc_want *xc_sort_want;

static inline int xc_compare(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    const xc_want *w = xc_sort_want;
    if (xc_better(xc_sort_options, w->score[a], w->value[a], w->score[b], w->value[b])) return -1;
    if (xc_better(xc_sort_options, w->score[b], w->value[b], w->score[a], w->value[a])) return 1;
    return a < b ? -1 : a > b;
}

/* Every candidate scored by the pair scorer, then sorted. */
static inline void xc_reference(xc_want *w, const wb_fz_options *o, const wb_search_set *set,
                                const uint8_t *query, size_t qlen) {
    size_t count = set->count;
    memset(w, 0, sizeof *w);
    w->count = count;
    w->score = xc_alloc(count * sizeof *w->score);
    w->value = xc_alloc(count * sizeof *w->value);
    w->passed = xc_alloc(count * sizeof *w->passed);
    w->order = xc_alloc(count * sizeof *w->order);
    uint32_t *a = xc_alloc(qlen * sizeof *a);
    size_t m = wb_fz_symbols(query, qlen, o->codepoints, a);
    if (m == SIZE_MAX) {
        w->status = WB_FZ_EXTRACT_EUTF8_QUERY;
        free(a);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
        uint32_t *b = xc_alloc(len * sizeof *b);
        size_t n = wb_fz_symbols(set->bytes + set->offsets[i], len, o->codepoints, b);
        w->passed[i] = false;
        w->score[i] = 0.0;
        w->value[i] = 0;
        if (n == SIZE_MAX) {
            if (w->status == WB_FZ_EXTRACT_OK) {
                w->status = WB_FZ_EXTRACT_EUTF8_CANDIDATE;
                w->at = i;
            }
        } else if (o->no_pad && o->scorer == WB_FZ_HAMMING && n != m) {
            /* Hamming without padding: no score, the search's error */
            if (w->status == WB_FZ_EXTRACT_OK) {
                w->status = WB_FZ_EXTRACT_UNEQUAL_CANDIDATE;
                w->at = i;
            }
        } else if (!wb_fz_score(o, a, m, b, n, &w->score[i], &w->passed[i])) {
            abort();
        }
        free(b);
        /* the integer kinds' scores here stay far below 2^53 */
        if (wb_fz_integers(o) && w->passed[i]) w->value[i] = (uint64_t)w->score[i];
        if (w->passed[i]) w->order[w->passing++] = i;
    }
    free(a);
    xc_sort_options = o;
    xc_sort_want = w;
    qsort(w->order, w->passing, sizeof *w->order, xc_compare);
}

static inline void xc_want_free(xc_want *w) {
    free(w->score);
    free(w->value);
    free(w->passed);
    free(w->order);
    memset(w, 0, sizeof *w);
}

/* A host clock that says the time is up at every `every`-th ask (0:
 * never). */
typedef struct {
    unsigned every, asked;
} xc_clock;

static inline bool xc_spent(void *context) {
    xc_clock *c = context;
    c->asked++;
    return c->every != 0 && c->asked % c->every == 0;
}

/* One way of running an extract. */
typedef struct {
    size_t limit; /* SIZE_MAX: all */
    size_t width; /* a cdist row of cells this wide (4, 8), or 0: hits */
    uint64_t budget;
    unsigned spent_every; /* the host's clock (xc_clock) */
    /* stop after this many steps and free the extract half-way (0: run
     * to the end) */
    size_t abandon_after;
    /* the set's tokens sorted (the config's `sorted`; NULL: none) */
    const wb_search_set *sorted;
} xc_way;

static inline void xc_say(char *why, size_t room, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(why, room, format, args);
    va_end(args);
}

/* The cell the reference expects of candidate i; false when its score
 * does not fit the cell (the extract then stops at it: *unfit, *at). */
static inline bool xc_want_cell(const wb_fz_options *o, const xc_want *w, size_t i, size_t width,
                                uint8_t cell[8], wb_fz_extract_status *unfit, uint64_t *at) {
    bool integers = wb_fz_integers(o);
    double score = w->passed[i] ? w->score[i] : wb_fz_worst(o);
    uint64_t value = w->value[i];
    if (!w->passed[i] && integers && !wb_fz_worst_value(o, &value)) {
        *unfit = WB_FZ_EXTRACT_PAST_U64;
        *at = 0;
        return false;
    }
    if (width == 8 && integers) {
        memcpy(cell, &value, 8);
    } else if (width == 8) {
        memcpy(cell, &score, 8);
    } else if (integers) {
        if (value > UINT32_MAX) {
            *unfit = WB_FZ_EXTRACT_PAST_CELL;
            *at = value;
            return false;
        }
        uint32_t v = (uint32_t)value;
        memcpy(cell, &v, 4);
    } else {
        float v = (float)score;
        memcpy(cell, &v, 4);
    }
    return true;
}

/* The hits' alignments (o->alignment: the ratio's, the partial
 * ratio's) against the pair scorer's, asked of each hit's pair apart (no
 * cutoff: where the score is, passing or not); false with the first
 * difference in `why`. None asked: none given. */
static inline bool xc_alignments(const wb_fz_options *o, const wb_search_set *set,
                                 const uint8_t *query, size_t qlen, const wb_fz_extract *x,
                                 char *why, size_t room) {
    const wb_fz_alignment *got = wb_fz_extract_alignments(x);
    if (!wb_fz_extract_aligns(o)) {
        if (got) xc_say(why, room, "alignments not asked for");
        return got == NULL;
    }
    const wb_fz_hit *hits;
    size_t count = wb_fz_extract_hits(x, &hits);
    if (!got) {
        xc_say(why, room, "no alignments");
        return false;
    }
    uint32_t *a = xc_alloc(qlen * sizeof *a);
    size_t m = wb_fz_symbols(query, qlen, o->codepoints, a);
    bool ok = true;
    for (size_t k = 0; ok && k < count; k++) {
        size_t i = (size_t)hits[k].index, len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
        uint32_t *b = xc_alloc(len * sizeof *b);
        size_t n = wb_fz_symbols(set->bytes + set->offsets[i], len, o->codepoints, b);
        wb_fz_options pair = *o;
        pair.has_cutoff = false;
        wb_fz s;
        if (!wb_fz_start(&s, &pair, a, m, b, n)) abort();
        uint64_t used = 0;
        while (!wb_fz_step(&s, UINT64_MAX / 4, &used)) {
        }
        wb_fz_alignment want = s.alignment, at = got[k];
        if (s.failed) abort();
        wb_fz_free(&s);
        free(b);
        if (at.src_start != want.src_start || at.src_end != want.src_end ||
            at.dest_start != want.dest_start || at.dest_end != want.dest_end) {
            xc_say(why, room,
                   "hit %zu's alignment: [%zu, %zu) [%zu, %zu), want [%zu, %zu) [%zu, %zu)", k,
                   at.src_start, at.src_end, at.dest_start, at.dest_end, want.src_start,
                   want.src_end, want.dest_start, want.dest_end);
            ok = false;
        }
    }
    free(a);
    return ok;
}

/* Runs the extract one way and compares it with the reference; false
 * with the first difference in `why`. *steps_out: the steps it took. */
static inline bool xc_run(const wb_fz_options *o, const wb_search_set *set, const uint8_t *query,
                          size_t qlen, const xc_want *w, const xc_way *way, char *why, size_t room,
                          size_t *steps_out) {
    size_t count = set->count;
    uint8_t *cells = NULL;
    if (way->width) {
        cells = xc_alloc(count * way->width);
        memset(cells, 0xA5, count * way->width);
    }
    xc_clock clock = {way->spent_every, 0};
    wb_fz_extract_config c = {
        .set = set,
        .query = query,
        .query_len = qlen,
        .o = *o,
        .limit = way->limit,
        .cells = cells,
        .width = way->width,
        .spent = xc_spent,
        .spent_context = &clock,
        .sorted = way->sorted,
        /* as a host that frees large blocks later: half the ways */
        .block_alloc = way->budget % 2 ? xc_block_alloc : NULL,
        .block_free = way->budget % 2 ? xc_block_free : NULL,
        .free_later = way->budget % 2 ? xc_free_later : NULL,
    };
    wb_fz_extract x;
    wb_fz_extract_status status = wb_fz_extract_init(&x, &c);
    bool ok = true;
    *steps_out = 0;
    /* a query not UTF-8 is found in the first steps */
    if (status != WB_FZ_EXTRACT_OK) {
        if (status != w->status) {
            xc_say(why, room, "init: status %d, want %d", (int)status, (int)w->status);
            ok = false;
        }
        free(cells);
        return ok;
    }
    uint64_t used = 0;
    size_t steps = 0;
    /* each step takes at least one unit: no more steps than the units
     * of every candidate's score, its set-up and its decoding, and some
     * for the engine's own passes */
    uint64_t most = 1000000 + 64 * (uint64_t)count;
    for (size_t j = 0; j < count; j++) {
        size_t n = (size_t)(set->offsets[j + 1] - set->offsets[j]);
        most += wb_fz_units(o, qlen, n) + wb_fz_setup_units(o, qlen, n) + 4 * (uint64_t)n;
    }
    bool done = false;
    while (!done && steps < most) {
        uint64_t before = used;
        done = wb_fz_extract_step(&x, way->budget, &used);
        steps++;
        if (used < before) {
            xc_say(why, room, "step %zu: used went back from %llu to %llu", steps,
                   (unsigned long long)before, (unsigned long long)used);
            ok = false;
            break;
        }
        if (!done && way->abandon_after && steps >= way->abandon_after) {
            /* memory asked half-way, then freed there (the sanitizers
             * find what is not) */
            (void)wb_fz_extract_memory(&x);
            wb_fz_extract_free(&x);
            free(cells);
            *steps_out = steps;
            bool freed = !xc_blocks_live && !xc_block_misuse;
            if (!freed)
                xc_say(why, room, "abandoned: %zu blocks left, %zu given back wrong",
                       xc_blocks_live, xc_block_misuse);
            xc_blocks_live = xc_block_misuse = 0;
            return freed;
        }
    }
    *steps_out = steps;
    if (ok && !done) {
        xc_say(why, room, "not done after %zu steps", steps);
        ok = false;
    }
    uint64_t at = 0;
    status = ok ? wb_fz_extract_status_of(&x, &at) : WB_FZ_EXTRACT_OK;
    wb_fz_extract_status want_status = w->status;
    uint64_t want_at = w->at;
    if (ok && way->width &&
        (want_status == WB_FZ_EXTRACT_OK || want_status == WB_FZ_EXTRACT_EUTF8_CANDIDATE ||
         want_status == WB_FZ_EXTRACT_UNEQUAL_CANDIDATE)) {
        /* the cells, in order, up to the first that does not fit (which
         * stops the row before any candidate not UTF-8, or of another
         * length, after it) */
        size_t end = want_status == WB_FZ_EXTRACT_OK ? count : (size_t)want_at;
        for (size_t i = 0; i < end; i++) {
            uint8_t cell[8];
            if (!xc_want_cell(o, w, i, way->width, cell, &want_status, &want_at)) break;
            if (status == WB_FZ_EXTRACT_OK && memcmp(cell, cells + i * way->width, way->width)) {
                uint64_t got = 0, want = 0;
                memcpy(&got, cells + i * way->width, way->width);
                memcpy(&want, cell, way->width);
                xc_say(why, room, "cell %zu: bytes %016llx, want %016llx (%.17g%s)", i,
                       (unsigned long long)got, (unsigned long long)want, w->score[i],
                       w->passed[i] ? "" : ", not passed");
                ok = false;
                break;
            }
        }
    }
    if (ok && (status != want_status || at != want_at)) {
        xc_say(why, room, "status %d at %llu, want %d at %llu", (int)status, (unsigned long long)at,
               (int)want_status, (unsigned long long)want_at);
        ok = false;
    }
    if (ok && !way->width && status == WB_FZ_EXTRACT_OK) {
        const wb_fz_hit *hits;
        size_t got = wb_fz_extract_hits(&x, &hits);
        size_t want = w->passing < way->limit ? w->passing : way->limit;
        bool integers = wb_fz_integers(o);
        for (size_t k = 0; ok && k < want && k < got; k++) {
            size_t i = w->order[k];
            if (hits[k].index != i || hits[k].score != w->score[i] ||
                (integers && hits[k].value != w->value[i])) {
                xc_say(why, room, "hit %zu: candidate %llu, %.17g (%llu); want %zu, %.17g (%llu)",
                       k, (unsigned long long)hits[k].index, hits[k].score,
                       (unsigned long long)hits[k].value, i, w->score[i],
                       (unsigned long long)w->value[i]);
                ok = false;
            }
        }
        if (ok && got != want) {
            xc_say(why, room, "%zu hits, want %zu", got, want);
            ok = false;
        }
        if (ok && !xc_alignments(o, set, query, qlen, &x, why, room)) ok = false;
    }
    wb_fz_extract_free(&x);
    free(cells);
    if (ok && (xc_blocks_live || xc_block_misuse)) {
        xc_say(why, room, "blocks: %zu left, %zu given back wrong", xc_blocks_live,
               xc_block_misuse);
        ok = false;
    }
    if (ok && xc_freed_later_small) {
        xc_say(why, room, "%zu blocks under 64 KiB handed to free_later", xc_freed_later_small);
        ok = false;
    }
    xc_blocks_live = xc_block_misuse = xc_freed_later_small = 0;
    return ok;
}

#endif

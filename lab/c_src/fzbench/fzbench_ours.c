/*
 * The library's fuzzy C core as the bench drives it (fzbench_ours.h).
 */
#include "fzbench_ours.h"

#include "fuzzy/extract.h"

#include <stdlib.h>
#include <string.h>

static const char *const scorer_names[] = WB_FZ_SCORER_NAMES;

size_t fzb_scorers(void) {
    return WB_FZ_SCORERS;
}

const char *fzb_scorer_name(size_t scorer) {
    return scorer < WB_FZ_SCORERS ? scorer_names[scorer] : NULL;
}

/* Fuzzy.score/3's defaults: the normalized similarity, bytes, no cutoff,
 * unit costs, Jaro-Winkler's prefix weight 0.1 */
static void default_options(wb_fz_options *o, size_t scorer) {
    memset(o, 0, sizeof *o);
    o->scorer = (wb_fz_scorer)scorer;
    o->kind = WB_FZ_NORMALIZED_SIMILARITY;
    o->ins = o->del = o->sub = 1;
    o->prefix_weight = 0.1;
}

bool fzb_pair_room_init(fzb_pair_room *r, size_t most) {
    size_t room = most > 0 ? most : 1;
    r->most = most;
    r->a = malloc(room * sizeof *r->a);
    r->b = malloc(room * sizeof *r->b);
    if (!r->a || !r->b) {
        fzb_pair_room_free(r);
        return false;
    }
    return true;
}

void fzb_pair_room_free(fzb_pair_room *r) {
    free(r->a);
    free(r->b);
    r->a = r->b = NULL;
    r->most = 0;
}

bool fzb_pair(fzb_pair_room *r, size_t scorer, const uint8_t *a, size_t m, const uint8_t *b,
              size_t n, double *score) {
    if (scorer >= WB_FZ_SCORERS || m > r->most || n > r->most) return false;
    wb_fz_options o;
    default_options(&o, scorer);
    /* the score job's steps: both sides decoded, the pair started, then
     * stepped to the end (one step: a budget no pair of these exhausts) */
    size_t sm = wb_fz_symbols(a, m, false, r->a);
    size_t sn = wb_fz_symbols(b, n, false, r->b);
    wb_fz s;
    if (!wb_fz_start(&s, &o, r->a, sm, r->b, sn)) return false;
    uint64_t used = 0;
    while (!wb_fz_step(&s, UINT64_MAX / 4, &used)) {
    }
    bool ok = !s.failed;
    *score = s.passed ? s.score : wb_fz_worst(&o);
    wb_fz_free(&s);
    return ok;
}

struct fzb_index {
    wb_search_owned_set owned;
    wb_search_batches batches;
    wb_search_set set;
};

fzb_index *fzb_index_new(const uint8_t *bytes, const uint64_t *offsets, size_t count) {
    fzb_index *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    uint64_t total = count ? offsets[count] : 0;
    if (!wb_search_set_alloc(&x->owned, count, (size_t)total)) {
        free(x);
        return NULL;
    }
    memcpy(x->owned.offsets, offsets, (count + 1) * sizeof *offsets);
    if (total) memcpy(x->owned.bytes, bytes, (size_t)total);
    bool ascii = true;
    for (uint64_t i = 0; i < total && ascii; i++)
        ascii = bytes[i] < 0x80;
    x->owned.set.ascii = ascii;
    if (!wb_search_batches_build(&x->batches, &x->owned.set)) {
        wb_search_set_free(&x->owned);
        free(x);
        return NULL;
    }
    x->set = x->owned.set;
    x->set.prepared = &x->batches;
    return x;
}

void fzb_index_free(fzb_index *x) {
    if (!x) return;
    wb_search_batches_free(&x->batches);
    wb_search_set_free(&x->owned);
    free(x);
}

size_t fzb_index_count(const fzb_index *x) {
    return x->set.count;
}

bool fzb_extract(const fzb_index *x, size_t scorer, const uint8_t *query, size_t qlen, size_t limit,
                 double *cells, uint64_t *index_out, double *score_out, size_t *hits) {
    if (scorer >= WB_FZ_SCORERS) return false;
    wb_fz_extract_config c;
    memset(&c, 0, sizeof c);
    c.set = &x->set;
    c.query = query;
    c.query_len = qlen;
    default_options(&c.o, scorer);
    c.limit = limit;
    c.cells = (uint8_t *)cells;
    c.width = cells ? sizeof(double) : 0;
    wb_fz_extract e;
    if (wb_fz_extract_init(&e, &c) != WB_FZ_EXTRACT_OK) return false;
    uint64_t used = 0;
    while (!wb_fz_extract_step(&e, UINT64_MAX / 4, &used)) {
    }
    uint64_t at = 0;
    bool ok = wb_fz_extract_status_of(&e, &at) == WB_FZ_EXTRACT_OK;
    *hits = 0;
    if (ok && !cells) {
        const wb_fz_hit *h = NULL;
        size_t k = wb_fz_extract_hits(&e, &h);
        for (size_t i = 0; i < k && i < limit; i++) {
            index_out[i] = h[i].index;
            score_out[i] = h[i].score;
        }
        *hits = k < limit ? k : limit;
    }
    wb_fz_extract_free(&e);
    return ok;
}

/*
 * The library's fuzzy C core as the bench drives it (fzbench_ours.h).
 */
#include "fzbench_ours.h"

#include "fuzzy/extract.h"
#include "metric/editops.h"

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
    /* the score job's steps: both sides decoded (but for a scorer that
     * reads the bytes themselves), the pair started, then stepped to the
     * end (one step: a budget no pair of these exhausts) */
    wb_fz s;
    if (wb_fz_reads_bytes(&o)) {
        if (!wb_fz_start_bytes(&s, &o, a, m, b, n)) return false;
    } else {
        size_t sm = wb_fz_symbols(a, m, false, r->a);
        size_t sn = wb_fz_symbols(b, n, false, r->b);
        if (!wb_fz_start(&s, &o, r->a, sm, r->b, sn)) return false;
    }
    uint64_t used = 0;
    while (!wb_fz_step(&s, UINT64_MAX / 4, &used)) {
    }
    bool ok = !s.failed;
    *score = s.passed ? s.score : wb_fz_worst(&o);
    wb_fz_free(&s);
    return ok;
}

bool fzb_editops(fzb_pair_room *r, const uint8_t *a, size_t m, const uint8_t *b, size_t n,
                 uint8_t **script, size_t *distance, size_t *width) {
    if (m > r->most || n > r->most) return false;
    /* the job's steps: both sides decoded, the script made to its end
     * (one step: a budget no pair of these exhausts), its block taken */
    size_t sm = wb_fz_symbols(a, m, false, r->a), sn = wb_fz_symbols(b, n, false, r->b);
    wb_eo s;
    wb_eo_start(&s, WB_EO_LEVENSHTEIN, r->a, sm, r->b, sn);
    uint64_t used = 0;
    while (!wb_eo_step(&s, UINT64_MAX / 4, &used)) {
    }
    bool ok = !s.failed && !s.broken;
    size_t bytes;
    *distance = s.distance;
    *width = s.width;
    *script = wb_eo_take(&s, &bytes);
    wb_eo_free(&s);
    return ok;
}

void fzb_editops_record(const uint8_t *script, size_t width, size_t k, int *type, size_t *src,
                        size_t *dest) {
    wb_eo_op op;
    wb_eo_record(script, width, k, &op, src, dest);
    *type = (int)op;
}

struct fzb_index {
    wb_search_owned_set owned;
    wb_search_batches batches;
    wb_search_set set;
    /* the candidates' tokens sorted, as Fuzzy.Index.new/2 keeps them
     * (sorted_tokens: true; the set itself when every candidate is its
     * own, owned_sorted false) */
    bool owned_sorted;
    wb_search_owned_set sorted_owned;
    wb_search_batches sorted_batches;
    wb_search_set sorted;
};

/* the sorted tokens' set of x's candidates (false: out of memory) */
static bool sorted_new(fzb_index *x) {
    const wb_search_set *set = &x->owned.set;
    uint64_t total = set->count ? set->offsets[set->count] : 0;
    if (!wb_search_set_alloc(&x->sorted_owned, set->count, (size_t)total)) return false;
    bool differ = false;
    uint64_t at = 0;
    x->sorted_owned.offsets[0] = 0;
    for (size_t i = 0; i < set->count; i++) {
        const uint8_t *b = set->bytes + set->offsets[i];
        size_t n = (size_t)(set->offsets[i + 1] - set->offsets[i]);
        size_t len = wb_fz_sorted_tokens(b, n, x->sorted_owned.bytes + at);
        if (len == SIZE_MAX) {
            wb_search_set_free(&x->sorted_owned);
            return false;
        }
        differ = differ || len != n || memcmp(b, x->sorted_owned.bytes + at, n) != 0;
        at += len;
        x->sorted_owned.offsets[i + 1] = at;
    }
    if (!differ) {
        wb_search_set_free(&x->sorted_owned);
        x->sorted = x->set;
        return true;
    }
    x->sorted_owned.set.ascii = set->ascii;
    if (!wb_search_batches_build(&x->sorted_batches, &x->sorted_owned.set)) {
        wb_search_set_free(&x->sorted_owned);
        return false;
    }
    x->sorted = x->sorted_owned.set;
    x->sorted.prepared = &x->sorted_batches;
    x->owned_sorted = true;
    return true;
}

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
    if (!sorted_new(x)) {
        fzb_index_free(x);
        return NULL;
    }
    return x;
}

void fzb_index_free(fzb_index *x) {
    if (!x) return;
    if (x->owned_sorted) {
        wb_search_batches_free(&x->sorted_batches);
        wb_search_set_free(&x->sorted_owned);
    }
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
    c.sorted = &x->sorted;
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

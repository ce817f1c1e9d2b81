/*
 * The extract engine (extract.h): its course (the search core's values,
 * their scores and bars in extract_bars.c, cdist's cells in
 * extract_cells.c, the quick scores, the pair
 * scorer for the rest, then the hits sorted), its state's life, and its
 * estimates of work.
 */
#include "extract_keep.h"

/* A candidate is decoded in parts of DECODE_PART_LEAST units and more
 * (WB_FZ_DECODE_BYTES bytes a unit), as the budget allows */
#define DECODE_PART_LEAST 8

/* The query is copied QUERY_COPY_BYTES bytes a unit, into a fresh
 * block: a 4 MB query's first pages faulted in at 47 ns a unit of 32
 * bytes (thread CPU time), one step of 10,000 units 468 us */
#define QUERY_COPY_BYTES 8

/* The units of the query's set-up in the first steps: copied, decoded,
 * its pattern filled */
static uint64_t query_units(size_t query_len) {
    return (uint64_t)query_len / QUERY_COPY_BYTES + wb_fz_decode_units(query_len) +
           wb_fz_pattern_units(query_len) + 4;
}

/* Blocks of malloc of WB_FZ_FREE_LATER_FROM bytes and up go to the host's
 * free_later */
static void let_go(const wb_fz_extract *job, void *block, size_t bytes) {
    if (block && job->free_later && bytes >= WB_FZ_FREE_LATER_FROM)
        job->free_later(block, bytes);
    else
        free(block);
}

void wb_fz_extract_free(wb_fz_extract *job) {
    if (job->scoring) wb_fz_free(&job->fz);
    /* the search core's blocks to the host's release, when it has one */
    if (job->lanes_live && job->release)
        wb_search_free_with(&job->lanes, job->release);
    else if (job->lanes_live)
        wb_search_free(&job->lanes);
    if (job->tokens_live) wb_fz_free(&job->query_tokens);
    if (job->sorted_live) {
        wb_fz_pattern_free_with(&job->sorted_pattern, job->free_later);
    }
    if (job->has_pattern) {
        /* its tables (wb_fz_pattern_alloc's): a long query's are large */
        wb_fz_pattern_free_with(&job->pattern, job->free_later);
    }
    wb_fz_quick_free(&job->quick);
    if (job->query && job->block_free)
        job->block_free(job->query, (job->qlen_room > 0 ? job->qlen_room : 1) * sizeof(uint32_t));
    else
        free(job->query);
    let_go(job, job->query_input, job->query_input_len);
    free(job->jaro_top);
    free(job->cell_table);
    free(job->text);
    free(job->heap);
    free(job->pick);
    free(job->aligns);
    memset(job, 0, sizeof *job);
}

/* Whether the search core computes values for the options' scorer (true,
 * *op what), `bytes`: the query (of query_bytes) and candidates are bytes
 * (or ASCII). */
static bool lanes_op_of(const wb_fz_options *o, bool bytes, const uint8_t *query,
                        size_t query_bytes, wb_search_op *op) {
    /* the search core's set-up reads the whole query at once (a copy, its
     * tables): a longer one takes the other paths */
    if (query_bytes > WB_FZ_EXTRACT_LANES_QUERY_MOST) return false;
    switch (o->scorer) {
    case WB_FZ_LEVENSHTEIN:
        *op = WB_SEARCH_LEVENSHTEIN; /* every distance, codepoints too */
        return o->ins == 1 && o->del == 1 && o->sub == 1;
    case WB_FZ_INDEL:
    case WB_FZ_LCS_SEQ:
    case WB_FZ_RATIO:
    case WB_FZ_QRATIO:
        *op = WB_SEARCH_LCS;
        return bytes;
    case WB_FZ_OSA:
        *op = WB_SEARCH_OSA;
        return bytes;
    case WB_FZ_HAMMING:
        /* without padding, a candidate of another length is an error,
         * which the values would not tell */
        *op = WB_SEARCH_HAMMING;
        return bytes && !o->no_pad;
    case WB_FZ_JARO:
    case WB_FZ_JARO_WINKLER:
        *op = WB_SEARCH_JARO;
        return bytes && query_bytes <= WB_LANES_JARO_QUERY_MOST; /* a batch's Jaro in one go */
    case WB_FZ_DAMERAU_LEVENSHTEIN:
        /* the LCS bounds the distance; the quick score does the rest */
        *op = WB_SEARCH_LCS;
        return bytes && query_bytes <= 64;
    case WB_FZ_PARTIAL_RATIO:
        /* the LCS bounds the best window (lanes_scores) */
        *op = WB_SEARCH_LCS;
        return bytes;
    case WB_FZ_TOKEN_SORT_RATIO:
    case WB_FZ_TOKEN_SET_RATIO:
    case WB_FZ_TOKEN_RATIO:
    case WB_FZ_PARTIAL_TOKEN_SORT_RATIO:
    case WB_FZ_PARTIAL_TOKEN_SET_RATIO:
    case WB_FZ_PARTIAL_TOKEN_RATIO:
    case WB_FZ_WRATIO:
        /* one token against one token: the token scores are the ratio
         * (sorting one token changes nothing; two sets of one token have
         * no intersection unless equal, when both are 100), the partial
         * token scores the partial ratio, WRatio the ratio or the best of
         * it and the scaled partial ratio */
        *op = WB_SEARCH_LCS;
        return bytes && !has_space(query, query_bytes);
    default:
        return false;
    }
}

/* The token scores: their query's token work is done once (tokens_on) */
static bool token_scorer(wb_fz_scorer scorer) {
    return scorer >= WB_FZ_TOKEN_SORT_RATIO && scorer <= WB_FZ_WRATIO;
}

/* and the partial ones of them whose needle may be the query's sorted
 * tokens joined: that pattern is made once too */
static bool sorted_needle(wb_fz_scorer scorer) {
    return scorer == WB_FZ_PARTIAL_TOKEN_SORT_RATIO || scorer == WB_FZ_PARTIAL_TOKEN_RATIO ||
           scorer == WB_FZ_WRATIO;
}

uint64_t wb_fz_extract_units(const wb_fz_options *o, const wb_search_set *set, const uint8_t *query,
                             size_t query_len) {
    size_t count = set->count;
    uint64_t bytes = set->offsets[count];
    size_t average = (size_t)(bytes / count);
    if (count == 0) return 1 + query_units(query_len);
    uint64_t each = wb_fz_units(o, query_len, average) + wb_fz_setup_units(o, query_len, average) +
                    wb_fz_decode_units(average) + 2;
    /* an index's batches give every candidate they hold its score (not
     * the partial ratios or the token scores, whose candidates may need
     * the general path): their steps, a few units a score, and the general
     * cost for the others */
    const wb_lanes_index *x = set->prepared;
    bool bytes_only =
        !o->codepoints || (set->ascii && query_len <= WB_FZ_EXTRACT_LANES_QUERY_MOST &&
                           wb_text_ascii(query, query_len));
    wb_search_op op;
    /* Damerau-Levenshtein's values bound it: its cost is the general one */
    bool exact = (o->scorer < WB_FZ_PARTIAL_RATIO || o->scorer == WB_FZ_QRATIO) &&
                 o->scorer != WB_FZ_DAMERAU_LEVENSHTEIN;
    if (x && query_len > 0 && exact && lanes_op_of(o, bytes_only, query, query_len, &op)) {
        uint64_t rest =
            each > UINT64_MAX / (x->rest_count + 1) ? UINT64_MAX / 4 : each * x->rest_count;
        return wb_search_predict(count, bytes, query_len, false, true) + 4 * (uint64_t)count + rest;
    }
    uint64_t most = each > UINT64_MAX / count ? UINT64_MAX / 2 : each * count;
    /* and sorting the hits; the token scores' query token work */
    uint64_t tokens = token_scorer(o->scorer) ? wb_fz_query_tokens_units(o, query_len) +
                                                    wb_fz_pattern_units(query_len) + 2
                                              : 0;
    return most + count + query_units(query_len) + tokens;
}

uint64_t wb_fz_extract_setup_units(size_t query_len) {
    /* the blocks for the query allocated (its copy, decoding and pattern
     * are the first steps') */
    (void)query_len;
    return 2;
}

/* Starts the search core on the query, in init: its set-up reads the
 * whole query (a copy, its tables), work the init's units count, not a
 * step's. False when out of memory. */
static bool lanes_begin(wb_fz_extract *job) {
    wb_search_status status;
    if (job->lanes_op == WB_SEARCH_LEVENSHTEIN) {
        /* a distance cutoff cuts the same for every candidate */
        size_t k = job->o.has_cutoff && job->o.kind == WB_FZ_DISTANCE && job->o.cutoff >= 0 &&
                           job->o.cutoff < 4294967294.0
                       ? (size_t)job->o.cutoff
                       : WB_SEARCH_NO_LIMIT;
        status = wb_search_init(&job->lanes, job->set, job->query_input, job->query_input_len,
                                job->o.codepoints, k, 0);
    } else {
        status = wb_search_init_op(&job->lanes, job->set, job->query_input, job->query_input_len,
                                   job->o.codepoints, job->lanes_op);
    }
    job->lanes_live = status == WB_SEARCH_OK;
    return job->lanes_live;
}

static wb_fz_extract_status init_with(wb_fz_extract *job, const wb_fz_extract_config *c);

/* A token of a text (wb_fz_sorted_tokens) */
typedef struct {
    const uint8_t *at;
    size_t len;
} query_token;

static int token_order(const void *x, const void *y) {
    const query_token *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->at, b->at, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

size_t wb_fz_sorted_tokens(const uint8_t *q, size_t n, uint8_t *out) {
    size_t count = 0;
    for (size_t k = 0; k < n; k++)
        count += !wb_fz_ascii_space(q[k]) && (k == 0 || wb_fz_ascii_space(q[k - 1]));
    query_token *tokens = malloc((count ? count : 1) * sizeof *tokens);
    if (!tokens) return SIZE_MAX;
    size_t t = 0;
    for (size_t k = 0; k < n;) {
        while (k < n && wb_fz_ascii_space(q[k]))
            k++;
        size_t from = k;
        while (k < n && !wb_fz_ascii_space(q[k]))
            k++;
        if (k > from) tokens[t++] = (query_token){q + from, k - from};
    }
    qsort(tokens, count, sizeof *tokens, token_order);
    size_t len = 0;
    for (size_t k = 0; k < count; k++) {
        if (k > 0) out[len++] = ' ';
        memcpy(out + len, tokens[k].at, tokens[k].len);
        len += tokens[k].len;
    }
    free(tokens);
    return len;
}

/* The sorted query's bound: its sorting reads it a few times (init's
 * units count two decodings), so longer queries take the general path */
#define SORTED_QUERY_MOST 4096

wb_fz_extract_status wb_fz_extract_init(wb_fz_extract *job, const wb_fz_extract_config *c) {
    wb_fz_scorer scorer = c->o.scorer;
    bool token_sort = scorer == WB_FZ_TOKEN_SORT_RATIO || scorer == WB_FZ_PARTIAL_TOKEN_SORT_RATIO;
    /* the index's sorted tokens: the same tokens where they are bytes */
    if (!c->sorted || !token_sort || c->query_len > SORTED_QUERY_MOST ||
        c->sorted->count != c->set->count ||
        (c->o.codepoints &&
         !(c->set->ascii && c->sorted->ascii && wb_text_ascii(c->query, c->query_len))))
        return init_with(job, c);
    uint8_t *q = malloc(c->query_len > 0 ? c->query_len : 1);
    size_t len = q ? wb_fz_sorted_tokens(c->query, c->query_len, q) : SIZE_MAX;
    if (len == SIZE_MAX) {
        free(q);
        memset(job, 0, sizeof *job);
        return WB_FZ_EXTRACT_ENOMEM;
    }
    wb_fz_extract_config sorted = *c;
    sorted.set = c->sorted;
    sorted.sorted = NULL;
    sorted.query = q;
    sorted.query_len = len;
    sorted.o.scorer = scorer == WB_FZ_TOKEN_SORT_RATIO ? WB_FZ_RATIO : WB_FZ_PARTIAL_RATIO;
    wb_fz_extract_status status = init_with(job, &sorted);
    if (status == WB_FZ_EXTRACT_OK) {
        /* the steps copy a query from the caller's bytes: this one, at
         * most SORTED_QUERY_MOST bytes, is copied now, as it is freed */
        memcpy(job->query_input, q, len);
        job->copied = len;
        job->query_from = NULL;
    }
    free(q);
    return status;
}

static wb_fz_extract_status init_with(wb_fz_extract *job, const wb_fz_extract_config *c) {
    memset(job, 0, sizeof *job);
    job->block_alloc = c->block_alloc;
    job->block_free = c->block_free;
    job->free_later = c->free_later;
    job->o = c->o;
    /* the candidates are scored without their alignments: the hits' own
     * are found once they are sorted */
    job->align = !c->cells && wb_fz_extract_aligns(&c->o);
    job->o.alignment = false;
    job->set = c->set;
    job->limit = c->cells ? SIZE_MAX : c->limit;
    job->spent = c->spent;
    job->spent_context = c->spent_context;
    job->release = c->release;
    if (c->cells) {
        job->width = c->width;
        job->cells = c->cells;
    }
    job->integers = wb_fz_integers(&c->o);
    job->tokens_on = token_scorer(c->o.scorer);
    /* the query's blocks: its bytes (copied in the first steps, then read
     * by the search core's values) and its symbols */
    size_t n = c->query_len;
    job->qlen_room = n;
    size_t room = (n > 0 ? n : 1) * sizeof(uint32_t);
    job->query = n >= SIZE_MAX / sizeof(uint32_t) ? NULL
                 : job->block_alloc               ? job->block_alloc(room)
                                                  : malloc(room);
    job->query_input = job->query ? malloc(n > 0 ? n : 1) : NULL;
    if (!job->query_input) {
        wb_fz_extract_free(job);
        return WB_FZ_EXTRACT_ENOMEM;
    }
    job->query_input_len = n;
    job->query_from = c->query;
    return WB_FZ_EXTRACT_OK;
}

/* The engine's choices once the query is decoded and its pattern made:
 * its paths (the quick scores, the search core's values and their bars,
 * the seeds), and the search core's set-up, which reads the query at
 * once (WB_FZ_EXTRACT_LANES_QUERY_MOST bytes at most). False when out of
 * memory. */
static bool extract_ready(wb_fz_extract *job) {
    const uint8_t *query = job->query_input;
    size_t query_len = job->query_input_len, limit = job->limit;
    const wb_fz_options *o = &job->o;
    const wb_search_set *set = job->set;
    /* quick scores for bytes, and for codepoints that are all ASCII (the
     * quick scores and the search core's values take short queries only) */
    bool bytes = !o->codepoints || (set->ascii && query_len <= WB_FZ_EXTRACT_LANES_QUERY_MOST &&
                                    wb_text_ascii(query, query_len));
    if (bytes) job->quick_on = wb_fz_quick_init(&job->quick, o, query, query_len);
    job->lanes_on = lanes_op_of(o, bytes && job->qlen > 0, query, query_len, &job->lanes_op);
    /* Damerau-Levenshtein's values are bounds the quick score finishes */
    if (o->scorer == WB_FZ_DAMERAU_LEVENSHTEIN && !job->quick_on) job->lanes_on = false;
    job->lanes_o = *o;
    job->one_token =
        job->lanes_on && o->scorer >= WB_FZ_TOKEN_SORT_RATIO && o->scorer <= WB_FZ_WRATIO;
    if (job->lanes_on && o->scorer >= WB_FZ_PARTIAL_RATIO && o->scorer <= WB_FZ_WRATIO)
        job->lanes_o.scorer = WB_FZ_RATIO; /* what the values score exactly */
    job->partial = job->lanes_on &&
                   (o->scorer == WB_FZ_PARTIAL_RATIO ||
                    (o->scorer >= WB_FZ_PARTIAL_TOKEN_SORT_RATIO && o->scorer <= WB_FZ_WRATIO));
    if (job->partial && job->one_token && !job->quick_on) {
        /* single tokens: the partial token scores are the partial ratio */
        wb_fz_options single = *o;
        single.scorer = WB_FZ_PARTIAL_RATIO;
        job->quick_single = wb_fz_quick_init(&job->quick, &single, query, query_len);
    }
    if (job->lanes_on && job->lanes_op == WB_SEARCH_JARO && !job->cells && limit != SIZE_MAX &&
        !(job->jaro_top = wb_fz_jaro_tops(o, query_len)))
        return false;
    /* the value bars: a search with a limit, Jaro's with its table */
    job->value_bars = job->lanes_on && !job->cells &&
                      (limit != SIZE_MAX || (o->has_cutoff && job->lanes_op != WB_SEARCH_JARO)) &&
                      (job->lanes_op != WB_SEARCH_JARO || job->jaro_top);
    /* and a cutoff bars values before the limit is reached (Jaro's bars
     * need a worst kept) */
    job->cutoff_bars = job->value_bars && o->has_cutoff && job->lanes_op != WB_SEARCH_JARO;
    /* bar_seen 0 is "never found": the first generation is 1 */
    job->kept_generation = 1;
    job->more_is_better = job->lanes_op == WB_SEARCH_LCS || job->lanes_op == WB_SEARCH_HAMMING ||
                          job->lanes_op == WB_SEARCH_JARO;
    bool normalized =
        o->kind == WB_FZ_NORMALIZED_DISTANCE || o->kind == WB_FZ_NORMALIZED_SIMILARITY;
    bool partial_seeds = (o->scorer == WB_FZ_PARTIAL_RATIO && job->quick_on) ||
                         (job->quick_single && o->scorer != WB_FZ_WRATIO);
    bool damerau_seeds = job->quick_on && o->scorer == WB_FZ_DAMERAU_LEVENSHTEIN && normalized;
    job->seeding = job->value_bars && (partial_seeds || damerau_seeds) && limit >= 1 &&
                   limit <= WB_FZ_SEED_MOST && !(o->codepoints && !set->ascii);
    job->pick_bar = (wb_fz_bar){1, 1}; /* any bound but the worst */
    if (job->seeding) {
        /* without room, no seeds */
        job->pick_most = damerau_seeds ? DAMERAU_PICKS : PARTIAL_PICKS;
        job->pick = malloc(2 * job->pick_most * sizeof *job->pick);
        job->seeding = job->pick != NULL;
    }
    return !job->lanes_on || lanes_begin(job);
}

/* The token scores' query token work (wb_fz_query_tokens_step), then
 * the pattern of its sorted tokens joined, a budget at a time; true once
 * done, or failed (out of memory: job->failed). */
static bool query_tokens_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used) {
    wb_fz *q = &job->query_tokens;
    if (!job->tokens_live) {
        wb_fz_query_tokens_start(q, &job->o, job->query, job->qlen);
        q->alloc = job->block_alloc;
        q->release = job->block_free;
        job->tokens_live = true;
        *used += 1;
    }
    while (!job->tokens_through) {
        uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
        bool done = wb_fz_query_tokens_step(q, left, used);
        if (done && q->failed) {
            job->failed = true;
            return true;
        }
        job->tokens_through = done;
        if (!done || *used - start >= budget) return false;
    }
    if (sorted_needle(job->o.scorer) && q->tk.sorted_al > 0) {
        if (!job->sorted_live) {
            if (!wb_fz_pattern_alloc(&job->sorted_pattern, q->tk.sorted_a, q->tk.sorted_al)) {
                job->failed = true;
                return true;
            }
            job->sorted_live = true;
            *used += 1;
        }
        for (;;) {
            uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
            if (wb_fz_pattern_fill(&job->sorted_pattern, left, used)) break;
            return false;
        }
    }
    job->tokens_done = true;
    return true;
}

/* The query's set-up, the first steps' work, a budget at a time: its
 * bytes copied (QUERY_COPY_BYTES a unit), decoded into symbols
 * (wb_fz_symbols_step), its pattern made (wb_fz_pattern_alloc, then
 * wb_fz_pattern_fill), then the engine's choices (extract_ready). True
 * once done, or stopped (out of memory, or a query not UTF-8). */
static bool query_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used) {
    size_t n = job->query_input_len;
    while (job->copied < n) {
        uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
        size_t most = left >= (n - job->copied) / QUERY_COPY_BYTES + 1
                          ? n - job->copied
                          : (size_t)left * QUERY_COPY_BYTES;
        memcpy(job->query_input + job->copied, job->query_from + job->copied, most);
        job->copied += most;
        *used += most / QUERY_COPY_BYTES + 1;
        if (job->copied < n) return false;
        job->query_from = NULL; /* the caller's bytes are not read again */
        if (*used - start >= budget) return false;
    }
    job->query_from = NULL;
    while (!job->query_decoded.done) {
        uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
        bool done = wb_fz_symbols_step(&job->query_decoded, job->query_input, n, job->o.codepoints,
                                       job->query, left, used);
        if (done && job->query_decoded.invalid) {
            job->bad_query = true;
            return true;
        }
        if (!done || *used - start >= budget) return false;
    }
    if (!job->has_pattern) {
        job->qlen = job->query_decoded.count;
        if (!wb_fz_pattern_alloc(&job->pattern, job->query, job->qlen)) {
            job->failed = true;
            return true;
        }
        job->has_pattern = true;
        *used += 1;
    }
    for (;;) {
        uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
        if (wb_fz_pattern_fill(&job->pattern, left, used)) break;
        return false;
    }
    if (job->tokens_on && !job->tokens_done) {
        if (!query_tokens_step(job, budget, start, used)) return false;
        if (job->failed) return true;
    }
    if (!extract_ready(job)) {
        job->failed = true;
        return true;
    }
    /* the search core's set-up: a copy of the query, its tables */
    *used += wb_fz_decode_units(job->lanes_on ? n : 0);
    job->ready = true;
    return true;
}

/* What decode_candidate did */
enum {
    DECODE_STARTED, /* the candidate's score is under way (job->scoring) */
    DECODE_LATER,   /* the budget ran out first: on at the next step */
    DECODE_NONE,    /* failed (out of memory, or not UTF-8) */
};

/* Decodes the next candidate (or the one under way) a budget at a time
 * (wb_fz_symbols_step: whole UTF-8 sequences, 8 bytes a unit), then
 * starts its score. */
static int decode_candidate(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used) {
    const wb_search_set *set = job->set;
    if (!job->decoding) {
        size_t i = job->next++;
        size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
        if (!begin_decoding(job, len, used)) return DECODE_NONE;
    }
    size_t i = job->next - 1;
    const uint8_t *bytes = set->bytes + set->offsets[i];
    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    uint64_t spent = *used - start, left = spent < budget ? budget - spent : 0;
    if (!wb_fz_symbols_step(&job->decoded, bytes, len, job->o.codepoints, job->text,
                            left < DECODE_PART_LEAST ? DECODE_PART_LEAST : left, used))
        return DECODE_LATER;
    job->decoding = false;
    if (job->decoded.invalid) {
        job->failed_at = i + 1;
        return DECODE_NONE;
    }
    size_t n = job->decoded.count;
    const wb_fz_pattern *sorted = job->sorted_live ? &job->sorted_pattern : NULL;
    const wb_fz_tokens *tokens = job->tokens_done ? &job->query_tokens.tk : NULL;
    if (!wb_fz_start_tokens(&job->fz, &job->o, &job->pattern, tokens, sorted, job->query, job->qlen,
                            job->text, n)) {
        job->failed = true;
        return DECODE_NONE;
    }
    job->fz.alloc = job->block_alloc;
    job->fz.release = job->block_free;
    job->fz.free_later = job->free_later;
    *used += wb_fz_setup_units(&job->o, job->qlen, n);
    job->scoring = true;
    return DECODE_STARTED;
}

/* The next candidate's quick score, when it has one (true). */
static bool quick_candidate(wb_fz_extract *job, uint64_t *used) {
    const wb_search_set *set = job->set;
    size_t i = job->next;
    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    if (!wb_fz_quick_fits(&job->quick, len)) return false;
    if (job->o.no_pad && job->o.scorer == WB_FZ_HAMMING && len != job->qlen) {
        /* quick scores read bytes that are symbols: its length */
        job->unequal_at = i + 1;
        job->unequal_len = len;
        job->next++;
        *used += 1;
        return true;
    }
    double score = 0.0;
    bool passed;
    wb_fz_bar badness;
    /* the worst kept, once `limit` are: no score worse than it is needed */
    const wb_fz_bar *bar =
        !job->cells && job->heap_len == job->limit ? &job->heap[0].badness : NULL;
    *used += wb_fz_quick_score(&job->quick, set->bytes + set->offsets[i], len, bar, &score, &passed,
                               &badness);
    job->next++;
    if (!record(job, i, score, passed, badness)) job->failed = true;
    return true;
}

/* The search core's values (lanes_op), in budgets as the rest; true when
 * done (or failed). */
static bool lanes_step(wb_fz_extract *job, uint64_t budget, uint64_t *used) {
    /* in parts, the slice's time asked between them: a part's units cost
     * more while the index is out of the caches */
    uint64_t start = *used;
    for (;;) {
        uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
        if (wb_search_step(&job->lanes, left < SPENT_PART ? left : SPENT_PART, used)) break;
        if (*used - start >= budget || slice_spent(job)) return false;
    }
    if (job->lanes.status == WB_SEARCH_EUTF8_CANDIDATE) {
        job->failed_at = job->lanes.failed_at + 1;
    } else if (job->lanes.status == WB_SEARCH_ETOO_FAR) {
        /* a candidate's distance past the search core's 32-bit values */
        job->unfit = WB_FZ_EXTRACT_PAST_LANES;
        job->unfit_value = job->lanes.failed_at;
    } else if (job->lanes.status != WB_SEARCH_OK) {
        job->failed = true;
    }
    job->lanes_done = true;
    return true;
}

/* Whether no candidate left can rank: `limit` hits are kept and the
 * worst of them has the best score its kind allows (a later candidate
 * can only tie it, and a tie goes to the earlier one). Not for the
 * integer kinds (an integer similarity has no such top, and a later
 * score past 2^64 - 1 is an error), nor where a later candidate may not
 * be UTF-8 (an error too): codepoints in a set not all ASCII. */
static bool none_can_rank(const wb_fz_extract *job) {
    if (job->cells || job->limit == 0 || job->heap_len != job->limit || job->integers ||
        (job->o.codepoints && !job->set->ascii) || job->o.no_pad)
        return false;
    double worst = job->heap[0].score;
    switch (job->o.kind) {
    case WB_FZ_DISTANCE:
    case WB_FZ_NORMALIZED_DISTANCE:
        return worst == 0.0;
    case WB_FZ_NORMALIZED_SIMILARITY:
        return worst == 1.0;
    default: /* the ratios' top is 100, Jaro's 1 */
        return worst == (job->o.scorer >= WB_FZ_RATIO ? 100.0 : 1.0);
    }
}

bool wb_fz_extract_step(wb_fz_extract *job, uint64_t budget, uint64_t *used) {
    uint64_t start = *used;
    if (!job->ready) {
        if (!query_step(job, budget, start, used)) return false;
        if (job->failed || job->bad_query) return true;
        if (*used - start >= budget) return false;
    }
    if (job->lanes_on && !job->lanes_done) {
        if (!lanes_step(job, budget, used)) return false;
        if (*used - start >= budget) return false;
    }
    while (!job->sorting) {
        if (job->failed || job->failed_at || job->unfit || job->unequal_at) return true;
        if (!job->scoring && !job->decoding) {
            if (job->next < job->set->count && none_can_rank(job)) job->next = job->set->count;
            if (job->next == job->set->count) {
                job->sorting = true;
                job->unsorted = job->heap_len;
                break;
            }
            if (job->lanes_done) {
                if (job->seeding && !wb_fz_extract_seed_step(job, budget, start, used))
                    return false;
                /* Levenshtein's values are all there; the others' but for
                 * the candidates the batches do not hold */
                if (!wb_fz_extract_lanes_scores(job, budget, start, used)) return false;
                if (job->failed) return true;
                if (job->next == job->set->count) continue;
            }
            if (job->quick_on && quick_candidate(job, used)) {
                if (job->failed) return true;
                if (*used - start >= budget) return false;
                continue;
            }
        }
        if (!job->scoring) {
            int decoded = decode_candidate(job, budget, start, used);
            if (decoded == DECODE_LATER) return false;
            if (decoded == DECODE_NONE) continue;
        }
        uint64_t spent = *used - start;
        if (!wb_fz_step(&job->fz, budget > spent ? budget - spent : 1, used)) return false;
        bool passed = job->fz.passed, failed = job->fz.failed;
        double score = job->fz.score;
        uint64_t value = job->fz.value;
        if (passed && job->fz.too_large) job->unfit = WB_FZ_EXTRACT_PAST_U64;
        if (job->fz.unequal) {
            job->unequal_at = job->next;
            job->unequal_len = job->fz.n;
        }
        wb_fz_free(&job->fz);
        job->scoring = false;
        if (job->unfit || job->unequal_at) return true;
        if (failed || !record_value(job, job->next - 1, score, value, passed, (wb_fz_bar){0, 0})) {
            job->failed = true;
            return true;
        }
        if (*used - start >= budget) return false;
    }
    /* heapsort: the worst of the rest to the end, best first in the end */
    while (job->unsorted > 1) {
        wb_fz_hit t = job->heap[0];
        job->heap[0] = job->heap[job->unsorted - 1];
        job->heap[--job->unsorted] = t;
        sift_down(job, job->heap, job->unsorted, 0);
        *used += 1;
        if (*used - start >= budget && job->unsorted > 1) return false;
    }
    return !job->align || wb_fz_extract_align_step(job, budget, start, used);
}

wb_fz_extract_status wb_fz_extract_status_of(const wb_fz_extract *job, uint64_t *at) {
    *at = 0;
    if (job->failed) return WB_FZ_EXTRACT_ENOMEM;
    if (job->bad_query) return WB_FZ_EXTRACT_EUTF8_QUERY;
    if (job->failed_at) {
        *at = job->failed_at - 1;
        return WB_FZ_EXTRACT_EUTF8_CANDIDATE;
    }
    if (job->unequal_at) {
        *at = job->unequal_at - 1;
        return WB_FZ_EXTRACT_UNEQUAL_CANDIDATE;
    }
    if (job->unfit != WB_FZ_EXTRACT_OK) *at = job->unfit_value;
    return job->unfit;
}

size_t wb_fz_extract_hits(const wb_fz_extract *job, const wb_fz_hit **hits) {
    *hits = job->heap;
    return job->cells ? 0 : job->heap_len;
}

const wb_fz_alignment *wb_fz_extract_alignments(const wb_fz_extract *job) {
    return job->align ? job->aligns : NULL;
}

size_t wb_fz_extract_memory(const wb_fz_extract *job) {
    return job->qlen * sizeof(uint32_t) + job->pattern.owned_bytes + job->query_input_len +
           (job->jaro_top ? WB_FZ_JARO_TOPS * sizeof(double) : 0) +
           (job->cell_table ? WB_FZ_CELL_STRIDE * WB_FZ_CELL_STRIDE * sizeof(double) : 0) +
           job->text_room * sizeof(uint32_t) + job->heap_room * sizeof(wb_fz_hit) +
           (job->aligns ? job->heap_len * sizeof(wb_fz_alignment) : 0) +
           (job->pick ? 2 * job->pick_most * sizeof(wb_fz_seed_pick) : 0) +
           (job->scoring ? job->fz.owned_bytes : 0) +
           (job->tokens_live ? job->query_tokens.owned_bytes : 0) +
           (job->sorted_live ? job->sorted_pattern.owned_bytes : 0) +
           (job->lanes_live ? wb_search_memory(&job->lanes) : 0) + wb_fz_quick_memory(&job->quick);
}

void wb_fz_extract_lengths(const wb_fz_extract *job, uint64_t *query_len, uint64_t *candidate_len) {
    *query_len = job->qlen;
    *candidate_len = job->unequal_len;
}

/*
 * test_extract.c's checks of the token scores' query token work, done
 * once in an extract's set-up (extract.c, query_tokens_step) and taken
 * by every candidate the pair scorer scores (wb_fz_start_tokens): on
 * sets of words, the scores are the reference's (each pair scored whole,
 * its query's tokens split again), by every way and budget from 1; for
 * word queries, an empty query, a query of white space only, and queries
 * past the pair scorer's small token room (WB_FZ_SMALL / 2 symbols a
 * pair) and past its uncounted blocks (4096 symbols).
 */
#ifndef WB_TEST_EXTRACT_TOKENS_H
#define WB_TEST_EXTRACT_TOKENS_H

/* A phrase of `words` words of the vocabulary, joined by one of the
 * separators (a Unicode space in codepoint mode) into out; its length. */
static size_t phrase_of(uint8_t *out, size_t words, bool codepoints) {
    static const char *const vocabulary[] = {"ab", "abc", "b",  "bca",  "cab", "abcab",
                                             "c",  "ca",  "bb", "cabc", "a",   "bac"};
    static const char *const separators[] = {" ", "  ", "\t", " \n", "\xE3\x80\x80"};
    size_t n = 0;
    for (size_t k = 0; k < words; k++) {
        if (k > 0) {
            const char *sep = separators[check_random() % (codepoints ? 5 : 4)];
            memcpy(out + n, sep, strlen(sep));
            n += strlen(sep);
        }
        const char *w = vocabulary[check_random() % 12];
        memcpy(out + n, w, strlen(w));
        n += strlen(w);
    }
    return n;
}

/* Candidates of 0-4 words (some of white space only, a few long ones
 * past the small room) */
static void word_set(test_set *t, size_t count, bool codepoints) {
    list_maker l = {0};
    uint8_t *buf = malloc(200 * 12);
    if (!buf) abort();
    for (size_t i = 0; i < count; i++) {
        size_t pick = check_random() % 16, n;
        if (pick == 0) {
            n = 0;
        } else if (pick == 1) {
            memcpy(buf, " \t ", 3);
            n = 3;
        } else if (pick == 2) {
            n = phrase_of(buf, 60 + check_random() % 100, codepoints);
        } else {
            n = phrase_of(buf, 1 + check_random() % 4, codepoints);
        }
        maker_add(&l, buf, n);
    }
    free(buf);
    set_from(t, &l, check_random() % 4 != 0);
}

/* Whether an extract of these options, run to the end, took its query's
 * token work once (x->tokens_done) */
static bool took_query_tokens(const wb_search_set *set, const wb_fz_options *o, const uint8_t *q,
                              size_t qlen) {
    wb_fz_extract_config c = {.set = set, .query = q, .query_len = qlen, .o = *o, .limit = 3};
    wb_fz_extract x;
    CHECK(wb_fz_extract_init(&x, &c) == WB_FZ_EXTRACT_OK, "init of a token score");
    uint64_t used = 0;
    while (!wb_fz_extract_step(&x, 50, &used)) {
    }
    bool took = x.tokens_done;
    wb_fz_extract_free(&x);
    return took;
}

/* The units of an extract of these options run to the end (limit, or a
 * cdist row of doubles with limit 0) */
static uint64_t units_of(const wb_search_set *set, const wb_fz_options *o, const uint8_t *q,
                         size_t qlen, size_t limit) {
    double *cells = malloc((set->count ? set->count : 1) * sizeof *cells);
    if (!cells) abort();
    wb_fz_extract_config c = {.set = set, .query = q, .query_len = qlen, .o = *o, .limit = limit};
    if (limit == 0) {
        c.cells = (uint8_t *)cells;
        c.width = sizeof *cells;
    }
    wb_fz_extract x;
    CHECK(wb_fz_extract_init(&x, &c) == WB_FZ_EXTRACT_OK, "init of a token score");
    uint64_t used = 0;
    while (!wb_fz_extract_step(&x, 100, &used)) {
    }
    wb_fz_extract_free(&x);
    free(cells);
    return used;
}

/* A search whose worst kept has the best score of its kind scores no
 * more candidates (none can rank): the query first among many, limit 1,
 * takes far fewer units than scoring them all */
static void test_none_can_rank(void) {
    uint8_t q[64], buf[200];
    size_t qlen = phrase_of(q, 3, false);
    list_maker l = {0};
    maker_add(&l, q, qlen);
    for (size_t i = 0; i < 300; i++)
        maker_add(&l, buf, phrase_of(buf, 2 + check_random() % 3, false));
    test_set t;
    set_from(&t, &l, true);
    for (int scorer = WB_FZ_TOKEN_SET_RATIO; scorer <= WB_FZ_WRATIO; scorer++) {
        wb_fz_options o;
        random_options(&o, (wb_fz_scorer)scorer, false);
        o.kind = WB_FZ_NORMALIZED_SIMILARITY;
        uint64_t one = units_of(&t.index, &o, q, qlen, 1), all = units_of(&t.index, &o, q, qlen, 0);
        CHECK(20 * one < all, "%s: %llu units for the best of a set led by the query, %llu for all",
              scorer_names[o.scorer], (unsigned long long)one, (unsigned long long)all);
    }
    set_free(&t);
}

static void test_query_tokens(size_t rounds) {
    test_none_can_rank();
    static const size_t words[] = {3, 0, 0, 1, 2, 5, 70, 1300};
    uint8_t *q = malloc(1300 * 12);
    if (!q) abort();
    for (size_t round = 0; round < rounds; round++) {
        bool codepoints = round % 3 == 1;
        size_t shape = round % 8, qlen;
        if (shape == 2) {
            memcpy(q, "  \t \n ", 6); /* white space only: no tokens */
            qlen = 6;
        } else {
            qlen = phrase_of(q, words[shape], codepoints);
        }
        test_set t;
        word_set(&t, words[shape] < 70 ? 20 + check_random() % 60 : 12, codepoints);
        for (int scorer = WB_FZ_TOKEN_SORT_RATIO; scorer <= WB_FZ_WRATIO; scorer++) {
            wb_fz_options o;
            random_options(&o, (wb_fz_scorer)scorer, codepoints);
            o.kind = (wb_fz_kind)(check_random() % WB_FZ_KINDS);
            double cutoffs[2];
            size_t nc = cutoffs_of(&t, q, qlen, o, cutoffs);
            with_cutoff(&o, check_random() % 3 == 0 && nc > 0, cutoffs[0]);
            CHECK(took_query_tokens(&t.index, &o, q, qlen),
                  "%s, query of %zu bytes: the query's token work not taken once",
                  scorer_names[o.scorer], qlen);
            /* every budget from 1 (short queries), and the spread */
            xc_way ways[32 + SPREAD];
            size_t nways = 0;
            static const size_t limits[] = {1, 3, SIZE_MAX};
            for (uint64_t b = 1; b <= 32 && words[shape] < 70; b++)
                ways[nways++] = (xc_way){.limit = limits[b % 3],
                                         .width = b % 7 == 0 ? 8 : 0,
                                         .budget = b,
                                         .spent_every = b % 5 == 0 ? 1 : 0,
                                         .abandon_after = b % 11 == 0 ? b / 11 : 0};
            /* long queries: from budgets of some units on (many steps) */
            for (size_t k = words[shape] < 70 ? 0 : 4; k < SPREAD; k++)
                ways[nways++] = (xc_way){.limit = limits[k % 3],
                                         .width = k % 4 == 3 ? 4 : 0,
                                         .budget = spread[k],
                                         .spent_every = (unsigned)(check_random() % 3)};
            check_ways(&t, q, qlen, &o, ways, nways);
        }
        set_free(&t);
    }
    free(q);
}

#endif

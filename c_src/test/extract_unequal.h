/*
 * Hamming without padding in the extract engine (included by
 * test_extract.c, after check_status): the first candidate of another
 * length than the query ends a search or a cdist row with
 * WB_FZ_EXTRACT_UNEQUAL_CANDIDATE, found by the quick scores (bytes,
 * ASCII codepoints) and by the pair scorer (long candidates, codepoints
 * of several bytes), in a list and an index, whatever the limit, even
 * after a perfect hit; the lengths are in symbols. Candidates all of the
 * query's length score as with padding.
 */
#ifndef WB_TEST_EXTRACT_UNEQUAL_H
#define WB_TEST_EXTRACT_UNEQUAL_H

/* A search of `query` in `set` to the end: the status, where, and the
 * lengths it reports. */
static wb_fz_extract_status eu_run(const wb_search_set *set, const uint8_t *query, size_t qlen,
                                   const wb_fz_options *o, size_t limit, uint64_t *at,
                                   uint64_t *query_len, uint64_t *len) {
    wb_fz_extract_config c = {
        .set = set, .query = query, .query_len = qlen, .o = *o, .limit = limit};
    wb_fz_extract x;
    wb_fz_extract_status status = wb_fz_extract_init(&x, &c);
    CHECK(status == WB_FZ_EXTRACT_OK, "unequal: init");
    uint64_t used = 0;
    while (!wb_fz_extract_step(&x, 7, &used)) {
    }
    status = wb_fz_extract_status_of(&x, at);
    wb_fz_extract_lengths(&x, query_len, len);
    wb_fz_extract_free(&x);
    return status;
}

/* Every way over a set of short words: the first of another length
 * (want_at), or none (want_at SIZE_MAX: then the hits of Hamming with
 * padding) */
static void eu_words(const char *const *words, size_t count, const char *query, bool codepoints,
                     uint64_t want_at, uint64_t want_len) {
    list_maker l = {0};
    for (size_t i = 0; i < count; i++)
        maker_add(&l, (const uint8_t *)words[i], strlen(words[i]));
    test_set t;
    set_from(&t, &l, true);
    wb_fz_options o = {.scorer = WB_FZ_HAMMING, .codepoints = codepoints, .no_pad = true};
    o.ins = o.del = o.sub = 1;
    wb_fz_extract_status want =
        want_at == SIZE_MAX ? WB_FZ_EXTRACT_OK : WB_FZ_EXTRACT_UNEQUAL_CANDIDATE;
    char what[160];
    for (int kind = 0; kind < WB_FZ_KINDS; kind++) {
        o.kind = (wb_fz_kind)kind;
        for (size_t s = 0; s < 2; s++) {
            const wb_search_set *set = s ? &t.index : &t.list;
            snprintf(what, sizeof what, "no pad %s %s, query \"%s\" %s", kind_names[kind],
                     s ? "index" : "list", query, codepoints ? "codepoints" : "bytes");
            uint64_t at_want = want_at == SIZE_MAX ? 0 : want_at;
            check_status(what, set, query, &o, 1, 0, want, at_want);
            check_status(what, set, query, &o, 3, 0, want, at_want);
            check_status(what, set, query, &o, SIZE_MAX, 0, want, at_want);
            check_status(what, set, query, &o, SIZE_MAX, 4, want, at_want);
            check_status(what, set, query, &o, SIZE_MAX, 8, want, at_want);
            uint64_t at, qlen, len;
            size_t symbols = codepoints ? wb_fz_symbols((const uint8_t *)query, strlen(query), true,
                                                        (uint32_t[64]){0})
                                        : strlen(query);
            if (want_at != SIZE_MAX && eu_run(set, (const uint8_t *)query, strlen(query), &o, 2,
                                              &at, &qlen, &len) == WB_FZ_EXTRACT_UNEQUAL_CANDIDATE)
                CHECK(at == want_at && qlen == symbols && len == want_len,
                      "%s: at %llu, lengths %llu and %llu; want %llu, %zu and %llu", what,
                      (unsigned long long)at, (unsigned long long)qlen, (unsigned long long)len,
                      (unsigned long long)want_at, symbols, (unsigned long long)want_len);
            if (want_at == SIZE_MAX) {
                /* equal lengths: the hits and cells of the pair scorer */
                static const xc_way ways[] = {{.limit = 1, .budget = 3},
                                              {.limit = SIZE_MAX, .budget = 5},
                                              {.limit = SIZE_MAX, .width = 8, .budget = 64}};
                if (s == 0) check_ways(&t, (const uint8_t *)query, strlen(query), &o, ways, 3);
            }
        }
    }
    set_free(&t);
}

static void test_unequal_lengths(void) {
    /* the quick scores' path: short ASCII words, a perfect hit first */
    static const char *const words[] = {"abc", "abd", "xyz", "ab", "abcd"};
    eu_words(words, 5, "abc", false, 3, 2);
    eu_words(words, 5, "abc", true, 3, 2);
    eu_words(words, 3, "abc", false, SIZE_MAX, 0);
    eu_words(words, 3, "abc", true, SIZE_MAX, 0);
    /* the pair scorer's: codepoints of several bytes (the set is not
     * ASCII), where bytes differ in length and codepoints do not */
    static const char *const wide[] = {"a\xC3\xA9",
                                       "\xC3\xA9"
                                       "a",
                                       "ab", "abc"};
    eu_words(wide, 4, "ab", true, 3, 3);
    eu_words(wide, 3, "ab", true, SIZE_MAX, 0);
    eu_words(wide, 4, "ab", false, 0, 3);
    /* past the quick scores' longest candidates */
    size_t n = WB_FZ_QUICK_MOST + 100;
    char *q = malloc(n + 1), *same = malloc(n + 1), *shorter = malloc(n);
    if (!q || !same || !shorter) abort();
    for (size_t i = 0; i < n; i++)
        q[i] = same[i] = (char)('a' + i % 3);
    q[n] = same[n] = 0;
    same[n / 2] = 'z';
    memcpy(shorter, q, n - 1);
    shorter[n - 1] = 0;
    const char *const longs[] = {same, q, shorter, "abc"};
    eu_words(longs, 4, q, false, 2, n - 1);
    eu_words(longs, 2, q, false, SIZE_MAX, 0);
    free(q);
    free(same);
    free(shorter);
}

#endif

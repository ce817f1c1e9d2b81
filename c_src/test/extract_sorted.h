/*
 * test_extract.c's checks of an index's sorted tokens (extract.h, the
 * config's `sorted`): the token sort scores of a set with its tokens
 * sorted beside it are those the reference gives on the set itself, by
 * every way (limits, cdist cells, budgets), and they take the sorted set
 * where the tokens are bytes.
 */
#ifndef WB_TEST_EXTRACT_SORTED_H
#define WB_TEST_EXTRACT_SORTED_H

/* The sorted tokens of t's candidates as a set of their own, in order,
 * as a list and as an index (its batches made once). */
typedef struct {
    test_set t;
} sorted_set;

static void sorted_of(sorted_set *s, const test_set *t) {
    list_maker l = {0};
    uint8_t *buf = NULL;
    for (size_t i = 0; i < t->list.count; i++) {
        size_t n = (size_t)(t->list.offsets[i + 1] - t->list.offsets[i]);
        buf = realloc(buf, n + 1);
        if (!buf) abort();
        size_t len = wb_fz_sorted_tokens(t->list.bytes + t->list.offsets[i], n, buf);
        CHECK(len <= n, "sorted tokens of candidate %zu: length %zu, want at most %zu", i, len, n);
        maker_add(&l, buf, len);
    }
    free(buf);
    set_from(&s->t, &l, t->list.ascii);
}

/* Whether an extract of these options takes the sorted set (x->set). */
static bool takes_sorted(const wb_search_set *set, const wb_search_set *sorted,
                         const wb_fz_options *o, const uint8_t *q, size_t qlen) {
    wb_fz_extract_config c = {
        .set = set, .query = q, .query_len = qlen, .o = *o, .limit = 3, .sorted = sorted};
    wb_fz_extract x;
    CHECK(wb_fz_extract_init(&x, &c) == WB_FZ_EXTRACT_OK, "init with sorted tokens");
    bool took = x.set == sorted;
    wb_fz_extract_free(&x);
    return took;
}

static void test_sorted_tokens(size_t rounds) {
    /* the sorting itself: tokens at any white space, by their bytes */
    static const char *const texts[][2] = {
        {"", ""},
        {"   ", ""},
        {"b a", "a b"},
        {" b\t\ta c ", "a b c"},
        {"ab a", "a ab"},
        {"b\x1f"
         "a\x80",
         "a\x80 b"},
    };
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        uint8_t out[16];
        size_t n = strlen(texts[k][0]);
        size_t len = wb_fz_sorted_tokens((const uint8_t *)texts[k][0], n, out);
        CHECK(len == strlen(texts[k][1]) && memcmp(out, texts[k][1], len) == 0,
              "sorted tokens of \"%s\": \"%.*s\", want \"%s\"", texts[k][0], (int)len, out,
              texts[k][1]);
    }
    for (size_t round = 0; round < rounds; round++) {
        alphabet al;
        random_alphabet(&al, false);
        al.spaces_every = 3 + (unsigned)(check_random() % 4);
        uint8_t q[200];
        size_t qlen;
        random_query(&al, q, &qlen);
        test_set t;
        random_set(&t, &al, 200 + 100 * (round % 3), 0, q, qlen);
        sorted_set s;
        sorted_of(&s, &t);
        for (int k = 0; k < 2; k++) {
            wb_fz_options o;
            random_options(&o, k ? WB_FZ_PARTIAL_TOKEN_SORT_RATIO : WB_FZ_TOKEN_SORT_RATIO,
                           al.codepoints);
            o.kind = (wb_fz_kind)(check_random() % WB_FZ_KINDS);
            double cutoffs[2];
            size_t nc = cutoffs_of(&t, q, qlen, o, cutoffs);
            with_cutoff(&o, check_random() % 3 == 0 && nc > 0, cutoffs[0]);
            bool bytes = !al.codepoints || (t.list.ascii && all_ascii(q, qlen));
            bool took = takes_sorted(&t.index, &s.t.index, &o, q, qlen);
            CHECK(took == bytes, "%s%s: the sorted set taken %d, want %d", scorer_names[o.scorer],
                  al.codepoints ? " (codepoints)" : "", took, bytes);
            static const size_t limits[] = {1, 3, 10, SIZE_MAX};
            xc_way ways[6];
            for (size_t w = 0; w < 6; w++) {
                ways[w] = (xc_way){
                    .limit = limits[check_random() % 4],
                    .width = w >= 4 ? (w == 4 ? 4 : 8) : 0,
                    .budget = spread[(w * 3 + round) % SPREAD],
                    .spent_every = (unsigned)(check_random() % 4),
                };
            }
            /* the list with the sorted list, the index with the sorted index */
            const wb_search_set *sets[2] = {&t.list, &t.index};
            const wb_search_set *sorted[2] = {&s.t.list, &s.t.index};
            xc_want want;
            xc_reference(&want, &o, &t.list, q, qlen);
            for (size_t i = 0; i < 2; i++) {
                for (size_t w = 0; w < 6; w++) {
                    ways[w].sorted = sorted[i];
                    char why[512] = "";
                    size_t steps;
                    bool ok =
                        xc_run(&o, sets[i], q, qlen, &want, &ways[w], why, sizeof why, &steps);
                    runs++;
                    steps_taken += steps;
                    report(ok, &o, i ? "index, sorted" : "list, sorted", qlen, t.list.count,
                           &ways[w], why);
                }
            }
            xc_want_free(&want);
        }
        set_free(&s.t);
        set_free(&t);
    }
}

#endif

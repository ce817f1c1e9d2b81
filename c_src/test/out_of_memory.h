/*
 * Out of memory, every allocation in turn (fail_alloc.h): a pair score
 * and an extract are run with their k-th allocation failing, for k = 0,
 * 1, ... until a run asks for no more than k. Each run must end: a score
 * reports failed (or start false), an extract ENOMEM, or the answer is
 * the one given with memory to spare; what was allocated is freed on
 * every path (the leak sanitizer at exit). Included by test_extract.c
 * after its sets and checks.
 */
#ifndef WB_TEST_OUT_OF_MEMORY_H
#define WB_TEST_OUT_OF_MEMORY_H

#include "fail_alloc.h"

/* the most allocations a run below makes (a bound on k: a run that
 * never stops asking is a failure of its own) */
#define OOM_MOST 4000

/* the allocations failed in turn, and the runs that ended failed */
static size_t oom_paths, oom_failed;

/* One pair at `budget`: its k-th allocation failing, for every k. */
static void oom_pair(const wb_fz_options *o, const char *a, const char *b, uint64_t budget) {
    size_t alen = strlen(a), blen = strlen(b);
    uint32_t *sa = malloc((alen + 1) * sizeof *sa), *sb = malloc((blen + 1) * sizeof *sb);
    if (!sa || !sb) abort();
    size_t m = wb_fz_symbols((const uint8_t *)a, alen, o->codepoints, sa);
    size_t n = wb_fz_symbols((const uint8_t *)b, blen, o->codepoints, sb);
    double want = 0.0;
    bool want_passed = false;
    CHECK(wb_fz_score(o, sa, m, sb, n, &want, &want_passed), "%s: the score with memory",
          scorer_names[o->scorer]);
    size_t k = 0, failed = 0;
    for (; k < OOM_MOST; k++) {
        unsigned long long before = wb_fail_alloc_given();
        wb_fail_alloc_arm((long long)k);
        wb_fz s;
        bool started = wb_fz_start(&s, o, sa, m, sb, n), lost = !started;
        if (started) {
            uint64_t used = 0;
            while (!wb_fz_step(&s, budget, &used)) {
            }
            lost = s.failed;
            double score = s.score;
            bool passed = s.passed;
            wb_fz_free(&s);
            if (!lost)
                CHECK(score == want && passed == want_passed,
                      "%s, allocation %zu failing, budget %llu: %.17g, want %.17g",
                      scorer_names[o->scorer], k, (unsigned long long)budget, score, want);
        }
        wb_fail_alloc_arm(-1);
        bool given = wb_fail_alloc_given() != before;
        failed += lost;
        CHECK(given || !lost, "%s, budget %llu: failed with no allocation failing (k %zu)",
              scorer_names[o->scorer], (unsigned long long)budget, k);
        if (!given) break;
    }
    CHECK(k < OOM_MOST, "%s: still allocating after %d allocations", scorer_names[o->scorer],
          OOM_MOST);
    oom_paths += k;
    oom_failed += failed;
    free(sa);
    free(sb);
}

/* One extract: its k-th allocation failing, for every k. */
static void oom_extract(const wb_search_set *set, const char *query, const wb_fz_options *o,
                        size_t limit, size_t width, uint64_t budget) {
    size_t qlen = strlen(query);
    xc_want w;
    xc_reference(&w, o, set, (const uint8_t *)query, qlen);
    uint8_t *cells = width ? calloc(set->count ? set->count : 1, width) : NULL;
    if (width && !cells) abort();
    size_t k = 0;
    for (; k < OOM_MOST; k++) {
        unsigned long long before = wb_fail_alloc_given();
        wb_fz_extract_config c = {.set = set,
                                  .query = (const uint8_t *)query,
                                  .query_len = qlen,
                                  .o = *o,
                                  .limit = limit,
                                  .cells = cells,
                                  .width = width};
        wb_fail_alloc_arm((long long)k);
        wb_fz_extract x;
        wb_fz_extract_status status = wb_fz_extract_init(&x, &c);
        uint64_t at = 0;
        bool right = true;
        if (status == WB_FZ_EXTRACT_OK) {
            uint64_t used = 0;
            while (!wb_fz_extract_step(&x, budget, &used)) {
            }
            wb_fail_alloc_arm(-1); /* the checks' own allocations */
            status = wb_fz_extract_status_of(&x, &at);
            if (status == WB_FZ_EXTRACT_OK && !width) {
                const wb_fz_hit *hits;
                size_t got = wb_fz_extract_hits(&x, &hits);
                size_t want = w.passing < limit ? w.passing : limit;
                right = got == want;
                for (size_t h = 0; right && h < got; h++)
                    right = hits[h].index == w.order[h] && hits[h].score == w.score[w.order[h]];
                /* the alignments (an allocation of their own), the pair's */
                char why[256];
                right = right &&
                        xc_alignments(o, set, (const uint8_t *)query, qlen, &x, why, sizeof why);
            }
            wb_fz_extract_free(&x);
        }
        wb_fail_alloc_arm(-1);
        bool given = wb_fail_alloc_given() != before;
        CHECK(status == (given ? WB_FZ_EXTRACT_ENOMEM : WB_FZ_EXTRACT_OK) ||
                  (status == WB_FZ_EXTRACT_OK && right),
              "%s, limit %zu, cells %zu, budget %llu, allocation %zu failing (%s): status %d",
              scorer_names[o->scorer], limit, width, (unsigned long long)budget, k,
              given ? "given" : "not reached", (int)status);
        CHECK(right, "%s, limit %zu, allocation %zu failing: the hits differ from the reference",
              scorer_names[o->scorer], limit, k);
        oom_failed += status == WB_FZ_EXTRACT_ENOMEM;
        if (!given) break;
    }
    CHECK(k < OOM_MOST, "%s: the extract still allocating after %d allocations",
          scorer_names[o->scorer], OOM_MOST);
    oom_paths += k;
    free(cells);
    xc_want_free(&w);
}

static void test_out_of_memory(void) {
    /* pairs: short, long (blocks, token sorts and sets, rows), and wide
     * codepoints (the patterns' maps) */
    char *long_a = malloc(4000), *long_b = malloc(4000);
    if (!long_a || !long_b) abort();
    size_t la = 0, lb = 0;
    for (size_t i = 0; i < 150; i++) {
        la += (size_t)snprintf(long_a + la, 4000 - la, "w%zu ", (i * 7) % 61);
        lb += (size_t)snprintf(long_b + lb, 4000 - lb, "w%zu ", (i * 5) % 43);
    }
    const char *const pairs[][2] = {
        {"kitten", "sitting"},
        {"new york mets", "new york meats vs the mets"},
        {long_a, long_b},
        {"\xE4\xB8\xAD\xE6\x96\x87 \xC3\xA9t\xC3\xA9 caf\xC3\xA9", "caf\xC3\xA9 \xC3\xA9t\xC3\xA9"},
    };
    for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
        for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
            wb_fz_options o;
            random_options(&o, (wb_fz_scorer)scorer, p == 3);
            o.kind = WB_FZ_NORMALIZED_SIMILARITY;
            oom_pair(&o, pairs[p][0], pairs[p][1], p == 2 ? 37 : UINT64_MAX / 4);
        }
    }
    /* extracts: a list and an index of short and long candidates, with a
     * limit and as a cdist row */
    list_maker l = {0};
    static const char *const words[] = {"new york", "york new", "newark", "", "yorkshire new"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        maker_add(&l, (const uint8_t *)words[i], strlen(words[i]));
    maker_add(&l, (const uint8_t *)long_b, lb);
    test_set t;
    set_from(&t, &l, true);
    for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
        wb_fz_options o;
        random_options(&o, (wb_fz_scorer)scorer, false);
        o.kind = WB_FZ_NORMALIZED_SIMILARITY;
        for (size_t s = 0; s < 2; s++) {
            const wb_search_set *set = s ? &t.index : &t.list;
            oom_extract(set, "new york", &o, 2, 0, 7);
            /* the hits' alignments: their block, their pair scores */
            if (scorer == WB_FZ_RATIO || scorer == WB_FZ_PARTIAL_RATIO) {
                wb_fz_options aligned = o;
                aligned.alignment = true;
                oom_extract(set, "new york", &aligned, 3, 0, 7);
            }
            oom_extract(set, "new york", &o, SIZE_MAX, 8, UINT64_MAX / 4);
            /* a query past the small token room: the token scores' query
             * token blocks, kept across candidates */
            if (scorer >= WB_FZ_TOKEN_SORT_RATIO && scorer <= WB_FZ_WRATIO)
                oom_extract(set, long_a, &o, 2, 0, 1000);
        }
    }
    set_free(&t);
    free(long_a);
    free(long_b);
    printf("out of memory: %zu allocations failed in turn, %zu runs ended failed\n", oom_paths,
           oom_failed);
}

#endif

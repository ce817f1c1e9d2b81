/* Unit test of the bench's drive of the fuzzy core (fzbench_ours.h),
 * built with AddressSanitizer and UBSan by `make test`: a pair scored as
 * the bench scores it equals the core's own whole score (wb_fz_score of
 * the decoded pair); an index's cdist row holds every candidate's pair
 * score, in order; its extract the 5 best of those, best first, ties by
 * index; an edit script as many records as the Levenshtein distance,
 * kitten's the known one. No timing. */
#include "../fzbench/fzbench_ours.h"
#include "fuzzy/fuzzy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define COUNT 300
#define MOST  40

/* letters of a small alphabet and spaces: scores tie, tokens repeat */
static size_t random_text(uint8_t *out, size_t most) {
    size_t n = (size_t)(check_random() % (most + 1));
    for (size_t i = 0; i < n; i++)
        out[i] = check_random() % 5 == 0 ? ' ' : (uint8_t)('a' + check_random() % 4);
    return n;
}

static bool differ(double x, double y) {
    return fabs(x - y) > 1e-12;
}

static void test_pairs(fzb_pair_room *room) {
    uint8_t a[MOST], b[MOST];
    uint32_t sa[MOST], sb[MOST];
    for (size_t scorer = 0; scorer < fzb_scorers(); scorer++)
        for (int k = 0; k < 200; k++) {
            size_t m = random_text(a, MOST), n = random_text(b, MOST);
            double got = -1, want = -1;
            bool passed = false;
            CHECK(fzb_pair(room, scorer, a, m, b, n, &got), "%s: pair", fzb_scorer_name(scorer));
            wb_fz_options o;
            memset(&o, 0, sizeof o);
            o.scorer = (wb_fz_scorer)scorer;
            o.kind = WB_FZ_NORMALIZED_SIMILARITY;
            o.ins = o.del = o.sub = 1;
            o.prefix_weight = 0.1;
            for (size_t i = 0; i < m; i++)
                sa[i] = a[i];
            for (size_t i = 0; i < n; i++)
                sb[i] = b[i];
            CHECK(wb_fz_score(&o, sa, m, sb, n, &want, &passed), "score");
            CHECK(!differ(got, want), "%s of '%.*s' and '%.*s': bench %.17g, core %.17g",
                  fzb_scorer_name(scorer), (int)m, a, (int)n, b, got, want);
        }
    double x = 0;
    CHECK(!fzb_pair(room, 0, (const uint8_t *)"", MOST + 1, (const uint8_t *)"", 0, &x),
          "a side past the room is refused");
    CHECK(!fzb_pair(room, fzb_scorers(), (const uint8_t *)"a", 1, (const uint8_t *)"a", 1, &x),
          "an unknown scorer is refused");
    CHECK(fzb_scorer_name(fzb_scorers()) == NULL, "no name past the scorers");
}

static void test_index(fzb_pair_room *room) {
    uint8_t bytes[COUNT * MOST], query[MOST];
    uint64_t offsets[COUNT + 1] = {0};
    for (size_t i = 0; i < COUNT; i++)
        offsets[i + 1] = offsets[i] + random_text(bytes + offsets[i], MOST);
    size_t qlen = 1 + random_text(query, MOST - 1);
    query[qlen - 1] = 'a';
    fzb_index *x = fzb_index_new(bytes, offsets, COUNT);
    CHECK(x != NULL, "index");
    if (!x) return;
    CHECK(fzb_index_count(x) == COUNT, "count %zu, want %d", fzb_index_count(x), COUNT);
    static double cells[COUNT], want[COUNT];
    for (size_t scorer = 0; scorer < fzb_scorers(); scorer++) {
        const char *name = fzb_scorer_name(scorer);
        for (size_t i = 0; i < COUNT; i++)
            CHECK(fzb_pair(room, scorer, query, qlen, bytes + offsets[i],
                           (size_t)(offsets[i + 1] - offsets[i]), &want[i]),
                  "pair");
        size_t hits = 99;
        CHECK(fzb_extract(x, scorer, query, qlen, 0, cells, NULL, NULL, &hits), "%s: cdist", name);
        CHECK(hits == 0, "cdist: %zu hits, want 0", hits);
        for (size_t i = 0; i < COUNT; i++)
            CHECK(!differ(cells[i], want[i]), "%s: cell %zu is %.17g, the pair %.17g", name, i,
                  cells[i], want[i]);
        uint64_t index[5];
        double score[5];
        CHECK(fzb_extract(x, scorer, query, qlen, 5, NULL, index, score, &hits), "%s: extract",
              name);
        CHECK(hits == 5, "%s: %zu hits, want 5", name, hits);
        /* the 5 best by selection: best first, ties by index */
        bool taken[COUNT] = {false};
        for (size_t h = 0; h < hits && h < 5; h++) {
            size_t best = COUNT;
            for (size_t i = 0; i < COUNT; i++)
                if (!taken[i] && (best == COUNT || want[i] > want[best])) best = i;
            taken[best] = true;
            CHECK(index[h] == best && !differ(score[h], want[best]),
                  "%s: hit %zu is %llu (%.17g), want %zu (%.17g)", name, h,
                  (unsigned long long)index[h], score[h], best, want[best]);
        }
    }
    CHECK(!fzb_extract(x, fzb_scorers(), query, qlen, 5, NULL, NULL, NULL, &(size_t){0}),
          "an unknown scorer is refused");
    fzb_index_free(x);
}

/* the Levenshtein edit script, as the bench makes it */
static void test_editops(fzb_pair_room *room) {
    uint8_t *script = NULL;
    size_t distance = 0, width = 0;
    CHECK(fzb_editops(room, (const uint8_t *)"kitten", 6, (const uint8_t *)"sitting", 7, &script,
                      &distance, &width),
          "editops");
    const int want[3][3] = {{2, 0, 0}, {2, 4, 4}, {0, 6, 6}};
    CHECK(distance == 3, "kitten: %zu records", distance);
    for (size_t k = 0; k < distance && k < 3; k++) {
        int type;
        size_t src, dest;
        fzb_editops_record(script, width, k, &type, &src, &dest);
        CHECK(type == want[k][0] && src == (size_t)want[k][1] && dest == (size_t)want[k][2],
              "kitten: record %zu (%d, %zu, %zu)", k, type, src, dest);
    }
    free(script);
    for (int i = 0; i < 50; i++) {
        uint8_t a[MOST], b[MOST];
        size_t m = random_text(a, MOST), n = random_text(b, MOST);
        double similarity = 0;
        CHECK(fzb_editops(room, a, m, b, n, &script, &distance, &width), "editops");
        CHECK(fzb_pair(room, 0, a, m, b, n, &similarity), "levenshtein");
        size_t most = m > n ? m : n;
        double want_similarity = most ? 1.0 - (double)distance / (double)most : 1.0;
        CHECK(!differ(similarity, want_similarity), "a script of %zu records, similarity %.17g",
              distance, similarity);
        free(script);
    }
    CHECK(!fzb_editops(room, (const uint8_t *)"", MOST + 1, (const uint8_t *)"", 0, &script,
                       &distance, &width),
          "a side too long is refused");
}

int main(void) {
    fzb_pair_room room;
    CHECK(fzb_pair_room_init(&room, MOST), "room");
    test_pairs(&room);
    test_index(&room);
    test_editops(&room);
    fzb_pair_room_free(&room);
    return CHECK_SUMMARY();
}

/*
 * Batches laid out as another set's (wb_lanes_index_begin_like), included
 * by test_search.c: a set whose candidates are as long as the first's and
 * hold the same bytes (each one's bytes reversed) gets the first's layout
 * with rows of its own, searched as exactly as its own batches; a set that
 * differs (a length, or a byte the batch lacks) gets the batches built the
 * usual way, byte for byte; at every budget, no step far past it.
 */
#ifndef WB_TEST_LANES_LIKE_H
#define WB_TEST_LANES_LIKE_H

/* Builds x from (bytes, offsets, count), laid out as `like` (or not: NULL),
 * `budget` units at a time; returns the largest step. */
static uint64_t like_build(wb_lanes_index *x, const wb_lanes_index *like, const uint8_t *bytes,
                           const uint64_t *offsets, size_t count, uint64_t budget) {
    wb_lanes_builder b;
    wb_lanes_build_status status;
    uint64_t most = 0;
    if (like)
        wb_lanes_index_begin_like(x, &b, like);
    else
        wb_lanes_index_begin(x, &b);
    do {
        uint64_t used = 0;
        status = wb_lanes_index_step(x, &b, bytes, offsets, count, budget, &used);
        if (used > most) most = used;
    } while (status == WB_LANES_BUILDING);
    CHECK(status == WB_LANES_BUILT, "budget %llu: built", (unsigned long long)budget);
    return most;
}

static size_t like_rows(const wb_lanes_index *x) {
    if (!x->count) return 0;
    return (size_t)x->batches[x->count - 1].first_row + x->batches[x->count - 1].rows + 1;
}

/* x and y hold the same batches, lanes and bits, whatever the rows'
 * numbering: for each batch, lane and byte, the same row bits. */
static void like_same_bits(const wb_lanes_index *x, const wb_lanes_index *y, size_t count,
                           const char *what) {
    size_t laned = count - y->rest_count;
    CHECK(x->count == y->count && x->rest_count == y->rest_count,
          "%s: %zu batches, %zu others; want %zu, %zu", what, x->count, x->rest_count, y->count,
          y->rest_count);
    if (x->count != y->count || x->rest_count != y->rest_count) return;
    CHECK(memcmp(x->lane_index, y->lane_index, laned * sizeof *x->lane_index) == 0 &&
              memcmp(x->lane_len, y->lane_len, laned) == 0 &&
              memcmp(x->rest, y->rest, y->rest_count * sizeof *x->rest) == 0 &&
              memcmp(x->spaced, y->spaced, (count / 64 + 1) * sizeof *x->spaced) == 0 &&
              memcmp(x->length, y->length, count) == 0,
          "%s: lanes, lengths or spaces differ", what);
    size_t differ = 0;
    for (size_t k = 0; k < x->count; k++) {
        const wb_lanes_batch *a = &x->batches[k], *c = &y->batches[k];
        if (a->width != c->width || a->used != c->used || a->min_len != c->min_len ||
            a->max_len != c->max_len || a->first_lane != c->first_lane) {
            differ++;
            continue;
        }
        static const unsigned char zero[WB_LANES_BYTES];
        for (unsigned v = 0; v < 256; v++) {
            const unsigned char *ra = a->map[v] ? x->rows[a->first_row + a->map[v]] : zero;
            const unsigned char *rc = c->map[v] ? y->rows[c->first_row + c->map[v]] : zero;
            if (memcmp(ra, rc, WB_LANES_BYTES) != 0) differ++;
        }
        if (memcmp(x->rows[a->first_row + a->rows], y->rows[c->first_row + c->rows],
                   WB_LANES_BYTES) != 0)
            differ++;
    }
    CHECK(differ == 0, "%s: %zu batches or rows differ from the set's own batches", what, differ);
}

/* x and y are the same bytes for bytes (the usual building, both) */
static void like_identical(const wb_lanes_index *x, const wb_lanes_index *y, size_t count,
                           const char *what) {
    size_t laned = count - y->rest_count;
    CHECK(x->count == y->count && x->rest_count == y->rest_count && x->bytes == y->bytes &&
              memcmp(x->batches, y->batches, y->count * sizeof *y->batches) == 0 &&
              memcmp(x->lane_index, y->lane_index, laned * sizeof *x->lane_index) == 0 &&
              memcmp(x->lane_len, y->lane_len, laned) == 0 &&
              memcmp(x->rest, y->rest, y->rest_count * sizeof *x->rest) == 0 &&
              memcmp(x->spaced, y->spaced, (count / 64 + 1) * sizeof *x->spaced) == 0 &&
              memcmp(x->length, y->length, count) == 0 &&
              memcmp(x->rows, y->rows, like_rows(y) * WB_LANES_BYTES) == 0,
          "%s: %zu batches, %zu bytes; built the usual way %zu, %zu", what, x->count, x->bytes,
          y->count, y->bytes);
}

static void test_lanes_like(void) {
    for (int round = 0; round < 12; round++) {
        /* words of a few letters (256: every byte value) and spaces;
         * enough for two windows, and long ones in `rest` */
        wb_search_owned_set set;
        unsigned alphabets[] = {3, 26, 256};
        size_t count = round % 4 == 3 ? WB_LANES_WINDOW + 300 : 1 + check_random() % 700;
        random_set(&set, count, round % 2 ? 90 : 40, alphabets[round % 3]);
        for (size_t i = 0; i < count; i++)
            for (uint64_t j = set.offsets[i]; j < set.offsets[i + 1]; j++)
                if (check_random() % 5 == 0) set.bytes[j] = ' ';
        uint64_t total = set.offsets[count];
        /* the same candidates, each one's bytes reversed */
        uint8_t *turned = malloc(total ? total : 1);
        CHECK(turned != NULL, "alloc");
        for (size_t i = 0; i < count; i++) {
            uint64_t from = set.offsets[i], to = set.offsets[i + 1];
            for (uint64_t j = from; j < to; j++)
                turned[j] = set.bytes[to - 1 - (j - from)];
        }
        wb_lanes_index like, own;
        CHECK(wb_lanes_index_build(&like, set.bytes, set.offsets, count), "build");
        CHECK(wb_lanes_index_build(&own, turned, set.offsets, count), "build");
        const uint64_t budgets[] = {1, 7, 1000, UINT64_MAX};
        for (size_t t = 0; t < sizeof budgets / sizeof *budgets; t++) {
            wb_lanes_index x;
            uint64_t most = like_build(&x, &like, turned, set.offsets, count, budgets[t]);
            if (budgets[t] < 1000)
                CHECK(most <= budgets[t] + 24, "budget %llu: a step of %llu units",
                      (unsigned long long)budgets[t], (unsigned long long)most);
            /* laid out as like, with rows of its own */
            CHECK(memcmp(x.batches, like.batches, like.count * sizeof *like.batches) == 0,
                  "round %d: not laid out as like", round);
            like_same_bits(&x, &own, count, "reversed");
            /* searched as exactly */
            if (t == 0) {
                uint8_t q[70];
                size_t qlen = check_random() % sizeof q;
                random_query(q, qlen, alphabets[round % 3]);
                wb_search_set turned_set = set.set;
                turned_set.bytes = turned;
                size_t *exact = exact_distances(&turned_set, q, qlen);
                turned_set.prepared = &x;
                check_search(&turned_set, exact, q, qlen, WB_SEARCH_NO_LIMIT, 0, UINT64_MAX);
                check_search(&turned_set, exact, q, qlen, 5, 8, 3);
                free(exact);
            }
            wb_lanes_index_free(&x);
        }
        /* a byte none of its batch holds, in the last candidate in
         * lanes; then a length that differs */
        size_t at = SIZE_MAX, laned = count - like.rest_count;
        for (size_t i = count; i-- > 0;)
            if (like.length[i] >= 1 && like.length[i] <= WB_LANES_LONGEST) {
                at = i;
                break;
            }
        int absent = -1;
        for (size_t k = 0; k < like.count && at != SIZE_MAX; k++)
            for (size_t l = 0; l < like.batches[k].used; l++)
                if (like.lane_index[like.batches[k].first_lane + l] == at)
                    for (int v = 255; v >= 0 && absent < 0; v--)
                        if (!like.batches[k].map[v]) absent = v;
        CHECK(at == SIZE_MAX || laned > 0, "lanes");
        for (int change = 0; change < 2 && at != SIZE_MAX; change++) {
            uint64_t *offsets = malloc((count + 1) * sizeof *offsets);
            CHECK(offsets != NULL, "alloc");
            memcpy(offsets, set.offsets, (count + 1) * sizeof *offsets);
            if (change == 0 && absent < 0) {
                free(offsets);
                continue; /* every byte value in its batch */
            }
            if (change == 0)
                turned[set.offsets[at]] = (uint8_t)absent;
            else
                for (size_t i = at + 1; i <= count; i++)
                    offsets[i]--; /* the candidate one byte shorter, the rest moved */
            wb_lanes_index usual;
            like_build(&usual, NULL, turned, offsets, count, UINT64_MAX);
            for (size_t t = 0; t < sizeof budgets / sizeof *budgets; t++) {
                wb_lanes_index x;
                uint64_t most = like_build(&x, &like, turned, offsets, count, budgets[t]);
                if (budgets[t] < 1000)
                    CHECK(most <= budgets[t] + 24, "budget %llu: a step of %llu units",
                          (unsigned long long)budgets[t], (unsigned long long)most);
                like_identical(&x, &usual, count, change ? "a length differs" : "a byte differs");
                wb_lanes_index_free(&x);
            }
            wb_lanes_index_free(&usual);
            free(offsets);
        }
        wb_lanes_index_free(&like);
        wb_lanes_index_free(&own);
        free(turned);
        wb_search_set_free(&set);
    }
}

#endif

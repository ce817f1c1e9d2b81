/*
 * Unit test of the search core (c_src/search/), built with AddressSanitizer
 * and UBSan by `make test`: distances and nearest against the textbook
 * distance on random and adversarial sets (empty strings, duplicates,
 * lengths 63/64/65, cutoffs below, at and above), stepped in one go and
 * one unit at a time; the other operations' values (search_operations.h);
 * a distance past the 32-bit values reported, never capped.
 */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and MAP_NORESERVE */
#include "../search/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "fuzzy_reference.h"
#include "reference.h"

/* a set of `count` candidates of random lengths up to max_len, alphabet k */
static void random_set(wb_search_owned_set *s, size_t count, size_t max_len, unsigned k) {
    size_t total = 0, *lens = malloc(count * sizeof *lens);
    for (size_t i = 0; i < count; i++) {
        size_t pick = check_random() % 8;
        /* lengths around the one-word boundary are common */
        lens[i] = pick == 0 ? 63 : pick == 1 ? 64 : pick == 2 ? 65 : check_random() % (max_len + 1);
        total += lens[i];
    }
    CHECK(wb_search_set_alloc(s, count, total), "set alloc");
    for (size_t i = 0; i < count; i++) {
        s->offsets[i + 1] = s->offsets[i] + lens[i];
        for (size_t j = 0; j < lens[i]; j++)
            s->bytes[s->offsets[i] + j] = (uint8_t)('a' + check_random() % k);
    }
    /* a duplicate of the first candidate, and an empty one, when room */
    if (count > 3 && lens[0] == lens[2]) memcpy(s->bytes + s->offsets[2], s->bytes, lens[0]);
    free(lens);
}

/* len random bytes of the first k lowercase letters */
static void random_query(uint8_t *q, size_t len, unsigned k) {
    for (size_t j = 0; j < len; j++)
        q[j] = (uint8_t)('a' + check_random() % k);
}

/* The textbook distance from q to each candidate of set (malloc'd). */
static size_t *exact_distances(const wb_search_set *set, const uint8_t *q, size_t qlen) {
    size_t *exact = malloc((set->count ? set->count : 1) * sizeof *exact);
    CHECK(exact != NULL, "alloc");
    for (size_t i = 0; i < set->count; i++)
        exact[i] = wb_ref_distance_bytes(q, qlen, set->bytes + set->offsets[i],
                                         (size_t)(set->offsets[i + 1] - set->offsets[i]));
    return exact;
}

static size_t run(wb_search *s, uint64_t budget) {
    uint64_t used = 0;
    size_t steps = 0;
    while (!wb_search_step(s, budget, &used))
        steps++;
    return steps;
}

/* exact: the textbook distance from q to each candidate */
static void check_search(const wb_search_set *set, const size_t *exact, const uint8_t *q,
                         size_t qlen, size_t k, size_t limit, uint64_t budget) {
    size_t n = set->count;
    size_t *want = malloc((n ? n : 1) * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = k != WB_SEARCH_NO_LIMIT && exact[i] > k ? k + 1 : exact[i];
    wb_search s;
    CHECK(wb_search_init(&s, set, q, qlen, false, k, limit) == WB_SEARCH_OK, "init");
    run(&s, budget);
    CHECK(s.status == WB_SEARCH_OK, "status");
    if (limit == 0) {
        for (size_t i = 0; i < n; i++)
            CHECK(s.distances[i] == want[i], "distance %zu: %u, want %zu (qlen %zu, k %zu)", i,
                  s.distances[i], want[i], qlen, k);
    } else {
        /* the reference: every candidate within k, by (distance, index) */
        const wb_search_hit *hits;
        size_t got = wb_search_hits(&s, &hits), expect = 0, last_d = 0, last_i = 0;
        size_t top = 0; /* the largest distance within k */
        for (size_t i = 0; i < n; i++)
            if (want[i] > top && (k == WB_SEARCH_NO_LIMIT || want[i] <= k)) top = want[i];
        for (size_t d = 0; d <= top && expect < limit; d++)
            for (size_t i = 0; i < n && expect < limit; i++)
                if (want[i] == d) {
                    CHECK(expect < got && hits[expect].distance == d && hits[expect].index == i,
                          "hit %zu: want (%zu, %zu)", expect, d, i);
                    expect++;
                    last_d = d;
                    last_i = i;
                }
        (void)last_d;
        (void)last_i;
        CHECK(got == expect, "hits: %zu, want %zu (limit %zu, k %zu)", got, expect, limit, k);
    }
    wb_search_free(&s);
    free(want);
}

/* The same search of a list and of its index (its batches made once), in
 * one go and `small` units at a time. */
static void check_list_and_index(const wb_search_set *list, const wb_search_set *indexed,
                                 const size_t *exact, const uint8_t *q, size_t qlen, size_t k,
                                 size_t limit, uint64_t small) {
    check_search(list, exact, q, qlen, k, limit, UINT64_MAX);
    check_search(list, exact, q, qlen, k, limit, small);
    check_search(indexed, exact, q, qlen, k, limit, UINT64_MAX);
    check_search(indexed, exact, q, qlen, k, limit, small);
}

static void test_random(void) {
    for (int round = 0; round < 54; round++) {
        wb_search_owned_set set;
        /* 256: every byte value, so that batches fill their 255 rows */
        unsigned alphabets[] = {2, 4, 26, 256};
        unsigned alphabet = alphabets[round % 4];
        /* long candidates, or enough short ones to fill batches of every width */
        /* 400: longer than every query, which is then the pattern of the
         * pair core with its table made once, on either side */
        size_t max_lens[] = {80, 10, 34, 400};
        random_set(&set, 1 + check_random() % 260, max_lens[(round / 3) % 4], alphabet);
        uint8_t q[300];
        /* 300: past what an 8-bit lane can count */
        size_t qlens[] = {0, 1, 5, 20, 63, 64, 65, 90, 300};
        size_t qlen = qlens[(round / 2) % 9];
        random_query(q, qlen, alphabet);
        size_t *exact = exact_distances(&set.set, q, qlen);
        /* the same set with its batches made once, as an index has them */
        wb_lanes_index prepared;
        CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, set.set.count), "build");
        wb_search_set indexed = set.set;
        indexed.prepared = &prepared;
        size_t ks[] = {WB_SEARCH_NO_LIMIT, 0, 3, 20, 64, 200};
        for (size_t ki = 0; ki < 6; ki++)
            for (size_t limit = 0; limit <= 12; limit += 4)
                check_list_and_index(&set.set, &indexed, exact, q, qlen, ks[ki], limit, 1);
        wb_lanes_index_free(&prepared);
        free(exact);
        wb_search_set_free(&set);
    }
}

/* Candidates that together hold every byte value, so that a batch made
 * once would need more rows than it can number: it must close early. */
static void test_every_byte(void) {
    size_t count = 300;
    wb_search_owned_set set;
    CHECK(wb_search_set_alloc(&set, count, count * 8), "alloc");
    for (size_t i = 0; i < count; i++) {
        set.offsets[i + 1] = set.offsets[i] + 8;
        for (size_t j = 0; j < 8; j++)
            set.bytes[8 * i + j] = (uint8_t)(8 * i + j + i / 32);
    }
    wb_lanes_index prepared;
    CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, count), "build");
    for (size_t k = 0; k < prepared.count; k++)
        CHECK(prepared.batches[k].rows <= 256, "batch %zu: %u rows", k,
              (unsigned)prepared.batches[k].rows);
    CHECK(prepared.count > count / 64, "batches closed early: %zu", prepared.count);
    wb_search_set indexed = set.set;
    indexed.prepared = &prepared;
    uint8_t q[40];
    for (size_t j = 0; j < sizeof q; j++)
        q[j] = (uint8_t)(j * 7 + 3);
    size_t *exact = exact_distances(&set.set, q, sizeof q),
           *exact6 = exact_distances(&set.set, q, 6);
    for (size_t limit = 0; limit <= 5; limit += 5) {
        check_search(&indexed, exact, q, sizeof q, WB_SEARCH_NO_LIMIT, limit, UINT64_MAX);
        check_search(&indexed, exact6, q, 6, 7, limit, 1);
    }
    free(exact);
    free(exact6);
    wb_lanes_index_free(&prepared);
    wb_search_set_free(&set);
}

/* Batches built a budget at a time are the ones built in one go, and no
 * step does much more than its budget: a candidate of 1 MB with no space
 * is scanned over many steps, not in one. */
static void test_stepped_build(void) {
    wb_search_owned_set set;
    size_t count = WB_LANES_WINDOW + 77, longest = 1 << 20;
    random_set(&set, count, 70, 5);
    for (size_t i = 0; i < count; i += 3) /* spaces, here and there */
        if (set.offsets[i + 1] > set.offsets[i])
            set.bytes[set.offsets[i] + (i % (set.offsets[i + 1] - set.offsets[i]))] = ' ';
    /* the last candidate: long, and no space in it */
    size_t total = (size_t)set.offsets[count] + longest;
    uint8_t *bytes = malloc(total);
    uint64_t *offsets = malloc((count + 2) * sizeof *offsets);
    CHECK(bytes && offsets, "alloc");
    memcpy(bytes, set.bytes, (size_t)set.offsets[count]);
    memset(bytes + set.offsets[count], 'x', longest);
    memcpy(offsets, set.offsets, (count + 1) * sizeof *offsets);
    offsets[count + 1] = total;
    count++;
    wb_lanes_index whole;
    CHECK(wb_lanes_index_build(&whole, bytes, offsets, count), "build");
    const uint64_t budgets[] = {1, 7, 1000};
    for (size_t t = 0; t < sizeof budgets / sizeof *budgets; t++) {
        uint64_t budget = budgets[t], steps = 0, most = 0;
        wb_lanes_index x;
        wb_lanes_builder b;
        wb_lanes_build_status status;
        wb_lanes_index_begin(&x, &b);
        do {
            uint64_t used = 0;
            status = wb_lanes_index_step(&x, &b, bytes, offsets, count, budget, &used);
            if (used > most) most = used;
            steps++;
        } while (status == WB_LANES_BUILDING);
        CHECK(status == WB_LANES_BUILT, "budget %llu: built", (unsigned long long)budget);
        /* an item past the budget at most: a batch opened and a
         * candidate of 64 bytes put in it, or a window's lengths summed */
        CHECK(most <= budget + 24, "budget %llu: a step of %llu units", (unsigned long long)budget,
              (unsigned long long)most);
        CHECK(steps >= longest / 4 / budget, "budget %llu: %llu steps for %zu bytes",
              (unsigned long long)budget, (unsigned long long)steps, longest);
        CHECK(x.count == whole.count && x.rest_count == whole.rest_count && x.bytes == whole.bytes,
              "budget %llu: %zu batches, %zu others, %zu bytes; in one go %zu, %zu, %zu",
              (unsigned long long)budget, x.count, x.rest_count, x.bytes, whole.count,
              whole.rest_count, whole.bytes);
        size_t laned = count - whole.rest_count, rows = 0;
        if (whole.count)
            rows = (size_t)whole.batches[whole.count - 1].first_row +
                   whole.batches[whole.count - 1].rows + 1;
        CHECK(memcmp(x.batches, whole.batches, whole.count * sizeof *whole.batches) == 0 &&
                  memcmp(x.lane_index, whole.lane_index, laned * sizeof *x.lane_index) == 0 &&
                  memcmp(x.lane_len, whole.lane_len, laned) == 0 &&
                  memcmp(x.rest, whole.rest, whole.rest_count * sizeof *x.rest) == 0 &&
                  memcmp(x.spaced, whole.spaced, (count / 64 + 1) * sizeof *x.spaced) == 0 &&
                  memcmp(x.length, whole.length, count) == 0 &&
                  memcmp(x.rows, whole.rows, rows * WB_LANES_BYTES) == 0,
              "budget %llu: the batches differ from those built in one go",
              (unsigned long long)budget);
        /* the long candidate holds no space; the first one does */
        CHECK(!(x.spaced[(count - 1) / 64] >> ((count - 1) % 64) & 1) && (x.spaced[0] & 1),
              "budget %llu: spaces", (unsigned long long)budget);
        wb_lanes_index_free(&x);
    }
    /* the prediction bounds the work */
    wb_lanes_index x;
    wb_lanes_builder b;
    uint64_t used = 0;
    wb_lanes_index_begin(&x, &b);
    CHECK(wb_lanes_index_step(&x, &b, bytes, offsets, count, UINT64_MAX, &used) == WB_LANES_BUILT,
          "built");
    uint64_t predicted = wb_lanes_index_units(count, offsets[count]);
    CHECK(used <= predicted && used * 4 >= predicted, "%llu units, %llu predicted",
          (unsigned long long)used, (unsigned long long)predicted);
    wb_lanes_index_free(&x);
    /* and where it is dearest: candidates of 64 bytes, each byte a row of
     * its batch */
    size_t n = 500;
    for (size_t i = 0; i <= n; i++)
        offsets[i] = 64 * i;
    for (size_t i = 0; i < 64 * n; i++)
        bytes[i] = (uint8_t)(i * 67 % 251);
    used = 0;
    wb_lanes_index_begin(&x, &b);
    CHECK(wb_lanes_index_step(&x, &b, bytes, offsets, n, UINT64_MAX, &used) == WB_LANES_BUILT,
          "built");
    predicted = wb_lanes_index_units(n, offsets[n]);
    CHECK(used <= predicted, "distinct bytes: %llu units, %llu predicted", (unsigned long long)used,
          (unsigned long long)predicted);
    wb_lanes_index_free(&x);
    wb_lanes_index_free(&whole);
    free(bytes);
    free(offsets);
    wb_search_set_free(&set);
}

/* A candidate's copy into a packed set: every byte, nothing past them,
 * and the OR of them all, at each length around the short moves' edges. */
static void test_copy_bytes(void) {
    uint8_t from[90], to[100];
    for (size_t n = 0; n <= 80; n++)
        for (int t = 0; t < 20; t++) {
            uint8_t want = 0;
            for (size_t i = 0; i < n; i++) {
                from[i] = (uint8_t)(check_random() % 128);
                want |= from[i];
            }
            if (n && t % 2) {
                size_t at = check_random() % n;
                from[at] |= 0x80;
                want |= 0x80;
            }
            memset(to, 0xA5, sizeof to);
            size_t offset = (size_t)t % 4; /* unaligned too */
            uint8_t got = wb_search_copy_bytes(to + offset, from, n);
            CHECK(got == want, "OR of %zu bytes: %#x, want %#x", n, got, want);
            CHECK(memcmp(to + offset, from, n) == 0, "copy of %zu bytes", n);
            for (size_t i = 0; i < sizeof to; i++)
                if (i < offset || i >= offset + n)
                    CHECK(to[i] == 0xA5, "copy of %zu bytes wrote byte %zu", n, i);
        }
}

/* An index over several windows: each batch's candidates lie in one
 * window, by length, and the search answers as the textbook does, the
 * candidates of every window and those left outside the batches alike. */
static void test_windows(void) {
    wb_search_owned_set set;
    size_t count = 2 * WB_LANES_WINDOW + 77;
    random_set(&set, count, 70, 4);
    wb_lanes_index prepared;
    CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, count), "build");
    size_t laned = 0;
    for (size_t k = 0; k < prepared.count; k++) {
        const wb_lanes_batch *b = &prepared.batches[k];
        const uint64_t *lanes = prepared.lane_index + b->first_lane;
        CHECK(b->first_lane == laned, "batch %zu starts at %llu", k,
              (unsigned long long)b->first_lane);
        for (unsigned l = 0; l < b->used; l++) {
            CHECK(lanes[l] / WB_LANES_WINDOW == lanes[0] / WB_LANES_WINDOW,
                  "batch %zu: candidates %llu and %llu in two windows", k,
                  (unsigned long long)lanes[0], (unsigned long long)lanes[l]);
            size_t n = (size_t)(set.offsets[lanes[l] + 1] - set.offsets[lanes[l]]);
            CHECK(n >= b->min_len && n <= b->max_len && n == prepared.lane_len[b->first_lane + l],
                  "batch %zu lane %u: length %zu outside %u..%u", k, l, n, b->min_len, b->max_len);
            CHECK(l == 0 || prepared.lane_len[b->first_lane + l - 1] <= n, "batch %zu: unsorted",
                  k);
        }
        laned += b->used;
    }
    CHECK(laned + prepared.rest_count == count, "candidates: %zu in batches, %zu outside", laned,
          prepared.rest_count);
    wb_search_set indexed = set.set;
    indexed.prepared = &prepared;
    uint8_t q[30];
    random_query(q, sizeof q, 4);
    size_t *exact = exact_distances(&set.set, q, sizeof q);
    check_search(&indexed, exact, q, sizeof q, WB_SEARCH_NO_LIMIT, 0, UINT64_MAX);
    check_search(&indexed, exact, q, sizeof q, 5, 0, 1000);
    check_search(&indexed, exact, q, sizeof q, WB_SEARCH_NO_LIMIT, 20, UINT64_MAX);
    free(exact);
    wb_lanes_index_free(&prepared);
    wb_search_set_free(&set);
}

/* Batches in flight together: a list (no batches made once) fills them
 * two at a time, each width in turn, and an index steps four at a time
 * where the kernel can (else two). Long sets of every lane width, where
 * most batches go in pairs or fours, the last ones of a width fewer (a
 * full batch with a partial one, three, or one alone); batches of one
 * group ending at different bytes (some hopeless under a cutoff, stepped
 * on with the others in a four); the cutoff of nearest moving between
 * groups; a step budget that stops inside a group. */
static void test_batches_in_flight(void) {
    size_t counts[] = {1000, 64 + 1, 128 + 40, 2 * 128 + 1, 3 * 64, 5 * 64 + 9};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        size_t count = counts[c];
        wb_search_owned_set set;
        CHECK(wb_search_set_alloc(&set, count, count * 64), "alloc");
        for (size_t i = 0; i < count; i++) {
            /* one width for the short lists (8-bit lanes), every width in the long one */
            size_t n = c == 0 ? 1 + check_random() % 64 : 1 + check_random() % 8;
            set.offsets[i + 1] = set.offsets[i] + n;
            for (size_t j = 0; j < n; j++)
                set.bytes[set.offsets[i] + j] = (uint8_t)('a' + check_random() % 3);
        }
        wb_lanes_index prepared;
        CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, count), "build");
        wb_search_set indexed = set.set;
        indexed.prepared = &prepared;
        uint8_t q[40];
        size_t qlens[] = {6, 40};
        for (size_t qi = 0; qi < 2; qi++) {
            size_t qlen = qlens[qi];
            random_query(q, qlen, 3);
            size_t *exact = exact_distances(&set.set, q, qlen);
            size_t ks[] = {WB_SEARCH_NO_LIMIT, 2, 10};
            for (size_t ki = 0; ki < 3; ki++)
                for (size_t limit = 0; limit <= 7; limit += 7)
                    check_list_and_index(&set.set, &indexed, exact, q, qlen, ks[ki], limit, 3);
            free(exact);
        }
        wb_lanes_index_free(&prepared);
        wb_search_set_free(&set);
    }
}

/* A batch made once whose lanes are too narrow for the query (8 bits,
 * query of 300 bytes): its 64 candidates go into batches of 32 wider
 * lanes, two of them, in flight together. */
static void test_narrow_batches(void) {
    size_t count = 200;
    wb_search_owned_set set;
    CHECK(wb_search_set_alloc(&set, count, count * 8), "alloc");
    for (size_t i = 0; i < count; i++) {
        size_t n = 1 + check_random() % 8;
        set.offsets[i + 1] = set.offsets[i] + n;
        for (size_t j = 0; j < n; j++)
            set.bytes[set.offsets[i] + j] = (uint8_t)('a' + check_random() % 4);
    }
    wb_lanes_index prepared;
    CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, count), "build");
    CHECK(prepared.batches[0].width == 8 && prepared.batches[0].used == 64, "a full 8-bit batch");
    wb_search_set indexed = set.set;
    indexed.prepared = &prepared;
    uint8_t q[300];
    random_query(q, sizeof q, 4);
    size_t *exact = exact_distances(&set.set, q, sizeof q);
    for (size_t limit = 0; limit <= 10; limit += 10)
        for (uint64_t budget = 1; budget; budget = budget == 1 ? UINT64_MAX : 0) {
            check_search(&indexed, exact, q, sizeof q, WB_SEARCH_NO_LIMIT, limit, budget);
            check_search(&indexed, exact, q, sizeof q, 296, limit, budget);
        }
    free(exact);
    wb_lanes_index_free(&prepared);
    wb_search_set_free(&set);
}

/* Candidates far longer than a slice: the work stops inside them, at
 * about the budget, and resumes (the pair core's state is kept). */
static void test_long_candidates(void) {
    size_t count = 3, len = 20000;
    wb_search_owned_set set;
    CHECK(wb_search_set_alloc(&set, count, count * len), "alloc");
    for (size_t i = 0; i < count; i++) {
        set.offsets[i + 1] = set.offsets[i] + len;
        for (size_t j = 0; j < len; j++)
            set.bytes[set.offsets[i] + j] = (uint8_t)('a' + check_random() % 4);
    }
    /* a query of one word (one bit-parallel step per byte), and of two */
    uint8_t q[100];
    random_query(q, sizeof q, 4);
    size_t qlens[] = {10, 100};
    for (int qi = 0; qi < 2; qi++) {
        size_t qlen = qlens[qi], *exact = exact_distances(&set.set, q, qlen);
        for (size_t limit = 0; limit <= 2; limit += 2) {
            check_search(&set.set, exact, q, qlen, WB_SEARCH_NO_LIMIT, limit, 64);
            wb_search s;
            CHECK(wb_search_init(&s, &set.set, q, qlen, false, WB_SEARCH_NO_LIMIT, limit) ==
                      WB_SEARCH_OK,
                  "init");
            size_t steps = 0;
            uint64_t most = 0;
            for (bool done = false; !done; steps++) {
                uint64_t used = 0;
                done = wb_search_step(&s, 64, &used);
                if (used > most) most = used;
            }
            /* a whole candidate is at least len units: never in one step */
            CHECK(steps > count * len / 64 / 2, "qlen %zu: %zu steps", qlen, steps);
            CHECK(most < len, "qlen %zu: a step of %llu units", qlen, (unsigned long long)most);
            wb_search_free(&s);
        }
        free(exact);
    }
    wb_search_set_free(&set);
}

static void test_codepoints(void) {
    /* "héllo", "hello", "", "hé" against "hello" in codepoints */
    const char *words[] = {"h\xC3\xA9llo", "hello", "", "h\xC3\xA9"};
    size_t total = 0;
    for (int i = 0; i < 4; i++)
        total += strlen(words[i]);
    wb_search_owned_set set;
    CHECK(wb_search_set_alloc(&set, 4, total), "alloc");
    for (int i = 0; i < 4; i++) {
        set.offsets[i + 1] = set.offsets[i] + strlen(words[i]);
        memcpy(set.bytes + set.offsets[i], words[i], strlen(words[i]));
    }
    wb_search s;
    CHECK(wb_search_init(&s, &set.set, (const uint8_t *)"hello", 5, true, WB_SEARCH_NO_LIMIT, 0) ==
              WB_SEARCH_OK,
          "init");
    run(&s, 1);
    CHECK(s.distances[0] == 1 && s.distances[1] == 0 && s.distances[2] == 5 && s.distances[3] == 4,
          "codepoint distances %u %u %u %u", s.distances[0], s.distances[1], s.distances[2],
          s.distances[3]);
    wb_search_free(&s);
    CHECK(wb_search_init(&s, &set.set, (const uint8_t *)"\xFF", 1, true, WB_SEARCH_NO_LIMIT, 0) ==
              WB_SEARCH_EUTF8_QUERY,
          "invalid query");
    set.bytes[1] = 0xFF; /* candidate 0 is no longer UTF-8 */
    CHECK(wb_search_init(&s, &set.set, (const uint8_t *)"a", 1, true, WB_SEARCH_NO_LIMIT, 2) ==
              WB_SEARCH_OK,
          "init");
    run(&s, UINT64_MAX);
    CHECK(s.status == WB_SEARCH_EUTF8_CANDIDATE && s.failed_at == 0, "invalid candidate");
    wb_search_free(&s);
    wb_search_set_free(&set);
}

/* An ASCII set (as its maker marks it) and an ASCII query in codepoint
 * mode: searched in byte mode, with the byte distances; a query that is
 * not ASCII, or a set not marked, keeps the codepoint path. */
static void test_ascii_in_codepoints(void) {
    wb_search_owned_set set;
    random_set(&set, 300, 40, 26);
    wb_lanes_index prepared;
    CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, set.set.count), "build");
    uint8_t q[30];
    random_query(q, sizeof q, 26);
    size_t *exact = exact_distances(&set.set, q, sizeof q);
    for (int marked = 0; marked <= 1; marked++)
        for (int indexed = 0; indexed <= 1; indexed++) {
            wb_search_set view = set.set;
            view.ascii = marked;
            view.prepared = indexed ? &prepared : NULL;
            CHECK(wb_search_bytes_suffice(&view, q, sizeof q, SIZE_MAX) == (bool)marked,
                  "bytes suffice when marked");
            CHECK(!wb_search_bytes_suffice(&view, q, sizeof q, sizeof q - 1),
                  "a query longer than looked at: not known");
            wb_search s;
            CHECK(wb_search_init(&s, &view, q, sizeof q, true, WB_SEARCH_NO_LIMIT, 0) ==
                      WB_SEARCH_OK,
                  "init");
            CHECK(s.codepoints == !marked, "byte mode exactly when marked (marked %d)", marked);
            run(&s, 7);
            for (size_t i = 0; i < view.count; i++)
                CHECK(s.distances[i] == exact[i], "candidate %zu: %u, want %zu (marked %d)", i,
                      s.distances[i], exact[i], marked);
            wb_search_free(&s);
            /* a query that is not ASCII: codepoints, marked or not */
            const uint8_t *accented = (const uint8_t *)"\xC3\xA9t\xC3\xA9";
            CHECK(!wb_search_bytes_suffice(&view, accented, 5, SIZE_MAX), "not ASCII");
            CHECK(wb_search_init(&s, &view, accented, 5, true, 2, 0) == WB_SEARCH_OK, "init");
            CHECK(s.codepoints, "a query that is not ASCII stays in codepoints");
            run(&s, UINT64_MAX);
            for (size_t i = 0; i < view.count; i++) {
                size_t n = (size_t)(view.offsets[i + 1] - view.offsets[i]);
                size_t want =
                    wb_lev_distance(accented, 5, view.bytes + view.offsets[i], n, true, 2, NULL);
                CHECK(s.distances[i] == want, "accented, candidate %zu: %u, want %zu", i,
                      s.distances[i], want);
            }
            wb_search_free(&s);
        }
    free(exact);
    wb_lanes_index_free(&prepared);
    wb_search_set_free(&set);
}

#include "search_operations.h"

/* A candidate of 2^32 + 1 bytes (unread pages of an anonymous mapping)
 * against the empty query: its distance is past the 32-bit distances and
 * hits, which the search reports (WB_SEARCH_ETOO_FAR at it), never
 * capped; a cutoff below 2^32 - 1 makes it the cutoff + 1 as ever, and
 * a hit past the cutoff is no hit. */
static void test_too_far(void) {
    size_t n = ((size_t)1 << 32) + 1;
    uint8_t *big = mmap(NULL, n + 1, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (big == MAP_FAILED) {
        printf("too far: no mapping of 4 GiB here, skipped\n");
        return;
    }
    /* candidate 0: one byte; candidate 1: the 2^32 + 1 after it */
    const uint64_t offsets[3] = {0, 1, 1 + n};
    const wb_search_set set = {.count = 2, .bytes = big, .offsets = offsets, .ascii = true};
    const struct {
        size_t k, limit;
        wb_search_status want;
        size_t second; /* limit 0: candidate 1's distance; else the hits */
    } cases[] = {
        {WB_SEARCH_NO_LIMIT, 0, WB_SEARCH_ETOO_FAR, 0},
        {WB_SEARCH_NO_LIMIT, 2, WB_SEARCH_ETOO_FAR, 0},
        {5, 0, WB_SEARCH_OK, 6},
        {5, 2, WB_SEARCH_OK, 1},
        {UINT32_MAX - 1, 0, WB_SEARCH_OK, UINT32_MAX},
        {UINT32_MAX, 0, WB_SEARCH_ETOO_FAR, 0},
        {UINT32_MAX, 2, WB_SEARCH_OK, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        for (uint64_t budget = 1; budget <= UINT64_MAX / 4; budget = UINT64_MAX / 4) {
            wb_search s;
            CHECK(wb_search_init(&s, &set, (const uint8_t *)"", 0, false, cases[c].k,
                                 cases[c].limit) == WB_SEARCH_OK,
                  "init");
            run(&s, budget);
            CHECK(s.status == cases[c].want && (s.status == WB_SEARCH_OK || s.failed_at == 1),
                  "too far, case %zu: status %d at %zu, want %d at 1", c, (int)s.status,
                  s.failed_at, (int)cases[c].want);
            if (s.status == WB_SEARCH_OK && cases[c].limit == 0) {
                CHECK(s.distances[0] == 1 && s.distances[1] == cases[c].second,
                      "too far, case %zu: distances %u %u, want 1 %zu", c, s.distances[0],
                      s.distances[1], cases[c].second);
            } else if (s.status == WB_SEARCH_OK) {
                const wb_search_hit *hits;
                size_t len = wb_search_hits(&s, &hits);
                CHECK(len == cases[c].second && hits[0].index == 0 && hits[0].distance == 1,
                      "too far, case %zu: %zu hits, want %zu", c, len, cases[c].second);
            }
            wb_search_free(&s);
            if (budget != 1) break;
        }
    }
    munmap(big, n + 1);
}

#include "lanes_like.h"

int main(void) {
    test_too_far();
    /* every kernel this CPU has, and none */
    for (int k = WB_LANES_OFF; k < WB_LANES_KERNELS; k++) {
#ifdef WB_LANES_EMULATE_AVX512
        /* the build that runs the AVX-512 kernels' code on any CPU */
        if (k != WB_LANES_AVX512) continue;
#endif
        if (!wb_lanes_force((wb_lanes_kernel)k)) {
            printf("lane kernel %s: not on this CPU, skipped\n", wb_lanes_name((wb_lanes_kernel)k));
            continue;
        }
        /* and the pair core's ways of computing columns, each in turn */
        wb_lev_path path = (wb_lev_path)(k % WB_LEV_PATHS);
        if (!wb_lev_force_path(path)) wb_lev_force_path(path = WB_LEV_PATH_SCALAR);
        printf("lane kernel %s, pair core path %s\n", wb_lanes_name((wb_lanes_kernel)k),
               wb_lev_path_name(path));
        test_random();
        test_every_byte();
        test_windows();
        test_stepped_build();
        test_lanes_like();
        test_copy_bytes();
        test_narrow_batches();
        test_batches_in_flight();
        test_long_candidates();
        test_codepoints();
        test_ascii_in_codepoints();
        test_operations();
    }
    wb_lanes_force(WB_LANES_KERNELS);
    return CHECK_SUMMARY();
}

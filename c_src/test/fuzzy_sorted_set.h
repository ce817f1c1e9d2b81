/*
 * test_fuzzy.c's checks of an index's sorted tokens made a budget at a
 * time (sorted_set.h): every candidate's sorted form against a reference
 * of this file (the tokens split at the separators, sorted by qsort,
 * joined by one space) and against extract.h's wb_fz_sorted_tokens, at
 * every budget from 1 and with budgets changing between steps; SAME
 * exactly when every candidate is its sorted form; no step past its
 * budget by more than a few units, nor the whole past its predicted
 * units on candidates of one length; out of memory at each allocation,
 * and a making stopped half-way, with every block given back at its
 * size.
 */
#ifndef WB_TEST_FUZZY_SORTED_SET_H
#define WB_TEST_FUZZY_SORTED_SET_H

#include "../fuzzy/extract.h"
#include "../fuzzy/sorted_set.h"

/* ---- the blocks, counted -------------------------------------------------------- */

#define SS_BLOCKS 16
static struct {
    void *block[SS_BLOCKS];
    size_t bytes[SS_BLOCKS];
    size_t live;
    long allocs, fail_at; /* the allocation that fails (-1: none) */
} ss_heap = {.fail_at = -1};

static void *ss_alloc(size_t bytes) {
    if (ss_heap.allocs++ == ss_heap.fail_at) return NULL;
    void *p = malloc(bytes ? bytes : 1);
    if (!p) abort();
    for (int j = 0; j < SS_BLOCKS; j++)
        if (!ss_heap.block[j]) {
            ss_heap.block[j] = p;
            ss_heap.bytes[j] = bytes;
            ss_heap.live++;
            return p;
        }
    CHECK(0, "sorted set: more than %d blocks held at once", SS_BLOCKS);
    return p;
}

static void ss_release(void *block, size_t bytes) {
    for (int j = 0; j < SS_BLOCKS; j++)
        if (ss_heap.block[j] == block) {
            CHECK(ss_heap.bytes[j] == bytes, "sorted set: a block of %zu bytes given back as %zu",
                  ss_heap.bytes[j], bytes);
            ss_heap.block[j] = NULL;
            ss_heap.live--;
            free(block);
            return;
        }
    CHECK(0, "sorted set: a block given back that was not allocated");
}

/* ---- the reference -------------------------------------------------------------- */

static bool ss_separator(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == 0x1c ||
           c == 0x1d || c == 0x1e || c == 0x1f;
}

typedef struct {
    const uint8_t *at;
    size_t len;
} ss_token;

static int ss_order(const void *x, const void *y) {
    const ss_token *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->at, b->at, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The sorted form of t[0 .. n) into out (n bytes at most); its length. */
static size_t ss_reference(const uint8_t *t, size_t n, uint8_t *out) {
    ss_token *tokens = malloc((n / 2 + 1) * sizeof *tokens);
    if (!tokens) abort();
    size_t k = 0, len = 0;
    for (size_t j = 0; j < n;) {
        while (j < n && ss_separator(t[j]))
            j++;
        size_t from = j;
        while (j < n && !ss_separator(t[j]))
            j++;
        if (j > from) tokens[k++] = (ss_token){t + from, j - from};
    }
    qsort(tokens, k, sizeof *tokens, ss_order);
    for (size_t j = 0; j < k; j++) {
        if (j) out[len++] = ' ';
        memcpy(out + len, tokens[j].at, tokens[j].len);
        len += tokens[j].len;
    }
    free(tokens);
    return len;
}

/* ---- sets ------------------------------------------------------------------------- */

typedef struct {
    uint8_t *bytes;
    uint64_t *offsets;
    size_t count, room;
} ss_set;

static void ss_add(ss_set *s, const uint8_t *t, size_t n) {
    size_t at = s->count ? (size_t)s->offsets[s->count] : 0;
    s->bytes = realloc(s->bytes, at + n + 1);
    s->offsets = realloc(s->offsets, (s->count + 2) * sizeof *s->offsets);
    if (!s->bytes || !s->offsets) abort();
    s->offsets[0] = 0;
    if (n) memcpy(s->bytes + at, t, n);
    s->offsets[++s->count] = at + n;
}

static void ss_drop(ss_set *s) {
    free(s->bytes);
    free(s->offsets);
    memset(s, 0, sizeof *s);
}

static wb_search_set ss_view(const ss_set *s) {
    bool ascii = true;
    size_t total = s->count ? (size_t)s->offsets[s->count] : 0;
    for (size_t j = 0; j < total; j++)
        ascii = ascii && s->bytes[j] < 0x80;
    static const uint64_t zero = 0;
    return (wb_search_set){s->count, s->bytes, s->count ? s->offsets : &zero, NULL, ascii};
}

/* A random text of n bytes: tokens of letters (a few long ones sharing a
 * prefix, to compare long), bytes above 0x7f, low bytes that separate
 * nothing, and runs of every separator. */
static void ss_random_text(uint8_t *t, size_t n, unsigned spaces) {
    static const uint8_t separators[] = {' ',  ' ',  ' ',  '\t', '\n', '\v',
                                         '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f};
    static const uint8_t others[] = {0x00, 0x08, 0x0e, 0x1b, 0x21, 0x7f, 0x80, 0xc3, 0xa9, 0xff};
    unsigned alphabet = 1 + (unsigned)(check_random() % 4);
    for (size_t j = 0; j < n; j++) {
        uint64_t r = check_random();
        if (spaces && r % spaces == 0)
            t[j] = separators[(r >> 8) % sizeof separators];
        else if ((r >> 16) % 17 == 0)
            t[j] = others[(r >> 24) % sizeof others];
        else
            t[j] = (uint8_t)('a' + (r >> 32) % alphabet);
    }
}

/* ---- one making, against the reference -------------------------------------------- */

#define SS_OVERRUN 4

static size_t ss_runs, ss_made, ss_same;

/* Makes the sorted set of s with budgets from `budget` (0: a random one
 * each step), checks it; with `bound`, its units against
 * wb_fz_sorted_units. */
static void ss_check(const ss_set *s, uint64_t budget, bool bound, const char *what) {
    wb_search_set set = ss_view(s);
    size_t total = (size_t)set.offsets[set.count];
    wb_fz_sorted m;
    wb_fz_sorted_begin(&m, &set, ss_alloc, ss_release);
    uint64_t used = 0;
    wb_fz_sorted_status status = WB_FZ_SORTED_BUILDING;
    for (size_t steps = 0; status == WB_FZ_SORTED_BUILDING; steps++) {
        uint64_t b = budget ? budget : 1 + check_random() % 300, before = used;
        status = wb_fz_sorted_step(&m, b, &used);
        CHECK(used - before >= 1 && (used - before <= b || used - before - b <= SS_OVERRUN),
              "%s: a step of budget %llu took %llu units", what, (unsigned long long)b,
              (unsigned long long)(used - before));
        if (steps > 100 * (total + set.count + 10)) {
            CHECK(0, "%s: no end after %zu steps", what, steps);
            break;
        }
    }
    ss_runs++;
    uint64_t predicted = wb_fz_sorted_units(set.count, total);
    CHECK(!bound || used <= predicted, "%s: %llu units, predicted %llu", what,
          (unsigned long long)used, (unsigned long long)predicted);
    uint8_t *want = malloc(total + 1), *other = malloc(total + 1);
    if (!want || !other) abort();
    bool all_same = true;
    wb_fz_sorted_out out = {0};
    bool taken = wb_fz_sorted_take(&m, &out);
    CHECK(taken == (status == WB_FZ_SORTED_MADE), "%s: taken %d, status %d", what, taken, status);
    for (size_t i = 0; i < set.count; i++) {
        const uint8_t *t = set.bytes + set.offsets[i];
        size_t n = (size_t)(set.offsets[i + 1] - set.offsets[i]);
        size_t len = ss_reference(t, n, want);
        size_t len2 = wb_fz_sorted_tokens(t, n, other);
        CHECK(len2 == len && memcmp(want, other, len) == 0,
              "%s: candidate %zu: wb_fz_sorted_tokens \"%.*s\", reference \"%.*s\"", what, i,
              (int)len2, other, (int)len, want);
        bool same = len == n && memcmp(want, t, n) == 0;
        all_same = all_same && same;
        if (!taken) continue;
        const uint8_t *got = out.set.bytes + out.set.offsets[i];
        size_t got_len = (size_t)(out.set.offsets[i + 1] - out.set.offsets[i]);
        CHECK(got_len == len && memcmp(got, want, len) == 0,
              "%s: candidate %zu of %zu (budget %llu): \"%.*s\", want \"%.*s\" (of \"%.*s\")", what,
              i, set.count, (unsigned long long)budget, (int)got_len, got, (int)len, want, (int)n,
              t);
    }
    CHECK(status == (all_same ? WB_FZ_SORTED_SAME : WB_FZ_SORTED_MADE),
          "%s: status %d, every candidate its sorted form: %d", what, status, all_same);
    if (taken) {
        ss_made++;
        CHECK(out.set.count == set.count && out.set.offsets[0] == 0 && out.set.ascii == set.ascii &&
                  out.set.prepared == NULL && out.room >= out.set.offsets[out.set.count] &&
                  out.offsets_room == (set.count + 1) * sizeof(uint64_t),
              "%s: the set taken: count %zu of %zu, ascii %d of %d, room %zu for %llu", what,
              out.set.count, set.count, out.set.ascii, set.ascii, out.room,
              (unsigned long long)out.set.offsets[out.set.count]);
        ss_release(out.bytes, out.room);
        ss_release(out.offsets, out.offsets_room);
    } else {
        ss_same++;
    }
    wb_fz_sorted_free(&m);
    CHECK(ss_heap.live == 0, "%s: %zu blocks left", what, ss_heap.live);
    free(want);
    free(other);
}

static const uint64_t ss_budgets[] = {1, 2, 3, 5, 8, 31, 100, 1000, 0, UINT64_MAX};

static void ss_check_budgets(const ss_set *s, bool bound, const char *what) {
    for (size_t b = 0; b < sizeof ss_budgets / sizeof *ss_budgets; b++)
        ss_check(s, ss_budgets[b], bound, what);
}

/* Out of memory at each allocation in turn, and a making stopped after
 * each number of steps: nothing left allocated. */
static void ss_check_failures(const ss_set *s, const char *what) {
    wb_search_set set = ss_view(s);
    for (long fail = 0; fail < 8; fail++) {
        for (uint64_t budget = 1; budget <= 1001; budget += 1000) {
            ss_heap.allocs = 0;
            ss_heap.fail_at = fail;
            wb_fz_sorted m;
            wb_fz_sorted_begin(&m, &set, ss_alloc, ss_release);
            uint64_t used = 0;
            wb_fz_sorted_status status;
            while ((status = wb_fz_sorted_step(&m, budget, &used)) == WB_FZ_SORTED_BUILDING) {
            }
            bool failed = ss_heap.allocs > fail;
            CHECK(failed == (status == WB_FZ_SORTED_ENOMEM),
                  "%s: allocation %ld failing: status %d after %ld allocations", what, fail, status,
                  ss_heap.allocs);
            if (failed)
                CHECK(ss_heap.live == 0, "%s: %zu blocks kept out of memory", what, ss_heap.live);
            wb_fz_sorted_free(&m);
            CHECK(ss_heap.live == 0, "%s: %zu blocks left", what, ss_heap.live);
        }
    }
    ss_heap.fail_at = -1;
    for (size_t stop = 0; stop < 40; stop++) {
        wb_fz_sorted m;
        wb_fz_sorted_begin(&m, &set, ss_alloc, ss_release);
        uint64_t used = 0;
        for (size_t k = 0; k < stop; k++)
            wb_fz_sorted_step(&m, 7, &used);
        wb_fz_sorted_free(&m);
        CHECK(ss_heap.live == 0, "%s: stopped after %zu steps: %zu blocks left", what, stop,
              ss_heap.live);
    }
}

static void test_sorted_set(size_t rounds) {
    static const char *const known[] = {
        "",
        "   ",
        "b a",
        " b\t\ta c ",
        "ab a",
        "a ab",
        "b\x1f"
        "a\x80",
        "a\x1c"
        "b",
        "a\x0b"
        "b",
        "x",
        " x",
        "x ",
        "a b",
        "a  b",
        "\xc3\xa9t\xc3\xa9 \xc3\xa0",
        "b\x01 a\x7f",
        "zz zz zz",
        "c b a",
        "\r\n",
        "a",
        "\x1d\x1e",
    };
    ss_set s = {0};
    /* each alone (a set of one), then all together */
    for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
        ss_set one = {0};
        ss_add(&one, (const uint8_t *)known[k], strlen(known[k]));
        ss_add(&s, (const uint8_t *)known[k], strlen(known[k]));
        ss_check_budgets(&one, false, known[k]);
        ss_drop(&one);
    }
    ss_check_budgets(&s, false, "the known texts");
    ss_check_failures(&s, "the known texts");
    ss_drop(&s);
    ss_set none = {0};
    ss_check_budgets(&none, true, "no candidates");
    /* one-word names: the set itself */
    for (size_t i = 0; i < 500; i++) {
        uint8_t t[12];
        ss_random_text(t, 1 + i % 11, 0);
        ss_add(&s, t, 1 + i % 11);
    }
    ss_check_budgets(&s, false, "one-word names");
    /* the first that differs last, then first */
    ss_add(&s, (const uint8_t *)"b a", 3);
    ss_check_budgets(&s, false, "one-word names, the last of two");
    ss_drop(&s);
    ss_add(&s, (const uint8_t *)"b a", 3);
    ss_add(&s, (const uint8_t *)"abc", 3);
    ss_check_budgets(&s, false, "the first of two words");
    ss_drop(&s);
    /* long candidates: many tokens, long tokens sharing long prefixes */
    for (size_t k = 0; k < 3; k++) {
        size_t n = 3000 + 2000 * k;
        uint8_t *t = malloc(n);
        if (!t) abort();
        ss_random_text(t, n, k == 2 ? 2 : 5);
        if (k == 1)
            for (size_t j = 0; j < n; j++) /* tokens of one letter's long runs */
                t[j] = (j % 700 == 699) ? ' ' : (j % 700 == 698 ? (uint8_t)('a' + j % 3) : 'q');
        ss_add(&s, t, n);
        free(t);
    }
    ss_check_budgets(&s, false, "long candidates");
    ss_check_failures(&s, "long candidates");
    ss_drop(&s);
    /* random sets: candidates of one length (the units bounded), and of
     * any */
    for (size_t round = 0; round < rounds; round++) {
        bool one_length = round % 2 == 0;
        size_t count = 1 + check_random() % 60, n = check_random() % 90;
        unsigned spaces = (unsigned)(check_random() % 8);
        for (size_t i = 0; i < count; i++) {
            uint8_t t[400];
            size_t len = one_length ? n : check_random() % (round % 5 == 1 ? 400 : 40);
            ss_random_text(t, len, spaces);
            ss_add(&s, t, len);
        }
        char what[64];
        snprintf(what, sizeof what, "random set %zu", round);
        ss_check_budgets(&s, one_length, what);
        if (round % 16 == 0) ss_check_failures(&s, what);
        ss_drop(&s);
    }
    printf("sorted sets: %zu made (%zu new sets, %zu the set itself)\n", ss_runs, ss_made, ss_same);
}

#endif

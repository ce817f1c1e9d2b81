/*
 * A partial ratio with a needle past 64 KB (included by test_fuzzy.c):
 * its needle's pattern, the reversed copy of the suffix pass and that
 * copy's pattern are made a budget at a time, as is the look for a whole
 * window's last symbol through a needle of many blocks. A needle of
 * 65,600 symbols (1,025 blocks) in a haystack two symbols longer (one
 * whole window looked through and scored, one dominated: its last symbol
 * is not in the needle), of bytes and of codepoints (some of 256 and up),
 * stepped at a small budget (500 units; 4,000) and at budgets changing
 * from step to step, from 1 up: each step adds at least one unit and at
 * most its budget plus LN_SLACK, and places at most WB_FZ_PATTERN_PER_UNIT pattern
 * symbols and copies at most WB_FZ_COPY_SYMBOLS symbols a unit of its
 * budget (read from the state, not from the units it reports); the score
 * equals the one in one go, whose units stay within wb_fz_units.
 */
#ifndef WB_TEST_FUZZY_LONG_NEEDLE_H
#define WB_TEST_FUZZY_LONG_NEEDLE_H

#include "../fuzzy/tokens.h"

/* what a step may add past its budget: a build's last units (parts.c:
 * REVERSED_UNITS a symbol copied) */
#define LN_SLACK 3

#define LN_NEEDLE 65600

static size_t long_needle_steps;
static uint64_t long_needle_over, long_needle_most_placed;

/* What the state has built: the pattern symbols placed in the needle's
 * and the reversed needle's patterns, and the symbols of the reversed
 * copy. A pattern freed since `was` (its pass over) counts whole. */
typedef struct {
    size_t needle, rneedle, copied;
    bool needle_live, rneedle_live, copy_live;
    size_t needle_m, rneedle_m, copy_m;
} ln_built;

static ln_built ln_look(const wb_fz *s, size_t nl) {
    ln_built b = {0};
    b.needle_live = s->pattern_live;
    b.needle = s->pattern_live ? s->needle.filled : 0;
    b.needle_m = nl;
    b.copy_live = s->reversed_live;
    b.copied = s->reversed_live ? s->reversed_at : 0;
    b.copy_m = 2 * nl - 1;
    b.rneedle_live = s->reversed_live && s->rneedle_live;
    b.rneedle = b.rneedle_live ? s->rneedle.filled : 0;
    b.rneedle_m = nl;
    return b;
}

/* What a step did to one build: from `before` to `after` (or to the whole
 * when freed in the step). */
static size_t ln_delta(bool live0, size_t at0, bool live1, size_t at1, size_t whole) {
    size_t end = live1 ? at1 : (live0 ? whole : 0), begin = live0 ? at0 : 0;
    return end >= begin ? end - begin : end;
}

/* Steps a partial ratio of a (the needle) in b at budgets from `budgets`
 * (taken in turn, step after step); false when it could not start. */
static bool ln_run(const char *what, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                   const uint64_t *budgets, size_t nbudgets, double one) {
    wb_fz_options o = {.scorer = WB_FZ_PARTIAL_RATIO, .kind = WB_FZ_SIMILARITY};
    wb_fz s;
    if (!wb_fz_start(&s, &o, a, m, b, n)) return false;
    uint64_t used = 0;
    size_t steps = 0, bad = 0;
    bool done = false;
    while (!done) {
        uint64_t budget = budgets[steps % nbudgets], before = used;
        ln_built b0 = ln_look(&s, m);
        done = wb_fz_step(&s, budget, &used);
        ln_built b1 = ln_look(&s, m);
        steps++;
        uint64_t add = used - before, room = budget > 0 ? budget : 1;
        size_t placed = ln_delta(b0.needle_live, b0.needle, b1.needle_live, b1.needle, m) +
                        ln_delta(b0.rneedle_live, b0.rneedle, b1.rneedle_live, b1.rneedle, m);
        size_t copied = ln_delta(b0.copy_live, b0.copied, b1.copy_live, b1.copied, b1.copy_m);
        if (add > room && add - room > long_needle_over) long_needle_over = add - room;
        if (placed > long_needle_most_placed) long_needle_most_placed = placed;
        bool ok = (done || add > 0) && add <= room + LN_SLACK &&
                  placed <= WB_FZ_PATTERN_PER_UNIT * room && copied <= WB_FZ_COPY_SYMBOLS * room;
        if (!ok && bad++ < 5)
            CHECK(false,
                  "long needle %s, step %zu at budget %llu: %llu units, %zu pattern symbols "
                  "placed, %zu copied (at most %llu units, %llu placed, %llu copied)",
                  what, steps, (unsigned long long)budget, (unsigned long long)add, placed, copied,
                  (unsigned long long)(room + LN_SLACK),
                  (unsigned long long)(WB_FZ_PATTERN_PER_UNIT * room),
                  (unsigned long long)(WB_FZ_COPY_SYMBOLS * room));
        if (steps > 4 * (size_t)m * (m / 64 + 1)) break; /* not ending */
    }
    CHECK(done && !s.failed && s.score == one,
          "long needle %s at budgets from %llu: done %d failed %d, %.17g, in one go %.17g", what,
          (unsigned long long)budgets[0], done, s.failed, s.score, one);
    CHECK(bad == 0, "long needle %s at budgets from %llu: %zu steps out of bounds", what,
          (unsigned long long)budgets[0], bad);
    long_needle_steps += steps;
    wb_fz_free(&s);
    return true;
}

static void ln_case(const char *what, const uint32_t *letters, size_t nletters, uint32_t outside,
                    uint64_t budget) {
    size_t m = LN_NEEDLE, n = LN_NEEDLE + 2;
    uint32_t *a = malloc(m * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b) {
        CHECK(false, "long needle: out of memory");
        free(a);
        free(b);
        return;
    }
    for (size_t i = 0; i < m; i++)
        a[i] = letters[check_random() % nletters];
    /* the needle with about one symbol in 500 changed (no window holds it
     * whole: no early 100), then a symbol of the needle's, then one not
     * in it */
    memcpy(b, a, m * sizeof *a);
    for (size_t i = 0; i < m; i += 1 + check_random() % 1000) {
        size_t k = 0;
        while (letters[k] != b[i])
            k++;
        b[i] = letters[(k + 1 + check_random() % (nletters - 1)) % nletters];
    }
    b[m] = letters[0];
    b[m + 1] = outside;
    wb_fz_options o = {.scorer = WB_FZ_PARTIAL_RATIO, .kind = WB_FZ_SIMILARITY};
    double one = 0.0;
    wb_fz s;
    uint64_t used = 0, units = wb_fz_units(&o, m, n);
    bool ok = wb_fz_start(&s, &o, a, m, b, n);
    CHECK(ok, "long needle %s: start failed", what);
    if (ok) {
        bool done = wb_fz_step(&s, UINT64_MAX, &used);
        ok = done && !s.failed && s.score < 100.0 && s.score > 99.0;
        CHECK(ok, "long needle %s in one go: done %d failed %d, %.17g (want 99..100)", what, done,
              s.failed, s.score);
        one = s.score;
        wb_fz_free(&s);
        CHECK(used <= units, "long needle %s in one go: %llu units, wb_fz_units %llu", what,
              (unsigned long long)used, (unsigned long long)units);
    }
    if (ok) {
        static const uint64_t mixed[] = {1, 2, 3, 7, 64, 1000, 30000};
        CHECK(ln_run(what, a, m, b, n, mixed, sizeof mixed / sizeof mixed[0], one),
              "long needle %s: start failed", what);
        CHECK(ln_run(what, a, m, b, n, &budget, 1, one), "long needle %s: start failed", what);
    }
    free(a);
    free(b);
}

static void test_long_needle(void) {
    static const uint32_t bytes[] = {'a', 'b', 'c', 'd'};
    static const uint32_t cps[] = {'a', 0xE9, 0x4E2D, 0x1F600};
    ln_case("bytes", bytes, 4, 'z', 500);
    ln_case("codepoints", cps, 4, 0x1F601, 4000);
    printf("long needles: %zu steps, at most %llu units past a budget, %llu pattern symbols "
           "placed in a step\n",
           long_needle_steps, (unsigned long long)long_needle_over,
           (unsigned long long)long_needle_most_placed);
}

#endif

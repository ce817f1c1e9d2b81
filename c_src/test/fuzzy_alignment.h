/*
 * The partial ratio's alignment (included by test_fuzzy.c): where the
 * best window is, against a reference that scores every window with the
 * textbook LCS (fzr_lcs) and follows rapidfuzz-cpp's
 * partial_ratio_alignment step by step: the needle's whole windows but
 * the last visited by halving (each replacing the best only when its
 * distance is lower, ranges that cannot hold a better one left out), then
 * the prefixes, then the windows from the last whole one to the end, then
 * on equal lengths the other side as the needle, taken only when
 * strictly better. Random pairs over alphabets of 1 to 5 symbols (many
 * equal windows), with the needle planted whole in the haystack now and
 * then; needles of one word, of two and more (up to 150 symbols) and past
 * 256 (a pattern filled a budget at a time); each in one go and stepped
 * at budgets of 1, 3 and 17 units (a step taken up where the last
 * stopped, wherever that was); the score always the one without the
 * alignment. And rapidfuzz's own examples.
 */
#ifndef WB_TEST_FUZZY_ALIGNMENT_H
#define WB_TEST_FUZZY_ALIGNMENT_H

typedef struct {
    double score;
    wb_fz_alignment at;
} fza_result;

static double fza_ratio(size_t lcs, size_t total) {
    return 100.0 * (1.0 - (double)(total - 2 * lcs) / (double)total);
}

static bool fza_has(const uint32_t *s, size_t n, uint32_t c) {
    for (size_t i = 0; i < n; i++)
        if (s[i] == c) return true;
    return false;
}

/* rapidfuzz's halving over the whole windows 0 .. count - 1 of the needle
 * (nl) in hay: the first window of the least distance it visits, *best
 * its distance (none below 2 nl: SIZE_MAX) */
static size_t fza_halving(const uint32_t *needle, size_t nl, const uint32_t *hay, size_t count,
                          size_t *best) {
    size_t *scores = fzr_alloc(count, sizeof *scores);
    size_t(*ranges)[2] = fzr_alloc(2 * count + 2, sizeof *ranges);
    size_t(*next)[2] = fzr_alloc(2 * count + 2, sizeof *next);
    for (size_t i = 0; i < count; i++)
        scores[i] = SIZE_MAX;
    size_t cutoff = 2 * nl, at = SIZE_MAX, nranges = 1;
    ranges[0][0] = 0;
    ranges[0][1] = count - 1;
    *best = SIZE_MAX;
    while (nranges > 0 && cutoff > 0) {
        size_t nnext = 0;
        for (size_t r = 0; r < nranges && cutoff > 0; r++) {
            for (int e = 0; e < 2 && cutoff > 0; e++) {
                size_t p = ranges[r][e];
                if (scores[p] != SIZE_MAX) continue;
                scores[p] = 2 * nl - 2 * fzr_lcs(needle, nl, hay + p, nl);
                if (scores[p] < cutoff) {
                    cutoff = *best = scores[p];
                    at = p;
                }
            }
            size_t from = ranges[r][0], to = ranges[r][1], diff = to - from;
            if (cutoff == 0 || diff <= 1) continue;
            size_t a = scores[from], b = scores[to], known = a > b ? a - b : b - a;
            size_t gain = (diff - known / 2) / 2 * 2, least = a < b ? a : b;
            if ((long long)least - (long long)gain < (long long)cutoff) {
                next[nnext][0] = from;
                next[nnext][1] = from + diff / 2;
                next[nnext + 1][0] = from + diff / 2;
                next[nnext + 1][1] = to;
                nnext += 2;
            }
        }
        memcpy(ranges, next, nnext * sizeof *ranges);
        nranges = nnext;
    }
    free(scores);
    free(ranges);
    free(next);
    return at;
}

/* One direction: the needle whole, its best window in hay */
static fza_result fza_direction(const uint32_t *needle, size_t nl, const uint32_t *hay, size_t hl) {
    fza_result r = {0.0, {0, nl, 0, nl}};
    if (hl > nl) {
        size_t best, at = fza_halving(needle, nl, hay, hl - nl, &best);
        if (at != SIZE_MAX) {
            r.score = fza_ratio(nl - best / 2, 2 * nl);
            r.at.dest_start = at;
            r.at.dest_end = at + nl;
            if (best == 0) return r;
        }
    }
    for (size_t i = 1; i < nl; i++) {
        if (!fza_has(needle, nl, hay[i - 1])) continue;
        double x = fza_ratio(fzr_lcs(needle, nl, hay, i), nl + i);
        if (x > r.score) {
            r.score = x;
            r.at.dest_start = 0;
            r.at.dest_end = i;
        }
    }
    for (size_t i = hl - nl; i < hl; i++) {
        if (!fza_has(needle, nl, hay[i])) continue;
        double x = fza_ratio(fzr_lcs(needle, nl, hay + i, hl - i), nl + hl - i);
        if (x > r.score) {
            r.score = x;
            r.at.dest_start = i;
            r.at.dest_end = hl;
            if (x == 100.0) return r;
        }
    }
    return r;
}

static wb_fz_alignment fza_swapped(wb_fz_alignment x) {
    return (wb_fz_alignment){x.dest_start, x.dest_end, x.src_start, x.src_end};
}

static fza_result fza_reference(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    if (m > n) {
        fza_result r = fza_reference(b, n, a, m);
        r.at = fza_swapped(r.at);
        return r;
    }
    if (m == 0) return (fza_result){n == 0 ? 100.0 : 0.0, {0, 0, 0, 0}};
    fza_result r = fza_direction(a, m, b, n);
    if (r.score != 100.0 && m == n) {
        fza_result other = fza_direction(b, n, a, m);
        if (other.score > r.score) {
            other.at = fza_swapped(other.at);
            return other;
        }
    }
    return r;
}

static bool fza_same(wb_fz_alignment x, wb_fz_alignment y) {
    return x.src_start == y.src_start && x.src_end == y.src_end && x.dest_start == y.dest_start &&
           x.dest_end == y.dest_end;
}

/* The core's score and alignment of a and b, stepped at `budget` (0: in
 * one go); false when out of memory */
static bool fza_core(const uint32_t *a, size_t m, const uint32_t *b, size_t n, bool align,
                     uint64_t budget, fza_result *out) {
    wb_fz_options o = {.scorer = WB_FZ_PARTIAL_RATIO, .kind = WB_FZ_SIMILARITY, .alignment = align};
    wb_fz s;
    if (!wb_fz_start(&s, &o, a, m, b, n)) return false;
    uint64_t used = 0, units = wb_fz_units(&o, m, n);
    size_t steps = 0;
    /* each step makes progress: a bounded number of them */
    while (!wb_fz_step(&s, budget ? budget : UINT64_MAX / 4, &used))
        if (++steps > 2 * units + 16) break;
    FZ_CHECK(steps <= 2 * units + 16, "alignment (%zu, %zu) budget %llu: %zu steps and more", m, n,
             (unsigned long long)budget, steps);
    bool ok = !s.failed;
    /* in one go, within the units foreseen */
    FZ_CHECK(budget != 0 || used <= wb_fz_units(&o, m, n),
             "alignment (%zu, %zu): %llu units, %llu foreseen", m, n, (unsigned long long)used,
             (unsigned long long)wb_fz_units(&o, m, n));
    out->score = s.score;
    out->at = s.alignment;
    wb_fz_free(&s);
    return ok;
}

static void fza_check(const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    fza_result want = fza_reference(a, m, b, n), plain, got;
    FZ_CHECK(fza_core(a, m, b, n, false, 0, &plain), "alignment: plain score");
    FZ_CHECK(plain.score == want.score, "alignment: score %.17g, reference %.17g (%zu, %zu)",
             plain.score, want.score, m, n);
    static const uint64_t budgets[] = {0, 1, 3, 17};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        FZ_CHECK(fza_core(a, m, b, n, true, budgets[i], &got), "alignment: score");
        FZ_CHECK(got.score == plain.score && fza_same(got.at, want.at),
                 "alignment (%zu, %zu) budget %llu: %.17g [%zu, %zu) [%zu, %zu), reference %.17g "
                 "[%zu, %zu) [%zu, %zu)",
                 m, n, (unsigned long long)budgets[i], got.score, got.at.src_start, got.at.src_end,
                 got.at.dest_start, got.at.dest_end, want.score, want.at.src_start, want.at.src_end,
                 want.at.dest_start, want.at.dest_end);
    }
}

/* s over the first `letters` of a small alphabet */
static void fza_random(uint32_t *s, size_t len, size_t letters) {
    for (size_t i = 0; i < len; i++)
        s[i] = 'a' + (uint32_t)(check_random() % letters);
}

/* a random pair (a the needle's side or the haystack's), the needle
 * planted whole into the haystack now and then, at one place or more */
static void fza_random_pair(size_t most_a, size_t most_b) {
    static uint32_t a[400], b[1200];
    size_t letters = 1 + check_random() % 5;
    size_t m = check_random() % (most_a + 1), n = check_random() % (most_b + 1);
    fza_random(a, m, letters);
    fza_random(b, n, letters);
    if (m > 0 && m < n && check_random() % 3 == 0) {
        for (size_t k = 1 + check_random() % 3; k > 0; k--) {
            size_t at = check_random() % (n - m + 1);
            memcpy(b + at, a, m * sizeof *a);
        }
    }
    if (check_random() % 2)
        fza_check(a, m, b, n);
    else
        fza_check(b, n, a, m);
}

static void fza_known(const char *sa, const char *sb, double score, size_t ss, size_t se, size_t ds,
                      size_t de) {
    static uint32_t a[256], b[256];
    size_t m = ascii(sa, a), n = ascii(sb, b);
    fza_result got;
    FZ_CHECK(fza_core(a, m, b, n, true, 0, &got), "known alignment");
    wb_fz_alignment want = {ss, se, ds, de};
    FZ_CHECK(close_to(got.score, score) && fza_same(got.at, want),
             "alignment of \"%s\", \"%s\": %.17g [%zu, %zu) [%zu, %zu)", sa, sb, got.score,
             got.at.src_start, got.at.src_end, got.at.dest_start, got.at.dest_end);
}

static void test_alignment(size_t rounds) {
    /* rapidfuzz's documented example, and its test of issue 231 */
    fza_known("a certain string", "cetain", 100.0 * 10.0 / 12.0, 2, 8, 0, 6);
    fza_known("cetain", "a certain string", 100.0 * 10.0 / 12.0, 0, 6, 2, 8);
    fza_known("er merkantilismus f/rderte handel und verkehr mit teils marktkonformen, teils "
              "dirigistischen ma_nahmen.",
              "ils marktkonformen, teils dirigistischen ma_nahmen. an der schwelle zum 19. "
              "jahrhundert entstand ein neu",
              100.0 * 102.0 / 154.0, 0, 103, 0, 51);
    fza_known("", "abc", 0.0, 0, 0, 0, 0);
    fza_known("abc", "", 0.0, 0, 0, 0, 0);
    fza_known("", "", 100.0, 0, 0, 0, 0);
    fza_known("abc", "xyz", 0.0, 0, 3, 0, 3);
    fza_known("xyzw", "abc", 0.0, 0, 3, 0, 3);
    for (size_t r = 0; r < rounds; r++)
        fza_random_pair(12, 30);
    for (size_t r = 0; r < rounds / 10; r++)
        fza_random_pair(150, 400);
    for (size_t r = 0; r < 4; r++)
        fza_random_pair(300, 700);
}

#endif

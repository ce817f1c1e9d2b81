/*
 * Fuzz target: the fuzzy scorers (c_src/fuzzy), every scorer and kind, in
 * bytes or codepoints, with and without cutoffs: the score stepped in small
 * budgets equals the one in one go (wb_fz_score), lies in its kind's range,
 * and agrees bit for bit with the plain references of
 * c_src/test/fuzzy_reference.h (the edit distances, Jaro and the whole
 * ratios always; the partial ones when the pair is small enough for their
 * cubic reference); so do the score with a's pattern made once
 * (wb_fz_start_with) and the quick score (wb_fz_quick_score) when the
 * pair has one; Hamming without padding gives the error for sides of
 * different lengths, the same score for the others; the ratio's and the
 * partial ratio's alignment (the window scores the score). Codepoint mode
 * skips invalid UTF-8, after checking wb_fz_symbols against the strict
 * decoder of c_src/test/reference.h.
 *
 * Input: the scorer byte (% WB_FZ_SCORERS), a flags byte (bits 0-1: the
 * kind; bit 2: codepoints; bit 3: a cutoff; bit 4: the cutoff is the
 * reference's score itself; bits 5-6: Levenshtein's weights, unit, small
 * or large; bit 7: a state also freed half-way), the step budget, the
 * cutoff byte, the weights byte (small weights, or the prefix weight),
 * the split point (two bytes), then the bytes of a and b, each cut to
 * MAX_SYMBOLS symbols.
 */
#include "../fuzzy/fuzzy.h"
#include "../test/fuzzy_reference.h"
#include "../test/reference.h"
#include "fuzz.h"

#include <string.h>

#define MAX_SYMBOLS 300

static const char *const scorer_names[] = WB_FZ_SCORER_NAMES;
/* the partial ratios' reference: about (windows) * ls * ls cells */
#define MAX_PARTIAL_CELLS 4000000u

static bool is_partial(wb_fz_scorer scorer) {
    return scorer == WB_FZ_PARTIAL_RATIO || scorer == WB_FZ_PARTIAL_TOKEN_SORT_RATIO ||
           scorer == WB_FZ_PARTIAL_TOKEN_SET_RATIO || scorer == WB_FZ_PARTIAL_TOKEN_RATIO ||
           scorer == WB_FZ_WRATIO;
}

/* Decodes into out (room for len); false when invalid UTF-8. Checks the
 * decoder against the reference's. */
static bool decode(const uint8_t *in, size_t len, bool codepoints, uint32_t *out, size_t *count) {
    *count = wb_fz_symbols(in, len, codepoints, out);
    if (codepoints) {
        uint32_t *ref = malloc((len + 1) * sizeof *ref);
        WB_FUZZ_CHECK(ref);
        long r = wb_ref_decode_utf8(in, len, ref);
        WB_FUZZ_CHECK((r < 0) == (*count == SIZE_MAX));
        if (r >= 0)
            WB_FUZZ_CHECK((size_t)r == *count && memcmp(ref, out, *count * sizeof *out) == 0);
        free(ref);
    } else {
        WB_FUZZ_CHECK(*count == len);
    }
    if (*count == SIZE_MAX) return false;
    if (*count > MAX_SYMBOLS) *count = MAX_SYMBOLS;
    return true;
}

/* The quick score of the pair, when it has one (a query of 1..64 bytes,
 * or ASCII in codepoint mode): passed as wb_fz_score's, and the same
 * score when it passes (beyond the cutoff none is reported). */
static void quick(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                  double score, bool passed) {
    uint32_t top = o->codepoints ? 128 : 256;
    if (m == 0 || m > 64 || n > WB_FZ_QUICK_MOST) return;
    uint8_t qa[64], *qb = malloc(n + 1);
    WB_FUZZ_CHECK(qb);
    bool fits = true;
    for (size_t i = 0; i < m; i++) {
        fits = fits && a[i] < top;
        qa[i] = (uint8_t)a[i];
    }
    for (size_t j = 0; j < n; j++) {
        fits = fits && b[j] < top;
        qb[j] = (uint8_t)b[j];
    }
    wb_fz_quick q;
    bool quick = fits && wb_fz_quick_init(&q, o, qa, m);
    if (quick && wb_fz_quick_fits(&q, n)) {
        double qs;
        bool qp;
        wb_fz_bar badness;
        wb_fz_quick_score(&q, qb, n, NULL, &qs, &qp, &badness);
        WB_FUZZ_CHECK(qp == passed && (!passed || qs == score));
        WB_FUZZ_CHECK(fzr_in_range(o, m, n, qs));
        size_t lcs = fzr_lcs(a, m, b, n);
        if (o->scorer == WB_FZ_PARTIAL_RATIO && n <= WB_FZ_QUICK_MATRIX_MOST) {
            /* a search's worst kept at its own score: never better; the
             * bar past it: its own */
            double bs;
            bool bp;
            wb_fz_quick_partial(&q, qb, n, lcs, &qs, &bs, &bp);
            WB_FUZZ_CHECK(!wb_fz_better(o->kind, bs, qs));
            double worse = wb_fz_better(o->kind, qs, qs + 1e-9) ? qs + 1e-9 : qs - 1e-9;
            wb_fz_quick_partial(&q, qb, n, lcs, &worse, &bs, &bp);
            WB_FUZZ_CHECK(bs == qs);
        }
        if (o->scorer == WB_FZ_DAMERAU_LEVENSHTEIN && o->kind == WB_FZ_DISTANCE && !o->has_cutoff &&
            n <= WB_FZ_QUICK_MATRIX_MOST) {
            /* cut at a distance: the cut, its own when the cut is past
             * it */
            size_t d = (size_t)qs, cut = 1 + lcs % (d + 1);
            double cs;
            bool cp;
            wb_fz_quick_damerau(&q, qb, n, lcs, NULL, cut, &cs, &cp, &badness);
            WB_FUZZ_CHECK(cs == (cut > d ? qs : (double)cut));
            wb_fz_quick_damerau(&q, qb, n, lcs, NULL, d + 1, &cs, &cp, &badness);
            WB_FUZZ_CHECK(cs == qs);
        }
    }
    if (quick) wb_fz_quick_free(&q);
    free(qb);
}

/* The ratio's and the partial ratio's alignment, stepped: the same
 * score; the ratio's the whole of both; the partial ratio's the shorter
 * side whole and a window of the longer whose ratio against it is the
 * score (the core's best, whatever the cutoff), within the longer. */
static void aligned(const wb_fz_options *plain, const uint32_t *a, size_t m, const uint32_t *b,
                    size_t n, uint64_t budget, double score, bool passed) {
    wb_fz_options o = *plain;
    o.alignment = true;
    wb_fz s;
    WB_FUZZ_CHECK(wb_fz_start(&s, &o, a, m, b, n));
    uint64_t used = 0, units = wb_fz_units(&o, m, n);
    size_t steps = 0;
    while (!wb_fz_step(&s, budget, &used))
        WB_FUZZ_CHECK(++steps <= 2 * units + 16);
    WB_FUZZ_CHECK(!s.failed && s.score == score && s.passed == passed);
    wb_fz_alignment at = s.alignment;
    double best = s.similarity;
    wb_fz_free(&s);
    WB_FUZZ_CHECK(at.src_start <= at.src_end && at.src_end <= m && at.dest_start <= at.dest_end &&
                  at.dest_end <= n);
    if (o.scorer == WB_FZ_RATIO) {
        WB_FUZZ_CHECK(at.src_start == 0 && at.src_end == m && at.dest_start == 0 &&
                      at.dest_end == n);
        return;
    }
    if (m == 0 || n == 0) {
        WB_FUZZ_CHECK(at.src_end == 0 && at.dest_end == 0);
        return;
    }
    bool a_whole = at.src_start == 0 && at.src_end == m,
         b_whole = at.dest_start == 0 && at.dest_end == n;
    WB_FUZZ_CHECK(m < n ? a_whole : m > n ? b_whole : a_whole || b_whole);
    size_t sl = at.src_end - at.src_start, dl = at.dest_end - at.dest_start;
    size_t d = fzr_indel(a + at.src_start, sl, b + at.dest_start, dl);
    WB_FUZZ_CHECK(100.0 * (1.0 - (double)d / (double)(sl + dl)) == best);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    wb_fz_options o;
    memset(&o, 0, sizeof o);
    o.scorer = (wb_fz_scorer)(wb_fuzz_byte(&in) % WB_FZ_SCORERS);
    uint8_t flags = wb_fuzz_byte(&in);
    o.kind = (wb_fz_kind)(flags & 3);
    o.codepoints = flags & 4;
    o.has_cutoff = flags & 8;
    uint64_t budget = 1 + wb_fuzz_byte(&in) % 64;
    uint8_t cutoff_byte = wb_fuzz_byte(&in), weights = wb_fuzz_byte(&in);
    o.ins = o.del = o.sub = 1;
    if (((flags >> 5) & 3) == 1) {
        o.ins = weights & 3;
        o.del = (weights >> 2) & 3;
        o.sub = (weights >> 4) & 3;
    } else if (((flags >> 5) & 3) == 2) {
        static const uint64_t big[] = {1, 2, 1000, 4294967295u};
        o.ins = big[weights & 3];
        o.del = big[(weights >> 2) & 3];
        o.sub = big[(weights >> 4) & 3];
    }
    o.prefix_weight = (double)(weights % 26) / 100.0;
    size_t split = wb_fuzz_byte(&in);
    split |= (size_t)wb_fuzz_byte(&in) << 8;
    split = in.size ? split % (in.size + 1) : 0;

    uint32_t *a = malloc((split + 1) * sizeof *a), *b = malloc((in.size - split + 1) * sizeof *b);
    WB_FUZZ_CHECK(a && b);
    size_t m, n;
    if (!decode(in.data, split, o.codepoints, a, &m) ||
        !decode(in.data + split, in.size - split, o.codepoints, b, &n)) {
        free(a);
        free(b);
        return 0;
    }

    /* the reference, when affordable */
    size_t ls = m < n ? m : n, ll = m < n ? n : m;
    bool check_ref = !is_partial(o.scorer) || (uint64_t)(ll + ls) * ls * ls <= MAX_PARTIAL_CELLS;
    fzr_raw r;
    memset(&r, 0, sizeof r);
    if (check_ref) r = fzr_compute(&o, a, m, b, n);
    if (o.has_cutoff) {
        double top = o.kind >= WB_FZ_NORMALIZED_DISTANCE ? 1.0
                     : fzr_is_edit(o.scorer)             ? (double)fzr_maximum(&o, m, n)
                     : o.scorer <= WB_FZ_JARO_WINKLER    ? 1.0
                                                         : 100.0;
        o.cutoff = top * cutoff_byte / 255.0;
        /* edit distances: integers too */
        if (fzr_is_edit(o.scorer) && o.kind <= WB_FZ_SIMILARITY && (cutoff_byte & 1))
            o.cutoff = (double)(cutoff_byte >> 1);
        if ((flags & 16) && check_ref) o.cutoff = fzr_kind_score(o.kind, &r);
    }

    double score;
    bool passed;
    WB_FUZZ_CHECK(wb_fz_score(&o, a, m, b, n, &score, &passed));
    WB_FUZZ_CHECK(fzr_in_range(&o, m, n, score));
    if (o.has_cutoff && (flags & 16) && check_ref) WB_FUZZ_CHECK(passed);
    if (check_ref && !fzr_agrees(&o, &r, score, passed)) {
        fprintf(stderr, "%s kind %d codepoints %d cutoff %d %.17g: got %.17g %d, want %.17g\n",
                scorer_names[o.scorer], (int)o.kind, (int)o.codepoints, (int)o.has_cutoff, o.cutoff,
                score, (int)passed, fzr_kind_score(o.kind, &r));
        WB_FUZZ_CHECK(!"the reference's score");
    }

    /* stepped: the same result, in a bounded number of steps */
    wb_fz s;
    WB_FUZZ_CHECK(wb_fz_start(&s, &o, a, m, b, n));
    uint64_t used = 0, units = wb_fz_units(&o, m, n);
    size_t steps = 0;
    while (!wb_fz_step(&s, budget, &used))
        WB_FUZZ_CHECK(++steps <= 2 * units + 16);
    WB_FUZZ_CHECK(!s.failed && s.score == score && s.passed == passed);
    wb_fz_free(&s);
    if (o.scorer == WB_FZ_RATIO || o.scorer == WB_FZ_PARTIAL_RATIO)
        aligned(&o, a, m, b, n, budget, score, passed);

    /* Hamming without padding: sides of different lengths are an error,
     * equal ones score as padded */
    if (o.scorer == WB_FZ_HAMMING) {
        wb_fz_options strict = o;
        strict.no_pad = true;
        WB_FUZZ_CHECK(wb_fz_start(&s, &strict, a, m, b, n));
        used = steps = 0;
        while (!wb_fz_step(&s, budget, &used))
            WB_FUZZ_CHECK(++steps <= 2 * units + 16);
        WB_FUZZ_CHECK(!s.failed && s.unequal == (m != n));
        WB_FUZZ_CHECK(m != n || (s.score == score && s.passed == passed));
        wb_fz_free(&s);
    }

    /* on the bytes themselves, for a scorer that reads them (byte mode:
     * every symbol a byte) */
    if (wb_fz_reads_bytes(&o)) {
        uint8_t *ab = malloc(m ? m : 1), *bb = malloc(n ? n : 1);
        WB_FUZZ_CHECK(ab && bb);
        for (size_t i = 0; i < m; i++)
            ab[i] = (uint8_t)a[i];
        for (size_t j = 0; j < n; j++)
            bb[j] = (uint8_t)b[j];
        WB_FUZZ_CHECK(wb_fz_start_bytes(&s, &o, ab, m, bb, n));
        used = steps = 0;
        while (!wb_fz_step(&s, budget, &used))
            WB_FUZZ_CHECK(++steps <= 2 * units + 16);
        WB_FUZZ_CHECK(!s.failed && s.score == score && s.passed == passed);
        wb_fz_free(&s);
        free(ab);
        free(bb);
    }

    /* as a search scores it: a's pattern made once, and the quick score
     * when the scorer and the pair have one (the same when it passes) */
    wb_fz_pattern query;
    WB_FUZZ_CHECK(wb_fz_pattern_init(&query, a, m));
    WB_FUZZ_CHECK(wb_fz_start_with(&s, &o, &query, a, m, b, n));
    used = steps = 0;
    while (!wb_fz_step(&s, budget, &used))
        WB_FUZZ_CHECK(++steps <= 2 * units + 16);
    WB_FUZZ_CHECK(!s.failed && s.score == score && s.passed == passed);
    wb_fz_free(&s);
    wb_fz_pattern_free(&query);
    quick(&o, a, m, b, n, score, passed);

    /* a state freed half-way (the leak checker watches) */
    if (flags & 128) {
        WB_FUZZ_CHECK(wb_fz_start(&s, &o, a, m, b, n));
        used = 0;
        for (size_t i = 0; i < 1 + cutoff_byte % 8 && !wb_fz_step(&s, 1, &used); i++) {
        }
        wb_fz_free(&s);
    }
    free(a);
    free(b);
    return 0;
}

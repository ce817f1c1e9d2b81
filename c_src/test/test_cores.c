/*
 * Unit tests of the pure-C cores, built with AddressSanitizer and UBSan by
 * `make test`. The Levenshtein core is checked against a plain O(n*m)
 * dynamic program on fixed cases and on random inputs, stepped in one go
 * and one unit at a time.
 */
#include "../metric/levenshtein_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reference.h"

/* The core stepped with the given budget per step, its set-up included;
 * *most gets the most units a step reported, *steps the steps. */
static size_t stepped_counting(const uint8_t *a, size_t n, const uint8_t *b, size_t m, bool cp,
                               size_t k, uint64_t budget, wb_lev_status *status, uint64_t *most,
                               size_t *steps) {
    wb_lev s;
    wb_lev_start(&s, a, n, b, m, cp, k);
    *most = 0;
    *steps = 0;
    bool done;
    do {
        uint64_t used = 0;
        done = wb_lev_step(&s, a, b, budget, &used);
        if (used > *most) *most = used;
        ++*steps;
    } while (!done);
    *status = wb_lev_error(&s);
    size_t d = *status == WB_LEV_OK ? wb_lev_result(&s) : SIZE_MAX;
    wb_lev_free(&s);
    CHECK(wb_lev_memory(&s) == 0, "memory after free: %zu", wb_lev_memory(&s));
    return d;
}

static size_t stepped(const uint8_t *a, size_t n, const uint8_t *b, size_t m, bool cp, size_t k,
                      uint64_t budget) {
    wb_lev_status st;
    uint64_t most;
    size_t steps;
    return stepped_counting(a, n, b, m, cp, k, budget, &st, &most, &steps);
}

static size_t capped(size_t d, size_t k) {
    return d > k ? k + 1 : d;
}

static void fill(uint8_t *buf, size_t len, unsigned alphabet) {
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(check_random() % alphabet);
}

/* wb_lev_short takes the pair exactly when it is at most WB_LEV_SHORT_BYTES
 * in all and its shorter side, without the common prefix and suffix, is at
 * most 64 bytes or its cutoff at most WB_LEV_MBLEVEN_MOST; then with the
 * exact (capped) distance. */
static void check_short(const uint8_t *a, size_t n, const uint8_t *b, size_t m, size_t want,
                        size_t k) {
    size_t pre = 0, suf = 0, shortest = n < m ? n : m;
    while (pre < shortest && a[pre] == b[pre])
        pre++;
    while (suf < shortest - pre && a[n - 1 - suf] == b[m - 1 - suf])
        suf++;
    bool should =
        n + m <= WB_LEV_SHORT_BYTES && (shortest - pre - suf <= 64 || k <= WB_LEV_MBLEVEN_MOST);
    size_t got = SIZE_MAX;
    bool took = wb_lev_short(a, n, b, m, false, k, &got);
    CHECK(took == should, "short %zu x %zu: taken %d, should be %d", n, m, took, should);
    if (took)
        CHECK(got == capped(want, k), "short %zu x %zu k=%zu: got %zu want %zu", n, m, k, got,
              capped(want, k));
    /* in codepoints: only ASCII pairs, with the same answer */
    bool all_ascii = true;
    for (size_t i = 0; i < n; i++)
        all_ascii = all_ascii && a[i] < 0x80;
    for (size_t j = 0; j < m; j++)
        all_ascii = all_ascii && b[j] < 0x80;
    got = SIZE_MAX;
    took = wb_lev_short(a, n, b, m, true, k, &got);
    CHECK(took == (should && all_ascii), "short %zu x %zu in codepoints: taken %d", n, m, took);
    if (took)
        CHECK(got == capped(want, k), "short %zu x %zu k=%zu in codepoints: got %zu", n, m, k, got);
    /* the long way in codepoints: ASCII found while validating goes on in
     * byte mode, one unit per step */
    if (all_ascii) {
        got = stepped(a, n, b, m, true, k, 1);
        CHECK(got == capped(want, k), "ASCII %zu x %zu k=%zu in codepoints, stepped: got %zu", n, m,
              k, got);
    }
}

static void check_pair(const uint8_t *a, size_t n, const uint8_t *b, size_t m) {
    size_t want = wb_ref_distance_bytes(a, n, b, m);
    check_short(a, n, b, m, want, WB_LEV_NO_LIMIT);
    size_t got = wb_lev_distance(a, n, b, m, false, WB_LEV_NO_LIMIT, NULL);
    CHECK(got == want, "bytes %zu x %zu: got %zu want %zu", n, m, got, want);
    got = stepped(a, n, b, m, false, WB_LEV_NO_LIMIT, 1);
    CHECK(got == want, "bytes %zu x %zu one unit per step: got %zu want %zu", n, m, got, want);
    size_t ks[] = {0, 1, want ? want - 1 : 0, want, want + 1, want / 2, 2 * want + 3};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        got = wb_lev_distance(a, n, b, m, false, ks[i], NULL);
        CHECK(got == capped(want, ks[i]), "bytes %zu x %zu k=%zu: got %zu want %zu", n, m, ks[i],
              got, capped(want, ks[i]));
        check_short(a, n, b, m, want, ks[i]);
        got = stepped(a, n, b, m, false, ks[i], 3);
        CHECK(got == capped(want, ks[i]), "bytes %zu x %zu k=%zu stepped: got %zu want %zu", n, m,
              ks[i], got, capped(want, ks[i]));
    }
}

static void test_fixed(void) {
    const char *kitten = "kitten", *sitting = "sitting";
    CHECK(wb_lev_distance((const uint8_t *)kitten, 6, (const uint8_t *)sitting, 7, false,
                          WB_LEV_NO_LIMIT, NULL) == 3,
          "kitten/sitting");
    CHECK(wb_lev_distance((const uint8_t *)"", 0, (const uint8_t *)"", 0, false, WB_LEV_NO_LIMIT,
                          NULL) == 0,
          "empty");
    CHECK(wb_lev_distance((const uint8_t *)"", 0, (const uint8_t *)"abc", 3, false, WB_LEV_NO_LIMIT,
                          NULL) == 3,
          "empty vs abc");
    uint8_t *x = malloc(2048), *y = malloc(2048);
    memset(x, 'a', 2048);
    memset(y, 'b', 2048);
    CHECK(wb_lev_distance(x, 2048, y, 2048, false, WB_LEV_NO_LIMIT, NULL) == 2048, "a/b 2048");
    free(x);
    free(y);
    uint8_t *z = calloc(10000, 1), *o = malloc(10000);
    memset(o, 1, 10000);
    CHECK(wb_lev_distance(z, 10000, o, 10000, false, WB_LEV_NO_LIMIT, NULL) == 10000, "seed pair");
    CHECK(wb_lev_distance(z, 10000, o, 10000, false, 7, NULL) == 8, "seed pair k=7");
    free(z);
    free(o);
}

static void test_boundaries(void) {
    size_t lens[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 200};
    uint8_t a[256], b[256];
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        for (size_t j = 0; j < sizeof lens / sizeof *lens; j++)
            for (unsigned alpha = 2; alpha <= 256; alpha *= 16) {
                fill(a, lens[i], alpha);
                fill(b, lens[j], alpha);
                check_pair(a, lens[i], b, lens[j]);
            }
}

static void test_random(void) {
    uint8_t *a = malloc(1200), *b = malloc(1200);
    for (int t = 0; t < 1500; t++) {
        size_t n = check_random() % (t < 1000 ? 150 : 1200),
               m = check_random() % (t < 1000 ? 150 : 1200);
        unsigned alpha = (unsigned[]){2, 4, 26, 256}[t % 4];
        fill(a, n, alpha);
        if (t % 3 == 0) { /* a similar pair: b is a mutated copy of a */
            memcpy(b, a, n);
            m = n;
            for (int e = 0; e < (int)(check_random() % 12); e++)
                if (m) b[check_random() % m] = (uint8_t)(check_random() % alpha);
        } else {
            fill(b, m, alpha);
        }
        check_pair(a, n, b, m);
    }
    free(a);
    free(b);
}

/* long inputs: the banded distance of a lightly edited 20k copy */
static void test_long_banded(void) {
    size_t n = 12000;
    uint8_t *a = malloc(n), *b = malloc(n + 8);
    fill(a, n, 256);
    memcpy(b, a, n);
    b[100] ^= 1;
    b[9000] ^= 1;
    memmove(b + 10001, b + 10000, n - 10000);
    b[10000] = 7;
    size_t want = wb_ref_distance_bytes(a, n, b, n + 1);
    CHECK(want == 3, "edited copy: reference %zu", want);
    CHECK(wb_lev_distance(a, n, b, n + 1, false, 8, NULL) == 3, "edited copy k=8");
    CHECK(wb_lev_distance(a, n, b, n + 1, false, 2, NULL) == 3, "edited copy k=2 -> 3");
    CHECK(wb_lev_distance(a, n, b, n + 1, false, WB_LEV_NO_LIMIT, NULL) == 3, "edited copy full");
    free(a);
    free(b);
}

/* The inputs may move between steps (a host's binaries): each step is
 * given fresh copies and the last ones are freed, so reading bytes kept
 * from an earlier step is caught (ASan); bytes and ASCII codepoints are
 * read in place, a cutoff's band and none. */
static size_t mutate(const uint8_t *a, size_t n, uint8_t *b, int edits, unsigned alphabet);

static void test_inputs_move(void) {
    for (int round = 0; round < 8; round++) {
        size_t n = 200 + check_random() % 300;
        uint8_t *a = malloc(n), *b = malloc(n + 40);
        CHECK(a && b, "allocation");
        fill(a, n, 20);
        for (size_t i = 0; i < n; i++)
            a[i] = (uint8_t)('a' + a[i]); /* ASCII: codepoints run as bytes */
        size_t m = mutate(a, n, b, 1 + round * 4, 20);
        for (size_t i = 0; i < m; i++)
            if (b[i] < 'a') b[i] = (uint8_t)('a' + b[i]);
        size_t want = wb_ref_distance_bytes(a, n, b, m);
        for (int mode = 0; mode < 4; mode++) {
            bool cp = mode & 1;
            size_t k = mode & 2 ? 6 : WB_LEV_NO_LIMIT;
            wb_lev s;
            wb_lev_start(&s, a, n, b, m, cp, k);
            bool done = false;
            while (!done) {
                uint8_t *ca = malloc(n), *cb = malloc(m);
                CHECK(ca && cb, "allocation");
                memcpy(ca, a, n);
                memcpy(cb, b, m);
                uint64_t used = 0;
                done = wb_lev_step(&s, ca, cb, 5, &used);
                free(ca);
                free(cb);
            }
            size_t d = wb_lev_result(&s);
            CHECK(wb_lev_error(&s) == WB_LEV_OK && d == capped(want, k),
                  "moving inputs, %s, k %zu: %zu, reference %zu", cp ? "codepoints" : "bytes",
                  k == WB_LEV_NO_LIMIT ? (size_t)0 : k, d, capped(want, k));
            wb_lev_free(&s);
        }
        free(a);
        free(b);
    }
}

/* b: a copy of a with up to `edits` random insertions, deletions and
 * substitutions; returns its length */
static size_t mutate(const uint8_t *a, size_t n, uint8_t *b, int edits, unsigned alphabet) {
    memcpy(b, a, n);
    size_t m = n;
    for (int e = 0; e < edits; e++) {
        size_t at = m ? check_random() % (m + 1) : 0;
        switch (check_random() % 3) {
        case 0: /* insert */
            memmove(b + at + 1, b + at, m - at);
            b[at] = (uint8_t)(check_random() % alphabet);
            m++;
            break;
        case 1: /* delete */
            if (at < m) {
                memmove(b + at, b + at + 1, m - at - 1);
                m--;
            }
            break;
        default:
            if (at < m) b[at] = (uint8_t)(check_random() % alphabet);
        }
    }
    return m;
}

/* cutoffs of 0..3 without a table: against the reference on random and
 * near pairs, periodic inputs (where greedy matching is most tempting) and
 * every length difference around the cutoff */
static void test_mbleven(void) {
    uint8_t a[600], b[620];
    for (int t = 0; t < 20000; t++) {
        unsigned alpha = (unsigned[]){2, 3, 4, 26, 256}[t % 5];
        size_t n = check_random() % (t % 7 == 0 ? 500 : 40);
        size_t m;
        if (t % 11 == 0) { /* periodic: ab ab ab ... against a shifted copy */
            size_t period = 1 + check_random() % 4;
            for (size_t i = 0; i < n; i++)
                a[i] = (uint8_t)(i % period);
            m = mutate(a, n, b, (int)(check_random() % 5), 2);
        } else if (t % 2 == 0) {
            fill(a, n, alpha);
            m = mutate(a, n, b, (int)(check_random() % 6), alpha);
        } else {
            fill(a, n, alpha);
            m = check_random() % 40;
            fill(b, m, alpha);
        }
        size_t want = wb_ref_distance_bytes(a, n, b, m);
        for (size_t k = 0; k <= WB_LEV_MBLEVEN_MOST; k++) {
            size_t got = wb_lev_mbleven(a, n, b, m, k);
            CHECK(got == capped(want, k), "mbleven %zu x %zu k=%zu: got %zu want %zu", n, m, k, got,
                  capped(want, k));
            got = wb_lev_mbleven(b, m, a, n, k);
            CHECK(got == capped(want, k), "mbleven swapped %zu x %zu k=%zu: got %zu want %zu", m, n,
                  k, got, capped(want, k));
        }
    }
}

/* the OR of a buffer's bytes, word by word and the rest, against a plain
 * loop; ASCII exactly when no byte has its high bit, wherever it is */
static void test_or_bytes(void) {
    uint8_t buf[80];
    for (size_t len = 0; len <= sizeof buf; len++)
        for (int t = 0; t < 40; t++) {
            fill(buf, len, 128);
            bool high = len > 0 && t % 2 == 0;
            if (high) buf[check_random() % len] |= 0x80;
            uint8_t want = 0;
            for (size_t i = 0; i < len; i++)
                want |= buf[i];
            CHECK(wb_text_or_bytes(buf, len) == want, "or of %zu bytes", len);
            CHECK(wb_text_ascii(buf, len) == !high, "ascii of %zu bytes (high %d)", len, high);
        }
}

/* encodes codepoints as UTF-8 */
static size_t encode(const uint32_t *cps, size_t n, uint8_t *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = cps[i];
        if (c < 0x80)
            out[o++] = (uint8_t)c;
        else if (c < 0x800) {
            out[o++] = (uint8_t)(0xC0 | (c >> 6));
            out[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out[o++] = (uint8_t)(0xE0 | (c >> 12));
            out[o++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else {
            out[o++] = (uint8_t)(0xF0 | (c >> 18));
            out[o++] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            out[o++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            out[o++] = (uint8_t)(0x80 | (c & 0x3F));
        }
    }
    return o;
}

static void test_codepoints(void) {
    const uint32_t pool[] = {'a', 'b', 0xE9, 0x3B1, 0x4E2D, 0x1F600, 0x10FFFF, 0x800};
    uint32_t ca[400], cb[400];
    uint8_t ea[1600], eb[1600];
    for (int t = 0; t < 600; t++) {
        size_t n = check_random() % 200, m = check_random() % 200;
        bool wide = t % 2;
        for (size_t i = 0; i < n; i++)
            ca[i] = wide ? 0x100 + (uint32_t)(check_random() % 3000) : pool[check_random() % 8];
        for (size_t j = 0; j < m; j++)
            cb[j] = wide ? 0x100 + (uint32_t)(check_random() % 3000) : pool[check_random() % 8];
        size_t la = encode(ca, n, ea), lb = encode(cb, m, eb);
        size_t want = wb_ref_distance(ca, n, cb, m);
        size_t got = wb_lev_distance(ea, la, eb, lb, true, WB_LEV_NO_LIMIT, NULL);
        CHECK(got == want, "codepoints %zu x %zu: got %zu want %zu", n, m, got, want);
        got = stepped(ea, la, eb, lb, true, want / 2, 1);
        CHECK(got == capped(want, want / 2), "codepoints k: got %zu want %zu", got,
              capped(want, want / 2));
    }
    /* invalid UTF-8: truncated, overlong, surrogate, above U+10FFFF, stray continuation */
    const char *bad[] = {"\xC3", "\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\x80", "ab\xFF"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        wb_lev_status st;
        wb_lev_distance((const uint8_t *)bad[i], strlen(bad[i]), (const uint8_t *)"x", 1, true,
                        WB_LEV_NO_LIMIT, &st);
        CHECK(st == WB_LEV_EUTF8_A, "invalid utf8 #%zu in a", i);
        wb_lev_distance((const uint8_t *)"x", 1, (const uint8_t *)bad[i], strlen(bad[i]), true,
                        WB_LEV_NO_LIMIT, &st);
        CHECK(st == WB_LEV_EUTF8_B, "invalid utf8 #%zu in b", i);
        /* found by a step of the set-up, one unit at a time */
        uint64_t most;
        size_t steps;
        CHECK(stepped_counting((const uint8_t *)bad[i], strlen(bad[i]), (const uint8_t *)"x", 1,
                               true, WB_LEV_NO_LIMIT, 1, &st, &most, &steps) == SIZE_MAX &&
                  st == WB_LEV_EUTF8_A,
              "invalid utf8 #%zu in a, stepped", i);
        CHECK(stepped_counting((const uint8_t *)"xyz", 3, (const uint8_t *)bad[i], strlen(bad[i]),
                               true, WB_LEV_NO_LIMIT, 1, &st, &most, &steps) == SIZE_MAX &&
                  st == WB_LEV_EUTF8_B,
              "invalid utf8 #%zu in b, stepped", i);
    }
    /* "é" is one codepoint but two bytes */
    CHECK(wb_lev_distance((const uint8_t *)"\xC3\xA9", 2, (const uint8_t *)"e", 1, true,
                          WB_LEV_NO_LIMIT, NULL) == 1,
          "e-acute vs e in codepoints");
    CHECK(wb_lev_distance((const uint8_t *)"\xC3\xA9", 2, (const uint8_t *)"e", 1, false,
                          WB_LEV_NO_LIMIT, NULL) == 2,
          "e-acute vs e in bytes");
}

/* Large inputs: the set-up (decoding, affixes, tables) is done in steps
 * that keep to their budget, like the columns. */
static void test_set_up_in_steps(void) {
    const size_t big = 300000;
    uint8_t *text = malloc(2 * big), *pattern = malloc(big + 1);
    CHECK(text && pattern, "allocation");
    for (size_t i = 0; i < big; i++) { /* "é" repeated: 2 bytes each */
        text[2 * i] = 0xC3;
        text[2 * i + 1] = 0xA9;
    }
    const uint64_t budget = 500;
    wb_lev_status st;
    uint64_t most;
    size_t steps;
    /* one codepoint against 300,000: one block, every step within budget */
    size_t d = stepped_counting((const uint8_t *)"a", 1, text, 2 * big, true, WB_LEV_NO_LIMIT,
                                budget, &st, &most, &steps);
    CHECK(st == WB_LEV_OK && d == big, "a vs e-acute x %zu: %zu", big, d);
    CHECK(most <= budget + 2, "codepoint set-up: a step took %" PRIu64 " units of %" PRIu64, most,
          budget);
    /* the decoding alone takes more steps than this, the columns more again */
    CHECK(steps > (wb_fz_decode_units(2 * big) + big) / budget, "codepoint set-up in %zu steps",
          steps);
    /* a long shared prefix: the affixes in steps */
    memcpy(pattern, text, big);
    pattern[big] = 'x';
    d = stepped_counting(pattern, big + 1, text, big + 2, false, 3, budget, &st, &most, &steps);
    CHECK(st == WB_LEV_OK && d == 2, "long shared prefix, bytes: %zu", d);
    CHECK(most <= budget + 16, "byte affixes: a step took %" PRIu64 " units", most);
    CHECK(steps > big / 4 / budget, "byte affixes in %zu steps", steps);
    d = stepped_counting(pattern, big + 1, text, big + 2, true, 3, budget, &st, &most, &steps);
    CHECK(st == WB_LEV_OK && d == 1, "long shared prefix, codepoints: %zu", d);
    CHECK(most <= budget + 16, "codepoint affixes: a step took %" PRIu64 " units", most);
    /* nothing shared at the ends: a match table of many blocks, narrow band */
    pattern[0] = 'y';
    pattern[big - 1] = 'z';
    d = stepped_counting(pattern, big, text, big, false, 3, budget, &st, &most, &steps);
    CHECK(st == WB_LEV_OK && d == 2, "two substitutions, bytes: %zu", d);
    CHECK(most <= budget + 16, "byte table: a step took %" PRIu64 " units", most);
    /* a pattern of distinct codepoints: a large symbol map */
    uint32_t *cps = malloc(60000 * sizeof *cps);
    uint8_t *wide = malloc(4 * 60000);
    for (size_t i = 0; i < 60000; i++)
        cps[i] = 0x10000 + (uint32_t)i; /* no surrogates */
    size_t wlen = encode(cps, 60000, wide);
    d = stepped_counting(wide, wlen, text, 2 * 60001, true, 5, budget, &st, &most, &steps);
    CHECK(st == WB_LEV_OK && d == 6, "distinct codepoints: %zu", d);
    CHECK(most <= budget + 16, "symbol map: a step took %" PRIu64 " units", most);
    /* abandoned half-way through the set-up: nothing leaks (ASan) */
    for (uint64_t b = 1; b < 4000000; b *= 7) {
        wb_lev s;
        uint64_t used = 0;
        wb_lev_start(&s, wide, wlen, text, 2 * big, true, WB_LEV_NO_LIMIT);
        CHECK(!wb_lev_step(&s, wide, text, b, &used), "budget %" PRIu64 " ended it", b);
        wb_lev_free(&s);
        CHECK(wb_lev_memory(&s) == 0, "abandoned set-up: memory %zu", wb_lev_memory(&s));
    }
    free(cps);
    free(wide);
    free(text);
    free(pattern);
}

/* Abandoned after any number of one-unit steps, from the first phase of
 * the set-up to the last column: nothing leaks (ASan) and the memory
 * accounted goes back to 0. Codepoints: a map and occurrence lists over
 * two blocks; bytes: a match table of five blocks. */
static void test_abandoned_anywhere(void) {
    uint32_t pattern_cps[100], text_cps[600];
    for (size_t i = 0; i < 100; i++)
        pattern_cps[i] = 0x10000 + (uint32_t)i;
    for (size_t j = 0; j < 600; j++)
        text_cps[j] = j % 3 ? 0xE9 : pattern_cps[(j * 7) % 100];
    uint8_t a[400], b[2400];
    size_t la = encode(pattern_cps, 100, a), lb = encode(text_cps, 600, b);
    uint8_t x[300], y[400];
    fill(x, sizeof x, 4);
    fill(y, sizeof y, 4);
    struct {
        const uint8_t *a, *b;
        size_t la, lb;
        bool cp;
    } cases[] = {{a, b, la, lb, true}, {x, y, sizeof x, sizeof y, false}};
    for (size_t c = 0; c < 2; c++) {
        uint64_t most;
        size_t total;
        wb_lev_status st;
        stepped_counting(cases[c].a, cases[c].la, cases[c].b, cases[c].lb, cases[c].cp,
                         WB_LEV_NO_LIMIT, 1, &st, &most, &total);
        CHECK(st == WB_LEV_OK && total > 100, "case %zu: %zu steps", c, total);
        for (size_t k = 0; k < total; k += 5) {
            wb_lev s;
            uint64_t used = 0;
            wb_lev_start(&s, cases[c].a, cases[c].la, cases[c].b, cases[c].lb, cases[c].cp,
                         WB_LEV_NO_LIMIT);
            for (size_t i = 0; i < k; i++)
                (void)wb_lev_step(&s, cases[c].a, cases[c].b, 1, &used);
            wb_lev_free(&s);
            CHECK(wb_lev_memory(&s) == 0, "case %zu abandoned after %zu steps: memory %zu", c, k,
                  wb_lev_memory(&s));
        }
    }
}

/* Common prefixes and suffixes that end inside a codepoint: both ends go
 * back to a codepoint boundary before anything is stripped. */
static void test_affixes_inside_codepoints(void) {
    const char *pairs[][2] = {
        {"abc\xC3\xA9", "abc\xC3\xA8"},             /* e-acute, e-grave: a shared lead byte */
        {"\xC3\xA9xyz", "\xC5\xA9xyz"},             /* a shared last byte, different leads */
        {"\xC3\xA9", "\xC3\xA8\xC3\xA9"},           /* a suffix that the prefix limits */
        {"\xF0\x9F\x98\x80!", "\xF0\x9F\x98\x81!"}, /* four-byte codepoints */
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        const uint8_t *p = (const uint8_t *)pairs[i][0], *q = (const uint8_t *)pairs[i][1];
        size_t lp = strlen(pairs[i][0]), lq = strlen(pairs[i][1]);
        uint32_t up[16], uq[16];
        long np = wb_ref_decode_utf8(p, lp, up), nq = wb_ref_decode_utf8(q, lq, uq);
        size_t want = wb_ref_distance(up, (size_t)np, uq, (size_t)nq);
        CHECK(wb_lev_distance(p, lp, q, lq, true, WB_LEV_NO_LIMIT, NULL) == want,
              "pair %zu in codepoints", i);
        CHECK(stepped(p, lp, q, lq, true, WB_LEV_NO_LIMIT, 1) == want,
              "pair %zu in codepoints, stepped", i);
    }
}

int main(void) {
    test_mbleven();
    test_or_bytes();
    /* every way of computing the columns this CPU can run, forced in turn */
    for (int p = 0; p < WB_LEV_PATHS; p++) {
        if (!wb_lev_force_path((wb_lev_path)p)) {
            printf("path %s: not run (not in this build or not on this CPU)\n",
                   wb_lev_path_name((wb_lev_path)p));
            continue;
        }
        printf("path %s\n", wb_lev_path_name((wb_lev_path)p));
        test_fixed();
        test_boundaries();
        test_random();
        test_long_banded();
        test_inputs_move();
        test_codepoints();
        test_set_up_in_steps();
        test_abandoned_anywhere();
        test_affixes_inside_codepoints();
    }
    wb_lev_path chosen = wb_lev_choose_path();
    CHECK(wb_lev_path_supported(chosen) && wb_lev_current_path() == chosen,
          "the chosen path is one this CPU runs");
    return CHECK_SUMMARY();
}

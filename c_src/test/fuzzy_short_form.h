/*
 * The short form of kernels.h (included by test_fuzzy.c): wb_fz_lcs_short,
 * wb_fz_lev_short and wb_fz_osa_short on pairs whose shorter side has
 * 0..64 symbols (the sizes around one word; the LCS and OSA up to 128,
 * two words), bytes and codepoints with many symbols of 256 and up (up to 128
 * distinct ones: the thread's map at half full), with and without
 * cutoffs, one call after another on the same thread (a table left dirty
 * by one pattern gives the next a wrong answer). Each result must equal the reference's
 * (fuzzy_reference.h), and the units added must be the resumable
 * kernel's over one step with a budget that covers it. Also the decoding
 * of wb_fz_symbols and wb_fz_symbols_step on strings long enough for
 * their ASCII chunks, against reference.h's strict decoder.
 */
#ifndef WB_TEST_FUZZY_SHORT_FORM_H
#define WB_TEST_FUZZY_SHORT_FORM_H

#include "../metric/kernels.h"
#include "../text/utf8.h"

#include <string.h>

#include "check.h"
#include "fuzzy_reference.h"
#include "reference.h"

#define SF_CAP 240

/* A string of len symbols: bytes (a few letters, or any byte), or
 * codepoints drawn from `high` distinct ones of 256 and up (spaced so that
 * their hashes collide now and then) and a few ASCII letters. */
static void sf_string(uint32_t *s, size_t len, int mode, size_t high) {
    for (size_t i = 0; i < len; i++) {
        uint64_t r = check_random();
        switch (mode) {
        case 0:
            s[i] = (uint32_t)('a' + r % 4);
            break;
        case 1:
            s[i] = (uint32_t)(r % 256);
            break;
        default:
            s[i] = r % 4 == 0 ? (uint32_t)('a' + r % 3)
                              : (uint32_t)(256 + 128 * (r / 4 % (high ? high : 1)));
        }
    }
}

/* b: a with a few edits (so that the distances stay small), or fresh. */
static size_t sf_other(const uint32_t *a, size_t m, uint32_t *b, size_t n_fresh, int mode,
                       size_t high) {
    if (check_random() % 3 == 0) {
        sf_string(b, n_fresh, mode, high);
        return n_fresh;
    }
    memcpy(b, a, m * sizeof *a);
    size_t n = m, edits = check_random() % 6;
    for (size_t e = 0; e < edits && n > 1; e++) {
        size_t i = check_random() % (n - 1);
        uint32_t x = b[i];
        b[i] = b[i + 1];
        b[i + 1] = x;
        if (check_random() % 2) sf_string(b + check_random() % n, 1, mode, high);
    }
    if (check_random() % 2 && n < SF_CAP) sf_string(b + n++, 1, mode, high);
    return n;
}

static void sf_check_pair(const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t cutoff) {
    size_t lcs = fzr_lcs(a, m, b, n);
    uint64_t lev = fzr_levenshtein(a, m, b, n, 1, 1, 1);
    size_t osa = fzr_osa(a, m, b, n);
    uint64_t want_lev = cutoff != WB_FZ_NO_CUTOFF && lev > cutoff ? cutoff + 1 : lev;
    uint64_t want_osa = cutoff != WB_FZ_NO_CUTOFF && osa > cutoff ? cutoff + 1 : osa;

    /* the units of the resumable kernels in one step */
    uint64_t lcs_units = 0, lev_units = 0, osa_units = 0;
    wb_fz_lcs kl;
    wb_fz_lev kv;
    wb_fz_osa ko;
    CHECK(wb_fz_lcs_init(&kl, a, m, b, n), "lcs init %zu %zu", m, n);
    CHECK(wb_fz_lcs_step(&kl, UINT64_MAX / 4, &lcs_units), "lcs in one step %zu %zu", m, n);
    wb_fz_lcs_free(&kl);
    CHECK(wb_fz_lev_init(&kv, a, m, b, n, cutoff), "lev init %zu %zu", m, n);
    CHECK(wb_fz_lev_step(&kv, UINT64_MAX / 4, &lev_units), "lev in one step %zu %zu", m, n);
    wb_fz_lev_free(&kv);
    CHECK(wb_fz_osa_init(&ko, a, m, b, n, cutoff), "osa init %zu %zu", m, n);
    CHECK(wb_fz_osa_step(&ko, UINT64_MAX / 4, &osa_units), "osa in one step %zu %zu", m, n);
    wb_fz_osa_free(&ko);

    uint64_t used = 0;
    size_t got = wb_fz_lcs_short(a, m, b, n, &used);
    CHECK(got == lcs && used == lcs_units, "lcs short %zu x %zu: %zu (%llu units), want %zu (%llu)",
          m, n, got, (unsigned long long)used, lcs, (unsigned long long)lcs_units);
    used = 0;
    got = wb_fz_osa_short(a, m, b, n, cutoff, &used);
    CHECK(got == want_osa && used == osa_units,
          "osa short %zu x %zu cutoff %zu: %zu (%llu units), want %llu (%llu)", m, n, cutoff, got,
          (unsigned long long)used, (unsigned long long)want_osa, (unsigned long long)osa_units);
    if (m > WB_FZ_SHORT && n > WB_FZ_SHORT) return; /* the LCS's and OSA's two words only */
    used = 0;
    got = wb_fz_lev_short(a, m, b, n, cutoff, &used);
    CHECK(got == want_lev && used == lev_units,
          "lev short %zu x %zu cutoff %zu: %zu (%llu units), want %llu (%llu)", m, n, cutoff, got,
          (unsigned long long)used, (unsigned long long)want_lev, (unsigned long long)lev_units);
    CHECK(lcs_units <= wb_fz_lcs_units(m, n) && lev_units <= wb_fz_lev_units(m, n) &&
              osa_units <= wb_fz_osa_units(m, n),
          "short units within the bounds %zu x %zu: %llu %llu %llu", m, n,
          (unsigned long long)lcs_units, (unsigned long long)lev_units,
          (unsigned long long)osa_units);
}

static void test_short_form(size_t rounds) {
    static const size_t shorts[] = {0, 1, 2, 31, 62, 63, 64, 65, 100, 127, 128};
    static const size_t highs[] = {1, 7, 33, 64, 128};
    uint32_t a[SF_CAP], b[SF_CAP];
    for (size_t round = 0; round < rounds; round++) {
        int mode = (int)(check_random() % 3);
        size_t high = highs[check_random() % 5];
        size_t m = shorts[check_random() % 11];
        if (mode == 2 && high >= 64 && m >= 64) {
            /* m distinct symbols >= 256 once each: the map at half full */
            for (size_t i = 0; i < m; i++)
                a[i] = (uint32_t)(256 + 128 * ((i * 37) % m));
        } else {
            sf_string(a, m, mode, high);
        }
        size_t n = sf_other(a, m, b, m + check_random() % 80, mode, high);
        size_t cutoffs[] = {WB_FZ_NO_CUTOFF, 0, 1, 3, 10};
        size_t cutoff = cutoffs[check_random() % 5];
        /* either side the shorter */
        if (check_random() % 2)
            sf_check_pair(a, m, b, n, cutoff);
        else
            sf_check_pair(b, n, a, m, cutoff);
    }
}

/* Decoding long enough for whole ASCII chunks, with multibyte sequences
 * and invalid bytes between them; stepped at small budgets too. */
static void test_symbols_chunks(size_t rounds) {
    static const char *const pieces[] = {"abcdefgh", "ijklmnop",     " ",
                                         "\xC3\xA9", "\xE3\x80\x80", "\xF0\x9F\x98\x80",
                                         "\x80",     "\xC3",         "q"};
    uint8_t in[200];
    uint32_t got[200], ref[200];
    for (size_t round = 0; round < rounds; round++) {
        size_t len = 0, want_pieces = check_random() % 20;
        bool valid_only = check_random() % 2;
        for (size_t p = 0; p < want_pieces; p++) {
            const char *x = pieces[check_random() % (valid_only ? 6 : 9)];
            size_t l = strlen(x);
            if (len + l > sizeof in) break;
            memcpy(in + len, x, l);
            len += l;
        }
        long r = wb_ref_decode_utf8(in, len, ref);
        size_t g = wb_fz_symbols(in, len, true, got);
        CHECK((r < 0 && g == SIZE_MAX) ||
                  (r >= 0 && g == (size_t)r && memcmp(got, ref, g * sizeof *got) == 0),
              "chunked decode round %zu (%zu bytes): %zu, reference %ld", round, len, g, r);
        static const uint64_t budgets[] = {1, 2, 3, 5, UINT64_MAX / 4};
        uint64_t budget = budgets[check_random() % 5];
        bool cp = check_random() % 4 != 0;
        wb_fz_decoding d;
        memset(&d, 0, sizeof d);
        uint64_t used = 0;
        size_t steps = 0;
        while (!wb_fz_symbols_step(&d, in, len, cp, got, budget, &used))
            steps++;
        if (!cp) {
            bool same = d.count == len && !d.invalid;
            for (size_t i = 0; same && i < len; i++)
                same = got[i] == in[i];
            CHECK(same, "stepped bytes round %zu: %zu of %zu", round, d.count, len);
        } else {
            CHECK((r < 0 && d.invalid) || (r >= 0 && !d.invalid && d.count == (size_t)r &&
                                           memcmp(got, ref, d.count * sizeof *got) == 0),
                  "stepped decode round %zu (budget %llu, %zu bytes): %zu%s, reference %ld", round,
                  (unsigned long long)budget, len, d.count, d.invalid ? " invalid" : "", r);
        }
        CHECK(used <= wb_fz_decode_units(len) + steps,
              "decode units round %zu: %llu, bound %llu + %zu steps", round,
              (unsigned long long)used, (unsigned long long)wb_fz_decode_units(len), steps);
    }
}

#endif

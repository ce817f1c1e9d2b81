/*
 * Fuzz target: the Levenshtein core (c_src/levenshtein), in both units and
 * with cutoffs, stepped in small budgets, against a plain dynamic
 * programming reference with its own UTF-8 decoder.
 *
 * Input: a flags byte (bit 0: codepoints; bit 1: a cutoff), the cutoff, the
 * step budget, the split point, then the bytes of a and b.
 */
#include "../levenshtein/levenshtein.h"
#include "fuzz.h"

#include <string.h>

/* Strict UTF-8 (no overlong forms, surrogates or values past U+10FFFF):
 * the number of codepoints written to out, or -1 when invalid. */
static long decode_utf8(const uint8_t *s, size_t n, uint32_t *out) {
    size_t i = 0;
    long count = 0;
    while (i < n) {
        uint8_t c = s[i];
        uint32_t cp;
        size_t len;
        if (c < 0x80) {
            cp = c;
            len = 1;
        } else if (c >= 0xC2 && c <= 0xDF) {
            cp = c & 0x1F;
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            cp = c & 0x0F;
            len = 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            cp = c & 0x07;
            len = 4;
        } else
            return -1;
        if (i + len > n) return -1;
        for (size_t j = 1; j < len; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return -1;
            cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return -1;
        out[count++] = cp;
        i += len;
    }
    return count;
}

/* the textbook O(n m) table, one row at a time */
static size_t reference(const uint32_t *a, size_t n, const uint32_t *b, size_t m) {
    size_t *row = malloc((m + 1) * sizeof *row);
    WB_FUZZ_CHECK(row);
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[m];
    free(row);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    uint8_t flags = wb_fuzz_byte(&in);
    bool codepoints = flags & 1;
    size_t k = (flags & 2) ? wb_fuzz_byte(&in) : WB_LEV_NO_LIMIT;
    uint64_t budget = 1 + wb_fuzz_byte(&in) * (uint64_t)((flags & 4) ? 64 : 1);
    size_t split = in.size ? wb_fuzz_byte(&in) % (in.size + 1) : 0;
    if (split > in.size) split = in.size;
    const uint8_t *a = in.data, *b = in.data + split;
    size_t alen = split, blen = in.size - split;

    uint32_t *ua = malloc((alen + 1) * sizeof *ua), *ub = malloc((blen + 1) * sizeof *ub);
    WB_FUZZ_CHECK(ua && ub);
    long na, nb;
    if (codepoints) {
        na = decode_utf8(a, alen, ua);
        nb = decode_utf8(b, blen, ub);
    } else {
        for (size_t i = 0; i < alen; i++)
            ua[i] = a[i];
        for (size_t i = 0; i < blen; i++)
            ub[i] = b[i];
        na = (long)alen;
        nb = (long)blen;
    }

    (void)wb_lev_predict(a, alen, b, blen, k);
    wb_lev s;
    wb_lev_status st = wb_lev_init(&s, a, alen, b, blen, codepoints, k);
    if (na < 0) {
        WB_FUZZ_CHECK(st == WB_LEV_EUTF8_A);
    } else if (nb < 0) {
        WB_FUZZ_CHECK(st == WB_LEV_EUTF8_B);
    } else {
        WB_FUZZ_CHECK(st == WB_LEV_OK);
        /* every step does at least one text column: it ends */
        uint64_t used = 0;
        size_t steps = 0;
        while (!wb_lev_step(&s, a, b, budget, &used))
            WB_FUZZ_CHECK(++steps <= alen + blen + 1);
        size_t got = wb_lev_result(&s);
        wb_lev_free(&s);
        size_t want = reference(ua, (size_t)na, ub, (size_t)nb);
        if (k != WB_LEV_NO_LIMIT && want > k) want = k + 1;
        if (got != want) {
            fprintf(stderr, "distance %zu, reference %zu (k %zu, codepoints %d)\n", got, want, k,
                    codepoints);
            abort();
        }
        /* the one-shot entry agrees */
        WB_FUZZ_CHECK(wb_lev_distance(a, alen, b, blen, codepoints, k, NULL) == got);
    }
    free(ua);
    free(ub);
    return 0;
}

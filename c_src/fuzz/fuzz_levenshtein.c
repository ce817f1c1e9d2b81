/*
 * Fuzz target: the Levenshtein distance of texts
 * (c_src/metric/levenshtein_text.c), in both units and with cutoffs,
 * stepped in small budgets, against a plain dynamic
 * programming reference with its own UTF-8 decoder (c_src/test/reference.h).
 *
 * Input: a flags byte (bit 0: codepoints; bit 1: a cutoff; bit 2: larger
 * budgets; bit 3: the set-up in steps too; bits 4-5: the way long pairs'
 * columns are computed, wb_lev_path, forced when this CPU runs it, else
 * the scalar one), the cutoff, the step budget, the split point, then the
 * bytes of a and b. In byte mode also: the small-cutoff path for every
 * cutoff up to its most, and a as a pattern whose table is made once.
 */
#include "../metric/levenshtein_text.h"
#include "../test/reference.h"
#include "fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    uint8_t flags = wb_fuzz_byte(&in);
    bool codepoints = flags & 1;
    if (!wb_lev_force_path((wb_lev_path)((flags >> 4) & 3))) wb_lev_force_path(WB_LEV_PATH_SCALAR);
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
        na = wb_ref_decode_utf8(a, alen, ua);
        nb = wb_ref_decode_utf8(b, blen, ub);
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
    wb_lev_status st;
    /* every step makes progress: it ends */
    uint64_t used = 0;
    size_t steps = 0, most_steps = 64 * (alen + blen + 1);
    if (flags & 8) { /* the set-up in steps too */
        wb_lev_start(&s, a, alen, b, blen, codepoints, k);
        while (!wb_lev_step(&s, a, b, budget, &used))
            WB_FUZZ_CHECK(++steps <= most_steps);
        st = wb_lev_error(&s);
        if (st != WB_LEV_OK) wb_lev_free(&s);
    } else {
        st = wb_lev_init(&s, a, alen, b, blen, codepoints, k);
        if (st == WB_LEV_OK)
            while (!wb_lev_step(&s, a, b, budget, &used))
                WB_FUZZ_CHECK(++steps <= most_steps);
    }
    if (na < 0) {
        WB_FUZZ_CHECK(st == WB_LEV_EUTF8_A);
    } else if (nb < 0) {
        WB_FUZZ_CHECK(st == WB_LEV_EUTF8_B);
    } else {
        WB_FUZZ_CHECK(st == WB_LEV_OK);
        size_t got = wb_lev_result(&s);
        wb_lev_free(&s);
        size_t exact = wb_ref_distance(ua, (size_t)na, ub, (size_t)nb), want = exact;
        if (k != WB_LEV_NO_LIMIT && want > k) want = k + 1;
        if (got != want) {
            fprintf(stderr, "distance %zu, reference %zu (k %zu, codepoints %d)\n", got, want, k,
                    codepoints);
            abort();
        }
        /* the one-shot entry agrees */
        WB_FUZZ_CHECK(wb_lev_distance(a, alen, b, blen, codepoints, k, NULL) == got);
        if (!codepoints) {
            /* small cutoffs without a table */
            for (size_t small = 0; small <= WB_LEV_MBLEVEN_MOST; small++)
                WB_FUZZ_CHECK(wb_lev_mbleven(a, alen, b, blen, small) ==
                              (exact > small ? small + 1 : exact));
            /* a as a pattern made once, b the text, in the same steps */
            wb_lev_pattern p;
            if (wb_lev_pattern_init(&p, a, alen)) {
                wb_lev_start_with(&s, &p, blen, k);
                steps = 0;
                while (!wb_lev_step(&s, a, b, budget, &used))
                    WB_FUZZ_CHECK(++steps <= most_steps);
                WB_FUZZ_CHECK(wb_lev_error(&s) == WB_LEV_OK && wb_lev_result(&s) == want);
                wb_lev_free(&s);
                wb_lev_pattern_free(&p);
            }
        }
    }
    free(ua);
    free(ub);
    return 0;
}

/*
 * Fuzz target: the edit scripts (c_src/metric/editops.h) of Levenshtein,
 * Indel and OSA, in both units, stepped in small budgets, the kept
 * matrix's bound at a byte or the core's own, against the textbook
 * matrix and traceback (c_src/test/editops_reference.h): the distance,
 * a script that rebuilds b from a, and the textbook's very records
 * where the core kept one matrix or split every half.
 *
 * Input: a flags byte (bits 0-1: the metric, 3 read as Levenshtein;
 * bit 2: codepoints, an input that is not UTF-8 then skipped; bit 3:
 * every half of two columns and more split; bit 4: larger budgets), the
 * step budget, the split point, then the bytes of a and b.
 */
#include "../metric/editops.h"
#include "../test/editops_reference.h"
#include "../text/utf8.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    uint8_t flags = wb_fuzz_byte(&in);
    wb_eo_metric metric = (wb_eo_metric)(flags & 3);
    if (metric >= WB_EO_METRICS) metric = WB_EO_LEVENSHTEIN;
    bool codepoints = flags & 4, split = flags & 8;
    uint64_t budget = 1 + wb_fuzz_byte(&in) * (uint64_t)((flags & 16) ? 64 : 1);
    size_t at = in.size ? wb_fuzz_byte(&in) * in.size / 256 : 0;
    size_t alen = at, blen = in.size - at;
    uint32_t *a = malloc((alen + 1) * sizeof *a), *b = malloc((blen + 1) * sizeof *b);
    WB_FUZZ_CHECK(a && b);
    size_t m = wb_fz_symbols(in.data, alen, codepoints, a);
    size_t n = wb_fz_symbols(in.data + at, blen, codepoints, b);
    if (m == SIZE_MAX || n == SIZE_MAX) {
        free(a);
        free(b);
        return 0;
    }

    wb_eo s;
    wb_eo_start(&s, metric, a, m, b, n);
    if (split) s.matrix_most = s.rf_matrix = 1;
    uint64_t used = 0, steps = 0;
    while (!wb_eo_step(&s, budget, &used))
        WB_FUZZ_CHECK(++steps <= wb_eo_units(metric, m, n) + 16);
    WB_FUZZ_CHECK(!s.failed && !s.broken);
    WB_FUZZ_CHECK(used <= wb_eo_units(metric, m, n));
    WB_FUZZ_CHECK(s.distance == ref_distance(metric, a, m, b, n));
    size_t types[4];
    char why[200];
    bool fits = ref_check(metric, s.out, s.width, s.distance, a, m, b, n, types, why, sizeof why);
    if (!fits) fprintf(stderr, "not a script: %s\n", why);
    WB_FUZZ_CHECK(fits);
    if (s.splits == 0 || split) {
        ref_record *r = malloc((m + n + 1) * sizeof *r);
        WB_FUZZ_CHECK(r);
        size_t count = s.splits == 0 ? ref_script(metric, a, m, b, n, r)
                                     : ref_split(metric, a, 0, m, b, 0, n, r, 0);
        WB_FUZZ_CHECK(count == s.distance);
        for (size_t k = 0; k < count; k++) {
            wb_eo_op op;
            size_t p, q;
            wb_eo_record(s.out, s.width, k, &op, &p, &q);
            WB_FUZZ_CHECK(op == r[k].op && p == r[k].src && q == r[k].dest);
        }
        free(r);
    }
    wb_eo_free(&s);
    free(a);
    free(b);
    return 0;
}

/*
 * The textbook edit scripts, for the tests of the edit script core
 * (c_src/metric/editops.h) and its fuzz target: the whole O(m n) matrix
 * of Levenshtein, Indel or OSA, traced back from the end by the rule the
 * core follows (a transposition when one is on a shortest path, else a
 * deletion, else an insertion when the cell to the left is lower than
 * the one up-left, else the diagonal); and a script's check: its records
 * in order, each fitting the two sides, the symbols between them equal,
 * the destination rebuilt from the source.
 */
#ifndef WB_TEST_EDITOPS_REFERENCE_H
#define WB_TEST_EDITOPS_REFERENCE_H

#include "../metric/editops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    wb_eo_op op;
    size_t src, dest;
} ref_record;

/* The matrix, (m + 1) x (n + 1) cells, row by row (malloc'd; NULL out
 * of memory). */
static size_t *ref_matrix(wb_eo_metric metric, const uint32_t *a, size_t m, const uint32_t *b,
                          size_t n) {
    size_t w = n + 1, *d = malloc((m + 1) * w * sizeof *d);
    if (!d) return NULL;
    for (size_t i = 0; i <= m; i++)
        for (size_t j = 0; j <= n; j++) {
            size_t v;
            if (i == 0 || j == 0) {
                v = i + j;
            } else {
                v = d[(i - 1) * w + j] + 1;
                if (d[i * w + j - 1] + 1 < v) v = d[i * w + j - 1] + 1;
                size_t diag = d[(i - 1) * w + j - 1];
                if (a[i - 1] == b[j - 1] && diag < v) v = diag;
                if (metric != WB_EO_INDEL && a[i - 1] != b[j - 1] && diag + 1 < v) v = diag + 1;
                if (metric == WB_EO_OSA && i >= 2 && j >= 2 && a[i - 1] == b[j - 2] &&
                    a[i - 2] == b[j - 1] && d[(i - 2) * w + j - 2] + 1 < v)
                    v = d[(i - 2) * w + j - 2] + 1;
            }
            d[i * w + j] = v;
        }
    return d;
}

/* The script by the rule, into out (room for m + n records), the common
 * prefix and suffix dropped first (as rapidfuzz drops them: they shift
 * where ties go); returns its length, or SIZE_MAX out of memory. */
static size_t ref_script(wb_eo_metric metric, const uint32_t *a, size_t m, const uint32_t *b,
                         size_t n, ref_record *out) {
    size_t pre = 0;
    while (pre < m && pre < n && a[pre] == b[pre])
        pre++;
    a += pre;
    b += pre;
    m -= pre;
    n -= pre;
    while (m > 0 && n > 0 && a[m - 1] == b[n - 1]) {
        m--;
        n--;
    }
    size_t *d = ref_matrix(metric, a, m, b, n), w = n + 1;
    if (!d) return SIZE_MAX;
    size_t i = m, j = n, k = d[m * w + n], count = k;
#define REF_D(x, y) d[(x)*w + (y)]
    while (i > 0 && j > 0) {
        size_t v = REF_D(i, j);
        if (metric == WB_EO_OSA && i >= 2 && j >= 2 && a[i - 1] == b[j - 2] &&
            a[i - 2] == b[j - 1] && a[i - 1] != b[j - 1] && REF_D(i - 2, j - 2) + 1 == v) {
            i -= 2;
            j -= 2;
            out[--k] = (ref_record){WB_EO_TRANSPOSE, i, j};
        } else if (REF_D(i - 1, j) + 1 == v) {
            i--;
            out[--k] = (ref_record){WB_EO_DELETE, i, j};
        } else if (REF_D(i, j - 1) < REF_D(i - 1, j - 1)) {
            j--;
            out[--k] = (ref_record){WB_EO_INSERT, i, j};
        } else {
            i--;
            j--;
            if (a[i] != b[j]) out[--k] = (ref_record){WB_EO_REPLACE, i, j};
        }
    }
    while (i > 0) {
        i--;
        out[--k] = (ref_record){WB_EO_DELETE, i, j};
    }
    while (j > 0) {
        j--;
        out[--k] = (ref_record){WB_EO_INSERT, i, j};
    }
#undef REF_D
    free(d);
    for (size_t r = 0; r < count; r++) {
        out[r].src += pre;
        out[r].dest += pre;
    }
    return k == 0 ? count : SIZE_MAX - 1;
}

/* The script the core gives when it splits every half of two columns
 * and more (its kept matrix's bound at a byte): the common affixes
 * dropped; a side empty, deletions or insertions; a destination of one
 * symbol, the textbook traceback; else the destination cut at its half
 * (rounded down) and the source at the first row of least sum of the
 * forward and backward matrices (OSA: over a transposition across the
 * middle only where that is less), each half the same way. Records from
 * out[at]; returns their count (SIZE_MAX out of memory). */
static size_t ref_split(wb_eo_metric metric, const uint32_t *a, size_t a0, size_t a1,
                        const uint32_t *b, size_t b0, size_t b1, ref_record *out, size_t at) {
    while (a0 < a1 && b0 < b1 && a[a0] == b[b0])
        a0++, b0++;
    while (a0 < a1 && b0 < b1 && a[a1 - 1] == b[b1 - 1])
        a1--, b1--;
    size_t mm = a1 - a0, nn = b1 - b0;
    if (mm == 0 || nn == 0) {
        for (size_t r = 0; r < mm + nn; r++)
            out[at + r] = mm ? (ref_record){WB_EO_DELETE, a0 + r, b0}
                             : (ref_record){WB_EO_INSERT, a0, b0 + r};
        return mm + nn;
    }
    if (nn == 1) {
        size_t count = ref_script(metric, a + a0, mm, b + b0, nn, out + at);
        for (size_t r = 0; r < count && count < SIZE_MAX - 1; r++) {
            out[at + r].src += a0;
            out[at + r].dest += b0;
        }
        return count;
    }
    size_t mid = nn / 2, cols = nn - mid;
    uint32_t *ra = malloc((mm + cols + 1) * sizeof *ra), *rb = ra ? ra + mm : NULL;
    if (!ra) return SIZE_MAX;
    for (size_t x = 0; x < mm; x++)
        ra[x] = a[a1 - 1 - x];
    for (size_t x = 0; x < cols; x++)
        rb[x] = b[b1 - 1 - x];
    size_t *fl = ref_matrix(metric, a + a0, mm, b + b0, mid);
    size_t *fr = ref_matrix(metric, ra, mm, rb, cols);
    if (!fl || !fr) {
        free(fl);
        free(fr);
        free(ra);
        return SIZE_MAX;
    }
#define REF_L(i, j) fl[(i) * (mid + 1) + (j)]
#define REF_R(i, j) fr[(i) * (cols + 1) + (j)]
    size_t best = SIZE_MAX, row = 0, l = 0, r = 0;
    bool swap = false;
    for (size_t i = 0; i <= mm; i++)
        if (REF_L(i, mid) + REF_R(mm - i, cols) < best) {
            best = REF_L(i, mid) + REF_R(mm - i, cols);
            row = i;
            l = REF_L(i, mid);
            r = REF_R(mm - i, cols);
        }
    for (size_t i = 2; metric == WB_EO_OSA && i <= mm; i++) {
        const uint32_t *x = a + a0, *y = b + b0;
        if (x[i - 1] != y[mid - 1] || x[i - 2] != y[mid] || x[i - 1] == x[i - 2]) continue;
        size_t sum = REF_L(i - 2, mid - 1) + 1 + REF_R(mm - i, cols - 1);
        if (sum < best) {
            best = sum;
            row = i;
            l = REF_L(i - 2, mid - 1);
            r = REF_R(mm - i, cols - 1);
            swap = true;
        }
    }
#undef REF_L
#undef REF_R
    free(fl);
    free(fr);
    free(ra);
    size_t left, right;
    if (swap) {
        left = ref_split(metric, a, a0, a0 + row - 2, b, b0, b0 + mid - 1, out, at);
        out[at + l] = (ref_record){WB_EO_TRANSPOSE, a0 + row - 2, b0 + mid - 1};
        right = ref_split(metric, a, a0 + row, a1, b, b0 + mid + 1, b1, out, at + l + 1);
    } else {
        left = ref_split(metric, a, a0, a0 + row, b, b0, b0 + mid, out, at);
        right = ref_split(metric, a, a0 + row, a1, b, b0 + mid, b1, out, at + l);
    }
    if (left != l || right != r) return SIZE_MAX - 1;
    return l + r + swap;
}

/* The distance alone, in two rows (Levenshtein, Indel) or three (OSA). */
static size_t ref_distance(wb_eo_metric metric, const uint32_t *a, size_t m, const uint32_t *b,
                           size_t n) {
    size_t w = n + 1, *rows = malloc(3 * w * sizeof *rows);
    if (!rows) return SIZE_MAX;
    size_t *r2 = rows, *r1 = rows + w, *r0 = rows + 2 * w;
    for (size_t j = 0; j <= n; j++)
        r0[j] = j;
    for (size_t i = 1; i <= m; i++) {
        size_t *t = r2;
        r2 = r1;
        r1 = r0;
        r0 = t;
        r0[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t v = r1[j] + 1;
            if (r0[j - 1] + 1 < v) v = r0[j - 1] + 1;
            if (a[i - 1] == b[j - 1] && r1[j - 1] < v) v = r1[j - 1];
            if (metric != WB_EO_INDEL && a[i - 1] != b[j - 1] && r1[j - 1] + 1 < v)
                v = r1[j - 1] + 1;
            if (metric == WB_EO_OSA && i >= 2 && j >= 2 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && r2[j - 2] + 1 < v)
                v = r2[j - 2] + 1;
            r0[j] = v;
        }
    }
    size_t dist = r0[n];
    free(rows);
    return dist;
}

/* Whether the `count` records of `width` (core's form) are a script of a
 * into b: in order, each fitting, the symbols between equal, no edit
 * that changes nothing, no Indel replacement nor a transposition but for
 * OSA, b rebuilt from a. On failure, why in `why`. Counts each type in
 * types[4]. */
static bool ref_check(wb_eo_metric metric, const uint8_t *out, size_t width, size_t count,
                      const uint32_t *a, size_t m, const uint32_t *b, size_t n, size_t types[4],
                      char *why, size_t room) {
    uint32_t *built = malloc((n + 1) * sizeof *built);
    if (!built) abort();
    size_t s = 0, d = 0, at = 0;
    bool ok = true;
    memset(types, 0, 4 * sizeof *types);
#define REF_FAIL(...)                                                                              \
    do {                                                                                           \
        snprintf(why, room, __VA_ARGS__);                                                          \
        ok = false;                                                                                \
        goto done;                                                                                 \
    } while (0)
    for (size_t k = 0; k < count; k++) {
        wb_eo_op op;
        size_t p, q;
        wb_eo_record(out, width, k, &op, &p, &q);
        if ((unsigned)op > WB_EO_TRANSPOSE) REF_FAIL("record %zu: type %u", k, (unsigned)op);
        types[op]++;
        if (p < s || q < d || p - s != q - d || p > m || q > n)
            REF_FAIL("record %zu (%u, %zu, %zu) after (%zu, %zu)", k, (unsigned)op, p, q, s, d);
        for (; s < p; s++, d++) {
            if (a[s] != b[d]) REF_FAIL("record %zu: a[%zu] != b[%zu] between records", k, s, d);
            built[at++] = a[s];
        }
        switch (op) {
        case WB_EO_INSERT:
            if (q >= n) REF_FAIL("record %zu: insertion past b", k);
            built[at++] = b[d++];
            break;
        case WB_EO_DELETE:
            if (p >= m) REF_FAIL("record %zu: deletion past a", k);
            s++;
            break;
        case WB_EO_REPLACE:
            if (p >= m || q >= n || a[p] == b[q] || metric == WB_EO_INDEL)
                REF_FAIL("record %zu: a bad replacement", k);
            built[at++] = b[d++];
            s++;
            break;
        case WB_EO_TRANSPOSE:
            if (metric != WB_EO_OSA || p + 1 >= m || q + 1 >= n || a[p] != b[q + 1] ||
                a[p + 1] != b[q] || a[p] == a[p + 1])
                REF_FAIL("record %zu: a bad transposition", k);
            built[at++] = a[s + 1];
            built[at++] = a[s];
            s += 2;
            d += 2;
            break;
        }
    }
    if (m - s != n - d) REF_FAIL("the ends: %zu of a left, %zu of b", m - s, n - d);
    for (; s < m; s++, d++)
        built[at++] = a[s];
    if (at != n || memcmp(built, b, n * sizeof *b) != 0) REF_FAIL("b not rebuilt");
    if (types[WB_EO_INSERT] + m != types[WB_EO_DELETE] + n) REF_FAIL("insertions - deletions");
done:
#undef REF_FAIL
    free(built);
    return ok;
}

#endif

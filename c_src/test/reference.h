/*
 * Plain references for the Levenshtein core, shared by its unit tests, the
 * external server's tests and the fuzz target: the textbook two-row dynamic
 * program over units, and a strict UTF-8 decoder written apart from the
 * core's.
 */
#ifndef WB_TEST_REFERENCE_H
#define WB_TEST_REFERENCE_H

#include <stdint.h>
#include <stdlib.h>

/* the edit distance between unit sequences a[0..n) and b[0..m) */
static inline size_t wb_ref_distance(const uint32_t *a, size_t n, const uint32_t *b, size_t m) {
    size_t *prev = malloc((m + 1) * sizeof *prev), *cur = malloc((m + 1) * sizeof *cur);
    if (!prev || !cur) abort();
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best) best = prev[j] + 1;
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
            cur[j] = best;
        }
        size_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[m];
    free(prev);
    free(cur);
    return d;
}

/* the same over bytes */
static inline size_t wb_ref_distance_bytes(const uint8_t *a, size_t n, const uint8_t *b, size_t m) {
    uint32_t *ua = malloc((n + 1) * sizeof *ua), *ub = malloc((m + 1) * sizeof *ub);
    if (!ua || !ub) abort();
    for (size_t i = 0; i < n; i++)
        ua[i] = a[i];
    for (size_t j = 0; j < m; j++)
        ub[j] = b[j];
    size_t d = wb_ref_distance(ua, n, ub, m);
    free(ua);
    free(ub);
    return d;
}

/* Strict UTF-8 (no overlong forms, surrogates or values past U+10FFFF):
 * the number of codepoints written to out (room for n), or -1 if invalid. */
static inline long wb_ref_decode_utf8(const uint8_t *s, size_t n, uint32_t *out) {
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

#endif

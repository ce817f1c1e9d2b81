/*
 * Unit test of the edit script core (c_src/metric/editops.h), built with
 * AddressSanitizer and UBSan: Levenshtein, Indel and OSA scripts of
 * random pairs (bytes, and codepoints above 255: the pattern's map), of
 * near copies and of pairs sharing long affixes, against the textbook
 * matrix and traceback (editops_reference.h): as many records as the
 * distance, each type counted consistently, the destination rebuilt from
 * the source, and the very records of the textbook traceback where the
 * core kept one matrix (rapidfuzz's choice among the shortest scripts).
 * The same with the kept matrix's bound lowered, so that small pairs are
 * split (Hirschberg) down to single columns; long pairs past the real
 * bounds (split, probed for a narrow band); budgets of 1, 3, 17 and
 * more, each step within its budget (WB_EO_STEP_OVER), the whole within
 * wb_eo_units; scripts given up part way, freed whole; and every
 * allocation failing in turn (fail_alloc.h).
 */
#include "../metric/editops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "editops_reference.h"
#include "fail_alloc.h"

static const char *const metric_names[] = {"levenshtein", "indel", "osa"};

/* failures print their case up to this many; later ones are counted */
#define DETAILED 30
#define EO_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (failures < DETAILED) {                                                                 \
            CHECK(cond, __VA_ARGS__);                                                              \
        } else {                                                                                   \
            checks++;                                                                              \
            if (!(cond)) failures++;                                                               \
        }                                                                                          \
    } while (0)

typedef struct {
    size_t matrix_most, rf_matrix; /* 0: the core's own */
    uint64_t budget;
} how;

static char why[256];
/* the scripts compared record by record, and the splits seen */
static size_t compared, split_count;

/* The script of a into b the core gives, stepped at h.budget, checked
 * against the reference (`want`: its distance, or SIZE_MAX to compute
 * it; the textbook records compared when the pair is small enough for
 * its matrix and the core split nothing). */
static void check_pair(wb_eo_metric metric, const uint32_t *a, size_t m, const uint32_t *b,
                       size_t n, how h, size_t want, const char *what) {
    wb_eo s;
    wb_eo_start(&s, metric, a, m, b, n);
    if (h.matrix_most) s.matrix_most = h.matrix_most;
    if (h.rf_matrix) s.rf_matrix = h.rf_matrix;
    uint64_t used = 0, steps = 0;
    bool over = false;
    for (;;) {
        uint64_t before = used;
        bool done = wb_eo_step(&s, h.budget, &used);
        steps++;
        over = over || used - before > h.budget + WB_EO_STEP_OVER || used == before;
        if (done) break;
    }
    const char *name = metric_names[metric];
    EO_CHECK(!over, "%s %s (%zu, %zu) budget %llu: a step past its budget", name, what, m, n,
             (unsigned long long)h.budget);
    EO_CHECK(used <= wb_eo_units(metric, m, n), "%s %s (%zu, %zu): %llu units, bound %llu", name,
             what, m, n, (unsigned long long)used, (unsigned long long)wb_eo_units(metric, m, n));
    EO_CHECK(!s.failed && !s.broken, "%s %s: failed", name, what);
    split_count += s.splits;
    if (s.failed || s.broken) {
        wb_eo_free(&s);
        return;
    }
    if (want == SIZE_MAX) want = ref_distance(metric, a, m, b, n);
    EO_CHECK(s.distance == want, "%s %s (%zu, %zu) budget %llu: distance %zu, want %zu", name, what,
             m, n, (unsigned long long)h.budget, s.distance, want);
    size_t types[4];
    EO_CHECK(ref_check(metric, s.out, s.width, s.distance, a, m, b, n, types, why, sizeof why),
             "%s %s (%zu, %zu) budget %llu splits %zu: %s", name, what, m, n,
             (unsigned long long)h.budget, s.splits, why);
    /* the textbook's records: of one matrix where the core kept one, of
     * the splits where it split every half (its bounds at a byte) */
    bool whole = s.splits == 0 && (m + 1) * (n + 1) <= (size_t)4 << 20;
    bool split = h.matrix_most == 1 && h.rf_matrix == 1 && m * n <= 200000;
    if (whole || split) {
        ref_record *r = malloc((m + n + 1) * sizeof *r);
        if (!r) abort();
        size_t count =
            whole ? ref_script(metric, a, m, b, n, r) : ref_split(metric, a, 0, m, b, 0, n, r, 0);
        bool same = count == s.distance;
        snprintf(why, sizeof why, "%zu records, want %zu", s.distance, count);
        for (size_t k = 0; same && k < count; k++) {
            wb_eo_op op;
            size_t p, q;
            wb_eo_record(s.out, s.width, k, &op, &p, &q);
            same = op == r[k].op && p == r[k].src && q == r[k].dest;
            if (!same)
                snprintf(why, sizeof why, "record %zu: (%u, %zu, %zu), want (%u, %zu, %zu)", k,
                         (unsigned)op, p, q, (unsigned)r[k].op, r[k].src, r[k].dest);
        }
        EO_CHECK(same, "%s %s (%zu, %zu) %s: not the textbook script: %s", name, what, m, n,
                 whole ? "kept" : "split", why);
        free(r);
        compared++;
    }
    size_t bytes;
    uint8_t *out = wb_eo_take(&s, &bytes);
    EO_CHECK(bytes == s.distance * (1 + 2 * s.width), "%s: the script's bytes", name);
    free(out);
    wb_eo_free(&s);
}

/* ---- inputs -------------------------------------------------------------------- */

/* symbol x of an alphabet: small letters, or codepoints, some above 255 */
static uint32_t symbol(uint32_t x, bool wide) {
    return wide ? (x % 2 ? 0x1F600 + x : 0xE0 + x) : 'a' + x;
}

static void random_string(uint32_t *s, size_t len, uint32_t alphabet, bool wide) {
    for (size_t i = 0; i < len; i++)
        s[i] = symbol((uint32_t)(check_random() % alphabet), wide);
}

/* b: a near copy of a (len m) with about `edits` edits of every kind */
static size_t near_copy(const uint32_t *a, size_t m, uint32_t *b, size_t room, size_t edits,
                        uint32_t alphabet, bool wide) {
    memcpy(b, a, m * sizeof *a);
    size_t n = m;
    for (size_t e = 0; e < edits; e++) {
        size_t i = n ? (size_t)(check_random() % n) : 0;
        switch (check_random() % 4) {
        case 0:
            if (n < room) {
                memmove(b + i + 1, b + i, (n - i) * sizeof *b);
                b[i] = symbol((uint32_t)(check_random() % alphabet), wide);
                n++;
            }
            break;
        case 1:
            if (n > 0) {
                memmove(b + i, b + i + 1, (n - i - 1) * sizeof *b);
                n--;
            }
            break;
        case 2:
            if (n > 0) b[i] = symbol((uint32_t)(check_random() % alphabet), wide);
            break;
        default:
            if (i + 1 < n) {
                uint32_t t = b[i];
                b[i] = b[i + 1];
                b[i + 1] = t;
            }
        }
    }
    return n;
}

#define ROOM 4096

static uint32_t sa[ROOM], sb[ROOM];

/* random pairs of up to `most` symbols, every metric, at each way */
static void random_pairs(size_t count, size_t most, const how *ways, size_t nways) {
    for (size_t c = 0; c < count; c++) {
        uint32_t alphabet = (uint32_t)(2 + check_random() % 5);
        if (c % 7 == 0) alphabet = 26;
        bool wide = c % 3 == 1;
        size_t m = (size_t)(check_random() % (most + 1)), n;
        random_string(sa, m, alphabet, wide);
        if (c % 2) {
            n = near_copy(sa, m, sb, ROOM, 1 + (size_t)(check_random() % (m / 4 + 2)), alphabet,
                          wide);
        } else {
            n = (size_t)(check_random() % (most + 1));
            random_string(sb, n, alphabet, wide);
        }
        for (wb_eo_metric metric = 0; metric < WB_EO_METRICS; metric++)
            for (size_t w = 0; w < nways; w++)
                check_pair(metric, sa, m, sb, n, ways[w], SIZE_MAX, "random");
    }
}

/* known scripts, written out */
static void known(void) {
    struct {
        wb_eo_metric metric;
        const char *a, *b;
        const char *want; /* records as "TSD " (type letter, src, dest) */
    } cases[] = {
        {WB_EO_LEVENSHTEIN, "kitten", "sitting", "r00 r44 i66 "},
        {WB_EO_LEVENSHTEIN, "", "ab", "i00 i01 "},
        {WB_EO_LEVENSHTEIN, "ab", "", "d00 d10 "},
        {WB_EO_LEVENSHTEIN, "abc", "abc", ""},
        {WB_EO_INDEL, "kitten", "sitting", "i00 d01 i44 d45 i66 "},
        {WB_EO_OSA, "ab", "ba", "t00 "},
        {WB_EO_OSA, "xaby", "xbay", "t11 "},
        {WB_EO_LEVENSHTEIN, "ab", "ba", "i00 d12 "},
    };
    const char letters[] = "idrt";
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t m = strlen(cases[c].a), n = strlen(cases[c].b);
        for (size_t i = 0; i < m; i++)
            sa[i] = (uint8_t)cases[c].a[i];
        for (size_t i = 0; i < n; i++)
            sb[i] = (uint8_t)cases[c].b[i];
        wb_eo s;
        wb_eo_start(&s, cases[c].metric, sa, m, sb, n);
        uint64_t used = 0;
        while (!wb_eo_step(&s, 5, &used)) {
        }
        char got[128] = "";
        for (size_t k = 0; k < s.distance && strlen(got) + 8 < sizeof got; k++) {
            wb_eo_op op;
            size_t p, q;
            wb_eo_record(s.out, s.width, k, &op, &p, &q);
            size_t at = strlen(got);
            snprintf(got + at, sizeof got - at, "%c%zu%zu ", letters[op], p, q);
        }
        CHECK(strcmp(got, cases[c].want) == 0, "%s \"%s\" -> \"%s\": \"%s\", want \"%s\"",
              metric_names[cases[c].metric], cases[c].a, cases[c].b, got, cases[c].want);
        wb_eo_free(&s);
    }
}

/* long pairs: split by the real bounds, a near copy probed for its band */
static void long_pairs(void) {
    static uint32_t la[12000], lb[12100];
    how ways[] = {{0, 0, UINT64_MAX / 4}, {0, 0, 1000}};
    /* random 2,500 x 2,500: rapidfuzz's bound splits Levenshtein and OSA */
    random_string(la, 2500, 4, false);
    random_string(lb, 2500, 4, false);
    for (wb_eo_metric metric = 0; metric < WB_EO_METRICS; metric++)
        check_pair(metric, la, 2500, lb, 2500, ways[1], SIZE_MAX, "long random");
    /* a near copy of 12,000 (past 2^22 cells: probed), codepoints */
    random_string(la, 12000, 20, true);
    size_t n = near_copy(la, 12000, lb, 12100, 40, 20, true);
    for (wb_eo_metric metric = 0; metric < WB_EO_METRICS; metric++)
        for (size_t w = 0; w < 2; w++)
            check_pair(metric, la, 12000, lb, n, ways[w], SIZE_MAX, "long near");
    /* Indel past its own bound (random 11,000 x 6,000: 8.3 MB of S) */
    random_string(la, 11000, 3, false);
    random_string(lb, 6000, 3, false);
    check_pair(WB_EO_INDEL, la, 11000, lb, 6000, ways[0], SIZE_MAX, "long indel");
    /* a source of one word against a long destination, and the reverse */
    random_string(la, 60, 3, false);
    random_string(lb, 12000, 3, false);
    for (wb_eo_metric metric = 0; metric < WB_EO_METRICS; metric++) {
        check_pair(metric, la, 60, lb, 12000, ways[0], SIZE_MAX, "short source");
        check_pair(metric, lb, 12000, la, 8, ways[0], SIZE_MAX, "short destination");
    }
}

/* transpositions all along, split down to single columns (OSA's splits
 * over a transposition) */
static void swaps(void) {
    how ways[] = {{1, 1, 3}, {64, 1, 1}, {0, 0, 7}};
    for (size_t c = 0; c < 60; c++) {
        size_t m = 2 + (size_t)(check_random() % 120);
        random_string(sa, m, 2 + (uint32_t)(c % 3), c % 2 == 1);
        memcpy(sb, sa, m * sizeof *sa);
        for (size_t i = 0; i + 1 < m; i += 2 + (size_t)(check_random() % 3)) {
            uint32_t t = sb[i];
            sb[i] = sb[i + 1];
            sb[i + 1] = t;
        }
        for (size_t w = 0; w < 3; w++)
            check_pair(WB_EO_OSA, sa, m, sb, m, ways[w], SIZE_MAX, "swaps");
    }
}

/* scripts given up at every point of their work: freed with what they
 * hold (the leak sanitizer at exit) */
static void abandoned(void) {
    size_t runs = 0;
    for (wb_eo_metric metric = 0; metric < WB_EO_METRICS; metric++)
        for (int split = 0; split < 2; split++) {
            random_string(sa, 700, 5, metric == WB_EO_OSA);
            size_t n = near_copy(sa, 700, sb, ROOM, 60, 5, metric == WB_EO_OSA);
            uint64_t total = 0;
            wb_eo s;
            wb_eo_start(&s, metric, sa, 700, sb, n);
            while (!wb_eo_step(&s, 40, &total)) {
            }
            wb_eo_free(&s);
            for (uint64_t stop = 1; stop < total; stop += 1 + stop / 8, runs++) {
                uint64_t used = 0;
                wb_eo_start(&s, metric, sa, 700, sb, n);
                if (split) s.matrix_most = s.rf_matrix = 1;
                while (used < stop && !wb_eo_step(&s, 40, &used)) {
                }
                wb_eo_free(&s);
            }
        }
    CHECK(runs > 100, "only %zu scripts given up", runs);
}

/* every allocation failing in turn: failed, or the script with memory */
static void out_of_memory(void) {
    how split = {1, 1, 3};
    size_t paths = 0;
    for (wb_eo_metric metric = 0; metric < WB_EO_METRICS; metric++) {
        random_string(sa, 300, 4, true);
        size_t n = near_copy(sa, 300, sb, ROOM, 30, 4, true);
        for (int mode = 0; mode < 2; mode++) {
            for (long long k = 0; k < 100000; k++) {
                unsigned long long before = wb_fail_alloc_given();
                wb_fail_alloc_arm(k);
                wb_eo s;
                wb_eo_start(&s, metric, sa, 300, sb, n);
                if (mode) s.matrix_most = split.matrix_most, s.rf_matrix = split.rf_matrix;
                uint64_t used = 0;
                while (!wb_eo_step(&s, 50, &used)) {
                }
                bool failed = s.failed;
                size_t distance = s.distance;
                wb_eo_free(&s);
                wb_fail_alloc_arm(-1);
                bool given = wb_fail_alloc_given() != before;
                CHECK(given || !failed, "%s: failed with no allocation failing",
                      metric_names[metric]);
                if (!failed)
                    CHECK(distance == ref_distance(metric, sa, 300, sb, n), "%s: distance",
                          metric_names[metric]);
                paths++;
                if (!given) break;
            }
        }
    }
    printf("out of memory: %zu runs\n", paths);
}

int main(void) {
    known();
    how ways[] = {{0, 0, UINT64_MAX / 4}, {0, 0, 1}, {0, 0, 17}, {1, 1, 3}, {200, 1, 5}};
    random_pairs(400, 40, ways, 5);
    random_pairs(150, 300, ways, 5);
    swaps();
    long_pairs();
    abandoned();
    out_of_memory();
    printf("%zu scripts compared record by record, %zu splits\n", compared, split_count);
    return CHECK_SUMMARY();
}

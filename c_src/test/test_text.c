/*
 * Unit test of the text helpers of the fuzzy processors and grapheme
 * unit (c_src/text/fold.c, graphemes.c), built with AddressSanitizer and
 * UBSan by `make test-c`. Each step-wise walk is checked against the same
 * walk in one step, on random texts and every cut; the folds of known
 * words against their expected folds. The tables themselves are checked
 * against Elixir (String.graphemes/1, the Elixir fold) by
 * test/fuzzy_graphemes_test.exs and test/fuzzy_fold_test.exs.
 */
#include "../text/fold.h"
#include "../text/graphemes.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- graphemes ------------------------------------------------------------------ */

/* the verdict of scanning text in steps of `most` bytes */
static wb_graphemes_verdict scan_in_steps(const uint8_t *text, size_t len, size_t most,
                                          size_t *steps) {
    size_t from = 0, next = 0;
    *steps = 0;
    for (;;) {
        wb_graphemes_verdict v = wb_graphemes_scan(text, len, from, most, &next);
        ++*steps;
        if (v != WB_GRAPHEMES_MORE) return v;
        if (next <= from || next > len) return WB_GRAPHEMES_MORE; /* no progress: a failure */
        from = next;
    }
}

static wb_graphemes_verdict scan_text(const char *text, size_t most) {
    size_t steps;
    return scan_in_steps((const uint8_t *)text, strlen(text), most, &steps);
}

static void test_single_ranges(void) {
    /* in order, apart, within Unicode */
    for (size_t i = 0; i < wb_graphemes_single_range_count; i++) {
        uint32_t first = wb_graphemes_single_ranges[i][0], last = wb_graphemes_single_ranges[i][1];
        CHECK(first <= last && last <= 0x10FFFF, "range %zu", i);
        if (i > 0) CHECK(first > wb_graphemes_single_ranges[i - 1][1] + 1, "range %zu apart", i);
        CHECK(wb_graphemes_single(first) && wb_graphemes_single(last), "range %zu ends", i);
        if (i > 0) CHECK(!wb_graphemes_single(first - 1), "before range %zu", i);
        CHECK(!wb_graphemes_single(last + 1), "after range %zu", i);
    }
    /* marks, joiners, indicators, modifiers, jamo */
    const uint32_t joining[] = {0x0300, 0x036F,  0x0483,  0x200C, 0x200D, 0x20D0, 0x302A, 0x3099,
                                0xFE0F, 0x1F1E6, 0x1F3FB, 0x1100, 0x1161, 0x11A8, 0xE0020};
    for (size_t i = 0; i < sizeof joining / sizeof joining[0]; i++)
        CHECK(!wb_graphemes_single(joining[i]), "U+%04X joins", (unsigned)joining[i]);
    CHECK(wb_graphemes_single(0xAC00) && wb_graphemes_single(0x1F600), "a syllable, an emoji");
}

static void test_scan_examples(void) {
    for (size_t most = 4; most <= 64; most *= 2) {
        CHECK(scan_text("", most) == WB_GRAPHEMES_SINGLE, "empty");
        CHECK(scan_text("plain ascii text, long enough for several steps", most) ==
                  WB_GRAPHEMES_SINGLE,
              "ascii");
        CHECK(scan_text("a\rb\nc\n\r", most) == WB_GRAPHEMES_SINGLE, "CR and LF apart");
        CHECK(scan_text("a\r\nb", most) == WB_GRAPHEMES_CLUSTERS, "CR LF");
        CHECK(scan_text("\xc5\x81\xc4\x99picki \xe4\xb8\xad \xea\xb0\x80", most) ==
                  WB_GRAPHEMES_SINGLE,
              "Latin, CJK, a Hangul syllable");
        CHECK(scan_text("e\xcc\x81", most) == WB_GRAPHEMES_CLUSTERS, "a combining mark");
        CHECK(scan_text("\xf0\x9f\x87\xab\xf0\x9f\x87\xb7", most) == WB_GRAPHEMES_CLUSTERS,
              "a flag");
        CHECK(scan_text("ab\xff", most) == WB_GRAPHEMES_INVALID, "invalid");
        CHECK(scan_text("ab\xe4\xb8", most) == WB_GRAPHEMES_INVALID, "cut at the end");
        CHECK(scan_text("ab\xed\xa0\x80", most) == WB_GRAPHEMES_INVALID, "a surrogate");
        CHECK(scan_text("e\xcc\x81\xff", most) == WB_GRAPHEMES_CLUSTERS, "a cluster first");
        CHECK(scan_text("\xff\x65\xcc\x81", most) == WB_GRAPHEMES_INVALID, "invalid first");
    }
}

/* CR LF across every cut of the steps: the LF is read with its CR */
static void test_scan_crlf_cuts(void) {
    uint8_t text[40];
    for (size_t at = 0; at + 1 < sizeof text; at++) {
        memset(text, 'x', sizeof text);
        text[at] = '\r';
        text[at + 1] = '\n';
        for (size_t most = 4; most < 12; most++) {
            size_t steps;
            CHECK(scan_in_steps(text, sizeof text, most, &steps) == WB_GRAPHEMES_CLUSTERS,
                  "CR LF at %zu, steps of %zu", at, most);
        }
    }
}

/* random texts of pieces that are or are not single, scanned in steps of
 * every size, against one step over the whole */
static void test_scan_random(void) {
    static const char *const pieces[] = {"a",
                                         " ",
                                         "\r",
                                         "\n",
                                         "\xc3\xa9",
                                         "\xce\xb1",
                                         "\xe4\xb8\xad",
                                         "\xea\xb0\x80",
                                         "\xf0\x9f\x98\x80",
                                         "\xcc\x81",
                                         "\xf0\x9f\x87\xab",
                                         "\xff",
                                         "\xe1\x84\x80"};
    const size_t count = sizeof pieces / sizeof pieces[0];
    uint8_t text[128];
    check_seed(48);
    for (int round = 0; round < 4000; round++) {
        size_t len = 0;
        /* mostly single pieces: a rare joiner or invalid byte */
        while (len + 4 < sizeof text && check_random() % 24 != 0) {
            size_t pick = check_random() % 40 == 0 ? check_random() % count : check_random() % 9;
            size_t n = strlen(pieces[pick]);
            memcpy(text + len, pieces[pick], n);
            len += n;
        }
        size_t steps, next = 0;
        wb_graphemes_verdict whole = wb_graphemes_scan(text, len, 0, SIZE_MAX / 2, &next);
        CHECK(whole != WB_GRAPHEMES_MORE, "one step ends");
        for (size_t most = 4; most < 20; most++) {
            wb_graphemes_verdict v = scan_in_steps(text, len, most, &steps);
            CHECK(v == whole, "round %d, steps of %zu: %d, not %d", round, most, v, whole);
            /* a step reads at most most + 3 bytes */
            if (v == WB_GRAPHEMES_SINGLE) CHECK(steps >= len / (most + 3), "steps %zu", steps);
        }
    }
}

/* ---- fold ------------------------------------------------------------------------ */

/* the fold of text in steps of `most` bytes, trimmed; false when the
 * table lacks a codepoint */
static bool fold_in_steps(const uint8_t *text, size_t len, size_t most, uint8_t *out,
                          size_t *out_len) {
    size_t from = 0, written = 0;
    do {
        size_t next, bytes;
        if (!wb_fold_measure(text, len, from, most, &next, &bytes)) return false;
        if (next <= from && len > 0) return false;
        wb_fold_write(text, from, next, out + written);
        written += bytes;
        from = next;
    } while (from < len);
    size_t start, kept = wb_fold_trim(out, written, &start);
    memmove(out, out + start, kept);
    *out_len = kept;
    return true;
}

static void check_fold(const char *text, const char *expected) {
    uint8_t out[256];
    for (size_t most = 4; most <= 64; most += 12) {
        size_t len;
        bool ok = fold_in_steps((const uint8_t *)text, strlen(text), most, out, &len);
        CHECK(ok && len == strlen(expected) && memcmp(out, expected, len) == 0,
              "fold of \"%s\" (steps of %zu): \"%.*s\"", text, most, ok ? (int)len : 0, out);
    }
}

static void test_fold_examples(void) {
    check_fold("", "");
    check_fold("   ", "");
    check_fold("  Hello, World! ", "hello  world");
    check_fold("\xc5\x81\xc4\x99picki", "lepicki"); /* Łępicki */
    check_fold("Stra\xc3\x9f"
               "e",
               "strasse"); /* Straße */
    check_fold("\xc3\x86r\xc3\xb8sk\xc3\xb8"
               "bing",
               "aeroskobing");               /* Ærøskøbing */
    check_fold("e\xcc\x81t\xc3\xa9", "ete"); /* e + U+0301, é */
    check_fold("\xce\xa3\xce\x9f\xce\xa6\xce\x99\xce\x91",
               "\xcf\x83\xce\xbf\xcf\x86\xce\xb9\xce\xb1");
    check_fold("\xd0\x81\xd0\xbb\xd0\xba\xd0\xb0", "\xd0\xb5\xd0\xbb\xd0\xba\xd0\xb0"); /* Ёлка */
    check_fold("\xc2\xbd", "1 2");                                                      /* ½ */
}

static void test_fold_refusals(void) {
    const char *const refused[] = {"ab\xff",           "ab\xe4\xb8", "\xed\xa0\x80", "\xe4\xb8\xad",
                                   "\xf0\x9f\x98\x80", "a\xcd\xb8"}; /* U+0378: unassigned */
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        size_t next, bytes;
        const uint8_t *t = (const uint8_t *)refused[i];
        CHECK(!wb_fold_measure(t, strlen(refused[i]), 0, 64, &next, &bytes), "refused %zu", i);
    }
    size_t start;
    CHECK(wb_fold_trim((const uint8_t *)"    ", 4, &start) == 0, "all spaces");
    CHECK(wb_fold_trim((const uint8_t *)" a b ", 5, &start) == 3 && start == 1, "both ends");
}

/* random texts of covered codepoints: the fold in steps of every size
 * equals the fold in one step */
static void test_fold_random(void) {
    uint8_t text[160], whole[400], steps[400];
    check_seed(1948);
    for (int round = 0; round < 3000; round++) {
        size_t len = 0;
        while (len + 4 < sizeof text && check_random() % 30 != 0) {
            uint32_t c;
            switch (check_random() % 4) {
            case 0:
                c = 0x20 + (uint32_t)(check_random() % 0x5F);
                break;
            case 1:
                c = 0x80 + (uint32_t)(check_random() % (0x370 - 0x80));
                break;
            case 2:
                c = 0x400 + (uint32_t)(check_random() % 0x100);
                break;
            default:
                c = 0x1E00 + (uint32_t)(check_random() % 0x100);
                break;
            }
            if (c < 0x80) {
                text[len++] = (uint8_t)c;
            } else if (c < 0x800) {
                text[len++] = (uint8_t)(0xC0 | (c >> 6));
                text[len++] = (uint8_t)(0x80 | (c & 0x3F));
            } else {
                text[len++] = (uint8_t)(0xE0 | (c >> 12));
                text[len++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
                text[len++] = (uint8_t)(0x80 | (c & 0x3F));
            }
        }
        size_t whole_len, steps_len;
        bool ok = fold_in_steps(text, len, SIZE_MAX / 2, whole, &whole_len);
        CHECK(ok, "round %d: every codepoint is the table's", round);
        if (!ok) continue;
        for (size_t most = 4; most < 24; most += 3) {
            CHECK(fold_in_steps(text, len, most, steps, &steps_len) && steps_len == whole_len &&
                      memcmp(steps, whole, whole_len) == 0,
                  "round %d, steps of %zu", round, most);
        }
    }
}

int main(void) {
    test_single_ranges();
    test_scan_examples();
    test_scan_crlf_cuts();
    test_scan_random();
    test_fold_examples();
    test_fold_refusals();
    test_fold_random();
    return CHECK_SUMMARY();
}

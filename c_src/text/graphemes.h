/*
 * Whether text needs grapheme clusters at all: the fast path of
 * `unit: :grapheme` (lib/well_behaved/fuzzy/graphemes.ex). Text whose
 * every extended grapheme cluster is one codepoint scores in graphemes
 * exactly as in codepoints; only other text is split into clusters (in
 * Elixir, by String.graphemes/1).
 *
 * A cluster joins two codepoints only when one of them has a grapheme
 * break property other than Other, Control, CR, LF, LV or LVT (Extend,
 * ZWJ, SpacingMark, Prepend, Regional_Indicator, L, V, T: Unicode's
 * rules GB6 to GB13), or for CR followed by LF (GB3). So text made of
 * codepoints of those six properties alone, with no CR LF, is one
 * codepoint a cluster. wb_graphemes_single answers for the codepoints of
 * a fixed list of ranges (wb_graphemes_single_ranges: Latin, Greek,
 * Cyrillic, general punctuation and symbols, CJK, kana, Hangul
 * syllables, emoji), each checked against String.graphemes/1 by
 * test/fuzzy_graphemes_test.exs; any other codepoint sends the text to
 * the clusters (slower, never wrong). Pure C, no erl_nif.
 */
#ifndef WB_TEXT_GRAPHEMES_H
#define WB_TEXT_GRAPHEMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether codepoint c never joins another codepoint of the ranges into a
 * cluster (CR LF aside). */
bool wb_graphemes_single(uint32_t c);

/* The ranges wb_graphemes_single answers true for, [first, last] pairs
 * in order (for the tests). */
extern const uint32_t wb_graphemes_single_ranges[][2];
extern const size_t wb_graphemes_single_range_count;

typedef enum {
    WB_GRAPHEMES_MORE,     /* not done: go on from *next */
    WB_GRAPHEMES_SINGLE,   /* done: every cluster is one codepoint */
    WB_GRAPHEMES_CLUSTERS, /* some cluster may hold several codepoints (the rest unread) */
    WB_GRAPHEMES_INVALID   /* invalid UTF-8 before any such cluster */
} wb_graphemes_verdict;

/* Reads text[from..len) (from at a codepoint's first byte, as *next
 * leaves it), at most about `most` bytes (>= 4; a sequence is never
 * cut), and says what it found; *next is where to go on from
 * (WB_GRAPHEMES_MORE). A CR at the end of a step is read with the byte
 * after it. */
wb_graphemes_verdict wb_graphemes_scan(const uint8_t *text, size_t len, size_t from, size_t most,
                                       size_t *next);

#ifdef __cplusplus
}
#endif

#endif

/* Text that needs no grapheme clusters (graphemes.h). */
#include "graphemes.h"

#include "utf8.h"

/* Codepoints whose grapheme break property is Other, Control, CR, LF, LV
 * or LVT, by blocks, the few marks, joiners, regional indicators and
 * emoji modifiers of those blocks left out. Blocks of long-standing
 * scripts and symbols only: a codepoint unassigned today could become a
 * mark tomorrow. */
const uint32_t wb_graphemes_single_ranges[][2] = {
    {0x0000, 0x02FF},   /* ASCII, Latin-1, Latin Extended-A/B, IPA, modifier letters */
    {0x0370, 0x0482},   /* Greek, Cyrillic */
    {0x048A, 0x052F},   /* Cyrillic (after its combining marks), Cyrillic Supplement */
    {0x1E00, 0x200B},   /* Latin Extended Additional, Greek Extended, spaces */
    {0x200E, 0x20CF},   /* punctuation, super- and subscripts, currency (no ZWNJ, ZWJ) */
    {0x2100, 0x2BFF},   /* letterlike, arrows, mathematics, technical, shapes, dingbats */
    {0x2C60, 0x2C7F},   /* Latin Extended-C */
    {0x3000, 0x3029},   /* CJK symbols (before its tone marks) */
    {0x3030, 0x3098},   /* CJK symbols, Hiragana */
    {0x309B, 0x30FF},   /* Hiragana (after its sound marks), Katakana */
    {0x3400, 0x4DBF},   /* CJK Extension A */
    {0x4E00, 0x9FFF},   /* CJK Unified Ideographs */
    {0xA720, 0xA7FF},   /* Latin Extended-D */
    {0xAC00, 0xD7A3},   /* Hangul syllables (LV, LVT: they join only conjoining jamo) */
    {0xFF00, 0xFF9D},   /* fullwidth and halfwidth forms */
    {0xFFA0, 0xFFEF},   /* (after the halfwidth sound marks) */
    {0x1F000, 0x1F1E5}, /* game symbols, enclosed alphanumerics */
    {0x1F200, 0x1F3FA}, /* (after the regional indicators) pictographs */
    {0x1F400, 0x1FAFF}, /* (after the skin tones) emoji, symbols */
    {0x20000, 0x3134F}, /* CJK Extensions B to G, compatibility ideographs */
};

const size_t wb_graphemes_single_range_count =
    sizeof wb_graphemes_single_ranges / sizeof wb_graphemes_single_ranges[0];

bool wb_graphemes_single(uint32_t c) {
    if (c <= 0x02FF) return true;
    size_t lo = 1, hi = wb_graphemes_single_range_count;
    /* the first range whose last codepoint is c or after */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (wb_graphemes_single_ranges[mid][1] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < wb_graphemes_single_range_count && wb_graphemes_single_ranges[lo][0] <= c;
}

wb_graphemes_verdict wb_graphemes_scan(const uint8_t *text, size_t len, size_t from, size_t most,
                                       size_t *next) {
    size_t i = from, end = len - from > most ? from + most : len;
    while (i < end) {
        uint8_t b = text[i];
        if (b < 0x80) {
            /* CR LF is the one cluster of two ASCII codepoints */
            if (b == '\r' && i + 1 < len && text[i + 1] == '\n') return WB_GRAPHEMES_CLUSTERS;
            i++;
            continue;
        }
        uint32_t c;
        size_t n = wb_utf8_sequence(text + i, len - i, &c);
        if (n == 0) return WB_GRAPHEMES_INVALID;
        if (!wb_graphemes_single(c)) return WB_GRAPHEMES_CLUSTERS;
        i += n;
    }
    *next = i;
    return i == len ? WB_GRAPHEMES_SINGLE : WB_GRAPHEMES_MORE;
}

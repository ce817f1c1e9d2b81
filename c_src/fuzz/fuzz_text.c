/*
 * Fuzz target: the text walks of the fuzzy processors and grapheme unit
 * (c_src/text/fold.c, graphemes.c) in steps of every size, against a
 * plain walk of one codepoint at a time.
 *
 * Input: the step's bytes (4 + the first byte % 64), then the text.
 * The grapheme check in steps must give the verdict of the plain walk
 * (invalid UTF-8 before any cluster, CR LF or a codepoint outside the
 * single ranges: clusters, else single), and move on every step; the
 * fold in steps must refuse exactly the texts the plain walk finds
 * invalid or outside the table, and otherwise write, joined and trimmed,
 * the plain walk's bytes.
 */
#include "../text/fold.h"
#include "../text/fold_table.h"
#include "../text/graphemes.h"
#include "../text/utf8.h"
#include "fuzz.h"

/* the plain walk's verdict */
static wb_graphemes_verdict plain_verdict(const uint8_t *t, size_t len) {
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t n = wb_utf8_sequence(t + i, len - i, &c);
        if (n == 0) return WB_GRAPHEMES_INVALID;
        if (c == '\r' && i + 1 < len && t[i + 1] == '\n') return WB_GRAPHEMES_CLUSTERS;
        if (!wb_graphemes_single(c)) return WB_GRAPHEMES_CLUSTERS;
        i += n;
    }
    return WB_GRAPHEMES_SINGLE;
}

static void check_graphemes(const uint8_t *t, size_t len, size_t most) {
    wb_graphemes_verdict want = plain_verdict(t, len), got;
    size_t from = 0, next = 0;
    while ((got = wb_graphemes_scan(t, len, from, most, &next)) == WB_GRAPHEMES_MORE) {
        WB_FUZZ_CHECK(next > from && next <= len && next - from <= most + 3);
        from = next;
    }
    WB_FUZZ_CHECK(got == want);
}

/* the plain fold, untrimmed, into out (room for 2 * len); false when a
 * codepoint is invalid or not the table's */
static bool plain_fold(const uint8_t *t, size_t len, uint8_t *out, size_t *out_len) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t n = wb_utf8_sequence(t + i, len - i, &c), e;
        if (n == 0) return false;
        if (c < WB_FOLD_LOW_END)
            e = c;
        else if (c >= WB_FOLD_HIGH_FIRST && c < WB_FOLD_HIGH_END)
            e = WB_FOLD_LOW_END + (c - WB_FOLD_HIGH_FIRST);
        else
            return false;
        if (wb_fold_len[e] == WB_FOLD_NOT_HERE) return false;
        memcpy(out + o, wb_fold_pool + wb_fold_at[e], wb_fold_len[e]);
        o += wb_fold_len[e];
        i += n;
    }
    *out_len = o;
    return true;
}

static void check_fold(const uint8_t *t, size_t len, size_t most) {
    uint8_t *want = malloc(2 * len + 1), *got = malloc(2 * len + 1);
    WB_FUZZ_CHECK(want && got);
    size_t want_len = 0, from = 0, got_len = 0;
    bool plain = plain_fold(t, len, want, &want_len), ok = true;
    do {
        size_t next, bytes;
        if (!wb_fold_measure(t, len, from, most, &next, &bytes)) {
            ok = false;
            break;
        }
        WB_FUZZ_CHECK((next > from || len == 0) && next <= len && next - from <= most + 3);
        WB_FUZZ_CHECK(got_len + bytes <= 2 * len);
        wb_fold_write(t, from, next, got + got_len);
        got_len += bytes;
        from = next;
    } while (from < len);
    WB_FUZZ_CHECK(ok == plain);
    if (ok) {
        size_t ws, gs, wk = wb_fold_trim(want, want_len, &ws), gk = wb_fold_trim(got, got_len, &gs);
        WB_FUZZ_CHECK(wk == gk && memcmp(want + ws, got + gs, wk) == 0);
        WB_FUZZ_CHECK(gk == 0 || (got[gs] != ' ' && got[gs + gk - 1] != ' '));
    }
    free(want);
    free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    size_t most = 4 + data[0] % 64;
    check_graphemes(data + 1, size - 1, most);
    check_fold(data + 1, size - 1, most);
    return 0;
}

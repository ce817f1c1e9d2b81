/* Levenshtein on bytes without a resumable state (levenshtein_text.h):
 * pairs short enough to finish in one go under 2 us (one word of pattern
 * once the common affixes go, in registers, with a match table on the
 * stack), and small cutoffs by trying each order of spending the edits
 * (mbleven). Nothing here allocates. */
#include "levenshtein_text.h"

#include "levenshtein_word.h"

#include <string.h>

static size_t short_min(size_t x, size_t y) {
    return x < y ? x : y;
}

/* Common prefix length, and the lengths left once prefix and suffix go;
 * each scan stops after `limit` bytes. */
size_t wb_lev_strip_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          size_t limit, size_t *la, size_t *lb) {
    size_t pre = 0, shortest = short_min(alen, blen);
    size_t pre_end = short_min(shortest, limit);
    while (pre < pre_end && a[pre] == b[pre])
        pre++;
    size_t suf = 0, suf_end = short_min(shortest - pre, limit);
    while (suf < suf_end && a[alen - 1 - suf] == b[blen - 1 - suf])
        suf++;
    *la = alen - pre - suf;
    *lb = blen - pre - suf;
    return pre;
}

/* ---- small cutoffs: every way of spending k <= 3 edits ------------------------ *
 *
 * With a cutoff of at most 3 the distance is found without a table by
 * trying each order in which the k edits can be spent (the mbleven idea):
 * walk both inputs, equal bytes advance both sides, and at each difference
 * the model's next edit advances the longer side (a deletion), the shorter
 * (an insertion) or both (a substitution). A model's cost is its edits
 * spent plus whatever is left of either side when its edits run out. The
 * models are the sequences of k edits whose deletions minus insertions is
 * the length difference (shorter ones are their prefixes). Two bits per
 * edit, the first in the low bits: 1 delete, 2 insert, 3 substitute. */
#define MB_D         1u
#define MB_I         2u
#define MB_S         3u
#define MB2(x, y)    ((x) | (y) << 2)
#define MB3(x, y, z) ((x) | (y) << 2 | (z) << 4)

static const uint8_t mbleven_models[WB_LEV_MBLEVEN_MOST + 1][WB_LEV_MBLEVEN_MOST + 1][8] = {
    [1] = {[0] = {MB_S}, [1] = {MB_D}},
    [2] = {[0] = {MB2(MB_S, MB_S), MB2(MB_D, MB_I), MB2(MB_I, MB_D)},
           [1] = {MB2(MB_D, MB_S), MB2(MB_S, MB_D)},
           [2] = {MB2(MB_D, MB_D)}},
    [3] = {[0] = {MB3(MB_S, MB_S, MB_S), MB3(MB_S, MB_D, MB_I), MB3(MB_S, MB_I, MB_D),
                  MB3(MB_D, MB_S, MB_I), MB3(MB_D, MB_I, MB_S), MB3(MB_I, MB_S, MB_D),
                  MB3(MB_I, MB_D, MB_S)},
           [1] = {MB3(MB_D, MB_S, MB_S), MB3(MB_S, MB_D, MB_S), MB3(MB_S, MB_S, MB_D),
                  MB3(MB_D, MB_D, MB_I), MB3(MB_D, MB_I, MB_D), MB3(MB_I, MB_D, MB_D)},
           [2] = {MB3(MB_D, MB_D, MB_S), MB3(MB_D, MB_S, MB_D), MB3(MB_S, MB_D, MB_D)},
           [3] = {MB3(MB_D, MB_D, MB_D)}},
};

/* One model: `lo` the longer side, `sh` the shorter. */
static size_t mbleven_cost(const uint8_t *lo, size_t ln, const uint8_t *sh, size_t sn,
                           unsigned edits) {
    size_t i = 0, j = 0, cost = 0;
    while (i < ln && j < sn) {
        if (lo[i] == sh[j]) {
            i++, j++;
            continue;
        }
        if (!edits) break;
        cost++;
        i += edits & 1;
        j += edits >> 1 & 1;
        edits >>= 2;
    }
    return cost + (ln - i) + (sn - j);
}

/* The pair without its common affixes, the longer side first, k <= 3. */
static size_t mbleven_stripped(const uint8_t *lo, size_t ln, const uint8_t *sh, size_t sn,
                               size_t k) {
    size_t diff = ln - sn;
    if (diff > k) return k + 1;
    if (sn == 0) return diff; /* ln == diff <= k */
    if (k == 0) return 1;     /* something is left after the affixes */
    size_t best = k + 1;
    const uint8_t *models = mbleven_models[k][diff];
    for (size_t m = 0; m < sizeof mbleven_models[k][diff] && models[m]; m++) {
        size_t cost = mbleven_cost(lo, ln, sh, sn, models[m]);
        if (cost < best) best = cost;
    }
    return best;
}

size_t wb_lev_mbleven(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, size_t k) {
    if (k > WB_LEV_MBLEVEN_MOST) k = WB_LEV_MBLEVEN_MOST; /* misuse: still a lower cutoff */
    size_t la, lb;
    size_t pre = wb_lev_strip_bytes(a, alen, b, blen, SIZE_MAX, &la, &lb);
    return la >= lb ? mbleven_stripped(a + pre, la, b + pre, lb, k)
                    : mbleven_stripped(b + pre, lb, a + pre, la, k);
}

/* Byte mode, when what is left after the common affixes has a side of at
 * most one word: the whole computation at once, on the stack, without the
 * resumable state (a short pair's set-up is most of its time). */
static inline uint64_t one_word_bytes(const uint64_t *peq, const uint8_t *text, size_t columns,
                                      uint64_t *vp_io, uint64_t *vn_io, uint64_t score,
                                      uint64_t bottom) {
    uint64_t vp = *vp_io, vn = *vn_io;
    for (size_t j = 0; j < columns; j++)
        score += wb_lev_word_column(peq[text[j]], &vp, &vn, bottom);
    *vp_io = vp;
    *vn_io = vn;
    return score;
}

bool wb_lev_short_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, size_t k,
                        size_t *out) {
    size_t la, lb;
    size_t pre = wb_lev_strip_bytes(a, alen, b, blen, SIZE_MAX, &la, &lb);
    const uint8_t *p = a + pre, *t = b + pre;
    size_t m = la, n = lb;
    if (m > n) {
        p = b + pre, t = a + pre;
        m = lb, n = la;
    }
    if (m > 64) {
        if (k > WB_LEV_MBLEVEN_MOST) return false;
        *out = mbleven_stripped(t, n, p, m, k);
        return true;
    }
    k = short_min(k, n);
    if (m == 0 || n - m > k) {
        *out = n > k ? k + 1 : n;
        return true;
    }
    uint64_t peq[256];
    if (m + n < 128) {
        /* clear just the entries the inputs can read */
        for (size_t i = 0; i < m; i++)
            peq[p[i]] = 0;
        for (size_t j = 0; j < n; j++)
            peq[t[j]] = 0;
    } else {
        memset(peq, 0, sizeof peq);
    }
    for (size_t i = 0; i < m; i++)
        peq[p[i]] |= UINT64_C(1) << i;
    uint64_t vp = ~UINT64_C(0), vn = 0;
    uint64_t d = one_word_bytes(peq, t, n, &vp, &vn, m, UINT64_C(1) << (m - 1));
    *out = d > k ? k + 1 : (size_t)d;
    return true;
}

bool wb_lev_short(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, bool codepoints,
                  size_t max_distance, size_t *distance) {
    return alen <= WB_LEV_SHORT_BYTES && blen <= WB_LEV_SHORT_BYTES - alen &&
           (!codepoints || (wb_text_ascii(a, alen) && wb_text_ascii(b, blen))) &&
           wb_lev_short_bytes(a, alen, b, blen, max_distance, distance);
}

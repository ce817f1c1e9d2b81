/* The Levenshtein distance of two texts, resumable (levenshtein_text.h):
 * the set-up in parts, each a budget at a time, then the one Levenshtein
 * kernel (wb_fz_lev, levenshtein.c) on the symbols.
 *
 *   ASCII      codepoints: whether both sides are ASCII (valid UTF-8 of a
 *              codepoint a byte), which are then bytes
 *   ALLOC      the symbol buffer (4 bytes per input byte); bytes are not
 *              decoded (the pattern and the kernel read them as symbols)
 *   DECODE_A   a's bytes into symbols (codepoints validated)
 *   DECODE_B   b's (with a pattern made once: the text's only)
 *   PREFIX     the common prefix, then SUFFIX the common suffix
 *   COUNT      the pattern side's symbols of 256 and up (codepoints), to
 *              size its map
 *   PATTERN    the shorter side's pattern, allocated then filled
 *   COLUMNS    the kernel's columns
 */
#include "levenshtein_text.h"

#include "common.h"

#include <stdlib.h>
#include <string.h>

/* the pages a long pattern's tables are written by before its fill */
#define TOUCH_BYTES 4096
/* symbols compared (affixes) or looked at (COUNT) per unit */
#define SCAN_PER_UNIT 8
/* bytes compared per unit (affixes of bytes, as the byte core charged) */
#define BYTE_SCAN_PER_UNIT 4
/* wb_lev_predict drops prefix and suffix only for bigger problems, and
 * looks this many bytes into each end at most */
#define PREDICT_EXACT_FROM 4096
#define PREDICT_STRIP_MOST 4096

enum {
    PHASE_ASCII,
    PHASE_ALLOC,
    PHASE_DECODE_A,
    PHASE_DECODE_B,
    PHASE_PREFIX,
    PHASE_SUFFIX,
    PHASE_COUNT,
    PHASE_PATTERN,
    PHASE_COLUMNS,
};

/* ---- where symbol buffers come from --------------------------------------- */

static wb_lev_table_allocator table_allocator = WB_SIZED_ALLOCATOR_DEFAULT;

void wb_lev_set_table_allocator(const wb_lev_table_allocator *allocator) {
    table_allocator = *allocator;
}

/* ---- the parts ------------------------------------------------------------ */

static void release(wb_lev *s) {
    if (s->kernel_on) wb_fz_lev_free(&s->kernel);
    s->kernel_on = false;
    wb_fz_pattern_free(&s->pattern);
    if (s->symbols && s->symbols != s->inline_symbols)
        table_allocator.free(s->symbols, s->symbols_bytes);
    s->symbols = NULL;
    s->symbols_bytes = 0;
}

static void finish(wb_lev *s, size_t result) {
    s->result = result;
    s->done = true;
}

static void fail(wb_lev *s, wb_lev_status why) {
    release(s);
    s->failed = why;
    s->done = true;
}

/* Where the text's symbols go: after a's, or alone (a pattern made once). */
static uint32_t *text_symbols(const wb_lev *s) {
    return s->with ? s->symbols : s->symbols + s->alen;
}

/* Settles what the lengths alone settle (an empty side, a difference
 * above the cutoff); true when the result is known. */
static bool settle(wb_lev *s, size_t m, size_t n) {
    size_t longer = max_size(m, n), diff = longer - min_size(m, n);
    if (m == 0 || n == 0) {
        finish(s, cut(longer, s->k));
        return true;
    }
    if (above(diff, s->k)) {
        finish(s, s->k + 1);
        return true;
    }
    return false;
}

/* Bytes: the pattern's and the kernel's bytes from this step's a and b
 * (they may move between steps). */
static void point_at_bytes(wb_lev *s, const uint8_t *a, const uint8_t *b) {
    if (s->codepoints) return;
    if (s->with) {
        if (s->kernel_on) s->kernel.b8 = b;
        return;
    }
    s->pattern.s8 = (s->p_is_a ? a : b) + s->pre;
    if (s->kernel_on) s->kernel.b8 = (s->p_is_a ? b : a) + s->pre;
}

/* The kernel on the pattern in use and the text (its symbols, or NULL:
 * its bytes, point_at_bytes); false: out of memory. */
static bool start_kernel(wb_lev *s, const wb_fz_pattern *pattern, const uint32_t *t, size_t n) {
    /* no distance is above the longer length: a cutoff past it cuts nothing */
    size_t longer = max_size(pattern->m, n);
    size_t cutoff = s->k < longer ? s->k : WB_FZ_NO_CUTOFF;
    if (!wb_fz_lev_init_with(&s->kernel, pattern, t, n, cutoff)) return false;
    s->kernel_on = true;
    s->phase = PHASE_COLUMNS;
    return true;
}

/* The next pages of the pattern's table and map written (a zero where
 * they already hold zeros), as far as `left` pays for them: one at
 * least, charged `left` at most (as the fill charges its pages). */
static void touch_pages(wb_lev *s, uint64_t left, uint64_t *spent) {
    wb_fz_pattern *p = &s->pattern;
    size_t low = 256 * p->nblocks * sizeof(uint64_t);
    size_t map = p->capacity * sizeof(wb_fz_pattern_entry), total = low + map;
    size_t pages = (size_t)(left / WB_FZ_PATTERN_PAGE_UNITS);
    if (pages == 0) pages = 1;
    size_t at = s->touched;
    uint64_t charged = 0;
    for (; at < total && pages > 0; at += TOUCH_BYTES, pages--) {
        volatile unsigned char *byte =
            at < low ? (unsigned char *)p->low + at : (unsigned char *)p->map + (at - low);
        *byte = 0;
        charged += WB_FZ_PATTERN_PAGE_UNITS;
    }
    *spent += charged < left ? charged : left > 0 ? left : 1;
    s->touched = at;
    if (at >= total) s->touching = false;
}

/* After the affixes: the pattern is the shorter side. */
static void affixes_done(wb_lev *s) {
    size_t m = s->la - s->pre - s->suf, n = s->lb - s->pre - s->suf;
    if (settle(s, m, n)) return;
    s->p_is_a = m <= n;
    const uint32_t *a = NULL, *b = NULL;
    if (s->codepoints) {
        a = s->symbols + s->pre;
        b = text_symbols(s) + s->pre;
    }
    shorter_first(&a, &m, &b, &n);
    s->p = a;
    s->m = m;
    s->t = b;
    s->n = n;
    s->cursor = 0;
    s->high = 0;
    s->phase = s->codepoints ? PHASE_COUNT : PHASE_PATTERN;
}

/* One part of the computation, `left` units at most (one at least), added
 * to *spent. */
static void advance(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t left, uint64_t *spent) {
    switch (s->phase) {
    case PHASE_ASCII: {
        /* a then b, as one run of alen + blen bytes */
        size_t total = s->alen + s->blen, i = s->cursor;
        size_t end = i + affordable(total - i, left, SCAN_PER_UNIT);
        bool ascii = true;
        if (i < s->alen) {
            size_t e = min_size(end, s->alen);
            ascii = wb_text_ascii(a + i, e - i);
            i = e;
        }
        if (ascii && i < end) ascii = wb_text_ascii(b + (i - s->alen), end - i);
        *spent += units_of(end - s->cursor, SCAN_PER_UNIT) + 1;
        s->cursor = end;
        if (ascii && end < total) return;
        s->cursor = 0;
        s->codepoints = !ascii;
        s->phase = PHASE_ALLOC;
        return;
    }
    case PHASE_ALLOC: {
        size_t count = s->with ? s->blen : s->alen + s->blen;
        *spent += 1;
        if (!s->codepoints) {
            /* bytes are their own symbols: nothing to decode */
            s->la = s->alen;
            s->lb = s->blen;
            if (!s->with) {
                s->phase = PHASE_PREFIX;
            } else if (!settle(s, s->with->pattern.m, s->lb)) {
                if (start_kernel(s, &s->with->pattern, NULL, s->lb))
                    point_at_bytes(s, a, b);
                else
                    fail(s, WB_LEV_ENOMEM);
            }
            return;
        }
        if (count <= WB_LEV_INLINE_SYMBOLS) {
            s->symbols = s->inline_symbols;
            s->phase = s->with ? PHASE_DECODE_B : PHASE_DECODE_A;
            return;
        }
        if (count > SIZE_MAX / sizeof(uint32_t)) {
            fail(s, WB_LEV_ENOMEM);
            return;
        }
        s->symbols_bytes = (count ? count : 1) * sizeof(uint32_t);
        s->symbols = table_allocator.alloc(s->symbols_bytes);
        if (!s->symbols) {
            s->symbols_bytes = 0;
            fail(s, WB_LEV_ENOMEM);
            return;
        }
        s->phase = s->with ? PHASE_DECODE_B : PHASE_DECODE_A;
        return;
    }
    case PHASE_DECODE_A:
        if (!wb_fz_symbols_step(&s->decoding, a, s->alen, s->codepoints, s->symbols, left, spent))
            return;
        if (s->decoding.invalid) {
            fail(s, WB_LEV_EUTF8_A);
            return;
        }
        s->la = s->decoding.count;
        memset(&s->decoding, 0, sizeof s->decoding);
        s->phase = PHASE_DECODE_B;
        return;
    case PHASE_DECODE_B:
        if (!wb_fz_symbols_step(&s->decoding, b, s->blen, s->codepoints, text_symbols(s), left,
                                spent))
            return;
        if (s->decoding.invalid) {
            fail(s, WB_LEV_EUTF8_B);
            return;
        }
        s->lb = s->decoding.count;
        if (s->with) {
            /* the pattern made once: no affixes, its own pattern */
            const wb_fz_pattern *pattern = &s->with->pattern;
            if (!settle(s, pattern->m, s->lb) && !start_kernel(s, pattern, text_symbols(s), s->lb))
                fail(s, WB_LEV_ENOMEM);
            return;
        }
        s->phase = PHASE_PREFIX;
        return;
    case PHASE_PREFIX: {
        size_t per = s->codepoints ? SCAN_PER_UNIT : BYTE_SCAN_PER_UNIT;
        size_t most = min_size(s->la, s->lb), end = s->pre + affordable(most - s->pre, left, per);
        size_t i = s->pre;
        if (s->codepoints) {
            const uint32_t *x = s->symbols, *y = text_symbols(s);
            while (i < end && x[i] == y[i])
                i++;
        } else {
            while (i < end && a[i] == b[i])
                i++;
        }
        *spent += units_of(i - s->pre, per) + 1;
        s->pre = i;
        if (i == end && i < most) return; /* the budget ended on equal symbols */
        s->phase = PHASE_SUFFIX;
        return;
    }
    case PHASE_SUFFIX: {
        size_t most = min_size(s->la, s->lb) - s->pre;
        size_t per = s->codepoints ? SCAN_PER_UNIT : BYTE_SCAN_PER_UNIT;
        size_t end = s->suf + affordable(most - s->suf, left, per), i = s->suf;
        if (s->codepoints) {
            const uint32_t *x = s->symbols, *y = text_symbols(s);
            while (i < end && x[s->la - 1 - i] == y[s->lb - 1 - i])
                i++;
        } else {
            while (i < end && a[s->la - 1 - i] == b[s->lb - 1 - i])
                i++;
        }
        *spent += units_of(i - s->suf, per) + 1;
        s->suf = i;
        if (i == end && i < most) return;
        affixes_done(s);
        return;
    }
    case PHASE_COUNT: {
        size_t end = s->cursor + affordable(s->m - s->cursor, left, SCAN_PER_UNIT);
        for (size_t i = s->cursor; i < end; i++)
            s->high += s->p[i] >= 256;
        *spent += units_of(end - s->cursor, SCAN_PER_UNIT) + 1;
        s->cursor = end;
        if (end == s->m) s->phase = PHASE_PATTERN;
        return;
    }
    case PHASE_PATTERN:
        if (!s->pattern.low) {
            *spent += 1;
            if (!wb_fz_pattern_alloc_high(&s->pattern, s->p, s->m, s->high)) {
                fail(s, WB_LEV_ENOMEM);
                return;
            }
            point_at_bytes(s, a, b);
            if (s->pattern.written) {
                /* a long pattern: its table's pages written first here,
                 * each charged as the fill would (WB_FZ_PATTERN_PAGE_UNITS),
                 * then the fill without looking at pages, several times
                 * faster a symbol */
                free(s->pattern.written);
                s->pattern.written = NULL;
                s->touched = 0;
                s->touching = true;
            }
            return;
        }
        if (s->touching) {
            touch_pages(s, left, spent);
            return;
        }
        if (wb_fz_pattern_fill(&s->pattern, left, spent)) {
            if (start_kernel(s, &s->pattern, s->t, s->n))
                point_at_bytes(s, a, b);
            else
                fail(s, WB_LEV_ENOMEM);
        }
        return;
    case PHASE_COLUMNS:
        /* (a cutoff's band stops the columns once it cannot end under it) */
        if (wb_fz_lev_step(&s->kernel, left, spent)) finish(s, s->kernel.result);
        return;
    }
}

/* ---- public ------------------------------------------------------------------ */

void wb_lev_start(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  bool codepoints, size_t max_distance) {
    (void)a;
    (void)b;
    memset(s, 0, offsetof(wb_lev, kernel));
    s->codepoints = codepoints;
    s->alen = alen;
    s->blen = blen;
    s->k = max_distance;
    s->phase = codepoints ? PHASE_ASCII : PHASE_ALLOC;
}

void wb_lev_start_with(wb_lev *s, const wb_lev_pattern *p, size_t n, size_t max_distance) {
    wb_lev_start(s, NULL, p->m, NULL, n, false, max_distance);
    s->with = p;
}

void wb_lev_begin(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                  bool codepoints, size_t max_distance) {
    wb_lev_start(s, a, alen, b, blen, codepoints, max_distance);
    size_t d;
    if (wb_lev_short(a, alen, b, blen, codepoints, max_distance, &d)) finish(s, d);
}

wb_lev_status wb_lev_init(wb_lev *s, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                          bool codepoints, size_t max_distance) {
    wb_lev_begin(s, a, alen, b, blen, codepoints, max_distance);
    uint64_t spent = 0;
    while (!s->done && s->phase != PHASE_COLUMNS)
        advance(s, a, b, UINT64_MAX, &spent);
    return s->failed;
}

bool wb_lev_step(wb_lev *s, const uint8_t *a, const uint8_t *b, uint64_t budget, uint64_t *used) {
    if (s->done) return true;
    if (budget == 0) budget = 1;
    if (s->phase >= PHASE_PATTERN) point_at_bytes(s, a, b);
    uint64_t spent = 0;
    do
        advance(s, a, b, budget - spent, &spent);
    while (!s->done && spent < budget);
    *used += spent;
    return s->done;
}

wb_lev_status wb_lev_error(const wb_lev *s) {
    return s->failed;
}

size_t wb_lev_result(const wb_lev *s) {
    return s->result;
}

/* Units of the columns for an m x n problem with cutoff k <= n: per
 * column the band's k + 1 rows, plus a block of misalignment, at most
 * every block of the shorter side. */
static uint64_t units_for(size_t m, size_t n, size_t k) {
    if (m > n) {
        size_t t = m;
        m = n;
        n = t;
    }
    if (m == 0 || n - m > k) return 1;
    size_t per_column = min_size(blocks_of(m), blocks_of(k + 1) + 1);
    return (uint64_t)per_column * n + 1;
}

uint64_t wb_lev_predict(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                        size_t max_distance) {
    /* the unstripped sizes bound the work; strip only when the bound is big */
    size_t small = min_size(alen, blen), large = alen + blen - small;
    uint64_t bound = units_for(small, large, min_size(max_distance, large));
    if (bound < PREDICT_EXACT_FROM) return bound;
    /* a bounded look at prefix and suffix: predictions must stay cheap */
    size_t la, lb;
    wb_lev_strip_bytes(a, alen, b, blen, PREDICT_STRIP_MOST, &la, &lb);
    size_t m = min_size(la, lb), n = la + lb - m;
    return units_for(m, n, min_size(max_distance, n));
}

uint64_t wb_lev_setup_units(size_t alen, size_t blen, bool codepoints) {
    size_t shorter = min_size(alen, blen);
    uint64_t units = 4 + wb_fz_decode_units(alen) + wb_fz_decode_units(blen) +
                     2 * units_of(shorter, codepoints ? SCAN_PER_UNIT : BYTE_SCAN_PER_UNIT) +
                     wb_fz_pattern_units(shorter);
    /* codepoints: the count of the pattern's symbols of 256 and up, and
     * the look for ASCII first */
    return codepoints
               ? units + units_of(shorter, SCAN_PER_UNIT) + units_of(alen + blen, SCAN_PER_UNIT) + 1
               : units;
}

/* What the set-up will allocate at most, from the lengths: the symbols
 * (codepoints), the shorter side's pattern table and the kernel's two
 * vectors (a map of symbols of 256 and up is not counted). */
static uint64_t memory_ahead(const wb_lev *s) {
    uint64_t bytes = 0, count = s->with ? s->blen : sat_add(s->alen, s->blen);
    if (s->codepoints && count > WB_LEV_INLINE_SYMBOLS) bytes = sat_mul(count, sizeof(uint32_t));
    size_t nblocks = blocks_of(min_size(s->alen, s->blen));
    if (!s->with) bytes = sat_add(bytes, sat_mul(nblocks, 256 * sizeof(uint64_t)));
    if (nblocks > 1) bytes = sat_add(bytes, sat_mul(nblocks, 2 * sizeof(uint64_t)));
    return bytes;
}

size_t wb_lev_memory(const wb_lev *s) {
    uint64_t owned =
        s->symbols_bytes + s->pattern.owned_bytes + (s->kernel_on ? s->kernel.owned_bytes : 0);
    if (!s->done && s->phase < PHASE_COLUMNS) {
        uint64_t ahead = memory_ahead(s);
        if (ahead > owned) owned = ahead;
    }
    return owned > SIZE_MAX ? SIZE_MAX : (size_t)owned;
}

void wb_lev_free(wb_lev *s) {
    release(s);
    s->done = true; /* nothing ahead to own */
}

/* ---- one pattern, many texts --------------------------------------------------- */

bool wb_lev_pattern_init(wb_lev_pattern *p, const uint8_t *pattern, size_t m) {
    memset(p, 0, sizeof *p);
    if (m > SIZE_MAX / sizeof(uint32_t)) return false;
    p->symbols = malloc((m ? m : 1) * sizeof(uint32_t));
    if (!p->symbols) return false;
    (void)wb_fz_symbols(pattern, m, false, p->symbols);
    if (!wb_fz_pattern_alloc_high(&p->pattern, p->symbols, m, 0)) {
        wb_lev_pattern_free(p);
        return false;
    }
    uint64_t used = 0;
    (void)wb_fz_pattern_fill(&p->pattern, UINT64_MAX, &used);
    p->m = m;
    p->bytes = (m ? m : 1) * sizeof(uint32_t) + p->pattern.owned_bytes;
    p->ready = true;
    return true;
}

void wb_lev_pattern_free(wb_lev_pattern *p) {
    free(p->symbols);
    wb_fz_pattern_free(&p->pattern);
    memset(p, 0, sizeof *p);
}

size_t wb_lev_distance(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                       bool codepoints, size_t max_distance, wb_lev_status *status) {
    size_t d;
    if (codepoints ? wb_lev_short(a, alen, b, blen, true, max_distance, &d)
                   : wb_lev_short_bytes(a, alen, b, blen, max_distance, &d)) {
        if (status) *status = WB_LEV_OK;
        return d;
    }
    wb_lev s;
    wb_lev_start(&s, a, alen, b, blen, codepoints, max_distance);
    uint64_t used = 0;
    while (!wb_lev_step(&s, a, b, UINT64_MAX, &used)) {
    }
    wb_lev_status st = wb_lev_error(&s);
    d = st == WB_LEV_OK ? wb_lev_result(&s) : SIZE_MAX;
    wb_lev_free(&s);
    if (status) *status = st;
    return d;
}

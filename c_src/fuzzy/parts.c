/*
 * A ratio scorer's parts (parts.h): which each scorer takes
 * (wb_fz_plan_ratio), and each part, the Indel ratio of two sequences or
 * the partial ratio's windows of the shorter in the longer, stepped a
 * budget at a time for the pair driver (fuzzy.c).
 */
#include "parts.h"
#include "scores.h"
#include "tokens.h"

#include "../metric/common.h"

#include <stdlib.h>
#include <string.h>

/* A long needle's reversed copy is written to memory fresh from the
 * system, whose pages fault in as they are first written (about 2 us a
 * 4 KB page where this was measured, a 2 vCPU VM): REVERSED_UNITS a
 * symbol (read backwards, written to new pages: 2.6-3 ns a symbol, two
 * kernel units). A pattern's fill charges its first-written pages itself
 * (wb_fz_pattern_fill). */
#define REVERSED_UNITS 2
/* needles made whole in a step */
#define SHORT_NEEDLE 256

/* A needle's pattern filled in at most max(room, 1) units; true once
 * filled. */
static __attribute__((noinline)) bool fill_needle(wb_fz_pattern *p, uint64_t room, uint64_t *used) {
    return wb_fz_pattern_fill(p, room, used);
}

/* A part's windows in one direction (a needle of nl symbols in a
 * haystack of hl >= nl), by index w: w < nl, the prefix of w + 1 symbols
 * (the last of them the first whole window); nl <= w < hl, the whole
 * window at w - nl + 1; hl <= w, the suffix of w - hl + 1 symbols. The
 * prefixes are one pass of the needle over the haystack's first nl
 * symbols, the LCS read after each column; the suffixes one pass of the
 * reversed needle over its last nl - 1, from the end: a column a window,
 * where a window of its own would cost a column a symbol. */
size_t wb_fz_windows_of(size_t ls, size_t ll) {
    return ll + ls - 1;
}

/* The sides of a partial part in the current direction: the needle
 * (shorter; x when equal) and the haystack. */
static void partial_sides(const wb_fz *s, const wb_fz_part *p, const uint32_t **needle, size_t *nl,
                          const uint32_t **hay, size_t *hl) {
    bool x_short = p->xl <= p->yl;
    if (s->direction == 1) x_short = !x_short;
    *needle = x_short ? p->x : p->y;
    *nl = x_short ? p->xl : p->yl;
    *hay = x_short ? p->y : p->x;
    *hl = x_short ? p->yl : p->xl;
}

/* Whether the whole window ending in symbol c is dominated (rapidfuzz's
 * rule, exact): when c is not in the needle, the window has the LCS of
 * the window one to the left (or, for the first, of a shorter prefix),
 * over as many symbols or fewer, so it cannot beat it. A needle of many
 * blocks is looked through a budget at a time (WB_FZ_COPY_SYMBOLS blocks
 * a unit for a byte's row of the table, one for a map's lookup), from
 * s->looked (SIZE_MAX: c found already, for the window at s->window;
 * back to 0 once the window is done).
 * 1: dominated, 0: not, -1: not known yet (the room ran out). */
static __attribute__((noinline)) int dominated_blocks(wb_fz *s, const wb_fz_pattern *np, uint32_t c,
                                                      uint64_t room, uint64_t *used) {
    size_t w = s->looked, nblocks = np->nblocks;
    if (w == SIZE_MAX) return 0;
    size_t per = c < 256 ? WB_FZ_COPY_SYMBOLS : 1;
    uint64_t units = 0;
    int out = 1;
    while (w < nblocks) {
        if (units == room) {
            out = -1;
            break;
        }
        size_t end = min_size(nblocks, w + per);
        units++;
        while (w < end && !wb_fz_pattern_get(np, c, w))
            w++;
        if (w < end) {
            out = 0;
            break;
        }
    }
    *used += units;
    /* found: kept till the window is done; dominated: 0 for the next */
    s->looked = out < 0 ? w : out == 0 ? SIZE_MAX : 0;
    return out;
}

static inline int dominated(wb_fz *s, const wb_fz_pattern *np, uint32_t c, uint64_t room,
                            uint64_t *used) {
    if (np->nblocks > 1) return dominated_blocks(s, np, c, room, used);
    /* one lookup: a unit when dominated, else the window's own */
    bool out = !wb_fz_pattern_get(np, c, 0);
    *used += out;
    return out;
}

/* A window of len symbols holding lcs of the needle's nl: the best so far
 * when its ratio is higher. */
static void consider_window(wb_fz *s, size_t nl, size_t len, size_t lcs) {
    double r = wb_fz_ratio_of(nl + len - 2 * lcs, nl + len);
    if (r > s->best) s->best = r;
}

/* ---- where the best window is (o.alignment) ------------------------------ */

static inline bool aligning(const wb_fz *s) {
    return s->o.alignment && s->o.scorer == WB_FZ_PARTIAL_RATIO;
}

/* rapidfuzz visits the whole windows at 0 .. count - 1 (all but the last)
 * by halving: 0 and count - 1 first (level 0), then the middle of every
 * range (from + (to - from) / 2), a level deeper each time, left to
 * right; of equal windows, the one it visits first is kept. The level at
 * which it visits p. */
static size_t halving_level(size_t count, size_t p) {
    size_t from = 0, to = count - 1, level = 0;
    while (p != from && p != to) {
        size_t middle = from + (to - from) / 2;
        level++;
        if (p == middle) break;
        if (p < middle)
            to = middle;
        else
            from = middle;
    }
    return level;
}

/* The first position from p on that the halving visits at a level below
 * k (count: none): the right end of the narrowest range of a level below
 * k holding p. */
static size_t halving_next(size_t count, size_t p, size_t k) {
    if (k == 0 || p >= count) return count;
    if (p == 0) return 0;
    size_t from = 0, to = count - 1, level = 0; /* from < p <= to */
    while (level + 1 < k && to - from > 1) {
        size_t middle = from + (to - from) / 2;
        level++;
        if (p <= middle)
            to = middle;
        else
            from = middle;
    }
    return to;
}

/* A direction begins: nothing found yet (the kept direction too, for the
 * first). */
static void align_begin(wb_fz *s) {
    wb_fz_aligner *al = &s->al;
    al->whole_found = al->top = false;
    al->whole_lcs = al->whole_at = al->whole_level = al->chain = 0;
    al->prefix_best = al->suffix_best = 0.0;
    al->prefix_len = al->suffix_start = 0;
    if (s->direction == 0) al->kept_score = -1.0;
}

/* A whole window at `at` (of the `count` before the last) holding lcs of
 * the needle's nl: the best of its group when its LCS is higher, or as
 * high and visited earlier by the halving. */
static void align_whole(wb_fz *s, size_t count, size_t at, size_t lcs, size_t nl, uint64_t *used) {
    wb_fz_aligner *al = &s->al;
    al->chain = lcs;
    if (lcs == 0 || (al->whole_found && lcs < al->whole_lcs)) return;
    size_t level = halving_level(count, at);
    *used += WB_FZ_LEVEL_UNITS;
    /* a tie found later at the same level lies to the right: not first */
    if (al->whole_found && lcs == al->whole_lcs && level >= al->whole_level) return;
    al->whole_found = true;
    al->whole_lcs = lcs;
    al->whole_at = at;
    al->whole_level = level;
    al->top = lcs == nl;
}

/* A prefix of len symbols, or a window from `start` to the haystack's end
 * (the last whole window, then the suffixes), of ratio r: rapidfuzz takes
 * the shortest prefix of the best ratio, and of the rest the one that
 * starts first. */
static void align_edge(wb_fz *s, bool prefix, size_t start, size_t len, double r) {
    wb_fz_aligner *al = &s->al;
    if (prefix) {
        if (r > al->prefix_best) {
            al->prefix_best = r;
            al->prefix_len = len;
        }
    } else if (r > al->suffix_best ||
               (r > 0.0 && r == al->suffix_best && start < al->suffix_start)) {
        al->suffix_best = r;
        al->suffix_start = start;
    }
}

/* A direction's windows are done: its best, the whole windows' before
 * the prefixes' before the rest's (the order rapidfuzz visits them in,
 * each replacing the best only when strictly better; none: the needle
 * against the haystack's start), kept when the first direction or
 * strictly better than it, in a's and b's terms. */
static void align_end(wb_fz *s, const wb_fz_part *p, size_t nl, size_t hl) {
    wb_fz_aligner *al = &s->al;
    double score = 0.0;
    size_t start = 0, len = nl;
    if (al->whole_found) {
        score = wb_fz_ratio_of(2 * (nl - al->whole_lcs), 2 * nl);
        start = al->whole_at;
    }
    if (al->prefix_best > score) {
        score = al->prefix_best;
        start = 0;
        len = al->prefix_len;
    }
    if (al->suffix_best > score) {
        score = al->suffix_best;
        start = al->suffix_start;
        len = hl - start;
    }
    if (al->kept_score >= 0.0 && !(score > al->kept_score)) return;
    al->kept_score = score;
    bool needle_x = (p->xl <= p->yl) != (s->direction == 1);
    s->alignment = needle_x ? (wb_fz_alignment){0, nl, start, start + len}
                            : (wb_fz_alignment){start, start + len, 0, nl};
}

/* A column of a prefix or suffix pass done (col: its index, lcs its LCS):
 * the prefix of col + 1 symbols (the last, col = nl - 1, the first whole
 * window), or the suffix of as many. */
static void align_column(wb_fz *s, size_t nl, size_t hl, bool suffix, size_t col, size_t lcs,
                         uint64_t *used) {
    size_t len = col + 1;
    double r = wb_fz_ratio_of(nl + len - 2 * lcs, nl + len);
    if (suffix)
        align_edge(s, false, hl - len, len, r);
    else if (len < nl)
        align_edge(s, true, 0, len, r);
    else if (hl > nl)
        align_whole(s, hl - nl, 0, lcs, nl, used);
    else
        align_edge(s, false, 0, len, r); /* equal lengths: no whole window before the last */
}

/* A whole window at `at` computed (not the first: align_column's) */
static void align_window(wb_fz *s, size_t nl, size_t hl, size_t at, size_t lcs, uint64_t *used) {
    if (at < hl - nl)
        align_whole(s, hl - nl, at, lcs, nl, used);
    else
        align_edge(s, false, at, nl, wb_fz_ratio_of(2 * (nl - lcs), 2 * nl));
}

/* Whether a dominated whole window at `at` is to be computed all the
 * same: its LCS is at most that of the window before it (al->chain), so
 * it can only tie the best of its group, and rapidfuzz keeps it if its
 * halving visits it first. */
static bool align_dominated(wb_fz *s, size_t nl, size_t hl, size_t at, uint64_t *used) {
    const wb_fz_aligner *al = &s->al;
    if (at >= hl - nl || al->top || !al->whole_found || al->chain != al->whole_lcs) return false;
    *used += WB_FZ_LEVEL_UNITS;
    return halving_level(hl - nl, at) < al->whole_level;
}

/* Whether a whole window holding all of the needle leaves windows to
 * look at: those the halving visits before it (none past the last but
 * one, none before a level 0). */
static bool align_pending(const wb_fz *s, size_t hl) {
    return aligning(s) && s->al.top && s->al.whole_level > 0 && s->window < hl - 1;
}

/* The bits of x in reverse order: a one-word needle's masks reversed
 * are the reversed needle's (shifted down by 64 - nl). */
static uint64_t reverse_bits(uint64_t x) {
    x = __builtin_bswap64(x);
    x = (x >> 4 & UINT64_C(0x0F0F0F0F0F0F0F0F)) | (x & UINT64_C(0x0F0F0F0F0F0F0F0F)) << 4;
    x = (x >> 2 & UINT64_C(0x3333333333333333)) | (x & UINT64_C(0x3333333333333333)) << 2;
    return (x >> 1 & UINT64_C(0x5555555555555555)) | (x & UINT64_C(0x5555555555555555)) << 1;
}

/* A long needle's suffix pass made ready, a budget at a time: the needle
 * reversed, then the haystack's last nl - 1 symbols from the end, copied
 * into s->reversed (REVERSED_UNITS a symbol), then the pattern of the
 * first nl (s->rneedle, a unit to allocate it, then fill_needle). At most
 * max(room, REVERSED_UNITS) units. True once ready, or failed (out of
 * memory: s->failed). */
static __attribute__((noinline)) bool build_reversed(wb_fz *s, const uint32_t *needle, size_t nl,
                                                     const uint32_t *hay, size_t hl, uint64_t room,
                                                     uint64_t *used) {
    if (!s->reversed_live) {
        if (nl > SIZE_MAX / 2 / sizeof(uint32_t)) {
            s->failed = true;
            return true;
        }
        s->reversed = malloc((2 * nl - 1) * sizeof *s->reversed);
        if (!s->reversed) {
            s->failed = true;
            return true;
        }
        s->reversed_live = true;
        s->rneedle_live = false;
        s->reversed_at = 0;
    }
    wb_fz_meter g = {room > 0 ? room : 1, 0};
    uint32_t *r = s->reversed;
    size_t total = 2 * nl - 1;
    while (s->reversed_at < total) {
        uint64_t left = wb_fz_room(&g);
        if (left == 0) break;
        uint64_t most = left >= REVERSED_UNITS ? left / REVERSED_UNITS : 1;
        size_t i = s->reversed_at, count = min_size(total - i, wb_fz_allowance(most, 1));
        size_t end = i + count;
        g.spent += (uint64_t)count * REVERSED_UNITS;
        for (; i < end && i < nl; i++)
            r[i] = needle[nl - 1 - i];
        for (; i < end; i++)
            r[i] = hay[hl - 1 - (i - nl)];
        s->reversed_at = end;
    }
    if (s->reversed_at == total && !s->rneedle_live && wb_fz_room(&g) > 0) {
        if (!wb_fz_pattern_alloc(&s->rneedle, r, nl)) {
            *used += g.spent;
            s->failed = true;
            return true;
        }
        s->rneedle_live = true;
        g.spent += 1;
    }
    bool done =
        s->rneedle_live && wb_fz_room(&g) > 0 && fill_needle(&s->rneedle, wb_fz_room(&g), &g.spent);
    *used += g.spent;
    return done;
}

void wb_fz_end_reversed(wb_fz *s) {
    if (!s->reversed_live) return;
    if (s->rneedle_live) wb_fz_pattern_free_with(&s->rneedle, s->free_later);
    s->rneedle_live = false;
    free(s->reversed);
    s->reversed = NULL;
    s->reversed_live = false;
}

/* The LCS of a needle of at most 64 symbols and a text. */
static size_t word_lcs(const wb_fz_pattern *needle, const uint32_t *t, size_t n) {
    return wb_fz_lcs_of(wb_fz_lcs_word_run(needle, t, n, ~(uint64_t)0), needle->m);
}

/* Moves to the next window; true when the part is done (the last window
 * of the last direction, or a perfect score). */
static bool next_window(wb_fz *s, const wb_fz_part *p, size_t nl, size_t hl) {
    bool last = ++s->window == wb_fz_windows_of(nl, hl);
    if (last || (s->best == 100.0 && !align_pending(s, hl))) {
        if (s->kernel_live) wb_fz_lcs_free(&s->k.lcs); /* a pass cut short */
        s->kernel_live = false;
        wb_fz_end_reversed(s);
        if (s->pattern_live) wb_fz_pattern_free_with(&s->needle, s->free_later);
        s->pattern_live = false;
        s->needle_in_use = NULL;
        if (aligning(s)) align_end(s, p, nl, hl);
        /* equal lengths: the other side's windows too */
        if (s->best == 100.0 || p->xl != p->yl || s->direction == 1) return true;
        s->direction = 1;
    }
    return false;
}

/* A ratio part's common prefix, then suffix, a budget at a time (as
 * rapidfuzz strips them before its LCS): symbols in common are in every
 * longest common subsequence, so the kernel runs on what lies between,
 * and equal or near-equal long texts cost linear time. True when both are
 * found; the symbols compared are charged as copied ones. */
static bool trim_affix(wb_fz_part *p, uint64_t budget, uint64_t *used) {
    wb_fz_meter g = {budget, 0};
    size_t most = min_size(p->xl, p->yl);
    while (p->trim < 2) {
        size_t left = most - p->pre - p->suf;
        if (left == 0) {
            p->trim = 2;
            break;
        }
        uint64_t r = wb_fz_room(&g);
        if (r == 0) break;
        size_t k = min_size(left, wb_fz_allowance(r, WB_FZ_TRIM_SYMBOLS)), i = 0;
        g.spent += k / WB_FZ_TRIM_SYMBOLS; /* a short k ends the phase: left */
        if (p->trim == 0) {
            const uint32_t *x = p->x + p->pre, *y = p->y + p->pre;
            while (i < k && x[i] == y[i])
                i++;
            p->pre += i;
        } else {
            const uint32_t *x = p->x + (p->xl - p->suf), *y = p->y + (p->yl - p->suf);
            while (i < k && x[-1 - (ptrdiff_t)i] == y[-1 - (ptrdiff_t)i])
                i++;
            p->suf += i;
        }
        if (i < k) p->trim++;
    }
    *used += g.spent;
    return p->trim == 2;
}

/* The column of a prefix or suffix pass at s->window (windows_of),
 * or as much of it as `room` allows: true when it is done, its window
 * considered, or failed (out of memory: s->failed). A one-word needle
 * keeps its vector and LCS in s->k.lcs (no kernel: nothing to free),
 * reversing its masks for the suffixes; a longer one runs the LCS kernel
 * over the pass's text a column at a time, from its counted LCS. */
static bool pass_column(wb_fz *s, const uint32_t *needle, size_t nl, const uint32_t *hay, size_t hl,
                        uint64_t room, uint64_t *used) {
    const wb_fz_pattern *np = s->needle_in_use;
    bool suffix = s->window >= hl;
    size_t col = suffix ? s->window - hl : s->window, columns = suffix ? nl - 1 : nl;
    wb_fz_lcs *k = &s->k.lcs;
    if (np->nblocks == 1) {
        if (col == 0) {
            k->one = ~(uint64_t)0;
            k->lcs = 0;
        }
        uint64_t mask = wb_fz_pattern_get(np, suffix ? hay[hl - 1 - col] : hay[col], 0);
        if (suffix) mask = reverse_bits(mask) >> (64 - nl);
        k->one = wb_fz_lcs_word_counted(k->one, mask, &k->lcs);
        *used += 1;
        consider_window(s, nl, col + 1, k->lcs);
        if (aligning(s)) align_column(s, nl, hl, suffix, col, k->lcs, used);
        return true;
    }
    if (!s->kernel_live) {
        if (suffix && !(s->reversed_live && s->rneedle_live && s->rneedle.filled == nl)) {
            uint64_t before = *used;
            if (!build_reversed(s, needle, nl, hay, hl, room, used)) return false;
            if (s->failed) return true;
            uint64_t spent = *used - before;
            if (spent >= room) return false;
            room -= spent;
        }
        bool ok = suffix ? wb_fz_lcs_init_with(k, &s->rneedle, s->reversed + nl, columns)
                         : wb_fz_lcs_init_with(k, np, hay, columns);
        if (!ok) {
            s->failed = true;
            return true;
        }
        s->kernel_live = true;
    }
    uint64_t setup = wb_fz_lcs_setup_units(k);
    if (setup > 0) {
        /* the kernel's vector set up first (nblocks words) */
        uint64_t before = *used;
        wb_fz_lcs_step(k, room < setup ? room : setup, used);
        uint64_t spent = *used - before;
        if (spent >= room || wb_fz_lcs_setup_units(k) > 0) return false;
        room -= spent;
    }
    size_t left = np->nblocks - k->block;
    wb_fz_lcs_step(k, room < left ? room : left, used);
    if (k->block != 0) return false;
    consider_window(s, nl, col + 1, k->lcs);
    if (aligning(s)) align_column(s, nl, hl, suffix, col, k->lcs, used);
    if (col + 1 == columns) {
        wb_fz_lcs_free(k);
        s->kernel_live = false;
        wb_fz_end_reversed(s);
    }
    return true;
}

/* Steps the current part; true when it is done (its similarity in
 * s->best), or failed. */
bool wb_fz_step_part(wb_fz *s, uint64_t budget, uint64_t *used) {
    wb_fz_part *p = &s->parts[s->part];
    if (!p->partial) {
        /* the whole of a with its pattern made once: no trimming */
        bool whole_query = s->query && p->x == s->a && p->xl == s->m;
        if (!s->kernel_live) {
            uint64_t before = *used;
            if (!whole_query && !trim_affix(p, budget, used)) return false;
            if (*used - before >= budget && *used > before) return false;
            size_t xl = p->xl - p->pre - p->suf, yl = p->yl - p->pre - p->suf;
            budget -= *used - before;
            if (!whole_query && min_size(xl, yl) <= WB_FZ_SHORT_LCS &&
                budget >= wb_fz_lcs_units(xl, yl)) {
                /* the short form: whole, no kernel state */
                size_t lcs = wb_fz_lcs_short(p->x + p->pre, xl, p->y + p->pre, yl, used);
                s->best = wb_fz_ratio_of(p->xl + p->yl - 2 * (lcs + p->pre + p->suf), p->total);
                return true;
            }
            bool ok = whole_query ? wb_fz_lcs_init_with(&s->k.lcs, s->query, p->y, p->yl)
                                  : wb_fz_lcs_init(&s->k.lcs, p->x + p->pre, xl, p->y + p->pre, yl);
            if (!ok) {
                s->failed = true;
                return true;
            }
            s->kernel_live = true;
        }
        if (!wb_fz_lcs_step(&s->k.lcs, budget, used)) return false;
        size_t distance = p->xl + p->yl - 2 * (s->k.lcs.result + p->pre + p->suf);
        wb_fz_lcs_free(&s->k.lcs);
        s->kernel_live = false;
        s->best = wb_fz_ratio_of(distance, p->total);
        return true;
    }
    if (p->xl == 0 || p->yl == 0) {
        s->best = p->xl == 0 && p->yl == 0 ? 100.0 : 0.0;
        if (aligning(s)) s->alignment = (wb_fz_alignment){0, 0, 0, 0}; /* the empty side whole */
        return true;
    }
    uint64_t start = *used;
    for (;;) {
        const uint32_t *needle, *hay;
        size_t nl, hl;
        partial_sides(s, p, &needle, &nl, &hay, &hl);
        if (!s->needle_in_use) {
            if (s->query && needle == s->a && nl == s->m) {
                s->needle_in_use = s->query;
            } else if (s->sorted_query && needle == s->sorted_query->s &&
                       nl == s->sorted_query->m) {
                s->needle_in_use = s->sorted_query; /* the query's sorted tokens */
            } else {
                /* a short needle made whole, its units in its windows'
                 * (as wb_fz_pattern_alloc counts up to 256 symbols);
                 * a longer one a budget at a time: allocated (a unit),
                 * then filled, from the first steps of each direction */
                if (nl <= SHORT_NEEDLE) {
                    if (!wb_fz_pattern_init(&s->needle, needle, nl)) {
                        s->failed = true;
                        return true;
                    }
                    s->pattern_live = true;
                } else if (!s->pattern_live) {
                    if (!wb_fz_pattern_alloc(&s->needle, needle, nl)) {
                        s->failed = true;
                        return true;
                    }
                    s->pattern_live = true;
                    *used += 1;
                    if (*used - start >= budget) return false;
                }
                if (nl > SHORT_NEEDLE && !fill_needle(&s->needle, budget - (*used - start), used))
                    return false;
                s->needle_in_use = &s->needle;
            }
            s->window = 0;
            s->looked = 0;
            if (aligning(s)) align_begin(s);
            if (*used > start && *used - start >= budget) return false;
        }
        size_t w = s->window;
        if (w < nl || w >= hl) {
            if (!pass_column(s, needle, nl, hay, hl,
                             budget > *used - start ? budget - (*used - start) : 1, used))
                return false;
            if (s->failed) return true;
            if (next_window(s, p, nl, hl)) return true;
            if (*used - start >= budget) return false;
            continue;
        }
        if (!s->kernel_live) {
            if (aligning(s) && s->al.top) {
                /* the best holds the whole needle: only a window the
                 * halving visits before it can tie it first */
                size_t count = hl - nl, at = w - nl + 1;
                size_t next = halving_next(count, at, s->al.whole_level);
                if (next != at) {
                    /* charged only when it moves on: a window taken up
                     * again in the next step is found here again */
                    *used += WB_FZ_LEVEL_UNITS;
                    if (next >= count) {
                        s->window = wb_fz_windows_of(nl, hl) - 1; /* the direction ends */
                        if (next_window(s, p, nl, hl)) return true;
                        continue;
                    }
                    s->window = w = next + nl - 1;
                }
            }
            const uint32_t *at = hay + (w - nl + 1);
            size_t len = nl;
            uint64_t spent = *used - start;
            int d = dominated(s, s->needle_in_use, at[len - 1], budget > spent ? budget - spent : 1,
                              used);
            if (d < 0) return false;
            if (d == 0 && s->needle_in_use->nblocks > 1 && *used - start >= budget) return false;
            if (d > 0 && !(aligning(s) && align_dominated(s, nl, hl, w - nl + 1, used))) {
                if (next_window(s, p, nl, hl)) return true;
                if (*used - start >= budget) return false;
                continue;
            }
            if (s->needle_in_use->nblocks == 1) {
                /* a needle of one word: the window (at most 64 symbols)
                 * in one go, no kernel state */
                size_t lcs = word_lcs(s->needle_in_use, at, len);
                *used += 1 + len;
                double r = wb_fz_ratio_of(nl + len - 2 * lcs, nl + len);
                if (r > s->best) s->best = r;
                if (aligning(s)) align_window(s, nl, hl, w - nl + 1, lcs, used);
                if (next_window(s, p, nl, hl)) return true;
                if (*used - start >= budget) return false;
                continue;
            }
            if (!wb_fz_lcs_init_with(&s->k.lcs, s->needle_in_use, at, len)) {
                s->failed = true;
                return true;
            }
            s->kernel_live = true;
        }
        uint64_t spent = *used - start;
        if (!wb_fz_lcs_step(&s->k.lcs, budget > spent ? budget - spent : 1, used)) return false;
        size_t len = s->k.lcs.n, lcs = s->k.lcs.result;
        wb_fz_lcs_free(&s->k.lcs);
        s->kernel_live = false;
        s->looked = 0; /* for the next window */
        double r = wb_fz_ratio_of(nl + len - 2 * lcs, nl + len);
        if (r > s->best) s->best = r;
        if (aligning(s)) align_window(s, nl, hl, w - nl + 1, lcs, used);
        if (next_window(s, p, nl, hl)) return true;
        if (*used - start >= budget) return false;
    }
}

/* ---- the parts of each ratio scorer ------------------------------------------ */

static void add_part(wb_fz *s, bool partial, const uint32_t *x, size_t xl, const uint32_t *y,
                     size_t yl, size_t total, double w1, double w2) {
    s->parts[s->nparts++] = (wb_fz_part){
        .partial = partial, .x = x, .xl = xl, .y = y, .yl = yl, .total = total, .w1 = w1, .w2 = w2};
}

/* token_set_ratio's parts, weighted */
static void token_set_parts(wb_fz *s, const wb_fz_tokens *t, double w1, double w2) {
    if (t->ua_count == 0) return; /* a side without tokens: 0 */
    if (t->sect_count > 0 && (t->ab_count == 0 || t->ba_count == 0)) {
        wb_fz_add_base(s, 100.0 * w1 * w2);
        return;
    }
    size_t sep = t->sect_count > 0;
    size_t sect_ab = t->sect_len + sep + t->diff_abl, sect_ba = t->sect_len + sep + t->diff_bal;
    /* the intersection with each side: a distance of the side's rest */
    add_part(s, false, t->diff_ab, t->diff_abl, t->diff_ba, t->diff_bal, sect_ab + sect_ba, w1, w2);
    if (t->sect_count > 0) {
        wb_fz_add_base(s, wb_fz_ratio_of(sep + t->diff_abl, t->sect_len + sect_ab) * w1 * w2);
        wb_fz_add_base(s, wb_fz_ratio_of(sep + t->diff_bal, t->sect_len + sect_ba) * w1 * w2);
    }
}

/* partial_token_ratio's parts, weighted. No test for a side without
 * tokens: as in rapidfuzz, the sorted texts' partial ratio answers it, 100
 * when neither side has a token (two empty texts), 0 when one side has. */
static void partial_token_parts(wb_fz *s, const wb_fz_tokens *t, double w1, double w2) {
    if (t->sect_count > 0) {
        wb_fz_add_base(s, 100.0 * w1 * w2);
        return;
    }
    add_part(s, true, t->sorted_a, t->sorted_al, t->sorted_b, t->sorted_bl, 0, w1, w2);
    if (t->diff_abl != t->sorted_al || t->diff_bal != t->sorted_bl)
        add_part(s, true, t->diff_ab, t->diff_abl, t->diff_ba, t->diff_bal, 0, w1, w2);
}

void wb_fz_plan_ratio(wb_fz *s) {
    const wb_fz_tokens *t = &s->tk;
    const uint32_t *a = s->a, *b = s->b;
    size_t m = s->m, n = s->n;
    bool shorter_wratio = false;
    double scale = 1.0;
    if (s->o.scorer == WB_FZ_WRATIO) {
        if (m == 0 || n == 0) return;
        shorter_wratio = wb_fz_wratio_near(m, n, &scale);
    }
    switch (s->o.scorer) {
    case WB_FZ_QRATIO:
        if (m == 0 || n == 0) return;
        add_part(s, false, a, m, b, n, m + n, 1.0, 1.0);
        break;
    case WB_FZ_RATIO:
        add_part(s, false, a, m, b, n, m + n, 1.0, 1.0);
        break;
    case WB_FZ_PARTIAL_RATIO:
        add_part(s, true, a, m, b, n, 0, 1.0, 1.0);
        break;
    case WB_FZ_TOKEN_SORT_RATIO:
        add_part(s, false, t->sorted_a, t->sorted_al, t->sorted_b, t->sorted_bl,
                 t->sorted_al + t->sorted_bl, 1.0, 1.0);
        break;
    case WB_FZ_TOKEN_SET_RATIO:
        token_set_parts(s, t, 1.0, 1.0);
        break;
    case WB_FZ_TOKEN_RATIO:
        add_part(s, false, t->sorted_a, t->sorted_al, t->sorted_b, t->sorted_bl,
                 t->sorted_al + t->sorted_bl, 1.0, 1.0);
        token_set_parts(s, t, 1.0, 1.0);
        break;
    case WB_FZ_PARTIAL_TOKEN_SORT_RATIO:
        add_part(s, true, t->sorted_a, t->sorted_al, t->sorted_b, t->sorted_bl, 0, 1.0, 1.0);
        break;
    case WB_FZ_PARTIAL_TOKEN_SET_RATIO:
        if (t->ua_count == 0) break;
        if (t->sect_count > 0)
            wb_fz_add_base(s, 100.0);
        else
            add_part(s, true, t->diff_ab, t->diff_abl, t->diff_ba, t->diff_bal, 0, 1.0, 1.0);
        break;
    case WB_FZ_PARTIAL_TOKEN_RATIO:
        partial_token_parts(s, t, 1.0, 1.0);
        break;
    default: /* WRATIO */
        add_part(s, false, a, m, b, n, m + n, 1.0, 1.0);
        if (shorter_wratio) {
            add_part(s, false, t->sorted_a, t->sorted_al, t->sorted_b, t->sorted_bl,
                     t->sorted_al + t->sorted_bl, 0.95, 1.0);
            token_set_parts(s, t, 0.95, 1.0);
        } else {
            add_part(s, true, a, m, b, n, 0, scale, 1.0);
            partial_token_parts(s, t, 0.95, scale);
        }
    }
}

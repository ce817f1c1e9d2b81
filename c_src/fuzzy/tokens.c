/* The token scorers' token work (tokens.h), every phase resumable a
 * budget at a time: the tokens of a and b counted (long inputs: the
 * blocks are then sized exactly; shorter ones by the lengths), split,
 * each side sorted (a bottom-up merge sort, stable, its passes resumable
 * at any merge), joined by single spaces, their repeats dropped, and
 * the two sets walked together into the intersection's measure and the
 * differences, joined. A token comparison reads the symbols up to the
 * first difference; a long one resumes where it stopped. */
#include "tokens.h"

#include <stdlib.h>
#include <string.h>

static uint64_t saturating_add(uint64_t x, uint64_t y) {
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

static uint64_t saturating_product(uint64_t x, uint64_t y) {
    return y != 0 && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

static size_t min_size(size_t x, size_t y) {
    return x < y ? x : y;
}

/* wb_fz_ascii_space's symbols, one bit each: a test and a shift a symbol */
#define ASCII_SPACES ((UINT64_C(1) << ' ') | (UINT64_C(0x1F) << 9) | (UINT64_C(0xF) << 0x1C))

static inline bool is_space(uint32_t c, bool codepoints) {
    if (c < 64) return (ASCII_SPACES >> c) & 1;
    if (!codepoints || c < 0x85) return false;
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* The units of the token work, a unit being about 2 ns (kernels.h),
 * set so that each phase costs about what the Levenshtein kernel does a
 * unit (2.6-3.1 ns; thread CPU time, lab/c_src/fzbench/fzunits.c): a
 * million words a side ("w1".."w5000", shuffled), 16 MB of "ab ab" and
 * of "abab" against "abcab". The walks over sorted tokens read them at
 * scattered places (a cache miss a token on large inputs): a comparison
 * in a merge took 23 ns, one of neighbours (repeats, the sets) 50 ns, a
 * token joined 60 ns, when each was charged one unit. Units:
 *   COUNT_SYMBOLS, SPLIT_SYMBOLS   symbols counted, split (written as
 *                                  tokens) a unit
 *   SORT_COMPARE, WALK_COMPARE     a comparison in a merge, of neighbours
 *                                  or of the two sets, and one more per
 *                                  READ_SYMBOLS symbols it reads
 *   MOVE_TOKENS                    tokens moved as they are a unit
 *   EMIT_UNITS, JOIN_SYMBOLS       a token joined, and its symbols copied
 *                                  a unit (into fresh pages at first) */
#define COUNT_SYMBOLS 3
#define SPLIT_SYMBOLS 1
#define SORT_COMPARE  6
#define WALK_COMPARE  12
#define READ_SYMBOLS  8
#define MOVE_TOKENS   8
#define EMIT_UNITS    12
#define JOIN_SYMBOLS  2

/* pairs of this many symbols at most have their token blocks sized by
 * their lengths, not their tokens counted first */
#define UNCOUNTED 4096

enum {
    TK_COUNT,
    TK_ALLOC,
    TK_SPLIT,
    TK_SORT_A,
    TK_SORT_B,
    TK_JOIN_A,
    TK_JOIN_B,
    TK_UNIQUE_A,
    TK_UNIQUE_B,
    TK_SETS,
    TK_DONE
};

#define CMP_MORE 2

/* Compares tokens x and y, whose first *at symbols are equal, reading at
 * most `most` (>= 1) more pairs of symbols: -1, 0 or 1 (shorter first
 * when one is a prefix of the other), or CMP_MORE with *at moved on;
 * *read the pairs read. */
static int compare_from(const wb_fz_token *x, const wb_fz_token *y, size_t *at, size_t most,
                        size_t *read) {
    size_t common = min_size(x->len, y->len), from = *at, i = from;
    size_t end = common - from > most ? from + most : common;
    for (; i < end; i++)
        if (x->at[i] != y->at[i]) {
            *read = i - from + 1;
            *at = 0;
            return x->at[i] < y->at[i] ? -1 : 1;
        }
    *read = end - from;
    if (end < common) {
        *at = end;
        return CMP_MORE;
    }
    *at = 0;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* A comparison of `cost` units charged to the wb_fz_meter (room left:
 * the caller checks). */
static int compare_long(wb_fz_tokens *t, const wb_fz_token *x, const wb_fz_token *y, uint64_t cost,
                        wb_fz_meter *g) {
    size_t read;
    int c = compare_from(x, y, &t->cmp_at, wb_fz_allowance(wb_fz_room(g), READ_SYMBOLS), &read);
    g->spent += cost + read / READ_SYMBOLS;
    return c;
}

/* The same, decided at once when the first symbols differ (tokens have
 * one at least), as most are: one pair read, charged as compare_long
 * charges it. */
static inline int compare_metered(wb_fz_tokens *t, const wb_fz_token *x, const wb_fz_token *y,
                                  uint64_t cost, wb_fz_meter *g) {
    if (t->cmp_at == 0 && x->at[0] != y->at[0]) {
        g->spent += cost;
        return x->at[0] < y->at[0] ? -1 : 1;
    }
    return compare_long(t, x, y, cost, g);
}

/* Appends a token to a joined sequence (after a space when not the
 * first): the space now, its symbols by pump_copy. */
static void emit(wb_fz_tokens *t, uint32_t *seq, size_t *len, const wb_fz_token *token,
                 wb_fz_meter *g) {
    if (*len > 0) seq[(*len)++] = ' ';
    t->copy_from = token->at;
    t->copy_to = seq + *len;
    t->copy_left = token->len;
    *len += token->len;
    g->spent += EMIT_UNITS;
}

/* Goes on with the copy under way; false when the room ran out first. */
static bool pump_copy(wb_fz_tokens *t, wb_fz_meter *g) {
    while (t->copy_left > 0) {
        uint64_t r = wb_fz_room(g);
        if (r == 0) return false;
        size_t k = min_size(t->copy_left, wb_fz_allowance(r, JOIN_SYMBOLS));
        memcpy(t->copy_to, t->copy_from, k * sizeof *t->copy_to);
        t->copy_to += k;
        t->copy_from += k;
        t->copy_left -= k;
        g->spent += 1 + k / JOIN_SYMBOLS;
    }
    return true;
}

/* Scans a, then b, from t->at: writes their tokens to ta and tb (`write`)
 * or counts them. true once through both. */
static bool scan(wb_fz *s, bool write, wb_fz_meter *g) {
    wb_fz_tokens *t = &s->tk;
    bool cp = s->o.codepoints;
    size_t total = s->m + s->n, per = write ? SPLIT_SYMBOLS : COUNT_SYMBOLS;
    while (t->at < total) {
        uint64_t r = wb_fz_room(g);
        if (r == 0) return false;
        bool in_a = t->at < s->m;
        const uint32_t *x = in_a ? s->a : s->b;
        size_t len = in_a ? s->m : s->n, from = in_a ? t->at : t->at - s->m;
        size_t to = from + min_size(len - from, wb_fz_allowance(r, per));
        size_t *count = in_a ? &t->a_count : &t->b_count;
        wb_fz_token *out = !write ? NULL : in_a ? t->ta : t->tb;
        for (size_t i = from; i < to; i++) {
            if (is_space(x[i], cp)) {
                if (t->start != SIZE_MAX) {
                    if (out) out[*count] = (wb_fz_token){x + t->start, i - t->start};
                    ++*count;
                    t->start = SIZE_MAX;
                }
            } else if (t->start == SIZE_MAX) {
                t->start = i;
            }
        }
        if (to == len && t->start != SIZE_MAX) {
            if (out) out[*count] = (wb_fz_token){x + t->start, len - t->start};
            ++*count;
            t->start = SIZE_MAX;
        }
        g->spent += 1 + (to - from) / per;
        t->at += to - from;
    }
    return true;
}

void *wb_fz_take_block(const wb_fz *s, size_t bytes) {
    return s->alloc ? s->alloc(bytes) : malloc(bytes);
}

void wb_fz_give_back(const wb_fz *s, void *block, size_t bytes) {
    if (!block) return;
    if (s->release)
        s->release(block, bytes);
    else
        free(block);
}

/* Where the derived sequences go, in a block of 2 (m + n) symbols: the
 * sorted tokens of a and of b joined, then the differences of their sets
 * joined (each at most its side's length). */
static void place_derived(wb_fz *s, uint32_t *derived) {
    wb_fz_tokens *t = &s->tk;
    t->sorted_a = derived;
    t->sorted_b = derived + s->m;
    t->diff_ab = derived + s->m + s->n;
    t->diff_ba = derived + 2 * s->m + s->n;
}

/* a's side from the query's token work (s->query_tokens): its unique
 * sorted tokens and their join; b's split from its first symbol */
static void take_query(wb_fz *s) {
    wb_fz_tokens *t = &s->tk;
    const wb_fz_tokens *q = s->query_tokens;
    t->ta = q->ta;
    t->a_count = q->a_count;
    t->ua = q->ua;
    t->sorted_a = q->sorted_a;
    t->sorted_al = q->sorted_al;
    t->at = s->m;
}

/* The blocks of long inputs, their tokens counted (or bounded): a's and b's tokens and
 * as many to sort into; the derived sequences. false: out of memory. */
static bool allocate_tokens(wb_fz *s) {
    wb_fz_tokens *t = &s->tk;
    /* a's tokens are the query's when cached: no room for them */
    size_t ac = t->cached ? 0 : t->a_count, bc = t->b_count, m = s->m, n = s->n;
    /* the counts are at most half the lengths, far from overflowing */
    if (m + n > SIZE_MAX / 2 / sizeof(uint32_t) || ac + bc > SIZE_MAX / 2 / sizeof(wb_fz_token))
        return false;
    size_t token_bytes = 2 * (ac + bc) * sizeof(wb_fz_token);
    size_t derived_bytes = 2 * (m + n) * sizeof(uint32_t);
    if (token_bytes > 0) {
        t->block = wb_fz_take_block(s, token_bytes);
        if (!t->block) return false;
        t->block_bytes = token_bytes;
    }
    uint32_t *derived = wb_fz_take_block(s, derived_bytes);
    if (!derived) {
        wb_fz_give_back(s, t->block, t->block_bytes);
        t->block = NULL;
        t->block_bytes = 0;
        return false;
    }
    s->derived = derived;
    s->derived_bytes = derived_bytes;
    s->owned_bytes += token_bytes + derived_bytes;
    t->ta = t->block;
    t->tb = t->block ? t->block + ac : NULL;
    t->aux_a = t->block ? t->block + ac + bc : NULL;
    t->aux_b = t->block ? t->block + 2 * ac + bc : NULL;
    place_derived(s, derived);
    t->a_count = t->b_count = 0;
    t->at = 0;
    t->start = SIZE_MAX;
    if (t->cached) take_query(s);
    return true;
}

/* Enters a phase (or the next one the scorer needs), its walk at the
 * start. */
static void enter(wb_fz_tokens *t, int phase) {
    /* a's phases are the query's when cached */
    if (phase == TK_SORT_A && t->cached) phase = TK_SORT_B;
    if (phase == TK_JOIN_A && !t->sorted_joins) phase = TK_UNIQUE_A;
    if (phase == TK_JOIN_A && t->cached) phase = TK_JOIN_B;
    if (phase == TK_UNIQUE_A && !t->sets) phase = TK_DONE;
    if (phase == TK_UNIQUE_A && t->cached) phase = TK_UNIQUE_B;
    t->phase = phase;
    t->cmp_at = 0;
    t->i = t->j = 0;
    if (phase == TK_SORT_A || phase == TK_SORT_B) {
        bool a = phase == TK_SORT_A;
        t->src = a ? t->ta : t->tb;
        t->dst = a ? t->aux_a : t->aux_b;
        t->count = a ? t->a_count : t->b_count;
        t->width = 1;
        t->lo = 0;
        t->merging = false;
    } else if (phase == TK_UNIQUE_A || phase == TK_UNIQUE_B) {
        t->i = t->j = 1; /* the first token is kept */
    }
}

/* A bottom-up merge sort's passes: runs of t->width merged pairwise from
 * src into dst, then the other way with twice the width; stable. true
 * once sorted (in t->src). */
static bool merge_sort(wb_fz_tokens *t, wb_fz_meter *g) {
    for (;;) {
        if (t->width >= t->count) return true;
        if (!t->merging) {
            if (t->lo >= t->count) {
                wb_fz_token *x = t->src;
                t->src = t->dst;
                t->dst = x;
                t->width *= 2;
                t->lo = 0;
                continue;
            }
            t->li = t->out = t->lo;
            t->ri = min_size(t->lo + t->width, t->count);
            t->merging = true;
        }
        size_t mid = min_size(t->lo + t->width, t->count);
        size_t hi = min_size(t->lo + 2 * t->width, t->count);
        /* the walk in locals: a token's length, stored, could be t's */
        size_t li = t->li, ri = t->ri, out = t->out;
        const wb_fz_token *src = t->src;
        wb_fz_token *dst = t->dst;
        bool more = false;
        while (li < mid && ri < hi) {
            if (g->spent >= g->budget) {
                more = true;
                break;
            }
            int c = compare_metered(t, &src[li], &src[ri], SORT_COMPARE, g);
            if (c == CMP_MORE) {
                more = true;
                break;
            }
            dst[out++] = c <= 0 ? src[li++] : src[ri++];
        }
        t->li = li;
        t->ri = ri;
        t->out = out;
        if (more) return false;
        /* the rest of the run left over, moved as it is */
        while (t->li < mid || t->ri < hi) {
            uint64_t r = wb_fz_room(g);
            if (r == 0) return false;
            size_t *from = t->li < mid ? &t->li : &t->ri, end = t->li < mid ? mid : hi;
            size_t k = min_size(end - *from, wb_fz_allowance(r, MOVE_TOKENS));
            memcpy(t->dst + t->out, t->src + *from, k * sizeof *t->dst);
            t->out += k;
            *from += k;
            g->spent += 1 + k / MOVE_TOKENS;
        }
        t->merging = false;
        t->lo += 2 * t->width;
    }
}

/* Sorted tokens joined by single spaces into seq. */
static bool join_tokens(wb_fz_tokens *t, const wb_fz_token *x, size_t count, uint32_t *seq,
                        size_t *len, wb_fz_meter *g) {
    for (;;) {
        if (!pump_copy(t, g)) return false;
        if (t->i == count) return true;
        if (g->spent >= g->budget) return false;
        emit(t, seq, len, &x[t->i++], g);
    }
}

/* Sorted tokens without repeats, in place (t->i kept, t->j the next);
 * *kept their number once done. */
static bool unique(wb_fz_tokens *t, wb_fz_token *x, size_t count, size_t *kept, wb_fz_meter *g) {
    if (count == 0) t->i = t->j = 0;
    while (t->j < count) {
        if (g->spent >= g->budget) return false;
        int c = compare_metered(t, &x[t->i - 1], &x[t->j], WALK_COMPARE, g);
        if (c == CMP_MORE) return false;
        if (c != 0) x[t->i++] = x[t->j];
        t->j++;
    }
    *kept = t->i;
    return true;
}

/* The token sets (sorted, unique) walked together: the intersection's
 * count and joined length, each difference joined. */
static bool split_sets(wb_fz_tokens *t, wb_fz_meter *g) {
    for (;;) {
        if (!pump_copy(t, g)) return false;
        if (t->i == t->ua && t->j == t->ub) break;
        if (g->spent >= g->budget) return false;
        int c = t->i == t->ua   ? 1
                : t->j == t->ub ? -1
                                : compare_metered(t, &t->ta[t->i], &t->tb[t->j], WALK_COMPARE, g);
        if (c == CMP_MORE) return false;
        if (c == 0) {
            t->sect_count++;
            t->sect_len += t->ta[t->i].len;
            t->i++;
            t->j++;
        } else if (c < 0) {
            emit(t, t->diff_ab, &t->diff_abl, &t->ta[t->i++], g);
            t->ab_count++;
        } else {
            emit(t, t->diff_ba, &t->diff_bal, &t->tb[t->j++], g);
            t->ba_count++;
        }
    }
    if (t->sect_count > 0) t->sect_len += t->sect_count - 1;
    return true;
}

/* The token work a budget at a time; true once done or failed (out of
 * memory: s->failed). */
bool wb_fz_tokens_step(wb_fz *s, wb_fz_meter *g) {
    wb_fz_tokens *t = &s->tk;
    for (;;) {
        switch (t->phase) {
        case TK_COUNT:
            if (!scan(s, false, g)) return false;
            t->phase = TK_ALLOC;
            break;
        case TK_ALLOC:
            if (g->spent >= g->budget) return false;
            g->spent += 1;
            if (!allocate_tokens(s)) {
                s->failed = true;
                return true;
            }
            t->phase = TK_SPLIT;
            break;
        case TK_SPLIT:
            if (!scan(s, true, g)) return false;
            enter(t, TK_SORT_A);
            break;
        case TK_SORT_A:
        case TK_SORT_B: {
            if (!merge_sort(t, g)) return false;
            bool a = t->phase == TK_SORT_A;
            *(a ? &t->ta : &t->tb) = t->src;
            enter(t, a ? TK_SORT_B : TK_JOIN_A);
            break;
        }
        case TK_JOIN_A:
            if (!join_tokens(t, t->ta, t->a_count, t->sorted_a, &t->sorted_al, g)) return false;
            enter(t, TK_JOIN_B);
            break;
        case TK_JOIN_B:
            if (!join_tokens(t, t->tb, t->b_count, t->sorted_b, &t->sorted_bl, g)) return false;
            enter(t, TK_UNIQUE_A);
            break;
        case TK_UNIQUE_A:
            if (!unique(t, t->ta, t->a_count, &t->ua, g)) return false;
            enter(t, TK_UNIQUE_B);
            break;
        case TK_UNIQUE_B:
            if (!unique(t, t->tb, t->b_count, &t->ub, g)) return false;
            enter(t, TK_SETS);
            break;
        case TK_SETS:
            if (!split_sets(t, g)) return false;
            t->ua_count = t->ua == 0 || t->ub == 0 ? 0 : t->ua + t->ub;
            enter(t, TK_DONE);
            break;
        default:
            return true;
        }
    }
}

/* Starts the token work: short inputs in the state, split at once
 * (their tokens' room from the lengths), long ones counted first. */
void wb_fz_tokens_start(wb_fz *s) {
    wb_fz_tokens *t = &s->tk;
    memset(t, 0, sizeof *t);
    wb_fz_scorer scorer = s->o.scorer;
    t->sorted_joins = scorer != WB_FZ_TOKEN_SET_RATIO && scorer != WB_FZ_PARTIAL_TOKEN_SET_RATIO;
    t->sets = scorer != WB_FZ_TOKEN_SORT_RATIO && scorer != WB_FZ_PARTIAL_TOKEN_SORT_RATIO;
    t->start = SIZE_MAX;
    t->cached = s->query_tokens != NULL;
    s->tokenizing = true;
    size_t m = s->m, n = s->n;
    if (t->cached) t->at = m; /* only b is scanned (counted, split) */
    if (m + n > WB_FZ_SMALL / 2) {
        /* up to a few thousand symbols, the blocks are sized by the
         * lengths (a token and a space at least per token: m / 2 + 1),
         * at most 16 bytes a symbol, rather than counted by a scan */
        if (m + n <= UNCOUNTED) {
            t->a_count = m / 2 + 1;
            t->b_count = n / 2 + 1;
            t->phase = TK_ALLOC;
        } else {
            t->phase = TK_COUNT;
        }
        return;
    }
    size_t ra = t->cached ? 0 : m / 2 + 1, rb = n / 2 + 1;
    t->ta = s->small_tokens;
    t->tb = t->ta + ra;
    t->aux_a = t->tb + rb;
    t->aux_b = t->aux_a + ra;
    place_derived(s, s->small);
    if (t->cached) take_query(s);
    t->phase = TK_SPLIT;
}

void wb_fz_query_tokens_start(wb_fz *q, const wb_fz_options *o, const uint32_t *a, size_t m) {
    /* token_ratio's work (every phase but for the parts) of a against
     * nothing: b's phases are empty */
    wb_fz_options tokens = *o;
    tokens.scorer = WB_FZ_TOKEN_RATIO;
    wb_fz_start(q, &tokens, a, m, a, 0);
}

bool wb_fz_query_tokens_step(wb_fz *q, uint64_t budget, uint64_t *used) {
    wb_fz_meter g = {budget, 0};
    bool done = wb_fz_tokens_step(q, &g);
    *used += g.spent;
    return done;
}

uint64_t wb_fz_query_tokens_units(const wb_fz_options *o, size_t m) {
    wb_fz_options tokens = *o;
    tokens.scorer = WB_FZ_TOKEN_RATIO;
    return wb_fz_tokens_units(&tokens, m, 0);
}

/* The token work ends: its token blocks go (the derived sequences stay). */
void wb_fz_tokens_end(wb_fz *s) {
    wb_fz_tokens *t = &s->tk;
    wb_fz_give_back(s, t->block, t->block_bytes);
    s->owned_bytes -= t->block_bytes;
    t->block = NULL;
    t->block_bytes = 0;
    s->tokenizing = false;
}

static bool uses_tokens(wb_fz_scorer scorer) {
    return scorer >= WB_FZ_TOKEN_SORT_RATIO && scorer <= WB_FZ_WRATIO;
}

/* Whether the scorer has token work for this pair (WRatio has none when a
 * side is empty: it is 0). */
bool wb_fz_needs_tokens(const wb_fz_options *o, size_t m, size_t n) {
    return uses_tokens(o->scorer) && !(o->scorer == WB_FZ_WRATIO && (m == 0 || n == 0));
}

/* The units of the token work (step_tokens) at most, and of comparing
 * parts (same_as_earlier). With L = m + n symbols and W tokens at most
 * (L / 2 + 2): counting and splitting scan L symbols each; a merge pass
 * moves each token once, and each of its comparisons (W at most) reads
 * no more than the symbols of the token it moves, and one more (L + W
 * in all); there are log2 W passes a side, each merge at most a unit of
 * rounding more; the joins copy L symbols and emit W tokens, twice; the
 * repeats and the sets compare W pairs, reading L + W symbols, and the
 * sets emit W tokens, L symbols. Parts are compared with up to
 * WB_FZ_PARTS - 1 earlier ones, L symbols each. */
uint64_t wb_fz_tokens_units(const wb_fz_options *o, size_t m, size_t n) {
    uint64_t compares = 0;
    if (o->scorer < WB_FZ_RATIO) return 0;
    uint64_t l = (uint64_t)m + n;
    compares = WB_FZ_PARTS * WB_FZ_PARTS * (2 + l / WB_FZ_SAME_SYMBOLS);
    if (!wb_fz_needs_tokens(o, m, n)) return compares;
    uint64_t w = l / 2 + 2, passes = 1;
    while (passes < 63 && ((uint64_t)1 << passes) < w)
        passes++;
    uint64_t scans = 8 + l / COUNT_SYMBOLS + l / SPLIT_SYMBOLS;
    uint64_t reads = (l + w) / READ_SYMBOLS + 4;
    uint64_t sorts = saturating_add(
        saturating_product(passes, SORT_COMPARE * w + reads + w / MOVE_TOKENS + 4), 2 * w);
    uint64_t emits = (EMIT_UNITS + 2) * w + l / JOIN_SYMBOLS + 4;
    uint64_t joins = 2 * emits;
    uint64_t sets = 3 * (WALK_COMPARE * w + reads) + emits;
    return saturating_add(saturating_add(compares, scans + joins + sets + 8), sorts);
}

/* An index's candidates with their tokens sorted, a budget at a time
 * (sorted_set.h). */
#include "sorted_set.h"

#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the scan of a short candidate reads words as little-endian bytes"
#endif

enum {
    NEXT,    /* candidate i starts (a short one is made whole) */
    COUNT,   /* a long one's tokens counted */
    COLLECT, /* and noted */
    SORT,    /* merged, runs of `width` at a time */
    WRITE,   /* its sorted form written */
    PREFIX,  /* the candidates before the first that differs copied */
    DONE,
};

/* units: bytes scanned, bytes compared or copied, per unit */
#define SCAN_BYTES 4
#define COPY_BYTES 32
/* offsets copied per unit */
#define COPY_OFFSETS 4
/* a candidate of at most SHORT_MOST bytes is made in one go, its tokens
 * on the stack, when the room left covers its worst case */
#define SHORT_MOST   64
#define SHORT_TOKENS (SHORT_MOST / 2 + 1)

/* the separators: ' ', 0x09-0x0D and 0x1C-0x1F (wb_fz_ascii_space), as
 * bits of a word */
#define SEPARATORS ((UINT64_C(1) << ' ') | (UINT64_C(0x1f) << 9) | (UINT64_C(0xf) << 0x1c))

static inline bool is_separator(uint8_t c) {
    return c <= ' ' && ((SEPARATORS >> c) & 1);
}

/* How many of something `room` units allow, `per` a unit. */
static size_t allowance(uint64_t room, size_t per) {
    return room >= SIZE_MAX / per ? SIZE_MAX : (size_t)room * per;
}

static size_t least(size_t a, size_t b) {
    return a < b ? a : b;
}

/* ceil(log2(k)): the merge passes over k tokens */
static unsigned passes(uint64_t k) {
    return k <= 1 ? 0 : 64 - (unsigned)__builtin_clzll(k - 1);
}

void wb_fz_sorted_begin(wb_fz_sorted *s, const wb_search_set *set, void *(*alloc)(size_t bytes),
                        void (*release)(void *block, size_t bytes)) {
    memset(s, 0, sizeof *s);
    s->set = set;
    s->alloc = alloc;
    s->release = release;
    s->first_changed = SIZE_MAX;
    s->phase = NEXT;
}

static void give_back(wb_fz_sorted *s, void *block, size_t bytes) {
    if (block) s->release(block, bytes);
}

static void free_tokens(wb_fz_sorted *s) {
    give_back(s, s->tokens, s->cap * sizeof *s->tokens);
    give_back(s, s->spare, s->cap * sizeof *s->spare);
    s->tokens = s->spare = NULL;
    s->cap = 0;
}

void wb_fz_sorted_free(wb_fz_sorted *s) {
    free_tokens(s);
    give_back(s, s->bytes, s->room);
    give_back(s, s->offsets, s->offsets_room);
    s->bytes = NULL;
    s->offsets = NULL;
    s->room = s->offsets_room = 0;
}

static uint64_t failed(wb_fz_sorted *s) {
    wb_fz_sorted_free(s);
    s->status = WB_FZ_SORTED_ENOMEM;
    s->phase = DONE;
    return 1;
}

/* Candidate i is the first that differs: the output is allocated, and the
 * candidates before it are copied before going on with `after`. */
static uint64_t start_output(wb_fz_sorted *s, int after) {
    const wb_search_set *set = s->set;
    size_t total = (size_t)set->offsets[set->count];
    s->room = total ? total : 1;
    s->offsets_room = (set->count + 1) * sizeof *s->offsets;
    s->bytes = s->alloc(s->room);
    s->offsets = s->alloc(s->offsets_room);
    if (!s->bytes || !s->offsets) return failed(s);
    s->first_changed = s->i;
    s->prefix_bytes = s->prefix_offsets = 0;
    s->after_prefix = after;
    s->phase = PREFIX;
    return 1;
}

/* -1, 0, 1 as token x orders before, with, after y (the bytes from `from`
 * on, known equal before), comparing at most `most` bytes (at least one
 * where any are left): 2 when not known yet, *from then moved on. *units
 * gets one, and one per COPY_BYTES bytes compared. */
static int compare_tokens(const uint8_t *bytes, const wb_fz_sorted_token *x,
                          const wb_fz_sorted_token *y, size_t *from, size_t most, uint64_t *units) {
    size_t n = least(x->len, y->len);
    *units += 1;
    /* most tokens differ at their first byte */
    if (*from == 0 && n > 0 && bytes[x->at] != bytes[y->at])
        return bytes[x->at] < bytes[y->at] ? -1 : 1;
    if (*from < n) {
        size_t chunk = least(n - *from, most ? most : 1);
        int c = memcmp(bytes + x->at + *from, bytes + y->at + *from, chunk);
        *units += chunk / COPY_BYTES;
        if (c) return c < 0 ? -1 : 1;
        *from += chunk;
        if (*from < n) return 2;
    }
    return (x->len > y->len) - (x->len < y->len);
}

/* ---- a short candidate, whole --------------------------------------------------- */

/* The units of a short candidate of n bytes at most: its scan, its tokens
 * (n / 2 + 1 at most) merged, each merge pass moving and comparing them,
 * its writing. */
static uint64_t short_bound(size_t n) {
    uint64_t k = n / 2 + 1;
    return 4 + n / SCAN_BYTES + passes(k) * (k * (2 + n / COPY_BYTES) + k) + n / COPY_BYTES + k;
}

/* Sorts k tokens (through tmp) by a merge, stable; *changed set when the
 * order changes. */
static uint64_t sort_short(wb_fz_sorted_token *t, wb_fz_sorted_token *tmp, size_t k,
                           const uint8_t *bytes, bool *changed) {
    uint64_t units = 0;
    if (k == 2) { /* two words, the most common */
        size_t from = 0;
        if (compare_tokens(bytes, &t[0], &t[1], &from, SIZE_MAX, &units) > 0) {
            wb_fz_sorted_token swap = t[0];
            t[0] = t[1];
            t[1] = swap;
            *changed = true;
        }
        return units + 2;
    }
    wb_fz_sorted_token *src = t, *dst = tmp;
    for (size_t w = 1; w < k; w *= 2) {
        for (size_t lo = 0; lo < k; lo += 2 * w) {
            size_t mid = least(lo + w, k), hi = least(lo + 2 * w, k), a = lo, b = mid, o = lo;
            while (a < mid && b < hi) {
                size_t from = 0;
                if (compare_tokens(bytes, &src[a], &src[b], &from, SIZE_MAX, &units) <= 0) {
                    dst[o++] = src[a++];
                } else {
                    dst[o++] = src[b++];
                    *changed = true;
                }
            }
            while (a < mid)
                dst[o++] = src[a++];
            while (b < hi)
                dst[o++] = src[b++];
            units += hi - lo;
        }
        wb_fz_sorted_token *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != t) memcpy(t, src, k * sizeof *t);
    return units;
}

/* The tokens written joined by one space; the units. */
static uint64_t put_tokens(wb_fz_sorted *s, const wb_fz_sorted_token *t, size_t k) {
    size_t start = s->out;
    for (size_t j = 0; j < k; j++) {
        if (j > 0) s->bytes[s->out++] = ' ';
        if (t[j].len) memcpy(s->bytes + s->out, s->set->bytes + t[j].at, t[j].len);
        s->out += t[j].len;
    }
    return 1 + (s->out - start) / COPY_BYTES;
}

/* A separator at t[p]: the token before it (from t[*open] on) noted. */
static inline void short_separator(const uint8_t *t, size_t from, size_t p, wb_fz_sorted_token *tok,
                                   size_t *k, size_t *letters, size_t *open, bool *changed) {
    if (t[p] != ' ') *changed = true;
    if (p > *open) {
        tok[(*k)++] = (wb_fz_sorted_token){from + *open, p - *open};
        *letters += p - *open;
    }
    *open = p + 1;
}

static uint64_t short_candidate(wb_fz_sorted *s, size_t from, size_t n) {
    const uint8_t *bytes = s->set->bytes, *t = bytes + from;
    wb_fz_sorted_token tok[SHORT_TOKENS], tmp[SHORT_TOKENS];
    size_t k = 0, letters = 0;
    bool changed = false;
    uint64_t units = 2 + n / SCAN_BYTES;
    /* the bytes up to ' ' (every separator is one) found eight at a
     * time: a byte below 0x21 sets its high bit in the borrow of
     * subtracting 0x21 (a byte above one may too: each is looked at) */
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    size_t open = 0, base = 0;
    for (; base + 8 <= n; base += 8) {
        uint64_t w;
        memcpy(&w, t + base, 8);
        for (uint64_t m = (w - ones * 0x21) & ~w & highs; m; m &= m - 1) {
            size_t p = base + (size_t)__builtin_ctzll(m) / 8;
            if (is_separator(t[p])) short_separator(t, from, p, tok, &k, &letters, &open, &changed);
        }
    }
    for (size_t p = base; p < n; p++) /* the last bytes */
        if (t[p] <= ' ' && is_separator(t[p]))
            short_separator(t, from, p, tok, &k, &letters, &open, &changed);
    if (n > open) {
        tok[k++] = (wb_fz_sorted_token){from + open, n - open};
        letters += n - open;
    }
    /* a separator other than one space between tokens goes */
    changed = changed || (k == 0 ? n != 0 : letters + k - 1 != n);
    if (k >= 2) units += sort_short(tok, tmp, k, bytes, &changed);
    /* the first that differs: the candidate is made again once the ones
     * before it are copied */
    if (changed && s->first_changed == SIZE_MAX) return units + start_output(s, NEXT);
    if (s->first_changed != SIZE_MAX) {
        if (changed)
            units += put_tokens(s, tok, k);
        else
            units += put_tokens(s, &(wb_fz_sorted_token){from, n}, 1);
        s->offsets[s->i + 1] = s->out;
    }
    s->i++;
    return units;
}

/* ---- a long candidate, over steps ------------------------------------------------ */

/* The candidate's sorted form is known to differ or not (s->changed), its
 * tokens in s->write: written, or passed over while no candidate
 * differs. */
static void decide(wb_fz_sorted *s) {
    const uint64_t *offsets = s->set->offsets;
    s->wk = s->woff = 0;
    if (s->changed && s->first_changed == SIZE_MAX) {
        start_output(s, WRITE);
        return;
    }
    if (s->first_changed == SIZE_MAX) {
        s->i++;
        s->phase = NEXT;
        return;
    }
    if (!s->changed) {
        s->one = (wb_fz_sorted_token){(size_t)offsets[s->i],
                                      (size_t)(offsets[s->i + 1] - offsets[s->i])};
        s->write = &s->one;
        s->write_count = 1;
    }
    s->phase = WRITE;
}

/* Scans the candidate from s->pos on, at most `room` units' worth; with
 * `collect`, notes each token in s->tokens, else counts them (noting the
 * first in s->one). True once at its end. */
static bool scan(wb_fz_sorted *s, uint64_t room, bool collect, uint64_t *units) {
    const uint8_t *bytes = s->set->bytes;
    size_t end = (size_t)s->set->offsets[s->i + 1];
    size_t stop =
        end - s->pos > allowance(room, SCAN_BYTES) ? s->pos + allowance(room, SCAN_BYTES) : end;
    *units += 1 + (stop - s->pos) / SCAN_BYTES;
    for (size_t p = s->pos; p <= stop; p++) {
        /* a byte of a token; the end of one at a separator, or at the
         * candidate's end */
        if (p < stop && !is_separator(bytes[p])) {
            if (s->token_from == SIZE_MAX) s->token_from = p;
            continue;
        }
        if (p == stop && p < end) break; /* the next step's */
        if (p < end && bytes[p] != ' ') s->odd = true;
        if (s->token_from != SIZE_MAX) {
            wb_fz_sorted_token t = {s->token_from, p - s->token_from};
            if (collect) {
                s->tokens[s->filled++] = t;
            } else {
                if (s->k++ == 0) s->one = t;
                s->letters += t.len;
            }
            s->token_from = SIZE_MAX;
        }
    }
    s->pos = stop;
    return stop == end;
}

static uint64_t count_step(wb_fz_sorted *s, uint64_t room) {
    uint64_t units = 0;
    if (!scan(s, room, false, &units)) return units;
    const uint64_t *offsets = s->set->offsets;
    size_t n = (size_t)(offsets[s->i + 1] - offsets[s->i]);
    s->changed = s->odd || (s->k == 0 ? n != 0 : s->letters + s->k - 1 != n);
    if (s->k <= 1) {
        s->write = &s->one;
        s->write_count = s->k;
        decide(s);
        return units;
    }
    if (s->cap < s->k) {
        free_tokens(s);
        if (s->k > SIZE_MAX / sizeof *s->tokens) return failed(s);
        s->tokens = s->alloc(s->k * sizeof *s->tokens);
        s->spare = s->alloc(s->k * sizeof *s->spare);
        s->cap = s->k;
        if (!s->tokens || !s->spare) return failed(s);
    }
    s->pos = (size_t)offsets[s->i];
    s->token_from = SIZE_MAX;
    s->filled = 0;
    s->phase = COLLECT;
    return units + 1;
}

static uint64_t collect_step(wb_fz_sorted *s, uint64_t room) {
    uint64_t units = 0;
    if (!scan(s, room, true, &units)) return units;
    s->width = 1;
    s->lo = s->a = s->o = s->cmp = 0;
    s->b = 1;
    s->phase = SORT;
    return units;
}

/* Bottom-up merges of runs of s->width tokens from s->tokens into
 * s->spare, the two swapped after each pass. */
static uint64_t sort_step(wb_fz_sorted *s, uint64_t room) {
    const uint8_t *bytes = s->set->bytes;
    size_t k = s->k;
    uint64_t units = 0;
    while (units < room) {
        if (s->width >= k) {
            s->write = s->tokens;
            s->write_count = k;
            decide(s);
            return units + 1;
        }
        wb_fz_sorted_token *src = s->tokens, *dst = s->spare;
        size_t mid = least(s->lo + s->width, k), hi = least(s->lo + 2 * s->width, k);
        if (s->a < mid && s->b < hi) {
            size_t most = allowance(room - units, COPY_BYTES);
            int c = compare_tokens(bytes, &src[s->a], &src[s->b], &s->cmp, most, &units);
            if (c == 2) continue;
            s->cmp = 0;
            if (c <= 0) {
                dst[s->o++] = src[s->a++];
            } else {
                dst[s->o++] = src[s->b++];
                s->changed = true;
            }
            units++;
        } else if (s->a < mid || s->b < hi) {
            /* what is left of one run, as it is */
            size_t *from = s->a < mid ? &s->a : &s->b, to = s->a < mid ? mid : hi;
            size_t n = least(to - *from, allowance(room - units, 1));
            memcpy(dst + s->o, src + *from, n * sizeof *dst);
            s->o += n;
            *from += n;
            units += n;
        } else {
            s->lo = hi;
            if (s->lo >= k) { /* a pass done */
                s->tokens = dst;
                s->spare = src;
                s->width *= 2;
                s->lo = 0;
            }
            s->a = s->o = s->lo;
            s->b = least(s->lo + s->width, k);
            units++;
        }
    }
    return units;
}

static uint64_t write_step(wb_fz_sorted *s, uint64_t room) {
    uint64_t units = 0;
    while (s->wk < s->write_count && units < room) {
        const wb_fz_sorted_token *t = &s->write[s->wk];
        size_t n = least(t->len - s->woff, allowance(room - units, COPY_BYTES));
        if (n) memcpy(s->bytes + s->out, s->set->bytes + t->at + s->woff, n);
        s->out += n;
        s->woff += n;
        units += 1 + n / COPY_BYTES;
        if (s->woff == t->len) {
            s->woff = 0;
            if (++s->wk < s->write_count) s->bytes[s->out++] = ' ';
        }
    }
    if (s->wk == s->write_count) {
        s->offsets[s->i + 1] = s->out;
        s->i++;
        s->phase = NEXT;
    }
    return units ? units : 1;
}

static uint64_t prefix_step(wb_fz_sorted *s, uint64_t room) {
    const wb_search_set *set = s->set;
    size_t bytes = (size_t)set->offsets[s->first_changed], offsets = s->first_changed + 1;
    if (s->prefix_bytes < bytes) {
        size_t n = least(bytes - s->prefix_bytes, allowance(room, COPY_BYTES));
        memcpy(s->bytes + s->prefix_bytes, set->bytes + s->prefix_bytes, n);
        s->prefix_bytes += n;
        return 1 + n / COPY_BYTES;
    }
    if (s->prefix_offsets < offsets) {
        size_t n = least(offsets - s->prefix_offsets, allowance(room, COPY_OFFSETS));
        memcpy(s->offsets + s->prefix_offsets, set->offsets + s->prefix_offsets,
               n * sizeof *s->offsets);
        s->prefix_offsets += n;
        return 1 + n / COPY_OFFSETS;
    }
    s->out = bytes;
    s->phase = s->after_prefix;
    return 1;
}

/* The end, or a long candidate (or a short one a step's whole budget
 * does not cover) started. */
static uint64_t next_step(wb_fz_sorted *s) {
    const wb_search_set *set = s->set;
    if (s->i == set->count) {
        s->status = s->first_changed == SIZE_MAX ? WB_FZ_SORTED_SAME : WB_FZ_SORTED_MADE;
        s->phase = DONE;
        free_tokens(s);
        return 1;
    }
    s->pos = (size_t)set->offsets[s->i];
    s->token_from = SIZE_MAX;
    s->k = s->letters = 0;
    s->odd = false;
    s->phase = COUNT;
    return 1;
}

wb_fz_sorted_status wb_fz_sorted_step(wb_fz_sorted *s, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (budget == 0) budget = 1;
    while (s->phase != DONE && spent < budget) {
        uint64_t room = budget - spent;
        switch (s->phase) {
        case NEXT:
            if (s->i < s->set->count) {
                size_t n = (size_t)(s->set->offsets[s->i + 1] - s->set->offsets[s->i]);
                if (n <= SHORT_MOST && room >= short_bound(n)) {
                    spent += short_candidate(s, (size_t)s->set->offsets[s->i], n);
                    break;
                }
                /* a short one the room left does not cover starts the
                 * next step whole, not here in pieces */
                if (n <= SHORT_MOST && spent > 0) {
                    *used += spent;
                    return s->status;
                }
            }
            spent += next_step(s);
            break;
        case COUNT:
            spent += count_step(s, room);
            break;
        case COLLECT:
            spent += collect_step(s, room);
            break;
        case SORT:
            spent += sort_step(s, room);
            break;
        case WRITE:
            spent += write_step(s, room);
            break;
        default: /* PREFIX */
            spent += prefix_step(s, room);
            break;
        }
    }
    *used += spent;
    return s->status;
}

bool wb_fz_sorted_take(wb_fz_sorted *s, wb_fz_sorted_out *out) {
    if (s->status != WB_FZ_SORTED_MADE || !s->bytes) return false;
    memset(out, 0, sizeof *out);
    out->set.count = s->set->count;
    out->set.bytes = s->bytes;
    out->set.offsets = s->offsets;
    /* the separators are ASCII: the same bytes above 0x7f stay */
    out->set.ascii = s->set->ascii;
    out->bytes = s->bytes;
    out->offsets = s->offsets;
    out->room = s->room;
    out->offsets_room = s->offsets_room;
    s->bytes = NULL;
    s->offsets = NULL;
    s->room = s->offsets_room = 0;
    return true;
}

uint64_t wb_fz_sorted_units(size_t count, uint64_t bytes) {
    /* a candidate of the mean length, sorted with the merges of its
     * tokens at most (n / 2 + 1), each pass moving and comparing them
     * (3 units a token, 1 per 32 bytes compared), its scans, its writing,
     * and the copy of the candidates before the first that differs */
    uint64_t mean = count ? bytes / count : 0, k = mean / 2 + 1;
    uint64_t per_byte = 2 + passes(k) * 2;
    /* and the first that differs made twice, if short */
    return (uint64_t)count * (8 + passes(k) * 4) + bytes * per_byte + bytes / COPY_BYTES +
           (uint64_t)count / COPY_OFFSETS + short_bound(SHORT_MOST);
}

/*
 * A search's steps (search.h): candidates taken one by one or into batches
 * of lanes, the pair core for the rest, the nearest hits kept and sorted.
 * The set is in search_set.c, the search's set-up and release in
 * search_init.c.
 */
#include "search.h"

#include "../metric/levenshtein_text.h"
#include "../metric/levenshtein_word.h"

#include <stdlib.h>
#include <string.h>

/* units of a vector step of a batch (see search.h) */
#define WB_SEARCH_STEP_UNITS 2
/* the longest candidate taken in one go against a query of one word: past
 * it, the resumable pair core (a slice is never longer than its budget) */
#define WB_SEARCH_WORD_LONGEST 4096
/* byte mode: a query of up to this many bytes has its match table built
 * once (64 KiB: a 2 MiB table), used for every candidate of up to as many
 * bytes that takes the pair core; past it, the pair core builds the table
 * of the shorter side per candidate, after stripping the common affixes */
#define WB_SEARCH_PATTERN_LONGEST 65536

uint64_t wb_search_predict(size_t count, uint64_t bytes, size_t qlen, bool codepoints,
                           bool prepared) {
    if (codepoints || qlen == 0) {
        uint64_t words = qlen <= 64 ? 1 : (qlen + 63) / 64;
        return (bytes + count) * words;
    }
    /* batches of about 16 lanes: a vector step per query byte, and one unit
     * per 2 lanes once finished; without batches made once, one unit per
     * candidate and per 2 of its bytes put in a batch */
    uint64_t steps = (uint64_t)count / 16 + 1;
    return count / 2 + (prepared ? 0 : count + bytes / 2) + steps * WB_SEARCH_STEP_UNITS * qlen;
}

/* The distance from the query (1..64 bytes, match table peq) to t, or
 * bound + 1 once it cannot end at or under bound. */
static size_t myers_word(const uint64_t peq[256], size_t m, const uint8_t *t, size_t n,
                         size_t bound) {
    size_t diff = n > m ? n - m : m - n;
    if (diff > bound) return bound + 1;
    uint64_t vp = m == 64 ? UINT64_MAX : (UINT64_C(1) << m) - 1, vn = 0;
    uint64_t last = UINT64_C(1) << (m - 1);
    size_t score = m;
    for (size_t j = 0; j < n; j++) {
        score += (size_t)wb_lev_word_column(peq[t[j]], &vp, &vn, last);
        /* the score falls by at most one per remaining byte */
        size_t left = n - 1 - j;
        if (score > bound && score - bound > left) return bound + 1;
    }
    return score;
}

/* a pop of the sorting heap: about 3 ns a level, some 20 levels */
#define SORT_POP_UNITS 16

static bool hit_less(const wb_search_hit *a, const wb_search_hit *b) {
    return a->distance < b->distance || (a->distance == b->distance && a->index < b->index);
}

static void heap_sift_down(wb_search_hit *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < n && hit_less(&h[top], &h[l])) top = l;
        if (r < n && hit_less(&h[top], &h[r])) top = r;
        if (top == i) return;
        wb_search_hit tmp = h[i];
        h[i] = h[top];
        h[top] = tmp;
        i = top;
    }
}

static void heap_push(wb_search_hit *h, size_t *n, wb_search_hit hit) {
    size_t i = (*n)++;
    h[i] = hit;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!hit_less(&h[parent], &h[i])) break;
        wb_search_hit tmp = h[i];
        h[i] = h[parent];
        h[parent] = tmp;
        i = parent;
    }
}

/* The caller's cutoff, SIZE_MAX - 1 at most (so that bound + 1 never
 * wraps). */
static size_t caller_bound(const wb_search *s) {
    return s->max_distance == WB_SEARCH_NO_LIMIT ? SIZE_MAX - 1 : s->max_distance;
}

/* The cutoff for a candidate not yet started (its index is past every
 * hit kept): the caller's, and in nearest once the heap is full, under
 * the worst hit kept (a tie loses to the earlier candidate). *none when
 * no such candidate can enter any more. */
static size_t current_bound(const wb_search *s, bool *none) {
    size_t bound = caller_bound(s);
    *none = false;
    if (s->limit && s->heap_len == s->limit) {
        size_t worst = s->heap[0].distance;
        if (worst == 0)
            *none = true;
        else if (worst - 1 < bound)
            bound = worst - 1;
    }
    return bound;
}

/* The cutoff for a batch, whose candidates may come before hits kept: a
 * tie with the worst hit may still enter. */
static size_t batch_bound(const wb_search *s) {
    size_t bound = caller_bound(s);
    if (s->limit && s->heap_len == s->limit && s->heap[0].distance < bound)
        bound = s->heap[0].distance;
    return bound;
}

/* A distance past the 32-bit cells: the search ends there (the step
 * sees the status), never a capped value. */
static void too_far(wb_search *s, size_t i) {
    if (s->status != WB_SEARCH_OK) return;
    s->status = WB_SEARCH_ETOO_FAR;
    s->failed_at = i;
}

/* Records candidate i at distance d (d > bound: bound + 1, or more). */
static inline void store_distance(wb_search *s, size_t i, size_t d) {
    if (s->max_distance != WB_SEARCH_NO_LIMIT && d > s->max_distance) d = s->max_distance + 1;
    if (d > UINT32_MAX) {
        too_far(s, i);
        return;
    }
    s->distances[i] = (uint32_t)d;
}

static void record(wb_search *s, size_t i, size_t d) {
    if (s->limit == 0) {
        store_distance(s, i, d);
        return;
    }
    if (s->max_distance != WB_SEARCH_NO_LIMIT && d > s->max_distance) return;
    if (d > UINT32_MAX) {
        too_far(s, i);
        return;
    }
    wb_search_hit hit = {.distance = (uint32_t)d, .index = i};
    if (s->heap_len < s->limit) {
        heap_push(s->heap, &s->heap_len, hit);
    } else if (hit_less(&hit, &s->heap[0])) {
        s->heap[0] = hit;
        heap_sift_down(s->heap, s->heap_len, 0);
    }
}

/* Fills batch b of `slot`'s width with `used` candidates from `from`, in
 * the query's table `which`. */
static void load_batch(wb_search *s, wb_lanes *b, unsigned slot, const uint64_t *from,
                       unsigned used, unsigned which) {
    b->width = 8u << slot;
    b->used = used;
    memcpy(b->index, from, used * sizeof b->index[0]);
    wb_lanes_load(s->kernel, b, &s->lanes, which, s->set->bytes, s->set->offsets);
}

/* Starts the candidates waiting in `slot`: as many batches in flight
 * as they fill, up to the group (4 or 2; of 3, 2), the last one maybe
 * partial; what does not fit waits on for the next start. */
static void start_batch(wb_search *s, unsigned slot) {
    unsigned count = wb_lanes_count(8u << slot), waiting = (unsigned)s->waiting_len[slot];
    unsigned batches = (waiting + count - 1) / count;
    s->flying = batches >= 4 && s->group == 4 ? 4 : batches >= 2 ? 2 : 1;
    unsigned taken = 0;
    for (unsigned i = 0; i < s->flying; i++) {
        unsigned used = waiting - taken < count ? waiting - taken : count;
        load_batch(s, &s->batch[i], slot, s->waiting[slot] + taken, used, i);
        taken += used;
        s->batch_table[i] = s->fetch_table[i] = s->lanes.table[i];
        s->batch_rows[i] = s->fetch_rows[i] = s->lanes.rows; /* their own rows: in the cache */
    }
    memmove(s->waiting[slot], s->waiting[slot] + taken, (waiting - taken) * sizeof **s->waiting);
    s->waiting_len[slot] = waiting - taken;
    s->running = true;
}

/* Records the lanes of a finished batch. */
/* distances: lane l's score (type T, lanes of its width) made a value by
 * VALUE into the candidate's place */
#define STORE_LANES(T, VALUE)                                                                      \
    for (unsigned l = 0; l < used; l++) {                                                          \
        T d;                                                                                       \
        memcpy(&d, score + (size_t)l * sizeof d, sizeof d);                                        \
        distances[index[l]] = VALUE;                                                               \
    }
/* every lane by its width, not through a switch per lane */
#define STORE_BY_WIDTH(VALUE)                                                                      \
    switch (b->width) {                                                                            \
    case 8:                                                                                        \
        STORE_LANES(uint8_t, VALUE)                                                                \
        break;                                                                                     \
    case 16:                                                                                       \
        STORE_LANES(uint16_t, VALUE)                                                               \
        break;                                                                                     \
    case 32:                                                                                       \
        STORE_LANES(uint32_t, VALUE)                                                               \
        break;                                                                                     \
    default:                                                                                       \
        STORE_LANES(uint64_t, VALUE)                                                               \
    }

static void finish_batch(wb_search *s, const wb_lanes *b) {
    const uint64_t *index = b->of_index ? b->of_index : b->index;
    /* in locals: the stores into distances could alias the batch */
    uint32_t *distances = s->distances;
    const unsigned char *score = b->score;
    unsigned used = b->used;
    if (b->op == WB_LANES_JARO) {
        /* matches and transpositions, from half the lane width to bit 8 */
        unsigned half = b->width / 2;
        uint64_t low = (UINT64_C(1) << half) - 1;
        STORE_BY_WIDTH((uint32_t)((d & low) | ((uint64_t)d >> half) << 8))
        return;
    }
    if (s->limit == 0) { /* distances: the caller's cutoff is the only bound */
        if (b->hopeless) {
            for (unsigned l = 0; l < b->used; l++)
                store_distance(s, (size_t)wb_lanes_candidate(b, l), b->bound + 1);
            return;
        }
        uint32_t cap = s->max_distance < UINT32_MAX ? (uint32_t)s->max_distance + 1 : UINT32_MAX;
        STORE_BY_WIDTH(d > cap ? cap : (uint32_t)d)
        return;
    }
    /* nearest: with every hit kept, a lane over the bound changes nothing */
    bool full = s->heap_len == s->limit;
    if (b->hopeless && full) return;
    for (unsigned l = 0; l < b->used; l++) {
        size_t d = b->hopeless ? b->bound + 1 : (size_t)wb_lanes_score(b, l);
        if (full && d > b->bound) continue;
        record(s, (size_t)wb_lanes_candidate(b, l), d);
    }
}

/* Advances the batches in flight by about `budget` units; returns the
 * units. Four go on together until all end; of two, once one ends, the
 * other goes on alone. */
static uint64_t run_batch(wb_search *s, uint64_t budget) {
    size_t bound = batch_bound(s), qlen = s->qlen;
    unsigned n = s->flying;
    size_t max_steps =
        budget / WB_SEARCH_STEP_UNITS / n ? (size_t)(budget / WB_SEARCH_STEP_UNITS / n) : 1;
    wb_lanes *b = s->batch;
    size_t steps;
    if (n == 4) {
        wb_lanes *const q[4] = {&b[0], &b[1], &b[2], &b[3]};
        steps = wb_lanes_run4(s->kernel, q, s->batch_table, s->batch_rows, s->fetch_table,
                              s->fetch_rows, s->query, qlen, bound, max_steps);
    } else if (n == 2) {
        steps =
            wb_lanes_run2(s->kernel, &b[0], s->batch_table[0], s->batch_rows[0], &b[1],
                          s->batch_table[1], s->batch_rows[1], s->query, qlen, bound, max_steps);
    } else {
        steps = wb_lanes_run(s->kernel, &b[0], s->batch_table[0], s->batch_rows[0], s->query, qlen,
                             bound, max_steps);
    }
    uint64_t units = n * WB_SEARCH_STEP_UNITS * (uint64_t)steps + 1;
    if (n == 4 && b[0].pos != qlen &&
        !(b[0].hopeless && b[1].hopeless && b[2].hopeless && b[3].hopeless))
        return units;
    /* the ended ones recorded, the others moved to the front */
    unsigned left = 0;
    for (unsigned i = 0; i < n; i++) {
        if (n == 4 || b[i].pos == qlen || b[i].hopeless) {
            finish_batch(s, &b[i]);
            units += b[i].used / 2;
        } else {
            if (left != i) {
                b[left] = b[i];
                s->batch_table[left] = s->batch_table[i];
                s->batch_rows[left] = s->batch_rows[i];
            }
            left++;
        }
    }
    s->flying = left;
    s->running = left > 0;
    return units;
}

/* |n - qlen|, the least distance of n bytes from the query's qlen, without
 * a branch: a list's lengths are as often over as under */
static inline size_t length_diff(size_t n, size_t qlen) {
    size_t sign = (size_t)0 - (size_t)(n < qlen);
    return ((n - qlen) ^ sign) - sign;
}

/* The least length difference between the query and a batch's candidates */
static size_t length_gap(const wb_lanes_batch *batch, size_t qlen) {
    return batch->max_len < qlen   ? qlen - batch->max_len
           : batch->min_len > qlen ? batch->min_len - qlen
                                   : 0;
}

/* Takes candidate i: records it, or puts it in a batch. Returns the units,
 * or 0 on an error (s->status set). */
static uint64_t take(wb_search *s, size_t i, size_t bound) {
    const wb_search_set *set = s->set;
    const uint8_t *t = set->bytes + set->offsets[i];
    size_t n = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    if (s->op != WB_SEARCH_LEVENSHTEIN) {
        /* only the batches compute the other operations */
        unsigned place = n <= WB_LANES_LONGEST ? s->lane_slot[n] : 0; /* 0: kernel off */
        if (place == 0) {
            s->distances[i] = WB_SEARCH_NOT_DONE;
            return 1;
        }
        unsigned slot = place - 1;
        s->waiting[slot][s->waiting_len[slot]++] = i;
        if (s->waiting_len[slot] == s->group * wb_lanes_count(8u << slot)) start_batch(s, slot);
        return 1 + n / 2;
    }
    if (!s->codepoints) {
        size_t diff = length_diff(n, s->qlen);
        if (diff > bound) { /* the length difference is the least distance */
            record(s, i, bound + 1);
            return 1;
        }
        if (n == 0 || s->qlen == 0) {
            record(s, i, diff);
            return 1;
        }
        unsigned place = n <= WB_LANES_LONGEST ? s->lane_slot[n] : 0; /* 0 when kernel is off */
        if (place) {
            unsigned slot = place - 1;
            s->waiting[slot][s->waiting_len[slot]++] = i;
            if (s->waiting_len[slot] == s->group * wb_lanes_count(8u << slot)) start_batch(s, slot);
            return 1 + n / 2;
        }
        if (bound <= WB_LEV_MBLEVEN_MOST && n <= WB_SEARCH_WORD_LONGEST) {
            /* a few passes, each ending at its edits' last difference */
            record(s, i, wb_lev_mbleven(s->query, s->qlen, t, n, bound));
            return n / 2 + 1;
        }
        if (s->fast && n <= WB_SEARCH_WORD_LONGEST) {
            record(s, i, myers_word(s->peq, s->qlen, t, n, bound));
            return n + 1;
        }
    }
    /* the pair core, resumable, its set-up included: run_pair goes on */
    size_t k = bound >= SIZE_MAX - 1 ? WB_LEV_NO_LIMIT : bound;
    if (!s->codepoints && s->qlen <= WB_SEARCH_PATTERN_LONGEST && n <= WB_SEARCH_PATTERN_LONGEST) {
        /* the query's table, built when a candidate first needs it */
        if (!s->pattern.ready) {
            if (!wb_lev_pattern_init(&s->pattern, s->query, s->qlen)) {
                s->status = WB_SEARCH_ENOMEM;
                return 0;
            }
            s->owned_bytes += s->pattern.bytes;
        }
        wb_lev_start_with(&s->pair, &s->pattern, n, k);
    } else {
        wb_lev_start(&s->pair, s->query, s->qlen, t, n, s->codepoints, k);
    }
    s->pair_running = true;
    s->pair_index = i;
    return 1;
}

/* Advances the pair under way by about `budget` units; returns the units,
 * or 0 on an error (s->status set). */
static uint64_t run_pair(wb_search *s, uint64_t budget) {
    const wb_search_set *set = s->set;
    uint64_t used = 0;
    if (wb_lev_step(&s->pair, s->query, set->bytes + set->offsets[s->pair_index], budget, &used)) {
        wb_lev_status st = wb_lev_error(&s->pair);
        if (st == WB_LEV_OK) record(s, s->pair_index, wb_lev_result(&s->pair));
        wb_lev_free(&s->pair);
        s->pair_running = false;
        if (st != WB_LEV_OK) {
            s->status = st == WB_LEV_ENOMEM ? WB_SEARCH_ENOMEM : WB_SEARCH_EUTF8_CANDIDATE;
            s->failed_at = s->pair_index;
            return 0;
        }
    }
    return used + 1;
}

/* Asks for a row of a batch's table to be fetched into the cache. */
static inline void prefetch_row(const unsigned char *row) {
    for (size_t at = 0; at < WB_LANES_BYTES; at += 64)
        __builtin_prefetch(row + at);
}

/* candidates outside the batches whose bytes are asked for ahead */
#define REST_AHEAD 8

/* With batches made once: the next batch, or the next other candidate.
 * They come out of input order, so every cutoff lets a tie with the worst
 * hit through (record keeps the earlier one). Returns the units, 0 on an
 * error, or UINT64_MAX when nothing is left. */
static uint64_t take_prepared(wb_search *s) {
    const wb_lanes_index *x = s->set->prepared;
    if (s->next_batch < x->count) {
        const wb_lanes_batch *batch = &x->batches[s->next_batch];
        size_t bound = batch_bound(s);
        if (length_gap(batch, s->qlen) > bound &&
            s->next_lane == 0) { /* every lane's length is too far */
            for (unsigned l = 0; l < batch->used; l++)
                record(s, (size_t)x->lane_index[batch->first_lane + l], bound + 1);
            s->next_batch++;
            return 1;
        }
        if (wb_lanes_width(batch->max_len, s->qlen) != batch->width) {
            /* a query too long for this width's scores: each candidate
             * through take, into batches of wider lanes, which hold fewer;
             * back here once two of them are full and started */
            uint64_t units = 1;
            while (s->next_lane < batch->used && !s->running) {
                size_t i = (size_t)x->lane_index[batch->first_lane + s->next_lane++];
                uint64_t u = take(s, i, batch_bound(s));
                if (u == 0) return 0;
                units += u;
            }
            if (s->next_lane == batch->used) {
                s->next_lane = 0;
                s->next_batch++;
            }
            return units;
        }
        /* the next batches in flight beside it when they can be: the same
         * lane width, at this query's, and lengths within reach; four
         * where the kernel steps four, else two */
        unsigned want = wb_lanes_has_run4(s->kernel) ? 4 : 2, can = 1;
        while (can < want && s->next_batch + can < x->count) {
            const wb_lanes_batch *next = &x->batches[s->next_batch + can];
            if (next->width != batch->width || length_gap(next, s->qlen) > bound ||
                wb_lanes_width(next->max_len, s->qlen) != next->width)
                break;
            can++;
        }
        s->flying = can == 4 ? 4 : can >= 2 ? 2 : 1;
        for (unsigned i = 0; i < s->flying; i++) {
            const wb_lanes_batch *start = &x->batches[s->next_batch++];
            wb_lanes_start(&s->batch[i], x, start);
            s->batch_table[i] = x->rows + start->first_row;
            s->batch_rows[i] = start->map;
        }
        s->running = true;
        /* the rows of the next batches that the query reads, in no
         * predictable order: fetched from memory while these run (with the
         * maps of the batches after, which tell the rows to fetch then);
         * four in flight fetch them step by step (a burst of them all at
         * once was dropped in part: slower at 1M candidates) */
        size_t ahead = s->flying; /* the batches the next start likely takes */
        for (size_t i = 0; i < 4 && s->flying == 4; i++) {
            size_t n = s->next_batch + i < x->count ? s->next_batch + i : s->next_batch - 1;
            s->fetch_table[i] = x->rows + x->batches[n].first_row;
            s->fetch_rows[i] = x->batches[n].map;
        }
        for (size_t n = s->next_batch; n < s->next_batch + ahead && n < x->count; n++) {
            const wb_lanes_batch *next = &x->batches[n];
            /* its rows, unless four in flight fetch them step by step; row
             * 0, the one of bytes absent from the batch, is fetched too:
             * cheaper than a branch the processor cannot predict */
            if (s->flying < 4)
                for (size_t k = 0; k < s->lanes.distinct; k++)
                    prefetch_row(x->rows[next->first_row + next->map[s->lanes.bytes_of_rows[k]]]);
            prefetch_row(x->rows[next->first_row + next->rows]); /* its masks */
            /* and its candidates' numbers, read when its distances are stored */
            const uint64_t *lanes = x->lane_index + next->first_lane;
            for (size_t at = 0; at < next->used; at += 64 / sizeof *lanes)
                __builtin_prefetch(lanes + at);
            if (n + ahead < x->count) {
                const uint8_t *map = x->batches[n + ahead].map;
                for (size_t at = 0; at < sizeof x->batches->map; at += 64)
                    __builtin_prefetch(map + at);
            }
        }
        return 1;
    }
    if (s->next_rest < x->rest_count) {
        /* the bytes of a candidate a few ahead, if its length lets it be
         * read at all: fetched from memory while these are done */
        if (s->next_rest + REST_AHEAD < x->rest_count) {
            size_t ahead = (size_t)x->rest[s->next_rest + REST_AHEAD];
            const uint64_t *off = s->set->offsets;
            size_t n = (size_t)(off[ahead + 1] - off[ahead]);
            if (n && length_diff(n, s->qlen) <= batch_bound(s)) {
                __builtin_prefetch(s->set->bytes + off[ahead]);
                __builtin_prefetch(s->set->bytes + off[ahead + 1] - 1);
            }
        }
        return take(s, (size_t)x->rest[s->next_rest++], batch_bound(s));
    }
    return UINT64_MAX;
}

/* The four slots' waiting counts (at most 4 batches of lanes: 256) in
 * one word, 16 bits each, for take_list to keep in a register (kept in
 * memory, each count would wait on its last store); and back. */
static uint64_t get_waiting_lens(const wb_search *s) {
    uint64_t lens = 0;
    for (unsigned slot = 0; slot < 4; slot++)
        lens |= (uint64_t)s->waiting_len[slot] << (16 * slot);
    return lens;
}

static void put_waiting_lens(wb_search *s, uint64_t lens) {
    for (unsigned slot = 0; slot < 4; slot++)
        s->waiting_len[slot] = (size_t)(lens >> (16 * slot)) & 0xffff;
}

/* Without batches made once: candidates one after another until one
 * starts batches or the pair core, or about `budget` units are done. Those
 * that go in a batch are taken here, in a loop of their own (the bound
 * moves only as hits are kept: take records none of these); the others
 * through take. Returns the units, or 0 on an error. */
static uint64_t take_list(wb_search *s, uint64_t budget) {
    const uint64_t *offsets = s->set->offsets;
    size_t count = s->set->count, i = s->next;
    uint64_t done = 0;
    uint64_t waiting_lens = get_waiting_lens(s);
    while (i < count && done < budget) {
        bool none;
        size_t bound = current_bound(s, &none);
        if (none) { /* nothing after the hits kept can enter */
            done += count - i;
            i = count;
            break;
        }
        for (; i < count && done < budget; i++) {
            size_t n = (size_t)(offsets[i + 1] - offsets[i]);
            unsigned place = n <= WB_LANES_LONGEST ? s->lane_slot[n] : 0; /* 0: no batch */
            if (place == 0 || length_diff(n, s->qlen) > bound) break;
            unsigned slot = place - 1, shift = 16 * slot;
            size_t waiting = (size_t)(waiting_lens >> shift) & 0xffff;
            waiting_lens += UINT64_C(1) << shift;
            s->waiting[slot][waiting] = i;
            done += 1 + n / 2;
            if (waiting + 1 == (size_t)(s->group * WB_LANES_MAX) >> slot) { /* a group's worth */
                put_waiting_lens(s, waiting_lens);
                start_batch(s, slot);
                s->next = i + 1;
                return done;
            }
        }
        put_waiting_lens(s, waiting_lens);
        if (i == count || done >= budget) break;
        uint64_t units = take(s, i, bound);
        if (units == 0) {
            s->next = i;
            return 0;
        }
        done += units;
        i++;
        if (s->running || s->pair_running) break;
        waiting_lens = get_waiting_lens(s);
    }
    s->next = i;
    return done ? done : 1;
}

bool wb_search_step(wb_search *s, uint64_t budget, uint64_t *used) {
    uint64_t done = 0;
    bool finished = false;
    bool prepared = s->set->prepared && s->kernel != WB_LANES_OFF;
    while (!finished && (done == 0 || done < budget)) {
        uint64_t units;
        if (s->status != WB_SEARCH_OK) { /* a distance too far (too_far) */
            *used += done + 1;
            return true;
        }
        if (s->sorting) {
            /* the largest of the heap's part goes to its end */
            if (s->unsorted <= 1) {
                s->sorting = false;
                finished = true;
                continue;
            }
            wb_search_hit top = s->heap[0];
            s->heap[0] = s->heap[--s->unsorted];
            s->heap[s->unsorted] = top;
            heap_sift_down(s->heap, s->unsorted, 0);
            done += SORT_POP_UNITS;
        } else if (s->running) {
            done += run_batch(s, budget > done ? budget - done : 1);
        } else if (s->pair_running) {
            units = run_pair(s, budget > done ? budget - done : 1);
            if (units == 0) {
                *used += done + 1;
                return true;
            }
            done += units;
        } else if (prepared && (units = take_prepared(s)) != UINT64_MAX) {
            if (units == 0) {
                *used += done + 1;
                return true;
            }
            done += units;
        } else if (!prepared && s->next < s->set->count) {
            units = take_list(s, budget > done ? budget - done : 1);
            if (units == 0) {
                *used += done + 1;
                return true;
            }
            done += units;
        } else {
            /* every candidate taken: the partial batches, narrowest first */
            unsigned slot = 0;
            while (slot < 4 && s->waiting_len[slot] == 0)
                slot++;
            if (slot < 4) {
                start_batch(s, slot);
            } else {
                /* every candidate done: the hits in order, over steps */
                s->sorting = true;
                s->unsorted = s->heap_len;
            }
        }
    }
    *used += done ? done : 1;
    return finished;
}

uint64_t wb_search_sort_units(size_t hits) {
    return (uint64_t)hits * SORT_POP_UNITS;
}

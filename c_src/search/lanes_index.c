/*
 * The batches made once for an index (lanes.h): a set's candidates of
 * 1..64 bytes laid out in batches by lane width, with the rows of their
 * tables filled, so that a search builds nothing. The kernels that run
 * them are lanes.c.
 */
#include "lanes.h"
#include "lanes_bits.h"

#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the batches made once write lanes as little-endian bytes"
#endif

/* ---- batches made once ---------------------------------------------------------- *
 *
 * Built a budget at a time (wb_lanes_index_step), so that a host can slice
 * the building of a large index: every phase keeps a cursor, and the scan
 * of a long candidate stops within it. The units, about a nanosecond each:
 * one per candidate each pass visits, one per 4 bytes scanned or put in a
 * batch, one per 64 bytes of tables cleared. */

enum {
    BUILD_COUNT,      /* candidates in lanes, and the others */
    BUILD_ALLOC,      /* the arrays */
    BUILD_LENGTHS,    /* x->length */
    BUILD_SPACED,     /* x->spaced: a scan of each candidate up to its first space */
    BUILD_WINDOW,     /* a window's lengths counted (counting sort) */
    BUILD_PLACE,      /* its candidates placed by length */
    BUILD_BATCHES,    /* its batches and the rows each needs */
    BUILD_ROWS_ALLOC, /* the rows */
    BUILD_ROWS_CLEAR, /* zeroed */
    BUILD_FILL,       /* the lanes' bits and masks */
    BUILD_DONE,
    LIKE_ALLOC,   /* laid out as b->like: the arrays */
    LIKE_LENGTHS, /* x->length, each checked against like's */
    LIKE_COPY,    /* like's batches, lanes and other candidates copied */
};

#define BUILD_SCAN_BYTES  4  /* bytes scanned or put in a batch per unit */
#define BUILD_CLEAR_BYTES 64 /* bytes of rows cleared per unit */

uint64_t wb_lanes_index_units(size_t count, uint64_t bytes) {
    /* six passes over the candidates, a scan of their bytes; the bytes in
     * lanes (64 at most a candidate) put in batches and filled, a unit per
     * 4 each, and their rows cleared (a row per distinct byte of a batch
     * at most, so per byte where every batch's bytes differ) */
    uint64_t laned =
        bytes < (uint64_t)count * WB_LANES_LONGEST ? bytes : (uint64_t)count * WB_LANES_LONGEST;
    return (uint64_t)count * 8 + bytes / BUILD_SCAN_BYTES + laned + laned / 2 + 1;
}

void wb_lanes_index_begin(wb_lanes_index *x, wb_lanes_builder *b) {
    memset(x, 0, sizeof *x);
    memset(b, 0, sizeof *b);
    b->phase = BUILD_COUNT;
}

void wb_lanes_index_begin_like(wb_lanes_index *x, wb_lanes_builder *b,
                               const struct wb_lanes_index *like) {
    wb_lanes_index_begin(x, b);
    b->like = like;
    b->phase = LIKE_ALLOC;
}

/* x differs from b->like: what x holds freed, the building started over
 * the usual way. */
static void like_give_up(wb_lanes_index *x, wb_lanes_builder *b) {
    wb_lanes_index_free(x);
    wb_lanes_index_begin(x, b);
}

/* Copies of like's arrays, one after the other: array b->r from byte
 * b->k. Returns the units spent (one per 64 bytes, at least one). */
static uint64_t like_copy(wb_lanes_index *x, wb_lanes_builder *b, uint64_t left) {
    const wb_lanes_index *like = b->like;
    struct {
        void *to;
        const void *from;
        size_t bytes;
    } arrays[] = {
        {x->batches, like->batches, like->count * sizeof *x->batches},
        {x->lane_index, like->lane_index, b->laned * sizeof *x->lane_index},
        {x->lane_len, like->lane_len, b->laned},
        {x->rest, like->rest, like->rest_count * sizeof *x->rest},
    };
    uint64_t spent = 0;
    while (b->r < sizeof arrays / sizeof *arrays && spent < left) {
        uint64_t most = (left - spent) > UINT64_MAX / BUILD_CLEAR_BYTES
                            ? UINT64_MAX
                            : (left - spent) * BUILD_CLEAR_BYTES;
        uint64_t n = arrays[b->r].bytes - b->k;
        if (n > most) n = most;
        if (n)
            memcpy((uint8_t *)arrays[b->r].to + b->k, (const uint8_t *)arrays[b->r].from + b->k,
                   (size_t)n);
        b->k += n;
        spent += n / BUILD_CLEAR_BYTES + 1;
        if (b->k == arrays[b->r].bytes) {
            b->r++;
            b->k = 0;
        }
    }
    return spent;
}

/* Units for `bytes` bytes scanned, at least one. */
static uint64_t scan_units(uint64_t bytes) {
    return bytes / BUILD_SCAN_BYTES + 1;
}

static bool is_space(uint8_t c) {
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1C && c <= 0x1F);
}

/* The next phase, its cursors at the start. */
static void build_enter(wb_lanes_builder *b, int phase) {
    b->phase = phase;
    b->i = 0;
}

/* Starts window b->window (or the rows, past the last). */
static void build_window(wb_lanes_builder *b, size_t count) {
    if (b->window >= count) {
        build_enter(b, BUILD_ROWS_ALLOC);
        return;
    }
    b->window_end = count - b->window > WB_LANES_WINDOW ? b->window + WB_LANES_WINDOW : count;
    memset(b->starts, 0, sizeof b->starts);
    build_enter(b, BUILD_WINDOW);
    b->i = b->window;
}

/* Adds lane candidate b->at to the open batch, or closes it (false) when
 * it does not fit there. */
static bool batch_take(wb_lanes_index *x, wb_lanes_builder *b, const uint8_t *bytes,
                       const uint64_t *offsets) {
    wb_lanes_batch *batch = &x->batches[x->count - 1];
    if (!(batch->used < b->lanes && wb_lanes_width(x->lane_len[b->at], 0) == batch->width &&
          b->distinct <= 255 - WB_LANES_LONGEST)) {
        batch->first_row = b->rows;
        batch->rows = (uint32_t)b->distinct + 1;
        b->rows += b->distinct + 2; /* and the masks */
        b->open = false;
        return false;
    }
    const uint8_t *t = bytes + offsets[x->lane_index[b->at]];
    for (size_t k = 0; k < x->lane_len[b->at]; k++)
        if (!batch->map[t[k]]) batch->map[t[k]] = (uint8_t)++b->distinct;
    batch->max_len = x->lane_len[b->at]; /* sorted by length */
    batch->used++;
    b->at++;
    return true;
}

/* One phase's work from its cursor on, within about `left` units (at
 * least one item); returns the units, or UINT64_MAX when out of memory. */
static uint64_t build_phase(wb_lanes_index *x, wb_lanes_builder *b, const uint8_t *bytes,
                            const uint64_t *offsets, size_t count, uint64_t left) {
    uint64_t spent = 0;
    switch (b->phase) {
    case BUILD_COUNT:
        for (; b->i < count && spent < left; b->i++, spent++) {
            size_t n = (size_t)(offsets[b->i + 1] - offsets[b->i]);
            if (n >= 1 && n <= WB_LANES_LONGEST)
                b->laned++;
            else
                x->rest_count++;
        }
        if (b->i == count) build_enter(b, BUILD_ALLOC);
        return spent;
    case BUILD_ALLOC:
        x->lane_index = malloc((b->laned ? b->laned : 1) * sizeof *x->lane_index);
        x->lane_len = malloc(b->laned ? b->laned : 1);
        x->rest = malloc((x->rest_count ? x->rest_count : 1) * sizeof *x->rest);
        b->capacity = b->laned / 8 + 4;
        x->batches = malloc(b->capacity * sizeof *x->batches);
        x->spaced = calloc(count / 64 + 1, sizeof *x->spaced);
        x->length = malloc(count ? count : 1);
        if (!x->lane_index || !x->lane_len || !x->rest || !x->batches || !x->spaced || !x->length)
            return UINT64_MAX;
        build_enter(b, BUILD_LENGTHS);
        return 1;
    case BUILD_LENGTHS:
        for (; b->i < count && spent < left; b->i++, spent++) {
            uint64_t n = offsets[b->i + 1] - offsets[b->i];
            x->length[b->i] = (uint8_t)(n < WB_LANES_LENGTH_MOST ? n : WB_LANES_LENGTH_MOST);
        }
        if (b->i == count) {
            build_enter(b, BUILD_SPACED);
            b->k = count ? offsets[0] : 0;
        }
        return spent;
    case BUILD_SPACED:
        /* candidate b->i from byte b->k on, up to its first space: a long
         * one over several steps */
        while (b->i < count && spent < left) {
            uint64_t end = offsets[b->i + 1], room = left - spent;
            uint64_t most =
                room > UINT64_MAX / BUILD_SCAN_BYTES ? UINT64_MAX : room * BUILD_SCAN_BYTES;
            uint64_t stop = end - b->k > most ? b->k + most : end, from = b->k;
            bool found = false;
            while (b->k < stop && !(found = is_space(bytes[b->k])))
                b->k++;
            spent += scan_units(b->k - from);
            if (found) x->spaced[b->i / 64] |= UINT64_C(1) << (b->i % 64);
            if (found || b->k == end) {
                b->i++;
                b->k = offsets[b->i];
            }
        }
        if (b->i == count) {
            if (b->like) {
                /* like's batches, laid out already: their rows next */
                build_enter(b, BUILD_ROWS_ALLOC);
                return spent;
            }
            b->window = 0;
            build_window(b, count);
        }
        return spent;
    case BUILD_WINDOW:
        /* the window's candidates by length (so by lane width too): a
         * counting sort */
        for (; b->i < b->window_end && spent < left; b->i++, spent++) {
            size_t n = (size_t)(offsets[b->i + 1] - offsets[b->i]);
            if (n >= 1 && n <= WB_LANES_LONGEST) b->starts[n + 1]++;
        }
        if (b->i == b->window_end) {
            b->starts[1] = b->at; /* the window's first place */
            for (size_t n = 1; n <= WB_LANES_LONGEST + 1; n++)
                b->starts[n] += b->starts[n - 1];
            b->window_laned = b->starts[WB_LANES_LONGEST + 1];
            build_enter(b, BUILD_PLACE);
            b->i = b->window;
            spent += 16;
        }
        return spent;
    case BUILD_PLACE:
        for (; b->i < b->window_end && spent < left; b->i++, spent++) {
            size_t n = (size_t)(offsets[b->i + 1] - offsets[b->i]);
            if (n >= 1 && n <= WB_LANES_LONGEST) {
                x->lane_len[b->starts[n]] = (uint8_t)n;
                x->lane_index[b->starts[n]++] = b->i;
            } else {
                x->rest[b->r++] = b->i;
            }
        }
        if (b->i == b->window_end) build_enter(b, BUILD_BATCHES);
        return spent;
    case BUILD_BATCHES:
        /* the window's batches and the rows each needs: row 0 zero, then
         * one per byte its candidates hold, 255 at most (a batch closes
         * before a candidate of up to 64 new bytes could pass that) */
        while (b->at < b->window_laned && spent < left) {
            if (!b->open) {
                unsigned width = wb_lanes_width(x->lane_len[b->at], 0);
                if (x->count == b->capacity) {
                    wb_lanes_batch *more = realloc(x->batches, 2 * b->capacity * sizeof *more);
                    if (!more) return UINT64_MAX;
                    x->batches = more;
                    b->capacity *= 2;
                }
                wb_lanes_batch *batch = &x->batches[x->count++];
                memset(batch, 0, sizeof *batch);
                batch->width = (uint8_t)width;
                batch->min_len = x->lane_len[b->at];
                batch->first_lane = b->at;
                b->lanes = wb_lanes_count(width);
                b->distinct = 0;
                b->open = true;
                spent += 4;
            }
            size_t n = x->lane_len[b->at];
            if (batch_take(x, b, bytes, offsets)) spent += scan_units(n);
        }
        if (b->at == b->window_laned) {
            /* the window's last batch closes with it */
            if (b->open) {
                wb_lanes_batch *batch = &x->batches[x->count - 1];
                batch->first_row = b->rows;
                batch->rows = (uint32_t)b->distinct + 1;
                b->rows += b->distinct + 2;
                b->open = false;
            }
            b->window += WB_LANES_WINDOW;
            build_window(b, count);
        }
        return spent;
    case BUILD_ROWS_ALLOC:
        x->bytes = b->rows * WB_LANES_BYTES;
        x->rows = aligned_alloc(WB_LANES_BYTES, x->bytes ? x->bytes : WB_LANES_BYTES);
        if (!x->rows) return UINT64_MAX;
        build_enter(b, BUILD_ROWS_CLEAR);
        b->k = 0;
        return 1;
    case BUILD_ROWS_CLEAR: {
        uint64_t most =
            left > UINT64_MAX / BUILD_CLEAR_BYTES ? UINT64_MAX : left * BUILD_CLEAR_BYTES;
        uint64_t n = x->bytes - b->k;
        if (n > most) n = most;
        memset((uint8_t *)x->rows + b->k, 0, (size_t)n);
        b->k += n;
        if (b->k == x->bytes) {
            build_enter(b, BUILD_FILL);
            b->k = 0; /* the batch */
        }
        return n / BUILD_CLEAR_BYTES + 1;
    }
    case BUILD_FILL:
        /* batch b->k, lane b->i */
        while (b->k < x->count && spent < left) {
            const wb_lanes_batch *batch = &x->batches[b->k];
            if (b->i == batch->used) {
                b->k++;
                b->i = 0;
                continue;
            }
            wb_lanes_table table = x->rows + batch->first_row;
            size_t l = b->i++, n = x->lane_len[batch->first_lane + l];
            const uint8_t *t = bytes + offsets[x->lane_index[batch->first_lane + l]];
            for (size_t i = 0; i < n; i++) {
                if (!batch->map[t[i]]) {
                    /* only where laid out as like: a byte like's batch lacks */
                    like_give_up(x, b);
                    return spent + scan_units(i);
                }
                unsigned char *cell = table[batch->map[t[i]]] + l * (batch->width / 8);
                /* bit i of lane l, little-endian lanes */
                cell[i / 8] |= (unsigned char)(1u << (i % 8));
            }
            /* the lane's mask: its len low bits */
            uint64_t mask = low_bits(n);
            memcpy(table[batch->rows] + l * (batch->width / 8), &mask, batch->width / 8);
            spent += scan_units(n);
        }
        if (b->k == x->count) {
            x->bytes += x->count * sizeof *x->batches + b->laned * (sizeof *x->lane_index + 1) +
                        x->rest_count * sizeof *x->rest + (count / 64 + 1) * sizeof *x->spaced +
                        count;
            build_enter(b, BUILD_DONE);
        }
        return spent ? spent : 1;
    case LIKE_ALLOC: {
        const wb_lanes_index *like = b->like;
        x->rest_count = like->rest_count;
        b->laned = count - like->rest_count;
        x->count = like->count;
        b->capacity = like->count;
        x->lane_index = malloc((b->laned ? b->laned : 1) * sizeof *x->lane_index);
        x->lane_len = malloc(b->laned ? b->laned : 1);
        x->rest = malloc((x->rest_count ? x->rest_count : 1) * sizeof *x->rest);
        x->batches = malloc((like->count ? like->count : 1) * sizeof *x->batches);
        x->spaced = calloc(count / 64 + 1, sizeof *x->spaced);
        x->length = malloc(count ? count : 1);
        if (!x->lane_index || !x->lane_len || !x->rest || !x->batches || !x->spaced || !x->length)
            return UINT64_MAX;
        /* the rows: each batch's, then its masks, one after the other */
        if (like->count) {
            const wb_lanes_batch *last = &like->batches[like->count - 1];
            b->rows = last->first_row + last->rows + 1;
        }
        build_enter(b, LIKE_LENGTHS);
        return 1;
    }
    case LIKE_LENGTHS:
        /* in lanes where like's candidate is, and then exactly as long
         * (the other candidates, empty or long, are in `rest` in order) */
        for (; b->i < count && spent < left; b->i++, spent++) {
            uint64_t n = offsets[b->i + 1] - offsets[b->i];
            uint8_t was = b->like->length[b->i];
            uint8_t now = (uint8_t)(n < WB_LANES_LENGTH_MOST ? n : WB_LANES_LENGTH_MOST);
            bool laned = n >= 1 && n <= WB_LANES_LONGEST;
            bool like_laned = was >= 1 && was <= WB_LANES_LONGEST;
            if (laned != like_laned || (laned && now != was)) {
                like_give_up(x, b);
                return spent + 1;
            }
            x->length[b->i] = now;
        }
        if (b->i == count) {
            build_enter(b, LIKE_COPY);
            b->r = 0;
            b->k = 0;
        }
        return spent;
    case LIKE_COPY:
        spent = like_copy(x, b, left);
        if (b->r == 4) {
            b->r = 0;
            build_enter(b, BUILD_SPACED);
            b->k = count ? offsets[0] : 0;
        }
        return spent;
    default:
        return 1;
    }
}

wb_lanes_build_status wb_lanes_index_step(wb_lanes_index *x, wb_lanes_builder *b,
                                          const uint8_t *bytes, const uint64_t *offsets,
                                          size_t count, uint64_t budget, uint64_t *used) {
    uint64_t spent = 0;
    if (b->failed) return WB_LANES_BUILD_ENOMEM;
    while (b->phase != BUILD_DONE && spent < budget) {
        uint64_t units = build_phase(x, b, bytes, offsets, count, budget - spent);
        if (units == UINT64_MAX) {
            wb_lanes_index_free(x);
            b->failed = true;
            *used += spent + 1;
            return WB_LANES_BUILD_ENOMEM;
        }
        spent += units;
    }
    *used += spent;
    return b->phase == BUILD_DONE ? WB_LANES_BUILT : WB_LANES_BUILDING;
}

bool wb_lanes_index_build(wb_lanes_index *x, const uint8_t *bytes, const uint64_t *offsets,
                          size_t count) {
    wb_lanes_builder b;
    uint64_t used = 0;
    wb_lanes_index_begin(x, &b);
    return wb_lanes_index_step(x, &b, bytes, offsets, count, UINT64_MAX, &used) == WB_LANES_BUILT;
}

void wb_lanes_index_free(wb_lanes_index *x) {
    free(x->batches);
    free(x->lane_index);
    free(x->lane_len);
    free(x->rest);
    free(x->spaced);
    free(x->length);
    free(x->rows);
    memset(x, 0, sizeof *x);
}

/* Match vectors of a pattern of symbols (kernels.h): for each block of 64
 * positions, the mask of the positions holding each symbol. Symbols below
 * 256 (bytes, and the ASCII and Latin-1 codepoints) are looked up in a
 * table; others in an open-addressing map keyed by (symbol, block), which
 * holds one entry per block a symbol occurs in: at most one per position,
 * so it can be sized from the length alone, without a pass over the
 * symbols (a long pattern is allocated in wb_fz_pattern_alloc and filled a
 * budget at a time by wb_fz_pattern_fill). */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

/* Patterns this short count their symbols of 256 and up in alloc (a
 * bounded pass), to size the map exactly or leave it out; longer ones
 * size it from their length. */
#define PATTERN_SCAN 256

/* Patterns longer than this charge the pages of their tables that the
 * fill writes first (fresh memory faults in as it is first written);
 * shorter ones' tables are at most 256 KB. Pages are told apart by 4 KB
 * (a system with larger pages is charged more faults than it takes). */
#define PAGES_FROM 8192
#define PAGE_SHIFT 12

/* The map's slots for `high` symbols of 256 and up: a power of two at
 * least twice that (the map at most half full), or 0: no map. */
static size_t map_capacity(size_t high) {
    if (high == 0) return 0;
    size_t capacity = 16;
    while (capacity < 2 * high)
        capacity *= 2;
    return capacity;
}

/* The 4 KB pages that n bytes from `at` touch. */
static size_t pages_of(const void *at, size_t n) {
    uintptr_t first = (uintptr_t)at >> PAGE_SHIFT;
    uintptr_t last = ((uintptr_t)at + (n > 0 ? n - 1 : 0)) >> PAGE_SHIFT;
    return (size_t)(last - first) + 1;
}

/* The slot of (c, block), or the empty one where it would go. */
static size_t map_slot(const wb_fz_pattern *p, uint32_t c, size_t block) {
    size_t mask = p->capacity - 1, i = wb_fz_pattern_hash(mask, c, block);
    while (p->map[i].key != 0 && (p->map[i].key != c + 1 || p->map[i].block != block))
        i = (i + 1) & mask;
    return i;
}

bool wb_fz_pattern_alloc(wb_fz_pattern *p, const uint32_t *s, size_t m) {
    /* the entries the map may need: one per symbol of 256 and up */
    size_t high = m;
    if (m <= PATTERN_SCAN) {
        high = 0;
        for (size_t i = 0; i < m; i++)
            high += s[i] >= 256;
    }
    return wb_fz_pattern_alloc_high(p, s, m, high);
}

bool wb_fz_pattern_alloc_high(wb_fz_pattern *p, const uint32_t *s, size_t m, size_t high) {
    memset(p, 0, sizeof *p);
    size_t nblocks = m / 64 + (m % 64 != 0);
    if (nblocks == 0) nblocks = 1;
    if (nblocks > UINT32_MAX || nblocks > SIZE_MAX / (256 * sizeof(uint64_t))) return false;
    if (high > SIZE_MAX / 4 / sizeof(wb_fz_pattern_entry)) return false;
    size_t capacity = map_capacity(high);
    p->low = calloc(256 * nblocks, sizeof(uint64_t));
    if (!p->low) return false;
    p->owned_bytes = 256 * nblocks * sizeof(uint64_t);
    if (capacity > 0) {
        p->map = calloc(capacity, sizeof(wb_fz_pattern_entry));
        if (!p->map) {
            wb_fz_pattern_free(p);
            return false;
        }
        p->capacity = capacity;
        p->owned_bytes += capacity * sizeof(wb_fz_pattern_entry);
    }
    if (m > PAGES_FROM) {
        /* a bit for each page of the tables, to charge its first write */
        size_t bits = pages_of(p->low, 256 * nblocks * sizeof(uint64_t));
        if (capacity > 0) bits += pages_of(p->map, capacity * sizeof(wb_fz_pattern_entry));
        p->written = calloc(bits / 64 + 1, sizeof(uint64_t));
        if (!p->written) {
            wb_fz_pattern_free(p);
            return false;
        }
        p->owned_bytes += (bits / 64 + 1) * sizeof(uint64_t);
    }
    p->m = m;
    p->nblocks = nblocks;
    p->s = s;
    return true;
}

/* wb_fz_pattern_fill for a long pattern: each page its symbols are the
 * first to write is charged too (WB_FZ_PATTERN_PAGE_UNITS), as far as
 * `units` allows; one symbol at least, charged `units` at most. */
static bool fill_long(wb_fz_pattern *p, uint64_t units, uint64_t *used) {
    const uint32_t *s = p->s;
    uint64_t *written = p->written;
    size_t nblocks = p->nblocks, i = p->filled, pages = 0;
    uintptr_t low0 = (uintptr_t)p->low >> PAGE_SHIFT, map0 = (uintptr_t)p->map >> PAGE_SHIFT;
    size_t map_bit0 = pages_of(p->low, 256 * nblocks * sizeof(uint64_t));
    /* symbols the units pay for (a page takes its units' worth) */
    uint64_t room =
        units > UINT64_MAX / WB_FZ_PATTERN_PER_UNIT ? UINT64_MAX : units * WB_FZ_PATTERN_PER_UNIT;
    uint64_t page_room = (uint64_t)WB_FZ_PATTERN_PAGE_UNITS * WB_FZ_PATTERN_PER_UNIT;
    size_t start = i;
    for (; i < p->m; i++) {
        uint32_t c = p->s8 ? p->s8[i] : s[i];
        uint64_t bit = (uint64_t)1 << (i % 64);
        uint64_t *word = NULL;
        size_t slot = 0, page;
        if (c < 256) {
            word = &p->low[(size_t)c * nblocks + i / 64];
            page = (size_t)(((uintptr_t)word >> PAGE_SHIFT) - low0);
        } else {
            slot = map_slot(p, c, i / 64);
            page = map_bit0 + (size_t)(((uintptr_t)&p->map[slot] >> PAGE_SHIFT) - map0);
        }
        uint64_t mask = (uint64_t)1 << (page % 64);
        bool fresh = !(written[page / 64] & mask);
        uint64_t cost = 1 + (fresh ? page_room : 0);
        if (i > start && cost > room) break;
        room = cost > room ? 0 : room - cost;
        if (fresh) {
            written[page / 64] |= mask;
            pages++;
        }
        if (word) {
            *word |= bit;
        } else {
            p->map[slot].key = c + 1;
            p->map[slot].block = (uint32_t)(i / 64);
            p->map[slot].mask |= bit;
            p->slots = p->capacity; /* the map is looked in from now on */
        }
    }
    p->filled = i;
    size_t placed = i - start;
    uint64_t charge = (placed + WB_FZ_PATTERN_PER_UNIT - 1) / WB_FZ_PATTERN_PER_UNIT +
                      pages * WB_FZ_PATTERN_PAGE_UNITS;
    *used += charge < units ? charge : units;
    return p->filled == p->m;
}

bool wb_fz_pattern_fill(wb_fz_pattern *p, uint64_t budget, uint64_t *used) {
    size_t left = p->m - p->filled;
    if (left == 0) return true;
    /* as many symbols as the budget pays for, one unit at least */
    uint64_t units = budget > 0 ? budget : 1;
    if (p->written) return fill_long(p, units, used);
    size_t count = units >= (uint64_t)left / WB_FZ_PATTERN_PER_UNIT + 1
                       ? left
                       : (size_t)units * WB_FZ_PATTERN_PER_UNIT;
    const uint32_t *s = p->s;
    size_t nblocks = p->nblocks, end = p->filled + count;
    if (p->capacity == 0) {
        /* no map (every symbol below 256): the table alone, through locals
         * (a store through p->low could otherwise reload p's fields) */
        uint64_t *low = p->low;
        const uint8_t *s8 = p->s8;
        if (s8)
            for (size_t i = p->filled; i < end; i++)
                low[(size_t)s8[i] * nblocks + i / 64] |= (uint64_t)1 << (i % 64);
        else
            for (size_t i = p->filled; i < end; i++)
                low[(size_t)s[i] * nblocks + i / 64] |= (uint64_t)1 << (i % 64);
        p->filled = end;
        *used += count / WB_FZ_PATTERN_PER_UNIT + (count % WB_FZ_PATTERN_PER_UNIT != 0);
        return p->filled == p->m;
    }
    for (size_t i = p->filled; i < end; i++) {
        uint64_t bit = (uint64_t)1 << (i % 64);
        uint32_t c = s[i];
        if (c < 256) {
            p->low[(size_t)c * nblocks + i / 64] |= bit;
        } else {
            size_t slot = map_slot(p, c, i / 64);
            p->map[slot].key = c + 1;
            p->map[slot].block = (uint32_t)(i / 64);
            p->map[slot].mask |= bit;
            p->slots = p->capacity; /* the map is looked in from now on */
        }
    }
    p->filled = end;
    *used += count / WB_FZ_PATTERN_PER_UNIT + (count % WB_FZ_PATTERN_PER_UNIT != 0);
    return p->filled == p->m;
}

uint64_t wb_fz_pattern_units(size_t m) {
    uint64_t units = (uint64_t)m / WB_FZ_PATTERN_PER_UNIT + 1;
    if (m <= PAGES_FROM) return units;
    /* the pages of the tables (each may start mid-page), charged a unit
     * more for a call stopped at one with an odd count of symbols */
    uint64_t blocks = m / 64 + (m % 64 != 0);
    uint64_t pages = blocks * 256 * sizeof(uint64_t) / 4096 + 2 +
                     (uint64_t)map_capacity(m) * sizeof(wb_fz_pattern_entry) / 4096 + 2;
    return units + pages * (WB_FZ_PATTERN_PAGE_UNITS + 1);
}

bool wb_fz_pattern_init(wb_fz_pattern *p, const uint32_t *s, size_t m) {
    if (!wb_fz_pattern_alloc(p, s, m)) return false;
    uint64_t used = 0;
    wb_fz_pattern_fill(p, UINT64_MAX, &used);
    return true;
}

void wb_fz_pattern_free_with(wb_fz_pattern *p, void (*free_later)(void *block, size_t bytes)) {
    size_t low = 256 * p->nblocks * sizeof(uint64_t),
           map = p->capacity * sizeof(wb_fz_pattern_entry);
    if (free_later && p->low && low >= WB_FZ_FREE_LATER_FROM) {
        free_later(p->low, low);
        p->low = NULL;
    }
    if (free_later && p->map && map >= WB_FZ_FREE_LATER_FROM) {
        free_later(p->map, map);
        p->map = NULL;
    }
    wb_fz_pattern_free(p);
}

void wb_fz_pattern_free(wb_fz_pattern *p) {
    free(p->low);
    free(p->map);
    free(p->written);
    memset(p, 0, sizeof *p);
}

/* ---- the short form (kernels.h) ------------------------------------------ */

/* all zero between a wb_fz_short_begin and its end */
static _Thread_local uint64_t short_low[256][2];
static _Thread_local wb_fz_short_entry short_map[WB_FZ_SHORT_SLOTS];

void wb_fz_short_begin(wb_fz_short *p, const uint32_t *s, size_t m) {
    uint64_t(*low)[2] = short_low;
    wb_fz_short_entry *map = short_map;
    size_t high = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t c = s[i];
        uint64_t bit = (uint64_t)1 << (i % 64);
        if (c < 256) {
            low[c][i / 64] |= bit;
            continue;
        }
        size_t j = wb_fz_short_hash(c);
        while (map[j].key != 0 && map[j].key != c + 1)
            j = (j + 1) % WB_FZ_SHORT_SLOTS;
        if (map[j].key == 0) {
            map[j].key = c + 1;
            p->used[high++] = (uint8_t)j;
        }
        map[j].mask[i / 64] |= bit;
    }
    p->low = low;
    p->map = map;
    p->high = high;
    p->s = s;
    p->m = m;
}

void wb_fz_short_end(wb_fz_short *p) {
    for (size_t i = 0; i < p->m; i++) {
        uint32_t c = p->s[i];
        if (c < 256) p->low[c][0] = p->low[c][1] = 0;
    }
    /* the slots recorded (clearing them by looking them up would break
     * the probe runs of those left to clear) */
    for (size_t i = 0; i < p->high; i++)
        p->map[p->used[i]] = (wb_fz_short_entry){0, {0, 0}};
}

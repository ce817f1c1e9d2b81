/* Match vectors of a pattern of symbols (kernels.h): for each block of 64
 * positions, the mask of the positions holding each symbol. Symbols below
 * 256 (bytes, and the ASCII and Latin-1 codepoints) are looked up in a
 * table; others in an open-addressing map with room for twice the
 * pattern's distinct symbols. */
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

static size_t map_slot(const wb_fz_pattern *p, uint32_t c) {
    size_t mask = p->slots - 1;
    size_t i = (size_t)(c * 2654435761u) & mask;
    while (p->keys[i] != 0 && p->keys[i] != c + 1)
        i = (i + 1) & mask;
    return i;
}

bool wb_fz_pattern_init(wb_fz_pattern *p, const uint32_t *s, size_t m) {
    memset(p, 0, sizeof *p);
    size_t nblocks = m / 64 + (m % 64 != 0);
    if (nblocks == 0) nblocks = 1;
    if (nblocks > SIZE_MAX / (256 * sizeof(uint64_t))) return false;
    size_t high = 0;
    for (size_t i = 0; i < m; i++)
        high += s[i] >= 256;
    size_t slots = 0;
    if (high > 0) {
        slots = 16;
        while (slots < 2 * high)
            slots *= 2;
        if (slots > SIZE_MAX / sizeof(uint64_t) / nblocks) return false;
    }
    p->m = m;
    p->nblocks = nblocks;
    p->low = calloc(256 * nblocks, sizeof(uint64_t));
    if (!p->low) return false;
    p->owned_bytes = 256 * nblocks * sizeof(uint64_t);
    if (slots > 0) {
        p->keys = calloc(slots, sizeof(uint32_t));
        p->masks = calloc(slots * nblocks, sizeof(uint64_t));
        if (!p->keys || !p->masks) {
            wb_fz_pattern_free(p);
            return false;
        }
        p->slots = slots;
        p->owned_bytes += slots * (sizeof(uint32_t) + nblocks * sizeof(uint64_t));
    }
    for (size_t i = 0; i < m; i++) {
        uint64_t bit = (uint64_t)1 << (i % 64);
        if (s[i] < 256) {
            p->low[(size_t)s[i] * nblocks + i / 64] |= bit;
        } else {
            size_t slot = map_slot(p, s[i]);
            p->keys[slot] = s[i] + 1;
            p->masks[slot * nblocks + i / 64] |= bit;
        }
    }
    return true;
}

void wb_fz_pattern_free(wb_fz_pattern *p) {
    free(p->low);
    free(p->keys);
    free(p->masks);
    memset(p, 0, sizeof *p);
}

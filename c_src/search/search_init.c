/*
 * A search's state (search.h): where its blocks of results come from, its
 * set-up from a query and a set, what it answers once finished, and its
 * release. The steps are in search.c.
 */
#include "search.h"

#include <stdlib.h>
#include <string.h>

static wb_search_block_allocator blocks = WB_SIZED_ALLOCATOR_DEFAULT;

void wb_search_set_block_allocator(const wb_search_block_allocator *allocator) {
    blocks = *allocator;
}

/* Whether in[0..len) is valid UTF-8. */
static bool valid_utf8(const uint8_t *in, size_t len) {
    for (size_t at = 0; at < len;) {
        if (in[at] < 0x80) {
            at++;
            continue;
        }
        uint32_t cp;
        size_t step = wb_utf8_sequence(in + at, len - at, &cp);
        if (step == 0) return false;
        at += step;
    }
    return true;
}

wb_search_status wb_search_init(wb_search *s, const wb_search_set *set, const uint8_t *query,
                                size_t qlen, bool codepoints, size_t max_distance, size_t limit) {
    memset(s, 0, sizeof *s);
    if (codepoints && wb_search_bytes_suffice(set, query, qlen, SIZE_MAX)) codepoints = false;
    s->set = set;
    s->qlen = qlen;
    s->codepoints = codepoints;
    s->max_distance = max_distance;
    s->limit = limit;
    s->query = malloc(qlen ? qlen : 1);
    if (!s->query) return WB_SEARCH_ENOMEM;
    if (qlen) memcpy(s->query, query, qlen);
    s->owned_bytes = qlen ? qlen : 1;
    if (codepoints) {
        /* the query's UTF-8 is checked once */
        if (!valid_utf8(query, qlen)) {
            wb_search_free(s);
            return WB_SEARCH_EUTF8_QUERY;
        }
    }
    if (limit == 0) {
        s->distances = blocks.alloc(set->count ? set->count * sizeof(uint32_t) : 1);
        if (!s->distances) {
            wb_search_free(s);
            return WB_SEARCH_ENOMEM;
        }
        s->owned_bytes += set->count * sizeof(uint32_t);
    } else {
        size_t n = limit < set->count ? limit : set->count;
        s->heap = blocks.alloc(n ? n * sizeof(wb_search_hit) : 1);
        if (!s->heap) {
            wb_search_free(s);
            return WB_SEARCH_ENOMEM;
        }
        s->owned_bytes += n * sizeof(wb_search_hit);
    }
    s->fast = !codepoints && qlen >= 1 && qlen <= 64;
    if (s->fast)
        for (size_t i = 0; i < qlen; i++)
            s->peq[query[i]] |= UINT64_C(1) << i;
    s->kernel = codepoints || qlen == 0 ? WB_LANES_OFF : wb_lanes_current();
    if (s->kernel != WB_LANES_OFF) {
        if (!wb_lanes_query_init(&s->lanes, query, qlen)) {
            wb_search_free(s);
            return WB_SEARCH_ENOMEM;
        }
        s->owned_bytes += s->lanes.bytes;
        for (size_t n = 1; n <= WB_LANES_LONGEST; n++)
            s->lane_slot[n] = (uint8_t)(1 + wb_lanes_slot(wb_lanes_width(n, qlen)));
        s->group = wb_lanes_has_run4(s->kernel) ? 4 : 2;
    }
    return WB_SEARCH_OK;
}

wb_search_status wb_search_init_op(wb_search *s, const wb_search_set *set, const uint8_t *query,
                                   size_t qlen, bool codepoints, wb_search_op op) {
    wb_search_status status =
        wb_search_init(s, set, query, qlen, codepoints, WB_SEARCH_NO_LIMIT, 0);
    if (status != WB_SEARCH_OK) return status;
    s->op = op;
    for (int i = 0; i < 4; i++)
        s->batch[i].op = (wb_lanes_op)op;
    /* a batch's Jaro is done in one go, its query within a lane */
    if (op == WB_SEARCH_JARO && qlen > WB_LANES_JARO_QUERY_MOST) {
        s->kernel = WB_LANES_OFF;
        memset(s->lane_slot, 0, sizeof s->lane_slot);
    }
    return WB_SEARCH_OK;
}

size_t wb_search_hits(const wb_search *s, const wb_search_hit **hits) {
    *hits = s->heap;
    return s->heap_len;
}

size_t wb_search_memory(const wb_search *s) {
    return s->owned_bytes;
}

void wb_search_free(wb_search *s) {
    wb_search_free_with(s, blocks.free);
}

void wb_search_free_with(wb_search *s, void (*release)(void *block, size_t bytes)) {
    size_t count = s->set ? s->set->count : 0;
    size_t heap_room = s->limit < count ? s->limit : count;
    free(s->query);
    release(s->distances, count * sizeof *s->distances);
    release(s->heap, heap_room * sizeof *s->heap);
    wb_lanes_query_free(&s->lanes);
    if (s->pair_running) wb_lev_free(&s->pair);
    wb_lev_pattern_free(&s->pattern);
    s->pair_running = false;
    s->running = false;
    s->query = NULL;
    s->distances = NULL;
    s->heap = NULL;
}

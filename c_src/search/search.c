#include "search.h"

#include "../levenshtein/levenshtein.h"

#include <stdlib.h>
#include <string.h>

bool wb_search_set_alloc(wb_search_owned_set *s, size_t count, size_t total) {
    memset(s, 0, sizeof *s);
    if (count >= SIZE_MAX / sizeof(uint64_t) - 1) return false;
    s->offsets = calloc(count + 1, sizeof(uint64_t));
    s->bytes = malloc(total ? total : 1);
    if (!s->offsets || !s->bytes) {
        wb_search_set_free(s);
        return false;
    }
    s->owned_bytes = (count + 1) * sizeof(uint64_t) + (total ? total : 1);
    s->set = (wb_search_set){.count = count, .bytes = s->bytes, .offsets = s->offsets};
    return true;
}

void wb_search_set_free(wb_search_owned_set *s) {
    free(s->offsets);
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

uint64_t wb_search_predict(const wb_search_set *set, size_t qlen) {
    uint64_t words = qlen <= 64 ? 1 : (qlen + 63) / 64;
    return (set->offsets[set->count] + set->count) * words;
}

wb_search_status wb_search_init(wb_search *s, const wb_search_set *set, const uint8_t *query,
                                size_t qlen, bool codepoints, size_t max_distance, size_t limit) {
    memset(s, 0, sizeof *s);
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
        /* the query's UTF-8 is checked once, against the empty string */
        wb_lev_status st;
        if (wb_lev_distance(query, qlen, (const uint8_t *)"", 0, true, WB_LEV_NO_LIMIT, &st) ==
            SIZE_MAX) {
            wb_search_free(s);
            return st == WB_LEV_ENOMEM ? WB_SEARCH_ENOMEM : WB_SEARCH_EUTF8_QUERY;
        }
    }
    if (limit == 0) {
        s->distances = malloc(set->count ? set->count * sizeof(uint32_t) : 1);
        if (!s->distances) {
            wb_search_free(s);
            return WB_SEARCH_ENOMEM;
        }
        s->owned_bytes += set->count * sizeof(uint32_t);
    } else {
        size_t n = limit < set->count ? limit : set->count;
        s->heap = malloc(n ? n * sizeof(wb_search_hit) : 1);
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
    return WB_SEARCH_OK;
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
        uint64_t eq = peq[t[j]];
        uint64_t xv = eq | vn;
        uint64_t xh = (((eq & vp) + vp) ^ vp) | eq;
        uint64_t ph = vn | ~(xh | vp);
        uint64_t mh = vp & xh;
        score += (ph & last) ? 1 : 0;
        score -= (mh & last) ? 1 : 0;
        ph = (ph << 1) | 1;
        mh <<= 1;
        vp = mh | ~(xv | ph);
        vn = ph & xv;
        /* the score falls by at most one per remaining byte */
        size_t left = n - 1 - j;
        if (score > bound && score - bound > left) return bound + 1;
    }
    return score;
}

static bool hit_less(const wb_search_hit *a, const wb_search_hit *b) {
    return a->distance < b->distance || (a->distance == b->distance && a->index < b->index);
}

static int hit_order(const void *a, const void *b) {
    const wb_search_hit *x = a, *y = b;
    return hit_less(x, y) ? -1 : hit_less(y, x) ? 1 : 0;
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

/* The cutoff for the next candidate: the caller's, and in nearest once the
 * heap is full, under the worst hit kept (a tie loses to the earlier
 * candidate). SIZE_MAX - 1 at most, so that bound + 1 never wraps. */
static size_t current_bound(const wb_search *s, bool *none) {
    size_t bound = s->max_distance == WB_SEARCH_NO_LIMIT ? SIZE_MAX - 1 : s->max_distance;
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

bool wb_search_step(wb_search *s, uint64_t budget, uint64_t *used) {
    const wb_search_set *set = s->set;
    uint64_t done = 0;
    while (s->next < set->count) {
        size_t i = s->next;
        const uint8_t *t = set->bytes + set->offsets[i];
        size_t n = (size_t)(set->offsets[i + 1] - set->offsets[i]);
        bool none;
        size_t bound = current_bound(s, &none);
        if (none) { /* nothing can enter the hits any more */
            done += set->count - i;
            s->next = set->count;
            break;
        }
        size_t d;
        if (s->fast) {
            d = myers_word(s->peq, s->qlen, t, n, bound);
            done += n + 1;
        } else if (s->qlen == 0 && !s->codepoints) {
            d = n > bound ? bound + 1 : n;
            done += 1;
        } else {
            size_t k = bound >= SIZE_MAX - 1 ? WB_LEV_NO_LIMIT : bound;
            wb_lev_status st;
            d = wb_lev_distance(s->query, s->qlen, t, n, s->codepoints, k, &st);
            if (st != WB_LEV_OK) {
                s->status = st == WB_LEV_ENOMEM ? WB_SEARCH_ENOMEM : WB_SEARCH_EUTF8_CANDIDATE;
                s->failed_at = i;
                *used += done + 1;
                return true;
            }
            done += wb_lev_predict(s->query, s->qlen, t, n, k) + 1;
        }
        if (s->limit == 0) {
            s->distances[i] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
        } else if (d <= bound) {
            wb_search_hit hit = {.distance = (uint32_t)d, .index = i};
            if (s->heap_len < s->limit) {
                heap_push(s->heap, &s->heap_len, hit);
            } else {
                s->heap[0] = hit;
                heap_sift_down(s->heap, s->heap_len, 0);
            }
        }
        s->next = i + 1;
        if (done >= budget) break;
    }
    *used += done;
    if (s->next < set->count) return false;
    /* finished: the hits in order, once */
    if (s->heap_len > 1) qsort(s->heap, s->heap_len, sizeof *s->heap, hit_order);
    return true;
}

size_t wb_search_hits(const wb_search *s, const wb_search_hit **hits) {
    *hits = s->heap;
    return s->heap_len;
}

size_t wb_search_memory(const wb_search *s) {
    return s->owned_bytes;
}

void wb_search_free(wb_search *s) {
    free(s->query);
    free(s->distances);
    free(s->heap);
    s->query = NULL;
    s->distances = NULL;
    s->heap = NULL;
}

/*
 * Filling a batch for one lane width, included by lanes.c once per width
 * with WB_W defined: start_<W> sets a batch's starting vectors, load_<W>
 * each lane's match masks in the query's table. Lanes past b->used keep
 * whatever masks they had: with mask 0, they never count.
 */
#define WB_CAT2(a, b) a##b
#define WB_CAT(a, b)  WB_CAT2(a, b)
#define WB_T          WB_CAT(WB_CAT(uint, WB_W), _t)
#define WB_A          WB_CAT(alias, WB_W)

typedef WB_T WB_A __attribute__((may_alias));

/* The starting vectors (every vertical delta +1: bits past a lane's
 * candidate never reach it) and the masks: lane l holds a candidate of
 * len[l] bytes (1..WB_W); lanes past b->used have mask 0. */
static void WB_CAT(start_, WB_W)(wb_lanes *b, const uint8_t *len) {
    WB_A *mask = (WB_A *)b->mask;
    memset(b->vp, 0xff, sizeof b->vp);
    memset(b->vn, 0, sizeof b->vn);
    for (unsigned l = 0; l < wb_lanes_count(WB_W); l++)
        mask[l] = l < b->used ? (WB_T)(((WB_T)1 << (len[l] - 1)) * 2 - 1) : 0;
}

/* Each lane's match masks in the query's table. */
static void WB_CAT(load_, WB_W)(wb_lanes *b, const wb_lanes_query *q, const uint8_t *bytes,
                                const uint64_t *offsets) {
    for (unsigned l = 0; l < b->used; l++) {
        const uint8_t *t = bytes + offsets[b->index[l]];
        size_t n = (size_t)(offsets[b->index[l] + 1] - offsets[b->index[l]]); /* 1..WB_W */
#if WB_LANES_X86
        /* each query byte against 16 candidate bytes at a time: a row's mask
         * for this lane in one store (reads up to 63 bytes past the
         * candidate: the set's padding) */
        uint64_t low = n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
        __m128i chunk[WB_W > 16 ? WB_W / 16 : 1];
        size_t chunks = (n + 15) / 16;
        for (size_t k = 0; k < chunks; k++)
            chunk[k] = _mm_loadu_si128((const __m128i *)(t + 16 * k));
        for (size_t r = 0; r < q->distinct; r++) {
            __m128i c = _mm_set1_epi8((char)q->bytes_of_rows[r]);
            uint64_t m = 0;
            for (size_t k = 0; k < chunks; k++)
                m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(chunk[k], c)) << (16 * k);
            ((WB_A *)q->table[r])[l] = (WB_T)(m & low);
        }
#else
        for (size_t r = 0; r < q->distinct; r++)
            ((WB_A *)q->table[r])[l] = 0;
        for (size_t i = 0; i < n; i++)
            ((WB_A *)q->table[q->rows[t[i]]])[l] |= (WB_T)((WB_T)1 << i);
#endif
    }
}

#undef WB_CAT2
#undef WB_CAT
#undef WB_T
#undef WB_A

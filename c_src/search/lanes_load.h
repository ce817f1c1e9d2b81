/*
 * Filling a batch for one lane width, included by lanes.c once per width
 * with WB_W defined: start_<W> sets a batch's lane masks, load_<W> each
 * lane's match masks in the query's table.
 */
#define WB_CAT2(a, b) a##b
#define WB_CAT(a, b)  WB_CAT2(a, b)
#define WB_T          WB_CAT(WB_CAT(uint, WB_W), _t)
#define WB_A          WB_CAT(alias, WB_W)

typedef WB_T WB_A __attribute__((may_alias));

/* The masks: lane l holds a candidate of len[l] bytes (1..WB_W); lanes
 * past b->used have mask 0, and never count. */
static void WB_CAT(start_, WB_W)(wb_lanes *b, const uint8_t *len) {
    WB_A *mask = (WB_A *)b->mask;
    for (unsigned l = 0; l < wb_lanes_count(WB_W); l++)
        mask[l] = l < b->used ? (WB_T)(((WB_T)1 << (len[l] - 1)) * 2 - 1) : 0;
}

/* Each lane's match masks in the query's table: the table is cleared,
 * then each candidate byte sets its bit in its row (bytes the query does
 * not hold share a row that is never read). */
static void WB_CAT(load_, WB_W)(wb_lanes *b, const wb_lanes_query *q, wb_lanes_table to,
                                const uint8_t *bytes, const uint64_t *offsets) {
    unsigned char *restrict table = to[0];
    uint8_t rows[256]; /* a copy the stores below cannot alias */
    memcpy(rows, q->rows, sizeof rows);
    memset(table, 0, (q->distinct + 1) * WB_LANES_BYTES);
    for (unsigned l = 0; l < b->used; l++) {
        size_t n;
        const uint8_t *t = lane_candidate(b, bytes, offsets, l, &n);
        WB_A *lane = (WB_A *)table + l;
        for (size_t i = 0; i < n; i++)
            lane[(size_t)rows[t[i]] * (WB_LANES_BYTES / sizeof(WB_T))] |= (WB_T)((WB_T)1 << i);
    }
}

#if WB_LANES_X86
/* The same table by byte compares: for each lane, each query byte compared
 * with all the candidate's bytes at once, its mask written whole (no
 * read-modify-write of a cell per candidate byte). */
#define WB_CHUNKS ((WB_W + 15) / 16) /* 16-byte pieces of a lane's candidate */

/* Every cell of a used lane in a row the query reads is written whole, so
 * only the lanes past b->used are cleared (the row of the bytes the query
 * lacks is never read). */
static void WB_CAT(clear_unused_, WB_W)(const wb_lanes *b, const wb_lanes_query *q,
                                        wb_lanes_table to) {
    size_t from = (size_t)b->used * sizeof(WB_T);
    if (from == WB_LANES_BYTES) return;
    for (size_t r = 0; r < q->distinct; r++)
        memset(to[r] + from, 0, WB_LANES_BYTES - from);
}

static void WB_CAT(fill_sse2_, WB_W)(wb_lanes *b, const wb_lanes_query *q, wb_lanes_table to,
                                     const uint8_t *bytes, const uint64_t *offsets) {
    unsigned char *restrict table = to[0];
    WB_CAT(clear_unused_, WB_W)(b, q, to);
    for (unsigned l = 0; l < b->used; l++) {
        size_t n;
        const uint8_t *t = lane_candidate(b, bytes, offsets, l, &n);
        uint8_t padded[16 * WB_CHUNKS] = {0};
        memcpy(padded, t, n);
        __m128i piece[WB_CHUNKS];
        for (int c = 0; c < WB_CHUNKS; c++)
            piece[c] = _mm_loadu_si128((const __m128i *)(padded + 16 * c));
        uint64_t keep = low_bits(n);
        for (size_t r = 0; r < q->distinct; r++) {
            __m128i byte = _mm_set1_epi8((char)q->bytes_of_rows[r]);
            uint64_t m = 0;
            for (int c = 0; c < WB_CHUNKS; c++)
                m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(piece[c], byte))
                     << (16 * c);
            ((WB_A *)table)[r * (WB_LANES_BYTES / sizeof(WB_T)) + l] = (WB_T)(m & keep);
        }
    }
}

#define WB_AVX512 WB_AVX512_TARGET
#define WB_GROUP  (64 / WB_W) /* lanes whose candidates fill one 64-byte vector */

#ifndef WB_LANES_EMULATE_AVX512

/* Lane l's candidate, its bytes past the end zero (a lane past b->used:
 * all zero), in a vector of WB_W bytes (at most 16: in the low ones). */
#if WB_W == 32
#define WB_PIECE            __m256i
#define WB_PIECE_ZERO()     _mm256_setzero_si256()
#define WB_PIECE_LOAD(n, t) _mm256_maskz_loadu_epi8((__mmask32)low_bits(n), t)
#else
#define WB_PIECE            __m128i
#define WB_PIECE_ZERO()     _mm_setzero_si128()
#define WB_PIECE_LOAD(n, t) _mm_maskz_loadu_epi8((__mmask16)low_bits(n), t)
#endif
#if WB_W < 64
WB_AVX512 static inline WB_PIECE WB_CAT(piece_, WB_W)(const wb_lanes *b, const uint8_t *bytes,
                                                      const uint64_t *offsets, unsigned l) {
    if (l >= b->used) return WB_PIECE_ZERO();
    size_t n;
    const uint8_t *t = lane_candidate(b, bytes, offsets, l, &n);
    return WB_PIECE_LOAD(n, t);
}
#endif
#undef WB_PIECE
#undef WB_PIECE_ZERO
#undef WB_PIECE_LOAD

/* The candidates of lanes l .. l + WB_GROUP - 1, side by side as their
 * lanes are in a row: lane l + g's bytes at bytes WB_W * g. */
WB_AVX512 static inline __m512i WB_CAT(group_, WB_W)(const wb_lanes *b, const uint8_t *bytes,
                                                     const uint64_t *offsets, unsigned l) {
#if WB_W == 64
    size_t n;
    const uint8_t *t = lane_candidate(b, bytes, offsets, l, &n);
    return _mm512_maskz_loadu_epi8(low_bits(n), t);
#elif WB_W == 32
    __m256i lo = WB_CAT(piece_, WB_W)(b, bytes, offsets, l),
            hi = WB_CAT(piece_, WB_W)(b, bytes, offsets, l + 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
#else
    __m128i quarter[4];
    for (unsigned k = 0; k < 4; k++) {
#if WB_W == 16
        quarter[k] = WB_CAT(piece_, WB_W)(b, bytes, offsets, l + k);
#else /* two candidates of up to 8 bytes a quarter */
        quarter[k] = _mm_unpacklo_epi64(WB_CAT(piece_, WB_W)(b, bytes, offsets, l + 2 * k),
                                        WB_CAT(piece_, WB_W)(b, bytes, offsets, l + 2 * k + 1));
#endif
    }
    __m512i v = _mm512_castsi128_si512(quarter[0]);
    v = _mm512_inserti32x4(v, quarter[1], 1);
    v = _mm512_inserti32x4(v, quarter[2], 2);
    return _mm512_inserti32x4(v, quarter[3], 3);
#endif
}

/* WB_GROUP lanes at a time: their candidates in one vector, compared with
 * each query byte, the mask (WB_GROUP lanes' cells) written as one word.
 * The lane masks (start_<W>, already set) clear the bits past each
 * candidate, and every cell of a lane past b->used in that word. */
WB_AVX512 static void WB_CAT(fill_avx512_, WB_W)(wb_lanes *b, const wb_lanes_query *q,
                                                 wb_lanes_table to, const uint8_t *bytes,
                                                 const uint64_t *offsets) {
    unsigned char *restrict table = to[0];
    WB_CAT(clear_unused_, WB_W)(b, q, to);
    for (unsigned l = 0; l < b->used; l += WB_GROUP) {
        __m512i v = WB_CAT(group_, WB_W)(b, bytes, offsets, l);
        uint64_t keep;
        memcpy(&keep, b->mask + (size_t)l * sizeof(WB_T), 8);
        for (size_t r = 0; r < q->distinct; r++) {
            uint64_t m =
                _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8((char)q->bytes_of_rows[r])) & keep;
            memcpy(table + r * WB_LANES_BYTES + (size_t)l * sizeof(WB_T), &m, 8);
        }
    }
}
#else
/* fill_avx512_<W> in portable code: the same groups of lanes and words
 * (tests of the AVX-512 kernels on a CPU without AVX-512) */
static void WB_CAT(fill_avx512_, WB_W)(wb_lanes *b, const wb_lanes_query *q, wb_lanes_table to,
                                       const uint8_t *bytes, const uint64_t *offsets) {
    unsigned char *restrict table = to[0];
    WB_CAT(clear_unused_, WB_W)(b, q, to);
    for (unsigned l = 0; l < b->used; l += WB_GROUP) {
        uint8_t v[64] = {0};
        for (unsigned g = 0; g < WB_GROUP && l + g < b->used; g++) {
            size_t n;
            const uint8_t *t = lane_candidate(b, bytes, offsets, l + g, &n);
            memcpy(v + (size_t)WB_W * g, t, n);
        }
        uint64_t keep;
        memcpy(&keep, b->mask + (size_t)l * sizeof(WB_T), 8);
        for (size_t r = 0; r < q->distinct; r++) {
            uint64_t m = 0;
            for (unsigned i = 0; i < 64; i++)
                m |= (uint64_t)(v[i] == q->bytes_of_rows[r]) << i;
            m &= keep;
            memcpy(table + r * WB_LANES_BYTES + (size_t)l * sizeof(WB_T), &m, 8);
        }
    }
}
#endif
#undef WB_AVX512
#undef WB_GROUP
#undef WB_CHUNKS
#endif

#undef WB_CAT2
#undef WB_CAT
#undef WB_T
#undef WB_A

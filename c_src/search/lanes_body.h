/*
 * One lane kernel, included by lanes.c once per lane width and instruction
 * set, with WB_W (bits per lane: 8, 16, 32 or 64), WB_NB (bytes of the
 * machine's vector: 16, 32 or 64), WB_ISA (a name) and WB_TARGET (the
 * function attribute) defined. It defines run_<W>_<ISA>: the steps of a
 * batch over query bytes. A batch's 64 bytes of lanes are WB_LANES_BYTES /
 * WB_NB machine vectors, worked on side by side: independent chains the
 * processor overlaps.
 */
#define WB_CAT2(a, b) a##b
#define WB_CAT(a, b)  WB_CAT2(a, b)
#define WB_T          WB_CAT(WB_CAT(uint, WB_W), _t)
#define WB_V          WB_CAT(WB_CAT(vec, WB_W), WB_ISA)

typedef WB_T WB_V __attribute__((vector_size(WB_NB), may_alias));

/* The state of part k (machine vector k of the 64 bytes) in variables of
 * their own, so that the compiler keeps them in registers. */
#define WB_PART_DECLARE(k) WB_V vp##k, vn##k, score##k, last##k;
#define WB_PART_LOAD(k)                                                                            \
    memcpy(&vp##k, b->vp + (k)*WB_NB, WB_NB);                                                      \
    memcpy(&vn##k, b->vn + (k)*WB_NB, WB_NB);                                                      \
    memcpy(&score##k, b->score + (k)*WB_NB, WB_NB);                                                \
    memcpy(&last##k, b->last + (k)*WB_NB, WB_NB);
#define WB_PART_STORE(k)                                                                           \
    memcpy(b->vp + (k)*WB_NB, &vp##k, WB_NB);                                                      \
    memcpy(b->vn + (k)*WB_NB, &vn##k, WB_NB);                                                      \
    memcpy(b->score + (k)*WB_NB, &score##k, WB_NB);
#define WB_PART_SCORE(k) memcpy((unsigned char *)lanes + (k)*WB_NB, &score##k, WB_NB);
/* One step of part k. The last row moves by +1 (ph), -1 (mh) or 0; x &
 * last is 0 or last, and its negation has the top bit set exactly when it
 * is not 0 (shifts, not comparisons, which compilers may split lane by
 * lane). */
#define WB_PART_STEP(k)                                                                            \
    {                                                                                              \
        WB_V eq = *(const WB_V *)(row + (k)*WB_NB);                                                \
        WB_V xv = eq | vn##k;                                                                      \
        WB_V xh = (((eq & vp##k) + vp##k) ^ vp##k) | eq;                                           \
        WB_V ph = vn##k | ~(xh | vp##k);                                                           \
        WB_V mh = vp##k & xh;                                                                      \
        score##k += -(ph & last##k) >> (WB_W - 1);                                                 \
        score##k -= -(mh & last##k) >> (WB_W - 1);                                                 \
        ph = (ph + ph) | 1;                                                                        \
        mh = mh + mh;                                                                              \
        vp##k = mh | ~(xv | ph);                                                                   \
        vn##k = ph & xv;                                                                           \
    }
#if WB_LANES_BYTES / WB_NB == 1
#define WB_PARTS(m) m(0)
#elif WB_LANES_BYTES / WB_NB == 2
#define WB_PARTS(m) m(0) m(1)
#else
#define WB_PARTS(m) m(0) m(1) m(2) m(3)
#endif

WB_TARGET static size_t WB_CAT(WB_CAT(WB_CAT(run_, WB_W), _),
                               WB_ISA)(wb_lanes *b, const wb_lanes_table table, const uint8_t *rows,
                                       const uint8_t *query, size_t qlen, size_t bound,
                                       size_t max_steps) {
    const WB_T top = (WB_T) ~(WB_T)0;
    WB_PARTS(WB_PART_DECLARE)
    WB_PARTS(WB_PART_LOAD)
    size_t j = b->pos, end = qlen - j > max_steps ? j + max_steps : qlen;
    while (j < end) {
        size_t stop = end - j > 8 ? j + 8 : end;
        for (; j < stop; j++) {
            const unsigned char *row = table[rows[query[j]]]; /* 64-byte aligned */
            WB_PARTS(WB_PART_STEP)
        }
        /* a lane's score falls by at most one per query byte left */
        size_t left = qlen - j;
        if (bound < top && left < (size_t)top - bound) {
            WB_T limit = (WB_T)(bound + left), lanes[WB_LANES_BYTES * 8 / WB_W];
            bool any = false;
            WB_PARTS(WB_PART_SCORE)
            for (unsigned l = 0; l < b->used; l++)
                any |= lanes[l] <= limit;
            if (!any) {
                b->hopeless = true;
                break;
            }
        }
    }
    size_t done = j - b->pos;
    WB_PARTS(WB_PART_STORE)
    b->pos = j;
    return done;
}

#undef WB_PART_DECLARE
#undef WB_PART_LOAD
#undef WB_PART_STORE
#undef WB_PART_SCORE
#undef WB_PART_STEP
#undef WB_PARTS
#undef WB_CAT2
#undef WB_CAT
#undef WB_T
#undef WB_V

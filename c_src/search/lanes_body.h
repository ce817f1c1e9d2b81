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
#define WB_POPCOUNT   WB_CAT(WB_CAT(popcount_, WB_W), WB_ISA)

typedef WB_T WB_V __attribute__((vector_size(WB_NB), may_alias));

/* The vectors of part k (machine vector k of the 64 bytes) of batch b in
 * variables of their own (vp<k>, vn<k>; a second batch in flight: wp<k>,
 * wn<k>), so that the compiler keeps them in registers. */
#define WB_ON_DECLARE(P, N, k) WB_V P##k, N##k;
#define WB_ON_LOAD(b, P, N, k)                                                                     \
    memcpy(&P##k, (b)->vp + (k)*WB_NB, WB_NB);                                                     \
    memcpy(&N##k, (b)->vn + (k)*WB_NB, WB_NB);
#define WB_ON_STORE(b, P, N, k)                                                                    \
    memcpy((b)->vp + (k)*WB_NB, &P##k, WB_NB);                                                     \
    memcpy((b)->vn + (k)*WB_NB, &N##k, WB_NB);
/* One step of part k: the column of the next query byte (Hyyro's form,
 * with the horizontal +1 deltas kept complemented, hpc, so that every NOT
 * folds into an and-not). */
#define WB_ON_STEP(row, P, N, k)                                                                   \
    {                                                                                              \
        WB_V eq = *(const WB_V *)((row) + (k)*WB_NB);                                              \
        WB_V x = eq | N##k;                                                                        \
        WB_V d0 = (((x & P##k) + P##k) ^ P##k) | x;                                                \
        WB_V hpc = ~N##k & (d0 | P##k);                                                            \
        WB_V hn = d0 & P##k;                                                                       \
        hpc = hpc + hpc; /* the row above the first: a +1 delta */                                 \
        hn = hn + hn;                                                                              \
        P##k = hn | (~d0 & hpc);                                                                   \
        N##k = d0 & ~hpc;                                                                          \
    }
/* d<k>: each lane's distance to the query bytes done (j of them), modulo
 * 2^W (the lane width is chosen so that it is below). */
#define WB_ON_DISTANCE(b, P, N, k)                                                                 \
    WB_V mask##k, d##k;                                                                            \
    memcpy(&mask##k, (b)->mask + (k)*WB_NB, WB_NB);                                                \
    d##k = jv + WB_POPCOUNT(P##k & mask##k) - WB_POPCOUNT(N##k & mask##k);
/* alive: the lanes holding a candidate that can still end at or under
 * the bound */
#define WB_ON_ALIVE(b, P, N, k)                                                                    \
    {                                                                                              \
        WB_ON_DISTANCE(b, P, N, k)                                                                 \
        alive |= (WB_V)(d##k <= limit) & (WB_V)(mask##k != 0);                                     \
    }
#define WB_ON_SCORE(b, P, N, k)                                                                    \
    {                                                                                              \
        WB_ON_DISTANCE(b, P, N, k)                                                                 \
        memcpy((b)->score + (k)*WB_NB, &d##k, WB_NB);                                              \
    }
/* the same, on batch b (vp, vn) and on a second one in flight, c (wp, wn) */
#define WB_PART_DECLARE(k)  WB_ON_DECLARE(vp, vn, k)
#define WB_PART_LOAD(k)     WB_ON_LOAD(b, vp, vn, k)
#define WB_PART_STORE(k)    WB_ON_STORE(b, vp, vn, k)
#define WB_PART_STEP(k)     WB_ON_STEP(row, vp, vn, k)
#define WB_PART_ALIVE(k)    WB_ON_ALIVE(b, vp, vn, k)
#define WB_PART_SCORE(k)    WB_ON_SCORE(b, vp, vn, k)
#define WB_OTHER_DECLARE(k) WB_ON_DECLARE(wp, wn, k)
#define WB_OTHER_LOAD(k)    WB_ON_LOAD(c, wp, wn, k)
#define WB_OTHER_STORE(k)   WB_ON_STORE(c, wp, wn, k)
#define WB_OTHER_STEP(k)    WB_ON_STEP(other_row, wp, wn, k)
#define WB_OTHER_ALIVE(k)   WB_ON_ALIVE(c, wp, wn, k)
#define WB_OTHER_SCORE(k)   WB_ON_SCORE(c, wp, wn, k)
#if WB_LANES_BYTES / WB_NB == 1
#define WB_PARTS(m) m(0)
#elif WB_LANES_BYTES / WB_NB == 2
#define WB_PARTS(m) m(0) m(1)
#elif WB_LANES_BYTES / WB_NB == 4
#define WB_PARTS(m) m(0) m(1) m(2) m(3)
#else
#define WB_PARTS(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7)
#endif

/* The bits set in each lane. */
WB_TARGET static inline WB_V WB_POPCOUNT(WB_V x) {
    x = x - ((x >> 1) & (WB_T)0x5555555555555555u);
    x = (x & (WB_T)0x3333333333333333u) + ((x >> 2) & (WB_T)0x3333333333333333u);
    x = (x + (x >> 4)) & (WB_T)0x0f0f0f0f0f0f0f0fu;
#if WB_W > 8
    x = x + (x >> 8);
#endif
#if WB_W > 16
    x = x + (x >> 16);
#endif
#if WB_W > 32
    x = x + (x >> 32);
#endif
    return x & (WB_T)0x7f;
}

/* Any lane set in a comparison's result. */
WB_TARGET static inline bool WB_CAT(WB_CAT(any_, WB_W), WB_ISA)(WB_V alive) {
    uint64_t any[WB_NB / 8];
    memcpy(any, &alive, WB_NB);
    uint64_t some = 0;
    for (size_t k = 0; k < WB_NB / 8; k++)
        some |= any[k];
    return some != 0;
}

/* Whether the lanes are looked at after j of the qlen query bytes: some
 * are left and a lane's score can still show the bound. A lane's distance
 * falls by at most one per query byte left, so it can end at or under
 * `bound` only while it is at or under *limit (set when true). */
WB_TARGET static inline bool WB_CAT(WB_CAT(look_due_, WB_W), WB_ISA)(size_t j, size_t qlen,
                                                                     size_t bound, WB_T *limit) {
    const WB_T top = (WB_T) ~(WB_T)0;
    size_t left = qlen - j;
    if (!left || bound >= top || left >= (size_t)top - bound) return false;
    *limit = (WB_T)(bound + left);
    return true;
}
#define WB_LOOK_DUE(j, qlen, bound, limit)                                                         \
    WB_CAT(WB_CAT(look_due_, WB_W), WB_ISA)(j, qlen, bound, limit)
/* out: no lane of a batch (its parts' ALIVE) can end at or under the
 * bound any more; jv and limit in scope */
#define WB_NONE_ALIVE(ALIVE, out)                                                                  \
    {                                                                                              \
        WB_V alive = zero;                                                                         \
        WB_PARTS(ALIVE)                                                                            \
        out = !WB_CAT(WB_CAT(any_, WB_W), WB_ISA)(alive);                                          \
    }

WB_TARGET static size_t WB_CAT(WB_CAT(WB_CAT(run_, WB_W), _),
                               WB_ISA)(wb_lanes *b, const wb_lanes_table table, const uint8_t *rows,
                                       const uint8_t *query, size_t qlen, size_t bound,
                                       size_t max_steps) {
    const WB_V zero = {0};
    WB_PARTS(WB_PART_DECLARE)
    WB_PARTS(WB_PART_LOAD)
    size_t j = b->pos, end = qlen - j > max_steps ? j + max_steps : qlen;
    while (j < end) {
        /* a check costs about two steps: one per 16 */
        size_t stop = end - j > 16 ? j + 16 : end;
        for (; j < stop; j++) {
            const unsigned char *row = table[rows[query[j]]]; /* 64-byte aligned */
            WB_PARTS(WB_PART_STEP)
        }
        WB_T limit;
        if (WB_LOOK_DUE(j, qlen, bound, &limit)) {
            WB_V jv = zero + (WB_T)j;
            WB_NONE_ALIVE(WB_PART_ALIVE, b->hopeless)
            if (b->hopeless) break;
        }
    }
    size_t done = j - b->pos;
    if (j == qlen && !b->hopeless) {
        WB_V jv = zero + (WB_T)j;
        WB_PARTS(WB_PART_SCORE)
    }
    WB_PARTS(WB_PART_STORE)
    b->pos = j;
    return done;
}

/* Two batches of this width at the same query byte, stepped together: two
 * independent chains of vector operations for the processor to overlap,
 * where one batch alone waits on each step's result. Stops, with the same
 * steps done in both, once either is hopeless. */
WB_TARGET static size_t WB_CAT(WB_CAT(WB_CAT(run2_, WB_W), _),
                               WB_ISA)(wb_lanes *b, const wb_lanes_table table, const uint8_t *rows,
                                       wb_lanes *c, const wb_lanes_table other_table,
                                       const uint8_t *other_rows, const uint8_t *query, size_t qlen,
                                       size_t bound, size_t max_steps) {
    const WB_V zero = {0};
    WB_PARTS(WB_PART_DECLARE)
    WB_PARTS(WB_OTHER_DECLARE)
    WB_PARTS(WB_PART_LOAD)
    WB_PARTS(WB_OTHER_LOAD)
    size_t j = b->pos, end = qlen - j > max_steps ? j + max_steps : qlen;
    while (j < end) {
        size_t stop = end - j > 16 ? j + 16 : end;
        for (; j < stop; j++) {
            const unsigned char *row = table[rows[query[j]]];
            const unsigned char *other_row = other_table[other_rows[query[j]]];
            WB_PARTS(WB_PART_STEP)
            WB_PARTS(WB_OTHER_STEP)
        }
        WB_T limit;
        if (WB_LOOK_DUE(j, qlen, bound, &limit)) {
            WB_V jv = zero + (WB_T)j;
            WB_NONE_ALIVE(WB_PART_ALIVE, b->hopeless)
            WB_NONE_ALIVE(WB_OTHER_ALIVE, c->hopeless)
            if (b->hopeless || c->hopeless) break;
        }
    }
    size_t done = j - b->pos;
    if (j == qlen) {
        WB_V jv = zero + (WB_T)j;
        if (!b->hopeless) {
            WB_PARTS(WB_PART_SCORE)
        }
        if (!c->hopeless) {
            WB_PARTS(WB_OTHER_SCORE)
        }
    }
    WB_PARTS(WB_PART_STORE)
    WB_PARTS(WB_OTHER_STORE)
    b->pos = c->pos = j;
    return done;
}

#if WB_NB == 64
/* Four batches of this width at the same query byte (a batch is one
 * vector here): four chains, where two still wait on each step's result.
 * A batch found hopeless goes on being stepped with the others (its
 * flag set, its score never read); they stop once all four are hopeless,
 * or at the query's end. Each step also asks for the rows of its query
 * byte in the four batches to come (`fetch`): spread over the steps, not
 * in a burst the memory system drops. */
#define WB_Q_DECLARE(k)                                                                            \
    WB_ON_DECLARE(ap, an, k)                                                                       \
    WB_ON_DECLARE(bp, bn, k) WB_ON_DECLARE(cp, cn, k) WB_ON_DECLARE(dp, dn, k)
#define WB_Q_LOAD(k)                                                                               \
    WB_ON_LOAD(q[0], ap, an, k)                                                                    \
    WB_ON_LOAD(q[1], bp, bn, k) WB_ON_LOAD(q[2], cp, cn, k) WB_ON_LOAD(q[3], dp, dn, k)
#define WB_Q_STORE(k)                                                                              \
    WB_ON_STORE(q[0], ap, an, k)                                                                   \
    WB_ON_STORE(q[1], bp, bn, k) WB_ON_STORE(q[2], cp, cn, k) WB_ON_STORE(q[3], dp, dn, k)
#define WB_Q_STEP(k)                                                                               \
    WB_ON_STEP(row0, ap, an, k)                                                                    \
    WB_ON_STEP(row1, bp, bn, k) WB_ON_STEP(row2, cp, cn, k) WB_ON_STEP(row3, dp, dn, k)
#define WB_Q0_ALIVE(k) WB_ON_ALIVE(q[0], ap, an, k)
#define WB_Q1_ALIVE(k) WB_ON_ALIVE(q[1], bp, bn, k)
#define WB_Q2_ALIVE(k) WB_ON_ALIVE(q[2], cp, cn, k)
#define WB_Q3_ALIVE(k) WB_ON_ALIVE(q[3], dp, dn, k)
#define WB_Q0_SCORE(k) WB_ON_SCORE(q[0], ap, an, k)
#define WB_Q1_SCORE(k) WB_ON_SCORE(q[1], bp, bn, k)
#define WB_Q2_SCORE(k) WB_ON_SCORE(q[2], cp, cn, k)
#define WB_Q3_SCORE(k) WB_ON_SCORE(q[3], dp, dn, k)
/* out |= batch i found hopeless now (it was not before) */
#define WB_Q_LOOK(i, ALIVE)                                                                        \
    if (!q[i]->hopeless) {                                                                         \
        bool none;                                                                                 \
        WB_NONE_ALIVE(ALIVE, none)                                                                 \
        q[i]->hopeless = none;                                                                     \
    }

WB_TARGET static size_t WB_CAT(WB_CAT(WB_CAT(run4_, WB_W), _),
                               WB_ISA)(wb_lanes *const q[4], const wb_lanes_table tables[4],
                                       const uint8_t *const rows[4],
                                       const wb_lanes_table fetch_tables[4],
                                       const uint8_t *const fetch_rows[4], const uint8_t *query,
                                       size_t qlen, size_t bound, size_t max_steps) {
    const WB_V zero = {0};
    WB_PARTS(WB_Q_DECLARE)
    WB_PARTS(WB_Q_LOAD)
    const wb_lanes_table t0 = tables[0], t1 = tables[1], t2 = tables[2], t3 = tables[3];
    const uint8_t *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
    const wb_lanes_table f0 = fetch_tables[0], f1 = fetch_tables[1], f2 = fetch_tables[2],
                         f3 = fetch_tables[3];
    const uint8_t *g0 = fetch_rows[0], *g1 = fetch_rows[1], *g2 = fetch_rows[2],
                  *g3 = fetch_rows[3];
    size_t j = q[0]->pos, end = qlen - j > max_steps ? j + max_steps : qlen;
    while (j < end) {
        size_t stop = end - j > 16 ? j + 16 : end;
        for (; j < stop; j++) {
            uint8_t c = query[j];
            const unsigned char *row0 = t0[r0[c]], *row1 = t1[r1[c]], *row2 = t2[r2[c]],
                                *row3 = t3[r3[c]];
            __builtin_prefetch(f0[g0[c]]);
            __builtin_prefetch(f1[g1[c]]);
            __builtin_prefetch(f2[g2[c]]);
            __builtin_prefetch(f3[g3[c]]);
            WB_PARTS(WB_Q_STEP)
        }
        WB_T limit;
        if (WB_LOOK_DUE(j, qlen, bound, &limit)) {
            WB_V jv = zero + (WB_T)j;
            WB_Q_LOOK(0, WB_Q0_ALIVE)
            WB_Q_LOOK(1, WB_Q1_ALIVE)
            WB_Q_LOOK(2, WB_Q2_ALIVE)
            WB_Q_LOOK(3, WB_Q3_ALIVE)
            if (q[0]->hopeless && q[1]->hopeless && q[2]->hopeless && q[3]->hopeless) break;
        }
    }
    size_t done = j - q[0]->pos;
    if (j == qlen) {
        WB_V jv = zero + (WB_T)j;
        if (!q[0]->hopeless) {
            WB_PARTS(WB_Q0_SCORE)
        }
        if (!q[1]->hopeless) {
            WB_PARTS(WB_Q1_SCORE)
        }
        if (!q[2]->hopeless) {
            WB_PARTS(WB_Q2_SCORE)
        }
        if (!q[3]->hopeless) {
            WB_PARTS(WB_Q3_SCORE)
        }
    }
    WB_PARTS(WB_Q_STORE)
    for (int i = 0; i < 4; i++)
        q[i]->pos = j;
    return done;
}
#undef WB_Q_DECLARE
#undef WB_Q_LOAD
#undef WB_Q_STORE
#undef WB_Q_STEP
#undef WB_Q0_ALIVE
#undef WB_Q1_ALIVE
#undef WB_Q2_ALIVE
#undef WB_Q3_ALIVE
#undef WB_Q0_SCORE
#undef WB_Q1_SCORE
#undef WB_Q2_SCORE
#undef WB_Q3_SCORE
#undef WB_Q_LOOK
#endif

#undef WB_ON_DECLARE
#undef WB_ON_LOAD
#undef WB_ON_STORE
#undef WB_ON_STEP
#undef WB_ON_DISTANCE
#undef WB_ON_ALIVE
#undef WB_ON_SCORE
#undef WB_OTHER_DECLARE
#undef WB_OTHER_LOAD
#undef WB_OTHER_STORE
#undef WB_OTHER_STEP
#undef WB_OTHER_ALIVE
#undef WB_OTHER_SCORE
#undef WB_PART_DECLARE
#undef WB_PART_LOAD
#undef WB_PART_STORE
#undef WB_PART_SCORE
#undef WB_PART_DISTANCE
#undef WB_PART_ALIVE
#undef WB_POPCOUNT
#undef WB_PART_STEP
#undef WB_PARTS
#undef WB_LOOK_DUE
#undef WB_NONE_ALIVE
#undef WB_CAT2
#undef WB_CAT
#undef WB_T
#undef WB_V

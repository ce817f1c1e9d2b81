/*
 * The steps of one lane kernel for one operation, included by lanes_body.h
 * once per operation with WB_OP (a wb_lanes_op as a number the
 * preprocessor compares, lanes_body.h's WB_OP_*) and WB_OPN (a name suffix)
 * defined, besides lanes_body.h's WB_W, WB_NB, WB_ISA and WB_TARGET. It
 * defines run_<W>_<ISA><OPN>, run2_... and (AVX-512) run4_...: a batch's
 * steps over query bytes. Lane l's candidate is the pattern, the query
 * the text (every operation here is symmetric):
 *
 *   - Levenshtein (Myers/Hyyro): vertical deltas vp, vn; the score is the
 *     distance.
 *   - LCS (Allison-Dix / Hyyro 2004): S in vp (vn unused), each step
 *     S = (S + (S & eq)) | (S & ~eq); the score is the LCS length, the
 *     zeros of S under the lane's mask.
 *   - OSA (Hyyro 2003): Levenshtein's deltas with a transposition term
 *     from the previous step's d0 and match masks (kept in d0 and pm); the
 *     score is the distance.
 *   - Hamming: vn gathers bit j where the query byte j is the candidate's
 *     byte j (vp unused); the score is the number of equal positions.
 *   - Jaro: a batch in one go (a query of at most 64 bytes, see jaro_);
 *     the score is the matches and the transpositions.
 *
 * Only Levenshtein and OSA scores are distances a cutoff can stop a batch
 * on; for LCS and Hamming no lane is ever hopeless (a search gives them
 * no cutoff).
 */
#define WB_RUN_NAME(f) WB_CAT(WB_CAT(WB_CAT(WB_CAT(f, WB_W), _), WB_ISA), WB_OPN)

#if WB_OP == WB_OP_JARO
/* Jaro: a query of at most 64 bytes against the lanes, a batch in one go
 * (no state between calls). Each query byte j, in order, takes in each
 * lane the lowest candidate position of its byte not taken yet within
 * the window [j - bound, j + bound], bound = max(n, qlen) / 2 - 1 (the
 * window moves one bit a step, its lower end held at 0 while j < bound),
 * and notes whether it took one. A second pass pairs each matched query
 * byte, in order, with the lowest taken position left: a transposition
 * where the candidate's byte there is not the query's (a bit of its own,
 * counted at the end). The score: the matches, and the transpositions
 * (before halving) shifted by half the lane width. Which side is walked
 * changes neither count. */
WB_TARGET static inline __attribute__((always_inline)) void
WB_RUN_NAME(jaro_)(wb_lanes *const *bs, const wb_lanes_table *tables, const uint8_t *const *rows,
                   const unsigned nb, const uint8_t *query, size_t qlen) {
    /* nb batches (a constant where inlined) of P machine vectors each:
     * independent chains for the processor to overlap */
    enum { P = WB_LANES_BYTES / WB_NB };
    const WB_V zero = {0}, one = zero + (WB_T)1;
    WB_V bv[4 * P], mask[4 * P], taken[4 * P], win[4 * P], rest[4 * P], odd[4 * P];
    /* whether query byte j took a position, lane by lane (all ones or
     * none): 16 KiB on the stack, read back by the second pass */
    WB_V took[WB_LANES_JARO_QUERY_MOST][4 * P];
    /* each lane's bound and first window, from its length n (the bits of
     * its mask), lane by lane in vectors: qlen <= 64, so bound <= 31 and
     * the window's width, bound + 1 capped at the lane's, at least 1 */
    const WB_V ql = zero + (WB_T)qlen, cap = zero + (WB_T)WB_W;
    for (unsigned i = 0; i < nb; i++) {
        for (size_t k = 0; k < P; k++) {
            size_t x = i * P + k;
            memcpy(&mask[x], bs[i]->mask + k * WB_NB, WB_NB);
            WB_V n = WB_POPCOUNT(mask[x]);
            WB_V most = (WB_V)(n > ql) & n, half;
            most |= ~(WB_V)(n > ql) & ql;
            half = most >> 1;
            bv[x] = half + (WB_V)(half != zero); /* half - 1, or 0 */
            WB_V width = bv[x] + one;
            width = ((WB_V)(width > cap) & cap) | (~(WB_V)(width > cap) & width);
            /* the low `width` bits: a shift by the lane's width is none */
            WB_V low = ((one << (width - one)) << 1) - one;
            win[x] = low & ~(WB_V)(n == zero);
            taken[x] = odd[x] = zero;
        }
    }
    for (size_t j = 0; j < qlen; j++) {
        const WB_V jv = zero + (WB_T)j;
        WB_UNROLL for (unsigned i = 0; i < nb; i++) {
            const unsigned char *row = tables[i][rows[i][query[j]]];
            WB_UNROLL for (size_t k = 0; k < P; k++) {
                size_t x = i * P + k;
                WB_V eq = *(const WB_V *)(row + k * WB_NB);
                WB_V open = eq & win[x] & ~taken[x];
                taken[x] |= open & (zero - open);
                took[j][x] = (WB_V)(open != zero);
                win[x] = (win[x] + win[x]) | (win[x] & one & (WB_V)(jv < bv[x]));
            }
        }
    }
    for (size_t x = 0; x < nb * P; x++)
        rest[x] = taken[x];
    for (size_t j = 0; j < qlen; j++) {
        WB_UNROLL for (unsigned i = 0; i < nb; i++) {
            const unsigned char *row = tables[i][rows[i][query[j]]];
            WB_UNROLL for (size_t k = 0; k < P; k++) {
                size_t x = i * P + k;
                WB_V eq = *(const WB_V *)(row + k * WB_NB);
                WB_V next = rest[x] & (zero - rest[x]) & took[j][x];
                odd[x] |= next & ~eq;
                rest[x] &= ~next;
            }
        }
    }
    for (unsigned i = 0; i < nb; i++) {
        for (size_t k = 0; k < P; k++) {
            size_t x = i * P + k;
            WB_V score = WB_POPCOUNT(taken[x] & mask[x]) | (WB_POPCOUNT(odd[x]) << (WB_W / 2));
            memcpy(bs[i]->score + k * WB_NB, &score, WB_NB);
        }
        bs[i]->pos = qlen;
    }
}

WB_TARGET static size_t WB_RUN_NAME(run_)(wb_lanes *b, const wb_lanes_table table,
                                          const uint8_t *rows, const uint8_t *query, size_t qlen,
                                          size_t bound, size_t max_steps) {
    (void)bound;
    (void)max_steps;
    wb_lanes *const bs[1] = {b};
    const wb_lanes_table ts[1] = {table};
    const uint8_t *const rs[1] = {rows};
    WB_RUN_NAME(jaro_)(bs, ts, rs, 1, query, qlen);
    return 2 * qlen;
}

WB_TARGET static size_t WB_RUN_NAME(run2_)(wb_lanes *b, const wb_lanes_table table,
                                           const uint8_t *rows, wb_lanes *c,
                                           const wb_lanes_table other_table,
                                           const uint8_t *other_rows, const uint8_t *query,
                                           size_t qlen, size_t bound, size_t max_steps) {
    (void)bound;
    (void)max_steps;
    wb_lanes *const bs[2] = {b, c};
    const wb_lanes_table ts[2] = {table, other_table};
    const uint8_t *const rs[2] = {rows, other_rows};
    WB_RUN_NAME(jaro_)(bs, ts, rs, 2, query, qlen);
    return 2 * qlen;
}

#if WB_NB == 64
WB_TARGET static size_t WB_RUN_NAME(run4_)(wb_lanes *const q[4], const wb_lanes_table tables[4],
                                           const uint8_t *const rows[4],
                                           const wb_lanes_table fetch_tables[4],
                                           const uint8_t *const fetch_rows[4], const uint8_t *query,
                                           size_t qlen, size_t bound, size_t max_steps) {
    (void)fetch_tables;
    (void)fetch_rows;
    (void)bound;
    (void)max_steps;
    WB_RUN_NAME(jaro_)(q, tables, rows, 4, query, qlen);
    return 2 * qlen;
}
#endif
#else
/* The vectors of part k (machine vector k of the 64 bytes) of batch b in
 * variables of their own (vp<k>, vn<k>, and for OSA vp<k>d, vp<k>m; a
 * second batch in flight: wp<k>, wn<k>, ...), so that the compiler keeps
 * them in registers. */
#if WB_OP == WB_OP_OSA
#define WB_ON_DECLARE(P, N, k) WB_V P##k, N##k, P##k##d, P##k##m;
#define WB_ON_LOAD(b, P, N, k)                                                                     \
    memcpy(&P##k, (b)->vp + (k)*WB_NB, WB_NB);                                                     \
    memcpy(&N##k, (b)->vn + (k)*WB_NB, WB_NB);                                                     \
    memcpy(&P##k##d, (b)->d0 + (k)*WB_NB, WB_NB);                                                  \
    memcpy(&P##k##m, (b)->pm + (k)*WB_NB, WB_NB);
#define WB_ON_STORE(b, P, N, k)                                                                    \
    memcpy((b)->vp + (k)*WB_NB, &P##k, WB_NB);                                                     \
    memcpy((b)->vn + (k)*WB_NB, &N##k, WB_NB);                                                     \
    memcpy((b)->d0 + (k)*WB_NB, &P##k##d, WB_NB);                                                  \
    memcpy((b)->pm + (k)*WB_NB, &P##k##m, WB_NB);
#else
#define WB_ON_DECLARE(P, N, k) WB_V P##k, N##k;
#define WB_ON_LOAD(b, P, N, k)                                                                     \
    memcpy(&P##k, (b)->vp + (k)*WB_NB, WB_NB);                                                     \
    memcpy(&N##k, (b)->vn + (k)*WB_NB, WB_NB);
#define WB_ON_STORE(b, P, N, k)                                                                    \
    memcpy((b)->vp + (k)*WB_NB, &P##k, WB_NB);                                                     \
    memcpy((b)->vn + (k)*WB_NB, &N##k, WB_NB);
#endif
/* One step of part k: the column of the next query byte. Levenshtein in
 * Hyyro's form, with the horizontal +1 deltas kept complemented, hpc, so
 * that every NOT folds into an and-not; OSA the same with the
 * transposition term (a match here one row below a match of the previous
 * step, where d0 had none). */
#if WB_OP == WB_OP_LEVENSHTEIN || WB_OP == WB_OP_OSA
#if WB_OP == WB_OP_OSA
#define WB_ON_TRANSPOSE(P, k)                                                                      \
    WB_V tr = ~P##k##d & eq;                                                                       \
    tr = (tr + tr) & P##k##m;                                                                      \
    x |= tr;
#define WB_ON_KEEP(P, k)                                                                           \
    P##k##d = d0;                                                                                  \
    P##k##m = eq;
#else
#define WB_ON_TRANSPOSE(P, k)
#define WB_ON_KEEP(P, k)
#endif
#define WB_ON_STEP(row, P, N, k)                                                                   \
    {                                                                                              \
        WB_V eq = *(const WB_V *)((row) + (k)*WB_NB);                                              \
        WB_V x = eq | N##k;                                                                        \
        WB_ON_TRANSPOSE(P, k)                                                                      \
        WB_V d0 = (((eq & P##k) + P##k) ^ P##k) | x;                                               \
        WB_V hpc = ~N##k & (d0 | P##k);                                                            \
        WB_V hn = d0 & P##k;                                                                       \
        hpc = hpc + hpc; /* the row above the first: a +1 delta */                                 \
        hn = hn + hn;                                                                              \
        P##k = hn | (~d0 & hpc);                                                                   \
        N##k = d0 & ~hpc;                                                                          \
        WB_ON_KEEP(P, k)                                                                           \
    }
#define WB_STEP_SETUP
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
#else
#if WB_OP == WB_OP_LCS
#define WB_ON_STEP(row, P, N, k)                                                                   \
    {                                                                                              \
        WB_V u = P##k & *(const WB_V *)((row) + (k)*WB_NB);                                        \
        P##k = (P##k + u) | (P##k - u);                                                            \
    }
#define WB_STEP_SETUP
/* d<k>: the LCS so far, the zeros of S under the mask */
#define WB_ON_DISTANCE(b, P, N, k)                                                                 \
    WB_V mask##k, d##k;                                                                            \
    memcpy(&mask##k, (b)->mask + (k)*WB_NB, WB_NB);                                                \
    d##k = WB_POPCOUNT(~P##k & mask##k) + (jv & zero);
#else /* Hamming */
#define WB_ON_STEP(row, P, N, k) N##k |= *(const WB_V *)((row) + (k)*WB_NB) & bit;
/* bit j of each lane (none past the lane's width, where no candidate
 * byte is) */
#define WB_STEP_SETUP            const WB_V bit = zero + (WB_T)(j < WB_W ? (WB_T)1 << (j % WB_W) : 0);
#define WB_ON_DISTANCE(b, P, N, k)                                                                 \
    WB_V mask##k, d##k;                                                                            \
    memcpy(&mask##k, (b)->mask + (k)*WB_NB, WB_NB);                                                \
    d##k = WB_POPCOUNT(N##k & mask##k) + (jv & zero);
#endif
/* never hopeless (no cutoff is given for these scores) */
#define WB_ON_ALIVE(b, P, N, k) alive = ~zero | jv;
#endif
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

WB_TARGET static size_t WB_RUN_NAME(run_)(wb_lanes *b, const wb_lanes_table table,
                                          const uint8_t *rows, const uint8_t *query, size_t qlen,
                                          size_t bound, size_t max_steps) {
    const WB_V zero = {0};
    WB_PARTS(WB_PART_DECLARE)
    WB_PARTS(WB_PART_LOAD)
    size_t j = b->pos, end = qlen - j > max_steps ? j + max_steps : qlen;
    while (j < end) {
        /* a check costs about two steps: one per 16 */
        size_t stop = end - j > 16 ? j + 16 : end;
        for (; j < stop; j++) {
            const unsigned char *row = table[rows[query[j]]]; /* 64-byte aligned */
            WB_STEP_SETUP
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
WB_TARGET static size_t WB_RUN_NAME(run2_)(wb_lanes *b, const wb_lanes_table table,
                                           const uint8_t *rows, wb_lanes *c,
                                           const wb_lanes_table other_table,
                                           const uint8_t *other_rows, const uint8_t *query,
                                           size_t qlen, size_t bound, size_t max_steps) {
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
            WB_STEP_SETUP
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

WB_TARGET static size_t WB_RUN_NAME(run4_)(wb_lanes *const q[4], const wb_lanes_table tables[4],
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
            WB_STEP_SETUP
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

#endif /* WB_OP == WB_OP_JARO */
#undef WB_RUN_NAME
#undef WB_STEP_SETUP
#undef WB_ON_TRANSPOSE
#undef WB_ON_KEEP
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
#undef WB_PART_ALIVE
#undef WB_PART_STEP

/*
 * One lane kernel, included once per lane width by the file of each
 * instruction set (lanes_base.c, lanes_avx2.c, lanes_avx512.c), with WB_W
 * (bits per lane: 8, 16, 32 or 64), WB_NB (bytes of the machine's vector:
 * 16, 32 or 64), WB_ISA (a name) and WB_TARGET (the function attribute)
 * defined. It defines run_<W>_<ISA>: the steps of a batch over query
 * bytes. A batch's 64 bytes of lanes are WB_LANES_BYTES / WB_NB machine
 * vectors, worked on side by side: independent chains the processor
 * overlaps.
 */
#define WB_CAT2(a, b) a##b
#define WB_CAT(a, b)  WB_CAT2(a, b)
#define WB_T          WB_CAT(WB_CAT(uint, WB_W), _t)
#define WB_V          WB_CAT(WB_CAT(vec, WB_W), WB_ISA)
#define WB_POPCOUNT   WB_CAT(WB_CAT(popcount_, WB_W), WB_ISA)

/* a loop over the batches in flight and their parts, unrolled: their
 * vectors then stay in registers */
#define WB_UNROLL _Pragma("GCC unroll 8")

typedef WB_T WB_V __attribute__((vector_size(WB_NB), may_alias));

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

/* the steps of each operation (the preprocessor knows no enum) */
#ifndef WB_OP_LEVENSHTEIN
#define WB_OP_LEVENSHTEIN 0
#define WB_OP_LCS         1
#define WB_OP_OSA         2
#define WB_OP_HAMMING     3
#define WB_OP_JARO        4
_Static_assert(WB_OP_LEVENSHTEIN == WB_LANES_LEVENSHTEIN && WB_OP_LCS == WB_LANES_LCS &&
                   WB_OP_OSA == WB_LANES_OSA && WB_OP_HAMMING == WB_LANES_HAMMING &&
                   WB_OP_JARO == WB_LANES_JARO,
               "lanes_run.h's operations are the enum's");
#endif
#define WB_OP  WB_OP_LEVENSHTEIN
#define WB_OPN _lev
#include "lanes_run.h"
#undef WB_OP
#undef WB_OPN
#define WB_OP  WB_OP_LCS
#define WB_OPN _lcs
#include "lanes_run.h"
#undef WB_OP
#undef WB_OPN
#define WB_OP  WB_OP_OSA
#define WB_OPN _osa
#include "lanes_run.h"
#undef WB_OP
#undef WB_OPN
#define WB_OP  WB_OP_HAMMING
#define WB_OPN _ham
#include "lanes_run.h"
#undef WB_OP
#undef WB_OPN
#define WB_OP  WB_OP_JARO
#define WB_OPN _jaro
#include "lanes_run.h"
#undef WB_OP
#undef WB_OPN

#undef WB_POPCOUNT
#undef WB_UNROLL
#undef WB_PARTS
#undef WB_LOOK_DUE
#undef WB_NONE_ALIVE
#undef WB_CAT2
#undef WB_CAT
#undef WB_T
#undef WB_V

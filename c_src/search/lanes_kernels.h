/*
 * The lane kernels of each instruction set as tables, by operation and
 * lane width: lanes_base.c, lanes_avx2.c and lanes_avx512.c compile the
 * same template (lanes_body.h) once each, and lanes.c picks a table at
 * run time. A file per instruction set lets them build side by side, and
 * lets a test build recompile one of them alone (the AVX-512 kernels
 * emulated). Internal to c_src/search/.
 */
#ifndef WB_LANES_KERNELS_H
#define WB_LANES_KERNELS_H

#include "lanes.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WB_LANES_X86 1
#else
#define WB_LANES_X86 0
#endif

/* A test build (WB_LANES_EMULATE_AVX512) compiles the AVX-512 kernels for
 * the baseline instruction set, the compiler splitting their 64-byte
 * vectors, so that a CPU without AVX-512 runs and checks their code; only
 * their table fill, made of AVX-512 intrinsics, is a portable copy there. */
#ifdef WB_LANES_EMULATE_AVX512
#define WB_AVX512_TARGET
#else
#define WB_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#endif

typedef size_t (*wb_lanes_run_fn)(wb_lanes *, const wb_lanes_table, const uint8_t *,
                                  const uint8_t *, size_t, size_t, size_t);
typedef size_t (*wb_lanes_run2_fn)(wb_lanes *, const wb_lanes_table, const uint8_t *, wb_lanes *,
                                   const wb_lanes_table, const uint8_t *, const uint8_t *, size_t,
                                   size_t, size_t);
typedef size_t (*wb_lanes_run4_fn)(wb_lanes *const[4], const wb_lanes_table[4],
                                   const uint8_t *const[4], const wb_lanes_table[4],
                                   const uint8_t *const[4], const uint8_t *, size_t, size_t,
                                   size_t);

/* One instruction set's kernels, by operation, then width (slot of 8, 16,
 * 32, 64 bits). run4: four batches at once, where a batch is one vector
 * (AVX-512); NULL with narrower vectors, whose batch is already several
 * chains. */
typedef struct {
    wb_lanes_run_fn run[WB_LANES_OPS][4];
    wb_lanes_run2_fn run2[WB_LANES_OPS][4];
    wb_lanes_run4_fn run4[WB_LANES_OPS][4];
} wb_lanes_kernel_set;

extern const wb_lanes_kernel_set wb_lanes_base_kernels;
#if WB_LANES_X86
extern const wb_lanes_kernel_set wb_lanes_avx2_kernels;
extern const wb_lanes_kernel_set wb_lanes_avx512_kernels;
#endif

/* a function of each width 8, 16, 32, 64: f_<width><rest> */
#define WB_BY_WIDTH(f, rest)                                                                       \
    { f##_8##rest, f##_16##rest, f##_32##rest, f##_64##rest }
/* of each operation, then width */
#define WB_BY_OP(f, isa)                                                                           \
    {                                                                                              \
        [WB_LANES_LEVENSHTEIN] = WB_BY_WIDTH(f, isa##_lev),                                        \
        [WB_LANES_LCS] = WB_BY_WIDTH(f, isa##_lcs), [WB_LANES_OSA] = WB_BY_WIDTH(f, isa##_osa),    \
        [WB_LANES_HAMMING] = WB_BY_WIDTH(f, isa##_ham),                                            \
        [WB_LANES_JARO] = WB_BY_WIDTH(f, isa##_jaro),                                              \
    }

#endif

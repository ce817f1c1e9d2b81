/*
 * The lane kernels for AVX-512 (F, BW, VL), chosen at run time where the
 * CPU has it, or emulated in a test build (lanes_kernels.h): every
 * operation and lane width, from the template lanes_body.h.
 */
#include "lanes_kernels.h"

#include <string.h>

#if WB_LANES_X86

#define WB_TEMPLATE "lanes_body.h"
#define WB_ISA      avx512
#define WB_NB       64
#define WB_TARGET   WB_AVX512_TARGET
#include "lanes_widths.h"

const wb_lanes_kernel_set wb_lanes_avx512_kernels = {
    .run = WB_BY_OP(run, _avx512),
    .run2 = WB_BY_OP(run2, _avx512),
    .run4 = WB_BY_OP(run4, _avx512),
};

#endif

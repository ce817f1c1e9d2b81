/*
 * The lane kernels for AVX2, chosen at run time where the CPU has it:
 * every operation and lane width, from the template lanes_body.h.
 */
#include "lanes_kernels.h"

#include <string.h>

#if WB_LANES_X86

#define WB_TEMPLATE "lanes_body.h"
#define WB_ISA      avx2
#define WB_NB       32
#define WB_TARGET   __attribute__((target("avx2")))
#include "lanes_widths.h"

const wb_lanes_kernel_set wb_lanes_avx2_kernels = {.run = WB_BY_OP(run, _avx2),
                                                   .run2 = WB_BY_OP(run2, _avx2)};

#endif

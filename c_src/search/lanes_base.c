/*
 * The lane kernels for the compiler's baseline instruction set (SSE2 on
 * x86-64), on every CPU: every operation and lane width, from the
 * template lanes_body.h.
 */
#include "lanes_kernels.h"

#include <string.h>

#define WB_TEMPLATE "lanes_body.h"
#define WB_ISA      base
#define WB_NB       16
#define WB_TARGET
#include "lanes_widths.h"

const wb_lanes_kernel_set wb_lanes_base_kernels = {.run = WB_BY_OP(run, _base),
                                                   .run2 = WB_BY_OP(run2, _base)};

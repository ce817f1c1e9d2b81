#include "lanes.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WB_LANES_X86 1
#include <emmintrin.h> /* SSE2: part of x86-64 */
#else
#define WB_LANES_X86 0
#endif

typedef size_t (*run_fn)(wb_lanes *, const wb_lanes_table, const uint16_t *, const uint8_t *,
                         size_t, size_t, size_t);

#define WB_W 8
#include "lanes_load.h"
#undef WB_W
#define WB_W 16
#include "lanes_load.h"
#undef WB_W
#define WB_W 32
#include "lanes_load.h"
#undef WB_W
#define WB_W 64
#include "lanes_load.h"
#undef WB_W

/* the kernels: every width for each instruction set */
#define WB_ISA base
#define WB_NB  16
#define WB_TARGET
#define WB_W 8
#include "lanes_body.h"
#undef WB_W
#define WB_W 16
#include "lanes_body.h"
#undef WB_W
#define WB_W 32
#include "lanes_body.h"
#undef WB_W
#define WB_W 64
#include "lanes_body.h"
#undef WB_W
#undef WB_ISA
#undef WB_NB
#undef WB_TARGET

#if WB_LANES_X86
#define WB_ISA    avx2
#define WB_NB     32
#define WB_TARGET __attribute__((target("avx2")))
#define WB_W      8
#include "lanes_body.h"
#undef WB_W
#define WB_W 16
#include "lanes_body.h"
#undef WB_W
#define WB_W 32
#include "lanes_body.h"
#undef WB_W
#define WB_W 64
#include "lanes_body.h"
#undef WB_W
#undef WB_ISA
#undef WB_NB
#undef WB_TARGET

#define WB_ISA    avx512
#define WB_NB     64
#define WB_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#define WB_W      8
#include "lanes_body.h"
#undef WB_W
#define WB_W 16
#include "lanes_body.h"
#undef WB_W
#define WB_W 32
#include "lanes_body.h"
#undef WB_W
#define WB_W 64
#include "lanes_body.h"
#undef WB_W
#undef WB_ISA
#undef WB_NB
#undef WB_TARGET
#endif

/* by kernel, then by width 8, 16, 32, 64 */
static const run_fn kernels[WB_LANES_KERNELS][4] = {
    [WB_LANES_BASELINE] = {run_8_base, run_16_base, run_32_base, run_64_base},
#if WB_LANES_X86
    [WB_LANES_AVX2] = {run_8_avx2, run_16_avx2, run_32_avx2, run_64_avx2},
    [WB_LANES_AVX512] = {run_8_avx512, run_16_avx512, run_32_avx512, run_64_avx512},
#endif
};

static unsigned width_slot(unsigned width) {
    return width == 8 ? 0 : width == 16 ? 1 : width == 32 ? 2 : 3;
}

bool wb_lanes_query_init(wb_lanes_query *q, const uint8_t *query, size_t qlen) {
    memset(q, 0, sizeof *q);
    bool seen[256] = {false};
    for (size_t i = 0; i < qlen; i++)
        if (!seen[query[i]]) {
            seen[query[i]] = true;
            q->bytes_of_rows[q->distinct] = query[i];
            q->rows[query[i]] = (uint16_t)q->distinct++;
        }
    for (int c = 0; c < 256; c++)
        if (!seen[c]) q->rows[c] = (uint16_t)q->distinct;
    q->bytes = (q->distinct + 1) * WB_LANES_BYTES;
    q->table = aligned_alloc(WB_LANES_BYTES, q->bytes);
    return q->table != NULL;
}

void wb_lanes_query_free(wb_lanes_query *q) {
    free(q->table);
    q->table = NULL;
}

void wb_lanes_load(wb_lanes *b, const wb_lanes_query *q, const uint8_t *bytes,
                   const uint64_t *offsets) {
    b->pos = 0;
    b->hopeless = false;
    switch (b->width) {
    case 8:
        load_8(b, q, bytes, offsets);
        break;
    case 16:
        load_16(b, q, bytes, offsets);
        break;
    case 32:
        load_32(b, q, bytes, offsets);
        break;
    default:
        load_64(b, q, bytes, offsets);
        break;
    }
}

size_t wb_lanes_run(wb_lanes_kernel kernel, wb_lanes *b, const wb_lanes_query *q,
                    const uint8_t *query, size_t qlen, size_t bound, size_t max_steps) {
    b->bound = bound;
    if (max_steps == 0) max_steps = 1;
    return kernels[kernel][width_slot(b->width)](b, q->table, q->rows, query, qlen, bound,
                                                 max_steps);
}

uint64_t wb_lanes_score(const wb_lanes *b, unsigned lane) {
    switch (b->width) {
    case 8:
        return b->score[lane];
    case 16: {
        uint16_t v;
        memcpy(&v, b->score + 2 * lane, sizeof v);
        return v;
    }
    case 32: {
        uint32_t v;
        memcpy(&v, b->score + 4 * lane, sizeof v);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, b->score + 8 * lane, sizeof v);
        return v;
    }
    }
}

bool wb_lanes_supported(wb_lanes_kernel kernel) {
    switch (kernel) {
    case WB_LANES_OFF:
    case WB_LANES_BASELINE:
        return true;
#if WB_LANES_X86
    case WB_LANES_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2");
    case WB_LANES_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl");
#endif
    default:
        return false;
    }
}

static int forced = -1; /* a kernel, or -1: the best one */

wb_lanes_kernel wb_lanes_current(void) {
    if (forced >= 0) return (wb_lanes_kernel)forced;
    if (wb_lanes_supported(WB_LANES_AVX512)) return WB_LANES_AVX512;
    if (wb_lanes_supported(WB_LANES_AVX2)) return WB_LANES_AVX2;
    return WB_LANES_BASELINE;
}

bool wb_lanes_force(wb_lanes_kernel kernel) {
    if (kernel == WB_LANES_KERNELS) {
        forced = -1;
        return true;
    }
    if (!wb_lanes_supported(kernel)) return false;
    forced = (int)kernel;
    return true;
}

const char *wb_lanes_name(wb_lanes_kernel kernel) {
    static const char *const names[WB_LANES_KERNELS] = {"off", "baseline", "avx2", "avx512"};
    return kernel < WB_LANES_KERNELS ? names[kernel] : "unknown";
}

/*
 * The lane kernels' dispatch (lanes.h): a query's tables, a batch's
 * loads, and the kernel set of the instruction set chosen or forced
 * (lanes_kernels.h).
 */
#include "lanes_bits.h"
#include "lanes_kernels.h"

#include <stdlib.h>
#include <string.h>

#if WB_LANES_X86
#include <immintrin.h>
#endif

/* A batch at its first query byte: every vertical delta +1 (bits past a
 * lane's candidate never reach it); `of_index`: see wb_lanes. Its op is
 * kept. */
static void begin(wb_lanes *b, const uint64_t *of_index) {
    b->pos = 0;
    b->hopeless = false;
    b->of_index = of_index;
    memset(b->vp, 0xff, sizeof b->vp); /* LCS: S all ones */
    memset(b->vn, 0, sizeof b->vn);    /* Hamming: no equal position yet */
    if (b->op == WB_LANES_OSA) {
        memset(b->d0, 0, sizeof b->d0);
        memset(b->pm, 0, sizeof b->pm);
    }
}

/* Lane l's candidate in a batch being filled, and its length (1..64). */
static inline const uint8_t *lane_candidate(const wb_lanes *b, const uint8_t *bytes,
                                            const uint64_t *offsets, unsigned l, size_t *n) {
    *n = (size_t)(offsets[b->index[l] + 1] - offsets[b->index[l]]);
    return bytes + offsets[b->index[l]];
}

#define WB_TEMPLATE "lanes_load.h"
#include "lanes_widths.h"
#undef WB_TEMPLATE

/* by kernel (NULL: none, or not on this CPU's architecture) */
static const wb_lanes_kernel_set *const kernel_sets[WB_LANES_KERNELS] = {
    [WB_LANES_BASELINE] = &wb_lanes_base_kernels,
#if WB_LANES_X86
    [WB_LANES_AVX2] = &wb_lanes_avx2_kernels,
    [WB_LANES_AVX512] = &wb_lanes_avx512_kernels,
#endif
};

bool wb_lanes_query_init(wb_lanes_query *q, const uint8_t *query, size_t qlen) {
    memset(q, 0, sizeof *q);
    bool seen[256] = {false};
    for (size_t i = 0; i < qlen; i++)
        if (!seen[query[i]]) {
            seen[query[i]] = true;
            q->bytes_of_rows[q->distinct] = query[i];
            q->rows[query[i]] = (uint8_t)q->distinct++;
        }
    for (int c = 0; c < 256; c++)
        if (!seen[c]) q->rows[c] = (uint8_t)q->distinct; /* < 256: some byte is unseen */
    q->bytes = 4 * (q->distinct + 1) * WB_LANES_BYTES;
    q->table[0] = aligned_alloc(WB_LANES_BYTES, q->bytes);
    if (!q->table[0]) return false;
    for (int i = 1; i < 4; i++)
        q->table[i] = q->table[i - 1] + q->distinct + 1;
    return true;
}

void wb_lanes_query_free(wb_lanes_query *q) {
    free(q->table[0]);
    memset(q->table, 0, sizeof q->table);
}

typedef void (*fill_fn)(wb_lanes *, const wb_lanes_query *, wb_lanes_table, const uint8_t *,
                        const uint64_t *);

/* How a batch's table is filled, by kernel, then by width: bit by bit
 * (portable), or by byte compares (SSE2, AVX-512) */
static const fill_fn fills[WB_LANES_KERNELS][4] = {
    [WB_LANES_BASELINE] = WB_BY_WIDTH(load, ),
#if WB_LANES_X86
    [WB_LANES_AVX2] = WB_BY_WIDTH(fill_sse2, ),
    [WB_LANES_AVX512] = WB_BY_WIDTH(fill_avx512, ),
#endif
};

void wb_lanes_load(wb_lanes_kernel kernel, wb_lanes *b, const wb_lanes_query *q, unsigned which,
                   const uint8_t *bytes, const uint64_t *offsets) {
    begin(b, NULL);
    uint8_t len[WB_LANES_MAX];
    for (unsigned l = 0; l < b->used; l++)
        len[l] = (uint8_t)(offsets[b->index[l] + 1] - offsets[b->index[l]]);
    switch (b->width) {
    case 8:
        start_8(b, len);
        break;
    case 16:
        start_16(b, len);
        break;
    case 32:
        start_32(b, len);
        break;
    default:
        start_64(b, len);
        break;
    }
    fill_fn fill = fills[kernel][wb_lanes_slot(b->width)];
    (fill ? fill : fills[WB_LANES_BASELINE][wb_lanes_slot(b->width)])(b, q, q->table[which], bytes,
                                                                      offsets);
}

size_t wb_lanes_run(wb_lanes_kernel kernel, wb_lanes *b, const wb_lanes_table table,
                    const uint8_t *rows, const uint8_t *query, size_t qlen, size_t bound,
                    size_t max_steps) {
    b->bound = bound;
    if (max_steps == 0) max_steps = 1;
    return kernel_sets[kernel]->run[b->op][wb_lanes_slot(b->width)](b, table, rows, query, qlen,
                                                                    bound, max_steps);
}

size_t wb_lanes_run2(wb_lanes_kernel kernel, wb_lanes *b, const wb_lanes_table table,
                     const uint8_t *rows, wb_lanes *c, const wb_lanes_table other_table,
                     const uint8_t *other_rows, const uint8_t *query, size_t qlen, size_t bound,
                     size_t max_steps) {
    b->bound = c->bound = bound;
    if (max_steps == 0) max_steps = 1;
    return kernel_sets[kernel]->run2[b->op][wb_lanes_slot(b->width)](
        b, table, rows, c, other_table, other_rows, query, qlen, bound, max_steps);
}

bool wb_lanes_has_run4(wb_lanes_kernel kernel) {
    return kernel != WB_LANES_OFF && kernel < WB_LANES_KERNELS && kernel_sets[kernel] &&
           kernel_sets[kernel]->run4[0][0] != NULL;
}

size_t wb_lanes_run4(wb_lanes_kernel kernel, wb_lanes *const q[4], const wb_lanes_table tables[4],
                     const uint8_t *const rows[4], const wb_lanes_table fetch_tables[4],
                     const uint8_t *const fetch_rows[4], const uint8_t *query, size_t qlen,
                     size_t bound, size_t max_steps) {
    for (int i = 0; i < 4; i++)
        q[i]->bound = bound;
    if (max_steps == 0) max_steps = 1;
    return kernel_sets[kernel]->run4[q[0]->op][wb_lanes_slot(q[0]->width)](
        q, tables, rows, fetch_tables, fetch_rows, query, qlen, bound, max_steps);
}

void wb_lanes_start(wb_lanes *b, const wb_lanes_index *x, const wb_lanes_batch *batch) {
    b->width = batch->width;
    b->used = batch->used;
    begin(b, x->lane_index + batch->first_lane);
    memcpy(b->mask, x->rows[batch->first_row + batch->rows], sizeof b->mask);
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
#ifdef WB_LANES_EMULATE_AVX512
        return true;
#endif
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

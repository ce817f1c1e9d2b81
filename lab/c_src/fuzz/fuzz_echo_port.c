/*
 * Fuzz target: the port program's frame loop (c_src/echo_port), over input
 * and output that move a few bytes at a time and are interrupted.
 *
 * Input: a byte for the read and write sizes, then the stream. Frame
 * lengths over 64 KiB are cut down first (the loop takes up to 4 GiB, which
 * a fuzzer should not allocate). The output must be exactly the whole
 * frames at the front of the stream, and the result must say whether the
 * stream ended between frames or inside one.
 */
#define WB_ECHO_PORT_FUZZ
#include "../echo_port/wb_echo_port.c"

#include "fuzz.h"

typedef struct {
    wb_fuzz_source in;
    uint8_t *out;
    size_t out_len, out_cap;
    uint32_t rng;
    size_t max_move;
} mem;

static ssize_t mem_read(void *ctx, void *buf, size_t len) {
    return wb_fuzz_read(&((mem *)ctx)->in, buf, len);
}

static ssize_t mem_write(void *ctx, const void *buf, size_t len) {
    mem *m = ctx;
    ssize_t n = wb_fuzz_amount(&m->rng, 9, m->max_move, len);
    if (n <= 0) return n;
    WB_FUZZ_CHECK(m->out_len + (size_t)n <= m->out_cap);
    memcpy(m->out + m->out_len, buf, (size_t)n);
    m->out_len += (size_t)n;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    uint8_t pick = wb_fuzz_byte(&in);
    uint8_t *stream = malloc(in.size + 1);
    WB_FUZZ_CHECK(stream);
    if (in.size) memcpy(stream, in.data, in.size);

    /* cut long frames down, and find where the whole frames end */
    size_t at = 0, whole = 0;
    while (in.size - at >= WB_ECHO_HEADER) {
        size_t len = frame_length((const char *)stream + at) % (64 * 1024);
        stream[at] = 0;
        stream[at + 1] = (uint8_t)(len >> 16);
        stream[at + 2] = (uint8_t)(len >> 8);
        stream[at + 3] = (uint8_t)len;
        if (in.size - at - WB_ECHO_HEADER < len) break;
        at += WB_ECHO_HEADER + len;
        whole = at;
    }

    size_t most = 1 + (size_t)pick * 17;
    mem m = {{stream, in.size, 0, pick | 1u, most, 9},
             malloc(in.size + 1),
             0,
             in.size + 1,
             pick | 2u,
             most};
    WB_FUZZ_CHECK(m.out);
    wb_io io = {mem_read, mem_write, &m};
    int rc = wb_echo_frames(&io, NULL);
    WB_FUZZ_CHECK(rc == (whole == in.size ? WB_ECHO_EOF : WB_ECHO_TRUNCATED));
    WB_FUZZ_CHECK(m.out_len == whole && memcmp(m.out, stream, whole) == 0);
    free(m.out);
    free(stream);
    return 0;
}

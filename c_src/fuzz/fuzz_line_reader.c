/*
 * Fuzz target: the line reader and the write buffer (c_src/file), against
 * a plain split of the same bytes.
 *
 * Input: the read buffer size, the line limit (0: none), a seed for the
 * sizes of each fill and write, the write buffer size, then the file's
 * bytes. The reader reads the bytes in fills of varying size, taking lines
 * or runs of bytes in an order the seed picks; every line and run must be
 * the next bytes of the file, split as the header says. The writer writes
 * the same bytes in pieces through a callback that moves few bytes at a
 * time and is interrupted, and must put out exactly them.
 */
#include "../file/line_reader.h"
#include "fuzz.h"

#include <errno.h>
#include <string.h>

typedef struct {
    uint8_t *out;
    size_t len, cap;
    uint32_t rng;
} sink;

static ssize_t sink_write(void *ctx, const uint8_t *buf, size_t n) {
    sink *s = ctx;
    ssize_t k = wb_fuzz_amount(&s->rng, 7, 37, n);
    if (k <= 0) return k;
    WB_FUZZ_CHECK(s->len + (size_t)k <= s->cap);
    memcpy(s->out + s->len, buf, (size_t)k);
    s->len += (size_t)k;
    return k;
}

static void read_side(const uint8_t *file, size_t size, size_t buffer_bytes, size_t max_line,
                      uint32_t rng) {
    wb_line_reader r;
    wb_lr_init(&r, buffer_bytes, max_line);
    size_t pos = 0;   /* bytes of the file read by the reader so far */
    size_t taken = 0; /* bytes handed out as lines (with their "\n") or runs */
    uint8_t *buffer = NULL;
    for (int guard = 0;; guard++) {
        WB_FUZZ_CHECK(guard < 1000000);
        if (wb_fuzz_next(&rng) % 4 == 0) { /* a run of buffered bytes, as read/2 takes */
            size_t want = 1 + wb_fuzz_next(&rng) % 16, have = wb_lr_buffered(&r);
            size_t n = want < have ? want : have;
            if (n == 0) continue; /* no buffer yet, or nothing in it */
            WB_FUZZ_CHECK(memcmp(r.data + r.start, file + taken, n) == 0);
            wb_lr_consume(&r, n);
            taken += n;
            continue;
        }
        size_t off, len;
        wb_lr_status st = wb_lr_next_line(&r, &off, &len);
        if (st == WB_LR_LINE) {
            const uint8_t *nl = memchr(file + taken, '\n', size - taken);
            size_t want = nl ? (size_t)(nl - (file + taken)) : size - taken;
            WB_FUZZ_CHECK(len == want && (max_line == WB_LR_UNLIMITED || len <= max_line));
            WB_FUZZ_CHECK(memcmp(r.data + off, file + taken, len) == 0);
            taken += len + (nl ? 1 : 0);
        } else if (st == WB_LR_TOO_LONG) {
            const uint8_t *nl = memchr(file + taken, '\n', size - taken);
            size_t line = nl ? (size_t)(nl - (file + taken)) : size - taken;
            WB_FUZZ_CHECK(max_line != WB_LR_UNLIMITED && line > max_line);
            break;
        } else if (st == WB_LR_EOF) {
            WB_FUZZ_CHECK(taken == size && pos == size);
            break;
        } else {
            size_t cap = wb_lr_fill_capacity(&r);
            if (cap) {
                WB_FUZZ_CHECK(cap > wb_lr_buffered(&r));
                uint8_t *fresh = malloc(cap);
                WB_FUZZ_CHECK(fresh);
                wb_lr_rebase(&r, fresh, cap);
                free(buffer); /* lines were checked at once: nothing points into it */
                buffer = fresh;
            }
            size_t room;
            uint8_t *at = wb_lr_space(&r, &room);
            WB_FUZZ_CHECK(room > 0);
            size_t n = 1 + wb_fuzz_next(&rng) % 64;
            if (n > room) n = room;
            if (n > size - pos) n = size - pos;
            memcpy(at, file + pos, n);
            pos += n;
            wb_lr_filled(&r, n);
        }
    }
    free(buffer);
}

static void write_side(const uint8_t *file, size_t size, size_t cap, uint32_t rng) {
    wb_write_buffer w;
    WB_FUZZ_CHECK(wb_wbuf_init(&w, cap));
    sink s = {malloc(size + 1), 0, size + 1, rng};
    WB_FUZZ_CHECK(s.out);
    size_t done = 0;
    while (done < size) {
        size_t n = wb_fuzz_next(&rng) % (2 * cap + 2);
        if (n > size - done) n = size - done;
        WB_FUZZ_CHECK(wb_wbuf_write(&w, file + done, n, sink_write, &s) == 0);
        done += n;
        WB_FUZZ_CHECK(s.len + w.len == done);
    }
    WB_FUZZ_CHECK(wb_wbuf_flush(&w, sink_write, &s) == 0);
    WB_FUZZ_CHECK(s.len == size && memcmp(s.out, file, size) == 0);
    wb_wbuf_free(&w);
    free(s.out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    size_t buffer_bytes = 1 + wb_fuzz_byte(&in) % 64;
    uint8_t limit = wb_fuzz_byte(&in);
    size_t max_line = limit ? limit : WB_LR_UNLIMITED;
    uint32_t seed = wb_fuzz_byte(&in) | (uint32_t)wb_fuzz_byte(&in) << 8;
    size_t write_cap = 1 + wb_fuzz_byte(&in) % 64;
    read_side(in.data, in.size, buffer_bytes, max_line, seed);
    write_side(in.data, in.size, write_cap, seed);
    return 0;
}

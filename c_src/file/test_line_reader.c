/*
 * Unit test of the line reader and write buffer (line_reader.c), built with
 * AddressSanitizer and UBSan by `make test-c`. Lines are checked against a
 * plain split of the same bytes, read through fills of random sizes into
 * buffers of many sizes; every buffer stays allocated until the end, and
 * every line handed out is checked again at the end, so a rebase that wrote
 * over bytes already handed out is caught.
 */
#include "line_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../test/check.h"

typedef struct {
    const uint8_t *bytes;
    size_t len, pos, max_chunk;
} source;

/* reads at most max_chunk (random) bytes, like a short read(2) */
static size_t source_read(source *s, uint8_t *to, size_t room) {
    size_t n = s->len - s->pos;
    if (n > room) n = room;
    size_t chunk = 1 + check_random() % s->max_chunk;
    if (n > chunk) n = chunk;
    memcpy(to, s->bytes + s->pos, n);
    s->pos += n;
    return n;
}

typedef struct {
    const uint8_t *ptr;
    size_t len;
} span;

/* the reference: split on "\n", no empty line after a final "\n" */
static size_t reference_lines(const uint8_t *b, size_t n, span *out) {
    size_t count = 0, from = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i] == '\n') {
            out[count++] = (span){b + from, i - from};
            from = i + 1;
        }
    if (from < n) out[count++] = (span){b + from, n - from};
    return count;
}

/* reads every line of `bytes`; returns the number of lines, or SIZE_MAX on
 * TOO_LONG; *buffers collects every buffer for freeing */
static size_t read_all(const uint8_t *bytes, size_t n, size_t buffer_bytes, size_t max_line,
                       size_t max_chunk, span *lines, size_t *max_cap) {
    wb_line_reader r;
    wb_lr_init(&r, buffer_bytes, max_line);
    source s = {bytes, n, 0, max_chunk};
    uint8_t **buffers = NULL;
    size_t nbuf = 0, count = 0, result = 0;
    *max_cap = 0;
    for (;;) {
        size_t off, len;
        wb_lr_status st = wb_lr_next_line(&r, &off, &len);
        if (st == WB_LR_LINE) {
            uint8_t *copy = malloc(len ? len : 1);
            memcpy(copy, r.data + off, len);
            lines[count++] = (span){copy, len};
            /* the line must still read the same at the end (from the buffer) */
            continue;
        }
        if (st == WB_LR_EOF) {
            result = count;
            break;
        }
        if (st == WB_LR_TOO_LONG) {
            result = SIZE_MAX;
            break;
        }
        size_t cap = wb_lr_fill_capacity(&r);
        if (cap) {
            uint8_t *b = malloc(cap);
            buffers = realloc(buffers, (nbuf + 1) * sizeof *buffers);
            buffers[nbuf++] = b;
            wb_lr_rebase(&r, b, cap);
            if (cap > *max_cap) *max_cap = cap;
        }
        size_t room;
        uint8_t *at = wb_lr_space(&r, &room);
        CHECK(room > 0, "fill with no room");
        wb_lr_filled(&r, source_read(&s, at, room));
    }
    for (size_t i = 0; i < nbuf; i++)
        free(buffers[i]);
    free(buffers);
    if (result == SIZE_MAX)
        for (size_t i = 0; i < count; i++)
            free((void *)lines[i].ptr);
    return result;
}

static void check_case(const char *name, const uint8_t *bytes, size_t n) {
    static const size_t buffer_sizes[] = {1, 2, 3, 7, 64, 4096, 65536};
    static const size_t chunks[] = {1, 3, 100, 1 << 20};
    span *want = malloc((n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
    size_t want_n = reference_lines(bytes, n, want);
    for (size_t b = 0; b < sizeof buffer_sizes / sizeof *buffer_sizes; b++)
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++) {
            size_t max_cap;
            size_t got_n =
                read_all(bytes, n, buffer_sizes[b], WB_LR_UNLIMITED, chunks[c], got, &max_cap);
            CHECK(got_n == want_n, "%s, buffer %zu: %zu lines, want %zu", name, buffer_sizes[b],
                  got_n, want_n);
            for (size_t i = 0; i < got_n && i < want_n; i++)
                CHECK(got[i].len == want[i].len &&
                          memcmp(got[i].ptr, want[i].ptr, want[i].len) == 0,
                      "%s, buffer %zu: line %zu differs", name, buffer_sizes[b], i);
            for (size_t i = 0; i < got_n; i++)
                free((void *)got[i].ptr);
        }
    free(want);
    free(got);
}

#define CASE(s) check_case(#s, (const uint8_t *)(s), sizeof(s) - 1)

/* handed-out lines stay intact: the line pointers into the buffers */
static void check_no_overwrite(void) {
    const char *text = "alpha\nbeta\n\ngamma delta\nlast";
    size_t n = strlen(text);
    wb_line_reader r;
    wb_lr_init(&r, 4, WB_LR_UNLIMITED);
    source s = {(const uint8_t *)text, n, 0, 3};
    uint8_t *buffers[64];
    size_t nbuf = 0;
    span lines[16];
    size_t count = 0;
    for (;;) {
        size_t off, len;
        wb_lr_status st = wb_lr_next_line(&r, &off, &len);
        if (st == WB_LR_LINE) {
            lines[count++] = (span){r.data + off, len};
            continue;
        }
        if (st != WB_LR_NEED_FILL) break;
        size_t cap = wb_lr_fill_capacity(&r);
        if (cap) {
            buffers[nbuf] = malloc(cap);
            wb_lr_rebase(&r, buffers[nbuf++], cap);
        }
        size_t room;
        uint8_t *at = wb_lr_space(&r, &room);
        wb_lr_filled(&r, source_read(&s, at, room));
    }
    const char *want[] = {"alpha", "beta", "", "gamma delta", "last"};
    CHECK(count == 5, "no-overwrite: %zu lines", count);
    for (size_t i = 0; i < count && i < 5; i++)
        CHECK(lines[i].len == strlen(want[i]) && memcmp(lines[i].ptr, want[i], lines[i].len) == 0,
              "no-overwrite: line %zu changed", i);
    for (size_t i = 0; i < nbuf; i++)
        free(buffers[i]);
}

static void check_long_lines(void) {
    /* 3 MB without a newline, then one more line: growth must be geometric */
    size_t n = 3u << 20;
    uint8_t *b = malloc(n + 4);
    memset(b, 'x', n);
    memcpy(b + n, "\nab", 3);
    span lines[4];
    size_t max_cap;
    size_t got = read_all(b, n + 3, 4096, WB_LR_UNLIMITED, 1 << 16, lines, &max_cap);
    CHECK(got == 2 && lines[0].len == n && lines[1].len == 2, "long line: %zu lines", got);
    CHECK(max_cap <= 4 * n, "long line: buffer grew to %zu", max_cap);
    for (size_t i = 0; i < got && i < 4; i++)
        free((void *)lines[i].ptr);

    /* the limit: a line of exactly max_line bytes passes, one more fails */
    got = read_all(b, n + 3, 4096, n, 1 << 16, lines, &max_cap);
    CHECK(got == 2, "line at the limit: %zu", got);
    CHECK(max_cap <= n + 2, "line at the limit: buffer grew to %zu", max_cap);
    for (size_t i = 0; i < got && i < 4; i++)
        free((void *)lines[i].ptr);
    got = read_all(b, n + 3, 4096, n - 1, 1 << 16, lines, &max_cap);
    CHECK(got == SIZE_MAX, "line over the limit accepted");
    CHECK(max_cap <= n + 1, "line over the limit: buffer grew to %zu", max_cap);
    /* no newline at all, over the limit */
    got = read_all(b, n, 64, 1000, 1 << 16, lines, &max_cap);
    CHECK(got == SIZE_MAX && max_cap <= 1002, "unterminated line over the limit: cap %zu", max_cap);
    free(b);
}

static void check_eof_again(void) {
    /* after EOF, the reader asks for a fill again (the file may have grown) */
    wb_line_reader r;
    wb_lr_init(&r, 16, WB_LR_UNLIMITED);
    uint8_t *buf = malloc(16);
    wb_lr_rebase(&r, buf, 16);
    size_t off, len;
    CHECK(wb_lr_next_line(&r, &off, &len) == WB_LR_NEED_FILL, "empty: need fill");
    wb_lr_filled(&r, 0);
    CHECK(wb_lr_next_line(&r, &off, &len) == WB_LR_EOF, "empty: eof");
    CHECK(wb_lr_next_line(&r, &off, &len) == WB_LR_NEED_FILL, "after eof: need fill");
    memcpy(buf, "hi", 2);
    wb_lr_filled(&r, 2);
    CHECK(wb_lr_next_line(&r, &off, &len) == WB_LR_NEED_FILL, "partial: need fill");
    wb_lr_filled(&r, 0);
    CHECK(wb_lr_next_line(&r, &off, &len) == WB_LR_LINE && len == 2, "last line");
    CHECK(wb_lr_next_line(&r, &off, &len) == WB_LR_EOF, "then eof");
    free(buf);
}

/* a sink accepting at most `max` bytes per call, failing after `fail_at` */
typedef struct {
    uint8_t out[1 << 16];
    size_t len, max, fail_at;
    int calls, eintr_every;
} sink;

static ssize_t sink_write(void *ctx, const uint8_t *buf, size_t n) {
    sink *s = ctx;
    s->calls++;
    if (s->eintr_every && s->calls % s->eintr_every == 0) {
        errno = EINTR;
        return -1;
    }
    if (s->len >= s->fail_at) {
        errno = ENOSPC;
        return -1;
    }
    if (n > s->max) n = s->max;
    if (n > s->fail_at - s->len) n = s->fail_at - s->len;
    memcpy(s->out + s->len, buf, n);
    s->len += n;
    return (ssize_t)n;
}

static void check_writes(void) {
    static const size_t caps[] = {1, 3, 16, 4096};
    uint8_t data[5000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)check_random();
    for (size_t c = 0; c < 4; c++)
        for (size_t max = 1; max <= 1024; max *= 4) {
            static sink s;
            memset(&s, 0, sizeof s);
            s.max = max;
            s.fail_at = SIZE_MAX;
            s.eintr_every = 5;
            wb_write_buffer w;
            CHECK(wb_wbuf_init(&w, caps[c]), "init");
            size_t pos = 0;
            while (pos < sizeof data) {
                size_t n = check_random() % 40;
                if (check_random() % 10 == 0) n = 700;
                if (n > sizeof data - pos) n = sizeof data - pos;
                CHECK(wb_wbuf_write(&w, data + pos, n, sink_write, &s) == 0, "write failed");
                pos += n;
            }
            CHECK(wb_wbuf_flush(&w, sink_write, &s) == 0, "flush failed");
            CHECK(s.len == sizeof data && memcmp(s.out, data, sizeof data) == 0,
                  "cap %zu, max %zu: %zu bytes written", caps[c], max, s.len);
            wb_wbuf_free(&w);
        }

    /* a failing sink: the error comes back, unwritten bytes stay buffered */
    static sink s;
    memset(&s, 0, sizeof s);
    s.max = 2;
    s.fail_at = 5;
    wb_write_buffer w;
    wb_wbuf_init(&w, 8);
    CHECK(wb_wbuf_write(&w, data, 8, sink_write, &s) == 0, "buffered write");
    CHECK(wb_wbuf_flush(&w, sink_write, &s) == ENOSPC, "flush error");
    CHECK(s.len == 5 && w.len == 3 && memcmp(w.data, data + 5, 3) == 0,
          "after the error: %zu out, %zu kept", s.len, w.len);
    s.fail_at = SIZE_MAX;
    CHECK(wb_wbuf_flush(&w, sink_write, &s) == 0 && s.len == 8 && memcmp(s.out, data, 8) == 0,
          "retry after the error");
    wb_wbuf_free(&w);
}

int main(void) {
    check_seed(0x9e3779b97f4a7c15u);
    CASE("");
    CASE("\n");
    CASE("\n\n\n");
    CASE("one");
    CASE("one\n");
    CASE("one\ntwo");
    CASE("one\ntwo\n");
    CASE("\none\n\ntwo\n\n");
    CASE("crlf\r\nlines\r\n");
    CASE("a\0b\nc\0\n");

    /* random text: short lines, empty lines, an occasional long one */
    for (int round = 0; round < 20; round++) {
        size_t n = check_random() % 20000;
        uint8_t *b = malloc(n + 1);
        for (size_t i = 0; i < n; i++) {
            uint64_t x = check_random();
            b[i] = x % 13 == 0 ? '\n' : (uint8_t)(x >> 8);
        }
        if (round % 3 == 0 && n > 5000)
            for (size_t i = 1000; i < 5000; i++)
                if (b[i] == '\n') b[i] = 'y';
        check_case("random", b, n);
        free(b);
    }
    check_no_overwrite();
    check_long_lines();
    check_eof_again();
    check_writes();
    return CHECK_SUMMARY();
}

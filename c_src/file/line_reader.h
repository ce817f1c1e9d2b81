/*
 * Buffered line reading and buffered writing for WellBehaved.File, pure C
 * (no erl_nif): the NIF glue (c_src/nif/file_nif.c) owns the memory and the
 * file descriptor, this core only does the arithmetic.
 *
 * Reading. The reader looks at one buffer `data[0, cap)` holding unread
 * bytes in `[start, end)`. Bytes before `start` were handed out (the NIF
 * returns lines as binaries pointing into the buffer), so the core never writes
 * them again: when the buffer has too little room left, the caller gives it
 * a fresh buffer (wb_lr_fill_capacity says how big) and the core copies the
 * unread bytes over (wb_lr_rebase). A partial line longer than half the
 * buffer makes the next buffer twice as large as that line: growth is
 * geometric, so a 100 MB line costs O(100 MB) copying in total, and
 * `max_line` bounds it.
 *
 * Lines end at "\n", which is stripped; nothing else is: a CRLF file gives
 * lines ending in "\r". At end of file, a last line without "\n" is
 * returned as a line, and a file ending in "\n" gives no extra empty line.
 *
 * Writing. The write buffer collects small writes; writes that do not fit
 * flush it, and writes at least as large as the buffer go straight out.
 * Every write loops over short writes and EINTR until all bytes are out or
 * the write callback fails.
 */
#ifndef WB_LINE_READER_H
#define WB_LINE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WB_LR_UNLIMITED SIZE_MAX

typedef struct {
    uint8_t *data;
    size_t cap;          /* bytes in data */
    size_t start;        /* first unread byte */
    size_t end;          /* one past the last byte read from the file */
    size_t scan;         /* [start, scan) is known to hold no "\n" */
    size_t buffer_bytes; /* the usual size of a buffer, >= 1 */
    size_t max_line;     /* longest line accepted, without its "\n" */
    bool eof;            /* the last fill read 0 bytes */
} wb_line_reader;

typedef enum {
    WB_LR_LINE,      /* a line in data[*off, *off + *len), consumed */
    WB_LR_NEED_FILL, /* no complete line buffered: fill, then ask again */
    WB_LR_EOF,       /* nothing left; the next fill reads the file again */
    WB_LR_TOO_LONG,  /* the line at start is longer than max_line */
} wb_lr_status;

/* No buffer yet: the first wb_lr_fill_capacity asks for one. */
void wb_lr_init(wb_line_reader *r, size_t buffer_bytes, size_t max_line);

/* The next line, from the buffered bytes only. */
wb_lr_status wb_lr_next_line(wb_line_reader *r, size_t *off, size_t *len);

/* 0 when the current buffer has room for the next fill; otherwise the size
 * of the new buffer to give to wb_lr_rebase before filling. */
size_t wb_lr_fill_capacity(const wb_line_reader *r);

/* Moves the unread bytes to `data` (new_cap >= what fill_capacity asked);
 * the old buffer is the caller's to release. */
void wb_lr_rebase(wb_line_reader *r, uint8_t *data, size_t new_cap);

/* Where the next fill writes: *room bytes at the returned address. */
uint8_t *wb_lr_space(const wb_line_reader *r, size_t *room);

/* `n` bytes were written at wb_lr_space; 0 means end of file. */
void wb_lr_filled(wb_line_reader *r, size_t n);

static inline size_t wb_lr_buffered(const wb_line_reader *r) {
    return r->end - r->start;
}

/* Hands out n <= buffered bytes (read/2): they start at data + start. */
void wb_lr_consume(wb_line_reader *r, size_t n);

/* Write callback: like write(2), returns bytes written or -1 with errno. */
typedef ssize_t (*wb_write_fn)(void *ctx, const uint8_t *buf, size_t n);

/* Writes all n bytes, retrying short writes and EINTR. Returns 0, or the
 * errno of the failure; *written counts the bytes written anyway. */
int wb_write_all(wb_write_fn fn, void *ctx, const uint8_t *buf, size_t n, size_t *written);

typedef struct {
    uint8_t *data;
    size_t cap, len;
} wb_write_buffer;

/* false when out of memory */
bool wb_wbuf_init(wb_write_buffer *w, size_t cap);
void wb_wbuf_free(wb_write_buffer *w);

/* true when n bytes can be buffered without a write call */
static inline bool wb_wbuf_fits(const wb_write_buffer *w, size_t n) {
    return n <= w->cap - w->len;
}

/* Appends n bytes that fit. */
void wb_wbuf_append(wb_write_buffer *w, const uint8_t *buf, size_t n);

/* Writes the buffered bytes out. On failure the bytes not written stay
 * buffered and the errno is returned. */
int wb_wbuf_flush(wb_write_buffer *w, wb_write_fn fn, void *ctx);

/* Buffers or writes n bytes, in order after the buffered ones. Returns 0
 * or an errno; on failure nothing of buf is buffered. */
int wb_wbuf_write(wb_write_buffer *w, const uint8_t *buf, size_t n, wb_write_fn fn, void *ctx);

#endif

/* Buffered line reading and writing: see line_reader.h. */
#include "line_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void wb_lr_init(wb_line_reader *r, size_t buffer_bytes, size_t max_line) {
    memset(r, 0, sizeof *r);
    r->buffer_bytes = buffer_bytes ? buffer_bytes : 1;
    r->max_line = max_line;
}

wb_lr_status wb_lr_next_line(wb_line_reader *r, size_t *off, size_t *len) {
    if (r->scan < r->start) r->scan = r->start;
    const uint8_t *nl = r->end > r->scan ? memchr(r->data + r->scan, '\n', r->end - r->scan) : NULL;
    if (nl) {
        size_t at = (size_t)(nl - r->data);
        if (at - r->start > r->max_line) {
            r->scan = at;
            return WB_LR_TOO_LONG;
        }
        *off = r->start;
        *len = at - r->start;
        r->start = r->scan = at + 1;
        return WB_LR_LINE;
    }
    r->scan = r->end;
    if (r->end - r->start > r->max_line) return WB_LR_TOO_LONG;
    if (!r->eof) return WB_LR_NEED_FILL;
    if (r->end > r->start) { /* the last line, without "\n" */
        *off = r->start;
        *len = r->end - r->start;
        r->start = r->scan = r->end;
        return WB_LR_LINE;
    }
    r->eof = false; /* a later call reads again: the file may have grown */
    return WB_LR_EOF;
}

size_t wb_lr_fill_capacity(const wb_line_reader *r) {
    size_t room = r->cap - r->end;
    size_t pending = r->end - r->start;
    /* keep reading into this buffer while a quarter of a buffer is left and
     * the partial line is not about to outgrow it */
    if (r->data && room > 0 && room >= r->buffer_bytes / 4 && room >= pending / 2) return 0;
    size_t cap = r->buffer_bytes;
    if (pending > cap / 2) {
        cap = pending > SIZE_MAX / 2 ? SIZE_MAX : pending * 2;
        /* no need to hold more than one line past the limit */
        if (r->max_line != WB_LR_UNLIMITED && cap > r->max_line + 2) cap = r->max_line + 2;
        if (cap <= pending) cap = pending + 1;
    }
    return cap;
}

void wb_lr_rebase(wb_line_reader *r, uint8_t *data, size_t new_cap) {
    size_t pending = r->end - r->start;
    if (pending) memcpy(data, r->data + r->start, pending);
    r->scan -= r->start;
    r->data = data;
    r->cap = new_cap;
    r->start = 0;
    r->end = pending;
}

uint8_t *wb_lr_space(const wb_line_reader *r, size_t *room) {
    *room = r->cap - r->end;
    return r->data + r->end;
}

void wb_lr_filled(wb_line_reader *r, size_t n) {
    r->end += n;
    r->eof = n == 0;
}

void wb_lr_consume(wb_line_reader *r, size_t n) {
    r->start += n;
    if (r->scan < r->start) r->scan = r->start;
    if (r->start == r->end) r->eof = false;
}

int wb_write_all(wb_write_fn fn, void *ctx, const uint8_t *buf, size_t n, size_t *written) {
    size_t done = 0;
    int zero_writes = 0;
    int err = 0;
    while (done < n) {
        ssize_t k = fn(ctx, buf + done, n - done);
        if (k < 0) {
            if (errno == EINTR) continue;
            err = errno ? errno : EIO;
            break;
        }
        if (k == 0) { /* no progress and no error: give up after a few */
            if (++zero_writes >= 16) {
                err = EIO;
                break;
            }
            continue;
        }
        zero_writes = 0;
        done += (size_t)k;
    }
    if (written) *written = done;
    return err;
}

bool wb_wbuf_init(wb_write_buffer *w, size_t cap) {
    w->cap = cap ? cap : 1;
    w->len = 0;
    w->data = malloc(w->cap);
    return w->data != NULL;
}

void wb_wbuf_free(wb_write_buffer *w) {
    free(w->data);
    w->data = NULL;
    w->cap = w->len = 0;
}

void wb_wbuf_append(wb_write_buffer *w, const uint8_t *buf, size_t n) {
    if (n) memcpy(w->data + w->len, buf, n);
    w->len += n;
}

int wb_wbuf_flush(wb_write_buffer *w, wb_write_fn fn, void *ctx) {
    size_t written = 0;
    int err = wb_write_all(fn, ctx, w->data, w->len, &written);
    if (written && written < w->len) memmove(w->data, w->data + written, w->len - written);
    w->len -= written;
    return err;
}

int wb_wbuf_write(wb_write_buffer *w, const uint8_t *buf, size_t n, wb_write_fn fn, void *ctx) {
    if (wb_wbuf_fits(w, n)) {
        wb_wbuf_append(w, buf, n);
        return 0;
    }
    int err = wb_wbuf_flush(w, fn, ctx);
    if (err) return err;
    if (n >= w->cap) return wb_write_all(fn, ctx, buf, n, NULL);
    wb_wbuf_append(w, buf, n);
    return 0;
}

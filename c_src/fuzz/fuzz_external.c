/*
 * Fuzz target: the external server's protocol (c_src/external): frames read
 * from a stream that arrives in pieces, and the decoding of each request
 * term, served as the built-in server does (the library's job types, with
 * wb_ext_library.c), with every reply framed again.
 *
 * Input: a byte that picks the size of each read, then the stream. Half the
 * inputs (odd first byte) are also dispatched whole, as one payload. A
 * request may name any term: nothing in it may crash the server, leak, or
 * read out of bounds. Every reply is a frame whose length header matches (an
 * empty request, a cancel, gets an empty one).
 */
#include "../external/wb_external.h"
#include "fuzz.h"

#include <errno.h>
#include <string.h>

static ssize_t source_read(void *ctx, void *buf, size_t len) {
    return wb_fuzz_read(ctx, buf, len);
}

/* checks that what is written is a sequence of whole frames */
typedef struct {
    size_t header_left; /* bytes of the current frame's header still to come */
    uint8_t header[4];
    size_t payload_left;
    uint32_t rng;
} sink;

static ssize_t sink_writev(void *ctx, const struct iovec *iov, int iovcnt) {
    sink *s = ctx;
    if (wb_fuzz_next(&s->rng) % 13 == 0) {
        errno = EINTR;
        return -1;
    }
    size_t limit = 1 + wb_fuzz_next(&s->rng) % 50, done = 0;
    for (int i = 0; i < iovcnt && done < limit; i++) {
        const uint8_t *p = iov[i].iov_base;
        size_t n = iov[i].iov_len;
        if (n > limit - done) n = limit - done;
        for (size_t j = 0; j < n; j++) {
            if (s->payload_left == 0) {
                s->header[4 - s->header_left] = p[j];
                if (--s->header_left == 0) {
                    s->payload_left = (size_t)s->header[0] << 24 | (size_t)s->header[1] << 16 |
                                      (size_t)s->header[2] << 8 | s->header[3];
                    /* an empty frame is the acknowledgement of a cancel */
                    s->header_left = 4;
                }
            } else
                s->payload_left--;
        }
        done += n;
    }
    return (ssize_t)done;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* the built-in server's service: the library's job types */
    static int ready;
    if (!ready) {
        WB_FUZZ_CHECK(wb_ext_library_load() == 0 && wb_ext_jobs_use(wb_ext_library_types) == 0);
        ready = 1;
    }
    wb_fuzz_input in = {data, size};
    uint8_t pick = wb_fuzz_byte(&in);

    if (pick & 1) { /* the input as one request payload */
        wb_ext_reply reply;
        int rc = wb_ext_dispatch((const char *)in.data, in.size, &reply, NULL, NULL);
        WB_FUZZ_CHECK(rc == 0);
        /* an empty payload is a cancel, acknowledged by an empty reply */
        WB_FUZZ_CHECK(in.size == 0 ? reply.iovcnt == 0 : reply.iovcnt >= 1 && reply.iovcnt <= 2);
        wb_ext_reply_free(&reply);
    }

    wb_fuzz_source src = {in.data, in.size, 0, pick | 1u, 1 + (size_t)(pick >> 1), 11};
    sink out = {4, {0}, 0, pick};
    wb_ext_reader r;
    /* a small limit, so that long frames take the EMSGSIZE path cheaply */
    wb_ext_reader_init(&r, source_read, &src, 4096);
    int rc = wb_ext_serve(&r, sink_writev, &out, NULL, NULL);
    wb_ext_reader_free(&r);
    WB_FUZZ_CHECK(rc == 0 || rc == -1);
    WB_FUZZ_CHECK(out.payload_left == 0 && out.header_left == 4); /* no reply cut short */
    return 0;
}

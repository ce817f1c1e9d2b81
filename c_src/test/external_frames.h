/*
 * The external server's framing (included by test_external.c): frames read
 * back from a stream in chunks of every size, with EINTR and errors, and
 * written through a sink that takes short writes.
 */
#ifndef WB_TEST_EXTERNAL_FRAMES_H
#define WB_TEST_EXTERNAL_FRAMES_H

/* --- a byte stream read back in chunks of chosen sizes --------------------------- */

typedef struct {
    const char *data;
    size_t len, pos;
    size_t chunk; /* at most this many bytes per read; 0: random 1..64 */
    int calls;
    int fail_errno; /* returned once the data is exhausted, when not 0 */
} source;

static ssize_t source_read(void *ctx, void *buf, size_t len) {
    source *s = ctx;
    s->calls++;
    if (s->calls % 5 == 0) { /* interrupted now and then */
        errno = EINTR;
        return -1;
    }
    if (s->pos == s->len) {
        if (s->fail_errno) {
            errno = s->fail_errno;
            return -1;
        }
        return 0;
    }
    size_t n = s->chunk ? s->chunk : 1 + check_random() % 64;
    if (n > len) n = len;
    if (n > s->len - s->pos) n = s->len - s->pos;
    memcpy(buf, s->data + s->pos, n);
    s->pos += n;
    return (ssize_t)n;
}

static size_t append_frame(char *out, const char *payload, size_t len) {
    out[0] = (char)(len >> 24);
    out[1] = (char)(len >> 16);
    out[2] = (char)(len >> 8);
    out[3] = (char)len;
    memcpy(out + 4, payload, len);
    return 4 + len;
}

static void test_read_frames(void) {
    static const size_t sizes[] = {0, 1, 5, 300, 70000, 3, 0, 300000, 64 * 1024 - 4};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    size_t total = 0;
    for (int i = 0; i < NSIZES; i++)
        total += 4 + sizes[i];
    char *payloads[NSIZES];
    char *stream = malloc(total);
    size_t at = 0;
    for (int i = 0; i < NSIZES; i++) {
        payloads[i] = malloc(sizes[i] + 1);
        for (size_t j = 0; j < sizes[i]; j++)
            payloads[i][j] = (char)check_random();
        at += append_frame(stream + at, payloads[i], sizes[i]);
    }
    static const size_t chunks[] = {1, 2, 3, 7, 4096, 0, (size_t)1 << 30};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        source src = {stream, total, 0, chunks[c], 0, 0};
        wb_ext_reader r;
        wb_ext_reader_init(&r, source_read, &src, WB_EXT_MAX_FRAME);
        for (int i = 0; i < NSIZES; i++) {
            const char *p;
            size_t n;
            int got = wb_ext_read_frame(&r, &p, &n);
            CHECK(got == 1 && n == sizes[i] && memcmp(p, payloads[i], n) == 0,
                  "chunk %zu frame %d: got %d, len %zu, expected %zu", chunks[c], i, got, n,
                  sizes[i]);
        }
        const char *p;
        size_t n;
        CHECK(wb_ext_read_frame(&r, &p, &n) == 0, "chunk %zu: end of input", chunks[c]);
        CHECK(r.cap <= WB_EXT_BUFFER_BYTES * 4, "buffer shrinks after large frames: %zu", r.cap);
        wb_ext_reader_free(&r);
    }

    /* input ending inside a frame, at every point of a short stream */
    size_t short_len = 4 + 0 + 4 + 1 + 4 + 5 + 4 + 300;
    for (size_t cut = 0; cut <= short_len; cut++) {
        source src = {stream, cut, 0, 3, 0, 0};
        wb_ext_reader r;
        wb_ext_reader_init(&r, source_read, &src, WB_EXT_MAX_FRAME);
        int got, frames = 0;
        const char *p;
        size_t n;
        while ((got = wb_ext_read_frame(&r, &p, &n)) == 1)
            frames++;
        bool boundary = cut == 0 || cut == 4 || cut == 9 || cut == 18 || cut == short_len;
        if (boundary)
            CHECK(got == 0, "cut %zu at a frame boundary: end of input, got %d", cut, got);
        else
            CHECK(got == -1 && errno == EPROTO, "cut %zu inside a frame: EPROTO, got %d", cut, got);
        wb_ext_reader_free(&r);
    }

    /* a frame over the limit, and a read error */
    {
        char big[4 + 101];
        memset(big, 'x', sizeof big);
        append_frame(big, big + 4, 101);
        source src = {big, sizeof big, 0, 0, 0, 0};
        wb_ext_reader r;
        wb_ext_reader_init(&r, source_read, &src, 100);
        const char *p;
        size_t n;
        CHECK(wb_ext_read_frame(&r, &p, &n) == -1 && errno == EMSGSIZE, "oversized frame");
        wb_ext_reader_free(&r);
    }
    {
        source src = {stream, 6, 0, 0, 0, EIO};
        wb_ext_reader r;
        wb_ext_reader_init(&r, source_read, &src, WB_EXT_MAX_FRAME);
        const char *p;
        size_t n;
        int got = wb_ext_read_frame(&r, &p, &n);
        CHECK(got == 1 && n == 0, "first frame before the error");
        CHECK(wb_ext_read_frame(&r, &p, &n) == -1 && errno == EIO, "read error passed on");
        wb_ext_reader_free(&r);
    }
    for (int i = 0; i < NSIZES; i++)
        free(payloads[i]);
    free(stream);
}

/* --- a sink written to in short writes ------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
    size_t max_write; /* 0: unlimited */
    int calls;
    int fail_errno;   /* when not 0, fail with it ... */
    int fail_at;      /* ... on this call */
    bool return_zero; /* return 0 on call fail_at instead */
} sink;

static ssize_t sink_writev(void *ctx, const struct iovec *iov, int iovcnt) {
    sink *s = ctx;
    s->calls++;
    if (s->calls == s->fail_at) {
        if (s->return_zero) return 0;
        errno = s->fail_errno;
        return -1;
    }
    if (s->calls % 4 == 0) {
        errno = EINTR;
        return -1;
    }
    size_t done = 0;
    for (int i = 0; i < iovcnt; i++) {
        CHECK(iov[i].iov_len > 0 || i == 0, "no empty iovec after the first");
        size_t n = iov[i].iov_len;
        if (s->max_write && done + n > s->max_write) n = s->max_write - done;
        if (s->len + n > s->cap) {
            s->cap = (s->len + n) * 2;
            s->data = realloc(s->data, s->cap);
        }
        memcpy(s->data + s->len, iov[i].iov_base, n);
        s->len += n;
        done += n;
        if (s->max_write && done == s->max_write) break;
    }
    return (ssize_t)done;
}

static void test_write_frames(void) {
    char a[100], b[7000];
    for (size_t i = 0; i < sizeof a; i++)
        a[i] = (char)check_random();
    for (size_t i = 0; i < sizeof b; i++)
        b[i] = (char)check_random();
    struct iovec parts[4] = {{a, sizeof a}, {NULL, 0}, {b, sizeof b}, {a, 1}};
    size_t total = sizeof a + sizeof b + 1;
    static const size_t limits[] = {1, 2, 3, 5, 9, 4096, 0};
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        sink s = {NULL, 0, 0, limits[l], 0, 0, 0, false};
        int rc = wb_ext_write_frame(sink_writev, &s, parts, 4);
        bool same = rc == 0 && s.len == 4 + total && (unsigned char)s.data[0] == 0 &&
                    (unsigned char)s.data[1] == 0 &&
                    (size_t)(((unsigned char)s.data[2] << 8) | (unsigned char)s.data[3]) == total &&
                    memcmp(s.data + 4, a, sizeof a) == 0 &&
                    memcmp(s.data + 4 + sizeof a, b, sizeof b) == 0 &&
                    s.data[4 + sizeof a + sizeof b] == a[0];
        CHECK(same, "frame written in writes of at most %zu bytes (rc %d, len %zu)", limits[l], rc,
              s.len);
        free(s.data);
    }
    {
        sink s = {NULL, 0, 0, 0, 0, 0, 0, false};
        CHECK(wb_ext_write_frame(sink_writev, &s, NULL, 0) == 0 && s.len == 4 &&
                  memcmp(s.data, "\0\0\0\0", 4) == 0,
              "empty frame");
        free(s.data);
    }
    {
        sink s = {NULL, 0, 0, 3, 0, EPIPE, 2, false};
        CHECK(wb_ext_write_frame(sink_writev, &s, parts, 4) == -1 && errno == EPIPE,
              "write error passed on");
        free(s.data);
    }
    {
        sink s = {NULL, 0, 0, 3, 0, 0, 2, true};
        CHECK(wb_ext_write_frame(sink_writev, &s, parts, 4) == -1, "a zero-byte write fails");
        free(s.data);
    }
    sink s = {NULL, 0, 0, 0, 0, 0, 0, false};
    CHECK(wb_ext_write_frame(sink_writev, &s, parts, WB_EXT_MAX_PARTS + 1) == -1 && errno == EINVAL,
          "too many parts");
    free(s.data);
}

#endif

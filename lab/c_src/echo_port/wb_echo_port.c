/*
 * wb_echo_port: a port program for open_port({spawn_executable, ...},
 * [{packet, 4}, binary, ...]). It reads frames (a 4-byte big-endian length,
 * then that many bytes) from stdin and writes each one back to stdout, until
 * stdin ends.
 *
 * The frame loop, wb_echo_frames, is pure C over two I/O callbacks so that
 * it can be tested without pipes: it copes with reads and writes that move
 * fewer bytes than asked (and EINTR), frames of any size up to the 4 GiB - 1
 * that {packet, 4} allows, and several frames arriving in one read (they are
 * written back with one write). It only writes whole frames: a frame cut
 * short by the end of input is reported, not echoed.
 *
 * Built with -DWB_ECHO_PORT_TEST, this file is its own unit test instead of
 * the program (see mk/echo_port.mk); with -DWB_ECHO_PORT_FUZZ it is the frame
 * loop alone, for the fuzz target c_src/fuzz/fuzz_echo_port.c.
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* read/write: >= 0 bytes moved (read: 0 means end of input), -1 with errno. */
typedef struct {
    ssize_t (*read)(void *ctx, void *buf, size_t len);
    ssize_t (*write)(void *ctx, const void *buf, size_t len);
    void *ctx;
} wb_io;

enum {
    WB_ECHO_EOF = 0,        /* input ended between frames */
    WB_ECHO_IO_ERROR = -1,  /* a read or write failed (errno is kept) */
    WB_ECHO_TRUNCATED = -2, /* input ended inside a frame */
    WB_ECHO_NO_MEMORY = -3, /* no buffer for a frame that large */
};

#define WB_ECHO_HEADER  4
#define WB_ECHO_MIN_BUF ((size_t)64 * 1024)
/* after a frame larger than this, the buffer goes back to WB_ECHO_MIN_BUF */
#define WB_ECHO_KEEP_BUF ((size_t)1024 * 1024)
/* wanted capacity of the stdin and stdout pipes */
#define WB_ECHO_PIPE_SIZE (1024 * 1024)

typedef struct {
    uint64_t frames;
    uint64_t writes;
} wb_echo_stats;

static int write_all(const wb_io *io, const char *buf, size_t len, wb_echo_stats *stats) {
    while (len > 0) {
        ssize_t n = io->write(io->ctx, buf, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return WB_ECHO_IO_ERROR;
        }
        if (n == 0) { /* a write that moves nothing would loop forever */
            errno = EIO;
            return WB_ECHO_IO_ERROR;
        }
        stats->writes++;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static size_t frame_length(const char *p) {
    const unsigned char *u = (const unsigned char *)p;
    return ((size_t)u[0] << 24) | ((size_t)u[1] << 16) | ((size_t)u[2] << 8) | (size_t)u[3];
}

/* Makes room for `need` bytes from buf[0], keeping buf[0 .. used). */
static int reserve(char **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t grown = *cap;
    while (grown < need)
        grown = grown > SIZE_MAX / 2 ? need : grown * 2;
    char *p = realloc(*buf, grown);
    if (p == NULL) return WB_ECHO_NO_MEMORY;
    *buf = p;
    *cap = grown;
    return 0;
}

/*
 * Echoes frames from io->read to io->write until the input ends. Returns
 * WB_ECHO_EOF when it ended between frames, else a negative WB_ECHO_* code.
 * `stats` may be NULL.
 */
static int wb_echo_frames(const wb_io *io, wb_echo_stats *stats) {
    wb_echo_stats local = {0};
    if (stats == NULL) stats = &local;
    size_t cap = WB_ECHO_MIN_BUF, start = 0, end = 0; /* pending input: buf[start .. end) */
    char *buf = malloc(cap);
    if (buf == NULL) return WB_ECHO_NO_MEMORY;
    int rc;
    for (;;) {
        /* every whole frame pending goes back in one write */
        size_t span = start, need = 0;
        while (end - span >= WB_ECHO_HEADER) {
            size_t len = frame_length(buf + span);
            if (end - span - WB_ECHO_HEADER < len) {
                need = WB_ECHO_HEADER + len;
                break;
            }
            span += WB_ECHO_HEADER + len;
            stats->frames++;
        }
        if (span > start) {
            rc = write_all(io, buf + start, span - start, stats);
            if (rc != 0) break;
            start = span;
        }
        /* keep the partial frame at the front, with room for all of it */
        if (start > 0) {
            memmove(buf, buf + start, end - start);
            end -= start;
            start = 0;
        }
        /* a buffer grown for a large frame is given back once it is out */
        if (cap > WB_ECHO_KEEP_BUF && need <= WB_ECHO_MIN_BUF && end <= WB_ECHO_MIN_BUF) {
            char *p = realloc(buf, WB_ECHO_MIN_BUF);
            if (p != NULL) {
                buf = p;
                cap = WB_ECHO_MIN_BUF;
            }
        }
        rc = reserve(&buf, &cap, need);
        if (rc != 0) break;
        ssize_t n = io->read(io->ctx, buf + end, cap - end);
        if (n < 0) {
            if (errno == EINTR) continue;
            rc = WB_ECHO_IO_ERROR;
            break;
        }
        if (n == 0) {
            rc = end == 0 ? WB_ECHO_EOF : WB_ECHO_TRUNCATED;
            break;
        }
        end += (size_t)n;
    }
    free(buf);
    return rc;
}

/* File descriptor I/O; ctx: int[2], {fd to read, fd to write}. */
static ssize_t fds_read(void *ctx, void *buf, size_t len) {
    return read(((int *)ctx)[0], buf, len);
}

static ssize_t fds_write(void *ctx, const void *buf, size_t len) {
    return write(((int *)ctx)[1], buf, len);
}

/* ------------------------------------------------------------------------- */
#if defined(WB_ECHO_PORT_FUZZ)
/* c_src/fuzz/fuzz_echo_port.c includes this file for its frame loop */
#elif !defined(WB_ECHO_PORT_TEST)

int main(void) {
    /* a closed stdout is reported by write (EPIPE), not by a signal */
    signal(SIGPIPE, SIG_IGN);
#ifdef F_SETPIPE_SZ
    /* Linux: larger pipes move a 64 KiB frame in one read and one write
     * instead of several wake-ups on each side (best effort) */
    fcntl(STDIN_FILENO, F_SETPIPE_SZ, WB_ECHO_PIPE_SIZE);
    fcntl(STDOUT_FILENO, F_SETPIPE_SZ, WB_ECHO_PIPE_SIZE);
#endif
    int fds[2] = {STDIN_FILENO, STDOUT_FILENO};
    wb_io io = {fds_read, fds_write, fds};
    int rc = wb_echo_frames(&io, NULL);
    switch (rc) {
    case WB_ECHO_EOF:
        return 0;
    case WB_ECHO_TRUNCATED:
        fprintf(stderr, "wb_echo_port: input ended inside a frame\n");
        return 2;
    case WB_ECHO_NO_MEMORY:
        fprintf(stderr, "wb_echo_port: out of memory\n");
        return 3;
    default:
        /* EPIPE: stdout closed, the VM has gone; nothing to report to it */
        if (errno != EPIPE) fprintf(stderr, "wb_echo_port: %s\n", strerror(errno));
        return 1;
    }
}

#else /* WB_ECHO_PORT_TEST ----------------------------------------------------- */

#include <pthread.h>

#include "check.h"

/* In-memory I/O: reads and writes move at most `chunk` bytes (0: no limit),
 * a pseudo-random amount when `jitter`, and every `eintr`-th call fails with
 * EINTR; writes fail with EPIPE once `write_limit` bytes are out. */
typedef struct {
    const char *in;
    size_t in_len, in_pos;
    char *out;
    size_t out_len, out_cap;
    size_t chunk;
    int jitter;
    unsigned eintr, calls;
    size_t write_limit;
    uint32_t rng;
} mem_io;

static size_t amount(mem_io *m, size_t len) {
    size_t n = len;
    if (m->chunk > 0 && n > m->chunk) n = m->chunk;
    if (m->jitter && n > 1) {
        m->rng = m->rng * 1103515245u + 12345u;
        n = 1 + (m->rng >> 8) % n;
    }
    return n;
}

static int interrupted(mem_io *m) {
    m->calls++;
    if (m->eintr > 0 && m->calls % m->eintr == 0) {
        errno = EINTR;
        return 1;
    }
    return 0;
}

static ssize_t mem_read(void *ctx, void *buf, size_t len) {
    mem_io *m = ctx;
    if (interrupted(m)) return -1;
    size_t n = amount(m, len);
    if (n > m->in_len - m->in_pos) n = m->in_len - m->in_pos;
    memcpy(buf, m->in + m->in_pos, n);
    m->in_pos += n;
    return (ssize_t)n;
}

static ssize_t mem_write(void *ctx, const void *buf, size_t len) {
    mem_io *m = ctx;
    if (interrupted(m)) return -1;
    size_t n = amount(m, len);
    if (m->write_limit > 0 && m->out_len + n > m->write_limit) {
        errno = EPIPE;
        return -1;
    }
    if (m->out_len + n > m->out_cap) {
        size_t cap = m->out_cap ? m->out_cap : 1024;
        while (cap < m->out_len + n)
            cap *= 2;
        m->out = realloc(m->out, cap);
        if (m->out == NULL) abort();
        m->out_cap = cap;
    }
    memcpy(m->out + m->out_len, buf, n);
    m->out_len += n;
    return (ssize_t)n;
}

/* A growing byte string of frames. */
typedef struct {
    char *p;
    size_t len, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (b->p == NULL) abort();
        b->cap = cap;
    }
    if (src != NULL && n > 0) memcpy(b->p + b->len, src, n);
    b->len += n;
}

/* Appends a frame of len pseudo-random bytes. */
static void put_frame(bytes *b, size_t len, unsigned seed) {
    unsigned char h[4] = {(unsigned char)(len >> 24), (unsigned char)(len >> 16),
                          (unsigned char)(len >> 8), (unsigned char)len};
    put(b, h, 4);
    size_t at = b->len;
    put(b, NULL, len);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b->p[at + i] = (char)x;
    }
}

static int run(const char *in, size_t len, size_t chunk, int jitter, unsigned eintr,
               size_t write_limit, mem_io *m, wb_echo_stats *stats) {
    memset(m, 0, sizeof *m);
    m->in = in;
    m->in_len = len;
    m->chunk = chunk;
    m->jitter = jitter;
    m->eintr = eintr;
    m->write_limit = write_limit;
    m->rng = 42;
    wb_io io = {mem_read, mem_write, m};
    memset(stats, 0, sizeof *stats);
    return wb_echo_frames(&io, stats);
}

static void test_empty_input(void) {
    mem_io m;
    wb_echo_stats s;
    int rc = run("", 0, 0, 0, 0, 0, &m, &s);
    CHECK(rc == WB_ECHO_EOF, "empty input: rc %d", rc);
    CHECK(m.out_len == 0, "empty input wrote %zu bytes", m.out_len);
    free(m.out);
}

/* Frames of many sizes, read and written in every chunking: output == input. */
static void test_frames_any_chunking(void) {
    static const size_t sizes[] = {0,  1,    3,    4,     5,     63,    64,
                                   65, 4095, 4096, 65535, 65536, 65537, 200000};
    bytes in = {0};
    size_t nframes = sizeof sizes / sizeof sizes[0];
    for (size_t i = 0; i < nframes; i++)
        put_frame(&in, sizes[i], (unsigned)i);
    static const size_t chunks[] = {0, 1, 2, 3, 5, 4096, 65536};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        for (int jitter = 0; jitter <= 1; jitter++) {
            for (unsigned eintr = 0; eintr <= 3; eintr += 3) {
                /* one byte at a time through 340 KB is slow under ASan: skip it with EINTR */
                if (chunks[c] == 1 && eintr) continue;
                mem_io m;
                wb_echo_stats s;
                int rc = run(in.p, in.len, chunks[c], jitter, eintr, 0, &m, &s);
                CHECK(rc == WB_ECHO_EOF, "chunk %zu jitter %d eintr %u: rc %d", chunks[c], jitter,
                      eintr, rc);
                CHECK(m.out_len == in.len && memcmp(m.out, in.p, in.len) == 0,
                      "chunk %zu jitter %d eintr %u: output differs (%zu of %zu bytes)", chunks[c],
                      jitter, eintr, m.out_len, in.len);
                CHECK(s.frames == nframes, "chunk %zu: %llu frames", chunks[c],
                      (unsigned long long)s.frames);
                free(m.out);
            }
        }
    }
    free(in.p);
}

/* Many small frames arriving at once go back in one write. */
static void test_batched_writes(void) {
    bytes in = {0};
    for (unsigned i = 0; i < 100; i++)
        put_frame(&in, 10 + i, i);
    mem_io m;
    wb_echo_stats s;
    int rc = run(in.p, in.len, 0, 0, 0, 0, &m, &s);
    CHECK(rc == WB_ECHO_EOF, "batched: rc %d", rc);
    CHECK(m.out_len == in.len && memcmp(m.out, in.p, in.len) == 0, "batched: output differs");
    CHECK(s.frames == 100, "batched: %llu frames", (unsigned long long)s.frames);
    CHECK(s.writes < 10, "batched: %llu writes for 100 frames", (unsigned long long)s.writes);
    free(m.out);
    free(in.p);
}

/* Input that stops inside a header or a payload: reported, never echoed. */
static void test_truncated(void) {
    bytes in = {0};
    put_frame(&in, 100, 1);
    size_t whole = in.len;
    put_frame(&in, 100, 2);
    size_t cuts[] = {whole + 1, whole + 3, whole + 4, whole + 50, in.len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        mem_io m;
        wb_echo_stats s;
        int rc = run(in.p, cuts[i], 7, 0, 0, 0, &m, &s);
        CHECK(rc == WB_ECHO_TRUNCATED, "cut at %zu: rc %d", cuts[i], rc);
        CHECK(m.out_len == whole && memcmp(m.out, in.p, whole) == 0,
              "cut at %zu: wrote %zu bytes, expected the first frame (%zu)", cuts[i], m.out_len,
              whole);
        free(m.out);
    }
    free(in.p);
}

static void test_write_error(void) {
    bytes in = {0};
    for (unsigned i = 0; i < 10; i++)
        put_frame(&in, 1000, i);
    mem_io m;
    wb_echo_stats s;
    int rc = run(in.p, in.len, 0, 0, 0, 2500, &m, &s);
    CHECK(rc == WB_ECHO_IO_ERROR && errno == EPIPE, "write error: rc %d errno %d", rc, errno);
    free(m.out);
    free(in.p);
}

/* A 40 MiB frame (and small ones around it), with jittery 64 KiB reads. */
static void test_huge_frame(void) {
    bytes in = {0};
    put_frame(&in, 5, 1);
    put_frame(&in, (size_t)40 << 20, 2);
    put_frame(&in, 7, 3);
    mem_io m;
    wb_echo_stats s;
    int rc = run(in.p, in.len, 65536, 1, 0, 0, &m, &s);
    CHECK(rc == WB_ECHO_EOF, "huge: rc %d", rc);
    CHECK(m.out_len == in.len && memcmp(m.out, in.p, in.len) == 0, "huge: output differs");
    CHECK(s.frames == 3, "huge: %llu frames", (unsigned long long)s.frames);
    free(m.out);
    free(in.p);
}

/* The real fd path over pipes: a writer thread, the loop, a reader thread. */
typedef struct {
    int fd;
    const char *p;
    size_t len;
    char *got;
    size_t got_len;
} pipe_job;

static void *pipe_writer(void *arg) {
    pipe_job *j = arg;
    size_t off = 0;
    while (off < j->len) {
        ssize_t n = write(j->fd, j->p + off, j->len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        off += (size_t)n;
    }
    close(j->fd);
    return NULL;
}

static void *pipe_reader(void *arg) {
    pipe_job *j = arg;
    for (;;) {
        ssize_t n = read(j->fd, j->got + j->got_len, j->len - j->got_len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        j->got_len += (size_t)n;
        if (j->got_len == j->len) break;
    }
    return NULL;
}

static void test_pipes(void) {
    bytes in = {0};
    for (unsigned i = 0; i < 50; i++)
        put_frame(&in, i * 37, i);
    put_frame(&in, (size_t)20 << 20, 99);
    put_frame(&in, 0, 100);
    int to_loop[2], from_loop[2];
    CHECK(pipe(to_loop) == 0 && pipe(from_loop) == 0, "pipe: %s", strerror(errno));
    pipe_job w = {to_loop[1], in.p, in.len, NULL, 0};
    pipe_job r = {from_loop[0], NULL, in.len, malloc(in.len), 0};
    pthread_t wt, rt;
    pthread_create(&wt, NULL, pipe_writer, &w);
    pthread_create(&rt, NULL, pipe_reader, &r);
    int fds[2] = {to_loop[0], from_loop[1]};
    wb_io io = {fds_read, fds_write, fds};
    wb_echo_stats s = {0};
    int rc = wb_echo_frames(&io, &s);
    /* closing both ends the loop used frees the threads even if it stopped
     * early: the writer gets EPIPE, the reader end of input */
    close(to_loop[0]);
    close(from_loop[1]);
    pthread_join(wt, NULL);
    pthread_join(rt, NULL);
    CHECK(rc == WB_ECHO_EOF, "pipes: rc %d", rc);
    CHECK(r.got_len == in.len && memcmp(r.got, in.p, in.len) == 0,
          "pipes: output differs (%zu of %zu bytes)", r.got_len, in.len);
    CHECK(s.frames == 52, "pipes: %llu frames", (unsigned long long)s.frames);
    close(from_loop[0]);
    free(r.got);
    free(in.p);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN); /* test_pipes: a write to a closed pipe fails with EPIPE */
    test_empty_input();
    test_frames_any_chunking();
    test_batched_writes();
    test_truncated();
    test_write_error();
    test_huge_frame();
    test_pipes();
    return CHECK_SUMMARY();
}

#endif

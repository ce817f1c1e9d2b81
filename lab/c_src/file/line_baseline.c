/*
 * The lab's C baseline for line reading: how fast plain C reads a file's
 * lines, with no VM in the way.
 *
 *   wb_line_baseline PATH BUFFER_BYTES memchr|core
 *
 * `memchr`: read(2) into one buffer, memchr for each "\n", lines that
 * straddle two reads carried over by memmove. `core`: the same file through
 * WellBehaved.File's own line reader (c_src/file/line_reader.c), so the
 * difference to the NIF is what the VM adds. Prints
 * `lines=N bytes=N ns=N` (wall-clock time of the whole read).
 */
#define _POSIX_C_SOURCE 200809L
#include "line_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static ssize_t read_some(int fd, uint8_t *at, size_t room) {
    ssize_t n;
    do
        n = read(fd, at, room);
    while (n < 0 && errno == EINTR);
    return n;
}

/* lines counted by read + memchr; a line longer than the buffer grows it */
static int by_memchr(int fd, size_t cap, size_t *lines, size_t *bytes, size_t *sink) {
    uint8_t *buf = malloc(cap);
    if (!buf) return ENOMEM;
    size_t have = 0; /* bytes of an unfinished line at buf[0] */
    for (;;) {
        if (have == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                return ENOMEM;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read_some(fd, buf + have, cap - have);
        if (n < 0) {
            free(buf);
            return errno;
        }
        *bytes += (size_t)n;
        if (n == 0) break;
        size_t end = have + (size_t)n, start = 0;
        const uint8_t *nl;
        while ((nl = memchr(buf + start, '\n', end - start))) {
            size_t at = (size_t)(nl - buf);
            *sink += at - start; /* use the line, so nothing is optimized away */
            (*lines)++;
            start = at + 1;
        }
        have = end - start;
        if (have && start) memmove(buf, buf + start, have);
    }
    if (have) (*lines)++;
    free(buf);
    return 0;
}

/* the same through the line reader core */
static int by_core(int fd, size_t cap, size_t *lines, size_t *bytes, size_t *sink) {
    wb_line_reader r;
    wb_lr_init(&r, cap, WB_LR_UNLIMITED);
    uint8_t *buf = NULL;
    int err = 0;
    for (;;) {
        size_t off, len;
        wb_lr_status st = wb_lr_next_line(&r, &off, &len);
        if (st == WB_LR_LINE) {
            *sink += len;
            (*lines)++;
            continue;
        }
        if (st != WB_LR_NEED_FILL) break;
        size_t want = wb_lr_fill_capacity(&r);
        if (want) {
            uint8_t *fresh = malloc(want);
            if (!fresh) {
                err = ENOMEM;
                break;
            }
            wb_lr_rebase(&r, fresh, want);
            free(buf);
            buf = fresh;
        }
        size_t room;
        uint8_t *at = wb_lr_space(&r, &room);
        ssize_t n = read_some(fd, at, room);
        if (n < 0) {
            err = errno;
            break;
        }
        *bytes += (size_t)n;
        wb_lr_filled(&r, (size_t)n);
    }
    free(buf);
    return err;
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[3], "memchr") != 0 && strcmp(argv[3], "core") != 0)) {
        fprintf(stderr, "usage: %s PATH BUFFER_BYTES memchr|core\n", argv[0]);
        return 2;
    }
    char *end;
    unsigned long long cap = strtoull(argv[2], &end, 10);
    if (*end || cap == 0) {
        fprintf(stderr, "BUFFER_BYTES must be a positive integer\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    size_t lines = 0, bytes = 0, sink = 0;
    long long t0 = now_ns();
    int err = strcmp(argv[3], "memchr") == 0 ? by_memchr(fd, (size_t)cap, &lines, &bytes, &sink)
                                             : by_core(fd, (size_t)cap, &lines, &bytes, &sink);
    long long ns = now_ns() - t0;
    close(fd);
    if (err) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(err));
        return 1;
    }
    printf("lines=%zu bytes=%zu ns=%lld sink=%zu\n", lines, bytes, ns, sink);
    return 0;
}

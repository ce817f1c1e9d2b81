/*
 * wb_floors: the machine's floor for each way of calling native code, as
 * round trips between two small C parties on this machine, no VM:
 *
 *   futex  a pointer handed to another thread and back, each side
 *          sleeping on a futex until woken (what a thread pool that
 *          sleeps between jobs can do at best);
 *   spin   the same, each side spinning on the word instead of sleeping
 *          (a pool whose worker spins: the floor when a CPU is idle);
 *   unix   SIZE bytes written to a child process over a Unix stream
 *          socket and read back (an external server pool);
 *   pipe   the same over two pipes (a port program);
 *   tcp    the same over TCP on 127.0.0.1, TCP_NODELAY (a C node).
 *
 * Threads hand over a pointer (as the runtime hands a job its term), so
 * SIZE does not change their work; processes move SIZE bytes each way.
 *
 *   wb_floors METHOD SIZE ITERATIONS
 *
 * prints one line, `METHOD SIZE DONE P50 P90 P99 MIN` (nanoseconds a
 * round trip, CLOCK_MONOTONIC), after a warm-up of ITERATIONS / 10 round
 * trips; DONE is ITERATIONS, or fewer when they took over 3 s; exit status 1 and a message on
 * stderr when a round trip comes back wrong or a call fails. A run is bounded (SIGALRM ends it
 * after WB_FLOORS_RUN_S), a thread that stops answering for 10 s ends it with an error, and a child
 * process exits when its end of the channel closes, so a parent killed or timed out leaves nothing
 * running.
 *
 * Built with -DWB_FLOORS_TEST, this file is its own unit test instead of
 * the program: every method at several sizes, each echo checked byte for
 * byte; no timing is asserted.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* the longest a party waits for the other before giving up */
#define WB_FLOORS_WAIT_NS  INT64_C(10000000000)
#define WB_FLOORS_MAX_SIZE ((size_t)64 << 20)
/* the longest a run of the program may take, in seconds */
#define WB_FLOORS_RUN_S 300
/* the timed round trips stop after this long, however many were asked
 * for (threads spinning on a loaded machine can take milliseconds each) */
#define WB_FLOORS_TIMED_NS INT64_C(3000000000)

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- threads: a pointer there and back ----------------------------------------- */

/* turn: 0 the caller's, 1 the peer's, 2 stop. The message is `data` with
 * `seq`: the peer answers seq + 1 and the message's first byte. */
typedef struct {
    _Atomic uint32_t turn;
    bool spin;
    const unsigned char *data;
    uint64_t seq, reply;
    unsigned char first;
    bool timed_out;
} handoff;

static long futex(_Atomic uint32_t *word, int op, uint32_t value, const struct timespec *timeout) {
    return syscall(SYS_futex, (uint32_t *)word, op, value, timeout, NULL, 0);
}

/* Waits until *word != from; false after WB_FLOORS_WAIT_NS. */
static bool wait_change(_Atomic uint32_t *word, uint32_t from, bool spin) {
    int64_t deadline = now_ns() + WB_FLOORS_WAIT_NS;
    for (uint32_t spins = 1; atomic_load_explicit(word, memory_order_acquire) == from; spins++) {
        if (spin) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
            /* the clock read once per 4096 spins */
            if (spins % 4096 == 0 && now_ns() > deadline) return false;
            continue;
        }
        struct timespec timeout = {1, 0};
        if (futex(word, FUTEX_WAIT_PRIVATE, from, &timeout) != 0 && errno != EAGAIN &&
            errno != EINTR && errno != ETIMEDOUT)
            return false;
        if (now_ns() > deadline) return false;
    }
    return true;
}

static void set_turn(handoff *h, uint32_t turn) {
    atomic_store_explicit(&h->turn, turn, memory_order_release);
    if (!h->spin) futex(&h->turn, FUTEX_WAKE_PRIVATE, 1, NULL);
}

static void *peer_thread(void *arg) {
    handoff *h = arg;
    for (;;) {
        if (!wait_change(&h->turn, 0, h->spin)) {
            h->timed_out = true;
            return NULL;
        }
        if (atomic_load_explicit(&h->turn, memory_order_acquire) == 2) return NULL;
        /* the message read where it lies */
        h->first = h->data[0];
        h->reply = h->seq + 1;
        set_turn(h, 0);
    }
}

/* ---- processes: SIZE bytes there and back ---------------------------------------- */

/* a channel to a child process: what the parent writes to and reads from */
typedef struct {
    int to, from;
    pid_t child;
} channel;

/* Waits for fd to be ready (POLLIN or POLLOUT); false on timeout or error. */
static bool ready(int fd, short events) {
    struct pollfd p = {.fd = fd, .events = events};
    for (;;) {
        int n = poll(&p, 1, (int)(WB_FLOORS_WAIT_NS / 1000000));
        if (n > 0) return true;
        if (n == 0) return false;
        if (errno != EINTR) return false;
    }
}

/* Moves exactly len bytes (blocking; the run's alarm bounds a wait); false
 * on error or end of input. */
static bool read_all(int fd, unsigned char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = read(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n == 0) {
            return false;
        } else if (errno == EAGAIN) {
            if (!ready(fd, POLLIN)) return false;
        } else if (errno != EINTR) {
            return false;
        }
    }
    return true;
}

static bool write_all(int fd, const unsigned char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n > 0) {
            buf += n;
            len -= (size_t)n;
        } else if (n < 0 && errno == EAGAIN) {
            if (!ready(fd, POLLOUT)) return false;
        } else if (n < 0 && errno != EINTR) {
            return false;
        }
    }
    return true;
}

/* The child: echoes blocks of `size` bytes until its input ends. */
static void echo_child(int in, int out, size_t size) {
    unsigned char *buf = malloc(size);
    if (!buf) _exit(2);
    while (read_all(in, buf, size))
        if (!write_all(out, buf, size)) _exit(3);
    _exit(0);
}

static void no_delay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Starts the child at the other end of a channel of `method`; false on
 * failure (nothing left open). */
static bool open_channel(const char *method, size_t size, channel *c) {
    int a[2] = {-1, -1}, b[2] = {-1, -1}, listener = -1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t addr_len = sizeof addr;
    if (strcmp(method, "unix") == 0) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) != 0) return false;
    } else if (strcmp(method, "pipe") == 0) {
        if (pipe(a) != 0) return false;
        if (pipe(b) != 0) {
            close(a[0]);
            close(a[1]);
            return false;
        }
    } else if (strcmp(method, "tcp") == 0) {
        listener = socket(AF_INET, SOCK_STREAM, 0);
        if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 ||
            listen(listener, 1) != 0 ||
            getsockname(listener, (struct sockaddr *)&addr, &addr_len) != 0) {
            if (listener >= 0) close(listener);
            return false;
        }
    } else {
        return false;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        for (int i = 0; i < 2; i++) {
            if (a[i] >= 0) close(a[i]);
            if (b[i] >= 0) close(b[i]);
        }
        if (listener >= 0) close(listener);
        return false;
    }
    if (child == 0) {
        if (listener >= 0) { /* tcp: the child connects */
            close(listener);
            int s = socket(AF_INET, SOCK_STREAM, 0);
            if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) _exit(4);
            no_delay(s);
            echo_child(s, s, size);
        } else if (b[0] >= 0) { /* pipe: reads a, writes b */
            close(a[1]);
            close(b[0]);
            echo_child(a[0], b[1], size);
        } else {
            close(a[0]);
            echo_child(a[1], a[1], size);
        }
    }
    c->child = child;
    if (listener >= 0) {
        int s = ready(listener, POLLIN) ? accept(listener, NULL, NULL) : -1;
        close(listener);
        if (s < 0) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
            return false;
        }
        no_delay(s);
        c->to = c->from = s;
    } else if (b[0] >= 0) {
        close(a[0]);
        close(b[1]);
        c->to = a[1];
        c->from = b[0];
    } else {
        close(a[1]);
        c->to = c->from = a[0];
    }
    return true;
}

/* Closes the channel; true when the child ended cleanly. */
static bool close_channel(channel *c) {
    close(c->to);
    if (c->from != c->to) close(c->from);
    int status = 0;
    int64_t deadline = now_ns() + WB_FLOORS_WAIT_NS;
    for (;;) {
        pid_t r = waitpid(c->child, &status, WNOHANG);
        if (r == c->child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (r < 0 || now_ns() > deadline) break;
        usleep(1000);
    }
    kill(c->child, SIGKILL);
    waitpid(c->child, NULL, 0);
    return false;
}

/* ---- a run: `count` timed round trips (NULL times: none kept) ------------------- */

/* Fills buf with bytes that depend on round i. */
static void pattern(unsigned char *buf, size_t size, uint64_t i) {
    for (size_t k = 0; k < size; k += 64)
        buf[k] = (unsigned char)(i * 131 + k / 64);
    buf[size - 1] = (unsigned char)(i * 7 + 3);
}

/* Runs `count` round trips of `method` with `size` bytes, each checked,
 * or as many as fit in WB_FLOORS_TIMED_NS (*done: how many); their times
 * into times[] (when given). Returns NULL or what went wrong. */
static const char *run(const char *method, size_t size, size_t count, int64_t *times,
                       size_t *done) {
    int64_t deadline = now_ns() + WB_FLOORS_TIMED_NS;
    *done = 0;
    if (size == 0 || size > WB_FLOORS_MAX_SIZE) return "size out of range";
    unsigned char *out = malloc(size), *back = malloc(size);
    const char *err = NULL;
    if (!out || !back) {
        err = "out of memory";
        goto done;
    }
    memset(out, 0, size);
    bool threads = strcmp(method, "futex") == 0 || strcmp(method, "spin") == 0;
    if (threads) {
        handoff h = {.spin = method[0] == 's', .data = out};
        atomic_init(&h.turn, 0);
        pthread_t peer;
        if (pthread_create(&peer, NULL, peer_thread, &h) != 0) {
            err = "no thread";
            goto done;
        }
        for (size_t i = 0; i < count && !err && now_ns() < deadline; i++, (*done)++) {
            pattern(out, size, i);
            h.seq = i;
            int64_t t0 = now_ns();
            set_turn(&h, 1);
            if (!wait_change(&h.turn, 1, h.spin))
                err = "no answer from the thread";
            else if (h.reply != i + 1 || h.first != out[0])
                err = "a wrong answer from the thread";
            if (times) times[i] = now_ns() - t0;
        }
        if (!h.timed_out) set_turn(&h, 2);
        pthread_join(peer, NULL);
        goto done;
    }
    channel c;
    if (!open_channel(method, size, &c)) {
        err = "no channel (unknown method, or a call failed)";
        goto done;
    }
    for (size_t i = 0; i < count && !err && now_ns() < deadline; i++, (*done)++) {
        pattern(out, size, i);
        int64_t t0 = now_ns();
        if (!write_all(c.to, out, size) || !read_all(c.from, back, size))
            err = "the round trip failed";
        else if (memcmp(out, back, size) != 0)
            err = "the bytes came back changed";
        if (times) times[i] = now_ns() - t0;
    }
    if (!close_channel(&c) && !err) err = "the child did not end cleanly";
done:
    free(out);
    free(back);
    return err;
}

#ifdef WB_FLOORS_TEST
#include "check.h"

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const char *methods[] = {"futex", "spin", "unix", "pipe", "tcp"};
    size_t sizes[] = {1, 100, 4096, 65536, 1 << 20};
    for (size_t m = 0; m < 5; m++)
        for (size_t s = 0; s < 5; s++) {
            int64_t times[50];
            size_t done;
            const char *err = run(methods[m], sizes[s], 50, times, &done);
            CHECK(err == NULL, "%s, %zu bytes: %s", methods[m], sizes[s], err ? err : "");
            /* all 50 unless they took over 3 s (a machine loaded enough) */
            CHECK(done >= 1 && done <= 50, "%s: %zu round trips done", methods[m], done);
            for (size_t i = 0; i < done && !err; i++)
                CHECK(times[i] > 0, "%s: round trip %zu took no time", methods[m], i);
        }
    size_t done;
    CHECK(run("carrier-pigeon", 10, 1, NULL, &done) != NULL, "an unknown method is refused");
    CHECK(run("pipe", 0, 1, NULL, &done) != NULL, "a size of 0 is refused");
    return CHECK_SUMMARY();
}
#else
static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    char *end1, *end2;
    unsigned long long size = argc == 4 ? strtoull(argv[2], &end1, 10) : 0;
    unsigned long long count = argc == 4 ? strtoull(argv[3], &end2, 10) : 0;
    if (argc != 4 || *end1 || *end2 || size == 0 || size > WB_FLOORS_MAX_SIZE || count == 0 ||
        count > 10000000) {
        fprintf(stderr, "usage: wb_floors futex|spin|unix|pipe|tcp SIZE(1..%zu) ITERATIONS\n",
                WB_FLOORS_MAX_SIZE);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    alarm(WB_FLOORS_RUN_S);
    int64_t *times = malloc(count * sizeof *times);
    size_t done = 0;
    const char *err = times ? run(argv[1], size, count / 10 + 1, NULL, &done) : "out of memory";
    if (!err) err = run(argv[1], size, count, times, &done);
    if (err) {
        fprintf(stderr, "wb_floors %s %llu: %s\n", argv[1], size, err);
        free(times);
        return 1;
    }
    qsort(times, done, sizeof *times, compare);
    printf("%s %llu %zu %lld %lld %lld %lld\n", argv[1], size, done, (long long)times[done / 2],
           (long long)times[done * 9 / 10], (long long)times[done * 99 / 100], (long long)times[0]);
    free(times);
    return 0;
}
#endif

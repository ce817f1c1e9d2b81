/*
 * The server program's main loop, for the built-in server (wb_external_main.c)
 * and servers of SDK job types (wb_ext_jobs.c) alike.
 *
 * Arguments SOCKET_PATH [--remove-dir]: listens on a
 * Unix domain socket and serves each connection on a thread of its own (see
 * wb_external.h for the protocol). Prints "ready" on stdout once listening.
 * Started as a port program: it exits, removing its socket file, when its
 * stdin closes (the VM closed the port or died) or on SIGTERM/SIGINT/SIGHUP.
 * With --remove-dir it also removes the socket's directory if that is then
 * empty: the last server of a pool whose VM died cleans up the private
 * directory the pool made for them.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wb_external.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
    stop_signal = sig;
}

static void report(const char *name, const char *what) {
    fprintf(stderr, "%s: %s: %s\n", name, what, strerror(errno));
}

static void *serve_connection(void *arg) {
    int fd = (int)(intptr_t)arg;
    wb_ext_serve_fd(fd);
    close(fd);
    return NULL;
}

static int listen_on(const char *name, const char *path) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path) {
        fprintf(stderr, "%s: socket path too long: %s\n", name, path);
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        report(name, "socket");
        return -1;
    }
    /* a stale file from a killed predecessor */
    if (unlink(path) != 0 && errno != ENOENT) report(name, "unlink");
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 128) != 0) {
        report(name, "bind/listen");
        close(fd);
        return -1;
    }
    return fd;
}

/* The stop signals stay blocked except while the main thread waits in
 * ppoll (with the mask returned in *wait_mask), so they interrupt it and no
 * connection thread takes them. */
static void handle_signals(sigset_t *wait_mask) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sa.sa_handler = on_signal; /* no SA_RESTART: ppoll returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, wait_mask);
}

/* false once stdin reached end of file (or failed) */
static int stdin_open(void) {
    char buf[256];
    ssize_t got = read(STDIN_FILENO, buf, sizeof buf);
    return got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN));
}

int wb_ext_server_main(const char *name, int argc, char **argv) {
    bool remove_dir = argc == 3 && strcmp(argv[2], "--remove-dir") == 0;
    if (argc != 2 && !remove_dir) {
        fprintf(stderr, "usage: %s SOCKET_PATH [--remove-dir]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    sigset_t wait_mask;
    handle_signals(&wait_mask);
    if (ei_init() != 0) {
        fprintf(stderr, "%s: ei_init failed\n", name);
        return 1;
    }
    int lfd = listen_on(name, path);
    if (lfd < 0) return 1;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);

    printf("ready\n");
    fflush(stdout);

    int status = 0;
    while (!stop_signal) {
        struct pollfd fds[2] = {{.fd = lfd, .events = POLLIN},
                                {.fd = STDIN_FILENO, .events = POLLIN}};
        if (ppoll(fds, 2, NULL, &wait_mask) < 0) {
            if (errno == EINTR) continue;
            report(name, "poll");
            status = 1;
            break;
        }
        if (fds[1].revents & POLLNVAL) break;
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) && !stdin_open()) break;
        if (fds[0].revents & POLLIN) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
                    /* out of resources: let connections finish, then retry */
                    report(name, "accept");
                    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
                }
                continue;
            }
            pthread_t thread;
            int err = pthread_create(&thread, &attr, serve_connection, (void *)(intptr_t)fd);
            if (err != 0) {
                fprintf(stderr, "%s: pthread_create: %s\n", name, strerror(err));
                close(fd);
            }
        }
    }
    /* connection threads end with the process */
    unlink(path);
    close(lfd);
    if (remove_dir) {
        char *copy = strdup(path);
        if (copy) rmdir(dirname(copy)); /* fails, harmlessly, unless empty */
        free(copy);
    }
    pthread_attr_destroy(&attr);
    return status;
}

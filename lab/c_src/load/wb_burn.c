/*
 * wb_burn SECONDS: keeps one CPU busy, for the lab's runs on a loaded
 * machine. Started as a port program: it exits when its stdin closes (the
 * VM closed the port, or died), checked every millisecond or so, and after
 * SECONDS at the latest (SIGALRM), whatever happens to the VM.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* false once stdin reached end of file or failed */
static int stdin_open(void) {
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    int n = poll(&pfd, 1, 0);
    if (n <= 0) return n == 0 || errno == EINTR;
    if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) return 0;
    char buf[256];
    ssize_t got = read(STDIN_FILENO, buf, sizeof buf);
    return got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN));
}

int main(int argc, char **argv) {
    char *end;
    unsigned long seconds = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
    if (argc != 2 || *end || seconds == 0 || seconds > 3600) {
        fprintf(stderr, "usage: wb_burn SECONDS (1..3600)\n");
        return 2;
    }
    alarm((unsigned)seconds); /* the default action ends the program */
    volatile uint64_t x = 1;
    for (;;) {
        for (int i = 0; i < 200000; i++) /* about a millisecond */
            x = x * 6364136223846793005u + 1442695040888963407u;
        if (!stdin_open()) return 0;
    }
}

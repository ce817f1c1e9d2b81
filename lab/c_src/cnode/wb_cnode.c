/*
 * wb_cnode: an echo C node, written with the ei library (OTP 23+ API).
 *
 * Usage: wb_cnode ALIVE HOST PEER_NODE, with the cookie as the first line of
 * standard input. It names itself ALIVE@HOST, connects to PEER_NODE (the VM
 * that started it as a port program; the VM must be registered in epmd) and
 * answers every message {From, Tag, Term} sent to any registered name on this
 * node with {Tag, Term} sent to the pid From. Term's bytes are not decoded:
 * the reply is built in place, in the received buffer.
 *
 * It exits when the connection closes (status 0), when its standard input
 * closes (status 0: the VM closed the port or died), or on an error
 * (status 1, reason on stderr). Ticks from the VM are answered by ei.
 *
 * Built with -DWB_CNODE_TEST it is instead a unit test of wb_cnode_echo().
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ei.h"

#define WB_CONNECT_TMO_MS 10000

/* the external term format's version byte */
#define WB_VERSION_MAGIC 131

/*
 * Turns the message payload in buf[0..len) (external term format, version
 * byte first) of the form {From, Tag, Term}, From a pid, into the reply
 * {Tag, Term}: decodes From into *to, writes the reply's version byte and
 * tuple header over the end of From's encoding and stores in *start the
 * offset where the reply begins (it runs to len). Returns 0, or -1 when the
 * payload is not of that form (buf is then unchanged).
 */
int wb_cnode_echo(char *buf, int len, erlang_pid *to, int *start) {
    int idx = 0, version, arity;
    if (len < 1 || ei_decode_version(buf, &idx, &version) < 0) return -1;
    if (idx >= len || (unsigned char)buf[idx] != ERL_SMALL_TUPLE_EXT) return -1;
    if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 3) return -1;
    if (idx >= len || ei_decode_pid(buf, &idx, to) < 0) return -1;
    int tag_at = idx;
    if (idx >= len || ei_skip_term(buf, &idx) < 0) return -1;
    if (idx >= len || ei_skip_term(buf, &idx) < 0 || idx != len) return -1;
    /* version + SMALL_TUPLE_EXT + arity: 3 bytes, taken from From's encoding
       (at least 1 tag byte + an atom + 3 integers, so never before buf[3]) */
    int at = tag_at - 3;
    if (at < 3) return -1;
    buf[at] = (char)WB_VERSION_MAGIC;
    buf[at + 1] = (char)ERL_SMALL_TUPLE_EXT;
    buf[at + 2] = 2;
    *start = at;
    return 0;
}

#ifndef WB_CNODE_TEST

static int read_cookie(char *cookie, size_t size) {
    size_t n = 0;
    for (;;) {
        char c;
        ssize_t r = read(STDIN_FILENO, &c, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        if (c == '\n') break;
        if (n + 1 >= size) return -1;
        cookie[n++] = c;
    }
    cookie[n] = '\0';
    return n > 0 ? 0 : -1;
}

/* Returns 1 when standard input is closed (or fails), 0 otherwise. */
static int stdin_closed(void) {
    char buf[256];
    ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    return r <= 0;
}

static int serve(int fd) {
    erlang_msg msg;
    ei_x_buff x;
    if (ei_x_new(&x) < 0) return 1;
    int status = 0;
    for (;;) {
        struct pollfd fds[2] = {{.fd = fd, .events = POLLIN},
                                {.fd = STDIN_FILENO, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            perror("wb_cnode: poll");
            status = 1;
            break;
        }
        if (fds[1].revents && stdin_closed()) break;
        if (!fds[0].revents) continue;
        int got = ei_xreceive_msg(fd, &msg, &x);
        if (got == ERL_TICK) continue;
        if (got == ERL_ERROR) {
            if (erl_errno == EAGAIN || erl_errno == ETIMEDOUT) continue;
            if (erl_errno != EIO) {
                fprintf(stderr, "wb_cnode: receive failed: %s\n", strerror(erl_errno));
                status = 1;
            }
            break; /* EIO: the connection closed */
        }
        if (msg.msgtype != ERL_SEND && msg.msgtype != ERL_REG_SEND) continue;
        erlang_pid to;
        int start;
        if (wb_cnode_echo(x.buff, x.index, &to, &start) < 0) continue; /* not {From, Tag, Term} */
        if (ei_send(fd, &to, x.buff + start, x.index - start) < 0) {
            if (erl_errno == EIO) break;
            fprintf(stderr, "wb_cnode: send failed: %s\n", strerror(erl_errno));
            status = 1;
            break;
        }
    }
    ei_x_free(&x);
    return status;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s ALIVE HOST PEER_NODE (cookie on stdin)\n", argv[0]);
        return 2;
    }
    const char *alive = argv[1], *host = argv[2];
    char *peer = argv[3];
    char cookie[EI_MAX_COOKIE_SIZE + 1], node[MAXNODELEN + 1];
    if (read_cookie(cookie, sizeof cookie) < 0) {
        fprintf(stderr, "wb_cnode: no cookie on stdin\n");
        return 1;
    }
    if (strlen(alive) > EI_MAXALIVELEN || strlen(host) > EI_MAXHOSTNAMELEN ||
        snprintf(node, sizeof node, "%s@%s", alive, host) >= (int)sizeof node) {
        fprintf(stderr, "wb_cnode: node name too long\n");
        return 2;
    }
    if (ei_init() != 0) {
        fprintf(stderr, "wb_cnode: ei_init failed\n");
        return 1;
    }
    ei_cnode ec;
    struct in_addr addr;
    addr.s_addr = htonl(INADDR_LOOPBACK);
    /* creation: any value; the VM tells connections apart by node name */
    unsigned creation = (unsigned)getpid() % 0x7fffffffu + 1u;
    if (ei_connect_xinit(&ec, host, alive, node, &addr, cookie, creation) < 0) {
        fprintf(stderr, "wb_cnode: ei_connect_xinit failed: %d\n", erl_errno);
        return 1;
    }
    memset(cookie, 0, sizeof cookie);
    int fd = ei_connect_tmo(&ec, peer, WB_CONNECT_TMO_MS);
    if (fd < 0) {
        fprintf(stderr, "wb_cnode: cannot connect to %s: %s\n", peer, strerror(erl_errno));
        return 1;
    }
    int status = serve(fd);
    ei_close_connection(fd);
    return status;
}

#else /* WB_CNODE_TEST */

#include "check.h"

static erlang_pid test_pid(void) {
    erlang_pid p;
    memset(&p, 0, sizeof p);
    strcpy(p.node, "vm@127.0.0.1");
    p.num = 42;
    p.serial = 1;
    p.creation = 7;
    return p;
}

static erlang_ref test_ref(void) {
    erlang_ref r;
    memset(&r, 0, sizeof r);
    strcpy(r.node, "vm@127.0.0.1");
    r.len = 3;
    r.n[0] = 1;
    r.n[1] = 2;
    r.n[2] = 3;
    r.creation = 7;
    return r;
}

typedef void (*encode_fn)(ei_x_buff *x);

static void term_atom(ei_x_buff *x) {
    ei_x_encode_atom(x, "hello");
}

static void term_nested(ei_x_buff *x) {
    /* #{"k" => [1, -2.5, {}, <<>>]} and a big integer */
    ei_x_encode_tuple_header(x, 2);
    ei_x_encode_map_header(x, 1);
    ei_x_encode_binary(x, "k", 1);
    ei_x_encode_list_header(x, 4);
    ei_x_encode_long(x, 1);
    ei_x_encode_double(x, -2.5);
    ei_x_encode_tuple_header(x, 0);
    ei_x_encode_binary(x, "", 0);
    ei_x_encode_empty_list(x);
    ei_x_encode_ulonglong(x, 0xffffffffffffffffULL);
}

static void term_large_binary(ei_x_buff *x) {
    size_t n = 1 << 20;
    char *b = malloc(n);
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(i * 31);
    ei_x_encode_binary(x, b, (long)n);
    free(b);
}

/* {From, Ref, Term} must become exactly {Ref, Term} */
static void check_echo(encode_fn term) {
    erlang_pid from = test_pid();
    erlang_ref ref = test_ref();
    ei_x_buff msg, want;
    ei_x_new_with_version(&msg);
    ei_x_encode_tuple_header(&msg, 3);
    ei_x_encode_pid(&msg, &from);
    ei_x_encode_ref(&msg, &ref);
    term(&msg);
    ei_x_new_with_version(&want);
    ei_x_encode_tuple_header(&want, 2);
    ei_x_encode_ref(&want, &ref);
    term(&want);

    erlang_pid to;
    int start = -1;
    CHECK(wb_cnode_echo(msg.buff, msg.index, &to, &start) == 0, "an echo request is accepted");
    CHECK(start > 0 && msg.index - start == want.index, "the reply term has the request's size");
    if (start > 0 && msg.index - start == want.index)
        CHECK(memcmp(msg.buff + start, want.buff, (size_t)want.index) == 0,
              "the reply term is the request's");
    CHECK(strcmp(to.node, from.node) == 0 && to.num == from.num && to.serial == from.serial &&
              to.creation == from.creation,
          "the reply goes to the requesting pid");
    ei_x_free(&msg);
    ei_x_free(&want);
}

/* messages that are not {Pid, Tag, Term} are refused and left unchanged */
static void check_refused(ei_x_buff *msg) {
    erlang_pid to;
    int start = -1;
    char *copy = malloc((size_t)msg->index);
    memcpy(copy, msg->buff, (size_t)msg->index);
    CHECK(wb_cnode_echo(msg->buff, msg->index, &to, &start) == -1, "a bad message is refused");
    CHECK(memcmp(copy, msg->buff, (size_t)msg->index) == 0, "a refused message is left unchanged");
    free(copy);
    ei_x_free(msg);
}

static void check_bad_messages(void) {
    erlang_pid from = test_pid();
    erlang_ref ref = test_ref();
    ei_x_buff m;

    ei_x_new_with_version(&m); /* an atom */
    ei_x_encode_atom(&m, "stop");
    check_refused(&m);

    ei_x_new_with_version(&m); /* {From, Ref}: arity 2 */
    ei_x_encode_tuple_header(&m, 2);
    ei_x_encode_pid(&m, &from);
    ei_x_encode_ref(&m, &ref);
    check_refused(&m);

    ei_x_new_with_version(&m); /* {not_a_pid, Ref, 1} */
    ei_x_encode_tuple_header(&m, 3);
    ei_x_encode_atom(&m, "not_a_pid");
    ei_x_encode_ref(&m, &ref);
    ei_x_encode_long(&m, 1);
    check_refused(&m);

    ei_x_new_with_version(&m); /* [From, Ref, 1]: a list */
    ei_x_encode_list_header(&m, 3);
    ei_x_encode_pid(&m, &from);
    ei_x_encode_ref(&m, &ref);
    ei_x_encode_long(&m, 1);
    ei_x_encode_empty_list(&m);
    check_refused(&m);

    ei_x_new_with_version(&m); /* truncated: {From, Ref} announced as arity 3 */
    ei_x_encode_tuple_header(&m, 3);
    ei_x_encode_pid(&m, &from);
    ei_x_encode_ref(&m, &ref);
    check_refused(&m);

    ei_x_new_with_version(&m); /* {From, Ref, 1} followed by stray bytes */
    ei_x_encode_tuple_header(&m, 3);
    ei_x_encode_pid(&m, &from);
    ei_x_encode_ref(&m, &ref);
    ei_x_encode_long(&m, 1);
    ei_x_encode_atom(&m, "stray");
    check_refused(&m);

    ei_x_new(&m); /* empty */
    check_refused(&m);
}

int main(void) {
    if (ei_init() != 0) return 1;
    check_echo(term_atom);
    check_echo(term_nested);
    check_echo(term_large_binary);
    check_bad_messages();
    return CHECK_SUMMARY();
}

#endif /* WB_CNODE_TEST */

#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "wb_external.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* --- framing ---------------------------------------------------------------- */

uint32_t wb_ext_be32(const void *p) {
    const unsigned char *u = p;
    return ((uint32_t)u[0] << 24) | ((uint32_t)u[1] << 16) | ((uint32_t)u[2] << 8) | u[3];
}

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

void wb_ext_reader_init(wb_ext_reader *r, wb_ext_read_fn read, void *ctx, size_t max_frame) {
    memset(r, 0, sizeof *r);
    r->read = read;
    r->ctx = ctx;
    r->max_frame = max_frame;
}

void wb_ext_reader_free(wb_ext_reader *r) {
    free(r->buf);
    r->buf = NULL;
    r->cap = r->start = r->end = 0;
}

/* Makes room for `need` bytes from r->start on. */
static int reserve(wb_ext_reader *r, size_t need) {
    if (r->cap - r->start >= need) return 0;
    size_t have = r->end - r->start;
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, have);
        r->start = 0;
        r->end = have;
    }
    if (r->cap >= need) return 0;
    size_t cap = need > WB_EXT_BUFFER_BYTES ? need : WB_EXT_BUFFER_BYTES;
    char *buf = realloc(r->buf, cap);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    r->buf = buf;
    r->cap = cap;
    return 0;
}

int wb_ext_read_frame(wb_ext_reader *r, const char **payload, size_t *len) {
    if (r->start == r->end) {
        r->start = r->end = 0;
        /* after a large frame, give the memory back */
        if (r->cap > 4 * WB_EXT_BUFFER_BYTES) wb_ext_reader_free(r);
    }
    for (;;) {
        size_t have = r->end - r->start;
        size_t need = WB_EXT_HEADER_BYTES;
        if (have >= WB_EXT_HEADER_BYTES) {
            size_t n = wb_ext_be32(r->buf + r->start);
            if (n > r->max_frame) {
                errno = EMSGSIZE;
                return -1;
            }
            need += n;
            if (have >= need) {
                *payload = r->buf + r->start + WB_EXT_HEADER_BYTES;
                *len = n;
                r->start += need;
                return 1;
            }
        }
        if (reserve(r, need) != 0) return -1;
        ssize_t got = r->read(r->ctx, r->buf + r->end, r->cap - r->end);
        if (got > 0) {
            r->end += (size_t)got;
        } else if (got == 0) {
            if (have == 0) return 0;
            errno = EPROTO;
            return -1;
        } else if (errno != EINTR) {
            return -1;
        }
    }
}

int wb_ext_write_frame(wb_ext_writev_fn writev_fn, void *ctx, const struct iovec *parts,
                       int nparts) {
    if (nparts < 0 || nparts > WB_EXT_MAX_PARTS) {
        errno = EINVAL;
        return -1;
    }
    unsigned char header[WB_EXT_HEADER_BYTES];
    struct iovec iov[1 + WB_EXT_MAX_PARTS];
    size_t total = 0;
    int count = 1;
    for (int i = 0; i < nparts; i++) {
        total += parts[i].iov_len;
        if (parts[i].iov_len > 0) iov[count++] = parts[i];
    }
    if (total > UINT32_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    put_be32(header, (uint32_t)total);
    iov[0].iov_base = header;
    iov[0].iov_len = sizeof header;

    int first = 0;
    while (first < count) {
        ssize_t done = writev_fn(ctx, iov + first, count - first);
        if (done < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (done == 0) {
            errno = EIO;
            return -1;
        }
        size_t left = (size_t)done;
        while (first < count && left >= iov[first].iov_len) {
            left -= iov[first].iov_len;
            first++;
        }
        if (first < count) {
            iov[first].iov_base = (char *)iov[first].iov_base + left;
            iov[first].iov_len -= left;
        }
    }
    return 0;
}

/* --- dispatch ----------------------------------------------------------------- */

bool wb_ext_item_fits(const char *buf, size_t len, int idx) {
    size_t at = (size_t)idx;
    if (idx < 0 || at >= len) return false;
    const unsigned char *p = (const unsigned char *)buf + at;
    size_t avail = len - at, need;
    switch (p[0]) {
    case ERL_SMALL_INTEGER_EXT:
    case ERL_SMALL_TUPLE_EXT:
        need = 2;
        break;
    case ERL_INTEGER_EXT:
    case ERL_LARGE_TUPLE_EXT:
        need = 5;
        break;
    case ERL_SMALL_ATOM_EXT:
    case ERL_SMALL_ATOM_UTF8_EXT:
        if (avail < 2) return false;
        need = 2 + (size_t)p[1];
        break;
    case ERL_ATOM_EXT:
    case ERL_ATOM_UTF8_EXT:
        if (avail < 3) return false;
        need = 3 + (((size_t)p[1] << 8) | p[2]);
        break;
    case ERL_BINARY_EXT:
        if (avail < 5) return false;
        need = 5 + (size_t)wb_ext_be32((const char *)p + 1);
        break;
    case ERL_SMALL_BIG_EXT:
        if (avail < 2) return false;
        need = 3 + (size_t)p[1];
        break;
    case ERL_LARGE_BIG_EXT:
        if (avail < 5) return false;
        need = 6 + (size_t)wb_ext_be32((const char *)p + 1);
        break;
    default:
        return false;
    }
    return need <= avail;
}

bool wb_ext_decode_atom(const char *buf, size_t len, int *idx, char atom[MAXATOMLEN]) {
    return wb_ext_item_fits(buf, len, *idx) && ei_decode_atom(buf, idx, atom) == 0;
}

int wb_ext_reply_x(wb_ext_reply *reply) {
    reply->has_x = 1;
    reply->iov[0].iov_base = reply->x.buff;
    reply->iov[0].iov_len = (size_t)reply->x.index;
    reply->iovcnt = 1;
    return 0;
}

int wb_ext_reply_error(wb_ext_reply *reply, const char *reason) {
    if (ei_x_new_with_version(&reply->x) != 0) return -1;
    if (ei_x_encode_tuple_header(&reply->x, 2) != 0 || ei_x_encode_atom(&reply->x, "error") != 0 ||
        ei_x_encode_atom(&reply->x, reason) != 0) {
        ei_x_free(&reply->x);
        return -1;
    }
    return wb_ext_reply_x(reply);
}

static wb_ext_handle_fn handler;

void wb_ext_use(wb_ext_handle_fn handle) {
    handler = handle;
}

int wb_ext_dispatch(const char *req, size_t len, wb_ext_reply *reply, wb_ext_cancel_fn cancel,
                    void *cancel_ctx) {
    memset(reply, 0, sizeof *reply);
    /* a cancel, for a request that already ended: acknowledged (an empty reply) */
    if (len == 0) return 0;
    int idx = 0, version, arity;
    char tag[MAXATOMLEN];
    if (len > INT_MAX || ei_decode_version(req, &idx, &version) != 0 ||
        !wb_ext_item_fits(req, len, idx) || ei_decode_tuple_header(req, &idx, &arity) != 0 ||
        arity < 1)
        return wb_ext_reply_error(reply, "badarg");
    if (!wb_ext_decode_atom(req, len, &idx, tag)) return wb_ext_reply_error(reply, "badarg");

    if (arity == 2 && strcmp(tag, "echo") == 0) {
        if ((size_t)idx >= len) return wb_ext_reply_error(reply, "badarg");
        reply->version = (char)WB_EXT_VERSION_MAGIC;
        reply->iov[0].iov_base = &reply->version;
        reply->iov[0].iov_len = 1;
        reply->iov[1].iov_base = (void *)(req + idx);
        reply->iov[1].iov_len = len - (size_t)idx;
        reply->iovcnt = 2;
        return 0;
    }
    if (handler) {
        int rc = handler(tag, arity, req, len, idx, reply, cancel, cancel_ctx);
        if (rc != WB_EXT_UNKNOWN) return rc;
    }
    return wb_ext_reply_error(reply, "unknown_request");
}

void wb_ext_reply_free(wb_ext_reply *reply) {
    if (reply->has_x) ei_x_free(&reply->x);
    reply->has_x = 0;
    reply->iovcnt = 0;
}

/* --- serving -------------------------------------------------------------------- */

int wb_ext_serve(wb_ext_reader *r, wb_ext_writev_fn writev_fn, void *wctx, wb_ext_cancel_fn cancel,
                 void *cancel_ctx) {
    for (;;) {
        const char *payload;
        size_t len;
        int got = wb_ext_read_frame(r, &payload, &len);
        if (got <= 0) return got;
        wb_ext_reply reply;
        int got_reply = wb_ext_dispatch(payload, len, &reply, cancel, cancel_ctx);
        /* the cancel frame, or the end of input, is next */
        if (got_reply == WB_EXT_CANCELLED) continue;
        if (got_reply != 0) return -1;
        int rc = wb_ext_write_frame(writev_fn, wctx, reply.iov, reply.iovcnt);
        wb_ext_reply_free(&reply);
        if (rc != 0) return -1;
    }
}

ssize_t wb_ext_fd_read(void *ctx, void *buf, size_t len) {
    return read(*(int *)ctx, buf, len);
}

ssize_t wb_ext_fd_writev(void *ctx, const struct iovec *iov, int iovcnt) {
    int fd = *(int *)ctx;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = (struct iovec *)iov;
    msg.msg_iovlen = (size_t)iovcnt;
    /* no SIGPIPE when the client is gone: an EPIPE error instead */
    ssize_t done = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (done < 0 && errno == ENOTSOCK) return writev(fd, iov, iovcnt);
    return done;
}

bool wb_ext_fd_peer_closed(void *ctx) {
    struct pollfd pfd = {.fd = *(int *)ctx, .events = POLLRDHUP};
    int n = poll(&pfd, 1, 0);
    return n > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

bool wb_ext_fd_cancel_asked(void *ctx) {
    struct pollfd pfd = {.fd = *(int *)ctx, .events = POLLIN | POLLRDHUP};
    int n = poll(&pfd, 1, 0);
    return n > 0 && (pfd.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

typedef struct {
    int fd;
    wb_ext_reader r;
} connection;

/* a cancel that came with the request, in the same read, waits in the
 * reader; a later one in the socket */
static bool connection_cancel_asked(void *ctx) {
    connection *c = ctx;
    return c->r.end > c->r.start || wb_ext_fd_cancel_asked(&c->fd);
}

int wb_ext_serve_fd(int fd) {
    connection c = {.fd = fd};
    wb_ext_reader_init(&c.r, wb_ext_fd_read, &c.fd, WB_EXT_MAX_FRAME);
    int rc = wb_ext_serve(&c.r, wb_ext_fd_writev, &c.fd, connection_cancel_asked, &c);
    wb_ext_reader_free(&c.r);
    return rc;
}

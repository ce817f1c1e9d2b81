/*
 * The external server's protocol, in pure C (no sockets of its own): framing
 * and dispatch, so that both are unit-tested without a server.
 *
 * A frame is a 4-byte big-endian length followed by that many bytes of
 * payload, requests and replies alike. A payload is one term in the external
 * term format (version byte 131 first), a tuple whose first element names the
 * request:
 *
 *   {echo, Term}                                  -> Term
 *
 * answered here, and the requests of the server's service (wb_ext_use): a
 * server of SDK job types' jobs (wb_ext_jobs.c), the built-in server
 * (wb_external_main.c: the library's own job types) included. Anything else answers {error,
 * unknown_request}; a malformed request {error, badarg}. The echo reply is
 * the request's own bytes for Term behind a version byte: nothing is decoded
 * or re-encoded.
 *
 * An empty frame is a cancel: the client sends it, while a request runs or
 * after, for the request it gave up (its caller timed out or died), and the
 * server answers it with an empty frame once no request of that connection
 * runs any more. No reply is empty (a term is one byte at least), so the
 * client tells the acknowledgement from a late reply, and the connection
 * serves on.
 *
 * Reading and writing go through callbacks, so tests can inject short reads,
 * short writes and EINTR; wb_ext_fd_read / wb_ext_fd_writev are the real ones.
 * A long computation asks a third callback, every millisecond or so of work,
 * whether to give up: over a socket, when the client has sent anything (a
 * cancel: a client sends nothing else while its request runs) or closed
 * it, so no server thread works for nobody. A computation that never gets
 * to ask (native code stuck in a loop) is the client's to end: the pool
 * kills its server when the acknowledgement does not come in time.
 */
#ifndef WB_EXTERNAL_H
#define WB_EXTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <ei.h>

#define WB_EXT_HEADER_BYTES 4
/* larger frames close the connection (ei indexes buffers with an int) */
#define WB_EXT_MAX_FRAME ((size_t)1 << 30)
/* a connection's read buffer; it grows for a larger frame, then shrinks back */
#define WB_EXT_BUFFER_BYTES  ((size_t)64 * 1024)
#define WB_EXT_VERSION_MAGIC 131

/* Like read(2) / writev(2): bytes done, 0 at end of file (read only), or -1
 * with errno set. Short counts are fine. */
typedef ssize_t (*wb_ext_read_fn)(void *ctx, void *buf, size_t len);
typedef ssize_t (*wb_ext_writev_fn)(void *ctx, const struct iovec *iov, int iovcnt);
/* true: abandon the request being computed (and the connection) */
typedef bool (*wb_ext_cancel_fn)(void *ctx);

/* work units (~2 ns each, see c_src/metric/kernels.h) between two cancel checks;
 * shorter computations never check */
#define WB_EXT_CANCEL_CHECK_UNITS ((uint64_t)1 << 20)

typedef struct {
    wb_ext_read_fn read;
    void *ctx;
    size_t max_frame;
    char *buf;
    size_t cap;   /* bytes allocated at buf */
    size_t start; /* first byte not yet returned in a frame */
    size_t end;   /* one past the last byte read */
} wb_ext_reader;

/* the 32-bit big-endian number at p (frame headers, term lengths) */
uint32_t wb_ext_be32(const void *p);

void wb_ext_reader_init(wb_ext_reader *r, wb_ext_read_fn read, void *ctx, size_t max_frame);
void wb_ext_reader_free(wb_ext_reader *r);

/* Reads the next frame, however the bytes arrive (one read may hold part of
 * a frame or several frames). Returns 1 with *payload / *len set (valid until
 * the next call), 0 at end of input between frames, -1 on error with errno
 * set: EPROTO (input ended inside a frame), EMSGSIZE (frame longer than
 * max_frame), ENOMEM, or the read callback's errno. */
int wb_ext_read_frame(wb_ext_reader *r, const char **payload, size_t *len);

#define WB_EXT_MAX_PARTS 4

/* Writes one frame whose payload is the concatenation of parts[0..nparts)
 * (nparts <= WB_EXT_MAX_PARTS), retrying short writes and EINTR. Returns 0,
 * or -1 with errno set. */
int wb_ext_write_frame(wb_ext_writev_fn writev_fn, void *ctx, const struct iovec *parts,
                       int nparts);

/* A reply: iov[0..iovcnt) is its payload. It may point into the request, so
 * the request must stay readable until the reply is written. */
typedef struct {
    struct iovec iov[2];
    int iovcnt;
    char version; /* the echo reply's version byte */
    ei_x_buff x;  /* an encoded reply */
    int has_x;
} wb_ext_reply;

#define WB_EXT_CANCELLED (-2)
/* a handler's answer for a request it does not know */
#define WB_EXT_UNKNOWN (-3)

/* The requests a server answers beside echo: handle gets the request's tag
 * and arity, and idx, the index of the tuple's second element in req; it
 * returns as wb_ext_dispatch does, or WB_EXT_UNKNOWN. */
typedef int (*wb_ext_handle_fn)(const char *tag, int arity, const char *req, size_t len, int idx,
                                wb_ext_reply *reply, wb_ext_cancel_fn cancel, void *cancel_ctx);

/* The server's handler (NULL: echo only), set once before any request. */
void wb_ext_use(wb_ext_handle_fn handle);

/* Answers one request payload. Returns 0 with *reply filled (errors in the
 * request become {error, Reason} replies; an empty payload, a cancel, gets
 * an empty reply), -1 when out of memory, or WB_EXT_CANCELLED (nothing to
 * reply) when cancel (may be NULL) said so. */
int wb_ext_dispatch(const char *req, size_t len, wb_ext_reply *reply, wb_ext_cancel_fn cancel,
                    void *cancel_ctx);
void wb_ext_reply_free(wb_ext_reply *reply);

/* For handlers. The ei decoders trust their input: wb_ext_item_fits checks
 * that the item at idx lies inside the payload (a tuple's header, a whole
 * atom, integer or binary); other types do not fit. */
bool wb_ext_item_fits(const char *buf, size_t len, int idx);
bool wb_ext_decode_atom(const char *buf, size_t len, int *idx, char atom[MAXATOMLEN]);
/* reply->x, encoded by the handler, as the reply */
int wb_ext_reply_x(wb_ext_reply *reply);
/* {error, Reason}; -1 when out of memory */
int wb_ext_reply_error(wb_ext_reply *reply, const char *reason);

/* Serves frames from r until end of input: 0 then, -1 on a read, write or
 * framing error. A cancelled request gets no reply: the cancel frame (or
 * the end of input) that made it stop comes next. */
int wb_ext_serve(wb_ext_reader *r, wb_ext_writev_fn writev_fn, void *wctx, wb_ext_cancel_fn cancel,
                 void *cancel_ctx);

/* Callbacks over a file descriptor; ctx points to an int. */
ssize_t wb_ext_fd_read(void *ctx, void *buf, size_t len);
ssize_t wb_ext_fd_writev(void *ctx, const struct iovec *iov, int iovcnt);
/* true once the peer has closed the socket (or it failed) */
bool wb_ext_fd_peer_closed(void *ctx);
/* true once the peer has sent anything (a cancel) or closed the socket:
 * the cancel callback of a served socket */
bool wb_ext_fd_cancel_asked(void *ctx);

/* wb_ext_serve on a connected socket (or any fd); does not close it. */
int wb_ext_serve_fd(int fd);

/* A server of SDK job types (wb_ext_jobs.c): checks the job types (a
 * NULL-terminated list, at most 32) as wb_runtime_load does and makes their
 * handler the server's. Returns 0, or -1 with the reason on standard
 * error. */
struct wb_job_type;
int wb_ext_jobs_use(struct wb_job_type *const types[]);

/* Whether every term made in an environment of enif_alloc_env's (in a
 * server, see wb_ext_nif.c) could be made: false once one ran out of
 * memory (or for NULL). */
struct enif_environment_t;
bool wb_ext_env_ok(const struct enif_environment_t *env);

/* The library's own job types in a server (wb_ext_library.c): the list,
 * for wb_external_main or wb_ext_jobs_use, and the library's load, to run
 * once before (0, or -1 with the reason on standard error). */
extern struct wb_job_type *const wb_ext_library_types[];
int wb_ext_library_load(void);

/* The server program's main (wb_ext_server.c), after wb_ext_use: its
 * arguments are SOCKET_PATH [--remove-dir] (see there); `name` prefixes its
 * messages. */
int wb_ext_server_main(const char *name, int argc, char **argv);

#endif

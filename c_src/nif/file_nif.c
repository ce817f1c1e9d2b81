/*
 * WellBehaved.File: a file handle resource (fd, read buffer, write buffer,
 * mutex) and its NIFs.
 *
 * Scheduling: open, write, flush, fsync, close and reads that may wait for
 * the disk are system calls that run in NIFs flagged
 * ERL_NIF_DIRTY_JOB_IO_BOUND. Work inside the buffers (finding lines,
 * handing out bytes, buffering a small write) runs in normal NIFs that never
 * block: they take the mutex with trylock, and refill the read buffer only
 * from the page cache (preadv2 with RWF_NOWAIT, which fails rather than
 * wait for I/O; at most 256 KiB, charged to the time slice). When they need
 * to wait (bytes not cached, a large buffer, the handle busy), they answer
 * `refill` (or `flush` for writes) and the Elixir side calls the dirty
 * variant, which does the system call and answers in the same call. So a
 * cached file is read with no dirty hop at all, and an uncached one with
 * one hop per buffer fill, never one per line.
 *
 * The read buffer is malloc'ed (so a buffer too large for memory gives
 * {error, enomem}, where enif_alloc_resource would abort the VM) and owned
 * by a small resource object of its own; lines longer than a heap binary
 * are resource binaries pointing into it
 * (enif_make_resource_binary): handing one out copies nothing and allocates
 * nothing off the heap; the caller's heap gets a binary header that
 * references the buffer and counts only the line's bytes against the
 * caller's binary heap. (A refc binary per line costs an allocation, and a
 * sub-binary of a refc buffer counts the whole buffer per call: both
 * measured 2-4x slower for 100-byte lines.) read_lines, many lines per
 * call, makes one such binary of the whole buffer and sub-binaries of it.
 * The core
 * (c_src/file/line_reader.c) never writes bytes it handed out; a full buffer
 * is replaced by a new one, and the old one lives as long as lines point
 * into it.
 *
 * The fd is closed by close/1, by the destructor when the handle is garbage
 * collected, and when the process that opened the handle exits (a monitor).
 * After any of these, every call answers {error, closed}. close/1 runs on a
 * dirty I/O scheduler and flushes and closes there. The destructor and the
 * monitor run on whatever scheduler collects the handle or handles the
 * exit, so they never block: they hand the fd and the write buffer to this
 * runtime's thread for blocking clean-ups (wb_release_later_blocking),
 * which flushes and closes them; and the monitor
 * only tries the handle's mutex: when a call holds it, it leaves a flag
 * that the call acts on as it lets the mutex go.
 */
#define _GNU_SOURCE /* strerrorname_np */
#include "file_nif.h"
#include "../file/line_reader.h"

#include <wb_runtime.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* lines per normal call of read_lines: bounds its time (~20 ns each) */
#define WB_FILE_LINES_PER_CALL 4096
/* largest write buffered by a normal NIF (a memcpy) */
#define WB_FILE_NORMAL_WRITE_MAX (256 * 1024)
/* lines up to this size are copied into heap binaries (the VM's limit for
 * them): cheaper than a reference, and they do not keep the buffer alive */
#define WB_FILE_HEAP_BINARY_MAX 64

/* open's mode and flags arrive as the atoms WellBehaved.File takes
 * (decoded here, against atoms made once at load: no numbers to mirror) */
enum { MODE_READ, MODE_WRITE, MODE_APPEND, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = {"read", "write", "append"};
enum { FLAG_CREATE, FLAG_EXCLUSIVE, FLAG_TRUNCATE, FLAG_SYNC, FLAG_DSYNC, FLAG_COUNT };
static const char *const flag_names[FLAG_COUNT] = {"create", "exclusive", "truncate", "sync",
                                                   "dsync"};
static const int flag_oflags[FLAG_COUNT] = {O_CREAT, O_EXCL, O_TRUNC, O_SYNC, O_DSYNC};
static ERL_NIF_TERM a_modes[MODE_COUNT], a_flags[FLAG_COUNT];

/* the read buffer's owner: a resource, so that lines pointing into the
 * bytes keep them alive */
typedef struct {
    uint8_t *data; /* malloc'ed */
} wb_file_buffer;

typedef struct {
    ErlNifMutex *lock;
    int fd; /* -1 once closed */
    int mode;
    wb_line_reader reader;  /* reads into buffer->data */
    wb_file_buffer *buffer; /* one reference held here, NULL before a fill */
    bool nowait_reads;      /* preadv2(RWF_NOWAIT) works on this fd */
    wb_write_buffer writer;
    ErlNifMonitor owner;
    atomic_bool owner_gone; /* the owner exited while a call held the lock */
} wb_file;

static ErlNifResourceType *file_type, *buffer_type;
static ERL_NIF_TERM a_ok, a_error, a_eof, a_refill, a_flush, a_closed, a_ebadf, a_enomem,
    a_line_too_long;

static ERL_NIF_TERM error_term(ErlNifEnv *env, ERL_NIF_TERM reason) {
    return enif_make_tuple2(env, a_error, reason);
}

/* enoent, eacces, eisdir...: the errno's name in lower case */
static ERL_NIF_TERM posix_error(ErlNifEnv *env, int err) {
    const char *name = strerrorname_np(err);
    char atom[32];
    size_t i = 0;
    if (name)
        for (; name[i] && i < sizeof atom - 1; i++)
            atom[i] = (char)tolower((unsigned char)name[i]);
    atom[i] = 0;
    return error_term(env, enif_make_atom(env, i ? atom : "eunknown"));
}

static ERL_NIF_TERM ok_or_posix(ErlNifEnv *env, int err) {
    return err ? posix_error(env, err) : a_ok;
}

static ssize_t fd_write(void *ctx, const uint8_t *buf, size_t n) {
    return write(*(int *)ctx, buf, n);
}

static void drop_buffer(wb_file *f) {
    if (f->buffer) enif_release_resource(f->buffer);
    f->buffer = NULL;
}

static void buffer_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    free(((wb_file_buffer *)obj)->data);
}

/* --- closing off the schedulers ------------------------------------------------ */

/* an fd and the write buffer still to go out, handed over by a destructor
 * or monitor */
typedef struct {
    int fd;
    wb_write_buffer writer;
} pending_close;

/* flushes (when writing) and closes; 0 or an errno */
static int flush_and_close(int fd, wb_write_buffer *writer) {
    int err = 0;
    if (writer->data) err = wb_wbuf_flush(writer, fd_write, &fd);
    if (close(fd) != 0 && !err && errno != EINTR) err = errno;
    wb_wbuf_free(writer);
    return err;
}

static void close_pending(void *arg) {
    pending_close *p = arg;
    (void)flush_and_close(p->fd, &p->writer); /* nobody is left to tell */
    free(p);
}

/* Hands the fd and write buffer to the runtime's thread for clean-ups
 * that can block (it runs at once what it cannot queue: out of memory,
 * library unloading). */
static void close_later(int fd, wb_write_buffer *writer) {
    pending_close *p = malloc(sizeof *p);
    if (!p) {
        (void)flush_and_close(fd, writer);
        return;
    }
    p->fd = fd;
    p->writer = *writer;
    *writer = (wb_write_buffer){0};
    wb_release_later_blocking(close_pending, p);
}

/* --- closing ---------------------------------------------------------------- */

static void forget_fd(wb_file *f) {
    f->fd = -1;
    drop_buffer(f); /* lines still pointing into it keep it alive */
    wb_lr_init(&f->reader, 1, WB_LR_UNLIMITED);
}

/* closes the fd now (flushing the write buffer first): 0 or an errno. For
 * close/1, on a dirty scheduler. */
static int close_locked(wb_file *f) {
    if (f->fd < 0) return 0;
    int err = flush_and_close(f->fd, &f->writer);
    forget_fd(f);
    return err;
}

/* the same without blocking: the closer thread does the system calls */
static void close_locked_later(wb_file *f) {
    if (f->fd < 0) return;
    close_later(f->fd, &f->writer);
    forget_fd(f);
}

static void file_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    wb_file *f = obj;
    close_locked_later(f); /* the last reference: nobody else holds the lock */
    if (f->lock) enif_mutex_destroy(f->lock);
}

/* After a call lets the mutex go, and from the monitor: closes the handle
 * when its owner has exited, unless another call holds the mutex (that
 * call does it as it lets go). The fences pair the flag with the mutex:
 * either the monitor's try-lock sees the mutex free, or the call that held
 * it sees the flag. */
static void close_if_orphaned(wb_file *f) {
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load(&f->owner_gone) || enif_mutex_trylock(f->lock) != 0) return;
    close_locked_later(f);
    enif_mutex_unlock(f->lock);
}

/* the process that opened the handle exited */
static void file_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
    (void)env;
    (void)pid;
    (void)mon;
    wb_file *f = obj;
    atomic_store(&f->owner_gone, true);
    close_if_orphaned(f);
}

static void unlock_handle(wb_file *f) {
    enif_mutex_unlock(f->lock);
    close_if_orphaned(f);
}

int wb_file_load(ErlNifEnv *env) {
    ErlNifResourceTypeInit init = {.dtor = file_dtor, .stop = NULL, .down = file_down};
    file_type = enif_open_resource_type_x(env, "wb_file", &init, ERL_NIF_RT_CREATE, NULL);
    buffer_type =
        enif_open_resource_type(env, NULL, "wb_file_buffer", buffer_dtor, ERL_NIF_RT_CREATE, NULL);
    if (!file_type || !buffer_type) return 1;
    a_ok = enif_make_atom(env, "ok");
    a_error = enif_make_atom(env, "error");
    a_eof = enif_make_atom(env, "eof");
    a_refill = enif_make_atom(env, "refill");
    a_flush = enif_make_atom(env, "flush");
    a_closed = enif_make_atom(env, "closed");
    a_ebadf = enif_make_atom(env, "ebadf");
    a_enomem = enif_make_atom(env, "enomem");
    a_line_too_long = enif_make_atom(env, "line_too_long");
    for (int m = 0; m < MODE_COUNT; m++)
        a_modes[m] = enif_make_atom(env, mode_names[m]);
    for (int f = 0; f < FLAG_COUNT; f++)
        a_flags[f] = enif_make_atom(env, flag_names[f]);
    return 0;
}

/* --- open ----------------------------------------------------------------- */

static bool get_mode(ERL_NIF_TERM term, int *mode) {
    for (int m = 0; m < MODE_COUNT; m++)
        if (enif_is_identical(term, a_modes[m])) {
            *mode = m;
            return true;
        }
    return false;
}

/* a list of flag atoms: their open(2) flags or'ed into *oflags */
static bool get_flags(ErlNifEnv *env, ERL_NIF_TERM list, int *oflags) {
    ERL_NIF_TERM head;
    for (unsigned n = 0; enif_get_list_cell(env, list, &head, &list); n++) {
        if (n >= 2 * FLAG_COUNT) return false; /* repeats are fine, a long list is not */
        int f = 0;
        while (f < FLAG_COUNT && !enif_is_identical(head, a_flags[f]))
            f++;
        if (f == FLAG_COUNT) return false;
        *oflags |= flag_oflags[f];
    }
    return enif_is_empty_list(env, list);
}

ERL_NIF_TERM wb_file_open(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary path;
    int mode, oflags = O_CLOEXEC;
    ErlNifUInt64 buffer_bytes, max_line;
    if (!enif_inspect_binary(env, argv[0], &path) || !get_mode(argv[1], &mode) ||
        !get_flags(env, argv[2], &oflags) || !enif_get_uint64(env, argv[3], &buffer_bytes) ||
        buffer_bytes == 0 || !enif_get_uint64(env, argv[4], &max_line))
        return enif_make_badarg(env);
    if (memchr(path.data, 0, path.size)) return error_term(env, enif_make_atom(env, "einval"));

    char *cpath = enif_alloc(path.size + 1);
    if (!cpath) return error_term(env, a_enomem);
    memcpy(cpath, path.data, path.size);
    cpath[path.size] = 0;

    oflags |= mode == MODE_READ ? O_RDONLY : O_WRONLY;
    if (mode == MODE_APPEND) oflags |= O_APPEND;
    int fd;
    do
        fd = open(cpath, oflags, 0666);
    while (fd < 0 && errno == EINTR);
    int err = errno;
    enif_free(cpath);
    if (fd < 0) return posix_error(env, err);
    struct stat st;
    if (mode == MODE_READ && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return posix_error(env, EISDIR);
    }

    wb_file *f = enif_alloc_resource(file_type, sizeof *f);
    if (!f) {
        close(fd);
        return error_term(env, a_enomem);
    }
    memset(f, 0, sizeof *f);
    f->fd = fd;
    f->mode = mode;
    f->nowait_reads = true;
    f->lock = enif_mutex_create("wb_file");
    atomic_init(&f->owner_gone, false);
    wb_lr_init(&f->reader, (size_t)buffer_bytes,
               max_line == 0 ? WB_LR_UNLIMITED : (size_t)max_line);
    if (!f->lock || (mode != MODE_READ && !wb_wbuf_init(&f->writer, (size_t)buffer_bytes))) {
        close(fd); /* now, not when the destructor runs */
        f->fd = -1;
        enif_release_resource(f);
        return error_term(env, a_enomem);
    }
    ErlNifPid self;
    /* the monitor fails only when the caller is already exiting: the handle
     * then dies with it, and the destructor closes the fd */
    if (enif_self(env, &self)) (void)enif_monitor_process(env, f, &self, &f->owner);
    ERL_NIF_TERM term = enif_make_resource(env, f);
    enif_release_resource(f); /* the term holds it; the destructor cleans up */
    return enif_make_tuple2(env, a_ok, term);
}

/* --- the handle ----------------------------------------------------------- */

/* One operation on a locked, open handle of the right direction. `dirty`:
 * the call runs on a dirty I/O scheduler and may make system calls. */
typedef ERL_NIF_TERM (*file_op)(ErlNifEnv *env, wb_file *f, const ERL_NIF_TERM argv[], bool dirty);

/* Runs `op` on the handle argv[0]. A normal call (!dirty) never waits for
 * the mutex: when another call holds it, it answers `busy` (refill or
 * flush), sending the caller to the dirty variant, which waits. */
static ERL_NIF_TERM with_handle(ErlNifEnv *env, const ERL_NIF_TERM argv[], bool reading, bool dirty,
                                ERL_NIF_TERM busy, file_op op) {
    wb_file *f;
    if (!enif_get_resource(env, argv[0], file_type, (void **)&f)) return enif_make_badarg(env);
    if (!dirty) {
        if (enif_mutex_trylock(f->lock) != 0) return busy;
    } else
        enif_mutex_lock(f->lock);
    ERL_NIF_TERM answer;
    if (f->fd < 0)
        answer = error_term(env, a_closed);
    else if (reading != (f->mode == MODE_READ))
        answer = error_term(env, a_ebadf);
    else
        answer = op(env, f, argv, dirty);
    unlock_handle(f);
    return answer;
}

/* fill() asks for the dirty variant: the bytes are not in the page cache,
 * or the fill is too large for a normal scheduler */
#define NEEDS_DIRTY (-1)
/* a normal scheduler fills only buffers up to this size, and reads at most
 * this much: a bounded copy from the page cache (~10 us for 256 KiB) */
#define WB_FILE_NORMAL_FILL_MAX (256 * 1024)

/* Reads once into the buffer (a new, larger one when needed): 0, an errno,
 * or NEEDS_DIRTY. On a normal scheduler (!dirty) it reads only what the
 * page cache holds: preadv2 with RWF_NOWAIT fails with EAGAIN instead of
 * waiting for the disk, so no normal scheduler ever blocks on I/O, and a
 * cached file needs no dirty hop at all. */
static int fill(ErlNifEnv *env, wb_file *f, bool dirty) {
    size_t cap = wb_lr_fill_capacity(&f->reader);
    if (!dirty && (!f->nowait_reads || cap > WB_FILE_NORMAL_FILL_MAX)) return NEEDS_DIRTY;
    if (cap) {
        /* cap is the caller's (buffer_bytes, or a long line): malloc can
         * fail, and then the handle keeps its old buffer unchanged. The
         * owner object is small and of fixed size. */
        uint8_t *data = malloc(cap);
        if (!data) return ENOMEM;
        wb_file_buffer *buffer = enif_alloc_resource(buffer_type, sizeof *buffer);
        if (!buffer) {
            free(data);
            return ENOMEM;
        }
        buffer->data = data;
        wb_lr_rebase(&f->reader, data, cap); /* copies from the old buffer */
        drop_buffer(f);                      /* then lets it go */
        f->buffer = buffer;
    }
    size_t room;
    uint8_t *at = wb_lr_space(&f->reader, &room);
    ssize_t n;
    if (dirty) {
        do
            n = read(f->fd, at, room);
        while (n < 0 && errno == EINTR);
    } else {
        struct iovec iov = {.iov_base = at,
                            .iov_len =
                                room < WB_FILE_NORMAL_FILL_MAX ? room : WB_FILE_NORMAL_FILL_MAX};
        do
            n = preadv2(f->fd, &iov, 1, -1, RWF_NOWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
            /* not cached (EAGAIN), or a file that cannot say (EOPNOTSUPP
             * and the like: never try again); the dirty read reports any
             * real error */
            if (errno != EAGAIN) f->nowait_reads = false;
            return NEEDS_DIRTY;
        }
        /* charge the copy to the caller's time slice: 1% per 16 KiB */
        (void)enif_consume_timeslice(env, 1 + (int)((size_t)n / (16 * 1024)));
    }
    if (n < 0) return errno;
    wb_lr_filled(&f->reader, (size_t)n);
    return 0;
}

/* bytes [off, off + len) of the read buffer as a binary term */
static ERL_NIF_TERM buffered_bytes(ErlNifEnv *env, wb_file *f, size_t off, size_t len) {
    const uint8_t *from = f->reader.data + off;
    if (len > WB_FILE_HEAP_BINARY_MAX) return enif_make_resource_binary(env, f->buffer, from, len);
    ERL_NIF_TERM term;
    unsigned char *to = enif_make_new_binary(env, len, &term);
    if (len) memcpy(to, from, len);
    return term;
}

static bool get_count(ErlNifEnv *env, ERL_NIF_TERM term, size_t *n) {
    ErlNifUInt64 v;
    if (!enif_get_uint64(env, term, &v) || v == 0) return false;
    *n = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
    return true;
}

/* --- read_line, read_lines ----------------------------------------------- */

/* the next line, filling when `dirty`; `refill` otherwise */
static ERL_NIF_TERM read_line(ErlNifEnv *env, wb_file *f, const ERL_NIF_TERM argv[], bool dirty) {
    (void)argv;
    for (;;) {
        size_t off, len;
        switch (wb_lr_next_line(&f->reader, &off, &len)) {
        case WB_LR_LINE:
            return enif_make_tuple2(env, a_ok, buffered_bytes(env, f, off, len));
        case WB_LR_EOF:
            return a_eof;
        case WB_LR_TOO_LONG:
            return error_term(env, a_line_too_long);
        case WB_LR_NEED_FILL: {
            int err = fill(env, f, dirty);
            if (err == NEEDS_DIRTY) return a_refill;
            if (err) return posix_error(env, err);
        }
        }
    }
}

/* up to argv[1] lines, at least one (filling when `dirty`) */
static ERL_NIF_TERM read_lines(ErlNifEnv *env, wb_file *f, const ERL_NIF_TERM argv[], bool dirty) {
    size_t max;
    if (!get_count(env, argv[1], &max)) return enif_make_badarg(env);
    if (max > WB_FILE_LINES_PER_CALL) max = WB_FILE_LINES_PER_CALL;
    ERL_NIF_TERM lines[WB_FILE_LINES_PER_CALL];
    size_t count = 0;
    /* one binary of the whole buffer per call, lines are sub-binaries of it:
     * cheaper than a binary per line when there are many */
    ERL_NIF_TERM whole = 0;
    const uint8_t *whole_of = NULL;
    while (count < max) {
        size_t off, len;
        wb_lr_status st = wb_lr_next_line(&f->reader, &off, &len);
        if (st == WB_LR_LINE) {
            if (whole_of != f->buffer->data) { /* a fill replaced the buffer */
                whole = enif_make_resource_binary(env, f->buffer, f->buffer->data, f->reader.cap);
                whole_of = f->buffer->data;
            }
            lines[count++] = enif_make_sub_binary(env, whole, off, len);
            continue;
        }
        if (count) break; /* keep EOF for the next call: it must answer eof */
        if (st == WB_LR_EOF) return a_eof;
        if (st == WB_LR_TOO_LONG) return error_term(env, a_line_too_long);
        int err = fill(env, f, dirty);
        if (err == NEEDS_DIRTY) return a_refill;
        if (err) return posix_error(env, err);
    }
    return enif_make_tuple2(env, a_ok, enif_make_list_from_array(env, lines, (unsigned)count));
}

/* --- read ----------------------------------------------------------------- */

/* n bytes from the buffer, fewer only at end of file */
static ERL_NIF_TERM take(ErlNifEnv *env, wb_file *f, size_t n) {
    size_t have = wb_lr_buffered(&f->reader);
    if (n > have) n = have;
    size_t off = f->reader.start;
    wb_lr_consume(&f->reader, n);
    return enif_make_tuple2(env, a_ok, buffered_bytes(env, f, off, n));
}

/* A read larger than the buffer: the buffered bytes, then straight into
 * the result. The result starts at what a regular file has left (or one
 * buffer, when the file cannot say) and doubles as the bytes keep coming,
 * so a large count costs memory only when the bytes exist. Out of memory,
 * it answers {error, enomem} and leaves the buffer as it was and, in a file
 * that can seek, the position too. */
static ERL_NIF_TERM read_unbuffered(ErlNifEnv *env, wb_file *f, size_t n) {
    wb_line_reader *r = &f->reader;
    size_t have = wb_lr_buffered(r);
    if (have > n) have = n;
    size_t size = n;
    struct stat st;
    off_t at = lseek(f->fd, 0, SEEK_CUR);
    if (at >= 0 && fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > at)
        size = have + (size_t)(st.st_size - at);
    else if (have + r->buffer_bytes < size)
        size = have + r->buffer_bytes;
    if (size > n) size = n;
    ErlNifBinary bin;
    if (!enif_alloc_binary(size, &bin)) return error_term(env, a_enomem);
    if (have) memcpy(bin.data, r->data + r->start, have);
    size_t done = have;
    while (done < n) {
        if (done == bin.size) { /* more to come: twice the room */
            size_t grown = bin.size > n / 2 ? n : bin.size * 2;
            if (!enif_realloc_binary(&bin, grown)) {
                enif_release_binary(&bin);
                if (at >= 0) (void)lseek(f->fd, at, SEEK_SET);
                return error_term(env, a_enomem);
            }
        }
        ssize_t k = read(f->fd, bin.data + done, bin.size - done);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int err = errno;
            enif_release_binary(&bin);
            if (at >= 0) (void)lseek(f->fd, at, SEEK_SET);
            return posix_error(env, err);
        }
        if (k == 0) break;
        done += (size_t)k;
    }
    wb_lr_consume(r, have);
    if (done == 0) {
        enif_release_binary(&bin);
        r->eof = false;
        return a_eof;
    }
    if (done < bin.size && !enif_realloc_binary(&bin, done)) {
        enif_release_binary(&bin);
        return error_term(env, a_enomem);
    }
    return enif_make_tuple2(env, a_ok, enif_make_binary(env, &bin));
}

static ERL_NIF_TERM read_bytes(ErlNifEnv *env, wb_file *f, const ERL_NIF_TERM argv[], bool dirty) {
    size_t n;
    if (!get_count(env, argv[1], &n)) return enif_make_badarg(env);
    wb_line_reader *r = &f->reader;
    if (wb_lr_buffered(r) >= n) return take(env, f, n);
    if (n >= r->buffer_bytes) return dirty ? read_unbuffered(env, f, n) : a_refill;
    while (wb_lr_buffered(r) < n) { /* through the buffer: read ahead */
        size_t before = wb_lr_buffered(r);
        int err = fill(env, f, dirty);
        if (err == NEEDS_DIRTY) return a_refill;
        if (err) return posix_error(env, err);
        if (wb_lr_buffered(r) == before) break; /* end of file */
    }
    if (wb_lr_buffered(r) == 0) {
        r->eof = false;
        return a_eof;
    }
    return take(env, f, n);
}

/* --- write, flush, sync, close ------------------------------------------- */

static ERL_NIF_TERM write_data(ErlNifEnv *env, wb_file *f, const ERL_NIF_TERM argv[], bool dirty) {
    ErlNifBinary data;
    if (!dirty) {
        /* only a binary that fits the buffer: anything else (flattening a
         * large iolist, a system call) is for the dirty call */
        if (!enif_inspect_binary(env, argv[1], &data) || data.size > WB_FILE_NORMAL_WRITE_MAX ||
            !wb_wbuf_fits(&f->writer, data.size))
            return a_flush;
        wb_wbuf_append(&f->writer, data.data, data.size);
        return a_ok;
    }
    /* the Elixir side flattens iodata: no allocation sized by the data here */
    if (!enif_inspect_binary(env, argv[1], &data)) return enif_make_badarg(env);
    return ok_or_posix(env, wb_wbuf_write(&f->writer, data.data, data.size, fd_write, &f->fd));
}

static ERL_NIF_TERM flush_data(ErlNifEnv *env, wb_file *f, const ERL_NIF_TERM argv[], bool dirty) {
    (void)argv;
    (void)dirty;
    return ok_or_posix(env, wb_wbuf_flush(&f->writer, fd_write, &f->fd));
}

static ERL_NIF_TERM sync_data(ErlNifEnv *env, wb_file *f, const ERL_NIF_TERM argv[], bool dirty) {
    (void)argv;
    (void)dirty;
    int err = wb_wbuf_flush(&f->writer, fd_write, &f->fd);
    if (!err && fsync(f->fd) != 0) err = errno;
    return ok_or_posix(env, err);
}

/* --- the NIFs: one operation each, run by with_handle --------------------- */

#define HANDLE_NIF(name, reading, dirty, busy, op)                                                 \
    ERL_NIF_TERM name(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {                       \
        (void)argc;                                                                                \
        return with_handle(env, argv, reading, dirty, busy, op);                                   \
    }

HANDLE_NIF(wb_file_read_line, true, false, a_refill, read_line)
HANDLE_NIF(wb_file_read_line_dirty, true, true, a_refill, read_line)
HANDLE_NIF(wb_file_read_lines, true, false, a_refill, read_lines)
HANDLE_NIF(wb_file_read_lines_dirty, true, true, a_refill, read_lines)
HANDLE_NIF(wb_file_read, true, false, a_refill, read_bytes)
HANDLE_NIF(wb_file_read_dirty, true, true, a_refill, read_bytes)
HANDLE_NIF(wb_file_write, false, false, a_flush, write_data)
HANDLE_NIF(wb_file_write_dirty, false, true, a_flush, write_data)
HANDLE_NIF(wb_file_flush, false, true, a_flush, flush_data)
HANDLE_NIF(wb_file_sync, false, true, a_flush, sync_data)

ERL_NIF_TERM wb_file_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    wb_file *f;
    if (!enif_get_resource(env, argv[0], file_type, (void **)&f)) return enif_make_badarg(env);
    enif_mutex_lock(f->lock);
    bool open = f->fd >= 0;
    int err = close_locked(f);
    unlock_handle(f);
    if (!open) return error_term(env, a_closed);
    /* the owner needs watching no more (a long-lived owner would otherwise
     * collect a monitor per file until the handles are collected) */
    (void)enif_demonitor_process(env, f, &f->owner);
    return ok_or_posix(env, err);
}

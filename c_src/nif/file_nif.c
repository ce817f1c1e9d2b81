/*
 * WellBehaved.File: a file handle resource (fd, read buffer, write buffer,
 * mutex) and its NIFs.
 *
 * Scheduling: open, read, write, flush, fsync and close are system calls and
 * run in NIFs flagged ERL_NIF_DIRTY_JOB_IO_BOUND. Work inside the buffers
 * (finding lines, handing out bytes, buffering a small write) runs in normal
 * NIFs that never block: they take the mutex with trylock and answer
 * `refill` (or `flush` for writes) when they need a system call or the
 * handle is busy; the Elixir side then calls the dirty variant, which does
 * the system call and answers in the same call. So a dirty hop happens once
 * per buffer fill, never once per line.
 *
 * Lines (from read_lines, and long ones from read_line) and reads are
 * sub-binaries of the read buffer, a refc binary owned by the handle's
 * private environment: handing them out copies no bytes.
 * The core (c_src/file/line_reader.c) never writes bytes it handed out; a
 * full buffer is replaced by a new one, and the old one lives on as long as
 * lines point into it.
 *
 * The fd is closed by close/1, by the destructor when the handle is garbage
 * collected, and when the process that opened the handle exits (a monitor).
 * After any of these, every call answers {error, closed}.
 */
#define _GNU_SOURCE /* strerrorname_np */
#include "file_nif.h"
#include "../file/line_reader.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* lines per normal call of read_lines: bounds its time (~20 ns each) */
#define WB_FILE_LINES_PER_CALL 4096
/* largest write buffered by a normal NIF (a memcpy) */
#define WB_FILE_NORMAL_WRITE_MAX (256 * 1024)
/* read_line copies lines up to this size instead of making a sub-binary:
 * each call that makes a sub-binary puts a new ProcBin of the whole buffer
 * on the caller's heap, which counts the whole buffer against its binary
 * heap and triggers a GC every few calls. Measured, 100-byte lines from a
 * page-cached file, noisy 2-core machine: sub-binaries 340-390 ns/line with
 * a 64 KiB buffer and ~1000 ns with 1 MB or 100 MB buffers; copies 250-380
 * ns at every buffer size. read_lines makes one ProcBin per call, so its
 * lines stay sub-binaries. */
#ifndef WB_FILE_COPY_MAX
#define WB_FILE_COPY_MAX 4096
#endif
/* a refc binary: smaller ones are copied to the heap by enif_make_binary */
#define WB_FILE_MIN_ALLOC 256

enum { MODE_READ = 0, MODE_WRITE = 1, MODE_APPEND = 2 };
enum { F_CREATE = 1, F_EXCLUSIVE = 2, F_TRUNCATE = 4, F_SYNC = 8, F_DSYNC = 16 };

typedef struct {
    ErlNifMutex *lock;
    int fd; /* -1 once closed */
    int mode;
    wb_line_reader reader;
    ErlNifEnv *buf_env; /* owns the read buffer's binary */
    ERL_NIF_TERM buf_term;
    wb_write_buffer writer;
    ErlNifMonitor owner;
} wb_file;

static ErlNifResourceType *file_type;
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

static ssize_t fd_write(void *ctx, const uint8_t *buf, size_t n) {
    return write(*(int *)ctx, buf, n);
}

/* closes the fd (flushing the write buffer first); 0 or an errno */
static int close_locked(wb_file *f) {
    if (f->fd < 0) return 0;
    int err = 0;
    if (f->mode != MODE_READ && f->writer.data) err = wb_wbuf_flush(&f->writer, fd_write, &f->fd);
    if (close(f->fd) != 0 && !err && errno != EINTR) err = errno;
    f->fd = -1;
    wb_wbuf_free(&f->writer);
    if (f->buf_env) enif_clear_env(f->buf_env);
    wb_lr_init(&f->reader, 1, WB_LR_UNLIMITED);
    return err;
}

static void file_dtor(ErlNifEnv *env, void *obj) {
    (void)env;
    wb_file *f = obj;
    close_locked(f);
    if (f->buf_env) enif_free_env(f->buf_env);
    if (f->lock) enif_mutex_destroy(f->lock);
}

/* the process that opened the handle exited */
static void file_down(ErlNifEnv *env, void *obj, ErlNifPid *pid, ErlNifMonitor *mon) {
    (void)env;
    (void)pid;
    (void)mon;
    wb_file *f = obj;
    enif_mutex_lock(f->lock);
    close_locked(f);
    enif_mutex_unlock(f->lock);
}

int wb_file_load(ErlNifEnv *env) {
    ErlNifResourceTypeInit init = {.dtor = file_dtor, .stop = NULL, .down = file_down};
    file_type = enif_open_resource_type_x(env, "wb_file", &init, ERL_NIF_RT_CREATE, NULL);
    if (!file_type) return 1;
    a_ok = enif_make_atom(env, "ok");
    a_error = enif_make_atom(env, "error");
    a_eof = enif_make_atom(env, "eof");
    a_refill = enif_make_atom(env, "refill");
    a_flush = enif_make_atom(env, "flush");
    a_closed = enif_make_atom(env, "closed");
    a_ebadf = enif_make_atom(env, "ebadf");
    a_enomem = enif_make_atom(env, "enomem");
    a_line_too_long = enif_make_atom(env, "line_too_long");
    return 0;
}

/* --- open ----------------------------------------------------------------- */

ERL_NIF_TERM wb_file_open(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary path;
    int mode, flags;
    ErlNifUInt64 buffer_bytes, max_line;
    if (!enif_inspect_binary(env, argv[0], &path) || !enif_get_int(env, argv[1], &mode) ||
        mode < MODE_READ || mode > MODE_APPEND || !enif_get_int(env, argv[2], &flags) ||
        !enif_get_uint64(env, argv[3], &buffer_bytes) || buffer_bytes == 0 ||
        !enif_get_uint64(env, argv[4], &max_line))
        return enif_make_badarg(env);
    if (memchr(path.data, 0, path.size)) return error_term(env, enif_make_atom(env, "einval"));

    char *cpath = enif_alloc(path.size + 1);
    if (!cpath) return error_term(env, a_enomem);
    memcpy(cpath, path.data, path.size);
    cpath[path.size] = 0;

    int oflags = O_CLOEXEC | (mode == MODE_READ ? O_RDONLY : O_WRONLY);
    if (mode == MODE_APPEND) oflags |= O_APPEND;
    if (flags & F_CREATE) oflags |= O_CREAT;
    if (flags & F_EXCLUSIVE) oflags |= O_EXCL;
    if (flags & F_TRUNCATE) oflags |= O_TRUNC;
    if (flags & F_SYNC) oflags |= O_SYNC;
    if (flags & F_DSYNC) oflags |= O_DSYNC;
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
    f->lock = enif_mutex_create("wb_file");
    f->buf_env = enif_alloc_env();
    wb_lr_init(&f->reader, (size_t)buffer_bytes,
               max_line == 0 ? WB_LR_UNLIMITED : (size_t)max_line - 1);
    bool ok = f->lock && f->buf_env;
    if (ok && mode != MODE_READ) ok = wb_wbuf_init(&f->writer, (size_t)buffer_bytes);
    ErlNifPid self;
    if (ok && enif_self(env, &self)) enif_monitor_process(env, f, &self, &f->owner);
    ERL_NIF_TERM term = enif_make_resource(env, f);
    enif_release_resource(f); /* the term holds it; the destructor cleans up */
    if (!ok) return error_term(env, a_enomem);
    return enif_make_tuple2(env, a_ok, term);
}

/* --- the handle ----------------------------------------------------------- */

typedef enum { GOT_NONE, GOT_LOCK, GOT_BUSY } lock_result;

/* the handle of argv[0], locked (or not, when `try` and busy); NULL and an
 * answer in *answer when it is unusable */
static wb_file *get_handle(ErlNifEnv *env, ERL_NIF_TERM term, bool reading, bool try,
                           lock_result *got, ERL_NIF_TERM *answer) {
    wb_file *f;
    *got = GOT_NONE;
    if (!enif_get_resource(env, term, file_type, (void **)&f)) {
        *answer = enif_make_badarg(env);
        return NULL;
    }
    if (try) {
        if (enif_mutex_trylock(f->lock) != 0) {
            *got = GOT_BUSY;
            return NULL;
        }
    } else
        enif_mutex_lock(f->lock);
    *got = GOT_LOCK;
    if (f->fd < 0) {
        *answer = error_term(env, a_closed);
    } else if (reading != (f->mode == MODE_READ)) {
        *answer = error_term(env, a_ebadf);
    } else
        return f;
    enif_mutex_unlock(f->lock);
    *got = GOT_NONE;
    return NULL;
}

/* reads once into the buffer (a new, larger one when needed); 0 or errno */
static int fill(wb_file *f) {
    size_t cap = wb_lr_fill_capacity(&f->reader);
    if (cap) {
        ErlNifBinary bin;
        if (!enif_alloc_binary(cap < WB_FILE_MIN_ALLOC ? WB_FILE_MIN_ALLOC : cap, &bin))
            return ENOMEM;
        wb_lr_rebase(&f->reader, bin.data, cap); /* copies from the old buffer */
        enif_clear_env(f->buf_env);              /* then lets it go */
        f->buf_term = enif_make_binary(f->buf_env, &bin);
    }
    size_t room;
    uint8_t *at = wb_lr_space(&f->reader, &room);
    ssize_t n;
    do
        n = read(f->fd, at, room);
    while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
    wb_lr_filled(&f->reader, (size_t)n);
    return 0;
}

/* the read buffer as a term of env, for sub-binaries */
static ERL_NIF_TERM buffer_in(ErlNifEnv *env, wb_file *f) {
    return enif_make_copy(env, f->buf_term);
}

static ERL_NIF_TERM sub(ErlNifEnv *env, ERL_NIF_TERM buf, size_t off, size_t len) {
    return enif_make_sub_binary(env, buf, off, len);
}

/* --- read_line ------------------------------------------------------------ */

/* the next line, filling when `dirty`; `refill` otherwise */
static ERL_NIF_TERM read_line(ErlNifEnv *env, wb_file *f, bool dirty) {
    for (;;) {
        size_t off, len;
        switch (wb_lr_next_line(&f->reader, &off, &len)) {
        case WB_LR_LINE:
            if (len <= WB_FILE_COPY_MAX) {
                ERL_NIF_TERM line;
                unsigned char *to = enif_make_new_binary(env, len, &line);
                if (!to) return error_term(env, a_enomem);
                memcpy(to, f->reader.data + off, len);
                return enif_make_tuple2(env, a_ok, line);
            }
            return enif_make_tuple2(env, a_ok, sub(env, buffer_in(env, f), off, len));
        case WB_LR_EOF:
            return a_eof;
        case WB_LR_TOO_LONG:
            return error_term(env, a_line_too_long);
        case WB_LR_NEED_FILL:
            if (!dirty) return a_refill;
            int err = fill(f);
            if (err) return posix_error(env, err);
        }
    }
}

ERL_NIF_TERM wb_file_read_line(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], true, true, &got, &answer);
    if (got == GOT_BUSY) return a_refill;
    if (!f) return answer;
    answer = read_line(env, f, false);
    enif_mutex_unlock(f->lock);
    return answer;
}

ERL_NIF_TERM wb_file_read_line_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], true, false, &got, &answer);
    if (!f) return answer;
    answer = read_line(env, f, true);
    enif_mutex_unlock(f->lock);
    return answer;
}

/* --- read_lines ----------------------------------------------------------- */

/* up to max lines, at least one (filling when `dirty`) */
static ERL_NIF_TERM read_lines(ErlNifEnv *env, wb_file *f, size_t max, bool dirty) {
    if (max > WB_FILE_LINES_PER_CALL) max = WB_FILE_LINES_PER_CALL;
    ERL_NIF_TERM lines[WB_FILE_LINES_PER_CALL];
    size_t count = 0;
    ERL_NIF_TERM buf = 0;
    uint8_t *buf_data = NULL;
    while (count < max) {
        size_t off, len;
        wb_lr_status st = wb_lr_next_line(&f->reader, &off, &len);
        if (st == WB_LR_LINE) {
            if (buf_data != f->reader.data) { /* a new buffer since the last line */
                buf = buffer_in(env, f);
                buf_data = f->reader.data;
            }
            lines[count++] = sub(env, buf, off, len);
            continue;
        }
        if (count) {
            /* keep EOF for the next call: it must answer eof, not a line */
            break;
        }
        if (st == WB_LR_EOF) return a_eof;
        if (st == WB_LR_TOO_LONG) return error_term(env, a_line_too_long);
        if (!dirty) return a_refill;
        int err = fill(f);
        if (err) return posix_error(env, err);
    }
    return enif_make_tuple2(env, a_ok, enif_make_list_from_array(env, lines, (unsigned)count));
}

static bool get_count(ErlNifEnv *env, ERL_NIF_TERM term, size_t *n) {
    ErlNifUInt64 v;
    if (!enif_get_uint64(env, term, &v) || v == 0) return false;
    *n = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
    return true;
}

ERL_NIF_TERM wb_file_read_lines(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    size_t max;
    if (!get_count(env, argv[1], &max)) return enif_make_badarg(env);
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], true, true, &got, &answer);
    if (got == GOT_BUSY) return a_refill;
    if (!f) return answer;
    answer = read_lines(env, f, max, false);
    enif_mutex_unlock(f->lock);
    return answer;
}

ERL_NIF_TERM wb_file_read_lines_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    size_t max;
    if (!get_count(env, argv[1], &max)) return enif_make_badarg(env);
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], true, false, &got, &answer);
    if (!f) return answer;
    answer = read_lines(env, f, max, true);
    enif_mutex_unlock(f->lock);
    return answer;
}

/* --- read ----------------------------------------------------------------- */

/* n bytes from the buffer, fewer only at end of file */
static ERL_NIF_TERM take(ErlNifEnv *env, wb_file *f, size_t n) {
    size_t have = wb_lr_buffered(&f->reader);
    if (n > have) n = have;
    size_t off = f->reader.start;
    wb_lr_consume(&f->reader, n);
    return enif_make_tuple2(env, a_ok, sub(env, buffer_in(env, f), off, n));
}

ERL_NIF_TERM wb_file_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    size_t n;
    if (!get_count(env, argv[1], &n)) return enif_make_badarg(env);
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], true, true, &got, &answer);
    if (got == GOT_BUSY) return a_refill;
    if (!f) return answer;
    size_t have = wb_lr_buffered(&f->reader);
    if (have >= n || (have > 0 && f->reader.eof))
        answer = take(env, f, n);
    else
        answer = a_refill;
    enif_mutex_unlock(f->lock);
    return answer;
}

static ERL_NIF_TERM read_dirty(ErlNifEnv *env, wb_file *f, size_t n) {
    wb_line_reader *r = &f->reader;
    if (n < r->buffer_bytes) { /* through the buffer: read ahead */
        while (wb_lr_buffered(r) < n) {
            size_t before = wb_lr_buffered(r);
            int err = fill(f);
            if (err) return posix_error(env, err);
            if (wb_lr_buffered(r) == before) break; /* end of file */
        }
        if (wb_lr_buffered(r) == 0) {
            r->eof = false;
            return a_eof;
        }
        return take(env, f, n);
    }
    /* a large read: the buffered bytes, then straight into the result */
    ErlNifBinary bin;
    if (!enif_alloc_binary(n, &bin)) return error_term(env, a_enomem);
    size_t have = wb_lr_buffered(r);
    if (have > n) have = n;
    memcpy(bin.data, r->data + r->start, have);
    wb_lr_consume(r, have);
    size_t done = have;
    while (done < n) {
        ssize_t k = read(f->fd, bin.data + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            enif_release_binary(&bin);
            return posix_error(env, errno);
        }
        if (k == 0) break;
        done += (size_t)k;
    }
    if (done == 0) {
        enif_release_binary(&bin);
        return a_eof;
    }
    if (done < n && !enif_realloc_binary(&bin, done)) {
        enif_release_binary(&bin);
        return error_term(env, a_enomem);
    }
    return enif_make_tuple2(env, a_ok, enif_make_binary(env, &bin));
}

ERL_NIF_TERM wb_file_read_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    size_t n;
    if (!get_count(env, argv[1], &n)) return enif_make_badarg(env);
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], true, false, &got, &answer);
    if (!f) return answer;
    answer = read_dirty(env, f, n);
    enif_mutex_unlock(f->lock);
    return answer;
}

/* --- write, flush, sync, close ------------------------------------------- */

ERL_NIF_TERM wb_file_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary data;
    /* only binaries here: flattening a large iolist is for the dirty call */
    if (!enif_inspect_binary(env, argv[1], &data)) return a_flush;
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], false, true, &got, &answer);
    if (got == GOT_BUSY) return a_flush;
    if (!f) return answer;
    if (data.size <= WB_FILE_NORMAL_WRITE_MAX && wb_wbuf_fits(&f->writer, data.size)) {
        wb_wbuf_append(&f->writer, data.data, data.size);
        answer = a_ok;
    } else
        answer = a_flush;
    enif_mutex_unlock(f->lock);
    return answer;
}

ERL_NIF_TERM wb_file_write_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary data;
    if (!enif_inspect_iolist_as_binary(env, argv[1], &data)) return enif_make_badarg(env);
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], false, false, &got, &answer);
    if (!f) return answer;
    int err = wb_wbuf_write(&f->writer, data.data, data.size, fd_write, &f->fd);
    enif_mutex_unlock(f->lock);
    return err ? posix_error(env, err) : a_ok;
}

ERL_NIF_TERM wb_file_flush(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], false, false, &got, &answer);
    if (!f) return answer;
    int err = wb_wbuf_flush(&f->writer, fd_write, &f->fd);
    enif_mutex_unlock(f->lock);
    return err ? posix_error(env, err) : a_ok;
}

ERL_NIF_TERM wb_file_sync(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    lock_result got;
    ERL_NIF_TERM answer;
    wb_file *f = get_handle(env, argv[0], false, false, &got, &answer);
    if (!f) return answer;
    int err = wb_wbuf_flush(&f->writer, fd_write, &f->fd);
    if (!err && fsync(f->fd) != 0) err = errno;
    enif_mutex_unlock(f->lock);
    return err ? posix_error(env, err) : a_ok;
}

ERL_NIF_TERM wb_file_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    wb_file *f;
    if (!enif_get_resource(env, argv[0], file_type, (void **)&f)) return enif_make_badarg(env);
    enif_mutex_lock(f->lock);
    bool open = f->fd >= 0;
    int err = close_locked(f);
    enif_mutex_unlock(f->lock);
    if (!open) return error_term(env, a_closed);
    return err ? posix_error(env, err) : a_ok;
}

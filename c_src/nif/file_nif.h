/* WellBehaved.File NIFs (file_nif.c): see lib/well_behaved/file.ex. */
#ifndef WB_FILE_NIF_H
#define WB_FILE_NIF_H

#include <erl_nif.h>

/* opens the handle resource type; 0 on success */
int wb_file_load(ErlNifEnv *env);

/* dirty IO: file_open(Path, Mode, Flags, BufferBytes, MaxLine) */
ERL_NIF_TERM wb_file_open(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* normal: the buffered answer, or `refill` when a system call is needed */
ERL_NIF_TERM wb_file_read_line(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_read_lines(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_read(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_write(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* dirty IO: the same, reading or writing as needed */
ERL_NIF_TERM wb_file_read_line_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_read_lines_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_read_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_write_dirty(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_flush(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_sync(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_file_close(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#define WB_FILE_NIFS                                                                               \
    {"file_open", 5, wb_file_open, ERL_NIF_DIRTY_JOB_IO_BOUND},                                    \
        {"file_read_line", 1, wb_file_read_line, 0},                                               \
        {"file_read_lines", 2, wb_file_read_lines, 0}, {"file_read", 2, wb_file_read, 0},          \
        {"file_write", 2, wb_file_write, 0},                                                       \
        {"file_read_line_dirty", 1, wb_file_read_line_dirty, ERL_NIF_DIRTY_JOB_IO_BOUND},          \
        {"file_read_lines_dirty", 2, wb_file_read_lines_dirty, ERL_NIF_DIRTY_JOB_IO_BOUND},        \
        {"file_read_dirty", 2, wb_file_read_dirty, ERL_NIF_DIRTY_JOB_IO_BOUND},                    \
        {"file_write_dirty", 2, wb_file_write_dirty, ERL_NIF_DIRTY_JOB_IO_BOUND},                  \
        {"file_flush", 1, wb_file_flush, ERL_NIF_DIRTY_JOB_IO_BOUND},                              \
        {"file_sync", 1, wb_file_sync, ERL_NIF_DIRTY_JOB_IO_BOUND}, {                              \
        "file_close", 1, wb_file_close, ERL_NIF_DIRTY_JOB_IO_BOUND                                 \
    }

#endif

/* The lab's NIF library, Elixir.WellBehaved.Lab.Native: Spin's jobs and the
 * echo job run by its own copy of the runtime, the echo NIFs, and that
 * runtime's stats and settings. Built with WB_EXTERNAL_SERVER, it is the
 * server program of the same job types (priv/wb_lab_server), as a user's
 * library builds its own. */
#include "jobs.h"

static wb_job_type *const types[] = {&wb_spin_job, &wb_spin_until_job, &wb_echo_job, NULL};

WB_JOB_NIF(spin, wb_spin_job)
WB_JOB_NIF(spin_until, wb_spin_until_job)
WB_JOB_NIF(echo_job, wb_echo_job)

#ifdef WB_EXTERNAL_SERVER
/* the server program: its jobs only, no echo NIFs (not linked there) and
 * no hooks */
static ErlNifFunc nif_funcs[] = {
    {"echo_job", 4, echo_job, 0},
    {"spin", 4, spin, 0},
    {"spin_until", 4, spin_until, 0},
    WB_RUNTIME_NIFS,
};
#define LAB_LOAD   NULL
#define LAB_UNLOAD NULL
#else
static ErlNifFunc nif_funcs[] = {
    {"echo_nif", 1, wb_echo, 0},
    {"echo_dirty_cpu", 1, wb_echo, ERL_NIF_DIRTY_JOB_CPU_BOUND},
    {"echo_dirty_io", 1, wb_echo, ERL_NIF_DIRTY_JOB_IO_BOUND},
    {"echo_yield", 1, wb_echo_yield, 0},
    {"echo_thread_new", 2, wb_echo_thread_new, 0},
    {"echo_job", 4, echo_job, 0},
    {"spin", 4, spin, 0},
    {"spin_until", 4, spin_until, 0},
    WB_RUNTIME_NIFS,
};

/* the echo threads' lock, before the runtime; joined after it */
static int lab_load(ErlNifEnv *env, ERL_NIF_TERM load_info) {
    (void)load_info;
    return wb_echo_load(env);
}

static void lab_unload(ErlNifEnv *env) {
    (void)env;
    wb_echo_unload();
}
#define LAB_LOAD   lab_load
#define LAB_UNLOAD lab_unload
#endif

WB_NIF_INIT_WITH(Elixir.WellBehaved.Lab.Native, nif_funcs, types, LAB_LOAD, LAB_UNLOAD)

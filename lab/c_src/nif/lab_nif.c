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
int main(int argc, char **argv) {
    return wb_external_main(argc, argv, types);
}
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

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
    (void)priv;
    if (wb_echo_load(env)) return 1;
    if (wb_runtime_load(env, types, info)) {
        wb_echo_unload();
        return 1;
    }
    return 0;
}

static void unload(ErlNifEnv *env, void *priv) {
    (void)env;
    (void)priv;
    wb_runtime_unload();
    wb_echo_unload();
}

ERL_NIF_INIT(Elixir.WellBehaved.Lab.Native, nif_funcs, load, NULL, NULL, unload)
#endif

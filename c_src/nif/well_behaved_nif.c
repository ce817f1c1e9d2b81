/* The NIF library Elixir.WellBehaved.Native: the Levenshtein and search jobs
 * run by the scheduling runtime, the runtime's own stats and settings, and the File
 * NIFs. */
#include "file_nif.h"
#include "jobs.h"

static ERL_NIF_TERM levenshtein(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    return wb_run(env, &wb_levenshtein_job, argc, argv);
}

static ERL_NIF_TERM search(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    return wb_run(env, &wb_search_job, argc, argv);
}

static ERL_NIF_TERM search_index(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    return wb_run(env, &wb_search_index_job, argc, argv);
}

static ErlNifFunc nif_funcs[] = {
    {"levenshtein", 7, levenshtein, 0},
    {"search", 9, search, 0},
    {"search_index", 5, search_index, 0},
    {"runtime_stats", 0, wb_runtime_stats, 0},
    {"runtime_configure", 4, wb_runtime_configure, 0},
    WB_FILE_NIFS,
};

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
    (void)priv;
    (void)info;
    static wb_job_type *const types[] = {&wb_levenshtein_job, &wb_search_job, &wb_search_index_job,
                                         NULL};
    wb_levenshtein_load(env);
    if (wb_search_load(env)) return 1;
    if (wb_file_load(env)) return 1;
    if (wb_runtime_load(env, types)) {
        wb_file_unload();
        return 1;
    }
    return 0;
}

static void unload(ErlNifEnv *env, void *priv) {
    (void)env;
    (void)priv;
    wb_runtime_unload();
    wb_file_unload();
}

ERL_NIF_INIT(Elixir.WellBehaved.Native, nif_funcs, load, NULL, NULL, unload)

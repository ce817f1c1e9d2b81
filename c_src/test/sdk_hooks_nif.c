/* A NIF library declared with WB_NIF_INIT_WITH, built as a user's is
 * (mk/sdk.mk) and loaded by test/sdk_init_hooks_test.exs as
 * Elixir.WellBehaved.Test.SDKHooks.
 *
 * load_info is {Path, What}: the hooks append a line to the file at Path
 * (a string) for what they do, and What picks the load: `ok`; `refuse_hook`,
 * the load hook refuses with 7; `refuse_runtime`, the hook loads and the
 * runtime is given a job type without step, which it refuses. Its job
 * "count" counts to its argument, a unit at a time; release_slowly/0 hands
 * the runtime's release thread a release that logs `released` after a
 * pause, which the runtime's unload waits for. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <wb_runtime.h>

static char log_path[1024];
static bool break_types;

static void log_line(const char *line) {
    FILE *f = fopen(log_path, "a");
    if (!f) return;
    fputs(line, f);
    fputc('\n', f);
    fclose(f);
}

typedef struct {
    uint64_t n;
} count_args;

typedef struct {
    uint64_t n, done;
} count_state;

static bool count_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    ErlNifUInt64 n;
    if (!enif_get_uint64(env, argv[0], &n)) return false;
    ((count_args *)args)->n = n;
    return true;
}

static uint64_t count_predict(const void *args) {
    return ((const count_args *)args)->n;
}

static bool count_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    ((count_state *)state)->n = ((const count_args *)args)->n;
    return true;
}

static bool count_step(void *state, uint64_t budget, uint64_t *used) {
    count_state *s = state;
    uint64_t left = s->n - s->done;
    uint64_t take = budget < left ? budget : left;
    s->done += take;
    *used += take;
    return s->done == s->n;
}

static ERL_NIF_TERM count_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, ((const count_state *)state)->done);
}

static wb_job_type count_job = {
    .name = "count",
    .argc = 1,
    .args_size = sizeof(count_args),
    .state_size = sizeof(count_state),
    .decode = count_decode,
    .predict = count_predict,
    .init = count_init,
    .step = count_step,
    .result = count_result,
    .ps_per_unit = 1000,
};

/* count_job without step: the runtime refuses it */
static wb_job_type stepless_job = {
    .name = "stepless",
    .argc = 1,
    .args_size = sizeof(count_args),
    .state_size = sizeof(count_state),
    .decode = count_decode,
    .predict = count_predict,
    .init = count_init,
    .result = count_result,
};

static wb_job_type *const types[] = {&count_job, NULL};
static wb_job_type *const broken_types[] = {&count_job, &stepless_job, NULL};

WB_JOB_NIF(count, count_job)

static void release_after_a_pause(void *arg) {
    (void)arg;
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    log_line("released");
}

static ERL_NIF_TERM release_slowly(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    wb_release_later(release_after_a_pause, NULL);
    return enif_make_atom(env, "ok");
}

static ErlNifFunc nif_funcs[] = {
    {"count", 4, count, 0},
    {"release_slowly", 0, release_slowly, 0},
    WB_RUNTIME_NIFS,
};

static int hooks_load(ErlNifEnv *env, ERL_NIF_TERM load_info) {
    int arity;
    const ERL_NIF_TERM *info;
    ErlNifBinary path;
    char what[32];
    if (!enif_get_tuple(env, load_info, &arity, &info) || arity != 2 ||
        !enif_inspect_binary(env, info[0], &path) || path.size >= sizeof log_path ||
        !enif_get_atom(env, info[1], what, sizeof what, ERL_NIF_LATIN1))
        return 5;
    memcpy(log_path, path.data, path.size);
    log_path[path.size] = '\0';
    break_types = strcmp(what, "refuse_runtime") == 0;
    if (strcmp(what, "refuse_hook") == 0) {
        log_line("load_hook refused");
        return 7;
    }
    log_line("load_hook");
    return 0;
}

static void hooks_unload(ErlNifEnv *env) {
    (void)env;
    log_line("unload_hook");
}

WB_NIF_INIT_WITH(Elixir.WellBehaved.Test.SDKHooks, nif_funcs, break_types ? broken_types : types,
                 hooks_load, hooks_unload)

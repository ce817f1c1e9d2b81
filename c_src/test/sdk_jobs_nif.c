/* Test NIF libraries built on the SDK as a user's would be (see mk/sdk.mk).
 *
 * Elixir.WellBehaved.Test.SDKJobs: the job "fold" folds the numbers
 * 0 .. N - 1 into a 64-bit multiply-add hash, one unit per number (a
 * dependency chain, so no compiler turns it into a formula), with every
 * optional callback NULL: no setup, no bind (the state keeps no pointer
 * into the arguments), no memory, no destroy. The Elixir tests check it
 * against the same fold in Elixir, in every mode.
 *
 * The job "phases" has uneven units: `cheap` units of one multiply-add,
 * then `dear` units of 128 chained ones (100x the cost), one unit each.
 * With `spent` true its step asks wb_slice_spent() after each costly unit
 * and returns early; its result is {Hash, MostDearUnitsInOneStep}, so a
 * test sees how far one step ran past its slice without timing anything.
 *
 * The job "dear" costs about a microsecond a unit (1024 chained
 * multiply-adds) while its type says 1 ns (the default seed): :auto
 * predicts 1000x too short until the runtime learns better.
 *
 * The job "lumpy" is 4096 units seeded at 1 ps each, so :auto runs it
 * :normal and times every such run; with StallUs > 0 its first step first
 * waits that long on the wall clock, as a run the OS preempted would.
 *
 * The job "rle" (rle_job.h) run-length encodes a binary into a wb_output (wb_output.h), whose
 * output it hands over without a copy: as iodata, or flattened into one binary in its steps.
 *
 * The job "sham" predicts one unit at the default seed (1 ns) but takes N units of at least a
 * microsecond each on the wall clock: a job whose first calls trust a cost 1000x too low. Each
 * of its states, when destroyed, records the units it did and the most one step was given;
 * sham_runs() answers those records, oldest first, and forgets them (in the VM only).
 *
 * Misbehaving jobs, which must not take the VM down in any mode:
 * "liar" predicts one unit and folds N as "fold" does (N = 0: it never
 * finishes, each step folding its budget and asking for more); "raising" finishes at once and its
 * result raises badarg; "fickle" has a bind, and its decode refuses every K-th call in this VM
 * (counted across jobs: a rescheduled call or the pool thread's decode is refused, the first call
 * is not, with K = 2 and one job at a time), giving the reason `fickle` (wb_reject); "huge" says
 * it owns 2^64 - 1 bytes.
 *
 * The job "owned" makes a binary of N bytes (byte i is i mod 251) that the state allocates at
 * init and take_result hands over as the result term, without a copy; N larger than the system
 * can give answers {error, enomem}. Its destroy frees the binary only when it was not taken.
 *
 * Built with -DWB_TEST_REFUSED it is Elixir.WellBehaved.Test.SDKRefused,
 * whose job type has no step callback: the runtime must refuse the load.
 *
 * Built with -DWB_TEST_AWAITING (and the runtime with
 * -DWB_TEST_THREADED_AWAIT_NS) it is Elixir.WellBehaved.Test.SDKAwaiting,
 * whose :threaded calls all wait for their job's answer in the call that
 * queues it, as short jobs do when a pool thread is free; with
 * -DWB_TEST_IMPATIENT instead, Elixir.WellBehaved.Test.SDKImpatient, whose
 * calls all start waiting and give up at once (a 1 ns wait), so their jobs
 * answer by message as a short job does when the wait runs out. Built with
 * -DWB_TEST_COUNTED it is Elixir.WellBehaved.Test.SDKCounted, the same
 * library for one test file alone, which counts its runtime's calls.
 *
 * Built with -DWB_EXTERNAL_SERVER it is the server program of the same job
 * types (schedule: :external), with two more, which exist only there (in
 * the VM they would take the VM down or hold a scheduler for ever):
 * "crash", which folds N as "fold" does and kills its server with SIGSEGV
 * when N is 13, as a native bug would; and "stuck", whose step folds N
 * units and then, with N = 0 at once, spins without end and never returns,
 * as native code caught in a loop would (no cancel reaches it). */
#define _POSIX_C_SOURCE 199309L
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <wb_runtime.h>

#include "rle_job.h"

typedef struct {
    uint64_t n;
} fold_args;

typedef struct {
    uint64_t next, n, sum;
} fold_state;

static bool fold_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    ErlNifUInt64 n;
    if (!enif_get_uint64(env, argv[0], &n)) return false;
    ((fold_args *)args)->n = n;
    return true;
}

static uint64_t fold_predict(const void *args) {
    return ((const fold_args *)args)->n;
}

static bool fold_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    fold_state *s = state;
    s->n = ((const fold_args *)args)->n;
    return true;
}

static bool fold_step(void *state, uint64_t budget, uint64_t *used) {
    fold_state *s = state;
    uint64_t end = s->n - s->next > budget ? s->next + budget : s->n;
    *used += end - s->next;
    for (; s->next < end; s->next++)
        s->sum = s->sum * UINT64_C(6364136223846793005) + s->next;
    return s->next == s->n;
}

static ERL_NIF_TERM fold_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, ((const fold_state *)state)->sum);
}

static wb_job_type fold_job = {
    .name = "fold",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = fold_init,
#ifndef WB_TEST_REFUSED
    .step = fold_step,
#endif
    .result = fold_result,
};

WB_JOB_NIF(fold, fold_job)

#define MIX(h, x) ((h)*UINT64_C(6364136223846793005) + (x))

typedef struct {
    uint64_t cheap, dear;
    bool spent;
} phases_args;

typedef struct {
    phases_args n;
    uint64_t next, hash, most_dear;
} phases_state;

static bool phases_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    phases_args *a = args;
    ErlNifUInt64 cheap, dear;
    char spent[6];
    if (!enif_get_uint64(env, argv[0], &cheap) || !enif_get_uint64(env, argv[1], &dear) ||
        cheap > UINT64_MAX / 2 || dear > UINT64_MAX / 2 ||
        enif_get_atom(env, argv[2], spent, sizeof spent, ERL_NIF_LATIN1) <= 0)
        return false;
    a->cheap = cheap;
    a->dear = dear;
    a->spent = strcmp(spent, "true") == 0;
    return true;
}

static uint64_t phases_predict(const void *args) {
    const phases_args *a = args;
    return a->cheap + a->dear;
}

static bool phases_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    ((phases_state *)state)->n = *(const phases_args *)args;
    return true;
}

static bool phases_step(void *state, uint64_t budget, uint64_t *used) {
    phases_state *s = state;
    uint64_t total = s->n.cheap + s->n.dear, done = 0, dear = 0;
    while (s->next < total && done < budget) {
        if (s->next < s->n.cheap) {
            s->hash = MIX(s->hash, s->next);
        } else {
            for (int i = 0; i < 128; i++)
                s->hash = MIX(s->hash, s->next + (uint64_t)i);
            dear++;
        }
        s->next++;
        done++;
        if (dear > 0 && s->n.spent && wb_slice_spent()) break;
    }
    if (dear > s->most_dear) s->most_dear = dear;
    *used += done;
    return s->next == total;
}

static ERL_NIF_TERM phases_result(ErlNifEnv *env, const void *state) {
    const phases_state *s = state;
    return enif_make_tuple2(env, enif_make_uint64(env, s->hash),
                            enif_make_uint64(env, s->most_dear));
}

static wb_job_type phases_job = {
    .name = "phases",
    .argc = 3,
    .args_size = sizeof(phases_args),
    .state_size = sizeof(phases_state),
    .decode = phases_decode,
    .predict = phases_predict,
    .init = phases_init,
    .step = phases_step,
    .result = phases_result,
};

WB_JOB_NIF(phases, phases_job)

static bool dear_step(void *state, uint64_t budget, uint64_t *used) {
    fold_state *s = state;
    uint64_t end = s->n - s->next > budget ? s->next + budget : s->n;
    *used += end - s->next;
    for (; s->next < end; s->next++)
        for (int i = 0; i < 1024; i++)
            s->sum = MIX(s->sum, s->next + (uint64_t)i);
    return s->next == s->n;
}

static wb_job_type dear_job = {
    .name = "dear",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = fold_init,
    .step = dear_step,
    .result = fold_result,
};

WB_JOB_NIF(dear, dear_job)

#define LUMPY_UNITS 4096

static uint64_t lumpy_predict(const void *args) {
    (void)args;
    return LUMPY_UNITS;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool lumpy_step(void *state, uint64_t budget, uint64_t *used) {
    fold_state *s = state;
    if (s->n > 0) {
        int64_t until = now_ns() + (int64_t)s->n * 1000;
        while (now_ns() < until) {
        }
        s->n = 0;
    }
    uint64_t end = LUMPY_UNITS - s->next > budget ? s->next + budget : LUMPY_UNITS;
    *used += end - s->next;
    for (; s->next < end; s->next++)
        s->sum = MIX(s->sum, s->next);
    return s->next == LUMPY_UNITS;
}

static wb_job_type lumpy_job = {
    .name = "lumpy",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .ps_per_unit = 1,
    .decode = fold_decode,
    .predict = lumpy_predict,
    .init = fold_init, /* n: the stall in us, 0 once it is done */
    .step = lumpy_step,
    .result = fold_result,
};

WB_JOB_NIF(lumpy, lumpy_job)

static uint64_t liar_predict(const void *args) {
    (void)args;
    return 1;
}

static bool liar_step(void *state, uint64_t budget, uint64_t *used) {
    fold_state *s = state;
    if (s->n > 0) return fold_step(state, budget, used);
    uint64_t n = budget < 4096 ? budget : 4096;
    for (uint64_t i = 0; i < n; i++)
        s->sum = MIX(s->sum, s->next++);
    *used += n;
    return false;
}

static wb_job_type liar_job = {
    .name = "liar",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = liar_predict,
    .init = fold_init,
    .step = liar_step,
    .result = fold_result,
};

WB_JOB_NIF(liar, liar_job)

typedef struct {
    uint64_t next, n, most;
} sham_state;

#define SHAM_RECORDS 64
static _Atomic unsigned sham_count;
static uint64_t sham_records[SHAM_RECORDS][2];

static bool sham_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    ((sham_state *)state)->n = ((const fold_args *)args)->n;
    return true;
}

static bool sham_step(void *state, uint64_t budget, uint64_t *used) {
    sham_state *s = state;
    if (budget > s->most) s->most = budget;
    uint64_t end = s->n - s->next > budget ? s->next + budget : s->n;
    *used += end - s->next;
    for (; s->next < end; s->next++) {
        int64_t until = now_ns() + 1000;
        while (now_ns() < until) {
        }
    }
    return s->next == s->n;
}

static ERL_NIF_TERM sham_result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, ((const sham_state *)state)->next);
}

static void sham_destroy(void *state) {
    const sham_state *s = state;
    unsigned i = atomic_fetch_add(&sham_count, 1);
    if (i >= SHAM_RECORDS) return;
    sham_records[i][0] = s->next;
    sham_records[i][1] = s->most;
}

static wb_job_type sham_job = {
    .name = "sham",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(sham_state),
    .decode = fold_decode,
    .predict = liar_predict,
    .init = sham_init,
    .step = sham_step,
    .result = sham_result,
    .destroy = sham_destroy,
};

WB_JOB_NIF(sham, sham_job)

WB_JOB_NIF(rle, rle_job)

#ifndef WB_EXTERNAL_SERVER
/* [{Units, MostUnitsInOneStep}] of the sham states destroyed since the
 * last call, oldest first (one caller at a time). */
static ERL_NIF_TERM sham_runs(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    unsigned n = atomic_exchange(&sham_count, 0);
    if (n > SHAM_RECORDS) n = SHAM_RECORDS;
    ERL_NIF_TERM list = enif_make_list(env, 0);
    for (unsigned i = n; i-- > 0;)
        list = enif_make_list_cell(env,
                                   enif_make_tuple2(env, enif_make_uint64(env, sham_records[i][0]),
                                                    enif_make_uint64(env, sham_records[i][1])),
                                   list);
    return list;
}
#endif

static ERL_NIF_TERM raising_result(ErlNifEnv *env, const void *state) {
    (void)state;
    return enif_make_badarg(env);
}

static wb_job_type raising_job = {
    .name = "raising",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = fold_init,
    .step = fold_step,
    .result = raising_result,
};

WB_JOB_NIF(raising, raising_job)

static _Atomic uint64_t fickle_calls;

static bool fickle_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    ErlNifUInt64 k;
    if (!enif_get_uint64(env, argv[1], &k) || k == 0) return false;
    if (atomic_fetch_add(&fickle_calls, 1) % k == k - 1) return wb_reject(wb_atom(env, "fickle"));
    return fold_decode(env, argv, args);
}

static void fickle_bind(const void *args, void *state) {
    (void)args;
    (void)state;
}

static wb_job_type fickle_job = {
    .name = "fickle",
    .argc = 2,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fickle_decode,
    .predict = fold_predict,
    .init = fold_init,
    .bind = fickle_bind,
    .step = fold_step,
    .result = fold_result,
};

WB_JOB_NIF(fickle, fickle_job)

static size_t huge_memory(const void *state) {
    (void)state;
    return SIZE_MAX;
}

static wb_job_type huge_job = {
    .name = "huge",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = fold_init,
    .step = fold_step,
    .result = fold_result,
    .memory = huge_memory,
};

WB_JOB_NIF(huge, huge_job)

typedef struct {
    ErlNifBinary bin;
    bool owns; /* the binary, until take_result hands it over */
    size_t next;
} owned_state;

static bool owned_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    owned_state *s = state;
    uint64_t n = ((const fold_args *)args)->n;
    if (n > SIZE_MAX || !enif_alloc_binary((size_t)n, &s->bin)) {
        *reason = wb_atom(env, "enomem");
        return false;
    }
    s->owns = true;
    return true;
}

static bool owned_step(void *state, uint64_t budget, uint64_t *used) {
    owned_state *s = state;
    size_t left = s->bin.size - s->next;
    size_t end = budget < left ? s->next + (size_t)budget : s->bin.size;
    *used += end - s->next;
    for (; s->next < end; s->next++)
        s->bin.data[s->next] = (unsigned char)(s->next % 251);
    return s->next == s->bin.size;
}

static ERL_NIF_TERM owned_take(ErlNifEnv *env, void *state) {
    owned_state *s = state;
    s->owns = false;
    return enif_make_binary(env, &s->bin);
}

static size_t owned_memory(const void *state) {
    return ((const owned_state *)state)->bin.size;
}

static void owned_destroy(void *state) {
    owned_state *s = state;
    if (s->owns) enif_release_binary(&s->bin);
}

static wb_job_type owned_job = {
    .name = "owned",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(owned_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = owned_init,
    .step = owned_step,
    .memory = owned_memory,
    .destroy = owned_destroy,
    .take_result = owned_take,
};

WB_JOB_NIF(owned, owned_job)

/* The job "holding" folds N units as "fold" does, sliced, and its last
 * step then spins until its thread has had HoldUs of CPU time: one long
 * turn per call at the end, as a result built in one go would hold its
 * scheduler (WellBehaved.Probe's judgement must see it). */
typedef struct {
    uint64_t n, hold_us;
} holding_args;

typedef struct {
    fold_state fold; /* first: fold_step works on it */
    uint64_t hold_us;
} holding_state;

static bool holding_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    ErlNifUInt64 hold_us, n;
    if (!enif_get_uint64(env, argv[0], &hold_us) || hold_us > UINT64_C(60000000) ||
        !enif_get_uint64(env, argv[1], &n))
        return false;
    *(holding_args *)args = (holding_args){.n = n, .hold_us = hold_us};
    return true;
}

static uint64_t holding_predict(const void *args) {
    return ((const holding_args *)args)->n;
}

static bool holding_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    const holding_args *a = args;
    *(holding_state *)state = (holding_state){.fold = {.n = a->n}, .hold_us = a->hold_us};
    return true;
}

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool holding_step(void *state, uint64_t budget, uint64_t *used) {
    holding_state *s = state;
    if (!fold_step(&s->fold, budget, used)) return false;
    int64_t start = thread_cpu_ns(), now = start;
    /* no CPU clock: no hold (the tests that use it would notice) */
    while (start >= 0 && now >= 0 && now - start < (int64_t)s->hold_us * 1000) {
        s->fold.sum = MIX(s->fold.sum, (uint64_t)now);
        now = thread_cpu_ns();
    }
    return true;
}

static wb_job_type holding_job = {
    .name = "holding",
    .argc = 2,
    .args_size = sizeof(holding_args),
    .state_size = sizeof(holding_state),
    .decode = holding_decode,
    .predict = holding_predict,
    .init = holding_init,
    .step = holding_step,
    .result = fold_result,
};

WB_JOB_NIF(holding, holding_job)

#ifdef WB_EXTERNAL_SERVER
#include <signal.h>

static bool crash_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    if (((const fold_args *)args)->n == 13) raise(SIGSEGV);
    return fold_init(env, args, state, reason);
}

static bool stuck_step(void *state, uint64_t budget, uint64_t *used) {
    fold_state *s = state;
    if (s->next < s->n) {
        fold_step(state, budget, used);
        return false;
    }
    volatile uint64_t *sum = &s->sum;
    for (;;)
        *sum = MIX(*sum, 1);
}

static wb_job_type stuck_job = {
    .name = "stuck",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = fold_init,
    .step = stuck_step,
    .result = fold_result,
};

static wb_job_type crash_job = {
    .name = "crash",
    .argc = 1,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = crash_init,
    .step = fold_step,
    .result = fold_result,
};
#endif

static ErlNifFunc nif_funcs[] = {
    {"fold", 4, fold, 0},
    {"phases", 6, phases, 0},
    {"dear", 4, dear, 0},
    {"lumpy", 4, lumpy, 0},
    {"liar", 4, liar, 0},
    {"raising", 4, raising, 0},
    {"fickle", 5, fickle, 0},
    {"huge", 4, huge, 0},
    {"owned", 4, owned, 0},
    {"sham", 4, sham, 0},
    {"rle", 5, rle, 0},
    {"holding", 5, holding, 0},
#ifndef WB_EXTERNAL_SERVER
    {"sham_runs", 0, sham_runs, 0},
#endif
    WB_RUNTIME_NIFS,
};

static wb_job_type *const types[] = {&fold_job,  &phases_job,  &dear_job,   &lumpy_job,
                                     &liar_job,  &raising_job, &fickle_job, &huge_job,
                                     &owned_job, &sham_job,    &rle_job,    &holding_job,
#ifdef WB_EXTERNAL_SERVER
                                     &crash_job, &stuck_job,
#endif
                                     NULL};

#ifdef WB_EXTERNAL_SERVER
int main(int argc, char **argv) {
    (void)nif_funcs;
    return wb_external_main(argc, argv, types);
}
#else

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info) {
    (void)priv;
#ifdef WB_TEST_REFUSED
    (void)fold_step;
#endif
    return wb_runtime_load(env, types, info);
}

/* A new version of the stub module loading the library again while the
 * old one still has it. */
static int upgrade(ErlNifEnv *env, void **priv, void **old_priv, ERL_NIF_TERM info) {
    (void)priv;
    (void)old_priv;
    return wb_runtime_upgrade(env, types, info);
}

static void unload(ErlNifEnv *env, void *priv) {
    (void)env;
    (void)priv;
    wb_runtime_unload();
}

#ifdef WB_TEST_REFUSED
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKRefused, nif_funcs, load, NULL, upgrade, unload)
#elif defined(WB_TEST_AWAITING)
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKAwaiting, nif_funcs, load, NULL, upgrade, unload)
#elif defined(WB_TEST_IMPATIENT)
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKImpatient, nif_funcs, load, NULL, upgrade, unload)
#elif defined(WB_TEST_COUNTED)
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKCounted, nif_funcs, load, NULL, upgrade, unload)
#else
ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKJobs, nif_funcs, load, NULL, upgrade, unload)
#endif
#endif

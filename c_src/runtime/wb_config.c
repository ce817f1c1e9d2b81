/* The runtime's settings (the slice, the thresholds of :auto) from
 * load_info and runtime_configure, and what runtime_stats reports: live
 * jobs and memory, the pool, the learned costs, the settings in force and
 * the limits the Elixir side is checked against. */
#include "wb_runtime_internal.h"

#include <stdlib.h>

static _Atomic int64_t resident_bytes;
/* wb_rt_normal_max_ns follows the slice until it is configured */
_Atomic uint64_t wb_rt_normal_max_ns = SLICE_NS_DEFAULT;
static _Atomic bool normal_max_is_slice = true;
_Atomic uint64_t wb_rt_yielding_max_ns = NO_LIMIT;
_Atomic uint64_t wb_rt_slice_ns = SLICE_NS_DEFAULT;
_Atomic uint64_t wb_rt_dirty_slice_ns = DIRTY_SLICE_NS_DEFAULT;
/* Where the slice in force comes from: the load_info's calibration (and
 * the Erlang turn it was derived from), the compiled default, or
 * runtime_configure. `calibrated_ns` is what `slice_us: calibrated`
 * restores. */
typedef enum { SOURCE_DEFAULT, SOURCE_ERLANG_TURN, SOURCE_CONFIGURED } slice_source;
static _Atomic int slice_from = SOURCE_DEFAULT;
static _Atomic uint64_t calibrated_ns = SLICE_NS_DEFAULT;
static _Atomic uint64_t erlang_turn_ns; /* 0: not given */

int64_t wb_slice_ns(void) {
    return setting_ns(&wb_rt_slice_ns);
}

void wb_runtime_resident_bytes(int64_t delta) {
    atomic_fetch_add_explicit(&resident_bytes, delta, memory_order_relaxed);
}

/* ---- counters ----------------------------------------------------------------- */

_Atomic unsigned wb_rt_counter_generation;
/* every thread's block, newest first; only pushed to until the unload */
static counter_block *_Atomic counter_blocks;
counter_block *wb_rt_claim_counters(void) {
    counter_block *b = aligned_alloc(alignof(counter_block), sizeof *b);
    if (!b) return NULL;
    for (int i = 0; i < CTR_COUNT; i++)
        atomic_init(&b->n[i], 0);
    b->next = atomic_load_explicit(&counter_blocks, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&counter_blocks, &b->next, b,
                                                  memory_order_release, memory_order_relaxed)) {
    }
    return b;
}

/* Each counter summed over the blocks. Blocks only ever join the list and
 * counts only grow, so each sum is at least the one read before. */
void wb_rt_counters_sum(uint64_t sums[CTR_COUNT]) {
    memset(sums, 0, CTR_COUNT * sizeof *sums);
    for (counter_block *b = atomic_load_explicit(&counter_blocks, memory_order_acquire); b;
         b = b->next)
        for (int i = 0; i < CTR_COUNT; i++)
            sums[i] += atomic_load_explicit(&b->n[i], memory_order_relaxed);
}

/* At the unload of the library's last instance: no job of it is left
 * (the VM unloads a library once its resources are gone) and its threads
 * have stopped, so no thread counts. The blocks go; a thread whose slot
 * still names one sees an old generation and claims a new block: the
 * statics kept (a library the loader does not unmap), the generation
 * moves on here; mapped again, it starts from a value of its own
 * (wb_rt_counters_seed). */
/* At the first load of a mapping: a generation no earlier mapping's
 * thread-local slot can hold (a fresh mapping's statics are 0 again). */
void wb_rt_counters_seed(void) {
    unsigned zero = 0, seed = (unsigned)clock_ns() | 1u;
    atomic_compare_exchange_strong(&wb_rt_counter_generation, &zero, seed);
}

void wb_rt_counters_free(void) {
    counter_block *b = atomic_exchange(&counter_blocks, NULL);
    atomic_fetch_add(&wb_rt_counter_generation, 1);
    while (b) {
        counter_block *next = b->next;
        free(b);
        b = next;
    }
}

/* runtime_stats' `counters`: #{calls => #{auto, Mode...}, auto_chosen,
 * completed, cancelled => #{Mode...}, failed => #{auto, Mode...}, reruns,
 * yields, dirty_hops, requeues, caller_deaths, answered_in_call}. */
static ERL_NIF_TERM by_mode(ErlNifEnv *env, const uint64_t *counts, bool with_auto) {
    ERL_NIF_TERM keys[] = {wb_rt_atom_normal,         wb_rt_atom_dirty_cpu, wb_rt_atom_yielding,
                           wb_rt_atom_yielding_dirty, wb_rt_atom_threaded,  wb_rt_atom_auto};
    ERL_NIF_TERM values[COUNT_MODES + 1];
    int n = with_auto ? COUNT_MODES + 1 : COUNT_MODES;
    for (int i = 0; i < n; i++)
        values[i] = enif_make_uint64(env, counts[i]);
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, values, (size_t)n, &map)) return wb_atom(env, "nil");
    return map;
}

static ERL_NIF_TERM counters_map(ErlNifEnv *env, const uint64_t *c) {
    ERL_NIF_TERM keys[] = {
        wb_atom(env, "calls"),         wb_atom(env, "auto_chosen"),      wb_atom(env, "completed"),
        wb_atom(env, "failed"),        wb_atom(env, "cancelled"),        wb_atom(env, "reruns"),
        wb_atom(env, "yields"),        wb_atom(env, "dirty_hops"),       wb_atom(env, "requeues"),
        wb_atom(env, "caller_deaths"), wb_atom(env, "answered_in_call"),
    };
    ERL_NIF_TERM values[] = {
        by_mode(env, c + CTR_CALLS, true),
        by_mode(env, c + CTR_AUTO_CHOSEN, false),
        by_mode(env, c + CTR_COMPLETED, false),
        by_mode(env, c + CTR_FAILED, true),
        by_mode(env, c + CTR_CANCELLED, false),
        enif_make_uint64(env, c[CTR_RERUNS]),
        enif_make_uint64(env, c[CTR_YIELDS]),
        enif_make_uint64(env, c[CTR_DIRTY_HOPS]),
        enif_make_uint64(env, c[CTR_REQUEUES]),
        enif_make_uint64(env, c[CTR_CALLER_DEATHS]),
        enif_make_uint64(env, c[CTR_ANSWERED_IN_CALL]),
    };
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, values, sizeof keys / sizeof *keys, &map))
        return wb_atom(env, "nil");
    return map;
}

/* ---- a job's report, and explain ---------------------------------------------- */

enum {
    R_TAG,
    R_MODE_RUN,
    R_REASON,
    R_PREDICTED_UNITS,
    R_PS_PER_UNIT,
    R_SLICES,
    R_RERUN,
    R_ANSWERED_IN_CALL,
    R_BYTES,
    R_NORMAL_MAX_NS,
    R_YIELDING_MAX_NS,
    R_MODE,
    R_SETUP_UNITS,
    R_PREDICTED_NS,
    R_COST_MEASURED,
    R_SETUP_ON_DIRTY,
    R_NIL,
    R_INFINITY,
    R_BELOW_NORMAL_MAX,
    R_BELOW_YIELDING_MAX,
    R_ABOVE_YIELDING_MAX,
    R_ATOMS
};
static const char *const report_names[R_ATOMS] = {"$wb_report",
                                                  "mode_run",
                                                  "reason",
                                                  "predicted_units",
                                                  "ps_per_unit",
                                                  "slices",
                                                  "rerun",
                                                  "answered_in_call",
                                                  "bytes",
                                                  "normal_max_ns",
                                                  "yielding_max_ns",
                                                  "mode",
                                                  "setup_units",
                                                  "predicted_ns",
                                                  "cost_measured",
                                                  "setup_on_dirty",
                                                  "nil",
                                                  "infinity",
                                                  "below_normal_max",
                                                  "below_yielding_max",
                                                  "above_yielding_max"};
/* made at load, as the runtime's other atoms */
static ERL_NIF_TERM report_atoms[R_ATOMS];

void wb_rt_report_atoms(ErlNifEnv *env) {
    for (int i = 0; i < R_ATOMS; i++)
        report_atoms[i] = enif_make_atom(env, report_names[i]);
}

static ERL_NIF_TERM mode_atom(mode m) {
    switch (m) {
    case MODE_NORMAL:
        return wb_rt_atom_normal;
    case MODE_DIRTY_CPU:
        return wb_rt_atom_dirty_cpu;
    case MODE_YIELDING:
        return wb_rt_atom_yielding;
    case MODE_YIELDING_DIRTY:
        return wb_rt_atom_yielding_dirty;
    default:
        return wb_rt_atom_threaded;
    }
}

static ERL_NIF_TERM reason_atom(auto_reason reason) {
    switch (reason) {
    case BELOW_NORMAL_MAX:
        return report_atoms[R_BELOW_NORMAL_MAX];
    case BELOW_YIELDING_MAX:
        return report_atoms[R_BELOW_YIELDING_MAX];
    case ABOVE_YIELDING_MAX:
        return report_atoms[R_ABOVE_YIELDING_MAX];
    default:
        return report_atoms[R_NIL];
    }
}

static ERL_NIF_TERM bool_atom(bool b) {
    return b ? wb_rt_atom_true : wb_rt_atom_false;
}

static ERL_NIF_TERM yielding_max_term(ErlNifEnv *env) {
    uint64_t max = atomic_load_explicit(&wb_rt_yielding_max_ns, memory_order_relaxed);
    return max == NO_LIMIT ? report_atoms[R_INFINITY] : enif_make_uint64(env, max);
}

/* {'$wb_report', Result, Info}, the result of a job whose call asked for
 * its report; a raise stays a raise. Info: the mode run, :auto's reason
 * and its predicted units (nil for a mode asked), the cost per unit (the
 * one :auto chose with, else the one learned now), the slices run, whether
 * it is a re-run's restart, whether a :threaded answer was taken in the
 * call, the state's bytes, and the thresholds in force. */
ERL_NIF_TERM wb_rt_report(ErlNifEnv *env, const wb_job *job, ERL_NIF_TERM result) {
    if (result_raised(env, result)) return result;
    uint64_t ps = job->auto_reason != REASON_NONE
                      ? job->ps_at_choice
                      : atomic_load_explicit(&job->learned->ps_per_unit, memory_order_relaxed);
    ERL_NIF_TERM keys[] = {
        report_atoms[R_MODE_RUN],         report_atoms[R_REASON], report_atoms[R_PREDICTED_UNITS],
        report_atoms[R_PS_PER_UNIT],      report_atoms[R_SLICES], report_atoms[R_RERUN],
        report_atoms[R_ANSWERED_IN_CALL], report_atoms[R_BYTES],  report_atoms[R_NORMAL_MAX_NS],
        report_atoms[R_YIELDING_MAX_NS],
    };
    ERL_NIF_TERM values[] = {
        mode_atom(job->mode),
        reason_atom(job->auto_reason),
        job->auto_reason != REASON_NONE ? enif_make_uint64(env, job->predicted_units)
                                        : report_atoms[R_NIL],
        enif_make_uint64(env, ps),
        enif_make_uint64(env, job->slices),
        bool_atom(job->rerun),
        bool_atom(job->answered_in_call),
        enif_make_uint64(env, job->state_bytes),
        enif_make_uint64(env, atomic_load_explicit(&wb_rt_normal_max_ns, memory_order_relaxed)),
        yielding_max_term(env),
    };
    ERL_NIF_TERM info;
    if (!enif_make_map_from_arrays(env, keys, values, sizeof keys / sizeof *keys, &info))
        return result;
    return enif_make_tuple3(env, report_atoms[R_TAG], result, info);
}

/* explain's answer: the mode :auto would choose for a call, and why. */
ERL_NIF_TERM wb_rt_explain(ErlNifEnv *env, registered_type *learned, mode m, auto_reason reason,
                           uint64_t ps, uint64_t predicted, uint64_t setup, bool setup_on_dirty) {
    /* the cost the choice was made with: learning may move it meanwhile */
    double ns = units_ns(predicted + setup, ps);
    ERL_NIF_TERM keys[] = {
        report_atoms[R_MODE],
        report_atoms[R_REASON],
        report_atoms[R_PREDICTED_UNITS],
        report_atoms[R_SETUP_UNITS],
        report_atoms[R_PS_PER_UNIT],
        report_atoms[R_PREDICTED_NS],
        report_atoms[R_NORMAL_MAX_NS],
        report_atoms[R_YIELDING_MAX_NS],
        report_atoms[R_COST_MEASURED],
        report_atoms[R_SETUP_ON_DIRTY],
    };
    ERL_NIF_TERM values[] = {
        mode_atom(m),
        reason_atom(reason),
        enif_make_uint64(env, predicted),
        enif_make_uint64(env, setup),
        enif_make_uint64(env, ps),
        enif_make_uint64(env, ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX),
        enif_make_uint64(env, atomic_load_explicit(&wb_rt_normal_max_ns, memory_order_relaxed)),
        yielding_max_term(env),
        bool_atom(atomic_load_explicit(&learned->measured, memory_order_relaxed)),
        bool_atom(setup_on_dirty),
    };
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, values, sizeof keys / sizeof *keys, &map))
        return enif_make_badarg(env);
    return map;
}

static ERL_NIF_TERM slice_source_atom(ErlNifEnv *env) {
    switch (atomic_load(&slice_from)) {
    case SOURCE_ERLANG_TURN:
        return wb_atom(env, "erlang_turn");
    case SOURCE_CONFIGURED:
        return wb_atom(env, "configured");
    default:
        return wb_atom(env, "default");
    }
}

/* What the C side accepts, for the Elixir side to be checked against:
 * the modes, the most job arguments, the slice settings' range in us. */
static ERL_NIF_TERM limits_map(ErlNifEnv *env) {
    ERL_NIF_TERM modes[] = {wb_rt_atom_auto,     wb_rt_atom_normal,         wb_rt_atom_dirty_cpu,
                            wb_rt_atom_yielding, wb_rt_atom_yielding_dirty, wb_rt_atom_threaded};
    ERL_NIF_TERM keys[] = {wb_atom(env, "modes"), wb_atom(env, "max_job_args"),
                           wb_atom(env, "slice_us_min"), wb_atom(env, "slice_us_max")};
    ERL_NIF_TERM values[] = {
        enif_make_list_from_array(env, modes, sizeof modes / sizeof *modes),
        enif_make_int(env, WB_MAX_JOB_ARGS),
        enif_make_uint64(env, SLICE_NS_MIN / 1000),
        enif_make_uint64(env, SLICE_NS_MAX / 1000),
    };
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, values, sizeof keys / sizeof *keys, &map))
        return wb_atom(env, "nil");
    return map;
}

ERL_NIF_TERM wb_runtime_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    size_t queued;
    int threads;
    uint64_t released, counts[CTR_COUNT];
    int64_t release_pending;
    wb_rt_pool_counts(&queued, &threads);
    wb_rt_counters_sum(counts);
    wb_rt_release_counts(&released, &release_pending);
    int type_count;
    registered_type *job_types = wb_rt_registered_types(&type_count);
    ERL_NIF_TERM costs = enif_make_new_map(env), measured = enif_make_new_map(env);
    for (int i = 0; i < type_count; i++) {
        uint64_t ps = atomic_load_explicit(&job_types[i].ps_per_unit, memory_order_relaxed);
        bool known = atomic_load_explicit(&job_types[i].measured, memory_order_relaxed);
        ERL_NIF_TERM name = wb_atom(env, job_types[i].type->name);
        if (!enif_make_map_put(env, costs, name, enif_make_uint64(env, ps), &costs) ||
            !enif_make_map_put(env, measured, name, known ? wb_rt_atom_true : wb_atom(env, "false"),
                               &measured))
            return enif_make_badarg(env);
    }
    uint64_t turn = atomic_load(&erlang_turn_ns);
    ERL_NIF_TERM keys[] = {
        wb_atom(env, "live_jobs"),        wb_atom(env, "live_bytes"),
        wb_atom(env, "pool_threads"),     wb_atom(env, "queued"),
        wb_atom(env, "normal_max_us"),    wb_atom(env, "yielding_max_us"),
        wb_atom(env, "slice_us"),         wb_atom(env, "dirty_slice_us"),
        wb_atom(env, "ps_per_unit"),      wb_atom(env, "resident_bytes"),
        wb_atom(env, "slice_ns"),         wb_atom(env, "slice_source"),
        wb_atom(env, "erlang_turn_ns"),   wb_atom(env, "calibrated_slice_ns"),
        wb_atom(env, "released_later"),   wb_atom(env, "limits"),
        wb_atom(env, "answered_in_call"), wb_atom(env, "release_pending"),
        wb_atom(env, "cost_measured"),    wb_atom(env, "counters"),
    };
    ERL_NIF_TERM values[] = {
        enif_make_int64(env, atomic_load(&wb_rt_live_jobs)),
        enif_make_int64(env, atomic_load(&wb_rt_live_bytes)),
        enif_make_int(env, threads),
        enif_make_uint64(env, queued),
        enif_make_uint64(env, atomic_load(&wb_rt_normal_max_ns) / 1000),
        atomic_load(&wb_rt_yielding_max_ns) == NO_LIMIT
            ? wb_atom(env, "infinity")
            : enif_make_uint64(env, atomic_load(&wb_rt_yielding_max_ns) / 1000),
        enif_make_uint64(env, (atomic_load(&wb_rt_slice_ns) + 500) / 1000),
        enif_make_uint64(env, atomic_load(&wb_rt_dirty_slice_ns) / 1000),
        costs,
        enif_make_int64(env, atomic_load(&resident_bytes)),
        enif_make_uint64(env, atomic_load(&wb_rt_slice_ns)),
        slice_source_atom(env),
        turn ? enif_make_uint64(env, turn) : wb_atom(env, "nil"),
        enif_make_uint64(env, atomic_load(&calibrated_ns)),
        enif_make_uint64(env, released),
        limits_map(env),
        enif_make_uint64(env, counts[CTR_ANSWERED_IN_CALL]),
        enif_make_int64(env, release_pending),
        measured,
        counters_map(env, counts),
    };
    ERL_NIF_TERM map;
    if (!enif_make_map_from_arrays(env, keys, values, sizeof keys / sizeof *keys, &map))
        return enif_make_badarg(env);
    return map;
}

/* A setting's new value in *ns, or false when the term is not one: `keep`
 * (the current value), a whole number of microseconds within [min_ns,
 * max_ns], or, where `special` names an atom, that atom (*ns = NO_LIMIT). */
static bool get_setting_ns(ErlNifEnv *env, ERL_NIF_TERM term, uint64_t current, uint64_t min_ns,
                           uint64_t max_ns, const char *special, uint64_t *ns) {
    ErlNifUInt64 us;
    if (enif_is_identical(term, wb_atom(env, "keep"))) {
        *ns = current;
        return true;
    }
    if (special && enif_is_identical(term, wb_atom(env, special))) {
        *ns = NO_LIMIT;
        return true;
    }
    if (!enif_get_uint64(env, term, &us) || us > max_ns / 1000 || us * 1000 < min_ns) return false;
    *ns = us * 1000;
    return true;
}

/* Keeps wb_rt_normal_max_ns at one slice while it follows the slice. */
static void follow_slice(void) {
    if (atomic_load(&normal_max_is_slice))
        atomic_store(&wb_rt_normal_max_ns, atomic_load(&wb_rt_slice_ns));
}

/* The slice that load_info carries, #{slice_ns => Ns, erlang_turn_ns => Ns}
 * (WellBehaved.SDK.load_info/0); anything else leaves the default (false).
 * A configured slice stays as it is (a reload of the library). Also
 * runtime_configure's, for a library loaded before the calibration could
 * be made (while it compiled). */
bool wb_rt_apply_load_info(ErlNifEnv *env, ERL_NIF_TERM info) {
    ERL_NIF_TERM v;
    ErlNifUInt64 slice, turn;
    if (!enif_is_map(env, info) ||
        !enif_get_map_value(env, info, enif_make_atom(env, "slice_ns"), &v) ||
        !enif_get_uint64(env, v, &slice) || slice < SLICE_NS_MIN || slice > SLICE_NS_MAX ||
        !enif_get_map_value(env, info, enif_make_atom(env, "erlang_turn_ns"), &v) ||
        !enif_get_uint64(env, v, &turn) || turn == 0)
        return false;
    atomic_store(&calibrated_ns, slice);
    atomic_store(&erlang_turn_ns, turn);
    if (atomic_load(&slice_from) == SOURCE_CONFIGURED) return true;
    atomic_store(&slice_from, SOURCE_ERLANG_TURN);
    atomic_store(&wb_rt_slice_ns, slice);
    follow_slice();
    return true;
}

ERL_NIF_TERM wb_runtime_configure(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    uint64_t normal, yielding, slice, dirty;
    if (argc == 4 && enif_is_map(env, argv[2]))
        return wb_rt_apply_load_info(env, argv[2]) ? wb_rt_atom_ok : enif_make_badarg(env);
    if (argc != 4 ||
        !get_setting_ns(env, argv[0], atomic_load(&wb_rt_normal_max_ns), 0, NO_LIMIT - 1, "slice",
                        &normal) ||
        !get_setting_ns(env, argv[1], atomic_load(&wb_rt_yielding_max_ns), 0, NO_LIMIT - 1,
                        "infinity", &yielding) ||
        !get_setting_ns(env, argv[2], atomic_load(&wb_rt_slice_ns), SLICE_NS_MIN, SLICE_NS_MAX,
                        "calibrated", &slice) ||
        !get_setting_ns(env, argv[3], atomic_load(&wb_rt_dirty_slice_ns), SLICE_NS_MIN,
                        SLICE_NS_MAX, NULL, &dirty))
        return enif_make_badarg(env);
    bool calibrated = slice == NO_LIMIT;
    if (calibrated) slice = atomic_load(&calibrated_ns);
    bool normal_is_slice = normal == NO_LIMIT || (atomic_load(&normal_max_is_slice) &&
                                                  enif_is_identical(argv[0], wb_atom(env, "keep")));
    if (normal_is_slice) normal = slice;
    if (normal > yielding) return enif_make_badarg(env);
    if (!enif_is_identical(argv[2], wb_atom(env, "keep")))
        atomic_store(&slice_from, calibrated ? (atomic_load(&erlang_turn_ns) ? SOURCE_ERLANG_TURN
                                                                             : SOURCE_DEFAULT)
                                             : SOURCE_CONFIGURED);
    atomic_store(&normal_max_is_slice, normal_is_slice);
    atomic_store(&wb_rt_normal_max_ns, normal);
    atomic_store(&wb_rt_yielding_max_ns, yielding);
    atomic_store(&wb_rt_slice_ns, slice);
    atomic_store(&wb_rt_dirty_slice_ns, dirty);
    return wb_rt_atom_ok;
}

/*
 * WellBehaved scheduling runtime: runs resumable native jobs in the mode a
 * caller picks, so a NIF author writes the work once and gets every way of
 * keeping the VM's schedulers responsive.
 *
 * A job type describes the work: how to predict its size, set up its state
 * from the call's arguments, advance it by a bounded number of units, turn
 * the finished state into a term and release it. The runtime owns time
 * slicing, rescheduling, dirty hops, the thread pool, cancellation of jobs
 * whose caller died, and the accounting of live jobs and their memory.
 *
 * A job NIF registered with wb_run takes the job type's arguments followed
 * by three more: the mode atom (normal | dirty_cpu | yielding |
 * yielding_dirty | threaded | auto), `true` to force one unit per slice
 * (a test mode that exercises every resume path), and a reference that tags
 * the reply in threaded mode. It returns the result term, `{error, Reason}`
 * when set-up rejects the arguments, or, in threaded mode, `ok` followed by
 * a message `{Ref, Result}` sent to the caller.
 */
#ifndef WB_RUNTIME_H
#define WB_RUNTIME_H

#include <erl_nif.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WB_MAX_JOB_ARGS  8
#define WB_MAX_ARGS_SIZE 256 /* bytes of a job type's decoded arguments */

/*
 * The life of a job: every NIF call that works on it first decodes the
 * call's argument terms into a small struct (on the C stack, valid only
 * during that call). The first call predicts the work from it and sets the
 * state up; every later call binds the state to the freshly decoded
 * arguments again; then the runtime steps the state. The job's argument
 * terms travel with every rescheduled call, so the binaries they name stay
 * alive for the whole job, and no pointer into them outlives its call.
 */
typedef struct wb_job_type {
    const char *name; /* shown by the VM for rescheduled calls */
    int argc;         /* the job's own arguments, before mode/tiny/ref */
    size_t args_size; /* <= WB_MAX_ARGS_SIZE */
    size_t state_size;
    /* Reads the argument terms into *args; false if they are unusable. */
    bool (*decode)(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args);
    /* Units of work the job will take. Must be cheap: it runs before the
     * mode is chosen, on a normal scheduler. */
    uint64_t (*predict)(const void *args);
    /* Units of work that init itself takes (NULL: negligible). Time-sliced
     * jobs with a large set-up run init on a dirty scheduler first. */
    uint64_t (*setup)(const void *args);
    /* Sets up the state, bound to args for this call; on failure leaves
     * nothing allocated and stores the reason term in *reason. */
    bool (*init)(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason);
    /* Points the state at this call's decoded arguments (may be NULL). */
    void (*bind)(const void *args, void *state);
    /* Advances by about `budget` units, adds the units done to *used,
     * returns true when finished. */
    bool (*step)(void *state, uint64_t budget, uint64_t *used);
    ERL_NIF_TERM (*result)(ErlNifEnv *env, const void *state);
    size_t (*memory)(const void *state); /* heap bytes owned by the state */
    void (*destroy)(void *state);
    /* measured cost, picoseconds per unit; seeded with a typical value */
    _Atomic uint64_t ps_per_unit;
} wb_job_type;

/* load/unload callbacks of the NIF library; load takes the library's job
 * types (NULL-terminated), whose learned costs runtime_stats reports */
int wb_runtime_load(ErlNifEnv *env, wb_job_type *const types[]);
void wb_runtime_unload(void);

/* Body of a job NIF (see the header comment for its arguments). */
ERL_NIF_TERM wb_run(ErlNifEnv *env, wb_job_type *type, int argc, const ERL_NIF_TERM argv[]);

/* runtime_stats() -> #{live_jobs, live_bytes, pool_threads, queued,
 * normal_max_us, yielding_max_us, slice_us, dirty_slice_us,
 * ps_per_unit => #{JobName => Picoseconds}} */
ERL_NIF_TERM wb_runtime_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* runtime_configure(NormalMaxMicros, YieldingMaxMicros, SliceMicros,
 * DirtySliceMicros) -> ok; the slices in 1..100000 us */
ERL_NIF_TERM wb_runtime_configure(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

/* Atoms made once at load, for job types' argument decoding and replies. */
typedef struct {
    ERL_NIF_TERM byte, codepoint, ok;
} wb_atom_table;
extern wb_atom_table wb_atoms;

/* Atoms for job types' own terms (a lookup per call: not for hot paths). */
ERL_NIF_TERM wb_atom(ErlNifEnv *env, const char *name);
ERL_NIF_TERM wb_error(ErlNifEnv *env, ERL_NIF_TERM reason);

#endif

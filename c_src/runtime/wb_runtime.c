/* The runtime's load, upgrade and unload: the job types registered with
 * their learned costs, the resource types and atoms made at load, and the
 * threads started for the first loaded instance. Modes: wb_run.c; the
 * rest of the runtime: the files beside this one. */
#include "wb_runtime_internal.h"

/* ---- global state ------------------------------------------------------------ */

static ErlNifResourceType *job_resource;
/* The job resource types opened by this library's instances, newest
 * last: a job started before the module was purged and loaded again is of
 * an older type (a purged module's type cannot be taken over), and its
 * later calls (a slice, a collect) still find it (wb_rt_get_job). */
#define OLD_TYPES 8
static ErlNifResourceType *_Atomic job_resources[OLD_TYPES];
static _Atomic unsigned job_resource_count; /* written by load, under the code server */
ERL_NIF_TERM wb_rt_atom_ok, wb_rt_atom_error, wb_rt_atom_true, wb_rt_atom_enomem, wb_rt_atom_badarg,
    wb_rt_atom_unloaded;
ERL_NIF_TERM wb_rt_atom_normal, wb_rt_atom_dirty_cpu, wb_rt_atom_yielding,
    wb_rt_atom_yielding_dirty, wb_rt_atom_threaded, wb_rt_atom_auto, wb_rt_atom_collect,
    wb_rt_atom_cancel, wb_rt_atom_done, wb_rt_atom_cancelled, wb_rt_atom_false, wb_rt_atom_explain;
static registered_type job_types[WB_MAX_JOB_TYPES];
static int job_type_count;
static int loaded_instances; /* instances of this library loaded in the VM */

ERL_NIF_TERM wb_atom(ErlNifEnv *env, const char *name) {
    ERL_NIF_TERM atom;
    if (enif_make_existing_atom(env, name, &atom, ERL_NIF_LATIN1)) return atom;
    return enif_make_atom(env, name);
}

ERL_NIF_TERM wb_error(ErlNifEnv *env, ERL_NIF_TERM reason) {
    return enif_make_tuple2(env, wb_rt_atom_error, reason);
}

/* The job in `term`: a resource of the job type this library's instance
 * opened, or of one an earlier instance opened (a job that began before
 * its module was purged and loaded again), newest first; NULL if none. */
wb_job *wb_rt_get_job(ErlNifEnv *env, ERL_NIF_TERM term) {
    void *obj;
    unsigned n = atomic_load(&job_resource_count);
    for (unsigned i = 0; i < n && i < OLD_TYPES; i++)
        if (enif_get_resource(env, term, job_resources[(n - 1 - i) % OLD_TYPES], &obj))
            return ((wb_job *)obj)->magic == JOB_MAGIC ? obj : NULL;
    return NULL;
}

/* The learned cost of a registered type; NULL for a type not registered
 * at load. A handful of pointers: a scan costs less than the call. */
registered_type *wb_rt_learned_of(const wb_job_type *type) {
    for (int i = 0; i < job_type_count; i++)
        if (job_types[i].type == type) return &job_types[i];
    return NULL;
}

/* The registered types and their count (stats). */
registered_type *wb_rt_registered_types(int *count) {
    *count = job_type_count;
    return job_types;
}

/* A new job resource with room for the type's state. */
wb_job *wb_rt_alloc_job(const wb_job_type *type) {
    return enif_alloc_resource(job_resource, sizeof(wb_job) + type->state_size);
}

/* Registers the types (a reload of the library keeps what it learned):
 * 0, or the code of the first type refused (wb_load_refusal). */
static int register_types(wb_job_type *const types[]) {
    int index;
    enum wb_job_problem problem = wb_job_types_check(types, &index);
    if (problem != WB_JOB_FINE) return wb_load_refusal(index, problem);
    for (int i = 0; types[i]; i++) {
        if (wb_rt_learned_of(types[i])) continue;
        /* new types beside those of an instance still loaded */
        if (job_type_count == WB_MAX_JOB_TYPES) return wb_load_refusal(i, WB_JOB_TOO_MANY_TYPES);
        registered_type *slot = &job_types[job_type_count++];
        slot->type = types[i];
        atomic_init(&slot->ps_per_unit, types[i]->ps_per_unit ? types[i]->ps_per_unit : 1000);
        atomic_init(&slot->overruns, 0);
        atomic_init(&slot->measured, false);
        atomic_init(&slot->probe_units, 0);
        atomic_init(&slot->probe_ns, 0);
    }
    return 0;
}

static int runtime_load(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info,
                        ErlNifResourceFlags flags) {
    int refused = register_types(types);
    if (refused) return refused;
    wb_rt_owned_block_resource = enif_open_resource_type(env, NULL, "wb_owned_block",
                                                         wb_rt_owned_block_destructor, flags, NULL);
    if (!wb_rt_owned_block_resource) return 1;
    ErlNifResourceTypeInit init = {.dtor = wb_rt_job_destructor, .down = wb_rt_job_down};
    job_resource = enif_open_resource_type_x(env, "wb_job", &init, flags, NULL);
    if (!job_resource) {
        if (loaded_instances == 0) job_type_count = 0;
        return 1;
    }
    unsigned n = atomic_load(&job_resource_count);
    if (n == 0 || job_resources[(n - 1) % OLD_TYPES] != job_resource) {
        atomic_store(&job_resources[n % OLD_TYPES], job_resource);
        atomic_store(&job_resource_count, n + 1);
    }
    wb_rt_atom_ok = enif_make_atom(env, "ok");
    wb_rt_atom_error = enif_make_atom(env, "error");
    wb_rt_atom_true = enif_make_atom(env, "true");
    wb_rt_atom_enomem = enif_make_atom(env, "enomem");
    wb_rt_atom_badarg = enif_make_atom(env, "badarg");
    wb_rt_atom_unloaded = enif_make_atom(env, "unloaded");
    wb_rt_atom_normal = enif_make_atom(env, "normal");
    wb_rt_atom_dirty_cpu = enif_make_atom(env, "dirty_cpu");
    wb_rt_atom_yielding = enif_make_atom(env, "yielding");
    wb_rt_atom_yielding_dirty = enif_make_atom(env, "yielding_dirty");
    wb_rt_atom_threaded = enif_make_atom(env, "threaded");
    wb_rt_atom_auto = enif_make_atom(env, "auto");
    wb_rt_atom_collect = enif_make_atom(env, "collect");
    wb_rt_atom_cancel = enif_make_atom(env, "cancel");
    wb_rt_atom_done = enif_make_atom(env, "done");
    wb_rt_atom_cancelled = enif_make_atom(env, "cancelled");
    wb_rt_atom_false = enif_make_atom(env, "false");
    wb_rt_atom_explain = enif_make_atom(env, "explain");
    wb_rt_report_atoms(env);
    wb_rt_apply_load_info(env, load_info);
    /* A reload of this library (purge, then load) shares its statics with
     * the instance still alive: one pool serves every loaded instance. The
     * code server serializes load and unload calls. */
    if (loaded_instances++ > 0) return 0;
    wb_rt_counters_seed();
    ErlNifSysInfo info;
    enif_system_info(&info, sizeof info);
    int threads = info.scheduler_threads > 1 ? info.scheduler_threads : 2;
    if (wb_rt_pool_start(threads)) {
        if (wb_rt_releasers_start()) return 0;
        wb_rt_pool_stop();
    }
    loaded_instances--;
    job_type_count = 0;
    return 1;
}

int wb_runtime_load(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info) {
    return runtime_load(env, types, load_info, ERL_NIF_RT_CREATE);
}

/* The new module instance takes the job resource type over (the old
 * one's jobs keep running, freed by the same code); both instances share
 * this library's statics, pool and counters. */
int wb_runtime_upgrade(ErlNifEnv *env, wb_job_type *const types[], ERL_NIF_TERM load_info) {
    return runtime_load(env, types, load_info, ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER);
}

void wb_runtime_unload(void) {
    if (--loaded_instances > 0) return;
    wb_rt_pool_stop();
    wb_rt_releasers_stop();
    wb_rt_counters_free(); /* no thread of the library counts any more */
    job_type_count = 0;
}

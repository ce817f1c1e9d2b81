/* The entry a NIF library hands the VM (what ERL_NIF_INIT fills), for a
 * library whose code is Rust: compiled against the VM's own erl_nif.h, so
 * the NIF version, the VM variant and the sizes always match the VM the
 * runtime is built for. nif_init (the nif_init! macro) calls it once. */
#include <erl_nif.h>

__attribute__((visibility("hidden"))) ErlNifEntry *
wb_rs_nif_entry(const char *module, ErlNifFunc *funcs, int count,
                int (*load)(ErlNifEnv *, void **, ERL_NIF_TERM),
                int (*upgrade)(ErlNifEnv *, void **, void **, ERL_NIF_TERM),
                void (*unload)(ErlNifEnv *, void *)) {
    static ErlNifEntry entry;
    entry = (ErlNifEntry){
        .major = ERL_NIF_MAJOR_VERSION,
        .minor = ERL_NIF_MINOR_VERSION,
        .name = module,
        .num_of_funcs = count,
        .funcs = funcs,
        .load = load,
        .reload = NULL,
        .upgrade = upgrade,
        .unload = unload,
        .vm_variant = ERL_NIF_VM_VARIANT,
        .options = 1,
        .sizeof_ErlNifResourceTypeInit = sizeof(ErlNifResourceTypeInit),
        .min_erts = ERL_NIF_MIN_ERTS_VERSION,
    };
    return &entry;
}

#ifndef WB_EXTERNAL_SERVER
#include <wb_runtime.h>

/* A NIF library is no server program: the server's main, which a crate
 * of jobs names (server_main!), stands here so that the library's every
 * symbol resolves when the VM loads it. */
int wb_external_main(int argc, char **argv, wb_job_type *const types[]) {
    (void)argc;
    (void)argv;
    (void)types;
    return 2;
}
#endif

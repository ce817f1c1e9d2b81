/*
 * The library's own job types in a server (the built-in server,
 * wb_external_main.c, and its tests): what the NIF library
 * (well_behaved_nif.c) gives c_src/nif's job sources and a server has not,
 * the library's load (its atoms, made in an environment kept for the
 * server's life) and the large blocks of jobs.h, here from the C library
 * (no VM allocators, no scheduler to spare).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../nif/jobs.h"
#include "wb_external.h"

void *wb_block_alloc(size_t bytes) {
    return malloc(bytes ? bytes : 1);
}

void wb_block_free_now(void *block, size_t bytes) {
    (void)bytes;
    free(block);
}

void wb_block_free(void *block, size_t bytes) {
    (void)bytes;
    free(block);
}

void *wb_block_realloc(void *block, size_t old, size_t bytes) {
    (void)old;
    return realloc(block, bytes ? bytes : 1);
}

wb_job_type *const wb_ext_library_types[] = {&wb_levenshtein_job, &wb_fuzzy_score_job,
                                             &wb_fuzzy_editops_job, NULL};

int wb_ext_library_load(void) {
    static ErlNifEnv *env; /* its terms live as long as the server */
    if (env) return 0;
    env = enif_alloc_env();
    if (env) {
        wb_levenshtein_load(env);
        wb_fuzzy_score_load(env);
        wb_fuzzy_editops_load(env);
    }
    if (!wb_ext_env_ok(env)) {
        fprintf(stderr, "wb_external: out of memory at load\n");
        enif_free_env(env);
        env = NULL;
        return -1;
    }
    return 0;
}

/* The NIF library Elixir.WellBehaved.Native: the Levenshtein and search jobs
 * run by the scheduling runtime, the runtime's own stats and settings, and the File
 * NIFs. */
#include "file_nif.h"
#include "jobs.h"

#include <stdlib.h>

WB_JOB_NIF(levenshtein, wb_levenshtein_job)
WB_JOB_NIF(search, wb_search_job)
WB_JOB_NIF(search_index, wb_search_index_job)
WB_JOB_NIF(search_sorted, wb_search_sorted_job)
WB_JOB_NIF(fuzzy_score, wb_fuzzy_score_job)
WB_JOB_NIF(fuzzy_search, wb_fuzzy_search_job)
WB_JOB_NIF(fuzzy_cdist_row, wb_fuzzy_cdist_job)
WB_JOB_NIF(fuzzy_editops, wb_fuzzy_editops_job)

static ErlNifFunc nif_funcs[] = {
    {"levenshtein", 7, levenshtein, 0},
    {"levenshtein_short", 4, wb_levenshtein_short, 0},
    {"levenshtein_paths", 0, wb_levenshtein_paths, 0},
    {"search", 9, search, 0},
    {"search_index", 5, search_index, 0},
    {"search_sorted", 5, search_sorted, 0},
    {"pack_new", 1, wb_pack_new, 0},
    {"pack_more", 2, wb_pack_more, 0},
    {"pack_release", 1, wb_pack_release, 0},
    {"pack_keep", 1, wb_pack_keep, 0},
    {"pack_slice", 3, wb_pack_slice, 0},
    {"pack_pick", 2, wb_pack_pick, 0},
    {"pack_ascii", 1, wb_pack_ascii, 0},
    {"pack_hash", 1, wb_pack_hash, 0},
    {"pack_find", 2, wb_pack_find, 0},
    {"hits_more", 2, wb_hits_more, 0},
    {"distances_more", 3, wb_distances_more, 0},
    {"fuzzy_score", 7, fuzzy_score, 0},
    {"fuzzy_score_short", 4, wb_fuzzy_score_short, 0},
    {"fuzzy_search", 9, fuzzy_search, 0},
    {"fuzzy_cdist_row", 10, fuzzy_cdist_row, 0},
    {"fuzzy_editops", 7, fuzzy_editops, 0},
    {"fuzzy_default_process", 1, wb_fuzzy_default_process, 0},
    {"fuzzy_fold", 2, wb_fuzzy_fold, 0},
    {"fuzzy_graphemes_scan", 2, wb_fuzzy_graphemes_scan, 0},
    {"fuzzy_names", 0, wb_fuzzy_names, 0},
    {"fuzzy_matrix_new", 3, wb_fuzzy_matrix_new, 0},
    {"fuzzy_matrix_binary", 1, wb_fuzzy_matrix_binary, 0},
    WB_RUNTIME_NIFS,
    WB_FILE_NIFS,
};

/* ---- large blocks (jobs.h) ------------------------------------------------------ */

void *wb_block_alloc(size_t bytes) {
    return bytes > WB_BLOCK_VM_MOST ? malloc(bytes) : enif_alloc(bytes);
}

void wb_block_free_now(void *block, size_t bytes) {
    if (!block) return;
    if (bytes > WB_BLOCK_VM_MOST)
        free(block);
    else
        enif_free(block);
}

void wb_block_free(void *block, size_t bytes) {
    if (!block) return;
    if (bytes > WB_BLOCK_VM_MOST)
        wb_free_later(block, bytes);
    else
        wb_release_block_later(enif_free, block, bytes);
}

/* realloc out of line: GCC's -Wmismatched-dealloc otherwise takes the
 * enif_free of the branch that moves a block for one after realloc */
static __attribute__((noinline)) void *libc_realloc(void *block, size_t bytes) {
    return realloc(block, bytes);
}

void *wb_block_realloc(void *block, size_t old, size_t bytes) {
    if (old <= WB_BLOCK_VM_MOST && bytes <= WB_BLOCK_VM_MOST) return enif_realloc(block, bytes);
    if (old > WB_BLOCK_VM_MOST && bytes > WB_BLOCK_VM_MOST) return libc_realloc(block, bytes);
    void *moved = wb_block_alloc(bytes);
    if (!moved) return NULL;
    memcpy(moved, block, old < bytes ? old : bytes);
    wb_block_free_now(block, old);
    return moved;
}

static wb_job_type *const types[] = {
    &wb_levenshtein_job,   &wb_search_job,        &wb_search_index_job,
    &wb_search_sorted_job, &wb_fuzzy_score_job,   &wb_fuzzy_search_job,
    &wb_fuzzy_cdist_job,   &wb_fuzzy_editops_job, NULL};

/* What the library loads beside the runtime: its atoms, allocators and
 * resource types (packed lists, results, matrices, files). */
static int library_load(ErlNifEnv *env, ERL_NIF_TERM load_info) {
    (void)load_info;
    wb_levenshtein_load(env);
    wb_fuzzy_editops_load(env);
    if (wb_fuzzy_load(env)) return 1;
    if (wb_search_load(env) || wb_file_load(env)) {
        wb_search_unload();
        return 1;
    }
    return 0;
}

/* After the runtime's unload, which waits for the files and memory it was
 * given to release. */
static void library_unload(ErlNifEnv *env) {
    (void)env;
    wb_search_unload();
}

WB_NIF_INIT_WITH(Elixir.WellBehaved.Native, nif_funcs, types, library_load, library_unload)

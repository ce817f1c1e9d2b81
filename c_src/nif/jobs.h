/* The job types this library registers with the runtime. */
#ifndef WB_JOBS_H
#define WB_JOBS_H

#include <wb_runtime.h>

#include "../fuzzy/fuzzy.h"
#include "../search/search.h"

#include <string.h>

/* Large blocks of the NIF glue (match tables, packed lists): from the VM's
 * allocators up to WB_BLOCK_VM_MOST, which keep freed memory for reuse
 * (fresh memory costs a page fault per 4 KiB, some microseconds each on a
 * virtual machine, on every call); from the C library's beyond (the VM's
 * would keep such blocks). Each is freed with its size. */
#define WB_BLOCK_VM_MOST (64u << 20)

void *wb_block_alloc(size_t bytes);
/* Here and now. */
void wb_block_free_now(void *block, size_t bytes);
/* Off the scheduler from WB_RELEASE_LATER_FROM on. */
void wb_block_free(void *block, size_t bytes);
/* NULL when out of memory (the block is then left as it was). */
void *wb_block_realloc(void *block, size_t old, size_t bytes);

extern wb_job_type wb_levenshtein_job;
void wb_levenshtein_load(ErlNifEnv *env);
/* levenshtein_short(A, B, Unit, MaxDistance): the distance of a short pair
 * (wb_lev_short: at most 512 bytes in all, one side a word once the common
 * affixes go or a cutoff of at most 3, ASCII for codepoints, under 2 us),
 * computed in the call itself, with no job; `long` for any other pair, for
 * the job. */
ERL_NIF_TERM wb_levenshtein_short(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* levenshtein_paths(): {PairColumns, Lanes}, the ways this CPU computes
 * (wb_lev_path_name, wb_search_lanes_name) as atoms */
ERL_NIF_TERM wb_levenshtein_paths(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* The arguments every Levenshtein job shares (levenshtein_job.c): the
 * unit (byte | codepoint) and the cutoff (an integer, or nil for none). */
bool wb_get_unit(ErlNifEnv *env, ERL_NIF_TERM term, bool *codepoints);
bool wb_get_cutoff(ErlNifEnv *env, ERL_NIF_TERM term, size_t *max_distance);
/* search_job.c: one query against many candidates, and the index */
extern wb_job_type wb_search_job;
extern wb_job_type wb_search_index_job;
/* sorted_job.c: an index's candidates with their tokens sorted, an index
 * of their own (search_sorted) */
extern wb_job_type wb_search_sorted_job;
int wb_search_load(ErlNifEnv *env);
/* pack.c: pack_new(Count), pack_more(Packed, List): a list of binaries copied into
 * native memory a slice at a time, for search and search_index */
ERL_NIF_TERM wb_pack_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_pack_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* pack_release(Packed): a packed list searched for the last time gives its
 * memory back now, kept for the next list packed */
ERL_NIF_TERM wb_pack_release(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* pack_keep(Packed): a sealed packed list whose bytes binaries may share
 * from now on (never released early by pack_release); pack_slice(Packed,
 * From, Count) and pack_pick(Packed, [Index]): its candidates as binaries
 * over its memory, no copy, at most 4096 a call */
ERL_NIF_TERM wb_pack_keep(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_pack_slice(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_pack_pick(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* pack_ascii(Packed): whether its bytes are all ASCII (found when packed) */
ERL_NIF_TERM wb_pack_ascii(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* pack_hash(Packed): a kept set's candidates hashed by their bytes, a
 * slice at a time (more | done); pack_find(Packed, [Binary]): the
 * positions of the candidates equal to one of the binaries */
ERL_NIF_TERM wb_pack_hash(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_pack_find(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* frees what the search glue keeps between calls, after the runtime's unload */
void wb_search_unload(void);
/* A packed list or an index (term) of `count` candidates, ready to search:
 * its set, and the resource holding it (not kept: keep it for as long as a
 * job reads the set, then drop it). */
bool wb_search_set_get(ErlNifEnv *env, ERL_NIF_TERM term, size_t count, void **holder,
                       const wb_search_set **set);
void wb_search_set_keep(void *holder);
void wb_search_set_drop(void *holder);
/* fuzzy_score_job.c: a score of two binaries; the options every fuzzy job
 * takes (a server of the library's job types has this file, not
 * fuzzy_job.c's searches) */
extern wb_job_type wb_fuzzy_score_job;
void wb_fuzzy_score_load(ErlNifEnv *env);
bool wb_fuzzy_get_options(ErlNifEnv *env, ERL_NIF_TERM term, bool codepoints, wb_fz_options *o);
/* fuzzy_editops_job.c: the edit script of two binaries (a server of the
 * library's job types has it too) */
extern wb_job_type wb_fuzzy_editops_job;
void wb_fuzzy_editops_load(ErlNifEnv *env);
/* fuzzy_job.c: one query against many candidates */
extern wb_job_type wb_fuzzy_search_job;
/* and a row of cdist, written into a matrix (fuzzy_matrix_new) */
extern wb_job_type wb_fuzzy_cdist_job;
int wb_fuzzy_load(ErlNifEnv *env);
/* fuzzy_score_short(A, B, Unit, Options): a short pair's score in the call
 * itself, or `long` (the pair is then the job's) */
ERL_NIF_TERM wb_fuzzy_score_short(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* fuzzy_matrix_new(Rows, Cols, Width), fuzzy_matrix_binary(Matrix): the
 * matrix cdist's row jobs write into, and its cells as one binary */
ERL_NIF_TERM wb_fuzzy_matrix_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_fuzzy_matrix_binary(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* fuzzy_text.c: fuzzy_default_process(Binary), the default processor done
 * natively for ASCII text of up to 64 KiB (`other` for any other text);
 * fuzzy_fold(Binary, From), the folding processor a chunk a call;
 * fuzzy_graphemes_scan(Binary, From), whether text needs grapheme
 * clusters, a chunk a call */
ERL_NIF_TERM wb_fuzzy_default_process(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_fuzzy_fold(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_fuzzy_graphemes_scan(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
void wb_fuzzy_text_load(ErlNifEnv *env);
/* fuzzy_names(): {Scorers, Kinds}, the atoms the C side knows, in order */
ERL_NIF_TERM wb_fuzzy_names(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* hits_more(Hits, List): a long result of nearest made a slice at a time */
ERL_NIF_TERM wb_hits_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* distances_more(Distances, Count, List): the list of a long distances
 * result (a binary of native 32-bit words) made a slice at a time */
ERL_NIF_TERM wb_distances_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#endif

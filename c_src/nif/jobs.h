/* The job types this library registers with the runtime. */
#ifndef WB_JOBS_H
#define WB_JOBS_H

#include <wb_runtime.h>

#include <string.h>

extern wb_job_type wb_levenshtein_job;
void wb_levenshtein_load(ErlNifEnv *env);
/* levenshtein_short(A, B, Unit, MaxDistance): the distance of a short pair
 * (wb_lev_short: at most 512 bytes in all, ASCII for codepoints, under
 * 2 us), computed in the call itself, with no job; `long` for any other
 * pair, for the job. */
ERL_NIF_TERM wb_levenshtein_short(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* The arguments every Levenshtein job shares (levenshtein_job.c): the
 * unit (byte | codepoint) and the cutoff (an integer, or nil for none). */
bool wb_get_unit(ErlNifEnv *env, ERL_NIF_TERM term, bool *codepoints);
bool wb_get_cutoff(ErlNifEnv *env, ERL_NIF_TERM term, size_t *max_distance);
/* search_job.c: one query against many candidates, and the index */
extern wb_job_type wb_search_job;
extern wb_job_type wb_search_index_job;
int wb_search_load(ErlNifEnv *env);
/* pack_new(Count), pack_more(Packed, List): a list of binaries copied into
 * native memory a slice at a time, for search and search_index */
ERL_NIF_TERM wb_pack_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_pack_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* hits_more(Hits, List): a long result of nearest made a slice at a time */
ERL_NIF_TERM wb_hits_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* distances_more(Distances, Count, List): the list of a long distances
 * result (a binary of native 32-bit words) made a slice at a time */
ERL_NIF_TERM wb_distances_more(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);

#endif

/* The job types this library registers with the runtime. */
#ifndef WB_JOBS_H
#define WB_JOBS_H

#include "../runtime/wb_runtime.h"

#include <string.h>

extern wb_job_type wb_levenshtein_job;
void wb_levenshtein_load(void);
extern wb_job_type wb_spin_job;
extern wb_job_type wb_spin_until_job;
extern wb_job_type wb_echo_job;

/* echo NIFs (echo_nif.c) */
ERL_NIF_TERM wb_echo(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_echo_yield(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_echo_thread_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* the :thread_new threads' registry: 0 on success; unload joins them all */
int wb_echo_load(void);
void wb_echo_unload(void);

#endif

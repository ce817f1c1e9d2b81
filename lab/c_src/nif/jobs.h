/* The lab's job types and echo NIFs, on the runtime's SDK. */
#ifndef WB_LAB_JOBS_H
#define WB_LAB_JOBS_H

#include <wb_runtime.h>

#include <string.h>

extern wb_job_type wb_spin_job;
extern wb_job_type wb_spin_until_job;
extern wb_job_type wb_echo_job;

/* echo NIFs (echo_nif.c) */
ERL_NIF_TERM wb_echo(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_echo_yield(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM wb_echo_thread_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
/* the :thread_new threads' registry and the echo atoms: 0 on success;
 * unload joins every thread */
int wb_echo_load(ErlNifEnv *env);
void wb_echo_unload(void);

#endif

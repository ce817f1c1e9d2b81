/* The job types this library registers with the runtime. */
#ifndef WB_JOBS_H
#define WB_JOBS_H

#include <wb_runtime.h>

#include <string.h>

extern wb_job_type wb_levenshtein_job;
void wb_levenshtein_load(ErlNifEnv *env);

#endif

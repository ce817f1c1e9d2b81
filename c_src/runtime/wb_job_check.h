/* What is wrong with a job type, or NULL when it can run: the runtime's
 * check at load (wb_runtime.c) and a job server's at start (wb_ext_jobs.c). */
#ifndef WB_JOB_CHECK_H
#define WB_JOB_CHECK_H

#include <wb_runtime.h>

/* job types per library (or server) */
#define WB_MAX_JOB_TYPES 32

static inline const char *wb_job_type_problem(const wb_job_type *type) {
    if (!type->name || !type->name[0]) return "it has no name";
    if (type->argc < 0 || type->argc > WB_MAX_JOB_ARGS) return "argc is outside 0..WB_MAX_JOB_ARGS";
    if (type->args_size > WB_MAX_ARGS_SIZE) return "args_size exceeds WB_MAX_ARGS_SIZE";
    if (!type->decode) return "the required callback decode is NULL";
    if (!type->predict) return "the required callback predict is NULL";
    if (!type->init) return "the required callback init is NULL";
    if (!type->step) return "the required callback step is NULL";
    if (!type->result == !type->take_result)
        return "exactly one of the callbacks result and take_result must be set";
    return NULL;
}

#endif

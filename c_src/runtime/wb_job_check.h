/* What the runtime (wb_runtime.c) and a job server (wb_ext_jobs.c) both
 * ask of job types: whether a list of them can run, and how much of a
 * job's heap memory is counted. */
#ifndef WB_JOB_CHECK_H
#define WB_JOB_CHECK_H

#include <stdio.h>
#include <wb_runtime.h>

/* job types per library (or server) */
#define WB_MAX_JOB_TYPES 32
/* What a job can report holding (its memory callback) is clamped here: no
 * process owns more address space (x86-64 and AArch64 user space), and the
 * shared counters stay far from overflow. */
#define WB_JOB_MEMORY_MAX ((size_t)1 << 47)

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

/* true when every type of the NULL-terminated list can run and there are
 * at most WB_MAX_JOB_TYPES; otherwise false, with the reason on standard
 * error after `who` */
static inline bool wb_job_types_ok(wb_job_type *const types[], const char *who) {
    if (!types) {
        fprintf(stderr, "%s: the list of job types is NULL\n", who);
        return false;
    }
    for (int i = 0; types[i]; i++) {
        const char *problem = wb_job_type_problem(types[i]);
        if (!problem && i >= WB_MAX_JOB_TYPES) problem = "more than 32 job types in one list";
        if (problem) {
            fprintf(stderr, "%s: job type %d (\"%s\") refused: %s\n", who, i,
                    types[i]->name ? types[i]->name : "", problem);
            return false;
        }
    }
    return true;
}

#endif

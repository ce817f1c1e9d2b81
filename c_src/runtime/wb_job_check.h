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

/* Why a list of job types is refused. wb_runtime_load returns
 * wb_load_refusal(index, problem), which the load callback hands to the
 * VM as it is; WellBehaved.SDK.load_result/1 reads it back from the VM's
 * "Library load-call unsuccessful (N)" and names the type's index and the
 * problem (lib/well_behaved/sdk.ex keeps the same numbers). */
enum wb_job_problem {
    WB_JOB_FINE = 0,
    WB_JOB_NO_NAME = 1,
    WB_JOB_BAD_ARGC = 2,
    WB_JOB_BAD_ARGS_SIZE = 3,
    WB_JOB_NO_DECODE = 4,
    WB_JOB_NO_PREDICT = 5,
    WB_JOB_NO_INIT = 6,
    WB_JOB_NO_STEP = 7,
    WB_JOB_NO_RESULT = 8,       /* neither result nor take_result */
    WB_JOB_TWO_RESULTS = 9,     /* both result and take_result */
    WB_JOB_TOO_MANY_TYPES = 10, /* at the index past the last one allowed */
    WB_JOB_NO_LIST = 11,        /* the list itself is NULL (index 0) */
};

/* "WB" in the high half: a code no load callback returns by chance */
#define WB_LOAD_REFUSED 0x57420000

static inline int wb_load_refusal(int index, enum wb_job_problem problem) {
    return WB_LOAD_REFUSED + index * 256 + (int)problem;
}

static inline enum wb_job_problem wb_job_type_check(const wb_job_type *type) {
    if (!type->name || !type->name[0]) return WB_JOB_NO_NAME;
    if (type->argc < 0 || type->argc > WB_MAX_JOB_ARGS) return WB_JOB_BAD_ARGC;
    if (type->args_size > WB_MAX_ARGS_SIZE) return WB_JOB_BAD_ARGS_SIZE;
    if (!type->decode) return WB_JOB_NO_DECODE;
    if (!type->predict) return WB_JOB_NO_PREDICT;
    if (!type->init) return WB_JOB_NO_INIT;
    if (!type->step) return WB_JOB_NO_STEP;
    if (!type->result && !type->take_result) return WB_JOB_NO_RESULT;
    if (type->result && type->take_result) return WB_JOB_TWO_RESULTS;
    return WB_JOB_FINE;
}

static inline const char *wb_job_problem_text(enum wb_job_problem problem) {
    switch (problem) {
    case WB_JOB_FINE:
        return "none";
    case WB_JOB_NO_NAME:
        return "it has no name";
    case WB_JOB_BAD_ARGC:
        return "argc is outside 0..WB_MAX_JOB_ARGS";
    case WB_JOB_BAD_ARGS_SIZE:
        return "args_size exceeds WB_MAX_ARGS_SIZE";
    case WB_JOB_NO_DECODE:
        return "the required callback decode is NULL";
    case WB_JOB_NO_PREDICT:
        return "the required callback predict is NULL";
    case WB_JOB_NO_INIT:
        return "the required callback init is NULL";
    case WB_JOB_NO_STEP:
        return "the required callback step is NULL";
    case WB_JOB_NO_RESULT:
        return "neither result nor take_result is set";
    case WB_JOB_TWO_RESULTS:
        return "both result and take_result are set";
    case WB_JOB_TOO_MANY_TYPES:
        return "more than 32 job types in one list";
    case WB_JOB_NO_LIST:
        return "the list of job types is NULL";
    }
    return "unknown";
}

/* WB_JOB_FINE when every type of the NULL-terminated list can run and
 * there are at most WB_MAX_JOB_TYPES; otherwise the first problem, with
 * the index of the type it concerns in *index. */
static inline enum wb_job_problem wb_job_types_check(wb_job_type *const types[], int *index) {
    *index = 0;
    if (!types) return WB_JOB_NO_LIST;
    for (int i = 0; types[i]; i++) {
        *index = i;
        if (i >= WB_MAX_JOB_TYPES) return WB_JOB_TOO_MANY_TYPES;
        enum wb_job_problem problem = wb_job_type_check(types[i]);
        if (problem != WB_JOB_FINE) return problem;
    }
    *index = 0;
    return WB_JOB_FINE;
}

/* The same as a yes or no, with the reason on standard error after `who`
 * (for a server program, which has no other channel at its start). */
static inline bool wb_job_types_ok(wb_job_type *const types[], const char *who) {
    int i;
    enum wb_job_problem problem = wb_job_types_check(types, &i);
    if (problem == WB_JOB_FINE) return true;
    if (problem == WB_JOB_NO_LIST)
        fprintf(stderr, "%s: %s\n", who, wb_job_problem_text(problem));
    else
        fprintf(stderr, "%s: job type %d (\"%s\") refused: %s\n", who, i,
                types[i]->name ? types[i]->name : "", wb_job_problem_text(problem));
    return false;
}

#endif

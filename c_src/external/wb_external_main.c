/*
 * wb_external SOCKET_PATH [--remove-dir]: the built-in external server
 * (WellBehaved.External's built-in pool): the library's own job types
 * (c_src/nif/levenshtein_job.c, with wb_ext_library.c) served as an SDK
 * server serves a user's (wb_ext_jobs.c, wb_ext_server.c), so that
 * schedule: :external runs them by the same path as any job ({wb_job,
 * Name, Tiny, Args}, WellBehaved.Job.call/4), and echo.
 */
#include <wb_runtime.h>

#include "wb_external.h"

int main(int argc, char **argv) {
    if (wb_ext_library_load() != 0) return 1;
    return wb_external_main(argc, argv, wb_ext_library_types);
}

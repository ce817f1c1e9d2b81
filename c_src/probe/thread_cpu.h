/*
 * The CPU time of a process's threads, by name, from Linux's
 * /proc/<pid>/task/<tid>/comm and schedstat (whose first field is the
 * thread's time on a CPU, in ns). WellBehaved.Probe uses it to see how much
 * work the VM did off its normal schedulers (dirty schedulers, native
 * threads) while a function ran. Pure C: no erl_nif (the NIF glue is in
 * turn_tracer_nif.c).
 */
#ifndef WB_THREAD_CPU_H
#define WB_THREAD_CPU_H

#include <stdbool.h>
#include <stdint.h>

/* True for the name of a normal scheduler thread of the VM:
 * "<digits>_scheduler" (the dirty ones are "<n>_dirty_cpu_sch...",
 * "<n>_dirty_io_sch..."), with or without the newline comm ends with. */
bool wb_is_normal_scheduler(const char *name);

/* The sum of the CPU time of the threads under `task_dir` (such as
 * "/proc/self/task") whose name is not a normal scheduler's, in ns; -1 when
 * the directory cannot be read. A thread that ends while it is read, or
 * whose files do not parse, counts 0. */
int64_t wb_other_threads_cpu_ns(const char *task_dir);

#endif

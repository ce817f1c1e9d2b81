/* What a job's work costs: each step bounded by the clock (the deadline
 * wb_slice_spent answers from), how many units to do between clock reads,
 * and the cost per unit each type learns from its timed steps and runs,
 * which :auto predicts from. */
#include "wb_runtime_internal.h"

/* When the step running on this thread should return (clock_ns), or 0
 * while no step runs or the step has no time limit (a :normal run); and
 * when it began or last asked wb_slice_spent. */
static _Thread_local int64_t step_deadline, step_asked;

/* Stops where the step's end falls nearest the deadline: now, when the
 * work until the next call, as long as the work since the last, would
 * run further past it than now falls short of it. */
bool wb_slice_spent(void) {
    if (step_deadline == 0) return false;
    int64_t now = clock_ns(), since = now - step_asked;
    step_asked = now;
    return now + since / 2 >= step_deadline;
}

/* Runs one step of the job within `ns` from `now` (0: no limit). */
bool wb_rt_step_within(const wb_job_type *type, void *state, uint64_t budget, uint64_t *used,
                       int64_t now, int64_t ns) {
    step_deadline = ns > 0 ? now + ns : 0;
    step_asked = now;
    bool done = type->step(state, budget, used);
    step_deadline = 0;
    return done;
}

/* The type's first cost measured on this machine replaces the seed whole. */
static void set_measured(registered_type *t, uint64_t ps) {
    atomic_store_explicit(&t->ps_per_unit, ps ? ps : 1, memory_order_relaxed);
    atomic_store_explicit(&t->measured, true, memory_order_relaxed);
}

/* Learns from an :auto :normal run of a type not yet measured: such runs
 * are small, so their units and time add up across calls until they make
 * MEASURE_MIN_NS, and that sum is the type's first measure. */
void wb_rt_learn_probe(registered_type *t, uint64_t units, int64_t ns) {
    if (units == 0 || ns <= 0) return;
    uint64_t all_units = atomic_fetch_add_explicit(&t->probe_units, units, memory_order_relaxed);
    int64_t all_ns = atomic_fetch_add_explicit(&t->probe_ns, ns, memory_order_relaxed);
    all_units += units;
    all_ns += ns;
    if (all_ns < MEASURE_MIN_NS) return;
    atomic_store_explicit(&t->probe_units, 0, memory_order_relaxed);
    atomic_store_explicit(&t->probe_ns, 0, memory_order_relaxed);
    set_measured(t, (uint64_t)((double)all_ns * 1000.0 / (double)all_units));
}

/* Learns from a timed step: retunes how many units to do between clock
 * reads, and, once enough time has been gathered to time well, the type's
 * cost per unit (running average, 1/8 weight). Both are ratios of the same
 * quantities (units and nanoseconds), so they converge. */
void wb_rt_learn(wb_job *job, uint64_t units, int64_t ns) {
    if (units == 0 || ns <= 0) return;
    job->work_units += units;
    job->work_ns += ns;
    uint64_t ideal = (uint64_t)((double)units * (double)job->check_ns / (double)ns);
    /* grow at most 2x per check (a normal run has no previous budget) */
    uint64_t cap = job->units_per_check ? job->units_per_check * 2 : MAX_UNITS_PER_CHK;
    if (ideal > cap) ideal = cap;
    if (ideal > MAX_UNITS_PER_CHK) ideal = MAX_UNITS_PER_CHK;
    job->units_per_check = ideal ? ideal : 1;
    /* tiny-slice runs measure per-step overhead, not the work */
    if (job->tiny) return;
    job->learn_units += units;
    job->learn_ns += ns;
    /* Learn once the work done is big enough to time well, judged by its
     * predicted time, never by its measured time: choosing runs because
     * they took long would choose the ones the OS preempted, and a
     * stream of small jobs would ratchet the estimate up. A seed not yet
     * measured predicts nothing: the first measure is taken whole once
     * the work has run that long. */
    registered_type *t = job->learned;
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    bool measured = atomic_load_explicit(&t->measured, memory_order_relaxed);
    if (measured ? units_ns(job->learn_units, old) < MEASURE_MIN_NS
                 : job->learn_ns < MEASURE_MIN_NS)
        return;
    uint64_t ps = (uint64_t)((double)job->learn_ns * 1000.0 / (double)job->learn_units);
    job->learn_units = 0;
    job->learn_ns = 0;
    if (!measured) {
        set_measured(t, ps);
        return;
    }
    /* one preempted step must not move the estimate far: clamp to 2x */
    if (ps > old * 2) ps = old * 2;
    if (ps < old / 2) ps = old / 2;
    uint64_t next = old - old / 8 + ps / 8;
    atomic_store_explicit(&job->learned->ps_per_unit, next ? next : 1, memory_order_relaxed);
}

/* Learns from a whole :normal run that :auto chose. A run that took more
 * than two slices was predicted under one: the cost per unit is too low by
 * more than 2x, maybe by 100x (a job type's seed far off on this machine).
 * learn moves the estimate by at most 2x per run and only for work
 * predicted long enough to time, so such a type could run :normal for
 * ever; the cost jumps to the measured one instead, and the next call
 * yields. But one run can overrun by chance: the OS preempted its thread,
 * or the hypervisor took the CPU (a 10-byte pair once took 20 us, and its
 * one unit set the cost 10,000x too high: every later call was sliced,
 * with a dirty hop for its set-up, 60x slower). So the cost jumps on the
 * second overrun in a row of the type's timed runs; a run that does not
 * overrun resets the count. */
#define OVERRUNS_TO_JUMP 2
void wb_rt_learn_run(wb_job *job, uint64_t units, int64_t ns) {
    registered_type *t = job->learned;
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    if (units > 0 && ns > 2 * setting_ns(&wb_rt_slice_ns)) {
        uint64_t ps = (uint64_t)((double)ns * 1000.0 / (double)units);
        if (ps > old) {
            if (atomic_fetch_add_explicit(&t->overruns, 1, memory_order_relaxed) + 1 >=
                OVERRUNS_TO_JUMP) {
                atomic_store_explicit(&t->overruns, 0, memory_order_relaxed);
                atomic_store_explicit(&t->ps_per_unit, ps, memory_order_relaxed);
            }
            return;
        }
    }
    atomic_store_explicit(&t->overruns, 0, memory_order_relaxed);
    wb_rt_learn(job, units, ns);
}

/* At the end of a sliced job that :auto chose because its prediction was
 * over wb_rt_normal_max_ns: when the work measured under half of that, and the
 * job was too small for learn to have used it, the cost was too high (it
 * jumped on runs the machine stretched twice in a row). Such jobs would
 * never learn (their predicted time is under what learn needs), and every
 * call would be sliced: the cost halves, at most down to the measured one. */
void wb_rt_learn_small_sliced(wb_job *job) {
    if (!job->chosen_by_auto || job->tiny || job->work_units == 0) return;
    if (2 * job->work_ns >= setting_ns(&wb_rt_normal_max_ns)) return;
    registered_type *t = job->learned;
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    uint64_t ps = (uint64_t)((double)job->work_ns * 1000.0 / (double)job->work_units);
    if (ps >= old) return;
    uint64_t next = ps > old / 2 ? ps : old / 2;
    atomic_store_explicit(&t->ps_per_unit, next ? next : 1, memory_order_relaxed);
}

/* After an :auto :normal run that needed more units than predicted: the
 * cost per unit becomes high enough that `predicted` units reach the
 * threshold twice over (at least double). Sliced runs learn it back down
 * from the units their steps report. */
void wb_rt_outran_prediction(registered_type *t, uint64_t predicted) {
    uint64_t old = atomic_load_explicit(&t->ps_per_unit, memory_order_relaxed);
    double want = 2.0 * (double)setting_ns(&wb_rt_normal_max_ns) * 1000.0 /
                  (double)(predicted ? predicted : 1);
    uint64_t next = old > UINT64_MAX / 4 ? old : old * 2;
    if (want > (double)next) next = want >= 1e18 ? (uint64_t)1e18 : (uint64_t)want;
    atomic_store_explicit(&t->ps_per_unit, next, memory_order_relaxed);
}

/* Units to do before the next clock read; the first guess comes from the
 * type's measured cost (computed here, not in wb_rt_job_prepare, so that one-call
 * normal jobs never pay for the division). */
uint64_t wb_rt_next_budget(wb_job *job) {
    if (job->tiny) return 1;
    if (job->units_per_check == 0) {
        /* a seed not measured yet may be off by any factor: start at one
         * unit, and learn grows the steps at most 2x per clock read */
        uint64_t ps = atomic_load_explicit(&job->learned->ps_per_unit, memory_order_relaxed);
        uint64_t units = atomic_load_explicit(&job->learned->measured, memory_order_relaxed)
                             ? (uint64_t)job->check_ns * 1000 / (ps ? ps : 1)
                             : 1;
        job->units_per_check = units ? units : 1;
    }
    return job->units_per_check;
}
/* One step of about wb_rt_next_budget units, timed and learned from; *last is
 * the clock at the step's start, and becomes its end. True when done. */
bool wb_rt_timed_step(wb_job *job, int64_t *last) {
    uint64_t units = 0;
    bool done = wb_rt_step_within(job->type, job->state, wb_rt_next_budget(job), &units, *last,
                                  job->check_ns);
    int64_t now = clock_ns();
    wb_rt_learn(job, units, now - *last);
    *last = now;
    return done;
}

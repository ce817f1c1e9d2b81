/* The thread CPU reader (thread_cpu.c) against task directories made by
 * hand, and against this process's own threads; under AddressSanitizer and
 * UBSan in make test. */
#define _GNU_SOURCE
#include "../test/check.h"
#include "thread_cpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void test_names(void) {
    CHECK(wb_is_normal_scheduler("1_scheduler"), "1_scheduler");
    CHECK(wb_is_normal_scheduler("12_scheduler\n"), "with comm's newline");
    CHECK(!wb_is_normal_scheduler("1_dirty_cpu_sch\n"), "a dirty CPU scheduler");
    CHECK(!wb_is_normal_scheduler("10_dirty_io_sch"), "a dirty IO scheduler");
    CHECK(!wb_is_normal_scheduler("_scheduler"), "no number");
    CHECK(!wb_is_normal_scheduler("1_schedulers"), "more after the name");
    CHECK(!wb_is_normal_scheduler("1_schedule"), "less");
    CHECK(!wb_is_normal_scheduler("1_scheduler\nx"), "more after the newline");
    CHECK(!wb_is_normal_scheduler(""), "empty");
    CHECK(!wb_is_normal_scheduler("beam.smp"), "the main thread");
}

static void put(const char *dir, const char *tid, const char *file, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, tid);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/%s/%s", dir, tid, file);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void rm(const char *dir, const char *tid) {
    char path[512];
    const char *files[] = {"comm", "schedstat"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s/%s", dir, tid, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/%s", dir, tid);
    rmdir(path);
}

static void test_by_hand(void) {
    char dir[] = "/tmp/wb_thread_cpu_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    put(dir, "100", "comm", "1_scheduler\n");
    put(dir, "100", "schedstat", "5000000 10 3\n");
    put(dir, "101", "comm", "2_scheduler\n");
    put(dir, "101", "schedstat", "7000000 10 3\n");
    put(dir, "102", "comm", "1_dirty_cpu_sch\n");
    put(dir, "102", "schedstat", "200 10 3\n");
    put(dir, "103", "comm", "wb_pool\n");
    put(dir, "103", "schedstat", "30 0 1\n");
    put(dir, "104", "comm", "garbled\n");
    put(dir, "104", "schedstat", "x y z\n");
    put(dir, "105", "comm", "no schedstat\n"); /* a thread gone meanwhile */
    CHECK(wb_other_threads_cpu_ns(dir) == 230, "dirty + pool = 230, got %lld",
          (long long)wb_other_threads_cpu_ns(dir));
    put(dir, "106", "comm", "huge\n");
    put(dir, "106", "schedstat", "9223372036854775807 0 0\n");
    int64_t capped = wb_other_threads_cpu_ns(dir);
    CHECK(capped == 230 || capped == INT64_MAX, "no overflow, got %lld", (long long)capped);
    const char *tids[] = {"100", "101", "102", "103", "104", "105", "106"};
    for (int i = 0; i < 7; i++)
        rm(dir, tids[i]);
    rmdir(dir);
    CHECK(wb_other_threads_cpu_ns(dir) == -1, "a directory that is gone");
}

static int64_t thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* an ended thread leaves the task directory: the spinners wait for this */
static atomic_bool release;

static void *spin(void *arg) {
    _Atomic int64_t *spent = arg;
    volatile uint64_t x = 1;
    while (thread_cpu_ns() < 20000000) /* 20 ms of this thread's CPU */
        x = x * 6364136223846793005u + 1;
    atomic_store(spent, thread_cpu_ns());
    while (!atomic_load(&release))
        usleep(1000);
    return NULL;
}

/* A thread named as a normal scheduler is left out, one named otherwise
 * counted: both spin for 20 ms of their own CPU time, then sleep while the
 * task directory is read. */
static void test_own_threads(void) {
    int64_t before = wb_other_threads_cpu_ns("/proc/self/task");
    if (before < 0) {
        printf("no /proc/self/task: skipped\n");
        return;
    }
    pthread_t scheduler, worker;
    _Atomic int64_t scheduler_ns = 0, worker_ns = 0;
    pthread_create(&scheduler, NULL, spin, &scheduler_ns);
    pthread_setname_np(scheduler, "1_scheduler");
    pthread_create(&worker, NULL, spin, &worker_ns);
    pthread_setname_np(worker, "1_dirty_cpu_sch");
    while (atomic_load(&scheduler_ns) == 0 || atomic_load(&worker_ns) == 0)
        usleep(1000);
    int64_t after = wb_other_threads_cpu_ns("/proc/self/task");
    atomic_store(&release, true);
    pthread_join(scheduler, NULL);
    pthread_join(worker, NULL);
    /* the worker's 20 ms are in; the scheduler's would add 20 more, and
     * this thread's own reading and the sleepers' waking are far less */
    int64_t w = atomic_load(&worker_ns), s = atomic_load(&scheduler_ns);
    CHECK(after - before >= w, "the worker counted: %lld >= %lld", (long long)(after - before),
          (long long)w);
    CHECK(after - before < w + s, "the scheduler left out: %lld < %lld",
          (long long)(after - before), (long long)(w + s));
}

int main(void) {
    test_names();
    test_by_hand();
    test_own_threads();
    return CHECK_SUMMARY();
}

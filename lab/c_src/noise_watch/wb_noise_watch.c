/*
 * wb_noise_watch PID INTERVAL_MS: the lab's noise sampler, outside the VM.
 *
 * Every INTERVAL_MS it reads the machine's CPU counters (/proc/stat) and
 * process PID's CPU time (/proc/PID/stat) back to back, so the two agree
 * even while the VM being measured cannot run its own processes (a normal
 * NIF holding every scheduler). It sleeps between samples and notes how
 * late the OS woke it.
 *
 * Meanwhile one thread per online CPU, pinned to it, sleeps to every
 * whole millisecond and notes each wake-up more than STALL_NS late: a
 * stall of that CPU (the hypervisor ran something else, or the kernel did
 * not schedule a sleeping thread on time), which would have held up any
 * thread of the measured VM there too.
 *
 * The watchers ask for real-time priority (SCHED_FIFO), so that no ordinary
 * thread, the measured VM's included, can delay them: a late wake-up then
 * means the CPU itself was taken (by the hypervisor, or the kernel). Where
 * that is not allowed (no CAP_SYS_NICE, RLIMIT_RTPRIO 0) they run at normal
 * priority and their stalls include the VM's own load; the output says so.
 *
 * When a line arrives on stdin, or stdin closes, it takes a last sample,
 * prints every sample and stall and exits (times are CLOCK_MONOTONIC ns):
 *
 *   <ns> <cpu fields of /proc/stat ...> own <utime+stime ticks> late <ns>
 *   stall <cpu> <due ns> <woken ns>
 *   watchers <count> realtime <0|1>
 *
 * The arithmetic (busy, own and foreign cores, steal) is done by the
 * reader, WellBehaved.Lab.Noise.
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES 100000
#define CPU_FIELDS  10
#define MAX_CPUS    64
#define MAX_STALLS  20000   /* per CPU */
#define STALL_NS    250000  /* a wake-up this late is a stall */
#define TICK_NS     1000000 /* the stall watchers wake every millisecond */

typedef struct {
    int64_t at_ns;
    unsigned long long cpu[CPU_FIELDS];
    int ncpu;
    unsigned long long own;
    int64_t late_ns;
} sample;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct {
    int cpu;
    bool realtime;
    int n;
    int64_t due[MAX_STALLS], woken[MAX_STALLS];
} stall_log;

static atomic_bool stopping;

static void *watch_cpu(void *arg) {
    stall_log *log = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(log->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) return NULL;
    struct sched_param rt = {.sched_priority = sched_get_priority_min(SCHED_FIFO)};
    log->realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) == 0;
    int64_t due = (now_ns() / TICK_NS + 1) * TICK_NS;
    while (!atomic_load(&stopping)) {
        struct timespec t = {.tv_sec = due / 1000000000, .tv_nsec = due % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
        }
        int64_t woken = now_ns();
        if (woken - due > STALL_NS && log->n < MAX_STALLS) {
            log->due[log->n] = due;
            log->woken[log->n] = woken;
            log->n++;
        }
        /* the next whole millisecond after waking */
        due = (woken / TICK_NS + 1) * TICK_NS;
    }
    return NULL;
}

/* Reads a small /proc file whole; false when it cannot. */
static int read_file(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0;
}

/* The first line of /proc/stat: "cpu  user nice system idle ...". */
static int read_cpu(sample *s) {
    char buf[4096];
    if (!read_file("/proc/stat", buf, sizeof buf) || strncmp(buf, "cpu ", 4) != 0) return 0;
    char *p = buf + 4;
    s->ncpu = 0;
    while (s->ncpu < CPU_FIELDS) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || errno) break;
        s->cpu[s->ncpu++] = v;
        p = end;
        if (*p == '\n') break;
    }
    return s->ncpu >= 8;
}

/* utime + stime of a process: fields 14 and 15 of /proc/PID/stat, counted
 * after the command name, which ends with the last ')'. */
static int read_own(const char *path, sample *s) {
    char buf[4096];
    if (!read_file(path, buf, sizeof buf)) return 0;
    char *p = strrchr(buf, ')');
    if (!p) return 0;
    p++;
    /* field 3 (state) is the first after the name: skip fields 3..13 */
    for (int field = 3; field <= 13; field++) {
        p = strchr(p + 1, ' ');
        if (!p) return 0;
    }
    unsigned long long utime, stime;
    if (sscanf(p, " %llu %llu", &utime, &stime) != 2) return 0;
    s->own = utime + stime;
    return 1;
}

static int take(const char *own_path, sample *s, int64_t due_ns) {
    s->at_ns = now_ns();
    s->late_ns = due_ns > 0 && s->at_ns > due_ns ? s->at_ns - due_ns : 0;
    return read_cpu(s) && read_own(own_path, s);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s PID INTERVAL_MS\n", argv[0]);
        return 2;
    }
    long pid = strtol(argv[1], NULL, 10);
    long interval_ms = strtol(argv[2], NULL, 10);
    if (pid <= 0 || interval_ms <= 0 || interval_ms > 60000) {
        fprintf(stderr, "wb_noise_watch: bad PID or INTERVAL_MS\n");
        return 2;
    }
    char own_path[64];
    snprintf(own_path, sizeof own_path, "/proc/%ld/stat", pid);

    static sample samples[MAX_SAMPLES];
    static stall_log logs[MAX_CPUS];
    static pthread_t threads[MAX_CPUS];
    cpu_set_t online;
    int watchers = 0;
    if (sched_getaffinity(0, sizeof online, &online) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE && watchers < MAX_CPUS; cpu++) {
            if (!CPU_ISSET(cpu, &online)) continue;
            logs[watchers].cpu = cpu;
            if (pthread_create(&threads[watchers], NULL, watch_cpu, &logs[watchers]) == 0)
                watchers++;
        }
    }
    int n = 0;
    if (!take(own_path, &samples[n++], 0)) {
        fprintf(stderr, "wb_noise_watch: cannot read /proc/stat or %s\n", own_path);
        return 1;
    }
    /* the window starts here: the VM waits for this line before it goes
     * on (a busy machine can take 100 ms and more to start this program) */
    printf("ready\n");
    if (fflush(stdout) != 0) return 1;
    int64_t due = samples[0].at_ns + interval_ms * 1000000;
    for (;;) {
        int64_t wait_ns = due - now_ns();
        if (wait_ns < 0) wait_ns = 0;
        struct timespec wait = {.tv_sec = wait_ns / 1000000000, .tv_nsec = wait_ns % 1000000000};
        struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
        int ready = ppoll(&in, 1, &wait, NULL);
        if (ready < 0 && errno != EINTR) break;
        if (ready > 0) break; /* a line, or stdin closed: stop */
        if (ready == 0 && now_ns() >= due) {
            if (n < MAX_SAMPLES && take(own_path, &samples[n], due)) n++;
            due += interval_ms * 1000000;
        }
    }
    if (n < MAX_SAMPLES && take(own_path, &samples[n], 0)) n++;
    atomic_store(&stopping, true);
    for (int i = 0; i < watchers; i++)
        pthread_join(threads[i], NULL);

    for (int i = 0; i < n; i++) {
        printf("%" PRId64, samples[i].at_ns);
        for (int j = 0; j < samples[i].ncpu; j++)
            printf(" %llu", samples[i].cpu[j]);
        printf(" own %llu late %" PRId64 "\n", samples[i].own, samples[i].late_ns);
    }
    bool realtime = watchers > 0;
    for (int w = 0; w < watchers; w++)
        realtime = realtime && logs[w].realtime;
    printf("watchers %d realtime %d\n", watchers, realtime ? 1 : 0);
    for (int w = 0; w < watchers; w++)
        for (int i = 0; i < logs[w].n; i++)
            printf("stall %d %" PRId64 " %" PRId64 "\n", logs[w].cpu, logs[w].due[i],
                   logs[w].woken[i]);
    return fflush(stdout) == 0 ? 0 : 1;
}

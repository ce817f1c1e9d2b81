/* The turn log (turn_log.c) against turns worked out by hand and against
 * a reference pairing of random event streams, with writers on several
 * threads at once; under AddressSanitizer and UBSan in make test. */
#define _POSIX_C_SOURCE 200809L
#include "../test/check.h"
#include "turn_log.h"

#include <pthread.h>
#include <stdlib.h>

static void test_bounds(void) {
    CHECK(wb_turn_log_new(0) == NULL, "an empty log is refused");
    CHECK(wb_turn_log_new(WB_TURN_LOG_MAX + 1) == NULL, "an oversized log is refused");
    CHECK(wb_turn_log_new(SIZE_MAX) == NULL, "a size that would overflow is refused");
}

static void test_by_hand(void) {
    wb_turn_log *log = wb_turn_log_new(16);
    wb_turn turns[8];
    /* process 7: two turns on normal schedulers (1), one cut by the
     * window (an out first, an in last); process 9: one turn on a dirty
     * scheduler (2), interleaved with 7's events */
    wb_turn_log_add(log, 7, false, 1, 5, 5);   /* out without its in: skipped */
    wb_turn_log_add(log, 7, true, 1, 10, 100); /* turn 1: 10 -> 25 */
    wb_turn_log_add(log, 9, true, 2, 12, 500);
    wb_turn_log_add(log, 7, false, 1, 25, 112);
    wb_turn_log_add(log, 9, false, 2, 40, 520); /* 9: 12 -> 40, cpu 20 */
    wb_turn_log_add(log, 7, true, 1, 50, 200);
    wb_turn_log_add(log, 7, false, 1, 51, 201);
    wb_turn_log_add(log, 7, true, 1, 60, 300); /* in without its out: open */
    wb_turn_log_close(log, 100);
    long n = wb_turn_log_turns(log, turns);
    CHECK(n == 4, "4 turns, got %ld", n);
    CHECK(turns[0].key == 7 && turns[0].wall_ns == 15 && turns[0].cpu_ns == 12 && !turns[0].open,
          "7's first");
    CHECK(turns[1].key == 7 && turns[1].wall_ns == 1 && turns[1].cpu_ns == 1, "7's second");
    CHECK(turns[2].key == 7 && turns[2].open && turns[2].wall_ns == 40 && turns[2].cpu_ns == -1,
          "7's open turn, running from 60 until the close at 100");
    CHECK(turns[3].key == 9 && turns[3].wall_ns == 28 && turns[3].cpu_ns == 20 &&
              turns[3].thread == 2 && !turns[3].open,
          "9's turn");
    /* an in and an out on different kinds of thread are not a turn */
    wb_turn_log *mixed = wb_turn_log_new(4);
    wb_turn_log_add(mixed, 1, true, 1, 0, 0);
    wb_turn_log_add(mixed, 1, false, 2, 5, 5);
    CHECK(wb_turn_log_turns(mixed, turns) == 0, "no turn across thread kinds");
    wb_turn_log_free(mixed);
    wb_turn_log_free(log);
    /* a full log loses events and says so; a closed one takes none */
    wb_turn_log *full = wb_turn_log_new(8);
    CHECK(wb_turn_log_lost(full) == 0, "nothing lost yet");
    for (int i = 0; i < 8; i++)
        wb_turn_log_add(full, 3, i % 2 == 0, 1, i, i);
    CHECK(!wb_turn_log_add(full, 3, true, 1, 0, 0), "full");
    CHECK(wb_turn_log_lost(full) == 1, "one lost, got %zu", wb_turn_log_lost(full));
    wb_turn_log_free(full);
    /* every event an in of another process: as many open turns as events */
    wb_turn_log *ins = wb_turn_log_new(3);
    for (uint64_t k = 1; k <= 3; k++)
        wb_turn_log_add(ins, k, true, 1, (int64_t)k, 0);
    wb_turn_log_close(ins, 10);
    CHECK(wb_turn_log_turns(ins, turns) == 3 && turns[0].open && turns[0].wall_ns == 9 &&
              turns[2].wall_ns == 7,
          "three open turns");
    wb_turn_log_free(ins);
    wb_turn_log *closed = wb_turn_log_new(4);
    wb_turn_log_close(closed, 0);
    CHECK(!wb_turn_log_add(closed, 1, true, 1, 0, 0), "closed");
    CHECK(wb_turn_log_turns(closed, turns) == 0, "no turns in a closed empty log");
    wb_turn_log_free(closed);
}

/* Writers: each thread owns some processes and logs strictly alternating
 * in/out events for them, with known lengths; the turns read back must be
 * exactly those. */
#define THREADS    4
#define PER_THREAD 5000

typedef struct {
    wb_turn_log *log;
    int id;
} writer;

static void *write_events(void *arg) {
    writer *w = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        uint64_t key = (uint64_t)(w->id * 10 + i % 3);
        int64_t t = (int64_t)i * 100;
        wb_turn_log_add(w->log, key, true, 1, t, t);
        wb_turn_log_add(w->log, key, false, 1, t + (int64_t)(key + 1), t + 1);
    }
    return NULL;
}

static void test_concurrent(void) {
    wb_turn_log *log = wb_turn_log_new(THREADS * PER_THREAD * 2);
    pthread_t threads[THREADS];
    writer writers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        writers[i] = (writer){log, i};
        pthread_create(&threads[i], NULL, write_events, &writers[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    wb_turn_log_close(log, 0);
    wb_turn *turns = malloc(sizeof(wb_turn) * THREADS * PER_THREAD);
    long n = wb_turn_log_turns(log, turns);
    CHECK(n == THREADS * PER_THREAD, "every turn, got %ld", n);
    long wrong = 0;
    for (long i = 0; i < n; i++)
        if (turns[i].wall_ns != (int64_t)turns[i].key + 1 || turns[i].cpu_ns != 1) wrong++;
    CHECK(wrong == 0, "%ld turns with the wrong length", wrong);
    CHECK(wb_turn_log_lost(log) == 0, "nothing lost");
    free(turns);
    wb_turn_log_free(log);
}

int main(void) {
    test_bounds();
    test_by_hand();
    test_concurrent();
    return CHECK_SUMMARY();
}

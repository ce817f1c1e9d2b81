/*
 * A log of :running trace events (a process scheduled in or out), written
 * concurrently by the scheduler threads of the traced processes and read
 * once tracing has stopped, and the turns it holds: how long each process
 * ran each time it was scheduled in, in wall time and in the CPU time of
 * the thread that ran it. Pure C: no erl_nif (the tracer module's NIF glue
 * is turn_tracer_nif.c).
 */
#ifndef WB_TURN_LOG_H
#define WB_TURN_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WB_TURN_LOG_MAX (UINT64_C(1) << 26) /* events in one log, at most */

typedef struct {
    uint64_t key;    /* the process */
    int64_t wall_ns; /* a monotonic clock */
    int64_t cpu_ns;  /* the running thread's CPU clock */
    uint8_t in;      /* 1: scheduled in, 0: out */
    uint8_t thread;  /* the kind of thread, as the caller numbers them */
    atomic_bool ready;
} wb_turn_event;

typedef struct {
    size_t capacity;
    atomic_size_t next;     /* slots taken, possibly more than capacity */
    atomic_bool closed;     /* no more events */
    int64_t closed_ns;      /* when, on the events' wall clock */
    wb_turn_event events[]; /* capacity slots */
} wb_turn_log;

typedef struct {
    uint64_t key;
    int64_t wall_ns, cpu_ns; /* an open turn: cpu_ns -1 */
    uint8_t thread;
    bool open; /* still running when the log closed: wall_ns is until then */
} wb_turn;

/* A log for `capacity` events (1..WB_TURN_LOG_MAX), or NULL. */
wb_turn_log *wb_turn_log_new(size_t capacity);
void wb_turn_log_free(wb_turn_log *log);
/* Records an event; false when the log is closed or full (the event is
 * lost, and counted by wb_turn_log_lost). Any thread, concurrently. */
bool wb_turn_log_add(wb_turn_log *log, uint64_t key, bool in, uint8_t thread, int64_t wall_ns,
                     int64_t cpu_ns);
/* Takes no more events; `wall_ns`: now, on the events' wall clock. */
void wb_turn_log_close(wb_turn_log *log, int64_t wall_ns);
/* Events that did not fit, and slots taken but not written yet. */
size_t wb_turn_log_lost(const wb_turn_log *log);
/* The turns in the log: for each process, an `in` followed by its next
 * event, an `out` on the same kind of thread; and a process's last `in`
 * with no event after it, a turn still open when the log closed. Writes
 * at most one turn per event, so `capacity` turns, to `out` (allocated by
 * the caller) and returns how many; -1 when it cannot allocate its work space. Call once
 * the log is closed and its writers are done. */
long wb_turn_log_turns(const wb_turn_log *log, wb_turn *out);

#endif

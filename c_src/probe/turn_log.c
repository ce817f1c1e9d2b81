#include "turn_log.h"

#include <stdlib.h>

wb_turn_log *wb_turn_log_new(size_t capacity) {
    if (capacity == 0 || capacity > WB_TURN_LOG_MAX) return NULL;
    wb_turn_log *log = malloc(sizeof *log + capacity * sizeof(wb_turn_event));
    if (!log) return NULL;
    log->capacity = capacity;
    atomic_init(&log->next, 0);
    atomic_init(&log->closed, false);
    log->closed_ns = 0;
    for (size_t i = 0; i < capacity; i++)
        atomic_init(&log->events[i].ready, false);
    return log;
}

void wb_turn_log_free(wb_turn_log *log) {
    free(log);
}

bool wb_turn_log_add(wb_turn_log *log, uint64_t key, bool in, uint8_t thread, int64_t wall_ns,
                     int64_t cpu_ns) {
    if (atomic_load_explicit(&log->closed, memory_order_relaxed)) return false;
    size_t i = atomic_fetch_add_explicit(&log->next, 1, memory_order_relaxed);
    if (i >= log->capacity) return false;
    wb_turn_event *e = &log->events[i];
    e->key = key;
    e->wall_ns = wall_ns;
    e->cpu_ns = cpu_ns;
    e->in = in;
    e->thread = thread;
    atomic_store_explicit(&e->ready, true, memory_order_release);
    return true;
}

void wb_turn_log_close(wb_turn_log *log, int64_t wall_ns) {
    log->closed_ns = wall_ns;
    atomic_store(&log->closed, true);
}

static size_t taken(const wb_turn_log *log) {
    size_t n = atomic_load(&((wb_turn_log *)log)->next);
    return n < log->capacity ? n : log->capacity;
}

size_t wb_turn_log_lost(const wb_turn_log *log) {
    size_t all = atomic_load(&((wb_turn_log *)log)->next), lost = all - taken(log);
    for (size_t i = 0; i < taken(log); i++)
        if (!atomic_load_explicit(&((wb_turn_log *)log)->events[i].ready, memory_order_acquire))
            lost++;
    return lost;
}

/* an event's place in the order of turns: by process, then by when it was
 * logged */
typedef struct {
    uint64_t key;
    size_t index;
} place;

static int by_key(const void *a, const void *b) {
    const place *p = a, *q = b;
    if (p->key != q->key) return p->key < q->key ? -1 : 1;
    return p->index < q->index ? -1 : p->index > q->index;
}

long wb_turn_log_turns(const wb_turn_log *log, wb_turn *out) {
    size_t n = 0, count = taken(log);
    place *order = malloc((count ? count : 1) * sizeof *order);
    if (!order) return -1;
    for (size_t i = 0; i < count; i++)
        if (atomic_load_explicit(&((wb_turn_log *)log)->events[i].ready, memory_order_acquire))
            order[n++] = (place){log->events[i].key, i};
    qsort(order, n, sizeof *order, by_key);
    long turns = 0;
    for (size_t k = 0; k < n; k++) {
        const wb_turn_event *a = &log->events[order[k].index];
        if (!a->in) continue;
        if (k + 1 == n || order[k + 1].key != a->key) {
            /* the process's last event: still running at the close */
            out[turns++] = (wb_turn){.key = a->key,
                                     .wall_ns = log->closed_ns - a->wall_ns,
                                     .cpu_ns = -1,
                                     .thread = a->thread,
                                     .open = true};
            continue;
        }
        const wb_turn_event *b = &log->events[order[k + 1].index];
        if (b->in || a->thread != b->thread) continue;
        out[turns++] = (wb_turn){.key = a->key,
                                 .wall_ns = b->wall_ns - a->wall_ns,
                                 .cpu_ns = b->cpu_ns - a->cpu_ns,
                                 .thread = a->thread,
                                 .open = false};
        k++; /* the out is used */
    }
    free(order);
    return turns;
}

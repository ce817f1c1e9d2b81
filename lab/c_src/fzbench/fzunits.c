/*
 * fzunits: the nanoseconds a unit costs, by scorer and phase of the pair
 * driver (wb_fz_start + wb_fz_step, as Fuzzy.score/3's job steps it),
 * thread CPU time. Each pair is stepped at a fixed budget; each step is
 * timed and charged to the phase it began in. A run stops after
 * --cap-ms of stepping (the phases reached by then are reported).
 *
 *   (cd lab && make MIX_APP_PATH=/tmp/fzu /tmp/fzu/priv/wb_fzunits)
 *   wb_fzunits [--budget UNITS] [--cap-ms MS] [--shapes a,b] [--scorers a,b]
 *
 * Shapes: short (8 B a side), kb (1 KB of words a side), 100kb (the same,
 * 100 KB), long ("abcab" against 16 MB of "abab"), lwords ("abcab"
 * against 16 MB of "ab ab"), mwords (a million words a side, the same
 * words shuffled plus one). Lines:
 *   SHAPE SCORER PHASE units ns ns_per_unit steps max_step_us max_ns_per_unit
 * (max_ns_per_unit over the steps that did at least half the budget).
 */
#define _POSIX_C_SOURCE 200809L
#include "../../../c_src/fuzzy/fuzzy.h"
#include "../../../c_src/fuzzy/scores.h"
#include "../../../c_src/fuzzy/tokens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t thread_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static const char *scorer_names[] = WB_FZ_SCORER_NAMES;
static const char *token_phases[] = {"count",  "alloc",    "split",    "sort_a", "sort_b", "join_a",
                                     "join_b", "unique_a", "unique_b", "sets",   "done"};

#define PHASES 64
typedef struct {
    char name[48];
    uint64_t units, steps;
    int64_t ns, max_ns;
    double max_per_unit;
} phase_stat;

static phase_stat stats[PHASES];
static int nstats;

static phase_stat *stat_of(const char *name) {
    for (int i = 0; i < nstats; i++)
        if (strcmp(stats[i].name, name) == 0) return &stats[i];
    if (nstats == PHASES) return &stats[PHASES - 1];
    phase_stat *p = &stats[nstats++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    return p;
}

/* The phase a step begins in. */
static void phase_of(const wb_fz *s, char *out, size_t len) {
    if (s->o.scorer == WB_FZ_JARO || s->o.scorer == WB_FZ_JARO_WINKLER) {
        snprintf(out, len, "kernel_%s",
                 !s->kernel_live        ? "start"
                 : s->k.jaro.phase == 0 ? "masks"
                 : s->k.jaro.phase == 1 ? "flags"
                                        : "pairs");
        return;
    }
    if (wb_fz_is_edit(s->o.scorer)) {
        snprintf(out, len, "kernel");
        return;
    }
    if (s->tokenizing) {
        int ph = s->tk.phase;
        snprintf(out, len, "tok_%s", ph >= 0 && ph <= 10 ? token_phases[ph] : "?");
        return;
    }
    if (s->part >= s->nparts) {
        snprintf(out, len, "end");
        return;
    }
    const wb_fz_part *p = &s->parts[s->part];
    if (s->same_i != SIZE_MAX && s->part > 0) {
        snprintf(out, len, "same");
        return;
    }
    if (!p->partial) {
        snprintf(out, len, s->kernel_live || p->trim == 2 ? "ratio_lcs" : "ratio_trim");
        return;
    }
    if (!s->needle_in_use) {
        snprintf(out, len, "partial_pattern");
        return;
    }
    bool x_short = p->xl <= p->yl;
    if (s->direction == 1) x_short = !x_short;
    size_t nl = x_short ? p->xl : p->yl, hl = x_short ? p->yl : p->xl;
    const char *what = s->window < nl    ? "partial_prefix"
                       : s->window >= hl ? "partial_suffix"
                                         : "partial_window";
    snprintf(out, len, "%s%s", what, s->needle_in_use->nblocks == 1 ? "_1w" : "_nw");
}

static void put_ascii(uint32_t *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)s[i];
}

static uint64_t rng = 44;
static uint32_t next_rand(void) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng >> 33);
}

/* words of 1..8 letters from a small alphabet, single spaces, len symbols */
static void words_text(uint32_t *out, size_t len) {
    size_t i = 0;
    while (i < len) {
        size_t w = 1 + next_rand() % 8;
        for (size_t k = 0; k < w && i < len; k++)
            out[i++] = 'a' + next_rand() % 12;
        if (i < len) out[i++] = ' ';
    }
}

/* a million words "w<1..5000>" joined; b the same shuffled, "extra" first */
static size_t million_words(uint32_t *a, uint32_t *b, size_t words) {
    uint32_t *ids = malloc(words * sizeof *ids);
    size_t len = 0;
    char buf[16];
    for (size_t i = 0; i < words; i++) {
        ids[i] = 1 + next_rand() % 5000;
        int k = snprintf(buf, sizeof buf, "w%u", ids[i]);
        if (i) a[len++] = ' ';
        put_ascii(a + len, buf, (size_t)k);
        len += (size_t)k;
    }
    for (size_t i = words - 1; i > 0; i--) {
        size_t j = next_rand() % (i + 1);
        uint32_t t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
    size_t bl = 0;
    put_ascii(b, "extra", 5);
    bl = 5;
    for (size_t i = 0; i < words; i++) {
        int k = snprintf(buf, sizeof buf, "w%u", ids[i]);
        b[bl++] = ' ';
        put_ascii(b + bl, buf, (size_t)k);
        bl += (size_t)k;
    }
    free(ids);
    (void)bl;
    return len;
}

/* blocks given back are freed after the run, off the clock, as the
 * runtime frees large blocks off its schedulers */
#define LATER 64
static void *later[LATER];
static int nlater;
static void release_later(void *block, size_t bytes) {
    (void)bytes;
    if (nlater < LATER)
        later[nlater++] = block;
    else
        free(block);
}

static void run(const char *shape, wb_fz_scorer scorer, const uint32_t *a, size_t m,
                const uint32_t *b, size_t n, uint64_t budget, int64_t cap_ns) {
    wb_fz_options o = {.scorer = scorer,
                       .kind = WB_FZ_SIMILARITY,
                       .ins = 1,
                       .del = 1,
                       .sub = 1,
                       .prefix_weight = 0.1};
    static wb_fz s;
    nstats = 0;
    if (!wb_fz_start(&s, &o, a, m, b, n)) return;
    s.release = release_later;
    int64_t spent = 0;
    uint64_t total_units = 0;
    bool done = false;
    char name[48];
    while (!done && spent < cap_ns) {
        phase_of(&s, name, sizeof name);
        uint64_t used = 0;
        int64_t t0 = thread_ns();
        done = wb_fz_step(&s, budget, &used);
        int64_t ns = thread_ns() - t0;
        spent += ns;
        total_units += used;
        phase_stat *p = stat_of(name);
        p->units += used;
        p->ns += ns;
        p->steps++;
        if (ns > p->max_ns) p->max_ns = ns;
        if (used >= budget / 2 && used > 0 && (double)ns / (double)used > p->max_per_unit)
            p->max_per_unit = (double)ns / (double)used;
    }
    for (int i = 0; i < nstats; i++) {
        phase_stat *p = &stats[i];
        printf("%s %s %s %llu %lld %.2f %llu %.1f %.2f\n", shape, scorer_names[scorer], p->name,
               (unsigned long long)p->units, (long long)p->ns,
               p->units ? (double)p->ns / (double)p->units : 0.0, (unsigned long long)p->steps,
               (double)p->max_ns / 1000.0, p->max_per_unit);
    }
    printf("%s %s ALL %llu %lld %.2f predicted %llu %s\n", shape, scorer_names[scorer],
           (unsigned long long)total_units, (long long)spent,
           total_units ? (double)spent / (double)total_units : 0.0,
           (unsigned long long)wb_fz_units(&o, m, n), done ? "done" : "capped");
    fflush(stdout);
    wb_fz_free(&s);
    while (nlater > 0)
        free(later[--nlater]);
}

static bool listed(const char *list, const char *name) {
    if (!list) return true;
    size_t l = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += l)
        if ((p == list || p[-1] == ',') && (p[l] == ',' || p[l] == 0)) return true;
    return false;
}

int main(int argc, char **argv) {
    uint64_t budget = 20000;
    int64_t cap_ms = 1500;
    const char *shapes = NULL, *scorers = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--budget") == 0)
            budget = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--cap-ms") == 0)
            cap_ms = strtoll(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--shapes") == 0)
            shapes = argv[i + 1];
        else if (strcmp(argv[i], "--scorers") == 0)
            scorers = argv[i + 1];
    }
    size_t big = 16000000, words = 1000000;
    uint32_t *a = malloc(big * sizeof *a), *b = malloc(big * sizeof *b);
    uint32_t q[5];
    put_ascii(q, "abcab", 5);
    const char *shape_names[] = {"short", "kb", "100kb", "long", "lwords", "mwords"};
    for (int sh = 0; sh < 6; sh++) {
        if (!listed(shapes, shape_names[sh])) continue;
        const uint32_t *x = a, *y = b;
        size_t m = 0, n = 0;
        switch (sh) {
        case 0:
            put_ascii(a, "abcd efg", 8);
            put_ascii(b, "abxd egf", 8);
            m = n = 8;
            break;
        case 1:
        case 2:
            m = n = sh == 1 ? 1000 : 100000;
            words_text(a, m);
            words_text(b, n);
            break;
        case 3:
        case 4:
            x = q;
            m = 5;
            n = big;
            for (size_t i = 0; i < n; i++)
                b[i] = sh == 3 ? "ab"[i % 2] : "ab "[i % 3];
            break;
        default:
            m = million_words(a, b, words);
            n = m + 6;
        }
        for (int sc = 0; sc < WB_FZ_SCORERS; sc++)
            if (listed(scorers, scorer_names[sc]))
                run(shape_names[sh], (wb_fz_scorer)sc, x, m, y, n, budget, cap_ms * 1000000);
    }
    free(a);
    free(b);
    return 0;
}

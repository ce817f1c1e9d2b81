/*
 * The extract engine's scores from the search core's values (extract.h):
 * a value turned into a score (Levenshtein, Indel and the ratios, OSA,
 * Hamming, Jaro) or into a bound (the partial ratios, WRatio,
 * Damerau-Levenshtein) that sends a candidate that may rank to the quick
 * scores or the pair scorer; with a limit, the value bars that pass over
 * in a tight loop the candidates that cannot rank, and the seeds that
 * give the bars something to stand on before the limit is reached.
 */
#include "extract_keep.h"
#include "scores.h"

/* Symbols of candidate i: its bytes, or in codepoint mode its codepoints
 * (bytes that do not continue a sequence). */
static size_t symbols_in(const wb_fz_extract *job, size_t i) {
    const wb_search_set *set = job->set;
    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    if (!job->o.codepoints || set->ascii) return len;
    const uint8_t *b = set->bytes + set->offsets[i];
    size_t n = 0;
    for (size_t k = 0; k < len; k++)
        n += (b[k] & 0xC0) != 0x80;
    return n;
}

/* What a partial ratio or WRatio makes of a candidate's LCS with the query */
enum {
    BOUND_RATIO,       /* its score is the ratio: scored here */
    BOUND_SCORE,       /* it may rank: scored exactly by the other paths */
    BOUND_BELOW,       /* it cannot rank before the worst kept */
    BOUND_PAST_CUTOFF, /* it cannot pass the cutoff */
};

/* The partial ratios and WRatio from a candidate's LCS (the core's bound) */
static int partial_bound(const wb_fz_extract *job, size_t m, size_t n, size_t lcs) {
    double score;
    bool passes;
    if (wb_fz_partial_bound(&job->o, m, n, lcs, &score, &passes) == WB_FZ_BOUND_RATIO)
        return BOUND_RATIO;
    if (!passes) return BOUND_PAST_CUTOFF;
    if (!job->cells && job->heap_len == job->limit &&
        !wb_fz_better(job->o.kind, score, job->heap[0].score))
        return BOUND_BELOW;
    /* past the worst seed (seed_step) */
    if (job->seed_on && wb_fz_better(job->o.kind, job->seed_scores[job->seed_worst], score))
        return BOUND_BELOW;
    return BOUND_SCORE;
}

/* Whether distance d over `most` is past the worst seed's badness (of
 * the limit best OSA distances, seed_step): a candidate there cannot
 * rank, as many others are at least as good */
static bool past_seed(const wb_fz_extract *job, size_t d, size_t most) {
    return wb_fz_below_bar(&job->seed[job->seed_worst], d, most);
}

/* Whether a candidate of n symbols whose value (for Jaro its matches) is
 * v may rank before the worst kept (the limit reached), as the paths of
 * lanes_scores find: Jaro's best score for its length and matches; the
 * partial ratios' and WRatio's bound (partial_bound), or the ratio for
 * WRatio of lengths near each other; Damerau-Levenshtein's distance of
 * at least the longer length less the LCS; the others' score from their
 * distance. Each is monotone in the value; past the cutoff (which the
 * worst kept passed) none ranks. */
static bool may_rank(wb_fz_extract *job, size_t m, size_t n, size_t v) {
    double score;
    bool passed;
    wb_fz_bar badness;
    if (job->lanes_op == WB_SEARCH_JARO)
        return wb_fz_better(job->o.kind, job->jaro_top[n * 65 + v], job->heap[0].score);
    if (job->partial) {
        int verdict = partial_bound(job, m, n, v);
        if (verdict != BOUND_RATIO) return verdict == BOUND_SCORE;
        wb_fz_verdict(&job->lanes_o, m, n, m + n - 2 * v, NULL, &score, &passed, &badness);
    } else if (job->o.scorer == WB_FZ_DAMERAU_LEVENSHTEIN) {
        /* and no further than the worst seed: the only bar while the
         * limit is not reached (seed_step) */
        size_t most = m > n ? m : n;
        if (job->seed_on && past_seed(job, most - v, most)) return false;
        wb_fz_verdict(&job->o, m, n, most - v, NULL, &score, &passed, &badness);
        return passed &&
               (job->heap_len < job->limit || wb_fz_better(job->o.kind, score, job->heap[0].score));
    } else {
        wb_fz_verdict(&job->lanes_o, m, n, distance_of(job->lanes_op, job->lanes_o.scorer, m, n, v),
                      NULL, &score, &passed, &badness);
    }
    /* fewer than the limit kept: the cutoff is the only bar */
    return passed &&
           (job->heap_len < job->limit || wb_fz_better(job->o.kind, score, job->heap[0].score));
}

/* value_bar[n] for the worst kept now, from where it was, one way: where
 * more is better the least value that may rank (a candidate below it
 * cannot), where less is one past the most (a candidate at or past it
 * cannot); values run up to the shorter side's length (an LCS, matches)
 * or the longer's (a distance). */
static void value_bar_now(wb_fz_extract *job, size_t m, size_t n) {
    bool seen = job->bar_seen[n] != 0;
    size_t at;
    if (job->more_is_better) {
        size_t top = m < n ? m : n;
        at = seen ? job->value_bar[n] : 0;
        while (at <= top && !may_rank(job, m, n, at))
            at++;
    } else {
        at = seen ? job->value_bar[n] : (m > n ? m : n) + 1;
        while (at > 0 && !may_rank(job, m, n, at - 1))
            at--;
    }
    job->value_bar[n] = (uint32_t)at;
    job->bar_seen[n] = job->kept_generation;
}

/* Whether Jaro's similarity of m and n symbols with these counts is
 * surely below `tau`: M^2 (lp + lt) + (M - h) lp lt (lp, lt the shorter
 * and longer lengths, h half the transpositions) against 3 tau lp lt M,
 * the similarity times lp lt M three times, with no division; a margin
 * of 1e-9 for the rounding of the score's own (wb_fz_jaro_verdict) */
static inline bool jaro_below(size_t m, size_t n, size_t matches, size_t transpositions,
                              double tau) {
    size_t lp = m < n ? m : n, lt = m < n ? n : m, h = transpositions / 2;
    if (matches == 0 || n == 0) return 0.0 < tau - 1e-9;
    double sum = (double)(matches * matches * (lp + lt) + (matches - h) * lp * lt);
    return sum < 3.0 * tau * (double)(lp * lt * matches) * (1.0 - 1e-9);
}

/* The Jaro similarity below which a candidate cannot rank before the
 * worst kept (the limit reached), made once a kept generation: the
 * worst's similarity, and for Jaro-Winkler the most whose score with
 * the longest prefix bonus (four symbols; none at 0.7 or below) is still
 * at most that */
static double jaro_tau(wb_fz_extract *job) {
    if (job->jaro_tau_seen == job->kept_generation) return job->jaro_tau;
    double w = job->heap[0].score;
    double tau = wb_fz_kind_is_distance(job->o.kind) ? 1.0 - w : w;
    if (job->o.scorer == WB_FZ_JARO_WINKLER && tau > 0.7) {
        double bonus = 4.0 * job->o.prefix_weight;
        double below = bonus < 1.0 ? (tau - bonus) / (1.0 - bonus) : 0.0;
        tau = below > 0.7 ? below : 0.7;
    }
    job->jaro_tau = tau;
    job->jaro_tau_seen = job->kept_generation;
    return tau;
}

/* Whether a value `key` of a candidate of n symbols is at or past its
 * length's bar, found for the worst kept now (`generation`): it may rank */
static inline bool past_bar(const wb_fz_extract *job, size_t n, uint32_t key, bool more,
                            uint32_t generation) {
    return job->bar_seen[n] == generation &&
           (more ? key >= job->value_bar[n] : key < job->value_bar[n]);
}

/* From candidate i up to `end`, those passed over by their value alone
 * (the limit reached, bytes are symbols): returns the first that is not,
 * one that may rank or is for the other paths (no value yet, whitespace
 * in a token score, past the bars' lengths), or end. Inlined with
 * constant flags, each loop keeps only its own tests. */
static inline __attribute__((always_inline)) size_t
pass_over(wb_fz_extract *job, size_t i, size_t end, bool jaro, bool more, bool tokens) {
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = job->set->offsets;
    const uint64_t *spaced = tokens ? job->set->prepared->spaced : NULL;
    const uint8_t *lengths = job->set->prepared ? job->set->prepared->length : NULL;
    /* an index's lengths stop at WB_LANES_LENGTH_MOST */
    const size_t m = job->qlen, most = jaro ? 64 : WB_LANES_LENGTH_MOST - 1;
    const uint32_t generation = job->kept_generation; /* no bar moves it */
    /* Jaro's matches at the bar, its transpositions too (jaro_below) */
    const double tau = jaro ? jaro_tau(job) : 0.0;
    for (; i < end; i++) {
        size_t n = lengths ? lengths[i] : (size_t)(offsets[i + 1] - offsets[i]);
        uint32_t v = values[i];
        if (tokens && (spaced[i / 64] >> (i % 64)) & 1) break;
        /* most end here, below their length's bar as last found (one
         * load, a branch that foretells well): a bar only gets stricter,
         * so one found for an earlier worst kept passes over none that
         * may rank now; 0 where none was found yet */
        if (more && n < WB_LANES_LENGTH_MOST &&
            (jaro ? WB_SEARCH_JARO_MATCHES(v) : v) < job->value_bar[n])
            continue;
        if (n > most || v == WB_SEARCH_NOT_DONE) break;
        if (job->bar_seen[n] != generation) value_bar_now(job, m, n);
        if (past_bar(job, n, jaro ? WB_SEARCH_JARO_MATCHES(v) : v, more, generation) &&
            (!jaro ||
             !jaro_below(m, n, WB_SEARCH_JARO_MATCHES(v), WB_SEARCH_JARO_TRANSPOSITIONS(v), tau)))
            break;
    }
    return i;
}

/* pass_over for this search's kind of values */
/* Jaro's apart: its loop, which reckons with the transpositions, kept
 * out of the others' code (beside them, the ratio's loop ran a third
 * slower on this machine, the same instructions placed elsewhere) */
static __attribute__((noinline)) size_t pass_over_jaro(wb_fz_extract *job, size_t i, size_t end) {
    return pass_over(job, i, end, true, true, false);
}

static size_t pass_over_values(wb_fz_extract *job, size_t i, size_t end) {
    if (job->one_token) /* the ratio's LCS, whitespace noted */
        return pass_over(job, i, end, false, true, true);
    if (job->lanes_op == WB_SEARCH_JARO) return pass_over_jaro(job, i, end);
    if (job->more_is_better) return pass_over(job, i, end, false, true, false);
    return pass_over(job, i, end, false, false, false);
}

/* How far skip_below looks past the candidate it stops at */
#define LOOK_AHEAD 64

/* From candidate i on, those whose value alone says they cannot rank,
 * `each` units each, until one may (or is for the other paths), or the
 * budget: returns it. Then looks up to LOOK_AHEAD candidates past it for
 * the next such one, whose bytes the scores of most scorers read: asked
 * into the cache now, they are there when its turn comes (the next call,
 * from the one after this, starts where the look ended, and counts their
 * units). The bars only get stricter, so what the look passed over stays
 * passed over. */
static size_t skip_below(wb_fz_extract *job, size_t i, uint64_t each, uint64_t budget,
                         uint64_t start, uint64_t used, uint64_t *units) {
    size_t count = job->set->count;
    uint64_t u = *units;
    bool known = false;
    if (job->ahead_from == i && job->ahead_to > i) {
        known = job->ahead_hit;
        i = job->ahead_to;
        u += job->ahead_units;
    }
    job->ahead_to = 0;
    if (!known) {
        /* as many as the budget holds (the first one whatever it holds) */
        uint64_t spent = used + u - start, left = spent < budget ? budget - spent : 0;
        uint64_t most = left / each + (left % each != 0);
        size_t room = left ? (most < SIZE_MAX ? (size_t)most : SIZE_MAX) : u == 0;
        size_t end = count - i > room ? i + room : count, from = i;
        i = pass_over_values(job, i, end);
        u += (uint64_t)(i - from) * each;
        if (i == end && i < count) { /* the budget */
            *units = u;
            return i;
        }
    }
    if (i < count) {
        size_t k = i + 1, end = count - k > LOOK_AHEAD ? k + LOOK_AHEAD : count;
        size_t at = pass_over_values(job, k, end);
        /* counted when reached: counted now, they could end the slice
         * before candidate i, again and again */
        job->ahead_units = (uint64_t)(at - k) * each;
        job->ahead_from = i + 1;
        job->ahead_to = at;
        job->ahead_hit = at < end;
        if (job->ahead_hit) __builtin_prefetch(job->set->bytes + job->set->offsets[at]);
    }
    *units = u;
    return i;
}

/* The badness of the bound a candidate of n symbols has from its LCS v
 * with the query: for the partial ratios, 2 v over the shorter length
 * and v (its best window's ratio at most, as wb_fz_partial_bound takes
 * it); for Damerau-Levenshtein, a distance of at least the longer length
 * less v */
static wb_fz_bar seed_bound(const wb_fz_extract *job, size_t n, size_t v) {
    size_t m = job->qlen;
    if (job->partial) {
        size_t shorter = m < n ? m : n;
        return (wb_fz_bar){shorter - v, shorter + v > 0 ? shorter + v : 1};
    }
    size_t most = m > n ? m : n;
    return (wb_fz_bar){most - v, most > 0 ? most : 1};
}

/* The least LCS of a candidate of n symbols whose bound is better than
 * the picks' bar, or one past any */
static uint32_t seed_bar_of(const wb_fz_extract *job, size_t n) {
    size_t m = job->qlen, top = m < n ? m : n, v = 0;
    while (v <= top) {
        wb_fz_bar b = seed_bound(job, n, v);
        if (wb_fz_below_bar(&b, job->pick_bar.num, job->pick_bar.den)) break;
        v++;
    }
    return (uint32_t)v;
}

/* Whether pick a's bound is strictly better than b's */
static inline bool pick_better(const wb_fz_seed_pick *a, const wb_fz_seed_pick *b) {
    return a->bound.num * b->bound.den < b->bound.num * a->bound.den;
}

/* Orders picks[0 .. len) so that picks[k] is where it would be sorted
 * best first: the k before it are at least as good, the rest at most
 * (three-way partitions around a middle pick, on the part holding k) */
static void picks_select(wb_fz_seed_pick *p, size_t len, size_t k) {
    size_t lo = 0, hi = len;
    while (hi - lo > 1) {
        wb_fz_seed_pick pivot = p[lo + (hi - lo) / 2], t;
        size_t better = lo, i = lo, worse = hi;
        while (i < worse) {
            if (pick_better(&p[i], &pivot)) {
                t = p[better], p[better++] = p[i], p[i++] = t;
            } else if (pick_better(&pivot, &p[i])) {
                t = p[--worse], p[worse] = p[i], p[i] = t;
            } else {
                i++;
            }
        }
        if (k < better)
            hi = better;
        else if (k >= worse)
            lo = worse;
        else
            return;
    }
}

/* The pick_most best picks kept (the first ones), the worst of them the
 * bar the next must beat (the lengths' bars made again) */
static void picks_cut(wb_fz_extract *job) {
    picks_select(job->pick, job->pick_len, job->pick_most - 1);
    job->pick_len = job->pick_most;
    job->pick_bar = job->pick[job->pick_most - 1].bound;
    memset(job->seed_bar, 0, sizeof job->seed_bar);
}

/* Whether a candidate of n symbols (at most WB_FZ_VALUE_BAR_MOST) with LCS v
 * beats the picks' bar */
static inline bool seed_may_better(wb_fz_extract *job, uint32_t v, size_t n) {
    if (n >= WB_LANES_LENGTH_MOST) return v >= seed_bar_of(job, n);
    if (job->seed_bar[n] == 0) job->seed_bar[n] = seed_bar_of(job, n);
    return v >= job->seed_bar[n];
}

/* Whether the seed in slot a is worse than the one in slot b */
static bool seed_worse(const wb_fz_extract *job, size_t a, size_t b) {
    if (job->partial) return wb_fz_better(job->o.kind, job->seed_scores[b], job->seed_scores[a]);
    return wb_fz_below_bar(&job->seed[b], job->seed[a].num, job->seed[a].den);
}

/* Keeps the seed weighed in slot WB_FZ_SEED_MOST among the limit best: the
 * worst replaced once they are full, and the worst found again */
static void seed_keep(wb_fz_extract *job) {
    size_t at;
    if (job->seed_len < job->limit)
        at = job->seed_len++;
    else if (seed_worse(job, job->seed_worst, WB_FZ_SEED_MOST))
        at = job->seed_worst;
    else
        return;
    job->seed[at] = job->seed[WB_FZ_SEED_MOST];
    job->seed_scores[at] = job->seed_scores[WB_FZ_SEED_MOST];
    if (job->seed_len < job->limit) return;
    size_t worst = 0;
    for (size_t k = 1; k < job->seed_len; k++)
        worst = seed_worse(job, k, worst) ? k : worst;
    job->seed_worst = worst;
}

/* Pick k's score weighed among the seeds; its units */
static uint64_t seed_score(wb_fz_extract *job, size_t k) {
    const uint64_t *offsets = job->set->offsets;
    size_t i = job->pick[k].index, n = (size_t)(offsets[i + 1] - offsets[i]), m = job->qlen;
    const uint8_t *t = job->set->bytes + offsets[i];
    uint64_t units;
    if (job->partial) {
        bool passed;
        units = wb_fz_quick_partial(&job->quick, t, n, job->lanes.distances[i], NULL,
                                    &job->seed_scores[WB_FZ_SEED_MOST], &passed);
    } else {
        size_t most = m > n ? m : n;
        job->seed[WB_FZ_SEED_MOST] =
            (wb_fz_bar){wb_fz_quick_damerau_most(&job->quick, t, n), most > 0 ? most : 1};
        /* a step a byte of about 3 ns (90 ns for 20-30 bytes, a cache
         * miss on the candidate's bytes included) */
        units = 1 + 3 * n;
    }
    seed_keep(job);
    return units;
}

/* The seeds (wb_fz_extract): the picks from job->seed_next on, then their
 * scores from job->seed_scored on, until the budget (false: not done).
 * A pick's bytes are asked into the cache while the one before is
 * scored. */
bool wb_fz_extract_seed_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used) {
    const wb_search_set *set = job->set;
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = set->offsets;
    const uint64_t *spaced = set->prepared ? set->prepared->spaced : NULL;
    const uint8_t *lengths = set->prepared ? set->prepared->length : NULL;
    size_t count = set->count, i = job->seed_next;
    /* the budget left, in units (the first candidate whatever it holds) */
    uint64_t units = 0, spent = *used - start, left = spent < budget ? budget - spent : 1;
    size_t end = count - i > left ? i + (size_t)left : count, from = i;
    for (; i < end; i++) {
        uint32_t v = values[i];
        size_t n = lengths ? lengths[i] : (size_t)(offsets[i + 1] - offsets[i]);
        /* most end at their length's bar (a branch that foretells well;
         * none for WB_LANES_LENGTH_MOST bytes or more) */
        if (v < job->seed_bar[n < WB_LANES_LENGTH_MOST ? n : WB_LANES_LENGTH_MOST]) continue;
        n = (size_t)(offsets[i + 1] - offsets[i]);
        /* the others go to the other paths: scored exactly, no seeds */
        if (v == WB_SEARCH_NOT_DONE || n > WB_FZ_VALUE_BAR_MOST ||
            !wb_fz_quick_fits(&job->quick, n) || !seed_may_better(job, v, n))
            continue;
        if (job->one_token &&
            (spaced ? (spaced[i / 64] >> (i % 64)) & 1 : has_space(set->bytes + offsets[i], n)))
            continue;
        job->pick[job->pick_len++] = (wb_fz_seed_pick){seed_bound(job, n, v), i};
        if (job->pick_len == 2 * job->pick_most) picks_cut(job);
    }
    units += i - from;
    job->seed_next = i;
    if (i < count) {
        *used += units;
        return false;
    }
    if (job->pick_len > job->pick_most && job->seed_scored == 0) picks_cut(job);
    size_t k = job->seed_scored;
    for (; k < job->pick_len && units < left; k++) {
        if (k + 1 < job->pick_len) __builtin_prefetch(set->bytes + offsets[job->pick[k + 1].index]);
        units += seed_score(job, k);
    }
    job->seed_scored = k;
    *used += units;
    if (k < job->pick_len) return false;
    job->seeding = false;
    job->seed_on = job->seed_len == job->limit;
    /* the value bars are the seeds' from here on, before any hit kept */
    if (job->seed_on) job->kept_generation++;
    return true;
}

/* The scores of the candidates from job->next on, from the search core's
 * values, until one has none (left to the other paths), the last one, or
 * the budget (false: not done). Most candidates of a search with a limit
 * end at the bar (the worst kept), compared as integers here. */
bool wb_fz_extract_lanes_scores(wb_fz_extract *job, uint64_t budget, uint64_t start,
                                uint64_t *used) {
    const wb_search_set *set = job->set;
    const uint32_t *values = job->lanes.distances;
    const uint64_t *offsets = set->offsets;
    size_t count = set->count, m = job->qlen, i = job->next;
    wb_search_op op = job->lanes_op;
    /* Levenshtein in codepoints: symbols, not bytes */
    bool count_symbols = job->o.codepoints && !set->ascii;
    /* the ratios' and Indel's badness is d / (m + n), the others' (LCSseq's
     * too) d / max(m, n) */
    bool sum = op == WB_SEARCH_LCS && job->lanes_o.scorer != WB_FZ_LCS_SEQ;
    bool bars = !job->cells;
    uint64_t units = 0;
    bool general = false; /* candidate i is for the other paths */
    /* the candidates holding whitespace: known to an index's batches */
    const uint64_t *spaced = set->prepared ? set->prepared->spaced : NULL;
    /* a unit a candidate, and what looks at its bytes or divides more */
    uint64_t extra = op == WB_SEARCH_JARO ? 3 : job->partial ? 2 : 0;
    uint64_t cell = job->cells ? CELL_UNITS : 0;
    bool damerau = job->o.scorer == WB_FZ_DAMERAU_LEVENSHTEIN;
    /* the partial ratio of a candidate that may rank: the quick score */
    bool quick_wratio = job->o.scorer == WB_FZ_WRATIO && job->quick_single;
    bool quick_partial = (job->o.scorer == WB_FZ_PARTIAL_RATIO && job->quick_on) ||
                         (job->quick_single && !quick_wratio);
    /* with a limit, the candidates that cannot rank by their value alone
     * end in a tight loop: bytes as symbols, and for the token scores
     * the index's note of whitespace */
    bool skipping = job->value_bars && bars && !count_symbols && (!job->one_token || spaced);
    /* a candidate passed over there: its units beside the batches' (for
     * Jaro the runtime learned 1.0 ns a unit at 1 + extra against 1.4-2.1
     * for the others) */
    uint64_t skip_units = op == WB_SEARCH_JARO ? 2 : 1 + extra;
    uint64_t check_at = SPENT_PART;
    if (job->cells && !job->partial && !damerau && op != WB_SEARCH_JARO && !count_symbols)
        return wb_fz_extract_cells_step(job, budget, start, used); /* cdist: extract_cells.c */
    for (; i < count; i++) {
        if (skipping && (job->heap_len == job->limit || job->seed_on || job->cutoff_bars)) {
            i = skip_below(job, i, skip_units, budget, start, *used, &units);
            if (i == count) break;
        }
        if (units > 0 && *used + units - start >= budget) break;
        if (units >= check_at) {
            if (slice_spent(job)) break;
            check_at = units + SPENT_PART;
        }
        uint32_t v = values[i];
        size_t len = (size_t)(offsets[i + 1] - offsets[i]);
        size_t n = count_symbols ? symbols_in(job, i) : len;
        units += 1 + extra + cell + (count_symbols ? len / 16 : 0);
        if (job->one_token && !spaced) units += len / 8;
        if ((op != WB_SEARCH_LEVENSHTEIN && v == WB_SEARCH_NOT_DONE) ||
            (job->one_token &&
             (spaced ? (spaced[i / 64] >> (i % 64)) & 1 : has_space(set->bytes + offsets[i], n)))) {
            general = true;
            break;
        }
        double score = 0.0;
        bool passed;
        if (op == WB_SEARCH_JARO) {
            /* its matches may rank (skip_below: Jaro's lanes are bytes and
             * its table is made with a limit, so it passes over the others);
             * Jaro-Winkler reads its bytes only if its counts may rank with
             * the longest prefix */
            if (job->o.scorer == WB_FZ_JARO_WINKLER && job->heap_len == job->limit && bars &&
                !wb_fz_better(job->o.kind,
                              wb_fz_jaro_top(&job->o, m, n, WB_SEARCH_JARO_MATCHES(v),
                                             WB_SEARCH_JARO_TRANSPOSITIONS(v)),
                              job->heap[0].score))
                continue;
            wb_fz_jaro_verdict(&job->o, job->query_input, m, set->bytes + offsets[i], n,
                               WB_SEARCH_JARO_MATCHES(v), WB_SEARCH_JARO_TRANSPOSITIONS(v), &score,
                               &passed);
            if (!record(job, i, score, passed, (wb_fz_bar){0, 0})) {
                job->failed = true;
                break;
            }
            continue;
        }
        if (damerau) {
            /* the LCS bounds it (wb_fz_quick_damerau); the query fits */
            if (!wb_fz_quick_fits(&job->quick, n)) {
                general = true;
                break;
            }
            bool full = bars && job->heap_len == job->limit;
            /* the least distance that cannot rank: the value bar's least
             * LCS that may is one past the longer length less it (the
             * seeds' bar in it, may_rank) */
            size_t cut = SIZE_MAX;
            if ((full || job->seed_on) && job->value_bars && n <= WB_FZ_VALUE_BAR_MOST) {
                if (job->bar_seen[n] != job->kept_generation) value_bar_now(job, m, n);
                cut = (m > n ? m : n) + 1 - job->value_bar[n];
            }
            wb_fz_bar badness;
            units += wb_fz_quick_damerau(&job->quick, set->bytes + offsets[i], n, v,
                                         full ? &job->heap[0].badness : NULL, cut, &score, &passed,
                                         &badness);
            /* past the worst seed (the value bar's cut, the limit not yet
             * reached): its score a bound, and as many others are better */
            if (job->seed_on && passed && past_seed(job, badness.num, badness.den)) continue;
            if (!record(job, i, score, passed, badness)) {
                job->failed = true;
                break;
            }
            continue;
        }
        if (job->partial) {
            /* at or past its length's bar, fresh, its bound may rank (the
             * bar is where partial_bound's verdict turns; WRatio's can
             * be the ratio's instead) */
            bool known = bars && (job->heap_len == job->limit || job->seed_on) && job->value_bars &&
                         job->o.scorer != WB_FZ_WRATIO && n <= WB_FZ_VALUE_BAR_MOST &&
                         past_bar(job, n, v, true, job->kept_generation);
            int verdict = known ? BOUND_SCORE : partial_bound(job, m, n, v);
            bool quick = n <= WB_FZ_QUICK_MATRIX_MOST && (quick_partial || quick_wratio);
            if (verdict == BOUND_SCORE && quick) {
                const uint8_t *t = set->bytes + offsets[i];
                const double *worst =
                    bars && job->heap_len == job->limit ? &job->heap[0].score : NULL;
                units +=
                    quick_wratio
                        ? wb_fz_quick_wratio_apart(&job->quick, t, n, v, worst, &score, &passed)
                        : wb_fz_quick_partial(&job->quick, t, n, v, worst, &score, &passed);
                if (!record(job, i, score, passed, (wb_fz_bar){0, 0})) {
                    job->failed = true;
                    break;
                }
                continue;
            }
            if (verdict == BOUND_SCORE) { /* to the other paths */
                general = true;
                break;
            }
            if (verdict == BOUND_PAST_CUTOFF && job->cells) store(job, i, 0.0, 0, false);
            if (verdict != BOUND_RATIO) continue;
        }
        size_t most = m > n ? m : n, d = distance_of(op, job->lanes_o.scorer, m, n, v);
        bool full = bars && job->heap_len == job->limit;
        if (full && wb_fz_below_bar(&job->heap[0].badness, d, sum ? m + n : most)) continue;
        wb_fz_bar badness;
        wb_fz_verdict(&job->lanes_o, m, n, d, full ? &job->heap[0].badness : NULL, &score, &passed,
                      &badness);
        if (!record(job, i, score, passed, badness)) {
            job->failed = true;
            break;
        }
    }
    job->next = i;
    *used += units;
    return i == count || job->failed || general;
}

/* The fuzzy scorers (fuzzy.h): the edit distances and Jaro run their
 * kernel; the ratios are the best of up to WB_FZ_PARTS Indel similarities
 * of derived sequences (the sorted tokens, their intersection and
 * differences), some known from lengths alone (`base`). */
#include "fuzzy.h"
#include "parts.h"
#include "scores.h"
#include "tokens.h"

#include "../metric/common.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

bool wb_fz_default_process_ascii(const uint8_t *in, size_t len, uint8_t *out, size_t *out_len) {
    if (!wb_text_ascii(in, len)) return false;
    size_t start = 0, end = len;
    /* what trimming leaves: from the first letter or digit to the last */
    while (start < end && !((in[start] | 0x20) >= 'a' && (in[start] | 0x20) <= 'z') &&
           !(in[start] >= '0' && in[start] <= '9'))
        start++;
    while (end > start && !((in[end - 1] | 0x20) >= 'a' && (in[end - 1] | 0x20) <= 'z') &&
           !(in[end - 1] >= '0' && in[end - 1] <= '9'))
        end--;
    for (size_t i = start; i < end; i++) {
        uint8_t c = in[i];
        if (c >= 'A' && c <= 'Z')
            out[i - start] = (uint8_t)(c | 0x20);
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            out[i - start] = c;
        else
            out[i - start] = ' ';
    }
    *out_len = end - start;
    return true;
}

/* Whether the scores are integers: an edit distance's own. */
bool wb_fz_integers(const wb_fz_options *o) {
    return wb_fz_is_edit(o->scorer) && (o->kind == WB_FZ_DISTANCE || o->kind == WB_FZ_SIMILARITY);
}

/* The score reported beyond the cutoff (as rapidfuzz reports it): the
 * cutoff + 1 for an integer distance, otherwise the worst of the kind. */
double wb_fz_worst(const wb_fz_options *o) {
    if (wb_fz_integers(o) && o->kind == WB_FZ_DISTANCE)
        return (o->exact_cutoff ? (double)o->icutoff : o->cutoff) + 1.0;
    if (o->kind == WB_FZ_DISTANCE && o->scorer >= WB_FZ_RATIO) return 100.0;
    return wb_fz_kind_is_distance(o->kind) ? 1.0 : 0.0;
}

/* The integer score reported beyond the cutoff, exactly: the cutoff + 1
 * for a distance, 0 for a similarity; false when past 2^64 - 1. */
bool wb_fz_worst_value(const wb_fz_options *o, uint64_t *v) {
    if (o->kind != WB_FZ_DISTANCE) {
        *v = 0;
        return true;
    }
    wb_fz_wide c = wb_fz_integer_cutoff(o);
    if (c >= WB_FZ_U64_MOST) return false;
    *v = (uint64_t)c + 1;
    return true;
}

/* ---- start, step ----------------------------------------------------------- */

bool wb_fz_start(wb_fz *s, const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b,
                 size_t n) {
    return wb_fz_start_with(s, o, NULL, a, m, b, n);
}

bool wb_fz_start_with(wb_fz *s, const wb_fz_options *o, const wb_fz_pattern *query,
                      const uint32_t *a, size_t m, const uint32_t *b, size_t n) {
    return wb_fz_start_tokens(s, o, query, NULL, NULL, a, m, b, n);
}

bool wb_fz_start_tokens(wb_fz *s, const wb_fz_options *o, const wb_fz_pattern *query,
                        const wb_fz_tokens *tokens, const wb_fz_pattern *sorted, const uint32_t *a,
                        size_t m, const uint32_t *b, size_t n) {
    /* every field above the kernels (fuzzy.h), one by one: a memset
     * would be a `rep stos`, whose start costs as much as a short score */
    s->done = s->failed = s->kernel_live = s->pattern_live = s->passed = s->too_large = false;
    s->unequal = false;
    s->reversed_live = false;
    s->cutoff = s->nparts = s->part = s->window = 0;
    s->distance = s->maximum = 0;
    s->value = 0;
    s->owned_bytes = 0;
    s->base = s->best = s->similarity = s->score = 0.0;
    s->derived = NULL;
    s->derived_bytes = 0;
    s->needle_in_use = NULL;
    s->direction = 0;
    s->tokenizing = false;
    s->same_i = s->same_at = 0;
    s->same_side = 0;
    s->alloc = NULL;
    s->release = NULL;
    s->free_later = NULL;
    s->query = query;
    s->query_tokens = tokens;
    s->sorted_query = sorted;
    s->o = *o;
    s->a = a;
    s->b = b;
    s->ab = s->bb = NULL;
    s->m = m;
    s->n = n;
    /* the ratio's: the whole of both (the partial ratio's, parts.c) */
    s->alignment = (wb_fz_alignment){0, m, 0, n};
    if (wb_fz_is_edit(o->scorer)) {
        s->maximum = wb_fz_edit_maximum_wide(o, m, n);
        s->cutoff = wb_fz_kernel_cutoff_wide(o, s->maximum);
        return true;
    }
    if (o->scorer <= WB_FZ_JARO_WINKLER) return true;
    if (wb_fz_needs_tokens(o, m, n))
        wb_fz_tokens_start(s);
    else
        wb_fz_plan_ratio(s);
    return true;
}

bool wb_fz_reads_bytes(const wb_fz_options *o) {
    return (o->scorer == WB_FZ_HAMMING || o->scorer == WB_FZ_PREFIX ||
            o->scorer == WB_FZ_POSTFIX) &&
           !o->codepoints;
}

bool wb_fz_start_bytes(wb_fz *s, const wb_fz_options *o, const uint8_t *a, size_t m,
                       const uint8_t *b, size_t n) {
    if (!wb_fz_start_with(s, o, NULL, NULL, m, NULL, n)) return false;
    s->ab = a;
    s->bb = b;
    return true;
}

void wb_fz_rebind_bytes(wb_fz *s, const uint8_t *a, const uint8_t *b) {
    s->ab = a;
    s->bb = b;
    if (s->kernel_live && s->o.scorer == WB_FZ_HAMMING) {
        s->k.hamming.ab = a;
        s->k.hamming.bb = b;
    }
    if (s->kernel_live && (s->o.scorer == WB_FZ_PREFIX || s->o.scorer == WB_FZ_POSTFIX)) {
        s->k.affix.ab = a;
        s->k.affix.bb = b;
    }
}

/* Hamming's kernel on the pair's symbols or bytes. */
static void hamming_init(wb_fz *s, wb_fz_hamming *k) {
    if (s->ab)
        wb_fz_hamming_init_bytes(k, s->ab, s->m, s->bb, s->n, s->cutoff);
    else
        wb_fz_hamming_init(k, s->a, s->m, s->b, s->n, s->cutoff);
}

/* Prefix's or Postfix's kernel on the pair's symbols or bytes: an affix
 * shorter than the cutoff needs (the largest distance less the kernel's
 * bound) need not be found. */
static void affix_init(wb_fz *s, wb_fz_affix *k) {
    bool suffix = s->o.scorer == WB_FZ_POSTFIX;
    size_t least = s->cutoff == WB_FZ_NO_CUTOFF ? 0 : (size_t)s->maximum - s->cutoff;
    if (s->ab)
        wb_fz_affix_init_bytes(k, s->ab, s->m, s->bb, s->n, suffix, least);
    else
        wb_fz_affix_init(k, s->a, s->m, s->b, s->n, suffix, least);
}

/* Levenshtein's kernel: bit-parallel with unit costs; the LCS when a
 * substitution costs no less than a deletion and an insertion (it never
 * helps: d = del (m - L) + ins (n - L)); rows of a matrix otherwise. */
typedef enum { LEV_UNIT, LEV_INDEL, LEV_WEIGHTED } lev_kernel;

static lev_kernel lev_kernel_of(const wb_fz_options *o) {
    if (o->ins == 1 && o->del == 1 && o->sub == 1) return LEV_UNIT;
    return (wb_fz_wide)o->sub >= (wb_fz_wide)o->ins + o->del ? LEV_INDEL : LEV_WEIGHTED;
}

/* The LCS of a and b, with a's pattern made once when there is one. */
static bool start_lcs(wb_fz *s) {
    if (!(s->query ? wb_fz_lcs_init_with(&s->k.lcs, s->query, s->b, s->n)
                   : wb_fz_lcs_init(&s->k.lcs, s->a, s->m, s->b, s->n)))
        return false;
    s->k.lcs.free_later = s->free_later;
    return true;
}

static bool start_kernel(wb_fz *s) {
    const uint32_t *a = s->a, *b = s->b;
    size_t m = s->m, n = s->n, k = s->cutoff;
    switch (s->o.scorer) {
    case WB_FZ_LEVENSHTEIN:
        switch (lev_kernel_of(&s->o)) {
        case LEV_UNIT:
            if (!(s->query ? wb_fz_lev_init_with(&s->k.lev, s->query, b, n, k)
                           : wb_fz_lev_init(&s->k.lev, a, m, b, n, k)))
                return false;
            s->k.lev.free_later = s->free_later;
            return true;
        case LEV_INDEL:
            return start_lcs(s);
        default:
            return wb_fz_weighted_init(&s->k.weighted, a, m, b, n, s->o.ins, s->o.del, s->o.sub, k,
                                       s->maximum > WB_FZ_U64_MOST);
        }
    case WB_FZ_INDEL:
    case WB_FZ_LCS_SEQ:
        return start_lcs(s);
    case WB_FZ_OSA:
        if (!wb_fz_osa_init(&s->k.osa, a, m, b, n, k)) return false;
        s->k.osa.free_later = s->free_later;
        return true;
    case WB_FZ_DAMERAU_LEVENSHTEIN:
        return wb_fz_damerau_init(&s->k.damerau, a, m, b, n, k);
    case WB_FZ_HAMMING:
        hamming_init(s, &s->k.hamming);
        return true;
    case WB_FZ_PREFIX:
    case WB_FZ_POSTFIX:
        affix_init(s, &s->k.affix);
        return true;
    default:
        if (!wb_fz_jaro_init(&s->k.jaro, a, m, b, n)) return false;
        s->k.jaro.free_later = s->free_later;
        return true;
    }
}

static bool step_kernel(wb_fz *s, uint64_t budget, uint64_t *used) {
    switch (s->o.scorer) {
    case WB_FZ_LEVENSHTEIN:
        switch (lev_kernel_of(&s->o)) {
        case LEV_UNIT:
            return wb_fz_lev_step(&s->k.lev, budget, used);
        case LEV_INDEL:
            return wb_fz_lcs_step(&s->k.lcs, budget, used);
        default:
            return wb_fz_weighted_step(&s->k.weighted, budget, used);
        }
    case WB_FZ_INDEL:
    case WB_FZ_LCS_SEQ:
        return wb_fz_lcs_step(&s->k.lcs, budget, used);
    case WB_FZ_OSA:
        return wb_fz_osa_step(&s->k.osa, budget, used);
    case WB_FZ_DAMERAU_LEVENSHTEIN:
        return wb_fz_damerau_step(&s->k.damerau, budget, used);
    case WB_FZ_HAMMING:
        return wb_fz_hamming_step(&s->k.hamming, budget, used);
    case WB_FZ_PREFIX:
    case WB_FZ_POSTFIX:
        return wb_fz_affix_step(&s->k.affix, budget, used);
    default:
        return wb_fz_jaro_step(&s->k.jaro, budget, used);
    }
}

/* A pair whose shorter side fits a word, scored whole when the budget
 * covers its kernel: the short form (kernels.h), no kernel state, no
 * allocation. true when done (the distance in s->distance). */
static bool short_kernel(wb_fz *s, uint64_t budget, uint64_t *used) {
    const uint32_t *a = s->a, *b = s->b;
    size_t m = s->m, n = s->n, k = s->cutoff;
    size_t shorter = min_size(m, n);
    if (s->o.scorer == WB_FZ_HAMMING) {
        if (budget < wb_fz_hamming_units(m, n)) return false;
        wb_fz_hamming h;
        hamming_init(s, &h);
        wb_fz_hamming_step(&h, budget, used);
        s->distance = h.result;
        return true;
    }
    if (s->o.scorer == WB_FZ_PREFIX || s->o.scorer == WB_FZ_POSTFIX) {
        if (budget < wb_fz_affix_units(m, n)) return false;
        wb_fz_affix x;
        affix_init(s, &x);
        wb_fz_affix_step(&x, budget, used);
        s->distance = s->maximum - x.result;
        return true;
    }
    if (s->o.scorer == WB_FZ_DAMERAU_LEVENSHTEIN) {
        /* no pattern: a query's does not matter */
        if (shorter > WB_FZ_SHORT || budget < wb_fz_damerau_units(m, n)) return false;
        s->distance = wb_fz_damerau_short(a, m, b, n, k, used);
        return true;
    }
    if (s->query || budget < wb_fz_lcs_units(m, n)) return false;
    /* two words: the LCS's and OSA's */
    bool two = s->o.scorer == WB_FZ_INDEL || s->o.scorer == WB_FZ_LCS_SEQ ||
               s->o.scorer == WB_FZ_OSA ||
               (s->o.scorer == WB_FZ_LEVENSHTEIN && lev_kernel_of(&s->o) == LEV_INDEL);
    if (shorter > (two ? WB_FZ_SHORT_LCS : WB_FZ_SHORT)) return false;
    switch (s->o.scorer) {
    case WB_FZ_LEVENSHTEIN:
        switch (lev_kernel_of(&s->o)) {
        case LEV_UNIT:
            s->distance = wb_fz_lev_short(a, m, b, n, k, used);
            return true;
        case LEV_INDEL: {
            size_t lcs = wb_fz_lcs_short(a, m, b, n, used);
            s->distance = (wb_fz_wide)(m - lcs) * s->o.del + (wb_fz_wide)(n - lcs) * s->o.ins;
            return true;
        }
        default:
            return false;
        }
    case WB_FZ_INDEL:
        s->distance = (wb_fz_wide)m + n - 2 * (wb_fz_wide)wb_fz_lcs_short(a, m, b, n, used);
        return true;
    case WB_FZ_LCS_SEQ:
        s->distance = s->maximum - wb_fz_lcs_short(a, m, b, n, used);
        return true;
    case WB_FZ_OSA:
        s->distance = wb_fz_osa_short(a, m, b, n, k, used);
        return true;
    default:
        return false;
    }
}

/* The kernel's result, and frees it. */
static void end_kernel(wb_fz *s) {
    switch (s->o.scorer) {
    case WB_FZ_LEVENSHTEIN:
        switch (lev_kernel_of(&s->o)) {
        case LEV_UNIT:
            s->distance = s->k.lev.result;
            wb_fz_lev_free(&s->k.lev);
            break;
        case LEV_INDEL: {
            size_t lcs = s->k.lcs.result;
            s->distance = (wb_fz_wide)(s->m - lcs) * s->o.del + (wb_fz_wide)(s->n - lcs) * s->o.ins;
            wb_fz_lcs_free(&s->k.lcs);
            break;
        }
        default:
            s->distance = s->k.weighted.result;
            wb_fz_weighted_free(&s->k.weighted);
        }
        break;
    case WB_FZ_INDEL:
        s->distance = (wb_fz_wide)s->m + s->n - 2 * (wb_fz_wide)s->k.lcs.result;
        wb_fz_lcs_free(&s->k.lcs);
        break;
    case WB_FZ_LCS_SEQ:
        s->distance = s->maximum - s->k.lcs.result;
        wb_fz_lcs_free(&s->k.lcs);
        break;
    case WB_FZ_OSA:
        s->distance = s->k.osa.result;
        wb_fz_osa_free(&s->k.osa);
        break;
    case WB_FZ_DAMERAU_LEVENSHTEIN:
        s->distance = s->k.damerau.result;
        wb_fz_damerau_free(&s->k.damerau);
        break;
    case WB_FZ_HAMMING:
        s->distance = s->k.hamming.result;
        break;
    case WB_FZ_PREFIX:
    case WB_FZ_POSTFIX:
        s->distance = s->maximum - s->k.affix.result;
        break;
    default:
        s->similarity = s->k.jaro.result;
        if (s->o.scorer == WB_FZ_JARO_WINKLER)
            s->similarity =
                wb_fz_winkler(s->similarity, s->a, s->m, s->b, s->n, s->o.prefix_weight);
        wb_fz_jaro_free(&s->k.jaro);
    }
    s->kernel_live = false;
}

static void finish(wb_fz *s, double score) {
    s->passed = wb_fz_passes(&s->o, score);
    s->score = score;
    s->done = true;
}

/* An edit distance's score, from the exact distance and maximum: the
 * integer kinds in integers (s->value, too_large past 2^64 - 1), the
 * normalized ones their quotient. */
static void edit_verdict(wb_fz *s) {
    /* a distance beyond the kernel's bound cannot pass; it is the bound
     * + 1, whether the kernel stopped there or not (at most the maximum:
     * the bound is below it, wb_fz_kernel_cutoff_wide) */
    wb_fz_wide d = s->distance, most = s->maximum;
    bool beyond = s->cutoff != WB_FZ_NO_CUTOFF && d > s->cutoff;
    if (beyond) d = (wb_fz_wide)s->cutoff + 1;
    s->distance = d;
    if (!wb_fz_integers(&s->o)) {
        /* a 128-bit value's conversion is a call: 64 bits when they hold it */
        double nd = most == 0                ? 0.0
                    : most <= WB_FZ_U64_MOST ? (double)(uint64_t)d / (double)(uint64_t)most
                                             : (double)d / (double)most;
        finish(s, s->o.kind == WB_FZ_NORMALIZED_DISTANCE ? nd : 1.0 - nd);
        if (beyond) s->passed = false;
        return;
    }
    bool distance = s->o.kind == WB_FZ_DISTANCE;
    wb_fz_wide v = distance ? d : most - d;
    s->passed = !beyond && wb_fz_integer_passes(&s->o, v);
    s->too_large = s->passed && v > WB_FZ_U64_MOST;
    s->value = s->too_large ? UINT64_MAX : (uint64_t)v;
    s->score = (double)v;
    s->done = true;
}

/* same_as_earlier's verdicts */
enum { SAME_NONE, SAME_FOUND, SAME_MORE };

/* Whether the current part has the sides and measure of an earlier one
 * (the sorted tokens of one-word strings are the strings, say): then its
 * result, and on to the next part (SAME_FOUND). The sides are compared a
 * budget at a time (SAME_MORE: resumed where it stopped). */
static int same_as_earlier(wb_fz *s, wb_fz_meter *g) {
    wb_fz_part *p = &s->parts[s->part];
    for (; s->same_i < s->part; s->same_i++, s->same_side = 0, s->same_at = 0) {
        const wb_fz_part *q = &s->parts[s->same_i];
        if (q->partial != p->partial || q->xl != p->xl || q->yl != p->yl || q->total != p->total)
            continue;
        bool differ = false;
        for (; s->same_side < 2 && !differ; s->same_side++, s->same_at = 0) {
            const uint32_t *x = s->same_side ? q->y : q->x, *y = s->same_side ? p->y : p->x;
            size_t len = s->same_side ? p->yl : p->xl;
            if (x == y) continue;
            while (s->same_at < len) {
                uint64_t r = wb_fz_room(g);
                if (r == 0) return SAME_MORE;
                size_t k = min_size(len - s->same_at, wb_fz_allowance(r, WB_FZ_SAME_SYMBOLS));
                g->spent += 1 + k / WB_FZ_SAME_SYMBOLS;
                if (memcmp(x + s->same_at, y + s->same_at, k * sizeof *x) != 0) {
                    differ = true;
                    break;
                }
                s->same_at += k;
            }
        }
        if (differ) continue;
        p->result = q->result;
        wb_fz_add_base(s, p->result * p->w1 * p->w2);
        return SAME_FOUND;
    }
    return SAME_NONE;
}

/* On to the next part, its check against the earlier ones to do. */
static void next_part(wb_fz *s) {
    s->part++;
    s->same_i = s->same_at = 0;
    s->same_side = 0;
}

bool wb_fz_step(wb_fz *s, uint64_t budget, uint64_t *used) {
    if (s->done) return true;
    if (s->o.no_pad && s->o.scorer == WB_FZ_HAMMING && s->m != s->n) {
        /* rapidfuzz's pad=False: no score, an error for the caller */
        s->unequal = s->done = true;
        *used += 1;
        return true;
    }
    if (wb_fz_is_edit(s->o.scorer) || s->o.scorer <= WB_FZ_JARO_WINKLER) {
        if (!s->kernel_live && short_kernel(s, budget, used)) {
            edit_verdict(s);
            return true;
        }
        if (!s->kernel_live) {
            if (!start_kernel(s)) {
                s->failed = s->done = true;
                return true;
            }
            s->kernel_live = true;
        }
        if (!step_kernel(s, budget, used)) return false;
        end_kernel(s);
        if (wb_fz_is_edit(s->o.scorer)) {
            edit_verdict(s);
        } else {
            finish(s, wb_fz_similarity_score(s->o.kind, s->similarity, 1.0));
        }
        return true;
    }
    uint64_t start = *used;
    if (s->tokenizing) {
        wb_fz_meter g = {budget, 0};
        bool through = wb_fz_tokens_step(s, &g);
        *used += g.spent;
        if (s->failed) {
            s->done = true;
            return true;
        }
        if (!through) return false;
        wb_fz_tokens_end(s);
        wb_fz_plan_ratio(s);
    }
    while (s->part < s->nparts) {
        uint64_t spent = *used - start;
        if (spent >= budget) return false;
        if (s->same_i != SIZE_MAX) {
            wb_fz_meter g = {budget, spent};
            int same = same_as_earlier(s, &g);
            *used = start + g.spent;
            if (same == SAME_MORE) return false;
            if (same == SAME_FOUND) {
                next_part(s);
                continue;
            }
            s->same_i = SIZE_MAX; /* checked: the part's own work begins */
            if (g.spent >= budget) return false;
            spent = g.spent;
        }
        /* s->best: the part's best so far (0.0 when it begins) */
        if (!wb_fz_step_part(s, budget - spent, used)) return false;
        if (s->failed) {
            s->done = true;
            return true;
        }
        wb_fz_part *p = &s->parts[s->part];
        p->result = s->best;
        wb_fz_add_base(s, s->best * p->w1 * p->w2);
        s->best = 0.0;
        s->direction = 0;
        next_part(s);
    }
    s->similarity = s->base;
    finish(s, wb_fz_similarity_score(s->o.kind, s->similarity, 100.0));
    return true;
}

void wb_fz_free(wb_fz *s) {
    if (s->kernel_live) {
        if (s->nparts > 0 || s->o.scorer == WB_FZ_INDEL || s->o.scorer == WB_FZ_LCS_SEQ) {
            wb_fz_lcs_free(&s->k.lcs);
        } else {
            switch (s->o.scorer) {
            case WB_FZ_LEVENSHTEIN:
                if (lev_kernel_of(&s->o) == LEV_UNIT)
                    wb_fz_lev_free(&s->k.lev);
                else if (lev_kernel_of(&s->o) == LEV_INDEL)
                    wb_fz_lcs_free(&s->k.lcs);
                else
                    wb_fz_weighted_free(&s->k.weighted);
                break;
            case WB_FZ_OSA:
                wb_fz_osa_free(&s->k.osa);
                break;
            case WB_FZ_DAMERAU_LEVENSHTEIN:
                wb_fz_damerau_free(&s->k.damerau);
                break;
            case WB_FZ_HAMMING:
            case WB_FZ_PREFIX:
            case WB_FZ_POSTFIX:
                break;
            default:
                wb_fz_jaro_free(&s->k.jaro);
            }
        }
    }
    if (s->pattern_live) wb_fz_pattern_free_with(&s->needle, s->free_later);
    wb_fz_end_reversed(s);
    if (s->tokenizing) wb_fz_tokens_end(s);
    wb_fz_give_back(s, s->derived, s->derived_bytes);
    s->derived = NULL;
    s->derived_bytes = 0;
    s->kernel_live = s->pattern_live = false;
}

/* ---- units ---------------------------------------------------------------- */

static uint64_t partial_units(size_t x, size_t y) {
    size_t ls = min_size(x, y), ll = max_size(x, y);
    if (ls == 0) return 1;
    /* every window costs at most ls symbols of the haystack; both
     * directions when the sides (sorted tokens, say) have equal lengths */
    uint64_t windows = (uint64_t)wb_fz_windows_of(ls, ll) * 2;
    return sat_mul(windows, wb_fz_lcs_units(ls, ls));
}

static uint64_t part_units(const wb_fz_options *o, size_t m, size_t n) {
    switch (o->scorer) {
    case WB_FZ_LEVENSHTEIN:
        switch (lev_kernel_of(o)) {
        case LEV_UNIT:
            return wb_fz_lev_units(m, n);
        case LEV_INDEL:
            return wb_fz_lcs_units(m, n);
        default:
            return wb_fz_weighted_units(m, n);
        }
    case WB_FZ_INDEL:
    case WB_FZ_LCS_SEQ:
    case WB_FZ_RATIO:
    case WB_FZ_QRATIO:
    case WB_FZ_TOKEN_SORT_RATIO:
        return wb_fz_lcs_units(m, n);
    case WB_FZ_TOKEN_SET_RATIO:
    case WB_FZ_TOKEN_RATIO:
        return sat_mul(2, wb_fz_lcs_units(m, n));
    case WB_FZ_OSA:
        return wb_fz_osa_units(m, n);
    case WB_FZ_DAMERAU_LEVENSHTEIN:
        return wb_fz_damerau_units(m, n);
    case WB_FZ_HAMMING:
        return wb_fz_hamming_units(m, n);
    case WB_FZ_PREFIX:
    case WB_FZ_POSTFIX:
        return wb_fz_affix_units(m, n);
    case WB_FZ_JARO:
    case WB_FZ_JARO_WINKLER:
        return wb_fz_jaro_units(m, n);
    case WB_FZ_PARTIAL_RATIO:
    case WB_FZ_PARTIAL_TOKEN_SORT_RATIO:
    case WB_FZ_PARTIAL_TOKEN_SET_RATIO:
        return partial_units(m, n);
    default: /* partial_token_ratio, wratio: up to two partial parts and a ratio */
        return sat_add(sat_mul(2, partial_units(m, n)), sat_mul(2, wb_fz_lcs_units(m, n)));
    }
}

uint64_t wb_fz_units(const wb_fz_options *o, size_t m, size_t n) {
    uint64_t units = sat_add(part_units(o, m, n), wb_fz_tokens_units(o, m, n));
    if (o->alignment && o->scorer == WB_FZ_PARTIAL_RATIO && m > 0 && n > 0) {
        /* a level of the halving found at most once a window, each way */
        uint64_t windows = (uint64_t)wb_fz_windows_of(min_size(m, n), max_size(m, n)) * 2;
        units = sat_add(units, sat_mul(windows, WB_FZ_LEVEL_UNITS));
    }
    return units;
}

uint64_t wb_fz_setup_units(const wb_fz_options *o, size_t m, size_t n) {
    (void)o;
    (void)m;
    (void)n;
    return 1; /* wb_fz_start records the pair: no work that grows with it */
}

bool wb_fz_score(const wb_fz_options *o, const uint32_t *a, size_t m, const uint32_t *b, size_t n,
                 double *score, bool *passed) {
    wb_fz s;
    if (!wb_fz_start(&s, o, a, m, b, n)) return false;
    uint64_t used = 0;
    while (!wb_fz_step(&s, UINT64_MAX / 4, &used)) {
    }
    bool ok = !s.failed;
    *score = s.score;
    *passed = s.passed;
    wb_fz_free(&s);
    return ok;
}

/*
 * The hits' alignments (extract.h: the config's o.alignment, for the
 * ratio and the partial ratio): the search scores its candidates without
 * them, in whatever path is fastest; once the hits are sorted, each hit's
 * candidate is decoded again and scored by the pair scorer with its
 * alignment (wb_fz.alignment), a budget at a time, resumable inside a
 * candidate however long. The work grows with the hits kept, not with
 * the candidates searched.
 */
#include "extract_keep.h"

bool wb_fz_extract_aligns(const wb_fz_options *o) {
    return o->alignment && (o->scorer == WB_FZ_RATIO || o->scorer == WB_FZ_PARTIAL_RATIO);
}

uint64_t wb_fz_extract_align_units(const wb_fz_options *o, const wb_search_set *set,
                                   size_t query_len, size_t limit) {
    if (!wb_fz_extract_aligns(o) || set->count == 0) return 0;
    size_t hits = limit < set->count ? limit : set->count;
    size_t average = (size_t)(set->offsets[set->count] / set->count);
    uint64_t each = wb_fz_decode_units(average) + 2;
    if (o->scorer == WB_FZ_PARTIAL_RATIO)
        each += wb_fz_units(o, query_len, average) + wb_fz_setup_units(o, query_len, average);
    return each > UINT64_MAX / 2 / (hits + 1) ? UINT64_MAX / 2 : each * (hits + 1);
}

/* The candidate of the hit under way decoded into job->text, a budget at
 * a time; true once done (or failed: job->failed). */
static bool decode_hit(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used) {
    const wb_search_set *set = job->set;
    size_t i = (size_t)job->heap[job->aligned].index;
    const uint8_t *bytes = set->bytes + set->offsets[i];
    size_t len = (size_t)(set->offsets[i + 1] - set->offsets[i]);
    if (!job->decoding) {
        if (!begin_decoding(job, len, used)) return true;
    }
    uint64_t spent = *used - start, left = spent < budget ? budget - spent : 1;
    if (!wb_fz_symbols_step(&job->decoded, bytes, len, job->o.codepoints, job->text, left, used))
        return false;
    job->decoding = false;
    /* scored already: its UTF-8 is valid */
    if (job->decoded.invalid) job->failed = true;
    return true;
}

bool wb_fz_extract_align_step(wb_fz_extract *job, uint64_t budget, uint64_t start, uint64_t *used) {
    if (!job->aligns) {
        job->aligns = malloc((job->heap_len > 0 ? job->heap_len : 1) * sizeof *job->aligns);
        if (!job->aligns) {
            job->failed = true;
            return true;
        }
        *used += 1;
    }
    while (job->aligned < job->heap_len) {
        if (!job->scoring) {
            if (!decode_hit(job, budget, start, used)) return false;
            if (job->failed) return true;
            size_t n = job->decoded.count;
            if (job->o.scorer == WB_FZ_RATIO) {
                /* the whole of both */
                job->aligns[job->aligned++] = (wb_fz_alignment){0, job->qlen, 0, n};
                if (*used - start >= budget && job->aligned < job->heap_len) return false;
                continue;
            }
            /* where the score is, whether or not it passes a cutoff */
            wb_fz_options o = job->o;
            o.alignment = true;
            o.has_cutoff = false;
            if (!wb_fz_start_with(&job->fz, &o, &job->pattern, job->query, job->qlen, job->text,
                                  n)) {
                job->failed = true;
                return true;
            }
            job->fz.alloc = job->block_alloc;
            job->fz.release = job->block_free;
            job->fz.free_later = job->free_later;
            *used += wb_fz_setup_units(&o, job->qlen, n);
            job->scoring = true;
        }
        uint64_t spent = *used - start;
        if (!wb_fz_step(&job->fz, budget > spent ? budget - spent : 1, used)) return false;
        bool failed = job->fz.failed;
        job->aligns[job->aligned] = job->fz.alignment;
        wb_fz_free(&job->fz);
        job->scoring = false;
        if (failed) {
            job->failed = true;
            return true;
        }
        job->aligned++;
        if (*used - start >= budget && job->aligned < job->heap_len) return false;
    }
    return true;
}

/*
 * Fuzz target: the extract engine (c_src/fuzzy/extract.h), every scorer
 * and kind, bytes or codepoints, hits with a limit or all, or a cdist
 * row, against "score every candidate with the pair scorer (wb_fz_score),
 * then sort" (c_src/test/extract_check.h): hit for hit and bit for bit,
 * ties in input order, cells byte for byte, the same error at the same
 * candidate. Run on the packed list and on the same list with its batches
 * made once (an index), stepped in the input's budget, the host's clock
 * saying "spent" as the input asks.
 *
 * Input: the scorer byte (% WB_FZ_SCORERS); a flags byte (bits 0-1: the
 * kind; bit 2: codepoints; bit 3: a cutoff; bit 4: the cutoff is a
 * candidate's own score; bits 5-6: a limit of 1..8, a limit of 1..70
 * (the seeds take 64 at most), all, or a cdist row; bit 7: its cells of
 * 64 bits, else 32); a second flags byte (bit 0: the set marked ASCII
 * when it is; bits 1-2: the prefix weight, or for Hamming bit 1 no
 * padding (a candidate of another length an error); bits 3-4: the lane
 * kernel, one the CPU has, or none; bits 5-6: Levenshtein's weights, unit, small
 * or large; bit 7: freed half-way after a few steps); the budget (0: in
 * one go); how often the clock says "spent" (0: never); the cutoff byte
 * (scaled to the kind's range, or which candidate's score); the limit
 * byte; the weights byte (bits 0-5: Levenshtein's small or large
 * weights; bit 6: the hits' alignments, for the ratio and the partial
 * ratio); the query length; the query; then candidates separated by 0xFF
 * bytes.
 */
#include "../fuzzy/extract.h"
#include "../test/extract_check.h"
#include "fuzz.h"

#include <string.h>

static const char *const scorer_names[] = WB_FZ_SCORER_NAMES;
static const char *const kind_names[] = WB_FZ_KIND_NAMES;

/* The top of a kind's range for a scaled cutoff */
static double range_top(const wb_fz_options *o) {
    if (o->kind >= WB_FZ_NORMALIZED_DISTANCE) return 1.0;
    if (o->scorer == WB_FZ_JARO || o->scorer == WB_FZ_JARO_WINKLER) return 1.0;
    if (o->scorer >= WB_FZ_RATIO) return 100.0;
    return 255.0; /* an edit distance's own: the byte itself */
}

static bool is_ascii(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 0x80) return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wb_fuzz_input in = {data, size};
    wb_fz_options o;
    memset(&o, 0, sizeof o);
    o.scorer = (wb_fz_scorer)(wb_fuzz_byte(&in) % WB_FZ_SCORERS);
    uint8_t flags = wb_fuzz_byte(&in), more = wb_fuzz_byte(&in);
    o.kind = (wb_fz_kind)(flags & 3);
    o.codepoints = (flags & 4) != 0;
    static const double prefix[] = {0.1, 0.0, 0.25, 0.05};
    o.prefix_weight = prefix[(more >> 1) & 3];
    o.no_pad = o.scorer == WB_FZ_HAMMING && (more & 2);
    static const uint64_t small[] = {0, 1, 2, 3}, large[] = {1, 7, 1000, 4294967295u};
    unsigned weights = (more >> 5) & 3;
    o.ins = o.del = o.sub = 1;
    wb_lanes_kernel kernel = (wb_lanes_kernel)(((more >> 3) & 3) % WB_LANES_KERNELS);
    if (!wb_lanes_force(kernel)) wb_lanes_force(WB_LANES_BASELINE);
    uint8_t budget_byte = wb_fuzz_byte(&in), spent_byte = wb_fuzz_byte(&in);
    uint8_t cutoff_byte = wb_fuzz_byte(&in), limit_byte = wb_fuzz_byte(&in);
    uint8_t wbyte = wb_fuzz_byte(&in);
    /* the hits' alignments (bit 6 of the weights byte) */
    o.alignment = (o.scorer == WB_FZ_RATIO || o.scorer == WB_FZ_PARTIAL_RATIO) && (wbyte & 64);
    if (weights == 1 || weights == 2) {
        const uint64_t *w = weights == 1 ? small : large;
        o.ins = w[wbyte & 3];
        o.del = w[(wbyte >> 2) & 3];
        o.sub = w[(wbyte >> 4) & 3];
    }
    size_t qlen = wb_fuzz_byte(&in) % 120;
    if (qlen > in.size) qlen = in.size;
    const uint8_t *query = in.data;
    const uint8_t *rest = in.data + qlen;
    size_t rest_len = in.size - qlen;

    /* candidates: the pieces of rest between 0xFF bytes */
    size_t count = 1;
    for (size_t i = 0; i < rest_len; i++)
        count += rest[i] == 0xFF;
    wb_search_owned_set set;
    WB_FUZZ_CHECK(wb_search_set_alloc(&set, count, rest_len));
    size_t c = 0, at = 0;
    for (size_t i = 0; i < rest_len; i++) {
        if (rest[i] == 0xFF)
            set.offsets[++c] = at;
        else
            set.bytes[at++] = rest[i];
    }
    set.offsets[++c] = at;
    set.set.ascii = (more & 1) && is_ascii(set.bytes, at);
    wb_lanes_index prepared;
    WB_FUZZ_CHECK(wb_lanes_index_build(&prepared, set.bytes, set.offsets, count));

    if (flags & 8) {
        o.has_cutoff = true;
        if (flags & 16) {
            /* a candidate's own score: ties at the cutoff pass */
            xc_want w;
            xc_reference(&w, &o, &set.set, query, qlen);
            o.cutoff = w.passing ? w.score[w.order[cutoff_byte % w.passing]] : 0.0;
            xc_want_free(&w);
        } else {
            o.cutoff = range_top(&o) * cutoff_byte / 255.0;
        }
        if (wb_fz_integers(&o)) {
            /* as the NIF gives them: exactly */
            o.exact_cutoff = true;
            o.icutoff = (uint64_t)o.cutoff;
            o.cutoff = (double)o.icutoff;
        }
    }
    xc_way way = {.budget = budget_byte ? budget_byte : UINT64_MAX / 4,
                  .spent_every = spent_byte % 8,
                  .abandon_after = (more & 128) ? 1 + spent_byte % 5 : 0};
    switch ((flags >> 5) & 3) {
    case 0:
        way.limit = 1 + limit_byte % 8;
        break;
    case 1:
        way.limit = 1 + limit_byte % 70;
        break;
    case 2:
        way.limit = SIZE_MAX;
        break;
    default:
        way.limit = SIZE_MAX;
        way.width = (flags & 128) ? 8 : 4;
    }
    xc_want w;
    xc_reference(&w, &o, &set.set, query, qlen);
    for (int which = 0; which < 2; which++) {
        wb_search_set s = set.set;
        s.prepared = which ? &prepared : NULL;
        char why[512] = "";
        size_t steps;
        if (!xc_run(&o, &s, query, qlen, &w, &way, why, sizeof why, &steps)) {
            fprintf(stderr,
                    "%s %s%s, cutoff %s%.17g, %s of %zu, query of %zu bytes, limit %zu, cells "
                    "%zu, budget %llu: %s\n",
                    scorer_names[o.scorer], kind_names[o.kind], o.codepoints ? " (codepoints)" : "",
                    o.has_cutoff ? "" : "none ", o.cutoff, which ? "index" : "list", count, qlen,
                    way.limit, way.width, (unsigned long long)way.budget, why);
            WB_FUZZ_CHECK(!"the extract differs from the pair scorer's");
        }
    }
    xc_want_free(&w);
    wb_lanes_force(WB_LANES_KERNELS);
    wb_lanes_index_free(&prepared);
    wb_search_set_free(&set);
    return 0;
}

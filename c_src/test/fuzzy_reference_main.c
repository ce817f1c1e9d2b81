/*
 * The fuzzy scorers' reference (fuzzy_reference.h) as a program, for the
 * Elixir tests (test/support/fuzzy_reference.exs drives it through a
 * port): the one reference the C tests, the fuzz targets and the Elixir
 * tests share. Built by `make c_src/build/fuzzy_reference`, under the
 * sanitizers as the C tests are.
 *
 * It reads requests on stdin and answers each on stdout, both framed as
 * Erlang's {packet, 4} frames them: a 4-byte big-endian length, then the
 * body. Integers are big-endian, u32 or u64; an f64 is the big-endian
 * bits of an IEEE-754 double. Requests:
 *
 *   'S' score: u8 length and the scorer's name (as WellBehaved.Fuzzy
 *       names it), u8 unit (0 bytes, 1 codepoints: Unicode white space
 *       splits tokens), u64 ins, del, sub (levenshtein's weights), f64
 *       prefix weight (jaro_winkler's), u32 m and m u32 symbols, u32 n and
 *       n u32 symbols. Answer: 'E' u64 distance, u64 maximum (the edit
 *       distances) or 'F' f64 similarity, f64 top (1 for Jaro, 100 for the
 *       ratios).
 *   'K' kind: u8 length and the kind's name, then a score's answer as
 *       'S' gives it ('E' ... or 'F' ...). Answer: 'I' u64 (an edit
 *       distance's distance or similarity, exact) or 'F' f64.
 *
 * A request it cannot take is answered '!' and a message; the program
 * ends at the end of its input (0), or on a frame it cannot read (1).
 */
#include "fuzzy_reference.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

/* frames longer than this are refused: the reference is for inputs of a
 * few thousand symbols */
#define FRM_MOST (64u << 20)

__extension__ typedef unsigned __int128 frm_u128;

/* ---- frames ------------------------------------------------------------------ */

/* reads len bytes; false at the end of the input or on an error */
static bool frm_read_all(uint8_t *to, size_t len) {
    while (len > 0) {
        ssize_t r = read(STDIN_FILENO, to, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        to += r;
        len -= (size_t)r;
    }
    return true;
}

static bool frm_write_all(const uint8_t *from, size_t len) {
    while (len > 0) {
        ssize_t r = write(STDOUT_FILENO, from, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        from += r;
        len -= (size_t)r;
    }
    return true;
}

/* an answer being built: a 4-byte length, then the body */
typedef struct {
    uint8_t b[256];
    size_t len;
} frm_out;

static void frm_put(frm_out *o, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; i--)
        o->b[o->len++] = (uint8_t)(v >> (8 * i));
}

static void frm_put_f64(frm_out *o, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    frm_put(o, bits, 8);
}

static void frm_error(frm_out *o, const char *message) {
    o->len = 4;
    o->b[o->len++] = '!';
    size_t len = strlen(message);
    memcpy(o->b + o->len, message, len);
    o->len += len;
}

/* a request being read */
typedef struct {
    const uint8_t *at;
    size_t left;
} frm_in;

static bool frm_get(frm_in *in, uint64_t *v, int bytes) {
    if (in->left < (size_t)bytes) return false;
    uint64_t r = 0;
    for (int i = 0; i < bytes; i++)
        r = r << 8 | in->at[i];
    in->at += bytes;
    in->left -= (size_t)bytes;
    *v = r;
    return true;
}

static bool frm_get_f64(frm_in *in, double *v) {
    uint64_t bits;
    if (!frm_get(in, &bits, 8)) return false;
    memcpy(v, &bits, sizeof *v);
    return true;
}

/* the index of the name (u8 length, bytes) in names, or -1 */
static int frm_get_name(frm_in *in, const char *const *names, int count) {
    uint64_t len;
    if (!frm_get(in, &len, 1) || in->left < len) return -1;
    const uint8_t *name = in->at;
    in->at += len;
    in->left -= len;
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) return i;
    return -1;
}

/* u32 count, then count u32 symbols, into a new array (*s) */
static bool frm_get_symbols(frm_in *in, uint32_t **s, size_t *count) {
    uint64_t n, v;
    if (!frm_get(in, &n, 4) || in->left / 4 < n) return false;
    *s = fzr_alloc(n, sizeof **s);
    for (size_t i = 0; i < n; i++) {
        frm_get(in, &v, 4);
        (*s)[i] = (uint32_t)v;
    }
    *count = n;
    return true;
}

/* ---- requests ---------------------------------------------------------------- */

static const char *const frm_scorers[] = WB_FZ_SCORER_NAMES;
static const char *const frm_kinds[] = WB_FZ_KIND_NAMES;

/* Whether levenshtein's maximum (and so its distance) fits 64 bits: the
 * reference computes both in 64-bit integers. */
static bool frm_fits(size_t m, size_t n, uint64_t ins, uint64_t del, uint64_t sub) {
    frm_u128 via_sub = m >= n ? (frm_u128)n * sub + (frm_u128)(m - n) * del
                              : (frm_u128)m * sub + (frm_u128)(n - m) * ins;
    frm_u128 all = (frm_u128)m * del + (frm_u128)n * ins;
    return (all < via_sub ? all : via_sub) <= UINT64_MAX;
}

static void frm_score(frm_in *in, frm_out *out) {
    wb_fz_options o = {0};
    uint64_t unit;
    int scorer = frm_get_name(in, frm_scorers, WB_FZ_SCORERS);
    if (scorer < 0) {
        frm_error(out, "unknown scorer");
        return;
    }
    o.scorer = (wb_fz_scorer)scorer;
    if (!frm_get(in, &unit, 1) || unit > 1 || !frm_get(in, &o.ins, 8) || !frm_get(in, &o.del, 8) ||
        !frm_get(in, &o.sub, 8) || !frm_get_f64(in, &o.prefix_weight)) {
        frm_error(out, "bad options");
        return;
    }
    o.codepoints = unit == 1;
    uint32_t *a = NULL, *b = NULL;
    size_t m = 0, n = 0;
    if (!frm_get_symbols(in, &a, &m) || !frm_get_symbols(in, &b, &n) || in->left != 0) {
        frm_error(out, "bad symbols");
    } else if (o.scorer == WB_FZ_LEVENSHTEIN && !frm_fits(m, n, o.ins, o.del, o.sub)) {
        frm_error(out, "weights too large: the maximum passes 2^64 - 1");
    } else {
        fzr_raw r = fzr_compute(&o, a, m, b, n);
        out->b[out->len++] = r.edit ? 'E' : 'F';
        if (r.edit) {
            frm_put(out, r.distance, 8);
            frm_put(out, r.maximum, 8);
        } else {
            frm_put_f64(out, r.similarity);
            frm_put_f64(out, r.top);
        }
    }
    free(a);
    free(b);
}

static void frm_kind(frm_in *in, frm_out *out) {
    int kind = frm_get_name(in, frm_kinds, WB_FZ_KINDS);
    if (kind < 0) {
        frm_error(out, "unknown kind");
        return;
    }
    fzr_raw r = {0};
    uint64_t tag;
    bool ok = frm_get(in, &tag, 1);
    r.edit = tag == 'E';
    if (r.edit)
        ok = ok && frm_get(in, &r.distance, 8) && frm_get(in, &r.maximum, 8) &&
             r.distance <= r.maximum;
    else
        ok = ok && tag == 'F' && frm_get_f64(in, &r.similarity) && frm_get_f64(in, &r.top);
    if (!ok || in->left != 0) {
        frm_error(out, "bad score");
        return;
    }
    if (r.edit && (kind == WB_FZ_DISTANCE || kind == WB_FZ_SIMILARITY)) {
        /* exact, past 2^53 too (fzr_kind_score's double is not) */
        out->b[out->len++] = 'I';
        frm_put(out, kind == WB_FZ_DISTANCE ? r.distance : r.maximum - r.distance, 8);
    } else {
        out->b[out->len++] = 'F';
        frm_put_f64(out, fzr_kind_score((wb_fz_kind)kind, &r));
    }
}

int main(void) {
    uint8_t head[4];
    while (frm_read_all(head, 4)) {
        uint32_t len = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 |
                       (uint32_t)head[3];
        if (len == 0 || len > FRM_MOST) {
            fprintf(stderr, "fuzzy_reference: a frame of %u bytes\n", len);
            return 1;
        }
        uint8_t *body = fzr_alloc(len, 1);
        if (!frm_read_all(body, len)) {
            free(body);
            fprintf(stderr, "fuzzy_reference: the input ended in a frame\n");
            return 1;
        }
        frm_in in = {body + 1, len - 1};
        frm_out out = {.len = 4};
        if (body[0] == 'S')
            frm_score(&in, &out);
        else if (body[0] == 'K')
            frm_kind(&in, &out);
        else
            frm_error(&out, "unknown request");
        free(body);
        uint32_t body_len = (uint32_t)(out.len - 4);
        for (int i = 0; i < 4; i++)
            out.b[i] = (uint8_t)(body_len >> (8 * (3 - i)));
        if (!frm_write_all(out.b, out.len)) return 1;
    }
    return 0;
}

/* The text NIFs of WellBehaved.Fuzzy, each bounded to TEXT_IN_CALL_MOST
 * bytes of input a call (about 100 us at most): the default and folding
 * processors (WellBehaved.Fuzzy.Processor) and the check that text needs
 * no grapheme clusters (WellBehaved.Fuzzy.Graphemes).
 *
 *   fuzzy_default_process(Binary) -> Processed | other
 *     the default processor of ASCII text of up to TEXT_IN_CALL_MOST
 *     bytes; `other` for any other text (Elixir's)
 *   fuzzy_fold(Binary, From) -> {Folded, Next} | other
 *     the fold of Binary's bytes from From to Next (at most about
 *     TEXT_IN_CALL_MOST of them): trimmed when they are the whole binary
 *     (From 0, Next its size), untrimmed otherwise; `other` when the text
 *     is not UTF-8 or holds a codepoint the native table lacks
 *   fuzzy_graphemes_scan(Binary, From) -> single | clusters | invalid | {more, Next}
 *     wb_graphemes_scan from From (graphemes.h) */
#include "jobs.h"

#include "../text/fold.h"
#include "../text/graphemes.h"

/* A test reads it: test/fuzzy_fold_test.exs (the chunks of a long text) */
#define TEXT_IN_CALL_MOST 65536

static ERL_NIF_TERM atom_other, atom_single, atom_clusters, atom_invalid, atom_more;

ERL_NIF_TERM wb_fuzzy_default_process(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary in;
    if (!enif_inspect_binary(env, argv[0], &in)) return enif_make_badarg(env);
    if (in.size > TEXT_IN_CALL_MOST || !wb_text_ascii(in.data, in.size)) return atom_other;
    ERL_NIF_TERM out;
    unsigned char *bytes = enif_make_new_binary(env, in.size, &out);
    size_t len = 0;
    if (!bytes) return atom_other;
    wb_fz_default_process_ascii(in.data, in.size, bytes, &len);
    return len == in.size ? out : enif_make_sub_binary(env, out, 0, len);
}

/* the binary and a byte offset into it */
static bool get_text_from(ErlNifEnv *env, const ERL_NIF_TERM argv[], ErlNifBinary *in,
                          size_t *from) {
    ErlNifUInt64 at;
    if (!enif_inspect_binary(env, argv[0], in) || !enif_get_uint64(env, argv[1], &at) ||
        at > in->size)
        return false;
    *from = (size_t)at;
    return true;
}

ERL_NIF_TERM wb_fuzzy_fold(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary in;
    size_t from, next, len;
    if (!get_text_from(env, argv, &in, &from)) return enif_make_badarg(env);
    if (!wb_fold_measure(in.data, in.size, from, TEXT_IN_CALL_MOST, &next, &len)) return atom_other;
    ERL_NIF_TERM out;
    unsigned char *bytes = enif_make_new_binary(env, len, &out);
    if (!bytes) return atom_other;
    wb_fold_write(in.data, from, next, bytes);
    if (from == 0 && next == in.size) {
        size_t start, kept = wb_fold_trim(bytes, len, &start);
        if (kept != len) out = enif_make_sub_binary(env, out, start, kept);
    }
    return enif_make_tuple2(env, out, enif_make_uint64(env, next));
}

ERL_NIF_TERM wb_fuzzy_graphemes_scan(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    ErlNifBinary in;
    size_t from, next = 0;
    if (!get_text_from(env, argv, &in, &from)) return enif_make_badarg(env);
    switch (wb_graphemes_scan(in.data, in.size, from, TEXT_IN_CALL_MOST, &next)) {
    case WB_GRAPHEMES_SINGLE:
        return atom_single;
    case WB_GRAPHEMES_CLUSTERS:
        return atom_clusters;
    case WB_GRAPHEMES_INVALID:
        return atom_invalid;
    case WB_GRAPHEMES_MORE:
        break;
    }
    return enif_make_tuple2(env, atom_more, enif_make_uint64(env, next));
}

void wb_fuzzy_text_load(ErlNifEnv *env) {
    atom_other = enif_make_atom(env, "other");
    atom_single = enif_make_atom(env, "single");
    atom_clusters = enif_make_atom(env, "clusters");
    atom_invalid = enif_make_atom(env, "invalid");
    atom_more = enif_make_atom(env, "more");
}

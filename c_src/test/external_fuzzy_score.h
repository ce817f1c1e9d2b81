/*
 * The fuzzy score job in the built-in server (test_external.c): the request
 * WellBehaved.Fuzzy.score/3 sends with schedule: :external, {wb_job,
 * fuzzy_score, Tiny, {A, B, Unit, {Scorer, Kind, Cutoff, Ins, Del, Sub,
 * PrefixWeight, Pad, Alignment}}}, answered by dispatch: unit-cost
 * Levenshtein distances against the plain dynamic program (reference.h)
 * on random pairs, a ratio against its definition, LCSseq, Prefix and
 * Postfix, cutoffs, a partial ratio's alignment encoded ({Score,
 * {SrcStart, SrcEnd, DestStart, DestEnd}}), the errors of invalid UTF-8,
 * of Hamming without padding on unequal lengths and of bad options, in
 * whole and in one-unit steps.
 */
#ifndef EXTERNAL_FUZZY_SCORE_H
#define EXTERNAL_FUZZY_SCORE_H

/* the request; cutoff < 0: nil; scorer/kind/pad: atoms; the alignment
 * asked for when fz_align */
static bool fz_align;

static void fz_request_pad(ei_x_buff *x, bool tiny, const char *a, size_t alen, const char *b,
                           size_t blen, const char *unit, const char *scorer, const char *kind,
                           long long cutoff, const char *pad) {
    ei_x_new_with_version(x);
    ei_x_encode_tuple_header(x, 4);
    ei_x_encode_atom(x, "wb_job");
    ei_x_encode_atom(x, "fuzzy_score");
    ei_x_encode_atom(x, tiny ? "true" : "false");
    ei_x_encode_tuple_header(x, 4);
    ei_x_encode_binary(x, a, (long)alen);
    ei_x_encode_binary(x, b, (long)blen);
    ei_x_encode_atom(x, unit);
    ei_x_encode_tuple_header(x, 9);
    ei_x_encode_atom(x, scorer);
    ei_x_encode_atom(x, kind);
    if (cutoff < 0)
        ei_x_encode_atom(x, "nil");
    else
        ei_x_encode_ulonglong(x, (unsigned long long)cutoff);
    for (int i = 0; i < 3; i++)
        ei_x_encode_ulong(x, 1);
    ei_x_encode_double(x, 0.1);
    ei_x_encode_atom(x, pad);
    ei_x_encode_atom(x, fz_align ? "true" : "false");
}

static void fz_request(ei_x_buff *x, bool tiny, const char *a, size_t alen, const char *b,
                       size_t blen, const char *unit, const char *scorer, const char *kind,
                       long long cutoff) {
    fz_request_pad(x, tiny, a, alen, b, blen, unit, scorer, kind, cutoff, "true");
}

/* Hamming's distance with `pad` (an atom) */
static long long fz_hamming(bool tiny, const char *a, const char *b, const char *unit,
                            const char *pad, char reason[MAXATOMLEN]) {
    ei_x_buff x;
    fz_request_pad(&x, tiny, a, strlen(a), b, strlen(b), unit, "hamming", "distance", -1, pad);
    long long got = dispatch(x.buff, (size_t)x.index, reason);
    ei_x_free(&x);
    return got;
}

/* a partial ratio with its alignment: {ok, {Score, {Ss, Se, Ds, De}}} into
 * score and at[4]; false for any other reply */
static bool fz_aligned(bool tiny, const char *a, const char *b, double *score, long at[4]) {
    ei_x_buff x;
    fz_align = true;
    fz_request(&x, tiny, a, strlen(a), b, strlen(b), "byte", "partial_ratio", "similarity", -1);
    fz_align = false;
    wb_ext_reply reply;
    bool ok = false;
    if (wb_ext_dispatch(x.buff, (size_t)x.index, &reply, NULL, NULL) == 0) {
        size_t n;
        char *out = flatten(&reply, &n);
        int idx = 0, version, arity, inner, span;
        char atom[MAXATOMLEN];
        ok = ei_decode_version(out, &idx, &version) == 0 &&
             ei_decode_tuple_header(out, &idx, &arity) == 0 && arity == 2 &&
             ei_decode_atom(out, &idx, atom) == 0 && strcmp(atom, "ok") == 0 &&
             ei_decode_tuple_header(out, &idx, &inner) == 0 && inner == 2 &&
             ei_decode_double(out, &idx, score) == 0 &&
             ei_decode_tuple_header(out, &idx, &span) == 0 && span == 4;
        for (int i = 0; ok && i < 4; i++)
            ok = ei_decode_long(out, &idx, &at[i]) == 0;
        ok = ok && (size_t)idx == n;
        free(out);
        wb_ext_reply_free(&reply);
    }
    ei_x_free(&x);
    return ok;
}

/* an integer score (dispatch's answer) */
static long long fz_int(bool tiny, const char *a, size_t alen, const char *b, size_t blen,
                        const char *unit, const char *scorer, long long cutoff,
                        char reason[MAXATOMLEN]) {
    ei_x_buff x;
    fz_request(&x, tiny, a, alen, b, blen, unit, scorer, "distance", cutoff);
    long long got = dispatch(x.buff, (size_t)x.index, reason);
    ei_x_free(&x);
    return got;
}

/* a float score: {ok, Float}; NAN for any other reply */
static double fz_float(const char *a, const char *b, const char *scorer, const char *kind) {
    ei_x_buff x;
    fz_request(&x, false, a, strlen(a), b, strlen(b), "byte", scorer, kind, -1);
    wb_ext_reply reply;
    double score = NAN;
    if (wb_ext_dispatch(x.buff, (size_t)x.index, &reply, NULL, NULL) == 0) {
        size_t n;
        char *out = flatten(&reply, &n);
        int idx = 0, version, arity;
        char atom[MAXATOMLEN];
        double v;
        if (ei_decode_version(out, &idx, &version) == 0 &&
            ei_decode_tuple_header(out, &idx, &arity) == 0 && arity == 2 &&
            ei_decode_atom(out, &idx, atom) == 0 && strcmp(atom, "ok") == 0 &&
            ei_decode_double(out, &idx, &v) == 0 && (size_t)idx == n)
            score = v;
        free(out);
        wb_ext_reply_free(&reply);
    }
    ei_x_free(&x);
    return score;
}

static void test_fuzzy_score(void) {
    char reason[MAXATOMLEN];
    for (int round = 0; round < 200; round++) {
        char a[40], b[40];
        size_t m = (size_t)check_random() % sizeof a, n = (size_t)check_random() % sizeof b;
        for (size_t i = 0; i < m; i++)
            a[i] = (char)('a' + check_random() % 4);
        for (size_t i = 0; i < n; i++)
            b[i] = (char)('a' + check_random() % 4);
        long long want =
            (long long)wb_ref_distance_bytes((const uint8_t *)a, m, (const uint8_t *)b, n);
        bool tiny = round % 4 == 0;
        long long got = fz_int(tiny, a, m, b, n, "byte", "levenshtein", -1, reason);
        CHECK(got == want, "fuzzy_score levenshtein %zu x %zu: got %lld, want %lld", m, n, got,
              want);
        long long k = (long long)(check_random() % 6);
        got = fz_int(tiny, a, m, b, n, "byte", "levenshtein", k, reason);
        CHECK(got == (want <= k ? want : k + 1), "cutoff %lld: got %lld, want %lld", k, got,
              want <= k ? want : k + 1);
    }
    CHECK(fz_int(false, "h\xc3\xa9llo", 6, "hello", 5, "codepoint", "levenshtein", -1, reason) == 1,
          "codepoints");
    CHECK(fz_int(false, "ab", 2, "ba", 2, "byte", "osa", -1, reason) == 1, "osa transposition");

    /* ratio = 100 * (1 - indel / (m + n)): 29 bytes, one insertion */
    double r = fz_float("this is a test", "this is a test!", "ratio", "similarity");
    CHECK(fabs(r - 100.0 * (1.0 - 1.0 / 29.0)) < 1e-9, "ratio: got %.17g", r);
    r = fz_float("MARTHA", "MARHTA", "jaro", "similarity");
    /* 6 matches, 1 transposition: (1 + 1 + 5/6) / 3 */
    CHECK(fabs(r - (2.0 + 5.0 / 6.0) / 3.0) < 1e-12, "jaro: got %.17g", r);

    for (int tiny = 0; tiny < 2; tiny++) {
        CHECK(fz_int(tiny, "\xff", 1, "a", 1, "codepoint", "ratio", -1, reason) == -2 &&
                  strcmp(reason, "invalid_utf8_a") == 0,
              "invalid UTF-8 in the first argument");
        CHECK(fz_int(tiny, "a", 1, "a\xc3", 2, "codepoint", "indel", -1, reason) == -2 &&
                  strcmp(reason, "invalid_utf8_b") == 0,
              "invalid UTF-8 in the second argument");
    }
    CHECK(fz_int(false, "a", 1, "b", 1, "byte", "nope", -1, reason) == -2 &&
              strcmp(reason, "badarg") == 0,
          "an unknown scorer: badarg");

    /* LCSseq, Prefix, Postfix: max(m, n) less the LCS, the common prefix,
     * the common suffix (rapidfuzz-cpp's answers) */
    for (int tiny = 0; tiny < 2; tiny++) {
        CHECK(fz_int(tiny, "South Korea", 11, "North Korea", 11, "byte", "lcs_seq", -1, reason) ==
                  2,
              "lcs_seq");
        CHECK(fz_int(tiny, "hello", 5, "help", 4, "byte", "prefix", -1, reason) == 2, "prefix");
        CHECK(fz_int(tiny, "postfix", 7, "suffix", 6, "byte", "postfix", -1, reason) == 4,
              "postfix");
        CHECK(fz_int(tiny, "postfix", 7, "suffix", 6, "byte", "postfix", 3, reason) == 4,
              "postfix past a cutoff: the cutoff + 1");
    }
    r = fz_float("South Korea", "North Korea", "lcs_seq", "normalized_distance");
    CHECK(r == 2.0 / 11.0, "lcs_seq normalized: got %.17g", r);

    /* Hamming: padded, or without padding an error naming the lengths
     * (codepoints: "café" has 5 bytes, 4 codepoints) */
    for (int tiny = 0; tiny < 2; tiny++) {
        CHECK(fz_hamming(tiny, "abc", "abcde", "byte", "true", reason) == 2, "hamming padded");
        CHECK(fz_hamming(tiny, "abc", "abd", "byte", "false", reason) == 1, "hamming, no pad");
        CHECK(fz_hamming(tiny, "abc", "abcde", "byte", "false", reason) == -2 &&
                  strcmp(reason, "unequal_lengths 3 5") == 0,
              "hamming without padding of 3 and 5 bytes: %s", reason);
        CHECK(fz_hamming(tiny, "caf\xc3\xa9", "cafe", "byte", "false", reason) == -2 &&
                  strcmp(reason, "unequal_lengths 5 4") == 0,
              "hamming without padding of 5 and 4 bytes: %s", reason);
        CHECK(fz_hamming(tiny, "caf\xc3\xa9", "cafe", "codepoint", "false", reason) == 1,
              "hamming without padding of 4 codepoints each");
        CHECK(fz_hamming(tiny, "abc", "abd", "byte", "maybe", reason) == -2 &&
                  strcmp(reason, "badarg") == 0,
              "a pad neither true nor false: badarg");
    }
    CHECK(fz_int(false, "a", 1, "b", 1, "word", "indel", -1, reason) == -2 &&
              strcmp(reason, "badarg") == 0,
          "an unknown unit: badarg");

    /* rapidfuzz's documented example: "certai" of the first, the second whole */
    for (int tiny = 0; tiny < 2; tiny++) {
        long at[4];
        double score;
        CHECK(fz_aligned(tiny, "a certain string", "cetain", &score, at) &&
                  fabs(score - 100.0 * 10.0 / 12.0) < 1e-9 && at[0] == 2 && at[1] == 8 &&
                  at[2] == 0 && at[3] == 6,
              "partial ratio's alignment");
    }
    fz_align = true;
    CHECK(fz_int(false, "a", 1, "b", 1, "byte", "indel", -1, reason) == -2 &&
              strcmp(reason, "badarg") == 0,
          "an alignment for a scorer without one: badarg");
    fz_align = false;
}

#endif

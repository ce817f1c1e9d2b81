/*
 * Unit tests of the server of SDK job types (c_src/external/wb_ext_jobs.c,
 * with its terms, wb_ext_terms.c, and its erl_nif, wb_ext_nif.c),
 * built with AddressSanitizer and UBSan by `make test`: job types of this
 * file run through wb_ext_dispatch as a server runs them. Terms of every
 * kind go through decode and come back (a job whose result is its
 * argument), against ei's own encoding; a job stepped one unit at a time
 * and in long steps gives the fold computed here; decode's and init's
 * refusals, a raising result, a binary handed over by take_result, a job
 * cancelled mid-way (its destroy runs, the server's counters go back to
 * 0), and malformed requests (every prefix of a valid one, wrong arity,
 * unknown job, a pid among the arguments) answered without a crash.
 */
#define _GNU_SOURCE
#define WB_EXTERNAL_SERVER /* the declarations of a server build */
#include "../external/wb_external.h"

#include <stdlib.h>
#include <string.h>
#include <wb_runtime.h>

#include "check.h"
#include "mirror_job.h"

/* --- job types ----------------------------------------------------------------------- */

/* "fold": {Hash, Steps} of the numbers 0 .. N - 1; N = 0 never ends (for
 * cancelling); a second argument `reject` makes decode refuse, `fail` init */
typedef struct {
    uint64_t n;
    int mode; /* 0, 1 reject, 2 fail */
} fold_args;

typedef struct {
    uint64_t next, n, hash, steps;
} fold_state;

static int destroyed;

static bool fold_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    fold_args *a = args;
    ErlNifUInt64 n;
    char how[16];
    if (!enif_get_uint64(env, argv[0], &n) ||
        !enif_get_atom(env, argv[1], how, sizeof how, ERL_NIF_LATIN1))
        return false;
    a->n = n;
    a->mode = strcmp(how, "reject") == 0 ? 1 : strcmp(how, "fail") == 0 ? 2 : 0;
    if (a->mode == 1) return wb_reject(wb_atom(env, "refused_in_decode"));
    return true;
}

static uint64_t fold_predict(const void *args) {
    return ((const fold_args *)args)->n;
}

static bool fold_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    const fold_args *a = args;
    if (a->mode == 2) {
        *reason = enif_make_tuple2(env, wb_atom(env, "init_failed"), enif_make_uint64(env, a->n));
        return false;
    }
    ((fold_state *)state)->n = a->n;
    return true;
}

static uint64_t fold_hash(uint64_t hash, uint64_t i) {
    return hash * 6364136223846793005u + i + 1442695040888963407u;
}

static bool fold_step(void *state, uint64_t budget, uint64_t *used) {
    fold_state *s = state;
    s->steps++;
    if (s->n == 0) { /* never ends; asks the clock as a careful step does */
        while (!wb_slice_spent())
            ;
        *used += 1;
        return false;
    }
    uint64_t end = budget < s->n - s->next ? s->next + budget : s->n;
    *used += end - s->next;
    for (; s->next < end; s->next++)
        s->hash = fold_hash(s->hash, s->next);
    return s->next == s->n;
}

static ERL_NIF_TERM fold_result(ErlNifEnv *env, const void *state) {
    const fold_state *s = state;
    return enif_make_tuple2(env, enif_make_uint64(env, s->hash), enif_make_uint64(env, s->steps));
}

static void fold_destroy(void *state) {
    (void)state;
    destroyed++;
}

static size_t fold_memory(const void *state) {
    (void)state;
    return 1000;
}

static wb_job_type fold_job = {
    .name = "fold",
    .argc = 2,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(fold_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = fold_init,
    .step = fold_step,
    .result = fold_result,
    .memory = fold_memory,
    .destroy = fold_destroy,
    .ps_per_unit = 2000,
};

/* "raising": result raises badarg */
static ERL_NIF_TERM raising_result(ErlNifEnv *env, const void *state) {
    (void)state;
    return enif_make_badarg(env);
}

static wb_job_type raising_job = {
    .name = "raising",
    .argc = 1,
    .args_size = sizeof(mirror_args),
    .state_size = sizeof(mirror_args),
    .decode = mirror_decode,
    .predict = one_unit,
    .init = mirror_init,
    .step = done_step,
    .result = raising_result,
};

/* "owned": a binary of N bytes (byte i = i mod 251) made by the job and
 * handed over by take_result; "texts": [N, "N" as a string, <<"bin">>
 * sub-binary, an iolist flattened] from the argument's pieces */
typedef struct {
    ErlNifBinary bin;
    bool owns;
} owned_state;

static bool owned_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    owned_state *s = state;
    uint64_t n = ((const fold_args *)args)->n;
    if (!enif_alloc_binary((size_t)n, &s->bin)) {
        *reason = wb_atom(env, "enomem");
        return false;
    }
    for (size_t i = 0; i < s->bin.size; i++)
        s->bin.data[i] = (unsigned char)(i % 251);
    s->owns = true;
    return true;
}

static ERL_NIF_TERM owned_take(ErlNifEnv *env, void *state) {
    owned_state *s = state;
    s->owns = false;
    return enif_make_binary(env, &s->bin);
}

static void owned_destroy(void *state) {
    owned_state *s = state;
    if (s->owns) enif_release_binary(&s->bin);
}

static wb_job_type owned_job = {
    .name = "owned",
    .argc = 2,
    .args_size = sizeof(fold_args),
    .state_size = sizeof(owned_state),
    .decode = fold_decode,
    .predict = fold_predict,
    .init = owned_init,
    .step = done_step,
    .take_result = owned_take,
    .destroy = owned_destroy,
};

static ERL_NIF_TERM pieces_result(ErlNifEnv *env, const void *state) {
    ERL_NIF_TERM arg = ((const mirror_args *)state)->term, bin_term;
    ErlNifBinary flat;
    if (!enif_inspect_iolist_as_binary(env, arg, &flat)) return enif_make_badarg(env);
    unsigned char *copy = enif_make_new_binary(env, flat.size, &bin_term);
    memcpy(copy, flat.data, flat.size);
    unsigned len = 0;
    enif_get_list_length(env, arg, &len);
    ERL_NIF_TERM items[] = {
        enif_make_uint(env, len),
        enif_make_string(env, "abc", ERL_NIF_LATIN1),
        bin_term,
        enif_make_sub_binary(env, bin_term, 1, flat.size >= 1 ? flat.size - 1 : 0),
        enif_make_list(env, 2, enif_make_int(env, -5), enif_make_double(env, 0.5)),
        enif_make_atom_len(env, "ok", 2),
    };
    return enif_make_list_from_array(env, items, sizeof items / sizeof *items);
}

static wb_job_type pieces_job = {
    .name = "pieces",
    .argc = 1,
    .args_size = sizeof(mirror_args),
    .state_size = sizeof(mirror_args),
    .decode = mirror_decode,
    .predict = one_unit,
    .init = mirror_init,
    .step = done_step,
    .result = pieces_result,
};

static wb_job_type *const types[] = {&mirror_job, &fold_job,   &raising_job,
                                     &owned_job,  &pieces_job, NULL};

/* --- requests and replies ------------------------------------------------------------- */

static void job_request(ei_x_buff *x, const char *name, bool tiny, int argc) {
    ei_x_new_with_version(x);
    ei_x_encode_tuple_header(x, 4);
    ei_x_encode_atom(x, "wb_job");
    ei_x_encode_atom(x, name);
    ei_x_encode_atom(x, tiny ? "true" : "false");
    ei_x_encode_tuple_header(x, argc);
}

/* the reply's payload, flattened (NULL when dispatch did not answer) */
static char *dispatch(const ei_x_buff *req, size_t *len, int *rc, wb_ext_cancel_fn cancel,
                      void *ctx) {
    wb_ext_reply reply;
    *rc = wb_ext_dispatch(req->buff, (size_t)req->index, &reply, cancel, ctx);
    if (*rc != 0) return NULL;
    size_t n = 0;
    for (int i = 0; i < reply.iovcnt; i++)
        n += reply.iov[i].iov_len;
    char *out = malloc(n + 1);
    size_t at = 0;
    for (int i = 0; i < reply.iovcnt; i++) {
        memcpy(out + at, reply.iov[i].iov_base, reply.iov[i].iov_len);
        at += reply.iov[i].iov_len;
    }
    wb_ext_reply_free(&reply);
    *len = n;
    return out;
}

/* the request answers exactly {Tag, Term}, Term as `encode` writes it */
static void expect(const ei_x_buff *req, const char *tag, void (*encode)(ei_x_buff *, void *),
                   void *ctx, const char *what) {
    ei_x_buff want;
    ei_x_new_with_version(&want);
    ei_x_encode_tuple_header(&want, 2);
    ei_x_encode_atom(&want, tag);
    encode(&want, ctx);
    size_t n = 0;
    int rc;
    char *got = dispatch(req, &n, &rc, NULL, NULL);
    CHECK(got && n == (size_t)want.index && memcmp(got, want.buff, n) == 0,
          "%s: the reply is {%s, ...} as expected (rc %d, %zu bytes, expected %d)", what, tag, rc,
          n, want.index);
    free(got);
    ei_x_free(&want);
}

static void encode_atom_ctx(ei_x_buff *x, void *ctx) {
    ei_x_encode_atom(x, ctx);
}

/* the request answers {error, Reason} with Reason an atom */
static void expect_error(const ei_x_buff *req, const char *reason, const char *what) {
    expect(req, "error", encode_atom_ctx, (void *)reason, what);
}

/* --- mirror: every kind of term comes back ---------------------------------------------- */

typedef void (*term_fn)(ei_x_buff *);

static void t_ints(ei_x_buff *x) {
    static const long long values[] = {
        0, 1, 255, 256, -1, 2147483647, -2147483648LL, 1LL << 40, INT64_MIN, INT64_MAX};
    ei_x_encode_list_header(x, sizeof values / sizeof *values + 1);
    for (size_t i = 0; i < sizeof values / sizeof *values; i++)
        ei_x_encode_longlong(x, values[i]);
    ei_x_encode_ulonglong(x, UINT64_MAX);
    ei_x_encode_empty_list(x);
}

static void t_floats(ei_x_buff *x) {
    ei_x_encode_tuple_header(x, 3);
    ei_x_encode_double(x, 1.5);
    ei_x_encode_double(x, -0.0);
    ei_x_encode_double(x, 1e300);
}

static void t_atoms(ei_x_buff *x) {
    ei_x_encode_tuple_header(x, 3);
    ei_x_encode_atom_len_as(x, "", 0, ERLANG_UTF8, ERLANG_UTF8);
    ei_x_encode_atom_len_as(x, "ünïcödé", (int)strlen("ünïcödé"), ERLANG_UTF8, ERLANG_UTF8);
    char long_name[256];
    memset(long_name, 'a', 255);
    long_name[255] = '\0';
    ei_x_encode_atom_len_as(x, long_name, 255, ERLANG_UTF8, ERLANG_UTF8);
}

static void t_binaries(ei_x_buff *x) {
    size_t n = 64 * 1024;
    char *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)(i * 131 + (i >> 9)); /* the same bytes every time */
    ei_x_encode_tuple_header(x, 2);
    ei_x_encode_binary(x, "", 0);
    ei_x_encode_binary(x, data, (long)n);
    free(data);
}

static void t_nested(ei_x_buff *x) {
    for (int i = 0; i < 450; i++) {
        ei_x_encode_tuple_header(x, 2);
        ei_x_encode_long(x, i);
        ei_x_encode_list_header(x, 1);
    }
    ei_x_encode_empty_list(x);
    for (int i = 0; i < 450; i++)
        ei_x_encode_empty_list(x);
}

static void t_improper(ei_x_buff *x) {
    ei_x_encode_list_header(x, 2);
    ei_x_encode_atom(x, "a");
    ei_x_encode_tuple_header(x, 0);
    ei_x_encode_binary(x, "tail", 4);
}

/* a map, a 72-bit integer and a bitstring: passed on as their bytes */
static void t_raw(ei_x_buff *x) {
    ei_x_encode_tuple_header(x, 3);
    ei_x_encode_map_header(x, 2);
    ei_x_encode_atom(x, "k");
    ei_x_encode_list_header(x, 1);
    ei_x_encode_long(x, 7);
    ei_x_encode_empty_list(x);
    ei_x_encode_binary(x, "v", 1);
    ei_x_encode_map_header(x, 0);
    static const char big[] = {ERL_SMALL_BIG_EXT, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    ei_x_append_buf(x, big, sizeof big);
    ei_x_encode_bitstring(x, "\xff\x80", 0, 9);
}

static void mirror(term_fn term, const char *what) {
    ei_x_buff req;
    job_request(&req, "mirror", false, 1);
    term(&req);
    ei_x_buff want;
    ei_x_new_with_version(&want);
    ei_x_encode_tuple_header(&want, 2);
    ei_x_encode_atom(&want, "ok");
    term(&want);
    size_t n = 0;
    int rc;
    char *got = dispatch(&req, &n, &rc, NULL, NULL);
    CHECK(got && n == (size_t)want.index && memcmp(got, want.buff, n) == 0,
          "mirror %s: the term comes back (rc %d, %zu bytes, expected %d)", what, rc, n,
          want.index);
    free(got);
    ei_x_free(&req);
    ei_x_free(&want);
}

/* forms ei does not write, decoded as the VM does: a string (a list of
 * bytes), latin-1 atoms, a list with a tail in a list */
static void test_other_forms(void) {
    static const struct {
        const char *in;
        size_t in_len;
        const char *out; /* the term as the server encodes it */
        size_t out_len;
        const char *what;
    } cases[] = {
#define LIT(s) s, sizeof(s) - 1
        {LIT("k\0\003ab\xff"), LIT("l\0\0\0\003a\141a\142a\377j"), "a string"},
        {LIT("k\0\0"), LIT("j"), "an empty string"},
        {LIT("s\002\xe9t"), LIT("w\003\xc3\xa9t"), "a small latin-1 atom"},
        {LIT("d\0\002ok"), LIT("w\002ok"), "a latin-1 atom"},
        {LIT("v\0\002ok"), LIT("w\002ok"), "a UTF-8 atom"},
        {LIT("b\xff\xff\xff\xfe"), LIT("b\xff\xff\xff\xfe"), "a negative integer"},
        {LIT("n\010\001\0\0\0\0\0\0\0\200"), LIT("n\010\001\0\0\0\0\0\0\0\200"), "INT64_MIN"},
        {LIT("n\001\0\005"), LIT("a\005"), "a small big"},
        {LIT("o\0\0\0\001\001\005"), LIT("b\377\377\377\373"), "a large big: -5"},
        {LIT("l\0\0\0\0j"), LIT("j"), "an empty list in list form"},
#undef LIT
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ei_x_buff req;
        job_request(&req, "mirror", false, 1);
        ei_x_append_buf(&req, cases[i].in, (int)cases[i].in_len);
        char want[64] = "\203h\002w\002ok";
        memcpy(want + 7, cases[i].out, cases[i].out_len);
        size_t n = 0;
        int rc;
        char *got = dispatch(&req, &n, &rc, NULL, NULL);
        CHECK(got && n == 7 + cases[i].out_len && memcmp(got, want, n) == 0,
              "%s decodes as the VM's term (rc %d, %zu bytes)", cases[i].what, rc, n);
        free(got);
        ei_x_free(&req);
    }
}

static void test_mirror(void) {
    mirror(t_ints, "integers");
    mirror(t_floats, "floats");
    mirror(t_atoms, "atoms");
    mirror(t_binaries, "binaries");
    mirror(t_nested, "450 nested tuples in lists");
    mirror(t_improper, "an improper list");
    mirror(t_raw, "a map, a bignum, a bitstring");
    test_other_forms();
}

/* a job NIF's name (WB_JOB_NIF in a server build) names its type */
static void test_by_nif_name(void) {
    ei_x_buff req;
    job_request(&req, "mirror_nif", false, 1);
    ei_x_encode_atom(&req, "by_nif");
    expect(&req, "ok", encode_atom_ctx, "by_nif", "a job named by its NIF");
    ei_x_free(&req);
}

/* --- fold: steps, refusals, raising, owned binaries --------------------------------------- */

typedef struct {
    uint64_t hash;
    uint64_t steps; /* 0: any number above 1 */
} fold_want;

static void fold_request(ei_x_buff *x, const char *name, bool tiny, uint64_t n, const char *how) {
    job_request(x, name, tiny, 2);
    ei_x_encode_ulonglong(x, n);
    ei_x_encode_atom(x, how);
}

static uint64_t fold_reply(const ei_x_buff *req, bool *ok, uint64_t *steps) {
    size_t n;
    int rc, idx = 0, version, arity;
    char tag[MAXATOMLEN];
    unsigned long long hash = 0, st = 0;
    char *got = dispatch(req, &n, &rc, NULL, NULL);
    *ok = got && ei_decode_version(got, &idx, &version) == 0 &&
          ei_decode_tuple_header(got, &idx, &arity) == 0 && arity == 2 &&
          ei_decode_atom(got, &idx, tag) == 0 && strcmp(tag, "ok") == 0 &&
          ei_decode_tuple_header(got, &idx, &arity) == 0 && arity == 2 &&
          ei_decode_ulonglong(got, &idx, &hash) == 0 && ei_decode_ulonglong(got, &idx, &st) == 0 &&
          (size_t)idx == n;
    free(got);
    *steps = st;
    return hash;
}

static void test_fold(void) {
    static const uint64_t sizes[] = {1, 2, 1000, 3000000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        uint64_t want = 0;
        for (uint64_t k = 0; k < sizes[i]; k++)
            want = fold_hash(want, k);
        for (int tiny = 0; tiny < 2; tiny++) {
            if (tiny && sizes[i] > 1000) continue;
            ei_x_buff req;
            fold_request(&req, "fold", tiny, sizes[i], "go");
            bool ok;
            uint64_t steps;
            uint64_t got = fold_reply(&req, &ok, &steps);
            CHECK(ok && got == want, "fold %llu (tiny %d): the hash computed here",
                  (unsigned long long)sizes[i], tiny);
            CHECK(!tiny || steps == sizes[i], "tiny steps take one unit each: %llu steps for %llu",
                  (unsigned long long)steps, (unsigned long long)sizes[i]);
            ei_x_free(&req);
        }
    }
    CHECK(destroyed == 7, "destroy ran once for each job (%d)", destroyed);
}

static void encode_init_failed(ei_x_buff *x, void *ctx) {
    (void)ctx;
    ei_x_encode_tuple_header(x, 2);
    ei_x_encode_atom(x, "init_failed");
    ei_x_encode_ulonglong(x, 42);
}

static void encode_owned(ei_x_buff *x, void *ctx) {
    size_t n = *(size_t *)ctx;
    char *data = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)(i % 251);
    ei_x_encode_binary(x, data, (long)n);
    free(data);
}

static void encode_pieces(ei_x_buff *x, void *ctx) {
    (void)ctx;
    ei_x_encode_list_header(x, 6);
    ei_x_encode_ulong(x, 3);
    ei_x_encode_list_header(x, 3);
    ei_x_encode_long(x, 'a');
    ei_x_encode_long(x, 'b');
    ei_x_encode_long(x, 'c');
    ei_x_encode_empty_list(x);
    ei_x_encode_binary(x, "xyzw", 4);
    ei_x_encode_binary(x, "yzw", 3);
    ei_x_encode_list_header(x, 2);
    ei_x_encode_long(x, -5);
    ei_x_encode_double(x, 0.5);
    ei_x_encode_empty_list(x);
    ei_x_encode_atom(x, "ok");
    ei_x_encode_empty_list(x);
}

static void test_answers(void) {
    ei_x_buff req;
    int before = destroyed;
    fold_request(&req, "fold", false, 10, "reject");
    expect_error(&req, "refused_in_decode", "decode's wb_reject reason");
    ei_x_free(&req);
    fold_request(&req, "fold", false, 42, "fail");
    expect(&req, "error", encode_init_failed, NULL, "init's reason");
    ei_x_free(&req);
    CHECK(destroyed == before, "no destroy without a successful init");

    job_request(&req, "fold", false, 2);
    ei_x_encode_atom(&req, "ten");
    ei_x_encode_atom(&req, "go");
    expect_error(&req, "badarg", "decode refused without a reason");
    ei_x_free(&req);

    job_request(&req, "raising", false, 1);
    ei_x_encode_atom(&req, "x");
    expect(&req, "raise", encode_atom_ctx, "badarg", "a result that raises");
    ei_x_free(&req);

    static const size_t owned_sizes[] = {0, 1, 100000};
    for (size_t i = 0; i < 3; i++) {
        size_t n = owned_sizes[i];
        fold_request(&req, "owned", false, n, "go");
        expect(&req, "ok", encode_owned, &n, "a binary take_result hands over");
        ei_x_free(&req);
    }

    /* ["x", <<"yz">>, [[], $w]]: an iolist of three elements */
    job_request(&req, "pieces", false, 1);
    ei_x_encode_list_header(&req, 3);
    ei_x_encode_long(&req, 'x');
    ei_x_encode_binary(&req, "yz", 2);
    ei_x_encode_list_header(&req, 2);
    ei_x_encode_empty_list(&req);
    ei_x_encode_long(&req, 'w');
    ei_x_encode_empty_list(&req);
    ei_x_encode_empty_list(&req);
    expect(&req, "ok", encode_pieces, NULL, "strings, sub-binaries, iolists, lists");
    ei_x_free(&req);
}

/* --- cancelling and the server's counters ---------------------------------------------------- */

typedef struct {
    int calls, yes_at;
} canceller;

static bool count_cancel(void *ctx) {
    canceller *c = ctx;
    return ++c->calls >= c->yes_at;
}

static void test_cancel_and_stats(void) {
    ei_x_buff req;
    int before = destroyed;
    fold_request(&req, "fold", false, 0, "go");
    canceller c = {0, 3};
    size_t n;
    int rc;
    char *got = dispatch(&req, &n, &rc, count_cancel, &c);
    CHECK(!got && rc == WB_EXT_CANCELLED && c.calls == 3,
          "a job that never ends is abandoned when the client is gone (rc %d, %d checks)", rc,
          c.calls);
    CHECK(destroyed == before + 1, "the abandoned job's destroy ran");
    ei_x_free(&req);

    ei_x_new_with_version(&req);
    ei_x_encode_tuple_header(&req, 1);
    ei_x_encode_atom(&req, "wb_stats");
    got = dispatch(&req, &n, &rc, NULL, NULL);
    int idx = 0, version, arity;
    char key[MAXATOMLEN];
    long long live = -1, bytes = -1;
    unsigned long long jobs = 0, cancelled = 0;
    bool ok = got && ei_decode_version(got, &idx, &version) == 0 &&
              ei_decode_map_header(got, &idx, &arity) == 0 && arity == 4;
    for (int i = 0; ok && i < arity; i++) {
        ok = ei_decode_atom(got, &idx, key) == 0;
        if (strcmp(key, "jobs") == 0) ok = ok && ei_decode_ulonglong(got, &idx, &jobs) == 0;
        if (strcmp(key, "live_jobs") == 0) ok = ok && ei_decode_longlong(got, &idx, &live) == 0;
        if (strcmp(key, "live_bytes") == 0) ok = ok && ei_decode_longlong(got, &idx, &bytes) == 0;
        if (strcmp(key, "cancelled") == 0)
            ok = ok && ei_decode_ulonglong(got, &idx, &cancelled) == 0;
    }
    CHECK(ok && live == 0 && bytes == 0 && cancelled == 1 && jobs > 10,
          "stats: live jobs %lld, bytes %lld, cancelled %llu, jobs %llu", live, bytes, cancelled,
          jobs);
    free(got);
    ei_x_free(&req);
}

/* --- malformed requests ---------------------------------------------------------------------- */

static void test_malformed(void) {
    ei_x_buff req;
    fold_request(&req, "fold", false, 5, "go");
    /* every prefix of a valid request: an error reply, never a crash or a read past it */
    for (int cut = 1; cut < req.index; cut++) {
        char *copy = malloc((size_t)cut);
        memcpy(copy, req.buff, (size_t)cut);
        wb_ext_reply reply;
        int rc = wb_ext_dispatch(copy, (size_t)cut, &reply, NULL, NULL);
        CHECK(rc == 0 && reply.iovcnt == 1, "a request cut at %d bytes is answered", cut);
        wb_ext_reply_free(&reply);
        free(copy);
    }
    ei_x_free(&req);

    job_request(&req, "fold", false, 1);
    ei_x_encode_ulong(&req, 5);
    expect_error(&req, "badarg", "arguments of the wrong count");
    ei_x_free(&req);

    job_request(&req, "nosuchjob", false, 1);
    ei_x_encode_ulong(&req, 5);
    expect_error(&req, "unknown_job", "an unknown job");
    ei_x_free(&req);

    erlang_pid pid = {"node@host", 1, 2, 3};
    job_request(&req, "mirror", false, 1);
    ei_x_encode_pid(&req, &pid);
    expect_error(&req, "badarg", "a pid among the arguments");
    ei_x_free(&req);

    ei_x_new_with_version(&req);
    ei_x_encode_tuple_header(&req, 4);
    ei_x_encode_atom(&req, "wb_job");
    ei_x_encode_atom(&req, "mirror");
    ei_x_encode_atom(&req, "maybe");
    ei_x_encode_tuple_header(&req, 1);
    ei_x_encode_atom(&req, "x");
    expect_error(&req, "badarg", "tiny neither true nor false");
    ei_x_free(&req);

    /* a list claiming more elements than the request has bytes */
    job_request(&req, "mirror", false, 1);
    ei_x_append_buf(&req, "l\x7f\xff\xff\xff", 5);
    expect_error(&req, "badarg", "a list longer than its request");
    ei_x_free(&req);

    /* nesting beyond the limit */
    job_request(&req, "mirror", false, 1);
    for (int i = 0; i < 2000; i++)
        ei_x_encode_tuple_header(&req, 1);
    ei_x_encode_atom(&req, "deep");
    expect_error(&req, "badarg", "tuples nested 2,000 deep");
    ei_x_free(&req);
}

static void test_refused_types(void) {
    /* a job NIF of a type not in the list */
    wb_external_alias("mirror_nif", &mirror_job);
    wb_job_type *const without_mirror[] = {&fold_job, NULL};
    CHECK(wb_ext_jobs_use(without_mirror) == -1, "a job NIF whose type is not listed is refused");
    wb_job_type no_step = fold_job;
    no_step.step = NULL;
    wb_job_type *const bad[] = {&mirror_job, &no_step, NULL};
    CHECK(wb_ext_jobs_use(bad) == -1, "a job type without step is refused");
    CHECK(wb_ext_jobs_use(NULL) == -1, "no list of types is refused");
}

int main(void) {
    check_seed(0x2545f4914f6cdd1du);
    ei_init();
    test_refused_types();
    CHECK(wb_ext_jobs_use(types) == 0, "the test's job types are accepted");
    test_mirror();
    test_by_nif_name();
    test_fold();
    test_answers();
    test_cancel_and_stats();
    test_malformed();
    return CHECK_SUMMARY();
}

/*
 * A server of SDK job types: a job type written for the runtime
 * (wb_runtime.h) runs in a server program too, for schedule: :external.
 * The program is the job types' own sources compiled with
 * WB_EXTERNAL_SERVER defined (WB_NIF_INIT then defines main, calling
 * wb_external_main) and linked with the server's sources and libei instead
 * of wb_runtime.c (WellBehaved.SDK.external_sources/0).
 *
 * A job's callbacks call erl_nif. Here erl_nif is the subset a job needs,
 * implemented over terms decoded from the request (the external term
 * format, checked byte by byte) into memory of the request's own, and
 * encoded into the reply with ei: the job sees the same terms as in the VM,
 * and one source serves both. Binaries in the arguments point into the
 * request, as in the VM they point into the caller's heap: no copy. A job
 * that calls an erl_nif function outside the subset fails to link, naming
 * the function.
 *
 * Requests (see wb_external.h for the framing):
 *
 *   {wb_job, Name, Tiny, Args}   Name: the job's NIF name (WB_JOB_NIF's, in a
 *       WB_EXTERNAL_SERVER build) or its type's name (an atom); Tiny:
 *       true steps one unit at a time (tests); Args: a tuple of the job's
 *       argc terms. Answers {ok, Result}, {error, Reason} when decode or
 *       init refuses the arguments (as the VM's job NIF answers), or
 *       {raise, Reason} when result raised (enif_make_badarg: badarg).
 *       {error, unknown_job} for a name no job type has.
 *   {wb_stats}   #{jobs => Started, live_jobs => N, live_bytes => Bytes,
 *       cancelled => Count}: live_jobs and live_bytes go back to 0 once
 *       every job has ended, a cancelled one included; cancelled counts the
 *       jobs this server gave up after a cancel.
 *
 * The steps run on the connection's thread, about a millisecond each; between
 * them, every millisecond, the server checks for a cancel (an empty frame,
 * see wb_external.h, or the client gone) and abandons the job (its destroy
 * runs, its memory is freed) when there is one. A step that never returns
 * never sees it: the pool then kills this server (WellBehaved.External).
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wb_runtime.h>

#include "../runtime/wb_job_check.h"
#include "wb_external.h"

/* a step's length, and the interval between two checks of the client */
#define STEP_NS  1000000
#define CHECK_NS 1000000
/* nesting of tuples and lists, decoded or encoded */
#define MAX_DEPTH 1000

/* --- terms --------------------------------------------------------------------- */

enum { T_ATOM, T_INT, T_UINT, T_FLOAT, T_BINARY, T_TUPLE, T_NIL, T_CONS, T_RAW };

/* An ERL_NIF_TERM here is the address of a node. T_UINT holds the integers
 * above INT64_MAX; T_RAW any other term the request held (a map, a bignum
 * beyond 64 bits, a bitstring), as its encoded bytes, passed on unread. */
typedef struct node {
    int kind;
    size_t size; /* an atom's name (UTF-8), a binary's or a raw term's bytes; a tuple's arity */
    union {
        int64_t i;
        uint64_t u;
        double f;
        const unsigned char *bytes;
        ERL_NIF_TERM *elems;
        struct {
            ERL_NIF_TERM head, tail;
        } cons;
    } v;
} node;

static node nil_node = {.kind = T_NIL};
#define NIL     ((ERL_NIF_TERM)&nil_node)
#define NODE(t) ((node *)(t))

/* --- the environment: one request's memory ------------------------------------------ */

typedef struct block {
    struct block *next;
    size_t cap, used;
    alignas(max_align_t) unsigned char data[];
} block;

typedef struct owned {
    struct owned *next;
    void *data;
} owned;

#define FIRST_BLOCK 4096

struct enif_environment_t {
    block *blocks; /* the newest first */
    owned *owned;  /* binaries that enif_make_binary made terms of */
    bool failed;   /* out of memory: the request answers {error, enomem} */
    bool raised;
    ERL_NIF_TERM exception;
};

static void env_init(ErlNifEnv *env) {
    memset(env, 0, sizeof *env);
}

static void env_free(ErlNifEnv *env) {
    for (owned *o = env->owned; o; o = o->next)
        free(o->data);
    for (block *b = env->blocks; b;) {
        block *next = b->next;
        free(b);
        b = next;
    }
    env_init(env);
}

static void *env_alloc(ErlNifEnv *env, size_t n) {
    if (n > SIZE_MAX / 2) {
        env->failed = true;
        return NULL;
    }
    n = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
    block *b = env->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = b ? 2 * b->cap : FIRST_BLOCK;
        if (cap < n) cap = n;
        if (!(b = malloc(sizeof(block) + cap))) {
            env->failed = true;
            return NULL;
        }
        b->cap = cap;
        b->used = 0;
        b->next = env->blocks;
        env->blocks = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static ERL_NIF_TERM new_node(ErlNifEnv *env, int kind) {
    node *n = env_alloc(env, sizeof *n);
    if (!n) return 0;
    n->kind = kind;
    n->size = 0;
    return (ERL_NIF_TERM)n;
}

/* a term out of memory stands for: the request fails with enomem */
static ERL_NIF_TERM oom(ErlNifEnv *env) {
    env->failed = true;
    return NIL;
}

/* An environment of its own, for terms made once and kept for the whole
 * server's life (a library's atoms, made at its load): read-only once
 * made, so any connection's thread may compare with them. */
ErlNifEnv *enif_alloc_env(void) {
    ErlNifEnv *env = malloc(sizeof *env);
    if (env) env_init(env);
    return env;
}

void enif_free_env(ErlNifEnv *env) {
    if (!env) return;
    env_free(env);
    free(env);
}

bool wb_ext_env_ok(const ErlNifEnv *env) {
    return env && !env->failed;
}

/* a tuple of cnt elements; elems is env's and becomes the tuple's */
static ERL_NIF_TERM make_tuple(ErlNifEnv *env, ERL_NIF_TERM *elems, unsigned cnt) {
    ERL_NIF_TERM t = new_node(env, T_TUPLE);
    if (!t || !elems) return oom(env);
    NODE(t)->v.elems = elems;
    NODE(t)->size = cnt;
    return t;
}

/* room for cnt terms in env (NULL when out of memory) */
static ERL_NIF_TERM *term_array(ErlNifEnv *env, unsigned cnt) {
    return env_alloc(env, (cnt ? cnt : 1) * sizeof(ERL_NIF_TERM));
}

/* --- decoding: the external term format -------------------------------------------- */

typedef struct {
    const unsigned char *p;
    size_t len, at;
    ErlNifEnv *env; /* NULL: check only (the inside of a raw term) */
} reader;

static bool take(reader *r, size_t n, const unsigned char **out) {
    if (r->len - r->at < n) return false;
    *out = r->p + r->at;
    r->at += n;
    return true;
}

static ERL_NIF_TERM make_int64(ErlNifEnv *env, int64_t i) {
    ERL_NIF_TERM t = new_node(env, T_INT);
    if (!t) return oom(env);
    NODE(t)->v.i = i;
    return t;
}

static ERL_NIF_TERM make_uint64(ErlNifEnv *env, uint64_t u) {
    if (u <= INT64_MAX) return make_int64(env, (int64_t)u);
    ERL_NIF_TERM t = new_node(env, T_UINT);
    if (!t) return oom(env);
    NODE(t)->v.u = u;
    return t;
}

/* a latin-1 name as UTF-8, in env */
static const unsigned char *latin1_to_utf8(ErlNifEnv *env, const unsigned char *s, size_t n,
                                           size_t *out_len) {
    size_t high = 0;
    for (size_t i = 0; i < n; i++)
        high += s[i] >> 7;
    if (high == 0) {
        *out_len = n;
        return s;
    }
    unsigned char *u = env_alloc(env, n + high);
    if (!u) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < 0x80) {
            u[k++] = s[i];
        } else {
            u[k++] = (unsigned char)(0xC0 | (s[i] >> 6));
            u[k++] = (unsigned char)(0x80 | (s[i] & 0x3F));
        }
    }
    *out_len = k;
    return u;
}

static ERL_NIF_TERM decode(reader *r, int depth);

/* a term kept as its bytes: checked by decoding it without building */
static ERL_NIF_TERM raw(reader *r, size_t start, int depth, size_t inner) {
    ErlNifEnv *env = r->env;
    r->env = NULL;
    bool ok = true;
    for (size_t i = 0; ok && i < inner; i++)
        ok = decode(r, depth + 1) != 0;
    r->env = env;
    if (!ok) return 0;
    if (!env) return NIL;
    ERL_NIF_TERM t = new_node(env, T_RAW);
    if (!t) return oom(env);
    NODE(t)->v.bytes = r->p + start;
    NODE(t)->size = r->at - start;
    return t;
}

/* an integer of n little-endian digits */
static ERL_NIF_TERM big(reader *r, size_t start, size_t n, int depth) {
    const unsigned char *sign, *digits;
    if (!take(r, 1, &sign) || !take(r, n, &digits)) return 0;
    if (n > 8) return raw(r, start, depth, 0);
    uint64_t u = 0;
    for (size_t i = n; i-- > 0;)
        u = (u << 8) | digits[i];
    if (!r->env) return NIL;
    if (*sign == 0) return make_uint64(r->env, u);
    if (u <= (uint64_t)INT64_MAX + 1) return make_int64(r->env, (int64_t)(0 - u));
    return raw(r, start, depth, 0);
}

/* Returns the term (NIL when only checking), or 0 when the bytes are not a
 * term this server takes (pids, ports, references and funs are refused). */
static ERL_NIF_TERM decode(reader *r, int depth) {
    if (depth > MAX_DEPTH) return 0;
    ErlNifEnv *env = r->env;
    size_t start = r->at;
    const unsigned char *tag, *p;
    if (!take(r, 1, &tag)) return 0;
    switch (*tag) {
    case ERL_SMALL_INTEGER_EXT:
        if (!take(r, 1, &p)) return 0;
        return env ? make_int64(env, p[0]) : NIL;
    case ERL_INTEGER_EXT:
        if (!take(r, 4, &p)) return 0;
        return env ? make_int64(env, (int32_t)wb_ext_be32(p)) : NIL;
    case NEW_FLOAT_EXT: {
        if (!take(r, 8, &p)) return 0;
        if (!env) return NIL;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = (bits << 8) | p[i];
        ERL_NIF_TERM t = new_node(env, T_FLOAT);
        if (!t) return oom(env);
        memcpy(&NODE(t)->v.f, &bits, sizeof bits);
        return t;
    }
    case ERL_ATOM_EXT:
    case ERL_ATOM_UTF8_EXT:
    case ERL_SMALL_ATOM_EXT:
    case ERL_SMALL_ATOM_UTF8_EXT: {
        bool small = *tag == ERL_SMALL_ATOM_EXT || *tag == ERL_SMALL_ATOM_UTF8_EXT;
        if (!take(r, small ? 1 : 2, &p)) return 0;
        size_t n = small ? p[0] : ((size_t)p[0] << 8 | p[1]);
        const unsigned char *name;
        if (!take(r, n, &name)) return 0;
        if (!env) return NIL;
        ERL_NIF_TERM t = new_node(env, T_ATOM);
        if (!t) return oom(env);
        if (*tag == ERL_ATOM_EXT || *tag == ERL_SMALL_ATOM_EXT)
            name = latin1_to_utf8(env, name, n, &n);
        if (!name) return oom(env);
        NODE(t)->v.bytes = name;
        NODE(t)->size = n;
        return t;
    }
    case ERL_SMALL_TUPLE_EXT:
    case ERL_LARGE_TUPLE_EXT: {
        bool small = *tag == ERL_SMALL_TUPLE_EXT;
        if (!take(r, small ? 1 : 4, &p)) return 0;
        size_t arity = small ? p[0] : wb_ext_be32(p);
        if (arity > r->len - r->at) return 0; /* each element takes a byte at least */
        ERL_NIF_TERM *elems = env ? term_array(env, (unsigned)arity) : NULL;
        for (size_t i = 0; i < arity; i++) {
            ERL_NIF_TERM e = decode(r, depth + 1);
            if (!e) return 0;
            if (elems) elems[i] = e;
        }
        return env ? make_tuple(env, elems, (unsigned)arity) : NIL;
    }
    case ERL_NIL_EXT:
        return NIL;
    case ERL_STRING_EXT: {
        if (!take(r, 2, &p)) return 0;
        size_t n = (size_t)p[0] << 8 | p[1];
        const unsigned char *bytes;
        if (!take(r, n, &bytes)) return 0;
        if (!env) return NIL;
        ERL_NIF_TERM list = NIL;
        for (size_t i = n; i-- > 0;) {
            ERL_NIF_TERM cell = new_node(env, T_CONS), head = make_int64(env, bytes[i]);
            if (!cell || env->failed) return oom(env);
            NODE(cell)->v.cons.head = head;
            NODE(cell)->v.cons.tail = list;
            list = cell;
        }
        return list;
    }
    case ERL_LIST_EXT: {
        if (!take(r, 4, &p)) return 0;
        size_t n = wb_ext_be32(p);
        if (n > r->len - r->at) return 0;
        ERL_NIF_TERM first = NIL, last = 0;
        for (size_t i = 0; i < n; i++) {
            ERL_NIF_TERM head = decode(r, depth + 1);
            if (!head) return 0;
            if (!env) continue;
            ERL_NIF_TERM cell = new_node(env, T_CONS);
            if (!cell) return oom(env);
            NODE(cell)->v.cons.head = head;
            NODE(cell)->v.cons.tail = NIL;
            if (last)
                NODE(last)->v.cons.tail = cell;
            else
                first = cell;
            last = cell;
        }
        ERL_NIF_TERM tail = decode(r, depth + 1);
        if (!tail) return 0;
        if (!env) return NIL;
        if (last)
            NODE(last)->v.cons.tail = tail;
        else
            first = tail; /* not canonical, but a term */
        return first;
    }
    case ERL_BINARY_EXT: {
        if (!take(r, 4, &p)) return 0;
        size_t n = wb_ext_be32(p);
        const unsigned char *bytes;
        if (!take(r, n, &bytes)) return 0;
        if (!env) return NIL;
        ERL_NIF_TERM t = new_node(env, T_BINARY);
        if (!t) return oom(env);
        NODE(t)->v.bytes = bytes;
        NODE(t)->size = n;
        return t;
    }
    case ERL_BIT_BINARY_EXT: {
        const unsigned char *bits;
        if (!take(r, 4, &p) || !take(r, 1, &bits) || *bits < 1 || *bits > 8 ||
            wb_ext_be32(p) == 0 || !take(r, wb_ext_be32(p), &p))
            return 0;
        return raw(r, start, depth, 0);
    }
    case ERL_SMALL_BIG_EXT:
        if (!take(r, 1, &p)) return 0;
        return big(r, start, p[0], depth);
    case ERL_LARGE_BIG_EXT:
        if (!take(r, 4, &p)) return 0;
        return big(r, start, wb_ext_be32(p), depth);
    case ERL_MAP_EXT: {
        if (!take(r, 4, &p)) return 0;
        size_t pairs = wb_ext_be32(p);
        if (pairs > (r->len - r->at) / 2) return 0;
        return raw(r, start, depth, 2 * pairs);
    }
    default:
        return 0;
    }
}

/* --- encoding ------------------------------------------------------------------------ */

static int encode(ei_x_buff *x, ERL_NIF_TERM t, int depth) {
    if (depth > MAX_DEPTH) return -1;
    node *n = NODE(t);
    switch (n->kind) {
    case T_ATOM:
        return ei_x_encode_atom_len_as(x, (const char *)n->v.bytes, (int)n->size, ERLANG_UTF8,
                                       ERLANG_UTF8);
    case T_INT:
        return ei_x_encode_longlong(x, n->v.i);
    case T_UINT:
        return ei_x_encode_ulonglong(x, n->v.u);
    case T_FLOAT:
        return ei_x_encode_double(x, n->v.f);
    case T_BINARY:
        return n->size > INT_MAX ? -1 : ei_x_encode_binary(x, n->v.bytes, (int)n->size);
    case T_TUPLE:
        if (n->size > INT_MAX || ei_x_encode_tuple_header(x, (long)n->size) != 0) return -1;
        for (size_t i = 0; i < n->size; i++)
            if (encode(x, n->v.elems[i], depth + 1) != 0) return -1;
        return 0;
    case T_NIL:
        return ei_x_encode_empty_list(x);
    case T_CONS: {
        long count = 0;
        ERL_NIF_TERM at = t;
        for (; NODE(at)->kind == T_CONS; at = NODE(at)->v.cons.tail)
            if (++count == LONG_MAX) return -1;
        if (ei_x_encode_list_header(x, count) != 0) return -1;
        for (at = t; NODE(at)->kind == T_CONS; at = NODE(at)->v.cons.tail)
            if (encode(x, NODE(at)->v.cons.head, depth + 1) != 0) return -1;
        return encode(x, at, depth + 1);
    }
    case T_RAW:
        return n->size > INT_MAX ? -1 : ei_x_append_buf(x, (const char *)n->v.bytes, (int)n->size);
    default:
        return -1;
    }
}

/* --- erl_nif, the subset a job uses ------------------------------------------------- */

static ERL_NIF_TERM make_atom_len(ErlNifEnv *env, const char *name, size_t len) {
    ERL_NIF_TERM t = new_node(env, T_ATOM);
    char *copy = env_alloc(env, len ? len : 1);
    if (!t || !copy) return oom(env);
    memcpy(copy, name, len);
    NODE(t)->v.bytes = (const unsigned char *)copy;
    NODE(t)->size = len;
    return t;
}

ERL_NIF_TERM enif_make_badarg(ErlNifEnv *env) {
    return enif_raise_exception(env, make_atom_len(env, "badarg", 6));
}

ERL_NIF_TERM enif_raise_exception(ErlNifEnv *env, ERL_NIF_TERM reason) {
    if (!env->raised) {
        env->raised = true;
        env->exception = reason;
    }
    return reason;
}

int enif_has_pending_exception(ErlNifEnv *env, ERL_NIF_TERM *reason) {
    if (env->raised && reason) *reason = env->exception;
    return env->raised;
}

ERL_NIF_TERM enif_make_atom(ErlNifEnv *env, const char *name) {
    return make_atom_len(env, name, strlen(name));
}

ERL_NIF_TERM enif_make_atom_len(ErlNifEnv *env, const char *name, size_t len) {
    return len > 255 ? enif_make_badarg(env) : make_atom_len(env, name, len);
}

/* Every atom exists here: a server has no atom table to ask. */
int enif_make_existing_atom(ErlNifEnv *env, const char *name, ERL_NIF_TERM *atom,
                            ErlNifCharEncoding encoding) {
    return enif_make_existing_atom_len(env, name, strlen(name), atom, encoding);
}

int enif_make_existing_atom_len(ErlNifEnv *env, const char *name, size_t len, ERL_NIF_TERM *atom,
                                ErlNifCharEncoding encoding) {
    (void)encoding;
    if (len > 255) return 0;
    *atom = make_atom_len(env, name, len);
    return !env->failed;
}

/* The atom's name in latin-1 (fails for a character above 255) or UTF-8. */
static bool atom_name(ERL_NIF_TERM t, ErlNifCharEncoding encoding, char *out, size_t cap,
                      size_t *len) {
    node *n = NODE(t);
    if (n->kind != T_ATOM) return false;
    size_t k = 0;
    for (size_t i = 0; i < n->size; i++) {
        unsigned char c = n->v.bytes[i];
        if (encoding == ERL_NIF_LATIN1 && c >= 0x80) {
            if ((c != 0xC2 && c != 0xC3) || i + 1 == n->size) return false;
            c = (unsigned char)(((c & 0x03) << 6) | (n->v.bytes[++i] & 0x3F));
        }
        if (out) {
            if (k + 1 >= cap) return false;
            out[k] = (char)c;
        }
        k++;
    }
    if (out) out[k] = '\0';
    *len = k;
    return true;
}

int enif_get_atom(ErlNifEnv *env, ERL_NIF_TERM atom, char *buf, unsigned size,
                  ErlNifCharEncoding encoding) {
    (void)env;
    size_t len;
    return atom_name(atom, encoding, buf, size, &len) ? (int)len + 1 : 0;
}

int enif_get_atom_length(ErlNifEnv *env, ERL_NIF_TERM atom, unsigned *len,
                         ErlNifCharEncoding encoding) {
    (void)env;
    size_t n;
    if (!atom_name(atom, encoding, NULL, 0, &n)) return 0;
    *len = (unsigned)n;
    return 1;
}

int enif_is_atom(ErlNifEnv *env, ERL_NIF_TERM term) {
    (void)env;
    return NODE(term)->kind == T_ATOM;
}

int enif_is_binary(ErlNifEnv *env, ERL_NIF_TERM term) {
    (void)env;
    return NODE(term)->kind == T_BINARY;
}

int enif_is_tuple(ErlNifEnv *env, ERL_NIF_TERM term) {
    (void)env;
    return NODE(term)->kind == T_TUPLE;
}

int enif_is_list(ErlNifEnv *env, ERL_NIF_TERM term) {
    (void)env;
    return NODE(term)->kind == T_CONS || NODE(term)->kind == T_NIL;
}

int enif_is_empty_list(ErlNifEnv *env, ERL_NIF_TERM term) {
    (void)env;
    return NODE(term)->kind == T_NIL;
}

int enif_is_number(ErlNifEnv *env, ERL_NIF_TERM term) {
    (void)env;
    int k = NODE(term)->kind;
    return k == T_INT || k == T_UINT || k == T_FLOAT ||
           (k == T_RAW && (NODE(term)->v.bytes[0] == ERL_SMALL_BIG_EXT ||
                           NODE(term)->v.bytes[0] == ERL_LARGE_BIG_EXT));
}

static bool identical(ERL_NIF_TERM a, ERL_NIF_TERM b, int depth) {
    node *x = NODE(a), *y = NODE(b);
    if (x == y) return true;
    if (x->kind != y->kind || x->size != y->size || depth > MAX_DEPTH) return false;
    switch (x->kind) {
    case T_INT:
        return x->v.i == y->v.i;
    case T_UINT:
        return x->v.u == y->v.u;
    case T_FLOAT:
        return x->v.f == y->v.f;
    case T_ATOM:
    case T_BINARY:
    case T_RAW:
        return x->size == 0 || memcmp(x->v.bytes, y->v.bytes, x->size) == 0;
    case T_TUPLE:
        for (size_t i = 0; i < x->size; i++)
            if (!identical(x->v.elems[i], y->v.elems[i], depth + 1)) return false;
        return true;
    case T_CONS:
        for (; NODE(a)->kind == T_CONS && NODE(b)->kind == T_CONS;
             a = NODE(a)->v.cons.tail, b = NODE(b)->v.cons.tail)
            if (!identical(NODE(a)->v.cons.head, NODE(b)->v.cons.head, depth + 1)) return false;
        return identical(a, b, depth + 1);
    default:
        return true; /* nil */
    }
}

int enif_is_identical(ERL_NIF_TERM lhs, ERL_NIF_TERM rhs) {
    return identical(lhs, rhs, 0);
}

/* integers: each getter takes what fits its type */
static bool get_integer(ERL_NIF_TERM t, int64_t lo, uint64_t hi, int64_t *s, uint64_t *u) {
    node *n = NODE(t);
    if (n->kind == T_INT) {
        if (n->v.i < lo || (n->v.i >= 0 && (uint64_t)n->v.i > hi)) return false;
        if (s) *s = n->v.i;
        if (u) *u = (uint64_t)n->v.i;
        return true;
    }
    if (n->kind == T_UINT && n->v.u <= hi) {
        if (u) *u = n->v.u;
        return true;
    }
    return false;
}

int enif_get_int(ErlNifEnv *env, ERL_NIF_TERM term, int *ip) {
    (void)env;
    int64_t v = 0;
    if (!get_integer(term, INT_MIN, INT_MAX, &v, NULL)) return 0;
    *ip = (int)v;
    return 1;
}

int enif_get_uint(ErlNifEnv *env, ERL_NIF_TERM term, unsigned *ip) {
    (void)env;
    uint64_t v = 0;
    if (!get_integer(term, 0, UINT_MAX, NULL, &v)) return 0;
    *ip = (unsigned)v;
    return 1;
}

int enif_get_long(ErlNifEnv *env, ERL_NIF_TERM term, long *ip) {
    (void)env;
    int64_t v = 0;
    if (!get_integer(term, LONG_MIN, LONG_MAX, &v, NULL)) return 0;
    *ip = (long)v;
    return 1;
}

int enif_get_ulong(ErlNifEnv *env, ERL_NIF_TERM term, unsigned long *ip) {
    (void)env;
    uint64_t v = 0;
    if (!get_integer(term, 0, ULONG_MAX, NULL, &v)) return 0;
    *ip = (unsigned long)v;
    return 1;
}

/* where long is 64 bits, erl_nif.h makes these the long ones */
#ifndef enif_get_int64
int enif_get_int64(ErlNifEnv *env, ERL_NIF_TERM term, ErlNifSInt64 *ip) {
    (void)env;
    int64_t v = 0;
    if (!get_integer(term, INT64_MIN, INT64_MAX, &v, NULL)) return 0;
    *ip = v;
    return 1;
}

int enif_get_uint64(ErlNifEnv *env, ERL_NIF_TERM term, ErlNifUInt64 *ip) {
    (void)env;
    uint64_t v = 0;
    if (!get_integer(term, 0, UINT64_MAX, NULL, &v)) return 0;
    *ip = v;
    return 1;
}
#endif

int enif_get_double(ErlNifEnv *env, ERL_NIF_TERM term, double *dp) {
    (void)env;
    if (NODE(term)->kind != T_FLOAT) return 0;
    *dp = NODE(term)->v.f;
    return 1;
}

ERL_NIF_TERM enif_make_int(ErlNifEnv *env, int i) {
    return make_int64(env, i);
}

ERL_NIF_TERM enif_make_uint(ErlNifEnv *env, unsigned i) {
    return make_int64(env, i);
}

ERL_NIF_TERM enif_make_long(ErlNifEnv *env, long i) {
    return make_int64(env, i);
}

ERL_NIF_TERM enif_make_ulong(ErlNifEnv *env, unsigned long i) {
    return make_uint64(env, i);
}

#ifndef enif_make_int64
ERL_NIF_TERM enif_make_int64(ErlNifEnv *env, ErlNifSInt64 i) {
    return make_int64(env, i);
}

ERL_NIF_TERM enif_make_uint64(ErlNifEnv *env, ErlNifUInt64 i) {
    return make_uint64(env, i);
}
#endif

ERL_NIF_TERM enif_make_double(ErlNifEnv *env, double d) {
    if (d != d || d - d != 0) return enif_make_badarg(env); /* NaN or infinite, as the VM */
    ERL_NIF_TERM t = new_node(env, T_FLOAT);
    if (!t) return oom(env);
    NODE(t)->v.f = d;
    return t;
}

/* binaries */

int enif_inspect_binary(ErlNifEnv *env, ERL_NIF_TERM term, ErlNifBinary *bin) {
    (void)env;
    node *n = NODE(term);
    if (n->kind != T_BINARY) return 0;
    memset(bin, 0, sizeof *bin);
    bin->size = n->size;
    bin->data = (unsigned char *)n->v.bytes;
    return 1;
}

/* an iolist's bytes, counted (out NULL) or copied */
static bool iolist_bytes(ERL_NIF_TERM t, unsigned char *out, size_t *len, int depth) {
    if (depth > MAX_DEPTH) return false;
    for (;;) {
        node *n = NODE(t);
        if (n->kind == T_BINARY) {
            if (out && n->size) memcpy(out + *len, n->v.bytes, n->size);
            *len += n->size;
            return true;
        }
        if (n->kind == T_NIL) return true;
        if (n->kind != T_CONS) return false;
        node *h = NODE(n->v.cons.head);
        if (h->kind == T_INT && h->v.i >= 0 && h->v.i <= 255) {
            if (out) out[*len] = (unsigned char)h->v.i;
            (*len)++;
        } else if (!iolist_bytes(n->v.cons.head, out, len, depth + 1)) {
            return false;
        }
        t = n->v.cons.tail;
    }
}

int enif_inspect_iolist_as_binary(ErlNifEnv *env, ERL_NIF_TERM term, ErlNifBinary *bin) {
    if (enif_inspect_binary(env, term, bin)) return 1;
    size_t len = 0;
    if (!iolist_bytes(term, NULL, &len, 0)) return 0;
    unsigned char *data = env_alloc(env, len ? len : 1);
    if (!data) return 0;
    len = 0;
    iolist_bytes(term, data, &len, 0);
    memset(bin, 0, sizeof *bin);
    bin->size = len;
    bin->data = data;
    return 1;
}

/* A binary of the job's own: ref_bin holds its block while the job owns it. */
int enif_alloc_binary(size_t size, ErlNifBinary *bin) {
    void *data = malloc(size ? size : 1);
    if (!data) return 0;
    memset(bin, 0, sizeof *bin);
    bin->size = size;
    bin->data = data;
    bin->ref_bin = data;
    return 1;
}

int enif_realloc_binary(ErlNifBinary *bin, size_t size) {
    if (!bin->ref_bin) return 0;
    void *data = realloc(bin->data, size ? size : 1);
    if (!data) return 0;
    bin->size = size;
    bin->data = data;
    bin->ref_bin = data;
    return 1;
}

void enif_release_binary(ErlNifBinary *bin) {
    free(bin->ref_bin);
    bin->ref_bin = NULL;
}

ERL_NIF_TERM enif_make_binary(ErlNifEnv *env, ErlNifBinary *bin) {
    ERL_NIF_TERM t = new_node(env, T_BINARY);
    if (bin->ref_bin) { /* the term owns the block now: freed with the request */
        owned *o = env_alloc(env, sizeof *o);
        if (!t || !o) {
            enif_release_binary(bin);
            return oom(env);
        }
        o->data = bin->ref_bin;
        o->next = env->owned;
        env->owned = o;
        bin->ref_bin = NULL;
    }
    if (!t) return oom(env);
    NODE(t)->v.bytes = bin->data;
    NODE(t)->size = bin->size;
    return t;
}

/* The block (malloc'd, as the binaries of the job's own are) belongs to
 * the term: freed with the request. */
ERL_NIF_TERM wb_make_malloc_binary(ErlNifEnv *env, void *block, size_t size) {
    ErlNifBinary bin;
    memset(&bin, 0, sizeof bin);
    bin.size = size;
    bin.data = block;
    bin.ref_bin = block;
    return enif_make_binary(env, &bin);
}

unsigned char *enif_make_new_binary(ErlNifEnv *env, size_t size, ERL_NIF_TERM *termp) {
    ErlNifBinary bin;
    if (!enif_alloc_binary(size, &bin)) return NULL;
    *termp = enif_make_binary(env, &bin);
    return env->failed ? NULL : bin.data;
}

ERL_NIF_TERM enif_make_sub_binary(ErlNifEnv *env, ERL_NIF_TERM bin_term, size_t pos, size_t size) {
    node *n = NODE(bin_term);
    if (n->kind != T_BINARY || pos > n->size || size > n->size - pos) return enif_make_badarg(env);
    ERL_NIF_TERM t = new_node(env, T_BINARY);
    if (!t) return oom(env);
    NODE(t)->v.bytes = n->v.bytes + pos;
    NODE(t)->size = size;
    return t;
}

/* tuples and lists */

ERL_NIF_TERM enif_make_tuple_from_array(ErlNifEnv *env, const ERL_NIF_TERM arr[], unsigned cnt) {
    ERL_NIF_TERM *elems = term_array(env, cnt);
    if (elems && cnt) memcpy(elems, arr, cnt * sizeof *elems);
    return make_tuple(env, elems, cnt);
}

ERL_NIF_TERM enif_make_tuple(ErlNifEnv *env, unsigned cnt, ...) {
    ERL_NIF_TERM *elems = term_array(env, cnt);
    if (!elems) return oom(env);
    va_list ap;
    va_start(ap, cnt);
    for (unsigned i = 0; i < cnt; i++)
        elems[i] = va_arg(ap, ERL_NIF_TERM);
    va_end(ap);
    return make_tuple(env, elems, cnt);
}

int enif_get_tuple(ErlNifEnv *env, ERL_NIF_TERM tpl, int *arity, const ERL_NIF_TERM **array) {
    (void)env;
    node *n = NODE(tpl);
    if (n->kind != T_TUPLE) return 0;
    *arity = (int)n->size;
    *array = n->v.elems;
    return 1;
}

ERL_NIF_TERM enif_make_list_cell(ErlNifEnv *env, ERL_NIF_TERM car, ERL_NIF_TERM cdr) {
    ERL_NIF_TERM t = new_node(env, T_CONS);
    if (!t) return oom(env);
    NODE(t)->v.cons.head = car;
    NODE(t)->v.cons.tail = cdr;
    return t;
}

ERL_NIF_TERM enif_make_list_from_array(ErlNifEnv *env, const ERL_NIF_TERM arr[], unsigned cnt) {
    ERL_NIF_TERM list = NIL;
    for (unsigned i = cnt; i-- > 0;)
        list = enif_make_list_cell(env, arr[i], list);
    return list;
}

ERL_NIF_TERM enif_make_list(ErlNifEnv *env, unsigned cnt, ...) {
    ERL_NIF_TERM *elems = term_array(env, cnt);
    if (!elems) return oom(env);
    va_list ap;
    va_start(ap, cnt);
    for (unsigned i = 0; i < cnt; i++)
        elems[i] = va_arg(ap, ERL_NIF_TERM);
    va_end(ap);
    return enif_make_list_from_array(env, elems, cnt);
}

int enif_get_list_cell(ErlNifEnv *env, ERL_NIF_TERM term, ERL_NIF_TERM *head, ERL_NIF_TERM *tail) {
    (void)env;
    node *n = NODE(term);
    if (n->kind != T_CONS) return 0;
    *head = n->v.cons.head;
    *tail = n->v.cons.tail;
    return 1;
}

int enif_get_list_length(ErlNifEnv *env, ERL_NIF_TERM term, unsigned *len) {
    (void)env;
    unsigned n = 0;
    for (; NODE(term)->kind == T_CONS; term = NODE(term)->v.cons.tail)
        if (++n == UINT_MAX) return 0;
    if (NODE(term)->kind != T_NIL) return 0;
    *len = n;
    return 1;
}

ERL_NIF_TERM enif_make_string_len(ErlNifEnv *env, const char *string, size_t len,
                                  ErlNifCharEncoding encoding) {
    (void)encoding;
    ERL_NIF_TERM list = NIL;
    for (size_t i = len; i-- > 0;)
        list = enif_make_list_cell(env, make_int64(env, (unsigned char)string[i]), list);
    return list;
}

ERL_NIF_TERM enif_make_string(ErlNifEnv *env, const char *string, ErlNifCharEncoding encoding) {
    return enif_make_string_len(env, string, strlen(string), encoding);
}

/* one environment per request: a term is already where it is needed */
ERL_NIF_TERM enif_make_copy(ErlNifEnv *dst_env, ERL_NIF_TERM src_term) {
    (void)dst_env;
    return src_term;
}

/* memory */

void *enif_alloc(size_t size) {
    return malloc(size);
}

void *enif_realloc(void *ptr, size_t size) {
    return realloc(ptr, size);
}

void enif_free(void *ptr) {
    free(ptr);
}

/* --- the runtime's calls, as a server has them ------------------------------------------- */

static _Thread_local ERL_NIF_TERM rejected;
static _Thread_local int64_t step_deadline;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool wb_reject(ERL_NIF_TERM reason) {
    rejected = reason;
    return false;
}

ERL_NIF_TERM wb_atom(ErlNifEnv *env, const char *name) {
    return enif_make_atom(env, name);
}

ERL_NIF_TERM wb_error(ErlNifEnv *env, ERL_NIF_TERM reason) {
    return enif_make_tuple2(env, wb_atom(env, "error"), reason);
}

bool wb_slice_spent(void) {
    return now_ns() >= step_deadline;
}

int64_t wb_slice_ns(void) {
    return STEP_NS;
}

/* a server holds nothing between requests but its jobs, which it counts */
void wb_runtime_resident_bytes(int64_t delta) {
    (void)delta;
}

/* a server's thread may block: clean-ups run at once */
void wb_release_later(void (*release)(void *arg), void *arg) {
    release(arg);
}

void wb_release_later_blocking(void (*release)(void *arg), void *arg) {
    release(arg);
}

void wb_release_block_later(void (*release)(void *arg), void *block, size_t bytes) {
    (void)bytes;
    if (block) release(block);
}

void wb_free_later(void *block, size_t bytes) {
    wb_release_block_later(free, block, bytes);
}

/* The NIF library's entry points, for the same source built as a server:
 * WB_NIF_INIT defines main there, and nothing calls these. */
ERL_NIF_TERM wb_run(ErlNifEnv *env, const wb_job_type *type, int argc, const ERL_NIF_TERM argv[]) {
    (void)type;
    (void)argc;
    (void)argv;
    return enif_make_badarg(env);
}

ERL_NIF_TERM wb_runtime_stats(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    return enif_make_badarg(env);
}

ERL_NIF_TERM wb_runtime_configure(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]) {
    (void)argc;
    (void)argv;
    return enif_make_badarg(env);
}

/* --- jobs ------------------------------------------------------------------------------ */

static wb_job_type *const *job_types;

/* NIF names of job types (WB_JOB_NIF in a WB_EXTERNAL_SERVER build),
 * registered before main */
#define MAX_ALIASES 64
static struct {
    const char *nif;
    const wb_job_type *type;
} aliases[MAX_ALIASES];
static int alias_count;
static bool aliases_overflow;

void wb_external_alias(const char *nif_name, const wb_job_type *type) {
    if (alias_count == MAX_ALIASES) {
        aliases_overflow = true;
        return;
    }
    aliases[alias_count].nif = nif_name;
    aliases[alias_count].type = type;
    alias_count++;
}

/* the job type a request names: by its NIF's name, else by its own */
static const wb_job_type *find_type(const char *name) {
    for (int i = 0; i < alias_count; i++)
        if (strcmp(aliases[i].nif, name) == 0) return aliases[i].type;
    for (int i = 0; job_types && job_types[i]; i++)
        if (strcmp(job_types[i]->name, name) == 0) return job_types[i];
    return NULL;
}
static _Atomic uint64_t jobs_started, jobs_cancelled;
static _Atomic int64_t live_jobs, live_bytes;

/* {Tag, Term}, or {error, enomem} when env ran out of memory */
static int reply_tagged(wb_ext_reply *reply, ErlNifEnv *env, const char *tag, ERL_NIF_TERM term) {
    if (env->failed) return wb_ext_reply_error(reply, "enomem");
    if (ei_x_new_with_version(&reply->x) != 0) return -1;
    if (ei_x_encode_tuple_header(&reply->x, 2) != 0 || ei_x_encode_atom(&reply->x, tag) != 0 ||
        encode(&reply->x, term, 0) != 0) {
        ei_x_free(&reply->x);
        return env->failed ? wb_ext_reply_error(reply, "enomem") : -1;
    }
    return wb_ext_reply_x(reply);
}

static int reply_stats(wb_ext_reply *reply) {
    ei_x_buff *x = &reply->x;
    if (ei_x_new_with_version(x) != 0) return -1;
    if (ei_x_encode_map_header(x, 4) != 0 || ei_x_encode_atom(x, "jobs") != 0 ||
        ei_x_encode_ulonglong(x, atomic_load(&jobs_started)) != 0 ||
        ei_x_encode_atom(x, "live_jobs") != 0 ||
        ei_x_encode_longlong(x, atomic_load(&live_jobs)) != 0 ||
        ei_x_encode_atom(x, "live_bytes") != 0 ||
        ei_x_encode_longlong(x, atomic_load(&live_bytes)) != 0 ||
        ei_x_encode_atom(x, "cancelled") != 0 ||
        ei_x_encode_ulonglong(x, atomic_load(&jobs_cancelled)) != 0) {
        ei_x_free(x);
        return -1;
    }
    return wb_ext_reply_x(reply);
}

/* Steps the job to its end (about STEP_NS a step), or until cancel says the
 * client is gone: false then. */
static bool run_steps(const wb_job_type *type, void *state, bool tiny, wb_ext_cancel_fn cancel,
                      void *cancel_ctx) {
    uint64_t ps = type->ps_per_unit ? type->ps_per_unit : 1000;
    uint64_t budget = tiny ? 1 : (uint64_t)STEP_NS * 1000 / ps + 1;
    int64_t start = now_ns(), check_at = start + CHECK_NS;
    for (;;) {
        step_deadline = start + STEP_NS;
        uint64_t used = 0;
        if (type->step(state, budget, &used)) return true;
        int64_t end = now_ns();
        if (!tiny && used > 0) { /* the next step's budget from this one's pace */
            int64_t took = end - start > 0 ? end - start : 1;
            double next = (double)used * STEP_NS / (double)took;
            budget = next < 1 ? 1 : next > 1e15 ? (uint64_t)1e15 : (uint64_t)next;
        }
        if (cancel && end >= check_at) {
            if (cancel(cancel_ctx)) return false;
            check_at = end + CHECK_NS;
        }
        start = end;
    }
}

static int run_job(ErlNifEnv *env, const wb_job_type *type, const ERL_NIF_TERM argv[], bool tiny,
                   wb_ext_reply *reply, wb_ext_cancel_fn cancel, void *cancel_ctx) {
    alignas(max_align_t) unsigned char args[WB_MAX_ARGS_SIZE];
    memset(args, 0, sizeof args);
    rejected = 0;
    if (!type->decode(env, argv, args)) {
        ERL_NIF_TERM reason = rejected ? rejected : wb_atom(env, "badarg");
        rejected = 0;
        return reply_tagged(reply, env, "error", reason);
    }
    void *state = calloc(1, type->state_size ? type->state_size : 1);
    if (!state) return wb_ext_reply_error(reply, "enomem");
    ERL_NIF_TERM reason = 0;
    if (!type->init(env, args, state, &reason)) {
        free(state);
        return reply_tagged(reply, env, "error", reason ? reason : wb_atom(env, "badarg"));
    }
    size_t memory = type->memory ? type->memory(state) : 0;
    int64_t bytes = (int64_t)(memory > WB_JOB_MEMORY_MAX ? WB_JOB_MEMORY_MAX : memory);
    atomic_fetch_add(&jobs_started, 1);
    atomic_fetch_add(&live_jobs, 1);
    atomic_fetch_add(&live_bytes, bytes);

    int rc = WB_EXT_CANCELLED;
    if (run_steps(type, state, tiny, cancel, cancel_ctx)) {
        ERL_NIF_TERM result =
            type->take_result ? type->take_result(env, state) : type->result(env, state);
        rc = env->raised ? reply_tagged(reply, env, "raise", env->exception)
                         : reply_tagged(reply, env, "ok", result);
    } else {
        atomic_fetch_add(&jobs_cancelled, 1);
    }
    if (type->destroy) type->destroy(state);
    free(state);
    atomic_fetch_sub(&live_bytes, bytes);
    atomic_fetch_sub(&live_jobs, 1);
    return rc;
}

static int handle(const char *tag, int arity, const char *req, size_t len, int idx,
                  wb_ext_reply *reply, wb_ext_cancel_fn cancel, void *cancel_ctx) {
    if (arity == 1 && strcmp(tag, "wb_stats") == 0) return reply_stats(reply);
    if (arity != 4 || strcmp(tag, "wb_job") != 0) return WB_EXT_UNKNOWN;
    char name[MAXATOMLEN], tiny[MAXATOMLEN];
    if (!wb_ext_decode_atom(req, len, &idx, name) || !wb_ext_decode_atom(req, len, &idx, tiny) ||
        (strcmp(tiny, "true") != 0 && strcmp(tiny, "false") != 0))
        return wb_ext_reply_error(reply, "badarg");
    const wb_job_type *type = find_type(name);
    if (!type) return wb_ext_reply_error(reply, "unknown_job");

    ErlNifEnv env;
    env_init(&env);
    reader r = {(const unsigned char *)req, len, (size_t)idx, &env};
    ERL_NIF_TERM args = decode(&r, 0);
    int rc;
    if (env.failed)
        rc = wb_ext_reply_error(reply, "enomem");
    else if (!args || r.at != len || NODE(args)->kind != T_TUPLE ||
             NODE(args)->size != (size_t)type->argc)
        rc = wb_ext_reply_error(reply, "badarg");
    else
        rc = run_job(&env, type, NODE(args)->v.elems, strcmp(tiny, "true") == 0, reply, cancel,
                     cancel_ctx);
    env_free(&env);
    return rc;
}

int wb_ext_jobs_use(wb_job_type *const types[]) {
    if (!wb_job_types_ok(types, "wb_external_main")) return -1;
    if (aliases_overflow) {
        fprintf(stderr, "wb_external_main: more than %d job NIFs\n", MAX_ALIASES);
        return -1;
    }
    for (int a = 0; a < alias_count; a++) {
        bool listed = false;
        for (int i = 0; types[i] && !listed; i++)
            listed = types[i] == aliases[a].type;
        if (!listed) {
            fprintf(stderr, "wb_external_main: the job NIF %s runs a type not in the list\n",
                    aliases[a].nif);
            return -1;
        }
    }
    job_types = types;
    wb_ext_use(handle);
    return 0;
}

int wb_external_main(int argc, char **argv, wb_job_type *const types[]) {
    if (wb_ext_jobs_use(types) != 0) return 2;
    const char *name = argc > 0 ? strrchr(argv[0], '/') : NULL;
    return wb_ext_server_main(name       ? name + 1
                              : argc > 0 ? argv[0]
                                         : "wb_external_main",
                              argc, argv);
}

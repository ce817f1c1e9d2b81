/*
 * erl_nif in a server of SDK job types (see wb_ext_jobs.c): the subset a
 * job type calls, over the terms of wb_ext_terms.c, so that one source
 * serves both the VM and a server and the job sees the same terms in
 * both. A job that calls an erl_nif function outside the subset fails to
 * link, naming the function.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <wb_runtime.h>

#include "wb_ext_terms.h"

/* --- erl_nif, the subset a job uses ------------------------------------------------- */

static ERL_NIF_TERM make_atom_len(ErlNifEnv *env, const char *name, size_t len) {
    ERL_NIF_TERM t = wb_ext_new_node(env, T_ATOM);
    char *copy = wb_ext_env_alloc(env, len ? len : 1);
    if (!t || !copy) return wb_ext_oom(env);
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
    return wb_ext_make_int64(env, i);
}

ERL_NIF_TERM enif_make_uint(ErlNifEnv *env, unsigned i) {
    return wb_ext_make_int64(env, i);
}

ERL_NIF_TERM enif_make_long(ErlNifEnv *env, long i) {
    return wb_ext_make_int64(env, i);
}

ERL_NIF_TERM enif_make_ulong(ErlNifEnv *env, unsigned long i) {
    return wb_ext_make_uint64(env, i);
}

#ifndef enif_make_int64
ERL_NIF_TERM enif_make_int64(ErlNifEnv *env, ErlNifSInt64 i) {
    return wb_ext_make_int64(env, i);
}

ERL_NIF_TERM enif_make_uint64(ErlNifEnv *env, ErlNifUInt64 i) {
    return wb_ext_make_uint64(env, i);
}
#endif

ERL_NIF_TERM enif_make_double(ErlNifEnv *env, double d) {
    if (d != d || d - d != 0) return enif_make_badarg(env); /* NaN or infinite, as the VM */
    ERL_NIF_TERM t = wb_ext_new_node(env, T_FLOAT);
    if (!t) return wb_ext_oom(env);
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
    unsigned char *data = wb_ext_env_alloc(env, len ? len : 1);
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
    ERL_NIF_TERM t = wb_ext_new_node(env, T_BINARY);
    if (bin->ref_bin) { /* the term owns the block now: freed with the request */
        owned *o = wb_ext_env_alloc(env, sizeof *o);
        if (!t || !o) {
            enif_release_binary(bin);
            return wb_ext_oom(env);
        }
        o->data = bin->ref_bin;
        o->next = env->owned;
        env->owned = o;
        bin->ref_bin = NULL;
    }
    if (!t) return wb_ext_oom(env);
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
    ERL_NIF_TERM t = wb_ext_new_node(env, T_BINARY);
    if (!t) return wb_ext_oom(env);
    NODE(t)->v.bytes = n->v.bytes + pos;
    NODE(t)->size = size;
    return t;
}

/* tuples and lists */

ERL_NIF_TERM enif_make_tuple_from_array(ErlNifEnv *env, const ERL_NIF_TERM arr[], unsigned cnt) {
    ERL_NIF_TERM *elems = wb_ext_term_array(env, cnt);
    if (elems && cnt) memcpy(elems, arr, cnt * sizeof *elems);
    return wb_ext_make_tuple(env, elems, cnt);
}

ERL_NIF_TERM enif_make_tuple(ErlNifEnv *env, unsigned cnt, ...) {
    ERL_NIF_TERM *elems = wb_ext_term_array(env, cnt);
    if (!elems) return wb_ext_oom(env);
    va_list ap;
    va_start(ap, cnt);
    for (unsigned i = 0; i < cnt; i++)
        elems[i] = va_arg(ap, ERL_NIF_TERM);
    va_end(ap);
    return wb_ext_make_tuple(env, elems, cnt);
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
    ERL_NIF_TERM t = wb_ext_new_node(env, T_CONS);
    if (!t) return wb_ext_oom(env);
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
    ERL_NIF_TERM *elems = wb_ext_term_array(env, cnt);
    if (!elems) return wb_ext_oom(env);
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
        list = enif_make_list_cell(env, wb_ext_make_int64(env, (unsigned char)string[i]), list);
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

/* environments */

/* An environment of its own, for terms made once and kept for the whole
 * server's life (a library's atoms, made at its load): read-only once
 * made, so any connection's thread may compare with them. */
ErlNifEnv *enif_alloc_env(void) {
    ErlNifEnv *env = malloc(sizeof *env);
    if (env) wb_ext_env_init(env);
    return env;
}

void enif_free_env(ErlNifEnv *env) {
    if (!env) return;
    wb_ext_env_free(env);
    free(env);
}

bool wb_ext_env_ok(const ErlNifEnv *env) {
    return env && !env->failed;
}

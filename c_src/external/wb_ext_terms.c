/*
 * The terms of a server of SDK job types (see wb_ext_jobs.c): an
 * ERL_NIF_TERM is the address of a node in the request's own memory (its
 * environment, freed with the request). Requests are decoded from the
 * external term format, checked byte by byte, and replies encoded with ei.
 * Binaries in the arguments point into the request, as in the VM they
 * point into the caller's heap: no copy.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "wb_ext_terms.h"

/* the T_NIL term, the same for every request */
node wb_ext_nil_node = {.kind = T_NIL};

/* --- the environment: one request's memory ------------------------------------------ */

#define FIRST_BLOCK 4096

void wb_ext_env_init(ErlNifEnv *env) {
    memset(env, 0, sizeof *env);
}

void wb_ext_env_free(ErlNifEnv *env) {
    for (owned *o = env->owned; o; o = o->next)
        free(o->data);
    for (block *b = env->blocks; b;) {
        block *next = b->next;
        free(b);
        b = next;
    }
    wb_ext_env_init(env);
}

void *wb_ext_env_alloc(ErlNifEnv *env, size_t n) {
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

ERL_NIF_TERM wb_ext_new_node(ErlNifEnv *env, int kind) {
    node *n = wb_ext_env_alloc(env, sizeof *n);
    if (!n) return 0;
    n->kind = kind;
    n->size = 0;
    return (ERL_NIF_TERM)n;
}

/* a term out of memory stands for: the request fails with enomem */
ERL_NIF_TERM wb_ext_oom(ErlNifEnv *env) {
    env->failed = true;
    return NIL;
}

/* a tuple of cnt elements; elems is env's and becomes the tuple's */
ERL_NIF_TERM wb_ext_make_tuple(ErlNifEnv *env, ERL_NIF_TERM *elems, unsigned cnt) {
    ERL_NIF_TERM t = wb_ext_new_node(env, T_TUPLE);
    if (!t || !elems) return wb_ext_oom(env);
    NODE(t)->v.elems = elems;
    NODE(t)->size = cnt;
    return t;
}

/* room for cnt terms in env (NULL when out of memory) */
ERL_NIF_TERM *wb_ext_term_array(ErlNifEnv *env, unsigned cnt) {
    return wb_ext_env_alloc(env, (cnt ? cnt : 1) * sizeof(ERL_NIF_TERM));
}

/* --- decoding: the external term format -------------------------------------------- */

static bool take(wb_ext_term_reader *r, size_t n, const unsigned char **out) {
    if (r->len - r->at < n) return false;
    *out = r->p + r->at;
    r->at += n;
    return true;
}

ERL_NIF_TERM wb_ext_make_int64(ErlNifEnv *env, int64_t i) {
    ERL_NIF_TERM t = wb_ext_new_node(env, T_INT);
    if (!t) return wb_ext_oom(env);
    NODE(t)->v.i = i;
    return t;
}

ERL_NIF_TERM wb_ext_make_uint64(ErlNifEnv *env, uint64_t u) {
    if (u <= INT64_MAX) return wb_ext_make_int64(env, (int64_t)u);
    ERL_NIF_TERM t = wb_ext_new_node(env, T_UINT);
    if (!t) return wb_ext_oom(env);
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
    unsigned char *u = wb_ext_env_alloc(env, n + high);
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

/* a term kept as its bytes: checked by decoding it without building */
static ERL_NIF_TERM raw(wb_ext_term_reader *r, size_t start, int depth, size_t inner) {
    ErlNifEnv *env = r->env;
    r->env = NULL;
    bool ok = true;
    for (size_t i = 0; ok && i < inner; i++)
        ok = wb_ext_decode(r, depth + 1) != 0;
    r->env = env;
    if (!ok) return 0;
    if (!env) return NIL;
    ERL_NIF_TERM t = wb_ext_new_node(env, T_RAW);
    if (!t) return wb_ext_oom(env);
    NODE(t)->v.bytes = r->p + start;
    NODE(t)->size = r->at - start;
    return t;
}

/* an integer of n little-endian digits */
static ERL_NIF_TERM big(wb_ext_term_reader *r, size_t start, size_t n, int depth) {
    const unsigned char *sign, *digits;
    if (!take(r, 1, &sign) || !take(r, n, &digits)) return 0;
    if (n > 8) return raw(r, start, depth, 0);
    uint64_t u = 0;
    for (size_t i = n; i-- > 0;)
        u = (u << 8) | digits[i];
    if (!r->env) return NIL;
    if (*sign == 0) return wb_ext_make_uint64(r->env, u);
    if (u <= (uint64_t)INT64_MAX + 1) return wb_ext_make_int64(r->env, (int64_t)(0 - u));
    return raw(r, start, depth, 0);
}

/* Returns the term (NIL when only checking), or 0 when the bytes are not a
 * term this server takes (pids, ports, references and funs are refused). */
ERL_NIF_TERM wb_ext_decode(wb_ext_term_reader *r, int depth) {
    if (depth > MAX_DEPTH) return 0;
    ErlNifEnv *env = r->env;
    size_t start = r->at;
    const unsigned char *tag, *p;
    if (!take(r, 1, &tag)) return 0;
    switch (*tag) {
    case ERL_SMALL_INTEGER_EXT:
        if (!take(r, 1, &p)) return 0;
        return env ? wb_ext_make_int64(env, p[0]) : NIL;
    case ERL_INTEGER_EXT:
        if (!take(r, 4, &p)) return 0;
        return env ? wb_ext_make_int64(env, (int32_t)wb_ext_be32(p)) : NIL;
    case NEW_FLOAT_EXT: {
        if (!take(r, 8, &p)) return 0;
        if (!env) return NIL;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = (bits << 8) | p[i];
        ERL_NIF_TERM t = wb_ext_new_node(env, T_FLOAT);
        if (!t) return wb_ext_oom(env);
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
        ERL_NIF_TERM t = wb_ext_new_node(env, T_ATOM);
        if (!t) return wb_ext_oom(env);
        if (*tag == ERL_ATOM_EXT || *tag == ERL_SMALL_ATOM_EXT)
            name = latin1_to_utf8(env, name, n, &n);
        if (!name) return wb_ext_oom(env);
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
        ERL_NIF_TERM *elems = env ? wb_ext_term_array(env, (unsigned)arity) : NULL;
        for (size_t i = 0; i < arity; i++) {
            ERL_NIF_TERM e = wb_ext_decode(r, depth + 1);
            if (!e) return 0;
            if (elems) elems[i] = e;
        }
        return env ? wb_ext_make_tuple(env, elems, (unsigned)arity) : NIL;
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
            ERL_NIF_TERM cell = wb_ext_new_node(env, T_CONS),
                         head = wb_ext_make_int64(env, bytes[i]);
            if (!cell || env->failed) return wb_ext_oom(env);
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
            ERL_NIF_TERM head = wb_ext_decode(r, depth + 1);
            if (!head) return 0;
            if (!env) continue;
            ERL_NIF_TERM cell = wb_ext_new_node(env, T_CONS);
            if (!cell) return wb_ext_oom(env);
            NODE(cell)->v.cons.head = head;
            NODE(cell)->v.cons.tail = NIL;
            if (last)
                NODE(last)->v.cons.tail = cell;
            else
                first = cell;
            last = cell;
        }
        ERL_NIF_TERM tail = wb_ext_decode(r, depth + 1);
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
        ERL_NIF_TERM t = wb_ext_new_node(env, T_BINARY);
        if (!t) return wb_ext_oom(env);
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

int wb_ext_encode(ei_x_buff *x, ERL_NIF_TERM t, int depth) {
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
            if (wb_ext_encode(x, n->v.elems[i], depth + 1) != 0) return -1;
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
            if (wb_ext_encode(x, NODE(at)->v.cons.head, depth + 1) != 0) return -1;
        return wb_ext_encode(x, at, depth + 1);
    }
    case T_RAW:
        return n->size > INT_MAX ? -1 : ei_x_append_buf(x, (const char *)n->v.bytes, (int)n->size);
    default:
        return -1;
    }
}

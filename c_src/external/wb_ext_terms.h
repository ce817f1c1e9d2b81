/*
 * The terms of a server of SDK job types, shared by its three files (not
 * part of the SDK): wb_ext_terms.c (the terms, a request's memory, the
 * external term format decoded and encoded), wb_ext_nif.c (the erl_nif
 * subset over those terms) and wb_ext_jobs.c (the job server).
 */
#ifndef WB_EXT_TERMS_H
#define WB_EXT_TERMS_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <erl_nif.h>

#include "wb_external.h"

/* nesting of tuples and lists, decoded or encoded */
#define MAX_DEPTH 1000

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

extern node wb_ext_nil_node;
#define NIL     ((ERL_NIF_TERM)&wb_ext_nil_node)
#define NODE(t) ((node *)(t))

/* the environment: one request's memory */

typedef struct block {
    struct block *next;
    size_t cap, used;
    alignas(max_align_t) unsigned char data[];
} block;

typedef struct owned {
    struct owned *next;
    void *data;
} owned;

struct enif_environment_t {
    block *blocks; /* the newest first */
    owned *owned;  /* binaries that enif_make_binary made terms of */
    bool failed;   /* out of memory: the request answers {error, enomem} */
    bool raised;
    ERL_NIF_TERM exception;
};

/* the bytes of a term being decoded */
typedef struct {
    const unsigned char *p;
    size_t len, at;
    ErlNifEnv *env; /* NULL: check only (the inside of a raw term) */
} wb_ext_term_reader;

void wb_ext_env_init(ErlNifEnv *env);
/* frees everything env holds, and empties it */
void wb_ext_env_free(ErlNifEnv *env);
/* n bytes in env, aligned for any type; NULL (and env failed) when out of memory */
void *wb_ext_env_alloc(ErlNifEnv *env, size_t n);
/* a node of the kind, its size 0; 0 when out of memory */
ERL_NIF_TERM wb_ext_new_node(ErlNifEnv *env, int kind);
/* a term out of memory stands for: the request fails with enomem */
ERL_NIF_TERM wb_ext_oom(ErlNifEnv *env);
/* a tuple of cnt elements; elems is env's and becomes the tuple's */
ERL_NIF_TERM wb_ext_make_tuple(ErlNifEnv *env, ERL_NIF_TERM *elems, unsigned cnt);
/* room for cnt terms in env (NULL when out of memory) */
ERL_NIF_TERM *wb_ext_term_array(ErlNifEnv *env, unsigned cnt);
ERL_NIF_TERM wb_ext_make_int64(ErlNifEnv *env, int64_t i);
/* an integer, T_UINT above INT64_MAX */
ERL_NIF_TERM wb_ext_make_uint64(ErlNifEnv *env, uint64_t u);

/* Decodes the term at r->at (depth: its nesting so far, 0 at the top).
 * Returns the term (NIL when only checking), or 0 when the bytes are not a
 * term this server takes (pids, ports, references and funs are refused). */
ERL_NIF_TERM wb_ext_decode(wb_ext_term_reader *r, int depth);
/* Appends t to x; 0, or -1 (too deep, too large, or out of memory). */
int wb_ext_encode(ei_x_buff *x, ERL_NIF_TERM t, int depth);

#endif

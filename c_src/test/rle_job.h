/* The job "rle" of the SDK's test library (sdk_jobs_nif.c): run-length
 * encoding of a binary into (count 1..255, byte) pairs, whose output size
 * is known only at the end. It writes its output in its steps into a
 * wb_output and hands it over in take_result: as iodata (`flat` false),
 * or, with `flat` true, copied into one binary in its last steps. So no
 * part of the call, result included, holds a scheduler longer than a step,
 * however large the output. The guide's example of large results
 * (guides/sdk.md) is this job.
 *
 * Units: one per input byte encoded, and one per 16 output bytes copied
 * (a copy costs about a sixteenth of encoding a byte). */
#ifndef WB_TEST_RLE_JOB_H
#define WB_TEST_RLE_JOB_H

#include <wb_output.h>
#include <wb_runtime.h>

#define RLE_COPY_BYTES_PER_UNIT 16

typedef struct {
    ErlNifBinary in;
    bool flat;
} rle_args;

typedef struct {
    const unsigned char *in; /* bound to this call's argument */
    size_t n, next;
    bool flat, encoded;
    wb_output out;
} rle_state;

static bool rle_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    rle_args *a = args;
    if (!enif_inspect_binary(env, argv[0], &a->in)) return false;
    if (enif_is_identical(argv[1], wb_atom(env, "true")))
        a->flat = true;
    else if (enif_is_identical(argv[1], wb_atom(env, "false")))
        a->flat = false;
    else
        return false;
    return true;
}

static uint64_t rle_predict(const void *args) {
    const rle_args *a = args;
    /* the output is at most two bytes an input byte */
    return a->in.size + (a->flat ? 2 * a->in.size / RLE_COPY_BYTES_PER_UNIT : 0);
}

static bool rle_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    const rle_args *a = args;
    rle_state *s = state;
    s->in = a->in.data;
    s->n = a->in.size;
    s->flat = a->flat;
    return true;
}

static void rle_bind(const void *args, void *state) {
    ((rle_state *)state)->in = ((const rle_args *)args)->in.data;
}

static bool rle_step(void *state, uint64_t budget, uint64_t *used) {
    rle_state *s = state;
    uint64_t done = 0;
    while (!s->encoded && done < budget) {
        if (s->next == s->n) {
            s->encoded = true;
            break;
        }
        unsigned char byte = s->in[s->next];
        size_t run = 1;
        while (run < 255 && s->next + run < s->n && s->in[s->next + run] == byte)
            run++;
        unsigned char *pair = wb_output_reserve(&s->out, 2);
        if (!pair) return true; /* out of memory: take_result says so */
        pair[0] = (unsigned char)run;
        pair[1] = byte;
        wb_output_commit(&s->out, 2);
        s->next += run;
        done += run;
    }
    if (s->encoded && !s->flat) {
        *used += done;
        return true;
    }
    if (s->encoded && done < budget) {
        uint64_t copied = 0;
        int r = wb_output_flatten(&s->out, (budget - done) * RLE_COPY_BYTES_PER_UNIT, &copied);
        done += (copied + RLE_COPY_BYTES_PER_UNIT - 1) / RLE_COPY_BYTES_PER_UNIT;
        if (r != 0) {
            *used += done;
            return true;
        }
    }
    *used += done;
    return false;
}

static ERL_NIF_TERM rle_take(ErlNifEnv *env, void *state) {
    rle_state *s = state;
    if (s->out.failed) return wb_error(env, wb_atom(env, "enomem"));
    return wb_output_take(env, &s->out);
}

static void rle_destroy(void *state) {
    wb_output_free(&((rle_state *)state)->out);
}

static wb_job_type rle_job = {
    .name = "rle",
    .argc = 2,
    .args_size = sizeof(rle_args),
    .state_size = sizeof(rle_state),
    .decode = rle_decode,
    .predict = rle_predict,
    .init = rle_init,
    .bind = rle_bind,
    .step = rle_step,
    .take_result = rle_take,
    .destroy = rle_destroy,
};

#endif

/* Elixir.Checksum.Native: Adler-32 (RFC 1950) of a binary as a WellBehaved
 * job, so that a checksum of any size runs in whichever mode the caller
 * picks (see WellBehaved.Runtime) without blocking a scheduler.
 *
 * One unit of work is one byte. The state keeps the running sums and the
 * position; the bytes themselves belong to the call's argument term, so
 * the state points at them only for the current NIF call (bind). */
#include <wb_runtime.h>

#include "crc32_chunks.h"

#define ADLER_MOD 65521u
/* the most bytes whose sums fit in 32 bits before a reduction (zlib's NMAX):
 * 255 * n * (n + 1) / 2 + (n + 1) * (ADLER_MOD - 1) <= 2^32 - 1 */
#define ADLER_NMAX 5552u

/* the decoded argument: the binary to checksum */
typedef struct {
    ErlNifBinary data;
} adler_args;

typedef struct {
    const unsigned char *data; /* this call's bytes (bind) */
    size_t size, pos;
    uint32_t a, b; /* both < ADLER_MOD between steps */
} adler_state;

static bool adler_decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    return enif_inspect_binary(env, argv[0], &((adler_args *)args)->data);
}

static uint64_t adler_predict(const void *args) {
    return ((const adler_args *)args)->data.size;
}

static void adler_bind(const void *args, void *state) {
    ((adler_state *)state)->data = ((const adler_args *)args)->data.data;
}

static bool adler_init(ErlNifEnv *env, const void *args, void *state, ERL_NIF_TERM *reason) {
    (void)env;
    (void)reason;
    const adler_args *in = args;
    /* every field, the data included: bind runs only on the calls after this one */
    *(adler_state *)state = (adler_state){.data = in->data.data, .size = in->data.size, .a = 1};
    return true;
}

static bool adler_step(void *state, uint64_t budget, uint64_t *used) {
    adler_state *s = state;
    size_t left = s->size - s->pos;
    size_t n = budget < left ? (size_t)budget : left;
    *used += n;
    if (n == 0) return s->pos == s->size; /* no pointer arithmetic on an empty binary's data */
    const unsigned char *p = s->data + s->pos;
    uint32_t a = s->a, b = s->b;
    s->pos += n;
    while (n > 0) {
        size_t chunk = n < ADLER_NMAX ? n : ADLER_NMAX;
        n -= chunk;
        for (size_t i = 0; i < chunk; i++) {
            a += p[i];
            b += a;
        }
        p += chunk;
        a %= ADLER_MOD;
        b %= ADLER_MOD;
    }
    s->a = a;
    s->b = b;
    return s->pos == s->size;
}

static ERL_NIF_TERM adler_result(ErlNifEnv *env, const void *state) {
    const adler_state *s = state;
    return enif_make_uint64(env, ((ErlNifUInt64)s->b << 16) | s->a);
}

static wb_job_type adler32_job = {
    .name = "adler32",
    .argc = 1,
    .args_size = sizeof(adler_args),
    .state_size = sizeof(adler_state),
    .decode = adler_decode,
    .predict = adler_predict,
    .init = adler_init,
    .bind = adler_bind,
    .step = adler_step,
    .result = adler_result,
    /* setup, memory, destroy: NULL (no set-up work, nothing on the heap) */
    .ps_per_unit = 500, /* two dependent adds per byte */
};

/* adler32(Data, Mode, Tiny, Ref) */
WB_JOB_NIF(adler32, adler32_job)
/* crc32_chunks(Data, ChunkBytes, Mode, Tiny, Ref): the job type is C++'s */
WB_JOB_NIF(crc32_chunks, crc32_chunks_job)

static ErlNifFunc nif_funcs[] = {
    {"adler32", 4, adler32, 0},
    {"crc32_chunks", 5, crc32_chunks, 0},
    WB_RUNTIME_NIFS,
};

static wb_job_type *const types[] = {&adler32_job, &crc32_chunks_job, NULL};

/* load, upgrade (a new version of Checksum.Native loading the library: a
 * hot upgrade) and unload, all the runtime's */
WB_NIF_INIT(Elixir.Checksum.Native, nif_funcs, types)

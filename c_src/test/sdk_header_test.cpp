// The SDK's public header used from C++ (compiled by `make test-c`): a job
// type and its NIF written in C++11, as a C++ NIF author would.
#include <wb_output.h>
#include <wb_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

struct Args {
    ErlNifBinary data;
};

struct State {
    std::size_t at, size;
    std::uint64_t hash;
    const unsigned char *data;
};

bool decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *args) {
    return enif_inspect_binary(env, argv[0], &static_cast<Args *>(args)->data) != 0;
}

std::uint64_t predict(const void *args) {
    return static_cast<const Args *>(args)->data.size;
}

void bind(const void *args, void *state) {
    static_cast<State *>(state)->data = static_cast<const Args *>(args)->data.data;
}

bool init(ErlNifEnv *, const void *args, void *state, ERL_NIF_TERM *) {
    State *s = static_cast<State *>(state);
    std::memset(s, 0, sizeof *s);
    s->size = static_cast<const Args *>(args)->data.size;
    s->hash = 14695981039346656037ull;
    bind(args, state);
    return true;
}

bool step(void *state, std::uint64_t budget, std::uint64_t *used) {
    State *s = static_cast<State *>(state);
    for (; budget > 0 && s->at < s->size; budget--, s->at++, ++*used)
        s->hash = (s->hash ^ s->data[s->at]) * 1099511628211ull;
    return s->at == s->size;
}

ERL_NIF_TERM result(ErlNifEnv *env, const void *state) {
    return enif_make_uint64(env, static_cast<const State *>(state)->hash);
}

wb_job_type fnv_job() {
    wb_job_type type = wb_job_type();
    type.name = "fnv1a";
    type.argc = 1;
    type.args_size = sizeof(Args);
    type.state_size = sizeof(State);
    type.decode = decode;
    type.predict = predict;
    type.init = init;
    type.bind = bind;
    type.step = step;
    type.result = result;
    type.ps_per_unit = 1000;
    return type;
}

wb_job_type fnv = fnv_job();

// the SDK's macros, as C++
WB_JOB_NIF(fnv1a, fnv)

int load(ErlNifEnv *env, void **, ERL_NIF_TERM info) {
    static wb_job_type *const types[] = {&fnv, nullptr};
    return wb_runtime_load(env, types, info);
}

// the load of SDK 0.1, two arguments, and the version, as C++
#if WB_SDK_VERSION < 2000
#error "WB_SDK_VERSION"
#endif
int load_v0(ErlNifEnv *env, void **, ERL_NIF_TERM) {
    static wb_job_type *const types[] = {&fnv, nullptr};
    return wb_runtime_load(env, types);
}

void unload(ErlNifEnv *, void *) {
    wb_runtime_unload();
}

ErlNifFunc nif_funcs[] = {
    {"fnv1a", 4, fnv1a, 0},
    WB_RUNTIME_NIFS,
};

} // namespace

ERL_NIF_INIT(Elixir.WellBehaved.Test.SDKCxx, nif_funcs, load, nullptr, nullptr, unload)

// not a callback of this library: compiled for its form only
int (*const sdk_v0_load)(ErlNifEnv *, void **, ERL_NIF_TERM) = load_v0;

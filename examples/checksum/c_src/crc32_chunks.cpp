// A WellBehaved job in C++: the CRC-32 of each fixed-size piece of a
// binary. One unit is one byte. The answer, 4 bytes per piece, is a binary
// the job allocates at init and fills as it goes; take_result hands it over
// as the result term, so nothing is copied at the end however many pieces
// there are.
//
// C++ notes: the job type is filled field by field in a value-initialised
// struct (designated initializers are C++20 and -Wextra warns about the
// members they leave out); the callbacks have C linkage through the
// function pointers only, so they may be ordinary static C++ functions;
// no exception may leave a callback (built with -fno-exceptions).
#include "crc32_chunks.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace {

// the reflected CRC-32 of zlib and erlang:crc32/1
constexpr std::array<std::uint32_t, 256> make_table() {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t n = 0; n < 256; n++) {
        std::uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
    return table;
}

constexpr auto crc_table = make_table();

struct Args {
    ErlNifBinary data;
    std::uint64_t chunk;
};

struct State {
    const unsigned char *data; // this call's bytes (bind)
    std::size_t size, pos, chunk;
    std::uint32_t crc;   // of the current piece so far, pre-inverted
    ErlNifBinary out;    // 4 bytes per piece
    std::size_t written; // bytes of out filled
    bool owns_out;       // until take_result hands it over
};

bool decode(ErlNifEnv *env, const ERL_NIF_TERM argv[], void *raw) {
    auto *args = static_cast<Args *>(raw);
    ErlNifUInt64 chunk;
    if (!enif_inspect_binary(env, argv[0], &args->data) || !enif_get_uint64(env, argv[1], &chunk))
        return false;
    if (chunk == 0) return wb_reject(wb_atom(env, "zero_chunk_size"));
    args->chunk = chunk;
    return true;
}

std::uint64_t predict(const void *raw) {
    return static_cast<const Args *>(raw)->data.size;
}

void bind(const void *raw, void *state) {
    static_cast<State *>(state)->data = static_cast<const Args *>(raw)->data.data;
}

bool init(ErlNifEnv *env, const void *raw, void *state, ERL_NIF_TERM *reason) {
    const auto *args = static_cast<const Args *>(raw);
    auto *s = static_cast<State *>(state);
    std::size_t size = args->data.size;
    std::size_t chunk = args->chunk < size ? static_cast<std::size_t>(args->chunk) : size;
    std::size_t pieces = size == 0 ? 0 : (size + chunk - 1) / chunk;
    // at most 4 bytes per input byte: this size cannot overflow
    if (!enif_alloc_binary(pieces * 4, &s->out)) {
        *reason = wb_atom(env, "enomem");
        return false;
    }
    s->owns_out = true;
    s->data = args->data.data;
    s->size = size;
    s->chunk = chunk;
    s->crc = 0xFFFFFFFFu;
    return true;
}

void put_be32(unsigned char *p, std::uint32_t v) {
    p[0] = static_cast<unsigned char>(v >> 24);
    p[1] = static_cast<unsigned char>(v >> 16);
    p[2] = static_cast<unsigned char>(v >> 8);
    p[3] = static_cast<unsigned char>(v);
}

bool step(void *state, std::uint64_t budget, std::uint64_t *used) {
    auto *s = static_cast<State *>(state);
    std::size_t left = s->size - s->pos;
    std::size_t n = budget < left ? static_cast<std::size_t>(budget) : left;
    *used += n;
    while (n > 0) {
        // the end of this piece: the whole chunk, or the input's last byte
        std::size_t piece_end = (s->pos / s->chunk + 1) * s->chunk;
        if (piece_end > s->size) piece_end = s->size;
        std::size_t m = piece_end - s->pos < n ? piece_end - s->pos : n;
        const unsigned char *p = s->data + s->pos;
        std::uint32_t crc = s->crc;
        for (std::size_t i = 0; i < m; i++)
            crc = crc_table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
        s->crc = crc;
        s->pos += m;
        n -= m;
        if (s->pos == piece_end) {
            put_be32(s->out.data + s->written, crc ^ 0xFFFFFFFFu);
            s->written += 4;
            s->crc = 0xFFFFFFFFu;
        }
    }
    return s->pos == s->size;
}

ERL_NIF_TERM take_result(ErlNifEnv *env, void *state) {
    auto *s = static_cast<State *>(state);
    s->owns_out = false; // the term owns it now
    return enif_make_binary(env, &s->out);
}

std::size_t memory(const void *state) {
    return static_cast<const State *>(state)->out.size;
}

void destroy(void *state) {
    auto *s = static_cast<State *>(state);
    if (s->owns_out) enif_release_binary(&s->out);
}

wb_job_type make_type() {
    wb_job_type t{};
    t.name = "crc32_chunks";
    t.argc = 2;
    t.args_size = sizeof(Args);
    t.state_size = sizeof(State);
    t.decode = decode;
    t.predict = predict;
    t.init = init;
    t.bind = bind;
    t.step = step;
    t.take_result = take_result;
    t.memory = memory;
    t.destroy = destroy;
    t.ps_per_unit = 1000; // a table lookup and a shift per byte, dependent
    return t;
}

} // namespace

wb_job_type crc32_chunks_job = make_type();

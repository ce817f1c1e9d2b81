/* Text helpers (utf8.h): UTF-8, ASCII, and bytes into symbols. */
#include "utf8.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s[0..len), or 0 when invalid
 * (overlong forms, surrogates and values above U+10FFFF are invalid). */
size_t wb_utf8_sequence(const uint8_t *s, size_t len, uint32_t *cp) {
    uint8_t c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        v = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        v = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (len < need) return 0;
    for (size_t i = 1; i < need; i++) {
        uint8_t t = s[i];
        if (t < lo || t > hi) return 0;
        lo = 0x80;
        hi = 0xBF;
        v = (v << 6) | (t & 0x3F);
    }
    *cp = v;
    return need;
}

uint8_t wb_text_or_bytes(const uint8_t *in, size_t len) {
    /* eight bytes a word, the last word read where the input ends (OR
     * does not mind a byte read twice): no loop over the rest, whose
     * length the processor could not predict */
    uint64_t words = 0, word;
    if (len >= 8) {
        size_t i = 0;
        for (; i + 8 < len; i += 8) {
            memcpy(&word, in + i, 8);
            words |= word;
        }
        memcpy(&word, in + len - 8, 8);
        words |= word;
    } else if (len >= 4) {
        uint32_t half;
        memcpy(&half, in, 4);
        words = half;
        memcpy(&half, in + len - 4, 4);
        words |= half;
    } else if (len > 0) {
        words = (uint64_t)in[0] | in[len / 2] | in[len - 1];
    }
    return wb_text_or_word(words);
}

bool wb_text_ascii(const uint8_t *in, size_t len) {
    return wb_text_or_bytes(in, len) < 0x80;
}

/* Bytes as symbols, in chunks of a fixed count the compiler widens with
 * vector instructions (a loop of unknown count stays scalar at -O2). */
#define WIDEN_CHUNK 16

static void widen_chunk(const uint8_t *restrict in, uint32_t *restrict out) {
    for (size_t i = 0; i < WIDEN_CHUNK; i++)
        out[i] = in[i];
}

static void widen(const uint8_t *in, size_t len, uint32_t *out) {
    size_t i = 0;
    for (; len - i >= WIDEN_CHUNK; i += WIDEN_CHUNK)
        widen_chunk(in + i, out + i);
    for (; i < len; i++)
        out[i] = in[i];
}

/* Whether the chunk at in is all ASCII (its codepoints its bytes). */
static bool ascii_chunk(const uint8_t *in) {
    uint64_t x, y;
    memcpy(&x, in, 8);
    memcpy(&y, in + 8, 8);
    return ((x | y) & UINT64_C(0x8080808080808080)) == 0;
}

/* Decodes UTF-8 from in[i] while i < end, whole sequences (the last may
 * run up to 3 bytes past end, never past len), runs of ASCII a chunk at a
 * time; false on an invalid sequence (*at then at it). */
static bool decode_run(const uint8_t *in, size_t len, size_t end, uint32_t *out, size_t *at,
                       size_t *count) {
    size_t i = *at, c = *count;
    bool ok = true;
    while (i < end) {
        if (end - i >= WIDEN_CHUNK && ascii_chunk(in + i)) {
            widen_chunk(in + i, out + c);
            i += WIDEN_CHUNK;
            c += WIDEN_CHUNK;
            continue;
        }
        uint32_t cp;
        size_t step = wb_utf8_sequence(in + i, len - i, &cp);
        if (step == 0) {
            ok = false;
            break;
        }
        out[c++] = cp;
        i += step;
    }
    *at = i;
    *count = c;
    return ok;
}

size_t wb_fz_symbols(const uint8_t *in, size_t len, bool codepoints, uint32_t *out) {
    if (!codepoints) {
        widen(in, len, out);
        return len;
    }
    size_t at = 0, count = 0;
    return decode_run(in, len, len, out, &at, &count) ? count : SIZE_MAX;
}

uint64_t wb_fz_decode_units(size_t len) {
    return 1 + len / WB_FZ_DECODE_BYTES;
}

bool wb_fz_symbols_step(wb_fz_decoding *d, const uint8_t *in, size_t len, bool codepoints,
                        uint32_t *out, uint64_t budget, uint64_t *used) {
    if (d->done) return true;
    /* the bytes this step may take: its budget's, at least one */
    size_t most = budget == 0                               ? 1
                  : budget >= SIZE_MAX / WB_FZ_DECODE_BYTES ? SIZE_MAX
                                                            : (size_t)budget * WB_FZ_DECODE_BYTES;
    size_t from = d->at, end = from + (len - from < most ? len - from : most);
    if (!codepoints) {
        widen(in + from, end - from, out + from);
        d->count = end;
        d->at = end;
    } else if (!decode_run(in, len, end, out, &d->at, &d->count)) {
        d->invalid = d->done = true;
    }
    *used += 1 + (d->at - from) / WB_FZ_DECODE_BYTES;
    if (d->at == len) d->done = true;
    return d->done;
}

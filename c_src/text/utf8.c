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

size_t wb_fz_symbols(const uint8_t *in, size_t len, bool codepoints, uint32_t *out) {
    size_t count = 0;
    if (!codepoints) {
        for (size_t i = 0; i < len; i++)
            out[i] = in[i];
        return len;
    }
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t step = wb_utf8_sequence(in + i, len - i, &cp);
        if (step == 0) return SIZE_MAX;
        out[count++] = cp;
        i += step;
    }
    return count;
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
        for (size_t i = from; i < end; i++)
            out[i] = in[i];
        d->count = end;
        d->at = end;
    } else {
        size_t i = from, count = d->count;
        /* whole sequences: the last may run up to 3 bytes past `end` */
        while (i < end) {
            uint32_t cp;
            size_t step = wb_utf8_sequence(in + i, len - i, &cp);
            if (step == 0) {
                d->invalid = d->done = true;
                break;
            }
            out[count++] = cp;
            i += step;
        }
        d->count = count;
        d->at = i;
    }
    *used += 1 + (d->at - from) / WB_FZ_DECODE_BYTES;
    if (d->at == len) d->done = true;
    return d->done;
}

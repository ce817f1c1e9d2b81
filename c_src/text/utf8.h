/*
 * Text helpers shared by every metric: UTF-8 decoding and validation,
 * ASCII checks, and the decoding of bytes into the symbols the kernels
 * compare (the bytes themselves, or Unicode codepoints). Pure C, no
 * erl_nif; no state of their own.
 */
#ifndef WB_TEXT_UTF8_H
#define WB_TEXT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Length of the valid UTF-8 sequence at s[0..len) (len >= 1), its
 * codepoint in *cp; 0 when invalid (overlong forms, surrogates and values
 * above U+10FFFF are invalid, as for Elixir's String). */
size_t wb_utf8_sequence(const uint8_t *s, size_t len, uint32_t *cp);

/* Whether a byte continues a UTF-8 sequence (10xxxxxx). */
static inline bool wb_utf8_continuation(uint8_t byte) {
    return (byte & 0xC0) == 0x80;
}

/* Every byte of in[0..len) OR-ed together (a value below 0x80: ASCII),
 * and whether they are all ASCII, where codepoints are bytes. */
uint8_t wb_text_or_bytes(const uint8_t *in, size_t len);
/* The eight bytes of a word OR-ed together. */
static inline uint8_t wb_text_or_word(uint64_t w) {
    w |= w >> 32;
    w |= w >> 16;
    w |= w >> 8;
    return (uint8_t)w;
}
bool wb_text_ascii(const uint8_t *in, size_t len);

/* Decodes `len` bytes into symbols: the bytes themselves, or in codepoint
 * mode the codepoints of valid UTF-8. out has room for len symbols.
 * Returns their number, or SIZE_MAX when the UTF-8 is invalid. */
size_t wb_fz_symbols(const uint8_t *in, size_t len, bool codepoints, uint32_t *out);

/* The same, resumable: a decoding under way (zeroed to begin). */
typedef struct {
    size_t at;    /* the next byte */
    size_t count; /* the symbols written */
    bool done;
    bool invalid; /* done: the UTF-8 was invalid */
} wb_fz_decoding;

/* Decodes about `budget` units of in (len bytes) into out (room for len
 * symbols), a unit WB_FZ_DECODE_BYTES bytes (a codepoint's sequence is
 * never cut), adding the units to *used; true once done (d->count the
 * symbols, or d->invalid). */
#define WB_FZ_DECODE_BYTES 8
bool wb_fz_symbols_step(wb_fz_decoding *d, const uint8_t *in, size_t len, bool codepoints,
                        uint32_t *out, uint64_t budget, uint64_t *used);
/* The units of decoding len bytes (wb_fz_symbols_step takes at most these). */
uint64_t wb_fz_decode_units(size_t len);

#ifdef __cplusplus
}
#endif

#endif

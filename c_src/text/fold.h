/*
 * The folding processor's native path (WellBehaved.Fuzzy.Processor.fold/1):
 * text whose every codepoint is in fold_table.h (ASCII, Latin, IPA,
 * combining diacritics, Greek, Cyrillic, Latin Extended Additional, Greek
 * Extended) folds codepoint by codepoint, each into the table's bytes;
 * the whole is then trimmed of its spaces at both ends. The table is
 * made from the Elixir fold (scripts/fold_table.exs), which takes any
 * other text. Pure C, no erl_nif.
 */
#ifndef WB_TEXT_FOLD_H
#define WB_TEXT_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Measures the fold of text[from..len) (from at a codepoint's first
 * byte), at most about `most` bytes of it (>= 4; a sequence is never
 * cut): *next where it stopped (len when done), *out_len the bytes of
 * its fold. false when it meets invalid UTF-8 or a codepoint the table
 * does not hold (the text is then the Elixir fold's). */
bool wb_fold_measure(const uint8_t *text, size_t len, size_t from, size_t most, size_t *next,
                     size_t *out_len);

/* Writes the fold of text[from..next), measured by wb_fold_measure, to
 * out (room for its out_len bytes). */
void wb_fold_write(const uint8_t *text, size_t from, size_t next, uint8_t *out);

/* The bytes of out[0..len) without the spaces at both ends: their first
 * byte in *start, their number returned. */
size_t wb_fold_trim(const uint8_t *out, size_t len, size_t *start);

#ifdef __cplusplus
}
#endif

#endif

/* The folding processor's table walk (fold.h). */
#include "fold.h"

#include "fold_table.h"
#include "utf8.h"

#include <string.h>

/* The table's entry of codepoint c, or WB_FOLD_ENTRIES when it has none. */
static size_t entry_of(uint32_t c) {
    if (c < WB_FOLD_LOW_END) return c;
    if (c >= WB_FOLD_HIGH_FIRST && c < WB_FOLD_HIGH_END)
        return WB_FOLD_LOW_END + (c - WB_FOLD_HIGH_FIRST);
    return WB_FOLD_ENTRIES;
}

/* The codepoint at text[i] (len bytes in all): its entry and its bytes
 * (0: invalid UTF-8, or no entry). */
static size_t next_entry(const uint8_t *text, size_t len, size_t i, size_t *entry) {
    uint32_t c = text[i];
    size_t n = 1;
    if (c >= 0x80) {
        n = wb_utf8_sequence(text + i, len - i, &c);
        if (n == 0) return 0;
    }
    *entry = entry_of(c);
    if (*entry == WB_FOLD_ENTRIES || wb_fold_len[*entry] == WB_FOLD_NOT_HERE) return 0;
    return n;
}

bool wb_fold_measure(const uint8_t *text, size_t len, size_t from, size_t most, size_t *next,
                     size_t *out_len) {
    size_t i = from, end = len - from > most ? from + most : len, out = 0;
    while (i < end) {
        size_t entry, n = next_entry(text, len, i, &entry);
        if (n == 0) return false;
        out += wb_fold_len[entry];
        i += n;
    }
    *next = i;
    *out_len = out;
    return true;
}

void wb_fold_write(const uint8_t *text, size_t from, size_t next, uint8_t *out) {
    size_t i = from;
    while (i < next) {
        size_t entry, n = next_entry(text, next, i, &entry);
        /* measured: every codepoint has its entry */
        if (n == 0) return;
        size_t bytes = wb_fold_len[entry];
        if (bytes > 0) memcpy(out, wb_fold_pool + wb_fold_at[entry], bytes);
        out += bytes;
        i += n;
    }
}

size_t wb_fold_trim(const uint8_t *out, size_t len, size_t *start) {
    size_t s = 0;
    while (s < len && out[s] == ' ')
        s++;
    while (len > s && out[len - 1] == ' ')
        len--;
    *start = s;
    return len - s;
}

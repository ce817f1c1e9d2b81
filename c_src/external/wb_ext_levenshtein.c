/* The built-in server's Levenshtein request (see wb_external.h): the same C
 * core as WellBehaved.Levenshtein, in steps, asking between them whether the
 * client is still there. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../levenshtein/levenshtein.h"
#include "wb_external.h"

static bool decode_binary(const char *buf, size_t len, int *idx, const uint8_t **data,
                          size_t *size) {
    if (!wb_ext_item_fits(buf, len, *idx) || buf[*idx] != ERL_BINARY_EXT) return false;
    const char *p;
    unsigned int bitoffs;
    size_t bits;
    if (ei_decode_bitstring(buf, idx, &p, &bitoffs, &bits) != 0 || bitoffs != 0 || bits % 8 != 0)
        return false;
    *data = (const uint8_t *)p;
    *size = bits / 8;
    return true;
}

/* nil, or a non-negative integer (one above SIZE_MAX means no limit) */
static bool decode_max_distance(const char *buf, size_t len, int *idx, size_t *max) {
    if (!wb_ext_item_fits(buf, len, *idx)) return false;
    char tag = buf[*idx];
    if (tag == ERL_SMALL_ATOM_EXT || tag == ERL_SMALL_ATOM_UTF8_EXT || tag == ERL_ATOM_EXT ||
        tag == ERL_ATOM_UTF8_EXT) {
        char atom[MAXATOMLEN];
        if (ei_decode_atom(buf, idx, atom) != 0 || strcmp(atom, "nil") != 0) return false;
        *max = WB_LEV_NO_LIMIT;
        return true;
    }
    EI_ULONGLONG k;
    if (ei_decode_ulonglong(buf, idx, &k) == 0) {
        *max = wb_lev_cutoff(k);
        return true;
    }
    /* a positive bignum beyond 64 bits; the sign byte follows the length */
    size_t sign_at = (size_t)*idx + (tag == ERL_SMALL_BIG_EXT ? 2 : 5);
    if ((tag == ERL_SMALL_BIG_EXT || tag == ERL_LARGE_BIG_EXT) && buf[sign_at] == 0 &&
        ei_skip_term(buf, idx) == 0) {
        *max = WB_LEV_NO_LIMIT;
        return true;
    }
    return false;
}

/* wb_lev_distance, in steps, asking `cancel` between them */
static size_t distance(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                       bool codepoints, size_t max, wb_lev_status *status, wb_ext_cancel_fn cancel,
                       void *cancel_ctx, bool *cancelled) {
    wb_lev s;
    wb_lev_start(&s, a, alen, b, blen, codepoints, max);
    uint64_t used = 0;
    uint64_t budget = cancel ? WB_EXT_CANCEL_CHECK_UNITS : UINT64_MAX;
    while (!wb_lev_step(&s, a, b, budget, &used)) {
        if (cancel(cancel_ctx)) {
            *cancelled = true;
            break;
        }
    }
    *status = *cancelled ? WB_LEV_OK : wb_lev_error(&s);
    size_t d = *cancelled || *status != WB_LEV_OK ? SIZE_MAX : wb_lev_result(&s);
    wb_lev_free(&s);
    return d;
}

int wb_ext_levenshtein(const char *tag, int arity, const char *req, size_t len, int idx,
                       wb_ext_reply *reply, wb_ext_cancel_fn cancel, void *cancel_ctx) {
    if (arity != 5 || strcmp(tag, "levenshtein") != 0) return WB_EXT_UNKNOWN;
    const uint8_t *a, *b;
    size_t alen, blen, max;
    char unit[MAXATOMLEN];
    if (!decode_binary(req, len, &idx, &a, &alen) || !decode_binary(req, len, &idx, &b, &blen) ||
        !wb_ext_decode_atom(req, len, &idx, unit) || !decode_max_distance(req, len, &idx, &max) ||
        (size_t)idx != len)
        return wb_ext_reply_error(reply, "badarg");
    bool codepoints;
    if (strcmp(unit, WB_LEV_UNIT_BYTE) == 0)
        codepoints = false;
    else if (strcmp(unit, WB_LEV_UNIT_CODEPOINT) == 0)
        codepoints = true;
    else
        return wb_ext_reply_error(reply, "badarg");

    wb_lev_status status;
    bool cancelled = false;
    size_t d = distance(a, alen, b, blen, codepoints, max, &status, cancel, cancel_ctx, &cancelled);
    if (cancelled) return WB_EXT_CANCELLED;
    switch (status) {
    case WB_LEV_OK:
        break;
    case WB_LEV_EUTF8_A:
        return wb_ext_reply_error(reply, "invalid_utf8_a");
    case WB_LEV_EUTF8_B:
        return wb_ext_reply_error(reply, "invalid_utf8_b");
    default:
        return wb_ext_reply_error(reply, "enomem");
    }
    if (ei_x_new_with_version(&reply->x) != 0) return -1;
    if (ei_x_encode_ulonglong(&reply->x, d) != 0) {
        ei_x_free(&reply->x);
        return -1;
    }
    return wb_ext_reply_x(reply);
}

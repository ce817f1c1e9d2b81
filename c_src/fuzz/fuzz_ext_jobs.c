/*
 * Fuzz target: the server of SDK job types (c_src/external/wb_ext_jobs.c,
 * wb_ext_terms.c and wb_ext_nif.c),
 * which decodes any term a request holds into its own terms and encodes a
 * job's result with ei.
 *
 * Input: a first byte, then bytes. An even first byte puts the bytes in the
 * argument of the "mirror" job ({wb_job, mirror, false, {Bytes...}}), whose
 * result is its argument; an odd one dispatches the bytes as the whole
 * request. Nothing may crash, leak or read out of bounds; a mirror that
 * answers {ok, Term} answers the same bytes again when Term is sent back
 * (decoding then encoding is stable), and Term is one ei can skip.
 */
#include "../external/wb_external.h"
#include "fuzz.h"

#include "../test/mirror_job.h"

static wb_job_type *const types[] = {&mirror_job, NULL};

/* the reply flattened into *out (malloc'd); false when there was none */
static bool answer(const char *req, size_t len, char **out, size_t *out_len) {
    wb_ext_reply reply;
    int rc = wb_ext_dispatch(req, len, &reply, NULL, NULL);
    WB_FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc != 0) return false;
    size_t n = 0;
    for (int i = 0; i < reply.iovcnt; i++)
        n += reply.iov[i].iov_len;
    *out = malloc(n ? n : 1);
    size_t at = 0;
    for (int i = 0; i < reply.iovcnt; i++) {
        memcpy(*out + at, reply.iov[i].iov_base, reply.iov[i].iov_len);
        at += reply.iov[i].iov_len;
    }
    *out_len = n;
    wb_ext_reply_free(&reply);
    return true;
}

/* {wb_job, mirror, false, {Arg}} with Arg's bytes as given */
static char *mirror_request(const char *arg, size_t len, size_t *out_len) {
    static const char head[] = "\203h\004w\006wb_jobw\006mirrorw\005falseh\001";
    size_t n = sizeof head - 1;
    char *req = malloc(n + len + 1);
    memcpy(req, head, n);
    if (len) memcpy(req + n, arg, len);
    *out_len = n + len;
    return req;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static bool ready;
    if (!ready) {
        ei_init();
        WB_FUZZ_CHECK(wb_ext_jobs_use(types) == 0);
        ready = true;
    }
    wb_fuzz_input in = {data, size};
    uint8_t pick = wb_fuzz_byte(&in);
    if (pick & 1) {
        char *out;
        size_t n;
        if (answer((const char *)in.data, in.size, &out, &n)) free(out);
        return 0;
    }
    size_t len;
    char *req = mirror_request((const char *)in.data, in.size, &len);
    char *out;
    size_t n;
    if (answer(req, len, &out, &n)) {
        /* {ok, Term}: 131, h 2, w 2 "ok", then Term */
        static const char ok[] = "\203h\002w\002ok";
        if (n > sizeof ok - 1 && memcmp(out, ok, sizeof ok - 1) == 0) {
            const char *term = out + sizeof ok - 1;
            size_t term_len = n - (sizeof ok - 1);
            int idx = 0;
            WB_FUZZ_CHECK(ei_skip_term(term, &idx) == 0 && (size_t)idx == term_len);
            size_t len2;
            char *req2 = mirror_request(term, term_len, &len2);
            char *out2;
            size_t n2;
            WB_FUZZ_CHECK(answer(req2, len2, &out2, &n2));
            WB_FUZZ_CHECK(n2 == n && memcmp(out2, out, n) == 0);
            free(out2);
            free(req2);
        }
        free(out);
    }
    free(req);
    return 0;
}

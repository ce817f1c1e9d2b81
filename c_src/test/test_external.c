/*
 * Unit tests of the external server's framing and dispatch
 * (c_src/external/wb_external.c), built with AddressSanitizer and UBSan by
 * `make test`: frames split at every size, short writes and EINTR
 * (external_frames.h), every request type and malformed or truncated
 * requests, and a whole connection served over a socketpair. The server here
 * is the built-in one (wb_external_main.c): the library's own job types
 * served as an SDK server serves a user's, so its Levenshtein is the job
 * {wb_job, levenshtein, false, {A, B, Unit, MaxDistance}}, checked against
 * the plain dynamic program, and its fuzzy score job
 * (external_fuzzy_score.h).
 */
#define _GNU_SOURCE
#include "../external/wb_external.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <math.h>

#include "check.h"
#include "reference.h"

#include "external_frames.h"

/* --- dispatch -------------------------------------------------------------------- */

/* the reply's payload, flattened */
static char *flatten(const wb_ext_reply *reply, size_t *len) {
    size_t n = 0;
    for (int i = 0; i < reply->iovcnt; i++)
        n += reply->iov[i].iov_len;
    char *out = malloc(n + 1);
    size_t at = 0;
    for (int i = 0; i < reply->iovcnt; i++) {
        memcpy(out + at, reply->iov[i].iov_base, reply->iov[i].iov_len);
        at += reply->iov[i].iov_len;
    }
    *len = n;
    return out;
}

/* An answer at idx: an integer (>= 0), or -2 for {error, Reason} with
 * Reason (an atom) in reason, {error, {invalid_utf8, 1 | 2}} as
 * invalid_utf8_a | invalid_utf8_b; -1 for anything else. */
static long long answer(const char *out, int *idx, char reason[MAXATOMLEN]) {
    int at = *idx, arity;
    unsigned long long v;
    long which;
    char atom[MAXATOMLEN];
    if (ei_decode_ulonglong(out, idx, &v) == 0) return (long long)v;
    *idx = at;
    if (ei_decode_tuple_header(out, idx, &arity) != 0 || arity != 2 ||
        ei_decode_atom(out, idx, atom) != 0 || strcmp(atom, "error") != 0)
        return -1;
    if (ei_decode_atom(out, idx, reason) == 0) return -2;
    if (ei_decode_tuple_header(out, idx, &arity) != 0 || ei_decode_atom(out, idx, reason) != 0)
        return -1;
    if (arity == 2 && strcmp(reason, "invalid_utf8") == 0 &&
        ei_decode_long(out, idx, &which) == 0 && (which == 1 || which == 2)) {
        strcpy(reason, which == 1 ? "invalid_utf8_a" : "invalid_utf8_b");
        return -2;
    }
    /* hamming without padding: "unequal_lengths M N" */
    unsigned long long m, n;
    if (arity == 3 && strcmp(reason, "unequal_lengths") == 0 &&
        ei_decode_ulonglong(out, idx, &m) == 0 && ei_decode_ulonglong(out, idx, &n) == 0) {
        snprintf(reason, MAXATOMLEN, "unequal_lengths %llu %llu", m, n);
        return -2;
    }
    return -1;
}

/* The reply's answer (see answer): a job's {ok, Result} gives Result's
 * (the job's result is a distance, or {error, Reason} for invalid UTF-8
 * found in a step), any other reply its own (an error, an echoed
 * integer). */
static long long dispatch(const char *req, size_t len, char reason[MAXATOMLEN]) {
    wb_ext_reply reply;
    int rc = wb_ext_dispatch(req, len, &reply, NULL, NULL);
    CHECK(rc == 0, "dispatch succeeds");
    if (rc != 0) return -1;
    size_t n;
    char *out = flatten(&reply, &n);
    wb_ext_reply_free(&reply);
    int idx = 0, version, arity;
    long long result = -1;
    char atom[MAXATOMLEN];
    if (ei_decode_version(out, &idx, &version) == 0) {
        int at = idx;
        if (!(ei_decode_tuple_header(out, &idx, &arity) == 0 && arity == 2 &&
              ei_decode_atom(out, &idx, atom) == 0 && strcmp(atom, "ok") == 0))
            idx = at;
        result = answer(out, &idx, reason);
        if ((size_t)idx != n) result = -1;
    }
    free(out);
    return result;
}

static void encode_request(ei_x_buff *x, const char *a, size_t alen, const char *b, size_t blen,
                           const char *unit, long long max) {
    ei_x_new_with_version(x);
    ei_x_encode_tuple_header(x, 4);
    ei_x_encode_atom(x, "wb_job");
    ei_x_encode_atom(x, "levenshtein");
    ei_x_encode_atom(x, "false");
    ei_x_encode_tuple_header(x, 4);
    ei_x_encode_binary(x, a, (long)alen);
    ei_x_encode_binary(x, b, (long)blen);
    ei_x_encode_atom(x, unit);
    if (max < 0)
        ei_x_encode_atom(x, "nil");
    else
        ei_x_encode_ulonglong(x, (unsigned long long)max);
}

static long long lev(const char *a, const char *b, const char *unit, long long max,
                     char reason[MAXATOMLEN]) {
    ei_x_buff x;
    encode_request(&x, a, strlen(a), b, strlen(b), unit, max);
    long long d = dispatch(x.buff, (size_t)x.index, reason);
    ei_x_free(&x);
    return d;
}
#include "external_fuzzy_score.h"

static void check_echo(void (*encode)(ei_x_buff *), const char *what) {
    ei_x_buff req, term;
    ei_x_new_with_version(&req);
    ei_x_encode_tuple_header(&req, 2);
    ei_x_encode_atom(&req, "echo");
    encode(&req);
    ei_x_new_with_version(&term);
    encode(&term);
    wb_ext_reply reply;
    CHECK(wb_ext_dispatch(req.buff, (size_t)req.index, &reply, NULL, NULL) == 0, "echo %s", what);
    size_t n;
    char *out = flatten(&reply, &n);
    CHECK(n == (size_t)term.index && memcmp(out, term.buff, n) == 0,
          "echo %s: the term comes back (%zu bytes, expected %d)", what, n, term.index);
    free(out);
    wb_ext_reply_free(&reply);
    ei_x_free(&req);
    ei_x_free(&term);
}

static void encode_atom(ei_x_buff *x) {
    ei_x_encode_atom(x, "hello");
}

static void encode_big_binary(ei_x_buff *x) {
    size_t n = 64 * 1024;
    char *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)(i * 31 + (i >> 8)); /* the same bytes every time */
    ei_x_encode_binary(x, data, (long)n);
    free(data);
}

static void encode_nested(ei_x_buff *x) {
    ei_x_encode_map_header(x, 2);
    ei_x_encode_atom(x, "list");
    ei_x_encode_list_header(x, 3);
    ei_x_encode_long(x, -5);
    ei_x_encode_double(x, 2.5);
    ei_x_encode_tuple_header(x, 2);
    ei_x_encode_string(x, "abc");
    ei_x_encode_binary(x, "", 0);
    ei_x_encode_empty_list(x);
    ei_x_encode_longlong(x, -1234567890123LL);
    ei_x_encode_ulonglong(x, 18446744073709551615ULL);
}

static void test_dispatch(void) {
    char reason[MAXATOMLEN];
    check_echo(encode_atom, "an atom");
    check_echo(encode_big_binary, "a 64 KiB binary");
    check_echo(encode_nested, "nested terms");

    CHECK(lev("kitten", "sitting", "byte", -1, reason) == 3, "kitten/sitting");
    CHECK(lev("", "", "byte", -1, reason) == 0, "empty inputs");
    CHECK(lev("abc", "", "codepoint", -1, reason) == 3, "one empty input");
    CHECK(lev("h\xc3\xa9llo", "hello", "codepoint", -1, reason) == 1, "codepoints");
    CHECK(lev("h\xc3\xa9llo", "hello", "byte", -1, reason) == 2, "bytes");
    CHECK(lev("abcdef", "uvwxyz", "byte", 2, reason) == 3, "cutoff: k + 1");
    CHECK(lev("abcdef", "uvwxyz", "byte", 100000, reason) == 6, "cutoff as INTEGER_EXT");
    CHECK(lev("abcdef", "uvwxyz", "byte", 0, reason) == 1, "cutoff 0");

    CHECK(lev("\xff", "a", "codepoint", -1, reason) == -2 && strcmp(reason, "invalid_utf8_a") == 0,
          "invalid UTF-8 in the first argument");
    CHECK(lev("a", "a\xc3", "codepoint", -1, reason) == -2 && strcmp(reason, "invalid_utf8_b") == 0,
          "invalid UTF-8 in the second argument");
    CHECK(lev("\xff", "a", "byte", -1, reason) == 1, "any bytes in byte mode");
    CHECK(lev("a", "b", "word", -1, reason) == -2 && strcmp(reason, "badarg") == 0, "bad unit");

    /* a bignum cutoff above 64 bits is badarg, as in the VM's job NIF
     * (WellBehaved.External.levenshtein/4 sends none: it clamps it) */
    {
        ei_x_buff x;
        encode_request(&x, "kitten", 6, "sitting", 7, "byte", -1);
        x.index -= 5; /* drop the nil atom (SMALL_ATOM_UTF8_EXT, 3 chars) */
        const char big[] = {'n', 9, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
        ei_x_append_buf(&x, big, sizeof big);
        CHECK(dispatch(x.buff, (size_t)x.index, reason) == -2 && strcmp(reason, "badarg") == 0,
              "bignum cutoff");
        x.buff[x.index - 10] = 1; /* negative */
        CHECK(dispatch(x.buff, (size_t)x.index, reason) == -2 && strcmp(reason, "badarg") == 0,
              "negative bignum cutoff");
        ei_x_free(&x);
    }

    /* malformed requests */
#define BYTES(literal) literal, sizeof(literal) - 1
    struct {
        const char *bytes;
        size_t len;
        const char *reason;
    } bad[] = {
        /* octal escapes: "\004echo" is 4 then "echo" */
        {BYTES("\203"), "badarg"},
        {BYTES("\202h\002w\004echoa\001"), "badarg"},      /* wrong version */
        {BYTES("\203w\004echo"), "badarg"},                /* not a tuple */
        {BYTES("\203h\002w\004echo"), "badarg"},           /* nothing to echo */
        {BYTES("\203h\002w\004ech"), "badarg"},            /* truncated atom */
        {BYTES("\203i\000\000"), "badarg"},                /* truncated tuple */
        {BYTES("\203h\001w\004echo"), "unknown_request"},  /* wrong arity */
        {BYTES("\203h\002w\004ohceA"), "unknown_request"}, /* unknown request */
        {BYTES("\203h\002a\001a\001"), "badarg"},          /* tag not an atom */
        /* integers for the binaries */
        {BYTES("\203h\004w\006wb_jobw\013levenshteinw\005falseh\004a\001a\002w\004bytew\003nil"),
         "badarg"},
        /* three arguments for four */
        {BYTES("\203h\004w\006wb_jobw\013levenshteinw\005falseh\003m\0\0\0\0m\0\0\0\0w\004byte"),
         "badarg"},
        /* the raw request of the old built-in server */
        {BYTES("\203h\005w\013levenshteinm\0\0\0\0m\0\0\0\0w\004bytew\003nil"), "unknown_request"},
        {BYTES("\203h\004w\006wb_jobw\004nonew\005falseh\0"), "unknown_job"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        long long got = dispatch(bad[i].bytes, bad[i].len, reason);
        CHECK(got == -2 && strcmp(reason, bad[i].reason) == 0, "malformed request %zu: %lld %s", i,
              got, got == -2 ? reason : "");
    }
    CHECK(dispatch(BYTES("\203h\002w\004echoa\007"), reason) == 7, "echo of 7");
    {
        /* an empty payload is a cancel: acknowledged by an empty reply */
        wb_ext_reply reply;
        CHECK(wb_ext_dispatch("", 0, &reply, NULL, NULL) == 0 && reply.iovcnt == 0,
              "a cancel gets an empty reply (%d parts)", reply.iovcnt);
        wb_ext_reply_free(&reply);
    }

    /* every truncation and some corruptions of a valid request: an error reply,
     * never a read out of bounds (AddressSanitizer) */
    {
        ei_x_buff x;
        encode_request(&x, "kitten", 6, "sitting", 7, "codepoint", 300);
        size_t len = (size_t)x.index;
        /* cut at 0 is a cancel (tested above) */
        for (size_t cut = 1; cut < len; cut++) {
            char *copy = malloc(cut);
            memcpy(copy, x.buff, cut);
            CHECK(dispatch(copy, cut, reason) == -2, "truncated at %zu", cut);
            free(copy);
        }
        char *copy = malloc(len + 1);
        memcpy(copy, x.buff, len);
        copy[len] = 'j';
        CHECK(dispatch(copy, len + 1, reason) == -2, "trailing bytes");
        for (int round = 0; round < 20000; round++) {
            memcpy(copy, x.buff, len);
            for (int k = 0; k < 3; k++)
                copy[check_random() % len] = (char)check_random();
            dispatch(copy, len, reason);
        }
        free(copy);
        ei_x_free(&x);
    }

    /* random inputs against the plain dynamic program */
    for (int round = 0; round < 300; round++) {
        size_t n = check_random() % 150, m = check_random() % 150;
        unsigned char a[150], b[150];
        int alphabet = 2 + (int)(check_random() % 4);
        for (size_t i = 0; i < n; i++)
            a[i] = (unsigned char)('a' + check_random() % alphabet);
        for (size_t i = 0; i < m; i++)
            b[i] = (unsigned char)('a' + check_random() % alphabet);
        long long k = round % 3 == 0 ? -1 : (long long)(check_random() % 40);
        size_t want = wb_ref_distance_bytes(a, n, b, m);
        if (k >= 0 && want > (size_t)k) want = (size_t)k + 1;
        ei_x_buff x;
        encode_request(&x, (char *)a, n, (char *)b, m, round % 2 ? "byte" : "codepoint", k);
        long long got = dispatch(x.buff, (size_t)x.index, reason);
        CHECK(got == (long long)want, "random pair %d (%zu x %zu, k %lld): %lld, expected %zu",
              round, n, m, k, got, want);
        ei_x_free(&x);
    }
}

/* --- cancelling a long computation ------------------------------------------------ */

typedef struct {
    int calls;
    int cancel_at; /* answer true on this call; 0: never */
} canceller;

static bool count_cancel(void *ctx) {
    canceller *c = ctx;
    return ++c->calls == c->cancel_at;
}

static void long_request(ei_x_buff *x, size_t n) {
    char *a = malloc(n), *b = malloc(n);
    for (size_t i = 0; i < n; i++) {
        a[i] = (char)('a' + check_random() % 4);
        b[i] = (char)('a' + check_random() % 4);
    }
    encode_request(x, a, n, b, n, "byte", -1);
    free(a);
    free(b);
}

static void test_cancel(void) {
    ei_x_buff x;
    long_request(&x, 20000);
    char reason[MAXATOMLEN];
    long long want = dispatch(x.buff, (size_t)x.index, reason);

    canceller never = {0, 0};
    wb_ext_reply reply;
    CHECK(wb_ext_dispatch(x.buff, (size_t)x.index, &reply, count_cancel, &never) == 0,
          "not cancelled");
    size_t n;
    char *out = flatten(&reply, &n);
    int idx = 0, version;
    unsigned long long got = 0;
    ei_decode_version(out, &idx, &version);
    int arity;
    char ok[MAXATOMLEN] = "";
    ei_decode_tuple_header(out, &idx, &arity);
    ei_decode_atom(out, &idx, ok);
    ei_decode_ulonglong(out, &idx, &got);
    CHECK(want > 0 && strcmp(ok, "ok") == 0 && got == (unsigned long long)want,
          "same distance with a cancel to ask: %s %llu, %lld", ok, got, want);
    free(out);
    wb_ext_reply_free(&reply);
    ei_x_free(&x);

    /* a pair of some seconds' work, given up at the second check (a
     * millisecond apart): the job is abandoned there */
    long_request(&x, 200000);
    canceller second = {0, 2};
    CHECK(wb_ext_dispatch(x.buff, (size_t)x.index, &reply, count_cancel, &second) ==
                  WB_EXT_CANCELLED &&
              second.calls == 2,
          "cancelled at the second check");

    canceller first = {0, 1};
    CHECK(wb_ext_dispatch(BYTES("\203h\002w\004echoa\007"), &reply, count_cancel, &first) == 0 &&
              first.calls == 0,
          "an echo never checks");
    wb_ext_reply_free(&reply);
    ei_x_free(&x);
}

/* --- a connection served over a socketpair ------------------------------------------ */

static void *serve_thread(void *arg) {
    int *fd = arg;
    static int rc;
    rc = wb_ext_serve_fd(*fd);
    /* a server that stopped early must not leave the test blocked on it */
    shutdown(*fd, SHUT_RDWR);
    return &rc;
}

static void write_slowly(int fd, const char *data, size_t len, size_t chunk) {
    for (size_t at = 0; at < len;) {
        size_t n = len - at < chunk ? len - at : chunk;
        ssize_t w = write(fd, data + at, n);
        if (w < 0 && errno == EINTR) continue;
        CHECK(w > 0, "write to the server");
        if (w <= 0) return;
        at += (size_t)w;
    }
}

static void test_serve_socketpair(void) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    pthread_t thread;
    pthread_create(&thread, NULL, serve_thread, &sv[1]);

    char frames[256];
    size_t len = 0;
    ei_x_buff x;
    encode_request(&x, "kitten", 6, "sitting", 7, "byte", -1);
    len += append_frame(frames + len, x.buff, (size_t)x.index);
    ei_x_free(&x);
    len += append_frame(frames + len, BYTES("\203h\002w\004echow\002ok"));
    len += append_frame(frames + len, "garbage", 7);
    /* three requests, one byte per write */
    write_slowly(sv[0], frames, len, 1);

    int fd = sv[0];
    wb_ext_reader r;
    wb_ext_reader_init(&r, wb_ext_fd_read, &fd, WB_EXT_MAX_FRAME);
    const char *p;
    size_t n;
    CHECK(wb_ext_read_frame(&r, &p, &n) == 1 && n == 9 &&
              memcmp(p, "\203h\002w\002oka\003", 9) == 0,
          "Levenshtein reply, {ok, 3} (%zu bytes)", n);
    CHECK(wb_ext_read_frame(&r, &p, &n) == 1 && n == 5 && memcmp(p, "\203w\002ok", 5) == 0,
          "echo reply");
    CHECK(wb_ext_read_frame(&r, &p, &n) == 1 && n > 2 && memcmp(p, "\203h\002", 3) == 0,
          "error reply to garbage");

    /* a large echo: the kernel splits it into many reads and writes */
    size_t big = 3 * 1024 * 1024;
    static const char head[] = "\203h\002w\004echom"; /* then 4 bytes of size */
    size_t head_len = sizeof head - 1, payload = head_len + 4 + big;
    char *req = malloc(4 + payload);
    memcpy(req + 4, head, head_len);
    for (size_t i = 0; i < big; i++)
        req[4 + head_len + 4 + i] = (char)check_random();
    for (int i = 0; i < 4; i++) {
        req[i] = (char)(payload >> (24 - 8 * i));
        req[4 + head_len + i] = (char)(big >> (24 - 8 * i));
    }
    write_slowly(sv[0], req, 4 + payload, 1 << 20);
    /* the reply: a version byte, then the request from the binary's tag on */
    size_t echoed = payload - (head_len - 1);
    CHECK(wb_ext_read_frame(&r, &p, &n) == 1 && n == 1 + echoed && (unsigned char)p[0] == 131 &&
              memcmp(p + 1, req + 4 + head_len - 1, echoed) == 0,
          "3 MiB echo");
    free(req);

    shutdown(sv[0], SHUT_WR);
    void *result;
    pthread_join(thread, &result);
    CHECK(*(int *)result == 0, "serve ends cleanly at end of input");
    close(sv[1]);
    CHECK(wb_ext_read_frame(&r, &p, &n) == 0, "no reply left after end of input");
    wb_ext_reader_free(&r);
    close(sv[0]);
}

/* a client that sends a long request and hangs up: the server gives up */
static bool closed_seen;

static bool watch_peer(void *ctx) {
    bool closed = wb_ext_fd_peer_closed(ctx);
    if (closed) closed_seen = true;
    return closed;
}

typedef struct {
    int fd;
    int rc;
} cancel_server;

static void *serve_cancellable(void *arg) {
    cancel_server *cs = arg;
    wb_ext_reader r;
    wb_ext_reader_init(&r, wb_ext_fd_read, &cs->fd, WB_EXT_MAX_FRAME);
    cs->rc = wb_ext_serve(&r, wb_ext_fd_writev, &cs->fd, watch_peer, &cs->fd);
    wb_ext_reader_free(&r);
    return NULL;
}

static void test_hang_up_cancels(void) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    cancel_server cs = {sv[1], 0};
    pthread_t thread;
    pthread_create(&thread, NULL, serve_cancellable, &cs);
    ei_x_buff x;
    long_request(&x, 60000);
    char *frame = malloc(4 + (size_t)x.index);
    size_t len = append_frame(frame, x.buff, (size_t)x.index);
    write_slowly(sv[0], frame, len, 1 << 16);
    close(sv[0]);
    pthread_join(thread, NULL);
    CHECK(cs.rc == 0 && closed_seen, "a hang-up cancels the computation (rc %d)", cs.rc);
    close(sv[1]);
    free(frame);
    ei_x_free(&x);
}

/* a client that sends a long request and a cancel behind it: the server
 * gives up the computation, answers the cancel with an empty frame (no
 * reply to the request) and serves the next request */
static void test_cancel_message(void) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    pthread_t thread;
    pthread_create(&thread, NULL, serve_thread, &sv[1]);
    ei_x_buff x;
    long_request(&x, 60000);
    char *frames = malloc(4 + (size_t)x.index + 4);
    size_t len = append_frame(frames, x.buff, (size_t)x.index);
    len += append_frame(frames + len, "", 0);
    write_slowly(sv[0], frames, len, 1 << 16);

    int fd = sv[0];
    wb_ext_reader r;
    wb_ext_reader_init(&r, wb_ext_fd_read, &fd, WB_EXT_MAX_FRAME);
    const char *p;
    size_t n = 1;
    CHECK(wb_ext_read_frame(&r, &p, &n) == 1 && n == 0,
          "the first frame back is the acknowledgement (%zu bytes)", n);
    /* a cancel when nothing runs: acknowledged too */
    char again[4];
    write_slowly(sv[0], again, append_frame(again, "", 0), 4);
    n = 1;
    CHECK(wb_ext_read_frame(&r, &p, &n) == 1 && n == 0, "a late cancel acknowledged");
    char echo[32];
    write_slowly(sv[0], echo, append_frame(echo, BYTES("\203h\002w\004echow\002ok")), 32);
    CHECK(wb_ext_read_frame(&r, &p, &n) == 1 && n == 5 && memcmp(p, "\203w\002ok", 5) == 0,
          "the connection serves on after a cancel");
    shutdown(sv[0], SHUT_WR);
    void *result;
    pthread_join(thread, &result);
    CHECK(*(int *)result == 0, "serve ends cleanly after a cancel");
    wb_ext_reader_free(&r);
    close(sv[0]);
    close(sv[1]);
    free(frames);
    ei_x_free(&x);
}

int main(void) {
    check_seed(0x9e3779b97f4a7c15u);
    ei_init();
    if (wb_ext_library_load() != 0 || wb_ext_jobs_use(wb_ext_library_types) != 0) return 1;
    test_read_frames();
    test_write_frames();
    test_dispatch();
    test_fuzzy_score();
    test_cancel();
    test_serve_socketpair();
    test_hang_up_cancels();
    test_cancel_message();
    return CHECK_SUMMARY();
}

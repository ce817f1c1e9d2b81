/*
 * Random pairs (included by test_fuzzy.c): strings over small alphabets
 * with spaces (bytes, and codepoints with large values and Unicode
 * spaces), mutated, shuffled or cut into pieces, through every scorer
 * (check_scorer); and wb_fz_partial_bound never below the score.
 */
#ifndef WB_TEST_FUZZY_RANDOM_PAIRS_H
#define WB_TEST_FUZZY_RANDOM_PAIRS_H

static const uint32_t byte_letters[] = {'a', 'b', 'c', 'd', 'e', '0', 0x85, 0xA0, 0xFF, 0};
static const uint32_t byte_spaces[] = {' ', ' ', ' ', '\t', '\n', 13};
static const uint32_t cp_letters[] = {'a',      'b',   0xE9, 0x4E2D, 0x1F600,
                                      0x10FFFF, 0x100, 'c',  0x200B};
static const uint32_t cp_spaces[] = {' ', 0x3000, ' ', 0x2003, 0xA0, 0x85, '\n', 0x205F};

typedef struct {
    bool codepoints;
    size_t letters, spaces_every; /* spaces: one symbol in spaces_every (0: none) */
} alphabet;

static uint32_t random_symbol(const alphabet *al) {
    if (al->spaces_every && check_random() % al->spaces_every == 0) {
        /* mostly the plain space */
        if (check_random() % 3) return ' ';
        return al->codepoints
                   ? cp_spaces[check_random() % (sizeof cp_spaces / sizeof(uint32_t))]
                   : byte_spaces[check_random() % (sizeof byte_spaces / sizeof(uint32_t))];
    }
    size_t k = check_random() % al->letters;
    /* now and then a rarer symbol of the pool */
    if (check_random() % 16 == 0)
        k = check_random() % (al->codepoints ? sizeof cp_letters / sizeof(uint32_t)
                                             : sizeof byte_letters / sizeof(uint32_t));
    return al->codepoints ? cp_letters[k] : byte_letters[k];
}

static size_t random_string(uint32_t *s, size_t len, const alphabet *al) {
    for (size_t i = 0; i < len; i++)
        s[i] = random_symbol(al);
    return len;
}

/* b from a by a few random edits (room: cap symbols) */
static size_t mutate(const uint32_t *a, size_t m, uint32_t *b, size_t cap, const alphabet *al) {
    memcpy(b, a, m * sizeof *b);
    size_t n = m, edits = check_random() % 6;
    for (size_t e = 0; e < edits; e++) {
        size_t at = n ? check_random() % n : 0;
        switch (check_random() % 4) {
        case 0: /* substitute */
            if (n) b[at] = random_symbol(al);
            break;
        case 1: /* insert */
            if (n < cap) {
                memmove(b + at + 1, b + at, (n - at) * sizeof *b);
                b[at] = random_symbol(al);
                n++;
            }
            break;
        case 2: /* delete */
            if (n) {
                memmove(b + at, b + at + 1, (n - at - 1) * sizeof *b);
                n--;
            }
            break;
        default: /* swap neighbours */
            if (at + 1 < n) {
                uint32_t t = b[at];
                b[at] = b[at + 1];
                b[at + 1] = t;
            }
        }
    }
    return n;
}

/* b: a's tokens shuffled, some dropped or doubled, joined by random spaces */
static size_t shuffle_tokens(const uint32_t *a, size_t m, uint32_t *b, size_t cap,
                             const alphabet *al) {
    fzr_tokens t = fzr_split(a, m, al->codepoints);
    for (size_t i = t.count; i > 1; i--) {
        size_t j = check_random() % i;
        fzr_token x = t.t[i - 1];
        t.t[i - 1] = t.t[j];
        t.t[j] = x;
    }
    size_t n = 0;
    for (size_t i = 0; i < t.count; i++) {
        size_t times = check_random() % 5 == 0 ? 0 : check_random() % 5 == 0 ? 2 : 1;
        for (size_t r = 0; r < times; r++) {
            if (n + t.t[i].len + 2 > cap) break;
            b[n++] = check_random() % 4 ? ' ' : random_symbol(al);
            memcpy(b + n, t.t[i].at, t.t[i].len * sizeof *b);
            n += t.t[i].len;
        }
    }
    free(t.t);
    return n;
}

/* b: a piece of a, maybe edited (partial ratios) */
static size_t piece(const uint32_t *a, size_t m, uint32_t *b, size_t cap, const alphabet *al) {
    size_t from = m ? check_random() % m : 0, len = m - from ? check_random() % (m - from + 1) : 0;
    return mutate(a + from, len, b, cap, al);
}

static size_t random_length(bool long_pair) {
    if (long_pair) return 60 + check_random() % 81;
    size_t pick = check_random() % 10;
    return pick == 0 ? 0 : pick == 1 ? 1 + check_random() % 3 : check_random() % 41;
}

static void random_pair(bool long_pair, wb_fz_options *o, uint32_t *a, size_t *m, uint32_t *b,
                        size_t *n) {
    alphabet al;
    al.codepoints = check_random() % 2;
    size_t pool = al.codepoints ? 8 : 6;
    size_t letters[] = {1, 2, 3, 5, pool};
    al.letters = letters[check_random() % 5];
    size_t every[] = {0, 2, 4, 6, 10};
    al.spaces_every = every[check_random() % 5];
    *m = random_string(a, random_length(long_pair), &al);
    switch (check_random() % 5) {
    case 0:
    case 1:
        *n = random_string(b, random_length(long_pair), &al);
        break;
    case 2:
        *n = mutate(a, *m, b, CAP, &al);
        break;
    case 3:
        *n = shuffle_tokens(a, *m, b, CAP, &al);
        break;
    default:
        *n = piece(a, *m, b, CAP, &al);
    }
    if (check_random() % 2) {
        /* either side the longer */
        uint32_t t[CAP];
        size_t tl = *m;
        memcpy(t, a, tl * sizeof *t);
        memcpy(a, b, *n * sizeof *a);
        memcpy(b, t, tl * sizeof *b);
        *m = *n;
        *n = tl;
    }
    memset(o, 0, sizeof *o);
    o->codepoints = al.codepoints;
    o->ins = o->del = o->sub = 1;
    size_t w = check_random() % 10;
    if (w >= 6 && w < 9) {
        o->ins = check_random() % 4;
        o->del = check_random() % 4;
        o->sub = check_random() % 4;
    } else if (w == 9) {
        static const uint64_t big[] = {1, 2, 7, 1000, 4294967295u};
        o->ins = big[check_random() % 5];
        o->del = big[check_random() % 5];
        o->sub = big[check_random() % 5];
    }
    static const double weights[] = {0.1, 0.1, 0.0, 0.25, 0.15, 0.05};
    o->prefix_weight =
        check_random() % 4 ? weights[check_random() % 6] : (double)(check_random() % 26) / 100.0;
}

static void test_random_pairs(size_t count, bool long_pairs) {
    uint32_t a[CAP], b[CAP];
    for (size_t round = 0; round < count; round++) {
        wb_fz_options o;
        size_t m, n;
        random_pair(long_pairs, &o, a, &m, b, &n);
        for (int scorer = 0; scorer < WB_FZ_SCORERS; scorer++) {
            o.scorer = (wb_fz_scorer)scorer;
            /* long pairs: stepped now and then only (the references are slow) */
            check_scorer(o, a, m, b, n, !long_pairs || round % 4 == 0);
        }
    }
}

/* wb_fz_partial_bound never below the score: the partial ratio of any
 * pair, the partial token ratios and WRatio of single tokens; WRatio of
 * lengths within 1.5 the ratio itself; a bound past the cutoff only for a
 * score past it. Pairs from random_pair (pieces, mutations, shuffles:
 * high scores too), spaces taken out for the token scorers. */
static void test_partial_bounds(size_t count) {
    uint32_t a[CAP], b[CAP];
    const wb_fz_scorer scorers[] = {WB_FZ_PARTIAL_RATIO, WB_FZ_PARTIAL_TOKEN_SORT_RATIO,
                                    WB_FZ_PARTIAL_TOKEN_SET_RATIO, WB_FZ_PARTIAL_TOKEN_RATIO,
                                    WB_FZ_WRATIO};
    size_t bounded = 0, ratios = 0;
    for (size_t round = 0; round < count; round++) {
        wb_fz_options o;
        size_t m, n;
        random_pair(false, &o, a, &m, b, &n);
        o.kind = (wb_fz_kind)(round % WB_FZ_KINDS);
        o.has_cutoff = round % 3 == 0;
        o.cutoff = wb_fz_kind_is_distance(o.kind) ? 0.4 : 0.6;
        if (o.kind == WB_FZ_DISTANCE) o.cutoff = 40;
        if (o.kind == WB_FZ_SIMILARITY) o.cutoff = 60;
        for (size_t k = 0; k < sizeof scorers / sizeof *scorers; k++) {
            o.scorer = scorers[k];
            size_t mm = m, nn = n;
            if (o.scorer != WB_FZ_PARTIAL_RATIO) { /* single tokens */
                mm = nn = 0;
                for (size_t i = 0; i < m; i++)
                    if (!fzr_space(a[i], o.codepoints)) a[mm++] = a[i];
                for (size_t i = 0; i < n; i++)
                    if (!fzr_space(b[i], o.codepoints)) b[nn++] = b[i];
            }
            if (mm == 0 || nn == 0) continue;
            wb_fz_options plain = o, ratio = o;
            plain.has_cutoff = false;
            ratio.has_cutoff = false;
            ratio.scorer = WB_FZ_RATIO;
            fzr_raw r = fzr_compute(&plain, a, mm, b, nn);
            double want = fzr_kind_score(o.kind, &r), bound;
            bool passes;
            size_t lcs = fzr_lcs(a, mm, b, nn);
            if (wb_fz_partial_bound(&o, mm, nn, lcs, &bound, &passes) == WB_FZ_BOUND_RATIO) {
                fzr_raw rr = fzr_compute(&ratio, a, mm, b, nn);
                CHECK(o.scorer == WB_FZ_WRATIO && want == fzr_kind_score(o.kind, &rr),
                      "%s: the ratio %.17g, want %.17g (%zu, %zu)", scorer_names[o.scorer],
                      fzr_kind_score(o.kind, &rr), want, mm, nn);
                ratios++;
                continue;
            }
            bounded++;
            CHECK(!wb_fz_better(o.kind, want, bound), "%s kind %d: bound %.17g below %.17g",
                  scorer_names[o.scorer], (int)o.kind, bound, want);
            bool want_passes = !o.has_cutoff || (wb_fz_kind_is_distance(o.kind) ? want <= o.cutoff
                                                                                : want >= o.cutoff);
            CHECK(passes || !want_passes, "%s: bound %.17g fails a cutoff %.17g passes",
                  scorer_names[o.scorer], bound, want);
        }
    }
    printf("partial bounds: %zu bounded, %zu the ratio\n", bounded, ratios);
}

#endif

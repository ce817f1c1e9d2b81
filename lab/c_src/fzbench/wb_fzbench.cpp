// The fuzzy speed targets, measured side by side with rapidfuzz-cpp at the
// C level in one run (issue 44's Targets):
//
//   pairs:   each scorer on one pair at a time, as Fuzzy.score/3's job
//            scores it (fzbench_ours.h), against rapidfuzz-cpp's free
//            function, at each size (bytes a side);
//   extract: one query against an index of candidates, the 5 best
//            (extract/3), against rapidfuzz's best way: its cached scorer
//            one candidate after another (process.extract's loop), the
//            same with the 5th best as a rising cutoff, and its SIMD
//            Multi* scorers holding every candidate (made once, as an
//            index), on two shapes of candidates: names of 10-30 letters
//            and 2-4 words;
//   cdist:   the same query scoring every candidate into a row (limit
//            :all, no cutoff): the cached loop or the Multi* scorer;
//   editops: the Levenshtein edit script of a pair (issue 48's target),
//            as Fuzzy.editops/3's job makes it, against rapidfuzz-cpp's
//            levenshtein_editops, on pairs of --editops-bytes (1,000) a
//            side: random text, and near copies.
//
//   wb_fzbench [--parts pairs,extract,cdist,editops] [--rounds N] [--count N]
//              [--sizes 8,32,100,1000] [--scorers a,b] [--chunk-ms MS] [--seed S]
//              [--editops-bytes N]
//
// Thread CPU time (CLOCK_THREAD_CPUTIME_ID), so that time the thread
// spends off the CPU on a shared machine is not counted; each cell runs
// its ways in rounds, interleaved (A B, then B A), each timed chunk
// repeated to about --chunk-ms; a round's ratio is ours over rapidfuzz's
// best way in that round, and a cell reports the medians and the median
// ratio with a 95% interval (order statistics of the rounds' ratios).
// Before timing, every cell compares the two sides' scores (after
// rounding to 1e-6): "agree" lines give the pairs that differ.
//
// Output, one line a cell (times in ns per pair, or per candidate):
//   pair SCORER SIZE OURS RAPIDFUZZ RATIO LOW HIGH ROUNDS
//   extract|cdist SHAPE SCORER OURS CACHED CUTOFF MULTI RATIO LOW HIGH ROUNDS
//     (a way rapidfuzz lacks: -)
//   agree PART SHAPE_OR_SIZE SCORER DIFFERING COMPARED
//   editops SHAPE BYTES OURS RAPIDFUZZ RATIO LOW HIGH ROUNDS
//   agree editops SHAPE BYTES DISTANCES_DIFFERING SCRIPTS_DIFFERING COMPARED
//     (the distances must agree; the scripts, records of the same type
//     and positions, should: ties broken as rapidfuzz breaks them)
// Without RAPIDFUZZ_CPP the program is not built: rapidfuzz is not part
// of the project, only measured beside it.
#include "fzbench_ours.h"

#include <rapidfuzz/distance.hpp>
#include <rapidfuzz/fuzz.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Strings = std::vector<std::string>;
namespace rf = rapidfuzz;

double thread_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

// ---- statistics -------------------------------------------------------------

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The 95% interval of the median from order statistics: the k-th
// smallest and largest, k the largest with P(Binomial(n, 1/2) < k) <=
// 2.5% (the whole range when n is too small for it).
std::pair<double, double> median_interval(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    double cdf = 0, p = std::pow(0.5, (double)n), coef = 1;
    size_t k = 0; // P(X <= k - 1) so far
    for (size_t i = 0; i < n; i++) {
        cdf += coef * p;
        if (cdf > 0.025) break;
        k = i + 1;
        coef = coef * (double)(n - i) / (double)(i + 1);
    }
    if (k == 0) return {v.front(), v.back()};
    return {v[k - 1], v[n - k]};
}

// ---- inputs -------------------------------------------------------------------

struct Rng {
    std::mt19937_64 g;
    explicit Rng(uint64_t seed) : g(seed) {}
    size_t below(size_t n) {
        return (size_t)(g() % n);
    }
    char letter() {
        return (char)('a' + below(26));
    }
    std::string word(size_t lo, size_t hi) {
        std::string w(lo + below(hi - lo + 1), ' ');
        for (auto &c : w)
            c = letter();
        return w;
    }
};

// Text of `size` bytes: words of 2-9 letters, single spaces between.
std::string text(Rng &r, size_t size) {
    std::string t;
    while (t.size() < size) {
        if (!t.empty()) t += ' ';
        t += r.word(2, 9);
    }
    t.resize(size);
    if (!t.empty() && t.back() == ' ') t.back() = r.letter();
    return t;
}

// A near copy of a, of the same length: about one byte in six edited
// (substituted, swapped with its neighbour, or a letter inserted at one
// place and one deleted at another).
std::string near(Rng &r, const std::string &a) {
    std::string b = a;
    size_t n = b.size(), edits = n / 6 + 1;
    for (size_t e = 0; e < edits && n > 1; e++) {
        size_t i = r.below(n);
        switch (r.below(3)) {
        case 0:
            b[i] = r.letter();
            break;
        case 1:
            std::swap(b[i], b[i + 1 < n ? i + 1 : i - 1]);
            break;
        default: {
            size_t j = r.below(n);
            b.insert(b.begin() + (long)i, r.letter());
            b.erase(b.begin() + (long)(j + (j >= i ? 1 : 0)));
        }
        }
    }
    return b;
}

struct Shape {
    std::string name;
    Strings candidates;
    std::string query;
};

// names: 10-30 letters, the query 20 (as the lab's search suite)
Shape names(Rng &r, size_t count) {
    Shape s{"names", {}, r.word(20, 20)};
    for (size_t i = 0; i < count; i++)
        s.candidates.push_back(r.word(10, 30));
    return s;
}

// words: 2-4 words of a vocabulary of 1,000 (3-8 letters), the query 3
Shape words(Rng &r, size_t count) {
    Strings vocabulary;
    for (int i = 0; i < 1000; i++)
        vocabulary.push_back(r.word(3, 8));
    auto phrase = [&](size_t k) {
        std::string p;
        for (size_t i = 0; i < k; i++)
            p += (i ? " " : "") + vocabulary[r.below(vocabulary.size())];
        return p;
    };
    Shape s{"words", {}, phrase(3)};
    for (size_t i = 0; i < count; i++)
        s.candidates.push_back(phrase(2 + r.below(3)));
    return s;
}

// ---- rapidfuzz's side ----------------------------------------------------------

// rapidfuzz's free function for each scorer, its normalized similarity
// (the ratios' 0..100 scaled to 0..1, as ours)
double rf_pair(const std::string &name, const std::string &a, const std::string &b) {
    if (name == "levenshtein") return rf::levenshtein_normalized_similarity(a, b);
    if (name == "indel") return rf::indel_normalized_similarity(a, b);
    if (name == "osa") return rf::osa_normalized_similarity(a, b);
    if (name == "damerau_levenshtein")
        return rf::experimental::damerau_levenshtein_normalized_similarity(a, b);
    if (name == "hamming") return rf::hamming_normalized_similarity(a, b);
    if (name == "lcs_seq") return rf::lcs_seq_normalized_similarity(a, b);
    if (name == "prefix") return rf::prefix_normalized_similarity(a, b);
    if (name == "postfix") return rf::postfix_normalized_similarity(a, b);
    if (name == "jaro") return rf::jaro_similarity(a, b);
    if (name == "jaro_winkler") return rf::jaro_winkler_similarity(a, b);
    if (name == "ratio") return rf::fuzz::ratio(a, b) / 100;
    if (name == "partial_ratio") return rf::fuzz::partial_ratio(a, b) / 100;
    if (name == "token_sort_ratio") return rf::fuzz::token_sort_ratio(a, b) / 100;
    if (name == "token_set_ratio") return rf::fuzz::token_set_ratio(a, b) / 100;
    if (name == "token_ratio") return rf::fuzz::token_ratio(a, b) / 100;
    if (name == "partial_token_sort_ratio") return rf::fuzz::partial_token_sort_ratio(a, b) / 100;
    if (name == "partial_token_set_ratio") return rf::fuzz::partial_token_set_ratio(a, b) / 100;
    if (name == "partial_token_ratio") return rf::fuzz::partial_token_ratio(a, b) / 100;
    if (name == "wratio") return rf::fuzz::WRatio(a, b) / 100;
    if (name == "qratio") return rf::fuzz::QRatio(a, b) / 100;
    std::fprintf(stderr, "wb_fzbench: no rapidfuzz scorer %s\n", name.c_str());
    std::exit(2);
}

// A way of scoring one query against every candidate: fills `scores`
// (one a candidate); with a cutoff, a score below it may read 0.
using Way = std::function<void(std::vector<double> &scores, const std::vector<double> *rising)>;

// a cached scorer of the query, one candidate after another; with
// `rising`, the 5th best so far as its cutoff (extract's pruning)
template <typename Cached, typename Score>
Way cached_way(const Shape &s, Score score, double scale) {
    auto held = std::make_shared<Cached>(s.query);
    return [held, score, scale, &s](std::vector<double> &out, const std::vector<double> *rising) {
        if (!rising) {
            for (size_t i = 0; i < s.candidates.size(); i++)
                out[i] = score(*held, s.candidates[i], 0.0) / scale;
            return;
        }
        double top[5] = {0, 0, 0, 0, 0};
        for (size_t i = 0; i < s.candidates.size(); i++) {
            double v = score(*held, s.candidates[i], top[4] * scale) / scale;
            out[i] = v;
            if (v > top[4]) {
                int k = 4;
                while (k > 0 && top[k - 1] < v) {
                    top[k] = top[k - 1];
                    k--;
                }
                top[k] = v;
            }
        }
    };
}

#ifdef RAPIDFUZZ_SIMD
template <typename Multi, typename Score> Way multi_way(const Shape &s, Score score, double scale) {
    auto held = std::make_shared<Multi>(s.candidates.size());
    for (const auto &c : s.candidates)
        held->insert(c);
    auto room = std::make_shared<std::vector<double>>(held->result_count());
    return [held, room, score, scale, &s](std::vector<double> &out, const std::vector<double> *) {
        score(*held, room->data(), room->size(), s.query);
        for (size_t i = 0; i < s.candidates.size(); i++)
            out[i] = (*room)[i] / scale;
    };
}
#endif

#define CACHED(T, call, scale)                                                                     \
    cached_way<T<char>>(                                                                           \
        s, [](const T<char> &x, const std::string &c, double cut) { return x.call(c, cut); },      \
        scale)

Way rf_cached(const Shape &s, const std::string &n) {
    namespace fz = rf::fuzz;
    if (n == "levenshtein") return CACHED(rf::CachedLevenshtein, normalized_similarity, 1);
    if (n == "indel") return CACHED(rf::CachedIndel, normalized_similarity, 1);
    if (n == "osa") return CACHED(rf::CachedOSA, normalized_similarity, 1);
    if (n == "damerau_levenshtein")
        return CACHED(rf::experimental::CachedDamerauLevenshtein, normalized_similarity, 1);
    if (n == "hamming") return CACHED(rf::CachedHamming, normalized_similarity, 1);
    if (n == "lcs_seq") return CACHED(rf::CachedLCSseq, normalized_similarity, 1);
    if (n == "prefix") return CACHED(rf::CachedPrefix, normalized_similarity, 1);
    if (n == "postfix") return CACHED(rf::CachedPostfix, normalized_similarity, 1);
    if (n == "jaro") return CACHED(rf::CachedJaro, normalized_similarity, 1);
    if (n == "jaro_winkler") return CACHED(rf::CachedJaroWinkler, normalized_similarity, 1);
    if (n == "ratio") return CACHED(fz::CachedRatio, similarity, 100);
    if (n == "partial_ratio") return CACHED(fz::CachedPartialRatio, similarity, 100);
    if (n == "token_sort_ratio") return CACHED(fz::CachedTokenSortRatio, similarity, 100);
    if (n == "token_set_ratio") return CACHED(fz::CachedTokenSetRatio, similarity, 100);
    if (n == "token_ratio") return CACHED(fz::CachedTokenRatio, similarity, 100);
    if (n == "partial_token_sort_ratio")
        return CACHED(fz::CachedPartialTokenSortRatio, similarity, 100);
    if (n == "partial_token_set_ratio")
        return CACHED(fz::CachedPartialTokenSetRatio, similarity, 100);
    if (n == "partial_token_ratio") return CACHED(fz::CachedPartialTokenRatio, similarity, 100);
    if (n == "wratio") return CACHED(fz::CachedWRatio, similarity, 100);
    if (n == "qratio") return CACHED(fz::CachedQRatio, similarity, 100);
    return nullptr;
}

#ifdef RAPIDFUZZ_SIMD
template <int L> Way rf_multi_of(const Shape &s, const std::string &n) {
    namespace ex = rf::experimental;
    namespace fx = rf::fuzz::experimental;
    auto norm = [](const auto &x, double *o, size_t k, const std::string &q) {
        x.normalized_similarity(o, k, q);
    };
    auto sim = [](const auto &x, double *o, size_t k, const std::string &q) {
        x.similarity(o, k, q);
    };
    if (n == "levenshtein") return multi_way<ex::MultiLevenshtein<L>>(s, norm, 1);
    if (n == "indel") return multi_way<ex::MultiIndel<L>>(s, norm, 1);
    if (n == "osa") return multi_way<ex::MultiOSA<L>>(s, norm, 1);
    if (n == "jaro") return multi_way<ex::MultiJaro<L>>(s, norm, 1);
    if (n == "jaro_winkler") return multi_way<ex::MultiJaroWinkler<L>>(s, norm, 1);
    if (n == "ratio") return multi_way<fx::MultiRatio<L>>(s, sim, 100);
    if (n == "qratio") return multi_way<fx::MultiQRatio<L>>(s, sim, 100);
    if (n == "token_sort_ratio") return multi_way<fx::MultiTokenSortRatio<L>>(s, sim, 100);
    return nullptr;
}
#endif

// the Multi* scorer holding every candidate, when rapidfuzz has one for
// this scorer and the candidates' lengths
Way rf_multi(const Shape &s, const std::string &n) {
#ifdef RAPIDFUZZ_SIMD
    size_t longest = 0;
    for (const auto &c : s.candidates)
        longest = std::max(longest, c.size());
    if (longest <= 32) return rf_multi_of<32>(s, n);
    if (longest <= 64) return rf_multi_of<64>(s, n);
#else
    (void)s;
    (void)n;
#endif
    return nullptr;
}

// ---- the runs -----------------------------------------------------------------

struct Options {
    std::vector<std::string> parts{"pairs", "extract", "cdist", "editops"};
    std::vector<std::string> scorers;
    std::vector<size_t> sizes{8, 32, 100, 1000};
    int rounds = 15;
    size_t count = 100000;
    double chunk_ms = 3;
    uint64_t seed = 44;
    size_t editops_bytes = 1000;
};

bool has(const std::vector<std::string> &v, const std::string &x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// times fn repeated `reps` times: thread CPU ns per call
double timed(const std::function<void()> &fn, size_t reps) {
    double t0 = thread_ns();
    for (size_t i = 0; i < reps; i++)
        fn();
    return (thread_ns() - t0) / (double)reps;
}

// repetitions for a chunk of about chunk_ms, from one call's time
size_t reps_for(double ns, double chunk_ms) {
    return std::max<size_t>(1, (size_t)(chunk_ms * 1e6 / std::max(ns, 1.0)));
}

volatile double sink;

// Rounds of ours against rapidfuzz's ways (each a function run `reps`
// times a chunk), interleaved, the order reversed every other round.
// Returns per way the medians (ns per call) and the ratios' median and
// interval against the best rapidfuzz way of each round.
struct Cell {
    double ours;
    std::vector<double> theirs; // NAN: no such way
    double ratio, low, high;
    int rounds;
};

Cell rounds_of(const std::function<void()> &ours, const std::vector<std::function<void()>> &theirs,
               const Options &o) {
    std::vector<std::function<void()>> all{ours};
    all.insert(all.end(), theirs.begin(), theirs.end());
    std::vector<size_t> reps;
    for (auto &f : all) {
        if (!f) {
            reps.push_back(0);
            continue;
        }
        f(); // warm
        reps.push_back(reps_for(timed(f, 1), o.chunk_ms));
    }
    std::vector<std::vector<double>> ns(all.size());
    std::vector<double> ratios;
    for (int r = 0; r < o.rounds; r++) {
        std::vector<double> t(all.size(), NAN);
        for (size_t k = 0; k < all.size(); k++) {
            size_t i = r % 2 ? all.size() - 1 - k : k;
            if (all[i]) t[i] = timed(all[i], reps[i]);
        }
        double best = INFINITY;
        for (size_t i = 0; i < all.size(); i++) {
            ns[i].push_back(t[i]);
            if (i > 0) best = std::min(best, t[i]);
        }
        ratios.push_back(t[0] / best);
    }
    Cell c;
    c.ours = median(ns[0]);
    for (size_t i = 1; i < all.size(); i++)
        c.theirs.push_back(median(ns[i]));
    c.ratio = median(ratios);
    auto iv = median_interval(ratios);
    c.low = iv.first;
    c.high = iv.second;
    c.rounds = o.rounds;
    return c;
}

bool differ(double x, double y) {
    return std::fabs(x - y) > 1e-6;
}

void pairs(const Options &o, Rng &r) {
    fzb_pair_room room;
    size_t most = *std::max_element(o.sizes.begin(), o.sizes.end()) + 64;
    if (!fzb_pair_room_init(&room, most)) {
        std::fprintf(stderr, "wb_fzbench: out of memory\n");
        std::exit(1);
    }
    for (size_t size : o.sizes) {
        // near copies, so that no scorer ends early: 64 pairs a size, 8
        // past 100 bytes (a partial ratio of 1,000 bytes takes ~50 ms)
        Strings as, bs;
        for (int i = 0; i < (size > 100 ? 8 : 64); i++) {
            as.push_back(text(r, size));
            bs.push_back(near(r, as.back()));
        }
        for (const auto &name : o.scorers) {
            size_t scorer = 0;
            while (scorer < fzb_scorers() && name != fzb_scorer_name(scorer))
                scorer++;
            size_t diff = 0;
            for (size_t i = 0; i < as.size(); i++) {
                double x = 0;
                fzb_pair(&room, scorer, (const uint8_t *)as[i].data(), as[i].size(),
                         (const uint8_t *)bs[i].data(), bs[i].size(), &x);
                diff += differ(x, rf_pair(name, as[i], bs[i]));
            }
            std::printf("agree pairs %zu %s %zu %zu\n", size, name.c_str(), diff, as.size());
            auto ours = [&] {
                double sum = 0, x = 0;
                for (size_t i = 0; i < as.size(); i++) {
                    fzb_pair(&room, scorer, (const uint8_t *)as[i].data(), as[i].size(),
                             (const uint8_t *)bs[i].data(), bs[i].size(), &x);
                    sum += x;
                }
                sink = sum;
            };
            auto theirs = [&] {
                double sum = 0;
                for (size_t i = 0; i < as.size(); i++)
                    sum += rf_pair(name, as[i], bs[i]);
                sink = sum;
            };
            Cell c = rounds_of(ours, {theirs}, o);
            double per = (double)as.size();
            std::printf("pair %s %zu %.2f %.2f %.3f %.3f %.3f %d\n", name.c_str(), size,
                        c.ours / per, c.theirs[0] / per, c.ratio, c.low, c.high, c.rounds);
            std::fflush(stdout);
        }
    }
    fzb_pair_room_free(&room);
}

// rapidfuzz's type of an edit (None, Replace, Insert, Delete) as ours
// number them (fzbench_ours.h)
int rf_type(rf::EditType t) {
    static const int ours[] = {-1, 2, 0, 1};
    return ours[(int)t];
}

// The Levenshtein edit script of a pair, ours (the job's way) against
// rapidfuzz-cpp's levenshtein_editops: random text, and near copies (as
// the pairs part's), 8 pairs a shape.
void editops(const Options &o, Rng &r) {
    size_t size = o.editops_bytes;
    fzb_pair_room room;
    if (!fzb_pair_room_init(&room, size + 64)) {
        std::fprintf(stderr, "wb_fzbench: out of memory\n");
        std::exit(1);
    }
    for (const char *shape : {"random", "similar"}) {
        Strings as, bs;
        for (int i = 0; i < 8; i++) {
            as.push_back(text(r, size));
            bs.push_back(shape[0] == 'r' ? text(r, size) : near(r, as.back()));
        }
        // ours on pair i: its records (the caller frees them)
        auto script = [&](size_t i, uint8_t **records, size_t *distance, size_t *width) {
            if (!fzb_editops(&room, (const uint8_t *)as[i].data(), as[i].size(),
                             (const uint8_t *)bs[i].data(), bs[i].size(), records, distance,
                             width)) {
                std::fprintf(stderr, "wb_fzbench: out of memory\n");
                std::exit(1);
            }
        };
        size_t distances = 0, scripts = 0;
        for (size_t i = 0; i < as.size(); i++) {
            uint8_t *ours = nullptr;
            size_t distance = 0, width = 0;
            script(i, &ours, &distance, &width);
            rf::Editops theirs = rf::levenshtein_editops(as[i], bs[i]);
            bool same = distance == theirs.size();
            distances += !same;
            for (size_t k = 0; same && k < distance; k++) {
                int type;
                size_t src, dest;
                fzb_editops_record(ours, width, k, &type, &src, &dest);
                same = type == rf_type(theirs[k].type) && src == theirs[k].src_pos &&
                       dest == theirs[k].dest_pos;
            }
            scripts += !same;
            std::free(ours);
        }
        std::printf("agree editops %s %zu %zu %zu %zu\n", shape, size, distances, scripts,
                    as.size());
        auto ours = [&] {
            size_t sum = 0, distance = 0, width = 0;
            for (size_t i = 0; i < as.size(); i++) {
                uint8_t *records = nullptr;
                script(i, &records, &distance, &width);
                sum += distance;
                std::free(records);
            }
            sink = (double)sum;
        };
        auto theirs = [&] {
            size_t sum = 0;
            for (size_t i = 0; i < as.size(); i++)
                sum += rf::levenshtein_editops(as[i], bs[i]).size();
            sink = (double)sum;
        };
        Cell c = rounds_of(ours, {theirs}, o);
        double per = (double)as.size();
        std::printf("editops %s %zu %.2f %.2f %.3f %.3f %.3f %d\n", shape, size, c.ours / per,
                    c.theirs[0] / per, c.ratio, c.low, c.high, c.rounds);
        std::fflush(stdout);
    }
    fzb_pair_room_free(&room);
}

// the 5 best of a row of scores: (score, index), best first, ties by index
std::vector<std::pair<double, size_t>> best5(const std::vector<double> &v) {
    std::vector<std::pair<double, size_t>> all;
    for (size_t i = 0; i < v.size(); i++)
        all.push_back({v[i], i});
    size_t k = std::min<size_t>(5, all.size());
    std::partial_sort(all.begin(), all.begin() + (long)k, all.end(), [](auto &x, auto &y) {
        return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    all.resize(k);
    return all;
}

void searches(const Options &o, const Shape &s, bool cdist) {
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> offsets{0};
    for (const auto &c : s.candidates) {
        bytes.insert(bytes.end(), c.begin(), c.end());
        offsets.push_back(bytes.size());
    }
    std::unique_ptr<fzb_index, void (*)(fzb_index *)> index(
        fzb_index_new(bytes.data(), offsets.data(), s.candidates.size()), fzb_index_free);
    if (!index) {
        std::fprintf(stderr, "wb_fzbench: out of memory\n");
        std::exit(1);
    }
    const char *part = cdist ? "cdist" : "extract";
    size_t count = s.candidates.size();
    const auto *q = (const uint8_t *)s.query.data();
    std::vector<double> cells(count), theirs(count);
    uint64_t hit_index[5];
    double hit_score[5];
    for (const auto &name : o.scorers) {
        size_t scorer = 0;
        while (scorer < fzb_scorers() && name != fzb_scorer_name(scorer))
            scorer++;
        Way cached = rf_cached(s, name), multi = rf_multi(s, name);
        // the scores agree: every cell (cdist) or the 5 best (extract)
        size_t hits = 0, diff = 0, compared = 0;
        cached(theirs, nullptr);
        if (cdist) {
            fzb_extract(index.get(), scorer, q, s.query.size(), 0, cells.data(), nullptr, nullptr,
                        &hits);
            for (size_t i = 0; i < count; i++)
                diff += differ(cells[i], theirs[i]);
            compared = count;
        } else {
            fzb_extract(index.get(), scorer, q, s.query.size(), 5, nullptr, hit_index, hit_score,
                        &hits);
            auto want = best5(theirs);
            compared = want.size();
            for (size_t i = 0; i < want.size(); i++)
                diff += i >= hits || differ(hit_score[i], want[i].first);
        }
        std::printf("agree %s %s %s %zu %zu\n", part, s.name.c_str(), name.c_str(), diff, compared);
        auto ours = [&] {
            size_t k = 0;
            if (cdist)
                fzb_extract(index.get(), scorer, q, s.query.size(), 0, cells.data(), nullptr,
                            nullptr, &k);
            else
                fzb_extract(index.get(), scorer, q, s.query.size(), 5, nullptr, hit_index,
                            hit_score, &k);
            sink = (double)k + cells[0] + hit_score[0];
        };
        std::vector<std::function<void()>> ways{[&] {
            cached(theirs, nullptr);
            sink = theirs[0];
        }};
        ways.push_back(cdist ? std::function<void()>() : [&] {
            cached(theirs, &theirs);
            sink = theirs[0];
        });
        ways.push_back(!multi ? std::function<void()>() : [&] {
            multi(theirs, nullptr);
            sink = theirs[0];
        });
        Cell c = rounds_of(ours, ways, o);
        auto per = [&](double ns) {
            char b[32];
            if (std::isnan(ns)) return std::string("-");
            std::snprintf(b, sizeof b, "%.3f", ns / (double)count);
            return std::string(b);
        };
        std::printf("%s %s %s %s %s %s %s %.3f %.3f %.3f %d\n", part, s.name.c_str(), name.c_str(),
                    per(c.ours).c_str(), per(c.theirs[0]).c_str(), per(c.theirs[1]).c_str(),
                    per(c.theirs[2]).c_str(), c.ratio, c.low, c.high, c.rounds);
        std::fflush(stdout);
    }
}

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

int usage() {
    std::fprintf(stderr,
                 "usage: wb_fzbench [--parts pairs,extract,cdist,editops] [--rounds N] [--count N]"
                 " [--sizes 8,32,...] [--scorers a,b] [--chunk-ms MS] [--seed S]"
                 " [--editops-bytes N]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc) return usage();
        std::string v = argv[++i];
        if (a == "--parts")
            o.parts = split(v);
        else if (a == "--scorers")
            o.scorers = split(v);
        else if (a == "--rounds")
            o.rounds = std::max(1, std::atoi(v.c_str()));
        else if (a == "--count")
            o.count = (size_t)std::max(1L, std::atol(v.c_str()));
        else if (a == "--chunk-ms")
            o.chunk_ms = std::max(0.01, std::atof(v.c_str()));
        else if (a == "--editops-bytes")
            o.editops_bytes = (size_t)std::max(1L, std::atol(v.c_str()));
        else if (a == "--seed")
            o.seed = (uint64_t)std::atoll(v.c_str());
        else if (a == "--sizes") {
            o.sizes.clear();
            for (auto &x : split(v))
                o.sizes.push_back((size_t)std::max(1L, std::atol(x.c_str())));
            if (o.sizes.empty()) return usage();
        } else
            return usage();
    }
    if (o.scorers.empty())
        for (size_t k = 0; k < fzb_scorers(); k++)
            o.scorers.push_back(fzb_scorer_name(k));
    for (const auto &n : o.scorers) {
        bool known = false;
        for (size_t k = 0; k < fzb_scorers(); k++)
            known = known || n == fzb_scorer_name(k);
        if (!known) {
            std::fprintf(stderr, "wb_fzbench: unknown scorer %s\n", n.c_str());
            return 2;
        }
    }
    Rng r(o.seed);
    if (has(o.parts, "pairs")) pairs(o, r);
    if (has(o.parts, "editops")) editops(o, r);
    if (has(o.parts, "extract") || has(o.parts, "cdist")) {
        Shape shapes[] = {names(r, o.count), words(r, o.count)};
        for (const auto &s : shapes) {
            if (has(o.parts, "extract")) searches(o, s, false);
            if (has(o.parts, "cdist")) searches(o, s, true);
        }
    }
    return 0;
}

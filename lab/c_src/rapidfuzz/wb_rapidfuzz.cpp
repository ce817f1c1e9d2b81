// rapidfuzz-cpp's scorers on the lab's fuzzy set, for the search suite to
// put beside WellBehaved.Fuzzy's figures (WellBehaved.Lab.Search.Rapidfuzz).
//
//   wb_rapidfuzz FILE ROUNDS
//
// FILE: the query on its first line, then one candidate a line. For each
// scorer, in rounds whose order rotates: its query scored against every
// candidate once untimed, then once timed (the candidates in the caches,
// as the lab's "query repeated" figure), keeping the 5 best as extract
// does. Two ways where rapidfuzz has both:
//   cached: a Cached<Scorer> of the query, one candidate after another
//           (process.extract's loop);
//   multi:  rapidfuzz::experimental::Multi<Scorer><32> holding every
//           candidate (made once, as an index), scored in SIMD batches
//           against the query (cdist's way; candidates of at most 32).
// Scores are the normalized similarity (0..1, the ratios 0..100).
// Prints one line a scorer and way: NAME WAY MEDIAN_NS MIN_NS MAX_NS (ns
// per candidate), then "checksum X" (the sum of the best scores, so that
// nothing is optimized away). Built against a rapidfuzz-cpp checkout
// (RAPIDFUZZ_CPP, the lab's Makefile); rapidfuzz is not part of the project.
#include <rapidfuzz/distance.hpp>
#include <rapidfuzz/fuzz.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using Strings = std::vector<std::string>;

// the 5 best scores seen (the results an extract with limit 5 keeps)
struct Best {
    double top[5] = {-1, -1, -1, -1, -1};
    void add(double s) {
        if (s <= top[4]) return;
        int i = 4;
        while (i > 0 && top[i - 1] < s) {
            top[i] = top[i - 1];
            i--;
        }
        top[i] = s;
    }
    double sum() const {
        double t = 0;
        for (double s : top)
            t += s;
        return t;
    }
};

struct Method {
    std::string name, way;
    std::function<double()> run; // one query against every candidate
    std::vector<double> ns;
};

template <typename Cached>
std::function<double()> cached(const Strings &c, Cached scorer,
                               double (*score)(const Cached &, const std::string &)) {
    auto held = std::make_shared<Cached>(std::move(scorer));
    return [&c, held, score] {
        Best best;
        for (const auto &s : c)
            best.add(score(*held, s));
        return best.sum();
    };
}

template <typename Multi>
std::function<double()> multi(const Strings &c, const std::string &q,
                              void (*score)(const Multi &, double *, size_t, const std::string &)) {
    auto held = std::make_shared<Multi>(c.size());
    for (const auto &s : c)
        held->insert(s);
    auto scores = std::make_shared<std::vector<double>>(held->result_count());
    return [&c, &q, held, scores, score] {
        score(*held, scores->data(), scores->size(), q);
        Best best;
        for (size_t i = 0; i < c.size(); i++)
            best.add((*scores)[i]);
        return best.sum();
    };
}

#define CACHED_NORMALIZED(T)                                                                       \
    cached<rapidfuzz::T<char>>(c, rapidfuzz::T<char>(q),                                           \
                               [](const rapidfuzz::T<char> &x, const std::string &s) {             \
                                   return x.normalized_similarity(s);                              \
                               })
#define CACHED_FUZZ(T)                                                                             \
    cached<rapidfuzz::fuzz::T<char>>(                                                              \
        c, rapidfuzz::fuzz::T<char>(q),                                                            \
        [](const rapidfuzz::fuzz::T<char> &x, const std::string &s) { return x.similarity(s); })
#define MULTI_NORMALIZED(T)                                                                        \
    multi<rapidfuzz::experimental::T<32>>(                                                         \
        c, q,                                                                                      \
        [](const rapidfuzz::experimental::T<32> &x, double *out, size_t n, const std::string &s) { \
            x.normalized_similarity(out, n, s);                                                    \
        })
#define MULTI_FUZZ(T)                                                                              \
    multi<rapidfuzz::fuzz::experimental::T<32>>(                                                   \
        c, q,                                                                                      \
        [](const rapidfuzz::fuzz::experimental::T<32> &x, double *out, size_t n,                   \
           const std::string &s) { x.similarity(out, n, s); })

} // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::cerr << "usage: wb_rapidfuzz FILE ROUNDS\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    std::string q, line;
    Strings c;
    if (!std::getline(in, q)) {
        std::cerr << "wb_rapidfuzz: no query in " << argv[1] << "\n";
        return 2;
    }
    bool short_enough = true;
    while (std::getline(in, line)) {
        short_enough = short_enough && line.size() <= 32;
        c.push_back(line);
    }
    int rounds = std::max(1, std::atoi(argv[2]));

    std::vector<Method> methods = {
        {"levenshtein", "cached", CACHED_NORMALIZED(CachedLevenshtein), {}},
        {"indel", "cached", CACHED_NORMALIZED(CachedIndel), {}},
        {"osa", "cached", CACHED_NORMALIZED(CachedOSA), {}},
        {"damerau_levenshtein",
         "cached",
         cached<rapidfuzz::experimental::CachedDamerauLevenshtein<char>>(
             c, rapidfuzz::experimental::CachedDamerauLevenshtein<char>(q),
             [](const rapidfuzz::experimental::CachedDamerauLevenshtein<char> &x,
                const std::string &s) { return x.normalized_similarity(s); }),
         {}},
        {"hamming", "cached", CACHED_NORMALIZED(CachedHamming), {}},
        {"lcs_seq", "cached", CACHED_NORMALIZED(CachedLCSseq), {}},
        {"prefix", "cached", CACHED_NORMALIZED(CachedPrefix), {}},
        {"postfix", "cached", CACHED_NORMALIZED(CachedPostfix), {}},
        {"jaro", "cached", CACHED_NORMALIZED(CachedJaro), {}},
        {"jaro_winkler", "cached", CACHED_NORMALIZED(CachedJaroWinkler), {}},
        {"ratio", "cached", CACHED_FUZZ(CachedRatio), {}},
        {"qratio", "cached", CACHED_FUZZ(CachedQRatio), {}},
        {"partial_ratio", "cached", CACHED_FUZZ(CachedPartialRatio), {}},
        {"token_sort_ratio", "cached", CACHED_FUZZ(CachedTokenSortRatio), {}},
        {"token_set_ratio", "cached", CACHED_FUZZ(CachedTokenSetRatio), {}},
        {"token_ratio", "cached", CACHED_FUZZ(CachedTokenRatio), {}},
        {"partial_token_sort_ratio", "cached", CACHED_FUZZ(CachedPartialTokenSortRatio), {}},
        {"partial_token_set_ratio", "cached", CACHED_FUZZ(CachedPartialTokenSetRatio), {}},
        {"partial_token_ratio", "cached", CACHED_FUZZ(CachedPartialTokenRatio), {}},
        {"wratio", "cached", CACHED_FUZZ(CachedWRatio), {}},
    };
#ifdef RAPIDFUZZ_SIMD
    if (short_enough) {
        methods.push_back({"levenshtein", "multi", MULTI_NORMALIZED(MultiLevenshtein), {}});
        methods.push_back({"indel", "multi", MULTI_NORMALIZED(MultiIndel), {}});
        methods.push_back({"osa", "multi", MULTI_NORMALIZED(MultiOSA), {}});
        methods.push_back({"jaro", "multi", MULTI_NORMALIZED(MultiJaro), {}});
        methods.push_back({"jaro_winkler", "multi", MULTI_NORMALIZED(MultiJaroWinkler), {}});
        methods.push_back({"ratio", "multi", MULTI_FUZZ(MultiRatio), {}});
        methods.push_back({"qratio", "multi", MULTI_FUZZ(MultiQRatio), {}});
        methods.push_back({"token_sort_ratio", "multi", MULTI_FUZZ(MultiTokenSortRatio), {}});
    }
#endif

    double checksum = 0;
    for (int r = 0; r < rounds; r++)
        for (size_t k = 0; k < methods.size(); k++) {
            Method &m = methods[(k + (size_t)r) % methods.size()];
            checksum += m.run();
            auto t0 = Clock::now();
            checksum += m.run();
            double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
            m.ns.push_back(ns / (double)(c.empty() ? 1 : c.size()));
        }
    for (auto &m : methods) {
        std::sort(m.ns.begin(), m.ns.end());
        std::printf("%s %s %.3f %.3f %.3f\n", m.name.c_str(), m.way.c_str(), m.ns[m.ns.size() / 2],
                    m.ns.front(), m.ns.back());
    }
    std::printf("checksum %.3f\n", checksum);
    return 0;
}

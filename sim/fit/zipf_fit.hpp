// SPDX-License-Identifier: GPL-3.0-or-later
// Popularity from a sample of queries: the Zipf exponent and the size of the name universe.
//
// Model: the profile's, P(rank k) = k^-s / H(N, s) over ranks 1..N (a truncated Zipf;
// H(N, s) = sum of k^-s for k = 1..N, the generalised harmonic number). The data: how many
// queries each name seen received (its count), n queries over d distinct names.
//
// Exponent: maximum likelihood over the rank-frequency data, names ranked by count. The
// ranks of the head are what the data says well; in the tail, where counts are 1, 2, 3 and
// hundreds of names tie, the order among names is noise, and treating a tied name's
// position as its rank biases s (names that happened to be asked once more move up). So
// the likelihood is that of the head ranks 1..R (names with at least kHeadMinCount
// queries), each with its count, plus the rest of the queries as one censored group whose
// probability is 1 - H(R, s) / H(N, s):
//     L(s) = sum_{r<=R} c_r (-s ln r - ln H(N, s)) + T ln(1 - H(R, s) / H(N, s))
// maximised by golden-section search on s in [0.01, 3] (L is unimodal in s). NOTE: a
// least-squares line through log(count) against log(rank) was not used: it weighs every
// point alike while a count of 1 carries almost no information and a count of 10^5 a lot,
// its residuals are neither independent nor of one variance, and the flat tail of
// singletons pulls the slope; it is biased at every sample size (Clauset, Shalizi and
// Newman 2009, "Power-law distributions in empirical data", section 3).
//
// Universe: names never asked are not seen; the sample's d is only a lower bound of N.
// The estimator is the model's own: N is the universe for which a Zipf(s) sample of n
// queries is expected to show d distinct names, E[d] = sum_k 1 - (1 - p_k)^n, solved for
// N by bisection. s and N are found together (s's likelihood depends on N through H(N, s)):
// alternating the two until N moves by less than 0.01%. When the sample covers the
// universe (almost every name seen several times) the solution is d. Chao1 (d + f1^2 /
// (2 f2)) is printed beside it: it assumes nothing of the shape and is a lower bound, far
// below N for a long Zipf tail of rarely asked names.
//
// Costs: the harmonic numbers are exact up to k = 1000 and Euler-Maclaurin beyond (error
// below 1e-9 relative); E[d] sums exactly up to 20,000 ranks and in blocks 0.2% wide above.
// A fit of 10^5 names takes tens of milliseconds.
#pragma once
#include <cstdint>
#include <vector>

namespace dnsarena::sim::fit {

inline constexpr std::uint64_t kHeadMinCount = 16;

// H(n, s) = sum_{k=1..n} k^-s.
double harmonic(std::uint64_t n, double s);

// Expected distinct ranks seen in `draws` draws of Zipf(s) over 1..universe.
double expected_distinct(std::uint64_t universe, double s, double draws);

// The universe whose Zipf(s) sample of `draws` shows `distinct` names on average, in
// [distinct, max_universe].
std::uint64_t universe_for_distinct(std::uint64_t distinct, double s, double draws,
                                    std::uint64_t max_universe = 10'000'000'000ull);

// The MLE of s for a truncated Zipf over 1..universe, from counts sorted in decreasing
// order (censored tail, above). REQUIRES: universe >= counts.size().
double zipf_exponent_mle(const std::vector<std::uint64_t>& counts_desc, std::uint64_t universe,
                         std::uint64_t head_min_count = kHeadMinCount);

struct ZipfFit {
  double exponent = 0;
  std::uint64_t universe = 0;     // the model's estimate (above)
  std::uint64_t distinct = 0;     // names seen
  std::uint64_t queries = 0;      // n
  std::uint64_t head_ranks = 0;   // R: ranks whose counts enter the likelihood one by one
  std::uint64_t singletons = 0;   // f1: names seen once
  double chao1 = 0;               // lower bound of the universe
  unsigned iterations = 0;
};

// Chao1's lower bound of a universe from a sample: distinct + f1^2 / (2 f2), with f1 and f2
// the values seen once and twice (f1 (f1 - 1) / 2 when f2 is 0).
double chao1(std::uint64_t distinct, std::uint64_t once, std::uint64_t twice);

// s and N together from per-name counts (any order; zeros ignored).
ZipfFit fit_zipf(std::vector<std::uint64_t> counts, std::uint64_t head_min_count = kHeadMinCount);

}  // namespace dnsarena::sim::fit

// SPDX-License-Identifier: GPL-3.0-or-later
// The popularity estimators of sim/fit/zipf_fit.hpp on synthetic samples drawn with the
// load client's own Zipf sampler: the exponent recovered at s = 0.7 / 0.9 / 1.1, the
// universe from a sample that saw only a fifth of it, and the pieces (harmonic numbers,
// expected distinct names) against brute force.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/fit/zipf_fit.hpp"
#include "sim/traffic/zipf_sampler.hpp"
#include "sim/workload/entry_generator.hpp"

using namespace dnsarena::sim;

namespace {

std::vector<std::uint64_t> zipf_counts(std::uint64_t universe, double s, std::uint64_t draws, std::uint64_t seed) {
  const traffic::ZipfSampler z(universe, s);
  SplitMix64 rng(seed);
  std::vector<std::uint64_t> counts(universe);
  for (std::uint64_t i = 0; i < draws; ++i) ++counts[z.sample([&] { return rng.unit(); }) - 1];
  return counts;
}

}  // namespace

TEST_CASE("harmonic numbers: exact head, Euler-Maclaurin tail", "[fit][zipf]") {
  for (double s : {0.0, 0.5, 0.9, 1.0, 1.1, 2.0}) {
    for (std::uint64_t n : {1ull, 999ull, 1000ull, 1001ull, 250'000ull}) {
      double brute = 0;
      for (std::uint64_t k = n; k >= 1; --k) brute += std::pow(static_cast<double>(k), -s);
      INFO("s " << s << " n " << n);
      CHECK(fit::harmonic(n, s) == Approx(brute).epsilon(1e-9));
    }
  }
}

TEST_CASE("expected distinct names match a simulation", "[fit][zipf]") {
  const std::uint64_t universe = 50'000, draws = 40'000;
  const auto counts = zipf_counts(universe, 0.9, draws, 11);
  const auto seen = static_cast<double>(std::count_if(counts.begin(), counts.end(), [](auto c) { return c > 0; }));
  CHECK(fit::expected_distinct(universe, 0.9, draws) == Approx(seen).epsilon(0.01));
  // And the inverse: the universe that shows that many names.
  const std::uint64_t n = fit::universe_for_distinct(static_cast<std::uint64_t>(seen), 0.9, draws);
  CHECK(static_cast<double>(n) == Approx(universe).epsilon(0.03));
}

TEST_CASE("Zipf MLE recovers the exponent and the universe", "[fit][zipf]") {
  const std::uint64_t universe = 20'000, draws = 150'000;
  for (double s : {0.7, 0.9, 1.1}) {
    for (std::uint64_t seed : {1ull, 2ull}) {
      const fit::ZipfFit f = fit::fit_zipf(zipf_counts(universe, s, draws, seed));
      INFO("s " << s << " seed " << seed << ": fitted " << f.exponent << ", universe " << f.universe << " (seen "
                << f.distinct << ", Chao1 " << f.chao1 << ")");
      CHECK(std::fabs(f.exponent - s) < 0.01);
      CHECK(static_cast<double>(f.universe) == Approx(universe).epsilon(0.03));
      CHECK(f.queries == draws);
      CHECK(f.head_ranks > 100);
    }
  }
}

TEST_CASE("a short sample: the universe beyond the names seen, Chao1 far below", "[fit][zipf]") {
  // 50,000 queries over 100,000 names: about a fifth of the names are seen.
  const std::uint64_t universe = 100'000;
  const fit::ZipfFit f = fit::fit_zipf(zipf_counts(universe, 0.9, 50'000, 5));
  INFO("fitted " << f.exponent << ", universe " << f.universe << " (seen " << f.distinct << ", Chao1 " << f.chao1 << ")");
  CHECK(f.distinct < universe / 4);
  CHECK(std::fabs(f.exponent - 0.9) < 0.02);
  CHECK(static_cast<double>(f.universe) == Approx(universe).epsilon(0.08));
  CHECK(f.chao1 < 0.7 * universe);  // the shape-free lower bound misses the long tail
}

TEST_CASE("the censored likelihood beats ranking the tail", "[fit][zipf]") {
  // Every name as its own rank (head_min_count 1) is the plain rank-frequency MLE: the
  // tail's tied counts bias it upwards; the censored tail does not.
  const std::uint64_t universe = 100'000;
  auto counts = zipf_counts(universe, 0.9, 50'000, 8);
  std::sort(counts.begin(), counts.end(), std::greater<>());
  while (!counts.empty() && counts.back() == 0) counts.pop_back();
  const double every_rank = fit::zipf_exponent_mle(counts, universe, 1);
  const double censored = fit::zipf_exponent_mle(counts, universe);
  INFO("every rank " << every_rank << ", censored " << censored);
  CHECK(std::fabs(censored - 0.9) < std::fabs(every_rank - 0.9));
  CHECK(every_rank - 0.9 > 0.015);
}

TEST_CASE("degenerate samples", "[fit][zipf]") {
  CHECK(fit::fit_zipf({}).universe == 0);
  const fit::ZipfFit one = fit::fit_zipf({5});
  CHECK(one.distinct == 1);
  CHECK(one.universe >= 1);
  const fit::ZipfFit flat = fit::fit_zipf(std::vector<std::uint64_t>(1000, 50));
  CHECK(flat.exponent < 0.05);          // every name alike: uniform
  CHECK(flat.universe == 1000);         // every name seen 50 times: the universe is what was seen
}

// SPDX-License-Identifier: GPL-3.0-or-later
#include "sim/fit/zipf_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace dnsarena::sim::fit {

namespace {

constexpr std::uint64_t kExactHarmonicTerms = 1000;
constexpr std::uint64_t kExactDistinctRanks = 20'000;
constexpr double kDistinctBlockRatio = 1.002;

// (b^(1-s) - a^(1-s)) / (1 - s), and ln(b/a) at s = 1.
double power_integral(double a, double b, double s) {
  const double e = 1.0 - s;
  const double la = std::log(a), lb = std::log(b);
  if (std::fabs(e) < 1e-9) return lb - la;
  return (std::exp(e * lb) - std::exp(e * la)) / e;
}

double golden_max(const std::function<double(double)>& f, double lo, double hi, double tol) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  while (hi - lo > tol) {
    if (f1 < f2) {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + g * (hi - lo), f2 = f(x2);
    } else {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - g * (hi - lo), f1 = f(x1);
    }
  }
  return (lo + hi) / 2;
}

}  // namespace

double harmonic(std::uint64_t n, double s) {
  double sum = 0;
  const std::uint64_t exact = std::min(n, kExactHarmonicTerms);
  for (std::uint64_t k = 1; k <= exact; ++k) sum += std::pow(static_cast<double>(k), -s);
  if (n <= exact) return sum;
  // Euler-Maclaurin for k = exact+1 .. n.
  const double a = static_cast<double>(exact + 1), b = static_cast<double>(n);
  const auto f = [s](double x) { return std::pow(x, -s); };
  const auto df = [s](double x) { return -s * std::pow(x, -s - 1); };
  return sum + power_integral(a, b, s) + (f(a) + f(b)) / 2 + (df(b) - df(a)) / 12;
}

double expected_distinct(std::uint64_t universe, double s, double draws) {
  const double h = harmonic(universe, s);
  const auto seen = [&](double k) {  // probability that rank k is drawn at least once
    const double p = std::pow(k, -s) / h;
    return -std::expm1(draws * std::log1p(-std::min(p, 1.0 - 1e-16)));
  };
  double sum = 0;
  const std::uint64_t exact = std::min(universe, kExactDistinctRanks);
  for (std::uint64_t k = 1; k <= exact; ++k) sum += seen(static_cast<double>(k));
  // Blocks [a, b) of ranks, each counted at its geometric middle.
  double a = static_cast<double>(exact + 1);
  const double end = static_cast<double>(universe) + 1;
  while (a < end) {
    const double b = std::min(end, std::max(a + 1, std::floor(a * kDistinctBlockRatio)));
    sum += (b - a) * seen(std::sqrt(a * (b - 1)));
    a = b;
  }
  return sum;
}

std::uint64_t universe_for_distinct(std::uint64_t distinct, double s, double draws, std::uint64_t max_universe) {
  if (distinct == 0) return 0;
  std::uint64_t lo = distinct, hi = max_universe;
  if (expected_distinct(lo, s, draws) >= static_cast<double>(distinct)) return lo;
  if (expected_distinct(hi, s, draws) <= static_cast<double>(distinct)) return hi;
  // Bisection in log(N): E[d] grows with N.
  while (hi - lo > 1 && static_cast<double>(hi) / static_cast<double>(lo) > 1.00001) {
    const auto mid = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(lo) * static_cast<double>(hi)));
    const std::uint64_t m = std::clamp(mid, lo + 1, hi - 1);
    if (expected_distinct(m, s, draws) < static_cast<double>(distinct)) lo = m;
    else hi = m;
  }
  return hi;
}

double zipf_exponent_mle(const std::vector<std::uint64_t>& counts, std::uint64_t universe, std::uint64_t head_min_count) {
  double total = 0, head_total = 0, head_log_rank = 0;
  std::uint64_t head = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const double c = static_cast<double>(counts[r]);
    total += c;
    if (counts[r] >= head_min_count) {
      head = r + 1;
      head_total += c;
      head_log_rank += c * std::log(static_cast<double>(r + 1));
    }
  }
  if (total == 0) return 0;
  // Too few counted names to rank: every name enters with its count (the full-rank MLE).
  if (head < 2) {
    head = counts.size();
    head_total = total;
    head_log_rank = 0;
    for (std::size_t r = 0; r < counts.size(); ++r)
      head_log_rank += static_cast<double>(counts[r]) * std::log(static_cast<double>(r + 1));
  }
  const double tail = total - head_total;
  const auto loglik = [&](double s) {
    const double hn = harmonic(universe, s);
    double l = -s * head_log_rank - total * std::log(hn);
    if (tail > 0 && universe > head) l += tail * std::log(std::max(1e-300, hn - harmonic(head, s)));
    return l;
  };
  return golden_max(loglik, 0.01, 3.0, 1e-6);
}

double chao1(std::uint64_t distinct, std::uint64_t once, std::uint64_t twice) {
  const auto f1 = static_cast<double>(once), f2 = static_cast<double>(twice);
  return static_cast<double>(distinct) + (f2 > 0 ? f1 * f1 / (2 * f2) : f1 * (f1 - 1) / 2);
}

ZipfFit fit_zipf(std::vector<std::uint64_t> counts, std::uint64_t head_min_count) {
  counts.erase(std::remove(counts.begin(), counts.end(), 0u), counts.end());
  std::sort(counts.begin(), counts.end(), std::greater<>());
  ZipfFit f;
  f.distinct = counts.size();
  for (std::uint64_t c : counts) {
    f.queries += c;
    if (c >= head_min_count) ++f.head_ranks;
  }
  f.singletons = static_cast<std::uint64_t>(std::count(counts.begin(), counts.end(), 1u));
  f.chao1 = chao1(f.distinct, f.singletons, static_cast<std::uint64_t>(std::count(counts.begin(), counts.end(), 2u)));
  if (counts.empty()) return f;
  std::uint64_t universe = f.distinct;
  for (f.iterations = 1; f.iterations <= 50; ++f.iterations) {
    f.exponent = zipf_exponent_mle(counts, universe, head_min_count);
    const std::uint64_t next = universe_for_distinct(f.distinct, f.exponent, static_cast<double>(f.queries));
    const bool settled = std::fabs(static_cast<double>(next) - static_cast<double>(universe)) <= 1e-4 * static_cast<double>(universe);
    universe = next;
    if (settled) break;
  }
  f.exponent = zipf_exponent_mle(counts, universe, head_min_count);
  f.universe = universe;
  return f;
}

}  // namespace dnsarena::sim::fit

#include "sampled_trace.hpp"

#include <algorithm>
#include <cmath>

namespace dnsarena::sim::fleet {

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

namespace {
double unit_of(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }
}  // namespace

double zipf_normalizer(std::uint64_t n, double alpha) {
  const std::uint64_t exact = std::min<std::uint64_t>(n, 1'000'000);
  double s = 0;
  for (std::uint64_t r = exact; r >= 1; --r) s += std::pow(static_cast<double>(r), -alpha);
  if (n > exact) {
    // Integral of x^-a from exact+0.5 to n+0.5 (midpoint rule; error far below 1e-9 here).
    const double a = exact + 0.5, b = n + 0.5;
    if (std::fabs(alpha - 1.0) < 1e-12) s += std::log(b / a);
    else s += (std::pow(b, 1 - alpha) - std::pow(a, 1 - alpha)) / (1 - alpha);
  }
  return s;
}

bool name_is_ecs(const TrafficProfile& t, std::uint64_t name, std::uint64_t seed) {
  return t.ecs_share > 0 && unit_of(mix64(name * 0x9E3779B97F4A7C15ULL ^ seed ^ 0xEC5)) < t.ecs_share;
}

std::uint32_t key_ttl(const TrafficProfile& t, const TraceKey& k, std::uint64_t seed, bool* negative) {
  const std::uint64_t h = mix64(k.id() * 0xD1B54A32D192ED03ULL ^ seed);
  const bool neg = t.negative_share > 0 && unit_of(h) < t.negative_share;
  if (negative) *negative = neg;
  if (neg) return t.negative_ttl;
  double u = unit_of(mix64(h ^ 0x77));
  for (const auto& b : t.ttl) {
    if (u < b.share) return b.seconds;
    u -= b.share;
  }
  return t.ttl.back().seconds;
}

SampledTrace::SampledTrace(const TrafficProfile& t, double rate, std::uint64_t seed, std::uint64_t head)
    : t_(t), rate_(rate), seed_(seed), head_(std::min<std::uint64_t>(head, t.names)), rng_(seed ^ 0x5A5A) {
  // Geometric skipping: the gap to the next kept name is Geometric(rate).
  SplitMix64 pick(seed * 31 + 7);
  const double log_q = rate < 1.0 ? std::log1p(-rate) : 0.0;
  double sum = 0;
  std::uint64_t r = 0;
  for (;;) {
    if (rate >= 1.0 || r < head_) {
      ++r;
    } else {
      const double u = 1.0 - pick.unit();  // (0, 1]
      r += 1 + static_cast<std::uint64_t>(std::floor(std::log(u) / log_q));
    }
    if (r > t.names) break;
    ranks_.push_back(r);
    sum += std::pow(static_cast<double>(r), -t.zipf);
    cum_.push_back(sum);
    ecs_.push_back(name_is_ecs(t, r, seed));
  }
  weight_ = ranks_.empty() ? 0.0 : sum / zipf_normalizer(t.names, t.zipf);
}

TraceKey SampledTrace::next() {
  TraceKey k;
  if (ranks_.empty()) return k;
  const double u = rng_.unit() * cum_.back();
  const std::size_t i = static_cast<std::size_t>(std::upper_bound(cum_.begin(), cum_.end(), u) - cum_.begin());
  const std::size_t idx = std::min(i, ranks_.size() - 1);
  k.name = ranks_[idx];
  const double q = rng_.unit();
  k.qtype = q < t_.share_a ? 1 : q < t_.share_a + t_.share_aaaa ? 28 : 16;
  k.ecs = ecs_[idx] != 0;
  if (k.ecs) k.subnet = static_cast<std::uint32_t>(rng_.next() % t_.ecs_subnets);
  return k;
}

}  // namespace dnsarena::sim::fleet

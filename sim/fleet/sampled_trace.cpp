// SPDX-License-Identifier: GPL-3.0-or-later
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
  return t.ecs_keyed_share() > 0 && unit_of(mix64(name * 0x9E3779B97F4A7C15ULL ^ seed ^ 0xEC5)) < t.ecs_keyed_share();
}

std::uint16_t request_qtype(const TrafficProfile& t, std::uint64_t name, std::uint64_t seed, double u) {
  if (t.qtype_per_name) u = unit_of(mix64(name * 0xA24BAED4963EE407ULL ^ seed ^ 0x7E));
  return u < t.share_a ? 1 : u < t.share_a + t.share_aaaa ? 28 : 16;
}

std::array<std::pair<std::uint16_t, double>, 3> qtype_shares(const TrafficProfile& t) {
  return {{{1, t.share_a}, {28, t.share_aaaa}, {16, std::max(0.0, 1.0 - t.share_a - t.share_aaaa)}}};
}

std::uint32_t key_ttl(const TrafficProfile& t, const TraceKey& k, std::uint64_t seed, bool* negative) {
  const std::uint64_t h = mix64(k.id() * 0xD1B54A32D192ED03ULL ^ seed);
  const bool neg = is_stray(k) || (t.negative_share > 0 && unit_of(h) < t.negative_share);
  if (negative) *negative = neg;
  if (neg) return t.negative_ttl;
  double u = unit_of(mix64(h ^ 0x77));
  for (const auto& b : t.ttl.buckets) {
    if (u < b.share) return b.seconds;
    u -= b.share;
  }
  return t.ttl.buckets.back().seconds;
}

double expected_resident_keys(const TrafficProfile& t, std::uint64_t rank, double name_qps, std::uint64_t seed) {
  double expected = 0;
  for_each_name_key(t, rank, name_qps, seed, [&](const TraceKey&, std::uint32_t ttl, double key_qps) {
    const double requests_per_ttl = key_qps * static_cast<double>(ttl);
    expected += requests_per_ttl / (1.0 + requests_per_ttl);
  });
  return expected;
}

namespace {

// Thinning bounds (see the header): cycles of a head key per TTL, hits per t_C.
constexpr double kCyclesPerTtl = 20.0;
constexpr double kHitsPerCharacteristic = 5.0;

}  // namespace

SampledTrace::SampledTrace(const TrafficProfile& t, double rate, std::uint64_t seed, std::uint64_t head,
                           double rate_qps, double characteristic_s)
    : t_(t), rate_(rate), seed_(seed), head_(std::min<std::uint64_t>(head, t.names)), rng_(seed ^ 0x5A5A) {
  const double norm = zipf_normalizer(t.names, t.zipf);
  // Head keys: names 1..K x their qtypes x (ECS names) subnets (for_each_name_key).
  const double min_rate_tc = std::isfinite(characteristic_s) && characteristic_s > 0
                                 ? kHitsPerCharacteristic / characteristic_s
                                 : 0.0;
  std::vector<double> head_rates;
  // Lists a head key with its TTL and full rate, thinned (see the header).
  auto add_head_key = [&](HeadKey h, std::uint32_t ttl, double key_rate) {
    h.ttl = ttl;
    h.rate_qps = key_rate;
    h.sampled_qps = std::min(key_rate, std::max(kCyclesPerTtl / std::max(1u, ttl), min_rate_tc));
    h.weight = h.sampled_qps > 0 ? key_rate / h.sampled_qps : 1.0;
    head_qps_ += h.sampled_qps;
    head_rates.push_back(h.sampled_qps);
    head_keys_.push_back(h);
  };
  for (std::uint64_t r = 1; r <= head_; ++r)
    for_each_name_key(t, r, rate_qps * std::pow(static_cast<double>(r), -t.zipf) / norm, seed,
                      [&](const TraceKey& k, std::uint32_t ttl, double key_qps) {
                        HeadKey h;
                        h.key = k;
                        add_head_key(h, ttl, key_qps);
                      });
  head_alias_ = AliasTable(head_rates);
  head_draws_.reserve(head_keys_.size());
  for (const HeadKey& h : head_keys_) head_draws_.push_back({h.key, h.weight, h.ttl});
  // Tail names, stratified: ranks K+1..N in blocks of 1/R consecutive ranks, one rank
  // drawn uniformly from each block (every rank is kept with probability R, as with
  // independent sampling, but the kept Zipf weight no longer depends on luck with the
  // few heaviest tail names; see the header). Block j's rank is a hash of (seed, j), so
  // a draw needs only the alias table: no table of ranks to read.
  block_ = rate < 1.0 ? 1.0 / rate : 1.0;
  std::vector<double> tail_p;
  double sum = 0;
  std::uint64_t previous = 0;
  for (std::uint64_t j = 0;; ++j) {
    const std::uint64_t r = tail_rank(j);
    if (r > t.names) break;
    // A rank that straddles two blocks could be picked by both: it is kept once.
    const double p = r == previous ? 0.0 : std::pow(static_cast<double>(r), -t.zipf);
    previous = r;
    tail_p.push_back(p);
    sum += p;
  }
  tail_alias_ = AliasTable(tail_p);
  tail_weight_ = sum / norm;
  tail_qps_ = rate_qps * tail_weight_;
  const double head_share = sampled_qps() > 0 ? head_qps_ / sampled_qps() : 0.0;
  head_threshold_ = head_share >= 1.0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(head_share * 0x1.0p64);
}

std::uint64_t SampledTrace::tail_rank(std::uint64_t block) const {
  // Rank head+1+m covers [m, m+1) on a line cut into blocks [j*B, (j+1)*B); a point drawn
  // uniformly in each block picks the rank under it.
  const double u = unit_of(mix64(block * 0x9E3779B97F4A7C15ULL ^ seed_ ^ 0x7A11));
  return head_ + 1 + static_cast<std::uint64_t>((static_cast<double>(block) + u) * block_);
}

void SampledTrace::draw_picks(SplitMix64& rng, Pick* out, std::size_t n) const {
  for (std::size_t i = 0; i < n; ++i) {
    out[i].head = rng.next() < head_threshold_ || tail_alias_.empty();
    out[i].value = rng.next();
    if (!out[i].head) tail_alias_.prefetch(out[i].value);
    else if (!head_alias_.empty()) head_alias_.prefetch(out[i].value);
  }
}

void SampledTrace::next_batch(Draw* out, std::size_t n) {
  // Stage 1: head or tail, and the alias cell of each draw. The picks drawn ahead at the
  // end of the previous call are the same random numbers (a copy of the generator drew
  // them): taken here, the generator skips past them; any beyond them are drawn now.
  Pick pick[kMaxBatch];
  const std::size_t ahead = std::min(n, ahead_count_);
  std::copy(ahead_, ahead_ + ahead, pick);
  rng_.state += 2 * ahead * 0x9E3779B97F4A7C15ULL;  // SplitMix64: two next() per pick
  draw_picks(rng_, pick + ahead, n - ahead);
  // Stage 2: resolve the draws (their cells were prefetched, most a batch ago); prefetch
  // the head keys.
  std::uint32_t idx[kMaxBatch];
  for (std::size_t i = 0; i < n; ++i) {
    if (pick[i].head) {
      idx[i] = head_alias_.empty() ? 0 : head_alias_.draw(pick[i].value);
      if (!head_alias_.empty()) __builtin_prefetch(&head_draws_[idx[i]]);
    } else {
      idx[i] = tail_alias_.draw(pick[i].value);
    }
  }
  // Stage 3: the keys, the tail ones first (computed, no memory read) while the head
  // keys arrive.
  for (std::size_t i = 0; i < n; ++i) {
    Draw& d = out[i];
    d = Draw{};
    if (pick[i].head) continue;
    d.key.name = tail_rank(idx[i]);
    if (t_.stray_share() > 0 && rng_.unit() < t_.stray_share()) {
      d.key.qtype = static_cast<std::uint16_t>(kStrayQtype + rng_.next() % t_.stray_keys());
      continue;  // stray keys are never ECS-keyed (negative answers have scope 0)
    }
    d.key.qtype = request_qtype(t_, d.key.name, seed_, t_.qtype_per_name ? 0.0 : rng_.unit());
    d.key.ecs = name_is_ecs(t_, d.key.name, seed_);
    if (d.key.ecs) d.key.subnet = static_cast<std::uint32_t>(rng_.next() % std::max(1u, t_.ecs_subnets));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!pick[i].head || head_alias_.empty()) continue;
    out[i].head_index = idx[i];
    const HeadDraw& h = head_draws_[idx[i]];
    out[i].key = h.key;
    out[i].weight = h.weight;
    out[i].ttl = h.ttl;
  }
  // The next batch's picks (assumed the same size), drawn from a copy of the generator
  // and their cells prefetched now: they arrive while the caller works on this batch.
  SplitMix64 peek = rng_;
  ahead_count_ = n;
  draw_picks(peek, ahead_, n);
}

}  // namespace dnsarena::sim::fleet

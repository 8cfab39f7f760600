// A spatially sampled request trace of one datacenter's traffic (SHARDS-style).
//
// Model: names have Zipf(alpha) popularity over a universe of N; a request picks a name,
// then a qtype from the mix; an ECS name (a share of names, chosen by hash) is keyed per
// client subnet too (uniform over the active subnets). Each key has a TTL bucket and a
// negative/positive answer chosen by hash, so a key's answer is always the same.
//
// Sampling: the head (Zipf ranks 1..K, K = `head` given by the caller) is always kept;
// each tail name (rank > K) is kept with probability R, independently (geometric skipping
// with a seeded generator, O(K + R*N) to build); all keys of a kept name are kept. The
// kept names carry Zipf weight W = sum of p_r over kept names, so the trace has rate
// lambda*W requests/s: head requests at full rate (weight 1 each), tail requests at
// rate ~R (weight 1/R each). Keeping the head whole removes the dominant variance of
// name-level sampling (whether one of the few very popular names is in the sample);
// see cache_curve.hpp for how capacity and counts are weighted.
//
// Costs: build O(K + R*N) time and memory; next() is one binary search over the kept
// names' cumulative weights plus a few hash mixes.
#pragma once
#include <cstdint>
#include <vector>

#include "fleet_config.hpp"
#include "sim/workload/seed_mix.hpp"

namespace dnsarena::sim::fleet {

// One key of the trace. `name` is the Zipf rank (1-based), `subnet` 0 unless ECS.
struct TraceKey {
  std::uint64_t name = 0;
  std::uint16_t qtype = 1;
  std::uint32_t subnet = 0;
  bool ecs = false;
  std::uint64_t id() const { return (name << 24) ^ (std::uint64_t{qtype} << 20) ^ subnet; }
};

// Sum_{r=1..n} r^-alpha (exact to 1e6, Euler-Maclaurin beyond).
double zipf_normalizer(std::uint64_t n, double alpha);

// Deterministic per-key attributes.
std::uint64_t mix64(std::uint64_t x);
bool name_is_ecs(const TrafficProfile& t, std::uint64_t name, std::uint64_t seed);
std::uint32_t key_ttl(const TrafficProfile& t, const TraceKey& k, std::uint64_t seed, bool* negative);

class SampledTrace {
public:
  SampledTrace(const TrafficProfile& t, double rate, std::uint64_t seed, std::uint64_t head = 0);
  // Next key of the sampled trace.
  TraceKey next();
  double rate() const { return rate_; }
  std::uint64_t head() const { return head_; }  // ranks 1..head() are kept in full
  bool is_head(const TraceKey& k) const { return k.name <= head_; }
  double weight() const { return weight_; }  // share of all requests that the kept names receive
  std::size_t kept_names() const { return ranks_.size(); }
  const std::vector<std::uint64_t>& ranks() const { return ranks_; }

private:
  TrafficProfile t_;
  double rate_;
  std::uint64_t seed_;
  std::uint64_t head_;
  std::vector<std::uint64_t> ranks_;
  std::vector<double> cum_;  // cumulative r^-alpha over kept ranks
  std::vector<std::uint8_t> ecs_;
  double weight_ = 0;
  SplitMix64 rng_;
};

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
// A spatially sampled request trace of one datacenter's traffic (SHARDS-style).
//
// Model: names have Zipf(alpha) popularity over a universe of N; a request picks a name,
// then a qtype from the mix (or the name's own qtype, qtype_per_name); an ECS name (a
// share of names, chosen by hash) is keyed per client subnet too (uniform over the
// active subnets). Each key has a TTL bucket and a negative/positive answer chosen by
// hash, so a key's answer is always the same.
//
// Sampling: the head (Zipf ranks 1..K, K = `head` given by the caller) is always kept;
// each tail name (rank > K) is kept with probability R, stratified by rank: the tail is
// cut into blocks of 1/R consecutive ranks and one rank is drawn uniformly from each
// (seeded). All keys of a kept name are kept. Independent (hash) sampling keeps each
// rank with the same probability, but then the kept Zipf weight depends on which of the
// few heaviest tail names happen to be kept: at R = 0.001 with K = 75 on a 60 M-name
// Zipf(0.9) universe its relative standard deviation is about 14%. Stratified, the kept
// weight is within a fraction of a percent of R times the tail's. What remains at small
// R is the luck of the kept names' own traits (TTLs, ECS, qtypes): the ordinary
// datacenter's plateau hit rate ranged 0.41..0.56 over seeds at R = 0.001, and
// 0.451..0.455 at R = 0.008 (sample_entries 32,768, the default). Tail requests arrive
// at rate lambda*W (W = the Zipf weight of the kept tail names) and stand for 1/R
// requests each; see cache_curve.hpp for how capacity is weighted. Keeping the head
// whole removes the dominant variance of name-level sampling (whether one of the few
// very popular names is in the sample).
//
// Head thinning: the head's keys are listed one by one (name x qtype x subnet) with
// their full request rate l. Simulating every head request would make the head nearly
// all of the work (the top 1,024 names of a 60 M-name Zipf(0.9) universe draw 21% of
// all requests; the sampled tail at R = 0.001 draws 0.08%), and almost all of those
// requests are hits that change nothing. So a head key is requested at a thinned rate
// r = min(l, max(20 / TTL, 5 / t_C)) (t_C: how long an entry that is not hit stays in
// the cache, Che's characteristic time) and each of its requests stands for w = l / r.
//   Why these bounds: after the key expires it stays absent until its next request,
//   1/r on average instead of 1/l; with r*TTL >= 20 that costs at most 5% of the
//   key's occupancy (head keys are at most 1/8 of the cache; on the ordinary
//   datacenter, 50 instead of 20 moved the plateau by < 0.3 points and 1% of entries).
//   A hit sets the entry's hit bit that buys its second chance at reclaim; with r*t_C >= 5 a hot key is hit before its region is reclaimed with
//   probability 1 - e^-5 (99.3%; when it is not, it is evicted and refetched 1/r later,
//   about 0.1% of its occupancy).
//   Counting: a thinned hit counts w hits; a thinned miss counts 1 miss and w - 1 hits
//   (the real stream's requests after the refetch, until the next thinned one, hit), so
//   a key's misses per cycle stay 1 and its requests per second stay l.
//
// Costs: build O(K*keys + R*N) time and memory; a draw (next_batch) is O(1): alias tables (one memory
// access each, on huge pages, prefetched one batch ahead) for the head keys and the kept
// tail names, plus a few random numbers.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "alias_table.hpp"
#include "huge_page_allocator.hpp"
#include "fleet_config.hpp"
#include "sim/workload/entry_generator.hpp"

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
// The qtype of a request for `name`: from the request's own uniform draw `u`, or, when
// the profile has one qtype per name, from the name's hash.
std::uint16_t request_qtype(const TrafficProfile& t, std::uint64_t name, std::uint64_t seed, double u);
// The qtypes a request can ask (A, AAAA, the rest as TXT) with their shares, in the
// order request_qtype() draws them.
std::array<std::pair<std::uint16_t, double>, 3> qtype_shares(const TrafficProfile& t);
// Stray keys (TrafficProfile::stray_share) are keyed by pseudo qtypes kStrayQtype + j,
// j < stray_keys, and always answered negatively.
inline constexpr std::uint16_t kStrayQtype = 65280;  // private-use qtypes (RFC 6895)
inline bool is_stray(const TraceKey& k) { return k.qtype >= kStrayQtype; }
std::uint32_t key_ttl(const TrafficProfile& t, const TraceKey& k, std::uint64_t seed, bool* negative);

// One key of a head name, simulated at a thinned rate.
struct HeadKey {
  TraceKey key;
  double rate_qps = 0;     // l: its requests per second in the full stream
  double sampled_qps = 0;  // r <= l: its requests per second in the trace
  double weight = 1;       // l / r: full-stream requests one trace request stands for
  std::uint32_t ttl = 0;
};

// Calls fn(key, ttl, rate_qps) for every key of head name `rank` requested at `name_qps`
// in all: its qtypes (by share; one qtype per name: its own) x subnets (ECS names; the
// rate split evenly), then its stray keys. The trace's head lists exactly these keys.
template <class Fn>
void for_each_name_key(const TrafficProfile& t, std::uint64_t rank, double name_qps, std::uint64_t seed, Fn&& fn);

// Expected entries of head name `rank` held at the plateau, TTL-only: a key requested at
// l (Poisson) with TTL T is present a share l*T / (1 + l*T) of the time. An ECS name has
// a key per client subnet, most of them requested seldom: this is far below its number
// of possible keys.
double expected_resident_keys(const TrafficProfile& t, std::uint64_t rank, double name_qps, std::uint64_t seed);

class SampledTrace {
public:
  // `rate` is R (tail names kept with this probability), `head` = K, `rate_qps` the
  // instance's full query rate, `characteristic_s` Che's t_C (infinity: never fills).
  SampledTrace(const TrafficProfile& t, double rate, std::uint64_t seed, std::uint64_t head, double rate_qps,
               double characteristic_s);

  struct Draw {
    TraceKey key;
    std::int64_t head_index = -1;  // index into head_keys(), or -1 for a tail key
    double weight = 1;             // a head key's HeadKey::weight (1 for a tail key)
    std::uint32_t ttl = 0;         // a head key's HeadKey::ttl (0 for a tail key)
  };
  // The next n requests of the trace, with the table reads of the batch overlapped
  // (prefetched). REQUIRES: n <= kMaxBatch.
  static constexpr std::size_t kMaxBatch = 64;
  // Each call also draws the next call's picks ahead (assuming the same n) from a copy
  // of its generator and prefetches their alias cells: the sequence of draws is the same
  // whatever the sizes of the calls.
  void next_batch(Draw* out, std::size_t n);
  // Forgets the picks drawn ahead (the next call draws them again from the generator):
  // the draws stay the same; tests compare the two.
  void drop_lookahead() { ahead_count_ = 0; }

  double rate() const { return rate_; }
  std::uint64_t head() const { return head_; }  // ranks 1..head() are kept in full
  const std::vector<HeadKey>& head_keys() const { return head_keys_; }
  // The kept rank of tail block j (ranks head()+1+j/R .. head()+(j+1)/R); > names when
  // past the end. Block j is kept unless its rank equals block j-1's.
  std::uint64_t tail_rank(std::uint64_t block) const;
  std::uint64_t tail_blocks() const { return tail_alias_.size(); }
  double tail_weight() const { return tail_weight_; }  // share of all requests going to kept tail names
  double sampled_qps() const { return head_qps_ + tail_qps_; }  // requests per second of the trace

private:
  TrafficProfile t_;
  double rate_;
  std::uint64_t seed_;
  std::uint64_t head_;
  std::vector<HeadKey> head_keys_;
  AliasTable head_alias_;
  double block_ = 1;  // 1/R: ranks per tail block
  AliasTable tail_alias_;
  double tail_weight_ = 0, head_qps_ = 0, tail_qps_ = 0;
  std::uint64_t head_threshold_ = 0;  // a draw below this (of 2^64) is a head request
  SplitMix64 rng_;
  // One draw's first step: head or tail, and the random number its alias cell is read by.
  struct Pick {
    bool head = false;
    std::uint64_t value = 0;
  };
  // Draws n picks from `rng` (two numbers each) and prefetches their alias cells.
  void draw_picks(SplitMix64& rng, Pick* out, std::size_t n) const;
  Pick ahead_[kMaxBatch];         // the next call's first picks, drawn from a copy of rng_
  std::size_t ahead_count_ = 0;
  // What a draw copies of head_keys_[i] (key, weight, TTL: 40 bytes, not 56), packed on
  // huge pages: one read per head request.
  struct HeadDraw {
    TraceKey key;
    double weight = 1;
    std::uint32_t ttl = 0;
  };
  std::vector<HeadDraw, HugePageAllocator<HeadDraw>> head_draws_;
};

template <class Fn>
void for_each_name_key(const TrafficProfile& t, std::uint64_t rank, double name_qps, std::uint64_t seed, Fn&& fn) {
  const bool ecs = name_is_ecs(t, rank, seed);
  const std::uint32_t subnets = ecs ? std::max(1u, t.ecs_subnets) : 1u;
  const std::uint16_t own = t.qtype_per_name ? request_qtype(t, rank, seed, 0) : 0;
  for (const auto& [qtype, share] : qtype_shares(t)) {
    if (share <= 0 || (own && qtype != own)) continue;
    for (std::uint32_t s = 0; s < subnets; ++s) {
      TraceKey k;
      k.name = rank;
      k.qtype = qtype;
      k.ecs = ecs;
      k.subnet = ecs ? s : 0;
      fn(k, key_ttl(t, k, seed, nullptr), name_qps * (1.0 - t.stray_share()) * (own ? 1.0 : share) / subnets);
    }
  }
  for (std::uint32_t j = 0; t.stray_share() > 0 && j < t.stray_keys(); ++j) {
    TraceKey k;
    k.name = rank;
    k.qtype = static_cast<std::uint16_t>(kStrayQtype + j);
    fn(k, t.negative_ttl, name_qps * t.stray_share() / t.stray_keys());
  }
}

}  // namespace dnsarena::sim::fleet

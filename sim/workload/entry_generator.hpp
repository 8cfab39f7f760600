// SPDX-License-Identifier: GPL-3.0-or-later
// Deterministic generator of cache entries drawn from a traffic profile.
//
// The default profile (TrafficProfile{}) is the published fleet's benchmark mix: 56% A,
// 25% AAAA, 19% TXT (TXT stands for every other type); 1 to 4 records per entry; TXT
// rdata 64 to 224 bytes; names of 2-4 labels of 3-12 lowercase letters; TTL uniform in
// 60..3600 s. Entry i is a pure function of (profile, seed, i), so a benchmark can
// regenerate key i for lookups without storing all entries, and every layout (sim
// layouts), the bench and the synthetic upstream see the same data for the same seed.
//
// What the generator reads of the profile: qtype shares (one type per name), records,
// other_rdata_bytes (capped at 256: one character-string), labels, label_bytes, the TTL
// range (ttl.lowest()..ttl.highest(), uniform, also for a bucket list), negative_share
// (negative entries keep their drawn TTL), cname_share, and ecs_share / ecs_prefix /
// ecs_subnets (at least 1 subnet). The query-side fields (zipf, qps, stray) are not used.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "common/bytes.hpp"
#include "sim/workload/traffic_profile.hpp"

namespace dnsarena::sim {


using common::Bytes;  // owned wire bytes (common/bytes.hpp)

// The one record of a negative answer's authority section: the zone's SOA.
inline cache::RecordData soa_record(std::span<const std::uint8_t> apex, std::uint32_t ttl,
                                    std::span<const std::uint8_t> rdata) {
  cache::RecordData soa;
  soa.owner = apex;
  soa.type = 6;
  soa.ttl = ttl;
  soa.rdata = rdata;
  return soa;
}

// The profile of the entry benchmarks (`sim layouts`, `bench`, layout tests): the
// published mix, with ECS entries (when a share is set) keyed by one of 256 client /24s.
inline TrafficProfile benchmark_mix() {
  TrafficProfile p;
  p.ecs_subnets = 256;
  return p;
}

struct GeneratedEntry {
  Bytes qname;                 // wire form, lowercase
  std::uint16_t qtype = 0;
  std::uint32_t ttl = 0;
  std::uint8_t rcode = 0;      // 0, or 3 (NXDOMAIN) for negative answers
  bool negative = false;       // NXDOMAIN or NODATA: no answer records, SOA in authority
  Bytes cname_target;          // non-empty: answer is qname CNAME target, then the records
  cache::EcsTag ecs;           // family none unless the entry is ECS-keyed
  std::vector<Bytes> rdatas;   // one per record, wire form (owner: qname or cname_target)
  Bytes soa_rdata;             // negative answers only

  // Fills `records` (reused) and returns an Answer whose spans point into this entry.
  cache::Answer answer(std::vector<cache::RecordData>& records) const;
  cache::CacheKey key() const { return cache::CacheKey(qname, qtype, 0, ecs); }
};

class EntryGenerator {
public:
  EntryGenerator(const TrafficProfile& profile, std::uint64_t seed);
  // Entry number i; `out` is reused to avoid allocations.
  void generate(std::uint64_t i, GeneratedEntry& out) const;
  GeneratedEntry generate(std::uint64_t i) const {
    GeneratedEntry e;
    generate(i, e);
    return e;
  }
  const TrafficProfile& profile() const { return profile_; }

private:
  TrafficProfile profile_;
  std::uint32_t ttl_min_, ttl_max_;         // profile_.ttl as a uniform range
  std::uint32_t ecs_subnets_;               // at least 1
  unsigned txt_min_bytes_, txt_max_bytes_;  // other_rdata_bytes capped at 256
  std::uint64_t seed_;
};

// SplitMix64: a tiny, fast, well-mixed PRNG; deterministic across platforms.
struct SplitMix64 {
  std::uint64_t state;
  explicit SplitMix64(std::uint64_t s) : state(s) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

}  // namespace dnsarena::sim

// Deterministic generator of cache entries in the seed's benchmark mix.
//
// The seed's benchmark: 56% A, 25% AAAA, 19% TXT (TXT stands for every other type);
// 1 to 4 records per entry; TXT rdata 64 to 224 bytes; names of 2-4 labels of 3-12
// lowercase letters. Entry i is a pure function of (profile, seed, i), so a benchmark can
// regenerate key i for lookups without storing all entries, and every layout (sim
// layouts), the bench and the synthetic upstream see the same data for the same seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_codec.hpp"
#include "common/bytes.hpp"

namespace dnsarena::sim {

struct MixProfile {
  double share_a = 0.56;
  double share_aaaa = 0.25;
  double share_txt = 0.19;  // the rest of the types
  unsigned min_records = 1, max_records = 4;
  unsigned txt_min_bytes = 64, txt_max_bytes = 224;
  unsigned min_labels = 2, max_labels = 4;
  unsigned label_min = 3, label_max = 12;
  std::uint32_t ttl_min = 60, ttl_max = 3600;
  // Beyond the seed's mix (all 0 by default, so the default is exactly the seed's):
  double ecs_share = 0.0;        // share of entries keyed by an ECS client subnet
  std::uint8_t ecs_prefix = 24;  // scope prefix of those entries (IPv4)
  std::uint32_t ecs_subnets = 256;  // distinct client subnets an ECS entry may be keyed by
  double negative_share = 0.0;   // share of NXDOMAIN / NODATA answers (SOA in authority)
  double cname_share = 0.0;      // share of answers behind a CNAME (owner differs)
};

using common::Bytes;  // owned wire bytes (common/bytes.hpp)

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
  EntryGenerator(const MixProfile& profile, std::uint64_t seed) : p_(profile), seed_(seed) {}
  // Entry number i; `out` is reused to avoid allocations.
  void generate(std::uint64_t i, GeneratedEntry& out) const;
  GeneratedEntry generate(std::uint64_t i) const {
    GeneratedEntry e;
    generate(i, e);
    return e;
  }
  const MixProfile& profile() const { return p_; }

private:
  MixProfile p_;
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

// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena bench`: the cache benchmark, dnsarena against a naive heap cache
// (baseline_cache.hpp) in the same run, with the seed's mix and a fixed seed.
//
// Phases, in order (each on the same private segment):
//   calibrate  encode a sample to size the arena so that max_entries binds, not bytes
//   fill       insert `entries` entries through insert_batch (64 per lock acquisition),
//              timed per batch (key building + encode + insert)
//   measure    bytes/entry from the segment's own accounting, RSS/entry from /proc
//   lookups    uniform random hits incl. response building, per-op TSC timing (p50/p99);
//              batched (32 keys through lookup_responses, the pipelined path), then the
//              same over 1,024 in-cache entries (the compute alone) and the batched
//              rounds' loads and prefetches alone (the memory floor, no compute);
//              Zipf(0.9) popularity over all entries, and over the 1,024 hottest (a hot
//              set that fits in L2 and the TLB's reach: the in-cache figure)
//   dram       pointer chasing over a buffer as large as the segment: one dependent
//              chain (latency) and 8 or 16 independent chains (the MLP limit, mlp_ns)
//   2 procs    lookups/s of one process, then of two forked processes at once
//   evict      insert fresh entries into the full cache (every insert evicts), batched
//   baseline   the naive heap cache filled and measured the same way
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

#include "sim/workload/entry_generator.hpp"

namespace dnsarena::bench {

struct CacheBenchOptions {
  std::uint64_t entries = 4'000'000;
  std::uint64_t seed = 1;
  std::uint32_t region_bytes = 1u << 20;
  std::uint64_t lookups = 1'000'000;
  std::uint64_t evict_inserts = 1'000'000;
  bool baseline = true;
  sim::TrafficProfile mix = sim::benchmark_mix();
};

struct BaselineResult {
  bool measured = false;
  double bytes_per_entry = 0, insert_per_s = 0, lookup_ns_p50 = 0;
  bool bytes_from_allocator = false;  // jemalloc stats (else not measured)
};

struct CacheBenchResult {
  std::uint64_t entries = 0;            // live entries at full capacity
  std::uint64_t requested_entries = 0;
  double bytes_per_entry = 0;           // (index + arena in use + fixed) / live
  double segment_bytes_per_entry = 0;   // whole segment (incl. reserved arena) / live
  double rss_per_entry = 0;             // (RssShmem + RssAnon) growth / live
  double insert_per_s = 0;
  double evict_insert_per_s = 0;
  double lookup_ns_p50 = 0, lookup_ns_p99 = 0;
  double lookup_batched_ns = 0;
  double lookup_batched_hot_ns = 0;     // the same over zipf_hot_entries in-cache entries: compute per hit
  double lookup_batched_memory_ns = 0;  // batched rounds' loads and prefetches alone (no compute): memory per hit
  double lookup_batched_lines = 0;      // distinct 64-byte lines a batched hit reads (buckets + entry)
  double lookup_zipf_ns_p50 = 0;        // Zipf(0.9) over all entries
  double lookup_zipf_hot_ns_p50 = 0;    // Zipf(0.9) over the hottest zipf_hot_entries only
  std::uint64_t zipf_hot_entries = 0;
  double dram_ns = 0;                   // one dependent chain: ns per access
  double mlp8_ns = 0, mlp16_ns = 0;     // 8 / 16 independent chains: ns per access
  double mlp_ns = 0;                    // the faster of the two
  double lookup_2proc_speedup = 0;
  double lookups_per_s_1proc = 0, lookups_per_s_2proc = 0;
  double hit_ratio = 0;                 // of the uniform lookups (should be ~1)
  std::uint64_t conflict_evictions = 0, evictions = 0, second_chances = 0;
  std::uint64_t segment_bytes = 0;
  double segment_huge_page_share = 0;   // of its resident bytes, on 2 MiB pages (the chases match it)
  BaselineResult baseline;
};

CacheBenchResult run_cache_bench(const CacheBenchOptions& options, std::ostream& progress);

}  // namespace dnsarena::bench

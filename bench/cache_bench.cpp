// SPDX-License-Identifier: GPL-3.0-or-later
#include "cache_bench.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "baseline_cache.hpp"
#include "cache/cache.hpp"
#include "cache/cache_lab_hooks.hpp"
#include "common/proc_stats.hpp"
#include "measure.hpp"

namespace dnsarena::bench {

namespace {

using cache::Cache;
using cache::CacheKey;

constexpr std::uint32_t kNow = 1'800'000'000;  // a fixed simulated clock: TTLs never run out
constexpr std::size_t kBatch = 32;
// The hot set of the in-cache Zipf figure: 1,024 entries. A single lookup touches its
// bucket's line, the second bucket's (prefetched), and the entry's 2-3 lines (136 B mean,
// any alignment): ~300 B, so ~300 KiB in all, within this machine's 1 MiB L2; and ~3,000
// distinct 4 KiB pages, within the reach of its second-level TLB (a pointer chase of one
// line per page slows several-fold between 4,096 and 6,144 pages). 2,048 entries (~6,000
// pages) fit the L2 but not the TLB.
constexpr std::uint64_t kZipfHotEntries = 1024;

// Zipf(s) over ranks 1..n by inverse CDF (binary search in a precomputed table); rank r is
// mapped to a pseudo-random entry of [0, universe) so popularity is not correlated with
// insertion order. The same rank maps to the same entry whatever n, so a sampler over the
// hottest n ranks of a larger cache picks that cache's hottest entries.
class ZipfSampler {
public:
  ZipfSampler(std::uint64_t n, double s, std::uint64_t universe) : cdf_(n), universe_(universe) {
    double sum = 0;
    for (std::uint64_t k = 0; k < n; ++k) cdf_[k] = (sum += 1.0 / std::pow(static_cast<double>(k + 1), s));
    for (auto& c : cdf_) c /= sum;
  }
  std::uint64_t sample_rank(sim::SplitMix64& rng) const {
    const double u = rng.unit();
    return static_cast<std::uint64_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }
  std::uint64_t entry_of(std::uint64_t rank) const { return (rank * 0x9E3779B97F4A7C15ULL + 12345) % universe_; }
  std::uint64_t sample(sim::SplitMix64& rng) const { return entry_of(sample_rank(rng)); }

private:
  std::vector<double> cdf_;
  std::uint64_t universe_;
};

const std::uint8_t* line_start(const std::uint8_t* p) {
  return reinterpret_cast<const std::uint8_t*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{63});
}

std::string segment_name() { return "dnsarena-bench-" + std::to_string(::getpid()); }

// Mean padded entry size over a sample, to size the arena.
double mean_entry_bytes(const sim::EntryGenerator& gen, std::uint64_t sample) {
  sim::GeneratedEntry e;
  std::vector<cache::RecordData> recs;
  std::vector<std::uint8_t> buf;
  double total = 0;
  for (std::uint64_t i = 0; i < sample; ++i) {
    gen.generate(1'000'000'000ULL + i, e);
    cache::encode_entry(e.key(), e.answer(recs), kNow, buf);
    total += static_cast<double>(buf.size());
  }
  return total / static_cast<double>(sample);
}

// Inserts entries [first, first+count) and returns entries per second of timed work.
template <class InsertFn>
double timed_inserts(const sim::EntryGenerator& gen, std::uint64_t first, std::uint64_t count, InsertFn&& insert) {
  std::vector<sim::GeneratedEntry> batch(4096);
  std::vector<cache::RecordData> recs;
  double seconds = 0;
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min<std::uint64_t>(batch.size(), count - done);
    for (std::uint64_t i = 0; i < n; ++i) gen.generate(first + done + i, batch[i]);
    const std::uint64_t t0 = steady_ns();
    for (std::uint64_t i = 0; i < n; ++i) {
      const sim::GeneratedEntry& e = batch[i];
      insert(e.key(), e.answer(recs));
    }
    seconds += seconds_since(t0);
    done += n;
  }
  return static_cast<double>(count) / seconds;
}

// The same for the cache, through insert_batch() in groups of Cache::kMaxBatch (as a
// worker inserting the answers of one receive batch): keys, answers and inserts timed.
// Each key is built in place (CacheKey::assign, as a worker's batch does): building a
// temporary and copying it (~280 bytes) would be bench-only work in the timed loop.
double timed_batch_inserts(const sim::EntryGenerator& gen, std::uint64_t first, std::uint64_t count, Cache& c) {
  constexpr std::size_t kGroup = Cache::kMaxBatch;
  std::vector<sim::GeneratedEntry> batch(4096);
  std::vector<std::vector<cache::RecordData>> recs(kGroup);
  std::vector<CacheKey> keys(kGroup);
  std::vector<cache::Answer> answers(kGroup);
  cache::InsertItem items[kGroup];
  double seconds = 0;
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min<std::uint64_t>(batch.size(), count - done);
    for (std::uint64_t i = 0; i < n; ++i) gen.generate(first + done + i, batch[i]);
    const std::uint64_t t0 = steady_ns();
    for (std::uint64_t g = 0; g < n; g += kGroup) {
      const std::size_t m = static_cast<std::size_t>(std::min<std::uint64_t>(kGroup, n - g));
      for (std::size_t i = 0; i < m; ++i) {
        const sim::GeneratedEntry& e = batch[g + i];
        keys[i].assign(e.qname, e.qtype, 0, e.ecs);
        answers[i] = e.answer(recs[i]);
        items[i] = {&keys[i], &answers[i]};
      }
      c.insert_batch({items, m}, kNow);
    }
    seconds += seconds_since(t0);
    done += n;
  }
  return static_cast<double>(count) / seconds;
}

cache::QueryInfo query_for(const sim::GeneratedEntry& e, std::uint16_t id) {
  cache::QueryInfo q;
  q.id = id;
  q.qname = e.qname;
  q.qtype = e.qtype;
  return q;
}

// Per-lookup latency samples: key building + lookup + response, TSC-timed. `next()`
// returns the entry to look up (generated or picked outside the timed part).
template <class NextFn, class LookupFn>
std::vector<double> timed_lookups(std::uint64_t count, const TscClock& tsc, NextFn&& next, LookupFn&& lookup,
                                  std::uint64_t* hits) {
  std::vector<double> samples;
  samples.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const sim::GeneratedEntry& e = next();
    const std::uint64_t t0 = TscClock::ticks();
    const CacheKey key = e.key();
    const bool hit = lookup(key, query_for(e, static_cast<std::uint16_t>(i)));
    const std::uint64_t t1 = TscClock::ticks();
    *hits += hit;
    samples.push_back(std::max(0.0, tsc.to_ns(t1 - t0) - tsc.overhead_ns()));
  }
  return samples;
}

// timed_lookups over entries generated one at a time by `pick()`'s index.
template <class PickFn, class LookupFn>
std::vector<double> timed_lookups(const sim::EntryGenerator& gen, std::uint64_t count, const TscClock& tsc, PickFn&& pick,
                                  LookupFn&& lookup, std::uint64_t* hits) {
  sim::GeneratedEntry e;
  auto next = [&]() -> const sim::GeneratedEntry& {
    gen.generate(pick(), e);
    return e;
  };
  return timed_lookups(count, tsc, next, lookup, hits);
}

// Zipf(0.9) over the kZipfHotEntries hottest entries only (ranks 1..n of the full run's
// sampler, so the same entries): the case "where the hot set fits in cache". The entries
// and the sampled sequence are made before the timed loop, and every hot entry is looked
// up once untimed, so the timed lookups touch only the hot set's lines, the sequence and
// the response buffer.
template <class LookupFn>
std::vector<double> timed_hot_zipf_lookups(const sim::EntryGenerator& gen, std::uint64_t entries, std::uint64_t count,
                                           const TscClock& tsc, sim::SplitMix64& rng, LookupFn&& lookup,
                                           std::uint64_t* hits) {
  const std::uint64_t n = std::min<std::uint64_t>(kZipfHotEntries, entries);
  const ZipfSampler zipf(n, 0.9, entries);
  std::vector<sim::GeneratedEntry> hot(n);
  for (std::uint64_t r = 0; r < n; ++r) gen.generate(zipf.entry_of(r), hot[r]);
  std::vector<std::uint32_t> sequence(count);
  for (auto& r : sequence) r = static_cast<std::uint32_t>(zipf.sample_rank(rng));
  std::uint64_t warm_hits = 0;
  for (std::uint64_t r = 0; r < n; ++r) warm_hits += lookup(hot[r].key(), query_for(hot[r], 0));
  (void)warm_hits;
  std::uint64_t i = 0;
  auto next = [&]() -> const sim::GeneratedEntry& { return hot[sequence[i++]]; };
  return timed_lookups(count, tsc, next, lookup, hits);
}

// One timed round of the batched phase: builds the keys of `entries`, looks them up in
// one batch and writes each hit's response into `out` (overwritten by the next). Returns
// the hits answered. Not inlined, so that callgrind can count its instructions alone:
//   valgrind --tool=callgrind --toggle-collect='*batched_lookup_round(*long)' dnsarena bench ...
// (instructions per hit = Ir / (rounds * kBatch)).
[[gnu::noinline, gnu::noclone]] std::uint64_t batched_lookup_round(Cache& c, const std::vector<sim::GeneratedEntry>& entries,
                                                     std::uint8_t* out, std::size_t capacity) {
  CacheKey keys[kBatch];
  cache::QueryInfo queries[kBatch];
  cache::ResponseLookup batch[kBatch];
  static const cache::ResponseOptions options;
  for (std::size_t i = 0; i < kBatch; ++i) {
    keys[i].assign(entries[i].qname, entries[i].qtype, 0, entries[i].ecs);  // in place, as a worker's batch
    queries[i] = query_for(entries[i], 7);
    batch[i] = {&keys[i], &queries[i], &options, out, capacity};
  }
  c.lookup_responses(batch, kNow);
  std::uint64_t hits = 0;
  for (const cache::ResponseLookup& q : batch) hits += q.response.size != 0;
  return hits;
}

// What one key of a batched round reads (Cache::lookup_footprint): its two bucket lines
// and, for a hit, its entry.
struct RoundKey {
  const std::uint8_t* bucket1;
  const std::uint8_t* bucket2;
  const std::uint8_t* entry;  // nullptr: a miss
  std::size_t entry_bytes;
};

// One round of the memory floor: the loads of a batched round (lookup_responses,
// cache/cache_batch_read.cpp) in its stages and with its prefetches, and nothing else.
//   1. both bucket lines of every key prefetched
//   2. bucket 1 loaded (the tag scan's first line), the entry's first two lines
//      prefetched (prefetch_entry_lines)
//   3. every line of the entry loaded
// Each memory access here is one the real round makes too, in the same order, and none
// waits on another (the entry's address is known: the real stage 2 waits for the bucket
// to learn it), so the round cannot take longer than the real one: a lower bound.
// Not inlined, so that the timed code is this alone.
[[gnu::noinline, gnu::noclone]] std::uint64_t memory_floor_round(const RoundKey* keys, std::size_t n) {
  std::uint64_t sink = 0;
  auto load = [](const void* p) { return __atomic_load_n(static_cast<const std::uint64_t*>(p), __ATOMIC_RELAXED); };
  for (std::size_t i = 0; i < n; ++i) {
    __builtin_prefetch(keys[i].bucket1);
    __builtin_prefetch(keys[i].bucket2);
  }
  for (std::size_t i = 0; i < n; ++i) {
    sink += load(keys[i].bucket1);
    if (keys[i].entry == nullptr) continue;
    __builtin_prefetch(keys[i].entry);
    __builtin_prefetch(keys[i].entry + 64);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* e = keys[i].entry;
    if (e == nullptr) continue;
    // One aligned word in each line of [e, e + entry_bytes) (entries are 8-byte aligned).
    for (const std::uint8_t* l = e; l < e + keys[i].entry_bytes; l = line_start(l) + 64) sink += load(l);
  }
  return sink;
}

// See memory_floor_phase. Returns ns per hit; *lines_per_hit gets the
// distinct 64-byte lines per hit.
double batched_memory_floor_ns(const Cache& c, const sim::EntryGenerator& gen, std::uint64_t entries, std::uint64_t rounds,
                               sim::SplitMix64& rng, double* lines_per_hit) {
  std::vector<RoundKey> keys(rounds * kBatch);
  sim::GeneratedEntry e;
  std::uint64_t hits = 0, lines = 0;
  for (RoundKey& k : keys) {
    gen.generate(rng.next() % entries, e);
    const cache::LookupFootprint f = cache::CacheLabHooks::lookup_footprint(c, e.key());
    k = {static_cast<const std::uint8_t*>(f.buckets[0]), static_cast<const std::uint8_t*>(f.buckets[1]), f.entry,
         f.entry_bytes};
    lines += k.bucket1 == k.bucket2 ? 1 : 2;
    if (k.entry == nullptr) continue;
    ++hits;
    lines += static_cast<std::uint64_t>(line_start(k.entry + k.entry_bytes - 1) - line_start(k.entry)) / 64 + 1;
  }
  if (hits == 0) throw std::runtime_error("batched_memory_floor_ns: no hits");
  *lines_per_hit = static_cast<double>(lines) / static_cast<double>(hits);
  double seconds = 0;
  std::uint64_t sink = 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    const std::uint64_t t0 = steady_ns();
    sink += memory_floor_round(keys.data() + round * kBatch, kBatch);
    seconds += seconds_since(t0);
  }
  asm volatile("" : : "r"(sink));
  return seconds * 1e9 / static_cast<double>(hits);
}

// Lookups per second over a fixed key set, in this process.
double lookup_rate(cache::Segment& seg, const std::vector<sim::GeneratedEntry>& keys, std::uint64_t count, std::uint64_t seed) {
  Cache c(seg, cache::SlotRole::tool);
  sim::SplitMix64 rng(seed);
  std::uint8_t out[4096];
  std::uint64_t hits = 0;
  const std::uint64_t t0 = steady_ns();
  for (std::uint64_t i = 0; i < count; ++i) {
    const sim::GeneratedEntry& e = keys[rng.next() % keys.size()];
    hits += c.lookup_response(e.key(), query_for(e, 1), kNow, {}, out, sizeof out).size != 0;
  }
  const double s = seconds_since(t0);
  if (hits == 0) throw std::runtime_error("lookup_rate: no hits");
  return static_cast<double>(count) / s;
}

// Runs lookup_rate in `procs` forked processes at once; returns their total rate.
double multi_process_lookup_rate(cache::Segment& seg, const std::vector<sim::GeneratedEntry>& keys, std::uint64_t count,
                                 int procs) {
  int fds[8][2];
  std::vector<pid_t> pids;
  for (int p = 0; p < procs; ++p) {
    if (::pipe(fds[p]) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      double rate = 0;
      try {
        rate = lookup_rate(seg, keys, count, 1000 + static_cast<std::uint64_t>(p));
      } catch (...) {
      }
      (void)!::write(fds[p][1], &rate, sizeof rate);
      ::_exit(rate > 0 ? 0 : 1);
    }
    ::close(fds[p][1]);
    pids.push_back(pid);
  }
  double total = 0;
  for (int p = 0; p < procs; ++p) {
    double rate = 0;
    if (::read(fds[p][0], &rate, sizeof rate) != sizeof rate) rate = 0;
    ::close(fds[p][0]);
    int status = 0;
    ::waitpid(pids[static_cast<std::size_t>(p)], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("lookup child failed");
    total += rate;
  }
  return total;
}

BaselineResult run_baseline(const CacheBenchOptions& o, const sim::EntryGenerator& gen, const TscClock& tsc,
                            std::ostream& progress) {
  BaselineResult r;
  progress << "baseline: filling " << o.entries << " entries into the naive heap cache\n" << std::flush;
  const std::uint64_t heap0 = heap_allocated_bytes();
  auto base = std::make_unique<BaselineCache>();
  r.insert_per_s = timed_inserts(gen, 0, o.entries, [&](const CacheKey& k, const cache::Answer& a) {
    base->insert(k, a, kNow);
  });
  const std::uint64_t heap1 = heap_allocated_bytes();
  r.bytes_from_allocator = heap_accounting_available();
  if (base->size()) r.bytes_per_entry = static_cast<double>(heap1 - heap0) / static_cast<double>(base->size());
  sim::SplitMix64 rng(o.seed ^ 0xBA5E);
  std::uint64_t hits = 0;
  std::uint8_t out[4096];
  auto samples = timed_lookups(
      gen, std::min<std::uint64_t>(o.lookups, 500'000), tsc, [&] { return rng.next() % o.entries; },
      [&](const CacheKey& k, const cache::QueryInfo& q) { return base->lookup_response(k, q, kNow, out, sizeof out) != 0; },
      &hits);
  r.lookup_ns_p50 = median(samples);
  r.measured = true;
  progress << "baseline: freeing\n" << std::flush;
  return r;
}

// The private segment of one run, sized for `o.entries` entries of `mean_entry` bytes,
// created and populated; and this process's memory just before it was created, from
// which the fill's RSS per entry is counted.
struct BenchSegment {
  cache::Segment seg;
  ProcMemory before;
};

BenchSegment create_segment(const CacheBenchOptions& o, double mean_entry, CacheBenchResult& r, std::ostream& progress) {
  cache::Geometry g;
  g.max_entries = o.entries;
  g.region_bytes = o.region_bytes;
  g.arena_bytes = static_cast<std::uint64_t>(mean_entry * static_cast<double>(o.entries) * 1.04) + 3ull * o.region_bytes;
  const std::string name = segment_name();
  cache::Segment::remove(name);
  const ProcMemory before = read_proc_memory();
  // Every page mapped before the fill (Segment::populate): the insert rate then takes no
  // first-touch page faults (a cold serve does, once per 4 KiB page), and what the
  // mapping costs is shown here, apart from the insert rate.
  const std::uint64_t create_t0 = steady_ns();
  cache::Segment seg = cache::Segment::create(name, g);
  seg.populate();
  const double create_ms = seconds_since(create_t0) * 1e3;
  seg.set_remove_on_destroy(true);
  r.segment_bytes = seg.layout().total_bytes;
  // How much of the populated segment the kernel mapped with 2 MiB pages: none from
  // /dev/shm unless its tmpfs is mounted huge=within_size or huge=always (the segment's
  // pages are reserved by posix_fallocate, which MADV_HUGEPAGE does not reach:
  // common::shm_huge_pages_unavailable). The pointer chases of dram_phase use the same page size.
  const common::MappingPages pages = common::mapping_pages(seg.base());
  r.segment_huge_page_share = pages.resident ? static_cast<double>(pages.huge) / static_cast<double>(pages.resident) : 0;
  progress << "arena: mean entry " << mean_entry << " B, segment " << (r.segment_bytes >> 20)
           << " MiB created and populated in " << static_cast<long>(create_ms) << " ms, filling " << o.entries
           << " entries\n"
           << std::flush;
  return {std::move(seg), before};
}

// fill: `o.entries` entries through insert_batch; bytes/entry from the segment's own
// accounting, RSS/entry from /proc against `before`.
void fill_phase(const CacheBenchOptions& o, const sim::EntryGenerator& gen, Cache& c, const ProcMemory& before,
                CacheBenchResult& r) {
  r.insert_per_s = timed_batch_inserts(gen, 0, o.entries, c);
  const cache::CacheStats st = c.stats();
  r.entries = st.live_entries;
  r.bytes_per_entry = st.bytes_per_entry();
  r.segment_bytes_per_entry = static_cast<double>(st.segment_bytes) / static_cast<double>(st.live_entries);
  const ProcMemory after = read_proc_memory();
  r.rss_per_entry = static_cast<double>((after.rss_shmem + after.rss_anon) - (before.rss_shmem + before.rss_anon)) /
                    static_cast<double>(st.live_entries);
}

// What the lookup phases share: the filled cache, one random stream (its draws, phase
// after phase, fix the keys every phase looks up for a seed) and a response buffer.
struct LookupPhases {
  const CacheBenchOptions& o;
  const sim::EntryGenerator& gen;
  const TscClock& tsc;
  Cache& c;
  std::ostream& progress;
  sim::SplitMix64 rng;
  std::uint8_t out[4096] = {};

  bool lookup(const CacheKey& k, const cache::QueryInfo& q) {
    return c.lookup_response(k, q, kNow, {}, out, sizeof out).size != 0;
  }
  // Rounds of kBatch keys in each batched phase.
  std::uint64_t batched_rounds() const { return std::max<std::uint64_t>(1, o.lookups / kBatch); }
};

// Uniform random hits, one at a time, TSC-timed: p50, p99 and the hit ratio.
void uniform_lookup_phase(LookupPhases& p, CacheBenchResult& r) {
  std::uint64_t hits = 0;
  auto samples = timed_lookups(
      p.gen, p.o.lookups, p.tsc, [&] { return p.rng.next() % p.o.entries; },
      [&](const CacheKey& k, const cache::QueryInfo& q) { return p.lookup(k, q); }, &hits);
  r.hit_ratio = static_cast<double>(hits) / static_cast<double>(p.o.lookups);
  r.lookup_ns_p50 = percentile(samples, 50);
  r.lookup_ns_p99 = percentile(samples, 99);
}

// Batched lookups with prefetching: keys built, looked up and answered 32 at a time.
void batched_lookup_phase(LookupPhases& p, CacheBenchResult& r) {
  std::vector<sim::GeneratedEntry> entries(kBatch);
  const std::uint64_t rounds = p.batched_rounds();
  double seconds = 0;
  std::uint64_t hits = 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    for (auto& e : entries) p.gen.generate(p.rng.next() % p.o.entries, e);
    const std::uint64_t t0 = steady_ns();
    hits += batched_lookup_round(p.c, entries, p.out, sizeof p.out);
    seconds += seconds_since(t0);
  }
  r.lookup_batched_ns = seconds * 1e9 / static_cast<double>(rounds * kBatch);
  if (hits < rounds * kBatch * 9 / 10) p.progress << "warning: batched lookups missed\n";
}

// The same batched rounds over kZipfHotEntries entries only, warmed first: their bucket
// and entry lines stay in L2 and their pages in the TLB, so what is left is the compute
// per hit, the part of lookup_batched_ns no prefetching can hide.
void in_cache_batched_phase(LookupPhases& p, CacheBenchResult& r) {
  const std::uint64_t rounds = p.batched_rounds();
  const std::uint64_t n = std::min<std::uint64_t>(kZipfHotEntries, p.o.entries);
  std::vector<sim::GeneratedEntry> hot(n);
  for (std::uint64_t i = 0; i < n; ++i) p.gen.generate(i * (p.o.entries / n), hot[i]);
  std::vector<sim::GeneratedEntry> entries(kBatch);
  auto pick_hot = [&] {
    for (auto& e : entries) e = hot[p.rng.next() % n];
  };
  for (std::uint64_t w = 0; w < 4 * n / kBatch + 1; ++w) {  // warm: every hot entry ~4 times
    pick_hot();
    batched_lookup_round(p.c, entries, p.out, sizeof p.out);
  }
  double seconds = 0;
  std::uint64_t hits = 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    pick_hot();
    const std::uint64_t t0 = steady_ns();
    hits += batched_lookup_round(p.c, entries, p.out, sizeof p.out);
    seconds += seconds_since(t0);
  }
  r.lookup_batched_hot_ns = seconds * 1e9 / static_cast<double>(rounds * kBatch);
  if (hits != rounds * kBatch) p.progress << "warning: in-cache batched lookups missed\n";
}

// The memory floor: rounds of fresh random keys like the batched phase's, whose lines
// (both buckets, every line of the matched entry) are found untimed first, all rounds
// before any is timed, so that the first rounds' lines are long evicted by the time they
// are loaded and the last ones' by the timed loads of the others. Then each round makes
// only a batched round's memory accesses, with its prefetches, in its stages
// (memory_floor_round): a lower bound of the real rounds, which also wait for a bucket to
// learn the entry's address and compute the response.
void memory_floor_phase(LookupPhases& p, CacheBenchResult& r) {
  const std::uint64_t floor_rounds = std::min<std::uint64_t>(p.batched_rounds(), (1u << 20) / kBatch);
  r.lookup_batched_memory_ns = batched_memory_floor_ns(p.c, p.gen, p.o.entries, floor_rounds, p.rng, &r.lookup_batched_lines);
}

// Zipf(0.9) popularity over all entries, then over the hottest kZipfHotEntries.
void zipf_lookup_phase(LookupPhases& p, CacheBenchResult& r) {
  auto lookup = [&](const CacheKey& k, const cache::QueryInfo& q) { return p.lookup(k, q); };
  const ZipfSampler zipf(p.o.entries, 0.9, p.o.entries);
  std::uint64_t hits = 0;
  auto all = timed_lookups(p.gen, p.o.lookups, p.tsc, [&] { return zipf.sample(p.rng); }, lookup, &hits);
  r.lookup_zipf_ns_p50 = median(all);
  std::uint64_t hot_hits = 0;
  auto hot = timed_hot_zipf_lookups(p.gen, p.o.entries, p.o.lookups, p.tsc, p.rng, lookup, &hot_hits);
  r.zipf_hot_entries = std::min<std::uint64_t>(kZipfHotEntries, p.o.entries);
  r.lookup_zipf_hot_ns_p50 = median(hot);
  if (hot_hits != p.o.lookups) p.progress << "warning: hot-set Zipf lookups missed\n";
}

// lookups: every lookup phase on the filled cache, in this order (they share one
// random stream).
void lookup_phases(const CacheBenchOptions& o, const sim::EntryGenerator& gen, const TscClock& tsc, Cache& c,
                   CacheBenchResult& r, std::ostream& progress) {
  progress << "lookups: uniform, batched, zipf\n" << std::flush;
  LookupPhases p{o, gen, tsc, c, progress, sim::SplitMix64(o.seed ^ 0x100C)};
  uniform_lookup_phase(p, r);
  batched_lookup_phase(p, r);
  in_cache_batched_phase(p, r);
  memory_floor_phase(p, r);
  zipf_lookup_phase(p, r);
}

// dram: pointer chasing over a buffer as large as the segment, with its page size.
void dram_phase(const CacheBenchOptions& o, CacheBenchResult& r, std::ostream& progress) {
  progress << "dram: pointer chasing over " << (r.segment_bytes >> 20) << " MiB\n" << std::flush;
  const MlpResult mlp = mlp_ns_per_access(
      r.segment_bytes, o.seed,
      r.segment_huge_page_share >= 0.5 ? common::PageAdvice::huge_pages : common::PageAdvice::small_pages);
  r.dram_ns = mlp.dependent_ns;
  r.mlp8_ns = mlp.chains8_ns;
  r.mlp16_ns = mlp.chains16_ns;
  r.mlp_ns = mlp.fastest();
}

// 2 procs: lookups/s of one process, then of two forked processes at once.
void two_process_phase(const CacheBenchOptions& o, const sim::EntryGenerator& gen, cache::Segment& seg,
                       CacheBenchResult& r, std::ostream& progress) {
  progress << "two processes\n" << std::flush;
  std::vector<sim::GeneratedEntry> keys(std::min<std::uint64_t>(o.entries, 200'000));
  sim::SplitMix64 rng(o.seed ^ 0x2);
  for (auto& e : keys) gen.generate(rng.next() % o.entries, e);
  const std::uint64_t count = std::max<std::uint64_t>(o.lookups, 200'000);
  r.lookups_per_s_1proc = multi_process_lookup_rate(seg, keys, count, 1);
  r.lookups_per_s_2proc = multi_process_lookup_rate(seg, keys, count, 2);
  r.lookup_2proc_speedup = r.lookups_per_s_2proc / r.lookups_per_s_1proc;
}

// evict: fresh entries into the full cache (every insert evicts), batched.
void evict_phase(const CacheBenchOptions& o, const sim::EntryGenerator& gen, cache::Segment& seg, CacheBenchResult& r,
                 std::ostream& progress) {
  progress << "evicting inserts: " << o.evict_inserts << " fresh entries into the full cache\n" << std::flush;
  Cache c(seg, cache::SlotRole::tool);
  r.evict_insert_per_s = timed_batch_inserts(gen, o.entries, o.evict_inserts, c);
  const cache::CacheStats st = c.stats();
  r.evictions = st.counter(cache::Counter::evictions);
  r.second_chances = st.counter(cache::Counter::second_chances);
  r.conflict_evictions = st.counter(cache::Counter::conflict_evictions);
}

}  // namespace

// The phases of cache_bench.hpp, in order, on one private segment.
CacheBenchResult run_cache_bench(const CacheBenchOptions& o, std::ostream& progress) {
  if (o.entries < 1000) throw std::invalid_argument("--entries must be at least 1000");
  CacheBenchResult r;
  r.requested_entries = o.entries;
  const sim::EntryGenerator gen(o.mix, o.seed);
  const TscClock tsc;
  const double mean_entry = mean_entry_bytes(gen, 20'000);  // calibrate
  BenchSegment s = create_segment(o, mean_entry, r, progress);
  {
    Cache c(s.seg, cache::SlotRole::tool);
    fill_phase(o, gen, c, s.before, r);
    lookup_phases(o, gen, tsc, c, r, progress);
  }
  dram_phase(o, r, progress);
  two_process_phase(o, gen, s.seg, r, progress);
  evict_phase(o, gen, s.seg, r, progress);
  if (o.baseline) r.baseline = run_baseline(o, gen, tsc, progress);
  return r;
}

}  // namespace dnsarena::bench

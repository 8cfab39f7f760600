// SPDX-License-Identifier: GPL-3.0-or-later
// measure_layouts(): fill each layout with the same generated entries, account its
// memory, and time inserts and lookups (find + build the DNS response).
//
// Timing: inserts are timed per batch of kBatch entries (generation is outside the
// timed region) and reported as entries / total timed seconds. Lookups pick
// kMaxLookups random inserted keys (the same sequence for every layout), prepared in
// batches outside the timed region, and time each lookup alone with steady_clock; the
// median overhead of an empty timed region is subtracted. Every lookup must hit.
// First-touch page faults are kept out of all timings (memory_warmup.hpp).
#include "layout_measure.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "cache/cache.hpp"
#include "layout.hpp"
#include "memory_warmup.hpp"

namespace dnsarena::sim {

namespace {

using Clock = std::chrono::steady_clock;
using layouts::EntryInput;
using layouts::Layout;
using layouts::LookupInput;

constexpr std::size_t kBatch = 1024;
constexpr std::uint64_t kMaxLookups = 200'000;
constexpr std::uint64_t kCalibrationSample = 20'000;
// The simulated clock: inserts at kNow, lookups one second later.
constexpr std::uint32_t kNow = 1'767'225'600;  // 2026-01-01T00:00:00Z

// Generated entries of one batch and the answers / inputs pointing into them.
struct Batch {
  std::vector<GeneratedEntry> entries = std::vector<GeneratedEntry>(kBatch);
  std::vector<std::vector<cache::RecordData>> records = std::vector<std::vector<cache::RecordData>>(kBatch);
  std::vector<cache::Answer> answers = std::vector<cache::Answer>(kBatch);
  std::vector<EntryInput> inputs = std::vector<EntryInput>(kBatch);
  std::vector<LookupInput> lookups = std::vector<LookupInput>(kBatch);

  void fill(const EntryGenerator& gen, std::uint64_t first, std::size_t n, const std::uint64_t* indices = nullptr) {
    for (std::size_t j = 0; j < n; ++j) {
      GeneratedEntry& e = entries[j];
      gen.generate(indices ? indices[j] : first + j, e);
      answers[j] = e.answer(records[j]);
      inputs[j] = EntryInput{e.qname, e.qtype, 0, e.ecs, &answers[j]};
      LookupInput& q = lookups[j];
      q.query = cache::QueryInfo{};
      q.query.id = static_cast<std::uint16_t>(first + j);
      q.query.qname = e.qname;
      q.query.qtype = e.qtype;
      q.flags = 0;
      q.ecs = e.ecs;
    }
  }
};

double calibrate_mean_padded_bytes(const EntryGenerator& gen, std::uint64_t entries) {
  const std::uint64_t n = std::min(entries, kCalibrationSample);
  std::vector<cache::RecordData> records;
  std::vector<std::uint8_t> buf;
  double total = 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    const GeneratedEntry e = gen.generate(k * entries / n);
    const cache::Answer a = e.answer(records);
    cache::encode_entry(e.key(), a, kNow, buf);
    total += static_cast<double>(buf.size());
  }
  return n ? total / static_cast<double>(n) : 64.0;
}

std::unique_ptr<Layout> make_layout(const std::string& name, std::uint64_t entries, double mean_padded) {
  if (name == "v0") return layouts::make_layout_v0();
  if (name == "v1") return layouts::make_layout_v1();
  if (name == "v2") return layouts::make_layout_v2();
  if (name == "v3") return layouts::make_layout_v3();
  if (name == "v4") return layouts::make_layout_v4();
  if (name == "v5") return layouts::make_layout_v5();
  if (name == "arena") return layouts::make_layout_arena(entries, mean_padded);
  throw std::invalid_argument("unknown layout '" + name + "'");
}

double timer_overhead_ns() {
  std::vector<double> s(1001);
  for (double& v : s) {
    const auto t0 = Clock::now();
    const auto t1 = Clock::now();
    v = std::chrono::duration<double, std::nano>(t1 - t0).count();
  }
  std::nth_element(s.begin(), s.begin() + 500, s.end());
  return s[500];
}

LayoutRow measure_one(Layout& layout, const EntryGenerator& gen, std::uint64_t entries, std::uint64_t seed,
                      bool measure_speed, std::uint64_t* live_out = nullptr) {
  LayoutRow row{layout.name(), 0, 0, 0, 0, 0};
  Batch batch;
  double insert_seconds = 0;
  std::uint64_t rejected = 0;
  for (std::uint64_t first = 0; first < entries; first += kBatch) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, entries - first));
    batch.fill(gen, first, n);
    const auto t0 = Clock::now();
    for (std::size_t j = 0; j < n; ++j) rejected += !layout.insert(batch.inputs[j], kNow);
    insert_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  if (rejected) throw std::runtime_error(layout.name() + ": " + std::to_string(rejected) + " inserts rejected");
  const layouts::LayoutMemory mem = layout.memory();
  if (mem.entries == 0) throw std::runtime_error(layout.name() + ": no entries stored");
  if (live_out) *live_out = mem.entries;
  const double live = static_cast<double>(mem.entries);
  row.net_bytes = mem.net_bytes / live;
  row.alloc_bytes = mem.alloc_bytes / live;
  row.allocs = mem.allocs / live;
  if (!measure_speed) return row;
  row.insert_per_s = static_cast<double>(entries) / insert_seconds;

  const std::uint64_t lookups = std::min(entries, kMaxLookups);
  SplitMix64 pick(seed ^ 0x6C6F6F6B7570ULL);
  std::vector<std::uint64_t> indices(kBatch);
  std::vector<double> ns;
  ns.reserve(lookups);
  std::vector<std::uint8_t> out(65535);
  const cache::ResponseOptions options;
  const double overhead = timer_overhead_ns();
  std::uint64_t misses = 0;
  for (std::uint64_t done = 0; done < lookups; done += kBatch) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, lookups - done));
    for (std::size_t j = 0; j < n; ++j) indices[j] = pick.range(0, entries - 1);
    batch.fill(gen, done, n, indices.data());
    for (std::size_t j = 0; j < n; ++j) {
      const auto t0 = Clock::now();
      const cache::ResponseResult r = layout.lookup_response(batch.lookups[j], kNow + 1, options, out.data(), out.size());
      const auto t1 = Clock::now();
      if (r.size == 0) ++misses;
      else ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() - overhead);
    }
  }
  // A miss is only acceptable for a key the layout lost at insert (arena index conflicts).
  if (misses > 0 && mem.entries == entries)
    throw std::runtime_error(layout.name() + ": " + std::to_string(misses) + " of " + std::to_string(lookups) +
                             " lookups of inserted keys missed (" + std::to_string(mem.entries) + " of " +
                             std::to_string(entries) + " entries live)");
  if (ns.empty()) throw std::runtime_error(layout.name() + ": every lookup missed");
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
  row.lookup_ns_p50 = ns[ns.size() / 2];
  return row;
}

}  // namespace

std::vector<std::string> layout_names() { return {"v0", "v1", "v2", "v3", "v4", "v5", "arena"}; }

std::vector<LayoutRow> measure_layouts(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed,
                                       bool measure_speed) {
  return measure_layouts_with_live(profile, entries, seed, measure_speed, nullptr);
}

std::vector<LayoutRow> measure_layouts_with_live(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed,
                                                 bool measure_speed, std::vector<std::uint64_t>* live_entries) {
  if (live_entries) live_entries->clear();
  if (entries == 0) throw std::invalid_argument("measure_layouts: entries must be at least 1");
  const EntryGenerator gen(profile, seed);
  const double mean_padded = calibrate_mean_padded_bytes(gen, entries);
  std::vector<LayoutRow> rows;
  // See memory_warmup.hpp: an untimed fill of the largest layout leaves the pages every
  // heap layout will need mapped and kept, so no layout pays first-touch faults.
  std::optional<layouts::HeapPageRetention> retain;
  if (measure_speed) {
    retain.emplace();
    std::unique_ptr<Layout> warmup = make_layout("v0", entries, mean_padded);
    measure_one(*warmup, gen, entries, seed, false);
  }
  for (const std::string& name : layout_names()) {
    std::unique_ptr<Layout> layout = make_layout(name, entries, mean_padded);
    std::uint64_t live = 0;
    rows.push_back(measure_one(*layout, gen, entries, seed, measure_speed, &live));
    if (live_entries) live_entries->push_back(live);
  }
  return rows;
}

}  // namespace dnsarena::sim

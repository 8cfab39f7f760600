// SPDX-License-Identifier: GPL-3.0-or-later
// The "arena" layout: dnsarena's real cache (cache/) in a private shared-memory segment.
//
// Sizing: max_entries = the expected entry count + 5% (see kIndexHeadroomDivisor); the arena holds expected entries of
// the caller's calibrated mean padded size plus 10% and four spare regions (the log
// keeps at least two regions free), so a fill of that many entries evicts nothing.
// Memory: (index + arena bytes in use + fixed overhead), as cache::CacheStats counts it.
// The arena makes no heap allocation per entry: allocated bytes = net bytes, 0 allocations.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <string>

#include "cache/cache.hpp"
#include "layout.hpp"
#include "memory_warmup.hpp"

namespace dnsarena::sim::layouts {

namespace {

constexpr std::uint32_t kRegionBytes = 1u << 20;
// The index is sized for max_entries at load 0.8 over two 8-slot buckets per key; at
// exactly the expected count a few keys find both buckets full (about 16 in 100,000,
// counted as conflict_evictions), so the capacity gets 5% headroom. Its bytes are counted.
constexpr std::uint64_t kIndexHeadroomDivisor = 20;

std::string unique_segment_name() {
  static std::atomic<unsigned> counter{0};
  return "dnsarena-layouts-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

class ArenaLayout final : public Layout {
public:
  ArenaLayout(std::uint64_t expected_entries, double mean_padded_entry_bytes) {
    cache::Geometry g;
    g.max_entries = expected_entries + expected_entries / kIndexHeadroomDivisor + 64;
    g.region_bytes = kRegionBytes;
    g.arena_bytes = static_cast<std::uint64_t>(std::ceil(mean_padded_entry_bytes * 1.10 * static_cast<double>(expected_entries))) +
                    4ull * kRegionBytes;
    g.stat_slots = 4;
    const std::string name = unique_segment_name();
    cache::Segment::remove(name);  // a leftover of a killed run with the same pid
    seg_.emplace(cache::Segment::create(name, g));
    seg_->set_remove_on_destroy(true);
    prefault_range(seg_->base(), seg_->size());  // keep first-touch faults out of the timings
    cache_.emplace(*seg_, cache::SlotRole::tool);
  }
  ~ArenaLayout() override {
    cache_.reset();
    seg_.reset();
  }

  std::string name() const override { return "arena"; }

  bool insert(const EntryInput& in, std::uint32_t now) override {
    const cache::CacheKey key(in.qname, in.qtype, in.flags, in.ecs);
    return cache_->insert(key, *in.answer, now) != cache::InsertStatus::rejected;
  }

  cache::ResponseResult lookup_response(const LookupInput& in, std::uint32_t now, const cache::ResponseOptions& options,
                                        std::uint8_t* out, std::size_t capacity) override {
    const cache::CacheKey key(in.query.qname, in.query.qtype, in.flags, in.ecs);
    return cache_->lookup_response(key, in.query, now, options, out, capacity);
  }

  LayoutMemory memory() const override {
    const cache::CacheStats s = cache_->stats();
    const double bytes = static_cast<double>(s.index_bytes + s.bytes_in_use + s.fixed_bytes);
    return {bytes, bytes, 0.0, s.live_entries};
  }

private:
  std::optional<cache::Segment> seg_;
  std::optional<cache::Cache> cache_;
};

}  // namespace

std::unique_ptr<Layout> make_layout_arena(std::uint64_t expected_entries, double mean_padded_entry_bytes) {
  return std::make_unique<ArenaLayout>(expected_entries, mean_padded_entry_bytes);
}

}  // namespace dnsarena::sim::layouts

// SPDX-License-Identifier: GPL-3.0-or-later
#include "churn_measure.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "layout.hpp"
#include "sim/workload/entry_generator.hpp"

#ifdef DNSARENA_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace dnsarena::sim {

namespace {

using layouts::EntryInput;
using layouts::Layout;

#ifdef DNSARENA_HAVE_JEMALLOC
// A fresh jemalloc arena the calling thread allocates from (thread cache off) while
// bound. NOTE: the arena is purged but never destroyed: a thread-local buffer that grew
// while it was bound (layout v5's scratch) may still live in it.
class BoundArena {
public:
  BoundArena() {
    std::size_t len = sizeof index_;
    if (mallctl("arenas.create", &index_, &len, nullptr, 0) != 0) throw std::runtime_error("jemalloc: arenas.create failed");
    len = sizeof tcache_was_;
    bool off = false;
    if (mallctl("thread.tcache.enabled", &tcache_was_, &len, &off, sizeof off) != 0)
      throw std::runtime_error("jemalloc: thread.tcache.enabled failed");
    len = sizeof previous_;
    if (mallctl("thread.arena", &previous_, &len, &index_, sizeof index_) != 0)
      throw std::runtime_error("jemalloc: thread.arena failed");
  }
  ~BoundArena() { unbind(); }
  BoundArena(const BoundArena&) = delete;
  BoundArena& operator=(const BoundArena&) = delete;

  void unbind() {
    if (!bound_) return;
    bound_ = false;
    mallctl("thread.arena", nullptr, nullptr, &previous_, sizeof previous_);
    mallctl("thread.tcache.enabled", nullptr, nullptr, &tcache_was_, sizeof tcache_was_);
  }
  std::size_t stat(const char* field) const {
    std::uint64_t epoch = 1;
    std::size_t len = sizeof epoch;
    mallctl("epoch", &epoch, &len, &epoch, sizeof epoch);
    const std::string name = "stats.arenas." + std::to_string(index_) + "." + field;
    std::size_t v = 0;
    len = sizeof v;
    if (mallctl(name.c_str(), &v, &len, nullptr, 0) != 0) throw std::runtime_error("jemalloc: cannot read " + name);
    return v;
  }
  void purge() const { mallctl(("arena." + std::to_string(index_) + ".purge").c_str(), nullptr, nullptr, nullptr, 0); }
  static std::size_t page() {
    std::size_t v = 4096, len = sizeof v;
    mallctl("arenas.page", &v, &len, nullptr, 0);
    return v;
  }

private:
  unsigned index_ = 0, previous_ = 0;
  bool tcache_was_ = true, bound_ = true;
};
#endif

std::unique_ptr<Layout> make_heap_layout(const std::string& name) {
  if (name == "v0") return layouts::make_layout_v0();
  if (name == "v1") return layouts::make_layout_v1();
  if (name == "v2") return layouts::make_layout_v2();
  if (name == "v3") return layouts::make_layout_v3();
  if (name == "v4") return layouts::make_layout_v4();
  return layouts::make_layout_v5();
}

// The cache a layout is churned in: which generated entries it holds, when they expire,
// and the random eviction. Every container is sized before the arena is bound.
class ChurnCache {
public:
  ChurnCache(Layout& layout, const EntryGenerator& gen, std::uint64_t capacity, std::uint64_t seed)
      : layout_(layout), gen_(gen), capacity_(capacity), rng_(seed ^ 0xC4A11) {
    const std::uint64_t ids = 3 * capacity + 1;
    position_.assign(ids, kAbsent);
    live_.reserve(capacity + 1);
    expiry_.reserve(ids);
    records_.reserve(64);
    gen_.generate(0, entry_);  // sizes the scratch entry's buffers
  }

  // Inserts entry `id` at simulated second `now`, after expiring and evicting.
  void insert(std::uint64_t id, double now) {
    while (!expiry_.empty() && expiry_.front().first <= now) {
      const std::uint64_t victim = expiry_.front().second;
      std::pop_heap(expiry_.begin(), expiry_.end(), std::greater<>());
      expiry_.pop_back();
      if (position_[victim] != kAbsent) erase(victim);
    }
    while (live_.size() >= capacity_) erase(live_[rng_.next() % live_.size()]);
    gen_.generate(id, entry_);
    const cache::Answer a = entry_.answer(records_);
    if (!layout_.insert(EntryInput{entry_.qname, entry_.qtype, 0, entry_.ecs, &a}, 0))
      throw std::runtime_error(layout_.name() + ": insert rejected during churn");
    position_[id] = live_.size();
    live_.push_back(id);
    expiry_.emplace_back(now + entry_.ttl, id);
    std::push_heap(expiry_.begin(), expiry_.end(), std::greater<>());
  }

private:
  static constexpr std::uint64_t kAbsent = std::numeric_limits<std::uint64_t>::max();
  // Two generated entries can share a key (the later replaced the earlier in the layout):
  // then the second erase of that key finds nothing, which is fine.
  void erase(std::uint64_t id) {
    gen_.generate(id, entry_);
    layout_.erase(EntryInput{entry_.qname, entry_.qtype, 0, entry_.ecs, nullptr});
    const std::uint64_t at = position_[id];
    live_[at] = live_.back();
    position_[live_[at]] = at;
    live_.pop_back();
    position_[id] = kAbsent;
  }

  Layout& layout_;
  const EntryGenerator& gen_;
  std::uint64_t capacity_;
  SplitMix64 rng_;
  std::vector<std::uint64_t> position_;  // index in live_ per id, kAbsent when not held
  std::vector<std::uint64_t> live_;
  std::vector<std::pair<double, std::uint64_t>> expiry_;  // min-heap of (TTL end, id)
  GeneratedEntry entry_;
  std::vector<cache::RecordData> records_;
};

}  // namespace

bool churn_uses_jemalloc() {
#ifdef DNSARENA_HAVE_JEMALLOC
  return true;
#else
  return false;
#endif
}

std::vector<ChurnRow> measure_churn(const TrafficProfile& profile, std::uint64_t entries, std::uint64_t seed) {
  if (entries == 0) throw std::invalid_argument("measure_churn: entries must be at least 1");
  const EntryGenerator gen(profile, seed);
  const double mean_ttl = std::max(1.0, 0.5 * (profile.ttl.lowest() + profile.ttl.highest()));
  const double per_second = 2.0 * static_cast<double>(entries) / mean_ttl;
  std::vector<ChurnRow> rows;
  for (const char* name : {"v0", "v1", "v2", "v3", "v4", "v5"}) {
    std::unique_ptr<Layout> layout = make_heap_layout(name);
    auto cache = std::make_unique<ChurnCache>(*layout, gen, entries, seed);
    ChurnRow row;
    row.layout = name;
#ifdef DNSARENA_HAVE_JEMALLOC
    BoundArena arena;
#endif
    for (std::uint64_t id = 0; id < entries; ++id) cache->insert(id, 0.0);
    for (std::uint64_t k = 0; k < 2 * entries; ++k)
      cache->insert(entries + k, static_cast<double>(k + 1) / per_second);
    row.live_entries = layout->memory().entries;  // <= C: entries sharing a key are held once
    const double live = static_cast<double>(std::max<std::uint64_t>(1, row.live_entries));
    row.alloc_bytes = layout->memory().alloc_bytes / live;
#ifdef DNSARENA_HAVE_JEMALLOC
    row.active_bytes = static_cast<double>(arena.stat("pactive") * BoundArena::page()) / live;
    row.retained_bytes = static_cast<double>(arena.stat("retained")) / live;
    row.resident_unpurged_bytes = static_cast<double>(arena.stat("resident")) / live;
    arena.purge();
    row.resident_bytes = static_cast<double>(arena.stat("resident")) / live;
    row.resident_ratio = row.alloc_bytes > 0 ? row.resident_bytes / row.alloc_bytes : 1.0;
    row.measured = true;
    cache.reset();  // freed while still bound (no thread cache holds the arena's blocks)
    layout.reset();
    arena.unbind();
    arena.purge();
#else
    row.active_bytes = row.resident_bytes = row.resident_unpurged_bytes = row.alloc_bytes;
#endif
    rows.push_back(row);
  }
  return rows;
}

}  // namespace dnsarena::sim

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/miss_ratio_curves.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <random>

namespace dnsarena::workers {

MissRatioCurves* g_host_curves = nullptr;

namespace {

std::uint32_t pow2_floor(double v) {
  std::uint32_t p = 1;
  while (p <= (1u << 30) && static_cast<double>(p) * 2 <= v) p *= 2;
  return p;
}

}  // namespace

void set_host_curves(MissRatioCurves* curves) { g_host_curves = curves; }

double mrc_base_rate(std::uint64_t real_entries, const MrcSettings& s) {
  const double c = static_cast<double>(std::max<std::uint64_t>(1, real_entries));
  double r = s.sample_rate;
  r = std::max(r, static_cast<double>(s.min_sampled_entries) / c);
  r = std::min(r, static_cast<double>(s.max_sampled_entries) / c);
  return std::clamp(r, 1.0 / c, 1.0);
}

cache::Geometry mrc_model_geometry(const cache::Geometry& real, double factor, double rate, std::uint32_t stat_slots) {
  const cache::SegmentLayout rl = cache::SegmentLayout::compute(real);
  const double scale = factor * rate;
  const double n_real = rl.region_count;
  const double arena = static_cast<double>(rl.arena_bytes()) * scale;
  cache::Geometry g;
  g.region_bytes = std::max(kMrcMinRegionBytes, pow2_floor(static_cast<double>(rl.region_bytes) * scale));
  // Regions so that the model holds (N - 1.5)/N of its arena on average, as the real ring.
  const double live = arena * (n_real - 1.5) / n_real;
  const double regions = std::max(3.0, std::round(1.5 + live / g.region_bytes));
  g.arena_bytes = static_cast<std::uint64_t>(regions) * g.region_bytes;
  g.max_entries = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(static_cast<double>(real.max_entries) * scale)));
  g.stat_slots = std::clamp<std::uint32_t>(stat_slots, 2, 4096);
  return g;
}

MissRatioCurves::MissRatioCurves(const cache::Geometry& real, const MrcSettings& s, std::uint32_t stat_slots)
    : map_(sizeof(MrcHeader) + sizeof(MrcModelDesc) * kMrcFactors.size() + sizeof(MrcSeenRow) * kMrcSeenRows, true,
           "miss-ratio curves"),
      copy_(std::make_unique<cache::EntryCopy>()) {
  header_ = static_cast<MrcHeader*>(map_.data());
  descs_ = reinterpret_cast<MrcModelDesc*>(header_ + 1);
  rows_ = reinterpret_cast<MrcSeenRow*>(descs_ + kMrcFactors.size());
  const cache::SegmentLayout rl = cache::SegmentLayout::compute(real);
  header_->real_entries = real.max_entries;
  header_->real_arena = rl.arena_bytes();
  header_->real_regions = rl.region_count;
  header_->models = static_cast<std::uint32_t>(kMrcFactors.size());
  header_->base_rate = mrc_base_rate(real.max_entries, s);
  header_->seed = std::random_device{}() * 0x9E3779B97F4A7C15ULL ^ std::random_device{}();
  header_->created_unix = static_cast<std::uint64_t>(std::time(nullptr));
  models_.reserve(kMrcFactors.size());
  for (std::size_t i = 0; i < kMrcFactors.size(); ++i) {
    MrcModelDesc& d = descs_[i];
    d.factor = kMrcFactors[i];
    d.rate = header_->base_rate * std::min(1.0, 1.0 / d.factor);
    d.threshold = d.rate >= 1.0 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(std::ldexp(d.rate, 64));
    const cache::Geometry g = mrc_model_geometry(real, d.factor, d.rate, stat_slots);
    models_.push_back(cache::Segment::create_private(g, true));
    const cache::SegmentLayout& l = models_.back().layout();
    d.max_entries = l.max_entries;
    d.arena_bytes = l.arena_bytes();
    d.region_bytes = l.region_bytes;
    d.region_count = l.region_count;
    d.segment_bytes = l.total_bytes;
    max_threshold_ = std::max(max_threshold_, d.threshold);
  }
}

MissRatioCurves::~MissRatioCurves() {
  if (caches_pid_ == ::getpid() && my_row_) {
    my_row_->seen.fetch_add(unflushed_, std::memory_order_relaxed);
    if (row_owned_) my_row_->owner_pid.store(0, std::memory_order_release);  // the count stays
  }
  if (caches_pid_ != ::getpid())
    for (auto& c : caches_) (void)c.release();  // a parent's: its slots are not this process's to free
}

std::uint64_t MissRatioCurves::shared_bytes() const {
  std::uint64_t b = map_.size();
  for (const cache::Segment& m : models_) b += m.layout().total_bytes;
  return b;
}

std::uint64_t MissRatioCurves::seen() const {
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < kMrcSeenRows; ++i) n += rows_[i].seen.load(std::memory_order_relaxed);
  return n;
}

std::vector<MrcModelStats> MissRatioCurves::read() const {
  std::vector<MrcModelStats> out;
  const double seen_all = static_cast<double>(seen());
  for (std::size_t i = 0; i < models_.size(); ++i) {
    const cache::Segment& seg = models_[i];
    const cache::SegmentLayout& l = seg.layout();
    MrcModelStats m;
    m.factor = descs_[i].factor;
    m.rate = descs_[i].rate;
    m.expected = m.rate * seen_all;
    m.live_entries = seg.header().live_entries.load(std::memory_order_relaxed);
    m.bytes_in_use = seg.header().bytes_in_use.load(std::memory_order_relaxed);
    m.max_entries = l.max_entries;
    m.arena_bytes = l.arena_bytes();
    m.segment_bytes = l.total_bytes;
    const cache::StatSlot* slots = seg.stat_slots();
    for (std::uint32_t s = 0; s < l.stat_slots; ++s) {
      m.lookups += slots[s].get(cache::Counter::lookups);
      m.hits += slots[s].get(cache::Counter::hits);
      m.evictions += slots[s].get(cache::Counter::evictions);
      m.expirations += slots[s].get(cache::Counter::expirations);
      m.refused += slots[s].get(cache::Counter::rejected_inserts);
      m.lock_skips += slots[s].get(cache::Counter::writer_lock_unavailable);
    }
    out.push_back(m);
  }
  return out;
}

void MissRatioCurves::ensure_caches() {
  const pid_t me = ::getpid();
  if (caches_pid_ == me) return;
  for (auto& c : caches_) (void)c.release();  // the parent's (never used here; see the destructor)
  caches_.clear();
  for (cache::Segment& seg : models_) {
    auto c = std::make_unique<cache::Cache>(seg, cache::SlotRole::worker);
    c->set_writer_lock_timeout(std::chrono::milliseconds(1));
    caches_.push_back(std::move(c));
  }
  caches_pid_ = me;
  // This process's seen row: a free one, else a dead process's (its count kept), else
  // the last, shared.
  my_row_ = &rows_[kMrcSeenRows - 1];
  row_owned_ = false;
  for (int pass = 0; pass < 2 && !row_owned_; ++pass)
    for (std::uint32_t i = 0; i + 1 < kMrcSeenRows; ++i) {
      std::uint32_t owner = rows_[i].owner_pid.load(std::memory_order_relaxed);
      const bool free = pass == 0 ? owner == 0 : owner != 0 && ::kill(static_cast<pid_t>(owner), 0) != 0 && errno == ESRCH;
      if (free && rows_[i].owner_pid.compare_exchange_strong(owner, static_cast<std::uint32_t>(me))) {
        my_row_ = &rows_[i];
        row_owned_ = true;
        break;
      }
    }
}

template <class Entry>
void MissRatioCurves::feed(const cache::CacheKey& key, std::uint32_t now, std::uint32_t requests, Entry&& entry) {
  ensure_caches();
  if (row_owned_) my_row_->seen.store(my_row_->seen.load(std::memory_order_relaxed) + unflushed_, std::memory_order_relaxed);
  else my_row_->seen.fetch_add(unflushed_, std::memory_order_relaxed);
  unflushed_ = 0;
  const std::uint64_t h = mix(key.hash());
  std::span<const std::uint8_t> bytes;
  bool have = false;
  for (std::size_t i = 0; i < models_.size(); ++i) {
    if (h >= descs_[i].threshold) continue;
    cache::Cache& m = *caches_[i];
    // No client asked (a background refresh): the model refreshes the entry as the real
    // cache did, counting no request.
    const cache::LookupStatus st = requests == 0 ? cache::LookupStatus::miss : m.probe(key, now);
    // The other clients of one upstream answer missed too (the real cache missed each).
    if (requests > 1) {
      m.count(cache::Counter::lookups, requests - 1);
      m.count(st == cache::LookupStatus::hit ? cache::Counter::hits : cache::Counter::misses, requests - 1);
    }
    if (st == cache::LookupStatus::hit) continue;
    if (!have) {
      bytes = entry();
      have = true;
    }
    if (!bytes.empty()) m.insert_encoded(key, bytes, now);
  }
}

void MissRatioCurves::feed_hit(cache::Cache& real, const cache::CacheKey& key, std::uint32_t now) {
  feed(key, now, 1, [&]() -> std::span<const std::uint8_t> {
    cache::EntryCopy& c = *copy_;
    if (real.peek(key, now, c) != cache::LookupStatus::hit) return {};
    const std::size_t padded = (c.length + 7) & ~std::size_t{7};
    std::memset(c.bytes.data() + c.length, 0, padded - c.length);
    return {c.bytes.data(), padded};
  });
}

void MissRatioCurves::feed_answer(const cache::CacheKey& key, std::span<const std::uint8_t> padded_entry,
                                  std::uint32_t now, std::uint32_t requests) {
  feed(key, now, requests, [&] { return padded_entry; });
}

}  // namespace dnsarena::workers

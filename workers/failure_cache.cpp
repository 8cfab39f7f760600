// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/failure_cache.hpp"

#include "common/mix_hash.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <system_error>

namespace dnsarena::workers {

using common::fmix64;

namespace {

constexpr unsigned kFailureTagShift = 40;
constexpr unsigned kLevelShift = 36;
constexpr unsigned kKindShift = 34;
constexpr std::uint64_t kUntilMask = (1ull << 34) - 1;
constexpr unsigned kMaxLevel = 15;

std::uint64_t tag_of(std::uint64_t s) { return s >> kFailureTagShift; }
unsigned level_of(std::uint64_t s) { return static_cast<unsigned>(s >> kLevelShift) & 0xF; }
FailureKind kind_of(std::uint64_t s) { return static_cast<FailureKind>((s >> kKindShift) & 0x3); }
std::uint64_t until_of(std::uint64_t s) { return s & kUntilMask; }
std::uint64_t make_slot(std::uint64_t tag, unsigned level, FailureKind kind, std::uint64_t until) {
  return tag << kFailureTagShift | std::uint64_t{level} << kLevelShift |
         std::uint64_t{static_cast<std::uint8_t>(kind)} << kKindShift | (until & kUntilMask);
}

}  // namespace

FailureCache::FailureCache(std::uint32_t buckets, bool shared) {
  buckets = std::clamp<std::uint32_t>(buckets, 1, 1u << 24);
  if (buckets & (buckets - 1)) buckets = 1u << (32 - __builtin_clz(buckets));
  map_ = common::AnonymousMapping(sizeof(Header) + std::size_t{buckets} * kSlotsPerBucket * sizeof(std::uint64_t),
                                  shared, "failure cache table");
  header_ = static_cast<Header*>(map_.data());  // zero-filled: every slot empty
  arc4random_buf(&header_->seed, sizeof header_->seed);
  header_->base_ms = monotonic_ms();
  header_->buckets = buckets;
  slots_ = reinterpret_cast<std::atomic<std::uint64_t>*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header));
}

FailureCache::~FailureCache() = default;

FailureCache::Place FailureCache::place_of(std::uint64_t name_hash) const {
  const std::uint64_t m = fmix64(name_hash ^ header_->seed);
  std::uint64_t tag = m >> kFailureTagShift;
  if (tag == 0) tag = 1;
  return {slots_ + (m & (header_->buckets - 1)) * kSlotsPerBucket, tag};
}

std::optional<FailureCache::Failure> FailureCache::find(std::uint64_t name_hash, std::uint64_t now_ms) const {
  const Place p = place_of(name_hash);
  const std::uint64_t now = relative(now_ms);
  for (unsigned i = 0; i < kSlotsPerBucket; ++i) {
    const std::uint64_t s = p.slots[i].load(std::memory_order_relaxed);
    if (s != 0 && tag_of(s) == p.tag && until_of(s) > now) return Failure{kind_of(s), until_of(s) - now};
  }
  return std::nullopt;
}

std::uint64_t FailureCache::record(std::uint64_t name_hash, FailureKind kind, std::uint64_t now_ms,
                                   std::uint32_t min_ms, std::uint32_t max_ms) {
  const Place p = place_of(name_hash);
  const std::uint64_t now = relative(now_ms);
  min_ms = std::max<std::uint32_t>(min_ms, 1);
  max_ms = std::max(max_ms, min_ms);
  for (int attempt = 0; attempt < 4; ++attempt) {
    // The name's own slot if it has one, else an empty slot, else the one whose window
    // ended first (the least useful to keep).
    int own = -1, victim = 0;
    std::uint64_t values[kSlotsPerBucket];
    for (unsigned i = 0; i < kSlotsPerBucket; ++i) {
      values[i] = p.slots[i].load(std::memory_order_relaxed);
      if (values[i] != 0 && tag_of(values[i]) == p.tag) {
        own = static_cast<int>(i);
        break;
      }
      if (values[victim] != 0 && (values[i] == 0 || until_of(values[i]) < until_of(values[victim])))
        victim = static_cast<int>(i);
    }
    unsigned level = 0;
    if (own >= 0) {
      const std::uint64_t old = values[own];
      // Failed again: while its window runs (another worker's query failing as well) the
      // window is kept; right after it, doubled; long after it, started afresh.
      if (until_of(old) > now) return until_of(old) - now;
      if (now - until_of(old) < max_ms) level = std::min(level_of(old) + 1, kMaxLevel);
    }
    const std::uint64_t window = std::min<std::uint64_t>(std::uint64_t{min_ms} << level, max_ms);
    const int i = own >= 0 ? own : victim;
    std::uint64_t expected = values[i];
    if (p.slots[i].compare_exchange_strong(expected, make_slot(p.tag, level, kind, now + window),
                                           std::memory_order_relaxed))
      return window;
  }
  return 0;  // lost every race: other workers are recording failures into this bucket
}

void FailureCache::clear(std::uint64_t name_hash) {
  const Place p = place_of(name_hash);
  for (unsigned i = 0; i < kSlotsPerBucket; ++i) {
    std::uint64_t s = p.slots[i].load(std::memory_order_relaxed);
    if (s != 0 && tag_of(s) == p.tag) p.slots[i].compare_exchange_strong(s, 0, std::memory_order_relaxed);
  }
}

}  // namespace dnsarena::workers

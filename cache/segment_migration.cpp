// SPDX-License-Identifier: GPL-3.0-or-later
// Warm upgrade: copy the live entries of an old segment into a new one (segment_migration.hpp).
#include "segment_migration.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "cache.hpp"
#include "legacy/segment_reader.hpp"

namespace dnsarena::cache {

namespace {

struct Candidate {
  std::size_t pool_offset = 0;  // padded bytes in the pool
  std::size_t padded = 0;
  std::uint32_t inserted = 0;
  std::uint32_t expire = 0;
};

// True when `newest[0..k)` appended oldest first (k-1 down to 0) fills at most
// `regions` regions of `region_bytes`: the arena's next-fit (log_arena.cpp, append).
bool fits(const std::vector<Candidate>& newest, std::size_t k, std::uint64_t regions, std::uint64_t region_bytes) {
  std::uint64_t used = 1, fill = 0;
  for (std::size_t i = k; i-- > 0;) {
    if (fill + newest[i].padded > region_bytes) {
      if (++used > regions) return false;
      fill = 0;
    }
    fill += newest[i].padded;
  }
  return true;
}

std::string geometry_text(const Geometry& g) {
  return "max_entries " + std::to_string(g.max_entries) + ", arena " + std::to_string(g.arena_bytes) + " bytes";
}

}  // namespace

std::string migration_temp_prefix(const std::string& name) { return name + ".migrating."; }
std::string migration_temp_name(const std::string& name, long pid) {
  return migration_temp_prefix(name) + std::to_string(pid);
}

std::string MigrationReport::summary() const {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", milliseconds);
  return "format " + std::to_string(from_version) + " -> " + std::to_string(kFormatVersion) + ", " +
         geometry_text(from) + " -> " + geometry_text(to) + ": " + std::to_string(migrated) + " migrated, " +
         std::to_string(dropped) + " dropped (oldest first), " + std::to_string(expired) + " expired, " +
         std::to_string(malformed) + " malformed, " + std::to_string(conflicts) + " index conflicts, in " + ms + " ms";
}

Segment migrate_segment(const std::string& name, const Geometry& to, std::uint32_t now, MigrationReport* report) {
  const auto start = std::chrono::steady_clock::now();
  const SegmentLayout want = SegmentLayout::compute(to);
  MigrationReport r;
  r.to = to;

  // 1. read
  std::vector<std::uint8_t> pool;
  std::vector<Candidate> found;
  {
    const legacy::SegmentReader old(name);
    r.from_version = old.format_version();
    r.from = old.geometry();
    if (const std::vector<long> pids = old.live_owners(); !pids.empty())
      throw SegmentError(SegmentError::Kind::in_use,
                         "segment '" + name + "' is still attached by " + std::to_string(pids.size()) +
                             " live process(es) (pid " + std::to_string(pids.front()) +
                             "): stop them before it is migrated to another format or geometry");
    std::unordered_map<std::uint64_t, std::size_t> by_key;  // blob hash -> index in `found`
    const legacy::ReadCounts counts = old.for_each_entry([&](std::span<const std::uint8_t> entry) {
      const EntryReader e(entry);
      if (e.expire() <= now) {
        ++r.expired;
        return;
      }
      Candidate c{pool.size(), padded_entry_size(entry.size()), e.inserted(), e.expire()};
      const auto [it, fresh] = by_key.try_emplace(CacheKey::hash_blob(e.key_blob()), found.size());
      if (!fresh && found[it->second].inserted >= c.inserted) return;
      pool.resize(pool.size() + c.padded, 0);
      std::memcpy(pool.data() + c.pool_offset, entry.data(), entry.size());
      if (fresh) found.push_back(c);
      else found[it->second] = c;
    });
    r.stale = counts.stale;
    r.malformed = counts.malformed;
  }  // the old mapping goes here

  // 2. choose: newest first; what a region cannot hold never fits
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return a.inserted != b.inserted ? a.inserted > b.inserted : a.expire > b.expire;
  });
  std::vector<Candidate> newest;
  newest.reserve(found.size());
  for (const Candidate& c : found)
    if (c.padded <= want.region_bytes) newest.push_back(c);
  std::size_t lo = 0, hi = std::min<std::uint64_t>(newest.size(), want.max_entries);
  const std::uint64_t regions = want.region_count - 1;  // one region stays free (log_arena.cpp)
  while (lo < hi) {  // the largest k whose newest entries fit
    const std::size_t mid = (lo + hi + 1) / 2;
    if (fits(newest, mid, regions, want.region_bytes)) lo = mid;
    else hi = mid - 1;
  }
  const std::size_t keep = lo;

  // 3. write, oldest first, under the temporary name
  const std::string temp = migration_temp_name(name, ::getpid());
  Segment::remove(temp);  // a leftover of a dead process that had our pid
  Segment seg = Segment::create(temp, to);
  struct RemoveUnlessPublished {
    Segment* seg;
    bool published = false;
    ~RemoveUnlessPublished() {
      if (!published) Segment::remove(seg->name());
    }
  } temporary{&seg};
  {
    Cache cache(seg, SlotRole::tool);
    CacheKey key;
    for (std::size_t i = keep; i-- > 0;) {
      const Candidate& c = newest[i];
      const std::span<const std::uint8_t> padded{pool.data() + c.pool_offset, c.padded};
      EntryReader e(padded.first(c.padded));  // entry_len inside bounds the parse
      if (!CacheKey::from_blob(e.key_blob(), key)) continue;  // validated by the reader: cannot happen
      cache.insert_encoded(key, padded, now);
    }
    r.conflicts = cache.stats().counter(Counter::conflict_evictions);
  }
  r.migrated = seg.header().live_entries.load(std::memory_order_relaxed);
  r.dropped = found.size() - r.migrated;

  // 4. switch
  seg.rename_to(name);
  temporary.published = true;
  r.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (report) *report = r;
  return seg;
}

}  // namespace dnsarena::cache

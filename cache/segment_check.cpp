// SPDX-License-Identifier: GPL-3.0-or-later
// FORMAT-DEPENDENT: walks every structure of the segment.
#include "segment_check.hpp"

#include <cstring>
#include <unordered_map>

#include "robust_mutex.hpp"

namespace dnsarena::cache {

void SegmentChecker::problem(CheckReport& r, std::string what) {
  ++r.problem_count;
  if (r.problems.size() < CheckReport::kMaxProblems) r.problems.push_back(std::move(what));
}

CheckReport SegmentChecker::run() {
  CheckReport rep;
  Cache& c = c_;
  const SegmentLayout& l = c.seg_.layout();
  SegmentHeader& h = c.hdr_;
  const std::uint64_t repairs_before = h.repairs.load();
  std::string error;
  RobustLockGuard lock(&h.writer_lock, [&c] { c.repair(); }, kLockWait, &error);
  if (!lock.owns()) {
    problem(rep, std::string("writer lock: ") + describe(lock.result()) + (error.empty() ? "" : ": " + error));
    return rep;
  }
  rep.repaired = lock.repaired() || h.repairs.load() != repairs_before;

  const std::uint64_t hf = h.head_and_free.load();
  const std::uint32_t head = head_of(hf), nfree = free_of(hf);
  if (head >= l.region_count) problem(rep, "head region " + std::to_string(head) + " out of range");
  if (nfree >= l.region_count) problem(rep, "free region count " + std::to_string(nfree) + " >= region count");
  if (!rep.ok()) return rep;
  if (h.reclaiming_region.load() != kNoRegion)
    problem(rep, "reclaim of region " + std::to_string(h.reclaiming_region.load()) + " left unfinished");

  std::vector<bool> is_free(l.region_count, false);
  for (std::uint32_t i = 1; i <= nfree; ++i) is_free[(head + i) % l.region_count] = true;
  // Entry starts, one bit per 8-byte unit of the arena.
  std::vector<bool> starts(l.arena_bytes() / kEntryAlignment, false);
  std::uint64_t fill_sum = 0;
  for (std::uint32_t r = 0; r < l.region_count; ++r) {
    const std::uint32_t fill = c.regions_[r].fill.load();
    fill_sum += fill;
    const std::string where = "region " + std::to_string(r);
    if (fill > l.region_bytes || fill % kEntryAlignment != 0) {
      problem(rep, where + ": fill " + std::to_string(fill) + " is not an aligned size within the region");
      continue;
    }
    if (is_free[r]) {
      if (fill != 0) problem(rep, where + " is free but holds " + std::to_string(fill) + " bytes");
      continue;
    }
    if (fill > 0) ++rep.used_regions;
    std::uint32_t pos = 0;
    while (pos < fill) {
      const std::uint64_t byte_off = std::uint64_t{r} * l.region_bytes + pos;
      const std::uint8_t* p = c.seg_.arena() + byte_off;
      EntryReader e({p, fill - pos});
      if (!e.valid() || !e.validate_all()) {
        problem(rep, where + ": malformed entry at byte " + std::to_string(pos));
        break;
      }
      for (std::size_t pad = e.length(); pad < padded_entry_size(e.length()); ++pad)
        if (pos + pad < fill && p[pad] != 0) {
          problem(rep, where + ": nonzero padding after entry at byte " + std::to_string(pos));
          break;
        }
      starts[byte_off / kEntryAlignment] = true;
      ++rep.entries_walked;
      pos += static_cast<std::uint32_t>(padded_entry_size(e.length()));
    }
    if (pos > fill) problem(rep, where + ": last entry runs past the fill");
  }
  rep.bytes_in_use = fill_sum;
  if (fill_sum != h.bytes_in_use.load())
    problem(rep, "bytes_in_use is " + std::to_string(h.bytes_in_use.load()) + ", regions hold " + std::to_string(fill_sum));

  std::uint64_t linked = 0;
  for (std::uint64_t b = 0; b < l.bucket_count; ++b) {
    for (unsigned i = 0; i < kSlotsPerBucket; ++i) {
      const std::uint64_t s = c.buckets_[b].slots[i].load();
      if (s == 0) continue;
      ++linked;
      const std::string where = "bucket " + std::to_string(b) + " slot " + std::to_string(i);
      const ArenaOffset off = slot_offset(s);
      if (off.byte_offset() >= l.arena_bytes()) {
        problem(rep, where + ": offset outside the arena");
        continue;
      }
      const std::uint32_t r = c.region_of(off);
      if (is_free[r]) {
        problem(rep, where + ": points into free region " + std::to_string(r));
        continue;
      }
      if (!starts[off.byte_offset() / kEntryAlignment]) {
        problem(rep, where + ": does not point at an entry start");
        continue;
      }
      if (slot_gen_tag(s) != generation_tag(c.regions_[r].generation.load()))
        problem(rep, where + ": generation tag differs from region " + std::to_string(r));
      const std::uint64_t hash = c.entry_hash_at(off);
      const IndexPosition pos = index_position(hash, l.bucket_count);
      if (b != pos.bucket1 && b != pos.bucket2) problem(rep, where + ": entry's key hashes to other buckets");
      if (slot_hash_tag(s) != pos.hash_tag) problem(rep, where + ": hash tag differs from the entry's key");
      const std::uint8_t* p = c.entry_address(off);
      const std::size_t len = std::size_t{p[0]} | (std::size_t{p[1]} << 8);
      const std::size_t klen = CacheKey::blob_length({p + kEntryKeyOffset, len - kEntryKeyOffset});
      const Cache::SlotRef first = c.find_linked({p + kEntryKeyOffset, klen}, hash);
      if (first.slot != &c.buckets_[b].slots[i]) problem(rep, where + ": another slot holds the same key");
    }
  }
  rep.live_entries = linked;
  if (linked != h.live_entries.load())
    problem(rep, "live_entries is " + std::to_string(h.live_entries.load()) + ", index links " + std::to_string(linked));
  if (linked > l.max_entries)
    problem(rep, std::to_string(linked) + " live entries exceed max_entries " + std::to_string(l.max_entries));
  return rep;
}

}  // namespace dnsarena::cache

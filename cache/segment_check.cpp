// SPDX-License-Identifier: GPL-3.0-or-later
// FORMAT-DEPENDENT: walks every structure of the segment.
#include "segment_check.hpp"

#include <cstring>
#include <unordered_map>

#include "robust_mutex.hpp"

namespace dnsarena::cache {

void SegmentChecker::problem(std::string what) {
  ++rep_.problem_count;
  if (rep_.problems.size() < CheckReport::kMaxProblems) rep_.problems.push_back(std::move(what));
}

CheckReport SegmentChecker::run() {
  rep_ = CheckReport{};
  SegmentHeader& h = c_.hdr_;
  const std::uint64_t repairs_before = h.repairs.load();
  std::string error;
  RobustLockGuard lock(&h.writer_lock, [this] { c_.repair(); }, kLockWait, &error);
  if (!lock.owns()) {
    problem(std::string("writer lock: ") + describe(lock.result()) + (error.empty() ? "" : ": " + error));
    return rep_;
  }
  rep_.repaired = lock.repaired() || h.repairs.load() != repairs_before;

  if (!ring_in_range()) return rep_;
  no_unfinished_reclaim();

  const SegmentLayout& l = c_.seg_.layout();
  starts_.assign(l.arena_bytes() / kEntryAlignment, false);
  std::uint64_t fill_sum = 0;
  for (std::uint32_t r = 0; r < l.region_count; ++r) {
    const std::uint32_t fill = c_.regions_[r].fill.load();
    fill_sum += fill;
    if (region_fill_valid(r, fill)) region_entries_tile(r, fill);
  }
  bytes_in_use_matches(fill_sum);

  std::uint64_t linked = 0;
  for (std::uint64_t b = 0; b < l.bucket_count; ++b)
    for (unsigned i = 0; i < kSlotsPerBucket; ++i) {
      const std::uint64_t s = c_.buckets_[b].slots[i].load();
      if (s == 0) continue;
      ++linked;
      slot_valid(b, i, s);
    }
  live_entries_match(linked);
  return rep_;
}

bool SegmentChecker::ring_in_range() {
  const SegmentLayout& l = c_.seg_.layout();
  const std::uint64_t hf = c_.hdr_.head_and_free.load();
  const std::uint32_t head = head_of(hf), nfree = free_of(hf);
  if (head >= l.region_count) problem("head region " + std::to_string(head) + " out of range");
  if (nfree >= l.region_count) problem("free region count " + std::to_string(nfree) + " >= region count");
  if (!rep_.ok()) return false;
  is_free_.assign(l.region_count, false);
  for (std::uint32_t i = 1; i <= nfree; ++i) is_free_[(head + i) % l.region_count] = true;
  return true;
}

void SegmentChecker::no_unfinished_reclaim() {
  const std::uint64_t reclaiming = c_.hdr_.reclaiming_region.load();
  if (reclaiming != kNoRegion) problem("reclaim of region " + std::to_string(reclaiming) + " left unfinished");
}

bool SegmentChecker::region_fill_valid(std::uint32_t r, std::uint32_t fill) {
  const std::string where = "region " + std::to_string(r);
  if (fill > c_.seg_.layout().region_bytes || fill % kEntryAlignment != 0) {
    problem(where + ": fill " + std::to_string(fill) + " is not an aligned size within the region");
    return false;
  }
  if (is_free_[r]) {
    if (fill != 0) problem(where + " is free but holds " + std::to_string(fill) + " bytes");
    return false;
  }
  return true;
}

void SegmentChecker::region_entries_tile(std::uint32_t r, std::uint32_t fill) {
  const std::string where = "region " + std::to_string(r);
  if (fill > 0) ++rep_.used_regions;
  std::uint32_t pos = 0;
  while (pos < fill) {
    const std::uint64_t byte_off = std::uint64_t{r} * c_.seg_.layout().region_bytes + pos;
    const std::uint8_t* p = c_.seg_.arena() + byte_off;
    EntryReader e({p, fill - pos});
    if (!e.valid() || !e.validate_all()) {
      problem(where + ": malformed entry at byte " + std::to_string(pos));
      break;
    }
    for (std::size_t pad = e.length(); pad < padded_entry_size(e.length()); ++pad)
      if (pos + pad < fill && p[pad] != 0) {
        problem(where + ": nonzero padding after entry at byte " + std::to_string(pos));
        break;
      }
    starts_[byte_off / kEntryAlignment] = true;
    ++rep_.entries_walked;
    pos += static_cast<std::uint32_t>(padded_entry_size(e.length()));
  }
  if (pos > fill) problem(where + ": last entry runs past the fill");
}

void SegmentChecker::bytes_in_use_matches(std::uint64_t fill_sum) {
  rep_.bytes_in_use = fill_sum;
  const std::uint64_t recorded = c_.hdr_.bytes_in_use.load();
  if (fill_sum != recorded)
    problem("bytes_in_use is " + std::to_string(recorded) + ", regions hold " + std::to_string(fill_sum));
}

void SegmentChecker::slot_valid(std::uint64_t b, unsigned i, std::uint64_t s) {
  Cache& c = c_;
  const SegmentLayout& l = c.seg_.layout();
  const std::string where = "bucket " + std::to_string(b) + " slot " + std::to_string(i);
  const ArenaOffset off = slot_offset(s);
  if (off.byte_offset() >= l.arena_bytes()) {
    problem(where + ": offset outside the arena");
    return;
  }
  const std::uint32_t r = c.region_of(off);
  if (is_free_[r]) {
    problem(where + ": points into free region " + std::to_string(r));
    return;
  }
  if (!starts_[off.byte_offset() / kEntryAlignment]) {
    problem(where + ": does not point at an entry start");
    return;
  }
  if (slot_gen_tag(s) != generation_tag(c.regions_[r].generation.load()))
    problem(where + ": generation tag differs from region " + std::to_string(r));
  const std::uint64_t hash = c.entry_hash_at(off);
  const IndexPosition pos = index_position(hash, l.bucket_count);
  if (b != pos.bucket1 && b != pos.bucket2) problem(where + ": entry's key hashes to other buckets");
  if (slot_hash_tag(s) != pos.hash_tag) problem(where + ": hash tag differs from the entry's key");
  const std::uint8_t* p = c.entry_address(off);
  const std::size_t len = std::size_t{p[0]} | (std::size_t{p[1]} << 8);
  const std::size_t klen = CacheKey::blob_length({p + kEntryKeyOffset, len - kEntryKeyOffset});
  const Cache::SlotRef first = c.find_linked({p + kEntryKeyOffset, klen}, hash);
  if (first.slot != &c.buckets_[b].slots[i]) problem(where + ": another slot holds the same key");
}

void SegmentChecker::live_entries_match(std::uint64_t linked) {
  rep_.live_entries = linked;
  const std::uint64_t recorded = c_.hdr_.live_entries.load();
  const std::uint64_t max_entries = c_.seg_.layout().max_entries;
  if (linked != recorded)
    problem("live_entries is " + std::to_string(recorded) + ", index links " + std::to_string(linked));
  if (linked > max_entries)
    problem(std::to_string(linked) + " live entries exceed max_entries " + std::to_string(max_entries));
}

}  // namespace dnsarena::cache

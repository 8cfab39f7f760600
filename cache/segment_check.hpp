// SPDX-License-Identifier: GPL-3.0-or-later
// The invariant walker behind `dnsarena check` and the tests' check_invariants().
//
// With the writer lock held (taking it repairs a segment whose last writer died), it
// verifies: the ring state (head, free count, no unfinished reclaim); every region's fill
// (aligned, within the region, zero for free regions) and their sum against bytes_in_use;
// every entry in every used region parses completely and the entries tile the fill
// exactly; every index slot points at an entry start in a used region, carries that
// region's generation tag and the entry's hash tag, sits in one of the two buckets of the
// entry's key, and is the only slot for that key; the slot count equals live_entries,
// which is at most max_entries.
// Cost: one pass over the index and the used arena (about a second per 10^7 entries).
// A writer lock that cannot be taken (not recoverable, a failing repair, or held for more
// than kLockWait) is reported as a problem, and nothing else is checked.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cache.hpp"

namespace dnsarena::cache {

struct CheckReport {
  std::vector<std::string> problems;  // empty when sound (at most kMaxProblems listed)
  std::uint64_t problem_count = 0;
  bool repaired = false;              // a dead writer's work was repaired while locking
  std::uint64_t live_entries = 0;
  std::uint64_t entries_walked = 0;   // entries found in used regions (live or dead)
  std::uint64_t used_regions = 0;
  std::uint64_t bytes_in_use = 0;
  bool ok() const { return problem_count == 0; }
  static constexpr std::size_t kMaxProblems = 50;
};

class SegmentChecker {
public:
  static constexpr std::chrono::seconds kLockWait{10};
  explicit SegmentChecker(Cache& cache) : c_(cache) {}
  CheckReport run();

private:
  // The invariants, in the order run() checks them (with the writer lock held); each
  // adds what it finds to rep_.
  // Head and free count within the ring; false (and nothing else is checked) when not.
  // Sets is_free_.
  bool ring_in_range();
  // No reclaim left unfinished (a repair finishes one).
  void no_unfinished_reclaim();
  // Region r's fill: aligned, within the region, zero when free. True when r is used and
  // its entries can be walked.
  bool region_fill_valid(std::uint32_t r, std::uint32_t fill);
  // Used region r's entries parse completely, have zero padding and tile its fill
  // exactly. Marks their starts in starts_.
  void region_entries_tile(std::uint32_t r, std::uint32_t fill);
  // The sum of the regions' fills is the header's bytes_in_use.
  void bytes_in_use_matches(std::uint64_t fill_sum);
  // Slot i of bucket b (not empty) points at an entry start in a used region, carries
  // that region's generation tag and the entry's hash tag, sits in one of the two
  // buckets of the entry's key and is the only slot for that key.
  void slot_valid(std::uint64_t b, unsigned i, std::uint64_t slot);
  // The slots linked are the header's live_entries, at most max_entries.
  void live_entries_match(std::uint64_t linked);

  void problem(std::string what);
  Cache& c_;
  CheckReport rep_;
  std::vector<bool> is_free_;  // by region, from the ring state
  std::vector<bool> starts_;   // entry starts, one bit per 8-byte unit of the arena
};

// Attaches nothing: checks the segment `cache` is built on.
inline CheckReport check_segment(Cache& cache) { return SegmentChecker(cache).run(); }

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// Warm upgrade: a segment of an older format version, or of this format but another
// geometry, is migrated into a new segment instead of being refused or discarded.
//
// Steps (migrate_segment, run by Segment::open under its open lock):
//
//   1. read   map the old segment read-only (legacy/segment_reader.hpp: any format in
//             legacy/format_traits.hpp) and copy every linked, well-formed entry out;
//             expired ones are counted, duplicates of a key keep the newest
//   2. choose newest first: as many as the new max_entries allows whose bytes, appended
//             oldest first, fit the new arena without a reclaim (region_count - 1
//             regions); the rest are dropped, oldest first, and counted
//   3. write  create "<name>.migrating.<pid>" with the new geometry (Segment::create),
//             insert the chosen entries oldest first, byte for byte (the entry encoding
//             has not changed since format 1: same absolute expiry, same TTL, so the
//             remaining TTL a client sees is what it would have been)
//   4. switch rename(2) the new object over <name>: one atomic step; the old object
//             disappears with the name (a process still mapping it keeps its pages
//             until it unmaps)
//
// Crash safety: until step 4 the old segment is untouched under its name (it was only
// ever mapped read-only); a migration killed before it leaves "<name>.migrating.<pid>",
// which the next Segment::open removes (its pid is dead) before migrating again. After
// step 4 the new segment is complete under the name.
// A segment still attached by a live process (a stat slot owned by a live pid: an old
// serve still running) is not migrated (SegmentError in_use): its workers would go on
// serving from the replaced object.
// A segment that cannot be read (foreign, damaged header or layout, a version this
// build has no reader for) is a SegmentError, as for attach; no entry of a corrupt
// segment is ever copied unless it parses in full.
//
// Cost: one pass over the old index; heap for the live entries' bytes (at most the old
// arena's bytes in use) plus about 40 bytes per entry, freed when done; the new
// segment exists beside the old one until the rename (/dev/shm needs room for both).
#pragma once
#include <cstdint>
#include <string>

#include "segment.hpp"

namespace dnsarena::cache {

struct MigrationReport {
  std::uint32_t from_version = 0;
  Geometry from;
  Geometry to;
  std::uint64_t migrated = 0;   // entries in the new segment
  std::uint64_t dropped = 0;    // unexpired entries that did not fit (oldest first), conflicts included
  std::uint64_t conflicts = 0;  // of those, evicted by a full bucket pair while copying (near capacity:
                                // the index holds max_entries at load 0.8, not always exactly)
  std::uint64_t expired = 0;    // entries past their expiry, not copied
  std::uint64_t stale = 0;      // index slots of recycled regions (never answered anyway)
  std::uint64_t malformed = 0;  // index slots or entries that did not validate, not copied
  double milliseconds = 0;
  // One line: "format 2 -> 4, max_entries A, arena X bytes -> max_entries B, arena Y
  // bytes: N migrated, D dropped (oldest first), E expired, M malformed, C index
  // conflicts, in T ms"
  std::string summary() const;
};

// The name a migration of `name` works under before the rename: "<name>.migrating.<pid>".
std::string migration_temp_name(const std::string& name, long pid);
std::string migration_temp_prefix(const std::string& name);

// Steps 1-4 above. REQUIRES: the caller serialises openers (Segment::open's open lock).
// Throws SegmentError (nothing changed under <name>) when the old segment cannot be
// read or the new one cannot be created (no_space names the room needed).
Segment migrate_segment(const std::string& name, const Geometry& to, std::uint32_t now, MigrationReport* report);

}  // namespace dnsarena::cache

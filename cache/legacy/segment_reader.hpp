// SPDX-License-Identifier: GPL-3.0-or-later
// A read-only walk over a segment of any format this build can read (format_traits.hpp):
// the old segment a migration copies from (segment_migration.hpp). FORMAT-DEPENDENT.
//
// The object is mapped PROT_READ: nothing of it is ever written, so a failed or
// interrupted migration leaves it exactly as it was. Opening checks, in order: owner
// and mode as Segment::attach (someone else's segment is never read), size >= header,
// magic (foreign), init_state (not_ready), identity checksum (damaged), a readable
// format version (version_mismatch, naming the versions readable), build features, a
// geometry SegmentLayout accepts, part offsets that follow from it under that format's
// StatSlot size, and the object's size (damaged). Each is a SegmentError saying what
// was expected and what was found.
//
// The walk visits every index slot once. A slot is followed only when its entry lies
// inside the arena, in a region whose generation matches the slot's gen tag (format-
// dependent width), wholly below that region's fill; the entry is copied out (relaxed,
// as a lookup does), the generation checked again (seqlock: an old-build writer still
// running cannot hand over a torn copy), and parsed in full (EntryReader::validate_all,
// a well-formed key blob). Anything else is counted, never visited: a corrupt segment
// yields fewer entries, never a wrong one.
//
// Cost: one pass over the index and one copy per linked entry; no allocation per entry.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "../segment.hpp"
#include "format_traits.hpp"

namespace dnsarena::cache::legacy {

struct ReadCounts {
  std::uint64_t linked = 0;     // non-empty index slots
  std::uint64_t stale = 0;      // slots whose region was recycled since (gen tag differs)
  std::uint64_t malformed = 0;  // slots pointing outside the arena or past the fill, or at bytes that do not parse
};

class SegmentReader {
public:
  // Maps /dev/shm/<name> read-only and validates it (see above); throws SegmentError.
  explicit SegmentReader(const std::string& name);
  ~SegmentReader();
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  std::uint32_t format_version() const { return traits_->version; }
  const Geometry& geometry() const { return geometry_; }
  const SegmentLayout& layout() const { return layout_; }

  // Pids (other than this process) that hold a stat slot of the segment and are alive:
  // processes attached to it (owner_pid is the first field of a StatSlot in every format).
  std::vector<long> live_owners() const;

  // Calls visit(entry) with a private copy of each linked, well-formed entry (its
  // unpadded bytes; valid only during the call). Expired entries are visited too.
  ReadCounts for_each_entry(const std::function<void(std::span<const std::uint8_t> entry)>& visit) const;

private:
  std::string name_;
  const std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  const FormatTraits* traits_ = nullptr;
  Geometry geometry_;
  SegmentLayout layout_;
};

}  // namespace dnsarena::cache::legacy

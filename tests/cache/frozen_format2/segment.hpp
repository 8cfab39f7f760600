// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/segment.hpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// The shared-memory segment: create, attach, reset, remove. FORMAT-DEPENDENT (layout).
//
// Attach protocol, as a state machine over what is found under the name:
//
//   found under NAME          create()          attach()            open(policy)
//   ----------------------    ---------------   -----------------   ---------------------------
//   nothing                   new, READY        not_found           new, READY   (created)
//   READY, same version,      already_exists    attached            attached     (attached)
//     same geometry
//   READY, same version,      already_exists    attached (its own   refuse: geometry_mismatch
//     other geometry                            geometry)           reset: new   (recreated)
//   other version / features  already_exists    version_mismatch    refuse: version_mismatch
//                                                                    reset: new   (recreated)
//   damaged header, foreign   already_exists    damaged / foreign   refuse: that error
//     magic, size too small                                          reset: new   (recreated)
//   creator died before READY already_exists    not_ready           reset: new; else not_ready
//   group/other-writable or   already_exists    unsafe_permissions  unsafe_permissions (never
//     owned by another user                                          reset: someone else's file)
//
// A worker's use of it:
//
//   Segment seg = Segment::open("dnsarena", geometry, OpenPolicy::refuse, &outcome);
//   Cache cache(seg);                      // claims a stat slot
//   ... cache.lookup(...) / cache.insert(...) ...
//   // detach = destroy `cache` and `seg`; the segment stays for the next process.
//   Segment::remove("dnsarena");           // only when the operator asks
//
// Creation writes the whole header, initialises the writer lock, and stores init_state =
// kInitReady last (release), so an attacher that sees READY sees a complete header.
#pragma once
#include <sys/types.h>

#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "index_slot.hpp"
#include "region_table.hpp"
#include "segment_header.hpp"
#include "stat_slots.hpp"

namespace dnsarena::frozen2 {

// What the operator asks for. Derived quantities are in SegmentLayout.
struct Geometry {
  std::uint64_t max_entries = 1'000'000;
  std::uint64_t arena_bytes = 256ull << 20;
  std::uint32_t region_bytes = 1u << 20;
  std::uint32_t stat_slots = 64;
  bool operator==(const Geometry&) const = default;
};

// Where each part lives. compute() validates the geometry and throws
// std::invalid_argument naming the bad parameter.
struct SegmentLayout {
  std::uint64_t max_entries = 0;
  std::uint32_t region_bytes = 0;
  std::uint32_t region_count = 0;
  std::uint64_t bucket_count = 0;
  std::uint32_t stat_slots = 0;
  std::uint64_t stats_offset = 0, regions_offset = 0, index_offset = 0, arena_offset = 0, total_bytes = 0;
  std::uint64_t arena_bytes() const { return std::uint64_t{region_count} * region_bytes; }
  static SegmentLayout compute(const Geometry& g);
};

// Buckets are sized for this many entries each at full capacity (load factor 0.8).
inline constexpr double kEntriesPerBucketAtCapacity = 6.4;

class SegmentError : public std::runtime_error {
public:
  enum class Kind {
    not_found, already_exists, foreign, version_mismatch, damaged, not_ready,
    unsafe_permissions, geometry_mismatch, system
  };
  SegmentError(Kind k, const std::string& what) : std::runtime_error(what), kind_(k) {}
  Kind kind() const { return kind_; }

private:
  Kind kind_;
};

enum class OpenPolicy { refuse, reset };
enum class OpenOutcome { created, attached, recreated };

class Segment {
public:
  static Segment create(const std::string& name, const Geometry& g, mode_t mode = 0600);
  static Segment attach(const std::string& name);
  static Segment open(const std::string& name, const Geometry& g, OpenPolicy policy, OpenOutcome* outcome = nullptr);
  // Returns true when something was removed.
  static bool remove(const std::string& name);
  static bool exists(const std::string& name);

  Segment(Segment&&) noexcept = default;
  Segment& operator=(Segment&&) noexcept = default;
  ~Segment();

  // When set, the destructor removes the name (private segments of benchmarks and tests).
  void set_remove_on_destroy(bool v) { remove_on_destroy_ = v; }

  const std::string& name() const { return name_; }
  std::uint8_t* base() const { return static_cast<std::uint8_t*>(region_.get_address()); }
  std::size_t size() const { return region_.get_size(); }
  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(base()); }
  const SegmentLayout& layout() const { return layout_; }
  Geometry geometry() const;

  StatSlot* stat_slots() const { return reinterpret_cast<StatSlot*>(base() + layout_.stats_offset); }
  RegionDesc* regions() const { return reinterpret_cast<RegionDesc*>(base() + layout_.regions_offset); }
  Bucket* buckets() const { return reinterpret_cast<Bucket*>(base() + layout_.index_offset); }
  std::uint8_t* arena() const { return base() + layout_.arena_offset; }

private:
  Segment() = default;
  std::string name_;
  boost::interprocess::shared_memory_object shm_;
  boost::interprocess::mapped_region region_;
  SegmentLayout layout_;
  bool remove_on_destroy_ = false;
};

// XXH64 over the header's identity bytes.
std::uint64_t identity_checksum(const SegmentHeader& h);

}  // namespace dnsarena::frozen2

// SPDX-License-Identifier: GPL-3.0-or-later
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
//   older readable version,                                          migrate: copy (migrated)
//     or other geometry (above)                                      (segment_migration.hpp)
//   damaged header, foreign   already_exists    damaged / foreign   refuse: that error
//     magic, size too small                                          reset: new   (recreated)
//   creator died before READY already_exists    not_ready           new          (recreated)
//     (only older builds: this one publishes a READY segment or nothing)
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
// Creation works on a temporary object "<name>.creating.<pid>.<n>": it sizes it, reserves
// every page (posix_fallocate; too little room in /dev/shm is a no_space error naming the
// size needed and the size free), writes the whole header, initialises the writer lock,
// stores init_state = kInitReady (release), and only then link()s it under <name>. link
// never replaces a name: of two creators exactly one wins, the other gets already_exists.
// A creator killed half-way leaves only its temporary, which the next open() removes,
// as it removes the "<name>.migrating.<pid>" of a migration whose process died.
//
// open() runs under a per-user lock file (/dev/shm/.dnsarena-open-<uid>.lock, flock,
// released by the kernel if its holder dies, waited for at most 30 s), so two processes
// started at once never both create or both reset: they end on one segment (one inode).
// Under that lock a segment still not READY has a dead creator and is recreated.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "index_slot.hpp"
#include "region_table.hpp"
#include "segment_header.hpp"
#include "stat_slots.hpp"

namespace dnsarena::cache {

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
    unsafe_permissions, geometry_mismatch, no_space, system,
    in_use  // a migration found live processes attached to the old segment
  };
  SegmentError(Kind k, const std::string& what) : std::runtime_error(what), kind_(k) {}
  Kind kind() const { return kind_; }

private:
  Kind kind_;
};

// migrate: a segment of an older readable format, or of another geometry, is migrated
// warm (segment_migration.hpp); what cannot be read is refused as by `refuse`.
// migrate_or_reset: the same, and what cannot be migrated is recreated as by `reset`.
enum class OpenPolicy { refuse, reset, migrate, migrate_or_reset };
enum class OpenOutcome { created, attached, recreated, migrated };
struct MigrationReport;

class Segment {
public:
  static Segment create(const std::string& name, const Geometry& g, mode_t mode = 0600);
  // A segment of this process alone (simulators, benchmarks): an anonymous private
  // mapping, 2 MiB aligned, advised MADV_HUGEPAGE (transparent huge pages apply to it
  // when /sys/kernel/mm/transparent_hugepage/enabled is always or madvise; shared memory
  // follows shmem_enabled, often never). No name: nothing to attach or remove.
  // `shared_across_fork`: MAP_SHARED | MAP_ANONYMOUS instead, so that processes forked
  // after the call share it (the miniature caches of workers/miss_ratio_curves.hpp, made
  // by serve's supervisor before it forks its workers); it lives as long as one of them
  // maps it. Huge pages then follow shmem_enabled too.
  static Segment create_private(const Geometry& g, bool shared_across_fork = false);
  static Segment attach(const std::string& name);
  // `report` (when given) is filled when the outcome is `migrated`.
  static Segment open(const std::string& name, const Geometry& g, OpenPolicy policy, OpenOutcome* outcome = nullptr,
                      MigrationReport* report = nullptr);
  // Returns true when something was removed. (The per-user open lock file stays.)
  static bool remove(const std::string& name);
  static bool exists(const std::string& name);

  Segment(Segment&& other) noexcept;
  Segment& operator=(Segment&& other) noexcept;
  ~Segment();

  // Gives this object the name `name` in /dev/shm, atomically replacing whatever is
  // there (rename(2)): how a migrated segment takes over its old name.
  void rename_to(const std::string& name);

  // Maps every page of this process's mapping now, writable, in one system call
  // (MADV_POPULATE_WRITE), instead of one page fault per 4 KiB page on first touch.
  // Changes no byte. Neither create() nor attach() calls it: a serving cache's resident
  // memory grows with what it writes, as the fleet model assumes (memory_model.hpp).
  // `dnsarena bench` calls it before its fill, so the insert rate excludes first-touch
  // faults. A hint: nothing happens where the kernel lacks it.
  void populate() const;

  // When set, the destructor removes the name (private segments of benchmarks and tests).
  void set_remove_on_destroy(bool v) { remove_on_destroy_ = v; }

  const std::string& name() const { return name_; }
  std::uint8_t* base() const { return base_; }
  std::size_t size() const { return size_; }
  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(base()); }
  const SegmentLayout& layout() const { return layout_; }
  Geometry geometry() const;

  StatSlot* stat_slots() const { return reinterpret_cast<StatSlot*>(base() + layout_.stats_offset); }
  RegionDesc* regions() const { return reinterpret_cast<RegionDesc*>(base() + layout_.regions_offset); }
  Bucket* buckets() const { return reinterpret_cast<Bucket*>(base() + layout_.index_offset); }
  std::uint8_t* arena() const { return base() + layout_.arena_offset; }

private:
  // The Boost.Interprocess shared memory object and its mapping (segment.cpp): kept out
  // of this header so that the installed library's users need no Boost.
  struct Mapping;
  Segment();
  // Maps the whole object read-write and sets base_ and size_.
  void map();
  std::string name_;
  std::unique_ptr<Mapping> mapping_;
  std::uint8_t* base_ = nullptr;  // mapping_'s address and size, read on every lookup
  std::size_t size_ = 0;
  SegmentLayout layout_;
  bool remove_on_destroy_ = false;
};

// XXH64 over the header's identity bytes.
std::uint64_t identity_checksum(const SegmentHeader& h);

}  // namespace dnsarena::cache

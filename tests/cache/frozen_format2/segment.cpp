// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/segment.cpp as of commit 80635ef (format 2), namespace renamed to dnsarena::frozen2.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// FORMAT-DEPENDENT: writes and validates the segment header and layout.
#include "segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <boost/interprocess/exceptions.hpp>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include "arena_offset.hpp"
#include "robust_mutex.hpp"

namespace bip = boost::interprocess;

namespace dnsarena::frozen2 {

namespace {

// Huge pages where the system allows them (shmem_enabled = advise or always): at
// millions of entries a lookup's cost is dominated by TLB misses on 4 KiB pages.
// A no-op, not an error, where shmem huge pages are off.
void advise_huge_pages(const bip::mapped_region& region) {
  ::madvise(region.get_address(), region.get_size(), MADV_HUGEPAGE);
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string shm_path(const std::string& name) { return "/dev/shm/" + name; }

void check_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name.find('/') != std::string::npos)
    throw std::invalid_argument("segment name must be 1-200 characters without '/': '" + name + "'");
}

using Kind = SegmentError::Kind;

}  // namespace

SegmentLayout SegmentLayout::compute(const Geometry& g) {
  if (g.max_entries == 0) throw std::invalid_argument("max_entries must be at least 1");
  if (g.region_bytes < 1024 || (g.region_bytes & (g.region_bytes - 1)) != 0 || g.region_bytes > (1u << 30))
    throw std::invalid_argument("region_bytes must be a power of two between 1024 and 1 GiB, got " +
                                std::to_string(g.region_bytes));
  if (g.stat_slots == 0 || g.stat_slots > 4096)
    throw std::invalid_argument("stat_slots must be 1..4096, got " + std::to_string(g.stat_slots));
  SegmentLayout l;
  l.max_entries = g.max_entries;
  l.region_bytes = g.region_bytes;
  const std::uint64_t regions = std::max<std::uint64_t>(3, (g.arena_bytes + g.region_bytes - 1) / g.region_bytes);
  if (regions * g.region_bytes > kMaxArenaBytes || regions > 0xFFFFFFFFull)
    throw std::invalid_argument("arena_bytes too large: at most " + std::to_string(kMaxArenaBytes) + " bytes");
  l.region_count = static_cast<std::uint32_t>(regions);
  l.bucket_count = static_cast<std::uint64_t>(std::ceil(static_cast<double>(g.max_entries) / kEntriesPerBucketAtCapacity));
  if (l.bucket_count > 0xFFFFFFFFull) throw std::invalid_argument("max_entries too large");
  l.stat_slots = g.stat_slots;
  l.stats_offset = sizeof(SegmentHeader);
  l.regions_offset = align_up(l.stats_offset + std::uint64_t{g.stat_slots} * sizeof(StatSlot), 64);
  l.index_offset = align_up(l.regions_offset + regions * sizeof(RegionDesc), 64);
  l.arena_offset = align_up(l.index_offset + l.bucket_count * sizeof(Bucket), 4096);
  l.total_bytes = l.arena_offset + regions * g.region_bytes;
  return l;
}

std::uint64_t identity_checksum(const SegmentHeader& h) { return XXH64(&h, kIdentityBytes, 0x6172656E61ULL); }

Segment::~Segment() {
  if (remove_on_destroy_ && !name_.empty()) bip::shared_memory_object::remove(name_.c_str());
}

Geometry Segment::geometry() const {
  Geometry g;
  g.max_entries = layout_.max_entries;
  g.arena_bytes = layout_.arena_bytes();
  g.region_bytes = layout_.region_bytes;
  g.stat_slots = layout_.stat_slots;
  return g;
}

bool Segment::exists(const std::string& name) {
  struct stat st;
  return ::stat(shm_path(name).c_str(), &st) == 0;
}

bool Segment::remove(const std::string& name) {
  check_name(name);
  return bip::shared_memory_object::remove(name.c_str());
}

Segment Segment::create(const std::string& name, const Geometry& g, mode_t mode) {
  check_name(name);
  const SegmentLayout l = SegmentLayout::compute(g);
  Segment s;
  s.name_ = name;
  s.layout_ = l;
  try {
    s.shm_ = bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, bip::permissions(mode));
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::already_exists_error)
      throw SegmentError(Kind::already_exists, "segment '" + name + "' already exists");
    throw SegmentError(Kind::system, "cannot create segment '" + name + "': " + e.what());
  }
  ::fchmod(s.shm_.get_mapping_handle().handle, mode);  // not subject to umask
  try {
    s.shm_.truncate(static_cast<bip::offset_t>(l.total_bytes));
    s.region_ = bip::mapped_region(s.shm_, bip::read_write);
    advise_huge_pages(s.region_);
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(name.c_str());
    throw SegmentError(Kind::system, "cannot size or map segment '" + name + "' (" + std::to_string(l.total_bytes) +
                                         " bytes): " + e.what());
  }
  // The object is zero-filled by ftruncate: every counter, region and slot starts at 0,
  // and untouched index and arena pages cost no memory until used.
  SegmentHeader& h = s.header();
  h.magic = kSegmentMagic;
  h.format_version = kFormatVersion;
  h.header_bytes = sizeof(SegmentHeader);
  h.build_features = kBuildFeatures;
  h.created_unix = static_cast<std::uint64_t>(std::time(nullptr));
  h.max_entries = l.max_entries;
  h.arena_bytes = l.arena_bytes();
  h.region_bytes = l.region_bytes;
  h.region_count = l.region_count;
  h.bucket_count = l.bucket_count;
  h.stat_slots = l.stat_slots;
  h.stats_offset = l.stats_offset;
  h.regions_offset = l.regions_offset;
  h.index_offset = l.index_offset;
  h.arena_offset = l.arena_offset;
  h.total_bytes = l.total_bytes;
  h.identity_checksum = identity_checksum(h);
  robust_mutex_init(&h.writer_lock);
  h.head_and_free.store(pack_head_free(0, l.region_count - 1), std::memory_order_relaxed);
  h.reclaiming_region.store(kNoRegion, std::memory_order_relaxed);
  h.init_state.store(kInitReady, std::memory_order_release);
  return s;
}

Segment Segment::attach(const std::string& name) {
  check_name(name);
  Segment s;
  s.name_ = name;
  try {
    s.shm_ = bip::shared_memory_object(bip::open_only, name.c_str(), bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::not_found_error)
      throw SegmentError(Kind::not_found, "segment '" + name + "' does not exist (" + shm_path(name) + ")");
    throw SegmentError(Kind::system, "cannot open segment '" + name + "': " + e.what());
  }
  struct stat st;
  if (::fstat(s.shm_.get_mapping_handle().handle, &st) != 0)
    throw SegmentError(Kind::system, "cannot stat segment '" + name + "': " + std::strerror(errno));
  if (st.st_uid != ::geteuid())
    throw SegmentError(Kind::unsafe_permissions, "segment '" + name + "' is owned by uid " + std::to_string(st.st_uid) +
                                                     ", expected uid " + std::to_string(::geteuid()) + " (this user)");
  if ((st.st_mode & 0022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw SegmentError(Kind::unsafe_permissions, "segment '" + name + "' has mode " + mode +
                                                     ": writable by group or others, expected 0600 (or at most 0644)");
  }
  if (static_cast<std::uint64_t>(st.st_size) < sizeof(SegmentHeader))
    throw SegmentError(Kind::damaged, "segment '" + name + "' is " + std::to_string(st.st_size) +
                                          " bytes, smaller than a header (" + std::to_string(sizeof(SegmentHeader)) + ")");
  try {
    s.region_ = bip::mapped_region(s.shm_, bip::read_write);
    advise_huge_pages(s.region_);
  } catch (const bip::interprocess_exception& e) {
    throw SegmentError(Kind::system, "cannot map segment '" + name + "': " + e.what());
  }
  const SegmentHeader& h = s.header();
  if (h.magic != kSegmentMagic)
    throw SegmentError(Kind::foreign, "segment '" + name + "' is not a dnsarena segment: magic " + hex(h.magic) +
                                          ", expected " + hex(kSegmentMagic));
  if (h.init_state.load(std::memory_order_acquire) != kInitReady)
    throw SegmentError(Kind::not_ready, "segment '" + name + "' was never completely initialised (its creator died?)");
  const std::uint64_t sum = identity_checksum(h);
  if (sum != h.identity_checksum)
    throw SegmentError(Kind::damaged, "segment '" + name + "' has a damaged header: identity checksum " + hex(sum) +
                                          ", header says " + hex(h.identity_checksum));
  if (h.format_version != kFormatVersion)
    throw SegmentError(Kind::version_mismatch, "segment '" + name + "' has format version " +
                                                   std::to_string(h.format_version) + ", this build reads version " +
                                                   std::to_string(kFormatVersion));
  if (h.build_features != kBuildFeatures || h.header_bytes != sizeof(SegmentHeader))
    throw SegmentError(Kind::version_mismatch, "segment '" + name + "' was built with features " +
                                                   hex(h.build_features) + ", this build has " + hex(kBuildFeatures));
  Geometry g;
  g.max_entries = h.max_entries;
  g.arena_bytes = h.arena_bytes;
  g.region_bytes = h.region_bytes;
  g.stat_slots = h.stat_slots;
  SegmentLayout l;
  try {
    l = SegmentLayout::compute(g);
  } catch (const std::invalid_argument& e) {
    throw SegmentError(Kind::damaged, "segment '" + name + "' has an invalid geometry: " + e.what());
  }
  if (l.region_count != h.region_count || l.bucket_count != h.bucket_count || l.stats_offset != h.stats_offset ||
      l.regions_offset != h.regions_offset || l.index_offset != h.index_offset || l.arena_offset != h.arena_offset ||
      l.total_bytes != h.total_bytes)
    throw SegmentError(Kind::damaged, "segment '" + name + "' header layout does not follow from its geometry");
  if (static_cast<std::uint64_t>(st.st_size) < l.total_bytes)
    throw SegmentError(Kind::damaged, "segment '" + name + "' is " + std::to_string(st.st_size) +
                                          " bytes, its header says " + std::to_string(l.total_bytes));
  s.layout_ = l;
  return s;
}

Segment Segment::open(const std::string& name, const Geometry& g, OpenPolicy policy, OpenOutcome* outcome) {
  const SegmentLayout want = SegmentLayout::compute(g);  // validate before touching anything
  auto set = [&](OpenOutcome o) {
    if (outcome) *outcome = o;
  };
  if (!exists(name)) {
    try {
      set(OpenOutcome::created);
      return create(name, g);
    } catch (const SegmentError& e) {
      if (e.kind() != Kind::already_exists) throw;  // lost a creation race: attach below
    }
  }
  try {
    Segment s = attach(name);
    const SegmentLayout& have = s.layout();
    if (have.max_entries == want.max_entries && have.region_bytes == want.region_bytes &&
        have.region_count == want.region_count && have.stat_slots == want.stat_slots) {
      set(OpenOutcome::attached);
      return s;
    }
    if (policy == OpenPolicy::refuse)
      throw SegmentError(Kind::geometry_mismatch,
                         "segment '" + name + "' has another geometry (max_entries " + std::to_string(have.max_entries) +
                             ", arena " + std::to_string(have.arena_bytes()) + " bytes, region " +
                             std::to_string(have.region_bytes) + ", stat slots " + std::to_string(have.stat_slots) +
                             ") than configured (max_entries " + std::to_string(want.max_entries) + ", arena " +
                             std::to_string(want.arena_bytes()) + " bytes, region " + std::to_string(want.region_bytes) +
                             ", stat slots " + std::to_string(want.stat_slots) + "); reset to recreate it");
  } catch (const SegmentError& e) {
    if (policy == OpenPolicy::refuse || e.kind() == Kind::unsafe_permissions || e.kind() == Kind::system) throw;
  }
  remove(name);
  set(OpenOutcome::recreated);
  return create(name, g);
}

}  // namespace dnsarena::frozen2

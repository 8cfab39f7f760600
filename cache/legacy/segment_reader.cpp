// SPDX-License-Identifier: GPL-3.0-or-later
// FORMAT-DEPENDENT: validates and walks a segment of a readable format (format_traits.hpp).
#include "segment_reader.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../arena_offset.hpp"
#include "../cache_key.hpp"
#include "../entry_codec.hpp"
#include "../relaxed_copy.hpp"
#include "../segment_header.hpp"

namespace dnsarena::cache::legacy {

namespace {

using Kind = SegmentError::Kind;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The part offsets `g` gives under `t`: SegmentLayout::compute's, with that format's
// StatSlot size (every offset after the stat slots moves with it).
SegmentLayout layout_for(const Geometry& g, const FormatTraits& t) {
  SegmentLayout l = SegmentLayout::compute(g);
  l.regions_offset = align_up(l.stats_offset + std::uint64_t{g.stat_slots} * t.stat_slot_bytes, 64);
  l.index_offset = align_up(l.regions_offset + std::uint64_t{l.region_count} * sizeof(RegionDesc), 64);
  l.arena_offset = align_up(l.index_offset + l.bucket_count * sizeof(Bucket), 4096);
  l.total_bytes = l.arena_offset + std::uint64_t{l.region_count} * l.region_bytes;
  return l;
}

// Loads of shared words through a read-only mapping: atomic (the old segment may still
// have an old-build writer) without needing a writable std::atomic.
std::uint64_t load_u64(const std::uint8_t* p, int order) {
  return __atomic_load_n(reinterpret_cast<const std::uint64_t*>(p), order);
}
std::uint32_t load_u32(const std::uint8_t* p, int order) {
  return __atomic_load_n(reinterpret_cast<const std::uint32_t*>(p), order);
}

}  // namespace

SegmentReader::SegmentReader(const std::string& name) : name_(name) {
  const std::string path = "/dev/shm/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) throw SegmentError(Kind::not_found, "segment '" + name + "' does not exist (" + path + ")");
    throw SegmentError(Kind::system, "cannot open segment '" + name + "': " + std::strerror(e));
  }
  struct stat st{};
  const int stat_rc = ::fstat(fd, &st);
  if (stat_rc != 0 || st.st_uid != ::geteuid() || (st.st_mode & 0022) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (stat_rc != 0) throw SegmentError(Kind::system, "cannot stat segment '" + name + "'");
    throw SegmentError(Kind::unsafe_permissions, "segment '" + name + "' is not a regular file of this user, mode at "
                                                 "most 0644: it is not read");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ < sizeof(SegmentHeader)) {
    ::close(fd);
    throw SegmentError(Kind::damaged, "segment '" + name + "' is " + std::to_string(size_) +
                                          " bytes, smaller than a header (" + std::to_string(sizeof(SegmentHeader)) + ")");
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw SegmentError(Kind::system, "cannot map segment '" + name + "': " + std::strerror(errno));
  base_ = static_cast<const std::uint8_t*>(p);
  try {
    const auto& h = *reinterpret_cast<const SegmentHeader*>(base_);
    if (h.magic != kSegmentMagic)
      throw SegmentError(Kind::foreign, "segment '" + name + "' is not a dnsarena segment: magic " + hex(h.magic) +
                                            ", expected " + hex(kSegmentMagic));
    if (load_u32(base_ + offsetof(SegmentHeader, init_state), __ATOMIC_ACQUIRE) != kInitReady)
      throw SegmentError(Kind::not_ready, "segment '" + name + "' was never completely initialised");
    if (identity_checksum(h) != h.identity_checksum)
      throw SegmentError(Kind::damaged, "segment '" + name + "' has a damaged header: identity checksum " +
                                            hex(identity_checksum(h)) + ", header says " + hex(h.identity_checksum));
    traits_ = format_traits(h.format_version);
    if (!traits_)
      throw SegmentError(Kind::version_mismatch, "segment '" + name + "' has format version " +
                                                     std::to_string(h.format_version) + ": this build reads versions " +
                                                     std::to_string(kOldestReadableFormat) + " to " +
                                                     std::to_string(kFormatVersion));
    if (h.build_features != kBuildFeatures || h.header_bytes != sizeof(SegmentHeader))
      throw SegmentError(Kind::version_mismatch, "segment '" + name + "' was built with features " +
                                                     hex(h.build_features) + ", this build has " + hex(kBuildFeatures));
    geometry_ = Geometry{h.max_entries, h.arena_bytes, h.region_bytes, h.stat_slots};
    try {
      layout_ = layout_for(geometry_, *traits_);
    } catch (const std::invalid_argument& e) {
      throw SegmentError(Kind::damaged, "segment '" + name + "' has an invalid geometry: " + e.what());
    }
    const SegmentLayout& l = layout_;
    if (l.region_count != h.region_count || l.bucket_count != h.bucket_count || l.stats_offset != h.stats_offset ||
        l.regions_offset != h.regions_offset || l.index_offset != h.index_offset || l.arena_offset != h.arena_offset ||
        l.total_bytes != h.total_bytes)
      throw SegmentError(Kind::damaged, "segment '" + name + "' header layout does not follow from its geometry (format " +
                                            std::to_string(traits_->version) + ")");
    if (size_ < l.total_bytes)
      throw SegmentError(Kind::damaged, "segment '" + name + "' is " + std::to_string(size_) +
                                            " bytes, its header says " + std::to_string(l.total_bytes));
  } catch (...) {
    ::munmap(const_cast<std::uint8_t*>(base_), size_);
    throw;
  }
}

SegmentReader::~SegmentReader() { ::munmap(const_cast<std::uint8_t*>(base_), size_); }

std::vector<long> SegmentReader::live_owners() const {
  std::vector<long> pids;
  for (std::uint64_t i = 0; i < geometry_.stat_slots; ++i) {
    const std::uint32_t pid = load_u32(base_ + layout_.stats_offset + i * traits_->stat_slot_bytes, __ATOMIC_ACQUIRE);
    if (pid == 0 || static_cast<pid_t>(pid) == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) pids.push_back(pid);
  }
  return pids;
}

ReadCounts SegmentReader::for_each_entry(const std::function<void(std::span<const std::uint8_t>)>& visit) const {
  ReadCounts counts;
  std::vector<std::uint8_t> copy(kMaxEntryBytes + 8);
  const std::uint8_t* regions = base_ + layout_.regions_offset;
  const std::uint8_t* arena = base_ + layout_.arena_offset;
  const std::uint64_t arena_bytes = layout_.arena_bytes();
  const std::uint64_t slots = layout_.bucket_count * kSlotsPerBucket;
  const std::uint8_t* index = base_ + layout_.index_offset;
  for (std::uint64_t i = 0; i < slots; ++i) {
    const std::uint64_t s = load_u64(index + i * 8, __ATOMIC_ACQUIRE);
    if (s == 0) continue;
    ++counts.linked;
    const ArenaOffset off = slot_offset(s);  // the offset's bits are the same in every format
    const std::uint64_t byte_off = off.is_null() ? arena_bytes : off.byte_offset();
    if (byte_off + kEntryHeaderBytes + kKeyFixedBytes > arena_bytes) {
      ++counts.malformed;
      continue;
    }
    const std::uint64_t region = byte_off / layout_.region_bytes;
    const std::uint8_t* desc = regions + region * sizeof(RegionDesc);
    const std::uint64_t g1 = load_u64(desc + offsetof(RegionDesc, generation), __ATOMIC_ACQUIRE);
    const std::uint32_t slot_tag = static_cast<std::uint32_t>(s >> traits_->gen_tag_shift) & traits_->gen_tag_mask;
    if ((g1 & traits_->gen_tag_mask) != slot_tag) {
      ++counts.stale;
      continue;
    }
    const std::uint64_t in_region = byte_off % layout_.region_bytes;
    const std::uint32_t fill = load_u32(desc + offsetof(RegionDesc, fill), __ATOMIC_ACQUIRE);
    const std::uint8_t* src = arena + byte_off;
    const bool fill_sane = fill <= layout_.region_bytes && in_region + kEntryHeaderBytes <= fill;
    const std::size_t len = fill_sane ? relaxed_load_u16(src) : 0;
    if (len < kEntryHeaderBytes + kKeyFixedBytes || in_region + len > fill) {
      ++counts.malformed;
      continue;
    }
    relaxed_copy_out(copy.data(), src, len);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_u64(desc + offsetof(RegionDesc, generation), __ATOMIC_RELAXED) != g1) {
      ++counts.stale;
      continue;
    }
    const std::span<const std::uint8_t> entry{copy.data(), len};
    EntryReader reader(entry);
    CacheKey key;
    if (!reader.valid() || !reader.validate_all() || !CacheKey::from_blob(reader.key_blob(), key)) {
      ++counts.malformed;
      continue;
    }
    visit(entry);
  }
  return counts;
}

}  // namespace dnsarena::cache::legacy

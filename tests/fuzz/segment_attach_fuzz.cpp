// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: Segment::attach on arbitrary header bytes, then a reader's first steps
// (a Cache on the segment, lookups, stats). The bytes go into a shared-memory object of
// this process's own (unique name, removed at exit), exactly as attach finds a segment.
// Input: 1 mode byte, then the header's bytes (the rest of the 4 KiB header is zero).
//   mode bit0: make the identity right (magic, format, features, header size, READY, and
//              the identity checksum recomputed over what the fuzzer wrote), so mutations
//              reach the geometry checks instead of stopping at the checksum
//   mode bit1: also write the part offsets that follow from the fuzzed geometry (when it
//              is valid), so attach can succeed and the read path runs on fuzzed state
//   mode bit2: size the object as the header says (up to 16 MiB), else header only
// Every outcome must be an attached segment or a SegmentError: no crash, no SIGBUS.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "cache/segment.hpp"
#include "cache/segment_header.hpp"

using namespace dnsarena::cache;

namespace {

// A plain buffer, not a static std::string: the atexit handler runs after static
// objects constructed later than its registration are destroyed.
char g_name[64];

std::string shm_name() { return g_name; }

void remove_object() { ::shm_unlink((std::string("/") + g_name).c_str()); }

bool write_object(const std::vector<std::uint8_t>& header, std::uint64_t size) {
  const int fd = ::shm_open(("/" + shm_name()).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) std::abort();
  bool ok = ::ftruncate(fd, static_cast<off_t>(size)) == 0 &&
            ::pwrite(fd, header.data(), std::min<std::size_t>(header.size(), size), 0) >= 0;
  ::close(fd);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::snprintf(g_name, sizeof g_name, "dnsarena-fuzz-attach-%d", static_cast<int>(::getpid()));
  std::atexit(remove_object);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = data[0];
  std::vector<std::uint8_t> header(sizeof(SegmentHeader), 0);
  std::memcpy(header.data(), data + 1, std::min(size - 1, header.size()));
  auto* h = reinterpret_cast<SegmentHeader*>(header.data());
  if (mode & 2) {
    Geometry g;
    g.max_entries = h->max_entries;
    g.arena_bytes = h->arena_bytes;
    g.region_bytes = h->region_bytes;
    g.stat_slots = h->stat_slots;
    try {
      const SegmentLayout l = SegmentLayout::compute(g);
      h->region_count = l.region_count;
      h->bucket_count = l.bucket_count;
      h->stats_offset = l.stats_offset;
      h->regions_offset = l.regions_offset;
      h->index_offset = l.index_offset;
      h->arena_offset = l.arena_offset;
      h->total_bytes = l.total_bytes;
    } catch (const std::exception&) {
    }
  }
  if (mode & 1) {
    h->magic = kSegmentMagic;
    h->format_version = kFormatVersion;
    h->header_bytes = sizeof(SegmentHeader);
    h->build_features = kBuildFeatures;
    h->identity_checksum = identity_checksum(*h);
    h->init_state.store(kInitReady);
  }
  std::uint64_t object_bytes = header.size();
  if ((mode & 4) && h->total_bytes >= header.size() && h->total_bytes <= (16u << 20)) object_bytes = h->total_bytes;
  if (!write_object(header, object_bytes)) return 0;
  try {
    Segment seg = Segment::attach(shm_name());
    Cache c(seg, SlotRole::tool);
    const std::uint8_t qname[] = {3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0};
    EntryCopy copy;
    for (std::uint16_t qtype : {1, 28, 16})
      (void)c.lookup(CacheKey(qname, qtype), static_cast<std::uint32_t>(h->clock_high_water.load()), copy);
    (void)c.stats();
  } catch (const SegmentError&) {
  } catch (const std::exception&) {
  }
  return 0;
}

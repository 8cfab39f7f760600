// SPDX-License-Identifier: GPL-3.0-or-later
// FORMAT-DEPENDENT: writes and validates the segment header and layout.
#include "segment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <thread>
#include <utility>

#include "arena_offset.hpp"
#include "failpoint.hpp"
#include "robust_mutex.hpp"
#include "segment_migration.hpp"

namespace bip = boost::interprocess;

namespace dnsarena::cache {

namespace {

// Asks for huge pages: at millions of entries a lookup's cost is dominated by TLB misses
// on 4 KiB pages. A no-op, not an error, where shmem huge pages are off. NOTE: for a
// /dev/shm segment the advice matters only where the pages are allocated at fault; the
// create path reserves them with posix_fallocate first, so they are 2 MiB only when the
// tmpfs is mounted huge=within_size or huge=always (common::shm_huge_pages_unavailable).
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

std::string mib(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

[[noreturn]] void throw_no_space(const std::string& name, std::uint64_t needed, std::uint64_t free_bytes) {
  throw SegmentError(Kind::no_space, "segment '" + name + "' needs " + std::to_string(needed) + " bytes (" +
                                         mib(needed) + ") of shared memory but /dev/shm has " +
                                         std::to_string(free_bytes) + " bytes (" + mib(free_bytes) +
                                         ") free: lower the cache's arena_bytes or max_entries, or give /dev/shm "
                                         "more room (a container's default is 64 MiB: docker run --shm-size)");
}

std::uint64_t shm_free_bytes() {
  struct statvfs v{};
  if (::statvfs("/dev/shm", &v) != 0) return ~std::uint64_t{0};  // unknown: let fallocate decide
  return std::uint64_t{v.f_bavail} * v.f_frsize;
}

// Creation happens under a temporary name, "<name>.creating.<pid>.<n>", linked to <name>
// only once the header is READY.
std::string temp_prefix(const std::string& name) { return name + ".creating."; }
std::string temp_name(const std::string& name) {
  static std::atomic<unsigned> counter{0};
  return temp_prefix(name) + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// Removes the temporaries of creators that died before linking theirs (they hold no
// data), and those of migrations that died before their rename (the old segment is
// still under the name; the temporary's own ".creating." temporaries go with it).
void remove_dead_temporaries(const std::string& name) {
  DIR* d = ::opendir("/dev/shm");
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    for (const std::string& prefix : {temp_prefix(name), migration_temp_prefix(name)}) {
      if (n.rfind(prefix, 0) != 0) continue;
      const long pid = std::strtol(n.c_str() + prefix.size(), nullptr, 10);
      if (!pid_alive(pid)) ::unlink(shm_path(n).c_str());
    }
  }
  ::closedir(d);
}

// Serialises Segment::open() among this user's processes: whether to create, attach or
// recreate is decided and done by one process at a time. An flock is released by the
// kernel when its holder dies, so a killed opener never blocks the next one. One lock
// file per user, never removed (removing it could let two processes hold "the" lock).
class OpenLock {
public:
  static constexpr std::chrono::seconds kWait{30};
  OpenLock() {
    path_ = "/dev/shm/.dnsarena-open-" + std::to_string(::geteuid()) + ".lock";
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) throw SegmentError(Kind::system, "cannot open the lock file " + path_ + ": " + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        const int e = errno;
        ::close(fd_);
        throw SegmentError(Kind::system, "cannot lock " + path_ + ": " + std::strerror(e));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        ::close(fd_);
        throw SegmentError(Kind::system, "another process has been opening a segment for " +
                                             std::to_string(kWait.count()) + " s (it holds " + path_ + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~OpenLock() { ::close(fd_); }  // releases the flock
  OpenLock(const OpenLock&) = delete;
  OpenLock& operator=(const OpenLock&) = delete;

private:
  std::string path_;
  int fd_ = -1;
};

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

struct Segment::Mapping {
  bip::shared_memory_object shm;
  bip::mapped_region region;
  void* anonymous = nullptr;  // create_private(): the process's own mapping, unmapped here
  std::size_t anonymous_bytes = 0;
  ~Mapping() {
    if (anonymous) ::munmap(anonymous, anonymous_bytes);
  }
};

namespace {

// The header of a new, zero-filled segment of layout `l`, READY.
void write_new_header(SegmentHeader& h, const SegmentLayout& l) {
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
}

}  // namespace

Segment::Segment() : mapping_(std::make_unique<Mapping>()) {}

Segment::Segment(Segment&& other) noexcept
    : name_(std::move(other.name_)),
      mapping_(std::move(other.mapping_)),
      base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      layout_(other.layout_),
      remove_on_destroy_(std::exchange(other.remove_on_destroy_, false)) {}

Segment& Segment::operator=(Segment&& other) noexcept {
  if (this != &other) {
    name_ = std::move(other.name_);
    mapping_ = std::move(other.mapping_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    layout_ = other.layout_;
    remove_on_destroy_ = std::exchange(other.remove_on_destroy_, false);
  }
  return *this;
}

void Segment::map() {
  mapping_->region = bip::mapped_region(mapping_->shm, bip::read_write);
  advise_huge_pages(mapping_->region);
  base_ = static_cast<std::uint8_t*>(mapping_->region.get_address());
  size_ = mapping_->region.get_size();
}

// A fresh fill takes a minor fault per 4 KiB page it first touches (the page zeroed
// inside it); populating maps them all in one call at a fraction of that cost, and a
// process attaching later only maps the zeroed pages. Neither create() nor attach()
// populates: the resident memory of a serving cache follows what it has written (the
// simulator's arena model, sim/fleet/memory_model.hpp, and `sim validate` check that
// against the real service), and `check`, `stats` and `top` should not map a whole
// segment to read part of it. The benchmark populates before its fill and prints what
// that took.
void Segment::populate() const {
#ifdef MADV_POPULATE_WRITE
  if (base_ != nullptr) ::madvise(base_, size_, MADV_POPULATE_WRITE);  // EINVAL before Linux 5.14
#endif
}

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
  // Refuse what does not fit before allocating anything: fallocate would first take all
  // the free room of the machine's /dev/shm and only then fail.
  if (const std::uint64_t free_bytes = shm_free_bytes(); l.total_bytes > free_bytes)
    throw_no_space(name, l.total_bytes, free_bytes);
  Segment s;
  s.name_ = name;
  s.layout_ = l;
  const std::string tmp = temp_name(name);
  try {
    s.mapping_->shm = bip::shared_memory_object(bip::create_only, tmp.c_str(), bip::read_write, bip::permissions(mode));
  } catch (const bip::interprocess_exception& e) {
    throw SegmentError(Kind::system, "cannot create segment '" + name + "' (as " + tmp + "): " + e.what());
  }
  // Until it is linked under its name, the temporary is ours to remove on any failure.
  struct RemoveUnlessPublished {
    std::string path;
    bool published = false;
    ~RemoveUnlessPublished() {
      if (!published) ::unlink(path.c_str());
    }
  } temporary{shm_path(tmp)};
  const int fd = s.mapping_->shm.get_mapping_handle().handle;
  ::fchmod(fd, mode);  // not subject to umask
  try {
    s.mapping_->shm.truncate(static_cast<bip::offset_t>(l.total_bytes));
  } catch (const bip::interprocess_exception& e) {
    throw SegmentError(Kind::system, "cannot size segment '" + name + "' (" + std::to_string(l.total_bytes) +
                                         " bytes): " + e.what());
  }
  // ftruncate reserves nothing: on a full /dev/shm the first touch of an unbacked page
  // would kill a writer, or a reader, with SIGBUS. Reserve every page now.
  if (const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(l.total_bytes)); rc != 0) {
    if (rc == ENOSPC) throw_no_space(name, l.total_bytes, shm_free_bytes());
    throw SegmentError(Kind::system, "cannot reserve " + std::to_string(l.total_bytes) + " bytes for segment '" +
                                         name + "': " + std::strerror(rc));
  }
  try {
    s.map();
  } catch (const bip::interprocess_exception& e) {
    throw SegmentError(Kind::system, "cannot map segment '" + name + "' (" + std::to_string(l.total_bytes) +
                                         " bytes): " + e.what());
  }
  failpoint(FailStep::create_sized);
  // The object is zero-filled: every counter, region and slot starts at 0.
  write_new_header(s.header(), l);
  failpoint(FailStep::create_header_written);
  // Publish: link() never replaces an existing name, so of two creators exactly one wins
  // and nobody ever sees a half-made segment under the name.
  if (::link(shm_path(tmp).c_str(), shm_path(name).c_str()) != 0) {
    const int e = errno;
    if (e == EEXIST) throw SegmentError(Kind::already_exists, "segment '" + name + "' already exists");
    throw SegmentError(Kind::system, "cannot publish segment '" + name + "': link: " + std::strerror(e));
  }
  temporary.published = true;
  ::unlink(shm_path(tmp).c_str());
  return s;
}

Segment Segment::create_private(const Geometry& g, bool shared_across_fork) {
  const SegmentLayout l = SegmentLayout::compute(g);
  constexpr std::size_t kHugePage = 2u << 20;
  Segment s;
  s.layout_ = l;
  // One huge page more than needed, so the segment can start on a huge-page boundary.
  const std::size_t bytes = static_cast<std::size_t>(l.total_bytes) + kHugePage;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   (shared_across_fork ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw SegmentError(Kind::system, "cannot map a private segment of " + std::to_string(l.total_bytes) +
                                         " bytes: " + std::strerror(errno));
  s.mapping_->anonymous = p;
  s.mapping_->anonymous_bytes = bytes;
  s.base_ = reinterpret_cast<std::uint8_t*>(align_up(reinterpret_cast<std::uintptr_t>(p), kHugePage));
  s.size_ = static_cast<std::size_t>(l.total_bytes);
  ::madvise(s.base_, s.size_, MADV_HUGEPAGE);
  write_new_header(s.header(), l);  // anonymous memory is zero-filled, as a new object is
  return s;
}

Segment Segment::attach(const std::string& name) {
  check_name(name);
  Segment s;
  s.name_ = name;
  try {
    s.mapping_->shm = bip::shared_memory_object(bip::open_only, name.c_str(), bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::not_found_error)
      throw SegmentError(Kind::not_found, "segment '" + name + "' does not exist (" + shm_path(name) + ")");
    throw SegmentError(Kind::system, "cannot open segment '" + name + "': " + e.what());
  }
  struct stat st;
  if (::fstat(s.mapping_->shm.get_mapping_handle().handle, &st) != 0)
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
    s.map();
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

void Segment::rename_to(const std::string& name) {
  check_name(name);
  if (::rename(shm_path(name_).c_str(), shm_path(name).c_str()) != 0)
    throw SegmentError(Kind::system, "cannot rename segment '" + name_ + "' to '" + name + "': " + std::strerror(errno));
  name_ = name;
}

Segment Segment::open(const std::string& name, const Geometry& g, OpenPolicy policy, OpenOutcome* outcome,
                      MigrationReport* report) {
  const SegmentLayout want = SegmentLayout::compute(g);  // validate before touching anything
  check_name(name);
  auto set = [&](OpenOutcome o) {
    if (outcome) *outcome = o;
  };
  const OpenLock lock;  // one opener at a time: no two processes create, or reset, at once
  remove_dead_temporaries(name);
  if (!exists(name)) {
    try {
      set(OpenOutcome::created);
      return create(name, g);
    } catch (const SegmentError& e) {
      if (e.kind() != Kind::already_exists) throw;  // a plain create() won the name: attach it
    }
  }
  const bool migrate = policy == OpenPolicy::migrate || policy == OpenPolicy::migrate_or_reset;
  const bool reset = policy == OpenPolicy::reset || policy == OpenPolicy::migrate_or_reset;
  bool migration = false;
  try {
    Segment s = attach(name);
    const SegmentLayout& have = s.layout();
    if (have.max_entries == want.max_entries && have.region_bytes == want.region_bytes &&
        have.region_count == want.region_count && have.stat_slots == want.stat_slots) {
      set(OpenOutcome::attached);
      return s;
    }
    migration = migrate;
    if (!migrate && !reset)
      throw SegmentError(Kind::geometry_mismatch,
                         "segment '" + name + "' has another geometry (max_entries " + std::to_string(have.max_entries) +
                             ", arena " + std::to_string(have.arena_bytes()) + " bytes, region " +
                             std::to_string(have.region_bytes) + ", stat slots " + std::to_string(have.stat_slots) +
                             ") than configured (max_entries " + std::to_string(want.max_entries) + ", arena " +
                             std::to_string(want.arena_bytes()) + " bytes, region " + std::to_string(want.region_bytes) +
                             ", stat slots " + std::to_string(want.stat_slots) + "); reset to recreate it");
  } catch (const SegmentError& e) {
    // not_ready under the open lock: its creator died before finishing (only an older
    // build publishes a segment before it is READY). It holds no data: recreate it
    // whatever the policy, so a plain restart recovers by itself.
    migration = migrate && e.kind() == Kind::version_mismatch;
    if (!migration && e.kind() != Kind::not_ready &&
        (!reset || e.kind() == Kind::unsafe_permissions || e.kind() == Kind::system))
      throw;
  }
  if (migration) {
    try {
      Segment s = migrate_segment(name, g, static_cast<std::uint32_t>(std::time(nullptr)), report);
      set(OpenOutcome::migrated);
      return s;
    } catch (const SegmentError& e) {
      // Not readable (an unknown version, a damaged layout) or no room for the copy: the
      // old segment is untouched. Only `migrate_or_reset` replaces it with a cold one.
      if (!reset || e.kind() == Kind::unsafe_permissions || e.kind() == Kind::in_use) throw;
    }
  }
  remove(name);
  set(OpenOutcome::recreated);
  return create(name, g);
}

}  // namespace dnsarena::cache

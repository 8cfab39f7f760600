// SPDX-License-Identifier: GPL-3.0-or-later
// The host's run-time negative trust anchors (nta_table.hpp).
#include "common/nta_table.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/mix_hash.hpp"

namespace dnsarena::common {

namespace {

constexpr char kMagic[8] = {'D', 'N', 'S', 'A', '-', 'N', 'T', 'A'};

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// The checksum of an entry: its expiry, its length and each name word, mixed with its
// position (as seqlock_words.hpp), so that a word torn, moved or lost changes it.
std::uint64_t entry_sum(std::uint64_t expires, std::uint64_t length, const std::uint64_t* words) {
  std::uint64_t sum = fmix64(expires ^ 0x4e5441ull);
  sum = fmix64(sum ^ length ^ (std::uint64_t{1} << 56));
  for (std::size_t i = 0; i < (length + 7) / 8; ++i) sum = fmix64(sum ^ words[i] ^ (std::uint64_t{i + 2} << 48));
  return sum;
}

class FileLock {
public:
  explicit FileLock(int fd) : fd_(fd) {
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw NtaTableError(errno_text("cannot lock the negative trust anchor table"));
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

private:
  int fd_;
};

}  // namespace

std::string NtaTable::path_for(const std::string& segment) { return "/dev/shm/." + segment + ".nta"; }

NtaTable NtaTable::open(const std::string& segment, bool create) {
  const std::string path = path_for(segment);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT && create) {
    // Written whole under a temporary name, then linked: no process maps a half-made table.
    const std::string temp = path + "." + std::to_string(::getpid()) + ".new";
    ::unlink(temp.c_str());  // one left by a creator killed with this pid
    const int t = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (t < 0) throw NtaTableError(errno_text(temp));
    bool ok = ::ftruncate(t, static_cast<off_t>(kBytes)) == 0;
    if (ok) {
      Header h{};
      std::memcpy(h.magic, kMagic, sizeof kMagic);
      h.version = kVersion;
      h.capacity = kCapacity;
      ok = ::pwrite(t, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
    }
    const int e = errno;
    ::close(t);
    if (!ok) {
      ::unlink(temp.c_str());
      errno = e;
      throw NtaTableError(errno_text(temp));
    }
    if (::link(temp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
      const std::string err = errno_text(path);
      ::unlink(temp.c_str());
      throw NtaTableError(err);
    }
    ::unlink(temp.c_str());
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  }
  if (fd < 0) {
    if (errno == ENOENT)
      throw NtaTableError(path + ": no negative trust anchor table (no `dnsarena serve` validating DNSSEC has run "
                          "on segment '" + segment + "')");
    throw NtaTableError(errno_text(path));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != kBytes) {
    ::close(fd);
    throw NtaTableError(path + ": not a negative trust anchor table: expected " + std::to_string(kBytes) +
                        " bytes, found " + std::to_string(st.st_size));
  }
  void* map = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    const std::string err = errno_text(path + ": mmap");
    ::close(fd);
    throw NtaTableError(err);
  }
  NtaTable t(fd, map, path);
  const Header* h = t.header();
  if (std::memcmp(h->magic, kMagic, sizeof kMagic) != 0)
    throw NtaTableError(path + ": not a negative trust anchor table (bad magic)");
  if (h->version != kVersion || h->capacity != kCapacity)
    throw NtaTableError(path + ": expected version " + std::to_string(kVersion) + " of " + std::to_string(kCapacity) +
                        " entries, found version " + std::to_string(h->version) + " of " +
                        std::to_string(h->capacity) + " (a table of another dnsarena build: remove the file)");
  return t;
}

NtaTable::NtaTable(NtaTable&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), map_(std::exchange(o.map_, nullptr)), path_(std::move(o.path_)) {}

NtaTable& NtaTable::operator=(NtaTable&& o) noexcept {
  if (this != &o) {
    if (map_) ::munmap(map_, kBytes);
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    map_ = std::exchange(o.map_, nullptr);
    path_ = std::move(o.path_);
  }
  return *this;
}

NtaTable::~NtaTable() {
  if (map_) ::munmap(map_, kBytes);
  if (fd_ >= 0) ::close(fd_);
}

bool NtaTable::load_slot(const Slot& s, Entry& out) {
  const std::uint64_t expires = s.expires.load(std::memory_order_relaxed);
  const std::uint64_t length = s.length.load(std::memory_order_relaxed);
  const std::uint64_t checksum = s.checksum.load(std::memory_order_relaxed);
  if (length < 2 || length > kMaxName - 1) return false;
  std::uint64_t words[kMaxName / 8];
  for (std::size_t i = 0; i < (length + 7) / 8; ++i) words[i] = s.name[i].load(std::memory_order_relaxed);
  if (entry_sum(expires, length, words) != checksum) return false;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(words);
  out.name.assign(bytes, bytes + length);
  out.expires = expires;
  return true;
}

void NtaTable::store_slot(Slot& s, const Entry& e) {
  std::uint64_t words[kMaxName / 8] = {};
  std::memcpy(words, e.name.data(), e.name.size());
  s.expires.store(e.expires, std::memory_order_relaxed);
  s.length.store(e.name.size(), std::memory_order_relaxed);
  for (std::size_t i = 0; i < kMaxName / 8; ++i) s.name[i].store(words[i], std::memory_order_relaxed);
  s.checksum.store(entry_sum(e.expires, e.name.size(), words), std::memory_order_relaxed);
}

std::optional<NtaTable::Snapshot> NtaTable::read(std::uint64_t now) const {
  const Header* h = header();
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::uint64_t before = h->seq.load(std::memory_order_acquire);
    if (before & 1) return std::nullopt;
    Snapshot snap;
    snap.generation = before;
    const std::uint32_t count = std::min(h->count.load(std::memory_order_relaxed), kCapacity);
    Entry e;
    for (std::uint32_t i = 0; i < count; ++i)
      if (load_slot(slot(i), e) && e.expires > now) snap.entries.push_back(e);  // a torn entry: never taken
    std::atomic_thread_fence(std::memory_order_acquire);
    if (h->seq.load(std::memory_order_relaxed) == before) return snap;
  }
  return std::nullopt;
}

std::vector<NtaTable::Entry> NtaTable::entries_locked(std::uint64_t now) const {
  std::vector<Entry> out;
  const std::uint32_t count = std::min(header()->count.load(std::memory_order_relaxed), kCapacity);
  Entry e;
  for (std::uint32_t i = 0; i < count; ++i)
    if (load_slot(slot(i), e) && e.expires > now) out.push_back(e);
  return out;
}

void NtaTable::publish_locked(const std::vector<Entry>& entries) {
  Header* h = header();
  const std::uint64_t writing = h->seq.load(std::memory_order_relaxed) | 1;  // odd already: a killed writer's
  h->seq.store(writing, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (std::size_t i = 0; i < entries.size(); ++i) store_slot(slot(i), entries[i]);
  for (std::size_t i = entries.size(); i < kCapacity; ++i)
    if (slot(i).length.load(std::memory_order_relaxed) != 0) {
      slot(i).expires.store(0, std::memory_order_relaxed);
      slot(i).length.store(0, std::memory_order_relaxed);
    }
  h->count.store(static_cast<std::uint32_t>(entries.size()), std::memory_order_relaxed);
  h->seq.store(writing + 1, std::memory_order_release);
}

NtaTable::AddResult NtaTable::add(const std::vector<std::uint8_t>& name, std::uint64_t expires, std::uint64_t now) {
  if (name.size() < 2 || name.size() > kMaxName - 1) throw NtaTableError("a negative trust anchor name of 2 to 255 bytes");
  FileLock lock(fd_);
  std::vector<Entry> entries = entries_locked(now);
  auto it = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == name; });
  AddResult r = AddResult::updated;
  if (it != entries.end()) {
    it->expires = expires;
  } else {
    if (entries.size() >= kCapacity) return AddResult::full;
    entries.push_back({name, expires});
    r = AddResult::added;
  }
  publish_locked(entries);
  return r;
}

bool NtaTable::remove(const std::vector<std::uint8_t>& name, std::uint64_t now) {
  FileLock lock(fd_);
  std::vector<Entry> entries = entries_locked(now);
  const bool found = std::erase_if(entries, [&](const Entry& e) { return e.name == name; }) > 0;
  publish_locked(entries);
  return found;
}

}  // namespace dnsarena::common

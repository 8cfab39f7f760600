// SPDX-License-Identifier: GPL-3.0-or-later
// The host's run-time negative trust anchors (RFC 7646): names the operator made insecure
// with `dnsarena dnssec nta add` (admin/nta_command.cpp), each until an absolute expiry,
// read by every worker of the `dnsarena serve` on the same segment
// (workers/runtime_ntas.hpp) in addition to the config's negative_trust_anchors. Here,
// below workers/ and admin/, so that both use it (as snapshot_file.hpp).
//
// Where: /dev/shm/.<segment>.nta, a small file beside the segment (a dot file, like the
// snapshot files). A validating serve's supervisor opens it at start (or at the reload
// that turns validation on), creating it if absent, and its workers inherit the mapping
// across fork (and keep it across worker restarts). The commands open the same file and
// refuse a segment without one (no validating serve ever ran there). It outlives the serve: a restarted serve on the same
// segment finds the anchors again, each until its expiry (expiries are CLOCK_REALTIME
// seconds, so they mean the same after a restart). Deleting the file while a serve runs
// cuts that serve off from the commands until it restarts.
//
// Create protocol: a new table is written whole to a temporary file (header included),
// then link()ed to the name, which fails if another process won the race (its table is
// used instead): nobody ever maps a half-made header. Attach checks size, magic, version
// and capacity, and a mismatch names what it expected and what it found.
//
//   offset          size   field       meaning
//   0               8      magic       "DNSA-NTA"
//   8               4      version     kVersion (bumped when any byte below moves)
//   12              4      capacity    kCapacity entries
//   16              8      seq         |63 ------------------ 1: generation|0: writing|
//   24              4      count       entries in use: 0 .. count-1 (kept compact)
//   28              36     (zero)      so that entry 0 starts on a cache line
//   64 + E*i        8      expires     CLOCK_REALTIME second the anchor stops (0: none)
//   72 + E*i        8      length      of the name, 2 .. 255
//   80 + E*i        8      checksum    of the name's words (seqlock_words-style sum)
//   88 + E*i        256    name        lowercase wire name, zero-padded
//   (E = kEntryBytes: 280; 256 entries: 71,744 bytes in all)
//
// Concurrency: one writer at a time, by flock(LOCK_EX) on the file (a writer killed -9
// releases it). A write: seq odd (relaxed store after the lock, then a release fence);
// the entries and count stored as relaxed atomics word by word; seq + 1 (even again,
// release): the generation goes up by one per change. Readers never lock: read seq
// (acquire; odd: being written, try later), copy count and the entries, fence (acquire),
// read seq again: unchanged, and every entry's checksum matches, is a consistent copy.
// A writer killed mid-write leaves seq odd: readers keep the copy they had; the next
// writer (holding the lock, so no one else writes) drops every entry whose checksum or
// length is wrong, and makes seq even again. A torn entry is never trusted.
//
// Cost to a worker: generation() is one acquire load of a line that changes only when an
// operator runs a command; the entries are copied only when it moved (runtime_ntas.hpp).
// Bounds: kCapacity entries (a full table is an error for the command, never a silent
// drop), each a name of at most 255 bytes; expired entries are dropped by every write.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dnsarena::common {

class NtaTableError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class NtaTable {
public:
  static constexpr std::uint32_t kVersion = 1;
  static constexpr std::uint32_t kCapacity = 256;
  static constexpr std::size_t kMaxName = 256;  // bytes of name room (a wire name is at most 255)
  static constexpr std::size_t kEntryBytes = 280;

  struct Entry {
    std::vector<std::uint8_t> name;  // lowercase wire
    std::uint64_t expires = 0;       // CLOCK_REALTIME seconds
  };
  struct Snapshot {
    std::uint64_t generation = 0;
    std::vector<Entry> entries;  // those not expired at the time given to read()
  };

  // /dev/shm/.<segment>.nta
  static std::string path_for(const std::string& segment);
  // Maps the segment's table; `create`: make it when absent. Throws NtaTableError (absent
  // and !create, unreadable, or not a table of this version and capacity).
  static NtaTable open(const std::string& segment, bool create);

  NtaTable(NtaTable&& o) noexcept;
  NtaTable& operator=(NtaTable&& o) noexcept;
  NtaTable(const NtaTable&) = delete;
  NtaTable& operator=(const NtaTable&) = delete;
  ~NtaTable();

  // The table's generation (even), or an odd value while a write is under way (or was
  // left by a killed writer). Changes exactly when the entries may have.
  std::uint64_t generation() const { return header()->seq.load(std::memory_order_acquire); }
  // A consistent copy, entries expired at `now` left out; none while being written.
  std::optional<Snapshot> read(std::uint64_t now) const;

  enum class AddResult { added, updated, full };
  // REQUIRES: `name` a lowercase wire name (2 .. 255 bytes). Sets its expiry (updating an
  // existing entry for the name); drops expired entries first. full: kCapacity live
  // entries and `name` not among them (nothing changed).
  AddResult add(const std::vector<std::uint8_t>& name, std::uint64_t expires, std::uint64_t now);
  // False: no entry for the name.
  bool remove(const std::vector<std::uint8_t>& name, std::uint64_t now);

  const std::string& path() const { return path_; }

private:
  struct Header {
    char magic[8];
    std::uint32_t version;
    std::uint32_t capacity;
    std::atomic<std::uint64_t> seq;
    std::atomic<std::uint32_t> count;
    std::uint8_t zero[36];
  };
  struct Slot {
    std::atomic<std::uint64_t> expires;
    std::atomic<std::uint64_t> length;
    std::atomic<std::uint64_t> checksum;
    std::atomic<std::uint64_t> name[kMaxName / 8];
  };
  static_assert(sizeof(Header) == 64, "entry 0 starts on its own cache line");
  static_assert(offsetof(Header, version) == 8 && offsetof(Header, capacity) == 12 && offsetof(Header, seq) == 16 &&
                    offsetof(Header, count) == 24,
                "the documented layout; seq must stay 8-byte aligned for its atomic");
  static_assert(offsetof(Slot, length) == 8 && offsetof(Slot, checksum) == 16 && offsetof(Slot, name) == 24,
                "the documented layout");
  static_assert(sizeof(Slot) == kEntryBytes && kEntryBytes % 8 == 0, "entries are whole words, 8-byte aligned");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
                "the table is shared between processes: only lock-free atomics are address-free");

  NtaTable(int fd, void* map, std::string path) : fd_(fd), map_(map), path_(std::move(path)) {}
  static constexpr std::size_t kBytes = sizeof(Header) + std::size_t{kCapacity} * kEntryBytes;
  Header* header() const { return static_cast<Header*>(map_); }
  Slot& slot(std::size_t i) const {
    return *reinterpret_cast<Slot*>(static_cast<std::uint8_t*>(map_) + sizeof(Header) + i * kEntryBytes);
  }
  // A consistent entry (checksum and length), copied into `out`.
  static bool load_slot(const Slot& s, Entry& out);
  static void store_slot(Slot& s, const Entry& e);
  // Under the lock: the live, intact entries (a killed writer's torn ones dropped).
  std::vector<Entry> entries_locked(std::uint64_t now) const;
  // Under the lock: writes `entries` as the table, one generation on.
  void publish_locked(const std::vector<Entry>& entries);

  int fd_ = -1;
  void* map_ = nullptr;
  std::string path_;
};

}  // namespace dnsarena::common

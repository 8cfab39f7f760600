// SPDX-License-Identifier: GPL-3.0-or-later
// Host-wide table of validated NSEC and NSEC3 ranges (RFC 8198, aggressive use of the
// DNSSEC-validated cache), shared by every worker of one `dnsarena serve`: what one
// worker's secure negative answer proved answers the next names inside the same range on
// every worker, without an upstream query (aggressive_nsec.hpp reads and writes it).
//
// A record is opaque here: the caller's bytes (aggressive_nsec.cpp: the zone name, the NSEC
// or NSEC3 record and its RRSIGs, the zone's SOA and its RRSIGs, uncompressed wire), stored
// under the zone's hash and the owner's hash, with an expiry in wall-clock seconds. The
// table bounds them in number (slots) and in bytes (kCapacity a record); a record that
// does not fit is not stored.
//
// Placement: a zone's records live in the bucket zone_hash mod buckets, in any of its
// kWays slots. A lookup reads one bucket per candidate zone (each ancestor of the name);
// a zone holds at most kWays ranges at once (a flood over a zone with more ranges than
// that keeps the most recently proven ones: the others cost an upstream query, as
// without the table). A record for the same (zone, owner) replaces its slot, else an
// empty or expired slot, else the one that expires first.
//
// Memory: an anonymous shared mapping the supervisor makes before the first fork (as
// failure_cache.hpp, answer_slots.hpp): it lives as long as the service's processes.
//
//   offset            size   field      meaning
//   0                 8      seed       random; mixes the bucket choice
//   8                 8      base_ms    CLOCK_MONOTONIC milliseconds at creation
//   16                4      buckets    a power of two
//   20                4      capacity   record bytes a slot holds (kSlotBytes - 64)
//   24                40     (zero)     so that slot 0 starts on a cache line
//   64 + S*i          8      seq        |63 -- 32: write start ms|31 -- 1: generation|0: writing|
//                                       start ms relative to base_ms, set while writing
//   72 + S*i          8      zone       hash of the zone name (0: empty slot)
//   80 + S*i          8      owner      hash of the NSEC owner name
//   88 + S*i          4      expires    wall-clock second the range stops being used
//   92 + S*i          4      length     record bytes
//   96 + S*i          8      checksum   of the record's words (padded to 8 with zeros)
//   104 + S*i         24     (zero)
//   128 + S*i         cap    record     zero-padded to 8 bytes
//   (S = kSlotBytes: 2,048; slot i of bucket b is b * kWays + i; the default 256 buckets
//   of 16 slots: 4,096 ranges, 8 MiB, touched only as ranges are stored.)
//
// Concurrency (a seqlock per slot, seqlock_words.hpp, as answer_slots.hpp): put: CAS seq from even to odd
// (writing, with its start time); write the fields and the record as relaxed atomics;
// store seq + 2 (even again, release). read: load seq (acquire); odd: skip; copy; acquire
// fence; reload seq: unchanged, and the checksum of the copy matches: the copy is the one
// stored. Two writers on one slot: the second finds it being written and stores nothing
// (the range is proven again by a later miss).
// Crash safety: a writer killed mid-write leaves seq odd, so no reader takes the slot;
// a later writer takes it over once the write is older than kStaleWriteMs. A writer
// stopped that long and then resumed may scribble over the new record without touching
// seq; the checksum makes a reader refuse such a copy. A reader never trusts a torn range.
//
// Costs: put is a copy and checksum of the record (under 2 KiB); a lookup reads kWays
// slot headers per candidate zone and copies the records of that zone only.
#pragma once
#include "common/anonymous_mapping.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace dnsarena::workers {

class NsecRanges {
public:
  static constexpr std::uint32_t kDefaultBuckets = 256;
  static constexpr unsigned kWays = 16;
  static constexpr std::size_t kSlotBytes = 2048;
  static constexpr std::size_t kHeaderBytes = 64;  // of a slot, before its record
  static constexpr std::size_t kCapacity = kSlotBytes - kHeaderBytes;
  static constexpr std::uint64_t kStaleWriteMs = 1000;

  // Maps `buckets` buckets (rounded up to a power of two), shared across fork() when
  // `shared`. Throws std::system_error when mmap fails.
  NsecRanges(std::uint32_t buckets, bool shared);

  // Stores `record` for (zone_hash, owner_hash) until wall-clock second `expires`. False:
  // not stored (empty, larger than kCapacity, zone_hash 0, or its slot is being written).
  bool put(std::uint64_t zone_hash, std::uint64_t owner_hash, std::uint32_t expires,
           std::span<const std::uint8_t> record, std::uint64_t now_ms);
  // Calls `fn` with a consistent copy of each record of zone_hash that has not expired at
  // wall-clock second `now` (at most kWays), until fn returns false.
  // REQUIRES: `scratch` holds kCapacity bytes; fn's span points into it (valid during the call).
  void for_zone(std::uint64_t zone_hash, std::uint32_t now, std::span<std::uint8_t> scratch,
                const std::function<bool(std::span<const std::uint8_t>, std::uint32_t expires)>& fn) const;
  std::uint32_t buckets() const { return header_->buckets; }

private:
  struct Header {
    std::uint64_t seed;
    std::uint64_t base_ms;
    std::uint32_t buckets;
    std::uint32_t capacity;
    std::uint8_t zero[40];
  };
  struct Slot {
    std::atomic<std::uint64_t> seq;
    std::atomic<std::uint64_t> zone;
    std::atomic<std::uint64_t> owner;
    std::atomic<std::uint32_t> expires;
    std::atomic<std::uint32_t> length;
    std::atomic<std::uint64_t> checksum;
    std::uint8_t zero[24];
    // kCapacity bytes of record follow, 8-byte aligned.
  };
  static_assert(sizeof(Header) == 64, "slot 0 starts on its own cache line");
  static_assert(offsetof(Header, base_ms) == 8 && offsetof(Header, buckets) == 16 && offsetof(Header, capacity) == 20,
                "the documented layout");
  static_assert(offsetof(Slot, zone) == 8 && offsetof(Slot, owner) == 16 && offsetof(Slot, expires) == 24 &&
                    offsetof(Slot, length) == 28 && offsetof(Slot, checksum) == 32,
                "the documented layout");
  static_assert(sizeof(Slot) == kHeaderBytes, "the record starts 64 bytes into its slot, 8-byte aligned");
  static_assert(kCapacity % 8 == 0, "records are copied in whole words");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
                "slots are shared between processes: only lock-free atomics are address-free");

  Slot& slot(std::size_t i) const {
    return *reinterpret_cast<Slot*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header) + i * kSlotBytes);
  }
  std::size_t first_slot(std::uint64_t zone_hash) const;
  static std::uint8_t* record_of(Slot& s) { return reinterpret_cast<std::uint8_t*>(&s) + kHeaderBytes; }
  std::uint64_t relative(std::uint64_t now_ms) const {
    return now_ms > header_->base_ms ? now_ms - header_->base_ms : 0;
  }

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
};

}  // namespace dnsarena::workers

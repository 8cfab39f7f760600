// SPDX-License-Identifier: GPL-3.0-or-later
// The answer a host-wide claim fetched, handed to the workers that waited for it.
//
// One upstream query per name per host (upstream_claims.hpp) makes the clients of other
// workers wait while the claim's owner asks. When the answer goes into the shared cache,
// they find it there. When it does not (TTL 0, an ECS scope longer than the source
// prefix, NXDOMAIN without SOA, a writer lock not free in time), the owner publishes the
// answer here before it releases the claim, and a woken waiter answers its clients from
// it (their own ID, case, EDNS, ECS option) instead of claiming and asking again.
//
// A slot answers one claim: slot = claims slot & (slots - 1); it holds the encoded cache
// entry (entry_codec.hpp: rcode, records, TTLs, insert time) and the ECS scope, stamped
// with the claim word (UpstreamClaims::Claim::value: tag, owner row, start time) it was
// fetched under. A reader takes it only for the claim it waited on.
//
// Memory: an anonymous shared mapping made by the supervisor before the first fork (as
// upstream_claims.hpp), kept across reloads.
//
//   offset            size   field      meaning
//   0                 8      base_ms    CLOCK_MONOTONIC milliseconds at creation
//   8                 4      slots      a power of two
//   12                4      capacity   entry bytes a slot holds (kSlotBytes - 64)
//   16                48     (zero)     so that slot 0 starts on a cache line
//   64 + S*i          8      seq        |63 -- 32: write start ms|31 -- 1: generation|0: writing|
//                                       start ms relative to base_ms, set while writing
//   72 + S*i          8      claim      the claim word the entry answers (0: none yet)
//   80 + S*i          4      claim_slot its slot in the claims table
//   84 + S*i          4      length     entry bytes
//   88 + S*i          8      checksum   of the entry's words (padded to 8 with zeros)
//   96 + S*i          1      scope      ECS scope of the answer
//   97 + S*i          31     (zero)
//   128 + S*i         cap    entry      the encoded entry, zero-padded to 8 bytes
//   (S = kSlotBytes: 4,096; 256 slots: 1 MiB.)
//
// Concurrency (a seqlock per slot, seqlock_words.hpp): publish: CAS seq from even to odd (writing, with its
// start time); write claim, length, scope, entry and checksum as relaxed atomics; store
// seq + 1 (even again, release). read: load seq (acquire); odd: nothing; compare claim;
// copy; acquire fence; reload seq: unchanged, and the checksum of the copy matches: the
// copy is the one published. Readers never write.
// Two owners on one slot at once (their claims share the low bits): the second finds it
// being written and publishes nothing (counted upstream_slot_full by the caller); its
// waiters fall back to today's path: the cache, else a claim of their own.
// Crash safety: a writer killed mid-write leaves seq odd; a later writer takes the slot
// over once the write is older than kStaleWriteMs (a write is a copy of at most 4 KiB:
// microseconds). A writer stopped that long and then resumed may scribble over the new
// entry without touching seq; the checksum makes a reader refuse such a copy.
//
// Bounds: an entry over `capacity` bytes is not published (counted upstream_slot_full);
// a slot is reused by the next claim that maps to it, so a waiter that looks too late
// finds another claim's stamp and falls back. Neither costs more than today's path.
// Costs: publish is a copy and checksum of the entry (<= 4 KiB, about a microsecond);
// read is the same on the waiter's side. No per-hit cost: only parked clients read.
#pragma once
#include "common/anonymous_mapping.hpp"
#include "workers/upstream_claims.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace dnsarena::workers {

class AnswerSlots {
public:
  static constexpr std::uint32_t kDefaultSlots = 256;
  static constexpr std::size_t kSlotBytes = 4096;
  static constexpr std::size_t kHeaderBytes = 64;      // of a slot, before its entry
  static constexpr std::size_t kCapacity = kSlotBytes - kHeaderBytes;
  static constexpr std::uint64_t kStaleWriteMs = 1000;

  // Maps `slots` slots (rounded up to a power of two), shared across fork() when `shared`.
  // Throws std::system_error when mmap fails.
  AnswerSlots(std::uint32_t slots, bool shared);

  // Publishes `entry` (an encoded cache entry, entry_codec.hpp) with its ECS `scope` as
  // the answer of `claim`. False: not published (larger than kCapacity, or the slot is
  // being written by another owner).
  // REQUIRES: the caller holds `claim` (UpstreamClaims::claimed) and has not released it.
  bool publish(const UpstreamClaims::Claim& claim, std::uint8_t scope, std::span<const std::uint8_t> entry,
               std::uint64_t now_ms);
  // Copies the answer published for `claim` into `out` (kCapacity bytes at least) and
  // returns its length (0: none: not published, overwritten, or being written), with its
  // ECS scope in *scope.
  std::size_t read(const UpstreamClaims::Claim& claim, std::span<std::uint8_t> out, std::uint8_t* scope) const;

  std::uint32_t slots() const { return header_->slots; }

private:
  struct Header {
    std::uint64_t base_ms;
    std::uint32_t slots;
    std::uint32_t capacity;
    std::uint8_t zero[48];
  };
  struct Slot {
    std::atomic<std::uint64_t> seq;
    std::atomic<std::uint64_t> claim;
    std::atomic<std::uint32_t> claim_slot;
    std::atomic<std::uint32_t> length;
    std::atomic<std::uint64_t> checksum;
    std::atomic<std::uint8_t> scope;
    std::uint8_t zero[31];
    // kCapacity bytes of entry follow, 8-byte aligned.
  };
  static_assert(sizeof(Header) == 64, "slot 0 starts on its own cache line");
  static_assert(offsetof(Header, slots) == 8 && offsetof(Header, capacity) == 12, "the documented layout");
  static_assert(offsetof(Slot, claim) == 8 && offsetof(Slot, claim_slot) == 16 && offsetof(Slot, length) == 20 &&
                    offsetof(Slot, checksum) == 24 && offsetof(Slot, scope) == 32,
                "the documented layout");
  static_assert(sizeof(Slot) == kHeaderBytes, "the entry starts 64 bytes into its slot, 8-byte aligned");
  static_assert(kCapacity % 8 == 0, "entries are copied in whole words");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free &&
                    std::atomic<std::uint8_t>::is_always_lock_free,
                "slots are shared between processes: only lock-free atomics are address-free");

  Slot& slot(std::uint32_t i) const {
    return *reinterpret_cast<Slot*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header) + i * kSlotBytes);
  }
  static std::uint8_t* entry_of(Slot& s) { return reinterpret_cast<std::uint8_t*>(&s) + kHeaderBytes; }
  std::uint64_t relative(std::uint64_t now_ms) const {
    return now_ms > header_->base_ms ? now_ms - header_->base_ms : 0;
  }

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
};

}  // namespace dnsarena::workers

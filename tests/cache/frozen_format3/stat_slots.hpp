// SPDX-License-Identifier: GPL-3.0-or-later
// FROZEN: cache/stat_slots.hpp as of commit e757c81 (format 3), namespace renamed to dnsarena::frozen3.
// Do not edit: a test writes segments of the old format with it (tests/cache/frozen_format_writer.cpp).
// Per-process counters in the segment. FORMAT-DEPENDENT.
//
// StatSlot (256 bytes, four cache lines, so two processes never share a line):
//
//   offset size field        meaning
//   0      4    owner_pid    atomic; pid that claimed the slot, 0 = never claimed
//   4      4    role         0 = other, 1 = worker, 2 = supervisor, 3 = tool
//   8      8    claimed_unix wall-clock seconds of the latest claim
//   16     8    worker_index supervisor's index of the worker using this slot
//   24   232    counters     kCounterCount x u64, indexed by enum Counter (29: the slot is full)
//
// Counters are only ever appended, into the padding (zero in a segment made before
// they existed), so adding one changes no offset and needs no format version bump.
// NOTE: with 29 counters the padding is used up: the next counter needs a bigger slot
// (and a format version bump).
//
// Concurrency: a process claims a free slot, or the slot of a dead pid, with one CAS on
// owner_pid and then is the only writer of its counters (add_owned: relaxed load and
// store, no locked instruction; one Cache object per thread). The last slot is never
// owned: when every other slot is held by a live process, later processes share it and
// all of them use add() (atomic fetch_add). (Format 2 let the last slot be owned too; its
// owner's plain load+store then raced with the sharers' fetch_add and lost counts.)
// Another process may add() into a slot it does not own only while that slot's owner is
// dead (the supervisor counting a dead worker's restart).
// Counters are never reset when a slot is taken over: the sum over slots stays the total
// since the segment was created, and a restarted worker keeps adding to its
// predecessor's figures. Readers sum with relaxed loads; a sum may mix moments, which is
// benign for statistics.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dnsarena::frozen3 {

enum class Counter : std::uint32_t {
  lookups = 0,         // cache lookups
  hits,                // lookups that returned an entry
  misses,              // lookups that found nothing usable
  expired_on_lookup,   // misses caused by an expired entry
  lookup_retries,      // reads restarted because a region was recycled under them
  inserts,             // entries appended
  replaces,            // inserts that replaced an entry of the same key
  evictions,           // entries unlinked by reclaim without a hit
  expirations,         // entries dropped by reclaim because their TTL had passed
  conflict_evictions,  // entries unlinked because both index buckets were full
  second_chances,      // entries re-appended by reclaim because they were hit
  rejected_inserts,    // inserts refused (too large for a region, invalid input)
  queries_udp,         // worker: queries received over UDP
  queries_tcp,         // worker: queries received over TCP
  upstream_queries,    // worker: queries sent upstream
  upstream_timeouts,   // worker: upstream attempts that timed out
  upstream_latency_us, // worker: sum of upstream round-trip microseconds
  servfail,            // worker: SERVFAIL answers sent
  formerr,             // worker: FORMERR answers sent or malformed packets dropped
  truncated,           // worker: answers sent with TC
  restarts,            // supervisor: times this worker index was restarted
  index_displacements, // inserts that moved a resident to its other bucket to make room
  upstream_overload,   // worker: misses refused by the in-flight or per-name bound (SERVFAIL)
  upstream_tcp,        // worker: upstream answers with TC, asked again over TCP
  refused,             // worker: queries refused or dropped by access control
  rate_limited,        // worker: answers dropped or slipped (TC) by response rate limiting
  any_minimal,         // worker: ANY over UDP, answered with one RRset (RFC 8482)
  workers_killed_silent, // supervisor: workers killed for missing their heartbeat
  writer_lock_unavailable, // inserts/erases skipped: the writer lock was not free within the bounded
                         // wait, or is not recoverable (a repair failed; also printed once on stderr)
};
inline constexpr std::size_t kCounterCount = 29;

inline constexpr std::array<std::string_view, kCounterCount> kCounterNames = {
    "lookups",          "hits",           "misses",           "expired_on_lookup",
    "lookup_retries",   "inserts",        "replaces",         "evictions",
    "expirations",      "conflict_evictions", "second_chances", "rejected_inserts",
    "queries_udp",      "queries_tcp",    "upstream_queries", "upstream_timeouts",
    "upstream_latency_us", "servfail",    "formerr",          "truncated",
    "restarts",         "index_displacements", "upstream_overload", "upstream_tcp",
    "refused",          "rate_limited",   "any_minimal",    "workers_killed_silent",
    "writer_lock_unavailable"};

enum class SlotRole : std::uint32_t { other = 0, worker = 1, supervisor = 2, tool = 3 };

struct alignas(64) StatSlot {
  std::atomic<std::uint32_t> owner_pid;
  std::uint32_t role;
  std::uint64_t claimed_unix;
  std::uint64_t worker_index;
  std::atomic<std::uint64_t> counters[kCounterCount];

  // For a slot shared by several processes (every slot was taken): atomic add.
  void add(Counter c, std::uint64_t n = 1) {
    counters[static_cast<std::size_t>(c)].fetch_add(n, std::memory_order_relaxed);
  }
  // For the slot's single owner: a plain relaxed load and store, no locked instruction.
  // NOTE: a locked add costs ~20 cycles; three per lookup were a measurable share of a hit.
  void add_owned(Counter c, std::uint64_t n = 1) {
    auto& v = counters[static_cast<std::size_t>(c)];
    v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get(Counter c) const {
    return counters[static_cast<std::size_t>(c)].load(std::memory_order_relaxed);
  }
};

static_assert(sizeof(StatSlot) == 256, "whole cache lines per slot: no false sharing");
static_assert(24 + kCounterCount * 8 <= 256, "counters fit the slot's padding");
static_assert(offsetof(StatSlot, counters) == 24, "counter offsets are part of the format");

}  // namespace dnsarena::frozen3

// SPDX-License-Identifier: GPL-3.0-or-later
// Per-process counters in the segment. FORMAT-DEPENDENT.
//
// StatSlot (512 bytes, eight cache lines, so two processes never share a line):
//
//   offset size field        meaning
//   0      4    owner_pid    atomic; pid that claimed the slot, 0 = never claimed
//   4      4    role         0 = other, 1 = worker, 2 = supervisor, 3 = tool
//   8      8    claimed_unix wall-clock seconds of the latest claim
//   16     8    worker_index supervisor's index of the worker using this slot
//   24   488    counters     kCounterCount x u64, indexed by enum Counter; room for
//                            kMaxCounters = 61, the rest is zero padding
//
// Counters are only ever appended, into the padding (zero in a segment made before
// they existed), so adding one changes no offset and needs no format version bump.
// 512 bytes leave room to append counters without a bump (format 3's 256-byte slot,
// read by cache/legacy/, held 29).
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

namespace dnsarena::cache {

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
  udp_answers_dropped,   // worker: UDP answers not sent because the socket buffer was full
  udp_answers_unsendable, // worker: UDP answers the kernel refused for their destination (port 0, EPERM...)
  upstream_case_fallbacks, // worker: upstream replies that lost the 0x20 case: asked again without 0x20
  upstream_overload_per_name, // worker: misses refused by the per-name bound, which holds across
                         // every worker of the host (also counted in upstream_overload)
  upstream_jostled,      // worker: upstream queries given up (SERVFAIL) to make room for a new
                         // miss, having waited longer than upstream_jostle_timeout_ms
  user_ns,               // worker: user-space nanoseconds spent on UDP batches, recvmmsg return to
                         // sendmmsg call (TSC, workers/tsc_timer.hpp)
  user_ns_queries,       // worker: queries in those batches (user_ns / user_ns_queries: ns per query)
  stale_answers,         // worker: answers served from an expired entry (serve-stale, RFC 8767; EDE 3/19)
  failure_cached,        // worker: misses answered from the host's failure cache, no upstream query
                         // (RFC 9520): stale when an expired entry is held, else SERVFAIL with EDE
  deadline_answers,      // worker: clients answered at the response deadline (stale, or SERVFAIL with
                         // EDE) while their upstream query went on in the background
  prefetches,            // worker: refreshes started by a hit in the last part of an entry's TTL
  upstream_joined,       // worker: misses that waited for another worker's upstream query for the same
                         // name instead of sending their own (one query per name per host)
  upstream_probes,       // worker: queries sent to an upstream marked down, to learn if it is back
  upstream_down_skips,   // worker: attempts that passed over an upstream marked down
  upstream_trials,       // worker: copies of a miss sent to an upstream not yet proven, raced against
                         // the client's query to a proven one (also in upstream_queries)
  cookie_valid,          // worker: queries with a valid server cookie (RFC 7873); over UDP they are
                         // exempt from rate limiting (workers/server_cookies.hpp)
  cookie_badcookie,      // worker: UDP queries answered BADCOOKIE (cookies_require, no valid cookie)
  dnstap_sent,           // worker: dnstap frames handed to its writer thread's queue
  dnstap_dropped,        // worker: dnstap frames dropped because that queue and the worker's
                         // backlog were full (the reader is slower than the traffic); the
                         // answers went out
  policy_hits,           // worker: queries whose name matched a response policy rule (any action)
  policy_blocked,        // worker: of those, answered NXDOMAIN, NODATA or REFUSED by the rule
  policy_local_data,     // worker: of those, answered with the rule's local data
  policy_passthru,       // worker: of those, let through to the cache and upstream (PASSTHRU)
  policy_dropped,        // worker: of those, not answered (DROP, deny)
  upstream_connections,  // worker: TCP/TLS connections to upstreams that became ready (transport tcp, tls)
  upstream_tls_resumed,  // worker: of those, TLS sessions resumed (no full handshake)
  queries_dot,           // worker: of queries_tcp, those over DNS over TLS
  queries_doh,           // worker: of queries_tcp, those over DNS over HTTPS
  upstream_slot_answers, // worker: clients that waited for another worker's upstream query answered
                         // from the answer it fetched and the cache did not take (answer_slots.hpp)
  upstream_slot_full,    // worker: such answers not handed over (larger than a slot, or its slot being
                         // written): that query's waiters on other workers ask again, one at a time
  trust_anchor_probe_failures, // supervisor: RFC 5011 probes of the trust point (dnssec.auto_update)
                         // that failed (no reply, a set no trusted key signed, a file error)
  authority_rate_limited, // worker: queries to an authoritative not sent because the host had sent
                         // recursion.max_queries_per_server to that address within the second
                         // (authority_rate.hpp); the resolution tried the cut's next server
};
// The slot's last free counter is taken: the next one needs a bigger StatSlot and a
// format bump (the DNSSEC counters live in a row of their own, dnssec_counters.hpp).
inline constexpr std::size_t kCounterCount = 61;
// Counters the slot has room for (its size minus the 24-byte slot header, in u64s).
inline constexpr std::size_t kMaxCounters = (512 - 24) / 8;
static_assert(kCounterCount <= kMaxCounters, "a new counter needs a bigger StatSlot (and a format bump)");

inline constexpr std::array<std::string_view, kCounterCount> kCounterNames = {
    "lookups",          "hits",           "misses",           "expired_on_lookup",
    "lookup_retries",   "inserts",        "replaces",         "evictions",
    "expirations",      "conflict_evictions", "second_chances", "rejected_inserts",
    "queries_udp",      "queries_tcp",    "upstream_queries", "upstream_timeouts",
    "upstream_latency_us", "servfail",    "formerr",          "truncated",
    "restarts",         "index_displacements", "upstream_overload", "upstream_tcp",
    "refused",          "rate_limited",   "any_minimal",    "workers_killed_silent",
    "writer_lock_unavailable", "udp_answers_dropped", "udp_answers_unsendable", "upstream_case_fallbacks",
    "upstream_overload_per_name", "upstream_jostled",       "user_ns",
    "user_ns_queries",  "stale_answers",  "failure_cached", "deadline_answers",
    "prefetches",       "upstream_joined", "upstream_probes", "upstream_down_skips",
    "upstream_trials",  "cookie_valid",   "cookie_badcookie", "dnstap_sent",
    "dnstap_dropped",   "policy_hits",    "policy_blocked", "policy_local_data",
    "policy_passthru",  "policy_dropped", "upstream_connections", "upstream_tls_resumed",
    "queries_dot",      "queries_doh",    "upstream_slot_answers", "upstream_slot_full",
    "trust_anchor_probe_failures", "authority_rate_limited"};

enum class SlotRole : std::uint32_t { other = 0, worker = 1, supervisor = 2, tool = 3 };

struct alignas(64) StatSlot {
  std::atomic<std::uint32_t> owner_pid;
  std::uint32_t role;
  std::uint64_t claimed_unix;
  std::uint64_t worker_index;
  // The first kCounterCount are the Counter enum's; any past them are zero (room that
  // counters appended later take).
  std::atomic<std::uint64_t> counters[kMaxCounters];

  // For a slot shared by several processes (every slot was taken): atomic add.
  void add(Counter c, std::uint64_t n = 1) {
    counters[static_cast<std::size_t>(c)].fetch_add(n, std::memory_order_relaxed);
  }
  // For the slot's single owner: a plain relaxed load and store, no locked instruction.
  // A locked add costs ~20 cycles, a measurable share of a hit.
  void add_owned(Counter c, std::uint64_t n = 1) {
    auto& v = counters[static_cast<std::size_t>(c)];
    v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get(Counter c) const {
    return counters[static_cast<std::size_t>(c)].load(std::memory_order_relaxed);
  }
};

static_assert(sizeof(StatSlot) == 512, "whole cache lines per slot: no false sharing");
static_assert(24 + kMaxCounters * 8 == 512, "counters fill the slot exactly");
static_assert(offsetof(StatSlot, counters) == 24, "counter offsets are part of the format");

}  // namespace dnsarena::cache

// SPDX-License-Identifier: GPL-3.0-or-later
// The host-wide infrastructure table of the recursive workers: what Unbound's infra cache
// keeps per authoritative server, but one table for every worker of one `dnsarena serve`
// and for their successors after a restart, so that what one worker learned of a server
// (it is slow, it is silent, it rejects EDNS, it is lame for a zone) is used by all.
//
// Per authoritative address (IPv4 or IPv6, and port), the host record:
//   srtt, rttvar   smoothed RTT of its UDP replies (RFC 6298: alpha 1/8, beta 1/4; the
//                  first sample R gives R, R/2)
//   timeouts       attempts in a row that got no reply; each one sets a backoff: the
//                  server is ranked behind every other server of its zone for
//                  kBackoffInitialMs << (timeouts - 1), at most kBackoffMaxMs (Unbound's
//                  RTT_MAX_TIMEOUT); after that it is ranked by its RTT again, so a query
//                  with nowhere better to go probes it. A reply clears both.
//   edns           unknown / works / broken (answered FORMERR or NOTIMP to a query with an
//                  OPT record, then answered without one): broken servers are asked
//                  without EDNS at once
//   edns_timeouts  EDNS queries in a row without a reply while edns is unknown: at 2, the
//                  next query goes without EDNS (a reply to it marks the server broken)
// and per (address, zone) where the server answered lamely for the zone (REFUSED, or a
// non-authoritative reply that is no referral), the lame record: the server is ranked
// behind every other one of that zone (still asked when it is the only one left).
//
// A record expires kHostTtlS (900 s, Unbound's infra-host-ttl) after it was made; updates
// do not extend it (as Unbound: a server marked broken or lame is tried afresh every 15
// minutes). An expired record reads as unknown and is the first candidate to evict.
//
// Placement and bounds: a record lives in bucket hash(key) mod buckets, in any of its
// kWays slots; a lookup reads at most kWays slots. A new record takes an empty or expired
// slot of its bucket, else the one made first (that record is evicted, counted). The
// table never grows: an attacker who makes the resolver ask many addresses (referrals to
// his own servers) only evicts records, within his buckets, at one write per reply or
// timeout. The hash is keyed with a random seed, so he cannot pick a bucket to empty.
//
// Memory: an anonymous shared mapping the supervisor makes before the first fork (as
// nsec_ranges.hpp): every worker inherits it, and a worker killed and forked again finds
// what its predecessor learned. It lives as long as the service's processes.
//
//   offset        size  field       meaning
//   0             8     seed        random; keys the bucket hash
//   8             8     base_ms     CLOCK_MONOTONIC milliseconds at creation
//   16            4     buckets     a power of two
//   20            4     ways        kWays
//   24            8     evictions   atomic; live records replaced by another
//   32            8     inserts     atomic; records made
//   40            24    (zero)      so that slot 0 starts on a cache line
//   64 + 64*i     64    slot i      slot i of bucket b is b * kWays + i
//
// A slot (one cache line):
//   0    8   seq         |63 -- 32: write start ms|31 -- 1: generation|0: writing|
//                        (seqlock_words.hpp; ms relative to base_ms)
//   8    8   checksum    of the record's six words
//   16   48  record      below, stored as six relaxed 64-bit words
//
// The record (INFRA_RECORD_FORMAT: every place that reads or writes it is tagged):
//   0    16  address     IPv4 in the first 4 bytes, rest zero
//   16   8   zone        0: the host record; else the hash of the zone (a lame record)
//   24   2   port        host order
//   26   1   family      AF_INET or AF_INET6; 0: an empty slot
//   27   1   edns        0 unknown, 1 works, 2 broken
//   28   1   lame        1 in a lame record
//   29   1   timeouts    saturating at 255
//   30   1   edns_timeouts
//   31   1   (zero)
//   32   4   srtt_us     0 with rttvar 0: no sample yet
//   36   4   rttvar_us
//   40   4   expires_s   seconds after base_ms
//   44   4   backoff_ms  ms after base_ms (mod 2^32) before which the server backs off;
//                        compared by wrapping difference, valid for kBackoffMaxMs
//
// Concurrency: a seqlock per slot (seqlock_words.hpp). A write is read-modify-write: the
// writer takes the slot (CAS seq even -> odd), reads the record (its own now), changes it,
// stores the words and the checksum, and releases (seq + 2). A reader loads seq (acquire;
// odd: skip), copies the words, fences, and takes the copy only when seq is unchanged and
// the checksum matches. Two writers on one slot: the second stores nothing (one RTT
// sample or timeout lost: the next reply or timeout carries the same news). A writer
// killed mid-write leaves seq odd: no reader trusts the slot, and a writer takes it over
// once the write is older than kStaleWriteMs, treating a record whose checksum does not
// match as empty. A forged or torn record (checksum mismatch) reads as absent.
//
// Costs: a lookup hashes the key and glances at two words of up to kWays slots, copying
// and checksumming only the one that matches; an update is a scan of the bucket, one CAS,
// six stores and a release. Measured (getrusage CPU over 20 M calls, -O2, the shared
// build machine): rank() 68 ns (two lookups: the lame record, then the host's), replied()
// 72 ns. The state machine ranks each untried address of its cut at every step, a few
// microseconds per resolution against about 90 us of CPU for a cold one. NOTE: lookups
// that copied and checksummed every slot of the bucket cost 160 ns a rank. The default
// table: 2,048 buckets of 8 ways, 16,384 records, 1 MiB (Unbound's infra-cache-numhosts is
// 10,000), touched as servers are seen.
#pragma once
#include "common/anonymous_mapping.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

namespace dnsarena::workers {

// An authoritative server's address and port.
struct InfraKey {
  std::uint8_t family = 0;               // AF_INET or AF_INET6
  std::array<std::uint8_t, 16> address{};  // IPv4 in the first 4 bytes
  std::uint16_t port = 53;
};

class InfraTable {
public:
  static constexpr std::uint32_t kDefaultBuckets = 2048;
  static constexpr unsigned kWays = 8;
  static constexpr std::uint32_t kHostTtlS = 900;             // Unbound infra-host-ttl
  static constexpr std::uint32_t kBackoffInitialMs = 5000;
  static constexpr std::uint32_t kBackoffMaxMs = 120000;      // Unbound RTT_MAX_TIMEOUT
  static constexpr std::uint32_t kUnknownRankUs = 376000;     // Unbound UNKNOWN_SERVER_NICENESS
  static constexpr std::uint32_t kBackoffRank = 0x80000000u;  // behind any RTT
  static constexpr std::uint32_t kLameRank = 0xC0000000u;     // behind any backoff
  static constexpr unsigned kEdnsTimeoutsToFallBack = 2;
  static constexpr std::uint64_t kStaleWriteMs = 1000;

  enum class Edns : std::uint8_t { unknown = 0, works = 1, broken = 2 };

  // What the table holds of a server (an absent or expired record: all defaults).
  struct Host {
    bool known = false;   // a live host record exists
    bool sampled = false; // srtt and rttvar come from replies
    std::uint32_t srtt_us = 0, rttvar_us = 0;
    unsigned timeouts = 0;
    bool backing_off = false;
    Edns edns = Edns::unknown;
    unsigned edns_timeouts = 0;
  };

  // Maps `buckets` buckets (rounded up to a power of two, 1 .. 65,536), shared across
  // fork() when `shared`. Throws std::system_error when mmap fails.
  InfraTable(std::uint32_t buckets, bool shared);

  std::uint32_t buckets() const { return header_->buckets; }
  std::size_t capacity() const { return std::size_t{header_->buckets} * kWays; }

  // Reads (any process; `now_ms`: CLOCK_MONOTONIC milliseconds).
  Host host(const InfraKey& k, std::uint64_t now_ms) const;
  bool lame(const InfraKey& k, std::uint64_t zone_hash, std::uint64_t now_ms) const;
  // Whether the next query to `k` carries an OPT record: not when broken, nor while
  // unknown after kEdnsTimeoutsToFallBack EDNS timeouts in a row.
  bool use_edns(const InfraKey& k, std::uint64_t now_ms) const;
  // Where the server stands for a query to `zone_hash`, lower first: srtt + 4 rttvar of
  // its replies (kUnknownRankUs before any), kBackoffRank + timeouts while it backs
  // off, kLameRank when lame for the zone.
  std::uint32_t rank(const InfraKey& k, std::uint64_t zone_hash, std::uint64_t now_ms) const;

  // Updates (any process). A reply (any rcode): `rtt_us` 0 gives no RTT sample (TCP);
  // timeouts and the backoff clear; `edns` other than unknown is recorded.
  void replied(const InfraKey& k, std::uint32_t rtt_us, Edns edns, std::uint64_t now_ms);
  // An attempt that got no reply; `with_edns`: the query carried an OPT record.
  void timed_out(const InfraKey& k, bool with_edns, std::uint64_t now_ms);
  void mark_lame(const InfraKey& k, std::uint64_t zone_hash, std::uint64_t now_ms);

  struct Stats {
    std::size_t capacity = 0;
    std::size_t hosts = 0, lame = 0;  // live records of each kind
    std::size_t edns_broken = 0, backing_off = 0;
    std::uint64_t inserts = 0, evictions = 0;
  };
  // Walks every slot (1 MiB for the default table: the supervisor, once a second).
  Stats stats(std::uint64_t now_ms) const;

  // The mapping's bytes, for tests that forge a slot or leave a write half done.
  std::span<std::uint8_t> raw_for_tests() const {
    return {static_cast<std::uint8_t*>(map_.data()), map_.size()};
  }

  // INFRA_RECORD_FORMAT
  struct Record {
    std::uint8_t address[16];
    std::uint64_t zone;
    std::uint16_t port;
    std::uint8_t family;
    std::uint8_t edns;
    std::uint8_t lame;
    std::uint8_t timeouts;
    std::uint8_t edns_timeouts;
    std::uint8_t zero;
    std::uint32_t srtt_us;
    std::uint32_t rttvar_us;
    std::uint32_t expires_s;
    std::uint32_t backoff_ms;
  };

private:
  struct Header {
    std::uint64_t seed;
    std::uint64_t base_ms;
    std::uint32_t buckets;
    std::uint32_t ways;
    std::atomic<std::uint64_t> evictions;
    std::atomic<std::uint64_t> inserts;
    std::uint8_t zero[24];
  };
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> seq;
    std::atomic<std::uint64_t> checksum;
    std::uint8_t record[48];
  };
  static_assert(sizeof(Header) == 64, "slot 0 starts on its own cache line");
  static_assert(offsetof(Header, base_ms) == 8 && offsetof(Header, buckets) == 16 && offsetof(Header, ways) == 20 &&
                    offsetof(Header, evictions) == 24 && offsetof(Header, inserts) == 32,
                "the documented header layout");
  static_assert(sizeof(Slot) == 64 && offsetof(Slot, checksum) == 8 && offsetof(Slot, record) == 16,
                "a slot is one cache line: seq, checksum, then the record 8-byte aligned");
  static_assert(sizeof(Record) == 48 && offsetof(Record, zone) == 16 && offsetof(Record, port) == 24 &&
                    offsetof(Record, family) == 26 && offsetof(Record, edns) == 27 && offsetof(Record, lame) == 28 &&
                    offsetof(Record, timeouts) == 29 && offsetof(Record, edns_timeouts) == 30 &&
                    offsetof(Record, srtt_us) == 32 && offsetof(Record, rttvar_us) == 36 &&
                    offsetof(Record, expires_s) == 40 && offsetof(Record, backoff_ms) == 44,
                "INFRA_RECORD_FORMAT: the documented record layout, six whole words, no padding");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
                "slots are shared between processes: only lock-free atomics are address-free");

  Slot& slot(std::size_t i) const {
    return *reinterpret_cast<Slot*>(static_cast<std::uint8_t*>(map_.data()) + sizeof(Header) + i * sizeof(Slot));
  }
  std::size_t first_slot(const InfraKey& k, std::uint64_t zone) const;
  std::uint64_t relative_ms(std::uint64_t now_ms) const {
    return now_ms > header_->base_ms ? now_ms - header_->base_ms : 0;
  }
  std::uint32_t relative_s(std::uint64_t now_ms) const { return static_cast<std::uint32_t>(relative_ms(now_ms) / 1000); }
  // A consistent copy of slot i (nullopt: being written, torn, or empty).
  std::optional<Record> read(std::size_t i) const;
  // The live record of (k, zone), nullopt when absent or expired.
  std::optional<Record> find(const InfraKey& k, std::uint64_t zone, std::uint64_t now_ms) const;
  // Read-modify-write of the record of (k, zone), made when absent (fresh). Nothing when
  // another writer holds the slot.
  void update(const InfraKey& k, std::uint64_t zone, std::uint64_t now_ms,
              const std::function<void(Record&)>& change);
  bool backing_off(const Record& r, std::uint64_t now_ms) const;

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
};

}  // namespace dnsarena::workers

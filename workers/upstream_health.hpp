// SPDX-License-Identifier: GPL-3.0-or-later
// Host-wide health of the upstream servers, shared by every worker of one `dnsarena
// serve`: what Unbound's infra cache keeps per server, so that a miss
// goes to a live, fast upstream instead of the first one in the config, and so that a
// dead upstream costs the host a few timeouts instead of one per miss and per worker.
//
// Memory: one anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS) that the supervisor
// makes before it forks the first worker; every worker inherits it, and a worker that
// is killed and forked again (or replaced by a SIGHUP reload) finds what its predecessor
// learned. It is not part of the cache segment (whose format it does not touch), has no
// name and no version: it lives exactly as long as the service's processes. Fixed size,
// chosen at start; nothing inside is a pointer.
//
//   offset          size   field      meaning
//   0               4      capacity   rows mapped
//   4               4      used       atomic; rows 0 .. used-1 are published (below)
//   8               56     (zero)     so that row 0 starts on a cache line
//   64 + r*128      128    row r      one upstream endpoint (address and port)
//   64 + C*128      192    rtt r      row r's round trips (C: capacity): a
//     + r*192                         LatencyHistogram (latency_histogram.hpp), one
//                                     sample per UDP reply (client queries, trials,
//                                     probes; not TCP, whose time includes the
//                                     handshake), fetch_add by every worker; then 56
//                                     zero bytes, so two upstreams never share a line
//
// A row (two cache lines; the numbers are microseconds of CLOCK_MONOTONIC, which every
// process of the host reads alike, unless named _ms):
//
//   offset size field          meaning
//   0      2    family         AF_INET or AF_INET6                    } the key: written
//   2      2    port           host order                             } once, before the
//   4      16   address        IPv4 in the first 4 bytes, rest zero   } row is published
//   20     4    rto_us         atomic; retransmission timeout, RFC 6298 with backoff
//                              (doubled per timeout, Unbound's rtt_lost), within 50 ms
//                              .. 120 s (Unbound's calc_rto); 0 = no estimate yet
//                              (counts as kUnknownRtoUs, 376 ms)
//   24     8    rtt            atomic; srtt_us << 32 | rttvar_us from replies alone
//                              (alpha 1/8, beta 1/4; the first sample R gives R, R/2);
//                              0 = no sample yet
//   32     8    queries        atomic; queries sent (UDP, TCP and probes)
//   40     8    timeouts       atomic; attempts that got no reply in time
//   48     8    refusals       atomic; attempts refused: ICMP port unreachable, TCP reset
//   56     4    consecutive    atomic; failed UDP attempts since the last reply that
//                              count toward down (see "Down" below)
//   60     4    backoff_ms     atomic; while down: the current probe interval
//   64     8    last_reply     atomic; when the latest reply (any rcode) was received
//   72     8    down_since     atomic; 0 = up, else when it was marked down
//   80     8    next_probe     atomic; while down: no probe before this
//   88     8    probe_token    atomic; 0 = free, else lease expiry_ms << 16 | nonce
//   96     8    probes         atomic; probes sent
//   104    8    downs          atomic; times marked down
//   112    16   (zero)
//
// Selection (choose_upstream, used by upstream_client.cpp's start_attempt): among the
// zone's upstreams that are not down (and, while some remain, not yet tried by this
// query), one at random among those whose rank is within rtt_band_ms (400, Unbound's
// RTT_BAND) of the best rank. The rank is srtt + 4 * rttvar from replies alone, with
// kUnknownRtoUs (376 ms, Unbound's UNKNOWN_SERVER_NICENESS) before the first reply, so a
// new server is within the band of a fast one and gets tried. Timeouts do not raise the
// rank (they do in Unbound): a server ranked out of the band by timeouts alone would get
// no more queries, so it would never be found down, probed, or found back; deadness is
// the down state's job. An attempt waits the row's RTO (backoff included) when that is
// shorter than upstream_timeout_ms (x2, x4 for later attempts), and at least
// kMinTimeoutUs (50 ms, Unbound's RTT_MIN_TIMEOUT): failing over from an upstream that
// just died costs about its RTO, not a second. That holds only while the query has
// somewhere to fail over to (an up upstream it has not tried, and attempts left): else
// it waits the configured timeout, since resending to the same server after a short
// wait gains nothing: a slow answer (a forwarder's own recursion: hundreds of ms for a
// name it does not hold, against a 50 ms RTO from its cached ones) comes anyway, and is
// taken even after the retry left (upstream_late_replies.cpp); the retry is only load.
//
// Down: slow is not dead. A row goes down when `consecutive` reaches down_after_timeouts
// (3, Unbound's TIMEOUT_COUNT_MAX), and a failed attempt counts toward it only when it was
// a UDP attempt (or over a kept TCP/TLS connection) and the server replied to nothing
// within the attempt's RTO window: from one RTO (the one it was sent with) before it left
// until it timed out (last_reply <= send time - RTO). A server that answers anything,
// other queries or this name late, is alive, and its timeouts belong to slow names: a
// recursive upstream on cold names, or a flood of misses for a broken domain, must not
// take a live forwarder down. The replies this sees include late ones: a query keeps its
// earlier attempts' sockets open (upstream_late_replies.cpp), so a name that takes 1.2 s
// against a 1 s timeout is a reply (and a 1.2 s RTT sample), not a timeout with nothing
// after it. Error rcodes (SERVFAIL, REFUSED...) are replies too. A silent server is
// found down as fast as before: its timeouts have no reply anywhere near them. While
// down, a row gets probes: at most one at a time on the host (probe_token), none
// before next_probe; the probe asks the zone's SOA (a question any live server answers,
// unlike the miss that triggered it) and its answer is not used. Any reply brings the row
// up (consecutive 0, backoff reset); a probe that fails doubles backoff_ms, from
// down_backoff_initial_ms up to down_backoff_max_ms, and sets next_probe.
//
// Every upstream of a zone down: a miss still goes to the one most recently heard from
// (last_reply; the last resort, upstream_client_health.cpp), so that a wrong "down"
// costs time, not answers: its reply brings the row up at once, without waiting for the
// next probe. Bound: at most down_after_timeouts (3) such attempts in flight per upstream
// and worker. A server that is really dead then holds 3 sockets per worker for one
// attempt's timeout at a time (the rate is 3 per timeout per worker), and every other miss
// meanwhile is answered at once as before; a live one wrongly marked down answers the
// first of them within its RTT. An upstream that never replied is no candidate: nothing
// says it is alive. Past the bound, a query with earlier attempts out waits for their
// late replies (an attempt that sends nothing); a new one ends at once, its clients
// answered stale when the cache holds an expired answer, else SERVFAIL with EDE 22 (no
// reachable authority); it is not recorded in the failure cache (nothing was asked, and
// that entry would outlast the probe that finds a server back). The probes go on
// meanwhile (a miss that finds a probe due sends it), so the first reply, at most
// down_backoff_max_ms after a server returns, ends the outage. NOTE: letting every miss
// wait on "the least dead" server instead makes each client wait a whole timeout for an
// answer that will almost never come; failing every miss unasked (with timeouts that
// counted when only late replies came) let 14 slow names on a single upstream cost the
// 20 fast misses after them: measured 0 of 20 answered, Unbound 1.17 20 of 20.
//
// Concurrency: every worker writes every row; no lock is taken. The key is written
// only by the table's single adder (the supervisor, before it forks the workers that
// read the row, or a private table's owner) and published by a release store of
// `used`; readers acquire-load `used` and never read a row beyond it. The counters
// (queries, timeouts, refusals, probes, downs) are fetch_add. `rtt` is one 64-bit word
// updated by CAS, so srtt and rttvar always belong together; `rto_us` is then stored
// from the pair the CAS installed, and a store from a racing update may land last with
// the older pair's value: benign, the next reply corrects it. `last_reply` only grows
// (CAS max). `down_since` changes state by CAS (0 -> now: down; x -> 0: up), so exactly
// one process makes each transition and logs it; backoff_ms and next_probe are stored
// by that process after its CAS (a probe taken in between sees the previous interval:
// benign). A reply racing the third timeout (the reply lands after the timeout checked
// last_reply) can leave a live server down until its first probe; the transition checks
// last_reply again after its CAS and undoes it when a reply came, which closes most of
// that window. `probe_token` is taken by CAS from 0 or from an expired lease, and given
// back by CAS from the value taken (a prober whose lease expired cannot free a newer
// prober's token); the failed probe stores next_probe before it frees the token, so no
// second probe starts in the same interval. A killed prober's token expires with its lease
// (twice the probe's timeout): no dead process can wedge the probes. Between a worker's
// kill and its replacement nothing is lost: the table is the supervisor's.
//
// NOTE: rows are only ever appended. An upstream removed by a reload keeps its row (and
// its last state, in /metrics and stats) until the service restarts; a reload that adds
// more endpoints than the table has room for (capacity: 4x the endpoints at start, at
// least 64) leaves the extra ones without health: ranked unknown, never down (logged).
// Costs: a selection reads two words per upstream of the zone; an outcome is two to four
// atomic operations on one row (and two on its RTT histogram for a reply). The mapping
// is 64 + capacity x 320 bytes.
#pragma once
#include "common/anonymous_mapping.hpp"
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "workers/latency_histogram.hpp"
#include "workers/serve_config.hpp"

namespace dnsarena::workers {

class UpstreamHealth {
public:
  static constexpr std::uint32_t kUnknownRtoUs = 376000;      // Unbound UNKNOWN_SERVER_NICENESS
  static constexpr std::uint32_t kMaxRtoUs = 120000000;       // Unbound RTT_MAX_TIMEOUT
  static constexpr std::uint32_t kMinTimeoutUs = 50000;       // Unbound RTT_MIN_TIMEOUT

  // Maps `capacity` rows (shared across fork() when `shared`, else private to this
  // process). Throws std::system_error when mmap fails.
  UpstreamHealth(unsigned capacity, bool shared);
  ~UpstreamHealth();
  UpstreamHealth(const UpstreamHealth&) = delete;
  UpstreamHealth& operator=(const UpstreamHealth&) = delete;

  unsigned capacity() const;
  unsigned size() const;  // rows published
  // The row of `e`, or -1.
  int find(const Endpoint& e) const;
  // The row of `e`, appended when absent; -1 when the table is full.
  // REQUIRES: the caller is the table's only adder (the supervisor before it forks the
  // workers that will look the row up, or a private table's owner).
  int add(const Endpoint& e);
  // "192.0.2.1:53", "[2001:db8::1]:53".
  std::string endpoint_text(unsigned row) const;

  // Outcomes (any process). sent: one query (UDP, TCP or probe) left for the row.
  void sent(unsigned row);
  // A reply matching the question, whatever its rcode: the server is alive. `rtt_us` 0:
  // no RTT sample (a TCP exchange, whose time includes the handshake). Returns true when
  // this reply brought the row up from down (the caller logs it).
  bool replied(unsigned row, std::uint64_t rtt_us, std::uint64_t now_us);
  enum class Failure { timeout, refused };
  // An attempt sent at `sent_us` with RTO `attempt_rto_us` that failed. `counts` false:
  // totals only (TCP, probes). Returns true when this failure marked the row down.
  bool failed(unsigned row, Failure f, std::uint64_t sent_us, std::uint32_t attempt_rto_us, std::uint64_t now_us,
              const UpstreamHealthConfig& cfg, bool counts);

  bool down(unsigned row) const;
  // When the row's latest reply came (monotonic microseconds; 0: never).
  std::uint64_t last_reply_us(unsigned row) const;
  // The row has answered (an RTT sample), is not down, and no attempt since its last
  // reply has failed: a client may wait on it. Otherwise the row is on trial (below).
  bool proven(unsigned row) const;
  // A probe token when the row is down, its next probe is due and no live lease holds
  // the token; 0 otherwise. The lease ends `lease_ms` from now.
  std::uint64_t take_probe(unsigned row, std::uint64_t now_us, std::uint32_t lease_ms);
  enum class ProbeEnd { alive, dead, cancelled };
  // The end of the probe that took `token`: dead doubles the probe interval (up to the
  // max) and sets the next probe; alive and cancelled only give the token back (a reply
  // brings the row up through replied()). Nothing when the token is no longer the one
  // held (its lease ran out and another probe took it).
  void end_probe(unsigned row, std::uint64_t token, ProbeEnd how, std::uint64_t now_us,
                 const UpstreamHealthConfig& cfg);

  // Selection inputs: the rank (srtt + 4 rttvar of replies; kUnknownRtoUs before any)
  // and the RTO with backoff (kUnknownRtoUs before any estimate), both in microseconds.
  std::uint32_t rank_us(unsigned row) const;
  std::uint32_t rto_us(unsigned row) const;

  // Everything a report shows about one row, read with relaxed loads (fields may come
  // from slightly different moments).
  struct Snapshot {
    std::string endpoint;
    bool sampled = false;  // srtt and rttvar are from replies (else unknown)
    double srtt_ms = 0, rttvar_ms = 0, rto_ms = 0;
    std::uint64_t queries = 0, timeouts = 0, refusals = 0, probes = 0, downs = 0;
    std::uint32_t consecutive = 0;
    bool down = false;
    double down_for_s = 0;        // while down
    double next_probe_in_ms = 0;  // while down; 0 = due
    std::uint32_t backoff_ms = 0;
    LatencyCounts rtt;  // the RTT histogram
  };
  Snapshot snapshot(unsigned row, std::uint64_t now_us) const;

private:
  struct alignas(64) Row {
    std::uint16_t family;
    std::uint16_t port;
    std::uint8_t address[16];
    std::atomic<std::uint32_t> rto_us;
    std::atomic<std::uint64_t> rtt;
    std::atomic<std::uint64_t> queries;
    std::atomic<std::uint64_t> timeouts;
    std::atomic<std::uint64_t> refusals;
    std::atomic<std::uint32_t> consecutive;
    std::atomic<std::uint32_t> backoff_ms;
    std::atomic<std::uint64_t> last_reply;
    std::atomic<std::uint64_t> down_since;
    std::atomic<std::uint64_t> next_probe;
    std::atomic<std::uint64_t> probe_token;
    std::atomic<std::uint64_t> probes;
    std::atomic<std::uint64_t> downs;
    std::uint8_t zero[16];
  };
  struct Header {
    std::uint32_t capacity;
    std::atomic<std::uint32_t> used;
    std::uint8_t zero[56];
  };
  struct alignas(64) RttRow {
    LatencyHistogram rtt;
    std::uint8_t zero[56];
  };
  static_assert(sizeof(RttRow) == 192, "an RTT histogram takes whole cache lines: the layout above");
  static_assert(sizeof(Header) == 64, "row 0 starts on its own cache line");
  static_assert(sizeof(Row) == 128, "a row is two whole cache lines");
  static_assert(offsetof(Row, rto_us) == 20 && offsetof(Row, rtt) == 24 && offsetof(Row, queries) == 32 &&
                    offsetof(Row, timeouts) == 40 && offsetof(Row, refusals) == 48 &&
                    offsetof(Row, consecutive) == 56 && offsetof(Row, backoff_ms) == 60 &&
                    offsetof(Row, last_reply) == 64 && offsetof(Row, down_since) == 72 &&
                    offsetof(Row, next_probe) == 80 && offsetof(Row, probe_token) == 88 &&
                    offsetof(Row, probes) == 96 && offsetof(Row, downs) == 104 && offsetof(Row, zero) == 112,
                "the row layout above");
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
                "rows are shared between processes: only lock-free atomics are address-free");
  Row& at(unsigned row) const { return rows_[row]; }
  static void key_of(const Endpoint& e, std::uint16_t& family, std::uint16_t& port, std::uint8_t (&address)[16]);

  common::AnonymousMapping map_;
  Header* header_ = nullptr;
  Row* rows_ = nullptr;
  RttRow* rtt_ = nullptr;
};

// The upstream an attempt goes to. rows[i]: the health row of the zone's upstream i (-1:
// none: ranked unknown, never down); only a zone's first 64 upstreams are considered. `tried`: bit i set when this query already tried
// upstream i (bits past 63: never set). Returns the index, or -1 when every upstream is
// down; `down_skipped` counts the down ones passed over. `random`: a uniform 32-bit draw.
int choose_upstream(const UpstreamHealth& health, std::span<const int> rows, std::uint64_t tried,
                    std::uint32_t band_us, std::uint32_t random, unsigned* down_skipped);

// Trials: when the upstream choose_upstream picked is not proven (never answered, or its
// latest attempts went unanswered) and the zone has another up upstream this query has
// not tried, the query is raced: the client's query goes to the best such other upstream
// (a proven one first, then by rank) and a copy, the trial, to the picked one; the first
// accepted answer of the two answers the client. A trial has no waiters and lives to its
// own reply or timeout whatever the race did, so what it learns (an RTT, or a timeout that
// counts toward down) reaches the table: an unproven upstream is proven or found down by
// trials, never by a client's wait. A client therefore waits on an unproven upstream only
// when nothing else is left: with two upstreams and the first dead, a miss costs the live
// one's round trip, not the dead one's RTO (376 ms before its first reply). The cost is
// one extra upstream query per miss that picked an unproven upstream, at most
// down_after_timeouts trials in flight per upstream and worker (enough to find it down);
// past that bound the miss goes to the other upstream alone.
// Returns the index of the upstream the client's query goes to instead of `picked`, or -1
// (no other up, untried upstream: no race).
int trial_partner(const UpstreamHealth& health, std::span<const int> rows, std::uint64_t tried, int picked);

// How long an attempt waits: the RTO when shorter than `cap_us` (the configured timeout,
// with the attempt's backoff), and at least kMinTimeoutUs (or the cap, when lower).
std::uint64_t attempt_timeout_us(std::uint32_t rto_us, std::uint64_t cap_us);

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// What the end of one query to an authoritative teaches the host's infra table
// (infra_table.hpp), and the EDNS fallback built on it, for the recursive client
// (recursive_client.hpp):
//
//   before      a query carries an OPT record unless the table says the server is broken
//               (or unknown after two EDNS timeouts in a row: the query then goes
//               without, as a test)
//   reply       the server is alive: timeouts and backoff clear, a UDP reply's round trip
//               is an RTT sample. FORMERR or NOTIMP to a query with EDNS: the same query
//               is asked again without EDNS (RFC 6891 7), and nothing is learned of EDNS
//               yet; any other reply to an EDNS query: EDNS works; a reply (not FORMERR
//               nor NOTIMP) to a query sent without EDNS: EDNS is broken, so the
//               server's later queries, from every worker, go without at once. Such a
//               server answers at most 512 bytes over UDP: a longer answer comes with TC,
//               and the client asks again over TCP (without EDNS too).
//   timeout     a timeout (no reply within the attempt's timeout, below) or a refusal
//               (ICMP port unreachable, TCP reset): the server backs off (ranked last for
//               a while); a timed-out EDNS query counts toward the fallback above.
//   wait        an attempt to a server waits its RTO: srtt + 4 rttvar of its replies
//               (RFC 6298), at least recursion.attempt_timeout_ms, which is also what a
//               server without an RTT sample gets; doubled for each timeout in a row
//               (at most 8x), at most kMaxAttemptUs, and never past the resolution's own
//               timer. A server slower than attempt_timeout_ms is then waited for: its
//               first query times out, the next one (the state machine asks a timed-out
//               server once more) waits twice as long and measures it.
//
// Lameness is reported by the state machine itself (infra_ranking.hpp).
#pragma once
#include <cstdint>

#include "recursion/delegation.hpp"
#include "workers/infra_table.hpp"

namespace dnsarena::workers {

inline constexpr std::uint64_t kMaxAttemptUs = 12'000'000;  // a query the resolution timer has not ended sooner

// How long the next attempt to `a` waits for its reply (the "wait" above).
std::uint64_t attempt_timeout_us(const InfraTable& table, const recursion::ServerAddress& a, unsigned floor_ms,
                                 std::uint64_t now_us);
// Whether the next query to `a` carries an OPT record.
bool query_with_edns(const InfraTable& table, const recursion::ServerAddress& a, std::uint64_t now_us);

enum class ReplyUse {
  take,              // give the reply to the state machine
  retry_without_edns // ask the same query of the same server again, without EDNS
};
// A reply with `rcode` to a query sent with or without EDNS, over UDP (`rtt_us` its
// round trip) or TCP (rtt_us 0: the handshake is in it).
ReplyUse record_reply(InfraTable& table, const recursion::ServerAddress& a, bool with_edns, std::uint16_t rcode,
                      std::uint32_t rtt_us, std::uint64_t now_us);
// No reply: a timeout, or a refusal.
void record_no_reply(InfraTable& table, const recursion::ServerAddress& a, bool with_edns, std::uint64_t now_us);

}  // namespace dnsarena::workers

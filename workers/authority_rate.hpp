// SPDX-License-Identifier: GPL-3.0-or-later
// The bound on fan-out to one authoritative: at most recursion.max_queries_per_server
// queries per second to one server address (address and port), from every worker of the
// host together, so that no flood of client questions (random names under a victim's
// zone, an NXNSAttack's referrals) turns the resolver into a stream of queries at one
// server. Unbound's counterpart is `ratelimit` (per zone), BIND's `fetches-per-server`.
//
// Counted in a RateLimitTable (rate_limit_table.hpp: one 64-bit word per bucket, a
// window of one wall-clock second, lock-free) keyed by a seeded XXH3 of the 4-byte
// address and the port: the supervisor's shared table, so the bound holds for the host
// and across worker restarts, or one private to the process. A query past the rate is
// not sent: the resolution takes that server as failed for the question and moves on to
// the cut's next server; with every server of a cut past its rate the resolution fails
// (SERVFAIL, or stale when held) and the failure cache holds the name, as for a server
// that does not answer. Each refusal is counted (Counter::authority_rate_limited).
// Bucket collisions make the bound weaker for the two addresses, never stronger
// (rate_limit_table.hpp). Queries a resolution follows (recursive_client.hpp: identical
// queries out are sent once) are not sent, so they are not counted.
//
// Costs: one seeded hash of 6 bytes and one CAS per query sent.
#pragma once
#include <cstdint>
#include <memory>

#include "recursion/delegation.hpp"
#include "workers/rate_limit_table.hpp"

namespace dnsarena::workers {

class AuthorityRate {
public:
  static constexpr std::size_t kBuckets = 4096;  // servers asked within one second, host-wide

  // `host`: the supervisor's table (nullptr: one private to this process). `per_second`
  // 0: no bound.
  AuthorityRate(RateLimitTable* host, unsigned per_second);

  // Counts one query to `server` in the second `now_s`; false when it is past the rate
  // (the query is not to be sent). Always true without a bound.
  bool admit(const recursion::ServerAddress& server, std::uint32_t now_s);

private:
  unsigned per_second_;
  std::unique_ptr<RateLimitTable> own_;
  RateLimitTable* table_;
};

}  // namespace dnsarena::workers

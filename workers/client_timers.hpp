// SPDX-License-Identifier: GPL-3.0-or-later
// The two timers of a client waiting for an upstream answer, as RFC 8767 (section 5)
// names them. Both run from the client's arrival (Waiter::arrived_us), so a client that
// waited on another worker's query and resolves again keeps its clock.
//
//   client response timer    stale.client_timeout_ms (1,800): when it passes and the
//   (stale_due)              cache holds a usable stale answer (stale.max_age_s), the
//                            client gets that answer and the query goes on for the cache.
//                            With nothing stale it does nothing: the client keeps waiting.
//                            (Unbound serve-expired-client-timeout)
//   query resolution timer   query_timeout_ms (10,000): the client has its answer by then,
//   (given_up)               else it gets stale if held, else SERVFAIL with EDE 22. The
//                            query itself ends by then too (upstream_client.hpp). Knot
//                            Resolver gives a request 10 s (KR_RESOLVE_TIME_LIMIT).
//
// So a stub that waits 5 s gets the answer of an upstream that takes 1.2, 2.5 or 4 s when
// nothing stale is held, and a stale answer at 1.8 s when one is; with stale.max_age_s 0
// only the second timer applies. stale.answer_first answers before either (at once).
//
// Cost of the wait: a waiting client is one Waiter (528 bytes) in its upstream query or
// in the worker's parked list. A client with nothing stale is held up to query_timeout_ms
// instead of client_timeout_ms (5.6x longer at the defaults), so both lists are bounded
// per worker: UpstreamClient::kWaitersPerQuerySlot x upstream_max_in_flight waiting
// clients (65,536 at the defaults: 35 MB), and the worker's kMaxParked parked ones; past
// either, a miss is answered at once (stale, else SERVFAIL) as overloaded.
#pragma once
#include <algorithm>
#include <cstdint>

#include "workers/serve_config.hpp"

namespace dnsarena::workers {

struct ClientTimers {
  std::uint64_t stale_us = 0;  // stale.client_timeout_ms
  std::uint64_t query_us = 0;  // query_timeout_ms

  static ClientTimers of(const ServeConfig& cfg) {
    return {cfg.stale_client_timeout_ms * 1000ull, cfg.query_timeout_ms * 1000ull};
  }
  // The client response timer has passed: answer stale now if a stale answer is held.
  bool stale_due(std::uint64_t arrived_us, std::uint64_t now_us) const { return arrived_us + stale_us <= now_us; }
  // The query resolution timer has passed: answer now, whatever is held.
  bool given_up(std::uint64_t arrived_us, std::uint64_t now_us) const { return arrived_us + query_us <= now_us; }
  // The next moment one of the two timers passes for a client that arrived at `arrived_us`;
  // `stale_done`: its response timer passed already (nothing stale was held then).
  std::uint64_t next_us(std::uint64_t arrived_us, bool stale_done) const {
    return stale_done || stale_us >= query_us ? arrived_us + query_us : arrived_us + stale_us;
  }
};

}  // namespace dnsarena::workers

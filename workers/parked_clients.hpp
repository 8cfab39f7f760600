// SPDX-License-Identifier: GPL-3.0-or-later
// Clients waiting for another worker's upstream query (upstream_claims.hpp): the
// question is claimed host-wide by that worker, so this one asks nothing and parks its
// client until the claim ends (its answer is then in the cache, or its failure in the
// failure cache) or the client's own deadline passes.
//
// A parked client is looked at when this worker's row is woken (a claim it waits on
// ended: the fast path) and every kScanUs besides (deadlines, an owner that died without
// waking anyone), never on every pass of the event loop: a scan costs O(parked). The
// earliest deadline is kept as the clients are parked and taken, so the loop's wait
// costs O(1) however many are parked. At most kMaxParked: past it a miss is answered as
// an overloaded one (stale or SERVFAIL), as the in-flight bounds do.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "workers/query_check.hpp"
#include "workers/upstream_claims.hpp"
#include "workers/upstream_client.hpp"

namespace dnsarena::workers {

struct Parked {
  Waiter waiter;
  CheckedQuery checked;
  UpstreamClaims::Claim claim;
  // The next of the client's timers (client_timers.hpp; monotonic_us): looked at then,
  // whatever the claim.
  std::uint64_t due_us = 0;
  bool stale_tried = false;  // its response timer passed with nothing stale held
};

class ParkedClients {
public:
  static constexpr std::size_t kMaxParked = 65536;
  static constexpr std::uint64_t kScanUs = 10000;

  bool empty() const { return parked_.empty(); }
  std::size_t size() const { return parked_.size(); }
  bool full() const { return parked_.size() >= kMaxParked; }
  void park(Parked p);
  // A claim this worker waits on ended (its row's eventfd): the next scan is due now.
  void woken() { woken_ = true; }
  // Whether a scan is due: woken, or kScanUs since the last.
  bool scan_due(std::uint64_t now_us) const { return woken_ || now_us >= next_scan_us_; }
  // Milliseconds until the earliest deadline or the next scan, whichever is first.
  int timeout_ms(std::uint64_t now_us) const;
  // Takes out the clients whose deadline passed or whose claim no longer holds (its
  // owner released it, or it is older than `max_life_ms`: an owner that died).
  std::vector<Parked> take_ready(std::uint64_t now_us, const UpstreamClaims& claims, std::uint64_t max_life_ms);

private:
  std::vector<Parked> parked_;
  std::uint64_t earliest_due_us_ = UINT64_MAX;
  bool woken_ = false;
  std::uint64_t next_scan_us_ = 0;
};

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/parked_clients.hpp"

#include <algorithm>

namespace dnsarena::workers {

void ParkedClients::park(Parked p) {
  earliest_due_us_ = std::min(earliest_due_us_, p.due_us);
  parked_.push_back(std::move(p));
}

int ParkedClients::timeout_ms(std::uint64_t now_us) const {
  const std::uint64_t at = std::min(earliest_due_us_, next_scan_us_);
  return static_cast<int>(std::min<std::uint64_t>(at > now_us ? (at - now_us + 999) / 1000 : 0, kScanUs / 1000));
}

std::vector<Parked> ParkedClients::take_ready(std::uint64_t now_us, const UpstreamClaims& claims,
                                              std::uint64_t max_life_ms) {
  woken_ = false;
  next_scan_us_ = now_us + kScanUs;
  earliest_due_us_ = UINT64_MAX;
  std::vector<Parked> ready;
  for (std::size_t i = 0; i < parked_.size();) {
    Parked& pk = parked_[i];
    if (pk.due_us <= now_us || !claims.holds(pk.claim, now_us / 1000, max_life_ms)) {
      ready.push_back(std::move(pk));
      parked_[i] = std::move(parked_.back());
      parked_.pop_back();
    } else {
      earliest_due_us_ = std::min(earliest_due_us_, pk.due_us);
      ++i;
    }
  }
  return ready;
}

}  // namespace dnsarena::workers

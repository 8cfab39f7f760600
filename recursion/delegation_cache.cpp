// SPDX-License-Identifier: GPL-3.0-or-later
#include "recursion/delegation_cache.hpp"

#include <algorithm>

#include "dnssec/rrset.hpp"

namespace dnsarena::recursion {

std::optional<Delegation> DelegationCache::closest(std::span<const std::uint8_t> name) const {
  const unsigned labels = dnssec::label_count(name);
  for (unsigned strip = 0; strip <= labels; ++strip) {
    const auto it = cuts_.find(dnssec::strip_labels(name, strip));
    if (it != cuts_.end() && it->second.expires_s > now_s_) return it->second.cut;
  }
  return std::nullopt;
}

void DelegationCache::learn(const Delegation& d) {
  if (cuts_.size() >= capacity_ && !cuts_.contains(d.zone)) {
    for (auto it = cuts_.begin(); it != cuts_.end();) {
      if (it->first.size() == 1) {  // the root: every resolution starts there
        ++it;
      } else {
        it = cuts_.erase(it);
        ++dropped_;
      }
    }
    if (cuts_.size() >= capacity_) return;  // capacity 1, held by the root
  }
  const std::uint32_t ttl = std::clamp<std::uint32_t>(d.ttl, 1, max_ttl_s_);
  cuts_[d.zone] = Entry{d, now_s_ + ttl};
}

}  // namespace dnsarena::recursion

// SPDX-License-Identifier: GPL-3.0-or-later
// A worker's view of the negative trust anchors in force (runtime_ntas.hpp).
#include "workers/runtime_ntas.hpp"

#include <algorithm>

namespace dnsarena::workers {

const std::shared_ptr<const dnssec::TrustAnchors>& RuntimeNtas::current(std::uint64_t now) {
  if (!table_ || !config_) return current_;
  const std::uint64_t generation = table_->generation();
  if (generation == generation_ && now < next_expiry_) return current_;
  const std::optional<common::NtaTable::Snapshot> snap = table_->read(now);
  if (!snap) return current_;  // being written: the view as it was, until the next call
  std::map<dnssec::Bytes, std::uint64_t> expiries;
  std::uint64_t next = UINT64_MAX;
  for (const common::NtaTable::Entry& e : snap->entries) {
    expiries[dnssec::Bytes(e.name.begin(), e.name.end())] = e.expires;
    next = std::min(next, e.expires);
  }
  generation_ = snap->generation;
  next_expiry_ = next;
  if (expiries == expiries_ && current_) return current_;
  expiries_ = std::move(expiries);
  if (expiries_.empty()) {
    current_ = config_;
  } else {
    auto anchors = std::make_shared<dnssec::TrustAnchors>(*config_);
    for (const auto& [name, expires] : expiries_) anchors->add_negative(name);
    current_ = std::move(anchors);
  }
  return current_;
}

bool RuntimeNtas::negative(std::span<const std::uint8_t> name, std::uint64_t now) {
  const auto& anchors = current(now);
  return anchors && anchors->governing(name).negative.has_value();
}

std::optional<std::uint64_t> RuntimeNtas::runtime_expiry(std::span<const std::uint8_t> name) const {
  if (!current_ || expiries_.empty()) return std::nullopt;
  const auto g = current_->governing(name);
  if (!g.negative) return std::nullopt;
  const auto it = expiries_.find(*g.negative);
  if (it == expiries_.end()) return std::nullopt;
  return it->second;
}

std::uint32_t RuntimeNtas::ttl_cap(std::span<const std::uint8_t> name, std::uint64_t now) const {
  const std::optional<std::uint64_t> expires = runtime_expiry(name);
  if (!expires) return UINT32_MAX;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(*expires > now ? *expires - now : 1, 1, UINT32_MAX - 1));
}

}  // namespace dnsarena::workers

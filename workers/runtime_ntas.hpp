// SPDX-License-Identifier: GPL-3.0-or-later
// A worker's view of the negative trust anchors in force: the config's trust anchors
// (dnssec_config.hpp, with its negative_trust_anchors) plus the host's run-time ones
// (common/nta_table.hpp, `dnsarena dnssec nta add`), as one dnssec::TrustAnchors that a
// validation starts from.
//
// current() is called when a validation starts (validation_jobs.cpp) and when a bogus
// failure is found in the failure cache (upstream_client.cpp): it loads the table's
// generation (one acquire load) and compares it, and the wall-clock second, with what
// the view was built from; only when the generation moved or the earliest run-time NTA
// has expired is the table copied and a new TrustAnchors built (a copy of the config's
// plus the live entries: at most NtaTable::kCapacity names). A table being written (or
// left mid-write by a killed command) keeps the view as it was; the next call looks
// again. Nothing here runs on the cache-hit path.
//
// A view is handed out as a shared_ptr: a validation in flight keeps the anchors it
// started with while a newer view replaces them.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>

#include "common/nta_table.hpp"
#include "dnssec/trust_anchors.hpp"

namespace dnsarena::workers {

class RuntimeNtas {
public:
  // `config`: the config's anchors (null: not validating; current() is then null too).
  // `table`: the host's run-time table (null: none; the config's anchors alone).
  RuntimeNtas(std::shared_ptr<const dnssec::TrustAnchors> config, const common::NtaTable* table)
      : config_(std::move(config)), table_(table), current_(config_) {}

  // The anchors in force at wall-clock second `now`. A different pointer than the last
  // call's means they changed (what was derived from the old ones is stale).
  const std::shared_ptr<const dnssec::TrustAnchors>& current(std::uint64_t now);
  // Whether `name` (lowercase wire) is under a negative trust anchor at `now`.
  bool negative(std::span<const std::uint8_t> name, std::uint64_t now);
  // The expiry (wall-clock second) of the run-time NTA that governs `name` in the
  // current view; none: the name is governed by none, or by one of the config's only.
  std::optional<std::uint64_t> runtime_expiry(std::span<const std::uint8_t> name) const;
  // The longest TTL an answer for `name` judged insecure at `now` may be cached with: the
  // seconds left of the run-time NTA that made it insecure (at least 1), so that the
  // answer does not outlive the NTA; UINT32_MAX when no run-time NTA governs the name.
  std::uint32_t ttl_cap(std::span<const std::uint8_t> name, std::uint64_t now) const;

private:
  std::shared_ptr<const dnssec::TrustAnchors> config_;
  const common::NtaTable* table_;
  std::shared_ptr<const dnssec::TrustAnchors> current_;
  std::uint64_t generation_ = UINT64_MAX;  // of the table the view was built from (never a real one at first)
  std::uint64_t next_expiry_ = 0;          // the earliest run-time expiry in the view (UINT64_MAX: none)
  std::map<dnssec::Bytes, std::uint64_t> expiries_;  // run-time NTA -> its expiry
};

}  // namespace dnsarena::workers

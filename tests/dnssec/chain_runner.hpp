// SPDX-License-Identifier: GPL-3.0-or-later
// Drives a Validation the way a worker's event loop does: each set it needs is fetched
// from knotd (DO, CD) and handed back, until it finishes. `tamper` may change each
// fetched reply (name, type) before the validator sees it: the broken variants.
#pragma once
#include <ctime>
#include <functional>

#include "dnssec/validator.hpp"
#include "tests/dnssec/signed_zones.hpp"

namespace dnsarena::dnssec::test {

struct RunResult {
  Outcome outcome;
  WorkCounters counters;
  unsigned steps = 0;
};

using Tamper = std::function<void(const Need&, Response&)>;

inline std::uint32_t now_seconds() { return static_cast<std::uint32_t>(std::time(nullptr)); }

inline RunResult run_validation(const SignedZones& zones, const TrustAnchors& anchors, Response response,
                                const Limits& limits = {}, std::uint32_t now = now_seconds(),
                                const Tamper& tamper = {}) {
  Validation v(anchors, limits, now);
  v.start(std::move(response));
  while (const auto& need = v.need()) {
    Response reply = zones.fetch(need->name, need->type);
    if (tamper) tamper(*need, reply);
    v.provide(&reply);
  }
  return {v.outcome(), v.counters(), v.steps()};
}

inline RunResult validate_name(const SignedZones& zones, const TrustAnchors& anchors, const std::string& name,
                               std::uint16_t type, const Limits& limits = {}, std::uint32_t now = now_seconds()) {
  return run_validation(zones, anchors, zones.fetch(name, type), limits, now);
}

}  // namespace dnsarena::dnssec::test

namespace dnsarena::dnssec::test {

// A Validation seeded with what `earlier` established (the worker's key cache).
inline RunResult run_seeded(const SignedZones& zones, const TrustAnchors& anchors, const ZoneTrustMap& earlier,
                            Response response, std::uint32_t now = now_seconds()) {
  Validation v(anchors, Limits{}, now);
  for (const auto& [zone, trust] : earlier) {
    if (trust.outcome.verdict == Verdict::secure) v.trust_secure(zone, trust.keys.rdata());
    else v.trust_insecure(zone, trust.outcome);
  }
  v.start(std::move(response));
  while (const auto& need = v.need()) {
    Response reply = zones.fetch(need->name, need->type);
    v.provide(&reply);
  }
  return {v.outcome(), v.counters(), v.steps()};
}

}  // namespace dnsarena::dnssec::test

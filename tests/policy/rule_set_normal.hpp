// SPDX-License-Identifier: GPL-3.0-or-later
// A RuleSet in a canonical order, for tests that compare two ways of reading one zone:
// the reader's rule order and a rule's record order follow the records' order, which a
// copy does not fix (a hash map's), while what the policy answers does not depend on it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "policy/rule_set.hpp"

namespace dnsarena::policy {

// kind, wildcard, trigger, action, zone, records (type, TTL, rdata) sorted
using NormalRule = std::tuple<int, bool, WireName, int, int, std::vector<std::tuple<std::uint16_t, std::uint32_t, WireName>>>;

inline std::vector<NormalRule> normal_rules(const RuleSet& set) {
  std::vector<NormalRule> out;
  for (const Rule& r : set.rules()) {
    std::vector<std::tuple<std::uint16_t, std::uint32_t, WireName>> records;
    for (const LocalRecord& rec : r.records) records.emplace_back(rec.type, rec.ttl, rec.rdata);
    std::sort(records.begin(), records.end());
    out.emplace_back(static_cast<int>(r.kind), r.wildcard, r.name, static_cast<int>(r.action), r.zone, std::move(records));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace dnsarena::policy

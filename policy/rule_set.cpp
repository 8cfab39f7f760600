// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/rule_set.hpp"

namespace dnsarena::policy {

std::uint8_t RuleSet::begin_zone(std::string name, std::string source) {
  if (zones_.size() >= kMaxZones) throw PolicyError("more than 255 policy zones");
  zones_.push_back({std::move(name), std::move(source)});
  return static_cast<std::uint8_t>(zones_.size() - 1);
}

void RuleSet::reserve(std::size_t rules) {
  rules_.reserve(rules);
  index_.reserve(rules);
}

Rule* RuleSet::rule_for(const WireName& name, bool wildcard, Action action) {
  const std::uint8_t zone = static_cast<std::uint8_t>(zones_.size() - 1);
  WireName key = name;
  key.push_back(wildcard ? 1 : 0);
  const auto [it, added] = index_.try_emplace(std::move(key), static_cast<std::uint32_t>(rules_.size()));
  if (added) {
    rules_.push_back({name, wildcard, action, zone, {}});
    ++report().rules;
    return &rules_.back();
  }
  Rule& r = rules_[it->second];
  if (r.zone != zone) {
    ++report().shadowed;
    return nullptr;
  }
  return &r;
}

void RuleSet::add_action(const WireName& name, bool wildcard, Action action) {
  Rule* r = rule_for(name, wildcard, action);
  if (!r) return;
  if (r->action == Action::local_data && !r->records.empty()) {
    report().shadowed += r->records.size();  // the action replaces the data read before it
    r->records.clear();
  } else if (r->action != action && r->action != Action::local_data) {
    ++report().shadowed;  // a second action at one owner: the first holds
    return;
  }
  r->action = action;
}

void RuleSet::add_record(const WireName& name, bool wildcard, LocalRecord record) {
  Rule* r = rule_for(name, wildcard, Action::local_data);
  if (!r) return;
  if (r->action != Action::local_data) {
    ++report().shadowed;
    return;
  }
  r->records.push_back(std::move(record));
}

}  // namespace dnsarena::policy

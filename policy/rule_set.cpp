// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/rule_set.hpp"

#include <bit>
#include <cstring>

#include "policy/name_hash.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

std::uint8_t RuleSet::begin_zone(std::string name, std::string source) {
  if (zones_.size() >= kMaxZones) throw PolicyError("more than 255 policy zones");
  zones_.push_back({std::move(name), std::move(source)});
  return static_cast<std::uint8_t>(zones_.size() - 1);
}

namespace {

// POLICY-FORMAT: the hash the lookup computes for this trigger (policy_view.cpp).
std::uint64_t hash_of(const WireName& name, bool wildcard, TriggerKind kind) {
  if (kind != TriggerKind::qname) return address_trigger_hash(name.data(), kind == TriggerKind::client_ip);
  std::uint8_t buf[wire::kMaxNameWire + 8] = {};
  std::memcpy(buf, name.data(), std::min(name.size(), wire::kMaxNameWire));
  NameSuffixes s;
  split_suffixes(buf, std::min(name.size(), wire::kMaxNameWire), s);
  return trigger_hash(s.state[0], wildcard);
}

}  // namespace

void RuleSet::reserve(std::size_t rules) {
  rules_.reserve(rules);
  if (index_.size() < 2 * rules) {
    index_.assign(std::bit_ceil(2 * rules), 0);
    for (std::uint32_t i = 0; i < rules_.size(); ++i) {
      std::size_t slot = rules_[i].hash & (index_.size() - 1);
      while (index_[slot]) slot = (slot + 1) & (index_.size() - 1);
      index_[slot] = index_entry(rules_[i].hash, i);
    }
  }
}

void RuleSet::grow_index() { reserve(std::max<std::size_t>(1024, rules_.size() * 2)); }

std::uint64_t RuleSet::prefetch(const WireName& name, bool wildcard, TriggerKind kind) const {
  const std::uint64_t hash = hash_of(name, wildcard, kind);
  if (!index_.empty()) __builtin_prefetch(&index_[hash & (index_.size() - 1)]);
  return hash;
}

Rule* RuleSet::rule_for(const WireName& name, bool wildcard, Action action, TriggerKind kind, std::uint64_t hash) {
  const std::uint8_t zone = static_cast<std::uint8_t>(zones_.size() - 1);
  if (2 * (rules_.size() + 1) > index_.size()) grow_index();
  std::size_t slot = hash & (index_.size() - 1);
  const std::uint64_t tag = index_entry(hash, 0) & ~std::uint64_t{0xFFFFFFFF};
  for (; index_[slot]; slot = (slot + 1) & (index_.size() - 1)) {
    if ((index_[slot] & ~std::uint64_t{0xFFFFFFFF}) != tag) continue;  // not this hash: rules_ left untouched
    const Rule& r = rules_[(index_[slot] & 0xFFFFFFFF) - 1];
    if (r.hash == hash && r.wildcard == wildcard && r.kind == kind && r.name == name) break;
  }
  if (!index_[slot]) {
    index_[slot] = index_entry(hash, rules_.size());
    rules_.push_back({name, wildcard, kind, action, zone, {}, hash});
    ++report().rules;
    return &rules_.back();
  }
  Rule& r = rules_[(index_[slot] & 0xFFFFFFFF) - 1];
  if (r.zone != zone) {
    ++report().shadowed;
    return nullptr;
  }
  return &r;
}

void RuleSet::add_action(const WireName& name, bool wildcard, Action action, TriggerKind kind) {
  add_action(name, wildcard, action, kind, hash_of(name, wildcard, kind));
}

void RuleSet::add_record(const WireName& name, bool wildcard, LocalRecord record, TriggerKind kind) {
  add_record(name, wildcard, std::move(record), kind, hash_of(name, wildcard, kind));
}

void RuleSet::add_action(const WireName& name, bool wildcard, Action action, TriggerKind kind, std::uint64_t hash) {
  Rule* r = rule_for(name, wildcard, action, kind, hash);
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

void RuleSet::add_record(const WireName& name, bool wildcard, LocalRecord record, TriggerKind kind, std::uint64_t hash) {
  Rule* r = rule_for(name, wildcard, Action::local_data, kind, hash);
  if (!r) return;
  if (r->action != Action::local_data) {
    ++report().shadowed;
    return;
  }
  r->records.push_back(std::move(record));
}

}  // namespace dnsarena::policy

// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/local_zone.hpp"

#include <map>
#include <set>
#include <sstream>

#include "policy/zone_scanner.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

namespace {

struct ZoneType {
  const char* name;
  Action action;     // for names below the zone without local data; local_data: no rule
  bool keeps_data;   // local data under the zone answers
  bool redirect;
};

constexpr ZoneType kZoneTypes[] = {
    {"static", Action::nxdomain, true, false},       {"transparent", Action::local_data, true, false},
    {"refuse", Action::refuse, true, false},         {"deny", Action::drop, true, false},
    {"redirect", Action::local_data, true, true},    {"always_nxdomain", Action::nxdomain, false, false},
    {"always_nodata", Action::nodata, false, false}, {"always_refuse", Action::refuse, false, false},
    {"always_deny", Action::drop, false, false},
};

const ZoneType* zone_type(const std::string& name) {
  for (const ZoneType& t : kZoneTypes)
    if (name == t.name) return &t;
  return nullptr;
}

// The local zone holding `name` (the longest apex that is a suffix), or nullptr.
const ZoneType* zone_of(const std::map<WireName, const ZoneType*>& zones, const WireName& name, WireName* apex) {
  for (std::size_t pos = 0;; pos += name[pos] + 1u) {
    const auto it = zones.find(name.substr(pos));
    if (it != zones.end()) {
      if (apex) *apex = it->first;
      return it->second;
    }
    if (pos >= name.size() || name[pos] == 0) return nullptr;
  }
}

}  // namespace

void read_local_config(const std::string& zone, const std::string& source, const std::vector<std::string>& local_zones,
                       const std::vector<std::string>& local_data, RuleSet& rules) {
  rules.begin_zone(zone, source);
  std::map<WireName, const ZoneType*> zones;
  for (std::size_t i = 0; i < local_zones.size(); ++i) {
    const std::string where = "local_zone[" + std::to_string(i) + "] '" + local_zones[i] + "'";
    std::istringstream in(local_zones[i]);
    std::string name, type, extra;
    if (!(in >> name >> type) || (in >> extra)) throw PolicyError(where + ": expected \"NAME TYPE\"");
    const ZoneType* t = zone_type(type);
    if (!t && type != "nodefault")
      throw PolicyError(where + ": unknown type (static, transparent, refuse, deny, redirect, always_nxdomain, "
                                "always_nodata, always_refuse, always_deny, nodefault)");
    WireName apex;
    try {
      const auto w = wire::name_to_wire(name);
      apex.assign(w.begin(), w.end());
    } catch (const std::exception& e) {
      throw PolicyError(where + ": " + e.what());
    }
    if (!t) continue;  // nodefault: drops a default zone, adds none
    wire::lowercase_copy(apex.data(), {apex.data(), apex.size()});
    if (!zones.emplace(apex, t).second) throw PolicyError(where + ": the zone is given twice");
  }
  // Local data first: an exact trigger with data beats the zone's `*.` rule in the lookup.
  std::map<WireName, std::vector<LocalRecord>> redirected;
  std::set<WireName> owners;  // names with local data
  for (std::size_t i = 0; i < local_data.size(); ++i) {
    const std::string text = local_data[i] + "\n";
    ZoneScanner scanner("local_data[" + std::to_string(i) + "]", ".");
    scanner.open_text(text);
    ScannedRecord r;
    if (!scanner.next(r)) throw PolicyError("local_data[" + std::to_string(i) + "]: no record");
    WireName apex;
    const ZoneType* t = zone_of(zones, r.owner, &apex);
    if (t && !t->keeps_data) {
      ++rules.report().shadowed;
      continue;
    }
    if (t && t->redirect && r.owner == apex) redirected[apex].push_back({r.type, r.ttl, r.rdata});
    owners.insert(r.owner);
    rules.add_record(r.owner, false, {r.type, r.ttl, std::move(r.rdata)});
    if (scanner.next(r)) scanner.fail(r.line, "one record per local_data entry");
  }
  for (const auto& [apex, t] : zones) {
    if (t->redirect) {
      for (const LocalRecord& rec : redirected[apex]) rules.add_record(apex, true, rec);
      continue;
    }
    if (t->action == Action::local_data) continue;  // transparent
    rules.add_action(apex, true, t->action);
    if (owners.count(apex)) continue;  // the apex's data answers it
    // The apex itself: NXDOMAIN would deny the zone exists; a static zone's apex without
    // data is answered NODATA, as Unbound does for an empty apex of a local zone.
    rules.add_action(apex, false, t->action == Action::nxdomain && t->keeps_data ? Action::nodata : t->action);
  }
}

}  // namespace dnsarena::policy

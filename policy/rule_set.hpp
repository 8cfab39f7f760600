// SPDX-License-Identifier: GPL-3.0-or-later
// The rules read from RPZ files and local_zone / local_data entries, before compilation
// (policy_compiler.hpp): one rule per (trigger name, exact or `*.`), in policy zone order.
//
// Precedence is settled here for equal triggers and by the lookup for different ones:
// the same trigger in a later zone is ignored (the first zone that has it wins); within
// one zone, records for a trigger that already has an action other than local data are
// ignored (an RPZ action CNAME and data at one owner is a broken zone; the action holds).
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy_image.hpp"

namespace dnsarena::policy {

using WireName = std::basic_string<std::uint8_t>;


// A policy that cannot be read: "FILE:LINE: what" when it comes from a file.
struct PolicyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LocalRecord {
  std::uint16_t type = 0;
  std::uint32_t ttl = 0;
  WireName rdata;
};

struct Rule {
  WireName name;  // lowercase wire form; a `*.` trigger's parent; an address trigger's key
  bool wildcard = false;
  TriggerKind kind = TriggerKind::qname;
  Action action = Action::local_data;
  std::uint8_t zone = 0;
  std::vector<LocalRecord> records;
  std::uint64_t hash = 0;  // the trigger's key in the image (name_hash.hpp: trigger_hash)
};

// What reading one policy zone found, for the log and `dnsarena policy bench`, and the
// zone's apex, which its negative answers carry (policy_answer.hpp).
struct ZoneReport {
  std::string name;               // the config's zone ("local") or the RPZ file's origin
  std::string source;             // file, or "config"
  WireName origin;                // lowercase wire form; empty: the config's local zone
  bool has_soa = false;
  LocalRecord soa;                // the apex SOA (type 6), when has_soa
  std::size_t rules = 0;          // triggers added
  std::size_t records = 0;        // records read (SOA and NS of the apex included)
  std::size_t unsupported = 0;    // triggers or actions skipped (rpz-nsip, rpz-nsdname, rpz-tcp-only, ...)
  std::size_t shadowed = 0;       // triggers an earlier zone already had, or data beside an action
};

class RuleSet {
public:
  // Opens the next policy zone; later calls add to it. Throws PolicyError past kMaxZones.
  std::uint8_t begin_zone(std::string name, std::string source);
  // Adds an action for a trigger (REQUIRES: action != local_data). `kind` other than
  // qname: `name` is an address key (policy_image.hpp), `wildcard` false.
  void add_action(const WireName& name, bool wildcard, Action action, TriggerKind kind = TriggerKind::qname);
  // Adds one local data record to a trigger.
  void add_record(const WireName& name, bool wildcard, LocalRecord record, TriggerKind kind = TriggerKind::qname);
  // The trigger's hash, its index slot prefetched: given to the add_* below a few
  // triggers later, the slot's cache line has arrived (a reader of a million triggers
  // otherwise waits for one cache miss per trigger).
  std::uint64_t prefetch(const WireName& name, bool wildcard, TriggerKind kind) const;
  // REQUIRES: `hash` from prefetch() of the same trigger.
  void add_action(const WireName& name, bool wildcard, Action action, TriggerKind kind, std::uint64_t hash);
  void add_record(const WireName& name, bool wildcard, LocalRecord record, TriggerKind kind, std::uint64_t hash);
  ZoneReport& report() { return zones_.back(); }

  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<ZoneReport>& zones() const { return zones_; }
  void reserve(std::size_t rules);

private:
  // The rule of `name` in the current zone, or nullptr when an earlier zone has it.
  Rule* rule_for(const WireName& name, bool wildcard, Action action, TriggerKind kind, std::uint64_t hash);
  std::vector<Rule> rules_;
  std::vector<ZoneReport> zones_;
  void grow_index();
  // Open addressing over rules_ by Rule::hash, load <= 1/2: per slot the hash's high 32
  // bits above the rules_ index + 1; 0 empty. A probe compares the hash bits before it
  // reads a rule: at 1,000,000 rules most probes would otherwise miss the cache twice
  // (this check took 36% of reading a transferred copy, rpz_copy_file.hpp).
  static std::uint64_t index_entry(std::uint64_t hash, std::size_t rule) {
    return (hash & ~std::uint64_t{0xFFFFFFFF}) | (static_cast<std::uint64_t>(rule) + 1);
  }
  std::vector<std::uint64_t> index_;
};

}  // namespace dnsarena::policy

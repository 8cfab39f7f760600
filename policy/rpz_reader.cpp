// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/rpz_reader.hpp"

#include <algorithm>
#include <array>
#include <spdlog/spdlog.h>

#include "policy/zone_scanner.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

namespace {

constexpr std::uint16_t kTypeCname = 5;
constexpr std::uint16_t kTypeSoa = 6;

bool is_label(const std::uint8_t* p, std::string_view text) {
  return p[0] == text.size() && std::equal(text.begin(), text.end(), p + 1);
}

// The labels RPZ uses for triggers other than QNAME (draft-vixie-dnsop-dns-rpz section 4).
constexpr std::array<std::string_view, 4> kOtherTriggers = {"rpz-ip", "rpz-nsip", "rpz-nsdname", "rpz-client-ip"};

// True when the last label of `trigger` (the one next to the origin) names another trigger kind.
bool other_trigger_kind(const WireName& trigger) {
  std::size_t pos = 0, last = WireName::npos;
  while (pos < trigger.size() && trigger[pos] != 0) {
    last = pos;
    pos += trigger[pos] + 1u;
  }
  if (last == WireName::npos) return false;
  return std::any_of(kOtherTriggers.begin(), kOtherTriggers.end(),
                     [&](std::string_view l) { return is_label(trigger.data() + last, l); });
}

WireName name_of(std::string_view text) {
  const auto w = wire::name_to_wire(text);
  return WireName(w.begin(), w.end());
}

class RpzZone {
public:
  RpzZone(ZoneScanner& scanner, RuleSet& rules, WireName origin) : scanner_(scanner), rules_(rules), origin_(std::move(origin)) {}

  void read() {
    ScannedRecord r;
    while (scanner_.next(r)) add(r);
    if (rules_.report().unsupported)
      spdlog::warn("policy zone {} ({}): {} unsupported triggers or actions skipped, the first at {}:{} ({})",
                   rules_.report().name, scanner_.source(), rules_.report().unsupported, scanner_.source(),
                   first_unsupported_line_, first_unsupported_);
  }

private:
  void add(const ScannedRecord& r) {
    ++rules_.report().records;
    if (origin_.empty()) {  // no configured name: the first record's owner (the SOA's) is the origin
      if (r.type != kTypeSoa) scanner_.fail(r.line, "the first record must be the zone's SOA (or give the zone a name)");
      origin_ = r.owner;
      rules_.report().name = wire::wire_to_text(origin_);
    }
    if (r.owner.size() < origin_.size() ||
        !std::equal(origin_.begin(), origin_.end(), r.owner.end() - static_cast<std::ptrdiff_t>(origin_.size())))
      scanner_.fail(r.line, "owner " + wire::wire_to_text(r.owner) + " is outside the zone " + wire::wire_to_text(origin_));
    if (r.owner.size() == origin_.size()) return;  // the apex: SOA, NS
    // The trigger: the owner without the origin, as an absolute name (root label added).
    WireName trigger(r.owner.begin(), r.owner.end() - static_cast<std::ptrdiff_t>(origin_.size()));
    if (!label_boundary(r.owner, trigger.size()))
      scanner_.fail(r.line, "owner " + wire::wire_to_text(r.owner) + " is outside the zone " + wire::wire_to_text(origin_));
    trigger.push_back(0);
    if (other_trigger_kind(trigger)) return unsupported(r, "trigger " + wire::wire_to_text(trigger));
    const bool wildcard = trigger.size() >= 2 && trigger[0] == 1 && trigger[1] == '*';
    if (wildcard) trigger.erase(0, 2);
    if (r.type == kTypeCname) {
      if (r.rdata == root_) return rules_.add_action(trigger, wildcard, Action::nxdomain);
      if (r.rdata == wildcard_root_) return rules_.add_action(trigger, wildcard, Action::nodata);
      if (r.rdata == passthru_) return rules_.add_action(trigger, wildcard, Action::passthru);
      if (r.rdata == drop_) return rules_.add_action(trigger, wildcard, Action::drop);
      if (r.rdata == tcp_only_) return unsupported(r, "action rpz-tcp-only.");
      if (r.rdata.size() >= 2 && r.rdata[0] == 1 && r.rdata[1] == '*')
        return unsupported(r, "action CNAME " + wire::wire_to_text(r.rdata));
    }
    rules_.add_record(trigger, wildcard, {r.type, r.ttl, r.rdata});
  }

  // True when byte `n` of `owner` starts a label (the origin matched whole labels).
  static bool label_boundary(const WireName& owner, std::size_t n) {
    std::size_t pos = 0;
    while (pos < n) pos += owner[pos] + 1u;
    return pos == n;
  }

  void unsupported(const ScannedRecord& r, std::string what) {
    if (rules_.report().unsupported++ == 0) {
      first_unsupported_ = std::move(what);
      first_unsupported_line_ = r.line;
    }
  }

  ZoneScanner& scanner_;
  RuleSet& rules_;
  WireName origin_;
  const WireName root_ = name_of(".");
  const WireName wildcard_root_ = name_of("*.");
  const WireName passthru_ = name_of("rpz-passthru.");
  const WireName drop_ = name_of("rpz-drop.");
  const WireName tcp_only_ = name_of("rpz-tcp-only.");
  std::string first_unsupported_;
  unsigned first_unsupported_line_ = 0;
};

WireName origin_of(const std::string& name, const std::string& source) {
  if (name.empty()) return {};
  try {
    WireName o = name_of(name);
    wire::lowercase_copy(o.data(), {o.data(), o.size()});
    return o;
  } catch (const std::exception& e) {
    throw PolicyError(source + ": zone name '" + name + "': " + e.what());
  }
}

}  // namespace

void read_rpz_file(const RpzZoneConfig& zone, RuleSet& rules) {
  rules.begin_zone(zone.name.empty() ? zone.file : zone.name, zone.file);
  ZoneScanner scanner(zone.file, zone.name.empty() ? "." : zone.name);
  scanner.open_file(zone.file);
  RpzZone(scanner, rules, origin_of(zone.name, zone.file)).read();
}

void read_rpz_text(std::string_view text, const std::string& source, const std::string& origin, RuleSet& rules) {
  rules.begin_zone(origin.empty() ? source : origin, source);
  ZoneScanner scanner(source, origin.empty() ? "." : origin);
  scanner.open_text(text);
  RpzZone(scanner, rules, origin_of(origin, source)).read();
}

}  // namespace dnsarena::policy

// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/rpz_reader.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>
#include <spdlog/spdlog.h>

#include "policy/rpz_copy_delta.hpp"
#include "policy/rpz_copy_file.hpp"
#include "policy/zone_scanner.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::policy {

namespace {

constexpr std::uint16_t kTypeCname = 5;
constexpr std::uint16_t kTypeSoa = 6;

// The labels RPZ uses for triggers other than QNAME (draft-vixie-dnsop-dns-rpz section 4)
// that are not read: name server triggers need the resolution's delegations, which a
// forwarder does not see.
constexpr std::array<std::string_view, 2> kOtherTriggers = {"rpz-nsip", "rpz-nsdname"};

// The labels of `trigger` (lowercase wire form, root last), without the root.
std::vector<std::string_view> labels_of(const WireName& trigger) {
  std::vector<std::string_view> out;
  for (std::size_t pos = 0; pos < trigger.size() && trigger[pos] != 0; pos += trigger[pos] + 1u)
    out.emplace_back(reinterpret_cast<const char*>(trigger.data() + pos + 1), trigger[pos]);
  return out;
}

// The last label of `trigger` (lowercase wire form, root last) before the root; empty
// for the root. Asked of every trigger: no vector of labels (labels_of) is made for it.
std::string_view last_label(const WireName& trigger) {
  std::string_view last;
  for (std::size_t pos = 0; pos < trigger.size() && trigger[pos] != 0; pos += trigger[pos] + 1u)
    last = {reinterpret_cast<const char*>(trigger.data() + pos + 1), trigger[pos]};
  return last;
}

bool decimal(std::string_view s, unsigned max, unsigned& v) {
  if (s.empty() || s.size() > 3 || (s.size() > 1 && s[0] == '0')) return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v <= max;
}

// The address key (policy_image.hpp) of an rpz-ip / rpz-client-ip trigger's labels before
// that label: "prefix.w.z.y.x" (IPv4 x.y.z.w) or "prefix.g8.g7...g1" (IPv6 groups, lowest
// first, "zz" for one run of zero groups). Empty when malformed. Bits past the prefix
// are cleared, as BIND reads them.
WireName address_key(const std::vector<std::string_view>& l) {
  if (l.size() < 3) return {};
  unsigned prefix = 0;
  std::uint8_t addr[16] = {};
  const std::size_t parts = l.size() - 2;  // without the prefix and the kind label
  unsigned v4 = 0;
  if (parts == 4 && std::all_of(l.begin() + 1, l.end() - 1, [&](std::string_view p) { return decimal(p, 255, v4); })) {
    if (!decimal(l[0], 32, prefix)) return {};
    addr[10] = addr[11] = 0xFF;
    for (std::size_t i = 0; i < 4; ++i) {
      decimal(l[4 - i], 255, v4);
      addr[12 + i] = static_cast<std::uint8_t>(v4);
    }
    prefix += 96;
  } else {
    if (!decimal(l[0], 128, prefix) || parts > 8) return {};
    std::uint16_t groups[8] = {};
    std::size_t zz = 8, n = 0;  // groups read, lowest first; zz: where the zero run is
    for (std::size_t i = 1; i <= parts; ++i) {
      const std::string_view g = l[i];
      if (g == "zz") {
        if (zz != 8) return {};
        zz = n;
        continue;
      }
      if (g.empty() || g.size() > 4) return {};
      unsigned v = 0;
      for (char c : g) {
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return {};
        v = v * 16 + static_cast<unsigned>(d);
      }
      groups[n++] = static_cast<std::uint16_t>(v);
    }
    if ((zz == 8 && n != 8) || (zz != 8 && n >= 8)) return {};
    std::uint16_t full[8] = {};  // lowest group first
    for (std::size_t i = 0, j = 0; i < 8; ++i) {
      if (i >= zz && i < zz + (8 - n)) continue;
      full[i] = groups[j++];
    }
    for (std::size_t i = 0; i < 8; ++i) {
      addr[2 * i] = static_cast<std::uint8_t>(full[7 - i] >> 8);
      addr[2 * i + 1] = static_cast<std::uint8_t>(full[7 - i]);
    }
  }
  WireName key(kAddressKeyBytes, 0);
  key[0] = static_cast<std::uint8_t>(prefix);
  std::memcpy(key.data() + 1, addr, prefix / 8);
  if (prefix % 8) key[1 + prefix / 8] = static_cast<std::uint8_t>(addr[prefix / 8] & (0xFF00 >> (prefix % 8)));
  return key;
}

WireName name_of(std::string_view text) {
  const auto w = wire::name_to_wire(text);
  return WireName(w.begin(), w.end());
}

// Reads the records of a Source (ZoneScanner, or RpzCopyReader: next(), fail(), source()).
template <typename Source>
class RpzZone {
public:
  RpzZone(Source& scanner, RuleSet& rules, WireName origin) : scanner_(scanner), rules_(rules), origin_(std::move(origin)) {}

  void read() {
    ScannedRecord r;
    while (scanner_.next(r)) add(r);
    while (pending_count_) apply_oldest();
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
    if (rules_.report().origin.empty()) rules_.report().origin = origin_;
    if (r.owner.size() < origin_.size() ||
        !std::equal(origin_.begin(), origin_.end(), r.owner.end() - static_cast<std::ptrdiff_t>(origin_.size())))
      scanner_.fail(r.line, "owner " + wire::wire_to_text(r.owner) + " is outside the zone " + wire::wire_to_text(origin_));
    if (r.owner.size() == origin_.size()) {  // the apex: SOA (the zone's negative answers carry it), NS
      if (r.type == kTypeSoa && !rules_.report().has_soa) {
        rules_.report().has_soa = true;
        rules_.report().soa = {r.type, r.ttl, r.rdata};
      }
      return;
    }
    // The trigger: the owner without the origin, as an absolute name (root label added).
    WireName trigger(r.owner.begin(), r.owner.end() - static_cast<std::ptrdiff_t>(origin_.size()));
    if (!label_boundary(r.owner, trigger.size()))
      scanner_.fail(r.line, "owner " + wire::wire_to_text(r.owner) + " is outside the zone " + wire::wire_to_text(origin_));
    trigger.push_back(0);
    const std::string_view kind = last_label(trigger);
    if (std::find(kOtherTriggers.begin(), kOtherTriggers.end(), kind) != kOtherTriggers.end())
      return unsupported(r, "trigger " + wire::wire_to_text(trigger));
    if (kind == "rpz-ip" || kind == "rpz-client-ip") {
      const WireName key = address_key(labels_of(trigger));
      if (key.empty()) return unsupported(r, "malformed address trigger " + wire::wire_to_text(trigger));
      return add(r, key, false, kind == "rpz-ip" ? TriggerKind::response_ip : TriggerKind::client_ip);
    }
    const bool wildcard = trigger.size() >= 2 && trigger[0] == 1 && trigger[1] == '*';
    if (wildcard) trigger.erase(0, 2);
    add(r, trigger, wildcard, TriggerKind::qname);
  }

  // The record `r` at `trigger`: an action, or local data.
  void add(const ScannedRecord& r, const WireName& trigger, bool wildcard, TriggerKind kind) {
    if (r.type == kTypeCname) {
      if (r.rdata == root_) return queue(trigger, wildcard, kind, Action::nxdomain, {});
      if (r.rdata == wildcard_root_) return queue(trigger, wildcard, kind, Action::nodata, {});
      if (r.rdata == passthru_) return queue(trigger, wildcard, kind, Action::passthru, {});
      if (r.rdata == drop_) return queue(trigger, wildcard, kind, Action::drop, {});
      if (r.rdata == tcp_only_) return unsupported(r, "action rpz-tcp-only.");
      if (r.rdata.size() >= 2 && r.rdata[0] == 1 && r.rdata[1] == '*')
        return unsupported(r, "action CNAME " + wire::wire_to_text(r.rdata));
    }
    queue(trigger, wildcard, kind, Action::local_data, {r.type, r.ttl, r.rdata});
  }

  // An action (local_data: the record) for `trigger`, added to the rule set kPipeline
  // triggers later, in order, its index slot prefetched meanwhile (RuleSet::prefetch).
  void queue(const WireName& trigger, bool wildcard, TriggerKind kind, Action action, LocalRecord record) {
    if (pending_count_ == kPipeline) apply_oldest();
    Pending& p = pending_[(pending_head_ + pending_count_) % kPipeline];
    p.trigger = trigger;
    p.wildcard = wildcard;
    p.kind = kind;
    p.action = action;
    p.record = std::move(record);
    p.hash = rules_.prefetch(trigger, wildcard, kind);
    ++pending_count_;
  }

  void apply_oldest() {
    Pending& p = pending_[pending_head_];
    if (p.action == Action::local_data) rules_.add_record(p.trigger, p.wildcard, std::move(p.record), p.kind, p.hash);
    else rules_.add_action(p.trigger, p.wildcard, p.action, p.kind, p.hash);
    pending_head_ = (pending_head_ + 1) % kPipeline;
    --pending_count_;
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

  Source& scanner_;
  RuleSet& rules_;
  WireName origin_;
  const WireName root_ = name_of(".");
  const WireName wildcard_root_ = name_of("*.");
  const WireName passthru_ = name_of("rpz-passthru.");
  const WireName drop_ = name_of("rpz-drop.");
  const WireName tcp_only_ = name_of("rpz-tcp-only.");
  std::string first_unsupported_;
  unsigned first_unsupported_line_ = 0;
  struct Pending {
    WireName trigger;
    bool wildcard = false;
    TriggerKind kind = TriggerKind::qname;
    Action action = Action::local_data;
    LocalRecord record;
    std::uint64_t hash = 0;
  };
  // 8 triggers in flight: the longest a cache miss waits is a few triggers' reading.
  static constexpr std::size_t kPipeline = 8;
  std::array<Pending, kPipeline> pending_;
  std::size_t pending_head_ = 0, pending_count_ = 0;
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

// The delta beside a transferred zone's copy, or nullptr when there is none or it cannot
// be read: the copy alone is then the zone (logged), as the transfer process holds it and
// transfers from.
std::unique_ptr<RpzCopyDelta> read_delta(const std::string& copy_file) {
  const std::string path = rpz_delta_path(copy_file);
  if (!std::filesystem::exists(path)) return nullptr;
  try {
    return std::make_unique<RpzCopyDelta>(path);
  } catch (const PolicyError& e) {
    spdlog::warn("policy: {}; the copy is read without it", e.what());
    return nullptr;
  }
}

}  // namespace

void read_rpz_file(const RpzZoneConfig& zone, RuleSet& rules) {
  rules.begin_zone(zone.name.empty() ? zone.file : zone.name, zone.file);
  if (zone.transferred && !std::filesystem::exists(zone.file)) {  // not transferred yet: no rules
    rules.report().origin = origin_of(zone.name, zone.file);
    return;
  }
  if (RpzCopyReader::is_copy(zone.file)) {  // a transfer's copy (rpz_copy_file.hpp): no text to parse
    // The delta opened first: a copy rewritten meanwhile holds it already (rpz_copy_delta.hpp).
    std::unique_ptr<RpzCopyDelta> delta = zone.transferred ? read_delta(zone.file) : nullptr;
    RpzCopyReader copy(zone.file);
    const WireName origin = origin_of(zone.name, zone.file);
    if (!origin.empty() && origin != copy.origin())
      throw PolicyError(zone.file + ": a copy of the zone " + wire::wire_to_text(copy.origin()) + ", not of " +
                        wire::wire_to_text(origin));
    rules.reserve(rules.rules().size() + copy.records());
    if (delta && delta->base_checksum() == copy.checksum()) {
      RpzPatchedCopy patched(copy, *delta);
      RpzZone(patched, rules, origin).read();
    } else {
      RpzZone(copy, rules, origin).read();
    }
    return;
  }
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

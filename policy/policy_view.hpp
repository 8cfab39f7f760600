// SPDX-License-Identifier: GPL-3.0-or-later
// Read access to a compiled image (policy_image.hpp) wherever it lies: a vector, a sealed
// mapping (sealed_image.hpp). The view holds no state of its own beyond the base and the
// header's numbers, so a worker's lookup touches only the image: the slot of each
// candidate trigger, and a record when a tag matches.
//
// Lookup of a query name: lowercase it, split it and hash every suffix in one pass
// (name_hash.hpp), then probe the exact trigger and each `*.` parent, longest first,
// skipping label counts the header's masks say no trigger has. Each candidate's filter
// word is read first (all prefetched together); only a candidate the filter passes has
// its slot read, so a name no rule matches rarely touches the slot table. The winner: the
// lowest zone; in one zone the exact trigger, else the longest `*.` parent.
//
// Before that, when every trigger lies under a few top-level labels (the default local
// zones alone: arpa, localhost, test, onion, invalid), a name under none of them has no
// rule and is answered after one walk of its labels, without hashing: the view reads
// the top-level labels of every record once, when it is made (kMaxTopLabels; more, or a
// trigger at the root, and every name takes the full lookup).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "policy/policy_image.hpp"

namespace dnsarena::policy {

struct LocalRr {
  std::uint16_t type;
  std::uint32_t ttl;
  std::span<const std::uint8_t> rdata;
};

// A policy zone's apex as its negative answers carry it (policy_image.hpp: ZoneInfo).
struct ZoneApex {
  std::span<const std::uint8_t> origin;  // lowercase wire form; empty: the config's local zone
  bool has_soa = false;
  std::uint32_t soa_ttl = 0;
  std::span<const std::uint8_t> soa;  // SOA rdata, names uncompressed
};

struct Match {
  const std::uint8_t* record = nullptr;  // the RuleRecord; nullptr: no rule
  Action action = Action::passthru;
  std::uint8_t zone = 0;
  bool wildcard = false;
  explicit operator bool() const { return record != nullptr; }
};

class PolicyView {
public:
  PolicyView() = default;
  // Checks the header against `image` (magic, version, sizes). Throws PolicyError.
  explicit PolicyView(std::span<const std::uint8_t> image);

  const ImageHeader& header() const { return *header_; }
  std::size_t rules() const { return header_ ? header_->rule_count : 0; }
  // REQUIRES: `qname` a valid wire name (any case), at most 255 bytes.
  Match find(std::span<const std::uint8_t> qname) const;
  // False when no name trigger can match `qname`: its top-level label is none of the
  // triggers' (find() then finds nothing). What a query the policy does not touch costs:
  // a walk to its last label and a bit test, most of the time.
  bool may_match(std::span<const std::uint8_t> qname) const;
  // True when some trigger of `kind` (response_ip, client_ip) is compiled: without one,
  // find_address() is never worth calling.
  bool has_address_triggers(TriggerKind kind) const {
    if (!header_) return false;
    const std::uint64_t* l = kind == TriggerKind::client_ip ? header_->client_ip_lens : header_->response_ip_lens;
    return (l[0] | l[1] | l[2]) != 0;
  }
  // The rule for a 16-byte address (IPv4 as ::ffff:a.b.c.d) among the address triggers of
  // `kind`: the lowest zone, in it the longest prefix. One probe per prefix length some
  // trigger has (the header's masks).
  Match find_address(TriggerKind kind, const std::uint8_t* address16) const;

  // The apex of zone `zone` (a Match's zone). REQUIRES: zone < header().zone_count.
  ZoneApex zone(std::uint8_t zone) const;
  // The trigger name of a match (lowercase wire form; a `*.` trigger's parent).
  static std::span<const std::uint8_t> trigger(const Match& m) { return {m.record + sizeof(RuleRecordHead), m.record[0]}; }

  // The local data records of a match, in the order read; `f(LocalRr)` for each.
  template <class F>
  static void for_each_record(const Match& m, F&& f);

private:
  const std::uint8_t* find_trigger(std::uint64_t hash, const std::uint8_t* name, std::size_t len, std::uint8_t kind_bits) const;
  // Reads the top-level labels of every name trigger (not the address triggers) into top_ (or sets top_any_).
  void collect_top_labels();

  static constexpr unsigned kMaxTopLabels = 8;
  struct TopLabel {
    std::uint8_t len = 0;
    std::uint8_t text[63] = {};  // lowercase
  };
  const std::uint8_t* base_ = nullptr;
  const ImageHeader* header_ = nullptr;
  const std::uint64_t* slots_ = nullptr;
  const std::uint64_t* filter_ = nullptr;
  std::uint64_t mask_ = 0;
  std::uint32_t filter_words_ = 0;
  // The bit top_label_bit(len, first letter) of every top_ entry: most top-level labels
  // of queries miss it and are told apart without comparing text.
  static unsigned top_label_bit(std::uint8_t len, std::uint8_t first) { return (len * 7u + first) & 63u; }
  std::uint64_t top_bits_ = 0;
  TopLabel top_[kMaxTopLabels];
  unsigned top_count_ = 0;
  bool top_any_ = true;  // some trigger is the root, or too many top-level labels
};

template <class F>
void PolicyView::for_each_record(const Match& m, F&& f) {
  RuleRecordHead head;
  std::memcpy(&head, m.record, sizeof head);
  const std::uint8_t* d = m.record + sizeof head + head.name_len;
  for (unsigned i = 0; i < head.rr_count; ++i) {
    LocalRr rr;
    std::uint16_t rdlen;
    std::memcpy(&rr.type, d, 2);
    std::memcpy(&rdlen, d + 2, 2);
    std::memcpy(&rr.ttl, d + 4, 4);
    rr.rdata = {d + kRrHeadBytes, rdlen};
    f(rr);
    d += kRrHeadBytes + rdlen;
  }
}

}  // namespace dnsarena::policy

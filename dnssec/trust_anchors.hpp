// SPDX-License-Identifier: GPL-3.0-or-later
// Trust anchors and negative trust anchors.
//
// Positive anchors are DS or DNSKEY records in zone-file syntax, read by libzscanner
// (Knot's zone parser): the formats of Unbound's root.key (DNSKEY lines, `;;state=`
// comments of its RFC 5011 state: keys in their add hold-down or revoked are no anchors),
// of Debian's dns-root-data root.ds and of Knot
// Resolver's root.keys (DS lines). A DNSKEY with the REVOKE bit (RFC 5011) is not an
// anchor. Records of other types, other classes, or syntax errors are errors that name the
// file and line. Several anchors may exist for several zones (a lab's "test." beside the
// root); a name is validated from its closest enclosing anchor.
//
// Negative trust anchors (RFC 7646) switch validation off at and below a domain: a name
// under one is insecure (no EDE) unless a positive anchor lies deeper than the NTA.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dnssec/rrset.hpp"

namespace dnsarena::dnssec {

struct TrustAnchor {
  Bytes zone;                  // lowercase wire
  std::vector<Bytes> ds;       // DS RDATA
  std::vector<Bytes> dnskeys;  // DNSKEY RDATA
};

class TrustAnchorError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// One DS or DNSKEY record of an anchor file, as written (a revoked DNSKEY included).
struct AnchorRecord {
  Bytes owner;  // lowercase wire
  std::uint16_t type = 0;
  Bytes rdata;
};
// Every record of `text` (zone-file syntax; `what` names it in errors). Throws
// TrustAnchorError ("WHAT:LINE: what") for syntax errors and records other than IN DS
// and IN DNSKEY.
std::vector<AnchorRecord> scan_anchor_records(const std::string& text, const std::string& what);

class TrustAnchors {
public:
  // Adds every DS / DNSKEY record of the file. Throws TrustAnchorError ("FILE:LINE: what").
  void add_file(const std::string& path);
  // The same for text (`what` names it in errors).
  void add_text(const std::string& text, const std::string& what = "trust anchor");
  void add_negative(const Bytes& zone);
  bool remove_negative(const Bytes& zone);

  const std::vector<TrustAnchor>& anchors() const { return anchors_; }
  const std::vector<Bytes>& negative() const { return negative_; }
  bool empty() const { return anchors_.empty(); }

  // What governs `name`: the closest anchor, or the NTA when one is closer.
  struct Governing {
    const TrustAnchor* anchor = nullptr;  // null: no anchor above the name
    std::optional<Bytes> negative;        // set: an NTA at this zone applies
  };
  Governing governing(std::span<const std::uint8_t> name) const;

private:
  void add_record(const Bytes& owner, std::uint16_t type, std::span<const std::uint8_t> rdata);

  std::vector<TrustAnchor> anchors_;
  std::vector<Bytes> negative_;
};

}  // namespace dnsarena::dnssec

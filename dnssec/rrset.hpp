// SPDX-License-Identifier: GPL-3.0-or-later
// RRsets as the validator reads them: owner and RDATA in canonical form (RFC 4034 section
// 6.2: owner and the names inside the RDATA of the listed types lowercased, names
// uncompressed), the RRSIGs that cover each set attached to it, and the sections of a
// response grouped into such sets.
//
// Canonical form is made once, when a message is read (libknot's parser and
// knot_rrset_rr_to_canonical, which follows RFC 4034 6.2 as updated by RFC 6840 5.1: no
// lowercasing inside NSEC). The worker keeps the wire it answers clients with; these
// copies serve the validation only. Cost: one parse of the message and one copy per record.
//
// Name helpers work on uncompressed, lowercase wire names (what every Rrset holds).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <span>
#include <string>
#include <vector>

#include "common/bytes.hpp"

namespace dnsarena::dnssec {

using common::Bytes;

inline constexpr std::uint16_t kTypeNs = 2, kTypeCname = 5, kTypeSoa = 6, kTypeDname = 39, kTypeDs = 43,
                               kTypeRrsig = 46, kTypeNsec = 47, kTypeDnskey = 48, kTypeNsec3 = 50,
                               kTypeNsec3param = 51;

struct Rrset {
  Bytes owner;  // wire, lowercase
  std::uint16_t type = 0;
  std::uint16_t klass = 1;
  std::uint32_t ttl = 0;
  std::vector<Bytes> rdata;   // canonical RDATA, one per record, duplicates removed
  std::vector<Bytes> rrsigs;  // RDATA of the RRSIGs at owner covering `type` (signer lowercased)
};

// The RRSIG RDATA fields (RFC 4034 section 3.1), read from canonical RDATA.
struct RrsigFields {
  std::uint16_t type_covered = 0;
  std::uint8_t algorithm = 0;
  std::uint8_t labels = 0;
  std::uint32_t original_ttl = 0;
  std::uint32_t expiration = 0;
  std::uint32_t inception = 0;
  std::uint16_t key_tag = 0;
  Bytes signer;                  // wire, lowercase
  std::size_t fixed_length = 0;  // bytes before the signature: the fields above with signer
  std::span<const std::uint8_t> signature;
};
std::optional<RrsigFields> parse_rrsig(std::span<const std::uint8_t> rdata);

// A response read for validation. Sections: records grouped into sets by (owner, type,
// class), RRSIGs attached to the set they cover (an RRSIG covering no set in its section
// is kept as a set of type RRSIG, so "signature without data" stays visible).
struct Response {
  std::uint16_t rcode = 0;
  bool aa = false, ad = false, cd = false;
  Bytes qname;  // lowercase
  std::uint16_t qtype = 0;
  bool tc = false;
  std::vector<Rrset> answer, authority;
  std::vector<Rrset> additional;  // OPT and TSIG aside (the recursive resolver's glue)
};
// False with `error` when the message does not parse (libknot) or has no question.
bool parse_response(std::span<const std::uint8_t> wire, Response& out, std::string& error);

// The canonical form of one record's RDATA (RFC 4034 6.2 as updated by RFC 6840 5.1),
// through libknot. REQUIRES: well-formed, uncompressed RDATA of `type` (as libknot's
// parser leaves it): libknot reads the names inside without bounds checks.
Bytes canonical_rdata(std::uint16_t type, std::span<const std::uint8_t> rdata);

// Groups records into sets in any order, for a caller that holds a message in another
// form than wire (the worker's parsed upstream answer): add() every record of a section,
// then finish(). Owners are lowercased, RDATA made canonical, duplicates dropped, RRSIGs
// attached to the set they cover (or kept as a set of type RRSIG), as parse_response does.
// Cost: O(n log n) in the records of the section (a hostile message of thousands of
// records stays cheap).
class SectionBuilder {
public:
  void add(std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t klass, std::uint32_t ttl,
           std::span<const std::uint8_t> rdata);
  std::vector<Rrset> finish();

private:
  struct Slot {
    std::size_t index;
    std::set<Bytes> seen;  // RDATA already in the set
  };
  std::vector<Rrset> sets_;
  std::map<std::tuple<Bytes, std::uint16_t, std::uint16_t>, Slot> slots_;
  std::vector<std::pair<Bytes, Bytes>> sigs_;  // (owner, RDATA)
};

// Finds the set (owner, type) in `section`, or nullptr.
const Rrset* find_rrset(const std::vector<Rrset>& section, std::span<const std::uint8_t> owner, std::uint16_t type);

// --- names (uncompressed lowercase wire form) ---
Bytes lowercase_name(std::span<const std::uint8_t> name);
// Labels not counting the root; "*.a.b." counts 3 (RRSIG labels field counts 2 for it).
unsigned label_count(std::span<const std::uint8_t> name);
// The name without its first `n` labels. REQUIRES: n <= label_count(name).
Bytes strip_labels(std::span<const std::uint8_t> name, unsigned n);
// True when `name` is `zone` or below it.
bool is_subdomain(std::span<const std::uint8_t> name, std::span<const std::uint8_t> zone);
// RFC 4034 section 6.1 canonical order: <0, 0, >0.
int canonical_compare(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);
bool is_wildcard(std::span<const std::uint8_t> name);
// "*." + name.
Bytes wildcard_of(std::span<const std::uint8_t> name);
// Text form for messages and tests ("www.example.").
std::string name_text(std::span<const std::uint8_t> name);
Bytes name_from_text(const std::string& text);  // throws std::invalid_argument

}  // namespace dnsarena::dnssec

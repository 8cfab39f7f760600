// SPDX-License-Identifier: GPL-3.0-or-later
// A local copy of the root zone (RFC 8806), answering in place of the root servers for
// the recursive resolver (recursion.local_root, recursion_config.hpp).
//
// What it holds: every record of a root zone file in master format (libzscanner, the
// parser knotd uses), grouped into RRsets by owner and type, RRSIGs attached to the set
// they cover; and every name that exists in the zone (owners and the empty non-terminals
// above them). Loaded once by the supervisor with the config (start and reload), so a
// reload whose file does not load keeps the running config and its copy; every worker
// holds the copy through fork (copy-on-write pages, never written after the load).
//
// What it answers (answer()): the reply a root server gives to a query the state
// machine (recursion/iterative_resolution.hpp) sends to the root cut, priming included:
//   below a delegation  a referral: the TLD's NS set and DS set (with their RRSIGs) in
//                       authority, every A and AAAA the zone holds for the NS names
//                       (the glue) in additional; a DS question for the TLD itself is
//                       answered authoritatively (the parent side holds the DS set)
//   at the apex         the sets asked for, authoritative; for NS the root servers'
//                       addresses in additional (what priming reads)
//   a name that exists  and has no set of the type: NODATA with the SOA
//   anything else       NXDOMAIN with the SOA
// TTLs are the file's; the SOA of a negative answer has min(SOA TTL, SOA minimum).
// A signed copy (the root zone is signed with NSEC) gives what a validator needs too:
// each set's RRSIGs, and the NSEC records that prove a denial, as the root servers send
// them: NXDOMAIN the NSEC covering the name and the one covering the wildcard at its
// closest encloser; NODATA the NSEC at the name (an empty non-terminal: the one covering
// it); a delegation without DS (referral, or a DS question) the NSEC at the cut. NSEC3
// zones are not served with proofs (the root uses NSEC).
//
// Expiry: RFC 8806 section 3: a copy not refreshed within the SOA's expire interval is
// not used, and the resolver goes back to the root servers. The copy's age runs from the
// file's modification time (when whatever fetched it wrote it); answer() returns nothing
// once that plus the SOA expire has passed, and the worker logs it once.
//
// Checked at load (load() throws std::runtime_error "PATH: what"): the file parses, it
// has exactly one SOA at "." and an NS set at ".", and at most kMaxRecords records; its
// ZONEMD (RFC 8976, RFC 8806 section 4) matches the zone's digest, as `check` asks
// (local_root_zonemd.hpp: verify, require, off; Unbound's zonemd-check and
// zonemd-reject-absence), and with a trust anchor for the root its signature validates.
// zonemd() says what was found; the load logs it.
//
// Costs: one std::map lookup per ancestor of the name asked (at most 127) and one per NS
// name for the glue; memory about twice the zone's wire size (the root zone: a few MB).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dnssec/rrset.hpp"
#include "recursion/iterative_resolution.hpp"
#include "workers/local_root_zonemd.hpp"

namespace dnsarena::workers {

class LocalRoot {
public:
  static constexpr std::size_t kMaxRecords = 1'000'000;  // the root zone has about 22,000

  // Reads and checks a root zone file (see the header comment); `anchors` (may be null):
  // the ZONEMD's signature is validated from them too. Throws std::runtime_error.
  static std::shared_ptr<const LocalRoot> load(const std::string& path, ZonemdCheck check = ZonemdCheck::verify,
                                               const dnssec::TrustAnchors* anchors = nullptr);

  // The reply of a root server to `q` (q.zone is the root: priming or a query to the root
  // cut), or nullopt: q is for another zone, or the copy expired at `now_s` (Unix time).
  std::optional<dnssec::Response> answer(const recursion::Query& q, std::int64_t now_s) const;

  // Unix time from which the copy is no longer used (file time + SOA expire).
  std::int64_t expires_at() const { return expires_at_; }
  std::uint32_t serial() const { return serial_; }
  std::size_t records() const { return records_; }
  const std::string& path() const { return path_; }
  const LocalRootDigest& zonemd() const { return zonemd_; }

private:
  LocalRoot() = default;
  // The sets at `owner` (nullptr: none).
  const std::vector<dnssec::Rrset>* sets_at(const common::Bytes& owner) const;
  const dnssec::Rrset* find(const common::Bytes& owner, std::uint16_t type) const;
  void add_glue(const dnssec::Rrset& ns, std::vector<dnssec::Rrset>& additional) const;
  // The NSEC set at `name`, or the one covering it (`exact` false), into `out` once.
  void add_nsec(const common::Bytes& name, bool exact, std::vector<dnssec::Rrset>& out) const;
  dnssec::Rrset negative_soa() const;

  std::string path_;
  std::map<common::Bytes, std::vector<dnssec::Rrset>> sets_;  // by owner (wire, lowercase)
  std::set<common::Bytes> names_;  // every owner and every name above one
  struct CanonicalLess {
    bool operator()(const common::Bytes& a, const common::Bytes& b) const { return dnssec::canonical_compare(a, b) < 0; }
  };
  // Owners with an NSEC set, in canonical order (RFC 4034 6.1), to the set in sets_
  // (filled once sets_ is complete: the pointers stay valid). Empty: an unsigned copy.
  std::map<common::Bytes, const dnssec::Rrset*, CanonicalLess> nsec_;
  std::int64_t expires_at_ = 0;
  std::uint32_t serial_ = 0;
  std::size_t records_ = 0;
  LocalRootDigest zonemd_;
  mutable bool expiry_logged_ = false;  // per process: a worker logs the expiry once
};

}  // namespace dnsarena::workers

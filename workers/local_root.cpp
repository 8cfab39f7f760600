// SPDX-License-Identifier: GPL-3.0-or-later
// The local root zone's load, checks and answers (local_root.hpp).
#include "workers/local_root.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "policy/rule_set.hpp"
#include "policy/zone_scanner.hpp"
#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::workers {

namespace {

std::uint32_t read_u32(const common::Bytes& b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

// The SOA RDATA's serial, expire and minimum; false when the RDATA is malformed.
bool soa_fields(const common::Bytes& rd, std::uint32_t& serial, std::uint32_t& expire, std::uint32_t& minimum) {
  std::size_t at = 0;
  for (int name = 0; name < 2; ++name) {
    const std::size_t n = wire::wire_name_length({rd.data() + at, rd.size() - at});
    if (n == 0) return false;
    at += n;
  }
  if (rd.size() != at + 20) return false;
  serial = read_u32(rd, at);
  expire = read_u32(rd, at + 12);
  minimum = read_u32(rd, at + 16);
  return true;
}

}  // namespace

std::shared_ptr<const LocalRoot> LocalRoot::load(const std::string& path, ZonemdCheck check,
                                                 const dnssec::TrustAnchors* anchors) {
  std::shared_ptr<LocalRoot> z(new LocalRoot());
  z->path_ = path;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": cannot read the root zone file");
  dnssec::SectionBuilder builder;
  const common::Bytes root(1, 0);
  std::optional<dnssec::ZoneDigest> digest;  // off: no digest computed
  if (check != ZonemdCheck::off) digest.emplace(root);
  try {
    policy::ZoneScanner scanner(path, ".");
    scanner.open_file(path);
    for (policy::ScannedRecord r; scanner.next(r);) {
      if (++z->records_ > kMaxRecords)
        throw std::runtime_error(path + ": more than " + std::to_string(kMaxRecords) + " records");
      builder.add(r.owner, r.type, 1, r.ttl, r.rdata);
      if (digest) digest->add(r.owner, r.type, 1, r.ttl, r.rdata);
    }
  } catch (const policy::PolicyError& e) {
    throw std::runtime_error(e.what());
  }
  for (dnssec::Rrset& s : builder.finish()) {
    common::Bytes name = s.owner;
    for (unsigned up = 0, n = dnssec::label_count(name); up <= n; ++up) z->names_.insert(dnssec::strip_labels(name, up));
    z->sets_[s.owner].push_back(std::move(s));
  }
  for (const auto& [owner, sets] : z->sets_)
    for (const dnssec::Rrset& set : sets)
      if (set.type == dnssec::kTypeNsec) z->nsec_.emplace(owner, &set);
  const dnssec::Rrset* soa = z->find(root, wire::kTypeSoa);
  if (soa == nullptr) throw std::runtime_error(path + ": no SOA record at the root (\".\"): not a root zone");
  if (soa->rdata.size() != 1) throw std::runtime_error(path + ": more than one SOA record at the root");
  std::uint32_t serial = 0, expire = 0, minimum = 0;
  if (!soa_fields(soa->rdata[0], serial, expire, minimum)) throw std::runtime_error(path + ": the root's SOA is malformed");
  const dnssec::Rrset* ns = z->find(root, wire::kTypeNs);
  if (ns == nullptr || ns->rdata.empty()) throw std::runtime_error(path + ": no NS record at the root (\".\")");
  z->serial_ = serial;
  z->expires_at_ = static_cast<std::int64_t>(st.st_mtim.tv_sec) + expire;
  z->zonemd_.check = check;
  if (digest) z->zonemd_ = check_local_root_digest(*digest, serial, check, path);
  if (anchors != nullptr && z->zonemd_.status == dnssec::ZonemdStatus::verified)
    check_local_root_signature(z->zonemd_, digest->apex_zonemd(), z->find(root, dnssec::kTypeDnskey), *anchors,
                               static_cast<std::uint32_t>(std::time(nullptr)), path);
  spdlog::info("recursion.local_root: {} serial {}, {} records, {}", path, serial, z->records_, z->zonemd_.summary());
  return z;
}

const std::vector<dnssec::Rrset>* LocalRoot::sets_at(const common::Bytes& owner) const {
  const auto it = sets_.find(owner);
  return it == sets_.end() ? nullptr : &it->second;
}

const dnssec::Rrset* LocalRoot::find(const common::Bytes& owner, std::uint16_t type) const {
  const auto* sets = sets_at(owner);
  return sets == nullptr ? nullptr : dnssec::find_rrset(*sets, owner, type);
}

void LocalRoot::add_glue(const dnssec::Rrset& ns, std::vector<dnssec::Rrset>& additional) const {
  for (const common::Bytes& target : ns.rdata)
    for (std::uint16_t type : {wire::kTypeA, wire::kTypeAaaa})
      if (const dnssec::Rrset* g = find(target, type)) additional.push_back(*g);
}

void LocalRoot::add_nsec(const common::Bytes& name, bool exact, std::vector<dnssec::Rrset>& out) const {
  if (nsec_.empty()) return;
  auto it = nsec_.upper_bound(name);  // the first owner after name
  if (it == nsec_.begin()) return;    // nothing at or before it (no NSEC at the apex)
  --it;
  if (exact && it->first != name) return;
  for (const dnssec::Rrset& s : out)
    if (s.type == dnssec::kTypeNsec && s.owner == it->first) return;
  out.push_back(*it->second);
}

dnssec::Rrset LocalRoot::negative_soa() const {
  dnssec::Rrset soa = *find(common::Bytes(1, 0), wire::kTypeSoa);  // load() made sure it is there
  std::uint32_t serial = 0, expire = 0, minimum = 0;
  soa_fields(soa.rdata[0], serial, expire, minimum);
  soa.ttl = std::min(soa.ttl, minimum);  // RFC 2308 section 5
  return soa;
}

std::optional<dnssec::Response> LocalRoot::answer(const recursion::Query& q, std::int64_t now_s) const {
  if (q.zone.size() != 1 || q.zone[0] != 0) return std::nullopt;
  if (now_s >= expires_at_) {
    if (!expiry_logged_)
      spdlog::warn("recursion.local_root: {} (serial {}) expired at Unix time {} (file time + SOA expire): "
                   "asking the root servers until a reload brings a fresh copy",
                   path_, serial_, expires_at_);
    expiry_logged_ = true;
    return std::nullopt;
  }
  dnssec::Response r;
  r.qname = q.qname;
  r.qtype = q.qtype;
  // The highest delegation at or above the name (the root's own NS set aside).
  const unsigned labels = dnssec::label_count(q.qname);
  for (unsigned keep = 1; keep <= labels; ++keep) {
    const common::Bytes cut = dnssec::strip_labels(q.qname, labels - keep);
    const dnssec::Rrset* ns = find(cut, wire::kTypeNs);
    if (ns == nullptr) continue;
    const dnssec::Rrset* ds = find(cut, wire::kTypeDs);
    if (keep == labels && q.qtype == wire::kTypeDs) {  // the parent side answers for the DS set
      r.aa = true;
      if (ds != nullptr) {
        r.answer.push_back(*ds);
      } else {
        r.authority.push_back(negative_soa());
        add_nsec(cut, true, r.authority);
      }
      return r;
    }
    r.authority.push_back(*ns);
    if (ds != nullptr)
      r.authority.push_back(*ds);
    else
      add_nsec(cut, true, r.authority);  // an unsigned delegation: the NSEC at the cut shows no DS
    add_glue(*ns, r.additional);
    return r;
  }
  r.aa = true;
  if (const auto* sets = sets_at(q.qname)) {
    for (const dnssec::Rrset& s : *sets)
      if (s.type == q.qtype || q.qtype == wire::kTypeAny) r.answer.push_back(s);
    if (!r.answer.empty()) {
      if (labels == 0 && q.qtype == wire::kTypeNs) add_glue(r.answer.front(), r.additional);
      return r;
    }
  }
  r.authority.push_back(negative_soa());
  if (names_.count(q.qname) != 0) {  // NODATA (an empty non-terminal: the covering NSEC)
    add_nsec(q.qname, sets_at(q.qname) != nullptr, r.authority);
    return r;
  }
  r.rcode = wire::kRcodeNxDomain;
  add_nsec(q.qname, false, r.authority);
  unsigned up = 1;  // the closest encloser: the deepest name above that exists
  while (names_.count(dnssec::strip_labels(q.qname, up)) == 0) ++up;
  add_nsec(dnssec::wildcard_of(dnssec::strip_labels(q.qname, up)), false, r.authority);
  return r;
}

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// NSEC proofs (denial.hpp).
#include "dnssec/nsec_proof.hpp"

#include "dnssec/c_libraries.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dnssec {

namespace {

struct NsecView {
  const Bytes* owner;
  Bytes next;
  std::span<const std::uint8_t> bitmap;
  bool has(std::uint16_t type) const {
    return dnssec_nsec_bitmap_contains(bitmap.data(), static_cast<std::uint16_t>(bitmap.size()), type);
  }
};

std::vector<NsecView> views(const DenialSets& d) {
  std::vector<NsecView> out;
  for (const Rrset* s : d.nsec)
    for (const Bytes& rd : s->rdata) {
      const std::size_t n = wire::wire_name_length(rd);
      if (n == 0) continue;
      out.push_back({&s->owner, lowercase_name({rd.data(), n}), std::span<const std::uint8_t>(rd).subspan(n)});
    }
  return out;
}

// owner < name < next, or past the last record (next at or before owner, the apex).
bool covers(const NsecView& v, std::span<const std::uint8_t> name) {
  if (canonical_compare(*v.owner, name) >= 0) return false;
  if (canonical_compare(v.next, *v.owner) <= 0) return true;
  return canonical_compare(name, v.next) < 0;
}

// RFC 6840 4.1: an NSEC at a delegation or a DNAME says nothing about names below it.
bool usable_for(const NsecView& v, std::span<const std::uint8_t> name) {
  const bool ancestor = v.owner->size() < name.size() && is_subdomain(name, *v.owner);
  if (!ancestor) return true;
  if (v.has(kTypeNs) && !v.has(kTypeSoa)) return false;
  return !v.has(kTypeDname);
}

Bytes common_ancestor(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  unsigned la = label_count(a), lb = label_count(b);
  Bytes x = strip_labels(a, la > lb ? la - lb : 0), y = strip_labels(b, lb > la ? lb - la : 0);
  while (x != y) {
    x = strip_labels(x, 1);
    y = strip_labels(y, 1);
  }
  return x;
}

const NsecView* covering(const std::vector<NsecView>& vs, std::span<const std::uint8_t> name) {
  for (const NsecView& v : vs)
    if (covers(v, name) && usable_for(v, name)) return &v;
  return nullptr;
}
const NsecView* matching(const std::vector<NsecView>& vs, std::span<const std::uint8_t> name) {
  for (const NsecView& v : vs)
    if (std::equal(v.owner->begin(), v.owner->end(), name.begin(), name.end())) return &v;
  return nullptr;
}

// The closest encloser a covering NSEC shows for `name`.
Bytes encloser(const NsecView& v, std::span<const std::uint8_t> name) {
  Bytes a = common_ancestor(name, *v.owner), b = common_ancestor(name, v.next);
  return a.size() >= b.size() ? a : b;
}

bool nodata_at(const NsecView& v, std::uint16_t qtype) {
  if (v.has(qtype) || v.has(kTypeCname)) return false;
  // A parent-side NSEC at a cut proves only the absence of DS (RFC 6840 4.4).
  if (qtype != kTypeDs && v.has(kTypeNs) && !v.has(kTypeSoa)) return false;
  if (qtype == kTypeDs && v.has(kTypeSoa) && label_count(*v.owner) > 0) return false;  // child apex NSEC
  return true;
}

}  // namespace

Proof nsec_nxdomain(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname) {
  const auto vs = views(d);
  const NsecView* c = covering(vs, qname);
  if (!c) return Proof::not_proven;
  const Bytes ce = encloser(*c, qname);
  if (!is_subdomain(ce, zone)) return Proof::not_proven;
  const Bytes wc = wildcard_of(ce);
  if (matching(vs, wc)) return Proof::not_proven;
  return covering(vs, wc) ? Proof::proven : Proof::not_proven;
}

Proof nsec_nodata(const DenialSets& d, std::span<const std::uint8_t> zone, std::span<const std::uint8_t> qname,
                  std::uint16_t qtype) {
  const auto vs = views(d);
  if (const NsecView* m = matching(vs, qname)) return nodata_at(*m, qtype) ? Proof::proven : Proof::not_proven;
  // An empty non-terminal: an NSEC whose next name is below qname covers qname itself.
  const NsecView* c = covering(vs, qname);
  if (!c) return Proof::not_proven;
  if (is_subdomain(c->next, qname)) return Proof::proven;
  // Wildcard NODATA: qname does not exist, *.ce does, without the type.
  const Bytes ce = encloser(*c, qname);
  if (!is_subdomain(ce, zone)) return Proof::not_proven;
  const NsecView* w = matching(vs, wildcard_of(ce));
  return w && nodata_at(*w, qtype) ? Proof::proven : Proof::not_proven;
}

Proof nsec_wildcard_answer(const DenialSets& d, std::span<const std::uint8_t> qname, unsigned labels) {
  const auto vs = views(d);
  const unsigned ql = label_count(qname);
  if (labels >= ql) return Proof::not_proven;
  // Some NSEC must cover qname (no exact match) and show the wildcard's parent as closest
  // encloser: the next closer name (one label more than the wildcard's parent) is denied.
  const NsecView* c = covering(vs, qname);
  if (!c) return Proof::not_proven;
  const Bytes ce = encloser(*c, qname);
  return label_count(ce) == labels ? Proof::proven : Proof::not_proven;
}

CutProof nsec_no_ds(const DenialSets& d, std::span<const std::uint8_t> name) {
  const auto vs = views(d);
  const NsecView* m = matching(vs, name);
  if (!m) {
    // An empty non-terminal between the zone and its children: no cut there.
    const NsecView* c = covering(vs, name);
    if (c && is_subdomain(c->next, name)) return CutProof::no_cut;
    return CutProof::not_proven;
  }
  if (m->has(kTypeDs) || m->has(kTypeSoa) || m->has(kTypeCname)) return CutProof::not_proven;
  return m->has(kTypeNs) ? CutProof::insecure_delegation : CutProof::no_cut;
}

}  // namespace dnsarena::dnssec

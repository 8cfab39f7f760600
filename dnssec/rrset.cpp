// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/rrset.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "dns/knot_packet.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dnssec {

namespace {

std::uint16_t rd16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }
std::uint32_t rd32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | p[3];
}

// Groups one section's records (SectionBuilder).
void read_section(const knot_pktsection_t* section, std::vector<Rrset>& out) {
  SectionBuilder b;
  for (std::uint16_t i = 0; i < section->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(section, i);
    if (rr->type == KNOT_RRTYPE_OPT || rr->type == KNOT_RRTYPE_TSIG) continue;
    for (std::uint16_t j = 0; j < rr->rrs.count; ++j) {
      const knot_rdata_t* rd = knot_rdataset_at(&rr->rrs, j);
      b.add({rr->owner, knot_dname_size(rr->owner)}, rr->type, rr->rclass, rr->ttl, {rd->data, rd->len});
    }
  }
  out = b.finish();
}

}  // namespace

Bytes canonical_rdata(std::uint16_t type, std::span<const std::uint8_t> rdata) {
  if (rdata.size() > 65535) throw std::invalid_argument("RDATA over 65535 bytes");
  // knot_rrset_rr_to_canonical converts the first record of a set in place: a set of one.
  std::vector<std::uint8_t> buf(knot_rdata_size(static_cast<std::uint16_t>(rdata.size())));
  auto* rd = reinterpret_cast<knot_rdata_t*>(buf.data());
  knot_rdata_init(rd, static_cast<std::uint16_t>(rdata.size()), rdata.data());
  std::uint8_t root = 0;
  knot_rrset_t one;
  knot_rrset_init(&one, &root, type, KNOT_CLASS_IN, 0);
  one.rrs.count = 1;
  one.rrs.size = static_cast<std::uint32_t>(buf.size());
  one.rrs.rdata = rd;
  knot_rrset_rr_to_canonical(&one);
  return Bytes(rd->data, rd->data + rd->len);
}

void SectionBuilder::add(std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t klass,
                         std::uint32_t ttl, std::span<const std::uint8_t> rdata) {
  Bytes o = lowercase_name(owner);
  Bytes data = canonical_rdata(type, rdata);
  if (type == kTypeRrsig) {
    sigs_.emplace_back(std::move(o), std::move(data));
    return;
  }
  auto [it, inserted] = slots_.try_emplace(std::make_tuple(o, type, klass), Slot{sets_.size(), {}});
  if (inserted) sets_.push_back(Rrset{o, type, klass, ttl, {}, {}});
  Rrset& set = sets_[it->second.index];
  set.ttl = std::min(set.ttl, ttl);
  if (it->second.seen.insert(data).second) set.rdata.push_back(std::move(data));
}

std::vector<Rrset> SectionBuilder::finish() {
  for (auto& [owner, data] : sigs_) {
    const std::uint16_t covered = data.size() >= 2 ? rd16(data.data()) : 0;
    auto it = slots_.find(std::make_tuple(owner, covered, std::uint16_t{1}));
    if (it == slots_.end()) {
      auto [orphan, inserted] = slots_.try_emplace(std::make_tuple(owner, kTypeRrsig, std::uint16_t{1}), Slot{sets_.size(), {}});
      if (inserted) sets_.push_back(Rrset{owner, kTypeRrsig, 1, 0, {}, {}});
      it = orphan;
    }
    sets_[it->second.index].rrsigs.push_back(std::move(data));
  }
  sigs_.clear();
  slots_.clear();
  return std::move(sets_);
}

std::optional<RrsigFields> parse_rrsig(std::span<const std::uint8_t> rdata) {
  if (rdata.size() < 18) return std::nullopt;
  RrsigFields f;
  const std::uint8_t* p = rdata.data();
  f.type_covered = rd16(p);
  f.algorithm = p[2];
  f.labels = p[3];
  f.original_ttl = rd32(p + 4);
  f.expiration = rd32(p + 8);
  f.inception = rd32(p + 12);
  f.key_tag = rd16(p + 16);
  const std::size_t n = wire::wire_name_length(rdata.subspan(18));
  if (n == 0) return std::nullopt;
  f.signer = lowercase_name(rdata.subspan(18, n));
  f.fixed_length = 18 + n;
  f.signature = rdata.subspan(f.fixed_length);
  if (f.signature.empty()) return std::nullopt;
  return f;
}

bool parse_response(std::span<const std::uint8_t> wire, Response& out, std::string& error) {
  out = Response{};
  if (wire.size() > 65535) {
    error = "message over 65535 bytes";
    return false;
  }
  std::vector<std::uint8_t> copy(wire.begin(), wire.end());  // libknot parses in place
  dns::KnotParse parsed = dns::parse_in_place(copy.data(), copy.size());
  if (!parsed.pkt || (parsed.rc != KNOT_EOK && parsed.rc != KNOT_ETRAIL)) {
    error = "unparsable message (libknot error " + std::to_string(parsed.rc) + ")";
    return false;
  }
  knot_pkt_t* pkt = parsed.pkt.get();
  if (knot_wire_get_qdcount(pkt->wire) != 1) {
    error = "message without exactly one question";
    return false;
  }
  out.rcode = knot_pkt_ext_rcode(pkt);
  out.aa = knot_wire_get_aa(pkt->wire);
  out.ad = knot_wire_get_ad(pkt->wire);
  out.cd = knot_wire_get_cd(pkt->wire);
  out.tc = knot_wire_get_tc(pkt->wire);
  const knot_dname_t* q = knot_pkt_qname(pkt);
  out.qname = lowercase_name({q, knot_dname_size(q)});
  out.qtype = knot_pkt_qtype(pkt);
  read_section(knot_pkt_section(pkt, KNOT_ANSWER), out.answer);
  read_section(knot_pkt_section(pkt, KNOT_AUTHORITY), out.authority);
  read_section(knot_pkt_section(pkt, KNOT_ADDITIONAL), out.additional);
  return true;
}

const Rrset* find_rrset(const std::vector<Rrset>& section, std::span<const std::uint8_t> owner, std::uint16_t type) {
  for (const Rrset& s : section)
    if (s.type == type && std::equal(s.owner.begin(), s.owner.end(), owner.begin(), owner.end())) return &s;
  return nullptr;
}

Bytes lowercase_name(std::span<const std::uint8_t> name) {
  Bytes out(name.size(), 0);
  wire::lowercase_copy(out.data(), name);
  return out;
}

unsigned label_count(std::span<const std::uint8_t> name) {
  unsigned n = 0;
  for (std::size_t i = 0; i < name.size() && name[i] != 0; i += name[i] + 1u) ++n;
  return n;
}

Bytes strip_labels(std::span<const std::uint8_t> name, unsigned n) {
  std::size_t i = 0;
  for (unsigned k = 0; k < n && i < name.size() && name[i] != 0; ++k) i += name[i] + 1u;
  return Bytes(name.begin() + static_cast<std::ptrdiff_t>(i), name.end());
}

bool is_subdomain(std::span<const std::uint8_t> name, std::span<const std::uint8_t> zone) {
  const unsigned nl = label_count(name), zl = label_count(zone);
  if (nl < zl) return false;
  const Bytes tail = strip_labels(name, nl - zl);
  return std::equal(tail.begin(), tail.end(), zone.begin(), zone.end());
}

int canonical_compare(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  return knot_dname_cmp(a.data(), b.data());
}

bool is_wildcard(std::span<const std::uint8_t> name) { return name.size() >= 2 && name[0] == 1 && name[1] == '*'; }

Bytes wildcard_of(std::span<const std::uint8_t> name) {
  Bytes out{1, '*'};
  out.append(name.begin(), name.end());
  return out;
}

std::string name_text(std::span<const std::uint8_t> name) { return wire::wire_to_text(name); }

Bytes name_from_text(const std::string& text) {
  const auto w = wire::name_to_wire(text);
  return lowercase_name({w.data(), w.size()});
}

}  // namespace dnsarena::dnssec

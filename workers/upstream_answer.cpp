#include "workers/upstream_answer.hpp"

#include <algorithm>

#include "cache/dns_name.hpp"

namespace dnsarena::workers {

namespace {

constexpr std::uint16_t kTypeCname = 5, kTypeSoa = 6, kTypeNs = 2, kTypeDname = 39, kTypeRrsig = 46, kTypeA = 1,
                        kTypeAaaa = 28, kTypeOpt = 41, kTypeTsig = 250, kTypeAny = 255;

std::size_t name_len(const std::uint8_t* n) {
  std::size_t len = 0;
  while (n[len] != 0) len += n[len] + 1u;
  return len + 1;
}

unsigned label_count(const std::uint8_t* n) {
  unsigned c = 0;
  for (std::size_t i = 0; n[i] != 0; i += n[i] + 1u) ++c;
  return c;
}

std::uint32_t clamp_ttl(std::uint32_t t, const TtlPolicy& p) { return std::clamp(t, p.floor, p.ceiling); }

}  // namespace

bool names_equal(const std::uint8_t* a, const std::uint8_t* b) {
  const std::size_t la = name_len(a);
  return la == name_len(b) && cache::wire_names_equal_ci({a, la}, {b, la});
}

bool name_is_at_or_below(const std::uint8_t* name, const std::uint8_t* parent) {
  const unsigned ln = label_count(name), lp = label_count(parent);
  if (ln < lp) return false;
  for (unsigned i = 0; i < ln - lp; ++i) name += name[0] + 1u;
  return names_equal(name, parent);
}

UpstreamAnswer::Verdict UpstreamAnswer::parse(const std::uint8_t* wire, std::size_t len,
                                              const UpstreamQuestion& asked, const TtlPolicy& policy) {
  if (len < 12 || len > 65535) return Verdict::ignore;
  if (get16(wire) != asked.id) return Verdict::ignore;
  wire_.assign(wire, wire + len);
  pkt_.reset(knot_pkt_new(wire_.data(), static_cast<std::uint16_t>(len), nullptr));
  if (!pkt_ || knot_pkt_parse(pkt_.get(), 0) != KNOT_EOK) return Verdict::ignore;
  knot_pkt_t* p = pkt_.get();
  const std::uint8_t* w = wire_.data();
  if (!knot_wire_get_qr(w) || knot_wire_get_opcode(w) != 0 || knot_wire_get_qdcount(w) != 1) return Verdict::ignore;
  const std::uint8_t* qn = knot_pkt_qname(p);
  if (!qn || p->qname_size != asked.qname.size() || !names_equal(qn, asked.qname.data()) ||
      knot_pkt_qtype(p) != asked.qtype || knot_pkt_qclass(p) != 1)
    return Verdict::ignore;
  // ECS: the reply must echo what we sent; its scope tells whom the answer is for.
  ecs_scope_ = 0;
  if (asked.ecs.present) {
    if (const std::uint8_t* opt = knot_pkt_edns_option(p, KNOT_EDNS_OPTION_CLIENT_SUBNET)) {
      knot_edns_client_subnet_t ecs{};
      if (knot_edns_client_subnet_parse(&ecs, knot_edns_opt_get_data(const_cast<std::uint8_t*>(opt)),
                                        knot_edns_opt_get_length(opt)) != KNOT_EOK)
        return Verdict::ignore;
      const std::size_t abytes = (asked.ecs.source_prefix + 7u) / 8u;
      if (ecs.family != asked.ecs.family || ecs.source_len != asked.ecs.source_prefix ||
          std::memcmp(ecs.address, asked.ecs.address.data(), abytes) != 0)
        return Verdict::ignore;
      ecs_scope_ = std::min(ecs.scope_len, asked.ecs.source_prefix);
    }
    // No ECS in the reply: the server does not vary by subnet; scope 0.
  }
  rcode_ = knot_pkt_ext_rcode(p);
  if (rcode_ != kRcodeNoError && rcode_ != kRcodeNxDomain) return Verdict::fail;
  truncated_ = knot_wire_get_tc(w) != 0;

  for (auto& r : records_) r.clear();
  // --- answer: follow the chain from the qname ---
  const knot_pktsection_t* an = knot_pkt_section(p, KNOT_ANSWER);
  std::vector<const std::uint8_t*> chain{qn};
  std::vector<bool> kept(an->count, false);
  for (int pass = 0; pass < 8; ++pass) {
    bool grew = false;
    for (std::uint16_t i = 0; i < an->count; ++i) {
      if (kept[i]) continue;
      const knot_rrset_t* rr = knot_pkt_rr(an, i);
      const bool owner_in_chain =
          std::any_of(chain.begin(), chain.end(), [&](const std::uint8_t* c) { return names_equal(rr->owner, c); });
      const bool dname_above = rr->type == kTypeDname && name_is_at_or_below(qn, rr->owner);
      if (!owner_in_chain && !dname_above) continue;
      if (rr->type != asked.qtype && asked.qtype != kTypeAny && rr->type != kTypeCname && rr->type != kTypeDname &&
          rr->type != kTypeRrsig)
        continue;
      kept[i] = true;
      if (rr->type == kTypeCname && rr->rrs.count > 0 && chain.size() < 16) {
        chain.push_back(knot_rdataset_at(&rr->rrs, 0)->data);
        grew = true;
      }
    }
    if (!grew) break;
  }
  const std::uint8_t* last = chain.back();
  bool have_final = false;
  for (std::uint16_t i = 0; i < an->count; ++i) {
    if (!kept[i]) continue;
    const knot_rrset_t* rr = knot_pkt_rr(an, i);
    if ((rr->type == asked.qtype || asked.qtype == kTypeAny) && names_equal(rr->owner, last)) have_final = true;
    if (asked.qtype == kTypeCname && rr->type == kTypeCname) have_final = true;
  }
  // --- authority: the answering zone is an ancestor of the chain's end ---
  const knot_pktsection_t* ns = knot_pkt_section(p, KNOT_AUTHORITY);
  const std::uint8_t* zone = nullptr;
  const knot_rrset_t* soa = nullptr;
  std::vector<const knot_rrset_t*> auth;
  for (std::uint16_t i = 0; i < ns->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(ns, i);
    if (rr->type == kTypeOpt || rr->type == kTypeTsig || !name_is_at_or_below(last, rr->owner)) continue;
    auth.push_back(rr);
    if (rr->type == kTypeSoa && !soa) soa = rr;
    if (!zone || label_count(rr->owner) > label_count(zone)) zone = rr->owner;
  }
  negative_ = rcode_ == kRcodeNxDomain || !have_final;

  std::uint32_t entry_ttl = 0;
  if (negative_) {
    if (soa && soa->rrs.count > 0) {
      const knot_rdata_t* rd = knot_rdataset_at(&soa->rrs, 0);
      std::uint32_t minimum = 0;
      if (rd->len >= 4) minimum = get16(rd->data + rd->len - 4) * 65536u + get16(rd->data + rd->len - 2);
      entry_ttl = std::min({soa->ttl, minimum, policy.negative_ceiling});
      entry_ttl = std::min(std::max(entry_ttl, policy.floor), policy.negative_ceiling);
    }
  }
  auto add = [&](cache::Section s, const knot_rrset_t* rr, std::uint32_t ttl) {
    for (std::uint16_t k = 0; k < rr->rrs.count; ++k) {
      const knot_rdata_t* rd = knot_rdataset_at(&rr->rrs, k);
      cache::RecordData rec;
      if (!names_equal(rr->owner, qn)) rec.owner = {rr->owner, name_len(rr->owner)};
      rec.type = rr->type;
      rec.rclass = rr->rclass;
      rec.ttl = ttl;
      rec.rdata = {rd->data, rd->len};
      records_[s].push_back(rec);
    }
  };
  for (std::uint16_t i = 0; i < an->count; ++i)
    if (kept[i]) add(cache::kAnswer, knot_pkt_rr(an, i), clamp_ttl(knot_pkt_rr(an, i)->ttl, policy));
  for (const knot_rrset_t* rr : auth)
    add(cache::kAuthority, rr, negative_ && rr->type == kTypeSoa && entry_ttl ? entry_ttl : clamp_ttl(rr->ttl, policy));
  // --- additional: in-zone glue for the NS records kept ---
  const knot_pktsection_t* ad = knot_pkt_section(p, KNOT_ADDITIONAL);
  for (std::uint16_t i = 0; i < ad->count && zone; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(ad, i);
    if ((rr->type != kTypeA && rr->type != kTypeAaaa) || !name_is_at_or_below(rr->owner, zone)) continue;
    const bool is_ns_target = std::any_of(auth.begin(), auth.end(), [&](const knot_rrset_t* a) {
      if (a->type != kTypeNs) return false;
      for (std::uint16_t k = 0; k < a->rrs.count; ++k)
        if (names_equal(knot_rdataset_at(&a->rrs, k)->data, rr->owner)) return true;
      return false;
    });
    if (is_ns_target) add(cache::kAdditional, rr, clamp_ttl(rr->ttl, policy));
  }

  if (!negative_) {
    entry_ttl = UINT32_MAX;
    for (const auto& r : records_[cache::kAnswer]) entry_ttl = std::min(entry_ttl, r.ttl);
    if (records_[cache::kAnswer].empty()) entry_ttl = 0;
  }
  answer_ = cache::Answer{};
  answer_.rcode = static_cast<std::uint8_t>(rcode_);
  answer_.authentic_data = knot_wire_get_ad(w) != 0;
  answer_.ttl = entry_ttl;
  for (int s = 0; s < 3; ++s) answer_.sections[s] = records_[s];
  cacheable_ = !truncated_ && entry_ttl > 0;
  return Verdict::accept;
}

}  // namespace dnsarena::workers

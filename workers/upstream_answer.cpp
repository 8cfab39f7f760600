// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/upstream_answer.hpp"

#include <algorithm>

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::workers {

namespace {

using wire::kTypeA, wire::kTypeNs, wire::kTypeCname, wire::kTypeSoa, wire::kTypeAaaa, wire::kTypeDname, wire::kTypeDs,
    wire::kTypeRrsig, wire::kTypeNsec, wire::kTypeNsec3, wire::kTypeAny, wire::kClassIn;
using wire::kRcodeNoError, wire::kRcodeNxDomain, wire::get16;
constexpr std::size_t kRrsigSignerOffset = 18;  // type covered .. key tag, then the signer name
constexpr std::size_t kMaxChain = 16;

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

bool is_dnssec_type(std::uint16_t t) { return t == kTypeRrsig || t == kTypeNsec || t == kTypeNsec3; }

// RFC 2181 section 8: a TTL with the most significant bit set is treated as zero.
std::uint32_t record_ttl(std::uint32_t t, const TtlPolicy& p) {
  if (t & 0x80000000u) t = 0;
  return std::clamp(t, p.floor, p.ceiling);
}

// The signer name of an RRSIG rdata, or nullptr when it is malformed.
const std::uint8_t* rrsig_signer(const knot_rdata_t* rd) {
  if (rd->len <= kRrsigSignerOffset) return nullptr;
  const std::size_t n = wire::wire_name_length({rd->data + kRrsigSignerOffset, rd->len - kRrsigSignerOffset});
  return n ? rd->data + kRrsigSignerOffset : nullptr;
}

// SOA MINIMUM: the last four bytes of its rdata.
std::uint32_t soa_minimum(const knot_rrset_t* soa) {
  if (soa->rrs.count == 0) return 0;
  const knot_rdata_t* rd = knot_rdataset_at(&soa->rrs, 0);
  if (rd->len < 22) return 0;
  const std::uint8_t* m = rd->data + rd->len - 4;
  return (std::uint32_t{m[0]} << 24) | (std::uint32_t{m[1]} << 16) | (std::uint32_t{m[2]} << 8) | m[3];
}

}  // namespace

bool names_equal(const std::uint8_t* a, const std::uint8_t* b) {
  const std::size_t la = name_len(a);
  return la == name_len(b) && wire::wire_names_equal_ci({a, la}, {b, la});
}

bool name_is_at_or_below(const std::uint8_t* name, const std::uint8_t* parent) {
  const unsigned ln = label_count(name), lp = label_count(parent);
  if (ln < lp) return false;
  for (unsigned i = 0; i < ln - lp; ++i) name += name[0] + 1u;
  return names_equal(name, parent);
}

bool UpstreamAnswer::filtered(const knot_rrset_t* rr) const {
  return private_ && (rr->type == kTypeA || rr->type == kTypeAaaa) && !private_->exempt(rr->owner);
}

bool UpstreamAnswer::all_private(const knot_rrset_t* rr) const {
  if (!filtered(rr) || rr->rrs.count == 0) return false;
  for (std::uint16_t k = 0; k < rr->rrs.count; ++k) {
    const knot_rdata_t* rd = knot_rdataset_at(&rr->rrs, k);
    if (!private_->is_private(rr->type, {rd->data, rd->len})) return false;
  }
  return true;
}

bool UpstreamAnswer::in_zone(const std::uint8_t* owner) const {
  return zone_ == nullptr || name_is_at_or_below(owner, zone_);
}

UpstreamAnswer::Match UpstreamAnswer::matches(const UpstreamQuestion& asked) const {
  const knot_pkt_t* p = pkt_.get();
  const std::uint8_t* w = wire_.data();
  if (!knot_wire_get_qr(w) || knot_wire_get_opcode(w) != 0 || knot_wire_get_qdcount(w) != 1) return Match::no;
  // The name byte for byte as sent: its random case (0x20) is part of what a forger
  // has to guess.
  const std::uint8_t* qn = knot_pkt_wire_qname(p);
  if (!qn || p->qname_size != asked.qname.size() || knot_pkt_qtype(p) != asked.qtype ||
      knot_pkt_qclass(p) != kClassIn)
    return Match::no;
  if (std::memcmp(qn, asked.qname.data(), asked.qname.size()) == 0) return Match::exact;
  return names_equal(qn, asked.qname.data()) ? Match::case_only : Match::no;
}

// ECS: the reply must echo what we sent; its scope tells whom the answer is for.
bool UpstreamAnswer::read_ecs_scope(const UpstreamQuestion& asked) {
  ecs_scope_ = 0;
  if (!asked.ecs.present) return true;
  dns::EcsOption reply;
  switch (dns::read_ecs_option(pkt_.get(), reply)) {
    case dns::EcsRead::absent: return true;  // the server does not vary by subnet: scope 0
    case dns::EcsRead::malformed: return false;
    case dns::EcsRead::ok: break;
  }
  const std::size_t abytes = (asked.ecs.source_prefix + 7u) / 8u;
  if (reply.family != asked.ecs.family || reply.source_prefix != asked.ecs.source_prefix ||
      std::memcmp(reply.address.data(), asked.ecs.address.data(), abytes) != 0)
    return false;
  // Kept as the server said it (up to the family's width): a scope longer than the
  // source we sent is the caller's to judge (RFC 7871 7.2.2: answer, do not cache).
  ecs_scope_ = std::min<std::uint8_t>(reply.scope_prefix, asked.ecs.family == 1 ? 32 : 128);
  return true;
}

// The chain from the qname through CNAMEs (and DNAMEs above it), with the RRSIGs of its
// owners.
void UpstreamAnswer::select_answer(const UpstreamQuestion& asked) {
  const knot_pktsection_t* an = knot_pkt_section(pkt_.get(), KNOT_ANSWER);
  const bool follow = asked.qtype != kTypeCname && asked.qtype != kTypeAny;
  chain_.assign(1, knot_pkt_qname(pkt_.get()));
  std::vector<const std::uint8_t*> dname_owners;
  std::vector<bool> kept(an->count, false);
  auto in_chain = [&](const std::uint8_t* owner) {
    return std::any_of(chain_.begin(), chain_.end(), [&](const std::uint8_t* c) { return names_equal(owner, c); });
  };
  auto strictly_above_chain = [&](const std::uint8_t* owner) {
    return std::any_of(chain_.begin(), chain_.end(),
                       [&](const std::uint8_t* c) { return !names_equal(c, owner) && name_is_at_or_below(c, owner); });
  };
  for (int pass = 0; pass < 16; ++pass) {
    bool grew = false;
    for (std::uint16_t i = 0; i < an->count; ++i) {
      const knot_rrset_t* rr = knot_pkt_rr(an, i);
      if (kept[i] || rr->rclass != kClassIn || rr->type == kTypeRrsig || !in_zone(rr->owner)) continue;
      if (rr->type == kTypeDname && asked.qtype != kTypeDname && strictly_above_chain(rr->owner)) {
        kept[i] = true;
        dname_owners.push_back(rr->owner);
        continue;
      }
      if (!in_chain(rr->owner)) continue;
      if (rr->type != asked.qtype && asked.qtype != kTypeAny && rr->type != kTypeCname) continue;
      if (is_dnssec_type(rr->type) && !asked.do_bit && rr->type != asked.qtype) continue;
      if (all_private(rr)) {
        private_removed_ += rr->rrs.count;
        continue;
      }
      kept[i] = true;
      if (rr->type == kTypeCname && follow && rr->rrs.count > 0 && chain_.size() < kMaxChain) {
        chain_.push_back(knot_rdataset_at(&rr->rrs, 0)->data);
        grew = true;
      }
    }
    if (!grew) break;
  }
  // RRSIGs of the kept owners (a DO query's proof of the chain).
  for (std::uint16_t i = 0; i < an->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(an, i);
    if (kept[i] || rr->rclass != kClassIn || rr->type != kTypeRrsig || !in_zone(rr->owner)) continue;
    if (!asked.do_bit && asked.qtype != kTypeRrsig) continue;
    const bool dname_owner = std::any_of(dname_owners.begin(), dname_owners.end(),
                                         [&](const std::uint8_t* d) { return names_equal(rr->owner, d); });
    if (in_chain(rr->owner) || dname_owner) kept[i] = true;
  }
  const std::uint8_t* last = chain_.back();
  have_final_ = false;
  for (std::uint16_t i = 0; i < an->count; ++i) {
    if (!kept[i]) continue;
    const knot_rrset_t* rr = knot_pkt_rr(an, i);
    kept_[cache::kAnswer].push_back(rr);
    if ((rr->type == asked.qtype || (asked.qtype == kTypeAny && rr->type != kTypeRrsig)) && names_equal(rr->owner, last))
      have_final_ = true;
  }
}

// SOA/NS/DS at or above the chain's end, and DNSSEC proofs inside the answering zone.
void UpstreamAnswer::select_authority(const UpstreamQuestion& asked) {
  const knot_pktsection_t* ns = knot_pkt_section(pkt_.get(), KNOT_AUTHORITY);
  const std::uint8_t* last = chain_.back();
  // The apex: the shortest of the SOA owner and the RRSIG signers that is an ancestor
  // of the chain's end (a referral's proofs live in the parent zone, above the cut).
  const std::uint8_t* apex = nullptr;
  auto consider_apex = [&](const std::uint8_t* name) {
    if (name && name_is_at_or_below(last, name) && (!apex || label_count(name) < label_count(apex))) apex = name;
  };
  soa_ = nullptr;
  for (std::uint16_t i = 0; i < ns->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(ns, i);
    if (rr->rclass != kClassIn || !in_zone(rr->owner)) continue;
    if (rr->type == kTypeSoa && !soa_ && name_is_at_or_below(last, rr->owner)) {
      soa_ = rr;
      consider_apex(rr->owner);
    }
    if (rr->type == kTypeNs) consider_apex(rr->owner);
  }
  for (unsigned s = 0; s < 2; ++s) {
    const knot_pktsection_t* sec = knot_pkt_section(pkt_.get(), s == 0 ? KNOT_ANSWER : KNOT_AUTHORITY);
    for (std::uint16_t i = 0; i < sec->count; ++i) {
      const knot_rrset_t* rr = knot_pkt_rr(sec, i);
      if (rr->type == kTypeRrsig && rr->rrs.count > 0) consider_apex(rrsig_signer(knot_rdataset_at(&rr->rrs, 0)));
    }
  }
  for (std::uint16_t i = 0; i < ns->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(ns, i);
    if (rr->rclass != kClassIn || !in_zone(rr->owner)) continue;
    bool keep = false;
    switch (rr->type) {
      case kTypeSoa: keep = rr == soa_; break;
      case kTypeNs:
      case kTypeDs: keep = name_is_at_or_below(last, rr->owner); break;
      case kTypeNsec:
      case kTypeNsec3:
      case kTypeRrsig: keep = asked.do_bit && apex && name_is_at_or_below(rr->owner, apex); break;
      default: break;
    }
    if (keep) kept_[cache::kAuthority].push_back(rr);
  }
  apex_ = apex;
}

// In-zone glue: address records of the NS targets kept in authority.
void UpstreamAnswer::select_additional() {
  const knot_pktsection_t* ad = knot_pkt_section(pkt_.get(), KNOT_ADDITIONAL);
  for (std::uint16_t i = 0; i < ad->count && apex_; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(ad, i);
    if (rr->rclass != kClassIn || (rr->type != kTypeA && rr->type != kTypeAaaa) ||
        !name_is_at_or_below(rr->owner, apex_) || !in_zone(rr->owner))
      continue;
    const auto& auth = kept_[cache::kAuthority];
    const bool is_ns_target = std::any_of(auth.begin(), auth.end(), [&](const knot_rrset_t* a) {
      if (a->type != kTypeNs) return false;
      for (std::uint16_t k = 0; k < a->rrs.count; ++k)
        if (names_equal(knot_rdataset_at(&a->rrs, k)->data, rr->owner)) return true;
      return false;
    });
    if (!is_ns_target) continue;
    if (all_private(rr)) private_removed_ += rr->rrs.count;
    else kept_[cache::kAdditional].push_back(rr);
  }
}

void UpstreamAnswer::build(const TtlPolicy& policy) {
  const std::uint8_t* qn = knot_pkt_qname(pkt_.get());
  negative_ = rcode_ == kRcodeNxDomain || (!have_final_ && soa_);
  std::uint32_t negative_ttl = 0;
  if (negative_ && soa_) {
    negative_ttl = std::min(record_ttl(soa_->ttl, policy), soa_minimum(soa_));
    negative_ttl = std::min(std::max(negative_ttl, policy.floor), policy.negative_ceiling);
  }
  std::uint32_t entry_ttl = UINT32_MAX;
  bool any = false;
  for (unsigned s = 0; s < 3; ++s) {
    records_[s].clear();
    for (const knot_rrset_t* rr : kept_[s]) {
      const std::uint32_t ttl = negative_ && rr == soa_ ? negative_ttl : record_ttl(rr->ttl, policy);
      entry_ttl = std::min(entry_ttl, ttl);
      const bool filter = filtered(rr);
      for (std::uint16_t k = 0; k < rr->rrs.count; ++k) {
        const knot_rdata_t* rd = knot_rdataset_at(&rr->rrs, k);
        if (filter && private_->is_private(rr->type, {rd->data, rd->len})) {
          ++private_removed_;
          continue;
        }
        cache::RecordData rec;
        if (!names_equal(rr->owner, qn)) rec.owner = {rr->owner, name_len(rr->owner)};
        rec.type = rr->type;
        rec.rclass = rr->rclass;
        rec.ttl = ttl;
        rec.rdata = {rd->data, rd->len};
        records_[s].push_back(rec);
        any = true;
      }
    }
  }
  if (!any) entry_ttl = 0;
  if (negative_) entry_ttl = std::min(entry_ttl, policy.negative_ceiling);

  const bool has_answer = !records_[cache::kAnswer].empty();
  const bool referral = !has_answer && std::any_of(kept_[cache::kAuthority].begin(), kept_[cache::kAuthority].end(),
                                                   [](const knot_rrset_t* rr) { return rr->type == kTypeNs; });
  bool meaningful;
  if (rcode_ == kRcodeNxDomain) meaningful = soa_ != nullptr;   // RFC 2308 5
  else if (have_final_) meaningful = true;                        // positive
  else if (soa_) meaningful = true;                               // NODATA
  else meaningful = has_answer || referral;                       // a chain leaving the data, a referral

  answer_ = cache::Answer{};
  answer_.rcode = static_cast<std::uint8_t>(rcode_);
  answer_.authentic_data = knot_wire_get_ad(wire_.data()) != 0 && private_removed_ == 0;
  answer_.ttl = entry_ttl;
  for (int s = 0; s < 3; ++s) answer_.sections[s] = records_[s];
  cacheable_ = !truncated_ && meaningful && entry_ttl > 0;
}

UpstreamAnswer::Verdict UpstreamAnswer::parse(const std::uint8_t* wire, std::size_t len,
                                              const UpstreamQuestion& asked, const TtlPolicy& policy) {
  if (len < 12 || len > 65535) return Verdict::ignore;
  if (get16(wire) != asked.id) return Verdict::ignore;
  wire_.assign(wire, wire + len);
  dns::KnotParse parsed = dns::parse_in_place(wire_.data(), len);
  pkt_ = std::move(parsed.pkt);
  if (!pkt_ || parsed.rc != KNOT_EOK) return Verdict::ignore;
  const Match match = matches(asked);
  if (match == Match::no || !read_ecs_scope(asked)) return Verdict::ignore;
  if (match == Match::case_only) return Verdict::case_mismatch;
  rcode_ = knot_pkt_ext_rcode(pkt_.get());
  if (rcode_ != kRcodeNoError && rcode_ != kRcodeNxDomain) return Verdict::fail;
  truncated_ = knot_wire_get_tc(wire_.data()) != 0;
  for (auto& k : kept_) k.clear();
  private_removed_ = 0;
  zone_ = asked.zone.size() > 1 ? asked.zone.data() : nullptr;
  select_answer(asked);
  select_authority(asked);
  select_additional();
  build(policy);
  // RFC 6840 5.8: an AD bit from an upstream that is not trusted to validate, or over a
  // path that is not secured, is not passed on.
  if (!asked.trust_ad) answer_.authentic_data = false;
  return Verdict::accept;
}

}  // namespace dnsarena::workers

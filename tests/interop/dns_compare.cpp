// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/interop/dns_compare.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "dns/knot_packet.hpp"
#include "wire/constants.hpp"

namespace dnsarena::interop {

namespace {

using wire::kTypeA, wire::kTypeNs, wire::kTypeCname, wire::kTypeSoa, wire::kTypePtr, wire::kTypeMx, wire::kTypeAaaa,
    wire::kTypeRrsig, wire::kTypeNsec, wire::kTypeNsec3;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string dname_text(const knot_dname_t* d) {
  char buf[KNOT_DNAME_TXT_MAXLEN + 1];
  return knot_dname_to_str(buf, d, sizeof buf) ? std::string(buf) : std::string("?");
}

std::vector<Record> section(const knot_pkt_t* pkt, knot_section_t s) {
  std::vector<Record> out;
  const knot_pktsection_t* sec = knot_pkt_section(pkt, s);
  for (std::uint16_t i = 0; i < sec->count; ++i) {
    const knot_rrset_t* rr = knot_pkt_rr(sec, i);
    if (rr->type == KNOT_RRTYPE_OPT) continue;
    for (std::uint16_t k = 0; k < rr->rrs.count; ++k) {
      Record r;
      r.owner = lower(dname_text(rr->owner));
      r.type = rr->type;
      r.ttl = rr->ttl;
      const knot_rdata_t* rd = knot_rdataset_at(&rr->rrs, k);
      if (rr->type == kTypeRrsig) r.covered = knot_rrsig_type_covered(rd);
      static thread_local std::vector<char> buf(1 << 18);  // the largest rdata in text
      const int n = knot_rrset_txt_dump_data(rr, k, buf.data(), buf.size(), &KNOT_DUMP_STYLE_DEFAULT);
      r.rdata = n >= 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : "?";
      // NOTE: names in the rdata of the types that may be compressed (RFC 3597 4) can take
      // the case of the (0x20) qname they point into: compared case aside (RFC 4343).
      if (rr->type == kTypeNs || rr->type == kTypeCname || rr->type == kTypeSoa || rr->type == kTypePtr ||
          rr->type == kTypeMx)
        r.rdata = lower(r.rdata);
      out.push_back(std::move(r));
    }
  }
  return out;
}

// What a record is, for the category names.
std::string what(const Record& r) {
  if (r.type == kTypeRrsig) return "RRSIG(" + type_name(r.covered) + ")";
  if (r.type == kTypeNsec) return "NSEC";
  if (r.type == kTypeNsec3) return "NSEC3";
  return "records";
}

// The glue of a referral: A/AAAA owned by an NS target in authority.
std::vector<Record> glue(const Reply& r) {
  std::set<std::string> targets;
  for (const Record& a : r.authority)
    if (a.type == kTypeNs) targets.insert(a.rdata);
  std::vector<Record> out;
  for (const Record& a : r.additional)
    if ((a.type == kTypeA || a.type == kTypeAaaa) && targets.count(a.owner)) out.push_back(a);
  return out;
}

// What kind of answer knotd gave, for the authority categories: its proofs differ by kind.
std::string answer_class(const Reply& r) {
  if (r.rcode == KNOT_RCODE_NXDOMAIN) return "nxdomain";
  if (r.is_referral()) return "referral";
  if (r.answer.empty()) return "nodata";
  return "positive";
}

void compare_sets(const std::string& sec, const std::vector<Record>& want, const std::vector<Record>& got,
                  std::vector<Mismatch>& out) {
  std::map<std::string, const Record*> w, g;
  for (const Record& r : want) w.emplace(r.key(), &r);
  for (const Record& r : got) g.emplace(r.key(), &r);
  std::set<std::string> reported;
  for (const auto& [k, r] : w) {
    const auto it = g.find(k);
    if (it == g.end()) {
      const std::string c = sec + " " + what(*r) + " missing";
      if (reported.insert(c).second) out.push_back({c, "knot has " + r->text() + ", dnsarena has not"});
      continue;
    }
    const Record& mine = *it->second;
    if (mine.ttl > r->ttl && reported.insert("ttl>").second)
      out.push_back({"TTL above knot's", mine.text() + ": knot TTL " + std::to_string(r->ttl)});
    if (mine.ttl == 0 && r->ttl > 0 && reported.insert("ttl0").second)
      out.push_back({"TTL 0 where knot's is not", mine.text() + ": knot TTL " + std::to_string(r->ttl)});
  }
  for (const auto& [k, r] : g)
    if (!w.count(k)) {
      const std::string c = sec + " " + what(*r) + " extra";
      if (reported.insert(c).second) out.push_back({c, "dnsarena has " + r->text() + ", knot has not"});
    }
}

std::uint16_t query_qtype(const std::vector<std::uint8_t>& query) {
  std::size_t i = KNOT_WIRE_HEADER_SIZE;
  while (i < query.size() && query[i] != 0) i += query[i] + 1u;
  return i + 2 < query.size() ? static_cast<std::uint16_t>(query[i + 1] << 8 | query[i + 2]) : 0;
}

}  // namespace

bool is_rfc8482_answer(const std::vector<std::uint8_t>& query, const Reply& want, const Reply& got) {
  constexpr std::uint16_t kAny = 255;
  if (query_qtype(query) != kAny || got.answer.empty()) return false;
  // One RRset (owner, type) and the RRSIGs over it, every record also in knotd's answer,
  // and fewer records than knotd's: a minimized answer, not a full one.
  const Record* first = nullptr;
  for (const Record& r : got.answer)
    if (r.type != kTypeRrsig) {
      first = &r;
      break;
    }
  if (!first || got.answer.size() >= want.answer.size()) return false;
  std::set<std::string> knot;
  for (const Record& r : want.answer) knot.insert(r.key());
  return std::all_of(got.answer.begin(), got.answer.end(), [&](const Record& r) {
    const bool same_rrset = r.owner == first->owner && (r.type == first->type ||
                                                        (r.type == kTypeRrsig && r.covered == first->type));
    return same_rrset && knot.count(r.key());
  });
}

std::string Record::key() const { return owner + " " + type_name(type) + " " + rdata; }
std::string Record::text() const { return owner + " " + std::to_string(ttl) + " " + type_name(type) + " " + rdata; }

bool Reply::is_referral() const {
  return answer.empty() && std::any_of(authority.begin(), authority.end(), [](auto& r) { return r.type == kTypeNs; }) &&
         std::none_of(authority.begin(), authority.end(), [](auto& r) { return r.type == kTypeSoa; });
}

std::uint32_t Reply::min_answer_ttl() const {
  std::uint32_t t = UINT32_MAX;
  for (const Record& r : answer) t = std::min(t, r.ttl);
  return t;
}

std::string rcode_name(unsigned rcode) {
  const knot_lookup_t* l = knot_lookup_by_id(knot_rcode_names, static_cast<int>(rcode));
  return l ? l->name : "RCODE" + std::to_string(rcode);
}

Reply parse_reply(const std::vector<std::uint8_t>& wire) {
  Reply r;
  r.wire = wire;
  if (wire.size() < 12) return r;
  r.answered = true;
  r.id = static_cast<std::uint16_t>(wire[0] << 8 | wire[1]);
  r.flags = static_cast<std::uint16_t>(wire[2] << 8 | wire[3]);
  r.rcode = wire[3] & 0x0F;
  std::vector<std::uint8_t> copy = wire;
  const auto [pkt, rc] = dns::parse_in_place(copy.data(), copy.size());
  if (!pkt || rc != KNOT_EOK) return r;
  r.parsed = true;
  if (knot_wire_get_qdcount(wire.data()) == 1)
    r.question.assign(wire.begin() + KNOT_WIRE_HEADER_SIZE,
                      wire.begin() + KNOT_WIRE_HEADER_SIZE + pkt->qname_size + 4);
  r.rcode = knot_pkt_ext_rcode(pkt.get());
  r.opt = pkt->opt_rr != nullptr;
  r.opt_do = r.opt && knot_edns_do(pkt->opt_rr);
  r.answer = section(pkt.get(), KNOT_ANSWER);
  r.authority = section(pkt.get(), KNOT_AUTHORITY);
  r.additional = section(pkt.get(), KNOT_ADDITIONAL);
  return r;
}

std::vector<Mismatch> compare_replies(const std::vector<std::uint8_t>& query, const QueryShape& shape,
                                      const Reply& want, const Reply& want_full, const Reply& got) {
  std::vector<Mismatch> out;
  if (!got.answered) return {{"no reply", "knot: " + rcode_name(want.rcode) + ", dnsarena: nothing in 2 s"}};
  if (!got.parsed) return {{"unparsable reply", std::to_string(got.wire.size()) + " bytes libknot refuses"}};
  if (got.id != want.id) out.push_back({"id", "got " + std::to_string(got.id)});
  std::size_t qend = KNOT_WIRE_HEADER_SIZE;  // the query's question: its name, type, class
  while (qend < query.size() && query[qend] != 0) qend += query[qend] + 1u;
  qend = std::min(query.size(), qend + 5);
  const std::vector<std::uint8_t> asked(query.begin() + KNOT_WIRE_HEADER_SIZE, query.begin() + static_cast<long>(qend));
  if (got.question != asked)
    out.push_back({"question not echoed byte-exact", "question section differs from the query's"});
  constexpr std::uint16_t kCompared = 0x8000 /*QR*/ | 0x7800 /*opcode*/ | 0x0100 /*RD*/;
  if ((got.flags & kCompared) != (want.flags & kCompared))
    out.push_back({"header flags (QR/opcode/RD)", "knot flags " + std::to_string(want.flags) + ", dnsarena " +
                                                      std::to_string(got.flags)});
  // NOTE: CD against the query, not knotd: knotd 3.2 clears it in every reply, where a
  // resolver copies it (RFC 4035 3.2.2).
  constexpr std::uint16_t kCd = 0x0010;
  if ((got.flags & kCd) != (static_cast<std::uint16_t>(query[2] << 8 | query[3]) & kCd))
    out.push_back({"CD not copied from the query", "dnsarena flags " + std::to_string(got.flags)});
  if (got.opt != shape.edns || got.opt != want.opt)
    out.push_back({"OPT present iff the query had EDNS", std::string("knot OPT ") + (want.opt ? "yes" : "no") +
                                                             ", dnsarena " + (got.opt ? "yes" : "no")});
  else if (got.opt_do != want.opt_do)
    out.push_back({"OPT DO bit differs", std::string("knot DO ") + (want.opt_do ? "1" : "0")});
  // The pair of rcodes names the category: each wrong rcode is its own defect. The
  // records of a reply with the wrong rcode are not compared (they follow from it).
  // NOTE: knotd's own TC reply may say NOERROR where its full answer says NXDOMAIN (it
  // stops before the chain's end): the reference is the untruncated reply.
  const unsigned rcode = want_full.parsed ? want_full.rcode : want.rcode;
  const bool rcode_differs = got.rcode != rcode;
  if (rcode_differs)
    out.push_back({std::string(got.tc() ? "rcode in a TC reply" : "rcode") +
                       (query_qtype(query) == 255 ? " (ANY)" : "") + ": knot " + rcode_name(rcode) + ", dnsarena " +
                       rcode_name(got.rcode),
                   "knot " + rcode_name(rcode) + (want_full.tc() ? " TC" : "") + ", dnsarena " +
                       rcode_name(got.rcode) + (got.tc() ? " TC" : "")});
  if (got.wire.size() > shape.limit())
    out.push_back({"reply over the client's size",
                   std::to_string(got.wire.size()) + " > " + std::to_string(shape.limit()) + " bytes"});
  if (got.tc()) {
    if (shape.tcp)
      out.push_back({"TC over TCP", "knot " + std::to_string(want.wire.size()) + " bytes untruncated"});
    else if (!want.tc())  // split by size: 1232 is what a forwarder usually asks upstream with
      out.push_back({want.wire.size() > 1232 ? "spurious TC (knot's answer fits; > 1232 bytes)"
                                             : "spurious TC (knot's answer fits; <= 1232 bytes)",
                     "knot " + std::to_string(want.wire.size()) + " bytes untruncated <= " +
                         std::to_string(shape.limit()) + ", dnsarena TC"});
    return out;
  }
  if (rcode_differs || (want.tc() && want_full.tc())) return out;  // see above; nothing untruncated
  if (is_rfc8482_answer(query, want_full, got)) {
    // ANY over UDP answered with one of knotd's RRsets (RFC 8482 4.1): allowed; a DO
    // client of a signed zone must still get that RRset's RRSIGs to validate it.
    const Record& rrset = *std::find_if(got.answer.begin(), got.answer.end(),
                                        [](const Record& r) { return r.type != kTypeRrsig; });
    auto signs_it = [&](const Record& r) {
      return r.type == kTypeRrsig && r.covered == rrset.type && r.owner == rrset.owner;
    };
    const bool knot_signed = std::any_of(want_full.answer.begin(), want_full.answer.end(), signs_it);
    if (shape.do_bit && knot_signed && std::none_of(got.answer.begin(), got.answer.end(), signs_it))
      out.push_back({"ANY: one RRset without its RRSIG to DO", "dnsarena " + rrset.text()});
  } else {
    compare_sets("answer", want_full.answer, got.answer, out);
  }
  compare_sets("authority (" + answer_class(want_full) + ")", want_full.authority, got.authority, out);
  // Additional: dnsarena may leave out what knotd adds (see the header), never add.
  std::set<std::string> knot_additional;
  for (const Record& r : want_full.additional) knot_additional.insert(r.key());
  for (const Record& r : got.additional)
    if (!knot_additional.count(r.key())) {
      out.push_back({"additional " + what(r) + " extra", "dnsarena has " + r.text() + ", knot has not"});
      break;
    }
  if (want_full.is_referral()) {
    const std::size_t before = out.size();
    compare_sets("referral glue", glue(want_full), glue(got), out);
    for (std::size_t i = before; i < out.size(); ++i)  // glue has no RRSIG/NSEC: drop "records"
      if (out[i].category.rfind("referral glue", 0) == 0)
        out[i].category = out[i].category.find("missing") != std::string::npos ? "referral glue missing"
                                                                                 : "referral glue extra";
  }
  return out;
}

}  // namespace dnsarena::interop

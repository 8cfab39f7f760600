// SPDX-License-Identifier: GPL-3.0-or-later
// Replies of the differential test, parsed with libknot and compared.
//
// Purpose: turn two replies to the same query, knotd's (the reference) and dnsarena's,
// into a list of named mismatches. A category names one property, so that each defect
// shows as its own row of the report:
//
//   header       "no reply", "unparsable reply", "id", "question not echoed byte-exact",
//                "header flags (QR/opcode/RD)", "CD not copied from the query" (knotd
//                clears CD, a resolver copies it: the query is the reference)
//   rcode        "rcode: knot X, dnsarena Y", "rcode in a TC reply: knot X, dnsarena Y",
//                "rcode (ANY): ..." for qtype ANY
//   EDNS         "OPT present iff the query had EDNS", "OPT DO bit differs"
//   size         "spurious TC (knot's answer fits; <= 1232 bytes)" (dnsarena's reply is
//                bigger than knot's: compression), "... > 1232 bytes)" (more than a
//                forwarder asks upstream with: its upstream TC), "TC over TCP",
//                "reply over the client's size"
//   records      "<section> <what> missing|extra", <what> = records | RRSIG(<type>) | NSEC | NSEC3;
//                answer and authority compared as sets of (owner case aside, type, rdata);
//                authority is qualified by knotd's kind of answer: "authority (nxdomain)",
//                (nodata), (referral), (positive: a wildcard's proof, say)
//   glue         "referral glue missing|extra" (see below), "additional <what> extra"
//   TTL          "TTL above knot's", "TTL 0 where knot's is not"
//   ANY          an RFC 8482 answer (one of knotd's RRsets and the RRSIGs over it, fewer
//                records than knotd's) is accepted in place of knotd's answer; a DO
//                query in a signed zone must still get that RRset's RRSIGs ("ANY: one
//                RRset without its RRSIG to DO"); rcode and authority compared as usual
//
// What is not compared, and why: AA and RA (knotd is authoritative, dnsarena a recursive
// forwarder); AD (neither sets it here); records knotd has in the additional section
// and dnsarena has not, outside referrals (knotd adds the addresses of NS/MX/SRV/HTTPS
// targets and their RRSIGs, which dnsarena drops by design: it keeps glue only; 760 such
// differences in the CI run, all optional data). Records dnsarena adds are always
// mismatches. For a referral, glue is the A/AAAA records owned by an NS target in
// authority: a resolver behind dnsarena needs them, so their sets must be equal.
// NOTE: the record comparison is skipped when dnsarena's reply is truncated (a TC reply
// carries what fits, and the test retries over TCP); it uses knotd's TCP reply when
// only knotd's UDP reply was truncated.
//
// Cost: one knot_pkt_parse and a text dump per record; nothing is kept between calls.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tests/interop/wire_query.hpp"

namespace dnsarena::interop {

struct Record {
  std::string owner;  // lowercase presentation form
  std::uint16_t type = 0;
  std::uint16_t covered = 0;  // RRSIG: the type covered
  std::uint32_t ttl = 0;
  std::string rdata;  // presentation form (lowercase for NS, CNAME, SOA, PTR, MX)
  std::string key() const;  // owner, type, rdata: what set comparison uses
  std::string text() const; // for reports
};

struct Reply {
  bool answered = false;
  bool parsed = false;
  std::vector<std::uint8_t> wire;
  std::uint16_t id = 0;
  std::uint16_t flags = 0;  // header bytes 2-3
  unsigned rcode = 0;       // extended (OPT included)
  std::vector<std::uint8_t> question;  // the question section's bytes
  bool opt = false;
  bool opt_do = false;
  std::vector<Record> answer, authority, additional;  // OPT not included

  bool tc() const { return (flags & 0x0200) != 0; }
  bool is_referral() const;  // no answer, NS in authority, no SOA
  std::uint32_t min_answer_ttl() const;  // UINT32_MAX without answer records
};

Reply parse_reply(const std::vector<std::uint8_t>& wire);  // wire empty: not answered

struct Mismatch {
  std::string category;
  std::string detail;  // what knot said vs what dnsarena said
};

// `query`: the query both got; `want`: knotd's reply to it; `want_full`: knotd's reply
// untruncated (want itself, or its TCP reply when want has TC); `got`: dnsarena's.
std::vector<Mismatch> compare_replies(const std::vector<std::uint8_t>& query, const QueryShape& shape,
                                      const Reply& want, const Reply& want_full, const Reply& got);

std::string rcode_name(unsigned rcode);

// True when `got` answers an ANY query with one RRset of knotd's (`want`) answer and the
// RRSIGs over it, and fewer records than knotd (RFC 8482 4.1, dnsarena over UDP).
bool is_rfc8482_answer(const std::vector<std::uint8_t>& query, const Reply& want, const Reply& got);

}  // namespace dnsarena::interop

// SPDX-License-Identifier: GPL-3.0-or-later
// The response policy applied to an answer's CNAME chain, as BIND and Unbound apply QNAME
// triggers: the query name is checked before the cache (workers/policy_gate.hpp); this
// checks the names the answer walks through, whether it came from the cache or upstream.
//
// What is checked, in the answer section's order, on the response as written for the
// client (cache/response_writer.hpp: one question, the OPT record last):
//   CNAME            its target (unless the query asked for the CNAME itself: the client
//                    follows nothing then)
//   DNAME            the name it substitutes for the chain's current name (the owner's
//                    suffix replaced by the target); checked with the CNAME that follows,
//                    which every DNAME answer carries (RFC 6672 section 3.1), or alone
//   other records    an owner that is neither the query name nor the chain's current name
//                    (a record outside the chain)
// A DNAME's own owner is a parent of the chain's name, not a name of the chain: it is not
// checked. The first name that matches a rule decides, as in BIND; a PASSTHRU match ends
// the checks and the answer stands. Then the addresses of its A and AAAA records against
// the rpz-ip triggers (PolicyView::find_address; skipped when none is compiled): the
// rule of the lowest zone among them rewrites the whole answer (no record of it stays),
// owned by the query name. A PASSTHRU on the query name exempts the whole answer.
//
// The rewrite, as RPZ defines it for a CNAME chain (draft-vixie-dnsop-dns-rpz section 6):
// the chain up to the matched name stays (its records as written), then
//   nxdomain     NXDOMAIN, the zone's SOA                              EDE 15
//   nodata       NOERROR, the zone's SOA                               EDE 15
//   local_data   NOERROR, the rule's records of the query type owned   EDE 17
//                by the matched name (its SOA when none)
//   refuse       REFUSED, no records                                   EDE 18
//   drop         no answer at all
// Authority and additional records go, the OPT stays (ECS, COOKIE and any EDE the answer
// had kept) with the EDE added; AD is cleared (the answer is no longer the upstream's).
//
// Cost: an answer whose records are all owned by the query name (a compression pointer to
// the question, as the writer emits it) and none is a CNAME or DNAME costs a read of two
// bytes, the type and the rdlength per record, and no lookup: the hit path stays as it
// was. Each chain name costs one PolicyView::find (decompressing the name: at most 255
// bytes, pointers only backwards).
#pragma once
#include <cstddef>
#include <cstdint>

#include "policy/policy_view.hpp"
#include "wire/constants.hpp"

namespace dnsarena::policy {

struct ChainVerdict {
  Match match;           // the rule that matched (none: the answer stands as written)
  bool decided = false;  // the rule rewrote or dropped the answer (false for PASSTHRU)
  std::size_t size = 0;  // the answer's size now (0 when decided: dropped)
};

// False when the answer in out[0, size) has nothing for check_answer_chain to look up:
// every answer record owned by the query name (the writer's pointer to the question), none
// a CNAME or DNAME, and no rpz-ip trigger loaded (or not NOERROR / NXDOMAIN, or no
// answer). Inline: it is the whole cost of such an answer, which is most hits.
inline bool answer_needs_check(const PolicyView& view, const std::uint8_t* out, std::size_t size,
                               std::size_t qname_len) {
  using wire::get16;
  if (size < wire::kHeaderBytes || view.rules() == 0) return false;
  const unsigned answers = get16(out + 6);
  const unsigned rcode = out[3] & 0xF;
  if (answers == 0 || (rcode != wire::kRcodeNoError && rcode != wire::kRcodeNxDomain)) return false;
  if (view.has_address_triggers(TriggerKind::response_ip)) return true;
  std::size_t pos = wire::kHeaderBytes + qname_len + 4;
  for (unsigned i = 0; i < answers; ++i) {
    if (pos + 12 > size || out[pos] != 0xC0 || out[pos + 1] != wire::kHeaderBytes) return true;
    const std::uint16_t type = get16(out + pos + 2);
    if (type == wire::kTypeCname || type == wire::kTypeDname) return true;
    pos += 12 + get16(out + pos + 10);
  }
  return false;
}

// Checks the answer in out[0, size) against `view` and rewrites it in place when a rule
// decides. `qtype`, `qname_len`: the query's type (which local data answers) and the wire
// length of its name (the answer's question); `limit`: the client's answer size limit
// (<= cap). A malformed answer is left as it is.
ChainVerdict check_answer_chain(const PolicyView& view, std::uint16_t qtype, std::size_t qname_len,
                                std::size_t limit, std::uint8_t* out, std::size_t size, std::size_t cap);

}  // namespace dnsarena::policy

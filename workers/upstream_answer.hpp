// SPDX-License-Identifier: GPL-3.0-or-later
// An upstream server's response, checked and turned into a cache::Answer.
//
// Purpose: the only place where untrusted upstream bytes become something we cache. The
// response is parsed with libknot (names decompressed to wire form), matched against the
// query we sent, scrubbed, and given a TTL:
//
//   match       QR set, opcode QUERY, the ID we sent, exactly one question equal byte
//               for byte to ours (the name's 0x20 case included), and, when we sent
//               ECS, an ECS reply for the same family,
//               source prefix and address (RFC 7871 7.3). Else: ignored (keep waiting),
//               except a reply that differs from ours only in the name's case:
//               case_mismatch (the caller's 0x20 fallback).
//   scrub       records of a class other than IN, and records owned by names outside the
//               forward zone the upstream was asked for, are dropped everywhere.
//               answer: the chain from the qname: records owned by the qname or by a
//               CNAME target reached from it, of the asked type or CNAME; DNAMEs above a
//               chain name (RFC 6672); RRSIGs of those owners. For qtype CNAME and ANY
//               the chain is not followed (the CNAME is the answer).
//               authority: the SOA and NS owned by the chain's end or an ancestor of it,
//               DS at such an NS, and the DNSSEC proofs (NSEC, NSEC3, RRSIG) owned by
//               names at or below the answering zone's apex (the SOA owner, or the
//               signer of the RRSIGs in the response, the shortest that is an ancestor).
//               additional: address records of NS targets kept in authority, at or below
//               the apex (glue). OPT and TSIG never.
//               RRSIG, NSEC and NSEC3 are kept for DO queries only (unless asked for).
//               private_address (private_address.hpp): A and AAAA records of public
//               names with an address of the operator's networks are removed (an RRset
//               left empty is not kept), and the answer loses AD.
//   TTLs        a TTL with the top bit set counts as 0 (RFC 2181 section 8); every TTL
//               clamped to [floor, ceiling] (the floor is the operator's override: with
//               floor 0, a TTL-0 record is never cached). A negative answer's SOA gets
//               min(SOA TTL, SOA MINIMUM) capped by the negative ceiling (RFC 2308 5).
//               The entry's TTL is the smallest TTL of every record it keeps, so no hit
//               ever carries a record whose own TTL ran out.
//   cacheable   not truncated, entry TTL > 0, and one of: the asked data (positive);
//               NXDOMAIN or NODATA with an SOA (RFC 2308: without one, not cached); a
//               CNAME chain that leaves the upstream's data (NOERROR, no SOA: the chain
//               as given); a referral (NS in authority, nothing in answer).
//   other rcode SERVFAIL, REFUSED, NOTIMP, FORMERR...: a failed attempt (next upstream).
//
// Costs: one knot_pkt_parse, then linear passes over the records (the chain pass repeats
// at most 16 times for out-of-order chains). Spans in answer() point into the parsed
// packet, which lives as long as this object.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "cache/entry_codec.hpp"
#include "dns/ecs_option.hpp"
#include "dns/knot_packet.hpp"
#include "workers/private_address.hpp"

namespace dnsarena::workers {

struct TtlPolicy {
  std::uint32_t floor = 0;
  std::uint32_t ceiling = 86400;
  std::uint32_t negative_ceiling = 3600;
};

// What we asked, to match the reply against.
struct UpstreamQuestion {
  std::uint16_t id = 0;
  std::span<const std::uint8_t> qname;  // wire form as sent (random case with 0x20)
  std::uint16_t qtype = 0;
  bool do_bit = false;                  // DNSSEC records were asked for
  dns::EcsOption ecs;                   // as sent (present = false: none sent)
  std::span<const std::uint8_t> zone;   // the forward zone asked: records outside it are
                                        // scrubbed (empty or ".": every name)
  bool trust_ad = false;                // the zone's upstreams may set AD (else it is cleared)
};

class UpstreamAnswer {
public:
  enum class Verdict {
    accept,  // a usable answer (see cacheable())
    ignore,  // not the reply to our question (or unparsable): keep waiting
    fail,    // the server answered, but with an error: try the next upstream
    case_mismatch,  // our reply in all but the name's case (0x20): a server that does
                    // not preserve case (upstream_client.hpp: the fallback)
  };

  Verdict parse(const std::uint8_t* wire, std::size_t len, const UpstreamQuestion& asked, const TtlPolicy& ttl);
  // The rebinding filter every later parse applies (nullptr or one not enabled(): none).
  // REQUIRES: `p` outlives this object.
  void set_private_addresses(const PrivateAddresses* p) { private_ = p && p->enabled() ? p : nullptr; }

  const cache::Answer& answer() const { return answer_; }
  bool cacheable() const { return cacheable_; }
  bool truncated() const { return truncated_; }
  bool negative() const { return negative_; }
  // The ECS scope the server gave (0: for every client); may exceed the source we sent.
  std::uint8_t ecs_scope() const { return ecs_scope_; }
  std::uint16_t rcode() const { return rcode_; }
  // Records the private_address filter removed from the last accepted answer.
  unsigned private_removed() const { return private_removed_; }

private:
  enum class Match { no, case_only, exact };
  Match matches(const UpstreamQuestion& asked) const;
  bool in_zone(const std::uint8_t* owner) const;
  bool read_ecs_scope(const UpstreamQuestion& asked);
  void select_answer(const UpstreamQuestion& asked);
  void select_authority(const UpstreamQuestion& asked);
  void select_additional();
  void build(const TtlPolicy& ttl);
  // Whether the private_address filter applies to `rr` (A or AAAA of a public name).
  bool filtered(const knot_rrset_t* rr) const;
  // Whether every record of `rr` is one the filter removes (the RRset is then not kept).
  bool all_private(const knot_rrset_t* rr) const;

  std::vector<std::uint8_t> wire_;  // libknot parses in place
  dns::KnotPkt pkt_;
  std::vector<cache::RecordData> records_[3];
  std::vector<const knot_rrset_t*> kept_[3];  // per section, in packet order
  std::vector<const std::uint8_t*> chain_;    // qname, then each CNAME target
  const knot_rrset_t* soa_ = nullptr;          // the negative answer's SOA
  const std::uint8_t* apex_ = nullptr;         // the answering zone, as far as the reply tells
  const std::uint8_t* zone_ = nullptr;         // the forward zone asked (nullptr: the root)
  bool have_final_ = false;                    // the asked data is at the chain's end
  cache::Answer answer_{};
  bool cacheable_ = false;
  bool truncated_ = false;
  bool negative_ = false;
  std::uint8_t ecs_scope_ = 0;
  std::uint16_t rcode_ = 0;
  const PrivateAddresses* private_ = nullptr;
  unsigned private_removed_ = 0;
};

// Case-insensitive helpers over uncompressed wire names.
bool names_equal(const std::uint8_t* a, const std::uint8_t* b);
bool name_is_at_or_below(const std::uint8_t* name, const std::uint8_t* parent);

}  // namespace dnsarena::workers

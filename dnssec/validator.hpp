// SPDX-License-Identifier: GPL-3.0-or-later
// dnssec/: DNSSEC validation (RFC 4033-4035, RFC 5155, RFC 6840) for the workers'
// forwarding mode and the recursive mode alike. This header is the entry point; the
// module's files, one responsibility each:
//
//   verdict.hpp          secure / insecure / bogus / indeterminate and the RFC 8914 EDE
//   limits.hpp           bounds on one validation's work (KeyTrap, NSEC3 floods), counters
//   rrset.hpp            RRsets in canonical form with their RRSIGs; reading a response
//                        (wire, or records one by one: SectionBuilder)
//   zone_keys.hpp        a zone's DNSKEYs imported, RRSIG verification
//   openssl_verify.hpp   DNSKEY -> EVP_PKEY, signature verification (OpenSSL 3 libcrypto;
//                        P-384 through libdnssec)
//   dnskey_trust.hpp     DS -> DNSKEY, anchor -> DNSKEY, the self-signed DNSKEY set
//   denial.hpp           NSEC (nsec_proof) and NSEC3 (nsec3_proof) denial proofs
//   response_check.hpp   the verdict on one response given the zones' trust
//   trust_anchors.hpp    anchor files (DS / DNSKEY in zone-file syntax), negative anchors
//   validator.hpp        this: the chain of trust as a resumable state machine
//
// The chain of trust without blocking. A Validation never does I/O: it says which set it
// needs next (a DNSKEY set or a DS set, by name), the caller fetches it however it can
// (its cache, or the upstream with DO and CD so that a validating upstream passes bogus
// data through for us to judge) and hands the response back; the Validation resumes. A
// worker's event loop keeps one per pending client answer.
//
//   Validation v(anchors, limits, now);
//   v.start(response);                        // the upstream's answer, parsed (rrset.hpp)
//   while (auto need = v.need()) {            // {name, DS or DNSKEY}
//     ... send a query (DO, CD) for need->name / need->type, return to the event loop ...
//     v.provide(&reply);                      // or provide(nullptr): no usable reply
//   }
//   v.outcome();  v.counters();               // verdict + EDE; the work it took
//
// The walk, for each zone the response needs (its RRSIG signers, or for unsigned data its
// owner; response_check.hpp zones_to_establish): start at the closest trust anchor
// (negative anchor: insecure at once; no anchor: indeterminate), trust its DNSKEY set
// (dnskey_trust.hpp), then go down one label at a time towards the zone: ask the DS set of
// the next name. A signed DS set leads to that name's DNSKEY set; a signed denial shows
// an insecure cut (the zone and all below are insecure) or no cut at all (next label);
// anything else is bogus, and stops the walk. Zones already established for this
// response are reused, so a CNAME chain within one zone costs its DNSKEY once.
//
// Cost: one DNSKEY and one DS fetch per zone cut between the anchor and the data (the
// caller's cache absorbs the repeats) and two verifications per cut, each DNSKEY set
// imported into OpenSSL once per Validation; with the zones seeded (trust_secure), one
// verification per set of the response. Steps are bounded by the labels of the names involved (at most 127 each)
// and by kMaxSteps; the crypto by the Budget (limits.hpp), shared by the whole Validation.
#pragma once
#include <cstdint>
#include <optional>
#include <set>

#include "dnssec/limits.hpp"
#include "dnssec/response_check.hpp"
#include "dnssec/rrset.hpp"
#include "dnssec/trust_anchors.hpp"
#include "dnssec/verdict.hpp"

namespace dnsarena::dnssec {

struct Need {
  Bytes name;  // lowercase wire
  std::uint16_t type = 0;  // kTypeDs or kTypeDnskey
};

class Validation {
public:
  // At most this many fetches for one response (cuts along every name it touches).
  static constexpr unsigned kMaxSteps = 64;

  // REQUIRES: `anchors` outlives the Validation (it is read at every step, not copied).
  // `now`: the validation time, seconds since the epoch (RRSIG windows, serial arithmetic).
  Validation(const TrustAnchors& anchors, const Limits& limits, std::uint32_t now);

  // Seeds what an earlier Validation established (its zones()): a secure zone with its
  // DNSKEY set, or an insecure one. The walk then starts below it, so a worker that keeps
  // the zones its validations established (a key cache, bounded by the DNSKEY sets' TTL)
  // verifies one RRSIG per miss instead of the whole chain. REQUIRES: before start(); the
  // caller vouches for it (only what a Validation concluded, not expired).
  void trust_secure(const Bytes& zone, const std::vector<Bytes>& dnskeys);
  void trust_insecure(const Bytes& zone, const Outcome& why);

  void start(Response response);
  const std::optional<Need>& need() const { return need_; }
  // The reply to need(); nullptr when none came (timeout, network error): the walk stops
  // bogus, never insecure (a blocked fetch must not downgrade the answer).
  void provide(const Response* reply);

  bool finished() const { return finished_; }
  const Outcome& outcome() const { return outcome_; }
  const WorkCounters& counters() const { return budget_.counters(); }
  unsigned steps() const { return steps_; }
  // What the walk learned: every zone established (secure with keys, or insecure). A
  // secure zone's outcome.max_ttl: how long it may be kept (its DNSKEY and DS RRSIGs'
  // original TTLs and expirations), the bound of a worker's key cache.
  const ZoneTrustMap& zones() const { return zones_; }
  // The response given to start(), as read (its sets verified when the outcome is secure).
  const Response& response() const { return response_; }

private:
  void advance();
  void finish(const Outcome& o);
  bool fail(const Outcome& o);  // finish(o); false
  // Each takes the reply to need(); true when it set the next need itself.
  bool on_dnskey(const Response* reply);
  bool on_ds(const Response* reply);

  const TrustAnchors& anchors_;
  Budget budget_;
  std::uint32_t now_;
  Response response_;
  std::vector<Bytes> targets_;
  ZoneTrustMap zones_;
  std::set<Bytes> no_cut_;   // names proven inside their parent's zone
  std::optional<Need> need_;
  std::vector<Bytes> pending_ds_, pending_anchor_keys_;  // for the DNSKEY set asked for
  std::uint32_t pending_ds_max_ttl_ = UINT32_MAX;        // how long that DS set may be kept
  Bytes parent_;             // the established zone the DS question goes to
  unsigned steps_ = 0;
  bool finished_ = false;
  Outcome outcome_;
};

}  // namespace dnsarena::dnssec

// SPDX-License-Identifier: GPL-3.0-or-later
// A zone's DNSKEYs prepared for verification, and RRSIG verification against them
// (RFC 4034 sections 3.1.8.1 and 6, RFC 4035 section 5.3).
//
// ZoneKeys reads each DNSKEY once (its key tag, from libdnssec) and imports its public key
// into OpenSSL the first time a verification tries it (openssl_verify.hpp imported_key:
// the worker's cache of EVP_PKEYs), so an RRSIG check is a tag lookup and one OpenSSL
// verification, and a DNSKEY set of hundreds of keys costs imports only for the keys the
// Budget lets a signature try. Keys with an algorithm outside the supported set (8, 10,
// 13, 14, 15, 16: RFC 8624), a protocol other than 3, without the Zone Key flag, or whose
// public key field has lengths outside the RFC's are kept out: no RRSIG may use them. A
// key OpenSSL refuses at import (a point not on the curve) verifies nothing: the RRSIG
// fails as a bad signature would (EDE 6), as it did through libdnssec, which accepts such
// points and fails their signatures.
//
// verify_rrset, for one RRset and its RRSIGs, checks each RRSIG in turn (RFC 4035 5.3.1):
// type covered, signer == the zone, owner at or below the signer, labels field not above
// the owner's label count, the validity window in serial arithmetic (RFC 4034 3.1.5),
// then every key of that tag and algorithm (at most Limits::max_key_tag_collisions), each
// try one verification taken from the Budget. The first RRSIG that verifies makes the set
// secure. When none does, the outcome names the most telling failure: expired (7) or not
// yet valid (8) when a signature would otherwise have been tried, no key of that tag (9),
// no RRSIG at all (10), else DNSSEC Bogus (6).
//
// Wildcards: an RRSIG whose labels field is below the owner's label count signed
// "*." + the owner's rightmost `labels` labels; the signed data is rebuilt so, and the
// outcome reports the expansion (Verified::wildcard_labels) for the caller, who must then
// prove that the next closer name does not exist (RFC 4035 5.3.4, nsec_proof.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dnssec/limits.hpp"
#include "dnssec/openssl_verify.hpp"
#include "dnssec/rrset.hpp"
#include "dnssec/verdict.hpp"

namespace dnsarena::dnssec {

bool algorithm_supported(std::uint8_t algorithm);
bool digest_supported(std::uint8_t digest_type);

class ZoneKeys {
public:
  ZoneKeys() = default;
  // Revoked keys (the RFC 5011 REVOKE bit) never verify data; only the check that a
  // revoked key signed its own revocation (autotrust.hpp) takes them.
  enum class RevokedKeys { skip, include };
  // `zone`: lowercase wire name; `dnskeys`: DNSKEY RDATA. Unusable keys are skipped.
  ZoneKeys(Bytes zone, const std::vector<Bytes>& dnskeys, RevokedKeys revoked = RevokedKeys::skip);
  ~ZoneKeys();
  ZoneKeys(ZoneKeys&&) noexcept;
  ZoneKeys& operator=(ZoneKeys&&) noexcept;
  ZoneKeys(const ZoneKeys&) = delete;
  ZoneKeys& operator=(const ZoneKeys&) = delete;

  const Bytes& zone() const { return zone_; }
  std::size_t size() const { return keys_.size(); }
  // The RDATA of the usable keys (what trust_secure needs to rebuild them).
  std::vector<Bytes> rdata() const;
  // Keeps only the keys whose RDATA is in `rdata` (the ones a DS or anchor matched).
  void keep_only(const std::vector<Bytes>& rdata);

  // REQUIRES: one thread at a time uses a ZoneKeys (verify_rrset fills `key` on first use).
  struct Key {
    mutable PublicKey key;  // imported into OpenSSL when a verification first tries it
    mutable bool imported = false;
    std::uint16_t tag = 0;
    std::uint8_t algorithm = 0;
    Bytes rdata;
  };
  const std::vector<std::unique_ptr<Key>>& keys() const { return keys_; }

private:
  Bytes zone_;
  std::vector<std::unique_ptr<Key>> keys_;
};

struct Verified {
  Outcome outcome;
  int wildcard_labels = -1;  // the RRSIG labels field when it proved a wildcard expansion
  const Bytes* key_rdata = nullptr;  // the key that verified (points into ZoneKeys)
  std::uint32_t max_ttl = UINT32_MAX;  // secure: min(original TTL, expiration - now) of that RRSIG
};

// REQUIRES: rrset.owner at or below keys.zone() (else the outcome is bogus).
Verified verify_rrset(const Rrset& rrset, const ZoneKeys& keys, std::uint32_t now, Budget& budget);

// The data an RRSIG signs (RFC 4034 3.1.8.1): RRSIG RDATA without the signature, then the
// records in canonical order with `owner` (the wildcard form when labels says so) and the
// original TTL. Exposed for tests and the benchmark.
Bytes signed_data(const Rrset& rrset, const RrsigFields& sig, std::span<const std::uint8_t> rrsig_rdata);

}  // namespace dnsarena::dnssec

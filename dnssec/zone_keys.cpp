// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/zone_keys.hpp"

#include "common/bytes.hpp"
#include "dnssec/c_libraries.hpp"
#include "dnssec/verified_signatures.hpp"

#include <algorithm>

namespace dnsarena::dnssec {

namespace {

// RFC 1982 serial arithmetic: a <= b.
bool serial_le(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(b - a) >= 0; }

}  // namespace

bool algorithm_supported(std::uint8_t a) {
  switch (a) {
    case 8: case 10: case 13: case 14: case 15: case 16:
      return openssl_algorithm_supported(a);
    default:
      return false;
  }
}

bool digest_supported(std::uint8_t d) { return d == 1 || d == 2 || d == 4; }

ZoneKeys::ZoneKeys(Bytes zone, const std::vector<Bytes>& dnskeys, RevokedKeys revoked) : zone_(std::move(zone)) {
  for (const Bytes& rd : dnskeys) {
    if (rd.size() < 5) continue;
    const std::uint16_t flags = static_cast<std::uint16_t>(rd[0] << 8 | rd[1]);
    if (!(flags & 0x0100) || rd[2] != 3 || !algorithm_supported(rd[3])) continue;
    if ((flags & 0x0080) && revoked == RevokedKeys::skip) continue;  // REVOKE (RFC 5011)
    if (!public_key_well_formed(rd[3], std::span<const std::uint8_t>(rd).subspan(4))) continue;
    auto k = std::make_unique<Key>();
    const dnssec_binary_t b{rd.size(), const_cast<std::uint8_t*>(rd.data())};
    if (dnssec_keytag(&b, &k->tag) != DNSSEC_EOK) continue;
    k->algorithm = rd[3];
    k->rdata = rd;
    keys_.push_back(std::move(k));
  }
}

ZoneKeys::~ZoneKeys() = default;
ZoneKeys::ZoneKeys(ZoneKeys&&) noexcept = default;
ZoneKeys& ZoneKeys::operator=(ZoneKeys&&) noexcept = default;

std::vector<Bytes> ZoneKeys::rdata() const {
  std::vector<Bytes> out;
  for (const auto& k : keys_) out.push_back(k->rdata);
  return out;
}

void ZoneKeys::keep_only(const std::vector<Bytes>& rdata) {
  std::erase_if(keys_, [&](const std::unique_ptr<Key>& k) {
    return std::find(rdata.begin(), rdata.end(), k->rdata) == rdata.end();
  });
}

Bytes signed_data(const Rrset& rrset, const RrsigFields& sig, std::span<const std::uint8_t> rrsig_rdata) {
  Bytes out(rrsig_rdata.begin(), rrsig_rdata.begin() + static_cast<std::ptrdiff_t>(sig.fixed_length));
  // The signer inside the copied RDATA is already lowercase (rrset.hpp: canonical form).
  Bytes owner = rrset.owner;
  const unsigned owner_labels = label_count(rrset.owner);
  if (sig.labels < owner_labels) owner = wildcard_of(strip_labels(rrset.owner, owner_labels - sig.labels));
  std::vector<const Bytes*> sorted;
  for (const Bytes& rd : rrset.rdata) sorted.push_back(&rd);
  std::sort(sorted.begin(), sorted.end(), [](const Bytes* a, const Bytes* b) { return *a < *b; });
  for (const Bytes* rd : sorted) {
    out += owner;
    common::append_u16(out, rrset.type);
    common::append_u16(out, rrset.klass);
    common::append_u16(out, static_cast<std::uint16_t>(sig.original_ttl >> 16));
    common::append_u16(out, static_cast<std::uint16_t>(sig.original_ttl));
    common::append_u16(out, static_cast<std::uint16_t>(rd->size()));
    out += *rd;
  }
  return out;
}

Verified verify_rrset(const Rrset& rrset, const ZoneKeys& keys, std::uint32_t now, Budget& budget) {
  if (rrset.rrsigs.empty()) return {Outcome::bogus(Ede::rrsigs_missing, "no RRSIG covers the RRset")};
  if (!is_subdomain(rrset.owner, keys.zone())) return {Outcome::bogus(Ede::dnssec_bogus, "RRset outside the signer's zone")};
  bool expired = false, not_yet = false, no_key = false, tried = false, limit = false;
  const unsigned owner_labels = label_count(rrset.owner) - (is_wildcard(rrset.owner) ? 1u : 0u);
  for (const Bytes& rd : rrset.rrsigs) {
    const auto sig = parse_rrsig(rd);
    if (!sig || sig->type_covered != rrset.type || sig->signer != keys.zone() || sig->labels > owner_labels) continue;
    if (!algorithm_supported(sig->algorithm)) continue;
    const bool sig_expired = !serial_le(now, sig->expiration);
    const bool sig_not_yet = !serial_le(sig->inception, now);
    std::uint32_t candidates = 0;
    bool any_key = false;
    Bytes data;
    for (const auto& k : keys.keys()) {
      if (k->tag != sig->key_tag || k->algorithm != sig->algorithm) continue;
      any_key = true;
      if (sig_expired || sig_not_yet) break;
      if (++candidates > budget.limits().max_key_tag_collisions) {
        ++budget.counters().key_tag_collisions_skipped;
        continue;
      }
      if (!budget.take_signature_validation()) {
        limit = true;
        break;
      }
      if (data.empty()) data = signed_data(rrset, *sig, rd);
      tried = true;
      // A success already seen by this thread is not verified again (verified_signatures.hpp).
      VerifiedSignatures& memo = VerifiedSignatures::this_thread();
      VerifiedSignatures::Digest digest{};
      const bool keyed = VerifiedSignatures::digest(k->rdata, data, sig->signature, digest);
      const bool known = keyed && memo.contains(digest);
      if (!known && !k->imported) {
        k->key = imported_key(k->rdata);
        k->imported = true;
      }
      if (known || k->key.verify(data, sig->signature)) {
        if (keyed && !known) memo.remember(digest);
        Verified v{Outcome::secure()};
        if (sig->labels < owner_labels) v.wildcard_labels = sig->labels;
        v.key_rdata = &k->rdata;
        v.max_ttl = std::min(sig->original_ttl, sig->expiration - now);  // serial_le(now, expiration) held
        return v;
      }
    }
    if (!any_key) no_key = true;
    else if (sig_expired) expired = true;
    else if (sig_not_yet) not_yet = true;
    if (limit) break;
  }
  if (limit) return {Outcome::bogus(Ede::dnssec_bogus, "signature validation limit reached")};
  if (tried) return {Outcome::bogus(Ede::dnssec_bogus, "signature does not verify")};
  if (expired) return {Outcome::bogus(Ede::signature_expired, "RRSIG expired")};
  if (not_yet) return {Outcome::bogus(Ede::signature_not_yet_valid, "RRSIG not yet valid")};
  if (no_key) return {Outcome::bogus(Ede::dnskey_missing, "no DNSKEY matches the RRSIG")};
  return {Outcome::bogus(Ede::rrsigs_missing, "no usable RRSIG for the RRset")};
}

}  // namespace dnsarena::dnssec

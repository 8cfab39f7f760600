// SPDX-License-Identifier: GPL-3.0-or-later
#include "dnssec/dnskey_trust.hpp"

#include "dnssec/c_libraries.hpp"

#include <algorithm>

namespace dnsarena::dnssec {

namespace {

std::uint16_t key_tag_of(std::span<const std::uint8_t> dnskey) {
  const dnssec_binary_t b{dnskey.size(), const_cast<std::uint8_t*>(dnskey.data())};
  std::uint16_t tag = 0;
  dnssec_keytag(&b, &tag);
  return tag;
}

// The DNSKEY fields that identify a key: flags without REVOKE, protocol, algorithm, key.
bool same_key(const Bytes& a, const Bytes& b) {
  if (a.size() != b.size() || a.size() < 4) return false;
  return (a[0] == b[0]) && ((a[1] & ~0x80) == (b[1] & ~0x80)) && std::equal(a.begin() + 2, a.end(), b.begin() + 2);
}

}  // namespace

bool ds_matches_dnskey(std::span<const std::uint8_t> ds, std::span<const std::uint8_t> zone,
                       std::span<const std::uint8_t> dnskey) {
  if (ds.size() < 5) return false;
  dnssec_key_t* key = nullptr;
  if (dnssec_key_new(&key) != DNSSEC_EOK) return false;
  const dnssec_binary_t rd{dnskey.size(), const_cast<std::uint8_t*>(dnskey.data())};
  dnssec_binary_t out{};
  bool ok = dnssec_key_set_rdata(key, &rd) == DNSSEC_EOK && dnssec_key_set_dname(key, zone.data()) == DNSSEC_EOK &&
            dnssec_key_create_ds(key, static_cast<dnssec_key_digest_t>(ds[3]), &out) == DNSSEC_EOK;
  ok = ok && out.size == ds.size() && std::equal(ds.begin(), ds.end(), out.data);
  dnssec_binary_free(&out);
  dnssec_key_free(key);
  return ok;
}

std::optional<Outcome> unusable_ds_set(const std::vector<Bytes>& ds_rdata) {
  if (ds_rdata.empty()) return std::nullopt;
  bool alg_unsupported = false;
  for (const Bytes& ds : ds_rdata) {
    if (ds.size() < 5) continue;
    if (!algorithm_supported(ds[2])) alg_unsupported = true;
    else if (digest_supported(ds[3])) return std::nullopt;
  }
  if (alg_unsupported) return Outcome::insecure(Ede::unsupported_dnskey_algorithm, "no supported DNSKEY algorithm");
  return Outcome::insecure(Ede::unsupported_ds_digest_type, "no supported DS digest type");
}

KeySetTrust trust_dnskey_set(const Rrset& dnskey_set, const std::vector<Bytes>& ds_rdata,
                             const std::vector<Bytes>& anchor_dnskeys, std::uint32_t now, Budget& budget) {
  KeySetTrust r;
  // The keys allowed to vouch for the set: matched by a DS or equal to an anchor key.
  std::vector<Bytes> entry_keys;
  bool usable_ds = false, alg_unsupported = false, digest_unsupported = false;
  const bool has_strong_digest = std::any_of(ds_rdata.begin(), ds_rdata.end(), [](const Bytes& d) {
    return d.size() >= 4 && (d[3] == 2 || d[3] == 4) && algorithm_supported(d[2]);
  });
  // Key tags computed once: a hostile pair of sets (hundreds of DS, hundreds of keys)
  // then costs integer comparisons, not a checksum per pair.
  std::vector<std::uint16_t> tags;
  tags.reserve(dnskey_set.rdata.size());
  for (const Bytes& key : dnskey_set.rdata) tags.push_back(key_tag_of(key));
  for (const Bytes& ds : ds_rdata) {
    if (ds.size() < 5) continue;
    if (!algorithm_supported(ds[2])) {
      alg_unsupported = true;
      continue;
    }
    if (!digest_supported(ds[3])) {
      digest_unsupported = true;
      continue;
    }
    if (ds[3] == 1 && has_strong_digest) continue;
    usable_ds = true;
    const std::uint16_t tag = static_cast<std::uint16_t>(ds[0] << 8 | ds[1]);
    std::uint32_t candidates = 0;
    for (std::size_t k = 0; k < dnskey_set.rdata.size(); ++k) {
      const Bytes& key = dnskey_set.rdata[k];
      if (key.size() < 4 || key[3] != ds[2] || tags[k] != tag) continue;
      if (++candidates > budget.limits().max_key_tag_collisions) {
        ++budget.counters().key_tag_collisions_skipped;
        break;
      }
      if (ds_matches_dnskey(ds, dnskey_set.owner, key)) entry_keys.push_back(key);
    }
  }
  bool usable_anchor = false;
  for (const Bytes& anchor : anchor_dnskeys) {
    if (anchor.size() < 4 || !algorithm_supported(anchor[3])) {
      alg_unsupported = true;
      continue;
    }
    usable_anchor = true;
    for (const Bytes& key : dnskey_set.rdata)
      if (same_key(anchor, key)) entry_keys.push_back(key);
  }
  if (!usable_ds && !usable_anchor) {
    if (alg_unsupported) r.outcome = Outcome::insecure(Ede::unsupported_dnskey_algorithm, "no supported DNSKEY algorithm");
    else if (digest_unsupported) r.outcome = Outcome::insecure(Ede::unsupported_ds_digest_type, "no supported DS digest type");
    else r.outcome = Outcome::bogus(Ede::dnskey_missing, "no DS or anchor for the DNSKEY set");
    return r;
  }
  if (entry_keys.empty()) {
    r.outcome = Outcome::bogus(Ede::dnskey_missing, "no DNSKEY matches the DS set or anchor");
    return r;
  }
  ZoneKeys entry(dnskey_set.owner, entry_keys);
  if (entry.size() == 0) {
    r.outcome = Outcome::bogus(Ede::dnskey_missing, "the matched DNSKEY is not a usable zone key");
    return r;
  }
  const Verified v = verify_rrset(dnskey_set, entry, now, budget);
  if (v.outcome.verdict != Verdict::secure) {
    r.outcome = v.outcome;
    return r;
  }
  r.outcome = Outcome::secure();
  r.outcome.max_ttl = v.max_ttl;  // how long the trusted key set may be kept
  r.keys = ZoneKeys(dnskey_set.owner, dnskey_set.rdata);
  return r;
}

}  // namespace dnsarena::dnssec

// SPDX-License-Identifier: GPL-3.0-or-later
// The ZONEMD digest and its verification (zone_digest.hpp).
#include "dnssec/zone_digest.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "wire/constants.hpp"
#include "wire/dns_name.hpp"

namespace dnsarena::dnssec {

namespace {

const EVP_MD* zonemd_md(std::uint8_t hash) {
  switch (hash) {
    case kZonemdHashSha384: return EVP_sha384();
    case kZonemdHashSha512: return EVP_sha512();
    default: return nullptr;
  }
}

const char* zonemd_hash_name(std::uint8_t hash) {
  switch (hash) {
    case kZonemdHashSha384: return "SHA-384";
    case kZonemdHashSha512: return "SHA-512";
    default: return "unknown";
  }
}

// The SOA RDATA's serial (after MNAME and RNAME), or nullopt when malformed.
std::optional<std::uint32_t> serial_of_soa(std::span<const std::uint8_t> rd) {
  std::size_t at = 0;
  for (int name = 0; name < 2; ++name) {
    const std::size_t n = wire::wire_name_length(rd.subspan(at));
    if (n == 0) return std::nullopt;
    at += n;
  }
  if (rd.size() != at + 20) return std::nullopt;
  return (std::uint32_t{rd[at]} << 24) | (std::uint32_t{rd[at + 1]} << 16) | (std::uint32_t{rd[at + 2]} << 8) | rd[at + 3];
}

std::string hex_of(std::span<const std::uint8_t> b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(b.size() * 2);
  for (std::uint8_t c : b) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace

std::optional<Zonemd> parse_zonemd(std::span<const std::uint8_t> rdata) {
  if (rdata.size() < 6) return std::nullopt;
  Zonemd z;
  z.serial = (std::uint32_t{rdata[0]} << 24) | (std::uint32_t{rdata[1]} << 16) | (std::uint32_t{rdata[2]} << 8) | rdata[3];
  z.scheme = rdata[4];
  z.hash = rdata[5];
  z.digest.assign(rdata.begin() + 6, rdata.end());
  return z;
}

std::size_t zonemd_digest_length(std::uint8_t hash) {
  const EVP_MD* md = zonemd_md(hash);
  return md == nullptr ? 0 : static_cast<std::size_t>(EVP_MD_get_size(md));
}

const char* zonemd_status_name(ZonemdStatus s) {
  switch (s) {
    case ZonemdStatus::verified: return "verified";
    case ZonemdStatus::absent: return "absent";
    case ZonemdStatus::unsupported: return "unsupported";
    case ZonemdStatus::failed: return "failed";
  }
  return "?";
}

ZoneDigest::ZoneDigest(Bytes apex) : apex_(lowercase_name(apex)) {
  zonemd_.owner = apex_;
  zonemd_.type = kTypeZonemd;
}

void ZoneDigest::add(std::span<const std::uint8_t> owner, std::uint16_t type, std::uint16_t klass,
                     std::uint32_t ttl, std::span<const std::uint8_t> rdata) {
  Bytes o = lowercase_name(owner);
  if (!is_subdomain(o, apex_)) return;  // out-of-zone data (section 3.3.1)
  Bytes data = canonical_rdata(type, rdata);
  if (o == apex_ && type == kTypeZonemd) {  // the apex ZONEMD RRset is not digested
    zonemd_.ttl = ttl;
    zonemd_.rdata.push_back(std::move(data));  // duplicates dropped by sort_once()
    sorted_ = false;
    return;
  }
  if (o == apex_ && type == kTypeRrsig && data.size() >= 2 && ((data[0] << 8) | data[1]) == kTypeZonemd) {
    zonemd_.rrsigs.push_back(std::move(data));  // nor the signatures that cover it
    return;
  }
  if (o == apex_ && type == wire::kTypeSoa) soa_serial_ = serial_of_soa(data);
  records_.push_back(Record{std::move(o), type, klass, ttl, std::move(data)});
  sorted_ = false;
}

void ZoneDigest::sort_once() {
  if (sorted_) return;
  const auto order = [](const Record& a, const Record& b) {
    if (const int c = canonical_compare(a.owner, b.owner); c != 0) return c < 0;
    return std::tie(a.type, a.klass, a.rdata, a.ttl) < std::tie(b.type, b.klass, b.rdata, b.ttl);
  };
  std::sort(records_.begin(), records_.end(), order);
  // A record present twice is digested once (section 3.3.1): same owner, class, type and
  // RDATA; the lower TTL sorted first and stays.
  const auto same = [](const Record& a, const Record& b) {
    return a.type == b.type && a.klass == b.klass && a.rdata == b.rdata && a.owner == b.owner;
  };
  records_.erase(std::unique(records_.begin(), records_.end(), same), records_.end());
  // The apex ZONEMD set likewise: a record present twice is one record (O(n log n), so a
  // file of a million ZONEMD records costs a sort, not a quadratic search).
  std::sort(zonemd_.rdata.begin(), zonemd_.rdata.end());
  zonemd_.rdata.erase(std::unique(zonemd_.rdata.begin(), zonemd_.rdata.end()), zonemd_.rdata.end());
  sorted_ = true;
}

std::optional<Bytes> ZoneDigest::compute(std::uint8_t hash) {
  const EVP_MD* md = zonemd_md(hash);
  if (md == nullptr) return std::nullopt;
  sort_once();
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1) throw std::runtime_error("ZONEMD: OpenSSL digest init failed");
  Bytes rr;
  for (const Record& r : records_) {
    rr.assign(r.owner);
    common::append_u16(rr, r.type);
    common::append_u16(rr, r.klass);
    common::append_u32(rr, r.ttl);
    common::append_u16(rr, static_cast<std::uint16_t>(r.rdata.size()));
    rr += r.rdata;
    if (EVP_DigestUpdate(ctx.get(), rr.data(), rr.size()) != 1) throw std::runtime_error("ZONEMD: OpenSSL digest failed");
  }
  Bytes out(static_cast<std::size_t>(EVP_MD_get_size(md)), 0);
  unsigned n = 0;
  if (EVP_DigestFinal_ex(ctx.get(), out.data(), &n) != 1 || n != out.size())
    throw std::runtime_error("ZONEMD: OpenSSL digest failed");
  return out;
}

ZonemdVerdict ZoneDigest::verify(std::uint32_t soa_serial) {
  ZonemdVerdict v;
  sort_once();  // records() counts distinct records from here
  if (zonemd_.rdata.empty()) return v;  // absent
  std::map<std::pair<std::uint8_t, std::uint8_t>, unsigned> pairs;  // (scheme, hash) -> records
  for (const Bytes& rd : zonemd_.rdata)
    if (const auto z = parse_zonemd(rd)) ++pairs[{z->scheme, z->hash}];
  std::map<std::uint8_t, Bytes> computed;  // hash algorithm -> this zone's digest
  bool any_known = false;
  std::string why;
  const auto note = [&why](const std::string& s) { why += (why.empty() ? "" : "; ") + s; };
  for (const Bytes& rd : zonemd_.rdata) {
    const auto z = parse_zonemd(rd);
    if (!z) {
      note("a ZONEMD record shorter than its 6 fixed bytes");
      continue;
    }
    const std::string label = "ZONEMD " + std::to_string(z->scheme) + " " + std::to_string(z->hash);
    // Steps 4 and 5: a scheme or algorithm not known here cannot verify the zone.
    if (z->scheme != kZonemdSchemeSimple || zonemd_md(z->hash) == nullptr) {
      note(label + ": scheme or hash algorithm not supported");
      continue;
    }
    any_known = true;
    if (pairs[{z->scheme, z->hash}] > 1) {  // section 2: one record per scheme and algorithm
      note(label + ": more than one ZONEMD with this scheme and hash algorithm, none used");
      continue;
    }
    if (z->serial != soa_serial) {  // step 3
      note(label + ": serial " + std::to_string(z->serial) + " is not the SOA serial " + std::to_string(soa_serial));
      continue;
    }
    if (z->digest.size() != zonemd_digest_length(z->hash)) {  // step 6
      note(label + ": a digest of " + std::to_string(z->digest.size()) + " bytes, " + zonemd_hash_name(z->hash) +
           " gives " + std::to_string(zonemd_digest_length(z->hash)));
      continue;
    }
    auto it = computed.find(z->hash);
    if (it == computed.end()) it = computed.emplace(z->hash, *compute(z->hash)).first;
    if (it->second == z->digest) {  // steps 7 and 8: one match is enough
      v.status = ZonemdStatus::verified;
      v.hash = z->hash;
      v.detail = std::string(zonemd_hash_name(z->hash)) + " digest " + hex_of(z->digest);
      return v;
    }
    note(label + ": the zone's " + zonemd_hash_name(z->hash) + " digest is " + hex_of(it->second) +
         ", the record says " + hex_of(z->digest));
  }
  v.status = any_known ? ZonemdStatus::failed : ZonemdStatus::unsupported;
  v.detail = why;
  return v;
}

Rrset ZoneDigest::apex_zonemd() const { return zonemd_; }

}  // namespace dnsarena::dnssec

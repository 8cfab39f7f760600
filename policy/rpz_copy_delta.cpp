// SPDX-License-Identifier: GPL-3.0-or-later
#include "policy/rpz_copy_delta.hpp"

#include <cstring>

#include "wire/dns_name.hpp"

namespace dnsarena::policy {

namespace {

constexpr std::uint16_t kDeltaTypeSoa = 6;

// [RPZ-DELTA-FORMAT] header offsets.
constexpr std::size_t kDeltaOffVersion = 8, kDeltaOffHeaderBytes = 12, kDeltaOffBase = 16, kDeltaOffRemoved = 24, kDeltaOffAdded = 32,
                      kDeltaOffHeaderSum = 40;
static_assert(kDeltaOffHeaderSum + 8 == kRpzDeltaHeaderBytes, "the header's fields end where the removed records start");

void removal_key(std::string& k, const WireName& owner, std::uint16_t type, const WireName& rdata) {
  k.assign(reinterpret_cast<const char*>(owner.data()), owner.size());
  k.push_back(static_cast<char>(type >> 8));
  k.push_back(static_cast<char>(type));
  k.append(reinterpret_cast<const char*>(rdata.data()), rdata.size());
}

}  // namespace

std::string rpz_delta_path(const std::string& copy_file) { return copy_file + ".delta"; }

RpzDeltaWriter::RpzDeltaWriter(const WireName& origin, std::uint64_t base_checksum, std::uint32_t soa_ttl,
                               const WireName& soa_rdata)
    : base_checksum_(base_checksum), removed_(origin, 4), added_(origin, 4) {
  added_.add(origin.data(), origin.size(), kDeltaTypeSoa, soa_ttl, soa_rdata.data(), soa_rdata.size());
}

void RpzDeltaWriter::remove(const std::uint8_t* owner, std::size_t owner_len, std::uint16_t type,
                            const std::uint8_t* rdata, std::size_t rdata_len) {
  removed_.add(owner, owner_len, type, 0, rdata, rdata_len);
}

void RpzDeltaWriter::add(const std::uint8_t* owner, std::size_t owner_len, std::uint16_t type, std::uint32_t ttl,
                         const std::uint8_t* rdata, std::size_t rdata_len) {
  added_.add(owner, owner_len, type, ttl, rdata, rdata_len);
}

std::vector<std::uint8_t> RpzDeltaWriter::finish() {
  const std::vector<std::uint8_t> removed = removed_.finish(), added = added_.finish();
  std::vector<std::uint8_t> out(kRpzDeltaHeaderBytes);
  out.reserve(kRpzDeltaHeaderBytes + removed.size() + added.size());
  std::uint8_t* h = out.data();
  std::memcpy(h, kRpzDeltaMagic.data(), kRpzDeltaMagic.size());
  rpz_put_le<std::uint32_t>(h + kDeltaOffVersion, kRpzDeltaVersion);
  rpz_put_le<std::uint32_t>(h + kDeltaOffHeaderBytes, static_cast<std::uint32_t>(kRpzDeltaHeaderBytes));
  rpz_put_le<std::uint64_t>(h + kDeltaOffBase, base_checksum_);
  rpz_put_le<std::uint64_t>(h + kDeltaOffRemoved, removed.size());
  rpz_put_le<std::uint64_t>(h + kDeltaOffAdded, added.size());
  rpz_put_le<std::uint64_t>(h + kDeltaOffHeaderSum, rpz_copy_checksum(h, kDeltaOffHeaderSum));
  out.insert(out.end(), removed.begin(), removed.end());
  out.insert(out.end(), added.begin(), added.end());
  return out;
}

// The removed (added false) or added records' copy of a delta's bytes, after the
// header's checks.
std::vector<std::uint8_t> RpzCopyDelta::slice(const std::vector<std::uint8_t>& bytes, const std::string& source,
                                              bool added) {
  const std::uint8_t* h = bytes.data();
  if (bytes.size() < kRpzDeltaMagic.size() || std::memcmp(h, kRpzDeltaMagic.data(), kRpzDeltaMagic.size()) != 0)
    throw PolicyError(source + ": not an RPZ delta written by dnsarena (no magic \"DNSARPZD\")");
  if (bytes.size() < kRpzDeltaHeaderBytes)
    throw PolicyError(source + ": RPZ delta truncated: " + std::to_string(bytes.size()) + " bytes, shorter than its header");
  if (rpz_get_le<std::uint64_t>(h + kDeltaOffHeaderSum) != rpz_copy_checksum(h, kDeltaOffHeaderSum))
    throw PolicyError(source + ": RPZ delta damaged: the header's checksum does not match it");
  const auto version = rpz_get_le<std::uint32_t>(h + kDeltaOffVersion);
  if (version != kRpzDeltaVersion)
    throw PolicyError(source + ": RPZ delta format version " + std::to_string(version) + ", this build reads version " +
                      std::to_string(kRpzDeltaVersion));
  if (rpz_get_le<std::uint32_t>(h + kDeltaOffHeaderBytes) != kRpzDeltaHeaderBytes)
    throw PolicyError(source + ": RPZ delta header of " + std::to_string(rpz_get_le<std::uint32_t>(h + kDeltaOffHeaderBytes)) +
                      " bytes, expected " + std::to_string(kRpzDeltaHeaderBytes));
  const auto removed = rpz_get_le<std::uint64_t>(h + kDeltaOffRemoved), add = rpz_get_le<std::uint64_t>(h + kDeltaOffAdded);
  const std::size_t body = bytes.size() - kRpzDeltaHeaderBytes;
  if (removed > body || add != body - removed)
    throw PolicyError(source + ": RPZ delta of " + std::to_string(bytes.size()) + " bytes, its header says " +
                      std::to_string(kRpzDeltaHeaderBytes) + " + " + std::to_string(removed) + " + " +
                      std::to_string(add));
  const auto from = bytes.begin() + static_cast<std::ptrdiff_t>(kRpzDeltaHeaderBytes + (added ? removed : 0));
  return {from, from + static_cast<std::ptrdiff_t>(added ? add : removed)};
}

RpzCopyDelta::RpzCopyDelta(const std::string& path) : RpzCopyDelta(read_rpz_bytes(path), path) {}

RpzCopyDelta::RpzCopyDelta(std::vector<std::uint8_t> bytes, std::string source)
    : base_checksum_(bytes.size() >= kRpzDeltaHeaderBytes ? rpz_get_le<std::uint64_t>(bytes.data() + kDeltaOffBase) : 0),
      removed_(slice(bytes, source, false), source + " (removed)"),
      added_(slice(bytes, source, true), source + " (added)") {
  if (removed_.origin() != added_.origin()) throw PolicyError(source + ": RPZ delta of two zones");
  if (!added_.next(soa_) || soa_.type != kDeltaTypeSoa || soa_.owner != added_.origin() || soa_.rdata.size() < 20)
    throw PolicyError(source + ": RPZ delta without the new apex SOA first");
}

RpzPatchedCopy::RpzPatchedCopy(RpzCopyReader& base, RpzCopyDelta& delta)
    : base_(base), delta_(delta), source_(base.source()) {
  if (base.origin() != delta.origin())
    throw PolicyError(source_ + ": its delta is of the zone " + wire::wire_to_text(delta.origin()));
  ScannedRecord r;
  while (delta.removed().next(r)) {
    removal_key(key_, r.owner, r.type, r.rdata);
    ++removed_[key_];
    ++unmatched_;
  }
}

bool RpzPatchedCopy::skip(const ScannedRecord& r) {
  if (r.type == kDeltaTypeSoa && r.owner == base_.origin()) return true;  // the delta's SOA replaces it
  if (removed_.empty()) return false;
  removal_key(key_, r.owner, r.type, r.rdata);
  const auto it = removed_.find(key_);
  if (it == removed_.end() || it->second == 0) return false;
  --it->second;
  --unmatched_;
  return true;
}

bool RpzPatchedCopy::next(ScannedRecord& r) {
  for (;;) {
    if (phase_ == 1) {
      if (base_.next(r)) {
        if (skip(r)) continue;
        r.line = ++line_;
        return true;
      }
      if (unmatched_)
        throw PolicyError(source_ + ": its delta removes " + std::to_string(unmatched_) +
                          " records the copy does not hold");
      phase_ = 2;
    }
    if (phase_ == 0) {
      r = delta_.soa();
      phase_ = 1;
    } else if (!delta_.added().next(r)) {
      return false;
    }
    r.line = ++line_;
    return true;
  }
}

void RpzPatchedCopy::fail(unsigned record, const std::string& what) const {
  throw PolicyError(source_ + " with its delta:record " + std::to_string(record) + ": " + what);
}

}  // namespace dnsarena::policy

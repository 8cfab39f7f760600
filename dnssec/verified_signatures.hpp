// SPDX-License-Identifier: GPL-3.0-or-later
// The signatures this thread has verified: a memo of (public key, signed data, signature)
// triples whose verification succeeded, so the same RRSIG over the same data under the
// same key is not verified twice.
//
// Where it pays: the same signed RRset arrives in many responses. A wildcard's RRset signs
// the same data ("*." + the wildcard's owner) for every name it expands to; a zone's NSEC
// and NSEC3 records prove the absence of many names; a DS or DNSKEY set fetched again
// after a key-cache entry expired is the same bytes. (Unbound gets part of this from its
// rrset cache, where an RRset already marked secure is not verified again.)
//
// Why it is sound: a verification's result depends on the key, the signed data and the
// signature only (the validity window, the key's trust and the KeyTrap budget are checked
// by the caller every time: zone_keys.cpp verify_rrset). Only successes are remembered, under the
// SHA-256 of the three (the key's RDATA, the signed data of RFC 4034 3.1.8.1, which
// includes the RRSIG fields but the signature, and the signature), so a forged or
// altered signature can find a remembered entry only through a SHA-256 collision.
//
// Layout: kSlots digests of 32 bytes, direct-mapped by the digest's first 8 bytes; a new
// success replaces the slot's old one. Per thread (thread_local), 256 KiB; no locks.
// Cost: one SHA-256 over about 0.3-1 KB per verification tried (about 1 us), against
// 15-100 us for the verification it saves.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace dnsarena::dnssec {

class VerifiedSignatures {
public:
  static constexpr std::size_t kSlots = 8192;
  using Digest = std::array<std::uint8_t, 32>;

  // This thread's memo.
  static VerifiedSignatures& this_thread();

  // The memo's key of one verification into `out`; false when SHA-256 failed (the caller
  // then verifies without the memo).
  static bool digest(std::span<const std::uint8_t> key_rdata, std::span<const std::uint8_t> signed_data,
                     std::span<const std::uint8_t> signature, Digest& out);

  bool contains(const Digest& d) const;
  void remember(const Digest& d);
  // Off: contains() finds nothing and remember() keeps nothing (`dnsarena dnssec bench`
  // times the verification itself so).
  void set_enabled(bool on) { enabled_ = on; }

  std::uint64_t hits() const { return hits_; }
  void forget_all();  // for tests

private:
  std::size_t slot(const Digest& d) const;
  std::array<Digest, kSlots> slots_{};
  std::array<bool, kSlots> used_{};
  mutable std::uint64_t hits_ = 0;
  bool enabled_ = true;
};

}  // namespace dnsarena::dnssec

// SPDX-License-Identifier: GPL-3.0-or-later
// The zone cuts one serving worker has learned, kept for their TTL and bounded in number:
// a second name in a zone already visited starts from that zone's cut, not from the root.
//
// Each cut lives min(its NS set's TTL, max_ttl_s) seconds from when it was learned (a
// TTL of 0 still serves the resolution that learned it: at least 1 s); an expired cut is
// not returned and is replaced by the next referral for its zone. At most `capacity`
// cuts: a learn() that would pass the bound first drops every cut but the root's (one
// O(n) pass per `capacity` learns: amortised O(1), and a referral flood cannot make a
// learn cost more). Memory: about 200 bytes plus the names and addresses per cut.
//
// Per process, not shared: the delegations are not yet kept in the cache segment, so
// each worker learns the cuts on its own (a cold name costs each worker its referrals).
//
// The clock is the caller's (monotonic seconds through set_now), so tests control it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>

#include "recursion/delegation.hpp"

namespace dnsarena::recursion {

class DelegationCache final : public DelegationStore {
public:
  // REQUIRES: capacity >= 1, max_ttl_s >= 1.
  DelegationCache(std::size_t capacity, std::uint32_t max_ttl_s) : capacity_(capacity), max_ttl_s_(max_ttl_s) {}

  // The deepest unexpired cut at or above `name`.
  std::optional<Delegation> closest(std::span<const std::uint8_t> name) const override;
  void learn(const Delegation& d) override;

  // The caller's clock, in seconds (monotonic).
  void set_now(std::uint64_t now_s) { now_s_ = now_s; }
  std::size_t size() const { return cuts_.size(); }
  // Cuts dropped because the bound was reached (each drop counts every cut it removed).
  std::uint64_t dropped() const { return dropped_; }

private:
  struct Entry {
    Delegation cut;
    std::uint64_t expires_s = 0;
  };
  std::map<Bytes, Entry> cuts_;
  std::size_t capacity_;
  std::uint32_t max_ttl_s_;
  std::uint64_t now_s_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace dnsarena::recursion

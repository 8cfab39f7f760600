// SPDX-License-Identifier: GPL-3.0-or-later
// The zone cuts the recursive resolver learns, kept in the shared cache: a cut one worker
// learns serves every worker of the host (and survives a worker's restart).
//
// A cut is one ordinary cache entry under the plain key (zone, NS): the answer section
// holds the NS set (owner the zone), the additional section the addresses known for its
// servers (A records, owner the server's name: glue in bailiwick, or addresses resolved
// for a glueless server). It is the entry a client's "zone NS" question reads and writes
// too: a referral's NS set answers such a question until it expires (as the parent gave
// it, without AA), and the child's own answer to it, when a client asked, serves as the
// cut (its NS records owned by the zone, with whatever addresses its additional section
// holds). An entry under that key with no NS set owned by the zone (NODATA, a CNAME) is
// no cut. The entry lives min(NS TTL, ttl.ceiling) seconds (at least 1); it is evicted,
// counted and sized like any entry (delegation data counts in the bytes per entry).
// NOTE: a key flag of its own (invisible to clients) would keep the parent's set from
// answering clients, but changes the key blob, a format version bump with a legacy reader
// (cache/format_version.hpp); the plain key is what Unbound's rrset cache does as well.
//
// Costs: closest() peeks the cache once per label of the name until a cut is found
// (a copy of the entry each), root_known() once, learn() encodes and inserts one entry.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "cache/cache.hpp"
#include "recursion/delegation.hpp"

namespace dnsarena::workers {

class SharedDelegations final : public recursion::DelegationStore {
public:
  SharedDelegations(cache::Cache& cache, std::uint32_t max_ttl_s);
  std::optional<recursion::Delegation> closest(std::span<const std::uint8_t> name) const override;
  // One peek, no cut built: asked at the start of every resolution.
  bool root_known() const override;
  void learn(const recursion::Delegation& d) override;

private:
  cache::Cache& cache_;
  std::uint32_t max_ttl_s_;
  std::unique_ptr<cache::EntryCopy> copy_;  // closest()'s copy of an entry (64 KiB: on the heap)
};

}  // namespace dnsarena::workers

// SPDX-License-Identifier: GPL-3.0-or-later
// The recursive resolver's server selection (recursion/server_selection.hpp) over the
// host's infrastructure table (infra_table.hpp): the state machine's rank of an address
// is the table's (RTT, backoff after timeouts, lameness for the zone), and a server the
// state machine finds lame is recorded there for the zone, for every worker.
//
// Also the two translations every user of the table from the recursive path needs: an
// authoritative's address as the table's key, and a zone's wire name as its zone hash.
#pragma once
#include <cstdint>
#include <span>

#include "recursion/server_selection.hpp"
#include "workers/infra_table.hpp"

namespace dnsarena::workers {

InfraKey infra_key(const recursion::ServerAddress& a);
// A hash of the lowercase wire name (the table keys lame records by it).
std::uint64_t infra_zone_hash(std::span<const std::uint8_t> zone);

class InfraRanking final : public recursion::ServerSelection {
public:
  // REQUIRES: `table` outlives this object.
  explicit InfraRanking(InfraTable& table) : table_(table) {}
  std::uint32_t rank(const recursion::ServerAddress& a, std::span<const std::uint8_t> zone) const override;
  void lame(const recursion::ServerAddress& a, std::span<const std::uint8_t> zone) override;

private:
  InfraTable& table_;
};

}  // namespace dnsarena::workers

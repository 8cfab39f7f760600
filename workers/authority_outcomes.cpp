// SPDX-License-Identifier: GPL-3.0-or-later
// What an authoritative query's end teaches the infra table (authority_outcomes.hpp).
#include "workers/authority_outcomes.hpp"

#include <algorithm>

#include "wire/constants.hpp"
#include "workers/infra_ranking.hpp"

namespace dnsarena::workers {

std::uint64_t attempt_timeout_us(const InfraTable& table, const recursion::ServerAddress& a, unsigned floor_ms,
                                 std::uint64_t now_us) {
  const InfraTable::Host h = table.host(infra_key(a), now_us / 1000);
  std::uint64_t rto_us = std::uint64_t{floor_ms} * 1000;
  if (h.sampled) rto_us = std::max<std::uint64_t>(rto_us, std::uint64_t{h.srtt_us} + 4ull * h.rttvar_us);
  return std::min(rto_us << std::min(h.timeouts, 3u), kMaxAttemptUs);
}

bool query_with_edns(const InfraTable& table, const recursion::ServerAddress& a, std::uint64_t now_us) {
  return table.use_edns(infra_key(a), now_us / 1000);
}

ReplyUse record_reply(InfraTable& table, const recursion::ServerAddress& a, bool with_edns, std::uint16_t rcode,
                      std::uint32_t rtt_us, std::uint64_t now_us) {
  const bool rejects = rcode == wire::kRcodeFormErr || rcode == wire::kRcodeNotImp;
  InfraTable::Edns learned = InfraTable::Edns::unknown;
  if (!rejects) learned = with_edns ? InfraTable::Edns::works : InfraTable::Edns::broken;
  table.replied(infra_key(a), rtt_us, learned, now_us / 1000);
  return rejects && with_edns ? ReplyUse::retry_without_edns : ReplyUse::take;
}

void record_no_reply(InfraTable& table, const recursion::ServerAddress& a, bool with_edns, std::uint64_t now_us) {
  table.timed_out(infra_key(a), with_edns, now_us / 1000);
}

}  // namespace dnsarena::workers

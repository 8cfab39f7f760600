// SPDX-License-Identifier: GPL-3.0-or-later
// What an authoritative query's end teaches the infra table (authority_outcomes.hpp).
#include "workers/authority_outcomes.hpp"

#include "wire/constants.hpp"
#include "workers/infra_ranking.hpp"

namespace dnsarena::workers {

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

// SPDX-License-Identifier: GPL-3.0-or-later
// Response policy matches (policy_gate.hpp) per policy zone and trigger kind, for
// /metrics (dnsarena_policy_zone_hits_total{zone, trigger}) and `dnsarena stats` (the answer
// snapshot's "policy" object). The stat slots' policy_* counters say what the rules did
// (blocked, local data, ...); these say which zone's rules, and on which trigger.
//
// Memory: one anonymous shared mapping beside the answer metrics (answer_metrics.hpp:
// AnswerMetrics owns it, so it reaches every worker and reader the same way), made by
// the supervisor before the first fork:
//
//   offset                 size      field
//   0                      64        header: rows (u32), zero
//   64                     256 x 64  zone names: the policy zone at index z is named by
//                                    entry z, NUL-terminated ("local" for the config's
//                                    local zone, "default" for the default local
//                                    zones, else the RPZ zone's origin); "" unused
//   64 + 16384 + r x 8192  8192      row r: u64 hits[256 zones][4 kinds] (qname,
//                                    cname_chain, response_ip, client_ip)
//
// Rows are the answer metrics' rows: worker i writes its own (a relaxed load and store,
// one writer per row), readers sum them. Counts are by the zone's index in the policy
// (its place in the config: the local zone first, then the RPZ files in order); the
// supervisor names the indexes at each policy load. A reload that reorders or renames
// zones leaves the counts made before it at their index, now named after the zone in
// that place; a reader may see a name half rewritten during the reload's scrape (benign
// for statistics, as the sums).
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/anonymous_mapping.hpp"

namespace dnsarena::workers {

inline constexpr std::size_t kPolicyZoneSlots = 256;  // policy zones are at most 255 (policy_image.hpp)
inline constexpr std::size_t kPolicyKinds = 4;
inline constexpr std::array<std::string_view, kPolicyKinds> kPolicyKindNames = {"qname", "cname_chain",
                                                                                "response_ip", "client_ip"};
inline constexpr std::size_t kPolicyZoneNameBytes = 64;

class PolicyCounters {
public:
  // Maps `rows` rows (shared across fork() when `shared`). Throws std::system_error.
  PolicyCounters(unsigned rows, bool shared);
  unsigned rows() const { return *rows_; }

  // REQUIRES: the caller is row `row`'s only writer; zone < 256, kind < kPolicyKinds.
  void count(unsigned row, unsigned zone, unsigned kind) {
    std::atomic<std::uint64_t>& c = hits_[(static_cast<std::size_t>(row) * kPolicyZoneSlots + zone) * kPolicyKinds + kind];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // The supervisor, at each policy load: `names[z]` names zone z (the rest unnamed).
  void set_zone_names(const std::vector<std::string>& names);

  // Every named zone and every zone with a count, summed over the rows, in index order.
  struct Zone {
    std::string name;
    std::array<std::uint64_t, kPolicyKinds> hits{};
  };
  std::vector<Zone> totals() const;

private:
  common::AnonymousMapping map_;
  std::uint32_t* rows_ = nullptr;
  char* names_ = nullptr;
  std::atomic<std::uint64_t>* hits_ = nullptr;
};

}  // namespace dnsarena::workers

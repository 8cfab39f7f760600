// SPDX-License-Identifier: GPL-3.0-or-later
// `bench attack` scenario fill (attack_scenarios.hpp): an all-miss fill of N names at
// R q/s must give 0 SERVFAIL and lose nothing.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>

#include "bench/lab/attack_scenarios.hpp"

namespace dnsarena::bench {

std::vector<AttackRow> run_fill_scenario(const AttackContext& ctx) {
  const AttackOptions& o = ctx.options;
  AuthUpstream up;
  const std::uint64_t entries = std::max<std::uint64_t>(2 * o.fill_names, 100000);
  const std::string arena = std::to_string(std::max<std::uint64_t>(64, o.fill_names * 400 / (1 << 20))) + "M";
  AttackServe s(ctx, ctx.binary, "fill", up.port(), 0, entries, arena);
  const std::uint32_t salt = arc4random();
  const std::uint64_t drops_before = udp_rcvbuf_errors();
  const LoadResult r = attack_load(ctx, s.port(), o.fill_names, o.fill_rate,
                                   numbered_names("f" + std::to_string(salt) + "-", "real"), std::chrono::milliseconds(5000));
  const std::uint64_t drops = udp_rcvbuf_errors() - drops_before;
  const nlohmann::json served = s.totals();
  AttackRow row{"fill", "", "0 SERVFAIL, 0 lost", r.servfail == 0 && r.lost() == 0 && r.sent == o.fill_names, false,
                load_result_json(r)};
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "all-miss fill of %llu names at %.0f q/s: %llu SERVFAIL, %llu lost, %llu upstream queries; kernel "
                "UDP receive-buffer drops on the host: %llu",
                static_cast<unsigned long long>(o.fill_names), o.fill_rate, static_cast<unsigned long long>(r.servfail),
                static_cast<unsigned long long>(r.lost()), static_cast<unsigned long long>(up.queries()),
                static_cast<unsigned long long>(drops));
  row.figure = buf + serve_summary(served);
  row.detail["upstream_queries"] = up.queries();
  row.detail["udp_rcvbuf_errors"] = drops;
  row.detail["serve_counters"] = served;
  return {row};
}

}  // namespace dnsarena::bench

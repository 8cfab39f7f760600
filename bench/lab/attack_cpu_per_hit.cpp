// SPDX-License-Identifier: GPL-3.0-or-later
// `bench attack` scenario cpu-per-hit (attack_scenarios.hpp): workers' CPU time per
// answered hit at a fixed rate; with --baseline-binary, the same for that binary,
// interleaved --hit-rounds times, and the ratio of medians (target <= 1.05).
#include <cstdio>

#include "bench/lab/attack_scenarios.hpp"
#include "common/median.hpp"

namespace dnsarena::bench {

namespace {

// Workers' CPU microseconds per answered hit, one run of `binary`'s serve.
double cpu_per_hit_once(const AttackContext& ctx, const std::string& binary, const std::string& tag,
                        std::uint64_t* answered) {
  const AttackOptions& o = ctx.options;
  AuthUpstream up;
  AttackServe s(ctx, binary, tag, up.port());
  constexpr unsigned kNames = 1000;
  attack_load(ctx, s.port(), kNames, 5000, numbered_names("h", "real"));
  const double before = s.workers_cpu();
  const LoadResult r = attack_load(ctx, s.port(), static_cast<std::uint64_t>(o.hit_rate * o.hit_seconds), o.hit_rate,
                                   numbered_names("h", "real", kNames));
  const double cpu = s.workers_cpu() - before;
  *answered = r.noerror;
  return r.noerror ? cpu * 1e6 / static_cast<double>(r.noerror) : 0;
}

}  // namespace

std::vector<AttackRow> run_cpu_per_hit_scenario(const AttackContext& ctx) {
  const AttackOptions& o = ctx.options;
  std::vector<double> ours, base;
  std::uint64_t answered = 0;
  const unsigned rounds = o.baseline_binary.empty() ? 1 : o.hit_rounds;
  for (unsigned i = 0; i < rounds && !ctx.interrupted; ++i) {
    ours.push_back(cpu_per_hit_once(ctx, ctx.binary, "hit-" + std::to_string(i), &answered));
    if (!o.baseline_binary.empty())
      base.push_back(cpu_per_hit_once(ctx, o.baseline_binary, "hit-base-" + std::to_string(i), &answered));
  }
  AttackRow r{"cpu-per-hit", "", "<= 1.05 x the baseline", std::nullopt, false, {}};
  char buf[240];
  if (base.empty()) {
    std::snprintf(buf, sizeof buf, "%.2f us of worker CPU per hit at %.0f q/s (no --baseline-binary: not compared)",
                  common::median(ours), o.hit_rate);
  } else {
    const double ratio = common::median(base) > 0 ? common::median(ours) / common::median(base) : 0;
    r.met = ratio > 0 && ratio <= 1.05;
    std::snprintf(buf, sizeof buf,
                  "%.2f us of worker CPU per hit vs %.2f us for the baseline (medians of %u interleaved runs at %.0f "
                  "q/s): ratio %.3f",
                  common::median(ours), common::median(base), rounds, o.hit_rate, ratio);
    r.detail["ratio"] = ratio;
  }
  r.figure = buf;
  r.detail["cpu_us_per_hit"] = ours;
  r.detail["baseline_cpu_us_per_hit"] = base;
  r.detail["rate"] = o.hit_rate;
  return {r};
}

}  // namespace dnsarena::bench

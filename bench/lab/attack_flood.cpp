// SPDX-License-Identifier: GPL-3.0-or-later
// `bench attack` scenario flood (attack_scenarios.hpp): a random-subdomain flood at a
// black-hole upstream beside legitimate hits and misses; three rows (flood-fds,
// flood-hits, flood-misses).
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "bench/lab/attack_scenarios.hpp"
#include "common/proc_stats.hpp"
#include "common/process_limits.hpp"

namespace dnsarena::bench {

namespace {

using namespace std::chrono_literals;

double noerror_share(const LoadResult& r) {
  return r.sent ? static_cast<double>(r.noerror) / static_cast<double>(r.sent) : 0;
}

}  // namespace

std::vector<AttackRow> run_flood_scenario(const AttackContext& ctx) {
  const AttackOptions& o = ctx.options;
  AuthUpstream up;
  BlackHole hole;
  AttackServe s(ctx, ctx.binary, "flood", up.port(), hole.port());
  constexpr unsigned kHitNames = 1000;
  attack_load(ctx, s.port(), kHitNames, 5000, numbered_names("h", "real"));  // warm the hits
  const auto flood_count = static_cast<std::uint64_t>(o.flood_rate * o.flood_seconds);
  const std::uint32_t salt = arc4random();
  LoadResult flood_r, hits_r, miss_r;
  std::atomic<bool> done{false};
  unsigned max_fds = 0;
  std::uint64_t fd_limit = 0;
  std::thread sampler([&] {
    while (!done) {
      for (pid_t p : s.workers()) {
        max_fds = std::max(max_fds, common::open_fds(p));
        const std::uint64_t lim = common::nofile_soft_limit(p);
        if (lim) fd_limit = fd_limit ? std::min(fd_limit, lim) : lim;
      }
      std::this_thread::sleep_for(200ms);
    }
  });
  std::thread hits([&] {
    hits_r = attack_load(ctx, s.port(), static_cast<std::uint64_t>(500 * o.flood_seconds), 500,
                         numbered_names("h", "real", kHitNames));
  });
  std::thread misses([&] {
    miss_r = attack_load(ctx, s.port(), static_cast<std::uint64_t>(50 * o.flood_seconds), 50,
                         numbered_names("m" + std::to_string(salt) + "-", "real"));
  });
  const std::uint64_t drops_before = udp_rcvbuf_errors();
  flood_r = attack_load(ctx, s.port(), flood_count, o.flood_rate, numbered_names("r" + std::to_string(salt) + "-", "hole"),
                        10000ms);
  hits.join();
  misses.join();
  done = true;
  sampler.join();
  const std::uint64_t drops = udp_rcvbuf_errors() - drops_before;
  const nlohmann::json served = s.totals();
  std::vector<AttackRow> rows;
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "%.0f q/s for %.0f s at a black hole: workers' descriptors at most %u (limit %llu); flood: %llu "
                "SERVFAIL, %llu lost of %llu",
                o.flood_rate, o.flood_seconds, max_fds, static_cast<unsigned long long>(fd_limit),
                static_cast<unsigned long long>(flood_r.servfail), static_cast<unsigned long long>(flood_r.lost()),
                static_cast<unsigned long long>(flood_r.sent));
  rows.push_back({"flood-fds", buf, "descriptors under the limit", fd_limit > 0 && max_fds < fd_limit, true,
                  {{"max_fds", max_fds}, {"fd_limit", fd_limit}, {"flood", load_result_json(flood_r)}}});
  const double hit_share = noerror_share(hits_r);
  std::snprintf(buf, sizeof buf,
                "legitimate hits during the flood: %llu of %llu answered NOERROR (%.3f%%); kernel UDP receive-buffer "
                "drops on the host: %llu",
                static_cast<unsigned long long>(hits_r.noerror), static_cast<unsigned long long>(hits_r.sent),
                100 * hit_share, static_cast<unsigned long long>(drops));
  rows.push_back({"flood-hits", buf, ">= 99.9% answered", hit_share >= 0.999, false, load_result_json(hits_r)});
  rows.back().detail["udp_rcvbuf_errors_during_flood"] = drops;
  rows.front().detail["serve_counters"] = served;
  const double miss_share = noerror_share(miss_r);
  std::snprintf(buf, sizeof buf,
                "legitimate misses to a working upstream during the flood: %llu of %llu answered NOERROR (%.3f%%), "
                "%llu SERVFAIL",
                static_cast<unsigned long long>(miss_r.noerror), static_cast<unsigned long long>(miss_r.sent),
                100 * miss_share, static_cast<unsigned long long>(miss_r.servfail));
  rows.push_back({"flood-misses", buf + serve_summary(served), ">= 99.9% answered", miss_share >= 0.999, false,
                  load_result_json(miss_r)});
  return rows;
}

}  // namespace dnsarena::bench

// SPDX-License-Identifier: GPL-3.0-or-later
// `bench attack` scenario spoof (attack_scenarios.hpp): an off-path attacker races the
// upstream with forged answers while the resolver resolves N names; then every name is
// asked again, and no forged record may be cached.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "bench/lab/attack_scenarios.hpp"

namespace dnsarena::bench {

std::vector<AttackRow> run_spoof_scenario(const AttackContext& ctx) {
  using Clock = std::chrono::steady_clock;
  const AttackOptions& o = ctx.options;
  AuthUpstream up(20);  // 20 ms away: the window the attacker races
  AttackServe s(ctx, ctx.binary, "spoof", up.port(), 0, 200000, "64M");
  const std::array<std::uint8_t, 4> forged{6, 6, 6, 6};
  const std::uint32_t salt = arc4random();
  auto name = numbered_names("s" + std::to_string(salt) + "-", "real");
  std::atomic<std::uint64_t> progress{0}, forged_sent{0};
  std::atomic<bool> attacker_done{false};
  // Bounded: the attacker stops after its count or this long, and so does the resolution.
  const auto limit = std::chrono::milliseconds(static_cast<long>(std::max(30.0, 10 * o.spoof_seconds) * 1000));
  std::string attacker_error;
  std::thread attacker([&] {
    try {
      run_spoofer(up.port(), o.spoof_forged, limit, name, progress, 200, forged, forged_sent, ctx.interrupted);
    } catch (const std::exception& e) {
      attacker_error = e.what();
    }
    attacker_done = true;
  });
  std::uint64_t forged_seen = 0;
  auto check = [&](std::uint64_t i, const std::uint8_t* w, std::size_t n, std::uint64_t& forged_n,
                   std::uint64_t& wrong_n) {
    std::array<std::uint8_t, 4> got{};
    if (!first_a_record(w, n, got)) return;
    const std::vector<std::uint8_t> qn = name(i);
    if (got == forged) ++forged_n;
    else if (got != real_address(qn.data(), qn.size())) ++wrong_n;
  };
  std::uint64_t wrong_during = 0;
  LoadSpec race;
  race.port = s.port();
  race.count = o.spoof_names;
  race.rate = o.spoof_names / o.spoof_seconds;  // at most; the forged answers pace it
  race.timeout = std::chrono::milliseconds(5000);
  race.name = name;
  race.on_reply = [&](std::uint64_t i, const std::uint8_t* w, std::size_t n) { check(i, w, n, forged_seen, wrong_during); };
  race.sent = &progress;
  race.stop = &ctx.interrupted;
  // Name i is asked once i / names of the forged answers are out: each name meets its
  // share of the race whatever speed the attacker reaches on this machine.
  race.allowed = [&]() -> std::uint64_t {
    if (attacker_done) return o.spoof_names;
    return 1 + static_cast<std::uint64_t>(static_cast<double>(forged_sent.load()) * o.spoof_names /
                                          static_cast<double>(o.spoof_forged));
  };
  race.send_limit = limit;
  const auto t0 = Clock::now();
  const LoadResult resolve = run_load(race);
  const double race_s = std::chrono::duration<double>(Clock::now() - t0).count();
  progress = std::max<std::uint64_t>(progress, 1);
  attacker.join();
  if (!attacker_error.empty()) throw std::runtime_error(attacker_error);
  // Every name again: from the cache now; what it holds is what later clients get.
  std::uint64_t forged_cached = 0, wrong_cached = 0, real_cached = 0;
  const LoadResult verify = attack_load(ctx, s.port(), o.spoof_names, 20000, name, std::chrono::milliseconds(3000),
                                        [&](std::uint64_t i, const std::uint8_t* w, std::size_t n) {
                                          const std::uint64_t before = forged_cached + wrong_cached;
                                          check(i, w, n, forged_cached, wrong_cached);
                                          if (forged_cached + wrong_cached == before) ++real_cached;
                                        });
  AttackRow r{"spoof", "", "0 forged records cached", forged_cached == 0 && wrong_cached == 0, true, {}};
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "%llu forged answers sent in %.0f s while %llu names resolved (%llu answered): %llu forged and %llu "
                "wrong records cached, %llu real; %llu forged answers served during the race",
                static_cast<unsigned long long>(forged_sent.load()), race_s,
                static_cast<unsigned long long>(resolve.sent), static_cast<unsigned long long>(resolve.noerror),
                static_cast<unsigned long long>(forged_cached), static_cast<unsigned long long>(wrong_cached),
                static_cast<unsigned long long>(real_cached), static_cast<unsigned long long>(forged_seen));
  r.figure = buf;
  r.detail = {{"forged_sent", forged_sent.load()}, {"race_seconds", race_s}, {"names", o.spoof_names},
              {"resolve", load_result_json(resolve)}, {"verify", load_result_json(verify)}, {"forged_cached", forged_cached},
              {"wrong_cached", wrong_cached}, {"real_cached", real_cached}, {"forged_served_during_race", forged_seen}};
  if (resolve.sent < o.spoof_names) r.met = false;  // not every name was raced: no figure
  return {r};
}

}  // namespace dnsarena::bench

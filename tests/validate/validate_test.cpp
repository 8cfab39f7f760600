// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab sim validate`: the served-traffic view of the profile (unit), and one short real run of the
// whole command (upstream, serve with 2 workers, load; model) checked against its targets.
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/command_output.hpp"
#include "sim/validate/validate_model.hpp"
#include "sim/workload/traffic_profile.hpp"

using namespace dnsarena::sim::fleet;

TEST_CASE("validate: what the served traffic adds to the profile (seed and ECS-heavy)", "[fleet][validate]") {
  const TrafficProfile seed = dnsarena::sim::load_traffic_profile(std::string(DNSARENA_CONFIGS_DIR) + "/profiles/seed.yaml");
  std::vector<std::string> notes;
  const TrafficProfile t = served_traffic(seed, &notes);
  CHECK(t.names == seed.names);
  CHECK(t.zipf == seed.zipf);
  CHECK(t.qtype_per_name);
  CHECK(t.share_a + t.share_aaaa + t.share_other == Approx(1.0));
  CHECK(t.share_a == Approx(0.56));
  CHECK(t.ttl.buckets.size() == dnsarena::sim::TtlDistribution::kUniformTtlBuckets);
  CHECK(t.max_ttl() <= 3600);
  // NODATA + NXDOMAIN queries become stray negative keys with the SOA's TTL: 2 other
  // types per name, 3 types of its "nx" neighbour.
  CHECK(t.negative_share == 0);
  CHECK(t.stray_share() == Approx(seed.stray_nodata_share + seed.stray_nxdomain_share));
  CHECK(t.stray_keys() == 5);
  CHECK(t.negative_ttl == seed.negative_ttl);
  // The published fleet's load sends no ECS: plain keys only.
  CHECK(t.ecs_keyed_share() == 0);
  CHECK(calibration_mix(seed).ecs_share == 0);
  CHECK(calibration_mix(seed).ecs_subnets == 1);
  CHECK(calibration_mix(seed).cname_share == seed.cname_share);
  CHECK(notes.size() >= 3);

  const TrafficProfile heavy =
      dnsarena::sim::load_traffic_profile(std::string(DNSARENA_CONFIGS_DIR) + "/profiles/ecs-heavy.yaml");
  const TrafficProfile h = served_traffic(heavy);
  // Negative names answer with scope 0: cached once, not per subnet (stray keys too).
  CHECK(h.ecs_keyed_share() == Approx(0.5 * (1 - heavy.negative_share)));
  CHECK(h.ecs_subnets == 4096);
  CHECK(h.ecs_prefix == 24);
  CHECK(calibration_mix(heavy).ecs_share == Approx(0.5));
  CHECK(calibration_mix(heavy).ecs_subnets == 4096);
}

TEST_CASE("validate: arena size is the memory model's, in whole regions", "[fleet][validate]") {
  const std::uint64_t a = model_arena_bytes(20'000, 150, 64 << 10);
  CHECK(a % (64 << 10) == 0);
  CHECK(static_cast<double>(a) >= 20'000 * (150 - kIndexBytesPerEntry) * kArenaSlack);
  CHECK(static_cast<double>(a) < 20'000 * (150 - kIndexBytesPerEntry) * kArenaSlack + (64 << 10));
}

// One minute of load at 1,500 q/s on a 4,000-entry cache (the published profile's 100,000
// names: it fills within seconds and evicts for the rest of the minute), on the compressed
// clock (a minute lasts 30 s: TTLs halved, the model at 750 q/s per simulated second), as
// the outage run is. The same run in real time (--minute-seconds 60): hit rate error -0.44
// points against -0.67 compressed, the resident error the same (-5.55%).
TEST_CASE("validate: a real short run, hit rate and cache memory within the targets", "[fleet][validate][multiprocess][timing]") {
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  const std::string out = dnsarena::test::command_output(std::string(DNSARENA_LAB_BINARY) +
                                         " sim validate --duration 60 --rate 1500 --capacity 4000 --workers 2"
                                         " --sample-every 10 --calibration-entries 20000 --minute-seconds 30 --json 2>&1",
                                     &status);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN("sim validate took " << wall << " s");
  INFO(out);
  REQUIRE(status == 0);
  const auto brace = out.rfind("\n{");
  REQUIRE(brace != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(out.substr(brace + 1));
  for (const char* k : {"hit_rate_error_pts", "rss_error_pct", "entries_error_pct", "che_hit_rate_error_pts"}) {
    INFO(k);
    REQUIRE(j.contains(k));
    CHECK(std::isfinite(j[k].get<double>()));
  }
  for (const char* side : {"measured", "predicted"})
    for (const char* k : {"hit_rate", "entries", "rss_bytes"}) {
      INFO(side << "." << k);
      REQUIRE(j[side].contains(k));
      CHECK(std::isfinite(j[side][k].get<double>()));
      CHECK(j[side][k].get<double>() > 0);
    }
  REQUIRE(j["met"].contains("hit_rate"));
  REQUIRE(j["met"].contains("rss"));
  REQUIRE(j["minutes"].size() == 1);
  // Entries grow from 0 and never exceed the capacity.
  const auto& samples = j["samples"];
  REQUIRE(samples.size() == 7);
  CHECK(samples[0]["entries"].get<double>() < 100);
  CHECK(samples[6]["entries"].get<double>() > samples[0]["entries"].get<double>());
  CHECK(samples[6]["entries"].get<double>() > 0.5 * 4000);
  for (const auto& s : samples) CHECK(s["entries"].get<double>() <= 4000);
  // The service answered the load (else the hit rate would measure losses, not the cache).
  CHECK(j["load"]["answered_the_load"].get<bool>());
  CHECK(j["scale"]["minute_seconds"].get<int>() == 30);
  CHECK(j["load"]["sent"].get<double>() > 0.95 * 1500 * 30);  // the simulated minute's 30 real seconds
  // Against the targets. Hit rate: 5 points. Memory: the cache's part (memory model vs
  // the segment's resident bytes) within 10%. The whole service's RSS is NOT held to 10%
  // at this scale, and that is a finding, not noise: the cache is 0.75 MiB here and the
  // three processes' heaps grow by about 0.6 MiB under load (Pss anon, reported as
  // process_growth_bytes), which the model's input (process memory measured before load)
  // does not contain; the RSS error is about -18% run after run.
  CHECK(std::fabs(j["hit_rate_error_pts"].get<double>()) <= 5.0);
  CHECK(j["met"]["hit_rate"].get<bool>());
  CHECK(std::fabs(j["cache_resident_error_pct"].get<double>()) <= 10.0);
  CHECK(j["process_growth_bytes"].get<double>() >= 0);
}

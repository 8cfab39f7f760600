// SPDX-License-Identifier: GPL-3.0-or-later
// Traffic profile YAML: defaults, shipped files, and error messages with file:line:column.
#include <catch2/catch.hpp>

#include "sim/workload/traffic_profile.hpp"

using ProfileError = dnsarena::common::ConfigError;
using dnsarena::sim::TrafficProfile;
using dnsarena::sim::TtlBucket;
using dnsarena::sim::TtlDistribution;
using dnsarena::sim::default_traffic_profile;
using dnsarena::sim::load_traffic_profile;
using dnsarena::sim::parse_traffic_profile;

namespace {

// The message of the ProfileError thrown by parsing `yaml` as "test.yaml".
std::string error_of(const std::string& yaml) {
  try {
    parse_traffic_profile(yaml, "test.yaml");
  } catch (const ProfileError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("configs/profiles/seed.yaml is the embedded default", "[traffic][profile]") {
  const TrafficProfile p = load_traffic_profile(DNSARENA_SOURCE_DIR "/configs/profiles/seed.yaml");
  CHECK(p == default_traffic_profile());
  // The default's entry shape is the published benchmark mix, the schema's defaults.
  const TrafficProfile plain;
  CHECK(p.share_a == 0.56);
  CHECK(p.share_aaaa == 0.25);
  CHECK(p.share_other == 0.19);
  CHECK(p.records_min == 1);
  CHECK(p.records_max == 4);
  CHECK(p.other_rdata_min == 64);
  CHECK(p.other_rdata_max == 224);
  CHECK(p.ttl == plain.ttl);
  CHECK(p.labels_max == plain.labels_max);
}

TEST_CASE("the shipped datacenter files read as traffic profiles give what the fleet reads", "[traffic][profile]") {
  const TrafficProfile t = parse_traffic_profile(
      "names: 40000000\nzipf: 0.95\nqtypes: {a: 0.6, aaaa: 0.28, other: 0.12}\n"
      "ttl: [{seconds: 20, share: 0.5}, {seconds: 300, share: 0.5}]\nnegative: {share: 0.05, ttl: 600}\n"
      "ecs: {share: 0.3, subnets: 400}\n",
      "dc.yaml");
  CHECK(t.names == 40'000'000);
  CHECK_FALSE(t.ttl.uniform);
  CHECK(t.ttl.buckets == std::vector<TtlBucket>{{20, 0.5}, {300, 0.5}});
  CHECK(t.ttl.lowest() == 20);
  CHECK(t.ttl.highest() == 300);
  CHECK(t.max_ttl() == 600);  // the negative TTL is longer
  CHECK(t.ecs_keyed_share() == 0.3);
  CHECK(t.ecs_prefix == 24);
}

TEST_CASE("a uniform TTL range is also equal-share buckets at slice midpoints", "[traffic][profile]") {
  const auto b = TtlDistribution::uniform_buckets(60, 3600);
  REQUIRE(b.size() == TtlDistribution::kUniformTtlBuckets);
  double share = 0, mean = 0;
  for (const TtlBucket& x : b) share += x.share, mean += x.share * x.seconds;
  CHECK(share == Approx(1.0));
  CHECK(mean == Approx((60 + 3600) / 2.0).margin(1.0));
  CHECK(b.front().seconds >= 60);
  CHECK(b.back().seconds <= 3600);
  CHECK(b.front().seconds < 60 + 3540 / 32);
  const auto one = TtlDistribution::uniform_buckets(300, 300);  // a single TTL: one bucket
  REQUIRE(one.size() == 1);
  CHECK(one[0].seconds == 300);
  const TtlDistribution range = TtlDistribution::range(60, 3600);
  CHECK(range.lowest() == 60);
  CHECK(range.highest() == 3600);
}

TEST_CASE("configs/profiles/ecs-heavy.yaml loads and differs where it says", "[traffic][profile]") {
  const TrafficProfile p = load_traffic_profile(DNSARENA_SOURCE_DIR "/configs/profiles/ecs-heavy.yaml");
  CHECK(p.ecs_share == 0.5);
  CHECK(p.ecs_subnets == 4096);
  CHECK(p.ecs_prefix == 24);
  TrafficProfile expected = default_traffic_profile();
  expected.ecs_share = 0.5;
  expected.ecs_subnets = 4096;
  CHECK(p == expected);
}

TEST_CASE("profile keys are read, missing keys keep the schema's defaults", "[traffic][profile]") {
  const TrafficProfile p =
      parse_traffic_profile("names: 5000\nzipf: 1.2\nqtypes: {a: 0.7, aaaa: 0.2, other: 0.1}\n", "t");
  CHECK(p.names == 5000);
  CHECK(p.zipf == 1.2);
  CHECK(p.share_a == 0.7);
  CHECK(p.share_other == 0.1);
  CHECK(p.records_max == TrafficProfile{}.records_max);
  CHECK(p.qps == TrafficProfile{}.qps);
  CHECK(parse_traffic_profile("", "empty") == TrafficProfile{});
}

TEST_CASE("profile errors name file, line, column and key", "[traffic][profile]") {
  SECTION("unknown top-level key") {
    const std::string e = error_of("names: 10\nzipf_s: 0.9\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:2:1"));
    CHECK_THAT(e, Catch::Contains("key 'zipf_s'"));
    CHECK_THAT(e, Catch::Contains("unknown key"));
  }
  SECTION("unknown key inside a group") {
    const std::string e = error_of("ecs:\n  share: 0.5\n  subnets: 4\n  sbunets: 1\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:4:3"));
    CHECK_THAT(e, Catch::Contains("key 'ecs.sbunets'"));
  }
  SECTION("out of range") {
    const std::string e = error_of("qps: 100\nzipf: 11\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:2:7"));
    CHECK_THAT(e, Catch::Contains("key 'zipf'"));
    CHECK_THAT(e, Catch::Contains("out of range"));
    CHECK_THAT(error_of("ecs: {share: 1.5, subnets: 1}\n"), Catch::Contains("key 'ecs.share'"));
    CHECK_THAT(error_of("names: 0\n"), Catch::Contains("test.yaml:1:8: key 'names'"));
    CHECK_THAT(error_of("ecs: {share: 0.1, subnets: 1, prefix: 33}\n"), Catch::Contains("key 'ecs.prefix'"));
    CHECK_THAT(error_of("records:\n  max: 17\n"), Catch::Contains("test.yaml:2:8: key 'records.max'"));
    CHECK_THAT(error_of("qps: 0\n"), Catch::Contains("key 'qps': must be > 0"));
  }
  SECTION("not a number") {
    const std::string e = error_of("names: lots\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:1:8"));
    CHECK_THAT(e, Catch::Contains("expected a non-negative integer, got 'lots'"));
    CHECK_THAT(error_of("names: -5\n"), Catch::Contains("key 'names'"));
    CHECK_THAT(error_of("zipf: [1]\n"), Catch::Contains("key 'zipf': expected a scalar"));
  }
  SECTION("cross-field constraints point at the key") {
    const std::string e = error_of("records:\n  min: 3\n  max: 2\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:2:8"));
    CHECK_THAT(e, Catch::Contains("key 'records.min'"));
    CHECK_THAT(error_of("stray:\n  nodata_share: 0.3\n  nxdomain_share: 0.3\n"),
               Catch::Contains("test.yaml:3:19: key 'stray.nxdomain_share'"));
    CHECK_THAT(error_of("qtypes: {a: 0, aaaa: 0, other: 0}\n"), Catch::Contains("must sum to 1"));
    CHECK_THAT(error_of("ttl: {min: 600, max: 60}\n"), Catch::Contains("key 'ttl.min': must not exceed max"));
    CHECK_THAT(error_of("ttl: [{seconds: 60, share: 0.5}]\n"), Catch::Contains("key 'ttl': bucket shares must sum to 1"));
  }
  SECTION("duplicate key") {
    CHECK_THAT(error_of("names: 1\nnames: 2\n"), Catch::Contains("test.yaml:2:1: key 'names': duplicate key"));
  }
  SECTION("YAML syntax error") {
    const std::string e = error_of("names: [1, 2\nqps: 3\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:"));
    CHECK_THAT(e, Catch::Contains("YAML syntax error"));
  }
  SECTION("top level must be a mapping") {
    CHECK_THAT(error_of("- 1\n- 2\n"), Catch::Contains("expected a mapping"));
  }
}

TEST_CASE("an unreadable profile file is reported with its path", "[traffic][profile]") {
  try {
    load_traffic_profile("/nonexistent/dir/p.yaml");
    FAIL("no error");
  } catch (const ProfileError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("/nonexistent/dir/p.yaml: cannot open"));
  }
}

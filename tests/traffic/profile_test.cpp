// Traffic profile YAML: defaults, shipped files, and error messages with file:line:column.
#include <catch2/catch.hpp>

#include "sim/workload/traffic_profile.hpp"

using dnsarena::sim::ProfileError;
using dnsarena::sim::TrafficProfile;
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
  // The default's entry shape is the seed's benchmark mix.
  CHECK(p.mix.share_a == 0.56);
  CHECK(p.mix.share_aaaa == 0.25);
  CHECK(p.mix.share_txt == 0.19);
  CHECK(p.mix.min_records == 1);
  CHECK(p.mix.max_records == 4);
  CHECK(p.mix.txt_min_bytes == 64);
  CHECK(p.mix.txt_max_bytes == 224);
}

TEST_CASE("configs/profiles/ecs-heavy.yaml loads and differs where it says", "[traffic][profile]") {
  const TrafficProfile p = load_traffic_profile(DNSARENA_SOURCE_DIR "/configs/profiles/ecs-heavy.yaml");
  CHECK(p.ecs_share == 0.5);
  CHECK(p.ecs_client_subnets == 4096);
  CHECK(p.ecs_scope_prefix == 24);
  CHECK(p.mix.share_a == default_traffic_profile().mix.share_a);
  const auto m = p.generator_mix();
  CHECK(m.ecs_share == 0.5);
  CHECK(m.ecs_subnets == 4096);
}

TEST_CASE("profile keys are read, missing keys keep defaults", "[traffic][profile]") {
  const TrafficProfile p = parse_traffic_profile("names: 5000\nzipf_s: 1.2\nmix:\n  share_a: 0.7\n", "t");
  CHECK(p.names == 5000);
  CHECK(p.zipf_s == 1.2);
  CHECK(p.mix.share_a == 0.7);
  CHECK(p.mix.share_aaaa == 0.25);
  CHECK(p.qps == default_traffic_profile().qps);
  CHECK(parse_traffic_profile("", "empty") == default_traffic_profile());
}

TEST_CASE("profile errors name file, line, column and key", "[traffic][profile]") {
  SECTION("unknown top-level key") {
    const std::string e = error_of("names: 10\nzipf: 0.9\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:2:1"));
    CHECK_THAT(e, Catch::Contains("key 'zipf'"));
    CHECK_THAT(e, Catch::Contains("unknown key"));
  }
  SECTION("unknown key inside mix") {
    const std::string e = error_of("mix:\n  share_a: 0.5\n  share_mx: 0.1\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:3:3"));
    CHECK_THAT(e, Catch::Contains("key 'mix.share_mx'"));
  }
  SECTION("the generator's ECS keys are not accepted inside mix (one source of truth)") {
    CHECK_THAT(error_of("mix:\n  ecs_share: 0.5\n"), Catch::Contains("key 'mix.ecs_share': unknown key"));
  }
  SECTION("out of range") {
    const std::string e = error_of("qps: 100\nzipf_s: 11\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:2:9"));
    CHECK_THAT(e, Catch::Contains("key 'zipf_s'"));
    CHECK_THAT(e, Catch::Contains("must be in [0, 10]"));
    CHECK_THAT(error_of("ecs_share: 1.5\n"), Catch::Contains("key 'ecs_share'"));
    CHECK_THAT(error_of("names: 0\n"), Catch::Contains("test.yaml:1:8: key 'names'"));
    CHECK_THAT(error_of("ecs_scope_prefix: 33\n"), Catch::Contains("key 'ecs_scope_prefix'"));
    CHECK_THAT(error_of("mix:\n  max_records: 17\n"), Catch::Contains("test.yaml:2:16: key 'mix.max_records'"));
    CHECK_THAT(error_of("qps: 0\n"), Catch::Contains("key 'qps': must be > 0"));
  }
  SECTION("not a number") {
    const std::string e = error_of("names: lots\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:1:8"));
    CHECK_THAT(e, Catch::Contains("expected a non-negative integer, got 'lots'"));
    CHECK_THAT(error_of("names: -5\n"), Catch::Contains("key 'names'"));
    CHECK_THAT(error_of("zipf_s: [1]\n"), Catch::Contains("key 'zipf_s': expected a scalar"));
  }
  SECTION("cross-field constraints point at the key") {
    const std::string e = error_of("mix:\n  min_records: 3\n  max_records: 2\n");
    CHECK_THAT(e, Catch::Contains("test.yaml:2:16"));
    CHECK_THAT(e, Catch::Contains("key 'mix.min_records'"));
    CHECK_THAT(error_of("query_nodata_share: 0.6\nquery_nxdomain_share: 0.6\n"),
               Catch::Contains("test.yaml:2:23: key 'query_nxdomain_share'"));
    CHECK_THAT(error_of("mix:\n  share_a: 0\n  share_aaaa: 0\n  share_txt: 0\n"), Catch::Contains("must be > 0"));
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

// SPDX-License-Identifier: GPL-3.0-or-later
// The profile fit (sim/fit/profile_fit.hpp) without processes: TTL distributions, the
// profile writer's round trip through the schema's reader, and a whole fit of the load
// client's query stream answered by the synthetic upstream's zone in-process, every
// parameter against the profile that made the traffic.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "dns/message.hpp"
#include "dns/query_builder.hpp"
#include "sim/fit/profile_fit.hpp"
#include "sim/traffic/query_stream.hpp"
#include "sim/traffic/upstream_zone.hpp"
#include "sim/workload/traffic_profile_writer.hpp"
#include "tests/fit/profile_tolerance.hpp"

using namespace dnsarena;
using sim::TrafficProfile;

TEST_CASE("fit_ttl: uniform TTLs give the range, few values give one bucket each", "[fit][ttl]") {
  sim::SplitMix64 rng(3);
  std::vector<std::uint32_t> uniform;
  for (int i = 0; i < 5000; ++i) uniform.push_back(static_cast<std::uint32_t>(rng.range(60, 3600)));
  double ks = 1;
  const auto u = sim::fit::fit_ttl(uniform, &ks);
  CHECK(u.uniform);
  CHECK(u.uniform_min == *std::min_element(uniform.begin(), uniform.end()));
  CHECK(u.uniform_max == *std::max_element(uniform.begin(), uniform.end()));
  CHECK(ks < 0.02);

  std::vector<std::uint32_t> two(300, 60);
  two.insert(two.end(), 700, 600);
  const auto b = sim::fit::fit_ttl(two);
  REQUIRE_FALSE(b.uniform);
  REQUIRE(b.buckets.size() == 2);
  CHECK(b.buckets[0].seconds == 60);
  CHECK(b.buckets[0].share == Approx(0.3));
  CHECK(b.buckets[1].seconds == 600);
  CHECK(b.buckets[1].share == Approx(0.7));
}

TEST_CASE("fit_ttl: many values far from uniform give 32 equal-count buckets", "[fit][ttl]") {
  sim::SplitMix64 rng(4);
  std::vector<std::uint32_t> skewed;  // log-uniform 30 s .. 1 day
  for (int i = 0; i < 20000; ++i) skewed.push_back(static_cast<std::uint32_t>(30 * std::exp(rng.unit() * std::log(2880.0))));
  const auto d = sim::fit::fit_ttl(skewed);
  REQUIRE_FALSE(d.uniform);
  CHECK(d.buckets.size() >= 30);
  CHECK(d.buckets.size() <= 32);
  double sum = 0;
  for (const auto& bucket : d.buckets) sum += bucket.share;
  CHECK(std::fabs(sum - 1) < 1e-9);
  CHECK(d.buckets.front().seconds < 40);
  CHECK(d.buckets.back().seconds > 60'000);
  // The two middle buckets (slices just below and above half) hold the distribution's
  // median, 30 x sqrt(2880) = 1610 s, between them.
  REQUIRE(d.buckets.size() == 32);
  CHECK(d.buckets[15].seconds < 1610);
  CHECK(d.buckets[16].seconds > 1610);
}

TEST_CASE("the profile writer round-trips through the schema's reader", "[fit][yaml]") {
  std::vector<TrafficProfile> profiles = {TrafficProfile{}, sim::default_traffic_profile()};
  TrafficProfile odd = sim::default_traffic_profile();
  odd.names = 123'457;
  odd.zipf = 0.90386725989634;
  odd.qps = 2500.063158595563;
  odd.share_a = 0.556671, odd.share_aaaa = 0.252155, odd.share_other = 1 - 0.556671 - 0.252155;
  odd.qtype_per_name = true;
  odd.ttl = sim::TtlDistribution::from_buckets({{60, 0.1}, {300, 0.2}, {3600, 1 - 0.1 - 0.2}});
  odd.negative_ttl = 900;
  odd.ecs_subnets = 16, odd.ecs_share = 0.098812, odd.ecs_prefix = 20, odd.ecs_prefix_v6 = 48;
  profiles.push_back(odd);
  for (const TrafficProfile& p : profiles) {
    const std::string yaml = sim::traffic_profile_yaml(p);
    INFO(yaml);
    CHECK(sim::parse_traffic_profile(yaml, "written") == p);
  }
}

namespace {

// The load's stream of `queries` queries in `zone`, each answered by the upstream's zone in
// process, as client query and client response messages at the profile's rate.
void tally_stream(sim::fit::TapTally& tally, const TrafficProfile& profile, std::uint64_t seed, const std::string& zone_name,
                  std::uint64_t queries) {
  const sim::traffic::QueryStream stream(profile, seed, 7, zone_name);
  const sim::traffic::UpstreamZone zone(profile, seed, zone_name);
  sim::traffic::StreamQuery q;
  const std::uint64_t t0 = 1'780'000'000ull * 1'000'000'000ull;
  for (std::uint64_t k = 0; k < queries; ++k) {
    stream.query(k, q);
    dns::QuerySpec spec;
    spec.id = static_cast<std::uint16_t>(k);
    spec.qname = q.qname;
    spec.qtype = q.qtype;
    spec.ecs = q.ecs;
    const common::Bytes wire = dns::build_query(spec);
    const std::uint64_t at = t0 + static_cast<std::uint64_t>(1e9 * static_cast<double>(k) / profile.qps);
    tally.add({sim::fit::TapType::client_query, at, wire});
    dns::Message parsed;
    REQUIRE(dns::parse_message(wire, parsed) == dns::ParseStatus::ok);
    common::Bytes response;
    zone.respond(parsed, true, response);
    tally.add({sim::fit::TapType::client_response, at + 1000, response});
  }
}

}  // namespace

TEST_CASE("a fit of the load's stream answered by the upstream's zone, in process", "[fit][profile]") {
  TrafficProfile truth = sim::default_traffic_profile();
  truth.names = 20'000;
  truth.qps = 2000;
  truth.qtype_per_name = true;  // what the load sends: every name asked with its own type
  truth.ecs_subnets = 16;
  truth.ttl = sim::TtlDistribution::range(30, 900);  // the generator draws TTLs uniform (entry_generator.hpp)
  sim::fit::TapTally tally;
  const std::uint64_t queries = 200'000;
  tally_stream(tally, truth, 9, "zone.", queries);
  const sim::fit::ProfileFit f = sim::fit::fit_profile(tally);
  CHECK(f.zone == "zone.");
  CHECK(f.client_queries == queries);
  CHECK(f.zone_soa_minimum == truth.negative_ttl);
  const auto errors = test::compare_profiles(truth, f.profile);
  INFO(f.report() << test::error_table(errors));
  for (const auto& e : errors) {
    INFO(e.name);
    CHECK(e.ok());
  }
  // What the fitted profile is written as reads back as the same profile.
  CHECK(sim::parse_traffic_profile(sim::traffic_profile_yaml(f.profile), "fitted") == f.profile);
}

TEST_CASE("names under several zones: labels from the root, or under the zone given", "[fit][profile]") {
  TrafficProfile truth;
  truth.names = 2000;
  sim::fit::TapTally tally;
  tally_stream(tally, truth, 1, "com.", 5000);
  tally_stream(tally, truth, 2, "org.", 5000);
  const sim::fit::ProfileFit all = sim::fit::fit_profile(tally);
  CHECK(all.zone == ".");
  CHECK(all.outside_zone_names == 0);
  CHECK(all.profile.labels_min == truth.labels_min + 1);
  CHECK(all.profile.labels_max == truth.labels_max + 1);
  const sim::fit::ProfileFit com = sim::fit::fit_profile(tally, {.zone = "COM."});
  CHECK(com.zone == "com.");
  CHECK(com.outside_zone_names > 1000);
  CHECK(com.profile.labels_min == truth.labels_min);
  CHECK(com.profile.labels_max == truth.labels_max);
  CHECK(all.zipf.queries == 10000);
  CHECK(com.zipf.queries == 5000);  // the org. names are left out
}

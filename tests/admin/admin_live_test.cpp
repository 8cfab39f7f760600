// SPDX-License-Identifier: GPL-3.0-or-later
// flush, top and stats against a live `dnsarena serve` under load; `dnsarena check`
// clean afterwards.
#include <catch2/catch.hpp>

#include "tests/admin/live_load.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

namespace {

// Queries `name` once (UDP) and says whether the upstream was asked (a miss).
bool was_miss(Service& s, const std::vector<std::uint8_t>& query) {
  const std::uint64_t before = s.upstream.queries();
  const DnsReply r = udp_exchange(s.port, query);
  REQUIRE(r.answered);
  return s.upstream.queries() > before;
}

void require_check_clean(const std::string& segment) {
  int status = -1;
  const std::string out = run_dnsarena("check " + segment, &status);
  INFO(out);
  REQUIRE(status == 0);
}

}  // namespace

TEST_CASE("flush removes a name's entries of every ECS variant, one type, or a subtree, while serving", "[admin]") {
  Service s({"--ecs", "forward"});
  LiveLoad load(s.port, load_names(200));
  REQUIRE(load.wait_answers(300));
  // ecs.test A under three /24s (three entries), AAAA once (NXDOMAIN of the upstream:
  // any type but A), and a subtree sub.test with a look-alike outside it.
  const std::vector<std::array<std::uint8_t, 4>> subnets = {{10, 1, 1, 0}, {10, 2, 2, 0}, {10, 3, 3, 0}};
  for (const auto& net : subnets) CHECK(was_miss(s, make_ecs_query(1, "ecs.test.", 1, 24, net)));
  CHECK(was_miss(s, make_query(2, "ecs.test.", 28)));
  const std::vector<std::string> subtree = {"sub.test.", "a.sub.test.", "b.sub.test.", "c.d.sub.test."};
  for (const auto& n : subtree) CHECK(was_miss(s, make_query(3, n, 1)));
  CHECK(was_miss(s, make_query(4, "xsub.test.", 1)));
  for (const auto& net : subnets) CHECK_FALSE(was_miss(s, make_ecs_query(5, "ecs.test.", 1, 24, net)));

  int status = -1;
  std::string out = run_dnsarena("flush ecs.test --type A --segment " + s.segment, &status);
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("flushed 3 entries") != std::string::npos);
  for (const auto& net : subnets) CHECK(was_miss(s, make_ecs_query(6, "ecs.test.", 1, 24, net)));
  CHECK_FALSE(was_miss(s, make_query(7, "ecs.test.", 28)));  // another type: kept

  out = run_dnsarena("flush ecs.test --segment " + s.segment, &status);  // every type and subnet
  CHECK(status == 0);
  CHECK(out.find("flushed 4 entries") != std::string::npos);
  CHECK(was_miss(s, make_query(8, "ecs.test.", 28)));

  out = run_dnsarena("flush sub.test --subtree --segment " + s.segment, &status);
  CHECK(status == 0);
  CHECK(out.find("flushed 4 entries") != std::string::npos);
  for (const auto& n : subtree) CHECK(was_miss(s, make_query(9, n, 1)));
  CHECK_FALSE(was_miss(s, make_query(10, "xsub.test.", 1)));  // not below sub.test.

  out = run_dnsarena("flush no.such.name --segment " + s.segment, &status);
  CHECK(status == 0);
  CHECK(out.find("flushed 0 entries") != std::string::npos);
  out = run_dnsarena("flush a.test --segment no-such-segment-" + std::to_string(::getpid()), &status);
  CHECK(status == 2);
  CHECK(out.find("dnsarena flush:") != std::string::npos);

  REQUIRE(load.wait_answers(100));  // the workers served throughout
  require_check_clean(s.segment);
}

TEST_CASE("top lists the entries hit in every sampled round first, and the largest by bytes", "[admin]") {
  Service s;
  // A cold set queried once, then a load that hits a.test and txt.test again and again.
  {
    LiveLoad cold(s.port, load_names(100));
    REQUIRE(cold.wait_answers(100));
  }
  REQUIRE(tcp_exchange(s.port, make_query(1, "huge.test.", 16, 4096)).answered);  // the largest entry
  LiveLoad hot(s.port, {{"a.test.", 1}, {"txt.test.", 16}});
  REQUIRE(hot.wait_answers(50));

  int status = -1;
  std::string out = run_dnsarena("top --by hits -n 2 --interval 1 --rounds 5 --json --segment " + s.segment, &status);
  INFO(out);
  REQUIRE(status == 0);
  auto j = nlohmann::json::parse(out);
  REQUIRE(j["rows"].size() == 2);
  std::set<std::string> keys;
  for (const auto& row : j["rows"]) {
    keys.insert(row["key"].get<std::string>());
    CHECK(row["rounds_hit"].get<int>() == 5);
  }
  CHECK(keys == std::set<std::string>{"a.test. A flags=- ecs=-", "txt.test. TXT flags=- ecs=-"});

  out = run_dnsarena("top --by bytes -n 1 --json --segment " + s.segment, &status);
  REQUIRE(status == 0);
  j = nlohmann::json::parse(out);
  REQUIRE(j["rows"].size() == 1);
  CHECK(j["rows"][0]["key"] == "huge.test. TXT flags=- ecs=-");
  CHECK(j["rows"][0]["bytes"].get<int>() > 2000);

  out = run_dnsarena("top --segment " + s.segment + " --interval 0.2", &status);  // the table
  CHECK(status == 0);
  CHECK(out.find("a.test. A") != std::string::npos);
  require_check_clean(s.segment);
}

TEST_CASE("stats reports arena bytes per live entry and the preallocated index apart", "[admin]") {
  Service s;  // 10000 entries, 8 MiB arena
  LiveLoad load(s.port, load_names(100));  // 1% fill
  REQUIRE(load.wait_answers(200));
  const auto j = serve_stats(s.segment);
  const double arena = j["arena_bytes_per_entry"].get<double>();
  const double all = j["bytes_per_entry"].get<double>();
  INFO("arena " << arena << " all " << all);
  CHECK(arena > 16);
  CHECK(arena < 300);   // an NXDOMAIN with its SOA: ~100 bytes
  CHECK(all > 1000);    // the index preallocated for 10000 entries, spread over ~100
  CHECK(j["index_bytes"].get<double>() / 10000 == Approx(j["index_bytes_per_entry_at_capacity"].get<double>()));
  int status = -1;
  const std::string table = run_dnsarena("stats --interval 0 --segment " + s.segment, &status);
  INFO(table);
  CHECK(status == 0);
  CHECK(table.find("arena ") != std::string::npos);
  CHECK(table.find("bytes/entry at capacity") != std::string::npos);
}

TEST_CASE("top shows the miss-ratio curve: the hit rate now and at each capacity factor, or that it is off",
          "[admin][mrc]") {
  // R = 1: every key is fed to the models (the 10,000-entry test cache).
  Service s({"-c", write_config("mrc: {sample_rate: 1}\n")});
  // 20 misses (NXDOMAIN, cached), then the same 20 again: 20 hits of 40 lookups.
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 20; ++i)
      REQUIRE(udp_exchange(s.port, make_query(static_cast<std::uint16_t>(round * 100 + i), "t" + std::to_string(i) + ".test", 1))
                  .answered);
  int status = -1;
  nlohmann::json j;
  REQUIRE(eventually([&] {  // the supervisor publishes the curve once a second
    const std::string out = run_command(dnsarena_binary() + " top --by bytes -n 1 --json --segment " + s.segment +
                                            " 2>/dev/null", &status);
    if (status != 0) return false;
    j = nlohmann::json::parse(out, nullptr, false);
    if (!j.contains("mrc") || !j["mrc"].value("enabled", false)) return false;
    for (const auto& p : j["mrc"]["points"])
      if (p["factor"] == 1.0) return p["hit_rate"].get<double>() == Approx(0.5);
    return false;
  }));
  INFO(j.dump(1));
  REQUIRE(j["mrc"]["points"].size() == 7);
  CHECK(j["mrc"]["points"][0]["factor"] == 0.125);
  CHECK(j["mrc"]["points"][6]["factor"] == 8.0);
  CHECK(j["mrc"]["hit_rate_now"].get<double>() == Approx(0.5));
  CHECK(j["mrc"]["supervisor_running"] == true);
  for (const auto& p : j["mrc"]["points"])  // each 20 names fits every model, 1/8x included
    if (p["factor"].get<double>() <= 1) CHECK(p["hit_rate"].get<double>() == Approx(0.5));

  const std::string table = run_dnsarena("top --by bytes -n 1 --segment " + s.segment, &status);
  INFO(table);
  CHECK(status == 0);
  CHECK(table.find("mrc  now 50.0%  0.125x 50.0%  0.25x 50.0%  0.5x 50.0%  1x 50.0%  2x ") != std::string::npos);

  // The curves off: top says so, in the table and in the JSON.
  Service off({"-c", write_config("mrc: {enabled: false}\n")}, 1);
  REQUIRE(udp_exchange(off.port, make_query(1, "x.test", 1)).answered);
  REQUIRE(eventually([&] { return serve_stats(off.segment).contains("answers"); }));  // snapshots written
  const std::string off_table = run_dnsarena("top --by bytes --segment " + off.segment, &status);
  INFO(off_table);
  CHECK(status == 0);
  CHECK(off_table.find("mrc  off (no curve for segment") != std::string::npos);
  j = nlohmann::json::parse(run_command(dnsarena_binary() + " top --by bytes --json --segment " + off.segment, &status));
  CHECK(j["mrc"]["enabled"] == false);
}

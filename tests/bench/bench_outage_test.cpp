// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench outage` as an operator runs it: one quick scenario (join: many clients
// ask one uncached name at once) for serve and Unbound (which must be installed), printed as one
// JSON object whose shape and figures are checked for sanity. Whether the targets are
// met is the benchmark's own `--check`, not this test's.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "common/child_process.hpp"

namespace {

bool is_count(const nlohmann::json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<long long>() >= 0); }

}  // namespace

TEST_CASE("bench outage --quick --json --only join: one JSON object with sane figures", "[bench][outage][process]") {
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture(
      {DNSARENA_BIN, "bench", "outage", "--quick", "--json", "--only", "join", "--seed", "3"}, status,
      std::chrono::seconds(75));
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);  // no scenario failed (targets are not judged without --check)
  const nlohmann::json j = nlohmann::json::parse(out);

  CHECK(j["benchmark"] == "outage");
  CHECK(j["quick"] == true);
  CHECK(j["seed"] == 3);
  CHECK(j["interrupted"] == false);
  CHECK(j["errors"].empty());
  REQUIRE(j["seconds"].is_number());
  CHECK(j["seconds"].get<double>() > 0);
  CHECK(j["seconds"].get<double>() < 75);

  // serve's resilience keys: each either given or left out, never both, never lost.
  std::set<std::string> keys;
  for (const auto& k : j["serve"]["keys_used"]) keys.insert(k.get<std::string>());
  for (const auto& k : j["serve"]["keys_omitted"]) CHECK(keys.insert(k.get<std::string>()).second);
  CHECK(keys == std::set<std::string>{"stale", "failure_cache", "prefetch"});

  // Unbound is installed by .ci/install-deps: a bench that ran without it compared nothing.
  INFO("unbound: " << j["unbound"].value("note", std::string()));
  REQUIRE(j["unbound"]["run"].get<bool>());
  const std::set<std::string> servers{"dnsarena", "unbound"};
  REQUIRE(j["rows"].size() == servers.size());
  std::set<std::string> seen;
  for (const auto& row : j["rows"]) {
    CHECK(row["scenario"] == "join");
    seen.insert(row["server"].get<std::string>());
    CHECK(row["target"] == "exactly 1 upstream query per round");
    CHECK_FALSE(row["figure"].get<std::string>().empty());
    CHECK(row["met"].is_boolean());
  }
  CHECK(seen == servers);

  const unsigned clients = j["options"]["join_clients"].get<unsigned>();
  const unsigned rounds = j["options"]["join_rounds"].get<unsigned>();
  const double delay_ms = j["options"]["join_delay_ms"].get<double>();
  const double timeout_ms = 1000 * j["options"]["client_timeout_s"].get<double>();
  REQUIRE(clients >= 2);
  for (const std::string& server : servers) {
    INFO(server);
    const nlohmann::json& d = j["scenarios"]["join"][server];
    REQUIRE(d["upstream_queries_per_round"].size() == rounds);
    for (const auto& q : d["upstream_queries_per_round"]) {
      REQUIRE(is_count(q));
      // The name was asked: at least one query went upstream, and never more than one
      // per client query (a resolver retrying a 200 ms upstream a few times at most).
      CHECK(q.get<std::uint64_t>() >= 1);
      CHECK(q.get<std::uint64_t>() <= clients);
    }
    CHECK(d["sent"].get<std::uint64_t>() == std::uint64_t{clients} * rounds);
    CHECK(d["answered"].get<std::uint64_t>() <= d["sent"].get<std::uint64_t>());
    CHECK(d["answered_with_data"].get<std::uint64_t>() >= d["sent"].get<std::uint64_t>() * 99 / 100);
    // Every first asker waited for the upstream's delay; nobody waited past the client's timeout.
    CHECK(d["latency_ms_max"].get<double>() >= delay_ms);
    CHECK(d["latency_ms_max"].get<double>() <= timeout_ms);
    CHECK(d["resolver_counters"].is_object());
  }
  // serve's own counters say it went upstream for each round.
  const nlohmann::json& served = j["scenarios"]["join"]["dnsarena"]["resolver_counters"];
  REQUIRE(served.contains("upstream_queries"));
  CHECK(served["upstream_queries"].get<double>() >= rounds);
}

TEST_CASE("bench outage --slow --slow-every-query --check: serve answers every slow name within the stub's 5 s and "
          "every fast one after",
          "[bench][outage][slow][process]") {
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture(
      {DNSARENA_BIN, "bench", "outage", "--slow", "--slow-every-query", "--slow-names", "3", "--no-unbound", "--json",
       "--check"},
      status, std::chrono::seconds(60));
  INFO(out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // --check: every target of serve met
  const nlohmann::json j = nlohmann::json::parse(out);
  std::set<std::string> scenarios;
  for (const auto& row : j["rows"]) {
    scenarios.insert(row["scenario"].get<std::string>());
    CHECK(row["server"] == "dnsarena");
    CHECK(row["met"] == true);
  }
  CHECK(scenarios == std::set<std::string>{"slow-1200ms", "slow-2500ms", "slow-4000ms", "slow-fast-after"});
  const nlohmann::json& d = j["scenarios"]["slow"]["dnsarena"];
  REQUIRE(d["slow"].size() == 3);
  for (const auto& g : d["slow"]) {
    CHECK(g["answered_with_data"] == 3);
    // Answered when the upstream answered, not at a timer.
    CHECK(g["latency_ms_max"].get<double>() >= g["upstream_delay_ms"].get<double>() - 50);
    CHECK(g["latency_ms_max"].get<double>() < g["upstream_delay_ms"].get<double>() + 1000);
  }
  CHECK(d["fast_answered_with_data"] == 20);
  CHECK(d["every_query_slow"] == true);
}

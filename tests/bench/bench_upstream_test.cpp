// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench upstream` as an operator runs it, small: every miss answered over
// each transport, and the kept connections of tcp and tls: one per worker, not one per
// query.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "common/child_process.hpp"

TEST_CASE("bench upstream --json: every miss answered over udp, tcp and tls, one connection for all",
          "[bench][upstream][process]") {
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture(
      {DNSARENA_BIN, "bench", "upstream", "--misses", "300", "--rate", "600", "--json"}, status,
      std::chrono::seconds(75));
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const nlohmann::json j = nlohmann::json::parse(out);
  CHECK(j["misses"] == 300);
  CHECK(j["relay_warm_completed"] == 300);
  REQUIRE(j["runs"].size() == 3);
  for (const auto& r : j["runs"]) {
    const std::string t = r["transport"];
    INFO(t);
    CHECK(r["completed"] == 300);
    CHECK(r["servfail"] == 0);
    CHECK(r["upstream_queries"].get<unsigned>() >= 300);
    CHECK(r["avg_latency_ms"].get<double>() > 0);
    CHECK(r["connections"] == (t == "udp" ? 0 : 1));
  }
  CHECK(j["runs"][2].contains("latency_ratio_vs_udp"));
}

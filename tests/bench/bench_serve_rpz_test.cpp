// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench serve --rpz-rules`, small: serve and Unbound both run with the same
// generated blocklist, both block the same share of the queries, serve's own counter says
// the NXDOMAINs were its policy's, and each -rpz run reports its start time and memory.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "common/child_process.hpp"
#include "common/find_program.hpp"

TEST_CASE("bench serve --rpz-rules --json: serve and Unbound load one blocklist and block the same queries",
          "[bench][policy][process]") {
  if (!dnsarena::common::find_program("dnsperf") || !dnsarena::common::find_program("unbound")) {
    FAIL("dnsperf and unbound are installed by .ci/install-deps");
  }
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture(
      {DNSARENA_BIN, "bench", "serve", "--rpz-rules", "5000", "--rpz-blocked-percent", "20", "--queries", "4000",
       "--duration", "1", "--loads", "5000", "--no-kresd", "--json"},
      status, std::chrono::seconds(80));
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const nlohmann::json j = nlohmann::json::parse(out);
  CHECK(j["rpz_rules"] == 5000);
  const double ours = j["dnsarena_rpz_nxdomain_share"].get<double>();
  const double unbound = j["unbound_rpz_nxdomain_share"].get<double>();
  CHECK(ours >= 0.15);  // 20% of the lines asked for blocked names (drawn at random)
  CHECK(ours <= 0.30);
  CHECK(std::abs(ours - unbound) < 0.02);  // the same file, the same names blocked
  // serve's policy, not its upstream, answered them.
  CHECK(j["dnsarena_rpz_policy_blocked_share"].get<double>() >= 0.15);
  CHECK(j["dnsarena_rpz_policy_blocked_share"].get<double>() <= ours + 0.001);
  for (const char* server : {"dnsarena", "unbound"}) {
    INFO(server);
    const std::string k = std::string(server) + "_rpz_";
    CHECK(j[k + "startup_s"].get<double>() > 0);
    CHECK(j[k + "rss_mb"].get<double>() > 0);
    CHECK(j[k + "cpu_us_per_query"].get<double>() > 0);
    CHECK(j[k + "added_cpu_us_per_query"].is_number());
  }
  CHECK(j["rpz_cpu_ratio_vs_unbound"].get<double>() > 0);
}

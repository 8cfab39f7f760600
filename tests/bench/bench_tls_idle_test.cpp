// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench tls-idle`, small: every DoT connection answered and held while idle,
// and tls.max_connections holds when more come (the least recently used are closed).
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "common/child_process.hpp"

TEST_CASE("bench tls-idle --json: connections held while idle, the bound holds past it", "[bench][tls-idle][process]") {
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture(
      {DNSARENA_BIN, "bench", "tls-idle", "--connections", "200", "--extra", "50", "--hold", "0.5", "--json"}, status,
      std::chrono::seconds(75));
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const nlohmann::json j = nlohmann::json::parse(out);
  CHECK(j["failed"] == 0);
  CHECK(j["held_after_hold"] == 200);
  CHECK(j["open_after_extra"] == 200);  // 250 opened, the bound 200
  CHECK(j["bound_held"] == true);
  CHECK(j["kib_per_idle_connection"].get<double>() > 0);
  CHECK(j["handshakes_per_s"].get<double>() > 0);
}

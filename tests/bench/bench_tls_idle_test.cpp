// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench tls-idle`, small: every DoT connection answered and held while idle,
// and tls.max_connections holds when more come (the least recently used are closed);
// Unbound and Knot Resolver measured the same way beside it (--unbound --kresd).
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "common/child_process.hpp"

TEST_CASE("bench tls-idle --json: connections held while idle, the bound holds past it", "[bench][tls-idle][process]") {
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture(
      {DNSARENA_BIN, "bench", "tls-idle", "--connections", "200", "--extra", "50", "--hold", "0.5", "--unbound", "--kresd",
       "--json"},
      status,
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
  // The per-core rate is the worker's CPU per connection turned around.
  const double cpu_us = j["worker_cpu_us_per_connection"].get<double>();
  REQUIRE(cpu_us > 0);
  CHECK(j["handshakes_per_worker_cpu_s"].get<double>() == Approx(1e6 / cpu_us));
  // Unbound measured the same way, over its own DoT listener, with twice the buffers (it
  // shortens its idle timeout once half are taken): it answers and holds them too.
  const nlohmann::json& u = j["unbound"];
  REQUIRE(u.is_object());
  CHECK(u["incoming_num_tcp"] == 400);
  CHECK(u["failed"] == 0);
  CHECK(u["held_after_hold"] == 200);
  CHECK(u["kib_per_idle_connection"].get<double>() > 0);
  CHECK(u["worker_cpu_us_per_connection"].get<double>() > 0);
  // Knot Resolver too; it has no connection bound, so the 50 more are all open.
  const nlohmann::json& k = j["kresd"];
  REQUIRE(k.is_object());
  CHECK(k["failed"] == 0);
  CHECK(k["held_after_hold"] == 200);
  CHECK(k["open_after_extra"] == 250);
  CHECK(k["bound"].is_null());
  CHECK(k["kib_per_idle_connection"].get<double>() > 0);
}

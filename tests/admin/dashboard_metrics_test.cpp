// SPDX-License-Identifier: GPL-3.0-or-later
// contrib/grafana/dnsarena.json uses only metrics a live `serve` exports on /metrics.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/admin/live_load.hpp"
#include "tests/workers/service_fixture.hpp"

using namespace dnsarena::test;

TEST_CASE("every metric the Grafana dashboard charts is served by /metrics", "[admin][metrics]") {
  std::ifstream f(std::string(DNSARENA_SOURCE_DIR) + "/contrib/grafana/dnsarena.json");
  REQUIRE(f);
  std::stringstream text;
  text << f.rdbuf();
  const auto dashboard = nlohmann::json::parse(text.str());
  std::set<std::string> used;
  const std::regex metric("dnsarena_[a-z_]+");
  for (const auto& panel : dashboard["panels"])
    for (const auto& target : panel["targets"]) {
      const std::string expr = target["expr"].get<std::string>();
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) used.insert(it->str());
    }
  REQUIRE(used.size() >= 15);

  const std::uint16_t metrics_port = free_port();
  Service s({"--metrics", "127.0.0.1:" + std::to_string(metrics_port)});
  LiveLoad load(s.port, load_names(50));
  REQUIRE(load.wait_answers(50));
  int status = -1;
  const std::string served =
      run_command("curl -sf http://127.0.0.1:" + std::to_string(metrics_port) + "/metrics", &status);
  REQUIRE(status == 0);
  for (const std::string& name : used) {
    INFO(name);
    const bool served_here =
        served.find("\n" + name + "{") != std::string::npos || served.find("\n" + name + " ") != std::string::npos;
    CHECK(served_here);
  }
  CHECK(served.find("dnsarena_queries_udp_total{worker=\"0\"}") != std::string::npos);
}

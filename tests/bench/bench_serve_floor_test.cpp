// SPDX-License-Identifier: GPL-3.0-or-later
// `dnsarena-lab bench serve --dot`, small: the floor responder is measured beside the
// servers over UDP and TCP, and the DoT target is reported in microseconds against its TCP
// figure, from the same runs (DoH's uses the same code); --no-floor leaves it out.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/child_process.hpp"
#include "common/find_program.hpp"

namespace {

nlohmann::json bench_serve(const std::vector<std::string>& extra) {
  std::vector<std::string> argv{DNSARENA_BIN, "bench", "serve", "--queries", "2000", "--duration", "0.5",
                                "--loads",    "2000",       "--no-kresd", "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  int status = 0;
  const std::string out = dnsarena::common::run_and_capture(argv, status, std::chrono::seconds(85));
  INFO(out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return nlohmann::json::parse(out);
}

const nlohmann::json* find_run(const nlohmann::json& j, const std::string& server, unsigned offered) {
  for (const auto& r : j["runs"])
    if (r["server"] == server && r["offered_qps"] == offered) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("bench serve --dot --json: the floor beside the servers and the target in microseconds",
          "[bench][floor][process]") {
  if (!dnsarena::common::find_program("dnsperf") || !dnsarena::common::find_program("unbound") ||
      !dnsarena::common::find_program("certtool")) {
    FAIL("dnsperf, unbound and certtool are installed by .ci/install-deps");
  }
  const nlohmann::json j = bench_serve({"--dot"});
  for (const char* server : {"floor", "floor-tcp"}) {
    INFO(server);
    const nlohmann::json* r = find_run(j, server, 2000);
    REQUIRE(r);
    CHECK((*r)["completed"].get<unsigned>() >= 950);  // 2,000 q/s for 0.5 s
    CHECK((*r)["lost"] == 0);
    CHECK((*r)["cpu_us_per_query"].get<double>() > 0);
    CHECK(find_run(j, server, 0));  // and at saturation
  }
  const double floor_tcp = j["floor_tcp_cpu_us_per_query"].get<double>();
  CHECK(j["floor_cpu_us_per_query"].get<double>() == (*find_run(j, "floor", 2000))["cpu_us_per_query"].get<double>());
  CHECK(floor_tcp == (*find_run(j, "floor-tcp", 2000))["cpu_us_per_query"].get<double>());
  CHECK(j["cpu_over_floor_us"].get<double>() ==
        Approx(j["cpu_us_per_query"].get<double>() - j["floor_cpu_us_per_query"].get<double>()));
  {
    const std::string k = "dot";
    // Unbound is the only peer here, so the better one.
    CHECK(j[k + "_best_peer"] == "unbound-" + k);
    const double target = j[k + "_target_cpu_us_per_query"].get<double>();
    CHECK(target == Approx(0.7 * j["unbound_" + k + "_cpu_us_per_query"].get<double>()));
    CHECK(j[k + "_target_minus_tcp_floor_us"].get<double>() == Approx(target - floor_tcp));
    CHECK(j[k + "_cpu_over_tcp_floor_us"].get<double>() == Approx(j[k + "_cpu_us_per_query"].get<double>() - floor_tcp));
  }

  const nlohmann::json without = bench_serve({"--dot", "--no-unbound", "--no-floor"});
  CHECK_FALSE(without.contains("dot_target_cpu_us_per_query"));
  CHECK_FALSE(without.contains("floor_cpu_us_per_query"));
  CHECK_FALSE(find_run(without, "floor", 2000));
  CHECK(find_run(without, "dnsarena-dot", 2000));
}

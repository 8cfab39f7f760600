// SPDX-License-Identifier: GPL-3.0-or-later
// The synthetic upstream's black-hole switch, on a real `dnsarena sim upstream` process:
// SIGUSR1 stops every answer (UDP and TCP), SIGUSR2 restores them, --silent starts
// silent; the stats file says the state and counts what was dropped.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "dns/message.hpp"
#include "dns/query_builder.hpp"
#include "sim/traffic/upstream_zone.hpp"
#include "sim/workload/traffic_profile.hpp"
#include "upstream_process.hpp"

using namespace dnsarena;
using namespace dnsarena::sim;

namespace {

constexpr std::uint64_t kBlackholeSeed = 3;

struct SilentUpstream {
  std::string stats_path = "/tmp/traffic_test_blackhole_" + std::to_string(::getpid()) + ".json";
  Bytes query;
  std::unique_ptr<test::UpstreamProcess> proc;

  explicit SilentUpstream(bool start_silent) {
    const TrafficProfile profile = default_traffic_profile();
    const traffic::UpstreamZone zone(profile, kBlackholeSeed, "zone.");
    query = dns::build_query({.id = 4242, .qname = zone.name_wire(0), .qtype = zone.entry(0).qtype});
    std::vector<std::string> args{"--seed", std::to_string(kBlackholeSeed), "--stats-file", stats_path};
    if (start_silent) args.push_back("--silent");
    proc = std::make_unique<test::UpstreamProcess>(args);
  }
  ~SilentUpstream() {
    proc.reset();
    ::unlink(stats_path.c_str());
  }
  nlohmann::json stats() const {
    std::ifstream f(stats_path);
    std::stringstream s;
    s << f.rdbuf();
    try {
      return nlohmann::json::parse(s.str());
    } catch (const nlohmann::json::exception&) {
      return nlohmann::json::object();
    }
  }
  // Waits (up to 5 s) until the stats file satisfies `pred`; the file is rewritten every 200 ms.
  bool wait_stats(const std::function<bool(const nlohmann::json&)>& pred) const {
    for (int i = 0; i < 100; ++i) {
      const nlohmann::json j = stats();
      if (j.is_object() && j.contains("silent") && pred(j)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  bool silent_is(int v) const {
    return wait_stats([v](const nlohmann::json& j) { return j["silent"].get<int>() == v; });
  }
  // True when a UDP and a TCP exchange each got the right answer; false when neither
  // did; a mix fails the test.
  bool answers(int timeout_ms) const {
    const Bytes udp = test::exchange_udp(proc->port(), query, timeout_ms);
    const Bytes tcp = test::exchange_tcp(proc->port(), query, timeout_ms);
    for (const Bytes* w : {&udp, &tcp}) {
      if (w->empty()) continue;
      dns::Message r;
      REQUIRE(dns::parse_message(*w, r, true) == dns::ParseStatus::ok);
      CHECK(r.id == 4242);
      CHECK(r.rcode == 0);
    }
    REQUIRE(udp.empty() == tcp.empty());
    return !udp.empty();
  }
};

}  // namespace

TEST_CASE("sim upstream black hole: SIGUSR1 drops every UDP and TCP query, SIGUSR2 answers again",
          "[traffic][upstream][process][blackhole]") {
  SilentUpstream u(false);
  REQUIRE(u.silent_is(0));
  CHECK(u.answers(2000));

  REQUIRE(::kill(u.proc->pid(), SIGUSR1) == 0);
  REQUIRE(u.silent_is(1));
  CHECK_FALSE(u.answers(500));
  CHECK_FALSE(u.answers(500));
  // Four messages read and dropped (two UDP, two TCP); the two answered before stay.
  CHECK(u.wait_stats([](const nlohmann::json& j) { return j["blackholed"].get<std::uint64_t>() == 4; }));
  CHECK(u.stats()["answered"].get<std::uint64_t>() == 2);
  CHECK(u.stats()["received"].get<std::uint64_t>() == 6);

  REQUIRE(::kill(u.proc->pid(), SIGUSR2) == 0);
  REQUIRE(u.silent_is(0));
  CHECK(u.answers(2000));
  CHECK(u.wait_stats([](const nlohmann::json& j) { return j["answered"].get<std::uint64_t>() == 4; }));

  // Still a normal process: SIGTERM ends it with exit 0 and its counters.
  std::string out;
  const int status = u.proc->stop(out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(out, Catch::Contains("\"blackholed\":4"));
}

TEST_CASE("sim upstream --silent starts as a black hole until SIGUSR2", "[traffic][upstream][process][blackhole]") {
  SilentUpstream u(true);
  REQUIRE(u.silent_is(1));
  CHECK_FALSE(u.answers(500));
  REQUIRE(::kill(u.proc->pid(), SIGUSR2) == 0);
  REQUIRE(u.silent_is(0));
  CHECK(u.answers(2000));
  CHECK(u.wait_stats([](const nlohmann::json& j) {
    return j["blackholed"].get<std::uint64_t>() == 2 && j["answered"].get<std::uint64_t>() == 2;
  }));
}

// SPDX-License-Identifier: GPL-3.0-or-later
// Zipf sampler, query stream, and `sim load` against a real `sim upstream`.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "sim/traffic/load_client.hpp"
#include "sim/traffic/upstream_zone.hpp"
#include "sim/traffic/zipf_sampler.hpp"
#include "upstream_process.hpp"
#include "wire/dns_name.hpp"

using namespace dnsarena;
using namespace dnsarena::sim;
using namespace dnsarena::sim::traffic;

TEST_CASE("Zipf sampler: ranks in range, P(1)/P(2) = 2^s, s = 0 uniform", "[traffic][zipf]") {
  for (double s : {0.0, 0.9, 1.0, 1.5}) {
    const ZipfSampler z(1000, s);
    SplitMix64 rng(3);
    std::map<std::uint64_t, double> count;
    const int n = 400000;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t k = z.sample([&] { return rng.unit(); });
      REQUIRE(k >= 1);
      REQUIRE(k <= 1000);
      count[k] += 1;
    }
    double h = 0;  // normalising constant
    for (int k = 1; k <= 1000; ++k) h += std::pow(k, -s);
    INFO("s = " << s);
    // Within 5 standard deviations of the expected counts.
    for (std::uint64_t k : {1, 2, 10, 500}) {
      const double p = std::pow(static_cast<double>(k), -s) / h;
      const double expect = p * n, sd = std::sqrt(n * p * (1 - p));
      INFO("rank " << k);
      CHECK(std::abs(count[k] - expect) < 5 * sd + 1);
    }
  }
  const ZipfSampler one(1, 0.9);
  SplitMix64 rng(1);
  CHECK(one.sample([&] { return rng.unit(); }) == 1);
}

TEST_CASE("query stream is deterministic and follows the profile's shares", "[traffic][stream]") {
  TrafficProfile p = default_traffic_profile();
  p.ecs_subnets = 16;
  p.stray_nodata_share = 0.2;
  p.stray_nxdomain_share = 0.1;
  const QueryStream a(p, 1, 7), b(p, 1, 7), other(p, 1, 8);
  StreamQuery qa, qb, qo;
  int nodata = 0, nx = 0, differ = 0;
  const int n = 20000;
  for (int k = 0; k < n; ++k) {
    a.query(k, qa);
    b.query(k, qb);
    other.query(k, qo);
    REQUIRE(qa.qname == qb.qname);
    REQUIRE(qa.qtype == qb.qtype);
    REQUIRE(qa.ecs.present);
    CHECK(qa.ecs.address[0] == 10);
    CHECK(qa.ecs.address[1] * 256 + qa.ecs.address[2] < 16);
    differ += qa.qname != qo.qname;
    if (qa.kind == StreamQuery::Kind::nodata) {
      ++nodata;
      CHECK(qa.qtype != upstream_type(p, 1, qa.name_index));
    } else if (qa.kind == StreamQuery::Kind::nxdomain) {
      ++nx;
    } else if (k < 200) {
      CHECK(wire::wire_to_text(qa.qname) == upstream_name(p, 1, qa.name_index));
      CHECK(qa.qtype == upstream_type(p, 1, qa.name_index));
    }
  }
  CHECK(std::abs(nodata - 0.2 * n) < 5 * std::sqrt(n * 0.2 * 0.8));
  CHECK(std::abs(nx - 0.1 * n) < 5 * std::sqrt(n * 0.1 * 0.9));
  CHECK(differ > n / 2);
}

TEST_CASE("sim load against sim upstream: every query answered, none lost", "[traffic][load][process][timing]") {
  test::UpstreamProcess up({"--seed", "3"});
  TrafficProfile p = default_traffic_profile();
  p.ecs_subnets = 64;  // exercise ECS on the way
  const QueryStream stream(p, 3, 11);
  LoadOptions o;
  o.port = up.port();
  o.rate = 2000;
  o.queries = 3000;
  const LoadResult r = run_load(stream, o);
  CHECK(r.sent == 3000);
  CHECK(r.answered == r.sent);
  CHECK(r.lost == 0);
  CHECK(r.unmatched == 0);
  CHECK(r.rcodes.at(0) + (r.rcodes.count(3) ? r.rcodes.at(3) : 0) == r.answered);
  CHECK(r.rcodes.count(3) == 1);  // NXDOMAIN occurs
  CHECK(r.nodata > 0);
  CHECK(r.ecs_scoped > 0);
  CHECK(r.latency_ms_p50 > 0);
  CHECK(r.latency_ms_p50 <= r.latency_ms_p90);
  CHECK(r.latency_ms_p90 <= r.latency_ms_p99);
  CHECK(r.achieved_qps() > 1500);
  // The upstream counted exactly these (plus nothing else).
  std::string out;
  const int status = up.stop(out);
  CHECK(WIFEXITED(status));
  CHECK_THAT(out, Catch::Contains("\"answered\":3000"));
}

TEST_CASE("sim load --json as a command, and --write-dnsperf", "[traffic][load][process][timing]") {
  test::UpstreamProcess up({"--delay-ms", "5"});
  const std::string file = "/tmp/traffic_test_dnsperf_" + std::to_string(::getpid()) + ".txt";
  int status = 0;
  const std::string out = test::run_command(
      {DNSARENA_LAB_BIN, "sim", "load", "--server", "127.0.0.1:" + std::to_string(up.port()), "--rate", "500",
       "--queries", "500", "--json", "--write-dnsperf", file},
      status);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  const auto j = nlohmann::json::parse(out);
  CHECK(j.at("sent") == 500);
  CHECK(j.at("answered") == 500);
  CHECK(j.at("lost") == 0);
  CHECK(j.at("latency_ms_p50").get<double>() >= 5.0);  // the upstream's --delay-ms
  CHECK(j.at("latency_ms_p99").get<double>() < 1000.0);
  std::ifstream in(file);
  std::string name, type;
  int lines = 0;
  const QueryStream stream(default_traffic_profile(), 1, 7);
  StreamQuery q;
  while (in >> name >> type) {
    stream.query(lines, q);
    CHECK(name == wire::wire_to_text(q.qname));
    CHECK(type == dns::type_name(q.qtype));
    ++lines;
  }
  CHECK(lines == 500);
  ::unlink(file.c_str());
}

TEST_CASE("sim load against a port nobody answers: everything lost within the timeout", "[traffic][load][timing]") {
  // A bound UDP socket that never reads: a free port that stays silent.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  LoadOptions o;
  o.port = ntohs(a.sin_port);
  o.rate = 200;
  o.queries = 20;
  o.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const LoadResult r = run_load(QueryStream(default_traffic_profile(), 1, 7), o);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::close(fd);
  CHECK(r.sent == 20);
  CHECK(r.answered == 0);
  CHECK(r.lost == 20);
  CHECK(took < 2.0);
}
